"""The fused kernel's inline float path (``arrow_bridge.numbers.fast_floats``):
whenever it answers, it answers what the full parser does."""
from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arrow_bridge.numbers.fast_floats import float64_at, float64_in_runs
from arrow_bridge.numbers.parse_floats import parse_float64

SETTINGS = settings(max_examples=400, deadline=None)
DOT = ord(".")


def placed(text: bytes, offset: int) -> tuple[np.ndarray, int, int]:
    buf = np.full(offset + len(text) + 40, ord(","), np.uint8)
    buf[offset:offset + len(text)] = np.frombuffer(text, np.uint8)
    return buf, offset, offset + len(text)


def bits(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def agrees(text: bytes, offset: int) -> list[bool]:
    """Checks both fast parsers at ``offset``; returns which answered."""
    buf, s, e = placed(text, offset)
    full_ok, full = parse_float64(buf, s, e, DOT)
    answered = []
    for parse in (float64_at, float64_in_runs):
        ok, value = parse(buf.ctypes.data, s, e, DOT)
        if ok:
            assert full_ok and bits(value) == bits(full), (parse, text, value, full)
        answered.append(bool(ok))
    return answered


@SETTINGS
@given(st.floats(allow_nan=False, allow_infinity=False), st.sampled_from([0, 5, 32, 40, 100]))
def test_repr_of_doubles_is_always_answered(value, offset):
    text = repr(value).encode()
    assert agrees(text, offset) == [True, True] or b"e" in text and len(text.split(b"e")[1].lstrip(b"+-")) > 4


@SETTINGS
@given(st.text(alphabet="0123456789.eE+- x", min_size=1, max_size=34), st.sampled_from([0, 7, 32, 64]))
def test_any_text_is_declined_or_right(text, offset):
    agrees(text.encode(), offset)


@pytest.mark.parametrize("text", [b"0.0000023589830885152754", b"12345678901234567890", b"1.5e-0005",
                                  b"-0", b"+.5", b"5.", b"1e400", b"1e-400", b"9007199254740993"])
def test_edge_texts(text):
    agrees(text, 33)
