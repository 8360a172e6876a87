"""Column converters (``arrow_bridge.kernels.columns``) against pyarrow: the
values, validity and null counts of one tokenized column, the status and row
of a value that does not convert, and the work counters."""
from __future__ import annotations

import datetime as dt
import io

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arrow_bridge.dialect import Dialect
from arrow_bridge.kernels import status
from arrow_bridge.kernels.columns import (
    BOOL,
    DATE,
    FLOAT,
    NULL,
    SIGNED,
    TIME,
    TIMESTAMP,
    UNSIGNED,
    convert_fixed,
    convert_strings,
    string_bytes_upper_bound,
    utf8_valid,
)
from arrow_bridge.kernels.fields import spelling_set
from arrow_bridge.kernels.tokenizer import tokenize
from arrow_bridge.options import CsvOptions

SETTINGS = settings(max_examples=80, deadline=None)
NULLS = ["", "NA", "null"]
# Arrow type -> (kind, params, value dtype, counter slot), as the reader's converters set them up.
FIXED = {
    pa.int64(): (SIGNED, (64, 0, 0), np.int64, status.INTS_CONVERTED),
    pa.int8(): (SIGNED, (8, 0, 0), np.int8, status.INTS_CONVERTED),
    pa.uint16(): (UNSIGNED, (16, 0, 0), np.uint16, status.INTS_CONVERTED),
    pa.float64(): (FLOAT, (ord("."), 0, 0), np.float64, status.FLOATS_CONVERTED),
    pa.float32(): (FLOAT, (ord("."), 0, 0), np.float32, status.FLOATS_CONVERTED),
    pa.bool_(): (BOOL, (0, 0, 0), np.uint8, status.BOOLS_CONVERTED),
    pa.date32(): (DATE, (0, 0, 0), np.int32, status.TEMPORALS_CONVERTED),
    pa.time32("ms"): (TIME, (3, 0, 1_000), np.int32, status.TEMPORALS_CONVERTED),
    pa.timestamp("us"): (TIMESTAMP, (6, 0, 1_000_000), np.int64, status.TEMPORALS_CONVERTED),
    pa.timestamp("ns", tz="UTC"): (TIMESTAMP, (9, 1, 1_000_000_000), np.int64, status.TEMPORALS_CONVERTED),
}
VALUES = {
    pa.int64(): st.integers(-(2**63), 2**63 - 1).map(str),
    pa.int8(): st.one_of(st.integers(-128, 127).map(str), st.sampled_from(["0x7f", " 5 ", "-0"])),
    pa.uint16(): st.integers(0, 65535).map(str),
    pa.float64(): st.one_of(st.floats(allow_nan=False).map(repr), st.sampled_from(["1e5", ".5", "-inf", " 2 "])),
    pa.float32(): st.floats(allow_nan=False, width=32).map(repr),
    pa.bool_(): st.sampled_from(["true", "false", "1", "0", "True", "FALSE"]),
    pa.date32(): st.dates().map(lambda d: f"{d.year:04d}-{d.month:02d}-{d.day:02d}"),
    pa.time32("ms"): st.times().map(lambda t: t.isoformat(timespec="milliseconds")),
    pa.timestamp("us"): st.datetimes(min_value=dt.datetime(1, 1, 1)).map(
        lambda t: t.isoformat(sep=" ", timespec="microseconds")),
    pa.timestamp("ns", tz="UTC"): st.datetimes(min_value=dt.datetime(1678, 1, 1),
                                                max_value=dt.datetime(2262, 1, 1)).map(
        lambda t: t.isoformat(timespec="seconds") + "Z"),
}
OPTIONS = CsvOptions()


def tokenized(text: bytes, ncols: int = 1) -> tuple:
    """The tokenizer's kernel span for ``text`` (no header) and its row count."""
    buf = np.frombuffer(text, np.uint8).copy()
    dialect = Dialect.from_options(OPTIONS)
    capacity = len(buf) // ncols + 2
    row_starts = np.zeros(capacity, np.int32)
    ends, flags = np.zeros(capacity * ncols, np.int32), np.zeros(capacity * ncols, np.uint8)
    result = tokenize(buf, 0, len(buf), True, ncols, *dialect.scan_args, False, row_starts, ends, flags,
                      np.zeros((1, 2), np.int64), status.empty_counters())
    assert result[0] == status.OK
    span = (buf, row_starts, ends, flags, result[1], capacity, dialect.unescape_args,
            np.zeros(len(buf) + 1, np.uint8))
    return span, result[1]


def pyarrow_column(text: bytes, type_: pa.DataType, nulls: list[str] = NULLS):
    """pyarrow's column for ``text`` (one column, no header), or None if it does not convert."""
    try:
        table = pacsv.read_csv(io.BytesIO(text), read_options=pacsv.ReadOptions(column_names=["x"]),
                               convert_options=pacsv.ConvertOptions(
                                   column_types={"x": type_}, null_values=nulls, true_values=["true", "1", "True"],
                                   false_values=["false", "0", "FALSE"], strings_can_be_null=True))
    except pa.ArrowInvalid:
        return None
    return table.column(0).combine_chunks()


def convert(text: bytes, type_: pa.DataType, nulls: list[str] = NULLS, quoted_nulls: bool = True):
    """``(status, bad_row, array or None, counters)`` from ``convert_fixed``."""
    kind, params, dtype, _ = FIXED[type_]
    span, nrows = tokenized(text)
    out = np.full(0 if kind == BOOL else nrows, 0x55, dtype=dtype)
    bits = np.zeros((nrows + 7) // 8 or 1, np.uint8)
    validity = np.zeros((nrows + 7) // 8 or 1, np.uint8)
    counters = status.empty_counters()
    code, bad_row, null_count = convert_fixed(span, 0, spelling_set(nulls), quoted_nulls, kind,
                                              tuple(np.int64(p) for p in params), spelling_set(["true", "1", "True"]),
                                              spelling_set(["false", "0", "FALSE"]), out, bits, validity, counters)
    if code != status.OK:
        return code, bad_row, None, counters
    values = bits if kind == BOOL else out
    array = pa.Array.from_buffers(type_, nrows, [pa.py_buffer(validity) if null_count else None, pa.py_buffer(values)],
                                  null_count=null_count)
    if kind != BOOL:
        assert (out[np.unpackbits(validity, bitorder="little")[:nrows] == 0] == 0).all() or not null_count
    return code, bad_row, array, counters


@pytest.mark.parametrize("type_", list(FIXED), ids=str)
@SETTINGS
@given(data=st.data())
def test_fixed_width_values_and_nulls_like_pyarrow(type_, data):
    fields = data.draw(st.lists(st.one_of(VALUES[type_], st.sampled_from(["NA", ""])), min_size=1, max_size=30))
    if fields == [""] * len(fields):
        fields.append("NA")  # a file of blank lines has no rows
    text = "".join(f"{f}\n" if f else '""\n' for f in fields).encode()
    code, _, array, counters = convert(text, type_)
    want = pyarrow_column(text, type_)
    assert code == status.OK and want is not None
    assert array.equals(want), (array, want)
    nulls = sum(f in ("NA", "") for f in fields)
    assert counters[status.NULLS] == nulls and counters[FIXED[type_][3]] == len(fields) - nulls
    assert counters.sum() == len(fields)  # nothing else counted


@pytest.mark.parametrize("type_, text, bad_row", [
    (pa.int8(), b"1\n128\n", 1), (pa.uint16(), b"-1\n", 0), (pa.int64(), b"1\n2\n1.5\n", 2),
    (pa.float64(), b"1\n1e\n", 1), (pa.bool_(), b"true\nyes\n", 1), (pa.date32(), b"2021-02-29\n", 0),
    (pa.time32("ms"), b"12:00:00.1234\n", 0), (pa.timestamp("us"), b"2020-01-01Z\n", 0),
    (pa.timestamp("ns", tz="UTC"), b"2020-01-01\n", 0), (pa.timestamp("ns", tz="UTC"), b"1677-09-21 00:12:43Z\n", 0),
])
def test_a_value_that_does_not_convert_stops_at_its_row(type_, text, bad_row):
    code, row, array, counters = convert(text, type_)
    assert (code, row, array) == (status.BAD_VALUE, bad_row, None)
    assert not counters.any()
    assert pyarrow_column(text, type_) is None


def test_quoted_null_spellings_are_values_unless_quoted_nulls():
    text = b'1\n"NA"\n'
    assert convert(text, pa.int64(), quoted_nulls=True)[2].to_pylist() == [1, None]
    assert convert(text, pa.int64(), quoted_nulls=False)[:2] == (status.BAD_VALUE, 1)


def test_null_kind_takes_only_null_spellings():
    span, nrows = tokenized(b"NA\n\"\"\nnull\n")
    counters = status.empty_counters()
    validity = np.zeros(1, np.uint8)
    no_params = (np.int64(0),) * 3
    result = convert_fixed(span, 0, spelling_set(NULLS), True, NULL, no_params, spelling_set([]), spelling_set([]),
                           np.zeros(nrows, np.uint8), validity, validity.copy(), counters)
    assert result == (status.OK, -1, 3) and counters[status.NULLS] == 3
    span, _ = tokenized(b"NA\nx\n")
    assert convert_fixed(span, 0, spelling_set(NULLS), True, NULL, no_params, spelling_set([]), spelling_set([]),
                         np.zeros(2, np.uint8), validity, validity.copy(), counters)[:2] == (status.BAD_VALUE, 1)


def strings(text: bytes, ncols: int = 1, col: int = 0, use_nulls: bool = True, check_utf8: bool = True):
    span, nrows = tokenized(text, ncols)
    capacity = string_bytes_upper_bound(span, col)
    offsets, data = np.zeros(nrows + 1, np.int32), np.zeros(max(capacity, 1), np.uint8)
    validity = np.zeros((nrows + 7) // 8 or 1, np.uint8)
    counters = status.empty_counters()
    code, bad_row, null_count = convert_strings(span, col, spelling_set(NULLS), use_nulls, True, check_utf8,
                                                offsets, data, validity, counters)
    if code != status.OK:
        return code, bad_row, None, counters, capacity
    array = pa.Array.from_buffers(pa.string(), nrows, [pa.py_buffer(validity) if null_count else None,
                                                       pa.py_buffer(offsets), pa.py_buffer(data)],
                                  null_count=null_count)
    return code, bad_row, array, counters, capacity


@SETTINGS
@given(st.lists(st.one_of(st.text(alphabet='ab ,"\né', max_size=6), st.sampled_from(["NA", ""])), min_size=1,
                max_size=20))
def test_strings_like_pyarrow(values):
    text = "".join('"' + v.replace('"', '""') + '"\n' if v not in ("NA", "") else v + "\n" for v in values).encode()
    if all(v == "" for v in values):
        return  # blank lines: no rows
    code, _, array, counters, capacity = strings(text)
    rows = [v for v in values if v != ""]  # unquoted empty lines are skipped
    want = pyarrow_column(text, pa.string())
    assert code == status.OK and array.equals(want)
    assert array.to_pylist() == [None if v == "NA" else v for v in rows]
    assert counters[status.STRING_BYTES] == sum(len(v.encode()) for v in rows if v != "NA")
    assert counters[status.NULLS] == rows.count("NA") and capacity >= counters[status.STRING_BYTES]


def test_strings_second_column_without_nulls_and_invalid_utf8():
    code, _, array, _, capacity = strings(b'a,NA\nb,"x"\n', ncols=2, col=1, use_nulls=False)
    assert code == status.OK and array.to_pylist() == ["NA", "x"] and capacity == 3
    assert strings(b"ok\n\xff\n")[:2] == (status.BAD_VALUE, 1)
    assert strings(b"ok\n\xff\n", check_utf8=False)[0] == status.OK


@SETTINGS
@given(st.binary(max_size=12))
def test_utf8_valid_like_python(data):
    try:
        data.decode("utf-8")
        valid = True
    except UnicodeDecodeError:
        valid = False
    assert utf8_valid(np.frombuffer(data or b"\0", np.uint8), 0, len(data)) == valid
