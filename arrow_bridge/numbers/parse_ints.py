"""Integer fields as pyarrow parses them: never wraps around silently.

Accepted: optional spaces/tabs around, an optional ``-`` (signed types only),
decimal digits; or ``0x``/``0X`` and at most ``bits / 4`` hex digits, whose
bits are taken as the target type's two's-complement pattern (``0xff`` is -1
as int8). A leading ``+`` is rejected.

With ``pandas_ints`` (``semantics="pandas"``), as pandas' C parser reads
integers: a leading ``+`` is accepted (``-`` still for signed types only) and
hex is not an integer (pandas keeps ``0x10`` as text).

:func:`plain_int64_at` is the fused kernel's inline fast path: a plain
``-?digit{1,16}`` at a buffer address, two word loads, no loop.
"""
import numpy as np

from arrow_bridge.jit import njit
from arrow_bridge.numbers.internal import POW10_U64, trim_blanks
from arrow_bridge.numbers.swar import byte_at, digits_value, leading_digits, word_at

_UINT64_MAX_DIV10 = np.uint64(1844674407370955161)


@njit(nogil=True, cache=True)
def _decimal_magnitude(src, start, end):
    """``(ok, value)`` for decimal digits; not ok when empty or over 2**64 - 1."""
    if start >= end:
        return False, np.uint64(0)
    value = np.uint64(0)
    for i in range(start, end):
        d = np.uint64(src[i] - 48)
        if d > 9:
            return False, np.uint64(0)
        if value > _UINT64_MAX_DIV10 or (value == _UINT64_MAX_DIV10 and d > 5):
            return False, np.uint64(0)
        value = value * np.uint64(10) + d
    return True, value


@njit(nogil=True, cache=True)
def _hex_bits(src, start, end, bits):
    """``(is_hex, ok, value)`` for ``0x`` + up to ``bits // 4`` hex digits."""
    if end - start < 2 or src[start] != 48 or (src[start + 1] != 120 and src[start + 1] != 88):
        return False, False, np.uint64(0)
    n = end - start - 2
    if n == 0 or n > bits // 4:
        return True, False, np.uint64(0)
    value = np.uint64(0)
    for i in range(start + 2, end):
        c = src[i]
        if 48 <= c <= 57:
            d = c - 48
        elif 97 <= c <= 102:
            d = c - 87
        elif 65 <= c <= 70:
            d = c - 55
        else:
            return True, False, np.uint64(0)
        value = (value << np.uint64(4)) | np.uint64(d)
    return True, True, value


@njit(nogil=True, cache=True, inline="always")
def _short_decimal(src, start, end, bits):
    """``(ok, value)`` for ``-?[0-9]{1,18}``: the common case, in int64 arithmetic."""
    negative = start < end and src[start] == 45
    if negative:
        start += 1
    if not 0 < end - start <= 18:
        return False, np.int64(0)
    value = np.int64(0)
    for i in range(start, end):
        d = np.int64(src[i]) - 48
        if d < 0 or d > 9:
            return False, np.int64(0)
        value = value * 10 + d
    if bits < 64:
        limit = np.int64(1) << (bits - 1)
        if value > limit or (value == limit and not negative):
            return False, np.int64(0)
    return True, -value if negative else value


@njit(nogil=True, cache=True, inline="always")
def _after_plus(src, start, end):
    """``start`` past a leading ``+`` that a digit follows (pandas' sign), else ``start``."""
    if end - start >= 2 and src[start] == 43 and 48 <= src[start + 1] <= 57:
        return start + 1
    return start


@njit(nogil=True, cache=True)
def parse_signed(src, start, end, bits, pandas_ints=0):
    """``(ok, value)`` for a ``bits``-wide signed integer field.

    >>> parse_signed(np.frombuffer(b" -42", np.uint8), 0, 4, 64)
    (True, -42)
    >>> [parse_signed(np.frombuffer(text, np.uint8), 0, 3, 64, 1) for text in (b"+42", b"0x1")]
    [(True, 42), (False, 0)]
    """
    ok, value = _short_decimal(src, start, end, bits)
    if ok:
        return ok, value
    start, end = trim_blanks(src, start, end)
    if pandas_ints:
        start = _after_plus(src, start, end)
        is_hex, ok, pattern = False, False, np.uint64(0)
    else:
        is_hex, ok, pattern = _hex_bits(src, start, end, bits)
    half = np.uint64(1) << np.uint64(bits - 1)
    if is_hex:
        if not ok:
            return False, np.int64(0)
        if pattern >= half:  # sign-extend the two's-complement pattern
            return True, -np.int64((half << np.uint64(1)) - pattern - np.uint64(1)) - 1
        return True, np.int64(pattern)
    ok, value = _short_decimal(src, start, end, bits)
    if ok:
        return ok, value
    negative = start < end and src[start] == 45
    ok, magnitude = _decimal_magnitude(src, start + 1 if negative else start, end)
    if not ok:
        return False, np.int64(0)
    if negative:
        if magnitude > half:
            return False, np.int64(0)
        return True, -np.int64(magnitude - np.uint64(1)) - 1 if magnitude else np.int64(0)
    if magnitude >= half:
        return False, np.int64(0)
    return True, np.int64(magnitude)


@njit(nogil=True, cache=True)
def parse_unsigned(src, start, end, bits, pandas_ints=0):
    """``(ok, value)`` for a ``bits``-wide unsigned integer field (no sign
    allowed; ``+`` with ``pandas_ints``).

    >>> parse_unsigned(np.frombuffer(b"0xff", np.uint8), 0, 4, 8)
    (True, 255)
    """
    start, end = trim_blanks(src, start, end)
    if pandas_ints:
        start = _after_plus(src, start, end)
    else:
        is_hex, ok, pattern = _hex_bits(src, start, end, bits)
        if is_hex:
            return ok, pattern
    ok, magnitude = _decimal_magnitude(src, start, end)
    if not ok or (bits < 64 and magnitude >> np.uint64(bits)):
        return False, np.uint64(0)
    return True, magnitude


@njit(nogil=True, cache=True, inline="always")
def plain_int64_at(at, s, e, end):
    """``(ok, value)`` of a plain int64 ``-?digit{1,16}`` filling ``[s, e)``
    of the buffer at address ``at`` (which ends at ``end``); not ok for
    anything else (the general parser decides). Both words load at once:
    their addresses do not depend on what the digits are.

    >>> buf = np.frombuffer(b"-1234567890123456" + bytes(16), np.uint8)
    >>> plain_int64_at(buf.ctypes.data, 0, 17, buf.size)
    (True, -1234567890123456)
    """
    negative = byte_at(at, s) == 45
    s += negative
    n = e - s
    if n <= 0 or n > 16 or s + 16 > end:
        return False, np.int64(0)
    first = word_at(at, s)
    if n <= 8:
        ok = leading_digits(first) >= n
        v = digits_value(first, n)
    else:
        second = word_at(at, s + 8)
        ok = leading_digits(first) == 8 and leading_digits(second) >= n - 8
        v = digits_value(first, 8) * np.int64(POW10_U64[n - 8]) + digits_value(second, n - 8)
    return ok, -v if negative else v


#: int64's largest value but its last digit, which is 7 (8 for the magnitude of the smallest).
_INT64_DIGITS = np.frombuffer(b"922337203685477580", np.uint8).copy()


@njit(nogil=True, cache=True)
def integer_text_past_int64(src, start, end):
    """Whether ``src[start:end]`` is an integer's text (spaces, then ``[+-]?digits``)
    whose value int64 cannot hold: pandas' int64 parser overflows on it. pandas'
    semantics infer no float from one while inferring: whether pandas makes floats,
    Python ints or text of the column depends on the other values' order
    (``arrow_bridge.python_ints``).

    >>> past = lambda text: integer_text_past_int64(np.frombuffer(text, np.uint8), 0, len(text))
    >>> past(b"9223372036854775807"), past(b"9223372036854775808"), past(b"-9223372036854775808")
    (False, True, False)
    >>> past(b"-9223372036854775809"), past(b"+00000000000000000001"), past(b"92233720368547758080.5")
    (True, False, False)
    >>> past(b" 9223372036854775808"), past(b"9223372036854775808 ")  # past its digits, pandas sees no integer
    (True, False)
    """
    if end - start < 19:
        return False
    i = start
    while i < end and (src[i] == 32 or 9 <= src[i] <= 13):  # C's isspace, as pandas' parser skips
        i += 1
    if i == end:
        return False
    negative = src[i] == 45
    if src[i] == 45 or src[i] == 43:
        i += 1
    while i < end and src[i] == 48:
        i += 1
    for k in range(i, end):
        if src[k] < 48 or src[k] > 57:
            return False
    digits = end - i
    if digits != 19:
        return digits > 19
    for k in range(18):
        if src[i + k] != _INT64_DIGITS[k]:
            return src[i + k] > _INT64_DIGITS[k]
    return src[i + 18] > (56 if negative else 55)
