"""One pass from CSV bytes to typed column buffers, once the types are known.

The general path tokenizes a span (field ends and flags for every field), then
converts column by column: two passes over memory, and per field a handful of
loads and stores before a value is parsed. Once every column's type is known
(given, or inferred from the first spans) most spans are regular: each record
has the expected fields, values parse in the type's plain form. This kernel
parses such a span in one pass, record by record, straight into the output
buffers, with inline fast paths for integers, floats, dates and strings and
the general per-field parsers for everything else.

It covers what it can answer *exactly as the general path would*, and gives
up (``GIVE_UP``) on anything else: a record with another field count, a value
that does not convert, an escape character, text after a closing quote, a
span without a final line break, more rows than the buffers hold. The caller
then parses the span on the general path, which decides (error, widening,
bad-line policy). Giving up early costs little; a wrong value would cost all.

Column ``j`` of the file has a ``kinds[j]`` (the converters' kind codes, plus
``SKIP`` for unselected columns and ``STRING``) and a ``slots[j]``: its row in
the 2-D output array of its storage class (``i64``, ``i32``, ``f64``,
``bits`` for booleans, ``offsets``/``data`` for strings). 2-D arrays rather
than a tuple of arrays: Numba passes one array per class, with no
reference-count traffic per field.
"""
import numba as nb
import numpy as np

from arrow_bridge.kernels.columns import (
    _mark_valid_before,
    BOOL,
    DATE,
    FLOAT,
    NULL,
    SIGNED,
    TIME,
    TIMESTAMP,
    utf8_valid,
)
from arrow_bridge.kernels.fields import in_spelling_set, spelled
from arrow_bridge.kernels.floats import (
    _DOUBLE,
    _MAX_FAST_MANTISSA64,
    _POW10_F64,
    _SIGN64,
    _bits_to_f64,
    _decimal_to_bits,
    parse_float64,
)
from arrow_bridge.kernels.ints import parse_signed
from arrow_bridge.kernels.status import (
    BOOLS_CONVERTED,
    BYTES_SCANNED,
    FIELDS,
    FLOATS_CONVERTED,
    GIVE_UP,
    INTS_CONVERTED,
    NULLS,
    OK,
    ROWS,
    SPANS,
    STRING_BYTES,
    TEMPORALS_CONVERTED,
)
from arrow_bridge.kernels.swar import (
    broadcast,
    byte_at,
    digits_value,
    first_of_three,
    leading_digits,
    put_byte_at,
    put_word_at,
    word_at,
)
from arrow_bridge.kernels.temporal import _date_at, parse_date, parse_time, parse_timestamp, to_unit

# Column kinds beyond the converters' fixed-width ones (NULL .. TIMESTAMP = 0..7).
SKIP = 8  # not selected: scanned, not converted
STRING = 9  # string or binary (``params[j, 0]``: check UTF-8; ``params[j, 1]``: nulls allowed)

LF = 10
CR = 13

_POW10_INT = np.array([10**i for i in range(9)], dtype=np.uint64)
_U0 = np.uint64(0)
_U9 = np.uint64(9)
_U10 = np.uint64(10)
_U48 = np.uint64(48)
_KIND_COUNTER = np.array([NULLS, INTS_CONVERTED, INTS_CONVERTED, FLOATS_CONVERTED, BOOLS_CONVERTED,
                          TEMPORALS_CONVERTED, TEMPORALS_CONVERTED, TEMPORALS_CONVERTED, 0, STRING_BYTES],
                         dtype=np.int64)


@nb.njit(nogil=True, cache=True)
def _other_value(kind, src, s, e, p0, p1, p2, trues, falses):
    """``(ok, integer, float)`` for a value the inline fast paths did not take,
    by the same per-field parsers as :func:`columns.convert_fixed`."""
    if kind == SIGNED:
        ok, v = parse_signed(src, s, e, p0)
        return ok, v, 0.0
    if kind == FLOAT:
        ok, f = parse_float64(src, s, e, np.uint8(p0))
        return ok, np.int64(0), f
    if kind == BOOL:
        if in_spelling_set(src, s, e, trues):
            return True, np.int64(1), 0.0
        return in_spelling_set(src, s, e, falses), np.int64(0), 0.0
    if kind == DATE:
        ok, days = parse_date(src, s, e)
        return ok, np.int64(days), 0.0
    if kind == TIME:
        ok, secs, nanos, ndigits = parse_time(src, s, e)
        _, v = to_unit(secs, nanos, p2)
        return ok and ndigits <= p0, np.int64(v), 0.0
    if kind == TIMESTAMP:
        ok, secs, nanos, ndigits, has_zone = parse_timestamp(src, s, e)
        if ok and ndigits <= p0 and has_zone == (p1 != 0):
            ok, v = to_unit(secs, nanos, p2)
            return ok, np.int64(v), 0.0
    return False, np.int64(0), 0.0


@nb.njit(nogil=True, cache=True, inline="always")
def _digit_run(at, p, end, w):
    """``(position after the digits at p, w * 10**count + their value, count)``;
    the value wraps around past 19 digits (the caller checks ``count``).
    ``at`` is the span buffer's address."""
    count = 0
    while p + 8 <= end:
        word = word_at(at, p)
        n = leading_digits(word)
        if n:
            w = w * _POW10_INT[n] + np.uint64(digits_value(word, n))
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


@nb.njit(nogil=True, cache=True, inline="always")
def _field_end(at, p, special_at):
    """Position of the first delimiter, LF or CR at or after ``p`` (``at``: the
    span's address, ``special_at``: the byte-class table's). A byte loop:
    most fields are short, and its predicted branches let the next field's
    work start early, where a word-at-a-time search would wait on each word."""
    while not byte_at(special_at, byte_at(at, p)):
        p += 1
    return p


@nb.njit(nogil=True, cache=True, inline="always")
def _copy_unquoted(at, p, end, special_at, delims, lfs, crs, out, o):
    """Copies an unquoted value to address ``out + o``: ``(end of the value, end in out)``.

    Words are stored whole (the output has 8 bytes of slack) and the cursor
    advances to the first field-ending byte.
    """
    while p + 8 <= end:
        word = word_at(at, p)
        put_word_at(out, o, word)
        k = first_of_three(word, delims, lfs, crs)
        p += k
        o += k
        if k < 8:
            return p, o
    while not byte_at(special_at, byte_at(at, p)):
        put_byte_at(out, o, byte_at(at, p))
        o += 1
        p += 1
    return p, o


@nb.njit(nogil=True, cache=True, inline="always")
def _copy_quoted(at, p, end, quote, double_quote, quotes, lfs, crs, out, o):
    """Copies the value of a quoted field (``p`` just after its opening quote).

    Returns ``(position of the closing quote or -1 when the span ends first,
    end in out, line breaks inside)``; a doubled quote is copied once.
    """
    breaks = 0
    while True:
        if p + 8 <= end:
            word = word_at(at, p)
            put_word_at(out, o, word)
            k = first_of_three(word, quotes, lfs, crs)
            p += k
            o += k
            if k == 8:
                continue
        elif p >= end:
            return -1, o, breaks
        c = byte_at(at, p)
        if c == quote:
            if double_quote and p + 1 < end and byte_at(at, p + 1) == quote:
                put_byte_at(out, o, c)
                o += 1
                p += 2
                continue
            return p, o, breaks
        put_byte_at(out, o, c)
        o += 1
        if c == LF or (c == CR and (p + 1 >= end or byte_at(at, p + 1) != LF)):
            breaks += 1
        p += 1


@nb.njit(nogil=True, cache=True, inline="always")
def _ends_field(t, delim, is_last):
    """Whether byte ``t`` ends a field: the delimiter, or a line end after the last."""
    return (t == LF or t == CR) if is_last else t == delim


@nb.njit(nogil=True, cache=True, error_model="numpy")
def fused_parse(buf, start, end, ncols, delim, special, quote, double_quote, kinds, slots, params,
                nulls, quoted_nulls, trues, falses, i64, i32, f64, bits, offsets, data, data_stride,
                data_used, validity, null_counts, counters):
    """Parses the records of ``buf[start:end]`` (which ends at a line break).

    Returns ``(status, rows, line_breaks)``; ``status`` is ``OK`` or
    ``GIVE_UP``. Fills ``null_counts[j]`` and, per string slot, ``offsets``
    and ``data_used`` (the slot's bytes lie at ``data[slot * data_stride:]``;
    ``data_stride`` must exceed the span by 8). ``validity`` must be zeroed:
    a column's bitmap is written only once it has a null. Row capacity is
    ``validity.shape[1] * 8``.
    """
    if end <= start or (buf[end - 1] != LF and buf[end - 1] != CR):
        return GIVE_UP, 0, 0
    null_data, null_offsets, null_first, null_empty = nulls
    at, special_at, data_at = buf.ctypes.data, special.ctypes.data, data.ctypes.data
    delims, lfs, crs = broadcast(delim), broadcast(LF), broadcast(CR)
    quotes = broadcast(quote)
    capacity = validity.shape[1] * 8
    last = ncols - 1
    pos = start
    rows = 0
    lines = 0
    for j in range(ncols):
        null_counts[j] = 0
    for k in range(data_used.shape[0]):
        data_used[k] = 0
        offsets[k, 0] = 0
    while pos < end:
        c = buf[pos]
        if c == LF or c == CR:  # an empty line
            pos += 2 if c == CR and pos + 1 < end and buf[pos + 1] == LF else 1
            lines += 1
            continue
        if rows >= capacity:
            return GIVE_UP, rows, lines
        r = rows
        for j in range(ncols):
            kind = kinds[j]
            slot = slots[j]
            is_last = j == last
            field = pos
            quoted = buf[pos] == quote
            # ---- inline fast paths: plain values of the common types -------------------
            if not quoted:
                if kind == SIGNED:
                    negative = buf[pos] == 45
                    p, w, n = _digit_run(at, pos + negative, end, _U0)
                    if 0 < n <= 18 and params[j, 0] == 64 and _ends_field(buf[p], delim, is_last) and not (
                            (null_first[buf[field]] >> (p - field)) & 1 and spelled(buf, field, p, null_data, null_offsets)):
                        v = np.int64(w)
                        i64[slot, r] = -v if negative else v
                        if null_counts[j]:
                            validity[j, r >> 3] |= np.uint8(1 << (r & 7))
                        pos = p + 1
                        continue
                elif kind == FLOAT:
                    negative = buf[pos] == 45
                    p, w, n = _digit_run(at, pos + (negative or buf[pos] == 43), end, _U0)
                    q = 0
                    if buf[p] == params[j, 0]:
                        p, w, fraction = _digit_run(at, p + 1, end, w)
                        n += fraction
                        q = -fraction
                    if (buf[p] | 32) == 101 and n:  # an exponent: [eE][+-]?digit{1,4}
                        exp_negative = buf[p + 1] == 45
                        exp_start = p + 1 + (exp_negative or buf[p + 1] == 43)
                        p, exponent, exp_digits = _digit_run(at, exp_start, end, _U0)
                        if not 0 < exp_digits <= 4:
                            n = 0  # the general parser decides
                        q += -np.int64(exponent) if exp_negative else np.int64(exponent)
                    if 0 < n <= 19 and _ends_field(buf[p], delim, is_last) and not (
                            (null_first[buf[field]] >> (p - field)) & 1 and spelled(buf, field, p, null_data, null_offsets)):
                        if w <= _MAX_FAST_MANTISSA64 and -22 <= q <= 22:  # Clinger: one rounding
                            value = np.float64(np.int64(w))
                            value = value / _POW10_F64[-q] if q < 0 else value * _POW10_F64[q]
                            value = -value if negative else value
                            decided = True
                        else:
                            pattern, decided = _decimal_to_bits(w, q, False, _DOUBLE)
                            value = _bits_to_f64(pattern | _SIGN64 if negative else pattern)
                        if decided:
                            f64[slot, r] = value
                            if null_counts[j]:
                                validity[j, r >> 3] |= np.uint8(1 << (r & 7))
                            pos = p + 1
                            continue
                elif kind == DATE:
                    ok, days = _date_at(buf, pos, end)
                    if ok and _ends_field(buf[pos + 10], delim, is_last) and not (
                            (null_first[buf[field]] >> 10) & 1 and spelled(buf, field, pos + 10, null_data, null_offsets)):
                        i32[slot, r] = days
                        if null_counts[j]:
                            validity[j, r >> 3] |= np.uint8(1 << (r & 7))
                        pos += 11
                        continue
                elif kind == STRING and not params[j, 1]:
                    base = slot * data_stride
                    p, o = _copy_unquoted(at, pos, end, special_at, delims, lfs, crs, data_at,
                                          base + data_used[slot])
                    if not _ends_field(buf[p], delim, is_last):
                        return GIVE_UP, rows, lines
                    data_used[slot] = o - base
                    offsets[slot, r + 1] = o - base
                    pos = p + 1
                    continue
                elif kind == SKIP:
                    p = _field_end(at, pos, special_at)
                    if not _ends_field(buf[p], delim, is_last):
                        return GIVE_UP, rows, lines
                    pos = p + 1
                    continue
            elif kind == STRING and not (params[j, 1] and quoted_nulls):
                base = slot * data_stride
                p, o, breaks = _copy_quoted(at, pos + 1, end, quote, double_quote, quotes, lfs, crs, data_at,
                                            base + data_used[slot])
                if p < 0 or not _ends_field(buf[p + 1], delim, is_last):
                    return GIVE_UP, rows, lines  # past the span, or text after the closing quote
                lines += breaks
                data_used[slot] = o - base
                offsets[slot, r + 1] = o - base
                if null_counts[j]:
                    validity[j, r >> 3] |= np.uint8(1 << (r & 7))
                pos = p + 2
                continue
            # ---- every other field: find its value, then the general parsers ------------
            escaped = False
            if quoted:
                p = pos + 1
                while True:
                    if p >= end:
                        return GIVE_UP, rows, lines  # the record goes on past the span
                    c = buf[p]
                    if c == quote:
                        if double_quote and p + 1 < end and buf[p + 1] == quote:
                            escaped = True
                            p += 2
                            continue
                        break
                    if c == LF or (c == CR and (p + 1 >= end or buf[p + 1] != LF)):
                        lines += 1
                    p += 1
                s, e = pos + 1, p
                p += 1
            else:
                p = _field_end(at, pos, special_at)
                s, e = pos, p
            if not _ends_field(buf[p], delim, is_last):
                return GIVE_UP, rows, lines  # text after a quote, or another field count
            pos = p + 1
            if kind == SKIP:
                continue
            if escaped and kind != STRING:
                return GIVE_UP, rows, lines
            is_null = False
            if (not quoted or quoted_nulls) and (kind != STRING or params[j, 1]):
                if escaped:
                    return GIVE_UP, rows, lines  # a null spelling is matched after unescaping
                n = e - s
                if n == 0:
                    is_null = null_empty
                elif n < 64 and (null_first[buf[s]] >> n) & 1:
                    is_null = in_spelling_set(buf, s, e, nulls)
            if is_null:
                if null_counts[j] == 0:
                    _mark_valid_before(validity[j], r)
                null_counts[j] += 1
                if kind == STRING:
                    offsets[slot, r + 1] = data_used[slot]
                elif kind == FLOAT:
                    f64[slot, r] = 0.0
                elif kind == DATE or (kind == TIME and params[j, 2] <= 1000):
                    i32[slot, r] = 0
                elif kind != NULL and kind != BOOL:
                    i64[slot, r] = 0
                continue
            if kind == STRING:
                o = slot * data_stride + data_used[slot]
                i = s
                while i < e:
                    c = buf[i]
                    data[o] = c
                    o += 1
                    i += 2 if escaped and c == quote else 1
                data_used[slot] = o - slot * data_stride
                offsets[slot, r + 1] = data_used[slot]
            else:
                ok, iv, fv = _other_value(kind, buf, s, e, params[j, 0], params[j, 1], params[j, 2],
                                          trues, falses)
                if not ok:
                    return GIVE_UP, rows, lines
                if kind == FLOAT:
                    f64[slot, r] = fv
                elif kind == BOOL:
                    if iv:
                        bits[slot, r >> 3] |= np.uint8(1 << (r & 7))
                elif kind == DATE or (kind == TIME and params[j, 2] <= 1000):
                    i32[slot, r] = iv
                else:
                    i64[slot, r] = iv
            if null_counts[j]:
                validity[j, r >> 3] |= np.uint8(1 << (r & 7))
        # ``pos`` is one past the record's line end: a CR LF takes one more
        if buf[pos - 1] == CR and pos < end and buf[pos] == LF:
            pos += 1
        lines += 1
        rows += 1
    return _finish(buf, start, end, ncols, kinds, slots, params, offsets, data, data_stride, data_used,
                   null_counts, rows, lines, counters)


@nb.njit(nogil=True, cache=True)
def _finish(buf, start, end, ncols, kinds, slots, params, offsets, data, data_stride, data_used, null_counts,
            rows, lines, counters):
    """Checks UTF-8 where asked (only columns holding non-ASCII bytes) and adds
    the work counters the general path would have added."""
    for j in range(ncols):
        if kinds[j] == STRING and params[j, 0]:
            slot = slots[j]
            base = slot * data_stride
            acc = np.uint8(0)
            for i in range(base, base + data_used[slot]):
                acc |= data[i]
            if acc >= 128:
                column = data[base:base + data_used[slot]]
                for r in range(rows):
                    if not utf8_valid(column, offsets[slot, r], offsets[slot, r + 1]):
                        return GIVE_UP, rows, lines
    counters[BYTES_SCANNED] += end - start
    counters[ROWS] += rows
    counters[FIELDS] += rows * ncols
    counters[SPANS] += 1
    for j in range(ncols):
        kind = kinds[j]
        if kind == SKIP:
            continue
        counters[NULLS] += null_counts[j]
        if kind == STRING:
            counters[STRING_BYTES] += data_used[slots[j]]
        else:
            counters[_KIND_COUNTER[kind]] += rows - null_counts[j]
    return OK, rows, lines
