"""``w * 10**q`` to a float (``arrow_bridge.numbers.eisel_lemire``) against
Python's correctly rounded ``float`` and exact fractions."""
from __future__ import annotations

import struct
from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from arrow_bridge.numbers.eisel_lemire import (
    DOUBLE,
    MAX_FAST_MANTISSA64,
    SINGLE,
    decimal_to_bits,
    decimal_to_float64,
    eisel_lemire,
)

SETTINGS = settings(max_examples=500, deadline=None)
W = st.one_of(st.integers(0, 2**53), st.integers(0, 10**19 - 1))
Q = st.one_of(st.integers(-22, 22), st.integers(-350, 320))


def bits64(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def float32_bits(w: int, q: int) -> int:
    """The correctly rounded float32 of w * 10**q (ties to even), exactly."""
    value = Fraction(w) * Fraction(10) ** q
    if value == 0:
        return 0
    lo, hi = 0, 0x7F800000  # bit patterns of non-negative float32s are ordered like their values
    if value >= Fraction(struct.unpack("<f", struct.pack("<I", 0x7F7FFFFF))[0]) + Fraction(2) ** 103:
        return 0x7F800000  # past the halfway point to the next power: inf
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if Fraction(struct.unpack("<f", struct.pack("<I", mid))[0]) <= value:
            lo = mid
        else:
            hi = mid
    below = Fraction(struct.unpack("<f", struct.pack("<I", lo))[0])
    above = Fraction(struct.unpack("<f", struct.pack("<I", lo + 1))[0]) if lo + 1 < 0x7F800000 else None
    if above is None or value - below < above - value or (value - below == above - value and lo % 2 == 0):
        return lo
    return lo + 1


@SETTINGS
@given(W, Q, st.booleans())
def test_decimal_to_float64_is_correctly_rounded_when_decided(w, q, negative):
    decided, value = decimal_to_float64(np.uint64(w), q, w <= MAX_FAST_MANTISSA64, negative)
    want = float(f"{'-' if negative else ''}{w}e{q}")
    assert not decided or bits64(value) == bits64(want)


@SETTINGS
@given(W, Q)
def test_eisel_lemire_bits_double(w, q):
    mantissa, biased, decided = eisel_lemire(q, np.uint64(w), DOUBLE)
    bits, decided_too = decimal_to_bits(np.uint64(w), q, False, DOUBLE)
    assert bits == int(mantissa) | (int(biased) << 52) and decided == decided_too
    assert not decided or bits == bits64(float(f"{w}e{q}"))


@SETTINGS
@given(st.integers(0, 10**19 - 1), st.integers(-70, 45))
def test_eisel_lemire_bits_single(w, q):
    bits, decided = decimal_to_bits(np.uint64(w), q, False, SINGLE)
    assert not decided or bits == float32_bits(w, q)


@SETTINGS
@given(st.integers(10**18, 10**19 - 2), Q)
def test_a_truncated_prefix_decides_only_when_both_ends_agree(w, q):
    """With ``too_many``, the digits lie in [w, w + 1) * 10**q: a decided
    answer is the rounding of both ends."""
    bits, decided = decimal_to_bits(np.uint64(w), q, True, DOUBLE)
    if decided:
        assert bits == bits64(float(f"{w}e{q}")) == bits64(float(f"{w + 1}e{q}"))


def test_clinger_range_and_halfway_cases():
    assert MAX_FAST_MANTISSA64 == 2**53
    assert decimal_to_float64(np.uint64(2**53 + 1), 0, False, False) == (True, 2.0**53)  # tie: even
    assert decimal_to_float64(np.uint64(1), 23, True, False) == (True, 1e23)  # past Clinger: Eisel-Lemire
    assert decimal_to_float64(np.uint64(0), -400, False, True)[1] == 0.0
    assert decimal_to_float64(np.uint64(1), 400, False, False) == (True, float("inf"))
