"""Chunked reads: ``read_pandas(chunksize=)`` beside ``pandas.read_csv(chunksize=)``.

    python -m benchmarks.chunks [--chunksize 50000] [--repeat 6] [--threads 2]

Reads the quick peers files (lineitem SF0.05, the 2M-row edge list, 500k float
rows; generated under ``data/`` when missing) in chunks, every chunk turned
into a DataFrame and dropped, the best of ``--repeat`` interleaved rounds in
this process (a warm-up round first: kernels loaded). ndp runs with pyarrow
dtypes and with NumPy dtypes (the frames pandas' own reader gives). A fourth
file is lineitem with one ``l_partkey`` turned to text two thirds of the way
down: pandas types that chunk as text; ndp reads the file again from its
start with that column as text (``DataFrameChunks``), so this row shows what
the second pass costs. Every chunk is checked against pandas' (NumPy dtypes,
``low_memory=False``, ``assert_frame_equal``) once, outside the timing. Ratios are pandas' time
over ndp's (>1: ndp is faster). Writes ``benchmarks/results/chunks.json``.
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Callable, Iterable

from benchmarks import datasets
from benchmarks.common import host_info, package_versions, warm_page_cache, write_result
from benchmarks.peers import QUICK_SIZES

#: Fraction of lineitem's rows before the one whose l_partkey becomes text.
BREAK_AT = 2 / 3


def quick_files() -> dict[str, Path]:
    """The quick peers files, made where missing."""
    sizes = {"lineitem": None, "edges": QUICK_SIZES["edges"], "floats": QUICK_SIZES["floats"]}
    files = {}
    for kind, rows in sizes.items():
        path = datasets.default_path(kind, scale_factor=QUICK_SIZES["scale_factor"], rows=rows)
        params = datasets.dataset_params(kind, scale_factor=QUICK_SIZES["scale_factor"], rows=rows)
        if not datasets.is_current(path, params):
            datasets.make(kind, path, scale_factor=QUICK_SIZES["scale_factor"], rows=rows)
        files[kind] = path
    return files


def with_text_late(lineitem: Path) -> Path:
    """``lineitem`` with the l_partkey of the row ``BREAK_AT`` of the way down made text."""
    out = lineitem.with_name(lineitem.stem + "-text-late.csv")
    lines = lineitem.read_bytes().split(b"\n")
    row = 1 + int((len(lines) - 2) * BREAK_AT)
    key, _, rest = lines[row].split(b",", 2)  # l_orderkey, l_partkey: unquoted integers
    lines[row] = b",".join([key, b"n/a!", rest])
    out.write_bytes(b"\n".join(lines))
    return out


def _drain(chunks: Iterable[Any]) -> int:
    return sum(len(frame) for frame in chunks)


def readers(chunksize: int, threads: int) -> dict[str, Callable[[Path], int]]:
    import pandas as pd

    import arrow_bridge

    return {
        "pandas": lambda path: _drain(pd.read_csv(path, chunksize=chunksize)),
        "ndp (pyarrow dtypes)": lambda path: _drain(arrow_bridge.read_pandas(path, chunksize=chunksize,
                                                                             n_threads=threads)),
        "ndp (NumPy dtypes)": lambda path: _drain(arrow_bridge.read_pandas(path, chunksize=chunksize,
                                                                           n_threads=threads, dtype_backend="numpy")),
    }


def check_alike(path: Path, chunksize: int) -> None:
    """Every chunk of ndp's (NumPy dtypes) is pandas' with ``low_memory=False`` (pandas'
    default parses a chunk in pieces of its own buffer's size and may mix the pieces' types
    in one column, with a ``DtypeWarning``: in the late-text file, ints and strs)."""
    import pandas as pd

    import arrow_bridge

    with arrow_bridge.read_pandas(path, chunksize=chunksize, dtype_backend="numpy") as ours:
        for mine, theirs in zip(ours, pd.read_csv(path, chunksize=chunksize, low_memory=False), strict=True):
            pd.testing.assert_frame_equal(mine, theirs, check_exact=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.chunks", description=__doc__.split("\n")[0])
    parser.add_argument("--chunksize", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=6, help="rounds; the best is reported")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")  # pandas' DtypeWarning on the mixed file
    files = quick_files()
    files["lineitem, text late"] = with_text_late(files["lineitem"])
    timed = readers(args.chunksize, args.threads)
    best: dict[str, dict[str, float]] = {name: {} for name in files}
    for path in files.values():
        warm_page_cache(path)
        check_alike(path, args.chunksize)
    for round_ in range(args.repeat + 1):  # round 0 warms up
        for name, path in files.items():
            for reader, read in timed.items():
                start = time.perf_counter()
                read(path)
                seconds = time.perf_counter() - start
                if round_:
                    best[name][reader] = min(best[name].get(reader, seconds), seconds)
    print(f"chunks of {args.chunksize:,} rows, {args.threads} threads, best of {args.repeat}")
    print(f"{'file':22}" + "".join(f"{reader:>22}" for reader in timed) + "   pandas / ndp (pyarrow, NumPy)")
    for name, times in best.items():
        ratios = [times["pandas"] / times[reader] for reader in timed if reader != "pandas"]
        print(f"{name:22}" + "".join(f"{times[reader]:>21.3f}s" for reader in timed)
              + "   " + ", ".join(f"{ratio:.2f}x" for ratio in ratios))
    out = write_result("chunks.json", {
        "benchmark": "chunks", "chunksize": args.chunksize, "threads": args.threads, "repeat": args.repeat,
        "files": {name: str(path) for name, path in files.items()}, "best_seconds": best,
        "host": host_info(), "versions": package_versions()})
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
