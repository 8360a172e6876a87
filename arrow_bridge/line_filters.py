"""pandas' line keywords, applied to the text before the reader parses it.

``skiprows`` (an int, a list/range/set or a callable), ``comment``,
``skipinitialspace``, ``lineterminator``, ``skipfooter`` and the records
before the header (``header=N``, ``header=[...]``) are decisions pandas' tokenizer takes line by
line, with its own rules for quotes, blank lines and line ends. The reader
knows none of them: :class:`LineFilterSource` wraps the text (a
:class:`~arrow_bridge.source.ByteSource` of UTF-8, after any transcoding) and
hands the reader what pandas keeps, streaming, one block at a time.

The rules are pandas' (``tokenizer.c`` of pandas 3, checked against
``pandas.read_csv`` in ``tests/arrow_bridge/test_line_filters.py``):

* ``skiprows`` counts the lines pandas counts: records (a quoted line break
  does not start one), blank lines, comment lines and blank-looking lines
  alike, the header's line 0. A skipped line ends at its first line end
  outside a quoted field.
* ``comment`` outside quotes cuts the rest of the line; a line starting with
  it is no record (``header=N`` does not count it, ``skiprows`` does).
* ``skipinitialspace`` drops spaces (not tabs) where a field starts, so
  ``a, "b,c"`` holds the quoted field ``b,c``.
* ``lineterminator`` (one character) ends records instead of LF, CRLF and CR,
  which become ordinary characters: inside quotes they are kept, outside
  (pandas keeps them in the value) the read stops with ``NotImplementedError``,
  as the reader cannot hold a line break in an unquoted value.
* Lines holding only spaces and tabs are no records, as in pandas, while the
  filter scans (past that, the reader's tokenizer skips them, as without the
  filter). Blanks followed by a comment are a record of one field holding
  them, as in pandas: the filter quotes them, which the reader then keeps.
* ``skipfooter`` drops the file's last lines, counted as ``skiprows`` counts
  them (a blank or comment line is one), a line ``skiprows`` skips too; never
  the header row. A first pass counts the lines (so the source must be able
  to seek), then the text ends where the footer begins: the reader infers the
  types without it, as pandas does.

What is dropped leaves its line breaks behind (each as CRLF, which cannot
merge with a neighbouring CR or LF), so the reader counts the file's own
physical lines: errors name the original line. Byte offsets are mapped back
(:meth:`LineFilterSource.relocate`) from a small map (per block: where it
starts in both texts and the filter's state there). Once no keyword can act
any more (the last skipped line and the header are behind, and no
``comment``, ``skipinitialspace``, ``lineterminator`` or callable
``skiprows``), the rest of the text passes through unscanned.

>>> import io, arrow_bridge
>>> data = b"# exported\\nid,name\\nskip me\\n1, x # first\\n2,y\\n"
>>> arrow_bridge.read_pandas(io.BytesIO(data), comment="#", skiprows=[2], skipinitialspace=True).values.tolist()
[[1, 'x '], [2, 'y']]
"""
from __future__ import annotations

import bisect
import csv
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional, Sequence, Union

import numpy as np

from arrow_bridge.errors import CsvParseError
from arrow_bridge.jit import njit
from arrow_bridge.source import ByteSource, copy_from_blocks, open_source

#: The keywords a :class:`LineRules` implements, as ``pandas.read_csv`` names them.
LINE_KEYWORDS = ("skiprows", "comment", "skipinitialspace", "lineterminator", "skipfooter")

Skip = Union[int, Sequence[int], Callable[[int], Any], None]

LF, CR, SPACE, TAB = 10, 13, 32, 9
_BOM = b"\xef\xbb\xbf"

# pandas' tokenizer states (tokenizer.h), and the skipped line's own.
START_RECORD, START_FIELD, IN_FIELD, IN_QUOTED, QUOTE_IN_QUOTED, ESCAPED_CHAR, ESCAPE_IN_QUOTED = range(7)
EAT_COMMENT, EAT_LINE_COMMENT, EAT_CRNL, EAT_CRNL_NOP, WHITESPACE_LINE = range(7, 12)
START_FIELD_SKIP, IN_FIELD_SKIP, IN_QUOTED_SKIP, QUOTE_IN_QUOTED_SKIP = range(12, 16)

# The filter's state between calls (an int64 array): pandas' state, its line
# count (``file_lines``, what ``skiprows`` counts), the records begun, the
# current record's mode and the previous byte (a CR's LF is no line of its own).
S_STATE, S_LINES, S_RECORDS, S_MODE, S_PREVIOUS = range(5)
STATE_SLOTS = 5
# Parameters (an int64 array); characters are -1 when unused.
P_DELIMITER, P_QUOTE, P_ESCAPE, P_DOUBLE_QUOTE, P_COMMENT, P_SKIP_SPACE, P_TERMINATOR = range(7)
P_DROP_RECORDS, P_DEFAULT_SKIP, P_CAN_PASS, P_PASS_RECORDS, P_STOP_LINE = range(7, 12)
PARAM_SLOTS = 12
# A record's mode: its text goes to the output, to the captured header rows, both or neither.
KEEP, CAPTURE = 1, 2
# What a call of :func:`_filter_text` ended with.
DONE, NEED_DECISION, PASS_THROUGH, STRAY_LINE_BREAK, AT_STOP_LINE = range(5)


@njit(nogil=True, cache=True, inline="always")
def _put(out, n, c, i, target, hit):
    """Writes ``c`` at ``out[n]``; ``hit`` becomes ``i`` (the input position) when ``n`` is the target."""
    if n == target:
        hit = i
    out[n] = c
    return n + 1, hit


@njit(nogil=True, cache=True)
def _blanks_quoted(out, record_out, n_out, quote, delim):
    """``n_out`` after the record's text ``out[record_out:n_out]``, met by a comment: where
    that text is only blanks (spaces and tabs, but the delimiter), it is quoted. pandas reads such a line as a record
    of one field holding the blanks, which unquoted the reader would skip as blank. (The
    record starts in this call's ``out``: a line of blanks is scanned again from its start
    once a byte that is no blank, such as the comment, decides it.)"""
    if quote < 0 or record_out < 0 or n_out == record_out:
        return n_out
    for k in range(record_out, n_out):
        if not _is_blank(out[k], delim):
            return n_out
    out[record_out + 1: n_out + 1] = out[record_out: n_out].copy()
    out[record_out] = quote
    out[n_out + 1] = quote
    return n_out + 2


@njit(nogil=True, cache=True, inline="always")
def _put_break(out, n, i, target, hit):
    """A dropped line's break: CRLF, which never merges with a CR before it or an LF after it."""
    n, hit = _put(out, n, CR, i, target, hit)
    return _put(out, n, LF, i, target, hit)


@njit(nogil=True, cache=True, inline="always")
def _record_mode(records, drop_records, captures):
    """The mode of the record about to begin: kept unless before the header; captured when a header row."""
    mode = KEEP if records >= drop_records else 0
    for k in range(len(captures)):
        if captures[k] == records:
            mode |= CAPTURE
    return mode


@njit(nogil=True, cache=True, inline="always")
def _is_blank(c, delim):
    return (c == SPACE or c == TAB) and c != delim


@njit(nogil=True, cache=True, inline="always")
def _plain_run(raw, i, end, st, delim, at_start, in_field, in_quotes):
    """Where the run of plain bytes from ``i`` in a kept record ends, and the
    state there: unquoted fields and the delimiters between them, or a quoted
    field's inside. ``at_start``/``in_field``/``in_quotes`` flag the bytes
    that need a look at a field's start, inside an unquoted field (1 for the
    delimiter, 2 for the others) and inside a quoted one."""
    j = i
    if st == IN_QUOTED:
        while j < end and in_quotes[raw[j]] == 0:
            j += 1
        return j, st
    if st == START_FIELD:
        while j < end and raw[j] == delim:  # empty fields
            j += 1
        if j >= end or at_start[raw[j]]:
            return j, st
        j += 1
    while j < end:
        kind = in_field[raw[j]]
        if kind == 0:
            j += 1
            continue
        if kind != 1:
            return j, IN_FIELD
        j += 1  # a delimiter: the next field starts
        while j < end and raw[j] == delim:
            j += 1
        if j >= end or at_start[raw[j]]:
            return j, START_FIELD
        j += 1
    return j, IN_FIELD


@njit(nogil=True, cache=True)
def _filter_text(raw, pos, end, final, out, n_out, cap, n_cap, cap_ends, n_ends, state, params, decisions,
                captures, stops, target, hit):
    """Filters ``raw[pos:end]`` into ``out`` (room for two bytes per input
    byte) from ``state``, as pandas' tokenizer decides (see the module).

    Records whose mode has ``CAPTURE`` are also written to ``cap`` (while it
    has room), their ends to ``cap_ends``. ``decisions[k]`` says whether line
    ``k`` is skipped; past its end ``params[P_DEFAULT_SKIP]`` does or, when
    -1, the call returns ``NEED_DECISION`` at the line's start.
    ``stops`` flag the bytes that matter at a field's start, in an unquoted
    field and in a quoted one (:meth:`LineRules.stops`). ``hit`` is the input
    position of output byte ``target`` (-1 for none).

    Returns ``(status, position, n_out, n_cap, n_ends, hit)``; ``position``
    is where to go on from: ``end``, or the start of a blank-looking line that
    ``end`` cuts (unless ``final``), of a line awaiting its decision, of the
    text to pass through unfiltered, or a stray line break.
    """
    st, lines, records, mode, prev = state[S_STATE], state[S_LINES], state[S_RECORDS], state[S_MODE], \
        state[S_PREVIOUS]
    delim, quote, escape = params[P_DELIMITER], params[P_QUOTE], params[P_ESCAPE]
    double_quote, comment, skip_space = params[P_DOUBLE_QUOTE] != 0, params[P_COMMENT], params[P_SKIP_SPACE] != 0
    custom = params[P_TERMINATOR] >= 0
    term = params[P_TERMINATOR] if custom else LF
    carriage = -1 if custom else CR  # a custom terminator makes CR an ordinary character
    drop_records, default_skip = params[P_DROP_RECORDS], params[P_DEFAULT_SKIP]
    can_pass, pass_records, stop_line = params[P_CAN_PASS] != 0, params[P_PASS_RECORDS], params[P_STOP_LINE]
    at_start, in_field, in_quotes = stops[0], stops[1], stops[2]
    status = DONE
    line_start, prev_at_line_start = pos, prev
    record_out = -1  # where the current record's text starts in ``out`` (-1: it began in an earlier call)
    i = pos
    while i < end:
        c = np.int64(raw[i])
        again = False  # pandas' "try this character again"
        line_break = st >= START_FIELD_SKIP or st == EAT_LINE_COMMENT or st == EAT_CRNL_NOP or st == WHITESPACE_LINE
        if st == START_RECORD:
            line_start, prev_at_line_start = i, prev
            if 0 <= stop_line <= lines:
                status = AT_STOP_LINE
                break
            if lines < len(decisions):
                skip = decisions[lines] != 0
            elif default_skip < 0:
                status = NEED_DECISION
                break
            elif can_pass and records >= pass_records:
                status = PASS_THROUGH
                break
            else:
                skip = default_skip != 0
            if skip:
                st = IN_QUOTED_SKIP if c == quote else IN_FIELD_SKIP
                if c == term:
                    lines += 1
                    st = START_RECORD
            elif c == term:
                lines += 1
            elif c == carriage:
                lines += 1
                st = EAT_CRNL_NOP
            elif c == comment:
                st = EAT_LINE_COMMENT
            elif _is_blank(c, delim):
                st = WHITESPACE_LINE
            else:
                mode, record_out = _record_mode(records, drop_records, captures), n_out
                st = START_FIELD
                again = True
            line_break = True
        elif st >= START_FIELD_SKIP or st == EAT_LINE_COMMENT or st == EAT_CRNL_NOP or st == WHITESPACE_LINE:
            # A line that is no record: skipped, a comment, blank-looking (or after the CR ending one).
            if st == EAT_CRNL_NOP:
                st = START_RECORD
                again = c != LF and c != delim  # pandas drops a delimiter right after such a CR
            elif st == IN_QUOTED_SKIP:
                if c == quote:
                    st = QUOTE_IN_QUOTED_SKIP if double_quote else IN_FIELD_SKIP
            elif c == term:
                lines += 1
                st = START_RECORD
            elif c == carriage:
                lines += 1
                st = EAT_CRNL_NOP
            elif st == WHITESPACE_LINE:
                if not _is_blank(c, delim):  # a record after all, from the line's start
                    i, prev = line_start, prev_at_line_start
                    mode, record_out = _record_mode(records, drop_records, captures), n_out
                    st = START_FIELD
                    continue
            elif st == START_FIELD_SKIP:
                if c == quote:
                    st = IN_QUOTED_SKIP
                elif c != delim:
                    st = IN_FIELD_SKIP
            elif st == IN_FIELD_SKIP:
                if c == delim:
                    st = START_FIELD_SKIP
            elif st == QUOTE_IN_QUOTED_SKIP:
                if c == quote:
                    st = IN_QUOTED_SKIP
                elif c == delim:
                    st = START_FIELD_SKIP
                else:
                    st = IN_FIELD_SKIP
        else:
            if mode == KEEP and (st == START_FIELD or st == IN_FIELD or st == IN_QUOTED):
                # The common run: bytes that change nothing, copied as they are (what pandas'
                # tokenizer scans with SIMD); ``stops`` flag the bytes that need a look.
                j, run_state = _plain_run(raw, i, end, st, delim, at_start, in_field, in_quotes)
                if j > i:
                    if n_out <= target < n_out + j - i:
                        hit = i + target - n_out
                    out[n_out: n_out + j - i] = raw[i:j]
                    n_out += j - i
                    prev, i, st = np.int64(raw[j - 1]), j, run_state
                    continue
            # Inside a record, as pandas tokenizes it. ``emit``: 1 the byte goes out, 0 it is
            # dropped, 2 it ends the record.
            emit = 1
            data = st == IN_QUOTED or st == ESCAPE_IN_QUOTED or st == ESCAPED_CHAR  # a byte taken as it is
            if st == EAT_CRNL:  # after the CR that ended a record
                emit = 0
                if c == LF:
                    st = START_RECORD
                    if mode & KEEP:
                        n_out, hit = _put(out, n_out, c, i, target, hit)
                elif 0 <= stop_line <= lines:  # a line starting with the delimiter: stopped too
                    status = AT_STOP_LINE
                    break
                elif c == delim:  # pandas: a record of its own, begun without a skip check
                    mode, record_out = _record_mode(records, drop_records, captures), n_out
                    st = START_FIELD
                    emit = 1
                else:
                    st = START_RECORD
                    again = True
            elif st == IN_QUOTED:
                if c == escape:
                    st = ESCAPE_IN_QUOTED
                elif c == quote:
                    st = QUOTE_IN_QUOTED if double_quote else IN_FIELD
            elif st == ESCAPE_IN_QUOTED:
                st = IN_QUOTED
            elif st == ESCAPED_CHAR:
                st = IN_FIELD
            elif c == term or c == carriage:
                emit = 2
            elif st == EAT_COMMENT:
                emit = 0
            elif st == QUOTE_IN_QUOTED:
                if c == quote:
                    st = IN_QUOTED
                elif c == delim:
                    st = START_FIELD
                else:
                    st = IN_FIELD
            elif st == START_FIELD:
                if c == quote:
                    st = IN_QUOTED
                elif c == escape:
                    st = ESCAPED_CHAR
                elif c == SPACE and skip_space:
                    emit = 0
                elif c == comment:
                    st, emit = EAT_COMMENT, 0
                    if mode & KEEP:
                        n_out = _blanks_quoted(out, record_out, n_out, quote, delim)
                elif c != delim:
                    st = IN_FIELD
            else:  # IN_FIELD
                if c == escape:
                    st = ESCAPED_CHAR
                elif c == delim:
                    st = START_FIELD
                elif c == comment:
                    st, emit = EAT_COMMENT, 0
                    if mode & KEEP:
                        n_out = _blanks_quoted(out, record_out, n_out, quote, delim)
            if emit == 1 and custom and (c == LF or c == CR) and not data and mode & (KEEP | CAPTURE):
                status = STRAY_LINE_BREAK  # pandas keeps it in an unquoted value: the reader cannot
                break
            if emit == 1:
                if mode & KEEP:
                    n_out, hit = _put(out, n_out, c, i, target, hit)
                elif not custom and (c == CR or (c == LF and prev != CR)):  # a dropped record's quoted break
                    n_out, hit = _put_break(out, n_out, i, target, hit)
                if mode & CAPTURE and n_cap < len(cap):
                    cap[n_cap] = c
                    n_cap += 1
            elif emit == 2:
                lines += 1
                records += 1
                if mode & CAPTURE and n_ends < len(cap_ends):
                    cap_ends[n_ends] = n_cap
                    n_ends += 1
                st = START_RECORD if c == term else EAT_CRNL
                if mode & KEEP and n_out == record_out and quote >= 0:
                    # all of it dropped (spaces, a comment): pandas' one empty field, which a blank line is not
                    n_out, hit = _put(out, n_out, quote, i, target, hit)
                    n_out, hit = _put(out, n_out, quote, i, target, hit)
                if mode & KEEP:
                    n_out, hit = _put(out, n_out, LF if custom else c, i, target, hit)
                else:
                    n_out, hit = _put_break(out, n_out, i, target, hit)
        if again:
            continue
        if line_break:  # of a line that is no record: it goes out as CRLF
            if (c == term and st == START_RECORD) if custom else (c == CR or (c == LF and prev != CR)):
                n_out, hit = _put_break(out, n_out, i, target, hit)
        prev = c
        i += 1
    if status == DONE and st == WHITESPACE_LINE and not final:
        # the line's fate lies past ``end``: take it up again from its start
        i, prev, st = line_start, prev_at_line_start, START_RECORD
    if status == DONE and final and START_FIELD <= st <= EAT_COMMENT:
        # the last record has no line end
        if mode & KEEP and n_out == record_out and quote >= 0 and record_out >= 0:
            n_out, hit = _put(out, n_out, quote, end, target, hit)
            n_out, hit = _put(out, n_out, quote, end, target, hit)
        records += 1
        if mode & CAPTURE and n_ends < len(cap_ends):
            cap_ends[n_ends] = n_cap
            n_ends += 1
        st = START_RECORD
    state[S_STATE], state[S_LINES], state[S_RECORDS], state[S_MODE], state[S_PREVIOUS] = st, lines, records, mode, prev
    return status, i, n_out, n_cap, n_ends, hit


@dataclass
class LineRules:
    """What pandas' line keywords ask of the text, and the dialect to read it in.

    ``header_records`` records before the header row are dropped (pandas'
    ``header=N``); the records ``header_rows`` (``header=[...]``) are kept
    aside in :attr:`captured` as the read goes by, the last of them also
    staying in the text as the reader's header row.

    >>> LineRules(skiprows=[0, 2], comment="#").keywords
    ('skiprows', 'comment')
    """

    skiprows: Skip = None
    comment: Optional[str] = None
    skipinitialspace: bool = False
    lineterminator: Optional[str] = None
    header_records: int = 0
    header_rows: tuple[int, ...] = ()
    skipfooter: int = 0
    delimiter: str = ","
    quotechar: Optional[str] = '"'
    escapechar: Optional[str] = None
    doublequote: bool = True
    #: The header rows' text (``header_rows``), filled in by the latest read.
    captured: Optional[list[bytes]] = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        for name in ("comment", "lineterminator"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or len(value) != 1):
                raise ValueError(f"Only length-1 {'comment characters' if name == 'comment' else 'line terminators'} "
                                 f"supported, got {name}={value!r}")  # pandas' words
            if value is not None and len(value.encode()) != 1:
                raise ValueError(f"{name} must be a one-byte character, got {value!r}")
        if isinstance(self.skipfooter, bool) or not isinstance(self.skipfooter, (int, np.integer)):
            raise ValueError("skipfooter must be an integer")  # pandas' words
        if self.skipfooter < 0:
            raise ValueError("skipfooter cannot be negative")  # pandas' words
        if isinstance(self.skiprows, bool) or isinstance(self.skiprows, (int, np.integer)) and self.skiprows < 0:
            raise ValueError(f"skiprows must be a non-negative int, a list of row numbers or a callable, "
                             f"got {self.skiprows!r}")
        if self.skiprows is not None and not isinstance(self.skiprows, (int, np.integer, range)) and \
                not callable(self.skiprows):
            self.skiprows = tuple(self.skiprows)  # a set or a generator: read once, used twice

    @property
    def keywords(self) -> tuple[str, ...]:
        """The pandas keywords these rules act on (for messages)."""
        used = {"skiprows": self.skiprows is not None and not _no_skip(self.skiprows), "comment": self.comment is not None,
                "skipinitialspace": self.skipinitialspace, "lineterminator": self.lineterminator is not None,
                "header": bool(self.header_records or self.header_rows), "skipfooter": self.skipfooter > 0}
        return tuple(name for name, on in used.items() if on)

    @property
    def active(self) -> bool:
        """Whether the text needs filtering at all.

        >>> LineRules().active, LineRules(skiprows=0).active, LineRules(header_records=2).active
        (False, False, True)
        """
        return bool(self.keywords)

    @property
    def scans_every_line(self) -> bool:
        """Whether every line must be looked at (no pass-through after the first lines)."""
        return self.comment is not None or self.skipinitialspace or self.lineterminator is not None or \
            callable(self.skiprows) or self.skipfooter > 0

    def stops(self) -> np.ndarray:
        """Per byte, whether it needs a look at a field's start, inside an
        unquoted field (1 for the delimiter, 2 for the others) and inside a
        quoted one (rows 0, 1, 2); the others are copied as they are."""
        stops = np.zeros((3, 256), dtype=np.uint8)
        breaks = [char for char in (self.lineterminator, "\n", "\r") if char is not None]
        for row, chars in ((0, [self.quotechar, self.escapechar, self.comment, " " if self.skipinitialspace else None,
                                *breaks]),
                           (1, [self.escapechar, self.comment, *breaks]),
                           (2, [self.quotechar, self.escapechar])):
            for char in chars:
                if char is not None:
                    stops[row, ord(char)] = 2 if row == 1 else 1
        stops[1, ord(self.delimiter)] = 1
        return stops

    def params(self) -> np.ndarray:
        """The kernel's parameters (``P_*`` slots)."""
        params = np.full(PARAM_SLOTS, -1, dtype=np.int64)
        params[P_DELIMITER] = ord(self.delimiter)
        params[P_QUOTE] = ord(self.quotechar) if self.quotechar else -1
        params[P_ESCAPE] = ord(self.escapechar) if self.escapechar else -1
        params[P_DOUBLE_QUOTE] = int(bool(self.doublequote))
        params[P_COMMENT] = ord(self.comment) if self.comment is not None else -1
        params[P_SKIP_SPACE] = int(bool(self.skipinitialspace))
        params[P_TERMINATOR] = ord(self.lineterminator) if self.lineterminator is not None else -1
        params[P_DROP_RECORDS] = self.header_records
        params[P_CAN_PASS] = int(not self.scans_every_line)
        # past the header row (a blank-looking line before it must not pass to the reader)
        params[P_PASS_RECORDS] = max(self.header_records, *self.header_rows, 0) + 1
        return params


def _no_skip(skiprows: Skip) -> bool:
    """``skiprows`` that skips nothing (0, an empty list)."""
    if callable(skiprows):
        return False
    if isinstance(skiprows, (int, np.integer)):
        return skiprows == 0
    return len(skiprows) == 0


class _Decisions:
    """Which lines ``skiprows`` skips, as a growing byte array (one byte a
    line, up to the last line it can skip; a callable is asked line by line)."""

    def __init__(self, skiprows: Skip):
        self.skip = skiprows
        self.values = np.zeros(0, dtype=np.uint8)
        if skiprows is None or callable(skiprows):
            self.bound: Optional[int] = 0 if skiprows is None else None
        elif isinstance(skiprows, (int, np.integer)):
            self.bound = int(skiprows)
        else:
            self._rows = np.unique(np.fromiter((int(k) for k in skiprows), dtype=np.int64))
            self._rows = self._rows[self._rows >= 0]
            self.bound = int(self._rows[-1]) + 1 if len(self._rows) else 0

    @property
    def default(self) -> int:
        """The kernel's ``P_DEFAULT_SKIP``: 0 once every line that can be skipped is decided, else -1 (ask)."""
        return 0 if self.bound is not None and len(self.values) >= self.bound else -1

    def grow(self, line: int, ahead: int) -> None:
        """Decides lines from ``line`` (the first undecided) on; a callable is
        asked about ``ahead`` of them, the line breaks left in the block, so
        about lines that exist unless quoted line breaks make fewer lines."""
        if self.bound is None:
            self._ask(line, max(ahead, 1))
            return
        stop = min(self.bound, max(2 * len(self.values), line + (1 << 16)))
        rows = np.arange(len(self.values), stop, dtype=np.int64)
        if isinstance(self.skip, (int, np.integer)):
            more = np.ones(len(rows), dtype=np.uint8)
        else:
            more = np.isin(rows, self._rows).astype(np.uint8)
        self.values = np.concatenate([self.values, more])

    def _ask(self, line: int, count: int) -> None:
        """The callable's verdicts for ``count`` lines from ``line``, as pandas
        takes them (truthiness). Lines past the one needed now are asked ahead:
        one that raises ends the batch and is asked again when needed."""
        verdicts = []
        for k in range(line, line + count):
            try:
                verdicts.append(1 if self.skip(k) else 0)
            except Exception:
                if k == line:
                    raise
                break
        self.values = np.concatenate([self.values, np.array(verdicts, dtype=np.uint8)])


def open_text(source: Any, storage_options: Any = None, *, for_device: bool = False, reads_header: bool = True,
              **opening: Any) -> ByteSource:
    """:func:`arrow_bridge.source.open_source`, then the line rules an
    :class:`arrow_bridge.source.OpeningOptions` carries (pandas' line
    keywords) applied to its text. Use it in a ``with``: on the way out a
    reader's error moves back to the file's lines and offsets.
    ``reads_header``: whether the reader takes a header row (``skipfooter``
    never cuts it).

    >>> from arrow_bridge.source import OpeningOptions
    >>> with open_text(b"a\\n#c\\n1\\n", OpeningOptions(line_rules=LineRules(comment="#"))) as src:
    ...     src.read_block(1 << 20).tobytes()
    b'a\\n\\r\\n1\\n'
    """
    src = open_source(source, storage_options, for_device=for_device, **opening)
    rules = getattr(storage_options, "line_rules", None)
    if rules is None or not rules.active:
        return src
    if for_device:
        src.close()
        raise ValueError(f"{', '.join(rules.keywords)} with a device split: the device parses the file's "
                         "raw pages, which these keywords would rewrite; read it on the host (split='host')")
    try:
        return LineFilterSource(src, rules, reads_header=reads_header)
    except BaseException:  # skipfooter's count of the lines raised
        src.close()
        raise


class LineFilterSource(ByteSource):
    """The text of ``base`` as pandas' line keywords leave it (see the module).

    Read in raw blocks of ``block_size`` bytes, in order; per block the source
    remembers where it starts in both texts and the filter's state there, so
    a random-access base can re-read any range of the filtered text and
    :meth:`file_offset` maps an offset back. :class:`CsvParseError`\\ s raised
    inside its ``with`` block are moved to the base's offsets
    (:meth:`relocate`); their lines need no mapping (what is dropped leaves
    its line breaks). A base that cannot seek keeps its latest ``keep``
    bytes of raw blocks for that.

    >>> from arrow_bridge.source import open_source
    >>> with LineFilterSource(open_source(b"a,b\\n#c\\n1,2 # x\\n"), LineRules(comment="#")) as src:
    ...     text = src.read_block(100).tobytes()
    ...     text, src.file_offset(text.index(b"1"))
    (b'a,b\\n\\r\\n1,2 \\n', 7)
    """

    path = None

    def __init__(self, base: ByteSource, rules: LineRules, *, block_size: int = 1 << 20, keep: int = 64 << 20,
                 reads_header: bool = True):
        self._base, self.rules = base, rules
        self.name, self.random_access = base.name, base.random_access
        self.rewrites = f"pandas' {', '.join(rules.keywords)}"
        self.origin = base.origin
        self._block_size = block_size
        self._params = rules.params()
        self._stops = rules.stops()
        self._decisions = _Decisions(rules.skiprows)
        self._params[P_DEFAULT_SKIP] = self._decisions.default
        self._state = np.zeros(STATE_SLOTS, dtype=np.int64)
        # Per block: its filtered offset (``_starts``) and (raw offset, raw length, last block, state before it).
        self._starts: list[int] = []
        self._marks: list[tuple[int, int, bool, np.ndarray]] = []
        self._produced, self._raw_at, self._eof = 0, 0, False
        self._carry = np.empty(0, dtype=np.uint8)  # raw bytes read but not filtered yet (a line's fate pending)
        self._passing: Optional[tuple[int, int]] = None  # (filtered, raw) offsets from where the text passes through
        self._ready: deque[tuple[int, np.ndarray]] = deque()
        self._at = 0
        self._captured = bytearray() if rules.header_rows else None
        self._capture_ends: list[int] = []
        self._lock = threading.RLock()
        self._keep, self._kept, self._kept_bytes = keep, deque(), 0
        self._relocated: set[int] = set()
        # the records the reader takes as its header (not the footer's to cut): pandas' header=None none
        self._header_records = int(self._params[P_PASS_RECORDS]) if reads_header else 0
        #: Whether the text keeps a first record the footer holds, for the reader to count the columns by and
        #: read no row: a file without a header row, all of it footer (pandas: an empty frame of its columns).
        self.drops_first_record = False
        if rules.skipfooter:
            self._cut_footer()

    def lines_before_origin(self) -> int:
        return self._base.lines_before_origin()

    # ---- reading ------------------------------------------------------------------------------------
    def readinto(self, buf: np.ndarray) -> int:
        total = 0
        with self._lock:
            while total < len(buf):
                if self._ready:
                    block = self._ready[0][1]
                    n = min(len(buf) - total, len(block) - self._at)
                    buf[total: total + n] = block[self._at: self._at + n]
                    total, self._at = total + n, self._at + n
                    if self._at == len(block):
                        self._ready.popleft()
                        self._at = 0
                elif self._passing is not None:
                    n = self._base.readinto(buf[total:])
                    total += n
                    self._produced += n
                    if not n:
                        break
                elif not self._filter_next():
                    break
        return total

    def readinto_at(self, buf: np.ndarray, offset: int) -> int:
        if not self.random_access:
            raise OSError(f"{self.name}: the file cannot seek")
        with self._lock:
            while offset + len(buf) > self._produced and self._passing is None and self._filter_next():
                pass  # filtered ahead of the sequential reads (kept in ``_ready`` for them)
            if self._ready and self._ready[0][0] + self._at <= offset and offset + len(buf) <= self._produced:
                return self._copy_ready(buf, offset)
            starts, marks, passing = list(self._starts), list(self._marks), self._passing
        filled = 0
        k = max(bisect.bisect_right(starts, offset) - 1, 0)
        while filled < len(buf) and k < len(marks):
            end = starts[k + 1] if k + 1 < len(starts) else (passing[0] if passing else None)
            if end is not None and end <= offset + filled:
                k += 1
                continue
            text = self._refiltered(marks[k])
            lo = offset + filled - starts[k]
            n = max(0, min(len(text) - lo, len(buf) - filled))
            buf[filled: filled + n] = text[lo: lo + n]
            filled += n
            k += 1
        if filled < len(buf) and passing is not None and offset + filled >= passing[0]:
            filled += self._base.readinto_at(buf[filled:], passing[1] + offset + filled - passing[0])
        return filled

    def _copy_ready(self, buf: np.ndarray, offset: int) -> int:
        return copy_from_blocks(self._ready, buf, offset)

    def _filter_next(self) -> bool:
        """Filters the next raw block into ``_ready``; False at the end."""
        if self._eof:
            return False
        block = self._base.read_block(self._block_size)
        final = len(block) < self._block_size
        while self._raw_at == 0 and not final and len(block) < len(_BOM):  # see a whole BOM (tiny blocks)
            more = self._base.read_block(self._block_size)
            block, final = np.concatenate([block, more]), len(more) < self._block_size
        raw = np.concatenate([self._carry, block]) if len(self._carry) else block
        mark = (self._raw_at, len(raw), final, self._state.copy())
        text, consumed, ending = self._filter(raw, self._raw_at, self._state, final,
                                              capture=self._captured is not None)
        self._marks.append(mark)
        self._starts.append(self._produced)
        self._ready.append((self._produced, text))
        self._produced += len(text)
        if not self.random_access:
            self._keep_raw(self._raw_at, raw)
        self._raw_at += consumed
        self._carry = raw[consumed:] if ending != AT_STOP_LINE else raw[:0]
        self._eof = final or ending == AT_STOP_LINE
        if ending == PASS_THROUGH:
            self._passing = (self._produced, self._raw_at)
        return True

    def _filter(self, raw: np.ndarray, raw_at: int, state: np.ndarray, final: bool, capture: bool = False,
                target: int = -1, params: Optional[np.ndarray] = None) -> tuple[np.ndarray, int, int]:
        """``raw`` (at ``raw_at`` in the base) filtered from ``state`` (updated):
        ``(text, raw bytes consumed, how it ended)``: ``DONE``, ``PASS_THROUGH``
        (the rest passes through) or ``AT_STOP_LINE`` (the footer begins: the text ends here);
        ``target`` >= 0 instead returns the position in ``raw`` of that byte of
        the text as the second item. ``params``: the kernel's, if not the source's."""
        params = self._params if params is None else params
        out = np.empty(2 * len(raw) + len(_BOM), dtype=np.uint8)
        cap = np.empty(len(raw) if capture else 0, dtype=np.uint8)
        cap_ends = np.empty(len(raw) + 1 if capture else 0, dtype=np.int64)
        pos = n_out = n_cap = n_ends = 0
        hit = -1
        if raw_at == 0 and self.origin == 0 and bytes(raw[: len(_BOM)]) == _BOM:
            out[: len(_BOM)] = np.frombuffer(_BOM, np.uint8)  # the reader drops it, as pandas does
            pos = n_out = len(_BOM)
            hit = target if 0 <= target < len(_BOM) else -1
        while True:
            status, pos, n_out, n_cap, n_ends, hit = _filter_text(
                raw, pos, len(raw), final, out, n_out, cap, n_cap, cap_ends, n_ends, state, params,
                self._decisions.values, self._skip_captures(capture), self._stops, target, hit)
            if status == AT_STOP_LINE:
                if state[S_RECORDS] >= self._header_records:
                    break
                with self._lock:  # the header row is not behind yet: the footer starts after it
                    params[P_STOP_LINE] = self._params[P_STOP_LINE] = state[S_LINES] + 1
                continue
            if status == NEED_DECISION:
                with self._lock:
                    if len(self._decisions.values) <= state[S_LINES]:
                        self._decisions.grow(int(state[S_LINES]), _line_breaks(raw[pos:]))
                    params[P_DEFAULT_SKIP] = self._decisions.default
                continue
            if status == STRAY_LINE_BREAK:
                raise self._stray(int(raw[pos]), raw_at + pos, int(state[S_LINES]) + 1)
            break
        if capture:
            self._keep_captured(cap[:n_cap], cap_ends[:n_ends])
        if status == PASS_THROUGH:  # the rest of the block as it is
            if target >= n_out and hit < 0:
                hit = pos + target - n_out
            out[n_out: n_out + len(raw) - pos] = raw[pos:]
            n_out, pos = n_out + len(raw) - pos, len(raw)
        return out[:n_out], (hit if target >= 0 else pos), status if status in (PASS_THROUGH, AT_STOP_LINE) else DONE

    # ---- skipfooter ---------------------------------------------------------------------------------
    def _cut_footer(self) -> None:
        """Counts the text's lines (a first pass) and makes the text end at
        the footer's first line (the kernel's ``P_STOP_LINE``), or past the
        header row if that comes later."""
        if not self.random_access:
            raise NotImplementedError(f"{self.name}: skipfooter needs a source it can read twice (a path, bytes "
                                      "or a seekable file): the lines are counted first")
        state, last = self._scan(-1)
        ends = (ord(self.rules.lineterminator),) if self.rules.lineterminator is not None else (LF, CR)
        lines = int(state[S_LINES]) + (last >= 0 and last not in ends)  # a last line without a line end too
        stop = max(lines - self.rules.skipfooter, 0)
        if not self._header_records and not self._scan(stop, until_a_record=True)[0][S_RECORDS]:
            self.drops_first_record, self._header_records = True, 1
        self._params[P_STOP_LINE] = stop

    def _scan(self, stop_line: int, until_a_record: bool = False) -> tuple[np.ndarray, int]:
        """The filter's state after the text up to line ``stop_line`` (-1: all of
        it; with ``until_a_record``, once a record is complete), and the last
        byte read (-1: none)."""
        params = self._params.copy()
        params[P_CAN_PASS], params[P_STOP_LINE] = 0, stop_line
        state = np.zeros(STATE_SLOTS, dtype=np.int64)
        raw_at, read_at, carry, last = 0, 0, np.empty(0, dtype=np.uint8), -1
        while True:
            block = self._base.read_range(read_at, self._block_size)
            read_at += len(block)
            final = len(block) < self._block_size
            last = int(block[-1]) if len(block) else last
            raw = np.concatenate([carry, block]) if len(carry) else block
            _, consumed, ending = self._filter(raw, raw_at, state, final, params=params)
            raw_at, carry = raw_at + consumed, raw[consumed:]
            if final or ending == AT_STOP_LINE or (until_a_record and state[S_RECORDS]):
                return state, last

    def _skip_captures(self, capture: bool) -> np.ndarray:
        """The header rows' record numbers, while they are being captured."""
        return np.asarray(self.rules.header_rows if capture else (), dtype=np.int64)

    def _keep_captured(self, text: np.ndarray, ends: np.ndarray) -> None:
        """Adds a block's captured header text; once every header row is in, hands them to the rules."""
        base = len(self._captured)
        self._captured += text.tobytes()
        self._capture_ends.extend(int(base + end) for end in ends)
        if len(self._capture_ends) >= len(self.rules.header_rows):
            bounds = [0, *self._capture_ends[: len(self.rules.header_rows)]]
            self.rules.captured = [bytes(self._captured[lo:hi]) for lo, hi in zip(bounds, bounds[1:])]
            self._captured = None

    def _refiltered(self, mark: tuple[int, int, bool, np.ndarray]) -> np.ndarray:
        """A block's filtered text again, from the raw bytes and the state before it."""
        raw_at, length, final, state = mark
        raw = self._base.read_range(raw_at, length)
        return self._filter(raw, raw_at, state.copy(), final)[0]

    def _stray(self, byte: int, at: int, line: int) -> NotImplementedError:
        """The error for a line break ``byte`` outside quotes under another ``lineterminator``, at base offset
        ``at`` on ``line`` (lines as the terminator ends them)."""
        where = self._base.file_offset(at) if hasattr(self._base, "file_offset") else at  # a transcoded file's
        return NotImplementedError(
            f"{self.name}: line {line}: lineterminator={self.rules.lineterminator!r}, and a "
            f"{'CR' if byte == CR else 'LF'} outside quotes (byte offset {where}), which pandas keeps in the "
            "value: the reader cannot hold a line break in an unquoted value. Read without lineterminator (LF, "
            "CRLF and CR all end lines), or quote such values")

    def _keep_raw(self, raw_at: int, raw: np.ndarray) -> None:
        self._kept.append((raw_at, raw))
        self._kept_bytes += len(raw)
        while self._kept_bytes > self._keep and len(self._kept) > 1:
            self._kept_bytes -= len(self._kept.popleft()[1])

    # ---- offsets in the base ------------------------------------------------------------------------
    def file_offset(self, offset: int) -> Optional[int]:
        """The base's offset of the byte at filtered ``offset``; None when its
        block is no longer at hand (a base that cannot seek, ``keep`` bytes
        back), after which :meth:`block_offset` gives the block's start."""
        with self._lock:
            passing, k = self._passing, bisect.bisect_right(self._starts, offset) - 1
            if passing is not None and offset >= passing[0]:
                return passing[1] + offset - passing[0]
            if k < 0:
                return offset
            start, (raw_at, length, final, state) = self._starts[k], self._marks[k]
        raw = self._base.read_range(raw_at, length) if self.random_access else \
            next((block for at, block in self._kept if at == raw_at), None)
        if raw is None:
            return None
        hit = self._filter(raw[:length], raw_at, state.copy(), final, target=offset - start)[1]
        return raw_at + (hit if hit >= 0 else length)

    def block_offset(self, offset: int) -> int:
        """The base's offset of the start of the block holding filtered ``offset``."""
        with self._lock:
            k = max(bisect.bisect_right(self._starts, offset) - 1, 0)
            return self._marks[k][0] if self._marks else 0

    def relocate(self, err: CsvParseError) -> None:
        """Moves a reader's error from its filtered offset to the base's, and on
        to the file's (a transcoding base's), once."""
        if err.byte_offset is None or id(err) in self._relocated:
            return
        self._relocated.add(id(err))
        offset = self.file_offset(err.byte_offset)
        if offset is None:
            err.move_to(self.block_offset(err.byte_offset), f" (in the {self._block_size}-byte block at this "
                                                            "offset: the exact offset is no longer known)")
        else:
            err.move_to(offset)
        self._base.relocate(err)

    def __exit__(self, exc_type: Any, exc: Optional[BaseException], tb: Any) -> None:
        if isinstance(exc, CsvParseError):
            self.relocate(exc)
        self._base.__exit__(exc_type, exc, tb)  # a transcoding base moves it on to the file's offsets

    def close(self) -> None:
        self._base.close()


def _line_breaks(raw: np.ndarray) -> int:
    """LF, CRLF and lone CR line ends in ``raw``."""
    lf = int(np.count_nonzero(raw == LF))
    cr = int(np.count_nonzero(raw == CR))
    return lf + cr - (int(np.count_nonzero((raw[:-1] == CR) & (raw[1:] == LF))) if cr else 0)


def header_fields(rows: Iterable[bytes], rules: LineRules) -> list[list[str]]:
    """The fields of captured header rows, split in the rules' dialect.

    >>> header_fields([b'a,"b,c"', b"x,y"], LineRules())
    [['a', 'b,c'], ['x', 'y']]
    """
    quoting = csv.QUOTE_NONE if rules.quotechar is None else csv.QUOTE_MINIMAL
    lines = [row.decode("utf-8", "replace") for row in rows]
    return [next(csv.reader([line], delimiter=rules.delimiter, quotechar=rules.quotechar or '"',
                            escapechar=rules.escapechar, doublequote=rules.doublequote, quoting=quoting), [])
            for line in lines]
