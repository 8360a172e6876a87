"""Streaming CSV → Parquet: peak memory while the file grows 10x, and under ``ulimit -v``.

```sh
python -m benchmarks.streaming               # 100 MB and 1 GB lineitem, 2 threads (~3 minutes)
python -m benchmarks.streaming --sizes 100   # one size; --threads N, --keep (keep the 1 GB file)
```

Each conversion runs in a fresh child process (``python -m benchmarks.streaming
--child MODE CSV PARQUET THREADS``) that imports its reader, converts a
100-row head of the same file once (kernels loaded, pools started), then
times the full conversion and reports its peak RSS (``ru_maxrss``, its own
process only) beside the RSS it had before (``base``). Modes:

* ``ndp-stream``: ``arrow_bridge.open_csv`` batches into ``pq.ParquetWriter``;
* ``ndp-table``: ``arrow_bridge.read_csv`` then ``pq.write_table`` (the whole Table in memory);
* ``pyarrow-stream``: ``pyarrow.csv.open_csv`` batches into ``pq.ParquetWriter``.

The 100 MB file is ``benchmarks.common.lineitem_slice(100)``; the 1 GB one is
``data/lineitem-sf1.csv`` with its data rows repeated up to 10^9 bytes, made
for the run and deleted after it (unless ``--keep``). Parquet outputs go to a
temporary folder. Then, on the 1 GB file, the same children run under
``bash -c 'ulimit -v LIMIT; ...'`` with LIMIT below the file's size: the
streaming conversions complete, the whole-Table one cannot. Arrow's default
allocator (mimalloc) reserves address space far beyond what it uses, so
those children use the system allocator (``ARROW_DEFAULT_MEMORY_POOL=system``),
and ``MALLOC_ARENA_MAX=2`` keeps glibc from reserving 64 MB per thread.

Results: ``benchmarks/results/streaming.json``.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from benchmarks.common import (DATA_DIR, MB, REPO_ROOT, host_info, lineitem_slice, package_versions, write_head,
                               write_result)

RESULT_PREFIX = "@@result "
LINEITEM_SF1 = DATA_DIR / "lineitem-sf1.csv"
MODES = ("ndp-stream", "ndp-table", "pyarrow-stream")
ULIMIT_ENV = {"ARROW_DEFAULT_MEMORY_POOL": "system", "MALLOC_ARENA_MAX": "2"}


# ---- the child: one conversion --------------------------------------------------------------------
def _convert(mode: str, threads: int) -> Callable[[Path, Path], int]:
    """``convert(csv, parquet) -> rows`` for ``mode``, its imports done."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    pa.set_cpu_count(threads)

    def stream(reader: pa.RecordBatchReader, out: Path) -> int:
        rows = 0
        with reader, pq.ParquetWriter(out, reader.schema) as writer:
            for batch in reader:
                writer.write_batch(batch)
                rows += batch.num_rows
        return rows

    if mode == "pyarrow-stream":
        options = pacsv.ReadOptions(use_threads=threads > 1)
        return lambda csv, out: stream(pacsv.open_csv(csv, read_options=options), out)
    from arrow_bridge.api import open_csv, read_csv

    if mode == "ndp-stream":
        return lambda csv, out: stream(open_csv(csv, n_threads=threads), out)

    def whole(csv: Path, out: Path) -> int:
        table = read_csv(csv, n_threads=threads)
        pq.write_table(table, out)
        return table.num_rows

    return whole


def _rss_bytes() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def child(mode: str, csv: Path, out: Path, threads: int) -> dict[str, Any]:
    """Converts ``csv`` to ``out`` once (after a warm-up on its head); the figures."""
    convert = _convert(mode, threads)
    head = write_head(csv, out.with_suffix(".head.csv"))
    convert(head, out)
    base = _rss_bytes()
    started = time.perf_counter()
    rows = convert(csv, out)
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
    return {"mode": mode, "rows": rows, "seconds": seconds, "base_rss_mb": base / MB, "peak_rss_mb": peak / MB,
            "parquet_mb": out.stat().st_size / MB}


# ---- the parent ------------------------------------------------------------------------------------
def run_child(mode: str, csv: Path, out: Path, threads: int, ulimit_kib: int | None = None) -> dict[str, Any]:
    """One child process; its figures, or its failure (return code, last error line)."""
    command = [sys.executable, "-m", "benchmarks.streaming", "--child", mode, str(csv), str(out), str(threads)]
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), NUMBA_NUM_THREADS=str(threads))
    if ulimit_kib is not None:
        env.update(ULIMIT_ENV)
        command = ["bash", "-c", f'ulimit -v {ulimit_kib} && exec "$@"', "bash", *command]
    done = subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True)
    for line in done.stdout.splitlines():
        if line.startswith(RESULT_PREFIX):
            return dict(json.loads(line[len(RESULT_PREFIX):]), ok=True)
    errors = [line for line in done.stderr.splitlines() if line.strip()]
    return {"mode": mode, "ok": False, "returncode": done.returncode, "error": errors[-1] if errors else ""}


def repeated_lineitem(target_bytes: int) -> Path:
    """``data/lineitem-sf1.csv`` with its data rows repeated up to ``target_bytes`` (whole records)."""
    source = LINEITEM_SF1
    out = DATA_DIR / f"lineitem-{target_bytes // MB}MB-repeated.csv"
    written = 0
    with open(out, "wb") as fout:
        while written < target_bytes:
            with open(source, "rb") as fin:
                header = fin.readline()
                if not written:
                    written += fout.write(header)
                for line in fin:
                    written += fout.write(line)
                    if written >= target_bytes:
                        break
    return out


def _summary(result: dict[str, Any], size: int) -> str:
    if not result["ok"]:
        return f"{result['mode']:15s} FAILED (rc {result['returncode']}): {result['error'][:110]}"
    return (f"{result['mode']:15s} {result['seconds']:7.2f} s {size / MB / result['seconds']:7.0f} MB/s   "
            f"peak RSS {result['peak_rss_mb']:7.0f} MB (base {result['base_rss_mb']:4.0f}, "
            f"+{result['peak_rss_mb'] - result['base_rss_mb']:5.0f})   {result['rows']:>10,} rows")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.streaming", description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100,1000", help="file sizes in MB (default 100,1000)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--ulimit-mb", type=int, default=800,
                        help="address-space limit for the ulimit run, below the largest file (default 800)")
    parser.add_argument("--keep", action="store_true", help="keep the repeated (largest) file")
    parser.add_argument("--child", nargs=4, metavar=("MODE", "CSV", "PARQUET", "THREADS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        mode, csv, out, threads = args.child
        print(RESULT_PREFIX + json.dumps(child(mode, Path(csv), Path(out), int(threads))), flush=True)
        return 0

    sizes = [int(s) for s in args.sizes.split(",")]
    made: list[Path] = []
    files = []
    results: dict[str, Any] = {"host": host_info(), "versions": package_versions(), "threads": args.threads,
                               "sizes": {}, "ulimit": None}
    scratch = Path(tempfile.mkdtemp(prefix="ndp-streaming-"))
    if not LINEITEM_SF1.exists():
        from benchmarks import datasets

        datasets.make_lineitem(LINEITEM_SF1, 1)
    try:
        for mb in sizes:
            path = lineitem_slice(mb) if mb * MB <= LINEITEM_SF1.stat().st_size else repeated_lineitem(mb * MB)
            if path.name.endswith("-repeated.csv") and not args.keep:
                made.append(path)
            files.append((mb, path))
        for mb, path in files:
            size = path.stat().st_size
            print(f"{path.name}: {size / MB:.0f} MB, {args.threads} threads")
            runs = []
            for mode in MODES:
                result = run_child(mode, path, scratch / f"{mode}.parquet", args.threads)
                print("  " + _summary(result, size), flush=True)
                runs.append(result)
            results["sizes"][f"{mb}MB"] = {"file": path.name, "bytes": size, "runs": runs}
        mb, path = files[-1]
        size = path.stat().st_size
        limit = args.ulimit_mb * 1024 * 1024  # bytes of address space
        print(f"ulimit -v {args.ulimit_mb} MiB ({limit / MB:.0f} MB) on {path.name} ({size / MB:.0f} MB), "
              f"env {ULIMIT_ENV}")
        runs = []
        for mode in MODES:
            result = run_child(mode, path, scratch / f"{mode}-ulimit.parquet", args.threads, limit // 1024)
            print("  " + _summary(result, size), flush=True)
            runs.append(result)
        results["ulimit"] = {"limit_bytes": limit, "file": path.name, "file_bytes": size, "env": ULIMIT_ENV,
                             "runs": runs}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        for path in made:
            path.unlink(missing_ok=True)
    out = write_result("streaming.json", results)
    print(f"results: {out.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
