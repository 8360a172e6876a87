"""Read one CSV with arrow_bridge.read_csv and with pyarrow.csv.read_csv; print both,
then read it again through an emulated computational SSD and print its Report.

Usage: ``python -m benchmarks.demo PATH [--threads N]``

In one process, after a tiny warm-up read of the file's first rows (so imports and JIT
compilation are not timed) and with the file already in the page cache: ``--repeat``
reads each (default 3), the first and the best printed. Each reader's first full read
also pays for what the small one did not touch (the first large allocations, more
kernels loaded): on 75 MB here it took several times its later reads, for pyarrow as for
us. The ratio is of the best reads. For careful numbers use ``python -m benchmarks.peers``
(fresh processes, interleaved rounds).
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


def timed_read(read: Read, path: Path, warmup: Path, repeat: int) -> tuple[pa.Table, float, float]:
    """Warm up on the small file, then time ``repeat`` full reads: the Table, the first's
    seconds and the best's."""
    read(str(warmup))
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        table = read(str(path))
        times.append(time.perf_counter() - start)
    return table, times[0], min(times)


def _line(label: str, rows: int, size: int, first: float, best: float) -> str:
    return (f"{label}: {rows:>12,} rows  {best:8.3f} s  {mb_per_s(size, best):8.1f} MB/s  "
            f"(best of the reads; the first took {first:.3f} s)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.demo", description=__doc__.split("\n\n")[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--repeat", type=int, default=3, help="full reads per reader (default 3)")
    args = parser.parse_args(argv)
    size = args.path.stat().st_size
    print(f"{args.path}: {size / MB:.1f} MB, {args.threads} threads")
    warm_page_cache(args.path)

    with tempfile.TemporaryDirectory() as tmp:
        warmup = write_head(args.path, Path(tmp) / "head.csv")
        ndp_read = ndp_reader(args.threads)
        ndp_s = None
        if ndp_read is not None:
            table, first, ndp_s = timed_read(ndp_read, args.path, warmup, args.repeat)
            print(f"\n{table.schema}\n")
            print(_line("ndp     arrow_bridge.read_csv ", table.num_rows, size, first, ndp_s))
            del table  # free it before the second read, so the two don't share memory
        table, first, pa_s = timed_read(pyarrow_reader(args.threads), args.path, warmup, args.repeat)
        if ndp_s is None:
            print(f"\n{table.schema}\n")
        print(_line("pyarrow pyarrow.csv.read_csv  ", table.num_rows, size, first, pa_s))

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
