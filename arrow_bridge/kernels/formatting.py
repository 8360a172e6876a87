"""Arrow columns -> CSV text kernels: the writer's StorageApp (Morpheus MWRITE).

One call formats one *batch*: a self-describing byte buffer that carries the
dialect, the column names and the Arrow buffers of every column (layout
below). The host builds it (``arrow_bridge.writer``), then either calls
:func:`format_batch` itself or sends the buffer as an MWRITE's input to the
app from :func:`csv_format_app`, which runs the very same code inside the
(emulated) device. The app dereferences nothing but its input, its output and
its instance state, so the batch holds copies of the buffers, never pointers.

Rules (the same as the reader's kernels): ``nopython``/``nogil``, no Python
object per value, nothing allocated, never a write past ``out``'s capacity,
a status instead of an exception:

* ``OK`` — the text ends at the returned position;
* ``OUT_OF_SPACE`` — ``out`` was too small; the returned position is the size
  the call needs (formatting carries on counting when the buffer is full, so
  one retry with that size always fits);
* ``BAD_VALUE`` — a value CSV cannot carry (a date outside years 0000-9999, a
  time of day outside [0, 24 h)), or a malformed batch: the third result is
  the bad field's index ``row * n_cols + col`` (-1 for a malformed layout).

Work counters (``arrow_bridge.kernels.status`` slots) are added only on OK:
BYTES_SCANNED (batch bytes read), ROWS, FIELDS, SPANS (one per batch), INTS,
FLOATS, BOOLS and TEMPORALS converted, STRING_BYTES copied, NULLS.

Text produced (``sep``/``quote`` are the dialect's bytes):

* integers: decimal; bool: ``true``/``false``;
* floats: the shortest decimal that parses back to the same bits, the closest
  one when several are as short (Schubfach, Giulietti 2020: exact 64x128-bit
  integer arithmetic, no float operation; subnormals search every length
  since their rounding intervals are wide), spelled like Python's
  ``repr`` (``0.1``, ``1.0``, ``1e+16``, ``5e-324``); float32 gets the
  shortest float32 digits; ``inf``/``-inf``; NaN is ``NAN``/``-NAN`` (the
  lower-case and mixed-case spellings are pyarrow null values);
* date32 ``YYYY-MM-DD``; timestamps ``YYYY-MM-DDTHH:MM:SS`` plus a fraction of
  exactly the unit's digits (none for seconds) and ``Z`` for zoned types (the
  UTC instant); times ``HH:MM:SS`` plus the unit's fraction digits;
* string/binary bytes verbatim, quoted (quote chars doubled) when they contain
  ``sep``, the quote char, CR or LF, are empty, or equal a null spelling;
* null: the ``na_rep`` bytes (unquoted); columns flagged NULL_QUOTED write
  ``""`` instead (a one-column table, whose empty null would be a blank line).

Batch layout (little-endian; all offsets in bytes from the buffer start, every
section 8-byte aligned, total length a multiple of 8)::

    int64 header[HEADER_WORDS]          H_* slots below
    int64 columns[n_cols][COL_WORDS]    C_* slots below
    sections: na_rep bytes; null spellings (int64 offsets[k+1] + bytes);
              names (int64 offsets[n_cols+1] + bytes); per column: validity
              bits, values (fixed width or bits), offsets (strings) + bytes

Validity and bool values are Arrow bitmaps with a starting bit (the array's
offset % 8); string offsets are the Arrow offsets as they are, with C_BASE the
first one (so the host copies buffers and never rewrites them).

Example (host side)::

    >>> from arrow_bridge.kernels.formatting import format_batch  # doctest: +SKIP
    >>> status, end, bad = format_batch(batch_bytes, out, 0, counters)
"""
from __future__ import annotations

import numba as nb
import numpy as np

from arrow_bridge.kernels.status import (
    BAD_VALUE,
    BOOLS_CONVERTED,
    BYTES_SCANNED,
    FIELDS,
    FLOATS_CONVERTED,
    INTS_CONVERTED,
    N_COUNTERS,
    NULLS,
    OK,
    OUT_OF_SPACE,
    ROWS,
    SPANS,
    STRING_BYTES,
    TEMPORALS_CONVERTED,
)

# --------------------------------------------------------------------------
# Batch layout.
# --------------------------------------------------------------------------
MAGIC = int.from_bytes(b"NDPCSV01", "little")
LAYOUT_VERSION = 1
MAX_BATCH_ROWS = 1 << 24  # bounds the work a (possibly malformed) batch can ask for

# Header words.
H_MAGIC, H_VERSION, H_FLAGS, H_ROWS, H_COLS = 0, 1, 2, 3, 4
H_SEP, H_QUOTE, H_LT_LEN, H_LT0, H_LT1 = 5, 6, 7, 8, 9
H_NA_OFF, H_NA_LEN = 10, 11
H_NS_COUNT, H_NS_OFFSETS, H_NS_DATA = 12, 13, 14  # null spellings to quote
H_NAMES_OFFSETS, H_NAMES_DATA = 15, 16
H_TOTAL = 17
HEADER_WORDS = 18

# Header flags.
F_HEADER_LINE = 1  # write the column names first
F_LAST = 2  # the last batch: the device app flushes its partial page

# Column descriptor words.
C_KIND, C_WIDTH, C_AUX, C_FLAGS = 0, 1, 2, 3
C_VALID_OFF, C_VALID_BIT = 4, 5
C_VALUES_OFF, C_VALUES_BIT = 6, 7
C_BASE, C_DATA_OFF, C_DATA_LEN = 8, 9, 10
COL_WORDS = 11

# Column kinds (C_WIDTH: value bytes; for K_BYTES the offset width).
K_NULL, K_INT, K_UINT, K_FLOAT, K_BOOL, K_DATE32, K_TIMESTAMP, K_TIME, K_BYTES = range(9)
N_KINDS = 9

# Column flags.
CF_VALIDITY = 1  # a validity bitmap is present
CF_UTC = 2  # zoned timestamp: append "Z"
CF_NULL_QUOTED = 4  # write a null as "" (quoted empty) instead of na_rep

# Device app instance state: int64 tail length, int64 batches seen, tail bytes.
STATE_HEADER = 16

# --------------------------------------------------------------------------
# Constants. uint64 constants are NumPy scalars on purpose: in Numba, mixing
# uint64 with a plain (int64) literal silently promotes to float64.
# --------------------------------------------------------------------------
_U0 = np.uint64(0)
_U1 = np.uint64(1)
_U2 = np.uint64(2)
_U10 = np.uint64(10)
_U31 = np.uint64(31)
_U32 = np.uint64(32)
_U63 = np.uint64(63)
_MASK32 = np.uint64(0xFFFFFFFF)
_MASK63 = np.uint64((1 << 63) - 1)
_F64_FRAC = np.uint64((1 << 52) - 1)
_F64_CMIN = np.uint64(1 << 52)
_F64_SIGN = np.uint64(1 << 63)
_F32_FRAC = np.uint64((1 << 23) - 1)
_F32_CMIN = np.uint64(1 << 23)
_U52 = np.uint64(52)
_U23 = np.uint64(23)
_U100 = np.uint64(100)
_U1E4 = np.uint64(10_000)
_U1E8 = np.uint64(100_000_000)

_POW10_U64 = np.array([10**i for i in range(20)], dtype=np.uint64)
_POW10_I64 = np.array([10**i for i in range(19)], dtype=np.int64)
# "00" "01" ... "99": two digits per table step.
_DIGIT_PAIRS = np.frombuffer("".join(f"{i:02d}" for i in range(100)).encode(), dtype=np.uint8).copy()

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
@nb.njit(nogil=True, cache=True)
def _mulhi(a, b):
    """High 64 bits of the 128-bit product of two uint64 (32-bit limbs)."""
    a0, a1 = a & _MASK32, a >> _U32
    b0, b1 = b & _MASK32, b >> _U32
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    mid = (p00 >> _U32) + (p01 & _MASK32) + (p10 & _MASK32)
    return p11 + (p01 >> _U32) + (p10 >> _U32) + (mid >> _U32)


@nb.njit(nogil=True, cache=True)
def _rop64(g1, g0, cp):
    """Round-to-odd of ``g * cp / 2**127`` (g = g1 * 2**63 + g0)."""
    x1 = _mulhi(g0, cp)
    y0 = g1 * cp  # wraps: only the low word is wanted
    y1 = _mulhi(g1, cp)
    z = (y0 >> _U1) + x1
    vbp = y1 + (z >> _U63)
    return vbp | (((z & _MASK63) + _MASK63) >> _U63)


@nb.njit(nogil=True, cache=True)
def _rop32(g, cp):
    """Round-to-odd of ``g * cp / 2**95`` (float32: one 64-bit word of g)."""
    x1 = _mulhi(g, cp)
    vbp = x1 >> _U31
    return vbp | (((x1 & _MASK32) + _MASK32) >> _U32)


@nb.njit(nogil=True, cache=True)
def _flog10pow2(q):
    return (q * 661971961083) >> 41


@nb.njit(nogil=True, cache=True)
def _flog10_three_quarters_pow2(q):
    return (q * 661971961083 - 274743187321) >> 41


@nb.njit(nogil=True, cache=True)
def _in_interval(x, vbl, vbr, out):
    """Whether ``x * 10**k`` lies in the rounding interval (bounds included
    exactly when the significand is even, as round-half-even reads them)."""
    return vbl + out <= (x << _U2) and (x << _U2) + out <= vbr


@nb.njit(nogil=True, cache=True)
def _closer(lo, hi, vb):
    """``lo`` or ``hi``, whichever is closer to the value (ties: even ``lo``)."""
    cmp = np.int64(vb) - np.int64((lo + hi) << _U1)
    return lo if cmp < 0 or (cmp == 0 and (lo & _U1) == _U0) else hi


@nb.njit(nogil=True, cache=True)
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


@nb.njit(nogil=True, cache=True)
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


@nb.njit(nogil=True, cache=True)
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


@nb.njit(nogil=True, cache=True)
def shortest_digits(bits, single):
    """``(f, e)`` with ``f * 10**e`` the shortest decimal that reads back as
    the finite, non-zero, sign-stripped float whose IEEE bits are ``bits``
    (float32 bits when ``single``). ``f`` may carry trailing zeros."""
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


# --------------------------------------------------------------------------
# Byte writers. Each field writer computes the field's length first and
# writes only if it fits; either way it returns the position after the field,
# so a full buffer turns the rest of the call into a size count.
# --------------------------------------------------------------------------
@nb.njit(nogil=True, cache=True, inline="always")
def _n_digits(v):
    """Decimal digits of a uint64 (1 for 0)."""
    n = 1
    while n < 20 and v >= _POW10_U64[n]:
        n += 1
    return n


@nb.njit(nogil=True, cache=True, inline="always")
def _digits_rtl(out, end, v, count):
    """Write the low ``count`` digits of uint64 ``v`` ending before ``end``;
    returns ``v`` without them."""
    p = end
    while count >= 2:
        r = np.int64(v % _U100)
        v = v // _U100
        p -= 2
        out[p] = _DIGIT_PAIRS[2 * r]
        out[p + 1] = _DIGIT_PAIRS[2 * r + 1]
        count -= 2
    if count == 1:
        p -= 1
        out[p] = 48 + np.int64(v % _U10)
        v = v // _U10
    return v


@nb.njit(nogil=True, cache=True, inline="always")
def _put_fixed(out, p, v, width):
    """Write int64 ``0 <= v < 10**width`` as exactly ``width`` digits."""
    _digits_rtl(out, p + width, np.uint64(v), width)


@nb.njit(nogil=True, cache=True, inline="always")
def _fmt_uint(out, pos, cap, m, negative):
    """A magnitude (uint64) with an optional minus sign."""
    n = _n_digits(m)
    end = pos + n + (1 if negative else 0)
    if end <= cap:
        if negative:
            out[pos] = 45
        _digits_rtl(out, end, m, n)
    return end


@nb.njit(nogil=True, cache=True, inline="always")
def _fmt_int(out, pos, cap, v):
    if v < 0:
        return _fmt_uint(out, pos, cap, np.uint64(-(v + 1)) + _U1, True)  # no overflow at int64 min
    return _fmt_uint(out, pos, cap, np.uint64(v), False)


@nb.njit(nogil=True, cache=True, inline="always")
def _fmt_word(out, pos, cap, negative, w0, w1, w2, w3, w4, n):
    """A short fixed word (up to 5 bytes) with an optional minus sign."""
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


@nb.njit(nogil=True, cache=True, inline="always")
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


@nb.njit(nogil=True, cache=True)
def _fmt_float(out, pos, cap, bits, single):
    """IEEE bits (float64, or float32 when ``single``) as round-trip text."""
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
        return _fmt_word(out, pos, cap, negative, 78, 65, 78, 0, 0, 3)
    if special:
        return _fmt_word(out, pos, cap, negative, 105, 110, 102, 0, 0, 3)
    if mag == _U0:
        return _fmt_word(out, pos, cap, negative, 48, 46, 48, 0, 0, 3)
    f, e = shortest_digits(mag, single)
    f, e = _strip_zeros(f, e)
    n = _n_digits(f)
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
            _digits_rtl(out, end, f, n)
        elif decpt >= n:  # ddd000.0
            _digits_rtl(out, p + n, f, n)
            for i in range(decpt - n):
                out[p + n + i] = 48
            out[end - 2] = 46
            out[end - 1] = 48
        else:  # dd.ddd
            f = _digits_rtl(out, end, f, n - decpt)
            out[p + decpt] = 46
            _digits_rtl(out, p + decpt, f, decpt)
    else:  # d.ddde+XX
        x = decpt - 1
        ax = -x if x < 0 else x
        xd = 2 if ax < 100 else 3
        mant_end = end - xd - 2
        if n > 1:
            f = _digits_rtl(out, mant_end, f, n - 1)
            out[p + 1] = 46
        out[p] = 48 + np.int64(f)
        out[mant_end] = 101
        out[mant_end + 1] = 45 if x < 0 else 43
        _put_fixed(out, mant_end + 2, ax, xd)
    return end


@nb.njit(nogil=True, cache=True)
def _civil(days):
    """Proleptic Gregorian ``(year, month, day)`` of days since 1970-01-01
    (H. Hinnant's algorithm; floor division keeps it right before 1970)."""
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    y = yoe + era * 400 + (1 if m <= 2 else 0)
    return y, m, d


# Days from 1970-01-01 to 0000-01-01 and to 10000-01-01: pyarrow reads 4-digit years only.
_MIN_DAY = -719528
_END_DAY = 2932897


@nb.njit(nogil=True, cache=True)
def _put_date(out, p, days):
    y, m, d = _civil(days)
    _put_fixed(out, p, y, 4)
    out[p + 4] = 45
    _put_fixed(out, p + 5, m, 2)
    out[p + 7] = 45
    _put_fixed(out, p + 8, d, 2)


@nb.njit(nogil=True, cache=True)
def _put_clock(out, p, seconds, frac, digits):
    """``HH:MM:SS`` and, when ``digits``, ``.`` and ``frac`` in that many digits."""
    _put_fixed(out, p, seconds // 3600, 2)
    out[p + 2] = 58
    _put_fixed(out, p + 3, (seconds // 60) % 60, 2)
    out[p + 5] = 58
    _put_fixed(out, p + 6, seconds % 60, 2)
    if digits > 0:
        out[p + 8] = 46
        _put_fixed(out, p + 9, frac, digits)


@nb.njit(nogil=True, cache=True)
def _fmt_date(out, pos, cap, days):
    """``(ok, end)``: not ok outside years 0000-9999."""
    if days < _MIN_DAY or days >= _END_DAY:
        return False, pos
    end = pos + 10
    if end <= cap:
        _put_date(out, pos, days)
    return True, end


@nb.njit(nogil=True, cache=True, inline="always")
def _floor_div_pow10(v, digits):
    """``v // 10**digits`` for digits in (0, 3, 6, 9); constant divisors turn
    into multiplications, a variable one into a slow hardware divide."""
    if digits == 9:
        return v // 1_000_000_000
    if digits == 6:
        return v // 1_000_000
    if digits == 3:
        return v // 1_000
    return v


@nb.njit(nogil=True, cache=True)
def _fmt_timestamp(out, pos, cap, v, digits, utc):
    seconds = _floor_div_pow10(v, digits)  # floor: 1969-12-31T23:59:59.9 is -1 s + 0.9
    frac = v - seconds * _POW10_I64[digits]
    days = seconds // 86400
    if days < _MIN_DAY or days >= _END_DAY:
        return False, pos
    end = pos + 19 + (digits + 1 if digits > 0 else 0) + (1 if utc else 0)
    if end <= cap:
        _put_date(out, pos, days)
        out[pos + 10] = 84  # 'T': no space, so a space delimiter stays safe
        _put_clock(out, pos + 11, seconds - days * 86400, frac, digits)
        if utc:
            out[end - 1] = 90
    return True, end


@nb.njit(nogil=True, cache=True)
def _fmt_time(out, pos, cap, v, digits):
    per = _POW10_I64[digits]
    if v < 0 or v >= 86400 * per:
        return False, pos
    end = pos + 8 + (digits + 1 if digits > 0 else 0)
    if end <= cap:
        seconds = _floor_div_pow10(v, digits)
        _put_clock(out, pos, seconds, v - seconds * per, digits)
    return True, end


@nb.njit(nogil=True, cache=True)
def _is_spelling(src, a, n, batch, words, count, offsets_word, data_off):
    """Whether ``src[a:a+n]`` equals one of the ``count`` spellings."""
    for j in range(count):
        s0 = words[offsets_word + j]
        s1 = words[offsets_word + j + 1]
        if s1 - s0 != n:
            continue
        same = True
        for i in range(n):
            if src[a + i] != batch[data_off + s0 + i]:
                same = False
                break
        if same:
            return True
    return False


@nb.njit(nogil=True, cache=True)
def _fmt_bytes(out, pos, cap, src, a, b, sep, quote, batch, words, spellings):
    """String/binary bytes ``src[a:b]``, quoted when needed (also when equal to
    a null spelling, if ``spellings``)."""
    n = b - a
    if n == 0:
        end = pos + 2
        if end <= cap:
            out[pos] = quote
            out[pos + 1] = quote
        return end
    n_quotes = 0
    special = False
    for i in range(a, b):
        ch = src[i]
        if ch == quote:
            n_quotes += 1
        elif ch == sep or ch == 10 or ch == 13:
            special = True
    needs = special or n_quotes > 0
    if not needs and spellings and words[H_NS_COUNT] > 0:
        # Quoting keeps a value that spells a null a string for readers with
        # strings_can_be_null=True and quoted_strings_can_be_null=False.
        needs = _is_spelling(src, a, n, batch, words, words[H_NS_COUNT],
                             words[H_NS_OFFSETS] // 8, words[H_NS_DATA])
    if not needs:
        end = pos + n
        if end <= cap:
            out[pos:end] = src[a:b]
        return end
    end = pos + n + n_quotes + 2
    if end <= cap:
        out[pos] = quote
        p = pos + 1
        if n_quotes == 0:
            out[p:p + n] = src[a:b]
        else:
            for i in range(a, b):
                ch = src[i]
                out[p] = ch
                p += 1
                if ch == quote:
                    out[p] = quote
                    p += 1
        out[end - 1] = quote
    return end


# --------------------------------------------------------------------------
# Layout checks: the device app trusts nothing in its input.
# --------------------------------------------------------------------------
@nb.njit(nogil=True, cache=True)
def _section_ok(total, off, length, align):
    return 0 <= off <= total and 0 <= length <= total - off and off % align == 0


@nb.njit(nogil=True, cache=True)
def _offsets_ok(batch, words, count, offsets_off, data_off, data_len):
    """An int64 offsets section of ``count + 1`` non-decreasing entries from 0
    to at most ``data_len``, and its data section, inside the batch."""
    total = batch.size
    if count < 0 or count > total or not _section_ok(total, offsets_off, 8 * (count + 1), 8):
        return False
    if not _section_ok(total, data_off, data_len, 1):
        return False
    w = offsets_off // 8
    if words[w] != 0:
        return False
    for j in range(count):
        if words[w + j + 1] < words[w + j] or words[w + j + 1] > data_len:
            return False
    return True


@nb.njit(nogil=True, cache=True)
def _column_ok(words, d, n_rows, total):
    kind, width, aux, flags = words[d + C_KIND], words[d + C_WIDTH], words[d + C_AUX], words[d + C_FLAGS]
    if kind < 0 or kind >= N_KINDS:
        return False
    if flags & CF_VALIDITY:
        bit = words[d + C_VALID_BIT]
        if bit < 0 or bit > 7 or not _section_ok(total, words[d + C_VALID_OFF], (bit + n_rows + 7) // 8, 1):
            return False
    if kind == K_NULL:
        return True
    if kind == K_BOOL:
        bit = words[d + C_VALUES_BIT]
        return 0 <= bit <= 7 and _section_ok(total, words[d + C_VALUES_OFF], (bit + n_rows + 7) // 8, 1)
    if kind == K_BYTES:
        if width != 4 and width != 8:
            return False
        if n_rows == 0:
            return True
        return (words[d + C_BASE] >= 0
                and _section_ok(total, words[d + C_VALUES_OFF], width * (n_rows + 1), width)
                and _section_ok(total, words[d + C_DATA_OFF], words[d + C_DATA_LEN], 1))
    if kind == K_INT or kind == K_UINT:
        if width != 1 and width != 2 and width != 4 and width != 8:
            return False
    elif kind == K_FLOAT:
        if width != 4 and width != 8:
            return False
    elif kind == K_DATE32:
        if width != 4:
            return False
    elif kind == K_TIMESTAMP:
        if width != 8 or (aux != 0 and aux != 3 and aux != 6 and aux != 9):
            return False
    elif kind == K_TIME:
        if not ((width == 4 and (aux == 0 or aux == 3)) or (width == 8 and (aux == 6 or aux == 9))):
            return False
    return _section_ok(total, words[d + C_VALUES_OFF], width * n_rows, width)


@nb.njit(nogil=True, cache=True)
def layout_ok(batch):
    """Whether ``batch`` is a well-formed batch whose every section lies inside it."""
    total = batch.size
    if total % 8 != 0 or total < 8 * HEADER_WORDS:
        return False
    words = batch.view(np.int64)
    n_rows, n_cols = words[H_ROWS], words[H_COLS]
    if words[H_MAGIC] != MAGIC or words[H_VERSION] != LAYOUT_VERSION or words[H_TOTAL] != total:
        return False
    if n_rows < 0 or n_rows > MAX_BATCH_ROWS or n_cols < 0 or n_cols > total // (8 * COL_WORDS):
        return False
    if 8 * (HEADER_WORDS + n_cols * COL_WORDS) > total:
        return False
    for w in (H_SEP, H_QUOTE, H_LT0, H_LT1):
        if words[w] < 0 or words[w] > 255:
            return False
    if words[H_LT_LEN] < 1 or words[H_LT_LEN] > 2:
        return False
    if not _section_ok(total, words[H_NA_OFF], words[H_NA_LEN], 1):
        return False
    ns_data, names_data = words[H_NS_DATA], words[H_NAMES_DATA]
    if not _offsets_ok(batch, words, words[H_NS_COUNT], words[H_NS_OFFSETS], ns_data, total - ns_data):
        return False
    if not _offsets_ok(batch, words, n_cols, words[H_NAMES_OFFSETS], names_data, total - names_data):
        return False
    for c in range(n_cols):
        if not _column_ok(words, HEADER_WORDS + c * COL_WORDS, n_rows, total):
            return False
    return True


# --------------------------------------------------------------------------
# The batch kernel.
# --------------------------------------------------------------------------
@nb.njit(nogil=True, cache=True, inline="always")
def _bit(batch, off, bit, r):
    i = bit + r
    return (batch[off + (i >> 3)] >> (i & 7)) & 1


@nb.njit(nogil=True, cache=True, inline="always")
def _put_byte(out, pos, cap, b):
    if pos < cap:
        out[pos] = b
    return pos + 1


@nb.njit(nogil=True, cache=True, inline="always")
def _put_line_end(out, pos, cap, words):
    pos = _put_byte(out, pos, cap, words[H_LT0])
    if words[H_LT_LEN] == 2:
        pos = _put_byte(out, pos, cap, words[H_LT1])
    return pos


@nb.njit(nogil=True, cache=True, inline="always")
def _fmt_null(out, pos, cap, batch, words, flags):
    if flags & CF_NULL_QUOTED:
        q = words[H_QUOTE]
        pos = _put_byte(out, pos, cap, q)
        return _put_byte(out, pos, cap, q)
    a, n = words[H_NA_OFF], words[H_NA_LEN]
    end = pos + n
    if end <= cap:
        out[pos:end] = batch[a:a + n]
    return end


@nb.njit(nogil=True, cache=True)
def _fmt_header(out, pos, cap, batch, words):
    sep, quote = words[H_SEP], words[H_QUOTE]
    w = words[H_NAMES_OFFSETS] // 8
    data = words[H_NAMES_DATA]
    for c in range(words[H_COLS]):
        if c > 0:
            pos = _put_byte(out, pos, cap, sep)
        # Header names are never read as nulls: no need to quote "NA".
        pos = _fmt_bytes(out, pos, cap, batch, data + words[w + c], data + words[w + c + 1],
                         sep, quote, batch, words, False)
    return _put_line_end(out, pos, cap, words)


@nb.njit(nogil=True, cache=True)
def format_batch(batch, out, start, counters):
    """Format a batch as CSV text into ``out[start:]``.

    Returns ``(status, end, bad_field)``: with OK the text is
    ``out[start:end]``; with OUT_OF_SPACE ``end`` is the capacity needed (from
    ``out[0]``); with BAD_VALUE ``bad_field`` is ``row * n_cols + col`` (-1: a
    malformed batch). Counters are added to only on OK (``counters`` shorter
    than N_COUNTERS is left alone).
    """
    if not layout_ok(batch) or start < 0:
        return BAD_VALUE, start, -1
    words = batch.view(np.int64)
    i8, i16, i32 = batch.view(np.int8), batch.view(np.int16), batch.view(np.int32)
    u16, u32, u64 = batch.view(np.uint16), batch.view(np.uint32), batch.view(np.uint64)
    n_rows, n_cols = words[H_ROWS], words[H_COLS]
    sep, quote = words[H_SEP], words[H_QUOTE]
    cap = out.size
    pos = start
    if n_cols == 0:  # like pyarrow: no columns, no text (not even line ends)
        return OK, pos, -1
    if words[H_FLAGS] & F_HEADER_LINE:
        pos = _fmt_header(out, pos, cap, batch, words)
    ints = floats = bools = temporals = string_bytes = nulls = 0
    for r in range(n_rows):
        for c in range(n_cols):
            if c > 0:
                pos = _put_byte(out, pos, cap, sep)
            d = HEADER_WORDS + c * COL_WORDS
            kind, width, flags = words[d + C_KIND], words[d + C_WIDTH], words[d + C_FLAGS]
            if kind == K_NULL or (flags & CF_VALIDITY and
                                  _bit(batch, words[d + C_VALID_OFF], words[d + C_VALID_BIT], r) == 0):
                nulls += 1
                pos = _fmt_null(out, pos, cap, batch, words, flags)
                continue
            values = words[d + C_VALUES_OFF]
            ok = True
            if kind == K_INT:
                ints += 1
                if width == 8:
                    v = words[values // 8 + r]
                elif width == 4:
                    v = np.int64(i32[values // 4 + r])
                elif width == 2:
                    v = np.int64(i16[values // 2 + r])
                else:
                    v = np.int64(i8[values + r])
                pos = _fmt_int(out, pos, cap, v)
            elif kind == K_FLOAT:
                floats += 1
                if width == 8:
                    pos = _fmt_float(out, pos, cap, u64[values // 8 + r], False)
                else:
                    pos = _fmt_float(out, pos, cap, np.uint64(u32[values // 4 + r]), True)
            elif kind == K_BYTES:
                o0 = words[d + C_BASE]
                if width == 4:
                    a, b = np.int64(i32[values // 4 + r]), np.int64(i32[values // 4 + r + 1])
                else:
                    a, b = words[values // 8 + r], words[values // 8 + r + 1]
                a, b = a - o0, b - o0
                if a < 0 or b < a or b > words[d + C_DATA_LEN]:
                    return BAD_VALUE, pos, r * n_cols + c
                data = words[d + C_DATA_OFF]
                string_bytes += b - a
                pos = _fmt_bytes(out, pos, cap, batch, data + a, data + b, sep, quote, batch, words, True)
            elif kind == K_UINT:
                ints += 1
                if width == 8:
                    m = u64[values // 8 + r]
                elif width == 4:
                    m = np.uint64(u32[values // 4 + r])
                elif width == 2:
                    m = np.uint64(u16[values // 2 + r])
                else:
                    m = np.uint64(batch[values + r])
                pos = _fmt_uint(out, pos, cap, m, False)
            elif kind == K_BOOL:
                bools += 1
                if _bit(batch, values, words[d + C_VALUES_BIT], r):
                    pos = _fmt_word(out, pos, cap, False, 116, 114, 117, 101, 0, 4)
                else:
                    pos = _fmt_word(out, pos, cap, False, 102, 97, 108, 115, 101, 5)
            elif kind == K_TIMESTAMP:
                temporals += 1
                ok, pos = _fmt_timestamp(out, pos, cap, words[values // 8 + r], words[d + C_AUX],
                                         (flags & CF_UTC) != 0)
            elif kind == K_DATE32:
                temporals += 1
                ok, pos = _fmt_date(out, pos, cap, np.int64(i32[values // 4 + r]))
            else:  # K_TIME
                temporals += 1
                v = words[values // 8 + r] if width == 8 else np.int64(i32[values // 4 + r])
                ok, pos = _fmt_time(out, pos, cap, v, words[d + C_AUX])
            if not ok:
                return BAD_VALUE, pos, r * n_cols + c
        pos = _put_line_end(out, pos, cap, words)
    if pos > cap:
        return OUT_OF_SPACE, pos, -1
    if counters.size >= N_COUNTERS:
        counters[BYTES_SCANNED] += batch.size
        counters[ROWS] += n_rows
        counters[FIELDS] += n_rows * n_cols
        counters[SPANS] += 1
        counters[INTS_CONVERTED] += ints
        counters[FLOATS_CONVERTED] += floats
        counters[BOOLS_CONVERTED] += bools
        counters[TEMPORALS_CONVERTED] += temporals
        counters[STRING_BYTES] += string_bytes
        counters[NULLS] += nulls
    return OK, pos, -1


# --------------------------------------------------------------------------
# The MWRITE step: whole pages out, the partial last page kept in the state.
# --------------------------------------------------------------------------
@nb.njit(nogil=True, cache=True)
def _load_i64(buf, off):
    v = np.int64(0)
    for i in range(8):
        v |= np.int64(buf[off + i]) << (8 * i)
    return v


@nb.njit(nogil=True, cache=True)
def _store_i64(buf, off, v):
    for i in range(8):
        buf[off + i] = (v >> (8 * i)) & 0xFF


@nb.njit(nogil=True, cache=True)
def mwrite_step(batch, state, out, counters):
    """One MWRITE of the device path: ``(status, written, bad_field)``.

    The stream is written in whole pages at the command's page, so the app
    keeps the text after the last whole page in its instance state (``tail``)
    and puts it in front of the next batch's text. The batch flagged F_LAST
    flushes everything. ``state`` is ``STATE_HEADER + page_size`` bytes,
    zeroed at MINIT. On any status but OK the engine restores the state, so a
    retry (say with the size OUT_OF_SPACE asked for) starts clean.
    """
    page = state.size - STATE_HEADER
    if page < 1:
        return BAD_VALUE, 0, -1
    tail = _load_i64(state, 0)
    if tail < 0 or tail >= page:
        return BAD_VALUE, 0, -1
    status, end, bad = format_batch(batch, out, tail, counters)
    if status != OK:
        return status, end, bad
    for i in range(tail):  # end <= out.size, so the tail fits
        out[i] = state[STATE_HEADER + i]
    last = (batch.view(np.int64)[H_FLAGS] & F_LAST) != 0
    written = end if last else end - end % page
    keep = end - written
    for i in range(keep):
        state[STATE_HEADER + i] = out[written + i]
    _store_i64(state, 0, keep)
    _store_i64(state, 8, _load_i64(state, 8) + 1)
    return OK, written, -1


def csv_format_app():
    """The writer's StorageApp (a Numba cfunc; ``.address`` goes to MINIT).

    Input: one batch; output 0: the text to store at the command's page
    (whole pages, all of it for the F_LAST batch); state: ``STATE_HEADER +
    page_size`` bytes. Returns OK, OUT_OF_SPACE (output 0's ``written`` holds
    the size needed) or BAD_INPUT (``error_offset`` holds the bad field's
    index, -1 for a malformed batch). Compiled (or loaded from the cache) on
    first use: it lives in its own module so the host path never pays for it.
    """
    from arrow_bridge.kernels.format_app import csv_format

    return csv_format
