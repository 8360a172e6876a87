"""Per-type conversion, checked against pyarrow on the same one-column CSV."""
import io
import math

import pyarrow as pa
import pyarrow.csv as pacsv
import pytest

import arrow_bridge
from arrow_bridge.numbers.parse_dates import days_from_civil


def ours(values: list[bytes], type_=None, **kw) -> pa.Array:
    data = b"x\n" + b"\n".join(values) + b"\n"
    dtype = {"dtype": {"x": type_}} if type_ is not None else {}
    return arrow_bridge.read_csv(io.BytesIO(data), **dtype, **kw).column("x").combine_chunks()


def pyarrows(values: list[bytes], type_=None) -> pa.Array:
    data = b"x\n" + b"\n".join(values) + b"\n"
    co = pacsv.ConvertOptions(column_types={"x": type_} if type_ is not None else {})
    return pacsv.read_csv(io.BytesIO(data), convert_options=co).column("x").combine_chunks()


INT_CASES = [
    (pa.int64(), [b"1", b"-9223372036854775808", b"9223372036854775807", b" 7 ", b"0x10", b"NA", b""]),
    (pa.int8(), [b"-128", b"127", b"0xff", b"0x80"]),
    (pa.int16(), [b"-32768", b"32767", b"0x0ff"]),
    (pa.int32(), [b"-2147483648", b"2147483647"]),
    (pa.uint8(), [b"0", b"255", b"0xff"]),
    (pa.uint64(), [b"18446744073709551615", b"0"]),
]


@pytest.mark.parametrize("type_, values", INT_CASES)
def test_integers_match_pyarrow(type_, values):
    assert ours(values, type_).equals(pyarrows(values, type_))


@pytest.mark.parametrize("type_, value", [
    (pa.int64(), b"9223372036854775808"), (pa.int8(), b"128"), (pa.int8(), b"0x0ff"),
    (pa.uint8(), b"-1"), (pa.uint8(), b"-0"), (pa.int64(), b"+1"), (pa.int64(), b"1.0"),
    (pa.uint64(), b"18446744073709551616"),
])
def test_integer_overflow_and_bad_syntax_raise(type_, value):
    with pytest.raises(arrow_bridge.CsvParseError, match="cannot convert"):
        ours([value], type_)


def test_integer_overflow_widens_to_double_when_inferred():
    arr = ours([b"1", b"9223372036854775808"])
    assert arr.type == pa.float64() and arr.to_pylist() == [1.0, 9223372036854775808.0]


FLOATS = [b"1.5", b"-0", b"1e308", b"1e400", b"4.9e-324", b"2.2250738585072011e-308",
          b"0.1000000000000000055511151231257827", b"+.5", b"5.", b"-Infinity", b"NAN",
          b"123456789012345678901234567890", b" 2.5\t"]


def test_float64_bits_equal_python_float():
    arr = ours(FLOATS, pa.float64())
    expected = pyarrows(FLOATS, pa.float64())
    assert arr.view(pa.int64()).equals(expected.view(pa.int64()))
    for raw, got in zip(FLOATS, arr.to_pylist()):
        want = float(raw.strip().decode())
        assert (math.isnan(got) and math.isnan(want)) or math.copysign(1, got) * got == math.copysign(1, want) * want


def test_float32_is_rounded_once():
    values = [b"16777217", b"1e39", b"0.1", b"3.4028235677973366e38"]
    assert ours(values, pa.float32()).view(pa.int32()).equals(pyarrows(values, pa.float32()).view(pa.int32()))


def test_bools_nulls_and_custom_spellings():
    assert ours([b"true", b"False", b"1", b"NA"]).to_pylist() == [True, False, True, None]
    assert ours([b"yes", b"no"], true_values=["yes"], false_values=["no"]).type == pa.bool_()
    with pytest.raises(arrow_bridge.CsvParseError):
        ours([b"tRUE"], pa.bool_())


@pytest.mark.parametrize("values", [
    [b"2020-01-01", b"1969-12-31", b"0000-01-01", b"9999-12-31"],
    [b"12:34", b"23:59:59"],
    [b"2020-01-01", b"2020-01-01 00:00:00", b"2020-01-01T12"],
    [b"2020-01-01 00:00:00.5", b"2262-04-11 23:47:16.854775807"],
    [b"2020-01-01T12:34:56+01:00", b"2020-01-01T00:00:00Z", b"2020-01-01T12:34:56-0130"],
    [b"2020-01-01T12:34:56.123456789+05:30", b"2020-01-01 00:00:00.1Z"],
    [b"2020-02-30"], [b"1500-01-01 00:00:00.5"], [b"2020-01-01 00:00:00", b"2020-01-01 00:00:00Z"],
])
def test_temporal_inference_matches_pyarrow(values):
    assert ours(values).equals(pyarrows(values))


@pytest.mark.parametrize("type_", [pa.timestamp("ms"), pa.timestamp("us"), pa.timestamp("ns"),
                                   pa.time32("ms"), pa.time64("us"), pa.time64("ns")])
def test_explicit_temporal_units(type_):
    values = [b"2020-01-01 12:34:56.123"] if pa.types.is_timestamp(type_) else [b"12:34:56.123"]
    assert ours(values, type_).equals(pyarrows(values, type_))


def test_days_from_civil_matches_python():
    import datetime

    for d in (datetime.date(1, 1, 1), datetime.date(1970, 1, 1), datetime.date(2000, 2, 29),
              datetime.date(9999, 12, 31)):
        assert days_from_civil(d.year, d.month, d.day) == (d - datetime.date(1970, 1, 1)).days


def test_strings_utf8_binary_and_null_policy():
    assert ours([b"a", b'""', b"NA", b'"q""x"']).to_pylist() == ["a", "", "NA", 'q"x']
    assert ours([b"a\xff", b"b"]).type == pa.binary()
    with pytest.raises(arrow_bridge.CsvParseError, match="string"):
        ours([b"a\xff"], pa.string())
    co = pacsv.ConvertOptions(strings_can_be_null=True)
    data = b'x,y\na,1\n"",2\nNA,3\n,4\n'
    got = arrow_bridge.read_csv(io.BytesIO(data), convert_options=co)
    assert got.equals(pacsv.read_csv(io.BytesIO(data), convert_options=co))
    assert got.column("x").to_pylist() == ["a", None, None, None]


def test_large_string_offsets_are_64_bit():
    arr = ours([b"abc", b"de"], pa.large_string())
    assert arr.type == pa.large_string() and arr.to_pylist() == ["abc", "de"]


def test_null_column_and_unsupported_type():
    assert ours([b"", b"NA"]).type == pa.null()
    with pytest.raises(NotImplementedError):
        ours([b"1"], pa.decimal256(40, 2))
