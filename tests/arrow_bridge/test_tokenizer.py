"""The tokenizer kernel: records, fields, flags, cuts inside quotes."""
import numpy as np
import pytest

from arrow_bridge.dialect import Dialect
from arrow_bridge.kernels.status import (BAD_ROW, BAD_ROWS, BYTES_SCANNED, COMPLEX, FIELDS, N_COUNTERS, NEEDS_MORE, OK,
                                         OUT_OF_SPACE, QUOTED, ROWS, UNTERMINATED_QUOTE)
from arrow_bridge.kernels.tokenizer import count_line_breaks, last_line_break_end, split_record, tokenize
from arrow_bridge.options import CsvOptions


def as_buf(data: bytes) -> np.ndarray:
    return np.frombuffer(data, dtype=np.uint8).copy()


def run(data: bytes, ncols: int, at_eof: bool = True, skip_bad: bool = False, **dialect):
    """Tokenizes ``data``; returns status, rows, position, line count, the
    fields as bytes in row order, their flags, the counters and bad rows."""
    buf = as_buf(data)
    d = Dialect.from_options(CsvOptions(**dialect))
    cap = len(buf) // ncols + 1
    row_starts = np.zeros(cap, np.int32)
    ends, flags = np.zeros(cap * ncols, np.int32), np.zeros(cap * ncols, np.uint8)
    bad = np.zeros((16, 2), np.int64)
    counters = np.zeros(N_COUNTERS, np.int64)
    status, rows, pos, lines = tokenize(buf, 0, len(buf), at_eof, ncols, *d.scan_args, skip_bad,
                                        row_starts, ends, flags, bad, counters)
    fields, field_flags = [], []
    for r in range(rows):
        start = row_starts[r]
        for j in range(ncols):
            fields.append(data[start:ends[j * cap + r]])
            field_flags.append(int(flags[j * cap + r]))
            start = ends[j * cap + r] + 1
    return status, rows, pos, lines, fields, field_flags, counters, bad


def test_plain_records_and_line_ends():
    status, rows, pos, lines, fields, flags, counters, _ = run(b"a,b\r\nc,d\re,f\n", 2)
    assert (status, rows, pos, lines) == (OK, 3, 13, 3)
    assert fields == [b"a", b"b", b"c", b"d", b"e", b"f"]
    assert set(flags) == {0}
    assert counters[ROWS] == 3 and counters[FIELDS] == 6 and counters[BYTES_SCANNED] == 13


def test_quoted_fields_keep_their_quotes_and_are_flagged():
    status, rows, _, lines, fields, flags, _, _ = run(b'"a,b","c""d"\n"x\ny",z\n', 2)
    assert (status, rows, lines) == (OK, 2, 3)
    assert fields == [b'"a,b"', b'"c""d"', b'"x\ny"', b"z"]
    assert flags == [QUOTED, QUOTED | COMPLEX, QUOTED, 0]


def test_text_after_closing_quote_needs_unescaping():
    _, _, _, _, fields, flags, _, _ = run(b'"ab"c\n', 1)
    assert fields == [b'"ab"c'] and flags == [QUOTED | COMPLEX]


def test_empty_lines_are_skipped():
    _, rows, _, lines, fields, _, _, _ = run(b"\n\na\n\r\n\rb\n", 1)
    assert rows == 2 and lines == 6 and fields == [b"a", b"b"]


def test_cut_inside_quotes_asks_for_more():
    status, rows, pos, _, fields, _, _, _ = run(b'a,b\n"x\n', 2, at_eof=False)
    assert (status, rows, pos) == (NEEDS_MORE, 1, 4)


def test_unterminated_quote_at_eof_is_an_error():
    status, rows, pos, *_ = run(b'a\n"x\n', 1)
    assert (status, rows, pos) == (UNTERMINATED_QUOTE, 1, 2)


def test_wrong_field_count_stops_or_is_skipped():
    status, rows, pos, *_ = run(b"a,b\nc\nd,e\n", 2)
    assert (status, rows, pos) == (BAD_ROW, 1, 4)
    status, rows, _, _, fields, _, counters, bad = run(b"a,b\nc\nd,e\n", 2, skip_bad=True)
    assert (status, rows) == (OK, 2) and fields == [b"a", b"b", b"d", b"e"]
    assert counters[BAD_ROWS] == 1 and bad[0].tolist() == [4, 1]


def test_escape_character_and_custom_delimiter():
    _, rows, _, _, fields, flags, _, _ = run(b"a\\;b;c\n", 2, delimiter=";", escape_char="\\")
    assert rows == 1 and fields == [b"a\\;b", b"c"] and flags == [COMPLEX, 0]


def test_line_break_helpers():
    buf = as_buf(b"a\r\nb\rc\nd")
    assert count_line_breaks(buf, 0, len(buf)) == 3
    assert last_line_break_end(buf, 0, len(buf)) == 7
    assert last_line_break_end(as_buf(b"ab\r"), 0, 3) == -1  # its LF may follow
    assert last_line_break_end(as_buf(b"abc"), 0, 3) == -1


@pytest.mark.parametrize("capacity, expected", [(1, OUT_OF_SPACE), (8, OK)])
def test_split_record_respects_capacity(capacity, expected):
    buf = as_buf(b"x,y,z\n1")
    d = Dialect.from_options(CsvOptions())
    starts, ends = np.zeros(capacity, np.int64), np.zeros(capacity, np.int64)
    flags = np.zeros(capacity, np.uint8)
    status, n, pos = split_record(buf, 0, len(buf), True, *d.scan_args, starts, ends, flags)
    assert status == expected
    if status == OK:
        assert (n, pos) == (3, 6)


def test_escaped_line_breaks_count_as_physical_lines():
    # An escaped CR followed by LF is one physical line break, as everywhere else.
    status, rows, _, lines, fields, _, _, _ = run(b"a\\\r\nb\nc\\\nd\n", 1, escape_char="\\")
    assert (status, rows, lines) == (OK, 3, 4)
    assert fields == [b"a\\\r", b"b", b"c\\\nd"]
