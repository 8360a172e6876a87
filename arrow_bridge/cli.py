"""``ndp``: the command line — read, convert, sniff, grep, simulate on an emulated SSD, list profiles.

One function per subcommand (``cmd_read``, ``cmd_convert``, ``cmd_sniff``,
``cmd_grep``, ``cmd_simulate``, ``cmd_profiles``) and shared helpers that take what users
type: sizes (:func:`parse_size`), separators (:func:`parse_sep`), columns by
name or position (:func:`parse_usecols`), ``col=type`` (:func:`parse_dtype`),
fault rates (:func:`parse_faults`). Errors end as one line on stderr and an
exit status of their own (:data:`EXIT_CODES`); ``--traceback`` (or
``NDP_TRACEBACK=1``) shows the whole traceback instead. ``ndp-read-csv`` is
kept as an alias of ``ndp read`` (:func:`read_csv_main`).

>>> parse_size("64KiB"), parse_sep(r"\\t"), parse_usecols("0,2")
(65536, '\\t', [0, 2])
>>> build_parser().parse_args(["read", "data.csv", "--block-size", "2MiB"]).block_size
2097152
"""
from __future__ import annotations

import argparse
import codecs
import os
import re
import sys
import time
import traceback
import warnings
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from arrow_bridge import sizes

#: Exit statuses: each kind of failure has its own, so scripts can tell them apart.
EXIT_OK = 0
EXIT_OTHER = 1  # anything else (a bug: rerun with --traceback and report it)
EXIT_USAGE = 2  # bad command line or option value, a column or profile that does not exist
EXIT_FILE = 3  # a file that cannot be found, opened, read or written
EXIT_PARSE = 4  # malformed CSV (arrow_bridge.CsvParseError)
EXIT_DECODE = 5  # bytes the encoding cannot decode (arrow_bridge.CsvDecodeError)
EXIT_MEMORY = 6  # the read would pass --memory-limit (arrow_bridge.MemoryLimitError)
EXIT_INTERRUPTED = 130  # Ctrl-C
EXIT_CODES = {EXIT_OK: "success", EXIT_OTHER: "any other error (rerun with --traceback and report it)",
              EXIT_USAGE: "usage: bad command line or option value, unknown column or profile",
              EXIT_FILE: "file not found, unreadable or unwritable",
              EXIT_PARSE: "malformed CSV (the message names file, line, column and byte offset)",
              EXIT_DECODE: "text the --encoding cannot decode",
              EXIT_MEMORY: "the read needs more memory than --memory-limit allows",
              EXIT_INTERRUPTED: "interrupted (Ctrl-C)"}

TRACEBACK_ENV = "NDP_TRACEBACK"
FORMATS = {".parquet": "parquet", ".pq": "parquet", ".feather": "feather", ".arrow": "arrow",
           ".ipc": "arrow", ".arrows": "arrows", ".csv": "csv", ".tsv": "csv"}
PEERS = ("pyarrow", "pandas")
_SEPARATOR_NAMES = {"tab": "\t", "comma": ",", "semicolon": ";", "pipe": "|", "space": " ", "colon": ":"}


class UsageError(ValueError):
    """A value on the command line the CLI cannot use (exit status 2)."""


# --------------------------------------------------------------------------
# What users type -> the reader's options.
# --------------------------------------------------------------------------
def parse_size(text: str) -> int:
    """Bytes from ``64KiB``, ``2MiB``, ``1_000_000``, ``1.5MB``, ``4k`` (k/kB/MB/GB: powers of
    1000; KiB/MiB/GiB: powers of 1024; case does not matter).

    >>> parse_size("64KiB"), parse_size("2mib"), parse_size("1_000_000"), parse_size("1.5MB")
    (65536, 2097152, 1000000, 1500000)
    >>> parse_size("lots")
    Traceback (most recent call last):
    ...
    arrow_bridge.cli.UsageError: not a size: 'lots' (try 65536, 64KiB, 2MiB, 1_000_000)
    """
    try:
        return sizes.parse_size(text)
    except ValueError as error:
        raise UsageError(str(error)) from None


def parse_sep(text: str) -> str | None:
    """The one-character separator a user typed: itself (``;``), an escape however the shell left
    it (``\\t``, ``\\\\t``, ``\\x09``), a name (``tab``, ``comma``, ``semicolon``, ``pipe``,
    ``space``), or ``auto`` (None: sniff it).

    >>> [parse_sep(s) for s in (";", "\\t", r"\\t", r"\\\\t", "tab", r"\\x1f", "auto")]
    [';', '\\t', '\\t', '\\t', '\\t', '\\x1f', None]
    >>> parse_sep("ab")
    Traceback (most recent call last):
    ...
    arrow_bridge.cli.UsageError: --sep must be one character (or \\t, tab, auto, ...), got 'ab'
    """
    if text.lower() in ("auto", "sniff"):
        return None
    if text.lower() in _SEPARATOR_NAMES:
        return _SEPARATOR_NAMES[text.lower()]
    if len(text) > 1 and text.startswith("\\"):
        try:
            text = codecs.decode("\\" + text.lstrip("\\"), "unicode_escape")
        except UnicodeDecodeError:
            pass
    if len(text) != 1:
        raise UsageError(f"--sep must be one character (or \\t, tab, auto, ...), got {text!r}")
    return text


def parse_usecols(text: str) -> list[str] | list[int]:
    """Columns by name (``date,price``) or by 0-based position (``0,3``), not both.

    >>> parse_usecols("date, price"), parse_usecols("0,3")
    (['date', 'price'], [0, 3])
    >>> parse_usecols("0,price")
    Traceback (most recent call last):
    ...
    arrow_bridge.cli.UsageError: --usecols takes names or 0-based positions, not both: '0,price'
    """
    items = [item.strip() for item in text.split(",") if item.strip()]
    if not items:
        raise UsageError("--usecols needs at least one column")
    numeric = [item.isdigit() for item in items]
    if all(numeric):
        return [int(item) for item in items]
    if any(numeric):
        raise UsageError(f"--usecols takes names or 0-based positions, not both: {text!r}")
    return items


def parse_dtype(values: Sequence[str]) -> dict[str, str]:
    """``col=type`` pairs (repeated, or comma-separated) as read_csv's ``dtype`` mapping.

    >>> parse_dtype(["a=int32,b=string", "c = float64"])
    {'a': 'int32', 'b': 'string', 'c': 'float64'}
    """
    dtype: dict[str, str] = {}
    for value in values:
        for pair in value.split(","):
            name, equals, kind = pair.partition("=")
            if not equals or not name.strip() or not kind.strip():
                raise UsageError(f"--dtype takes col=type (e.g. price=float64), got {pair!r}")
            dtype[name.strip()] = kind.strip()
    return dtype


def parse_faults(text: str) -> Any:
    """A ``device_emulator.FaultPlan`` from ``media_error=0.01,tq_overflow=0.1,seed=3``.

    >>> parse_faults("media_error=0.01,seed=3")
    FaultPlan(media_error=0.01, app_failure=0.0, link_timeout=0.0, tq_overflow=0.0, seed=3, tasks=None)
    """
    from device_emulator import FaultPlan

    kinds = ("media_error", "app_failure", "link_timeout", "tq_overflow")
    fields: dict[str, Any] = {}
    for pair in text.split(","):
        name, equals, value = (part.strip() for part in pair.partition("="))
        if not equals or name not in (*kinds, "seed"):
            raise UsageError(f"--faults takes kind=rate pairs ({', '.join(kinds)}, seed=N), got {pair!r}")
        try:
            fields[name] = int(value) if name == "seed" else float(value)
        except ValueError:
            raise UsageError(f"--faults: {name} needs a number, got {value!r}") from None
    try:
        return FaultPlan(**fields)
    except ValueError as error:
        raise UsageError(f"--faults: {error}") from None


def parse_peers(text: str) -> list[str]:
    """``--compare pyarrow,pandas``: the peers to time beside ndp.

    >>> parse_peers("pandas, pyarrow")
    ['pandas', 'pyarrow']
    """
    peers = [peer.strip().lower() for peer in text.split(",") if peer.strip()]
    unknown = [peer for peer in peers if peer not in PEERS]
    if unknown or not peers:
        raise UsageError(f"--compare takes {', '.join(PEERS)} (comma-separated), got {text!r}")
    return peers


def _typed(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """``parse`` as an argparse ``type=``: a UsageError becomes argparse's usage message."""
    def convert(text: str) -> Any:
        try:
            return parse(text)
        except UsageError as error:
            raise argparse.ArgumentTypeError(str(error)) from None
    convert.__name__ = parse.__name__
    return convert


def reader_options(args: argparse.Namespace) -> dict[str, Any]:
    """read_csv/open_csv keywords from the shared reader options (only those given).

    >>> args = build_parser().parse_args(["read", "x.csv", "--sep", "tab", "--usecols", "1", "--nrows", "5"])
    >>> reader_options(args)
    {'sep': '\\t', 'usecols': [1], 'nrows': 5}
    """
    options: dict[str, Any] = {}
    if args.sep != ",":
        options["sep"] = args.sep
    for name, key in (("usecols", "usecols"), ("nrows", "nrows"), ("encoding", "encoding"),
                      ("encoding_errors", "encoding_errors"), ("threads", "n_threads"),
                      ("block_size", "block_size"), ("memory_limit", "memory_limit")):
        if getattr(args, name, None) is not None:
            options[key] = getattr(args, name)
    if args.dtype:
        options["dtype"] = parse_dtype(args.dtype)
    if args.on_bad_lines != "error":
        options["on_bad_lines"] = args.on_bad_lines
    return options


# --------------------------------------------------------------------------
# The parser.
# --------------------------------------------------------------------------
def _exit_codes_text() -> str:
    return "exit status:\n" + "\n".join(f"  {code:<4} {text}" for code, text in EXIT_CODES.items())


def _add_reader_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("reader options (as arrow_bridge.read_csv)")
    group.add_argument("--sep", type=_typed(parse_sep), default=",", metavar="SEP",
                       help="field separator: ',' ';' '\\t' tab pipe ... or auto to sniff it (default: ',')")
    group.add_argument("--usecols", type=_typed(parse_usecols), metavar="COLS",
                       help="columns to read: names (date,price) or 0-based positions (0,3)")
    group.add_argument("--dtype", action="append", default=[], metavar="COL=TYPE",
                       help="a column's type (int32, float64, string, date32, ...); repeat or comma-separate")
    group.add_argument("--nrows", type=int, metavar="N", help="read only the first N data rows")
    group.add_argument("--encoding", metavar="CODEC", help="text encoding: any Python codec (default: utf-8)")
    group.add_argument("--encoding-errors", choices=("strict", "replace", "ignore"), dest="encoding_errors",
                       help="what undecodable bytes do (default: strict, an error)")
    group.add_argument("--on-bad-lines", choices=("error", "skip", "warn"), default="error",
                       help="rows with the wrong number of fields (default: error)")
    group.add_argument("--threads", type=int, metavar="N", help="parser threads (default: all cores)")
    group.add_argument("--block-size", type=_typed(parse_size), metavar="SIZE",
                       help="bytes per parsed block: 65536, 64KiB, 2MiB, ...")
    group.add_argument("--memory-limit", type=_typed(parse_size), metavar="SIZE", dest="memory_limit",
                       help="fail with a clear message (exit 6) rather than hold more than SIZE: 512MiB, 2GB, ...")


def _subparser(subparsers: Any, name: str, summary: str, description: str, examples: str,
               **kwargs: Any) -> argparse.ArgumentParser:
    epilog = f"examples:\n{examples}\n\n{_exit_codes_text()}"
    parser = subparsers.add_parser(name, help=summary, description=description, epilog=epilog,
                                   formatter_class=argparse.RawDescriptionHelpFormatter, **kwargs)
    parser.add_argument("--traceback", action="store_true", default=argparse.SUPPRESS,
                        help=f"show the full traceback on errors (or set {TRACEBACK_ENV}=1)")
    return parser


def build_parser(prog: str = "ndp") -> argparse.ArgumentParser:
    """The ``ndp`` command line: a subparser per command, each with examples in its ``--help``.

    >>> args = build_parser().parse_args(["convert", "in.csv", "out.parquet", "--sep", ";"])
    >>> args.command, args.sep, args.format
    ('convert', ';', None)
    """
    parser = argparse.ArgumentParser(
        prog=prog, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="ndp: exact, fast CSV -> Apache Arrow, and an emulated computational SSD to run it in.",
        epilog="examples:\n"
               "  ndp read data.csv --head 5\n"
               "  ndp read data.csv --repeat 5 --compare pyarrow,pandas\n"
               "  ndp convert data.csv data.parquet\n"
               "  ndp sniff export.txt\n"
               "  ndp grep sqlmap access.log -c\n"
               "  ndp simulate data.csv --profile summarizer-board --split dynamic --timeline run.png\n"
               "  ndp profiles show hods-fpga\n\n"
               f"'ndp COMMAND --help' tells more.\n\n{_exit_codes_text()}")
    parser.add_argument("--traceback", action="store_true",
                        help=f"show the full traceback on errors (or set {TRACEBACK_ENV}=1)")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    read = _subparser(
        commands, "read", "read a CSV file: schema, rows, head and speed",
        "Read FILE with arrow_bridge.read_csv and print its schema, size and read speed.\n\n"
        "Timing: without --repeat or --compare, one read is timed and the line says\n"
        "'first call, includes start-up' (thread pools, page cache, lazily loaded kernels).\n"
        "With --repeat N (default 3 when comparing), one warm-up read is made, then the best\n"
        "of N reads is printed; peers are timed the same way in the same process.",
        "  ndp read data.csv --head 5\n"
        "  ndp read data.tsv --sep '\\t' --usecols 0,2 --block-size 64KiB\n"
        "  ndp read data.csv --dtype price=float64 --dtype qty=int32 --nrows 1000\n"
        "  ndp read data.csv --repeat 5 --compare pyarrow,pandas")
    read.add_argument("file", help="CSV file path or fsspec URL")
    _add_reader_options(read)
    shown = read.add_argument_group("output and timing")
    shown.add_argument("--head", type=int, default=0, metavar="N", help="print the first N rows")
    shown.add_argument("--repeat", type=int, metavar="N",
                       help="after one warm-up read, time N reads and print the best")
    shown.add_argument("--compare", type=_typed(parse_peers), default=[], metavar="PEERS",
                       help="also time pyarrow and/or pandas, the same way (e.g. pyarrow,pandas)")
    shown.add_argument("--compare-pyarrow", action="store_true", help=argparse.SUPPRESS)  # ndp-read-csv's spelling
    read.set_defaults(run=cmd_read)

    convert = _subparser(
        commands, "convert", "convert CSV to Parquet, Feather/Arrow IPC or CSV, streaming",
        "Stream FILE batch by batch (arrow_bridge.open_csv) into OUT: memory stays bounded\n"
        "by the batches in flight, whatever the file size. Formats: parquet (.parquet, .pq),\n"
        "feather (.feather: Feather v2, an Arrow IPC file), arrow (.arrow, .ipc: the same IPC\n"
        "file format), arrows (.arrows: the Arrow IPC stream format), csv (.csv, .tsv; written by\n"
        "arrow_bridge.write_csv). Types come from the first block, as pyarrow's open_csv infers\n"
        "them: give --dtype where a later value would not fit. A progress bar over the input\n"
        "bytes shows on stderr when it is a terminal.",
        "  ndp convert data.csv data.parquet\n"
        "  ndp convert data.tsv data.feather --sep tab --compression zstd\n"
        "  ndp convert big.csv out.bin --format arrows --block-size 8MiB\n"
        "  ndp convert data.csv clean.csv --on-bad-lines skip --out-sep ';'")
    convert.add_argument("file", help="CSV file path or fsspec URL")
    convert.add_argument("out", help="output file")
    _add_reader_options(convert)
    written = convert.add_argument_group("output")
    written.add_argument("--format", choices=sorted(set(FORMATS.values())),
                         help="output format (default: from OUT's suffix)")
    written.add_argument("--compression", metavar="CODEC",
                         help="parquet: snappy (default), zstd, gzip, none ...; feather/arrow: lz4, zstd "
                              "(default: none)")
    written.add_argument("--out-sep", type=_typed(parse_sep), default=",", metavar="SEP",
                         help="csv output: the separator (default: ',')")
    written.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                         help="progress bar on stderr (default: when stderr is a terminal)")
    convert.set_defaults(run=cmd_convert)

    sniff = _subparser(
        commands, "sniff", "detect a file's dialect: separator, quoting, header, preamble",
        "Sniff FILE's dialect from its first MiB (arrow_bridge.sniff): delimiter, quote and\n"
        "escape characters, header, preamble lines to skip, line terminator. Prints the\n"
        "dialect, the options to pass to read_csv (pandas takes them too) and why.",
        "  ndp sniff export.txt\n"
        "  ndp read export.txt --sep auto   # read it with the sniffed dialect")
    sniff.add_argument("file", help="CSV file path or fsspec URL")
    sniff.set_defaults(run=cmd_sniff)

    grep = _subparser(
        commands, "grep", "lines holding any of several keywords (grep -F), on the host or an emulated SSD",
        "Print the lines of FILE holding any of the KEYWORDs, as 'LC_ALL=C grep -F -n' does:\n"
        "line number, ':', the line (arrow_bridge.grep). Keywords are literal (no regular\n"
        "expressions), any number, any length; one starting with '-' goes after '--' or as\n"
        "--keyword=-x (or -e-x). With -o the lines\n"
        "go to a Parquet/Feather/Arrow/CSV file as a table (line_number, line). With --device\n"
        "the search runs as a StorageApp on an emulated computational SSD and the Report (its\n"
        "modeled time; on biscuit-pm the per-channel pattern matcher) goes to stderr.\n"
        "Unlike grep, finding nothing is not an error (exit status 0).",
        "  ndp grep sqlmap access.log\n"
        "  ndp grep wp-login.php sqlmap access.log -c\n"
        "  ndp grep -i -e 'union select' --keyword=-rf access.log -o hits.parquet\n"
        "  ndp grep sqlmap access.log -c --device biscuit-pm --split device")
    grep.add_argument("words", nargs="*", metavar="KEYWORD", help="a literal keyword (several: any of them)")
    grep.add_argument("file", metavar="FILE", help="text file path")
    grep.add_argument("-e", "--keyword", action="append", default=[], dest="keywords", metavar="KEYWORD",
                      help="a keyword (repeatable); one starting with '-' as --keyword=-x")
    grep.add_argument("-c", "--count", action="store_true", help="print only the number of matching lines")
    grep.add_argument("-i", "--ignore-case", action="store_true", help="fold ASCII letters' case")
    grep.add_argument("-b", "--byte-offset", action="store_true",
                      help="print each line's byte offset after its number (a byte_offset column with -o)")
    grep.add_argument("--binary", action="store_true",
                      help="lines as bytes: no UTF-8 check (a binary column with -o)")
    written = grep.add_argument_group("output file")
    written.add_argument("-o", "--out", metavar="OUT", help="write the matching lines as a table to OUT")
    written.add_argument("--format", choices=sorted(set(FORMATS.values())),
                         help="OUT's format (default: from its suffix)")
    written.add_argument("--compression", metavar="CODEC", help="as for 'ndp convert'")
    device = grep.add_argument_group("device")
    device.add_argument("--device", metavar="PROFILE",
                        help="run on an emulated SSD with this profile (a name or a .toml path)")
    device.add_argument("--split", metavar="SPLIT",
                        help="host, device (default with --device), static:<fraction> or dynamic")
    device.add_argument("--faults", type=_typed(parse_faults), metavar="KIND=RATE,...",
                        help="inject faults: media_error, app_failure, link_timeout, tq_overflow, seed")
    grep.add_argument("--threads", type=int, metavar="N", help="host threads (default: all cores)")
    grep.add_argument("--block-size", type=_typed(parse_size), metavar="SIZE",
                      help="bytes per task (default 4MiB)")
    grep.set_defaults(run=cmd_grep, out_sep=",")

    simulate = _subparser(
        commands, "simulate", "read through an emulated computational SSD and print its Report",
        "Read FILE through device_emulator.ComputationalSSD(PROFILE) with the given host/device\n"
        "split, print the run's Report (pages by side, bytes moved, busy time per resource,\n"
        "modeled makespan, energy), check that the Table equals the host read, and draw the\n"
        "modeled timeline if asked. The modeled times are deterministic; the wall clock is not.",
        "  ndp simulate data.csv --profile summarizer-board --split dynamic\n"
        "  ndp simulate data.csv --profile hods-fpga --split device --timeline hods.png\n"
        "  ndp simulate data.csv --profile modern-gen4 --split static:0.5 --faults media_error=0.01,seed=1")
    simulate.add_argument("file", help="CSV file path")
    simulate.add_argument("--profile", default="modern-gen4", metavar="NAME",
                          help="shipped profile name or a .toml path (default: modern-gen4; see 'ndp profiles')")
    simulate.add_argument("--split", default="dynamic", metavar="SPLIT",
                          help="host, device, static:<fraction on the device> or dynamic (default)")
    simulate.add_argument("--timeline", metavar="OUT.png", help="write the modeled timeline as an image")
    simulate.add_argument("--faults", type=_typed(parse_faults), metavar="KIND=RATE,...",
                          help="inject faults: media_error, app_failure, link_timeout, tq_overflow, seed")
    _add_reader_options(simulate)
    simulate.set_defaults(run=cmd_simulate)

    profiles = _subparser(
        commands, "profiles", "list the device profiles, or show one with its sources",
        "List the shipped computational-SSD profiles with a one-line summary, or show every\n"
        "parameter of one with its value, unit and the source the TOML file gives for it.",
        "  ndp profiles\n"
        "  ndp profiles show summarizer-board\n"
        "  ndp profiles show ./my-device.toml")
    profiles.add_argument("action", nargs="?", choices=("list", "show"), default="list",
                          help="list (default) or show")
    profiles.add_argument("name", nargs="?", help="the profile to show (a name or a .toml path)")
    profiles.set_defaults(run=cmd_profiles)
    return parser


# --------------------------------------------------------------------------
# read
# --------------------------------------------------------------------------
def _file_size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0  # a URL: no local size


def _rate(size: int, seconds: float) -> str:
    if not size or seconds <= 0:
        return ""
    rate = size / seconds / 1e6
    return f"  ({rate:,.0f} MB/s)" if rate >= 10 else f"  ({rate:.2g} MB/s)"


def format_seconds(seconds: float) -> str:
    """A duration as people read it: ``0.116 s``, ``1.73 ms``, ``84 us``.

    >>> format_seconds(0.1161), format_seconds(0.00173), format_seconds(0.000084)
    ('0.116 s', '1.73 ms', '84 us')
    """
    if seconds >= 0.1:
        return f"{seconds:.3f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} us"


def time_calls(call: Callable[[], Any], repeat: int | None) -> tuple[Any, float, str]:
    """``call``'s result, its time and how it was taken: once, cold (``repeat`` None), or one
    warm-up call then the best of ``repeat``.

    >>> _, seconds, how = time_calls(lambda: 1, None)
    >>> how
    'first call, includes start-up'
    >>> time_calls(lambda: 1, 3)[2]
    'best of 3 after a warm-up read'
    """
    if repeat is None:
        started = time.perf_counter()
        result = call()
        return result, time.perf_counter() - started, "first call, includes start-up"
    result = call()
    best = float("inf")
    for _ in range(max(1, repeat)):
        started = time.perf_counter()
        result = call()
        best = min(best, time.perf_counter() - started)
    return result, best, f"best of {max(1, repeat)} after a warm-up read"


def cmd_read(args: argparse.Namespace) -> int:
    """``ndp read``: schema, rows, columns, bytes, speed, head; peers if asked.

    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = os.path.join(folder, "t.csv")
    ...     _ = open(path, "w").write("a,b\\n1,x\\n")
    ...     main(["read", path, "--head", "1"])  # doctest: +ELLIPSIS
    file: .../t.csv (8 bytes)
    a: int64
    b: string
    <BLANKLINE>
    rows: 1  columns: 2  table: 0.0 MB
    ndp: ...  first call, includes start-up
       a  b
    0  1  x
    0
    """
    from arrow_bridge import read_csv

    peers = list(args.compare) + (["pyarrow"] if args.compare_pyarrow and "pyarrow" not in args.compare else [])
    repeat = args.repeat if args.repeat is not None else (3 if peers else None)
    if repeat is not None:  # the best of N is a warm process's: Numba's kernels, not the startup library's
        from arrow_bridge import startup

        startup.retire()
    options = reader_options(args)
    if args.threads is not None and peers:
        import pyarrow as pa

        pa.set_cpu_count(max(1, args.threads))  # pyarrow's threads too, before anything is timed
    size = _file_size(args.file)
    table, seconds, how = time_calls(lambda: read_csv(args.file, **options), repeat)
    print(f"file: {args.file} ({size:,} bytes)" if size else f"file: {args.file}")
    print(table.schema)
    print(f"\nrows: {table.num_rows:,}  columns: {table.num_columns}  table: {table.nbytes / 1e6:,.1f} MB")
    print(f"ndp: {format_seconds(seconds)}{_rate(size, seconds)}  {how}")
    for peer in peers:
        print(_time_peer(peer, args, options, table, size, seconds, repeat))
    if args.head:
        print(table.slice(0, args.head).to_pandas().to_string())
    return EXIT_OK


def _time_peer(peer: str, args: argparse.Namespace, options: dict[str, Any], ours: Any, size: int,
               our_seconds: float, repeat: int | None) -> str:
    """One line: ``peer``'s time on the same file and options, timed as ndp was; a peer that
    cannot take the options or fails says so on its line (ndp's result stands)."""
    label = {"pyarrow": "pyarrow.csv", "pandas": "pandas (c)"}[peer]
    try:
        call = _peer_call(peer, args.file, options, ours)
        result, seconds, _ = time_calls(call, repeat)
    except Exception as error:  # a peer's failure is reported, not fatal
        return f"{label}: failed: {_one_line(error)}"
    rows = len(result) if peer == "pandas" else result.num_rows
    same = "" if rows == ours.num_rows else f"  ({rows:,} rows!)"
    return f"{label}: {format_seconds(seconds)}{_rate(size, seconds)}{same}  -> ndp / {peer} speed: {seconds / our_seconds:.2f}x"


def _peer_call(peer: str, path: str, options: dict[str, Any], ours: Any) -> Callable[[], Any]:
    """A call reading ``path`` with ``peer`` and ndp's ``options`` translated."""
    sep = options.get("sep", ",")
    usecols = options.get("usecols")
    names = ours.schema.names if usecols is not None else None  # positions -> names via ndp's own result
    if peer == "pandas":
        import pandas as pd

        keywords = {key: options[key] for key in ("nrows", "encoding", "encoding_errors", "on_bad_lines", "dtype")
                    if key in options}
        return lambda: pd.read_csv(path, sep=sep, usecols=usecols, engine="c", **keywords)
    import pyarrow.csv as pacsv

    if "nrows" in options:
        raise UsageError("--nrows has no pyarrow.csv equivalent")
    read = pacsv.ReadOptions(encoding=options.get("encoding", "utf8"),
                             **({"block_size": options["block_size"]} if "block_size" in options else {}))
    skip = (lambda row: "skip") if options.get("on_bad_lines", "error") != "error" else None
    parse = pacsv.ParseOptions(delimiter=sep or ",", invalid_row_handler=skip)
    convert = pacsv.ConvertOptions(include_columns=names, column_types=options.get("dtype"))
    return lambda: pacsv.read_csv(path, read_options=read, parse_options=parse, convert_options=convert)


# --------------------------------------------------------------------------
# convert
# --------------------------------------------------------------------------
def output_format(out: str, given: str | None) -> str:
    """The format to write: ``--format`` or OUT's suffix.

    >>> output_format("x.parquet", None), output_format("x.bin", "arrows"), output_format("x.FEATHER", None)
    ('parquet', 'arrows', 'feather')
    """
    if given:
        return given
    suffix = Path(out).suffix.lower()
    if suffix not in FORMATS:
        raise UsageError(f"cannot tell the format of {out!r} from its suffix: give --format "
                         f"({', '.join(sorted(set(FORMATS.values())))})")
    return FORMATS[suffix]


def _progress_wanted(flag: bool | None) -> bool:
    return flag if flag is not None else sys.stderr.isatty()


def _progress_bar(total: int, wanted: bool) -> Any:
    """A tqdm bar over ``total`` bytes on stderr, or None (not wanted, no size, or no tqdm)."""
    if not wanted or not total:
        return None
    try:
        from tqdm import tqdm
    except ImportError:  # tqdm is a dependency; a broken install still converts
        return None
    return tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, desc="convert", file=sys.stderr)


def _counting_source(path: str) -> Any:
    """``path`` as a reader source that counts the bytes read (a local file), else the path."""
    from arrow_bridge.source import PathSource

    class CountingSource(PathSource):
        furthest = 0

        def readinto(self, buf: Any) -> int:
            n = super().readinto(buf)
            self.furthest += n
            return n

    if "://" in path or not os.path.isfile(path) or Path(path).suffix in (".gz", ".bz2", ".xz", ".zst", ".zip"):
        return path
    return CountingSource(path)


def _batch_writer(fmt: str, out: str, schema: Any, args: argparse.Namespace) -> tuple[Callable, Callable]:
    """``(write(batch), close())`` for ``fmt``."""
    import pyarrow as pa

    if fmt == "parquet":
        import pyarrow.parquet as pq

        writer = pq.ParquetWriter(out, schema, compression=args.compression or "snappy")
        return writer.write_batch, writer.close
    if fmt in ("feather", "arrow", "arrows"):
        compression = None if args.compression in (None, "none", "uncompressed") else args.compression
        ipc_options = pa.ipc.IpcWriteOptions(compression=compression)
        opener = pa.ipc.new_stream if fmt == "arrows" else pa.ipc.new_file
        writer = opener(out, schema, options=ipc_options)
        return writer.write_batch, writer.close
    from arrow_bridge import write_csv

    sink = open(out, "wb")
    first = [True]

    def write(batch: Any) -> None:
        write_csv(batch, sink, header=first[0], sep=args.out_sep)
        first[0] = False

    def close() -> None:
        if first[0]:  # no batch: still a header
            write_csv(schema.empty_table(), sink, header=True, sep=args.out_sep)
        sink.close()
    return write, close


def cmd_convert(args: argparse.Namespace) -> int:
    """``ndp convert``: FILE streamed into OUT, batch by batch (bounded memory).

    >>> import os, tempfile, pyarrow.parquet as pq
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path, out = os.path.join(folder, "t.csv"), os.path.join(folder, "t.parquet")
    ...     _ = open(path, "w").write("a,b\\n1,x\\n2,y\\n")
    ...     main(["convert", path, out, "--no-progress"])  # doctest: +ELLIPSIS
    ...     pq.read_table(out).to_pydict()
    wrote .../t.parquet: parquet, 2 rows, 2 columns, 1 batches, ... bytes in ...
    0
    {'a': [1, 2], 'b': ['x', 'y']}
    """
    from arrow_bridge import open_csv, sniff

    fmt = output_format(args.out, args.format)
    if os.path.abspath(args.out) == os.path.abspath(args.file):
        raise UsageError("OUT is FILE: converting a file onto itself would destroy it")
    options = reader_options(args)
    if options.get("sep", ",") is None:  # --sep auto: the sniffed dialect, the user's options winning
        options = {**sniff(args.file).to_options(), **{k: v for k, v in options.items() if k != "sep"}}
    size = _file_size(args.file)
    bar = _progress_bar(size, _progress_wanted(args.progress))
    source = _counting_source(args.file) if bar is not None else args.file
    started = time.perf_counter()
    rows = batches = 0
    with open_csv(source, **options) as reader:
        write, close = _batch_writer(fmt, args.out, reader.schema, args)
        try:
            for batch in reader:
                write(batch)
                rows, batches = rows + batch.num_rows, batches + 1
                if bar is not None:
                    bar.update(min(size, getattr(source, "furthest", 0)) - bar.n)
        except BaseException:
            close()
            os.unlink(args.out)  # no half-written file left to be taken for a whole one
            raise
        finally:
            if bar is not None:
                bar.close()
        close()
    seconds = time.perf_counter() - started
    speed = f"  ({size / seconds / 1e6:,.0f} MB/s of CSV)" if size and seconds > 0 else ""
    print(f"wrote {args.out}: {fmt}, {rows:,} rows, {len(reader.schema)} columns, {batches} batches, "
          f"{_file_size(args.out):,} bytes in {format_seconds(seconds)}{speed}")
    return EXIT_OK


# --------------------------------------------------------------------------
# sniff
# --------------------------------------------------------------------------
def cmd_sniff(args: argparse.Namespace) -> int:
    """``ndp sniff``: the dialect, the options to pass and the reasons.

    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = os.path.join(folder, "t.txt")
    ...     _ = open(path, "w").write("a;b\\n1;x\\n2;y\\n")
    ...     main(["sniff", path])  # doctest: +ELLIPSIS
    file: .../t.txt
    delimiter:       ';'
    ...
    options: read_csv(path, sep=';', header=0, skiprows=0, doublequote=True, quotechar='"')
    command: ndp read ... --sep auto   (reads with this dialect)
    why:
      - ...
    0
    """
    from arrow_bridge import sniff

    dialect = sniff(args.file)
    print(f"file: {args.file}")
    for name in ("delimiter", "quote_char", "escape_char", "double_quote", "header", "skip_rows",
                 "line_terminator", "comment", "decimal", "columns", "confidence"):
        print(f"{name + ':':<16} {getattr(dialect, name)!r}")
    if dialect.names:
        print(f"{'names:':<16} {', '.join(dialect.names)}")
    options = dialect.to_options()
    print("options: read_csv(path, " + ", ".join(f"{k}={v!r}" for k, v in options.items()) + ")")
    print(f"command: ndp read {args.file} --sep auto   (reads with this dialect)")
    print("why:")
    for reason in dialect.reasons:
        print(f"  - {reason}")
    return EXIT_OK


# --------------------------------------------------------------------------
# grep
# --------------------------------------------------------------------------
def grep_keywords(args: argparse.Namespace) -> list[str]:
    """The keywords: the positional ones, then those given with ``-e``.

    >>> grep_keywords(build_parser().parse_args(["grep", "GET", "POST", "access.log", "--keyword=-rf"]))
    ['GET', 'POST', '-rf']
    """
    keywords = list(args.words) + list(args.keywords)
    if not keywords:
        raise UsageError("which keywords? ndp grep KEYWORD... FILE (or -e KEYWORD)")
    return keywords


def grep_output(table: Any, byte_offset: bool = False) -> Iterator[memoryview]:
    """The bytes ``grep -n`` (``-n -b`` with ``byte_offset``) prints for the lines of
    ``grep``'s Table, a batch at a time: ``N:line`` (``N:OFFSET:line``) and a line break.

    >>> from arrow_bridge.search import grep
    >>> b"".join(grep_output(grep(b"a\\nbab\\n", "b", offsets=True), byte_offset=True))
    b'2:2:bab\\n'
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    for batch in table.to_batches():
        parts = [pc.cast(batch.column("line_number"), pa.string())]
        if byte_offset:
            parts.append(pc.cast(batch.column("byte_offset"), pa.string()))
        parts = [part.cast(pa.binary()) for part in parts] + [batch.column("line").cast(pa.binary())]
        joined = pc.binary_join_element_wise(*parts, b":")
        lines = pc.binary_join_element_wise(joined, b"", b"\n")  # each followed by a line break
        end = int(np.frombuffer(lines.buffers()[1], dtype=np.int32)[lines.offset + len(lines)])
        yield memoryview(lines.buffers()[2])[:end]


def _write_bytes(chunks: Iterator[memoryview]) -> None:
    """Bytes to stdout as they are (text decoded where stdout has no bytes layer, as under
    doctest); a closed pipe ends the output quietly."""
    sys.stdout.flush()
    raw = getattr(sys.stdout, "buffer", None)
    try:
        for chunk in chunks:
            if raw is None:
                sys.stdout.write(bytes(chunk).decode("utf-8", "surrogateescape"))
            else:
                raw.write(chunk)
        (raw or sys.stdout).flush()
    except BrokenPipeError:  # the reader went away (| head): stop quietly, as grep does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def cmd_grep(args: argparse.Namespace) -> int:
    """``ndp grep``: the matching lines (or their count, or a table file), on the host or a device.

    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = os.path.join(folder, "access.log")
    ...     _ = open(path, "w").write("GET /a 200\\nGET /wp-login.php 404\\nPOST /b 200\\n")
    ...     main(["grep", "wp-login", "POST", path])
    ...     main(["grep", "-c", "-e", "GET", path])
    2:GET /wp-login.php 404
    3:POST /b 200
    0
    2
    0
    """
    from ndp_core.report import collect

    from arrow_bridge.search import grep

    keywords = grep_keywords(args)
    fmt = output_format(args.out, args.format) if args.out else None
    if args.out and os.path.abspath(args.out) == os.path.abspath(args.file):
        raise UsageError("OUT is FILE: writing the matches onto the file searched would destroy it")
    device = None
    if args.device:
        from device_emulator import ComputationalSSD

        device = ComputationalSSD(args.device, faults=args.faults)
    elif args.split or args.faults:
        raise UsageError("--split and --faults need --device PROFILE")
    options = dict(ignore_case=args.ignore_case, binary=args.binary, offsets=args.byte_offset, device=device,
                   split=args.split or ("device" if device else "host"), block_size=args.block_size,
                   n_threads=args.threads)
    try:
        with collect() as runs:
            found = grep(args.file, keywords, count=args.count, **options)
    finally:
        if device is not None:
            device.close()
    if args.count:
        print(found)
    elif args.out:
        write, close = _batch_writer(fmt, args.out, found.schema, args)
        for batch in found.to_batches():
            write(batch)
        close()
        print(f"wrote {args.out}: {fmt}, {found.num_rows:,} matching lines")
    else:
        _write_bytes(grep_output(found, args.byte_offset))
    if device is not None:
        report = runs.total
        print(report, file=sys.stderr)
        if "matcher" in report.meta:
            print(f"pattern matcher: {report.meta['matcher']}", file=sys.stderr)
    return EXIT_OK


# --------------------------------------------------------------------------
# simulate
# --------------------------------------------------------------------------
def cmd_simulate(args: argparse.Namespace) -> int:
    """``ndp simulate``: a read through an emulated SSD; its Report, the check against the host
    read, the timeline image if asked.

    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = os.path.join(folder, "t.csv")
    ...     _ = open(path, "w").write("a,b\\n" + "".join(f"{i},{i / 4}\\n" for i in range(2000)))
    ...     main(["simulate", path, "--profile", "hods-fpga", "--split", "device"])  # doctest: +ELLIPSIS
    Report...
    Table: 2,000 rows x 2 columns, equal to the host read: yes
    0
    """
    from device_emulator import ComputationalSSD
    from ndp_core.report import collect

    from arrow_bridge import read_csv

    options = reader_options(args)
    ssd = ComputationalSSD(args.profile, faults=args.faults)
    try:
        with collect() as runs:
            table = read_csv(args.file, device=ssd, split=args.split, **options)
    finally:
        ssd.close()
    report = runs.total
    print(report)
    same = table.equals(read_csv(args.file, **options))
    print(f"Table: {table.num_rows:,} rows x {table.num_columns} columns, equal to the host read: "
          f"{'yes' if same else 'NO'}")
    if args.timeline:
        import matplotlib

        matplotlib.use("Agg")  # no display needed
        axes = report.plot_timeline()
        axes.figure.savefig(args.timeline, dpi=120, bbox_inches="tight")
        print(f"timeline: {args.timeline}")
    return EXIT_OK if same else EXIT_OTHER


# --------------------------------------------------------------------------
# profiles
# --------------------------------------------------------------------------
def profile_sources(text: str) -> dict[str, str]:
    """The source comment of each ``key = value`` (dotted with its section) and of each
    ``[section]`` in a profile's TOML text; indented comment lines continue the one above.

    >>> profile_sources('# preamble\\n[flash]  # the array\\nways = 4   # [S] Sec. 6.1\\n'
    ...                 '                 # four chips\\ntR_us = 50.0\\n')
    {'flash': 'the array', 'flash.ways': '[S] Sec. 6.1 four chips', 'flash.tR_us': ''}
    """
    sources: dict[str, str] = {}
    section, last = "", None
    for raw in text.splitlines():
        code, comment = _split_comment(raw)
        stripped = code.strip()
        if not stripped:
            if comment and last is not None and raw[:1].isspace():
                sources[last] = f"{sources[last]} {comment}".strip()
            elif not comment:
                last = None if not raw.strip() else last
            else:
                last = None  # a comment block at column 0: prose, not a source
            continue
        header = re.match(r"^\[([^\]]+)\]$", stripped)
        key = re.match(r"^([A-Za-z0-9_\-]+)\s*=", stripped)
        if header:
            section = header.group(1).strip()
            last = section
        elif key:
            last = f"{section}.{key.group(1)}" if section else key.group(1)
        else:
            continue  # a value's continuation (a multi-line array)
        sources[last] = comment
    return sources


def _split_comment(line: str) -> tuple[str, str]:
    """``(code, comment)`` of one TOML line, a ``#`` inside a string staying code."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "#":
            return line[:i], line[i + 1:].strip()
    return line, ""


def _profile_text(name: str) -> tuple[str, str]:
    """The TOML text of a profile and where it came from."""
    if name.endswith(".toml") or os.sep in name or os.path.exists(name):
        return Path(name).read_text(), os.path.abspath(name)
    shipped = resources.files("device_emulator") / "profiles" / f"{name}.toml"
    return shipped.read_text(), str(shipped)


def cmd_profiles(args: argparse.Namespace) -> int:
    """``ndp profiles``: the shipped profiles, one line each; ``ndp profiles show NAME``: every
    parameter with its value, unit and source.

    >>> main(["profiles"])  # doctest: +ELLIPSIS
    biscuit-pm ...
    modern-gen4 ...
    0
    >>> main(["profiles", "show", "summarizer-board"])  # doctest: +ELLIPSIS
    summarizer-board: Summarizer development board: ...
    [flash]
      channels ... 2 ... [S] Sec. 6.1: two NAND flash DIMMs (one channel each: assumption)
    ...
    0
    """
    from device_emulator import list_profiles, load_profile

    if args.action == "list":
        if args.name:
            raise UsageError(f"'ndp profiles' lists them all; to see one: ndp profiles show {args.name}")
        names = list_profiles()
        width = max(map(len, names))
        for name in names:
            profile = load_profile(name)
            print(f"{name:<{width}}  {profile.summary()}")
            print(f"{'':<{width}}  {profile.description}")
        print("\n'ndp profiles show NAME' lists every parameter with its source.")
        return EXIT_OK
    if not args.name:
        raise UsageError("which profile? ndp profiles show NAME (see 'ndp profiles')")
    print(_describe_profile(load_profile(args.name), *_profile_text(args.name)))
    return EXIT_OK


def _describe_profile(profile: Any, text: str, where: str) -> str:
    """Every parameter of ``profile`` grouped by section: value, unit, source comment."""
    from device_emulator.profile.schema import PARAMETERS, PRICE_TABLES

    sources = profile_sources(text)
    lines = [f"{profile.name}: {profile.description}", f"file: {where}", f"summary: {profile.summary()}"]
    lines += ["references:"] + [f"  - {ref}" for ref in profile["references"]]
    flat = {key: value for key, value in profile.flat().items()
            if key not in ("name", "description", "references")}
    width = max(len(key.rsplit(".", 1)[-1]) for key in flat)
    values = {key: _show_value(value, PARAMETERS.get(key), key.rsplit(".", 1)[0] in PRICE_TABLES)
              for key, value in flat.items()}
    value_width = min(16, max(map(len, values.values())))
    section = None
    for key in flat:
        parent, leaf = key.rsplit(".", 1) if "." in key else ("", key)
        if parent != section:
            section = parent
            note = sources.get(parent, "")
            lines.append(f"[{parent}]" + (f"  # {note}" if note else ""))
        source = sources.get(key)
        note = source if source else ("(not in the file: schema default)" if source is None else "")
        lines.append(f"  {leaf:<{width}}  {values[key]:<{value_width}}  {note}".rstrip())
    return "\n".join(lines)


def _show_value(value: Any, param: Any, price: bool) -> str:
    unit = "cycles" if price else getattr(param, "unit", "")
    return f"{value!r}" + (f" {unit}" if unit else "")


# --------------------------------------------------------------------------
# Errors -> one line and an exit status.
# --------------------------------------------------------------------------
def _one_line(error: BaseException) -> str:
    """The error's message on one line, in the CLI's words: without the traceback pyarrow
    appends to an error a stream raised, and with ``--dtype`` where the reader suggests
    ``dtype=``.

    >>> import pyarrow as pa
    >>> _one_line(pa.ArrowInvalid("Invalid: x.csv:9: cannot convert '2.5' to int64 (give the column its type: "
    ...                           "dtype={'a': ...}). Detail: Python exception: Traceback (most recent call last): ..."))
    "x.csv:9: cannot convert '2.5' to int64 (give the column its type: --dtype a=TYPE)"
    """
    text = error.args[0] if isinstance(error, KeyError) and error.args else str(error)
    wrapped = re.match(r"(?:Invalid: )?(.*?)\.? Detail: Python exception: ", str(text), flags=re.S)
    text = wrapped.group(1) if wrapped else str(text)  # what the stream raised, as pyarrow wrapped it
    text = re.sub(r"dtype=\{'([^']*)': \.\.\.\}", r"--dtype \1=TYPE", text)
    return " ".join(text.split()) or type(error).__name__


def classify(error: BaseException) -> tuple[int, str]:
    """``(exit status, one-line message)`` for an error a command raised.

    >>> from arrow_bridge import CsvParseError
    >>> classify(CsvParseError("x.csv", 3, "price", 57, "invalid float64 value 'abc'"))
    (4, "x.csv:3: column 'price': invalid float64 value 'abc' (byte offset 57)")
    >>> classify(FileNotFoundError(2, "No such file or directory", "x.csv"))
    (3, 'x.csv: No such file or directory')
    >>> classify(KeyError("Column 'zzz' in include_columns does not exist in CSV file"))[0]
    2
    """
    import pyarrow as pa

    from arrow_bridge import CsvDecodeError, CsvParseError

    if isinstance(error, KeyboardInterrupt):
        return EXIT_INTERRUPTED, "interrupted"
    if isinstance(error, (MemoryError, pa.ArrowMemoryError)):  # a stream's batch carries the message only
        return EXIT_MEMORY, _one_line(error)
    if isinstance(error, (CsvDecodeError, UnicodeDecodeError)):
        return EXIT_DECODE, _one_line(error)
    if isinstance(error, CsvParseError):
        return EXIT_PARSE, _one_line(error)
    if isinstance(error, OSError):
        if error.filename is not None and error.strerror:
            return EXIT_FILE, f"{error.filename}: {error.strerror}"
        return EXIT_FILE, re.sub(r"^\[Errno \d+\] ", "", _one_line(error))
    if isinstance(error, pa.ArrowInvalid):  # a later batch of a stream (open_csv): malformed input
        return EXIT_PARSE, _one_line(error)
    if isinstance(error, KeyError) and "does not exist" in _one_line(error):
        return EXIT_USAGE, f"--usecols: {_one_line(error)}"
    if isinstance(error, (UsageError, ValueError, TypeError, LookupError)):
        return EXIT_USAGE, _one_line(error)
    return EXIT_OTHER, f"{type(error).__name__}: {_one_line(error)}"


def _want_traceback(argv: Sequence[str]) -> bool:
    return "--traceback" in argv or os.environ.get(TRACEBACK_ENV, "") not in ("", "0")


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    """Runs the ``ndp`` command line ``argv`` (default: ``sys.argv[1:]``); returns the exit status.

    >>> main(["read", "no-such-file.csv"])  # prints "ndp: error: no-such-file.csv: No such file ..." on stderr
    3
    """
    if argv is None and prog is None and os.path.basename(sys.argv[0]) == "ndp-read-csv":
        return read_csv_main()  # a script installed before `ndp` existed calls main()
    argv = list(sys.argv[1:] if argv is None else argv)
    prog = prog or "ndp"
    warnings.formatwarning = lambda message, *_, **__: f"{prog}: warning: {message}\n"
    try:
        args = build_parser(prog).parse_args(argv)
    except SystemExit as leaving:  # argparse: --help (0) or a usage error (2, message printed)
        return int(leaving.code or 0)
    try:
        return args.run(args)
    except BaseException as error:
        if isinstance(error, SystemExit):
            raise
        if _want_traceback(argv):
            traceback.print_exc()
        code, message = classify(error)
        print(f"{prog}: error: {message}", file=sys.stderr)
        if code == EXIT_OTHER and not _want_traceback(argv):
            print(f"{prog}: (a bug? rerun with --traceback and report it)", file=sys.stderr)
        return code


def read_csv_main(argv: Sequence[str] | None = None) -> int:
    """``ndp-read-csv``: kept for its users; the same as ``ndp read`` (``--compare-pyarrow`` too).

    >>> read_csv_main(["no-such-file.csv", "--compare-pyarrow"])
    3
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("-h", "--help"):
        return main(["read", "--help"], prog="ndp-read-csv")
    return main(["read", *argv], prog="ndp-read-csv")


if __name__ == "__main__":
    sys.exit(main())
