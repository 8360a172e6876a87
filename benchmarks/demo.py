"""Read one CSV with arrow_bridge.read_csv and with pyarrow.csv.read_csv; print both,
then read it again through an emulated computational SSD and print its Report.

Usage: ``python -m benchmarks.demo PATH [--threads N]``

A single in-process read each, after a tiny warm-up read of the file's first rows (so
imports and JIT compilation are not timed) and with the file already in the page cache.
For careful numbers use ``python -m benchmarks.peers``.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv

from benchmarks.common import MB, mb_per_s, warm_page_cache, write_head

Read = Callable[[str], pa.Table]


def ndp_reader(threads: int) -> Read | None:
    """arrow_bridge.read_csv with ``threads`` threads, or None (with a message) if unavailable."""
    try:
        import arrow_bridge

        read_csv = arrow_bridge.read_csv
    except (ImportError, AttributeError) as exc:
        print(f"arrow_bridge.read_csv is not available: {exc}")
        return None
    return lambda path: read_csv(path, n_threads=threads)


def pyarrow_reader(threads: int) -> Read:
    """pyarrow.csv.read_csv limited to ``threads`` threads."""
    pa.set_cpu_count(threads)
    options = pacsv.ReadOptions(use_threads=threads > 1)
    return lambda path: pacsv.read_csv(path, read_options=options)


def timed_read(read: Read, path: Path, warmup: Path) -> tuple[pa.Table, float]:
    """Warm up on the small file, then time one full read."""
    read(str(warmup))
    start = time.perf_counter()
    table = read(str(path))
    return table, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.demo", description=__doc__.split("\n\n")[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    size = args.path.stat().st_size
    print(f"{args.path}: {size / MB:.1f} MB, {args.threads} threads")
    warm_page_cache(args.path)

    with tempfile.TemporaryDirectory() as tmp:
        warmup = write_head(args.path, Path(tmp) / "head.csv")
        ndp_read = ndp_reader(args.threads)
        ndp_s = None
        if ndp_read is not None:
            table, ndp_s = timed_read(ndp_read, args.path, warmup)
            print(f"\n{table.schema}\n")
            print(f"ndp     arrow_bridge.read_csv : {table.num_rows:>12,} rows  {ndp_s:8.3f} s  "
                  f"{mb_per_s(size, ndp_s):8.1f} MB/s")
            del table  # free it before the second read, so the two don't share memory
        table, pa_s = timed_read(pyarrow_reader(args.threads), args.path, warmup)
        if ndp_s is None:
            print(f"\n{table.schema}\n")
        print(f"pyarrow pyarrow.csv.read_csv  : {table.num_rows:>12,} rows  {pa_s:8.3f} s  "
              f"{mb_per_s(size, pa_s):8.1f} MB/s")

    if ndp_s is None:
        print("\nndp/pyarrow speed ratio: n/a (arrow_bridge.read_csv missing)")
        return 1
    print(f"\nndp/pyarrow speed ratio: {pa_s / ndp_s:.2f}x  (>1: ndp is faster)")
    device_run(args.path, args.threads)
    return 0


def device_run(path: Path, threads: int, profile: str = "summarizer-board") -> None:
    """The same file through an emulated computational SSD (dynamic split): the
    Table must not change; the Report says what the modeled hardware would do."""
    import arrow_bridge
    from arrow_bridge.warmup import device_apps_cached
    from device_emulator import ComputationalSSD
    from ndp_core.report import collect

    if not device_apps_cached():
        print("\nThe first device read compiles the device-side StorageApps once (about 45 s on 2 cores); "
              "later runs load them from the cache.", flush=True)
    with ComputationalSSD(profile, workers=threads) as ssd, collect() as runs:
        table = arrow_bridge.read_csv(str(path), n_threads=threads, device=ssd, split="dynamic")
    same = table.equals(arrow_bridge.read_csv(str(path), n_threads=threads))
    print(f"\nOn an emulated computational SSD ({profile}, split=dynamic): same Table as the host path: {same}")
    print(runs.total)


if __name__ == "__main__":
    sys.exit(main())
