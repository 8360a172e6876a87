"""``w * 10**q`` to the correctly rounded binary float (float64 or float32).

``w`` is a uint64 (up to 19 decimal digits), ``q`` a power of ten:

1. Clinger's fast path: if ``w <= 2**53`` and ``|q| <= 22`` both ``w`` and
   ``10**|q|`` are exact doubles, so one IEEE multiply/divide rounds once and
   is exact. (float32: ``2**24`` and 10, in :mod:`.parse_floats`.)
2. Eisel-Lemire: normalise ``w`` to 64 bits and multiply by a 128-bit
   truncated power of five; the top bits are the mantissa. Mushtak & Lemire
   (2023) proved the 128-bit product always suffices for 19-digit ``w``; we
   still keep Lemire's original "lower 64 bits all ones" guard and send that
   (never observed) case to the exact path (:mod:`.exact_decimal`), since
   being wrong there is worse than a slow value.
3. With more than 19 significant digits ``w`` holds the first 19 (truncated),
   so the value lies in ``[w, w+1) * 10**q``; if both ends round to the same
   float that float is the answer; only when a rounding boundary falls inside
   that 1e-19-relative interval must the exact path decide.

The power-of-five table is built at import time with Python's exact integers
(the same construction as fast_float's generator script) and frozen into the
compiled code as two ``uint64`` arrays. Results are assembled bit by bit and
reinterpreted through a tiny LLVM bitcast intrinsic.

>>> decimal_to_float64(np.uint64(15), -1, True, True)
(True, -1.5)
"""
import numpy as np
from llvmlite import ir

from arrow_bridge.jit import intrinsic, njit, numba_types as types
from arrow_bridge.numbers.swar import clz64, mul128

# Every uint64 constant is a NumPy scalar on purpose: in Numba, mixing uint64
# with a plain (int64) literal silently promotes to float64.
_U0 = np.uint64(0)
_U1 = np.uint64(1)
_U3 = np.uint64(3)
_U63 = np.uint64(63)
_ALL_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)

_SMALLEST_POW5 = -342
_LARGEST_POW5 = 308

# IEEE formats, as fast_float's binary_format: (explicit mantissa bits,
# exponent bias, all-ones biased exponent, smallest / largest power of ten
# whose product with a 19-digit w is neither surely 0 nor surely inf, range
# of q where w * 5**q fits 64 bits so an exact tie is possible).
DOUBLE = (52, 1023, 0x7FF, -342, 308, -4, 23)
SINGLE = (23, 127, 0xFF, -64, 38, -17, 10)

_SIGN64 = np.uint64(1 << 63)

#: ``w`` up to this is an exact double: Clinger's one rounding is exact.
MAX_FAST_MANTISSA64 = np.uint64(1 << 53)
_POW10_F64 = np.array([float(10**i) for i in range(23)], dtype=np.float64)


def _pow5_128_table() -> tuple[np.ndarray, np.ndarray]:
    """Truncated 128-bit significands of 5**q, q in [-342, 308].

    Each entry is the top 128 bits of 5**q (the bit 127 set). For q < 0 it is
    the reciprocal rounded up, so multiplying by it never undershoots; this is
    the construction of fast_float's ``script/table_generation.py``.
    """
    hi, lo = [], []
    for q in range(_SMALLEST_POW5, _LARGEST_POW5 + 1):
        if q < 0:
            power5 = 5**-q
            z = power5.bit_length()  # == ceil(log2(5**-q)): never a power of two
            b = z + 127 if q >= -27 else 2 * z + 128
            c = (1 << b) // power5 + 1
        else:
            c = 5**q << 128  # shifted up so that truncating to 128 bits below is one right shift
        c >>= max(c.bit_length() - 128, 0)  # the top 128 bits, bit 127 set
        hi.append(c >> 64)
        lo.append(c & ((1 << 64) - 1))
    return np.array(hi, dtype=np.uint64), np.array(lo, dtype=np.uint64)


_POW5_HI, _POW5_LO = _pow5_128_table()



# --------------------------------------------------------------------------
# LLVM one-liners Numba has no spelling for.
# --------------------------------------------------------------------------
@intrinsic
def bits_to_float64(typingctx, bits):
    """Reinterprets a uint64 as a float64 (no memory round trip)."""
    if bits != types.uint64:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.uint64), codegen


@intrinsic
def bits_to_float32(typingctx, bits):
    """Reinterprets a uint32 as a float32."""
    if bits != types.uint32:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())

    return types.float32(types.uint32), codegen


@njit(nogil=True, cache=True, inline="always")
def _product(q, w, precision_mask):
    """``w * 5**q`` to 128 bits; the second word is only needed when the
    bits that decide rounding are all ones (a carry could still come in)."""
    idx = q - _SMALLEST_POW5
    high, low = mul128(w, _POW5_HI[idx])
    if (high & precision_mask) == precision_mask:
        high2, low2 = mul128(w, _POW5_LO[idx])
        low += high2
        if high2 > low:
            high += _U1
    return high, low


@njit(nogil=True, cache=True, inline="always")
def eisel_lemire(q, w, fmt):
    """fast_float's ``compute_float``: ``(mantissa, biased_exp, decided)``.

    ``mantissa | biased_exp << mbits`` is the (unsigned) IEEE bit pattern of
    ``w * 10**q`` correctly rounded. ``decided`` is False only in Lemire's
    conservative "product may be off" case; the bits are then still within
    an ulp, a good start for the exact path.

    >>> mantissa, biased_exp, decided = eisel_lemire(-1, np.uint64(15), DOUBLE)  # 1.5
    >>> hex(mantissa | np.uint64(biased_exp) << np.uint64(52)), decided
    ('0x3ff8000000000000', True)
    """
    mbits, bias, inf_power, p10_min, p10_max, rte_min, rte_max = fmt
    if w == _U0 or q < p10_min:
        return _U0, 0, True
    if q > p10_max:
        return _U0, inf_power, True
    lz = clz64(w)
    w <<= lz
    high, low = _product(q, w, _ALL_ONES >> np.uint64(mbits + 3))
    decided = low != _ALL_ONES or (-27 <= q <= 55)
    upperbit = high >> _U63
    shift = upperbit + np.uint64(61 - mbits)
    mantissa = high >> shift
    # floor(log2(10**q)) + 63, exact over the table's range.
    power2 = (((152170 + 65536) * q) >> 16) + 63 + np.int64(upperbit) - np.int64(lz) + bias
    implicit = _U1 << np.uint64(mbits)
    if power2 <= 0:
        # Subnormal (or zero): shift into place and round half up; ties
        # cannot occur this far from 1.
        if -power2 + 1 >= 64:
            return _U0, 0, decided
        mantissa >>= np.uint64(-power2 + 1)
        mantissa += mantissa & _U1
        mantissa >>= _U1
        # Rounding up may carry into the smallest normal.
        return mantissa, 0 if mantissa < implicit else 1, decided
    if (low <= _U1 and rte_min <= q <= rte_max and (mantissa & _U3) == _U1
            and (mantissa << shift) == high):
        # Exactly halfway: clear the round bit so ties go to even.
        mantissa &= ~_U1
    mantissa += mantissa & _U1
    mantissa >>= _U1
    if mantissa >= (implicit << _U1):
        mantissa = implicit
        power2 += 1
    mantissa &= ~implicit
    if power2 >= inf_power:
        return _U0, inf_power, decided
    return mantissa, power2, decided


@njit(nogil=True, cache=True)
def decimal_to_bits(w, q, too_many, fmt):
    """``(bits, decided)``: unsigned IEEE bits of ``w * 10**q``, or a
    candidate within an ulp with ``decided`` False when only the exact path
    can tell (``too_many``: ``w`` is a truncated prefix of the digits).

    >>> bits, decided = decimal_to_bits(np.uint64(1), 0, False, SINGLE)
    >>> hex(bits), decided
    ('0x3f800000', True)
    """
    m, p2, decided = eisel_lemire(q, w, fmt)
    if too_many:
        m1, p21, decided1 = eisel_lemire(q, w + _U1, fmt)
        decided = decided and decided1 and m1 == m and p21 == p2
    return m | (np.uint64(p2) << np.uint64(fmt[0])), decided


@njit(nogil=True, cache=True, inline="always")
def decimal_to_float64(w, q, below_2_53, negative):
    """``(decided, ±w * 10**q)`` correctly rounded: Clinger's one rounding
    where it is exact (``below_2_53``: the caller knows ``w < 2**53``) and
    cheaper, else Eisel-Lemire (not decided near a halfway point: the exact
    path must tell). See the module example."""
    if below_2_53 and -22 <= q <= 22:
        value = np.float64(np.int64(w))  # w < 2**63: one cvtsi2sd
        value = value / _POW10_F64[-q] if q < 0 else value * _POW10_F64[q]
        return True, -value if negative else value
    mantissa, power2, decided = eisel_lemire(q, w, DOUBLE)
    pattern = mantissa | (np.uint64(power2) << np.uint64(DOUBLE[0]))
    return decided, bits_to_float64(pattern | _SIGN64 if negative else pattern)
