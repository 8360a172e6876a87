"""The word-at-a-time intrinsics (``arrow_bridge.numbers.swar``) against Python.

``tests/arrow_bridge/test_fast_path.py`` covers the digit and byte-mask
tricks; here: address loads and stores, bit counts and the 128-bit product.
"""
from __future__ import annotations

import numba as nb
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from arrow_bridge.numbers.swar import byte_at, clz64, ctz64, mul128, put_byte_at, put_value_at, put_word_at, word_at

SETTINGS = settings(max_examples=300, deadline=None)


@nb.njit
def product(a, b):
    return mul128(a, b)


@nb.njit
def bit_counts(word):
    return clz64(word), ctz64(word)


@nb.njit
def load_store(buf, i, word, value):
    put_word_at(buf.ctypes.data, i, word)
    put_byte_at(buf.ctypes.data, i + 8, np.uint8(7))
    put_value_at(buf.ctypes.data, i + 9, value)
    return word_at(buf.ctypes.data, i), byte_at(buf.ctypes.data, i + 8)


@SETTINGS
@given(st.integers(0, 2**64 - 1), st.integers(0, 2**64 - 1))
def test_mul128(a, b):
    high, low = product(np.uint64(a), np.uint64(b))
    assert (int(high) << 64) | int(low) == a * b


@SETTINGS
@given(st.integers(0, 2**64 - 1))
def test_bit_counts(word):
    leading, trailing = bit_counts(np.uint64(word))
    assert leading == 64 - word.bit_length()
    assert trailing == ((word & -word).bit_length() - 1 if word else 64)


@SETTINGS
@given(st.integers(0, 2**64 - 1), st.integers(0, 7), st.floats(allow_nan=False))
def test_unaligned_loads_and_stores(word, offset, value):
    buf = np.zeros(32, np.uint8)
    loaded, byte = load_store(buf, offset, np.uint64(word), np.float64(value))
    assert loaded == word and byte == 7
    assert buf[offset:offset + 8].tobytes() == word.to_bytes(8, "little")
    assert buf[offset + 9:offset + 17].view(np.float64)[0] == value
