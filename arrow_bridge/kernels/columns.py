"""Column converters: one tokenized column of a span → Arrow layout buffers.

Each converter walks rows ``0..nrows`` of column ``col`` and writes values
plus a validity bitmap into caller-allocated arrays. A field that does not
convert stops the kernel with ``BAD_VALUE`` and its row; the caller then tries
the next inferred type or reports the error. Null slots hold zeros, so the
buffers are identical whichever path produced them.

``span`` is ``(buf, starts, ends, flags, nrows, ncols, dialect, scratch)`` as
made by the tokenizer (field ``(r, c)`` at flat index ``r * ncols + c``); ``nulls`` is a spelling set (see :mod:`.fields`).
"""
import numba as nb
import numpy as np

from arrow_bridge.kernels.fields import field_value, in_spelling_set, set_valid
from arrow_bridge.kernels.floats import parse_float32, parse_float64
from arrow_bridge.kernels.ints import parse_signed, parse_unsigned
from arrow_bridge.kernels.temporal import parse_date, parse_time, parse_timestamp, to_unit
from arrow_bridge.kernels.status import (
    BAD_VALUE,
    BOOLS_CONVERTED,
    FLOATS_CONVERTED,
    INTS_CONVERTED,
    NULLS,
    OK,
    QUOTED,
    STRING_BYTES,
    TEMPORALS_CONVERTED,
)


@nb.njit(nogil=True, cache=True, inline="always")
def _value(span, row, col):
    """``(flag, src, start, end)``: the decoded bytes of one field."""
    buf, starts, ends, flags, _, ncols, dialect, scratch = span
    i = row * ncols + col
    flag = flags[i]
    src, s, e = field_value(buf, starts[i], ends[i], flag, dialect, scratch)
    return flag, src, s, e


@nb.njit(nogil=True, cache=True, inline="always")
def _is_null(flag, src, start, end, nulls, quoted_nulls):
    if (flag & QUOTED) and not quoted_nulls:
        return False
    return in_spelling_set(src, start, end, nulls)


@nb.njit(nogil=True, cache=True)
def _finish(counters, slot, converted, null_count):
    counters[slot] += converted
    counters[NULLS] += null_count
    return OK, -1, null_count


@nb.njit(nogil=True, cache=True)
def all_null(span, col, nulls, quoted_nulls):
    """``(status, bad_row)``: whether every field of the column is a null spelling."""
    for r in range(span[4]):
        flag, src, s, e = _value(span, r, col)
        if not _is_null(flag, src, s, e, nulls, quoted_nulls):
            return BAD_VALUE, r
    return OK, -1


@nb.njit(nogil=True, cache=True)
def convert_ints(span, col, nulls, quoted_nulls, bits, out, validity, counters):
    """Signed ``bits``-wide integers into ``out`` (int8..int64)."""
    null_count = 0
    for r in range(span[4]):
        flag, src, s, e = _value(span, r, col)
        if _is_null(flag, src, s, e, nulls, quoted_nulls):
            out[r] = 0
            null_count += 1
            continue
        ok, v = parse_signed(src, s, e, bits)
        if not ok:
            return BAD_VALUE, r, null_count
        out[r] = v
        set_valid(validity, r)
    return _finish(counters, INTS_CONVERTED, span[4] - null_count, null_count)


@nb.njit(nogil=True, cache=True)
def convert_uints(span, col, nulls, quoted_nulls, bits, out, validity, counters):
    """Unsigned ``bits``-wide integers into ``out`` (uint8..uint64)."""
    null_count = 0
    for r in range(span[4]):
        flag, src, s, e = _value(span, r, col)
        if _is_null(flag, src, s, e, nulls, quoted_nulls):
            out[r] = 0
            null_count += 1
            continue
        ok, v = parse_unsigned(src, s, e, bits)
        if not ok:
            return BAD_VALUE, r, null_count
        out[r] = v
        set_valid(validity, r)
    return _finish(counters, INTS_CONVERTED, span[4] - null_count, null_count)


@nb.njit(nogil=True, cache=True)
def convert_floats(span, col, nulls, quoted_nulls, decimal_point, single, out, validity, counters):
    """Correctly rounded floats into ``out`` (float32 when ``single``)."""
    null_count = 0
    for r in range(span[4]):
        flag, src, s, e = _value(span, r, col)
        if _is_null(flag, src, s, e, nulls, quoted_nulls):
            out[r] = 0
            null_count += 1
            continue
        if single:
            ok, v32 = parse_float32(src, s, e, decimal_point)
            out[r] = v32
        else:
            ok, v64 = parse_float64(src, s, e, decimal_point)
            out[r] = v64
        if not ok:
            return BAD_VALUE, r, null_count
        set_valid(validity, r)
    return _finish(counters, FLOATS_CONVERTED, span[4] - null_count, null_count)


@nb.njit(nogil=True, cache=True)
def convert_bools(span, col, nulls, quoted_nulls, trues, falses, out_bits, validity, counters):
    """Booleans (true/false spelling sets) into the bit-packed ``out_bits``."""
    null_count = 0
    for r in range(span[4]):
        flag, src, s, e = _value(span, r, col)
        if _is_null(flag, src, s, e, nulls, quoted_nulls):
            null_count += 1
            continue
        if in_spelling_set(src, s, e, trues):
            set_valid(out_bits, r)
        elif not in_spelling_set(src, s, e, falses):
            return BAD_VALUE, r, null_count
        set_valid(validity, r)
    return _finish(counters, BOOLS_CONVERTED, span[4] - null_count, null_count)


@nb.njit(nogil=True, cache=True)
def string_bytes_upper_bound(span, col):
    """Sum of the column's raw field lengths: enough room for its values."""
    _, starts, ends, _, nrows, ncols, _, _ = span
    total = 0
    for r in range(nrows):
        total += ends[r * ncols + col] - starts[r * ncols + col]
    return total


@nb.njit(nogil=True, cache=True)
def _is_ascii(data, n):
    acc = np.uint8(0)
    for i in range(n):
        acc |= data[i]
    return acc < 128


@nb.njit(nogil=True, cache=True)
def utf8_valid(src, start, end):
    """Whether ``src[start:end]`` is well-formed UTF-8 (no overlongs or surrogates)."""
    i = start
    while i < end:
        c = src[i]
        if c < 0x80:
            i += 1
            continue
        if 0xC2 <= c <= 0xDF:
            n, lo, hi = 1, 0x80, 0xBF
        elif 0xE0 <= c <= 0xEF:
            n = 2
            lo = 0xA0 if c == 0xE0 else 0x80
            hi = 0x9F if c == 0xED else 0xBF
        elif 0xF0 <= c <= 0xF4:
            n = 3
            lo = 0x90 if c == 0xF0 else 0x80
            hi = 0x8F if c == 0xF4 else 0xBF
        else:
            return False
        if i + n >= end:
            return False
        if src[i + 1] < lo or src[i + 1] > hi:
            return False
        for k in range(2, n + 1):
            if src[i + k] < 0x80 or src[i + k] > 0xBF:
                return False
        i += n + 1
    return True


@nb.njit(nogil=True, cache=True)
def convert_strings(span, col, nulls, use_nulls, quoted_nulls, check_utf8,
                    offsets, data, validity, counters):
    """Strings into Arrow's offsets + data layout.

    With ``check_utf8``, an invalid value stops with ``BAD_VALUE`` at its row.
    Returns ``(status, bad_row, null_count)``; ``offsets[nrows]`` is the data size.
    """
    n = 0
    null_count = 0
    offsets[0] = 0
    for r in range(span[4]):
        flag, src, s, e = _value(span, r, col)
        if use_nulls and _is_null(flag, src, s, e, nulls, quoted_nulls):
            null_count += 1
            offsets[r + 1] = n
            continue
        for i in range(s, e):
            data[n] = src[i]
            n += 1
        offsets[r + 1] = n
        set_valid(validity, r)
    if check_utf8 and not _is_ascii(data, n):
        for r in range(span[4]):
            if not utf8_valid(data, offsets[r], offsets[r + 1]):
                return BAD_VALUE, r, null_count
    return _finish(counters, STRING_BYTES, n, null_count)


@nb.njit(nogil=True, cache=True)
def convert_dates(span, col, nulls, quoted_nulls, out, validity, counters):
    """``YYYY-MM-DD`` into days since the epoch (date32)."""
    null_count = 0
    for r in range(span[4]):
        flag, src, s, e = _value(span, r, col)
        if _is_null(flag, src, s, e, nulls, quoted_nulls):
            out[r] = 0
            null_count += 1
            continue
        ok, days = parse_date(src, s, e)
        if not ok:
            return BAD_VALUE, r, null_count
        out[r] = days
        set_valid(validity, r)
    return _finish(counters, TEMPORALS_CONVERTED, span[4] - null_count, null_count)


@nb.njit(nogil=True, cache=True)
def convert_times(span, col, nulls, quoted_nulls, max_digits, units_per_second, out, validity, counters):
    """``HH:MM[:SS[.f]]`` into time since midnight, at most ``max_digits`` fraction digits."""
    null_count = 0
    for r in range(span[4]):
        flag, src, s, e = _value(span, r, col)
        if _is_null(flag, src, s, e, nulls, quoted_nulls):
            out[r] = 0
            null_count += 1
            continue
        ok, secs, nanos, ndigits = parse_time(src, s, e)
        if not ok or ndigits > max_digits:
            return BAD_VALUE, r, null_count
        _, out[r] = to_unit(secs, nanos, units_per_second)
        set_valid(validity, r)
    return _finish(counters, TEMPORALS_CONVERTED, span[4] - null_count, null_count)


@nb.njit(nogil=True, cache=True)
def convert_timestamps(span, col, nulls, quoted_nulls, max_digits, zoned, units_per_second,
                       out, validity, counters):
    """ISO-8601 timestamps into int64 units; ``zoned`` requires (else forbids) a zone."""
    null_count = 0
    for r in range(span[4]):
        flag, src, s, e = _value(span, r, col)
        if _is_null(flag, src, s, e, nulls, quoted_nulls):
            out[r] = 0
            null_count += 1
            continue
        ok, secs, nanos, ndigits, has_zone = parse_timestamp(src, s, e)
        if not ok or ndigits > max_digits or has_zone != zoned:
            return BAD_VALUE, r, null_count
        ok, value = to_unit(secs, nanos, units_per_second)
        if not ok:
            return BAD_VALUE, r, null_count
        out[r] = value
        set_valid(validity, r)
    return _finish(counters, TEMPORALS_CONVERTED, span[4] - null_count, null_count)
