"""Shortest round-trip digits of a float64 or float32 (Schubfach).

:func:`shortest_digits` finds the shortest decimal that reads back as the
same float, the closest one when several are as short (R. Giulietti, "The
Schubfach way to render doubles", 2020): exact 64x128-bit integer arithmetic,
no float operation. Subnormals search every length, since their rounding
intervals are wide. Spelling the digits is :mod:`.format_floats`' job.

>>> shortest_digits(np.float64(0.3).view(np.uint64), False)  # 3e-1, with trailing zeros
(30000000000000000, -17)
"""
import numpy as np

from arrow_bridge.jit import njit

# uint64 constants are NumPy scalars on purpose: in Numba, mixing uint64 with
# a plain (int64) literal silently promotes to float64.
_U0 = np.uint64(0)
_U1 = np.uint64(1)
_U2 = np.uint64(2)
_U10 = np.uint64(10)
_U23 = np.uint64(23)
_U31 = np.uint64(31)
_U32 = np.uint64(32)
_U52 = np.uint64(52)
_U63 = np.uint64(63)
_U100 = np.uint64(100)
_MASK32 = np.uint64(0xFFFFFFFF)
_MASK63 = np.uint64((1 << 63) - 1)
_F64_FRAC = np.uint64((1 << 52) - 1)
_F64_CMIN = np.uint64(1 << 52)
_F32_FRAC = np.uint64((1 << 23) - 1)
_F32_CMIN = np.uint64(1 << 23)

# --------------------------------------------------------------------------
# Schubfach tables: for k in [K_MIN, K_MAX], 10**-k = beta * 2**r with
# 2**125 <= beta < 2**126 and g = floor(beta) + 1, split in 63-bit halves
# (Giulietti, "The Schubfach way to render doubles", 2020). Built with
# Python's exact integers, frozen into the compiled code.
# --------------------------------------------------------------------------
K_MIN, K_MAX = -324, 292


def _flog2pow10(e: int) -> int:
    return (e * 913124641741) >> 38


def _schubfach_tables() -> tuple[np.ndarray, np.ndarray]:
    g1 = np.empty(K_MAX - K_MIN + 1, dtype=np.uint64)
    g0 = np.empty(K_MAX - K_MIN + 1, dtype=np.uint64)
    for k in range(K_MIN, K_MAX + 1):
        e = -k
        if e >= 0:
            n = 10**e
            r = n.bit_length() - 126
            g = (n >> r if r >= 0 else n << -r) + 1
        else:
            d = 10**-e
            s = 125 + d.bit_length()  # 2**s / d lies in (2**125, 2**126)
            r = -s
            g = (1 << s) // d + 1
        assert r == _flog2pow10(e) - 125, k
        g1[k - K_MIN] = g >> 63
        g0[k - K_MIN] = g & ((1 << 63) - 1)
    return g1, g0


_G1, _G0 = _schubfach_tables()


# --------------------------------------------------------------------------
# Exact integer helpers for the shortest-digits search.
# --------------------------------------------------------------------------
@njit(nogil=True, cache=True)
def _mulhi(a, b):
    """High 64 bits of the 128-bit product of two uint64 (32-bit limbs)."""
    a0, a1 = a & _MASK32, a >> _U32
    b0, b1 = b & _MASK32, b >> _U32
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    mid = (p00 >> _U32) + (p01 & _MASK32) + (p10 & _MASK32)
    return p11 + (p01 >> _U32) + (p10 >> _U32) + (mid >> _U32)


@njit(nogil=True, cache=True)
def _rop64(g1, g0, cp):
    """Round-to-odd of ``g * cp / 2**127`` (g = g1 * 2**63 + g0)."""
    x1 = _mulhi(g0, cp)
    y0 = g1 * cp  # wraps: only the low word is wanted
    y1 = _mulhi(g1, cp)
    z = (y0 >> _U1) + x1
    vbp = y1 + (z >> _U63)
    return vbp | (((z & _MASK63) + _MASK63) >> _U63)


@njit(nogil=True, cache=True)
def _rop32(g, cp):
    """Round-to-odd of ``g * cp / 2**95`` (float32: one 64-bit word of g)."""
    x1 = _mulhi(g, cp)
    vbp = x1 >> _U31
    return vbp | (((x1 & _MASK32) + _MASK32) >> _U32)


@njit(nogil=True, cache=True)
def _flog10pow2(q):
    return (q * 661971961083) >> 41


@njit(nogil=True, cache=True)
def _flog10_three_quarters_pow2(q):
    return (q * 661971961083 - 274743187321) >> 41


@njit(nogil=True, cache=True)
def _in_interval(x, vbl, vbr, out):
    """Whether ``x * 10**k`` lies in the rounding interval (bounds included
    exactly when the significand is even, as round-half-even reads them)."""
    return vbl + out <= (x << _U2) and (x << _U2) + out <= vbr


@njit(nogil=True, cache=True)
def _closer(lo, hi, vb):
    """``lo`` or ``hi``, whichever is closer to the value (ties: even ``lo``)."""
    cmp = np.int64(vb) - np.int64((lo + hi) << _U1)
    return lo if cmp < 0 or (cmp == 0 and (lo & _U1) == _U0) else hi


@njit(nogil=True, cache=True)
def _pick(s, k, vb, vbl, vbr, out, wide):
    """Schubfach's choice among s*10**k, (s+1)*10**k and their 10-multiples.

    Schubfach proves that for normal numbers (17 or 9 digits in ``s``) the
    shortest answer drops at most one digit. Subnormals with few significant
    bits (``wide``) have rounding intervals so wide that several digits can
    go, so for them every length is tried, longest drop first.
    """
    if wide:
        m = _U10
        while m <= s // _U10:
            m = m * _U10
        while m >= _U10:
            lo = (s // m) * m
            hi = lo + m
            lo_in = _in_interval(lo, vbl, vbr, out)
            hi_in = _in_interval(hi, vbl, vbr, out)
            if lo_in and hi_in:
                return _closer(lo, hi, vb), k
            if lo_in or hi_in:
                return (lo if lo_in else hi), k
            m = m // _U10
    elif s >= _U100:
        sp10 = (s // _U10) * _U10
        tp10 = sp10 + _U10
        upin = vbl + out <= (sp10 << _U2)
        wpin = (tp10 << _U2) + out <= vbr
        if upin != wpin:
            return (sp10 if upin else tp10), k
    t = s + _U1
    uin = vbl + out <= (s << _U2)
    win = (t << _U2) + out <= vbr
    if uin != win:
        return (s if uin else t), k
    return _closer(s, t, vb), k


@njit(nogil=True, cache=True)
def _to_decimal64(q, c, wide):
    out = c & _U1
    cb = c << _U2
    cbr = cb + _U2
    if c != _F64_CMIN or q == -1074:
        cbl = cb - _U2
        k = _flog10pow2(q)
    else:  # a power of two: the gap below is half the gap above
        cbl = cb - _U1
        k = _flog10_three_quarters_pow2(q)
    h = np.uint64(q + ((-k * 913124641741) >> 38) + 2)
    i = k - K_MIN
    g1, g0 = _G1[i], _G0[i]
    vb = _rop64(g1, g0, cb << h)
    vbl = _rop64(g1, g0, cbl << h)
    vbr = _rop64(g1, g0, cbr << h)
    return _pick(vb >> _U2, k, vb, vbl, vbr, out, wide)


@njit(nogil=True, cache=True)
def _to_decimal32(q, c, wide):
    out = c & _U1
    cb = c << _U2
    cbr = cb + _U2
    if c != _F32_CMIN or q == -149:
        cbl = cb - _U2
        k = _flog10pow2(q)
    else:
        cbl = cb - _U1
        k = _flog10_three_quarters_pow2(q)
    h = np.uint64(q + ((-k * 913124641741) >> 38) + 33)
    g = _G1[k - K_MIN] + _U1
    vb = _rop32(g, cb << h)
    vbl = _rop32(g, cbl << h)
    vbr = _rop32(g, cbr << h)
    return _pick(vb >> _U2, k, vb, vbl, vbr, out, wide)


@njit(nogil=True, cache=True)
def shortest_digits(bits, single):
    """``(f, e)`` with ``f * 10**e`` the shortest decimal that reads back as
    the finite, non-zero, sign-stripped float whose IEEE bits are ``bits``
    (float32 bits when ``single``). ``f`` may carry trailing zeros.

    >>> shortest_digits(np.uint64(1), False)  # the smallest subnormal, 5e-324
    (5, -324)
    """
    if single:
        t = bits & _F32_FRAC
        bq = np.int64(bits >> _U23) & 0xFF
        if bq != 0:
            mq = 150 - bq
            c = _F32_CMIN | t
            if 0 < mq < 24:  # an integer: print it as is
                f = c >> np.uint64(mq)
                if (f << np.uint64(mq)) == c:
                    return f, np.int64(0)
            return _to_decimal32(-mq, c, False)
        return _to_decimal32(np.int64(-149), t, True)
    t = bits & _F64_FRAC
    bq = np.int64(bits >> _U52) & 0x7FF
    if bq != 0:
        mq = 1075 - bq
        c = _F64_CMIN | t
        if 0 < mq < 53:
            f = c >> np.uint64(mq)
            if (f << np.uint64(mq)) == c:
                return f, np.int64(0)
        return _to_decimal64(-mq, c, False)
    return _to_decimal64(np.int64(-1074), t, True)

