"""Helpers the number modules share; not API (their names are public only so
sibling modules can import them).

* :func:`trim_blanks`: the spaces and tabs Arrow's converters trim off a field;
* digit writers for the formatters. Each writes into ``out`` and never checks
  its capacity: the formatters compute a value's length first and write only
  when it fits.

>>> out = np.zeros(8, np.uint8)
>>> write_digits(out, 5, np.uint64(2024), 4)
0
>>> bytes(out[1:5])
b'2024'
"""
import numpy as np

from arrow_bridge.jit import njit

# uint64 constants are NumPy scalars on purpose: in Numba, mixing uint64 with
# a plain (int64) literal silently promotes to float64.
_U10 = np.uint64(10)
_U100 = np.uint64(100)

POW10_U64 = np.array([10**i for i in range(20)], dtype=np.uint64)
# "00" "01" ... "99": two digits per table step.
DIGIT_PAIRS = np.frombuffer("".join(f"{i:02d}" for i in range(100)).encode(), dtype=np.uint8).copy()


@njit(nogil=True, cache=True)
def trim_blanks(buf, start, end):
    """``(start, end)`` without the spaces and tabs around ``buf[start:end]``.

    >>> trim_blanks(np.frombuffer(b" \\t7 ", np.uint8), 0, 4)
    (2, 3)
    """
    while start < end and (buf[start] == 32 or buf[start] == 9):
        start += 1
    while end > start and (buf[end - 1] == 32 or buf[end - 1] == 9):
        end -= 1
    return start, end


@njit(nogil=True, cache=True, inline="always")
def decimal_length(v):
    """Decimal digits of a uint64 (1 for 0).

    >>> decimal_length(np.uint64(0)), decimal_length(np.uint64(2**64 - 1))
    (1, 20)
    """
    n = 1
    while n < 20 and v >= POW10_U64[n]:
        n += 1
    return n


@njit(nogil=True, cache=True, inline="always")
def write_digits(out, end, v, count):
    """Writes the low ``count`` digits of uint64 ``v`` ending before ``end``;
    returns ``v`` without them (see the module example)."""
    p = end
    while count >= 2:
        r = np.int64(v % _U100)
        v = v // _U100
        p -= 2
        out[p] = DIGIT_PAIRS[2 * r]
        out[p + 1] = DIGIT_PAIRS[2 * r + 1]
        count -= 2
    if count == 1:
        p -= 1
        out[p] = 48 + np.int64(v % _U10)
        v = v // _U10
    return v


@njit(nogil=True, cache=True, inline="always")
def write_fixed_digits(out, p, v, width):
    """Writes int64 ``0 <= v < 10**width`` at ``p`` as exactly ``width`` digits.

    >>> out = np.zeros(4, np.uint8)
    >>> write_fixed_digits(out, 0, 7, 3)
    >>> bytes(out[:3])
    b'007'
    """
    write_digits(out, p + width, np.uint64(v), width)


@njit(nogil=True, cache=True, inline="always")
def write_word(out, pos, cap, negative, w0, w1, w2, w3, w4, n):
    """A short fixed word (``n`` <= 5 bytes ``w0..``) with an optional minus
    sign at ``pos``, if it fits below ``cap``; returns the position after it.

    >>> out = np.zeros(8, np.uint8)
    >>> write_word(out, 0, 8, True, 105, 110, 102, 0, 0, 3), bytes(out[:4])
    (4, b'-inf')
    """
    end = pos + n + (1 if negative else 0)
    if end <= cap:
        p = pos
        if negative:
            out[p] = 45
            p += 1
        out[p] = w0
        if n > 1:
            out[p + 1] = w1
        if n > 2:
            out[p + 2] = w2
        if n > 3:
            out[p + 3] = w3
        if n > 4:
            out[p + 4] = w4
    return end
