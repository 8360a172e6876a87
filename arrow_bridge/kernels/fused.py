"""One pass from CSV bytes to typed column buffers, once the types are known.

The general path tokenizes a span (field ends and flags for every field), then
converts column by column: two passes over memory, and per field a handful of
loads and stores before a value is parsed. Once every column's type is known
(given, or inferred from the first spans) most spans are regular: each
record has the expected fields, values parse in the type's plain form. This
kernel parses such a span in one pass, record by record, straight into the
output buffers, with inline fast paths for integers, floats, dates, times
and timestamps in their common shapes (from :mod:`arrow_bridge.numbers`),
bools and strings, quoted or not, and the general per-field parsers for
everything else. On the common paths no array is handed to a call per field
(the general parsers still take one): Numba counts references to the arrays
a call (or an inlined function) receives, an atomic pair per value, which
made bools and timestamps several times slower than the rest.

It covers what it can answer *exactly as the general path would*, and gives
up (``GIVE_UP``) on anything else: a record with another field count, a value
that does not convert, an escape character, text after a closing quote, a
span without a final line break, more rows than the buffers hold, a line of
only spaces and tabs in a one-column file (pandas skips it, pyarrow reads it). The caller
then parses the span on the general path, which decides (error, widening,
bad-line policy). Giving up early costs little; a wrong value would cost all.

Column ``j`` of the file has a ``kinds[j]`` (the converters' kind codes, plus
``SKIP`` for unselected columns and ``STRING``) and a ``slots[j]``: its row in
the 2-D output array of its storage class (``i64``, ``i32``, ``f64``,
``bits`` for booleans, ``offsets``/``data`` for strings). 2-D arrays rather
than a tuple of arrays: Numba passes one array per class, with no
reference-count traffic per field.

A read with ``filters=`` passes ``bounds``: per column, an interval its
value must lie in for the row to be kept (the AND-terms of the filter that
compare one column with a constant, :meth:`arrow_bridge.filters.RowFilter.bounds`).
A value outside its interval rejects the row: the rest of the row is still
parsed (a value that does not convert, or would widen the column's type,
matters wherever it lies), but nothing of it is kept, and the next row
takes its place in the buffers. A value the fast paths do not take (a null,
a value of another kind) rejects nothing: the read's filter stage sees every
row the bounds keep and decides exactly.
"""
import numpy as np

from arrow_bridge.jit import njit
from arrow_bridge.kernels.columns import (
    BOOL,
    DATE,
    FLOAT,
    NULL,
    SIGNED,
    TIME,
    TIMESTAMP,
    utf8_valid,
)
from arrow_bridge.kernels.fields import in_spelling_set, mark_valid_before, parse_bool, spelling_addresses
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
from arrow_bridge.numbers.fast_floats import float64_at
from arrow_bridge.numbers.parse_dates import (date_at, in_column_unit, parse_date, parse_time, parse_timestamp, time_at,
                                               timestamp_at)
from arrow_bridge.numbers.parse_floats import pandas_refuses, parse_float64
from arrow_bridge.numbers.parse_ints import integer_text_past_int64, parse_signed, plain_int64_at
from arrow_bridge.numbers.swar import (byte_at, ctz64, equal_mask64, number_masks32, put_byte_at, put_value_at,
                                      put_word_at, word_at)

# Column kinds beyond the converters' fixed-width ones (NULL .. TIMESTAMP = 0..7).
SKIP = 8  # not selected: scanned, not converted
STRING = 9  # string or binary (``params[j, 0]``: check UTF-8; ``params[j, 1]``: nulls allowed)

LF = 10
CR = 13

_U0 = np.uint64(0)
_U1 = np.uint64(1)
_KIND_COUNTER = np.array([NULLS, INTS_CONVERTED, INTS_CONVERTED, FLOATS_CONVERTED, BOOLS_CONVERTED,
                          TEMPORALS_CONVERTED, TEMPORALS_CONVERTED, TEMPORALS_CONVERTED, 0, STRING_BYTES],
                         dtype=np.int64)


@njit(nogil=True, cache=True)
def _other_value(kind, src, s, e, p0, p1, p2):
    """``(ok, integer, float)`` for a value the inline fast paths did not take
    (bools and the common time shapes are inline), by the same per-field
    parsers as :func:`columns.convert_fixed`."""
    if kind == SIGNED:
        ok, v = parse_signed(src, s, e, p0, p1)
        return ok, v, 0.0
    if kind == FLOAT:
        ok, f = parse_float64(src, s, e, np.uint8(p0))
        return ok and not (p1 and integer_text_past_int64(src, s, e)) and not (p2 and pandas_refuses(src, s, e)), \
            np.int64(0), f
    if kind == DATE:
        ok, days = parse_date(src, s, e)
        return ok, np.int64(days), 0.0
    if kind == TIME:
        ok, secs, nanos, ndigits = parse_time(src, s, e)
        ok, v = in_column_unit(ok, secs, nanos, ndigits, False, p0, p1, p2)
        return ok, v, 0.0
    if kind == TIMESTAMP:
        ok, secs, nanos, ndigits, has_zone = parse_timestamp(src, s, e)
        ok, v = in_column_unit(ok, secs, nanos, ndigits, has_zone, p0, p1, p2)
        return ok, v, 0.0
    return False, np.int64(0), 0.0


@njit(nogil=True, cache=True, inline="always")
def _temporal_at(kind, at, s, e, p0, p1, p2):
    """``(ok, value)`` of a time or timestamp in its common shapes, by address
    (no array crosses a call in the record loop); not ok for any other kind or
    shape, which :func:`_other_value` then decides."""
    if kind == TIMESTAMP:
        ok, secs, nanos, ndigits, has_zone = timestamp_at(at, s, e)
        return in_column_unit(ok, secs, nanos, ndigits, has_zone, p0, p1, p2)
    if kind == TIME:
        ok, secs, nanos, ndigits = time_at(at, s, e)
        return in_column_unit(ok, secs, nanos, ndigits, False, p0, p1, p2)
    return False, np.int64(0)


@njit(nogil=True, cache=True, inline="always")
def _specials(at, base, end, delim):
    """Bit ``i`` set where byte ``base + i`` (below ``end``) of the span at
    address ``at`` is the delimiter, LF or CR: the field ends of the next 64
    bytes, found at once (the last ones of a span byte by byte, as a vector
    load there would read past the buffer)."""
    if base + 64 <= end:
        return equal_mask64(at, base, delim, LF, CR)
    mask = _U0
    for i in range(max(end - base, 0)):
        c = byte_at(at, base + i)
        if c == delim or c == LF or c == CR:
            mask |= _U1 << np.uint64(i)
    return mask


@njit(nogil=True, cache=True, inline="always")
def _next_special(at, base, mask, end, delim):
    """``(position, base, mask)``: the next field-ending byte of the stream
    ``mask`` (bits of ``[base, base + 64)`` not yet consumed), and the
    stream without it; position -1 when the span has no more."""
    while mask == _U0:
        base += 64
        if base >= end:
            return -1, base, mask
        mask = _specials(at, base, end, delim)
    return base + np.int64(ctz64(mask)), base, mask & (mask - _U1)


@njit(nogil=True, cache=True, inline="always")
def _skip_run(at, base, mask, pos, k, end, quote):
    """``(fields, position after them, the stream without their ends)`` for up
    to ``k`` unselected fields from ``pos`` met at once: those ending in the
    stream's current 64 bytes, if no quote or line break lies among them
    (then each ends at a delimiter and none is quoted). Zero fields where it
    cannot tell: they are then scanned one by one."""
    if mask == _U0 or pos - base >= 64 or base + 64 > end:
        return 0, pos, mask
    last_end = mask
    fields = 1
    while fields < k:
        following = last_end & (last_end - _U1)
        if following == _U0:
            break
        last_end = following
        fields += 1
    e = base + np.int64(ctz64(last_end))
    run_bits = ((~_U0) >> np.uint64(63 - (e - base))) & ((~_U0) << np.uint64(pos - base))
    if equal_mask64(at, base, quote, LF, CR) & run_bits:
        return 0, pos, mask
    return fields, e + 1, last_end & (last_end - _U1)


@njit(nogil=True, cache=True, inline="always")
def _copy_known(at, s, e, end, out, o):
    """Copies ``[s, e)`` of the span (which ends at ``end``) to address
    ``out + o``, a word at a time (the output has 8 bytes of slack); returns
    the end in out."""
    while s < e and s + 8 <= end:
        put_word_at(out, o, word_at(at, s))
        s += 8
        o += 8
    while s < e:
        put_byte_at(out, o, byte_at(at, s))
        s += 1
        o += 1
    return o - (s - e)  # the last word may have run past e


@njit(nogil=True, cache=True, inline="always")
def _blank_line(at, pos, end):
    """Whether the line from ``pos`` holds spaces and tabs only."""
    while pos < end:
        c = byte_at(at, pos)
        if c == LF or c == CR:
            return True
        if c != 32 and c != 9:
            return False
        pos += 1
    return True


@njit(nogil=True, cache=True, inline="always")
def _ends_field(t, delim, is_last):
    """Whether byte ``t`` ends a field: the delimiter, or a line end after the last."""
    return (t == LF or t == CR) if is_last else t == delim


@njit(nogil=True, cache=True)
def _closing_quote(at, p, end, quote, double_quote):
    """``(position of the closing quote or -1 when the span ends first, line
    breaks inside, whether a doubled quote is inside)`` for the quoted field
    whose value starts at ``p``."""
    breaks = 0
    doubled = False
    while p < end:
        if p + 64 <= end:  # skip to the next quote or line break, 64 bytes at a time
            stops = equal_mask64(at, p, quote, LF, CR)
            if stops == _U0:
                p += 64
                continue
            p += np.int64(ctz64(stops))
        c = byte_at(at, p)
        if c == quote:
            if not (double_quote and p + 1 < end and byte_at(at, p + 1) == quote):
                return p, breaks, doubled
            doubled = True
            p += 1
        elif c == LF or (c == CR and (p + 1 >= end or byte_at(at, p + 1) != LF)):
            breaks += 1
        p += 1
    return -1, breaks, doubled


@njit(nogil=True, cache=True, inline="always")
def _store_other(kind, address, r, p2, iv, fv):
    """Stores row ``r``'s value of a kind without an inline fast path (zero
    for a null) at the column's ``address`` (:func:`_column_ops`): arrays
    passed to a call, or to an inlined function, cost reference counts per
    value."""
    if kind == FLOAT:
        put_value_at(address, r << 3, fv)
    elif kind == BOOL:
        if iv:
            put_byte_at(address, r >> 3, byte_at(address, r >> 3) | (1 << (r & 7)))
    elif kind == DATE or (kind == TIME and p2 <= 1000):
        put_value_at(address, r << 2, np.int32(iv))
    elif kind != NULL:
        put_value_at(address, r << 3, np.int64(iv))


# What the record loop does with a field, per column (``_column_ops``).
_OP_SKIP, _OP_INT64, _OP_FLOAT64, _OP_DATE32, _OP_STRING, _OP_OTHER = range(6)


@njit(nogil=True, cache=True, inline="always")
def _fast_value(op, at, s, e, end, decimal):
    """``(ok, integer, float)``: the field ``[s, e)`` (without its quotes) by the inline
    fast path of ``op`` (a signed int of ``decimal`` bits, float64 or date32);
    not ok where it cannot tell (the general parsers then do)."""
    if op == _OP_INT64:  # any signed width: ``decimal`` is then the column's bits
        ok, v = plain_int64_at(at, s, e, end)
        if ok and decimal < 64:
            limit = np.int64(1) << np.int64(decimal - 1)
            ok = -limit <= v < limit
        return ok, v, 0.0
    if op == _OP_FLOAT64:
        ok, f = float64_at(at, s, e, decimal)
        return ok, np.int64(0), f
    if e - s == 10:
        ok, days = date_at(at, s, e)
        return ok, np.int64(days), 0.0
    return False, np.int64(0), 0.0


@njit(nogil=True, cache=True, inline="always")
def _plain_decimal(at, s, e, decimal):
    """Whether ``[s, e)`` is ``-?digits[.digits]`` of at most 19 bytes (and not
    in the buffer's first 32): a float64 for certain, which :func:`_fast_value`
    takes. One vector compare, where parsing it takes several."""
    n = e - s
    if n > 19 or e < 32:
        return False
    non_digit, point, _ = number_masks32(at, e - 32, decimal)
    lane0 = np.uint64(32 - n)
    sign = np.uint64(byte_at(at, s) == 45)
    others = (non_digit >> lane0) & ~sign
    return (np.uint64(n) > sign and others & ~(point >> lane0) == _U0 and others & (others - _U1) == _U0
            and (others >> sign) & _U1 == _U0 and (others >> np.uint64(n - 1)) & _U1 == _U0)


@njit(nogil=True, cache=True)
def _spells_a_value(op, decimal, null_data, null_offsets):
    """Whether a null spelling is a value that ``op``'s fast path accepts
    (``null_values=["0"]`` on an int64 column): only then must each value be
    checked against the spellings. Each spelling is tried near a buffer's
    start and past its first 32 bytes, as :func:`float64_at` takes different
    paths there."""
    longest = 0
    for k in range(null_offsets.shape[0] - 1):
        longest = max(longest, null_offsets[k + 1] - null_offsets[k])
    scratch = np.zeros(longest + 128, dtype=np.uint8)
    for k in range(null_offsets.shape[0] - 1):
        spelling = null_data[null_offsets[k]:null_offsets[k + 1]]
        for offset in (0, 64):
            scratch[:] = 0
            scratch[offset:offset + spelling.shape[0]] = spelling
            ok, _, _ = _fast_value(op, scratch.ctypes.data, offset, offset + spelling.shape[0],
                                   scratch.shape[0], decimal)
            if ok:
                return True
    return False


@njit(nogil=True, cache=True)
def _column_ops(ncols, kinds, slots, params, null_data, null_offsets, i64, i32, f64, bits):
    """``(ops, value addresses)`` per file column: the inline fast path a
    field takes, quoted or not (``_OP_OTHER``: the general parsers and null
    spellings, also where a spelling is a number the fast path would take),
    and where the column's values (a bool's bits) start. One load each per
    field, where kind, slot and parameters would take several."""
    ops = np.full(ncols, _OP_OTHER, dtype=np.int64)
    addresses = np.zeros(ncols, dtype=np.int64)
    spells = np.full(_OP_DATE32 + 1, -1, dtype=np.int64)  # per fast op, once (one decimal point per dialect)
    for j in range(ncols):
        kind, slot = kinds[j], slots[j]
        if kind == SKIP:
            ops[j] = _OP_SKIP
        elif kind == SIGNED:  # every width is stored as int64 (narrowed when wrapped)
            ops[j], addresses[j] = _OP_INT64, i64.ctypes.data + slot * i64.strides[0]
        elif kind == FLOAT:
            ops[j], addresses[j] = _OP_FLOAT64, f64.ctypes.data + slot * f64.strides[0]
        elif kind == DATE:
            ops[j], addresses[j] = _OP_DATE32, i32.ctypes.data + slot * i32.strides[0]
        elif kind == STRING and not params[j, 1]:
            ops[j] = _OP_STRING
        elif kind == BOOL:
            addresses[j] = bits.ctypes.data + slot * bits.strides[0]
        elif kind == TIME and params[j, 2] <= 1000:
            addresses[j] = i32.ctypes.data + slot * i32.strides[0]
        elif kind == TIME or kind == TIMESTAMP:
            addresses[j] = i64.ctypes.data + slot * i64.strides[0]
        op = ops[j]
        if _OP_INT64 <= op <= _OP_DATE32:
            if spells[op] < 0:  # ints: at 64 bits, which take every value a narrower width takes
                spells[op] = _spells_a_value(op, 64 if op == _OP_INT64 else params[j, 0], null_data, null_offsets)
            if spells[op]:
                ops[j] = _OP_OTHER
    return ops, addresses


@njit(nogil=True, cache=True)
def no_bounds(ncols):
    """The ``bounds`` argument of :func:`fused_parse` that rejects no row:
    ``(tested, int lows, int highs, float lows, float highs)`` per file column.

    >>> no_bounds(2)[0].tolist()
    [0, 0]
    """
    return (np.zeros(ncols, np.uint8), np.zeros(ncols, np.int64), np.zeros(ncols, np.int64),
            np.zeros(ncols, np.float64), np.zeros(ncols, np.float64))


@njit(nogil=True, cache=True, inline="always")  # a call passing arrays costs reference counts per row
def _forget_row(r, slots, params, string_columns, offsets, data, data_stride, bits, validity, null_counts,
                row_nulls, row_null_count, span_has_nulls):
    """Undoes what a rejected row ``r`` left in the buffers the next row does
    not overwrite: its null counts, validity and bool bits. Returns ``(ok,
    its string bytes)``; not ok where a string it held is not UTF-8 where
    the column checks (the general path then says so, as a read without
    the filter would)."""
    for k in range(row_null_count):
        null_counts[row_nulls[k]] -= 1
    keep_others = np.uint8(~(1 << (r & 7)) & 0xFF)
    if span_has_nulls:  # only then has any row set a validity bit
        for j in range(validity.shape[0]):
            validity[j, r >> 3] &= keep_others
    for k in range(bits.shape[0]):
        bits[k, r >> 3] &= keep_others
    string_bytes = 0
    for j in string_columns:
        slot = slots[j]
        s, e = slot * data_stride + offsets[slot, r], slot * data_stride + offsets[slot, r + 1]
        string_bytes += e - s
        if params[j, 0] and not utf8_valid(data, s, e):
            return False, string_bytes
    return True, string_bytes


def fused_parse(buf, start, end, ncols, delim, quote, double_quote, kinds, slots, params, nulls, quoted_nulls,
                trues, falses, bounds, i64, i32, f64, bits, offsets, data, data_stride, data_used, validity,
                null_counts, counters):
    """Parses the records of ``buf[start:end]`` (which ends at a line break),
    keeping those within ``bounds`` (:func:`no_bounds`: all).

    Returns ``(status, rows kept, line_breaks, rows parsed)``; ``status`` is
    ``OK`` or ``GIVE_UP``. Fills ``null_counts[j]`` and, per string slot, ``offsets``
    and ``data_used`` (the slot's bytes lie at ``data[slot * data_stride:]``;
    ``data_stride`` must exceed the span by 8). ``validity`` must be zeroed:
    a column's bitmap is written only once it has a null. Row capacity is
    ``validity.shape[1] * 8``.

    Unquoted fields end where the next bit of a stream of field-ending bytes
    says (:func:`_specials`, 64 bytes at a time), so finding where the next
    field starts never waits on parsing this one's value: the processor
    overlaps the values of several fields. A quoted field is scanned for its
    closing quote and the stream restarts after it. Rare cases (doubled quotes,
    values off the fast paths) are calls, which keeps the loop small.

    The loop is compiled twice (:func:`_record_loop`); the one with bounds
    compiles on the first filtered read.
    """
    if bounds[0].any():
        return _BOUNDED_RECORDS(buf, start, end, ncols, delim, quote, double_quote, kinds, slots, params, nulls,
                                quoted_nulls, trues, falses, bounds, i64, i32, f64, bits, offsets, data, data_stride,
                                data_used, validity, null_counts, counters)
    return parse_every_record(buf, start, end, ncols, delim, quote, double_quote, kinds, slots, params, nulls,
                              quoted_nulls, trues, falses, bounds, i64, i32, f64, bits, offsets, data, data_stride,
                              data_used, validity, null_counts, counters)


def _record_loop(filtering, name):
    """:func:`fused_parse`'s loop, compiled twice: with bounds to test
    (``filtering``) and without, where its tests and rollbacks are constant
    false and compiled away (on a file of short records, such as an edge
    list, they cost a quarter of the speed). ``name``: the module's name for
    it, which the startup library and pickling find it by."""

    @njit(nogil=True, cache=True, error_model="numpy")
    def records(buf, start, end, ncols, delim, quote, double_quote, kinds, slots, params, nulls, quoted_nulls,
                trues, falses, bounds, i64, i32, f64, bits, offsets, data, data_stride, data_used, validity,
                null_counts, counters):
        if end <= start or (buf[end - 1] != LF and buf[end - 1] != CR):
            return GIVE_UP, 0, 0, 0
        null_data, null_offsets = nulls[0], nulls[1]
        null_set, true_set, false_set = spelling_addresses(nulls), spelling_addresses(trues), spelling_addresses(falses)
        at, data_at = buf.ctypes.data, data.ctypes.data
        capacity = validity.shape[1] * 8
        last = ncols - 1
        pos = start
        base, mask = start, _specials(at, start, end, delim)
        ops, addresses = _column_ops(ncols, kinds, slots, params, null_data, null_offsets, i64, i32, f64, bits)
        runs = np.zeros(ncols, dtype=np.int64)  # unselected columns from j on, the last column left out
        for j in range(ncols - 2, -1, -1):
            runs[j] = runs[j + 1] + 1 if ops[j] == _OP_SKIP else 0
        rows = 0
        lines = 0
        rejected = 0
        rejected_string_bytes = 0
        tested, low_i, high_i, low_f, high_f = bounds
        string_columns = np.nonzero(kinds == STRING)[0]
        seen_nulls = np.zeros(ncols, dtype=np.int64)  # nulls parsed, rejected rows' too (the work counters)
        row_nulls = np.empty(ncols, dtype=np.int64)  # the columns null in the current row
        span_has_nulls = False
        deferred = np.empty((ncols, 3), dtype=np.int64)  # (column, start, end) of the row's floats to parse if kept
        defer_floats = False  # where an int or a date is tested: it rejects most rows before a float is parsed
        for j in range(ncols if filtering else 0):
            defer_floats |= tested[j] != 0 and (ops[j] == _OP_INT64 or ops[j] == _OP_DATE32)
        for j in range(ncols):
            null_counts[j] = 0
        for k in range(offsets.shape[0]):
            offsets[k, 0] = 0
        while pos < end:
            c = byte_at(at, pos)
            if c == LF or c == CR:  # an empty line
                pos += 2 if c == CR and pos + 1 < end and byte_at(at, pos + 1) == LF else 1
                lines += 1
                base, mask = pos, _specials(at, pos, end, delim)
                continue
            if ncols == 1 and (c == 32 or c == 9) and _blank_line(at, pos, end):
                return GIVE_UP, rows, lines, rows + rejected  # pandas skips such a line: the general path knows
            if rows >= capacity:
                return GIVE_UP, rows, lines, rows + rejected
            r = rows
            keep = True
            row_null_count = 0
            deferred_tested = deferred_others = 0
            resume = 0  # the next column not skipped with its run
            for j in range(ncols):
                if j < resume:
                    continue
                if runs[j] > 1:
                    fields, pos, mask = _skip_run(at, base, mask, pos, runs[j], end, quote)
                    if fields:
                        resume = j + fields
                        continue
                op = ops[j]
                is_last = j == last
                if byte_at(at, pos) != quote:
                    s = pos
                    e, base, mask = _next_special(at, base, mask, end, delim)
                    if e < 0 or not _ends_field(byte_at(at, e), delim, is_last):
                        return GIVE_UP, rows, lines, rows + rejected  # another field count, or past the span
                    pos = e + 1
                    if op == _OP_SKIP:
                        continue
                    if op == _OP_STRING:
                        slot = slots[j]
                        o = _copy_known(at, s, e, end, data_at, slot * data_stride + offsets[slot, r])
                        offsets[slot, r + 1] = o - slot * data_stride
                        continue
                    may_be_null = True
                else:
                    s = pos + 1
                    e, breaks, doubled = _closing_quote(at, s, end, quote, double_quote)
                    if e < 0 or not _ends_field(byte_at(at, e + 1), delim, is_last):
                        return GIVE_UP, rows, lines, rows + rejected  # past the span, or text after the closing quote
                    lines += breaks
                    pos = e + 2
                    base, mask = pos, _specials(at, pos, end, delim)
                    if op == _OP_SKIP:
                        continue
                    kind, slot = kinds[j], slots[j]
                    may_be_null = quoted_nulls
                    if doubled:  # the value is unescaped: only strings take it here
                        if kind != STRING or (params[j, 1] and quoted_nulls):
                            return GIVE_UP, rows, lines, rows + rejected
                        o = slot * data_stride + offsets[slot, r]
                        i = s
                        while i < e:
                            data[o] = buf[i]
                            o += 1
                            i += 2 if buf[i] == quote else 1
                        offsets[slot, r + 1] = o - slot * data_stride
                        if null_counts[j]:
                            validity[j, r >> 3] |= np.uint8(1 << (r & 7))
                        continue
                if _OP_INT64 <= op <= _OP_DATE32:  # no null spelling is a value it takes (_column_ops); quoted too
                    # Late materialization: a float is only checked to be one, and parsed (and
                    # tested) once the row's other values have not rejected it.
                    if op == _OP_FLOAT64 and defer_floats and _plain_decimal(at, s, e, params[j, 0]):
                        if keep:  # tested ones first (from the front), the others from the back
                            k = deferred_tested if tested[j] else ncols - 1 - deferred_others
                            deferred[k, 0], deferred[k, 1], deferred[k, 2] = j, s, e
                            if tested[j]:
                                deferred_tested += 1
                            else:
                                deferred_others += 1
                        continue
                    ok, iv, fv = _fast_value(op, at, s, e, end, params[j, 0])
                    if ok and op == _OP_FLOAT64 and e - s >= 19 and params[j, 1]:
                        ok = not integer_text_past_int64(buf, s, e)  # pandas infers no float from it
                    if ok:
                        if op == _OP_INT64:
                            put_value_at(addresses[j], r << 3, iv)
                        elif op == _OP_FLOAT64:
                            put_value_at(addresses[j], r << 3, fv)
                        else:
                            put_value_at(addresses[j], r << 2, np.int32(iv))
                        if null_counts[j]:
                            validity[j, r >> 3] |= np.uint8(1 << (r & 7))
                        if filtering and tested[j]:  # inline: arrays passed to a call cost reference counts
                            if op == _OP_FLOAT64:  # a NaN lies in no bounds: pyarrow's comparisons are false on it
                                keep = keep and low_f[j] <= fv <= high_f[j]
                            else:
                                keep = keep and low_i[j] <= iv <= high_i[j]
                        continue
                kind, slot = kinds[j], slots[j]
                if may_be_null and (kind != STRING or params[j, 1]) and in_spelling_set(at, s, e, null_set):
                    if null_counts[j] == 0:
                        mark_valid_before(validity[j], r)
                    null_counts[j] += 1
                    seen_nulls[j] += 1
                    row_nulls[row_null_count] = j
                    row_null_count += 1
                    span_has_nulls = True
                    if kind == STRING:
                        offsets[slot, r + 1] = offsets[slot, r]
                    else:
                        _store_other(kind, addresses[j], r, params[j, 2], 0, 0.0)
                    continue
                if kind == STRING:
                    o = _copy_known(at, s, e, end, data_at, slot * data_stride + offsets[slot, r])
                    offsets[slot, r + 1] = o - slot * data_stride
                else:
                    # bools, times and timestamps here, not in _other_value: a call costs the buffer's refcount
                    fv = 0.0
                    if kind == BOOL:
                        ok, truth = parse_bool(at, s, e, true_set, false_set, params[j, 0])
                        iv = np.int64(truth)
                    else:
                        ok, iv = _temporal_at(kind, at, s, e, params[j, 0], params[j, 1], params[j, 2])
                        if not ok:
                            ok, iv, fv = _other_value(kind, buf, s, e, params[j, 0], params[j, 1], params[j, 2])
                    if not ok:
                        return GIVE_UP, rows, lines, rows + rejected  # the general path decides: widening or an error
                    _store_other(kind, addresses[j], r, params[j, 2], iv, fv)
                if null_counts[j]:
                    validity[j, r >> 3] |= np.uint8(1 << (r & 7))
            # ``pos`` is one past the record's line end: a CR LF takes one more,
            # and the LF's bit leaves the stream
            if byte_at(at, pos - 1) == CR and pos < end and byte_at(at, pos) == LF:
                pos += 1
                _, base, mask = _next_special(at, base, mask, end, delim)
            lines += 1
            if keep and deferred_tested + deferred_others:
                k = 0
                while k < ncols:  # the tested floats first: a rejection spares parsing the others
                    if k == deferred_tested:
                        k = ncols - deferred_others
                        if k >= ncols:
                            break
                    j, s, e = deferred[k, 0], deferred[k, 1], deferred[k, 2]
                    k += 1
                    ok, _, fv = _fast_value(_OP_FLOAT64, at, s, e, end, params[j, 0])
                    if not ok or (e - s >= 19 and params[j, 1] and integer_text_past_int64(buf, s, e)):
                        return GIVE_UP, rows, lines, rows + rejected
                    put_value_at(addresses[j], r << 3, fv)
                    if null_counts[j]:
                        validity[j, r >> 3] |= np.uint8(1 << (r & 7))
                    if tested[j] and not low_f[j] <= fv <= high_f[j]:
                        keep = False
                        break
            if keep:
                rows += 1
                continue
            rejected += 1
            if not (span_has_nulls or bits.shape[0] or string_columns.size):
                continue  # nothing of the row outlives it
            ok, string_bytes = _forget_row(r, slots, params, string_columns, offsets, data, data_stride, bits, validity,
                                           null_counts, row_nulls, row_null_count, span_has_nulls)
            if not ok:
                return GIVE_UP, rows, lines, rows + rejected
            rejected_string_bytes += string_bytes
        for k in range(offsets.shape[0]):
            data_used[k] = offsets[k, rows]
        if not _strings_valid(ncols, kinds, slots, params, offsets, data, data_stride, data_used, rows):
            return GIVE_UP, rows, lines, rows + rejected
        _count_work(start, end, ncols, kinds, slots, data_used, seen_nulls, rows + rejected, rejected_string_bytes,
                    counters)
        return OK, rows, lines, rows + rejected

    records.__name__ = records.__qualname__ = name
    records.startup_library = False  # pycc's LLVM aborts on it ("Do not know how to split the result...")
    return records


#: :func:`fused_parse` where nothing is bounded, callable from other kernels (the device app).
parse_every_record = _record_loop(False, "parse_every_record")
_BOUNDED_RECORDS = _record_loop(True, "_BOUNDED_RECORDS")


@njit(nogil=True, cache=True)
def _strings_valid(ncols, kinds, slots, params, offsets, data, data_stride, data_used, rows):
    """Whether the string columns that must be UTF-8 are (only those holding non-ASCII bytes are checked)."""
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
                        return False
    return True


@njit(nogil=True, cache=True)
def _count_work(start, end, ncols, kinds, slots, data_used, seen_nulls, parsed, rejected_string_bytes, counters):
    """Adds the work counters the general path would have added for the
    ``parsed`` rows: rejected rows were parsed too."""
    counters[BYTES_SCANNED] += end - start
    counters[ROWS] += parsed
    counters[FIELDS] += parsed * ncols
    counters[SPANS] += 1
    counters[STRING_BYTES] += rejected_string_bytes
    for j in range(ncols):
        kind = kinds[j]
        if kind == SKIP:
            continue
        counters[NULLS] += seen_nulls[j]
        if kind == STRING:
            counters[STRING_BYTES] += data_used[slots[j]]
        else:
            counters[_KIND_COUNTER[kind]] += parsed - seen_nulls[j]
