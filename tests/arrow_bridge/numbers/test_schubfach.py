"""Shortest digits (``arrow_bridge.numbers.schubfach``) against Python's
``repr`` (float64) and NumPy's shortest float32 digits."""
from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arrow_bridge.numbers.schubfach import shortest_digits

SETTINGS = settings(max_examples=500, deadline=None)


def repr_digits(text: str) -> tuple[int, int]:
    """``(f, e)`` without trailing zeros in ``f`` from a repr-style spelling."""
    mantissa, _, exp = text.lower().partition("e")
    whole, _, frac = mantissa.partition(".")
    f, e = int(whole + frac), int(exp or 0) - len(frac)
    while f and f % 10 == 0:
        f, e = f // 10, e + 1
    return f, e


def stripped(f: int, e: int) -> tuple[int, int]:
    while f % 10 == 0:
        f, e = f // 10, e + 1
    return f, e


@SETTINGS
@given(st.floats(min_value=0.0, exclude_min=True, allow_infinity=False, allow_nan=False))
def test_float64_digits_are_reprs(value):
    bits = struct.unpack("<Q", struct.pack("<d", value))[0]
    assert stripped(*shortest_digits(np.uint64(bits), False)) == repr_digits(repr(value))


@SETTINGS
@given(st.floats(min_value=0.0, exclude_min=True, allow_infinity=False, allow_nan=False, width=32))
def test_float32_digits_are_numpys_shortest(value):
    single = np.float32(value)
    bits = int(single.view(np.uint32))
    assert stripped(*shortest_digits(np.uint64(bits), True)) == repr_digits(
        np.format_float_scientific(single, unique=True))


@pytest.mark.parametrize("value", [5e-324, 2.2250738585072014e-308, 2.225073858507201e-308, 1.7976931348623157e308,
                                   1.0, 2.0**-1074 * 3, 9007199254740993.0, 0.1, 1e23])
def test_boundaries(value):
    bits = struct.unpack("<Q", struct.pack("<d", value))[0]
    assert stripped(*shortest_digits(np.uint64(bits), False)) == repr_digits(repr(value))
