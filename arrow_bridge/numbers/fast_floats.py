"""Plain decimal floats at a buffer address, the field's bounds known: the
fused kernel's inline float path.

:func:`float64_at` reads ``[+-]?digits[.digits][eE[+-]?digit{1,4}]`` with
vector compares and multiply-adds over the 32 bytes that end at the field's
end (:mod:`.swar`), no loop; :func:`float64_in_runs` takes any field by digit
runs, eight bytes a step. Both round with :func:`.eisel_lemire.decimal_to_float64`
and answer "not ok" where they cannot decide exactly or the text is anything
else: :func:`.parse_floats.parse_float64` (the full grammar) then decides. So
whenever they answer ok, the value is the one ``parse_float64`` gives.

Addresses, not arrays: the fused kernel calls these per field, and an array
argument costs reference counting per call.

>>> buf = np.frombuffer(bytes(32) + b"-12.5e1", np.uint8)
>>> float64_at(buf.ctypes.data, 32, buf.size, ord("."))
(True, -125.0)
"""
import numpy as np

from arrow_bridge.jit import njit
from arrow_bridge.numbers.eisel_lemire import MAX_FAST_MANTISSA64, decimal_to_float64
from arrow_bridge.numbers.internal import POW10_U64
from arrow_bridge.numbers.swar import (
    byte_at,
    ctz64,
    digits_value,
    digits_value32,
    equal_mask32,
    leading_digits,
    number_masks32,
    word_at,
)

_U0 = np.uint64(0)
_U1 = np.uint64(1)
_U9 = np.uint64(9)
_U10 = np.uint64(10)
_U48 = np.uint64(48)


@njit(nogil=True, cache=True, inline="always")
def _digit_run(at, p, end, w):
    """``(position after the digits at p, w * 10**count + their value, count)``;
    the value wraps around past 19 digits (the caller checks ``count``).
    ``at`` is the span buffer's address; digits are looked for below ``end``
    only, which ends the run without a load when ``end`` is the field's."""
    count = 0
    while p + 8 <= end:
        word = word_at(at, p)
        n = leading_digits(word)
        if n:
            w = w * POW10_U64[n] + np.uint64(digits_value(word, n))
            p += n
            count += n
        if n < 8:
            return p, w, count
    while p < end:
        d = np.uint64(byte_at(at, p)) - _U48
        if d > _U9:
            break
        w = w * _U10 + d
        p += 1
        count += 1
    return p, w, count



@njit(nogil=True, cache=True, inline="always")
def float64_at(at, s, e, decimal):
    """``(ok, value)`` of a plain decimal float filling ``[s, e)``:
    ``[+-]?digits[.digits][eE[+-]?digit{1,4}]``, correctly rounded. Not ok for
    anything else, or where Eisel-Lemire cannot decide: the general parser
    then does.

    The field's end is known, so the 32 bytes that end there show where the
    point and the exponent are (:func:`swar.number_masks32`), and the same
    bytes (those before the exponent, if any) give the digits' value
    (:func:`swar.digits_value32`): no loop, and no branch on how many digits
    there are, so the processor overlaps consecutive values (the float
    matrix, ``benchmarks.fast_path`` when this was written: 877 vs 692 MB/s
    with digit runs). Fields over 32 bytes, more than 19 significant digits
    or 24 digits in all, and fields in the buffer's first 32 bytes (the load
    would start before it) go through :func:`float64_in_runs`."""
    n = e - s
    if n > 32 or e < 32:
        return float64_in_runs(at, s, e, decimal)
    lane0 = np.uint64(32 - n)  # the field's first byte in the 32 bytes before e
    non_digit, point, letter = number_masks32(at, e - 32, decimal)
    first = byte_at(at, s)
    sign = np.int64(first == 45 or first == 43)
    past = _U1 << np.uint64(n)
    others = (non_digit >> lane0) & ~np.uint64(sign)  # the field's non-digits after a sign
    point_at = np.int64(ctz64(others | past))
    has_point = (point >> (lane0 + np.uint64(point_at))) & _U1
    others &= others - has_point
    mantissa_end = np.int64(ctz64(others | past))
    fraction = np.int64(has_point) * (mantissa_end - point_at - 1)
    count = point_at - sign + fraction
    # Up to 24 digits fit the digits' vector; leading zeros (0.000001234...) add nothing to the value
    if not (0 < count <= 19 or (19 < count <= 24 and
                                _leading_zeros(at, e, lane0, sign, point_at, has_point, decimal) >= count - 19)):
        return float64_in_runs(at, s, e, decimal)
    q = -fraction
    if mantissa_end == n:
        w = digits_value32(at, e, count, point_at + 32 - n if has_point else -1)
    else:
        exp_sign = byte_at(at, s + mantissa_end + 1)
        exp_start = mantissa_end + 1 + (exp_sign == 45 or exp_sign == 43)
        exp_digits = n - exp_start
        if not ((letter >> (lane0 + np.uint64(mantissa_end))) & _U1 and 0 < exp_digits <= 4
                and (others & (others - _U1)) >> np.uint64(exp_start) == _U0 and s + mantissa_end >= 32):
            return float64_in_runs(at, s, e, decimal)
        exponent = digits_value(word_at(at, e - 8) >> (np.uint64(8 - exp_digits) << np.uint64(3)), exp_digits)
        q += -exponent if exp_sign == 45 else exponent
        w = digits_value32(at, s + mantissa_end, count, point_at + 32 - mantissa_end if has_point else -1)
    # Testing the digit count rather than w < 2**53: a column's values mostly have one count, so
    # the branch predicts well (the float matrix's 16-17 digit values, benchmarks.fast_path when
    # this was written: 877 MB/s, testing w: 724).
    return decimal_to_float64(w, q, count <= 15, first == 45)


@njit(nogil=True, cache=True)  # a call: only values of over 19 digits get here
def _leading_zeros(at, e, lane0, sign, point_at, has_point, decimal):
    """How many zero digits the number in lanes ``lane0`` on of the 32 bytes
    before ``e`` starts with, after its sign and across its decimal point
    (``point_at``, from the field's start, if ``has_point``)."""
    zeros_or_points = equal_mask32(at, e - 32, 48, decimal) >> (lane0 + np.uint64(sign))
    run = np.int64(ctz64(~zeros_or_points))
    return run - np.int64(has_point and point_at < sign + run)


@njit(nogil=True, cache=True)
def float64_in_runs(at, s, e, decimal):
    """:func:`float64_at` for any field: digit runs up to the field's end, at
    most 19 significant digits (leading zeros of a value below 1 do not
    count), Clinger's one rounding where it is exact, else Eisel-Lemire."""
    negative = byte_at(at, s) == 45
    p, w, n = _digit_run(at, s + (negative or byte_at(at, s) == 43), e, _U0)
    q = 0
    if p < e and byte_at(at, p) == decimal:
        p += 1
        if w == _U0:
            while p < e and byte_at(at, p) == 48:
                p += 1
                q -= 1
        p, w, fraction = _digit_run(at, p, e, w)
        n += fraction
        q -= fraction
    if p < e and (byte_at(at, p) | 32) == 101 and n:  # an exponent
        exp_negative = byte_at(at, p + 1) == 45
        exp_start = p + 1 + (exp_negative or byte_at(at, p + 1) == 43)
        p, exponent, exp_digits = _digit_run(at, exp_start, e, _U0)
        if not 0 < exp_digits <= 4:
            return False, 0.0
        q += -np.int64(exponent) if exp_negative else np.int64(exponent)
    if not (0 < n <= 19 and p == e):
        return False, 0.0
    return decimal_to_float64(w, q, w <= MAX_FAST_MANTISSA64, negative)

