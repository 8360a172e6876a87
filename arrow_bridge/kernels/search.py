"""The search StorageApp: the lines of a span that hold any of several literal keywords (``grep -F``).

One task owns the lines that *start* in its byte range ``[start, start + length)``
of the file: it skips the partial line before its first line start (the byte
before ``start`` says whether ``start`` begins a line) and finishes its last line
past the range, however far that line runs (``NEEDS_MORE_INPUT`` when the input
stops first). So any cut of a file into tasks, at any byte, page or span
boundary, owns every line exactly once, and a keyword never straddles two
tasks' work. Line breaks are ``\\n``; a ``\\r`` before one belongs to the line
and a last line without a break is a line, as ``grep`` has them.

The scan walks 64 bytes at a time (one vector compare per byte value,
:func:`~arrow_bridge.numbers.swar.equal_mask64`): line breaks are counted from
a mask, and candidate keyword starts come from a filter the plan chose:

* ``PAIRS`` (up to :data:`PAIR_LIMIT` keywords): each keyword's two rarest
  bytes at their distance (both cases with ``ignore_case``), two compares
  per keyword per 64 bytes;
* ``HASHED`` (more keywords): a 65,536-bit set of the hashes of every
  keyword's ``window_bytes`` (up to 8) at offset ``window`` (the window within
  the shortest keyword that tells the keywords apart best), probed at each
  position, and 4,096 buckets of the keywords to verify.

A candidate is verified byte for byte (word at a time; through a case-folding
table with ``ignore_case``). The first verified keyword of a line emits that
line and the scan jumps to the next line. Per matching line the task writes a
record (line index within the task, offset from ``start``, length) and, in
``LINES`` mode, the line's bytes; capacities are never passed: the rest of the
scan then only counts what it would need and the task returns ``OUT_OF_SPACE``.

The plan (the instance state), task args and result header are the
:func:`~ndp_core.layout.word_layout` s below; :mod:`arrow_bridge.search` packs
and reads the same layouts. The host calls :func:`search_span`; the device
runs it inside :func:`arrow_bridge.kernels.search_app.search_storage_app` (a Numba ``cfunc``), on the pages
the engine read.

>>> PLAN.version, TASK.size, RESULT.size, SEARCH_COUNTERS.modeled
(0, 6, 8, ('bytes_searched', 'lines_matched', 'bytes_emitted'))
"""
import numpy as np

from arrow_bridge.jit import intrinsic, njit, numba_types as types
from arrow_bridge.numbers.swar import byte_at, clz64, ctz64, equal_mask64, put_byte_at, put_word_at, word_at
from ndp_core.counters import WorkCounters
from ndp_core.engine import APP_PRIVATE_STATUS_BASE, Status
from ndp_core.layout import layout_fingerprint, word_layout

# Statuses: the engine's, and one of the app's own (outside the ABI on purpose: the engine
# completes the command with APP_ERROR and the host searches the pages itself).
OK = int(Status.OK)
NEEDS_MORE = int(Status.NEEDS_MORE_INPUT)  # the last owned line runs past the input
OUT_OF_SPACE = int(Status.OUT_OF_SPACE)  # records or line bytes outgrew their capacity
INVALID_ARGS = APP_PRIVATE_STATUS_BASE + 0  # a plan, args or outputs the app cannot trust

NEWLINE = 10
#: Filters (``PLAN.strategy``).
PAIRS, HASHED = 0, 1
#: The most keywords the pair filter takes (more: the hashed filter): where the two cross on
#: IP-address prefixes, common bytes (benchmarks/results/grep.md, "The two filters").
PAIR_LIMIT = 12
#: What a task writes (``TASK.mode``): only counts, records, or records and line bytes.
COUNT, RECORDS, LINES = 0, 1, 2
#: Words of one matching line's record: line index within the task, offset from the task's start, length.
RECORD_WORDS = 3
#: Words of one keyword's anchors: offset, byte, its other case; then the same for the second anchor.
ANCHOR_WORDS = 6
HASH_BITS = 16  # the hashed filter's set: 2**16 bits
BUCKET_BITS = 12  # its buckets of keywords to verify: 2**12
HASH_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: the top bits of w * 2**64/phi

#: The instance state: flags, then byte offsets of its sections (keyword bytes, each
#: keyword's start and end (``n_keywords + 1`` words), anchors, the 256-byte folding table,
#: the hashed filter's bit set, bucket starts (``2**BUCKET_BITS + 1`` words) and keyword ids).
PLAN = word_layout("SearchPlan", [
    "version", "n_keywords", "strategy", "ignore_case", "match_all", "max_anchor", "window", "window_bytes",
    "case_bits",
    "keywords", "starts", "anchors", "fold", "bitmap", "buckets", "bucket_ids", "plan_bytes"])
#: One task: its owned range within the input (``start`` >= 1 unless ``first_line_at_start``:
#: the byte before it tells whether a line starts there), what to write and the room for it.
TASK = word_layout("SearchTask", ["start", "length", "first_line_at_start", "mode", "records_capacity",
                                  "data_capacity"])
#: The result header at the start of output 0 (records follow it): the lines the task owns,
#: how many matched, what was written, and what an ``OUT_OF_SPACE`` task would need.
RESULT = word_layout("SearchResult", ["status", "lines", "matched", "records", "data_used", "records_needed",
                                      "data_needed", "searched"])
PLAN_VERSION = layout_fingerprint(PLAN, TASK, RESULT, PAIRS, HASHED, COUNT, RECORDS, LINES, RECORD_WORDS,
                                  ANCHOR_WORDS, HASH_BITS, BUCKET_BITS, int(HASH_MULTIPLIER))

#: The work counters, by name: the modeled ones are priced by a device profile
#: (``bytes_searched`` is done by a pattern-matching pipeline where a profile has one);
#: ``lines_searched`` and ``keyword_checks`` (candidates verified) are diagnostics.
SEARCH_COUNTERS = WorkCounters(
    ("bytes_searched", "lines_searched", "lines_matched", "bytes_emitted", "keyword_checks"),
    modeled=("bytes_searched", "lines_matched", "bytes_emitted"))
BYTES_SEARCHED = SEARCH_COUNTERS.slot("bytes_searched")
LINES_SEARCHED = SEARCH_COUNTERS.slot("lines_searched")
LINES_MATCHED = SEARCH_COUNTERS.slot("lines_matched")
BYTES_EMITTED = SEARCH_COUNTERS.slot("bytes_emitted")
KEYWORD_CHECKS = SEARCH_COUNTERS.slot("keyword_checks")

_ONE = np.uint64(1)
_ZERO = np.uint64(0)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
# The AppCall words the app reads itself (addresses, not arrays: see search_span).


@intrinsic
def popcount64(typingctx, word):
    """The number of set bits of a uint64 (one ``popcnt``)."""
    if word != types.uint64:
        return None

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return types.uint64(types.uint64), codegen


@njit(nogil=True, cache=True, inline="always")
def int_at(address, offset):
    """The int64 at byte ``offset`` of the buffer at ``address``."""
    return np.int64(word_at(address, offset))


@njit(nogil=True, cache=True, inline="always")
def _copy_bytes(dst, dst_at, src, src_at, length):
    """Copies ``length`` bytes from address ``src + src_at`` to ``dst + dst_at``, a word at a time."""
    j = 0
    while j + 8 <= length:
        put_word_at(dst, dst_at + j, word_at(src, src_at + j))
        j += 8
    while j < length:
        put_byte_at(dst, dst_at + j, byte_at(src, src_at + j))
        j += 1


@njit(nogil=True, cache=True, inline="always")
def _below(count):
    """A mask of the ``count`` (0-64) low bits."""
    return _ALL if count >= 64 else (_ONE << np.uint64(count)) - _ONE


@njit(nogil=True, cache=True)
def find_byte(data, lo, hi, readable, value):
    """The index of the first byte equal to ``value`` in ``[lo, hi)`` of the
    buffer at ``data`` (``hi`` if none); reads nothing at or past ``readable``.

    >>> text = np.frombuffer(b"x" * 100 + b"\\n", np.uint8)
    >>> find_byte(text.ctypes.data, 3, 101, 101, 10), find_byte(text.ctypes.data, 3, 50, 101, 10)
    (100, 50)
    """
    i = lo
    while i < hi and i + 64 <= readable:
        mask = equal_mask64(data, i, value, value, value)
        if mask != _ZERO:
            return min(i + np.int64(ctz64(mask)), hi)
        i += 64
    while i < hi:
        if byte_at(data, i) == value:
            return i
        i += 1
    return hi


@njit(nogil=True, cache=True)
def _same_bytes(data, at, plan, keyword, length, fold):
    """Whether the ``length`` bytes at ``data + at`` equal the keyword at
    ``plan + keyword`` (through the folding table at ``plan + fold`` when
    ``fold`` > 0: the keyword is stored folded)."""
    j = 0
    if fold == 0:
        while j + 8 <= length:
            if word_at(data, at + j) != word_at(plan, keyword + j):
                return False
            j += 8
        while j < length:
            if byte_at(data, at + j) != byte_at(plan, keyword + j):
                return False
            j += 1
        return True
    while j < length:
        if byte_at(plan, fold + np.int64(byte_at(data, at + j))) != byte_at(plan, keyword + j):
            return False
        j += 1
    return True


@njit(nogil=True, cache=True)
def _hash(word, plan):
    """The hashed filter's value (``HASH_BITS`` bits) of a keyword window in the low bytes of ``word``."""
    word = word & _below(8 * int_at(plan, 8 * PLAN.window_bytes)) | np.uint64(int_at(plan, 8 * PLAN.case_bits))
    return np.int64((word * HASH_MULTIPLIER) >> np.uint64(64 - HASH_BITS))


@njit(nogil=True, cache=True)
def _window_word(data, at, readable):
    """The (up to) 8 bytes at ``data + at`` as a little-endian word, none read at or past ``readable``."""
    if at + 8 <= readable:
        return word_at(data, at)
    word = _ZERO
    for j in range(readable - at):
        word |= np.uint64(byte_at(data, at + j)) << np.uint64(8 * j)
    return word


@njit(nogil=True, cache=True)
def _keyword(plan, k):
    """``(byte offset in the plan, length)`` of keyword ``k``."""
    starts = int_at(plan, 8 * PLAN.starts)
    lo = int_at(plan, starts + 8 * k)
    return int_at(plan, 8 * PLAN.keywords) + lo, int_at(plan, starts + 8 * k + 8) - lo


@njit(nogil=True, cache=True)
def _verify(data, at, end, readable, plan, fold, counters):
    """Whether any keyword occurs at ``at`` and ends by ``end``, checking those the filter lets through."""
    counters[KEYWORD_CHECKS] += 1
    if int_at(plan, 8 * PLAN.strategy) == PAIRS:
        anchors = int_at(plan, 8 * PLAN.anchors)
        for k in range(int_at(plan, 8 * PLAN.n_keywords)):
            keyword, length = _keyword(plan, k)
            if at + length > end:
                continue
            a = anchors + 8 * ANCHOR_WORDS * k
            first = np.int64(byte_at(data, at + int_at(plan, a)))
            second = np.int64(byte_at(data, at + int_at(plan, a + 24)))
            if ((first == int_at(plan, a + 8) or first == int_at(plan, a + 16))
                    and (second == int_at(plan, a + 32) or second == int_at(plan, a + 40))
                    and _same_bytes(data, at, plan, keyword, length, fold)):
                return True
        return False
    window = at + int_at(plan, 8 * PLAN.window)
    if window + int_at(plan, 8 * PLAN.window_bytes) > end:
        return False
    bucket = _hash(_window_word(data, window, readable), plan) >> (HASH_BITS - BUCKET_BITS)
    buckets, ids = int_at(plan, 8 * PLAN.buckets), int_at(plan, 8 * PLAN.bucket_ids)
    for i in range(int_at(plan, buckets + 8 * bucket), int_at(plan, buckets + 8 * bucket + 8)):
        keyword, length = _keyword(plan, int_at(plan, ids + 8 * i))
        if at + length <= end and _same_bytes(data, at, plan, keyword, length, fold):
            return True
    return False


@njit(nogil=True, cache=True, inline="always")
def _anchor(plan, k):
    """Keyword ``k``'s anchors: ``(o1, b1, b1', o2, b2, b2')``."""
    a = int_at(plan, 8 * PLAN.anchors) + 8 * ANCHOR_WORDS * k
    return (int_at(plan, a), int_at(plan, a + 8), int_at(plan, a + 16), int_at(plan, a + 24),
            int_at(plan, a + 32), int_at(plan, a + 40))


@njit(nogil=True, cache=True, inline="always")
def _pair_mask(data, i, anchor):
    """Bit ``j`` set where both anchor bytes sit at their offsets from ``data + i + j``."""
    o1, b1, c1, o2, b2, c2 = anchor
    return equal_mask64(data, i + o1, b1, c1, c1) & equal_mask64(data, i + o2, b2, c2, c2)


@njit(nogil=True, cache=True, inline="always")
def _candidates(data, i, plan, first, second, n_keywords, hashed):
    """Bit ``j`` set where a keyword may start at ``data + i + j`` (``j`` < 64);
    ``first`` and ``second`` are the first two keywords' anchors, loaded once."""
    if hashed:
        found = _ZERO
        bitmap = int_at(plan, 8 * PLAN.bitmap)
        window = i + int_at(plan, 8 * PLAN.window)
        keep = _below(8 * int_at(plan, 8 * PLAN.window_bytes))
        case_bits = np.uint64(int_at(plan, 8 * PLAN.case_bits))
        for j in range(64):  # as _hash, with the plan's words loaded once
            h = ((word_at(data, window + j) & keep | case_bits) * HASH_MULTIPLIER) >> np.uint64(64 - HASH_BITS)
            if (word_at(plan, bitmap + 8 * np.int64(h >> np.uint64(6))) >> (h & np.uint64(63))) & _ONE:
                found |= _ONE << np.uint64(j)
        return found
    found = _pair_mask(data, i, first)
    if n_keywords > 1:
        found |= _pair_mask(data, i, second)
        for k in range(2, n_keywords):
            found |= _pair_mask(data, i, _anchor(plan, k))
    return found


@njit(nogil=True, cache=True)
def _emit(data, number, line_start, line_end, task_start, args, out, dst, counters):
    """One matching line: counted; in ``RECORDS``/``LINES`` mode its record (and
    bytes) written while everything so far fit, else the room it needs added up."""
    counters[LINES_MATCHED] += 1
    out[RESULT.matched] += 1
    mode = args[TASK.mode]
    if mode == COUNT:
        return
    length = line_end - line_start
    records, data_used = out[RESULT.records_needed], out[RESULT.data_needed]
    room = records < args[TASK.records_capacity] and (mode == RECORDS or data_used + length <= args[TASK.data_capacity])
    if room and records == out[RESULT.records]:  # nothing has overflowed yet: write it
        r = RESULT.size + RECORD_WORDS * records
        out[r], out[r + 1], out[r + 2] = number, line_start - task_start, length
        out[RESULT.records] = records + 1
        if mode == LINES:
            _copy_bytes(dst, data_used, data, line_start, length)
            out[RESULT.data_used] = data_used + length
            counters[BYTES_EMITTED] += length
    out[RESULT.records_needed] = records + 1
    out[RESULT.data_needed] = data_used + (length if mode == LINES else 0)


@njit(nogil=True, cache=True)
def _emit_every_line(data, begin, end, readable, task_start, args, out, dst, counters):
    """An empty keyword matches every line: emits the lines of ``[begin, end]``; returns their count."""
    number, line_start = 0, begin
    while True:
        line_end = find_byte(data, line_start, end, readable, NEWLINE)
        _emit(data, number, line_start, line_end, task_start, args, out, dst, counters)
        number += 1
        if line_end >= end:
            return number
        line_start = line_end + 1


@njit(nogil=True, cache=True)
def _scan(data, begin, end, readable, plan, task_start, args, out, dst, counters):
    """Searches the lines of ``data[begin:end]`` (``end``: the last line's end,
    its line break or the end of the file) and emits the matching ones;
    returns how many lines there are. Reads nothing at or past ``readable``."""
    fold = int_at(plan, 8 * PLAN.fold) if int_at(plan, 8 * PLAN.ignore_case) else 0
    hashed = int_at(plan, 8 * PLAN.strategy) == HASHED
    reach = int_at(plan, 8 * PLAN.window) + 8 if hashed else int_at(plan, 8 * PLAN.max_anchor)
    nl = np.int64(NEWLINE)
    n_keywords = int_at(plan, 8 * PLAN.n_keywords)
    first = _anchor(plan, 0) if not hashed else (0, 0, 0, 0, 0, 0)
    second = _anchor(plan, 1) if not hashed and n_keywords > 1 else first
    i, line_start, number = begin, begin, 0  # number: line breaks in [begin, i)
    last_line_done = False
    while i < end and i + 64 + reach <= readable:  # 64 positions at a time
        breaks = equal_mask64(data, i, nl, nl, nl)
        if end - i < 64:
            breaks &= _below(end - i)
        candidates = _candidates(data, i, plan, first, second, n_keywords, hashed)
        found = -1
        while candidates != _ZERO:
            at = i + np.int64(ctz64(candidates))
            if at >= end:
                break
            if _verify(data, at, end, readable, plan, fold, counters):
                found = at
                break
            candidates &= candidates - _ONE
        if found < 0:
            number += np.int64(popcount64(breaks))
            if breaks != _ZERO:
                line_start = i + 64 - np.int64(clz64(breaks))
            i += 64
            continue
        before = breaks & _below(found - i)
        number += np.int64(popcount64(before))
        if before != _ZERO:
            line_start = i + 64 - np.int64(clz64(before))
        after = breaks & ~_below(found - i)
        line_end = i + np.int64(ctz64(after)) if after != _ZERO else find_byte(data, i + 64, end, readable, nl)
        _emit(data, number, line_start, line_end, task_start, args, out, dst, counters)
        number += 1
        last_line_done = line_end >= end
        i = line_start = line_end + 1
    while i < end:  # the last bytes, one at a time
        if byte_at(data, i) == NEWLINE:
            number += 1
            i += 1
            line_start = i
        elif _verify(data, i, end, readable, plan, fold, counters):
            line_end = find_byte(data, i, end, readable, nl)
            _emit(data, number, line_start, line_end, task_start, args, out, dst, counters)
            number += 1
            last_line_done = line_end >= end
            i = line_start = line_end + 1
        else:
            i += 1
    return number if last_line_done else number + 1


@njit(nogil=True, cache=True)
def search_span(data, readable, at_eof, plan, args, out, dst, counters):
    """Searches the lines a task owns (``args``: :data:`TASK`) in the input at
    address ``data`` (``readable`` bytes; ``at_eof``: they end the file) with the
    plan at address ``plan``; writes the :data:`RESULT` header and records into
    ``out`` (int64 words) and line bytes at address ``dst``; adds to ``counters``.

    Returns ``OK``, ``NEEDS_MORE`` (the last owned line runs past the input and
    the file goes on) or ``OUT_OF_SPACE`` (``out`` then says what would fit
    everything). Addresses, not arrays: the host passes a file mapping or its
    own buffers, the device the engine's, and the kernel reads both the same way.
    (:func:`arrow_bridge.search.search_buffer` is its host-side caller.)

    >>> from arrow_bridge.search import SearchPlan
    >>> text, plan = np.frombuffer(b"ab\\ncab\\nc", np.uint8), SearchPlan.build("ab")
    >>> args = np.array([1, 6, 0, RECORDS, 4, 0])  # lines starting in bytes 1-6; the byte before is input
    >>> out, counters = np.zeros(RESULT.size + 4 * RECORD_WORDS, np.int64), SEARCH_COUNTERS.zeros()
    >>> search_span(text.ctypes.data, text.size, True, plan.state.ctypes.data, args, out, 0, counters)
    0
    >>> int(out[RESULT.lines]), out[RESULT.size: RESULT.size + RECORD_WORDS].tolist()  # "cab", 2 bytes in
    (1, [0, 2, 3])
    """
    out[:RESULT.size] = 0
    start, length = args[TASK.start], args[TASK.length]
    owned_end = start + length
    if owned_end > readable:
        if not at_eof:
            return NEEDS_MORE
        owned_end = readable
    begin = start
    if args[TASK.first_line_at_start] == 0:  # the first line that starts in the range
        begin = find_byte(data, start - 1, owned_end - 1, readable, np.int64(NEWLINE)) + 1
    if begin >= owned_end:
        out[RESULT.searched] = max(owned_end - start, 0)
        counters[BYTES_SEARCHED] += out[RESULT.searched]
        return OK
    end = find_byte(data, owned_end - 1, readable, readable, np.int64(NEWLINE))
    if end == readable and not at_eof:
        return NEEDS_MORE
    if int_at(plan, 8 * PLAN.match_all):
        lines = _emit_every_line(data, begin, end, readable, start, args, out, dst, counters)
    else:
        lines = _scan(data, begin, end, readable, plan, start, args, out, dst, counters)
    out[RESULT.lines] = lines
    out[RESULT.searched] = end - start
    counters[BYTES_SEARCHED] += end - start
    counters[LINES_SEARCHED] += lines
    overflow = out[RESULT.records_needed] > out[RESULT.records]
    out[RESULT.status] = OUT_OF_SPACE if overflow else OK
    return out[RESULT.status]


@njit(nogil=True, cache=True)
def join_values(data, offsets, out):
    """Copies each value ``data[offsets[i]:offsets[i + 1]]`` (``data``: an
    address) into ``out`` (room for the values and a byte each) followed by a
    line break, so that each becomes a line to search; returns where each value
    starts in ``out``.

    >>> import numpy as np
    >>> values = np.frombuffer(b"abxyz", np.uint8)
    >>> out = np.empty(8, np.uint8)
    >>> join_values(values.ctypes.data, np.array([0, 2, 2, 5]), out).tolist(), out.tobytes()
    ([0, 3, 4], b'ab\\n\\nxyz\\n')
    """
    n = offsets.size - 1
    starts = np.empty(n, dtype=np.int64)
    at = 0
    dst = out.ctypes.data
    for i in range(n):
        starts[i] = at
        lo, length = offsets[i], offsets[i + 1] - offsets[i]
        _copy_bytes(dst, at, data, lo, length)
        at += length
        out[at] = NEWLINE
        at += 1
    return starts
