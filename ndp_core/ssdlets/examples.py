"""Small SSDlets to start from (and the ones the tests and benchmarks run).

* :data:`parse_lines` — file pages to the non-negative integers written one per line;
* :data:`keep_above` — the values above an argument (a filter);
* :data:`total` — the sum and count of everything it was sent (an aggregate);
* :data:`csv_records` and :data:`int_field` — scan -> parse as two programs: file
  pages to CSV records (quoted line feeds kept, a record cut by a packet boundary
  carried in the state), then one column's integers, empty fields as nulls.

>>> parse_lines
SSDlet parse_lines(pages: pages) -> (numbers: int64); state partial: int64, digits: int64; work bytes, parsed
"""
import numba as nb
import numpy as np
import pyarrow as pa

from ndp_core.ssdlets.ports import PAGES, Nullable, Out
from ndp_core.ssdlets.program import ssdlet

__all__ = ["parse_lines", "keep_above", "total", "csv_records", "int_field", "MAX_RECORD_BYTES"]


@ssdlet(inputs={"pages": PAGES}, outputs={"numbers": pa.int64()},
        state={"partial": pa.int64(), "digits": pa.int64()}, work={"bytes": 2.0, "parsed": 10.0})
def parse_lines(p):
    """One non-negative integer per line; a number cut by a packet boundary
    continues from the state."""
    n = 0
    for i in range(p.pages.size):
        b = p.pages[i]
        if b == 10:
            if p.digits[0] > 0:
                p.numbers[n] = p.partial[0]
                n += 1
            p.partial[0] = 0
            p.digits[0] = 0
        else:
            p.partial[0] = p.partial[0] * 10 + (b - 48)
            p.digits[0] += 1
    p.bytes[0] += p.pages.size
    p.parsed[0] += n
    return n


@ssdlet(inputs={"x": pa.int64()}, outputs={"y": pa.int64()}, args={"floor": pa.int64()}, work={"tested": 3.0})
def keep_above(p):
    n = 0
    for i in range(p.x.size):
        if p.x[i] > p.floor:
            p.y[n] = p.x[i]
            n += 1
    p.tested[0] += p.x.size
    return n


@ssdlet(inputs={"x": pa.int64()}, outputs={"total": Out(pa.int64(), rows=1), "count": Out(pa.int64(), rows=1)},
        state={"acc": pa.int64(), "n": pa.int64()}, work={"added": 1.0})
def total(p):
    for i in range(p.x.size):
        p.acc[0] += p.x[i]
    p.n[0] += p.x.size
    p.added[0] += p.x.size
    if p.at_end:
        p.total[0] = p.acc[0]
        p.count[0] = p.n[0]
        return 1, 1
    return 0, 0


#: The longest record :data:`csv_records` carries from one call to the next.
MAX_RECORD_BYTES = 1 << 16
_CARRY = np.dtype([("bytes", np.uint8, (MAX_RECORD_BYTES,)), ("n", np.int64), ("state", np.int64)])
_INT64_MIN = np.int64(-(1 << 63))
_CUTOFF = np.int64(-((1 << 63) // 10))  # value * 10 - d stays in int64 while value > this, or == and d <= 8

# Where a byte falls in a record (csv_records' state between bytes): a quote opens a quoted
# field only at the field's start, a doubled quote inside one is a quote, a quote elsewhere is text.
FIELD_START, UNQUOTED, QUOTED, QUOTE_IN_QUOTED = 0, 1, 2, 3


@nb.njit(inline="always")
def next_field_state(state, b, delimiter, quote):
    """The state after byte ``b`` (a delimiter, or a line feed outside quotes, starts a field).

    >>> next_field_state(FIELD_START, ord('"'), ord(","), ord('"')) == QUOTED
    True
    """
    if state == QUOTED:
        return QUOTE_IN_QUOTED if b == quote else QUOTED
    if b == quote and (state == FIELD_START or state == QUOTE_IN_QUOTED):
        return QUOTED
    return FIELD_START if b == delimiter or b == 10 else UNQUOTED


@ssdlet(inputs={"pages": PAGES}, outputs={"records": Out(pa.binary(), extra_rows=1, extra_bytes=MAX_RECORD_BYTES)},
        args={"delimiter": pa.uint8(), "quote": pa.uint8()}, state={"carry": _CARRY},
        work={"bytes": 2.0, "emitted": 20.0})
def csv_records(p):
    """Each record's bytes, its line end (LF or CRLF; a lone CR is text) left
    out; a line feed inside a quoted field stays in its record. The part of a
    record a packet ends in waits in the state (more than MAX_RECORD_BYTES of
    it stops the run: an index past the carry's bounds); the last call sends
    a final record without a line end. Empty lines are empty records."""
    c = p.carry[0]
    n = 0
    start = 0
    for i in range(p.pages.size):
        b = p.pages[i]
        ends_record = b == 10 and c["state"] != QUOTED
        c["state"] = next_field_state(c["state"], b, p.delimiter, p.quote)
        if ends_record:
            at = p.records.offsets[n]
            for j in range(c["n"]):
                p.records.data[at + j] = c["bytes"][j]
            at += c["n"]
            end = i - 1 if i > start and p.pages[i - 1] == 13 else i
            if i == start and c["n"] > 0 and c["bytes"][c["n"] - 1] == 13:
                at -= 1  # the CR was the carry's last byte
            for j in range(start, end):
                p.records.data[at + j - start] = p.pages[j]
            p.records.offsets[n + 1] = at + max(end - start, 0)
            n += 1
            c["n"] = 0
            start = i + 1
    for j in range(start, p.pages.size):
        c["bytes"][c["n"]] = p.pages[j]
        c["n"] += 1
    if p.at_end and c["n"] > 0:
        at = p.records.offsets[n]
        for j in range(c["n"]):
            p.records.data[at + j] = c["bytes"][j]
        p.records.offsets[n + 1] = at + c["n"]
        n += 1
        c["n"] = 0
    p.bytes[0] += p.pages.size
    p.emitted[0] += n
    return n


@ssdlet(inputs={"records": pa.binary()}, outputs={"values": Nullable(pa.int64())},
        args={"column": pa.int64(), "delimiter": pa.uint8(), "quote": pa.uint8(), "header": pa.int64()},
        state={"seen": pa.int64()}, work={"bytes": 3.0})
def int_field(p):
    """Field ``column`` of each record as an int64 (``-?digits`` within int64;
    an empty field is null), after the first ``header`` records; empty records
    (blank lines) are skipped, fields before it may be quoted (as
    :data:`csv_records` reads quotes). Anything else in that field, or a
    record without it, stops the run."""
    n = 0
    for r in range(p.records.offsets.size - 1):
        a, b = p.records.offsets[r], p.records.offsets[r + 1]
        p.bytes[0] += b - a
        if b == a:
            continue
        p.seen[0] += 1
        if p.seen[0] <= p.header:
            continue
        i, k, state = a, 0, FIELD_START
        while k < p.column:
            if i >= b:
                raise ValueError("a record without the column")
            state = next_field_state(state, p.records.data[i], p.delimiter, p.quote)
            k += state == FIELD_START and p.records.data[i] == p.delimiter
            i += 1
        e = i
        while e < b and p.records.data[e] != p.delimiter:
            e += 1
        negative = e > i and p.records.data[i] == 45
        if negative and e == i + 1:
            raise ValueError("'-' is not an integer")
        value = np.int64(0)  # built negative: int64's range is one larger below zero
        for j in range(i + 1 if negative else i, e):
            d = np.int64(p.records.data[j]) - 48
            if d < 0 or d > 9:
                raise ValueError("not an integer")
            if value < _CUTOFF or (value == _CUTOFF and d > 8):
                raise OverflowError("an integer outside int64")
            value = value * 10 - d
        if not negative and value == _INT64_MIN:
            raise OverflowError("an integer outside int64")
        p.values.values[n] = value if negative else -value
        p.values.valid[n] = 1 if e > i else 0
        n += 1
    return n
