"""Integer fields (``arrow_bridge.numbers.parse_ints``) against Python and pyarrow."""
from __future__ import annotations

import io

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arrow_bridge.numbers.parse_ints import parse_signed, parse_unsigned, plain_int64_at

SETTINGS = settings(max_examples=300, deadline=None)
TRICKY = ["0", "-0", "+1", " 7\t", "1 2", "", " ", "-", "0x", "0x7f", "0x80", "0xff", "0XFF", "0x100", "0x7fffffff",
          "0xffffffffffffffff", "0x1ffffffffffffffff", "-0x1", "127", "128", "-128", "-129", "255", "256",
          "32767", "-32769", "2147483648", "-2147483649", "9223372036854775807", "9223372036854775808",
          "-9223372036854775808", "-9223372036854775809", "18446744073709551615", "18446744073709551616",
          "00000000000000000000000000042", "1e3", "1.0", "١"]
SIGNED = {8: pa.int8(), 16: pa.int16(), 32: pa.int32(), 64: pa.int64()}
UNSIGNED = {8: pa.uint8(), 16: pa.uint16(), 32: pa.uint32(), 64: pa.uint64()}


def field(text: str) -> tuple[np.ndarray, int, int]:
    data = text.encode()
    return np.frombuffer(data or b"\0", np.uint8), 0, len(data)


def pyarrow_value(text: str, type_: pa.DataType):
    """``(True, value)`` as pyarrow reads the one-field CSV, or ``(False, None)``."""
    csv = b"x\n" + (b'"' + text.encode() + b'"' if text.strip() == "" else text.encode()) + b"\n"
    try:
        table = pacsv.read_csv(io.BytesIO(csv), convert_options=pacsv.ConvertOptions(
            column_types={"x": type_}, null_values=[], quoted_strings_can_be_null=False))
    except pa.ArrowInvalid:
        return False, None
    return True, table.column(0)[0].as_py()


@pytest.mark.parametrize("bits", [8, 16, 32, 64])
@pytest.mark.parametrize("text", TRICKY)
def test_tricky_fields_as_pyarrow_reads_them(text, bits):
    ok, value = parse_signed(*field(text), bits)
    assert (ok, value if ok else None) == pyarrow_value(text, SIGNED[bits])
    ok, value = parse_unsigned(*field(text), bits)
    assert (ok, value if ok else None) == pyarrow_value(text, UNSIGNED[bits])


@SETTINGS
@given(st.sampled_from([8, 16, 32, 64]), st.integers(-(2**64), 2**64))
def test_decimal_range_checks(bits, value):
    ok, got = parse_signed(*field(str(value)), bits)
    fits = -(2 ** (bits - 1)) <= value < 2 ** (bits - 1)
    assert ok == fits and (not ok or got == value)
    ok, got = parse_unsigned(*field(str(value)), bits)
    fits = 0 <= value < 2**bits
    assert ok == fits and (not ok or got == value)


@SETTINGS
@given(st.sampled_from([8, 16, 32, 64]), st.integers(0, 2**64 - 1))
def test_hex_is_the_twos_complement_pattern(bits, pattern):
    ok, got = parse_signed(*field(hex(pattern)), bits)
    assert ok == (pattern < 2**bits)
    if ok:
        assert got == (pattern - 2**bits if pattern >= 2 ** (bits - 1) else pattern)


@SETTINGS
@given(st.text(alphabet="0123456789-+ x.", max_size=20), st.integers(0, 40))
def test_plain_int64_at_is_never_wrong(text, offset):
    """It takes plain ``-?digit{1,16}`` (when 16 bytes can be loaded) with
    the general parser's value, and declines everything else."""
    data = text.encode()
    buf = np.zeros(offset + len(data) + 16, np.uint8)
    buf[offset:offset + len(data)] = np.frombuffer(data, np.uint8) if data else []
    ok, value = plain_int64_at(buf.ctypes.data, offset, offset + len(data), buf.size)
    digits = data[1:] if data.startswith(b"-") else data
    plain = 0 < len(digits) <= 16 and digits.isdigit()
    assert ok == plain
    if ok:
        assert value == int(text) == parse_signed(buf, offset, offset + len(data), 64)[1]


def test_plain_int64_at_declines_without_room_for_two_words():
    buf = np.frombuffer(b"12345", np.uint8)
    assert not plain_int64_at(buf.ctypes.data, 0, 5, buf.size)[0]



def pandas_inferred(text: str):
    """The int ``pandas.read_csv`` infers from a column holding ``text``, or None where it infers none."""
    import pandas as pd

    column = pd.read_csv(io.StringIO(f"a\n{text}\n"), keep_default_na=False).a
    return int(column[0]) if column.dtype.kind in "iu" else None


@pytest.mark.parametrize("text", [text for text in TRICKY + ["+0", "++1", "+-1", "-+1", " +7 ", "+ 7", "+0x10", "+"]
                                  if text.strip()])  # pandas reads an empty field as missing, not as a value
def test_pandas_ints_take_a_plus_and_no_hex_as_pandas_infers_them(text):
    expected = pandas_inferred(text)
    ok, value = parse_signed(*field(text), 64, 1)
    assert (int(value) if ok else None) == (expected if expected is not None and expected < 2**63 else None)
    ok, value = parse_unsigned(*field(text), 64, 1)
    assert (int(value) if ok else None) == (expected if not text.strip().startswith("-") else None)
