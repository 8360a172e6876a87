"""The big-integer exact path (``arrow_bridge.numbers.exact_decimal``):
from any nearby candidate it reaches Python's correctly rounded value."""
from __future__ import annotations

import struct

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from arrow_bridge.numbers.eisel_lemire import DOUBLE, SINGLE
from arrow_bridge.numbers.exact_decimal import exact_bits

SETTINGS = settings(max_examples=200, deadline=None)


def spans(int_digits: str, frac_digits: str, exp: int) -> tuple[np.ndarray, tuple]:
    data = np.frombuffer((int_digits + frac_digits).encode() or b"\0", np.uint8)
    n = len(int_digits)
    return data, (0, n, n, n + len(frac_digits), exp)


def bits64(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


@SETTINGS
@given(st.text(alphabet="0123456789", min_size=1, max_size=40), st.text(alphabet="0123456789", max_size=40),
       st.integers(-330, 300), st.integers(-3, 3))
def test_steps_from_a_nearby_candidate_to_the_rounded_value(int_digits, frac_digits, exp, off_by):
    want = bits64(float(f"{int_digits}.{frac_digits}e{exp}"))
    candidate = min(max(want + off_by, 0), 0x7FF0000000000000)
    data, digit_spans = spans(int_digits, frac_digits, exp)
    assert exact_bits(data, digit_spans, np.uint64(candidate), DOUBLE) == want


def test_ties_go_to_even_and_a_far_nonzero_digit_breaks_them():
    tie = "9007199254740993"  # 2**53 + 1, halfway between two doubles
    data, digit_spans = spans(tie, "", 0)
    assert exact_bits(data, digit_spans, np.uint64(bits64(2.0**53 + 2)), DOUBLE) == bits64(2.0**53)
    data, digit_spans = spans(tie, "0" * 900 + "1", 0)  # the 1 is past the 800 digits kept
    assert exact_bits(data, digit_spans, np.uint64(bits64(2.0**53)), DOUBLE) == bits64(2.0**53 + 2)


def test_float32_and_zero():
    data, digit_spans = spans("16777217", "", 0)  # 2**24 + 1: a float32 tie
    assert exact_bits(data, digit_spans, np.uint64(0x4B800001), SINGLE) == 0x4B800000
    data, digit_spans = spans("000", "000", 5)
    assert exact_bits(data, digit_spans, np.uint64(7), DOUBLE) == 0
