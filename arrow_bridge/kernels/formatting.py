"""Arrow columns -> CSV text: the writer's batch kernel and its MWRITE step.

One call formats one *batch*: a self-describing byte buffer that carries the
dialect, the column names and the Arrow buffers of every column (layout
below). The host builds it (``arrow_bridge.writer``), then either calls
:func:`format_batch` itself or sends the buffer as an MWRITE's input to the
StorageApp :data:`arrow_bridge.kernels.format_app.csv_format`, which runs
:func:`mwrite_step`, the very same code, inside the (emulated) device. The
app dereferences nothing but its input, its output and its instance state, so
the batch holds copies of the buffers, never pointers. Values are spelled by
:mod:`arrow_bridge.numbers` (integers, floats by Schubfach, dates and times).

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

Work counters (:data:`WRITER_COUNTERS`) are added only on OK.

Text produced (``sep``/``quote`` are the dialect's bytes):

* integers: decimal; bool: ``true``/``false``;
* floats: the shortest decimal that parses back to the same bits, spelled
  like Python's ``repr`` (:mod:`arrow_bridge.numbers.format_floats`);
* date32 ``YYYY-MM-DD``; timestamps ``YYYY-MM-DDTHH:MM:SS`` plus a fraction of
  exactly the unit's digits (none for seconds) and ``Z`` for zoned types (the
  UTC instant); times ``HH:MM:SS`` plus the unit's fraction digits;
* string/binary bytes verbatim, quoted (quote chars doubled) when they contain
  ``sep``, the quote char, CR or LF, are empty, or equal a null spelling; the
  file's first field (name, or value of a batch flagged F_FILE_START without
  a header) also when it starts with the UTF-8 bytes of U+FEFF, which every
  reader strips there as a byte order mark;
* null: the ``na_rep`` bytes (unquoted); columns flagged NULL_QUOTED write
  ``""`` instead (a one-column table, whose empty null would be a blank line).

    int64 header[BATCH.size]             the BATCH layout below
    int64 columns[n_cols][COLUMN.size]   the COLUMN layout below
    sections: na_rep bytes; null spellings (int64 offsets[k+1] + bytes);
              names (int64 offsets[n_cols+1] + bytes); per column: validity
              bits, values (fixed width or bits), offsets (strings) + bytes

Validity and bool values are Arrow bitmaps with a starting bit (the array's
offset % 8); string offsets are the Arrow offsets as they are, with ``COLUMN.base`` the
first one (so the host copies buffers and never rewrites them).

Example (host side; ``arrow_bridge.writer`` builds real batches)::

    >>> counters = WRITER_COUNTERS.zeros()
    >>> status, end, bad_field = format_batch(np.zeros(8, np.uint8), np.zeros(8, np.uint8), 0, counters)
    >>> status == BAD_VALUE, bad_field  # not a batch
    (True, -1)
"""
from __future__ import annotations

import numpy as np

from arrow_bridge.jit import njit
from arrow_bridge.kernels.status import BAD_VALUE, OK, OUT_OF_SPACE
from arrow_bridge.numbers.format_dates import format_date, format_time, format_timestamp
from arrow_bridge.numbers.format_floats import format_float
from arrow_bridge.numbers.format_ints import format_int, format_uint
from arrow_bridge.numbers.internal import write_word
from ndp_core.counters import WorkCounters
from ndp_core.layout import layout_fingerprint, word_layout

# --------------------------------------------------------------------------
# Batch layout.
# --------------------------------------------------------------------------
MAGIC = int.from_bytes(b"NDPCSV01", "little")
MAX_BATCH_ROWS = 1 << 24  # bounds the work a (possibly malformed) batch can ask for

#: The batch header (int64 words at the batch's start). Offsets are bytes from the batch's start.
BATCH = word_layout("BatchHeader", [
    "magic", "version", "flags", "rows", "cols", "sep", "quote",
    "line_terminator_len", "line_terminator0", "line_terminator1",  # one or two bytes
    "na_offset", "na_len",
    "null_spellings", "null_spelling_offsets", "null_spelling_data",  # null spellings to quote
    "name_offsets", "name_data", "total",
], size=18)

# Header flags.
F_HEADER_LINE = 1  # write the column names first
F_LAST = 2  # the last batch: the device app flushes its partial page
F_FILE_START = 4  # the batch's text starts the file (see _starts_with_bom)

#: One column descriptor (after the header, one per column): kind, value width,
#: kind parameter, flags, and the byte offset and starting bit of its validity,
#: values (or string offsets), the first string offset and the string data.
COLUMN = word_layout("ColumnDescriptor", ["kind", "width", "aux", "flags", "validity", "validity_bit", "values",
                                          "values_bit", "base", "data", "data_len"])

# Column kinds (COLUMN.width: value bytes; for K_BYTES the offset width).
K_NULL, K_INT, K_UINT, K_FLOAT, K_BOOL, K_DATE32, K_TIMESTAMP, K_TIME, K_BYTES = range(9)
N_KINDS = 9

# Column flags.
CF_VALIDITY = 1  # a validity bitmap is present
CF_UTC = 2  # zoned timestamp: append "Z"
CF_NULL_QUOTED = 4  # write a null as "" (quoted empty) instead of na_rep

#: The device app's instance state: this header, then the tail bytes (text after
#: the last whole page written, put in front of the next batch's text).
WRITER_STATE = word_layout("WriterState", ["tail_length", "batches"])
STATE_HEADER = 8 * WRITER_STATE.size  # bytes before the tail

#: The batch's version: a fingerprint of the layouts above; the kernel refuses
#: a batch of another version (see ``ndp_core.layout.layout_fingerprint``).
LAYOUT_VERSION = layout_fingerprint(BATCH, COLUMN, WRITER_STATE, MAGIC)

#: The writer's work counters (slot order): batch bytes read, rows, fields,
#: batches (one per call), values formatted per kind, string bytes copied,
#: nulls. The per-value ones are what a timing model would charge for.
WRITER_COUNTERS = WorkCounters(
    ("bytes_scanned", "rows", "fields", "batches", "ints", "floats", "bools", "temporals", "string_bytes", "nulls"),
    modeled=("bytes_scanned", "rows", "fields", "ints", "floats", "bools", "temporals", "string_bytes", "nulls"),
)
_BYTES_SCANNED = WRITER_COUNTERS.slot("bytes_scanned")
_ROWS = WRITER_COUNTERS.slot("rows")
_FIELDS = WRITER_COUNTERS.slot("fields")
_BATCHES = WRITER_COUNTERS.slot("batches")
_INTS = WRITER_COUNTERS.slot("ints")
_FLOATS = WRITER_COUNTERS.slot("floats")
_BOOLS = WRITER_COUNTERS.slot("bools")
_TEMPORALS = WRITER_COUNTERS.slot("temporals")
_STRING_BYTES = WRITER_COUNTERS.slot("string_bytes")
_NULLS = WRITER_COUNTERS.slot("nulls")
_N_COUNTERS = len(WRITER_COUNTERS)



@njit(nogil=True, cache=True)
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


@njit(nogil=True, cache=True, inline="always")
def _starts_with_bom(src, a, b):
    """Whether ``src[a:b]`` starts with EF BB BF (U+FEFF): at the start of a
    file every reader takes those bytes for a byte order mark and drops them."""
    return b - a >= 3 and src[a] == 0xEF and src[a + 1] == 0xBB and src[a + 2] == 0xBF


@njit(nogil=True, cache=True)
def _fmt_bytes(out, pos, cap, src, a, b, sep, quote, batch, words, spellings, file_start):
    """String/binary bytes ``src[a:b]``, quoted when needed (also when equal to
    a null spelling, if ``spellings``; or when, as the file's first field
    (``file_start``), they start with a BOM's bytes)."""
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
    needs = special or n_quotes > 0 or (file_start and _starts_with_bom(src, a, b))
    if not needs and spellings and words[BATCH.null_spellings] > 0:
        # Quoting keeps a value that spells a null a string for readers with
        # strings_can_be_null=True and quoted_strings_can_be_null=False.
        needs = _is_spelling(src, a, n, batch, words, words[BATCH.null_spellings],
                             words[BATCH.null_spelling_offsets] // 8, words[BATCH.null_spelling_data])
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
@njit(nogil=True, cache=True)
def _section_ok(total, off, length, align):
    return 0 <= off <= total and 0 <= length <= total - off and off % align == 0


@njit(nogil=True, cache=True)
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


@njit(nogil=True, cache=True)
def _column_ok(words, d, n_rows, total):
    kind, width, aux, flags = words[d + COLUMN.kind], words[d + COLUMN.width], words[d + COLUMN.aux], words[d + COLUMN.flags]
    if kind < 0 or kind >= N_KINDS:
        return False
    if flags & CF_VALIDITY:
        bit = words[d + COLUMN.validity_bit]
        if bit < 0 or bit > 7 or not _section_ok(total, words[d + COLUMN.validity], (bit + n_rows + 7) // 8, 1):
            return False
    if kind == K_NULL:
        return True
    if kind == K_BOOL:
        bit = words[d + COLUMN.values_bit]
        return 0 <= bit <= 7 and _section_ok(total, words[d + COLUMN.values], (bit + n_rows + 7) // 8, 1)
    if kind == K_BYTES:
        if width != 4 and width != 8:
            return False
        if n_rows == 0:
            return True
        return (words[d + COLUMN.base] >= 0
                and _section_ok(total, words[d + COLUMN.values], width * (n_rows + 1), width)
                and _section_ok(total, words[d + COLUMN.data], words[d + COLUMN.data_len], 1))
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
    return _section_ok(total, words[d + COLUMN.values], width * n_rows, width)


@njit(nogil=True, cache=True)
def layout_ok(batch):
    """Whether ``batch`` is a well-formed batch whose every section lies inside it.

    >>> layout_ok(np.zeros(8 * BATCH.size, np.uint8))  # no magic word
    False
    """
    total = batch.size
    if total % 8 != 0 or total < 8 * BATCH.size:
        return False
    words = batch.view(np.int64)
    n_rows, n_cols = words[BATCH.rows], words[BATCH.cols]
    if words[BATCH.magic] != MAGIC or words[BATCH.version] != LAYOUT_VERSION or words[BATCH.total] != total:
        return False
    if n_rows < 0 or n_rows > MAX_BATCH_ROWS or n_cols < 0 or n_cols > total // (8 * COLUMN.size):
        return False
    if 8 * (BATCH.size + n_cols * COLUMN.size) > total:
        return False
    for w in (BATCH.sep, BATCH.quote, BATCH.line_terminator0, BATCH.line_terminator1):
        if words[w] < 0 or words[w] > 255:
            return False
    if words[BATCH.line_terminator_len] < 1 or words[BATCH.line_terminator_len] > 2:
        return False
    if not _section_ok(total, words[BATCH.na_offset], words[BATCH.na_len], 1):
        return False
    ns_data, names_data = words[BATCH.null_spelling_data], words[BATCH.name_data]
    if not _offsets_ok(batch, words, words[BATCH.null_spellings], words[BATCH.null_spelling_offsets], ns_data, total - ns_data):
        return False
    if not _offsets_ok(batch, words, n_cols, words[BATCH.name_offsets], names_data, total - names_data):
        return False
    for c in range(n_cols):
        if not _column_ok(words, BATCH.size + c * COLUMN.size, n_rows, total):
            return False
    return True


# --------------------------------------------------------------------------
# The batch kernel.
# --------------------------------------------------------------------------
@njit(nogil=True, cache=True, inline="always")
def _bit(batch, off, bit, r):
    i = bit + r
    return (batch[off + (i >> 3)] >> (i & 7)) & 1


@njit(nogil=True, cache=True, inline="always")
def _put_byte(out, pos, cap, b):
    if pos < cap:
        out[pos] = b
    return pos + 1


@njit(nogil=True, cache=True, inline="always")
def _put_line_end(out, pos, cap, words):
    pos = _put_byte(out, pos, cap, words[BATCH.line_terminator0])
    if words[BATCH.line_terminator_len] == 2:
        pos = _put_byte(out, pos, cap, words[BATCH.line_terminator1])
    return pos


@njit(nogil=True, cache=True, inline="always")
def _fmt_null(out, pos, cap, batch, words, flags):
    if flags & CF_NULL_QUOTED:
        q = words[BATCH.quote]
        pos = _put_byte(out, pos, cap, q)
        return _put_byte(out, pos, cap, q)
    a, n = words[BATCH.na_offset], words[BATCH.na_len]
    end = pos + n
    if end <= cap:
        out[pos:end] = batch[a:a + n]
    return end


@njit(nogil=True, cache=True)
def _fmt_header(out, pos, cap, batch, words, file_start):
    sep, quote = words[BATCH.sep], words[BATCH.quote]
    w = words[BATCH.name_offsets] // 8
    data = words[BATCH.name_data]
    for c in range(words[BATCH.cols]):
        if c > 0:
            pos = _put_byte(out, pos, cap, sep)
        # Header names are never read as nulls: no need to quote "NA".
        pos = _fmt_bytes(out, pos, cap, batch, data + words[w + c], data + words[w + c + 1],
                         sep, quote, batch, words, False, file_start and c == 0)
    return _put_line_end(out, pos, cap, words)


@njit(nogil=True, cache=True)
def format_batch(batch, out, start, counters):
    """Format a batch as CSV text into ``out[start:]``.

    Returns ``(status, end, bad_field)``: with OK the text is
    ``out[start:end]``; with OUT_OF_SPACE ``end`` is the capacity needed (from
    ``out[0]``); with BAD_VALUE ``bad_field`` is ``row * n_cols + col`` (-1: a
    malformed batch). Counters are added to only on OK (``counters`` shorter
    than :data:`WRITER_COUNTERS` is left alone).
    """
    if not layout_ok(batch) or start < 0:
        return BAD_VALUE, start, -1
    words = batch.view(np.int64)
    i8, i16, i32 = batch.view(np.int8), batch.view(np.int16), batch.view(np.int32)
    u16, u32, u64 = batch.view(np.uint16), batch.view(np.uint32), batch.view(np.uint64)
    n_rows, n_cols = words[BATCH.rows], words[BATCH.cols]
    sep, quote = words[BATCH.sep], words[BATCH.quote]
    cap = out.size
    pos = start
    if n_cols == 0:  # like pyarrow: no columns, no text (not even line ends)
        return OK, pos, -1
    file_start = (words[BATCH.flags] & F_FILE_START) != 0
    if words[BATCH.flags] & F_HEADER_LINE:
        pos = _fmt_header(out, pos, cap, batch, words, file_start)
        file_start = False
    ints = floats = bools = temporals = string_bytes = nulls = 0
    for r in range(n_rows):
        for c in range(n_cols):
            if c > 0:
                pos = _put_byte(out, pos, cap, sep)
            d = BATCH.size + c * COLUMN.size
            kind, width, flags = words[d + COLUMN.kind], words[d + COLUMN.width], words[d + COLUMN.flags]
            if kind == K_NULL or (flags & CF_VALIDITY and
                                  _bit(batch, words[d + COLUMN.validity], words[d + COLUMN.validity_bit], r) == 0):
                nulls += 1
                pos = _fmt_null(out, pos, cap, batch, words, flags)
                continue
            values = words[d + COLUMN.values]
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
                pos = format_int(out, pos, cap, v)
            elif kind == K_FLOAT:
                floats += 1
                if width == 8:
                    pos = format_float(out, pos, cap, u64[values // 8 + r], False)
                else:
                    pos = format_float(out, pos, cap, np.uint64(u32[values // 4 + r]), True)
            elif kind == K_BYTES:
                o0 = words[d + COLUMN.base]
                if width == 4:
                    a, b = np.int64(i32[values // 4 + r]), np.int64(i32[values // 4 + r + 1])
                else:
                    a, b = words[values // 8 + r], words[values // 8 + r + 1]
                a, b = a - o0, b - o0
                if a < 0 or b < a or b > words[d + COLUMN.data_len]:
                    return BAD_VALUE, pos, r * n_cols + c
                data = words[d + COLUMN.data]
                string_bytes += b - a
                pos = _fmt_bytes(out, pos, cap, batch, data + a, data + b, sep, quote, batch, words, True,
                                 file_start and r == 0 and c == 0)
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
                pos = format_uint(out, pos, cap, m, False)
            elif kind == K_BOOL:
                bools += 1
                if _bit(batch, values, words[d + COLUMN.values_bit], r):
                    pos = write_word(out, pos, cap, False, 116, 114, 117, 101, 0, 4)
                else:
                    pos = write_word(out, pos, cap, False, 102, 97, 108, 115, 101, 5)
            elif kind == K_TIMESTAMP:
                temporals += 1
                ok, pos = format_timestamp(out, pos, cap, words[values // 8 + r], words[d + COLUMN.aux],
                                         (flags & CF_UTC) != 0)
            elif kind == K_DATE32:
                temporals += 1
                ok, pos = format_date(out, pos, cap, np.int64(i32[values // 4 + r]))
            else:  # K_TIME
                temporals += 1
                v = words[values // 8 + r] if width == 8 else np.int64(i32[values // 4 + r])
                ok, pos = format_time(out, pos, cap, v, words[d + COLUMN.aux])
            if not ok:
                return BAD_VALUE, pos, r * n_cols + c
        pos = _put_line_end(out, pos, cap, words)
    if pos > cap:
        return OUT_OF_SPACE, pos, -1
    if counters.size >= _N_COUNTERS:
        counters[_BYTES_SCANNED] += batch.size
        counters[_ROWS] += n_rows
        counters[_FIELDS] += n_rows * n_cols
        counters[_BATCHES] += 1
        counters[_INTS] += ints
        counters[_FLOATS] += floats
        counters[_BOOLS] += bools
        counters[_TEMPORALS] += temporals
        counters[_STRING_BYTES] += string_bytes
        counters[_NULLS] += nulls
    return OK, pos, -1


# --------------------------------------------------------------------------
# The MWRITE step: whole pages out, the partial last page kept in the state.
# --------------------------------------------------------------------------
@njit(nogil=True, cache=True)
def _load_i64(buf, off):
    v = np.int64(0)
    for i in range(8):
        v |= np.int64(buf[off + i]) << (8 * i)
    return v


@njit(nogil=True, cache=True)
def _store_i64(buf, off, v):
    for i in range(8):
        buf[off + i] = (v >> (8 * i)) & 0xFF


@njit(nogil=True, cache=True)
def mwrite_step(batch, state, out, counters):
    """One MWRITE of the device path: ``(status, written, bad_field)``.

    The stream is written in whole pages at the command's page, so the app
    keeps the text after the last whole page in its instance state (``tail``)
    and puts it in front of the next batch's text. The batch flagged F_LAST
    flushes everything. ``state`` is ``STATE_HEADER + page_size`` bytes,
    zeroed at MINIT. On any status but OK the engine restores the state, so a
    retry (say with the size OUT_OF_SPACE asked for) starts clean.

    >>> state = np.zeros(STATE_HEADER, np.uint8)  # no room for a page
    >>> mwrite_step(np.zeros(8, np.uint8), state, np.zeros(8, np.uint8), WRITER_COUNTERS.zeros())[0] == BAD_VALUE
    True
    """
    page = state.size - STATE_HEADER
    if page < 1:
        return BAD_VALUE, 0, -1
    tail = _load_i64(state, 8 * WRITER_STATE.tail_length)
    if tail < 0 or tail >= page:
        return BAD_VALUE, 0, -1
    status, end, bad = format_batch(batch, out, tail, counters)
    if status != OK:
        return status, end, bad
    for i in range(tail):  # end <= out.size, so the tail fits
        out[i] = state[STATE_HEADER + i]
    last = (batch.view(np.int64)[BATCH.flags] & F_LAST) != 0
    written = end if last else end - end % page
    keep = end - written
    for i in range(keep):
        state[STATE_HEADER + i] = out[written + i]
    _store_i64(state, 8 * WRITER_STATE.tail_length, keep)
    batches = 8 * WRITER_STATE.batches
    _store_i64(state, batches, _load_i64(state, batches) + 1)
    return OK, written, -1
