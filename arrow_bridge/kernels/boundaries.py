"""Exact record boundaries inside arbitrary byte ranges (for partitioned reads).

Splitting a CSV file at arbitrary byte offsets needs, for each cut, the first
byte at or after it where the tokenizer (:mod:`.tokenizer`) would begin a
record. That depends on the tokenizer's state at the cut, which depends on
everything before it (a quoted field may hold line breaks). The tokenizer's
record structure is a small deterministic automaton over bytes:

============  ===========================================================
state         meaning
============  ===========================================================
``REC``       at a record start (also after an empty line): a boundary
``FIELD``     at a field start after a delimiter
``UNQ``       inside an unquoted field, or after a closed quoted section
``UNQ_ESC``   after an escape character outside quotes (next byte literal)
``Q``         inside a quoted field
``Q_ESC``     after an escape character inside quotes
``Q_QUOTE``   after a quote inside quotes: closes, or opens a doubled ``""``
``CR``        after a CR line end: a following LF belongs to it
============  ===========================================================

A quote is special only at a field start (``REC``/``FIELD``/``CR``); elsewhere
in an unquoted field it is a literal byte, as in pyarrow. A record starts at
position ``p`` when the state there is ``REC``, or ``CR`` and ``buf[p]`` is
not LF.

Kernels here compute, for one range and each possible *entry* state, the
first record start in the range and the state at its end (the range's
state-transfer function); composed in file order these give exact record
starts (see :mod:`arrow_bridge.ranges`). They are fast because in the states
that matter most the automaton only changes on a few bytes: outside quotes
the state after any byte that is neither the quote nor the escape character
is a function of that byte alone (``after``), so scans jump from quote to
quote; inside quotes they jump to the next quote or escape.

All kernels are ``nopython``/``nogil``, allocate nothing and never raise.
"""
import ctypes

import numpy as np
from llvmlite import ir

from arrow_bridge.jit import cgutils, intrinsic, njit, numba_types as types

REC, FIELD, UNQ, UNQ_ESC, Q, Q_ESC, Q_QUOTE, CR = range(8)
N_STATES = 8
STATE_NAMES = ("REC", "FIELD", "UNQ", "UNQ_ESC", "Q", "Q_ESC", "Q_QUOTE", "CR")
NONE = -1  # "no record start in this range" / "not computed"

LF = 10
_CR = 13


def transition_table(delim: int, quote: int, escape: int, double_quote: bool) -> np.ndarray:
    """The automaton as an ``(N_STATES, 256)`` uint8 table: ``table[state, byte]``.

    ``quote``/``escape`` are -1 when the dialect has none.

    >>> t = transition_table(ord(","), ord('"'), -1, True)
    >>> STATE_NAMES[t[REC, ord('"')]], STATE_NAMES[t[UNQ, ord('"')]], STATE_NAMES[t[Q, 10]]
    ('Q', 'UNQ', 'Q')
    """
    table = np.empty((N_STATES, 256), dtype=np.uint8)
    for c in range(256):
        if c == delim:
            unquoted = FIELD
        elif c == LF:
            unquoted = REC
        elif c == _CR:
            unquoted = CR
        elif c == escape:
            unquoted = UNQ_ESC
        else:
            unquoted = UNQ
        at_field_start = Q if c == quote else unquoted
        table[REC, c] = at_field_start
        table[FIELD, c] = at_field_start
        table[CR, c] = REC if c == LF else at_field_start
        table[UNQ, c] = unquoted
        table[UNQ_ESC, c] = UNQ
        if c == quote:
            table[Q, c] = Q_QUOTE if double_quote else UNQ
        elif c == escape:
            table[Q, c] = Q_ESC
        else:
            table[Q, c] = Q
        table[Q_ESC, c] = Q
        table[Q_QUOTE, c] = Q if c == quote else unquoted
    return table


def reachable_states(table: np.ndarray) -> np.ndarray:
    """Mask of the states reachable from ``REC`` (a dialect without quotes
    never is inside one): only these can be the state at a cut.

    >>> [STATE_NAMES[s] for s in np.flatnonzero(reachable_states(transition_table(44, -1, -1, True)))]
    ['REC', 'FIELD', 'UNQ', 'CR']
    """
    seen = np.zeros(N_STATES, dtype=np.bool_)
    todo = [REC]
    seen[REC] = True
    while todo:
        s = todo.pop()
        for t in np.unique(table[s]):
            if not seen[t]:
                seen[t] = True
                todo.append(int(t))
    return seen


@njit(nogil=True, cache=True, inline="always")
def _is_unquoted(state):
    return state == REC or state == FIELD or state == UNQ or state == CR


def _libc_has(name: str) -> bool:
    try:
        return hasattr(ctypes.CDLL(None), name)
    except OSError:
        return False


_HAVE_MEMRCHR = _libc_has("memrchr")


@intrinsic
def _memrchr(typingctx, base, c, n):
    """libc ``memrchr(base, c, n)`` as an address (0: not found). Declared by
    name, so the cached machine code links to it again in every process."""
    sig = types.intp(types.intp, types.intp, types.intp)

    def codegen(context, builder, signature, args):
        ptr, ch, size = args
        i8p = ir.IntType(8).as_pointer()
        fnty = ir.FunctionType(i8p, [i8p, ir.IntType(32), size.type])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "memrchr")
        found = builder.call(fn, [builder.inttoptr(ptr, i8p), builder.trunc(ch, ir.IntType(32)), size])
        return builder.ptrtoint(found, size.type)

    return sig, codegen


@njit(nogil=True, cache=True)
def _last_byte_libc(buf, start, end, c):
    if end <= start:
        return -1
    base = buf.ctypes.data
    found = _memrchr(base + start, c, end - start)
    return -1 if found == 0 else found - base


@njit(nogil=True, cache=True)
def _last_byte_loop(buf, start, end, c):
    i = end - 1
    while i >= start and buf[i] != c:
        i -= 1
    return i if i >= start else -1


_last_byte = _last_byte_libc if _HAVE_MEMRCHR else _last_byte_loop


@njit(nogil=True, cache=True)
def last_special(buf, start, end, quote, escape):
    """Position of the last quote or escape byte in ``buf[start:end]``, or -1.

    Past it, scans need not look at bytes at all (see :func:`exit_state`).
    A quote-free range costs one ``memrchr`` (tens of GB/s) and nothing else.
    """
    last = -1
    if quote >= 0:
        last = _last_byte(buf, start, end, quote)
    if escape >= 0:
        last = max(last, _last_byte(buf, max(start, last + 1), end, escape))
    return last


@njit(nogil=True, cache=True, inline="always")
def _next_quote_or_escape(buf, pos, end, quote, escape):
    """The first position in ``buf[pos:end]`` holding the quote or escape byte (``end`` if none)."""
    while pos < end:
        c = buf[pos]
        if c == quote or c == escape:
            return pos
        pos += 1
    return end


@njit(nogil=True, cache=True)
def exit_state(buf, pos, end, state, table, quote, escape, special_end):
    """The automaton's state after ``buf[pos:end]``, entered in ``state``.

    ``special_end`` is :func:`last_special` of the buffer (or anything at or
    above it): from there on, only the last byte decides.
    """
    while pos < end:
        if state == Q:
            if pos > special_end:
                return Q
            pos = _next_quote_or_escape(buf, pos, end, quote, escape)
            if pos >= end:
                return Q
            state = table[Q, buf[pos]]
            pos += 1
        elif _is_unquoted(state):
            if pos > special_end:
                return table[UNQ, buf[end - 1]]
            start = pos
            pos = _next_quote_or_escape(buf, pos, end, quote, escape)
            if pos > start:
                state = table[UNQ, buf[pos - 1]]
            if pos >= end:
                return state
            state = table[state, buf[pos]]
            pos += 1
        else:  # UNQ_ESC, Q_ESC, Q_QUOTE: one byte decides
            state = table[state, buf[pos]]
            pos += 1
    return state


@njit(nogil=True, cache=True)
def first_record_start(buf, pos, end, state, table, quote, escape, special_end):
    """The first record start in ``buf[pos:end]`` entered in ``state``.

    Returns ``(position, state)``: the position (-1 when the range holds
    none) and, when -1, the state at ``end`` (to continue in the next chunk).
    """
    while pos < end:
        if state == REC:
            return pos, REC
        if state == CR:
            if buf[pos] != LF:
                return pos, REC
            state = REC
            pos += 1
            continue
        if state == Q:
            if pos > special_end:
                return -1, Q
            pos = _next_quote_or_escape(buf, pos, end, quote, escape)
            if pos >= end:
                return -1, Q
            state = table[Q, buf[pos]]
            pos += 1
        elif state == FIELD or state == UNQ:
            # Up to the next line break, quote or escape; the last byte before
            # it sets the state (a delimiter: FIELD, anything else: UNQ).
            start = pos
            while pos < end:
                c = buf[pos]
                if c == LF or c == _CR or c == quote or c == escape:
                    break
                pos += 1
            if pos > start:
                state = table[UNQ, buf[pos - 1]]
            if pos >= end:
                return -1, state
            state = table[state, buf[pos]]
            pos += 1
        else:
            state = table[state, buf[pos]]
            pos += 1
    return -1, state


@njit(nogil=True, cache=True)
def possible_states(buf, start, end, table, entries):
    """Mask of the states the automaton can be in after ``buf[start:end]``
    when it entered in any state of the mask ``entries``.

    Runs every distinct state in lockstep (they merge fast: after a line
    break outside quotes every unquoted state is the same one).
    """
    current = entries.copy()
    nxt = np.zeros(N_STATES, dtype=np.bool_)
    for pos in range(start, end):
        c = buf[pos]
        distinct = 0
        for s in range(N_STATES):
            nxt[s] = False
        for s in range(N_STATES):
            if current[s]:
                nxt[table[s, c]] = True
        for s in range(N_STATES):
            current[s] = nxt[s]
            distinct += nxt[s]
        if distinct == 1:
            # One state left: run it alone (no more lockstep), byte by byte.
            state = 0
            for s in range(N_STATES):
                if current[s]:
                    state = s
            for p in range(pos + 1, end):
                state = table[state, buf[p]]
            for s in range(N_STATES):
                current[s] = s == state
            return current
    return current
