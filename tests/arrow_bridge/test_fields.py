"""Per-field helpers (``arrow_bridge.kernels.fields``): unescaping, spelling
sets, validity bits, against Python references."""
from __future__ import annotations

import csv
import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arrow_bridge.kernels.fields import (
    field_value,
    in_spelling_set,
    mark_valid_before,
    set_valid,
    spelled,
    spelling_addresses,
    spelling_set,
    unescape,
)
from arrow_bridge.kernels.status import COMPLEX, QUOTED

SETTINGS = settings(max_examples=300, deadline=None)
QUOTE, NO_ESCAPE = ord('"'), -1


def u8(data: bytes) -> np.ndarray:
    return np.frombuffer(data or b"\0", np.uint8)


@SETTINGS
@given(st.text(alphabet='ab,"\n', max_size=12))
def test_unescape_reads_a_quoted_field_like_the_csv_module(value):
    raw = ('"' + value.replace('"', '""') + '"').encode()
    out = np.zeros(len(raw), np.uint8)
    n = unescape(u8(raw), 0, len(raw), QUOTE, NO_ESCAPE, True, out)
    assert out[:n].tobytes().decode() == next(csv.reader(io.StringIO(raw.decode() + "\n")))[0] == value


def test_unescape_with_an_escape_character():
    raw = b'a\\,b\\\\c'
    out = np.zeros(len(raw), np.uint8)
    n = unescape(u8(raw), 0, len(raw), QUOTE, ord("\\"), False, out)
    assert out[:n].tobytes() == b"a,b\\c"


@pytest.mark.parametrize("raw, flag, want", [(b"plain", 0, b"plain"), (b'"quoted"', QUOTED, b"quoted"),
                                             (b'"a""b"', QUOTED | COMPLEX, b'a"b')])
def test_field_value_reads_in_place_unless_complex(raw, flag, want):
    buf = u8(raw)
    scratch = np.zeros(len(raw), np.uint8)
    src, start, end = field_value(buf, 0, len(raw), flag, (QUOTE, NO_ESCAPE, True), scratch)
    assert src[start:end].tobytes() == want
    assert src.ctypes.data == (scratch if flag & COMPLEX else buf).ctypes.data  # unescaped only when complex


@SETTINGS
@given(st.lists(st.binary(max_size=6), max_size=6), st.binary(max_size=6))
def test_spelling_sets_are_set_membership(spellings, field):
    packed = spelling_set(spellings)
    buf = u8(b"#" + field)  # not at offset 0, as in a span
    assert in_spelling_set(buf.ctypes.data, 1, 1 + len(field), spelling_addresses(packed)) == (field in spellings)
    data, offsets, _, _ = packed
    assert spelled(buf.ctypes.data, 1, 1 + len(field), data.ctypes.data, offsets.ctypes.data,
                   len(offsets) - 1) == (field in spellings)


def test_spelling_set_accepts_text_and_the_empty_spelling():
    packed = spelling_set(["NA", "", "n/a"])
    assert packed[3] is True
    addresses = spelling_addresses(packed)
    empty, na, n, xs = u8(b"\0"), u8(b"n/a"), u8(b"N"), u8(b"x" * 70)
    assert in_spelling_set(empty.ctypes.data, 0, 0, addresses) and in_spelling_set(na.ctypes.data, 0, 3, addresses)
    assert not in_spelling_set(n.ctypes.data, 0, 1, addresses)
    too_long = spelling_set(["x" * 70])
    assert not in_spelling_set(xs.ctypes.data, 0, 70, spelling_addresses(too_long))  # 64 bytes and over: never nulls


@SETTINGS
@given(st.integers(0, 40), st.lists(st.integers(0, 39), max_size=5))
def test_validity_bits_like_arrow(before, more):
    validity = np.zeros(5, np.uint8)
    mark_valid_before(validity, before)
    for row in more:
        set_valid(validity, row)
    valid = set(range(before)) | set(more)
    assert np.unpackbits(validity, bitorder="little").tolist() == [int(r in valid) for r in range(40)]
