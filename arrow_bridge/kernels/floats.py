"""Correctly rounded decimal text -> float64 / float32 kernels.

Accepted syntax
---------------
Exactly what ``pyarrow.csv.read_csv`` (Arrow 26, which wraps ``fast_float``)
accepts for a float64 / float32 column, found empirically and pinned down by
``tests/arrow_bridge/test_floats.py``::

    field    := ws* sign? (number | special) ws*
    ws       := ' ' | '\\t'                 (only these two; not \\r \\n \\v \\f)
    sign     := '+' | '-'                   (at most one)
    number   := mantissa exponent?
    mantissa := digit+ [dp digit*] | dp digit+       ("5." and ".5" ok, "." not)
    exponent := ('e' | 'E') sign? digit+             (any number of digits)
    special  := 'inf' | 'infinity' | 'nan' | 'nan(' [A-Za-z0-9_]* ')'
                                                     (case-insensitive)

``dp`` is the ``decimal_point`` byte; '.' is then an ordinary invalid byte.
An 'e' without exponent digits ("1e", "1e+") makes the field invalid, as do
hexadecimal floats, digit separators ('_', ',', ' '), a BOM, a second sign and
empty or all-blank fields. NaN keeps its sign ("-nan" has the sign bit set)
but never a payload. Null spellings ("", "NA", "NaN", ...) are the caller's
business; text that reaches these kernels is judged by the grammar alone.

Algorithm
---------
One pass validates the field and accumulates the first digits into a
``uint64`` ``w`` and the decimal exponent ``q`` (value = w * 10**q). Then:

1. Clinger's fast path: if ``w <= 2**53`` and ``|q| <= 22`` both ``w`` and
   ``10**|q|`` are exact doubles, so one IEEE multiply/divide rounds once and
   is exact. (float32: ``2**24`` and 10.)
2. Eisel-Lemire: normalise ``w`` to 64 bits and multiply by a 128-bit
   truncated power of five; the top bits are the mantissa. Mushtak & Lemire
   (2023) proved the 128-bit product always suffices for 19-digit ``w``; we
   still keep Lemire's original "lower 64 bits all ones" guard and send that
   (never observed) case to the exact path, since being wrong there is worse
   than a slow value.
3. With more than 19 significant digits ``w`` holds the first 19 (truncated),
   so the value lies in ``[w, w+1) * 10**q``; if both ends round to the same
   float that float is the answer; only when a rounding boundary falls inside
   that 1e-19-relative interval do we take the exact path.
4. Exact path: compare the decimal with the halfway point between candidate
   neighbouring floats using big-integer arithmetic (``uint32`` limbs in
   ``uint64`` words) and step the candidate until it is bracketed. Only the
   first 800 significant digits are kept (plus a "non-zero digits follow"
   sticky bit): any halfway point between doubles has at most 767 significant
   digits, so the dropped digits can only break exact ties. This path
   allocates, which is fine because typical data (e.g. ``repr`` of random
   doubles, at most 17 digits) never reaches it.

The power-of-five table is built at import time with Python's exact integers
(the same construction as fast_float's generator script) and frozen into the
compiled code as two ``uint64`` arrays.

Every kernel is ``nopython``/``nogil``, never raises, and the common path
allocates nothing: results are assembled bit by bit and reinterpreted through
a tiny LLVM bitcast intrinsic.
"""
import numba as nb
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from arrow_bridge.kernels.swar import clz64, mul128

# --------------------------------------------------------------------------
# Constants. Every uint64 constant is a NumPy scalar on purpose: in Numba,
# mixing uint64 with a plain (int64) literal silently promotes to float64.
# --------------------------------------------------------------------------
_U0 = np.uint64(0)
_U1 = np.uint64(1)
_U2 = np.uint64(2)
_U3 = np.uint64(3)
_U9 = np.uint64(9)
_U10 = np.uint64(10)
_U48 = np.uint64(48)
_U32 = np.uint64(32)
_U63 = np.uint64(63)
_LOW32 = np.uint64(0xFFFFFFFF)
_ALL_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)
_MIN_19_DIGITS = np.uint64(10**18)

_SMALLEST_POW5 = -342
_LARGEST_POW5 = 308

# Exponents beyond this cannot matter for any field shorter than ~1e12 bytes;
# saturating keeps the int64 exponent arithmetic from overflowing.
_EXP_SATURATION = 1_000_000_000_000

# Significant digits kept by the exact path (see module docstring).
_MAX_DIGITS = 800
# uint32 limbs per big integer. Both sides of a comparison are about the size
# of the value times 10**-e: at most ~2700 bits (800 digits, or 5**1123 times
# a 54-bit odd number); 6400 bits leaves a wide margin. Verified with
# NUMBA_BOUNDSCHECK=1 on extreme inputs.
_LIMBS = 200

# IEEE formats, as fast_float's binary_format: (explicit mantissa bits,
# exponent bias, all-ones biased exponent, smallest / largest power of ten
# whose product with a 19-digit w is neither surely 0 nor surely inf, range
# of q where w * 5**q fits 64 bits so an exact tie is possible).
_DOUBLE = (52, 1023, 0x7FF, -342, 308, -4, 23)
_SINGLE = (23, 127, 0xFF, -64, 38, -17, 10)

_SIGN64 = np.uint64(1 << 63)
_INF64_BITS = np.uint64(0x7FF << 52)
_NAN64_BITS = np.uint64(0x7FF8 << 48)
_SIGN32 = np.uint64(1 << 31)
_INF32_BITS = np.uint64(0xFF << 23)
_NAN32_BITS = np.uint64(0x7FC00000)

_MAX_FAST_MANTISSA64 = np.uint64(1 << 53)
_MAX_FAST_MANTISSA32 = np.uint64(1 << 24)
_POW10_F64 = np.array([float(10**i) for i in range(23)], dtype=np.float64)
_POW10_F32 = np.array([float(10**i) for i in range(11)], dtype=np.float32)

# Powers of five that fit a uint32 limb, for the exact path.
_POW5_SMALL = np.array([5**i for i in range(14)], dtype=np.uint64)


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
            while c >= 1 << 128:
                c >>= 1
        else:
            c = 5**q
            while c < 1 << 127:
                c <<= 1
            while c >= 1 << 128:
                c >>= 1
        hi.append(c >> 64)
        lo.append(c & ((1 << 64) - 1))
    return np.array(hi, dtype=np.uint64), np.array(lo, dtype=np.uint64)


_POW5_HI, _POW5_LO = _pow5_128_table()


# --------------------------------------------------------------------------
# LLVM one-liners Numba has no spelling for.
# --------------------------------------------------------------------------
@intrinsic
def _bits_to_f64(typingctx, bits):
    """Reinterprets a uint64 as a float64 (no memory round trip)."""
    if bits != types.uint64:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.uint64), codegen


@intrinsic
def _bits_to_f32(typingctx, bits):
    """Reinterprets a uint32 as a float32."""
    if bits != types.uint32:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())

    return types.float32(types.uint32), codegen


# --------------------------------------------------------------------------
# Lexing.
# --------------------------------------------------------------------------
@nb.njit(nogil=True, cache=True)
def _is_digit(c):
    return 48 <= c <= 57


@nb.njit(nogil=True, cache=True)
def _trim(buf, start, end):
    """Drops the spaces and tabs Arrow's CSV converter trims off numbers."""
    while start < end and (buf[start] == 32 or buf[start] == 9):
        start += 1
    while end > start and (buf[end - 1] == 32 or buf[end - 1] == 9):
        end -= 1
    return start, end


@nb.njit(nogil=True, cache=True)
def _lower_is(c, letter):
    # OR-ing 0x20 folds case; for letters no other byte folds onto them.
    return (c | 32) == letter


@nb.njit(nogil=True, cache=True)
def _scan_special(buf, i, end):
    """0: not special, 1: inf/infinity, 2: nan or nan(chars) (case-insensitive)."""
    n = end - i
    if n < 3:
        return 0
    if _lower_is(buf[i], 110) and _lower_is(buf[i + 1], 97) and _lower_is(buf[i + 2], 110):
        if n == 3:
            return 2
        if buf[i + 3] != 40:  # '('
            return 0
        for j in range(i + 4, end):
            c = buf[j]
            if c == 41:  # ')' ends the payload; it must end the field too
                return 2 if j == end - 1 else 0
            if not (_is_digit(c) or 65 <= (c & 0xDF) <= 90 or c == 95):
                return 0
        return 0
    if _lower_is(buf[i], 105) and _lower_is(buf[i + 1], 110) and _lower_is(buf[i + 2], 102):
        if n == 3:
            return 1
        if (n == 8 and _lower_is(buf[i + 3], 105) and _lower_is(buf[i + 4], 110)
                and _lower_is(buf[i + 5], 105) and _lower_is(buf[i + 6], 116)
                and _lower_is(buf[i + 7], 121)):
            return 1
    return 0


@nb.njit(nogil=True, cache=True)
def _scan_exponent(buf, i, end):
    """``(next_index, exponent)`` of an optional ``[eE][+-]?digit+``.

    An 'e' not followed by digits is not consumed (so the field is invalid).
    """
    if i >= end or not _lower_is(buf[i], 101):
        return i, 0
    j = i + 1
    negative = False
    if j < end and (buf[j] == 45 or buf[j] == 43):
        negative = buf[j] == 45
        j += 1
    if j >= end or not _is_digit(buf[j]):
        return i, 0
    e = 0
    while j < end and _is_digit(buf[j]):
        if e < _EXP_SATURATION:
            e = e * 10 + (buf[j] - 48)
        j += 1
    return j, -e if negative else e


@nb.njit(nogil=True, cache=True)
def _accumulate_digits(buf, i, end, w):
    """``(index of the first non-digit, w * 10**n + digits)`` (wrapping)."""
    while i < end:
        d = np.uint64(buf[i]) - _U48  # wraps around below '0': one compare
        if d > _U9:
            break
        w = w * _U10 + d
        i += 1
    return i, w


@nb.njit(nogil=True, cache=True)
def _scan_number(buf, i, end, decimal_point):
    """Validates ``mantissa exponent?`` filling ``[i, end)`` exactly.

    Returns ``(ok, w, exp10, int_start, int_end, frac_start, frac_end, exp)``:
    ``w`` is the digits as a (wrapping) uint64, ``exp10`` the power of ten of
    its last digit and ``exp`` the explicit exponent.
    """
    int_start = i
    i, w = _accumulate_digits(buf, i, end, _U0)
    int_end = i
    frac_start = i
    if i < end and buf[i] == decimal_point:
        frac_start = i + 1
        i, w = _accumulate_digits(buf, frac_start, end, w)
    frac_end = i
    if int_end == int_start and frac_end == frac_start:
        return False, w, 0, int_start, int_end, frac_start, frac_end, 0
    i, exp = _scan_exponent(buf, i, end)
    exp10 = exp - (frac_end - frac_start)
    return i == end, w, exp10, int_start, int_end, frac_start, frac_end, exp


@nb.njit(nogil=True, cache=True)
def _significant_digits(buf, int_start, int_end, frac_start, frac_end):
    """Number of digits after the leading zeros."""
    n = (int_end - int_start) + (frac_end - frac_start)
    i = int_start
    while i < int_end and buf[i] == 48:
        n -= 1
        i += 1
    if i == int_end:
        i = frac_start
        while i < frac_end and buf[i] == 48:
            n -= 1
            i += 1
    return n


@nb.njit(nogil=True, cache=True)
def _first_19_digits(buf, int_start, int_end, frac_start, frac_end, exp):
    """``(w, exp10)`` for the first 19 significant digits (truncated)."""
    w = _U0
    i = int_start
    while w < _MIN_19_DIGITS and i < int_end:
        w = w * _U10 + np.uint64(buf[i] - 48)
        i += 1
    if w >= _MIN_19_DIGITS:
        return w, exp + (int_end - i)
    i = frac_start
    while w < _MIN_19_DIGITS and i < frac_end:
        w = w * _U10 + np.uint64(buf[i] - 48)
        i += 1
    return w, exp - (i - frac_start)


# --------------------------------------------------------------------------
# Eisel-Lemire.
# --------------------------------------------------------------------------
@nb.njit(nogil=True, cache=True, inline="always")
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


@nb.njit(nogil=True, cache=True, inline="always")
def _eisel_lemire(q, w, fmt):
    """fast_float's ``compute_float``: ``(mantissa, biased_exp, decided)``.

    ``mantissa | biased_exp << mbits`` is the (unsigned) IEEE bit pattern of
    ``w * 10**q`` correctly rounded. ``decided`` is False only in Lemire's
    conservative "product may be off" case; the bits are then still within
    an ulp, a good start for the exact path.
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


@nb.njit(nogil=True, cache=True)
def _decimal_to_bits(w, q, too_many, fmt):
    """``(bits, decided)``: unsigned IEEE bits of ``w * 10**q``, or a
    candidate within an ulp with ``decided`` False when only the exact path
    can tell (``too_many``: ``w`` is a truncated prefix of the digits)."""
    m, p2, decided = _eisel_lemire(q, w, fmt)
    if too_many:
        m1, p21, decided1 = _eisel_lemire(q, w + _U1, fmt)
        decided = decided and decided1 and m1 == m and p21 == p2
    return m | (np.uint64(p2) << np.uint64(fmt[0])), decided


@nb.njit(nogil=True, cache=True, inline="always")
def decimal_to_float64(w, q, below_2_53, negative):
    """``(decided, ±w * 10**q)`` correctly rounded: Clinger's one rounding
    where it is exact (``below_2_53``: the caller knows ``w < 2**53``) and
    cheaper, else Eisel-Lemire (not decided near a halfway point: the exact
    path must tell)."""
    if below_2_53 and -22 <= q <= 22:
        value = np.float64(np.int64(w))  # w < 2**63: one cvtsi2sd
        value = value / _POW10_F64[-q] if q < 0 else value * _POW10_F64[q]
        return True, -value if negative else value
    mantissa, power2, decided = _eisel_lemire(q, w, _DOUBLE)
    pattern = mantissa | (np.uint64(power2) << np.uint64(_DOUBLE[0]))
    return decided, _bits_to_f64(pattern | _SIGN64 if negative else pattern)


# --------------------------------------------------------------------------
# Exact path: big integers as little-endian uint32 limbs held in uint64s.
# --------------------------------------------------------------------------
@nb.njit(nogil=True, cache=True)
def _big_muladd(a, n, factor, addend):
    """``a = a * factor + addend`` (both < 2**32) in place; returns the size."""
    carry = addend
    for k in range(n):
        t = a[k] * factor + carry
        a[k] = t & _LOW32
        carry = t >> _U32
    if carry != _U0:
        a[n] = carry
        n += 1
    return n


@nb.njit(nogil=True, cache=True)
def _big_mul_pow5(a, n, p):
    """``a *= 5**p`` in place."""
    while p >= 13:
        n = _big_muladd(a, n, _POW5_SMALL[13], _U0)
        p -= 13
    if p > 0:
        n = _big_muladd(a, n, _POW5_SMALL[p], _U0)
    return n


@nb.njit(nogil=True, cache=True)
def _big_mul(a, na, b, nb_, out):
    """Schoolbook ``out = a * b``; returns the size (no limb overflows:
    (2**32-1)**2 + 2 * (2**32-1) == 2**64-1)."""
    for k in range(na + nb_):
        out[k] = _U0
    for i in range(na):
        carry = _U0
        ai = a[i]
        for j in range(nb_):
            t = ai * b[j] + out[i + j] + carry
            out[i + j] = t & _LOW32
            carry = t >> _U32
        out[i + nb_] = carry
    n = na + nb_
    while n > 0 and out[n - 1] == _U0:
        n -= 1
    return n


@nb.njit(nogil=True, cache=True)
def _big_shl(a, n, s, out):
    """``out = a << s``; returns the size."""
    if n == 0:
        return 0
    limbs = s // 32
    bits = np.uint64(s % 32)
    for k in range(limbs):
        out[k] = _U0
    if bits == _U0:
        for k in range(n):
            out[k + limbs] = a[k]
        return n + limbs
    carry = _U0
    for k in range(n):
        out[k + limbs] = ((a[k] << bits) & _LOW32) | carry
        carry = a[k] >> (_U32 - bits)
    if carry != _U0:
        out[n + limbs] = carry
        return n + limbs + 1
    return n + limbs


@nb.njit(nogil=True, cache=True)
def _big_cmp(a, na, b, nb_):
    """-1, 0 or 1 as a <, ==, > b (sizes carry no leading zero limbs)."""
    if na != nb_:
        return -1 if na < nb_ else 1
    for k in range(na - 1, -1, -1):
        if a[k] != b[k]:
            return -1 if a[k] < b[k] else 1
    return 0


@nb.njit(nogil=True, cache=True)
def _collect_digits(buf, int_start, int_end, frac_start, frac_end, out):
    """Significant digits into ``out`` (at most ``len(out)``).

    Returns ``(kept, significant, sticky)``; ``sticky``: a dropped digit is
    non-zero.
    """
    kept = 0
    significant = 0
    sticky = False
    n_int = int_end - int_start
    for k in range(n_int + (frac_end - frac_start)):
        pos = int_start + k if k < n_int else frac_start + k - n_int
        d = np.int64(buf[pos]) - 48
        if significant == 0 and d == 0:
            continue
        significant += 1
        if kept < out.shape[0]:
            out[kept] = d
            kept += 1
        elif d != 0:
            sticky = True
    return kept, significant, sticky


@nb.njit(nogil=True, cache=True)
def _cmp_halfway(big_d, n_d, pow5, n_pow5, e, m, k, tmp_r, tmp_a, tmp_b):
    """Sign of ``D * 10**e - (2m+1) * 2**(k-1)`` where ``big_d`` already holds
    ``D * 5**max(e, 0)`` and ``pow5`` holds ``5**max(-e, 0)``."""
    odd = _U2 * m + _U1
    # Reuse tmp_a's first two limbs as the 2-limb multiplier.
    tmp_a[0] = odd & _LOW32
    tmp_a[1] = odd >> _U32
    n_r = _big_mul(pow5, n_pow5, tmp_a, 2 if tmp_a[1] != _U0 else 1, tmp_r)
    l2 = max(e, 0)
    r2 = k - 1 - min(e, 0)
    s = min(l2, r2)
    n_a = _big_shl(big_d, n_d, l2 - s, tmp_a)
    n_b = _big_shl(tmp_r, n_r, r2 - s, tmp_b)
    return _big_cmp(tmp_a, n_a, tmp_b, n_b)


@nb.njit(nogil=True, cache=True)
def _unpack(bits, mbits, bias):
    """``(m, k)`` with value ``m * 2**k`` for finite unsigned IEEE bits."""
    biased = np.int64(bits >> np.uint64(mbits))
    frac = bits & ((_U1 << np.uint64(mbits)) - _U1)
    if biased == 0:
        return frac, 1 - bias - mbits
    return frac | (_U1 << np.uint64(mbits)), biased - bias - mbits


@nb.njit(nogil=True, cache=True)
def _exact_bits(buf, digit_spans, candidate, fmt):
    """Correctly rounded unsigned IEEE bits of the digits, by exact
    comparisons with halfway points, starting from ``candidate``.

    Allocates its scratch (this path is rare).
    """
    int_start, int_end, frac_start, frac_end, exp = digit_spans
    mbits, bias, inf_power = fmt[0], fmt[1], fmt[2]
    inf_bits = np.uint64(inf_power) << np.uint64(mbits)
    digits = np.empty(_MAX_DIGITS, dtype=np.uint8)
    kept, significant, sticky = _collect_digits(buf, int_start, int_end, frac_start,
                                                frac_end, digits)
    if kept == 0:
        return _U0
    e = exp - (frac_end - frac_start) + (significant - kept)
    while digits[kept - 1] == 0:  # trailing zeros only grow the numbers
        kept -= 1
        e += 1
    big_d = np.zeros(_LIMBS, dtype=np.uint64)
    n_d = 0
    i = 0
    while i < kept:  # nine digits per limb operation
        chunk = _U0
        scale = _U1
        stop = min(i + 9, kept)
        while i < stop:
            chunk = chunk * _U10 + np.uint64(digits[i])
            scale *= _U10
            i += 1
        n_d = _big_muladd(big_d, n_d, scale, chunk)
    pow5 = np.zeros(_LIMBS, dtype=np.uint64)
    pow5[0] = _U1
    n_pow5 = 1
    if e > 0:
        n_d = _big_mul_pow5(big_d, n_d, e)
    else:
        n_pow5 = _big_mul_pow5(pow5, n_pow5, -e)
    tmp_r = np.zeros(_LIMBS, dtype=np.uint64)
    tmp_a = np.zeros(_LIMBS, dtype=np.uint64)
    tmp_b = np.zeros(_LIMBS, dtype=np.uint64)

    bits = candidate
    while True:
        if bits < inf_bits:
            m, k = _unpack(bits, mbits, bias)
            c = _cmp_halfway(big_d, n_d, pow5, n_pow5, e, m, k, tmp_r, tmp_a, tmp_b)
            if c == 0 and sticky:
                c = 1
            if c > 0 or (c == 0 and (bits & _U1) == _U1):
                bits += _U1
                continue
        if bits > _U0:
            m, k = _unpack(bits - _U1, mbits, bias)
            c = _cmp_halfway(big_d, n_d, pow5, n_pow5, e, m, k, tmp_r, tmp_a, tmp_b)
            if c == 0 and sticky:
                c = 1
            if c < 0 or (c == 0 and (bits & _U1) == _U1):
                bits -= _U1
                continue
        return bits


# --------------------------------------------------------------------------
# Entry points.
# --------------------------------------------------------------------------
# The two entry points are deliberately flat twins: moving the shared lexing
# into more helpers measured ~20% slower (LLVM then stops inlining the hot
# path), and the fast paths differ in float type anyway.
@nb.njit(nogil=True, cache=True)
def _parse_f64(buf, start, end, decimal_point):
    """``(ok, value, used_exact_path)``; see :func:`parse_float64`."""
    start, end = _trim(buf, start, end)
    if start >= end:
        return False, 0.0, False
    i = start
    negative = buf[i] == 45
    if negative or buf[i] == 43:
        i += 1
    ok, w, q, int_start, int_end, frac_start, frac_end, exp = _scan_number(
        buf, i, end, decimal_point)
    sign = _SIGN64 if negative else _U0
    if not ok:
        special = _scan_special(buf, i, end)
        if special == 0:
            return False, 0.0, False
        return True, _bits_to_f64((_INF64_BITS if special == 1 else _NAN64_BITS) | sign), False
    too_many = (int_end - int_start) + (frac_end - frac_start) > 19 and _significant_digits(
        buf, int_start, int_end, frac_start, frac_end) > 19
    if too_many:
        w, q = _first_19_digits(buf, int_start, int_end, frac_start, frac_end, exp)
    else:
        decided, value = decimal_to_float64(w, q, w <= _MAX_FAST_MANTISSA64, negative)
        if decided:
            return True, value, False
    bits, decided = _decimal_to_bits(w, q, too_many, _DOUBLE)
    if not decided:
        bits = _exact_bits(buf, (int_start, int_end, frac_start, frac_end, exp), bits, _DOUBLE)
    return True, _bits_to_f64(bits | sign), not decided


@nb.njit(nogil=True, cache=True)
def _parse_f32(buf, start, end, decimal_point):
    """``(ok, value, used_exact_path)``; see :func:`parse_float32`."""
    start, end = _trim(buf, start, end)
    if start >= end:
        return False, np.float32(0), False
    i = start
    negative = buf[i] == 45
    if negative or buf[i] == 43:
        i += 1
    ok, w, q, int_start, int_end, frac_start, frac_end, exp = _scan_number(
        buf, i, end, decimal_point)
    sign = _SIGN32 if negative else _U0
    if not ok:
        special = _scan_special(buf, i, end)
        if special == 0:
            return False, np.float32(0), False
        bits = _INF32_BITS if special == 1 else _NAN32_BITS
        return True, _bits_to_f32(np.uint32(bits | sign)), False
    too_many = (int_end - int_start) + (frac_end - frac_start) > 19 and _significant_digits(
        buf, int_start, int_end, frac_start, frac_end) > 19
    if too_many:
        w, q = _first_19_digits(buf, int_start, int_end, frac_start, frac_end, exp)
    elif w <= _MAX_FAST_MANTISSA32 and -10 <= q <= 10:
        value = np.float32(np.int64(w))
        value = value / _POW10_F32[-q] if q < 0 else value * _POW10_F32[q]
        return True, -value if negative else value, False
    bits, decided = _decimal_to_bits(w, q, too_many, _SINGLE)
    if not decided:
        bits = _exact_bits(buf, (int_start, int_end, frac_start, frac_end, exp), bits, _SINGLE)
    return True, _bits_to_f32(np.uint32(bits | sign)), not decided


@nb.njit(nogil=True, cache=True)
def parse_float64(buf, start, end, decimal_point):
    """Parses ``buf[start:end]`` as a correctly rounded float64.

    Returns ``(ok, value)``; ``ok`` is False (value 0.0) when the text is not
    a float as Arrow's CSV reader defines it (see the module docstring).

    >>> buf = np.frombuffer(b"-1.5e3", np.uint8)
    >>> parse_float64(buf, 0, len(buf), ord("."))
    (True, -1500.0)
    """
    ok, value, _ = _parse_f64(buf, start, end, decimal_point)
    return ok, value


@nb.njit(nogil=True, cache=True)
def parse_float32(buf, start, end, decimal_point):
    """Parses ``buf[start:end]`` as a correctly rounded float32 (rounded once,
    straight from the decimal; never via float64).

    >>> buf = np.frombuffer(b"0.1", np.uint8)
    >>> ok, value = parse_float32(buf, 0, len(buf), ord("."))
    >>> ok, bool(np.float32(value) == np.float32(0.1))
    (True, True)
    """
    ok, value, _ = _parse_f32(buf, start, end, decimal_point)
    return ok, value
