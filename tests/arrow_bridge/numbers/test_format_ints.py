"""Integer text (``arrow_bridge.numbers.format_ints``) against ``str``."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from arrow_bridge.numbers.format_ints import format_int, format_uint

SETTINGS = settings(max_examples=300, deadline=None)


@SETTINGS
@given(st.integers(-(2**63), 2**63 - 1), st.integers(0, 8))
def test_int64_like_str(value, pos):
    out = np.zeros(32, np.uint8)
    end = format_int(out, pos, out.size, np.int64(value))
    assert out[pos:end].tobytes() == str(value).encode() and not out[:pos].any() and not out[end:].any()


@SETTINGS
@given(st.integers(0, 2**64 - 1), st.booleans())
def test_uint64_like_str(value, negative):
    out = np.zeros(32, np.uint8)
    end = format_uint(out, 0, out.size, np.uint64(value), negative)
    assert out[:end].tobytes() == ("-" if negative else "").encode() + str(value).encode()


@SETTINGS
@given(st.integers(-(2**63), 2**63 - 1), st.integers(0, 20))
def test_a_value_that_does_not_fit_is_only_counted(value, cap):
    out = np.full(32, 0xAB, np.uint8)
    end = format_int(out, 0, cap, np.int64(value))
    assert end == len(str(value))
    if end > cap:
        assert (out == 0xAB).all()
