"""Integers as decimal text.

Like every formatter here, each function computes the value's length first
and writes only if it fits below ``cap``; either way it returns the position
after the value, so a full buffer turns the rest of a call into a size count.

>>> out = np.zeros(24, np.uint8)
>>> end = format_int(out, 0, out.size, np.int64(-2**63))
>>> bytes(out[:end])
b'-9223372036854775808'
"""
import numpy as np

from arrow_bridge.jit import njit
from arrow_bridge.numbers.internal import decimal_length, write_digits

_U1 = np.uint64(1)


@njit(nogil=True, cache=True, inline="always")
def format_uint(out, pos, cap, m, negative):
    """A magnitude (uint64) with an optional minus sign.

    >>> out = np.zeros(4, np.uint8)
    >>> format_uint(out, 0, out.size, np.uint64(12345), False)  # does not fit: the size it needs
    5
    """
    n = decimal_length(m)
    end = pos + n + (1 if negative else 0)
    if end <= cap:
        if negative:
            out[pos] = 45
        write_digits(out, end, m, n)
    return end


@njit(nogil=True, cache=True, inline="always")
def format_int(out, pos, cap, v):
    """A signed int64 (see the module example)."""
    if v < 0:
        return format_uint(out, pos, cap, np.uint64(-(v + 1)) + _U1, True)  # no overflow at int64 min
    return format_uint(out, pos, cap, np.uint64(v), False)

