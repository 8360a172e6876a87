"""Single-core speed of the one-pass kernel alone, beside the general path.

Usage::

    python -m benchmarks.fast_path [--mb 32] [--repeat 5] [--datasets lineitem,edges,floats]

For each generated dataset (``benchmarks.datasets``) it takes the first ``--mb``
megabytes, cut after a line break, into memory, and times in one thread:

* ``fused``: :meth:`arrow_bridge.fast_path.FastPlan.parse` on that span, at the
  column types ``arrow_bridge.read_csv`` infers (what the reader runs on every
  span once the types are known: the kernel, its output arrays and their
  wrapping as Arrow arrays);
* ``general``: ``arrow_bridge.read_csv(n_threads=1)`` on the same bytes as one
  block, types inferred: the first block always takes the general path
  (tokenize, then convert column by column);
* ``pyarrow``: ``pyarrow.csv.read_csv`` with ``use_threads=False``, for reference.

Best of ``--repeat``, MB/s (10^6 bytes), printed and written to
``benchmarks/results/fast-path.json``. Output arrays are freed between runs,
so the allocator hands the same pages back: first-touch page faults, which a
whole-file read pays, are left out of all three.
"""
from __future__ import annotations

import argparse
import io
import time
from typing import Callable

import numpy as np
import pyarrow.csv as pacsv

import arrow_bridge
from arrow_bridge.converters import ValueRules
from arrow_bridge.dialect import Dialect
from arrow_bridge.fast_path import FastPlan, row_capacity_hint
from arrow_bridge.kernels.status import empty_counters
from arrow_bridge.options import CsvOptions
from benchmarks import datasets
from benchmarks.common import MB, host_info, mb_per_s, write_result
from benchmarks.readers import load_prefix


def best_seconds(run: Callable[[], object], repeat: int) -> float:
    """The fastest of ``repeat`` timed calls, after one untimed warm-up call."""
    run()
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best


def measure(path, nbytes: int, repeat: int) -> dict[str, float]:
    """MB/s of the fused kernel, the general path and pyarrow on one in-memory span of ``path``."""
    text = load_prefix(str(path), nbytes)
    # The data after the header, writable as the reader's blocks are (a read-only array would
    # make Numba compile the kernel once more, for that type).
    span = np.frombuffer(text, np.uint8, offset=text.index(b"\n") + 1).copy()
    types = arrow_bridge.read_csv(io.BytesIO(text), nrows=10_000).schema.types
    opts = CsvOptions()
    plan = FastPlan.build(len(types), list(enumerate(types)), ValueRules.from_options(opts),
                          Dialect.from_options(opts))
    first = plan.parse(span, row_capacity_hint(len(span), len(types), 0.0), empty_counters())
    if first is None:
        raise RuntimeError(f"{path}: the fused kernel gave up on the span")
    capacity = row_capacity_hint(len(span), len(types), first[0] / len(span))  # as the reader sizes it
    runs = {
        "fused": lambda: plan.parse(span, capacity, empty_counters()),
        "general": lambda: arrow_bridge.read_csv(io.BytesIO(text), n_threads=1, block_size=len(text) + 1),
        "pyarrow": lambda: pacsv.read_csv(io.BytesIO(text), read_options=pacsv.ReadOptions(use_threads=False)),
    }
    return {name: mb_per_s(len(span), best_seconds(run, repeat)) for name, run in runs.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=32, help="bytes of each file parsed in memory")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--datasets", default=",".join(datasets.KINDS))
    args = parser.parse_args()
    print(f"one thread, first {args.mb:g} MB in memory, best of {args.repeat} (MB/s)")
    print(f"{'dataset':<10}{'fused':>8}{'general':>9}{'pyarrow':>9}{'fused/general':>15}")
    results = {}
    for kind in args.datasets.split(","):
        path = datasets.default_path(kind)
        if not path.exists():
            print(f"{kind:<10}  missing: python -m benchmarks.datasets {kind}")
            continue
        r = results[kind] = measure(path, int(args.mb * MB), args.repeat)
        print(f"{kind:<10}{r['fused']:>8.0f}{r['general']:>9.0f}{r['pyarrow']:>9.0f}{r['fused'] / r['general']:>14.2f}x")
    print("-> " + str(write_result("fast-path.json", {"mb": args.mb, "repeat": args.repeat, "mb_per_s": results,
                                                       **host_info()})))


if __name__ == "__main__":
    main()
