"""The exact path of decimal -> float: big-integer comparisons with halfway points.

When Eisel-Lemire cannot decide (:mod:`.eisel_lemire`: a truncated 19-digit
prefix straddles a rounding boundary, or the product may be off), the decimal
is compared with the halfway point between candidate neighbouring floats using
big-integer arithmetic (``uint32`` limbs in ``uint64`` words) and the candidate
is stepped until it is bracketed. Only the first 800 significant digits are
kept (plus a "non-zero digits follow" sticky bit): any halfway point between
doubles has at most 767 significant digits, so the dropped digits can only
break exact ties. This path allocates, which is fine because typical data
(e.g. ``repr`` of random doubles, at most 17 digits) never reaches it.

>>> from arrow_bridge.numbers.eisel_lemire import DOUBLE
>>> digits = np.frombuffer(b"25", np.uint8)  # 2.5: digits [0, 1) and [1, 2), exponent 0
>>> hex(exact_bits(digits, (0, 1, 1, 2, 0), np.uint64(0x4004000000000001), DOUBLE))
'0x4004000000000000'
"""
import numpy as np

from arrow_bridge.jit import njit

_U0 = np.uint64(0)
_U1 = np.uint64(1)
_U2 = np.uint64(2)
_U10 = np.uint64(10)
_U32 = np.uint64(32)
_LOW32 = np.uint64(0xFFFFFFFF)

# Significant digits kept by the exact path (see module docstring).
_MAX_DIGITS = 800
# uint32 limbs per big integer. Both sides of a comparison are about the size
# of the value times 10**-e: at most ~2700 bits (800 digits, or 5**1123 times
# a 54-bit odd number); 6400 bits leaves a wide margin. Verified with
# NUMBA_BOUNDSCHECK=1 on extreme inputs.
_LIMBS = 200

# Powers of five that fit a uint32 limb, for the exact path.
_POW5_SMALL = np.array([5**i for i in range(14)], dtype=np.uint64)


# --------------------------------------------------------------------------
# Big integers as little-endian uint32 limbs held in uint64s.
# --------------------------------------------------------------------------
@njit(nogil=True, cache=True)
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


@njit(nogil=True, cache=True)
def _big_mul_pow5(a, n, p):
    """``a *= 5**p`` in place."""
    while p >= 13:
        n = _big_muladd(a, n, _POW5_SMALL[13], _U0)
        p -= 13
    if p > 0:
        n = _big_muladd(a, n, _POW5_SMALL[p], _U0)
    return n


@njit(nogil=True, cache=True)
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


@njit(nogil=True, cache=True)
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


@njit(nogil=True, cache=True)
def _big_cmp(a, na, b, nb_):
    """-1, 0 or 1 as a <, ==, > b (sizes carry no leading zero limbs)."""
    if na != nb_:
        return -1 if na < nb_ else 1
    for k in range(na - 1, -1, -1):
        if a[k] != b[k]:
            return -1 if a[k] < b[k] else 1
    return 0


@njit(nogil=True, cache=True)
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


@njit(nogil=True, cache=True)
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


@njit(nogil=True, cache=True)
def _unpack(bits, mbits, bias):
    """``(m, k)`` with value ``m * 2**k`` for finite unsigned IEEE bits."""
    biased = np.int64(bits >> np.uint64(mbits))
    frac = bits & ((_U1 << np.uint64(mbits)) - _U1)
    if biased == 0:
        return frac, 1 - bias - mbits
    return frac | (_U1 << np.uint64(mbits)), biased - bias - mbits


@njit(nogil=True, cache=True)
def exact_bits(buf, digit_spans, candidate, fmt):
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

