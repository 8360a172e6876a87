"""The helpers the number modules share (``arrow_bridge.numbers.internal``)."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from arrow_bridge.numbers.internal import decimal_length, trim_blanks, write_digits, write_fixed_digits, write_word

SETTINGS = settings(max_examples=200, deadline=None)


@SETTINGS
@given(st.text(alphabet=" \t\r\nab", max_size=12))
def test_trim_blanks_drops_spaces_and_tabs_only(text):
    data = np.frombuffer(text.encode() or b"\0", np.uint8)
    start, end = trim_blanks(data, 0, len(text))
    assert text[start:end] == text.strip(" \t")


@SETTINGS
@given(st.integers(0, 2**64 - 1))
def test_digit_writers_spell_like_str(value):
    assert decimal_length(np.uint64(value)) == len(str(value))
    out = np.zeros(24, np.uint8)
    n = len(str(value))
    rest = write_digits(out, 24, np.uint64(value), n)
    assert rest == 0 and out[24 - n:].tobytes() == str(value).encode()
    out[:] = 0
    assert write_digits(out, 24, np.uint64(value), 2) == value // 100  # only the low digits
    assert out[22:].tobytes() == str(value % 100).zfill(2).encode() and not out[:22].any()


def test_fixed_digits_pad_with_zeros():
    out = np.zeros(8, np.uint8)
    write_fixed_digits(out, 1, 42, 5)
    assert out.tobytes() == b"\x0000042\x00\x00"


def test_words_fit_or_only_count():
    out = np.full(8, 0xAB, np.uint8)
    assert write_word(out, 2, 8, False, 116, 114, 117, 101, 0, 4) == 6
    assert out[2:6].tobytes() == b"true"
    out[:] = 0xAB
    assert write_word(out, 4, 8, True, 102, 97, 108, 115, 101, 5) == 10  # -false needs 6 bytes: 2 too many
    assert (out == 0xAB).all()
