"""The CSV readers under test, and the child process that times one of them.

``benchmarks.peers`` starts ``python -m benchmarks.readers ...`` once per measurement
so that every reader gets a fresh process: its peak RSS (``ru_maxrss``) is its own,
and no reader inherits another's warm allocator, thread pools or page-table state.
The child imports the reader, does one tiny warm-up read of the same schema (import
cost and JIT compilation stay out of the timed region), then times the full read and
prints one ``RESULT_PREFIX``-tagged JSON line.

Only the standard library is imported at module level, for the same reason.
"""
from __future__ import annotations

import argparse
import gc
import io
import json
import resource
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

RESULT_PREFIX = "@@result "

#: Environment variables that cap every library's thread pools. The parent sets them for
#: every child (not only the reader they concern) so that all readers run alike; polars
#: reads POLARS_MAX_THREADS only at import, so it cannot be set from inside the child.
THREAD_ENV_VARS = ("POLARS_MAX_THREADS", "OMP_NUM_THREADS", "NUMBA_NUM_THREADS", "RAYON_NUM_THREADS")

ReadFn = Callable[[Any], Any]


@dataclass(frozen=True)
class Reader:
    """One reader: how to set it up for ``threads`` threads and what it calls per read."""

    name: str
    label: str
    module: str  # import that must succeed for the reader to be available
    setup: Callable[[int], ReadFn]  # imports lazily, configures threads, returns read(source)
    in_memory: Callable[[bytes], Any] | None = None  # wraps bytes as this reader's file object
    oneliner: str | None = None  # start-up probe: ``python -c`` code reading ``{path}``


# --- setup functions: one per reader; each returns ``read(source) -> result`` ---------------

def _setup_ndp(threads: int) -> ReadFn:
    import arrow_bridge

    return lambda source: arrow_bridge.read_csv(source, n_threads=threads)


def _setup_pyarrow(threads: int) -> ReadFn:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    pa.set_cpu_count(threads)
    # use_threads=False selects Arrow's serial reader, its best single-core path.
    options = pacsv.ReadOptions(use_threads=threads > 1)
    return lambda source: pacsv.read_csv(source, read_options=options)


def _setup_polars(threads: int) -> ReadFn:
    import polars as pl

    if pl.thread_pool_size() != threads:  # POLARS_MAX_THREADS must be set before import
        raise RuntimeError(f"polars thread pool has {pl.thread_pool_size()} threads, wanted {threads}")
    # Parse ISO dates like pyarrow and duckdb do, so that outputs are comparable.
    return lambda source: pl.read_csv(source, try_parse_dates=True)


def _setup_duckdb(threads: int) -> ReadFn:
    import duckdb

    con = duckdb.connect()
    con.execute(f"SET threads={threads}")
    # to_arrow_table() is the duckdb >= 1.4 name; fetch_arrow_table() is deprecated there.
    return lambda source: con.read_csv(source).to_arrow_table()


def _setup_pandas(engine: str) -> Callable[[int], ReadFn]:
    def setup(threads: int) -> ReadFn:
        import pandas as pd

        # pandas >= 3.1 splits large files across threads in the C engine, capped by
        # mode.max_threads (default min(cores, 6)); older pandas parse on one thread
        # and lack the option.
        try:
            pd.set_option("mode.max_threads", threads)
        except KeyError:  # pandas.errors.OptionError subclasses KeyError
            pass
        if engine == "pyarrow":
            import pyarrow as pa

            pa.set_cpu_count(threads)
        return lambda source: pd.read_csv(source, engine=engine)

    return setup


def _arrow_buffer_reader(data: bytes) -> Any:
    import pyarrow as pa

    return pa.BufferReader(data)  # zero-copy view: pyarrow's native in-memory source


READERS: tuple[Reader, ...] = (
    # ndp gets a plain BytesIO in memory: the file object pandas-style callers hand over.
    Reader("ndp", "arrow_bridge.read_csv", "arrow_bridge", _setup_ndp, io.BytesIO,
           "import arrow_bridge; arrow_bridge.read_csv({path!r})"),
    Reader("pyarrow", "pyarrow.csv.read_csv", "pyarrow", _setup_pyarrow, _arrow_buffer_reader,
           "import pyarrow.csv; pyarrow.csv.read_csv({path!r})"),
    Reader("polars", "polars.read_csv", "polars", _setup_polars),
    Reader("duckdb", "duckdb read_csv -> Arrow", "duckdb", _setup_duckdb),
    Reader("pandas-c", "pandas.read_csv(engine='c')", "pandas", _setup_pandas("c")),
    Reader("pandas-pyarrow", "pandas.read_csv(engine='pyarrow')", "pandas", _setup_pandas("pyarrow")),
)
READERS_BY_NAME = {reader.name: reader for reader in READERS}


# --- measurement (runs in the child) ---------------------------------------------------------

def result_nbytes(result: Any) -> int | None:
    """Bytes held by a reader's output: Arrow nbytes, polars/pandas own estimates."""
    if hasattr(result, "num_rows") and hasattr(result, "nbytes"):  # pyarrow.Table
        return int(result.nbytes)
    if hasattr(result, "estimated_size"):  # polars.DataFrame
        return int(result.estimated_size())
    if hasattr(result, "memory_usage"):  # pandas.DataFrame
        return int(result.memory_usage(deep=True).sum())
    return None


def _maxrss_bytes() -> int:
    # Linux reports ru_maxrss in KiB.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _timed(read: ReadFn, source: Any) -> tuple[Any, float, float]:
    """Run one read; return its result, wall seconds and CPU seconds (all threads)."""
    cpu0, t0 = _cpu_seconds(), time.perf_counter()
    result = read(source)
    return result, time.perf_counter() - t0, _cpu_seconds() - cpu0


def load_prefix(path: str, limit: int | None) -> bytes:
    """The file's bytes, cut after the last newline within ``limit`` bytes (whole file if None)."""
    with open(path, "rb") as f:
        data = f.read() if limit is None else f.read(limit)
    return data if limit is None or len(data) < limit else data[: data.rindex(b"\n") + 1]


def measure(reader: Reader, path: str, warmup_path: str, threads: int, *, repeat: int = 1,
            in_memory_limit: int | None = None, memory: bool = False) -> dict[str, Any]:
    """Time ``reader`` on ``path`` after a warm-up read; the body of the child process.

    With ``memory`` the file (or its first ``in_memory_limit`` bytes) is loaded before
    timing and each read gets a fresh in-memory file object over those bytes.
    """
    read = reader.setup(threads)
    if memory:
        assert reader.in_memory is not None, f"{reader.name} has no in-memory source"
        data = load_prefix(path, in_memory_limit)
        warm = load_prefix(warmup_path, None)
        read(reader.in_memory(warm))  # warm the file-object code path too
        make_source: Callable[[], Any] = lambda: reader.in_memory(data)
        source_bytes = len(data)
    else:
        read(warmup_path)
        make_source = lambda: path
        source_bytes = None
    gc.collect()
    rss_before = _maxrss_bytes()
    wall, cpu = [], []
    result = None
    for _ in range(repeat):
        source = make_source()
        result = None  # drop the previous result first: peak RSS must reflect one output
        result, seconds, cpu_seconds = _timed(read, source)
        wall.append(seconds)
        cpu.append(cpu_seconds)
    return {
        "reader": reader.name,
        "seconds": wall,
        "cpu_seconds": cpu,
        "source_bytes": source_bytes,
        "rows": len(result),
        "nbytes": result_nbytes(result),
        "result_type": f"{type(result).__module__}.{type(result).__qualname__}",
        "maxrss_before_read": rss_before,
        "maxrss": _maxrss_bytes(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.readers",
                                     description="Child process: time one reader on one file.")
    parser.add_argument("reader", choices=sorted(READERS_BY_NAME))
    parser.add_argument("path")
    parser.add_argument("--warmup", required=True, help="small CSV with the same schema")
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--repeat", type=int, default=1, help="reads within this process")
    parser.add_argument("--memory", action="store_true", help="read from in-memory bytes")
    parser.add_argument("--limit-bytes", type=int, help="with --memory: only this many leading bytes")
    args = parser.parse_args(argv)
    result = measure(READERS_BY_NAME[args.reader], args.path, args.warmup, args.threads,
                     repeat=args.repeat, in_memory_limit=args.limit_bytes, memory=args.memory)
    print(RESULT_PREFIX + json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
