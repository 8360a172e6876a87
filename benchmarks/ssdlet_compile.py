"""Making SSDlets in a new process: compiled, loaded from the disk cache, or with the cache off.

    python -m benchmarks.ssdlet_compile [--scale-factor 0.01]

A fresh Python process makes the programs the SSDlet docs and benchmarks use,
timing each one's ``app`` (what MINIT installs): the examples' three
(``parse_lines``, ``keep_above``, ``total``) and the reader's CSV app on
lineitem (``csv_parser``, TPC-H Q6's ``row_filter``, Q1's ``group_aggregate``
without derived columns). A first process with the cache off warms Numba's own cache of the reader's
kernels at the types the programs call them with (not shown: it pays for
those too). Then three, side by side: the cache off (compiled in the
process, as every process did before the cache), an empty cache folder (the
programs are compiled and saved), that folder again (loaded).
Prints each program's seconds and how it came; writes
``benchmarks/results/ssdlet-compile.json``.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.common import REPO_ROOT, host_info, write_result

_CHILD = """
import json, sys, time
started = time.perf_counter()
from ndp_core.ssdlets import examples
from arrow_bridge.csv_ssdlets import csv_parser, group_aggregate, row_filter
from benchmarks.csv_ssdlets import Q1_AGGREGATES, Q1_GROUPS
from benchmarks.pushdown import QUERIES

imported = time.perf_counter() - started
programs = {}

def timed(name, make):
    t = time.perf_counter()
    program = make()
    program.app
    programs[name] = {"seconds": round(time.perf_counter() - t, 3), "how": program.compiled_how}
    return program

for example in (examples.parse_lines, examples.keep_above, examples.total):
    timed(example.name, lambda: example)
parse = timed("csv_parser", lambda: csv_parser(sys.argv[1]))
timed("row_filter (Q6)", lambda: row_filter(QUERIES["q6"].filters, parse.schema))
timed("group_aggregate (Q1)", lambda: group_aggregate(Q1_AGGREGATES, parse.schema, group_by=Q1_GROUPS))
print(json.dumps({"import_s": round(imported, 3), "programs": programs,
                  "total_s": round(time.perf_counter() - started, 3)}))
"""

RUNS = ("cache off", "cold cache", "warm cache")


def run_child(path: Path, cache: str) -> dict:
    """One fresh process making the programs with ``NDP_SSDLET_CACHE=cache``."""
    env = {**os.environ, "NDP_SSDLET_CACHE": cache, "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run([sys.executable, "-c", _CHILD, str(path)], env=env, capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale-factor", type=float, default=0.01, help="lineitem's TPC-H scale factor (default 0.01)")
    args = parser.parse_args(argv)

    from benchmarks.datasets import make

    path = make("lineitem", scale_factor=args.scale_factor)
    run_child(path, "off")  # Numba's cache of the reader's kernels, at the types the programs call them with
    with tempfile.TemporaryDirectory() as folder:
        runs = {name: run_child(path, cache) for name, cache in zip(RUNS, ("off", folder, folder))}
    names = list(runs["cold cache"]["programs"])
    print(f"{'program':<22}" + "".join(f"{name:>14}" for name in RUNS))
    for name in names:
        print(f"{name:<22}" + "".join(f"{runs[run]['programs'][name]['seconds']:>13.2f}s" for run in RUNS))
    print(f"{'process, in all':<22}" + "".join(f"{runs[run]['total_s']:>13.2f}s" for run in RUNS))
    print("how: " + "; ".join(f"{run}: {sorted({p['how'] for p in runs[run]['programs'].values()})}" for run in RUNS))
    out = write_result("ssdlet-compile.json", {"file": path.name, "runs": runs, "host": host_info()})
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
