"""Record and field splitting of one span of CSV bytes.

The reader cuts blocks *speculatively* at their last line break and tokenizes
the pieces in parallel. A cut that fell inside a quoted field (a quoted
newline) is detected here: the span ends inside a record, and the kernel says
``NEEDS_MORE`` together with the end of the last complete record, so the
driver can re-cut. The result therefore never depends on the block size.

Fields are recorded as ``[start, end)`` byte positions (relative to the span's
buffer) plus flag bits; values are decoded later, column by column.
"""
import numpy as np

from arrow_bridge.jit import njit
from arrow_bridge.kernels.status import (
    BAD_ROW,
    BAD_ROWS,
    BYTES_SCANNED,
    COMPLEX,
    FIELDS,
    NEEDS_MORE,
    OK,
    OUT_OF_SPACE,
    QUOTED,
    ROWS,
    SPANS,
    UNTERMINATED_QUOTE,
)

LF = 10
CR = 13
NO_CHAR = -1  # "no quote/escape character" in a dialect

# What :func:`tokenize` does with a record of another field count (``row_rules`` bits).
SKIP_BAD_ROWS = 1  # leave it out and record it (on_bad_lines other than "error"), else an error
PAD_SHORT_ROWS = 2  # a record with fewer fields gets empty ones (pandas' semantics): not a bad row
BLANK_WHITESPACE_LINES = 4  # a line of only spaces and tabs (unquoted, not the delimiter) is an empty line (pandas)
CUT_LONG_ROWS = 8  # a record with more fields keeps its first ones: not a bad row (pandas, with usecols)


def shortest_record(ncols: int, row_rules: int) -> int:
    """The fewest bytes a record takes: ``ncols`` (delimiters and a line end),
    or, padded, one field and a line end.

    >>> shortest_record(5, 0), shortest_record(5, PAD_SHORT_ROWS), shortest_record(1, PAD_SHORT_ROWS)
    (5, 2, 1)
    """
    return min(ncols, 2) if row_rules & PAD_SHORT_ROWS else ncols


def record_capacity(length: int, ncols: int, row_rules: int) -> int:
    """Records that ``length`` bytes can hold at most (:func:`shortest_record`).

    >>> record_capacity(100, 5, 0), record_capacity(100, 5, PAD_SHORT_ROWS)
    (21, 51)
    """
    return length // shortest_record(ncols, row_rules) + 1


@njit(nogil=True, cache=True)
def count_line_breaks(buf, start, end):
    """Number of line ends (LF, CRLF or lone CR) in ``buf[start:end]``.

    >>> count_line_breaks(np.frombuffer(b"a\\r\\nb\\rc\\n", np.uint8).copy(), 0, 7)
    3
    """
    end = min(end, buf.size)  # as a slice would: a kernel without bounds checks must not read past
    n = 0
    for i in range(start, end):
        n += buf[i] == LF
    crs = 0
    for i in range(start, end):
        crs += buf[i] == CR
    if crs:
        for i in range(start, end):
            if buf[i] == CR and (i + 1 >= end or buf[i + 1] != LF):
                n += 1
    return n


@njit(nogil=True, cache=True)
def last_line_break_end(buf, start, end):
    """Position just after the last line break in ``buf[start:end]``, or -1.

    A trailing CR is not a cut point: its LF may be in the next block.
    """
    i = end - 1
    if i >= start and buf[i] == CR:
        i -= 1
    while i >= start:
        c = buf[i]
        if c == LF or c == CR:
            return i + 1
        i -= 1
    return -1


def byte_classes(delim: int, escape: int) -> np.ndarray:
    """The table the field scanner consults per byte: 1 where a byte may end
    an unquoted field (delimiter, CR, LF) or is the escape character."""
    table = np.zeros(256, dtype=np.uint8)
    for c in (delim, LF, CR, escape):
        if c >= 0:
            table[c] = 1
    return table


@njit(nogil=True, cache=True)
def _slow_field(buf, pos, end, at_eof, special, quote, escape, double_quote):
    """Scans a field that starts with a quote or holds an escape character.

    Returns ``(end position, flags, status, line breaks inside the field)``.
    pyarrow's rules: a quote opens a quoted section only at the field start;
    a doubled quote inside is a literal quote; text after the closing quote
    joins the value; the escape character makes the next byte literal.
    """
    flags = 0
    breaks = 0
    after_quote = -1
    if buf[pos] == quote:
        flags = QUOTED
        pos += 1
        while True:
            if pos >= end:
                return pos, flags, UNTERMINATED_QUOTE, breaks
            c = buf[pos]
            if c == quote:
                if double_quote and pos + 1 < end and buf[pos + 1] == quote:
                    flags |= COMPLEX
                    pos += 2
                    continue
                if double_quote and pos + 1 >= end and not at_eof:
                    # A closing quote or the first of a doubled pair? The next
                    # byte decides, and it is not in this span.
                    return pos, flags, NEEDS_MORE, breaks
                pos += 1
                break
            if c == escape:
                flags |= COMPLEX
                c = buf[pos + 1] if pos + 1 < end else 0
                pos += 1
            if c == LF or (c == CR and (pos + 1 >= end or buf[pos + 1] != LF)):
                breaks += 1
            pos += 1
        after_quote = pos
    while pos < end:
        c = buf[pos]
        if special[c]:
            if c != escape:
                break
            flags |= COMPLEX
            if pos + 1 < end:  # an escaped line break is still a physical one (CR LF counts once)
                e = buf[pos + 1]
                if e == LF or (e == CR and (pos + 2 >= end or buf[pos + 2] != LF)):
                    breaks += 1
            pos += 2
            continue
        pos += 1
    if pos > end:  # an escape character was the last byte
        return end, flags | COMPLEX, (OK if at_eof else NEEDS_MORE), breaks
    if after_quote >= 0 and pos != after_quote:
        flags |= COMPLEX  # text after the closing quote joins the value
    return pos, flags, OK, breaks


@njit(nogil=True, cache=True, inline="always")
def _scan_field(buf, pos, end, at_eof, special, quote, escape, double_quote, stop_at_end):
    """Scans one field from ``pos``: ``(end, flags, status, line breaks)``.

    The common field (unquoted, no escapes) is one tight loop over a byte-class
    table; anything else goes to :func:`_slow_field`. ``stop_at_end`` says the
    span's last byte is a line break, which ends every unquoted field, so the
    loop needs no bounds check.
    """
    if pos < end and buf[pos] == quote:
        return _slow_field(buf, pos, end, at_eof, special, quote, escape, double_quote)
    start = pos
    if stop_at_end:
        while not special[buf[pos]]:
            pos += 1
    else:
        while pos < end and not special[buf[pos]]:
            pos += 1
    if escape >= 0 and pos < end and buf[pos] == escape:
        return _slow_field(buf, start, end, at_eof, special, quote, escape, double_quote)
    return pos, 0, OK, 0


@njit(nogil=True, cache=True, inline="always")
def _record_end(buf, pos, end):
    """Position after the line end at ``pos`` (LF, CRLF or CR)."""
    if pos < end and buf[pos] == CR and pos + 1 < end and buf[pos + 1] == LF:
        return pos + 2
    return pos + 1


@njit(nogil=True, cache=True, inline="always")
def _only_blanks(buf, start, stop):
    """Whether ``buf[start:stop]`` is spaces and tabs only."""
    for k in range(start, stop):
        if buf[k] != 32 and buf[k] != 9:
            return False
    return True


@njit(nogil=True, cache=True)
def tokenize(buf, start, end, at_eof, ncols, delim, special, quote, escape, double_quote,
             row_rules, row_starts, ends, flags, bad_rows, counters):
    """Splits ``buf[start:end]`` into records of ``ncols`` fields.

    Layout (column-major, ``capacity = row_starts.shape[0]``): record ``r``
    starts at ``row_starts[r]``; its field ``j`` ends at ``ends[j * capacity + r]``
    (field ``j > 0`` starts one byte after field ``j - 1`` ends) and has flag
    bits ``flags[j * capacity + r]``. Empty lines are skipped. A record with
    another field count is an error, or, with ``row_rules & SKIP_BAD_ROWS``,
    is left out and its start offset and field count recorded in
    ``bad_rows``; with ``PAD_SHORT_ROWS`` one with fewer fields gets empty
    ones (their positions lie past the record, each of length 0); with
    ``BLANK_WHITESPACE_LINES`` a line of only spaces and tabs is skipped as an
    empty line is (pandas' tokenizer); with ``CUT_LONG_ROWS`` one with more
    fields keeps its first ``ncols``.

    Returns ``(status, rows, position, line_breaks)``: with ``OK``, ``position``
    is ``end``; with ``NEEDS_MORE`` (the span ends inside a record and not
    ``at_eof``), the end of the last complete record; with an error, the
    offending record's start (for an unterminated quote, the quote's offset).
    ``line_breaks`` counts line ends before the record at ``position``.
    """
    pos = start
    rows = 0
    capacity = row_starts.shape[0]
    n_bad = 0
    lines = 0
    stop_at_end = end > start and (buf[end - 1] == LF or buf[end - 1] == CR)
    while pos < end:
        c = buf[pos]
        if c == LF or c == CR:  # an empty line
            pos = _record_end(buf, pos, end)
            lines += 1
            continue
        if rows >= capacity:
            return OUT_OF_SPACE, rows, pos, lines
        record_start = pos
        row_starts[rows] = record_start  # also tells the caller where a failing record starts
        record_lines = 0
        nfields = 0
        status = OK
        slot = rows
        field_start = pos
        while True:
            field_start = pos
            pos, field_flags, status, breaks = _scan_field(buf, pos, end, at_eof, special, quote,
                                                           escape, double_quote, stop_at_end)
            if status != OK:
                break
            record_lines += breaks
            if nfields < ncols:
                ends[slot] = pos
                flags[slot] = field_flags
                slot += capacity
            nfields += 1
            if pos >= end or buf[pos] != delim:
                break
            pos += 1
        if status == OK and pos >= end and not at_eof:
            status = NEEDS_MORE  # the record's line end is not in this span
        if status != OK:
            if status == NEEDS_MORE or (status == UNTERMINATED_QUOTE and not at_eof):
                counters[BYTES_SCANNED] += record_start - start
                counters[ROWS] += rows
                counters[BAD_ROWS] += n_bad  # before record_start: the re-cut span starts after them
                return NEEDS_MORE, rows, record_start, lines
            counters[BAD_ROWS] += n_bad  # the bad rows before it are reported before the error
            return status, rows, field_start, lines  # where the unterminated quote opens
        if pos < end:
            pos = _record_end(buf, pos, end)
            record_lines += 1
        lines += record_lines
        if row_rules & BLANK_WHITESPACE_LINES and nfields == 1 and _only_blanks(buf, record_start, ends[rows]):
            continue
        if nfields < ncols and row_rules & PAD_SHORT_ROWS:
            for j in range(nfields, ncols):  # empty fields: each starts one past the one before ends
                ends[slot] = ends[slot - capacity] + 1
                flags[slot] = 0
                slot += capacity
            nfields = ncols
        if nfields > ncols and row_rules & CUT_LONG_ROWS:
            nfields = ncols
        if nfields != ncols:
            if not row_rules & SKIP_BAD_ROWS:
                return BAD_ROW, rows, record_start, lines - record_lines
            if n_bad < bad_rows.shape[0]:
                bad_rows[n_bad, 0] = record_start
                bad_rows[n_bad, 1] = nfields
            n_bad += 1
            continue
        rows += 1
    counters[BYTES_SCANNED] += end - start
    counters[ROWS] += rows
    counters[FIELDS] += rows * ncols
    counters[BAD_ROWS] += n_bad
    counters[SPANS] += 1
    return OK, rows, end, lines


@njit(nogil=True, cache=True)
def split_record(buf, start, end, at_eof, delim, special, quote, escape, double_quote, starts, ends, flags):
    """Tokenizes the single record at ``buf[start:]`` (header or skipped row).

    Leading empty lines are skipped. Returns ``(status, nfields, next_pos)``;
    ``status`` is ``OUT_OF_SPACE`` when the record has more fields than the
    arrays hold, ``NEEDS_MORE`` when the span ends inside it.
    """
    pos = start
    while pos < end and (buf[pos] == LF or buf[pos] == CR):
        pos += 1
    if pos >= end:
        return (OK if at_eof else NEEDS_MORE), 0, pos
    nfields = 0
    while True:
        field_start = pos
        pos, field_flags, status, _ = _scan_field(buf, pos, end, at_eof, special, quote, escape,
                                                  double_quote, False)
        if status != OK:
            return (NEEDS_MORE if not at_eof or status == NEEDS_MORE else status), nfields, field_start
        if nfields >= starts.shape[0]:
            return OUT_OF_SPACE, nfields, pos
        starts[nfields] = field_start
        ends[nfields] = pos
        flags[nfields] = field_flags
        nfields += 1
        if pos >= end or buf[pos] != delim:
            break
        pos += 1
    if not at_eof and (pos >= end or (buf[pos] == CR and pos + 1 >= end)):
        return NEEDS_MORE, nfields, pos  # the line end (or the LF of a CRLF) is not here yet
    return OK, nfields, _record_end(buf, pos, end)
