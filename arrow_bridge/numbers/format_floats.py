"""Floats as the shortest text that reads back to the same bits.

Digits from :func:`.schubfach.shortest_digits`, spelled like Python's
``repr`` (``0.1``, ``1.0``, ``1e+16``, ``5e-324``); float32 gets the shortest
float32 digits; ``inf``/``-inf``; NaN is ``NAN``/``-NAN`` (the lower-case and
mixed-case spellings are pyarrow null values). Writes only what fits below
``cap`` and returns the end either way (:mod:`.format_ints`).

>>> out = np.zeros(32, np.uint8)
>>> end = format_float(out, 0, out.size, np.float64(1e16).view(np.uint64), False)
>>> bytes(out[:end])
b'1e+16'
"""
import numpy as np

from arrow_bridge.jit import njit
from arrow_bridge.numbers.internal import decimal_length, write_digits, write_fixed_digits, write_word
from arrow_bridge.numbers.schubfach import shortest_digits

_U0 = np.uint64(0)
_U1 = np.uint64(1)
_U10 = np.uint64(10)
_U23 = np.uint64(23)
_U31 = np.uint64(31)
_U52 = np.uint64(52)
_U100 = np.uint64(100)
_U1E4 = np.uint64(10_000)
_U1E8 = np.uint64(100_000_000)
_F64_FRAC = np.uint64((1 << 52) - 1)
_F64_SIGN = np.uint64(1 << 63)
_F32_FRAC = np.uint64((1 << 23) - 1)


@njit(nogil=True, cache=True, inline="always")
def _strip_zeros(f, e):
    """``f * 10**e`` without trailing zeros in ``f`` (f < 2**64 has at most 19)."""
    while f % _U1E8 == _U0:
        f = f // _U1E8
        e += 8
    if f % _U1E4 == _U0:
        f = f // _U1E4
        e += 4
    if f % _U100 == _U0:
        f = f // _U100
        e += 2
    if f % _U10 == _U0:
        f = f // _U10
        e += 1
    return f, e


@njit(nogil=True, cache=True)
def format_float(out, pos, cap, bits, single):
    """IEEE bits (float64, or float32 when ``single``) as round-trip text.

    >>> out = np.zeros(16, np.uint8)
    >>> end = format_float(out, 0, out.size, np.uint64(np.float32(0.1).view(np.uint32)), True)
    >>> bytes(out[:end])
    b'0.1'
    """
    if single:
        negative = (bits >> _U31) & _U1 == _U1
        mag = bits & np.uint64(0x7FFFFFFF)
        special = (mag >> _U23) == np.uint64(0xFF)
        is_nan = special and (mag & _F32_FRAC) != _U0
    else:
        negative = (bits & _F64_SIGN) != _U0
        mag = bits & ~_F64_SIGN
        special = (mag >> _U52) == np.uint64(0x7FF)
        is_nan = special and (mag & _F64_FRAC) != _U0
    if is_nan:  # NAN, not nan/NaN: those are pyarrow null spellings
        return write_word(out, pos, cap, negative, 78, 65, 78, 0, 0, 3)
    if special:
        return write_word(out, pos, cap, negative, 105, 110, 102, 0, 0, 3)
    if mag == _U0:
        return write_word(out, pos, cap, negative, 48, 46, 48, 0, 0, 3)
    f, e = shortest_digits(mag, single)
    f, e = _strip_zeros(f, e)
    n = decimal_length(f)
    decpt = n + e  # value = 0.d1d2...dn * 10**decpt
    sign = 1 if negative else 0
    fixed = -4 < decpt <= 16  # Python's repr switches notation at the same place
    if fixed:
        if decpt <= 0:
            length = 2 - decpt + n
        elif decpt >= n:
            length = decpt + 2
        else:
            length = n + 1
    else:
        x = decpt - 1
        ax = -x if x < 0 else x
        xd = 2 if ax < 100 else 3
        length = n + (1 if n > 1 else 0) + 2 + xd
    end = pos + sign + length
    if end > cap:
        return end
    p = pos
    if negative:
        out[p] = 45
        p += 1
    if fixed:
        if decpt <= 0:  # 0.000ddd
            out[p] = 48
            out[p + 1] = 46
            for i in range(-decpt):
                out[p + 2 + i] = 48
            write_digits(out, end, f, n)
        elif decpt >= n:  # ddd000.0
            write_digits(out, p + n, f, n)
            for i in range(decpt - n):
                out[p + n + i] = 48
            out[end - 2] = 46
            out[end - 1] = 48
        else:  # dd.ddd
            f = write_digits(out, end, f, n - decpt)
            out[p + decpt] = 46
            write_digits(out, p + decpt, f, decpt)
    else:  # d.ddde+XX
        x = decpt - 1
        ax = -x if x < 0 else x
        xd = 2 if ax < 100 else 3
        mant_end = end - xd - 2
        if n > 1:
            f = write_digits(out, mant_end, f, n - 1)
            out[p + 1] = 46
        out[p] = 48 + np.int64(f)
        out[mant_end] = 101
        out[mant_end + 1] = 45 if x < 0 else 43
        write_fixed_digits(out, mant_end + 2, ax, xd)
    return end
