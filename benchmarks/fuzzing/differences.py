"""THE list of documented, deliberate differences from pyarrow (the referee).

A mismatch the fuzzer finds is *documented* when one entry of
:data:`DOCUMENTED` explains it; every other mismatch is a failure. Each entry
names where the difference is documented, checks the input really has the
property it is about (not just that the error message matches), and carries
an example that ``tests/arrow_bridge/test_fuzz.py`` runs: the example must be
a mismatch, and this entry (and no other) must explain it.

>>> len(DOCUMENTED), DOCUMENTED[0].name
(9, 'unterminated_quote')
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Optional

from benchmarks.fuzzing.outcome import Mismatch
from benchmarks.fuzzing.reference import BOM, Dialect, bad_records, scan_records, without_records


@dataclass(frozen=True)
class Difference:
    """One deliberate difference: a name, why, where it is documented, a test
    ``explains(mismatch)`` and an example (input bytes, ``ReadConfig`` fields)."""

    name: str
    reason: str
    documented_in: str
    explains: Callable[[Mismatch], bool]
    example: bytes
    example_config: dict[str, Any] = field(default_factory=dict)


def scan_of(m: Mismatch, skip_after_names: Optional[int] = None):
    """The reference tokenizer's records of the input, in the case's dialect (without
    the rows ``skip_rows_after_names`` leaves out, unless ``skip_after_names`` says
    how many to leave out)."""
    c = m.config
    dialect = Dialect(c.delimiter, c.quote_char, c.escape_char, c.double_quote)
    skip = c.skip_rows_after_names if skip_after_names is None else skip_after_names
    return scan_records(m.data, dialect, c.skip_rows, skip, c.header, c.newlines_in_values)


def _our_reason(m: Mismatch) -> str:
    return str(getattr(m.ours.error, "reason", "")) if m.ours.error is not None else ""


def _is_parse_error(m: Mismatch) -> bool:
    from arrow_bridge import CsvParseError

    return isinstance(m.ours.error, CsvParseError)


# ---- 1. an unterminated quoted field at the end of the input ---------------------------------------
def _unterminated_quote(m: Mismatch) -> bool:
    if not (_is_parse_error(m) and "unterminated quoted field" in _our_reason(m)):
        return False
    scan = scan_of(m)
    return scan.open_quote and not scan.skip_failed


# ---- 2. a header that is not valid UTF-8 -------------------------------------------------------
def header_bytes(m: Mismatch) -> Optional[bytes]:
    """The raw bytes of the header record (None without a header, or when the input has none)."""
    if not m.config.header:
        return None
    scan = scan_of(m)
    records = [r for r in scan.records if not r.empty]
    if scan.skip_failed or not records:
        return None
    return m.data[records[0].offset:records[0].end]


def _header_not_utf8(m: Mismatch) -> bool:
    if not (_is_parse_error(m) and "header is not valid UTF-8" in _our_reason(m)):
        return False
    header = header_bytes(m)
    if header is None:
        return False
    try:
        header.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


# ---- 3. a single line and no line break ----------------------------------------------------------
def _single_line_without_newline(m: Mismatch) -> bool:
    if m.theirs.ok or "cannot infer number of columns" not in str(m.theirs.error):
        return False
    scan = scan_of(m, skip_after_names=0)  # the line, whether or not it is skipped
    records = [r for r in scan.records if not r.empty]
    if scan.skip_failed or len(records) != 1 or _terminated(m.data, m.config.escape_char):
        return False
    with_newline = m.ask_referee(m.data + b"\n")
    if with_newline.ok and with_newline.table.num_columns > 0:
        return m.compare(m.ours, with_newline) is None
    # The appended line break is escaped (the line ends with an escape character):
    # pyarrow cannot say what the line holds; ours must have its shape.
    table = m.ours.table
    return m.ours.ok and table.num_columns == records[0].nfields and table.num_rows == (0 if m.config.header else 1)


def _terminated(data: bytes, escape: Optional[str]) -> bool:
    """Whether ``data`` ends with a line break that is not escaped."""
    if not data.endswith((b"\n", b"\r")):
        return False
    if escape is None:
        return True
    body = data[:-2] if data.endswith(b"\r\n") else data[:-1]
    run = len(body) - len(body.rstrip(escape.encode()))
    return run % 2 == 0


# ---- 4. pyarrow's result depends on its block size ------------------------------------------------
def _referee_block_size(m: Mismatch) -> bool:
    c = m.config
    if c.referee_block_size is None:
        return False
    # newlines_in_values also says how skip_rows_after_names counts (records or lines): kept there
    newlines = c.newlines_in_values if c.skip_rows_after_names else True
    whole = m.ask_referee(newlines_in_values=newlines, block_size=None)
    if m.compare(m.ours, whole) is None:
        return True
    # pyarrow with its default blocks disagrees too: documented if another entry explains that.
    again = replace(m, config=replace(c, referee_block_size=None, newlines_in_values=newlines), theirs=whole)
    return explain(again) is not None


# ---- 5. a truncated BOM is the whole input -------------------------------------------------------------
def _truncated_bom(m: Mismatch) -> bool:
    return (0 < len(m.data) < len(BOM) and BOM.startswith(m.data) and not m.theirs.ok
            and "truncated byte order mark" in str(m.theirs.error))


# ---- 6. a bad row that is not UTF-8, with invalid_row_handler ---------------------------------------
def _bad_row_not_utf8(m: Mismatch) -> bool:
    if m.config.bad_lines != "skip" or m.theirs.ok:
        return False
    # The first row sets the field count, even where skip_rows_after_names skips it (no header)
    first = next((r for r in scan_of(m, skip_after_names=0).records if not r.empty), None)
    bad = bad_records(scan_of(m), None if first is None else first.nfields)
    if not any(not _is_utf8(m.data[r.offset:r.end]) for r in bad):
        return False
    kept = without_records(m.data, bad)
    without = m.ask_referee(kept, bad_lines="error")
    if m.compare(m.ours, without) is None:
        return True
    # Cutting rows out can change what a first row spans (a quoted line break in it, no header, the
    # skip counting lines); made ASCII in place instead, the bad rows reach pyarrow's handler.
    in_place = bytearray(m.data)
    for r in bad:
        in_place[r.offset:r.end] = bytes(b if b < 0x80 else 0x5A for b in m.data[r.offset:r.end])
    patched = m.ask_referee(bytes(in_place))
    if m.compare(m.ours, patched) is None:
        return True
    # pyarrow on the input without its bad rows disagrees too: documented if another entry explains that.
    again = replace(m, data=kept, config=replace(m.config, bad_lines="error"), theirs=without)
    return explain(again) is not None or explain(replace(m, data=bytes(in_place), theirs=patched)) is not None


# ---- 7. pyarrow flags the empty last field of the input as quoted ----------------------------------
def _quoted_flag_on_last_empty_field(m: Mismatch) -> bool:
    c = m.config
    if m.convert is None or m.convert.quoted_strings_can_be_null or c.quote_char is None:
        return False
    if not m.data.endswith((c.quote_char + c.delimiter).encode()):
        return False  # the input ends with an empty field right after a quoted one
    return m.compare(m.ours, m.ask_referee(m.data + b"\n")) is None


# ---- 8. the rows skipped after the names run out ------------------------------------------------
def _skipped_rows_run_out(m: Mismatch) -> bool:
    k = m.config.skip_rows_after_names
    if not k or m.theirs.ok or "straddling object" not in str(m.theirs.error):
        return False
    if not (m.ours.ok and m.ours.table.num_rows == 0):
        return False
    data = m.data
    if m.config.newlines_in_values and b"\0" in data:  # and pyarrow bug F2 in the rows skipped (below)
        records = [r for r in scan_of(m, skip_after_names=0).records if not r.empty]
        start = records[0].end if m.config.header and records else 0
        data = data[:start] + data[start:].replace(b"\0", b"Z")
    return m.compare(m.ours, m.ask_referee(data + b"\n" * (k + 1))) is None


# ---- 9. a NUL byte in a row skipped after the names ----------------------------------------------
def _nul_in_skipped_row(m: Mismatch) -> bool:
    c = m.config
    if not (c.skip_rows_after_names and c.newlines_in_values and b"\0" in m.data):
        return False
    records = scan_of(m, skip_after_names=0).records
    first = next((i for i, r in enumerate(records) if not r.empty), len(records)) + 1 if c.header else 0
    skipped = records[first:first + c.skip_rows_after_names]
    if not any(b"\0" in m.data[r.offset:r.end] for r in skipped):
        return False
    patched = bytearray(m.data)
    for r in skipped:
        patched[r.offset:r.end] = m.data[r.offset:r.end].replace(b"\0", b"Z")
    return m.compare(m.ours, m.ask_referee(bytes(patched))) is None


def _is_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


DOCUMENTED: list[Difference] = [
    Difference(
        "unterminated_quote",
        "the input ends inside a quoted field: pyarrow makes the rest of the file that field's value; "
        "we raise CsvParseError ('unterminated quoted field')",
        "docs/reader.md (Errors); tests/arrow_bridge/test_differential.py (divergence 1)",
        _unterminated_quote,
        b'a,b\n1,"x\n2,y\n'),
    Difference(
        "header_not_utf8",
        "the header row is not valid UTF-8: we raise CsvParseError; pyarrow returns undecodable column "
        "names or raises UnicodeDecodeError",
        "docs/reader.md (Errors); tests/arrow_bridge/test_differential.py (divergence 3)",
        _header_not_utf8,
        b"a\xff,b\n1,2\n"),
    Difference(
        "single_line_without_newline",
        "the input's only line has no line break: pyarrow cannot infer the columns ('Empty CSV file or "
        "block'); we read it as if the line break were there",
        "docs/reader.md (Errors); tests/arrow_bridge/test_differential.py (divergence 2)",
        _single_line_without_newline,
        b"x,y"),
    Difference(
        "referee_block_size",
        "pyarrow's result depends on its block_size, ours does not: with newlines_in_values=False pyarrow "
        "cuts blocks at any line break, so a quoted line break at a block boundary splits a record; a "
        "record, header or skipped rows longer than a block raise ('straddling object straddles two block "
        "boundaries', 'header is larger than block size', 'CSV parser got out of sync with chunker'). "
        "Our table is pyarrow's with its default block "
        "size and newlines_in_values=True (or differs from it only as another entry documents)",
        "docs/reader.md (top: 'It does not depend on block_size or n_threads'; Errors: 'quoted newlines "
        "are always handled, whatever the block size')",
        _referee_block_size,
        b'a,b\n' + b'1,"x\ny"\n' * 20,
        {"newlines_in_values": False, "referee_block_size": 64}),
    Difference(
        "truncated_bom",
        "the whole input is one or two bytes that begin a UTF-8 BOM (b'\\xef', b'\\xef\\xbb'): pyarrow "
        "raises 'UTF8 string too short (truncated byte order mark?)'; we read the bytes as data (a "
        "binary value without a header; with a header, 'header is not valid UTF-8' as for any such header)",
        "here (a pyarrow quirk; not yet in docs/reader.md)",
        _truncated_bom,
        b"\xef",
        {"header": False}),
    Difference(
        "bad_row_not_utf8",
        "with an invalid_row_handler (or on_bad_lines='skip'), a bad row that is not valid UTF-8: pyarrow "
        "cannot hand it to the handler and raises; we skip it like any other bad row (our table is "
        "pyarrow's for the input without its bad rows)",
        "tests/arrow_bridge/test_differential.py (test_options_match_pyarrow: 'pyarrow handler failed: bad "
        "records removed by hand')",
        _bad_row_not_utf8,
        b"a,b\n1,2\n3,\xff,4\n5,6\n",
        {"bad_lines": "skip"}),
    Difference(
        "quoted_flag_on_last_empty_field",
        "the input ends, with no line break, in an empty field right after a quoted one (b'...\"x\",'): "
        "pyarrow flags that empty field as quoted, so with quoted_strings_can_be_null=False it becomes '' "
        "(and its column string, or a conversion error for other types) where the same input with a "
        "final line break gives null; we read it as the unquoted empty field it is (pyarrow's result with "
        "the line break). A pyarrow bug (26.0.1)",
        "docs/reader.md (quoted_strings_can_be_null); tests/arrow_bridge/test_pyarrow_options.py (divergence 4)",
        _quoted_flag_on_last_empty_field,
        b'a,b\n1,\n"x",',
        {"convert": "quoted_nulls"}),
    Difference(
        "skipped_rows_run_out",
        "skip_rows_after_names asks for more rows than line breaks end (a header and no data, or one "
        "unterminated line): pyarrow's chunker raises 'straddling object straddles two block boundaries'; "
        "we return the empty Table pyarrow returns once line breaks end the rows to skip",
        "docs/reader.md (ReadOptions.skip_rows_after_names)",
        _skipped_rows_run_out,
        b"a,b\n1,2",
        {"skip_rows_after_names": 1}),
    Difference(
        "nul_in_skipped_row",
        "with newlines_in_values=True, a NUL byte in a row that skip_rows_after_names skips makes pyarrow "
        "lose the rows after it (b'A\\nx\\0\\n1\\n2\\n' gives no rows); we skip that row only (pyarrow's "
        "result once the NUL is another byte). A pyarrow bug (26.0.1)",
        "docs/reader.md (ReadOptions.skip_rows_after_names)",
        _nul_in_skipped_row,
        b"A\nx\0\n1\n2\n3\n",
        {"skip_rows_after_names": 1}),
]


def explain(m: Mismatch) -> Optional[str]:
    """The name of the documented difference that explains ``m``, or None."""
    for difference in DOCUMENTED:
        if difference.explains(m):
            return difference.name
    return None


def by_name(name: str) -> Difference:
    """The entry called ``name``."""
    for difference in DOCUMENTED:
        if difference.name == name:
            return difference
    raise KeyError(name)

