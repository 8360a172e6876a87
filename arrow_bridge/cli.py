"""``ndp-read-csv``: read a CSV file, print its schema and how fast it was read."""
from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Sequence


def build_parser() -> argparse.ArgumentParser:
    """The command line's arguments.

    >>> build_parser().parse_args(["data.csv", "--threads", "2"]).threads
    2
    """
    parser = argparse.ArgumentParser(
        prog="ndp-read-csv",
        description="Read a CSV file into Apache Arrow with arrow_bridge and report the result.",
        epilog="Example: ndp-read-csv data/lineitem.csv --threads 2 --compare-pyarrow",
    )
    parser.add_argument("path", help="CSV file path or fsspec URL")
    parser.add_argument("--sep", default=",", help="field delimiter (default: ',')")
    parser.add_argument("--threads", type=int, default=0, help="parser threads (default: all cores)")
    parser.add_argument("--block-size", type=int, default=None, help="bytes per parsed block")
    parser.add_argument("--usecols", help="comma-separated column names to read")
    parser.add_argument("--on-bad-lines", choices=("error", "skip", "warn"), default="error")
    parser.add_argument("--head", type=int, default=0, metavar="N", help="print the first N rows")
    parser.add_argument("--compare-pyarrow", action="store_true",
                        help="also read with pyarrow.csv and print both throughputs")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Reads the file ``argv`` names and prints its schema, size and read speed; returns the exit status.

    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = os.path.join(folder, "t.csv")
    ...     _ = open(path, "w").write("a,b\\n1,x\\n")
    ...     main([path])  # doctest: +ELLIPSIS
    a: int64
    b: string
    <BLANKLINE>
    rows: 1  columns: 2  table: 0.0 MB
    arrow_bridge: ... s  (... MB/s)
    0
    >>> main(["no-such-file.csv"])  # the error goes to stderr
    1
    """
    args = build_parser().parse_args(argv)
    from arrow_bridge import CsvParseError, read_csv

    options = {"sep": args.sep, "n_threads": args.threads, "on_bad_lines": args.on_bad_lines}
    if args.block_size:
        options["block_size"] = args.block_size
    if args.usecols:
        options["usecols"] = args.usecols.split(",")
    started = time.perf_counter()
    try:
        table = read_csv(args.path, **options)
    except (CsvParseError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    seconds = time.perf_counter() - started
    size = os.path.getsize(args.path) if os.path.exists(args.path) else 0
    print(table.schema)
    print(f"\nrows: {table.num_rows:,}  columns: {table.num_columns}  "
          f"table: {table.nbytes / 1e6:,.1f} MB")
    print(f"arrow_bridge: {seconds:.3f} s" + (f"  ({size / seconds / 1e6:,.0f} MB/s)" if size else ""))
    if args.compare_pyarrow:
        _compare_pyarrow(args, size, seconds)
    if args.head:
        print(table.slice(0, args.head).to_pandas().to_string())
    return 0


def _compare_pyarrow(args: argparse.Namespace, size: int, ours: float) -> None:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    if args.threads:
        pa.set_cpu_count(args.threads)
    started = time.perf_counter()
    pacsv.read_csv(args.path, parse_options=pacsv.ParseOptions(delimiter=args.sep))
    theirs = time.perf_counter() - started
    rate = f"  ({size / theirs / 1e6:,.0f} MB/s)" if size else ""
    print(f"pyarrow.csv:  {theirs:.3f} s{rate}  -> arrow_bridge is {theirs / ours:.2f}x")


if __name__ == "__main__":
    sys.exit(main())
