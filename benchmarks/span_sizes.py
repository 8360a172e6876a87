"""Span size against parse speed at one thread count: the study behind
``arrow_bridge.reader.LARGEST_AUTO_SPAN_BYTES``.

``python -m benchmarks.span_sizes [--threads 16] [--repeat 4] [--datasets lineitem,edges,floats]``
reads each data set (generated as ``benchmarks.datasets`` makes them) in this
process with ``arrow_bridge.read_csv`` at ``block_size`` 2, 4, 8 and 16 MiB and
unset (the reader's own choice), beside ``pyarrow.csv.read_csv``, after one
warm-up read each; readers are interleaved and the best of ``--repeat`` rounds
is kept. Writes ``benchmarks/results/span-sizes-<threads>t.json``.

Each span costs the reader about 0.5 ms of Python that holds the GIL; at many
threads that work is serial, and larger spans mean fewer of them.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Callable

if __package__ in (None, ""):  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import RESULTS_DIR, host_info, package_versions, warm_page_cache, write_result

MIB = 1 << 20
BLOCK_SIZES_MIB = (None, 2, 4, 8, 16)


def readers_for(path: Path, threads: int) -> dict[str, Callable[[], object]]:
    """pyarrow (as ``benchmarks.peers`` sets it up for ``threads``), then ours at
    each block size (None: the reader's own choice)."""
    import arrow_bridge
    from benchmarks.readers import READERS_BY_NAME

    read_pyarrow = READERS_BY_NAME["pyarrow"].setup(threads)
    readers: dict[str, Callable[[], object]] = {"pyarrow": lambda: read_pyarrow(path)}
    for mib in BLOCK_SIZES_MIB:
        size = {} if mib is None else {"block_size": mib * MIB}
        readers[f"ndp block_size={mib or 'unset'}"] = \
            lambda size=size: arrow_bridge.read_csv(path, n_threads=threads, **size)
    return readers


def interleaved_best(readers: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """The best of ``repeat`` interleaved rounds per reader, after a warm-up read each.

    >>> interleaved_best({"noop": lambda: None}, 2)["noop"] >= 0
    True
    """
    for read in readers.values():
        read()
    best = {name: float("inf") for name in readers}
    for _ in range(repeat):
        for name, read in readers.items():
            started = time.perf_counter()
            read()
            best[name] = min(best[name], time.perf_counter() - started)
    return best


def main(argv: list[str] | None = None) -> int:
    from benchmarks import datasets

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=os.cpu_count(), help="threads for every reader")
    parser.add_argument("--repeat", type=int, default=4, help="rounds; the best is kept (default 4)")
    parser.add_argument("--datasets", default="lineitem,edges,floats", help="comma list (default %(default)s)")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR, help="results directory")
    args = parser.parse_args(argv)
    results = {}
    for kind in args.datasets.split(","):
        path = datasets.make(kind, datasets.default_path(kind))
        warm_page_cache(path)
        best = interleaved_best(readers_for(path, args.threads), args.repeat)
        size = path.stat().st_size
        results[kind] = {"path": path.name, "bytes": size, "best_s": best}
        print(f"== {path.name} ({size / 1e6:.0f} MB), {args.threads} threads, best of {args.repeat}")
        for name, seconds in best.items():
            print(f"  {name:<26} {seconds:.3f} s  {size / seconds / 1e6:7.0f} MB/s  "
                  f"vs pyarrow {best['pyarrow'] / seconds:.2f}x", flush=True)
    payload = {"host": host_info(), "versions": package_versions(), "threads": args.threads,
               "repeat": args.repeat, "datasets": results}
    print(f"-> {write_result(f'span-sizes-{args.threads}t.json', payload, args.out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
