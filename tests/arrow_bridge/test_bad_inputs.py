"""Malformed input: the exact ``CsvParseError`` each case must give, bad-line
policies (``on_bad_lines``, pyarrow's ``invalid_row_handler``) and fuzzing.

The location contract (``arrow_bridge.errors.CsvParseError``):

* ``line`` is the 1-based physical line of ``byte_offset`` (LF, CRLF and a
  lone CR each end a line, inside quoted fields too); ``byte_offset`` is
  0-based in the file (a UTF-8 BOM counts).
* A wrong field count points at the start of the record; ``column`` names
  the first missing column of a short row, and is None for a long row.
* A value that does not convert points at the first byte of its field (the
  opening quote of a quoted field) and names its column.
* An unterminated quoted field points at its opening quote.
"""
from __future__ import annotations

import io
import re
import warnings
from dataclasses import dataclass, field
from typing import Any, Optional

import pyarrow as pa
import pyarrow.csv as pacsv
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import arrow_bridge
from arrow_bridge import CsvBadLineWarning, CsvParseError
from csvgen import (
    PREAMBLE_CHUNK,
    NonSeekableStream,
    assert_tables_identical,
    check_error_location,
    error_signature,
    line_at,
)

_ANY = object()  # "not checked" marker for a Bad field


@dataclass
class Bad:
    """One malformed input and the exact error it must give."""

    id: str
    data: bytes
    line: int
    column: Any  # a name, None, or _ANY
    offset: int
    reason: tuple  # substrings the reason must contain
    kwargs: dict = field(default_factory=dict)

    def param(self):
        return pytest.param(self, id=self.id)


def _at(data: bytes, marker: bytes, nth: int = 0) -> int:
    """Offset of the nth occurrence of ``marker`` in ``data``."""
    pos = -1
    for _ in range(nth + 1):
        pos = data.index(marker, pos + 1)
    return pos


# ---- big files, so the error sits in a late span (the reader's preamble read is 64 KiB) -----
_N_BIG = 12000  # ~130 KiB


def _big(bad_row: int, bad: bytes, eol: bytes = b"\n", quoted_newlines: bool = False) -> tuple[bytes, int, int]:
    """``x,y`` + rows ``i,2i`` with row ``bad_row`` replaced by ``bad``.
    Returns (data, offset of the bad row, its physical line)."""
    out = bytearray(b"x,y" + eol)
    offset = line = None
    for i in range(_N_BIG):
        if i == bad_row:
            offset, line = len(out), line_at(bytes(out), len(out))
            out += bad + eol
        elif quoted_newlines and i % 3 == 0:
            out += b'%d,"%d' % (i, i) + eol + b'x"' + eol
        else:
            out += b"%d,%d" % (i, 2 * i) + eol
    return bytes(out), offset, line


_LATE, _LATE_AT, _LATE_LINE = _big(9000, b"1,2,3")
_LATE_CRLF, _LATE_CRLF_AT, _LATE_CRLF_LINE = _big(9500, b"7", eol=b"\r\n")
_LATE_QNL, _LATE_QNL_AT, _LATE_QNL_LINE = _big(9001, b"5,6,7", quoted_newlines=True)
_LATE_CONV, _LATE_CONV_AT, _LATE_CONV_LINE = _big(8000, b"abc,3")
_LATE_OPEN, _LATE_OPEN_AT, _LATE_OPEN_LINE = _big(_N_BIG - 1, b'1,"open')

_MULTI = b'x,y\n"a\nb",1\n"c\r\nd",2\n3\n'
_OPEN_MULTI = b'x,y\n"a\nb",1\n2,"c\nd\n'
_CONV_QUOTED = b'x,y\r\n1,"2"\r\n3,"q"\r\n'

CORPUS = [
    # -- wrong field count ----------------------------------------------------------------
    Bad("too-many-first-row", b"x,y\n1,2,3\n4,5\n", 2, None, 4, ("got 3",)),
    Bad("too-few-first-row", b"x,y\n1\n4,5\n", 2, "y", 4, ("got 1",)),
    Bad("too-many-later-row", b"x,y\n1,2\n3,4\n5,6,7\n8,9\n", 4, None, 12, ("got 3",)),
    Bad("too-few-later-row", b"x,y,z\n1,2,3\n4,5,6\n7,8\n", 4, "z", 18, ("got 2",)),
    Bad("after-empty-lines", b"x,y\n1,2\n\n\n3,4,5\n", 5, None, 10, ("got 3",)),
    Bad("crlf", b"x,y\r\n1,2\r\n3\r\n", 3, "y", 10, ("got 1",)),
    Bad("crlf-too-many", b"x,y\r\n1,2\r\n3,4\r\n5,6,7\r\n", 4, None, 15, ("got 3",)),
    Bad("cr-only", b"x,y\r1,2\r3,4,5\r", 3, None, 8, ("got 3",)),
    Bad("mixed-line-ends", b"x,y\n1,2\r\n3,4\r5\n", 4, "y", 13, ("got 1",)),
    Bad("after-quoted-multiline", _MULTI, 6, "y", 21, ("got 1",)),
    Bad("record-spanning-lines", b'x,y\n1,"a\nb",3\n', 2, None, 4, ("got 3",)),
    Bad("bom", b"\xef\xbb\xbfx,y\n1,2,3\n", 2, None, 7, ("got 3",)),
    Bad("no-header", b"1,2\n3,4\n5\n", 3, "f1", 8, ("got 1",), {"header": None}),
    Bad("skiprows", b"junk\n\nx,y\n1,2\n3\n", 5, "y", 14, ("got 1",), {"skiprows": 2}),
    Bad("trailing-delimiter", b"x,y\n1,2,\n", 2, None, 4, ("got 3",)),
    Bad("semicolon", b"x;y\n1;2\n3,4\n", 3, "y", 8, ("got 1",), {"sep": ";"}),
    Bad("escaped-delimiter", b"x,y\n1,2\na\\,b\n", 3, "y", 8, ("got 1",), {"escapechar": "\\"}),
    Bad("late-block", _LATE, _LATE_LINE, None, _LATE_AT, ("got 3",), {"block_size": 1000, "n_threads": 2}),
    Bad("late-block-small-blocks", _LATE, _LATE_LINE, None, _LATE_AT, ("got 3",),
        {"block_size": 7, "n_threads": 2}),
    Bad("late-block-crlf", _LATE_CRLF, _LATE_CRLF_LINE, "y", _LATE_CRLF_AT, ("got 1",),
        {"block_size": 333, "n_threads": 2}),
    Bad("late-block-quoted-newlines", _LATE_QNL, _LATE_QNL_LINE, None, _LATE_QNL_AT, ("got 3",),
        {"block_size": 100, "n_threads": 2}),
    # -- unterminated quoted field (the column holding the quote may be named or None) --------
    Bad("unterminated", b'x,y\n1,"abc\n2,3\n', 2, _ANY, 6, ("unterminated",)),
    Bad("unterminated-at-eof", b'x,y\n1,2\n3,"abc', 3, _ANY, 10, ("unterminated",)),
    Bad("unterminated-in-header", b'"x,y\n1,2\n', 1, None, 0, ("unterminated",)),
    Bad("unterminated-after-multiline", _OPEN_MULTI, 4, _ANY, 14, ("unterminated",)),
    Bad("unterminated-late-block", _LATE_OPEN, _LATE_OPEN_LINE, _ANY, _LATE_OPEN_AT + 2, ("unterminated",),
        {"block_size": 500, "n_threads": 2}),
    # -- explicit dtype conversion failures ------------------------------------------------
    Bad("int64-abc", b"x,y\n1,2\nabc,3\n", 3, "x", 8, ("abc",), {"dtype": {"x": "int64"}}),
    Bad("int8-out-of-range", b"a\n127\n128\n", 3, "a", 6, ("128",), {"dtype": {"a": "int8"}}),
    Bad("uint8-negative", b"a\n1\n-1\n", 3, "a", 4, ("-1",), {"dtype": {"a": "uint8"}}),
    Bad("int64-overflow", b"a\n9223372036854775807\n9223372036854775808\n", 3, "a", 22,
        ("9223372036854775808",), {"dtype": {"a": "int64"}}),
    Bad("float64-x1", b"a,b\n1,1.5\n2,x1\n", 3, "b", 12, ("x1",), {"dtype": {"b": "float64"}}),
    Bad("bool-yes", b"a\ntrue\nyes\n", 3, "a", 7, ("yes",), {"dtype": {"a": "bool"}}),
    Bad("date32-feb-30", b"d\n2020-02-28\n2020-02-30\n", 3, "d", 13, ("2020-02-30",),
        {"dtype": {"d": pa.date32()}}),
    Bad("timestamp-zone-into-naive", b"t\n2020-01-01 00:00:00\n2020-01-01 00:00:00Z\n", 3, "t", 22,
        ("2020-01-01 00:00:00Z",), {"dtype": {"t": pa.timestamp("s")}}),
    Bad("timestamp-naive-into-zoned", b"t\n2020-01-01 00:00:00Z\n2020-01-01\n", 3, "t", 23,
        ("2020-01-01",), {"dtype": {"t": pa.timestamp("s", tz="UTC")}}),
    Bad("invalid-utf8-as-string", b"s\nok\nb\xffd\n", 3, "s", 5, ("string",), {"dtype": {"s": str}}),
    Bad("value-after-quoted-newline", b'x,y\n"a\nb",zz\n', 3, "y", 10, ("zz",), {"dtype": {"y": "int64"}}),
    Bad("quoted-value-crlf", _CONV_QUOTED, 3, "y", 14, ("q",), {"dtype": {"y": "int64"}}),
    Bad("dtype-for-all-columns", b"a,b\n1,2\n3,x\n", 3, "b", 10, ("x",), {"dtype": "int64"}),
    Bad("conversion-late-block", _LATE_CONV, _LATE_CONV_LINE, "x", _LATE_CONV_AT, ("abc",),
        {"dtype": {"x": "int64"}, "block_size": 256, "n_threads": 2}),
    # -- nothing to read ---------------------------------------------------------------------
    Bad("empty-file", b"", 1, None, 0, ("empty",)),
]


def test_corpus_is_consistent():
    """The hand-written lines must be the physical lines of the offsets."""
    for bad in CORPUS:
        assert line_at(bad.data, bad.offset) == bad.line, bad.id


@pytest.mark.parametrize("bad", [b.param() for b in CORPUS])
def test_exact_error(bad: Bad):
    with pytest.raises(CsvParseError) as info:
        arrow_bridge.read_csv(bad.data, **bad.kwargs)
    err = info.value
    assert isinstance(err, ValueError)
    got = (err.line, err.byte_offset)
    assert got == (bad.line, bad.offset), f"(line, byte_offset) {got} != {(bad.line, bad.offset)}: {err}"
    if bad.column is not _ANY:
        assert err.column == bad.column, f"column {err.column!r} != {bad.column!r}: {err}"
    for part in bad.reason:
        assert part in err.reason, f"{part!r} not in reason {err.reason!r}"
    assert err.path and str(bad.line) in str(err)


def _block_cases():
    """Corpus entries × block sizes; 1-byte blocks only for the small files
    (on the ~130 KiB ones they take seconds and add nothing)."""
    chosen = [b for b in CORPUS if len(b.data) > PREAMBLE_CHUNK or b.id in
              ("after-quoted-multiline", "unterminated", "int64-abc", "crlf")]
    return [pytest.param(b, size, id=f"{b.id}-{size}") for b in chosen for size in (1, 64, 4096)
            if size > 1 or len(b.data) <= PREAMBLE_CHUNK]


@pytest.mark.parametrize("bad, block_size", _block_cases())
@pytest.mark.parametrize("n_threads", [1, 3])
@pytest.mark.parametrize("source", ["bytesio", "stream"])
def test_error_does_not_depend_on_blocks(bad: Bad, n_threads, block_size, source):
    """The same error, whatever the block size, thread count and source kind."""
    with pytest.raises(CsvParseError) as ref:
        arrow_bridge.read_csv(bad.data, **bad.kwargs)
    kwargs = dict(bad.kwargs, block_size=block_size, n_threads=n_threads)
    src = io.BytesIO(bad.data) if source == "bytesio" else NonSeekableStream(bad.data)
    with pytest.raises(CsvParseError) as info:
        arrow_bridge.read_csv(src, **kwargs)
    assert error_signature(info.value)[1:] == error_signature(ref.value)[1:]


@pytest.mark.parametrize("data", [b"", b"\n", b"\n\n", b"\r\n\r\n", b"\xef\xbb\xbf", b"\xef\xbb\xbf\n"])
def test_no_columns(data):
    """Empty input or zero columns: pyarrow raises, and so do we (CsvParseError)."""
    with pytest.raises(pa.ArrowInvalid):
        pacsv.read_csv(io.BytesIO(data))
    with pytest.raises(CsvParseError, match="(?i)empty") as info:
        arrow_bridge.read_csv(data)
    assert info.value.line == line_at(data, info.value.byte_offset)


def test_bad_header_encoding():
    """Invalid UTF-8 in the header: pyarrow raises UnicodeDecodeError; we give a located CsvParseError."""
    data = b"a,b\xff\n1,2\n"
    with pytest.raises(CsvParseError) as info:
        arrow_bridge.read_csv(data)
    assert (info.value.line, info.value.byte_offset) == (1, 0)


@pytest.mark.parametrize("skip", [3, 5])
def test_skiprows_past_the_end(skip):
    """pyarrow: "Could not skip initial N rows"; we: a CsvParseError at the end of the file."""
    data = b"a,b\n1,2\n"
    with pytest.raises(pa.ArrowInvalid):
        pacsv.read_csv(io.BytesIO(data), read_options=pacsv.ReadOptions(skip_rows=skip))
    with pytest.raises(CsvParseError) as info:
        arrow_bridge.read_csv(data, skiprows=skip)
    err = info.value
    assert (err.line, err.byte_offset) == (3, len(data)), err


# ==============================================================================================
# Bad-line policies.
# ==============================================================================================
_BAD_LINES = b"x,y\n1,2\n3,4,5\n6,7\n\n8\n9,10\n"
_BAD_LINES_AT = [(3, 8), (6, 19)]  # (line, byte offset) of the bad rows


def _pyarrow_skip(data: bytes, **parse) -> tuple[pa.Table, list]:
    rows: list = []

    def handler(row):
        rows.append(row)
        return "skip"

    table = pacsv.read_csv(io.BytesIO(data), read_options=pacsv.ReadOptions(use_threads=False),
                           parse_options=pacsv.ParseOptions(invalid_row_handler=handler,
                                                            newlines_in_values=True, **parse))
    return table, rows


def test_on_bad_lines_warn_names_each_line():
    expected, _ = _pyarrow_skip(_BAD_LINES)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = arrow_bridge.read_csv(_BAD_LINES, on_bad_lines="warn")
    assert_tables_identical(table, expected)
    bad = [w for w in caught if issubclass(w.category, CsvBadLineWarning)]
    assert len(bad) == len(_BAD_LINES_AT), [str(w.message) for w in caught]
    for w, (line, _) in zip(bad, _BAD_LINES_AT):
        assert re.search(rf"(line |:){line}\b", str(w.message)), str(w.message)


def test_on_bad_lines_warn_late_blocks():
    """Warnings name global lines also when the bad rows sit in late spans, read in parallel."""
    data, _, line = _big(9000, b"1,2,3")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = arrow_bridge.read_csv(data, on_bad_lines="warn", block_size=512, n_threads=2)
    assert table.num_rows == _N_BIG - 1
    msgs = [str(w.message) for w in caught if issubclass(w.category, CsvBadLineWarning)]
    assert len(msgs) == 1 and re.search(rf"(line |:){line}\b", msgs[0]), msgs


@pytest.mark.parametrize("block_size", [3, 1 << 20])
def test_on_bad_lines_skip_is_silent(block_size):
    expected, _ = _pyarrow_skip(_BAD_LINES)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = arrow_bridge.read_csv(_BAD_LINES, on_bad_lines="skip", block_size=block_size)
    assert_tables_identical(table, expected)


def test_on_bad_lines_skip_late_blocks():
    data, _, _ = _big(9000, b"1,2,3")
    expected, _ = _pyarrow_skip(data)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = arrow_bridge.read_csv(data, on_bad_lines="skip", block_size=300, n_threads=2)
    assert_tables_identical(table, expected)


def test_invalid_row_handler_skip():
    """A pyarrow-style handler (ParseOptions.invalid_row_handler) is called once per bad
    row with pyarrow's InvalidRow fields, and its 'skip' is honoured."""
    expected, pa_rows = _pyarrow_skip(_BAD_LINES)
    seen: list = []

    def handler(row):
        seen.append(row)
        return "skip"

    table = arrow_bridge.read_csv(_BAD_LINES, parse_options=pacsv.ParseOptions(invalid_row_handler=handler))
    assert_tables_identical(table, expected)
    assert [(r.expected_columns, r.actual_columns) for r in seen] == \
        [(r.expected_columns, r.actual_columns) for r in pa_rows]


def test_invalid_row_handler_gets_row_text():
    """InvalidRow.text is the row's text, as pyarrow gives it ('3,4,5'), not a message."""
    _, pa_rows = _pyarrow_skip(_BAD_LINES)
    seen: list = []
    arrow_bridge.read_csv(_BAD_LINES, parse_options=pacsv.ParseOptions(
        invalid_row_handler=lambda row: seen.append(row) or "skip"))
    assert [r.text for r in seen] == [r.text for r in pa_rows] == ["3,4,5", "8"]


def test_invalid_row_handler_error():
    """A handler answering 'error' gets the normal CsvParseError for the first bad row."""
    with pytest.raises(CsvParseError) as info:
        arrow_bridge.read_csv(_BAD_LINES, parse_options=pacsv.ParseOptions(invalid_row_handler=lambda r: "error"))
    assert (info.value.line, info.value.byte_offset) == _BAD_LINES_AT[0]


def test_invalid_row_handler_selective():
    """Skip only the rows with too many fields; the short row then raises."""
    def handler(row):
        return "skip" if row.actual_columns > row.expected_columns else "error"

    with pytest.raises(CsvParseError) as info:
        arrow_bridge.read_csv(_BAD_LINES, parse_options=pacsv.ParseOptions(invalid_row_handler=handler))
    assert (info.value.line, info.value.byte_offset) == _BAD_LINES_AT[1]


@pytest.mark.parametrize("how", [dict(block_size=32), dict(block_size=32, device="modern-gen4"), dict(block_size=40)])
def test_a_bad_row_before_a_record_the_block_cut_is_still_reported(how):
    """A span ending inside a quoted line break is cut again after its last whole record;
    the bad rows before that record were dropped, the handler never asked (a fuzz find)."""
    data = b'a,b\n1,2\nbad\n3,"xxxxxxxxxxxxxy\nz"\n'
    seen: list = []
    table = arrow_bridge.read_csv(io.BytesIO(data), parse_options=pacsv.ParseOptions(
        invalid_row_handler=lambda row: seen.append(row.text) or "skip"), **how)
    assert seen == ["bad"] and table.to_pydict() == {"a": [1, 3], "b": ["2", "xxxxxxxxxxxxxy\nz"]}
    with pytest.raises(CsvParseError, match="expected 2 fields, got 1: 'bad'"):
        arrow_bridge.read_csv(io.BytesIO(data), parse_options=pacsv.ParseOptions(
            invalid_row_handler=lambda row: "error"), **how)
    with pytest.warns(CsvBadLineWarning, match="'bad'"):
        arrow_bridge.read_csv(io.BytesIO(data), on_bad_lines="warn", **how)


# ==============================================================================================
# Fuzzing: random bytes never crash the reader.
# ==============================================================================================
_FUZZ = settings(max_examples=250, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
                 phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink])


def _check_outcome(data: bytes, fn) -> Optional[tuple]:
    """Runs ``fn``: a Table, or a located CsvParseError (or another documented
    ValueError/KeyError, though not a UnicodeError leaking from decoding)."""
    try:
        table = fn()
    except CsvParseError as err:
        assert isinstance(err.reason, str) and err.reason
        check_error_location(data, err)
        return error_signature(err)
    except UnicodeError:
        raise
    except (ValueError, KeyError) as err:
        return error_signature(err)
    assert isinstance(table, pa.Table)
    return ("table", table)


@_FUZZ
@given(data=st.binary(max_size=300), block_size=st.one_of(st.integers(1, 64), st.just(1 << 20)),
       n_threads=st.sampled_from([1, 2]))
def test_fuzz_random_bytes(data, block_size, n_threads):
    _check_outcome(data, lambda: arrow_bridge.read_csv(data, block_size=block_size, n_threads=n_threads))


_CSVISH = st.lists(st.sampled_from([b"a", b"1", b"-", b".", b"e", b",", b";", b'"', b"'", b"\\", b"\n",
                                    b"\r", b"\r\n", b" ", b"\t", b"\xff", b"\xc3\xa9", b"NA", b"0x1",
                                    b"2020-01-01", b"12:34", b"T", b"Z", b"true"]),
                   max_size=80).map(b"".join)


@_FUZZ
@given(body=_CSVISH, pad=st.booleans(), block_size=st.integers(1, 64), n_threads=st.sampled_from([1, 2, 4]),
       sep=st.sampled_from([",", ";"]), quotechar=st.sampled_from(['"', "'"]),
       escapechar=st.sampled_from([None, "\\"]), header=st.sampled_from([0, None]),
       source=st.sampled_from(["bytes", "stream"]))
def test_fuzz_csvish_bytes_block_invariant(body, pad, block_size, n_threads, sep, quotechar, escapechar,
                                           header, source):
    """CSV-like noise (quotes, escapes, CR/LF, invalid UTF-8): no crash, located
    errors, and the same outcome with small blocks as with one big block."""
    prefix = b"#" * (PREAMBLE_CHUNK - 20) + b"\n" if pad else b""
    data = prefix + body
    kw: dict[str, Any] = dict(sep=sep, quotechar=quotechar, header=header, skiprows=1 if pad else 0)
    if escapechar:
        kw["escapechar"] = escapechar
    if pad:  # skipping the 64 KiB line in tiny blocks is slow
        block_size *= 16
    small = _check_outcome(data, lambda: arrow_bridge.read_csv(
        data if source == "bytes" else NonSeekableStream(data), block_size=block_size, n_threads=n_threads, **kw))
    big = _check_outcome(data, lambda: arrow_bridge.read_csv(data, block_size=1 << 20, n_threads=1, **kw))
    if small[0] == "table" and big[0] == "table":
        assert_tables_identical(small[1], big[1])
    else:
        assert small == big


def test_parse_errors_are_caught_the_way_pyarrow_users_catch_them():
    import io

    import pyarrow as pa
    import pyarrow.csv as pacsv

    data = b"a,b\n1,2\n3,4,5\n"
    with pytest.raises(pa.ArrowInvalid):
        pacsv.read_csv(io.BytesIO(data))
    with pytest.raises(pa.ArrowInvalid) as ours:  # pyarrow's except clause keeps working
        arrow_bridge.read_csv(io.BytesIO(data))
    assert isinstance(ours.value, arrow_bridge.CsvParseError) and isinstance(ours.value, ValueError)
    assert (ours.value.line, ours.value.byte_offset) == (3, 8)
