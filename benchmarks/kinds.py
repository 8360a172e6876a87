"""One column kind at a time: ``arrow_bridge.read_csv`` beside ``pyarrow.csv.read_csv``.

Usage::

    python -m benchmarks.kinds [--rows 3000000] [--threads 2] [--repeat 5]

from the repository root. Writes one file per column kind
(``benchmarks.datasets.ONE_KIND_FILES``: dates, timestamps, zoned timestamps,
times, short strings, quoted strings, bools, half-null ints, and an int, a
float, a date and a bool every value of which is quoted) into a temporary
folder, checks that both readers give equal Tables, and times each reader on
each file in one process, the two interleaved, best of ``--repeat`` after a
warm-up read. Prints MB/s and ours / pyarrow per file. The benchmark files
(lineitem, edges, floats) are ``benchmarks.peers``'; this one is for the kinds
they do not have, where a slow path would otherwise go unseen.

Writes ``benchmarks/results/kinds-<threads>t.json``.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

if __package__ in (None, ""):  # run as a script: the repository root holds the benchmarks package
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import datasets  # noqa: E402
from benchmarks.common import MB, host_info, package_versions, write_result  # noqa: E402


def readers(threads: int) -> dict[str, Callable[[Path], object]]:
    """The two readers, each at ``threads`` threads."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    import arrow_bridge

    pa.set_cpu_count(threads)
    return {"ndp": lambda path: arrow_bridge.read_csv(path, n_threads=threads),
            "pyarrow": lambda path: pacsv.read_csv(path)}


def measure(path: Path, threads: int, repeat: int) -> dict[str, float]:
    """Best wall seconds per reader on ``path``, after checking they agree."""
    read = readers(threads)
    ours, theirs = read["ndp"](path), read["pyarrow"](path)  # warm-up, and the referee
    if not ours.equals(theirs):
        raise AssertionError(f"{path.name}: arrow_bridge.read_csv and pyarrow.csv.read_csv differ")
    best = {name: float("inf") for name in read}
    for _ in range(repeat):  # interleaved: a noisy moment hits both
        for name, reader in read.items():
            started = time.perf_counter()
            reader(path)
            best[name] = min(best[name], time.perf_counter() - started)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.kinds", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=3_000_000, help="rows per file (default 3M)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    results = {}
    with tempfile.TemporaryDirectory(prefix="ndp-kinds-") as tmp:
        for kind, path in datasets.make_one_kind_files(Path(tmp), args.rows).items():
            best = measure(path, args.threads, args.repeat)
            size = path.stat().st_size
            results[kind] = {"bytes": size, "best_s": best,
                             "mb_per_s": {name: size / MB / s for name, s in best.items()},
                             "ours_over_pyarrow": best["pyarrow"] / best["ndp"]}
            print(f"{kind:15s} {size / MB:7.1f} MB  ndp {size / MB / best['ndp']:7.0f} MB/s  "
                  f"pyarrow {size / MB / best['pyarrow']:7.0f} MB/s  ours/pyarrow {results[kind]['ours_over_pyarrow']:.2f}x")
    payload = {"command": " ".join(["python -m benchmarks.kinds", *(argv if argv is not None else sys.argv[1:])]),
               "rows": args.rows, "threads": args.threads, "repeat": args.repeat, "kinds": results,
               "host": host_info(), "versions": package_versions()}
    print("-> " + str(write_result(f"kinds-{args.threads}t.json", payload)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
