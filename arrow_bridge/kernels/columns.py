"""Column converters: one tokenized column of a span → Arrow layout buffers.

Two kernels walk rows ``0..nrows`` of column ``col`` and write values plus a
validity bitmap into caller-allocated arrays: :func:`convert_fixed` for every
fixed-width type (selected by ``kind``) and :func:`convert_strings`. A field that does not
convert stops the kernel with ``BAD_VALUE`` and its row; the caller then tries
the next inferred type or reports the error. Null slots hold zeros, so the
buffers are identical whichever path produced them.

``span`` is ``(buf, row_starts, ends, flags, nrows, capacity, dialect,
scratch)`` in the tokenizer's column-major layout; ``nulls`` is a spelling set (see :mod:`.fields`).
"""
import numpy as np

from arrow_bridge.jit import njit
from arrow_bridge.kernels.fields import (in_spelling_set, mark_valid_before, parse_bool, set_valid, spelling_addresses,
                                         unescape)
from arrow_bridge.kernels.status import (
    BAD_VALUE,
    COMPLEX,
    BOOLS_CONVERTED,
    FLOATS_CONVERTED,
    INTS_CONVERTED,
    N_COUNTERS,
    NULLS,
    OK,
    QUOTED,
    STRING_BYTES,
    TEMPORALS_CONVERTED,
)
from arrow_bridge.numbers.parse_dates import in_column_unit, parse_date, parse_time, parse_timestamp
from arrow_bridge.numbers.parse_floats import pandas_refuses, parse_float32, parse_float64
from arrow_bridge.numbers.parse_ints import integer_text_past_int64, parse_signed, parse_unsigned


# Kind codes for convert_fixed.
NULL, SIGNED, UNSIGNED, FLOAT, BOOL, DATE, TIME, TIMESTAMP = range(8)
_COUNTER_OF_KIND = (NULLS, INTS_CONVERTED, INTS_CONVERTED, FLOATS_CONVERTED, BOOLS_CONVERTED,
                    TEMPORALS_CONVERTED, TEMPORALS_CONVERTED, TEMPORALS_CONVERTED)

_INT64_MAX = np.uint64(2**63 - 1)

# Why one kernel with a field prologue written out in its loop: in Numba,
# handing the span's or spelling sets' tuples of arrays to a helper inside the
# row loop adds reference-count traffic per field (measured: 17 ns per integer
# written like this, 40-50 ns through helpers). ``kind`` is loop-invariant, so
# its branches cost next to nothing.


@njit(nogil=True, cache=True, error_model="numpy")
def convert_fixed(span, col, nulls, quoted_nulls, kind, params, trues, falses, out, bits, validity,
                  counters):
    """Converts one column into fixed-width values.

    ``kind``/``params``: ``NULL`` (every field must be a null spelling),
    ``SIGNED`` ``(bits, pandas_ints, 0)``, ``UNSIGNED`` ``(bits, pandas_ints, pandas_inferring)`` (with
    ``pandas_inferring`` a value past int64 with a blank after its digits is refused: pandas' int64
    try sees no integer there, and reads the column as floats), ``FLOAT`` ``(decimal_point,
    no_big_ints, pandas_floats)`` (with ``no_big_ints`` an integer past int64 is refused; with
    ``pandas_floats`` what pandas' float parser refuses: ``parse_floats.pandas_refuses``)
    (float32 when ``out`` is), ``BOOL`` ``(digits, 0, 0)`` (values go to the bitmap ``bits``;
    ``trues``/``falses`` spelling sets, and ``1``/``0`` with ``digits``), ``DATE``, ``TIME``/``TIMESTAMP``
    ``(max_fraction_digits, zoned, units_per_second)``.

    Returns ``(status, bad_row, null_count)``.
    """
    buf, row_starts, ends, flags, nrows, capacity, dialect, scratch = span
    quote, escape, double_quote = dialect
    null_set, true_set, false_set = spelling_addresses(nulls), spelling_addresses(trues), spelling_addresses(falses)
    buf_at, scratch_at = buf.ctypes.data, scratch.ctypes.data
    p0, p1, p2 = params
    base = col * capacity
    null_count = 0
    for r in range(nrows):
        i = base + r
        flag = flags[i]
        s = row_starts[r] if col == 0 else ends[i - capacity] + 1
        e = ends[i]
        src = buf
        if flag & COMPLEX:
            e = unescape(buf, s, e, quote, escape, double_quote, scratch)
            s = 0
            src = scratch
        elif flag & QUOTED:
            s += 1
            e -= 1
        if not (flag & QUOTED and not quoted_nulls):
            if in_spelling_set(scratch_at if flag & COMPLEX else buf_at, s, e, null_set):
                if null_count == 0:
                    mark_valid_before(validity, r)
                null_count += 1
                if kind != BOOL:
                    out[r] = 0
                continue
        ok = False
        if kind == SIGNED:
            ok, v = parse_signed(src, s, e, p0, p1)
            out[r] = v
        elif kind == UNSIGNED:
            ok, u = parse_unsigned(src, s, e, p0, p1)
            out[r] = u
            if ok and p2 and u > _INT64_MAX and (src[e - 1] == 32 or src[e - 1] == 9):
                ok = False
        elif kind == FLOAT:
            if out.itemsize == 4:
                ok, f32 = parse_float32(src, s, e, np.uint8(p0))
                out[r] = f32
            else:
                ok, f64 = parse_float64(src, s, e, np.uint8(p0))
                out[r] = f64
            if ok and p1 and integer_text_past_int64(src, s, e):  # pandas: no float from it
                ok = False
            if ok and p2 and pandas_refuses(src, s, e):
                ok = False
        elif kind == BOOL:
            ok, truth = parse_bool(scratch_at if flag & COMPLEX else buf_at, s, e, true_set, false_set, p0)
            if truth:
                set_valid(bits, r)
        elif kind == DATE:
            ok, days = parse_date(src, s, e)
            out[r] = days
        elif kind == TIME:
            ok, secs, nanos, ndigits = parse_time(src, s, e)
            ok, out[r] = in_column_unit(ok, secs, nanos, ndigits, False, p0, p1, p2)
        elif kind == TIMESTAMP:
            ok, secs, nanos, ndigits, has_zone = parse_timestamp(src, s, e)
            ok, out[r] = in_column_unit(ok, secs, nanos, ndigits, has_zone, p0, p1, p2)
        if not ok:
            return BAD_VALUE, r, null_count
        if null_count:  # the bitmap exists only once a null was seen
            set_valid(validity, r)
    counters[_COUNTER_OF_KIND[kind]] += nrows - null_count
    counters[NULLS] += null_count
    return OK, -1, null_count


@njit(nogil=True, cache=True, error_model="numpy")
def first_fitting_rung(span, col, nulls, quoted_nulls, kinds, params, trues, falses, start, sample_rows):
    """The first rung ``>= start`` of a ladder whose kind converts the column's
    first ``sample_rows`` rows (:func:`convert_fixed` itself judges each), or
    the first string rung (``kinds[k] < 0``) when none does.

    A rung that rejects a value of the sample rejects the column, so type
    inference may start here: one call instead of one per rung tried.
    """
    buf, row_starts, ends, flags, nrows, capacity, dialect, scratch = span
    n = min(nrows, sample_rows)
    sample = (buf, row_starts, ends, flags, n, capacity, dialect, scratch)
    ints, floats = np.empty(n, np.int64), np.empty(n, np.float64)
    bits, validity = np.zeros((n + 7) // 8, np.uint8), np.zeros((n + 7) // 8, np.uint8)
    counters = np.zeros(N_COUNTERS, np.int64)  # the sample is converted again: not counted
    for k in range(start, len(kinds)):
        kind = kinds[k]
        if kind < 0:
            return k
        rung_params = (params[k, 0], params[k, 1], params[k, 2])
        if kind == FLOAT:
            status, _, _ = convert_fixed(sample, col, nulls, quoted_nulls, kind, rung_params, trues, falses,
                                         floats, bits, validity, counters)
        else:
            status, _, _ = convert_fixed(sample, col, nulls, quoted_nulls, kind, rung_params, trues, falses,
                                         ints, bits, validity, counters)
        if status == OK:
            return k
    return len(kinds)


@njit(nogil=True, cache=True)
def string_bytes_upper_bound(span, col):
    """Room for the column's values: raw field lengths, less the quotes of plainly
    quoted fields (exact unless a field needs unescaping, which only shrinks it)."""
    _, row_starts, ends, flags, nrows, capacity, _, _ = span
    base = col * capacity
    total = 0
    for r in range(nrows):
        i = base + r
        start = row_starts[r] if col == 0 else ends[i - capacity] + 1
        total += ends[i] - start
        if flags[i] == QUOTED:
            total -= 2
    return total


@njit(nogil=True, cache=True)
def _is_ascii(data, n):
    acc = np.uint8(0)
    for i in range(n):
        acc |= data[i]
    return acc < 128


@njit(nogil=True, cache=True)
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


@njit(nogil=True, cache=True)
def convert_strings(span, col, nulls, use_nulls, quoted_nulls, check_utf8,
                    offsets, data, validity, counters):
    """Strings into Arrow's offsets + data layout.

    With ``check_utf8``, an invalid value stops with ``BAD_VALUE`` at its row.
    Returns ``(status, bad_row, null_count)``; ``offsets[nrows]`` is the data size.
    """
    buf, row_starts, ends, flags, nrows, capacity, dialect, scratch = span
    quote, escape, double_quote = dialect
    base = col * capacity
    null_set = spelling_addresses(nulls)
    buf_at, data_at = buf.ctypes.data, data.ctypes.data
    n = 0
    null_count = 0
    offsets[0] = 0
    for r in range(nrows):
        i = base + r
        flag = flags[i]
        s = row_starts[r] if col == 0 else ends[i - capacity] + 1
        e = ends[i]
        if flag & COMPLEX:  # unescape straight into the output
            length = unescape(buf, s, e, quote, escape, double_quote, data[n:])
            s, e = n, n + length
        elif flag & QUOTED:
            s += 1
            e -= 1
        if use_nulls and not (flag & QUOTED and not quoted_nulls):
            if in_spelling_set(data_at if flag & COMPLEX else buf_at, s, e, null_set):
                if null_count == 0:
                    mark_valid_before(validity, r)
                null_count += 1
                offsets[r + 1] = n
                continue
        if not flag & COMPLEX:
            for k in range(s, e):
                data[n + k - s] = buf[k]
        n += e - s
        offsets[r + 1] = n
        if null_count:
            set_valid(validity, r)
    if check_utf8 and not _is_ascii(data, n):
        for r in range(nrows):
            if not utf8_valid(data, offsets[r], offsets[r + 1]):
                return BAD_VALUE, r, null_count
    counters[STRING_BYTES] += n
    counters[NULLS] += null_count
    return OK, -1, null_count
