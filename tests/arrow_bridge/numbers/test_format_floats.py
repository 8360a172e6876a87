"""Float text (``arrow_bridge.numbers.format_floats``): Python's ``repr`` for
float64, the shortest round trip for float32, and the special spellings."""
from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arrow_bridge.numbers.format_floats import format_float

SETTINGS = settings(max_examples=500, deadline=None)


def text64(value: float, cap: int = 32) -> tuple[int, bytes]:
    out = np.zeros(32, np.uint8)
    end = format_float(out, 0, cap, np.uint64(struct.unpack("<Q", struct.pack("<d", value))[0]), False)
    return end, out[:min(end, cap)].tobytes()


@SETTINGS
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_float64_is_repr(value):
    end, text = text64(value)
    assert text == repr(value).encode() and end == len(text)


@SETTINGS
@given(st.floats(allow_nan=False, allow_infinity=False, width=32))
def test_float32_reads_back_in_numpys_shortest_length(value):
    single = np.float32(value)
    out = np.zeros(32, np.uint8)
    end = format_float(out, 0, out.size, np.uint64(single.view(np.uint32)), True)
    text = out[:end].tobytes().decode()
    assert np.float32(text).view(np.uint32) == single.view(np.uint32)
    assert len(significant(text)) == len(significant(np.format_float_scientific(single, unique=True)))


def significant(text: str) -> str:
    return text.lstrip("-").lower().split("e")[0].replace(".", "").strip("0")


@pytest.mark.parametrize("value, want", [(float("inf"), b"inf"), (float("-inf"), b"-inf"), (float("nan"), b"NAN"),
                                         (-float("nan"), b"-NAN"), (0.0, b"0.0"), (-0.0, b"-0.0"),
                                         (1e16, b"1e+16"), (1e-5, b"1e-05"),
                                         (123456789012345680.0, b"1.2345678901234568e+17")])
def test_special_spellings(value, want):
    assert text64(value) == (len(want), want)


def test_a_value_that_does_not_fit_is_only_counted():
    end, text = text64(0.1, cap=2)
    assert end == 3 and text == b"\0\0"
