"""The one-pass fast path (``arrow_bridge.fast_path``, ``kernels/fused.py``).

Its contract: for every span it either gives up or produces exactly what the
general path (tokenizer + converters) produces, work counters included. The
tests compare the two paths span by span, and the reader with the fast path
against pyarrow with the types known up front (so the fast path runs from
the first span on, even for single-span files).
"""
from __future__ import annotations

import io
import random
import re

import numba
import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

import arrow_bridge
from arrow_bridge import fast_path
from arrow_bridge.numbers.fast_floats import float64_at as _float_at
from arrow_bridge.numbers.swar import (digits_value, digits_value32, equal_mask32, equal_mask64, leading_digits,
                                      number_masks32)
from arrow_bridge.converters import ValueRules
from arrow_bridge.dialect import Dialect
from arrow_bridge.options import CsvOptions
from arrow_bridge.executors import HostExecutor, SpanResult
from csvgen import assert_tables_identical, csv_cases, read_pyarrow

_SETTINGS = settings(max_examples=600, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                            HealthCheck.filter_too_much])


class FastPathSpy:
    """Counts the spans the fast path parsed and those it gave up on."""

    def __init__(self, monkeypatch):
        self.parsed = self.gave_up = 0
        parse = fast_path.FastPlan.parse

        def spy(plan, *args, **kwargs):
            out = parse(plan, *args, **kwargs)
            if out is None:
                self.gave_up += 1
            else:
                self.parsed += 1
            return out

        monkeypatch.setattr(fast_path.FastPlan, "parse", spy)


def _spans_parsed(monkeypatch, data: bytes, fast: bool, **options) -> tuple[pa.Table, list[SpanResult]]:
    """The table and every span's result, with the fast path on or off, and
    each column's type taken from pyarrow (so the fast path may run at once)."""
    reference = pacsv.read_csv(io.BytesIO(data), parse_options=pacsv.ParseOptions(newlines_in_values=True),
                               convert_options=pacsv.ConvertOptions(**options))
    types = dict(zip(reference.column_names, reference.schema.types))
    results: list[SpanResult] = []
    parse = HostExecutor.parse
    with monkeypatch.context() as patch:
        patch.setattr(HostExecutor, "parse", lambda self, span, plan: results.append(
            parse(self, span, plan)) or results[-1])
        if not fast:
            patch.setattr(HostExecutor, "parse_fast", lambda self, span, plan, result: False)
        table = arrow_bridge.read_csv(io.BytesIO(data), block_size=1 << 20, convert_options=pacsv.ConvertOptions(
            **dict(options, column_types=types)))
    return table, sorted(results, key=lambda result: result.span.offset)  # worker threads finish in any order


def _assert_same_as_general(monkeypatch, data: bytes, **options) -> None:
    spy = FastPathSpy(monkeypatch)
    fast_table, fast = _spans_parsed(monkeypatch, data, True, **options)
    assert spy.parsed >= 1 and spy.gave_up == 0, "the fast path gave up"
    general_table, general = _spans_parsed(monkeypatch, data, False, **options)
    assert_tables_identical(fast_table, general_table)
    for a, b in zip(fast, general, strict=True):
        assert (a.nrows, a.line_breaks, a.parsed, a.status) == (b.nrows, b.line_breaks, b.parsed, b.status)
        assert a.counters.tolist() == b.counters.tolist()


@pytest.mark.parametrize("data, options", [
    (b"a,b,c\n1,2.5,x\n-3,1e300,\"y,z\"\n", {}),
    (b"i,f\n123456789012345678,0.6479062041731867\n-1,9.994968635121158e-7\n7,-0\n8,+5\n9,.5\n10,5.\n", {}),
    (b"i,f\n1,4.9e-324\n2,2.2250738585072011e-308\n3,1.7976931348623157e308\n4,123456789012345678901234\n", {}),
    (b"i,f\n1,nan\n2,-inf\n3,Infinity\n4,  7.5\n5,1E+05\n6,1e-00010\n", {}),
    (b"d,t,ts\n2020-02-29,12:34:56,2020-01-01 00:00:00\n1999-12-31,00:00,2021-06-30T23:59:59\n", {}),
    (b"d,ts\n2020-02-29,2020-01-01T00:00:00.123456789Z\n2021-01-01,1970-01-01T00:00:00+01:00\n", {}),
    (b"b,s\ntrue,\"say \"\"hi\"\"\"\nFalse,\"two\r\nlines\"\n", {}),
    (b"x,y\r\n1,2\r\n\r\n3,4\r\n\n5,6\r\n", {}),
    (b"x,y\n,NA\nNULL,2\n-nan,\n1.#IND,3\n", {}),
    (b"x,y\n0,-1\n1,2\n-1,0\n", {"null_values": ["0", "-1"]}),
    (b"x,y\n0,a\nNA,\n2,\"\"\n", {"strings_can_be_null": True}),
    (b"x,y\n0,\"NA\"\n1,NA\n", {"strings_can_be_null": True, "quoted_strings_can_be_null": False}),
    (b"x,y\n1,caf\xc3\xa9\n2,\xe2\x82\xac uro\n", {}),
    (b"n,m\n,\n,\n", {}),
    (b"x\n0x1F\n 12 \n", {"column_types": {"x": pa.int8()}}),
    # narrower ints take the inline int path with a range check: every boundary, and past it
    (b"a,b,c\n" + b"".join(b"%d,%d,%d\n" % (v8, v16, v32) for v8, v16, v32 in (
        (127, 32767, 2147483647), (-128, -32768, -2147483648), (0, -0, 1), (-1, 99, -99)) * 50),
     {"column_types": {"a": pa.int8(), "b": pa.int16(), "c": pa.int32()}}),
    # a null spelling that is a value for int64 but not int8: both columns check the spellings
    (b"a,b\n1000,1000\n5,6\n", {"column_types": {"a": pa.int8(), "b": pa.int64()}, "null_values": ["1000"]}),
    (b"x,y\n" + b"".join(b"%d,%s\n" % (i, b"word" * (i % 7)) for i in range(3000)), {}),
    # values whose first byte and length match a null spelling (1.#QNAN, -1.#QNAN) but are numbers
    (b"i,f\n1234567,1234.56\n-1234567,-1234.5\n1,1.#QNAN\n", {}),
    # more than 19 digits with the leading zeros; 17-18 digit integers; signs
    (b"i,f\n12345678901234567,0.0000023589830885152754\n-123456789012345678,-0.000000000000000000001\n"
     b"+5,0.00000000000000000000000000000000000000000000000000000000000000000000001\n-0,1e22\n", {}),
    # quoted numbers, quoted and unquoted strings, fields longer than 64 bytes, CRLF and empty lines:
    # the stream of field ends restarts after each quoted field
    (b"i,s,f,t\r\n" + b"".join(
        b'%s,%s,%s,%s\r\n%s' % (b'"%d"' % i if i % 5 == 0 else b"%d" % i,
                                 b'"q,%d ""x"""' % i if i % 3 == 0 else b"u" * (i % 90),
                                 b'"%d.25"' % i if i % 7 == 0 else b"%d.5" % i,
                                 b"t" * (i % 70), b"\r\n" if i % 11 == 0 else b"")
        for i in range(2000)), {}),
    (b"a,b,c\n" + b"".join(b'%d,"%s",%d\n' % (i, b"z" * (i % 80), i) for i in range(500)),
     {"include_columns": ["a", "c"]}),
    # bools, timestamps (zoneless with 0-9 fraction digits, zoned) and dates, some quoted, some null:
    # bools and zoneless timestamps take inline paths; quoted numbers and dates the unquoted ones' paths
    (b"b,t,z,d,i,f\n" + b"".join(
        b"%s,%s,%s,%s,%s,%s\n" % (
            [b"true", b"False", b"TRUE", b"", b'"true"', b"false"][i % 6],
            b"" if i % 13 == 0 else (b'"%s"' if i % 4 == 0 else b"%s") % (
                b"2021-%02d-%02d%s%02d:%02d:%02d%s" % (1 + i % 12, 1 + i % 28, b"T" if i % 2 else b" ", i % 24,
                                                      i % 60, (7 * i) % 60, b"." + b"5" * (i % 10) if i % 10 else b"")),
            b"2020-02-29T23:59:59%s" % [b"Z", b"+01:00", b"-0530"][i % 3],
            b'"1999-12-%02d"' % (1 + i % 31) if i % 3 else b"1999-12-%02d" % (1 + i % 31),
            b'"%d"' % (i * 7919 - 10**6) if i % 2 else b"%d" % i,
            b'"%d.%d"' % (i, i % 97) if i % 5 else b"",
        ) for i in range(3000)), {}),
    # times: seconds (time32) and microseconds (time64), one with HH:MM among them (the general parser's), nulls
    (b"t,u,m\n" + b"".join(b"%02d:%02d:%02d,%s,%s\n" % (
        i % 24, i % 60, (3 * i) % 60, b"" if i % 17 == 0 else b"%02d:00:01.%06d" % (i % 24, i * 7919 % 10**6),
        b"%02d:%02d" % (i % 24, i % 60) if i % 3 else b"%02d:%02d:00" % (i % 24, i % 60)) for i in range(3000)),
     {"column_types": {"u": pa.time64("us")}}),
    # float shapes past the buffer's first 32 bytes: signs, points first and last, exponents of 1-5
    # digits, 19 and 20 digits, fields of 32 and 33 bytes, numbers among text that is not one
    (b"i,f\n" + b"".join(b"%d,%s\n" % (i, v) for i, v in enumerate(
        [b"-.5", b"+5.", b"1e5", b"1.5E-0003", b"-2.5e+300", b"7e-12345", b"1234567890123456789",
         b"12345678901234567890", b"0.1234567890123456789", b"1.000000000000000000000000000001",
         b"-1234567890.12345678901234567890", b"0.00000000000000000000000000012", b"1.2.3", b"1e",
         b"1e+", b"--1", b"1.5e5e5", b"4.605098936670904e+12", b"-0.0", b"1_0"] * 200)), {}),
])
def test_fast_path_equals_the_general_path(monkeypatch, data, options):
    _assert_same_as_general(monkeypatch, data, **options)


@pytest.mark.parametrize("data, type_", [(b"a\n1\n128\n", pa.int8()), (b"a\n-1\n-129\n", pa.int8()),
                                         (b"a\n1\n2147483648\n", pa.int32()), (b"a\n1\n-32769\n", pa.int16())])
def test_narrow_ints_out_of_range_raise_as_pyarrow(data, type_):
    convert = pacsv.ConvertOptions(column_types={"a": type_})
    with pytest.raises(pa.ArrowInvalid):
        pacsv.read_csv(io.BytesIO(data), convert_options=convert)
    with pytest.raises(arrow_bridge.CsvParseError, match=f"to {type_}"):
        arrow_bridge.read_csv(io.BytesIO(data), convert_options=convert)


def test_a_span_denser_than_its_row_estimate_is_parsed_again_with_room():
    opts = CsvOptions()
    plan = fast_path.FastPlan.build(2, [(0, pa.int64()), (1, pa.string())], ValueRules.from_options(opts),
                                    Dialect.from_options(opts))
    body = np.frombuffer(b"".join(b"%d,s%d\n" % (i, i) for i in range(100)), np.uint8).copy()
    rows, lines, arrays, _ = plan.parse(body, 8, np.zeros(11, np.int64))
    assert (rows, lines) == (100, 100)
    assert arrays[0].to_pylist() == list(range(100)) and arrays[1].to_pylist()[-1] == "s99"


def test_a_file_growing_denser_is_read_whole(tmp_path, monkeypatch):
    # rows shrink from about 37 to 8 bytes: each span is denser than the densest before it by more
    # than the row estimate's slack, so spans are parsed again with room, and nothing is lost
    path = tmp_path / "denser.csv"
    path.write_bytes(b"k,s\n" + b"".join(b"%d,%s\n" % (i, b"x" * max(1, 30 - i // 2000)) for i in range(60_000)))
    allocations = []
    allocate = fast_path.FastPlan.allocate
    monkeypatch.setattr(fast_path.FastPlan, "allocate",
                        lambda self, rows, span_bytes: allocations.append(rows) or allocate(self, rows, span_bytes))
    table = arrow_bridge.read_csv(path, block_size=64 << 10, n_threads=2)
    assert table.equals(pacsv.read_csv(path))
    assert len(allocations) > table.column(0).num_chunks  # some spans took a second allocation


@pytest.mark.parametrize("data", [
    b"x,y\n1,2,3\n",  # too many fields
    b"x,y\n1\n",  # too few
    b"x,y\n1,\"a\"b\n",  # text after the closing quote
    b"x,y\n1,\"open\n",  # the span ends inside a quote
    b"x,y\n1,2",  # no final line break
    b"x,y\n99999999999999999999,2\n",  # does not fit int64
    b"x,y\nabc,2\n",  # not an integer
])
def test_fast_path_gives_up_on_irregular_spans(data):
    opts = CsvOptions()
    plan = fast_path.FastPlan.build(2, [(0, pa.int64()), (1, pa.string())], ValueRules.from_options(opts),
                                    Dialect.from_options(opts))
    body = np.frombuffer(data[data.index(b"\n") + 1:], np.uint8).copy()
    assert plan.parse(body, 64, np.zeros(11, np.int64)) is None


def test_invalid_utf8_gives_up_and_the_reader_falls_back_to_binary(monkeypatch):
    spy = FastPathSpy(monkeypatch)
    data = b"s\n" + b"ok\n" * 300 + b"\xff\xfe\n" + b"ok\n" * 300
    table = arrow_bridge.read_csv(io.BytesIO(data), block_size=64)
    assert table.schema.types == [pa.binary()]
    assert table.equals(read_pyarrow(data)[0])
    assert spy.parsed and spy.gave_up


def test_large_file_takes_the_fast_path_after_the_first_span(monkeypatch, tmp_path):
    rng = random.Random(7)
    rows = [f"{rng.randrange(-10**12, 10**12)},{rng.random() * 10 ** rng.randrange(-5, 5)!r},"
            f"2021-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d},\"t{rng.randrange(99)}\"\n"
            for _ in range(20_000)]
    path = tmp_path / "big.csv"
    path.write_text("i,f,d,s\n" + "".join(rows))
    spy = FastPathSpy(monkeypatch)
    table = arrow_bridge.read_csv(path, block_size=32 << 10, n_threads=2)
    assert_tables_identical(table, pacsv.read_csv(path))
    assert spy.gave_up == 0 and spy.parsed >= 10


@_SETTINGS
@given(case=csv_cases(unique_names=True), n_threads=st.sampled_from([1, 2]),
       block_size=st.sampled_from([1, 64, 1 << 20]))
def test_known_types_match_pyarrow(case, n_threads, block_size):
    """With every column's type given, the fast path parses from the first
    span on; the table must equal pyarrow's given the same types."""
    assume(not case.unterminated)  # pyarrow swallows the rest of the file; we raise (test_differential)
    read_opts = case.pyarrow_read_options()
    parse_opts = case.dialect.parse_options()
    inferred, err = read_pyarrow(case.data, read_opts, parse_opts)
    assume(err is None and inferred.num_columns)
    types = dict(zip(inferred.column_names, inferred.schema.types))
    conv = pacsv.ConvertOptions(column_types=types)
    theirs, their_err = read_pyarrow(case.data, read_opts, parse_opts, conv)
    assume(their_err is None)
    kw = dict(parse_options=parse_opts, convert_options=conv, n_threads=n_threads,
              block_size=case.effective_block_size(block_size))
    if not case.header or case.skip_rows:
        kw["read_options"] = read_opts
    with pytest.MonkeyPatch.context() as patch:
        spy = FastPathSpy(patch)
        ours = arrow_bridge.read_csv(io.BytesIO(case.data), **kw)
    event(f"fast path parsed a span: {spy.parsed > 0}; gave up on one: {spy.gave_up > 0}")
    assert_tables_identical(ours, theirs)


# ---- SWAR word tricks -----------------------------------------------------------------------
def _word(text: bytes) -> np.uint64:
    return np.frombuffer(text.ljust(8, b"\0")[:8], np.uint64)[0]


@given(st.binary(min_size=8, max_size=8))
def test_leading_digits_and_their_value(text):
    n = next((i for i, c in enumerate(text) if not 48 <= c <= 57), 8)
    assert leading_digits(_word(text)) == n
    if n:
        assert digits_value(_word(text), n) == int(text[:n])


@numba.njit
def _mask_at(buf, index, a, b, c):
    return equal_mask64(buf.ctypes.data, index, a, b, c)


@given(st.binary(min_size=64, max_size=100), st.data(), st.sampled_from([b",", b";", b"\t", b"|"]))
def test_equal_mask64_flags_every_field_end_in_64_bytes(text, data, delimiter):
    index = data.draw(st.integers(0, len(text) - 64))
    expected = sum(1 << i for i in range(64) if text[index + i] in (delimiter[0], 10, 13))
    buf = np.frombuffer(text, np.uint8).copy()
    assert int(_mask_at(buf, np.int64(index), np.int64(delimiter[0]), np.int64(10), np.int64(13))) == expected


@numba.njit
def _mask32_at(buf, index, a, b):
    return equal_mask32(buf.ctypes.data, index, a, b)


@given(st.binary(min_size=32, max_size=40), st.data(), st.binary(min_size=2, max_size=2))
def test_equal_mask32_flags_two_byte_values_in_32_bytes(text, data, values):
    index = data.draw(st.integers(0, len(text) - 32))
    expected = sum(1 << i for i in range(32) if text[index + i] in values)
    buf = np.frombuffer(text, np.uint8).copy()
    assert int(_mask32_at(buf, np.int64(index), np.int64(values[0]), np.int64(values[1]))) == expected


@numba.njit
def _number_masks_at(buf, index, decimal):
    return number_masks32(buf.ctypes.data, index, decimal)


@settings(deadline=None)
@given(st.binary(min_size=32, max_size=40), st.data(), st.sampled_from([b".", b","]))
def test_number_masks32_flags_non_digits_points_and_exponent_letters(text, data, decimal):
    index = data.draw(st.integers(0, len(text) - 32))
    window = text[index:index + 32]
    expected = [sum(1 << i for i, c in enumerate(window) if test(c)) for test in (
        lambda c: not 48 <= c <= 57, lambda c: c == decimal[0], lambda c: c in b"eE")]
    buf = np.frombuffer(text, np.uint8).copy()
    assert [int(m) for m in _number_masks_at(buf, np.int64(index), np.int64(decimal[0]))] == expected


@numba.njit
def _digits_value_at(buf, end, count, skip):
    return digits_value32(buf.ctypes.data, end, count, skip)


@settings(deadline=None)
@given(st.text("0", max_size=5), st.text("0123456789", min_size=1, max_size=19), st.data(),
       st.binary(min_size=13, max_size=13))
def test_digits_value32_reads_19_digits_after_leading_zeros_around_a_point(zeros, digits, data, filler):
    digits = zeros + digits
    point = data.draw(st.none() | st.integers(0, len(digits)))
    text = digits.encode() if point is None else f"{digits[:point]}.{digits[point:]}".encode()
    buf = np.frombuffer(filler + filler + text, np.uint8).copy()
    skip = -1 if point is None else 32 - len(text) + point
    assert int(_digits_value_at(buf, np.int64(len(buf)), np.int64(len(digits)), np.int64(skip))) == int(digits)


@numba.njit
def _float_field(buf, start, end):
    return _float_at(buf.ctypes.data, start, end, np.int64(46))


_FLOAT_TEXT = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.floats(allow_nan=False, allow_infinity=False, width=32).map(lambda f: f"{f:.9g}"),
    st.from_regex(r"\A[+-]?[0-9]{0,21}(\.[0-9]{0,21})?([eE][+-]?[0-9]{0,5})?\Z"),
    st.text("0123456789.eE+-x ", max_size=34),
    st.from_regex(r"\A[+-]?0?\.0{1,8}[1-9][0-9]{0,18}([eE][+-]?[0-9]{1,3})?\Z"),  # leading zeros
)


def _decided_by_fast_path(text: str, offset: int, plain: re.Match) -> bool:
    """Whether ``_float_at`` must decide ``text``: at most 19 digits, or up to
    24 of which at most 19 significant where its 32-byte load reaches the
    whole mantissa (a field of at most 32 bytes, ending 32 bytes or more into
    the buffer, its mantissa too)."""
    digits = plain[1] + plain[2]
    if len(digits) <= 19:
        return bool(plain[1] or plain[2].strip("0"))
    mantissa = len(text) - len(plain[3] or "")
    return (len(digits) <= 24 and len(digits.lstrip("0")) <= 19 and len(text) <= 32
            and offset + mantissa >= 32)


@settings(max_examples=2000, deadline=None)
@given(_FLOAT_TEXT, st.integers(0, 48))
def test_float_fast_path_is_correctly_rounded_or_declines(text, offset):
    """``_float_at`` either declines (the general parser decides) or gives
    Python's correctly rounded value, bit for bit, wherever the field lies."""
    field = text.encode()
    buf = np.frombuffer(b"9" * offset + field + b",", np.uint8).copy()
    ok, value = _float_field(buf, np.int64(offset), np.int64(offset + len(field)))
    plain = re.fullmatch(r"[+-]?([0-9]*)\.?([0-9]*)([eE][+-]?[0-9]{1,4})?", text)
    if plain and _decided_by_fast_path(text, offset, plain):
        assert ok, text  # Eisel-Lemire decides all values of at most 19 significant digits but a few near halfway
    if ok:
        assert np.float64(value).view(np.uint64) == np.float64(float(text)).view(np.uint64), text
