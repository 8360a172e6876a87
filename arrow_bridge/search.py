"""``grep``: the lines of a text file holding any of several literal keywords, as Arrow.

The answer equals ``LC_ALL=C grep -F -n`` (``-i``: ``-F -i -n``, ASCII case
folding): 1-based line numbers and the lines without their line break (a
``\\r`` before it stays). Keywords are strings (UTF-8) or bytes, any number,
any length; one holding a line break is several keywords (as grep reads a
pattern list); an empty one matches every line.

The file is cut into tasks of ``block_size`` bytes at any byte: a task owns
the lines that start in it (:mod:`arrow_bridge.kernels.search`), so the cut
never changes the answer. Tasks run on the host (threads over a read-only
mapping of the file) or, with ``device=``, as StorageApp commands on an
emulated computational SSD (MREAD, or READ_PROC_TSK for the task-queue
splits), the same kernel on the pages the device read; the device's timing
model then prices the run from its work counters and the Report is recorded
(``ndp_core.report.collect``). On ``biscuit-pm`` the per-channel pattern
matcher searches (when the keywords fit it: see :func:`matcher_fits`), on
other profiles the device's cores do.

>>> import tempfile, os
>>> with tempfile.TemporaryDirectory() as folder:
...     path = os.path.join(folder, "access.log")
...     _ = open(path, "wb").write(b"GET /a 200\\nPOST /b 404\\r\\nGET /c 404\\nlast line 404")
...     table = grep(path, ["404"])
...     count = grep(path, ["post", "GET /a"], count=True, ignore_case=True)
>>> table.column("line_number").to_pylist(), table.column("line").to_pylist()
([2, 3, 4], ['POST /b 404\\r', 'GET /c 404', 'last line 404'])
>>> count
2
"""
from __future__ import annotations

import mmap
import os
import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional, Sequence, Union

import numpy as np
import pyarrow as pa  # pyarrow.compute is imported in the functions that use it: ~50 ms of every start-up

from arrow_bridge.kernels.search import (ANCHOR_WORDS, BUCKET_BITS, COUNT, HASH_BITS, HASH_MULTIPLIER, HASHED,
                                         LINES, OK, OUT_OF_SPACE, PAIR_LIMIT, PAIRS, PLAN, PLAN_VERSION, RECORD_WORDS,
                                         RECORDS, RESULT, SEARCH_COUNTERS, TASK, join_values, search_span)
from ndp_core import MAX_PAGES_PER_COMMAND
from ndp_core.device import (DEVICE, FAULT_APP, FAULT_MEDIA, FAULT_NAMES, FAULT_TIMEOUT, FAULT_TQ_OVERFLOW, HOST,
                             RAW, Device, SplitPolicy, TaskWork)
from ndp_core.engine import Opcode, Status
from ndp_core.layout import align8, word_list

__all__ = ["grep", "filter_strings", "SearchPlan", "matcher_fits", "DEFAULT_BLOCK_SIZE"]

#: Bytes per task when no ``block_size`` is given: large enough that a device's
#: per-command cost is small beside the search (Biscuit reaches its read bandwidth
#: from ~500 KiB requests, [B] Fig. 7), small enough to spread over threads.
DEFAULT_BLOCK_SIZE = 4 << 20
#: Biscuit's matcher: "at most three keywords, each of which is up to 16 bytes long"
#: ([B] Sec. V.A). We give it the line break as one of them (line numbers and line
#: bounds), so the user's keywords get two.
MATCHER_KEYWORDS = 3
MATCHER_KEYWORD_BYTES = 16
#: Past the task's range a device command first reads this much, to finish its last line.
LINE_TAIL_BYTES = 16 << 10
MAX_ATTEMPTS = 3
#: Keyword sets up to this size lose the keywords that hold another (a line holding one holds the other).
PRUNE_LIMIT = 1000
RAW_FALLBACK = ("IO_ERROR", "APP_ERROR", "RETURNED_RAW")  # the host reads the pages and searches them
FAULT_OF_STATUS = {"IO_ERROR": FAULT_NAMES[FAULT_MEDIA], "APP_ERROR": FAULT_NAMES[FAULT_APP],
                   "RETURNED_RAW": FAULT_NAMES[FAULT_TQ_OVERFLOW], "TIMEOUT": FAULT_NAMES[FAULT_TIMEOUT]}


# --------------------------------------------------------------------------
# Keywords -> the app's plan.
# --------------------------------------------------------------------------
def _byte_commonness() -> np.ndarray:
    """How common each byte is in text and logs, 0 (rare) to 10 (space): an
    assumption (a rough English-letter and log-punctuation order), used only to
    pick the two bytes of a keyword the pair filter looks for; any choice is exact."""
    rank = np.full(256, 1, dtype=np.int64)  # bytes >= 0x80 and control bytes: rare in text
    rank[0:32] = 0
    groups = {10: b" ", 9: b"etaoinsr", 8: b"hldcu0123456789", 7: b"mfpgwy/.:-\"", 6: b"bvk,=_\t",
              5: b"ETAOINSRHLDCU[]()", 4: b"MFPGWYBVKxjqz;&?'", 3: b"XJQZ!#$%*+<>@|", 2: b"~^`{}\\"}
    for value, members in groups.items():
        rank[list(members)] = value
    return rank


BYTE_COMMONNESS = _byte_commonness()
_FOLD = np.arange(256, dtype=np.uint8)
_FOLD[ord("A"): ord("Z") + 1] += 32  # ASCII case folding, as grep -i in the C locale


def normalize_keywords(keywords: Union[str, bytes, Iterable[Union[str, bytes]]],
                       ignore_case: bool = False) -> tuple[tuple[bytes, ...], bool]:
    """``(keywords, match_all)``: the keywords as distinct bytes (UTF-8 for
    strings; split at line breaks; ASCII-lowercased with ``ignore_case``),
    without any that holds another (a line holding it holds the other; sets of up
    to ``PRUNE_LIMIT``);
    ``match_all`` when one is empty (it matches every line).

    >>> normalize_keywords(["GET", "GET /", b"404\\n500", "GET"])
    ((b'GET', b'404', b'500'), False)
    >>> normalize_keywords("Err", ignore_case=True), normalize_keywords(["x", ""])[1]
    (((b'err',), False), True)
    """
    items = [keywords] if isinstance(keywords, (str, bytes, bytearray, memoryview)) else list(keywords)
    if not items:
        raise ValueError("grep needs at least one keyword")
    split: list[bytes] = []
    for item in items:
        raw = item.encode("utf-8") if isinstance(item, str) else bytes(item)
        split += raw.split(b"\n")
    if ignore_case:
        split = [word.translate(_FOLD.tobytes()) for word in split]
    if any(not word for word in split):
        return (), True
    distinct = list(dict.fromkeys(split))
    if len(distinct) > PRUNE_LIMIT:  # pruning compares every pair
        return tuple(distinct), False
    kept = tuple(word for word in distinct if not any(other != word and other in word for other in distinct))
    return kept, False


def _anchors(word: bytes, ignore_case: bool) -> list[int]:
    """The pair filter's two positions in ``word`` (its rarest bytes, distinct
    values where it can) and the byte values it looks for there (both cases with
    ``ignore_case``): ``[o1, b1, b1', o2, b2, b2']``."""
    rank = [int(BYTE_COMMONNESS[b]) for b in word]
    first = min(range(len(word)), key=lambda i: (rank[i], i))
    others = [i for i in range(len(word)) if i != first]
    distinct = [i for i in others if word[i] != word[first]] or others or [first]
    second = min(distinct, key=lambda i: (rank[i], -abs(i - first)))
    words = []
    for at in (first, second):
        value = word[at]
        other = value - 32 if ignore_case and ord("a") <= value <= ord("z") else value
        words += [at, value, other]
    return words


def _hash_window(word: bytes, window: int, size: int, case_bits: int) -> int:
    """The kernel's hash of ``word[window:window + size]`` (as ``kernels.search._hash``)."""
    value = int.from_bytes(word[window: window + size], "little") | case_bits
    return ((value * int(HASH_MULTIPLIER)) & 0xFFFFFFFFFFFFFFFF) >> (64 - HASH_BITS)


def _best_window(words: Sequence[bytes], size: int) -> int:
    """Where in the shortest keyword's length the hashed window tells the keywords
    apart best (most distinct windows; the first such offset)."""
    shortest = min(map(len, words))
    return max(range(shortest - size + 1), key=lambda at: (len({word[at: at + size] for word in words}), -at))


@dataclass(frozen=True)
class SearchPlan:
    """What one search looks for, and the app's plan for it (its instance state).

    >>> plan = SearchPlan.build(["404", "timeout"])
    >>> plan.keywords, plan.strategy == PAIRS, plan.state.dtype
    ((b'404', b'timeout'), True, dtype('uint8'))
    >>> SearchPlan.build([f"k{i:02d}" for i in range(40)]).strategy == HASHED
    True
    """

    keywords: tuple[bytes, ...]
    ignore_case: bool
    match_all: bool
    strategy: int
    state: np.ndarray = field(repr=False, compare=False)

    @classmethod
    def build(cls, keywords: Union[str, bytes, Iterable[Union[str, bytes]]], ignore_case: bool = False,
              strategy: Optional[int] = None) -> "SearchPlan":
        """The plan for ``keywords``; ``strategy`` (``PAIRS`` or ``HASHED``) forces
        a filter (default: pairs up to ``PAIR_LIMIT`` keywords; for measuring)."""
        words, match_all = normalize_keywords(keywords, ignore_case)
        if strategy is None:
            strategy = PAIRS if len(words) <= PAIR_LIMIT else HASHED
        return cls(words, ignore_case, match_all, strategy, _pack_plan(words, ignore_case, match_all, strategy))


def _pack_plan(words: Sequence[bytes], ignore_case: bool, match_all: bool, strategy: int) -> np.ndarray:
    """The plan's bytes, laid out by ``PLAN`` (header words, then its sections)."""
    sections: dict[str, bytes] = {}
    joined = b"".join(words)
    starts = np.cumsum([0] + [len(word) for word in words]).astype(np.int64)
    sections["keywords"] = joined
    sections["starts"] = starts.tobytes()
    sections["fold"] = _FOLD.tobytes() if ignore_case else np.arange(256, dtype=np.uint8).tobytes()
    size = min([8, *map(len, words)]) if words else 1
    window = _best_window(words, size) if strategy == HASHED else 0
    case_bits = int.from_bytes(b"\x20" * size, "little") if ignore_case else 0
    max_anchor = 0
    if strategy == PAIRS:
        anchors = [_anchors(word, ignore_case) for word in words]
        max_anchor = max([max(a[0], a[3]) for a in anchors], default=0)
        sections["anchors"] = np.array(anchors, dtype=np.int64).reshape(-1, ANCHOR_WORDS).tobytes()
    else:
        hashes = [_hash_window(word, window, size, case_bits) for word in words]
        bitmap = np.zeros(1 << HASH_BITS, dtype=bool)
        bitmap[hashes] = True
        sections["bitmap"] = np.packbits(bitmap, bitorder="little").tobytes()
        buckets = np.array(hashes, dtype=np.int64) >> (HASH_BITS - BUCKET_BITS)
        order = np.argsort(buckets, kind="stable")
        counts = np.bincount(buckets, minlength=1 << BUCKET_BITS)
        sections["buckets"] = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64).tobytes()
        sections["bucket_ids"] = order.astype(np.int64).tobytes()
    offsets, at = {}, 8 * PLAN.size
    for name, blob in sections.items():
        offsets[name] = at
        at += align8(len(blob))
    header = word_list(PLAN, version=PLAN_VERSION, n_keywords=len(words), strategy=strategy,
                       ignore_case=int(ignore_case), match_all=int(match_all), max_anchor=max_anchor,
                       window=window, window_bytes=size,
                       case_bits=case_bits if case_bits < 1 << 63 else case_bits - (1 << 64),  # as an int64 word
                       plan_bytes=at, **offsets)
    state = np.zeros(at, dtype=np.uint8)
    state[: 8 * PLAN.size] = np.array(header, dtype=np.int64).view(np.uint8)
    for name, blob in sections.items():
        state[offsets[name]: offsets[name] + len(blob)] = np.frombuffer(blob, dtype=np.uint8)
    return state


def matcher_fits(plan: SearchPlan) -> bool:
    """Whether Biscuit's pattern matcher takes the search in one pass: its three
    keys are the line break and at most two keywords of at most 16 bytes, each in
    one spelling (with ``ignore_case`` a keyword with letters has several).

    >>> matcher_fits(SearchPlan.build(["GET", "404"])), matcher_fits(SearchPlan.build(["a", "b", "c"]))
    (True, False)
    >>> matcher_fits(SearchPlan.build("x" * 17)), matcher_fits(SearchPlan.build("err", ignore_case=True))
    (False, False)
    """
    if plan.match_all:
        return True
    spellings = sum(2 ** sum(chr(b).isalpha() for b in word) if plan.ignore_case else 1 for word in plan.keywords)
    return (spellings <= MATCHER_KEYWORDS - 1
            and all(len(word) <= MATCHER_KEYWORD_BYTES for word in plan.keywords))


# --------------------------------------------------------------------------
# One task's search: its result, and room for its output.
# --------------------------------------------------------------------------
@dataclass
class TaskResult:
    """One task's answer: the lines it owns, its matching lines' records
    (line index within the task, offset from ``start``, length) and bytes,
    its work counters, where it ran, and what the device's model needs.

    >>> TaskResult(index=0, start=0, length=4096).output_bytes  # an empty result: its header
    64
    """

    index: int
    start: int
    length: int
    lines: int = 0
    matched: int = 0
    records: Optional[np.ndarray] = None
    data: Optional[np.ndarray] = None
    counters: np.ndarray = field(default_factory=SEARCH_COUNTERS.zeros)
    side: str = HOST
    faults: dict = field(default_factory=dict)
    seconds: float = 0.0
    offloadable: bool = True  # False: its last line runs past what one device command can read

    @property
    def output_bytes(self) -> int:
        """What the task sends the host: its header, records and line bytes."""
        records = 0 if self.records is None else self.records.shape[0]
        data = 0 if self.data is None else self.data.size
        return 8 * (RESULT.size + RECORD_WORDS * records) + data


class OutputRoom:
    """Output capacity for the next task: the most records and line bytes per
    input byte seen so far, with a margin, and at least a line in 64 and a byte
    in 8 (untouched capacity is only address space); a task that outgrows it is
    run again with the room it asked for.

    >>> room = OutputRoom(LINES)
    >>> room.learn(1000, 10, 400); room.capacity(2000)
    (1055, 66536)
    """

    SLACK_RECORDS, SLACK_BYTES = 1024, 64 << 10

    def __init__(self, mode: int) -> None:
        self.mode = mode
        self.records_per_byte = self.bytes_per_byte = 0.0
        self.lock = threading.Lock()

    def capacity(self, length: int) -> tuple[int, int]:
        """``(records, line bytes)`` to give a task of ``length`` bytes."""
        if self.mode == COUNT:
            return 0, 0
        records = max(int(self.records_per_byte * length * 1.25), length // 64) + self.SLACK_RECORDS
        if self.mode != LINES:
            return records, 0
        return records, max(int(self.bytes_per_byte * length * 1.25), length // 8) + self.SLACK_BYTES

    def learn(self, length: int, records: int, data: int) -> None:
        with self.lock:
            self.records_per_byte = max(self.records_per_byte, records / max(length, 1))
            self.bytes_per_byte = max(self.bytes_per_byte, data / max(length, 1))


def _task_args(start: int, length: int, first_line_at_start: bool, mode: int, room: tuple[int, int]) -> np.ndarray:
    """A task's args (``TASK``): its range in the input and the room for its output."""
    return np.array(word_list(TASK, start=start, length=length, first_line_at_start=int(first_line_at_start),
                              mode=mode, records_capacity=room[0], data_capacity=room[1]), dtype=np.int64)


def _take_output(result: TaskResult, out: np.ndarray, dst: np.ndarray, counters: np.ndarray) -> None:
    """Reads a finished task's header, records and line bytes into ``result``
    (copied out of the output buffers when that frees most of their room)."""
    result.lines, result.matched = int(out[RESULT.lines]), int(out[RESULT.matched])
    n, used = int(out[RESULT.records]), int(out[RESULT.data_used])
    result.records = out[RESULT.size: RESULT.size + RECORD_WORDS * n].reshape(n, RECORD_WORDS).copy()
    result.data = dst[:used].copy() if used < dst.size // 2 else dst[:used]
    result.counters = counters


def search_buffer(text: np.ndarray, base: int, at_eof: bool, result: TaskResult, plan: SearchPlan,
                  mode: int, room: OutputRoom) -> int:
    """Runs the kernel on the host over ``text`` (bytes from file offset ``base``,
    which is the task's start, or the byte before it) until its output fits;
    fills ``result``. Returns the kernel's status (``OK`` or ``NEEDS_MORE``).

    >>> plan = SearchPlan.build("b")
    >>> result = TaskResult(0, 0, 6)
    >>> search_buffer(np.frombuffer(b"a\\nb\\nab", np.uint8), 0, True, result, plan, LINES, OutputRoom(LINES))
    0
    >>> result.lines, result.records.tolist(), result.data.tobytes()
    (3, [[1, 2, 1], [2, 4, 2]], b'bab')
    """
    started = time.perf_counter()
    args = _task_args(result.start - base, result.length, result.start == 0, mode, room.capacity(result.length))
    while True:
        records, data = int(args[TASK.records_capacity]), int(args[TASK.data_capacity])
        out = np.empty(RESULT.size + RECORD_WORDS * records, dtype=np.int64)
        dst = np.empty(max(data, 8), dtype=np.uint8)
        counters = SEARCH_COUNTERS.zeros()
        status = search_span(text.ctypes.data, text.size, at_eof, plan.state.ctypes.data, args, out,
                             dst.ctypes.data, counters)
        if status != OUT_OF_SPACE:
            break
        args[TASK.records_capacity], args[TASK.data_capacity] = out[RESULT.records_needed], out[RESULT.data_needed]
    if status == OK:
        _take_output(result, out, dst, counters)
        room.learn(result.length, result.records.shape[0], result.data.size)
    result.seconds += time.perf_counter() - started
    return int(status)


# --------------------------------------------------------------------------
# Where tasks run: the host (a mapping of the file), a device (its StorageApp).
# --------------------------------------------------------------------------
class HostSearch:
    """Tasks searched on the host, in threads, over the whole file in memory
    (a read-only mapping of a path, or the caller's bytes).

    >>> text = np.frombuffer(b"x\\nax\\n", np.uint8)
    >>> HostSearch(text, SearchPlan.build("a"), LINES, OutputRoom(LINES)).run(TaskResult(0, 1, 4)).data.tobytes()
    b'ax'
    """

    def __init__(self, text: np.ndarray, plan: SearchPlan, mode: int, room: OutputRoom) -> None:
        self.text, self.plan, self.mode, self.room = text, plan, mode, room

    def run(self, result: TaskResult) -> TaskResult:
        base = max(result.start - 1, 0)  # the byte before the task tells whether a line starts at it
        status = search_buffer(self.text[base:], base, True, result, self.plan, self.mode, self.room)
        if status != OK:  # cannot happen: the rest of the file is in memory, so the last line ends
            raise RuntimeError(f"search of bytes {result.start}+{result.length} ended with status {status}")
        result.side = HOST
        return result


class DeviceSearch:
    """Tasks searched by the search StorageApp on a device: MINIT installs it
    (one instance per engine worker) with the plan as its state; each task is one
    MREAD (``split="device"``) or READ_FILT_TSK (static and dynamic splits, the
    Summarizer task queue) over the pages holding its range and the end of its
    last line. Faults from the device's plan fail commands as hardware would: a
    link timeout is resubmitted, anything else makes the host READ the pages and
    search them.

    >>> import tempfile
    >>> from device_emulator import ComputationalSSD
    >>> with tempfile.NamedTemporaryFile(suffix=".log") as f, ComputationalSSD("biscuit-pm") as ssd:
    ...     _ = f.write(b"GET /a\\nPOST /b\\n"); f.flush()
    ...     device = DeviceSearch(ssd, SplitPolicy.parse("device"), f.name, 14, SearchPlan.build("POST"),
    ...                           LINES, OutputRoom(LINES))
    ...     result = device.run(TaskResult(0, 0, 14)); device.close()
    >>> result.side, result.records.tolist(), result.data.tobytes()
    ('device', [[1, 7, 7]], b'POST /b')
    """

    def __init__(self, device: Device, split: SplitPolicy, path: str, size: int, plan: SearchPlan, mode: int,
                 room: OutputRoom) -> None:
        from arrow_bridge.kernels.search_app import search_storage_app  # compiled on first use

        self.device, self.split, self.size, self.plan, self.mode, self.room = device, split, size, plan, mode, room
        self.page_size = int(device.page_size)
        self.engine = device.engine
        self.task_queue = split.kind in ("static", "dynamic")
        self.app = search_storage_app()  # kept alive while instances use its address
        self.stream = self.engine.stream_create(path)
        self.instances: queue.Queue = queue.Queue()
        try:
            for _ in range(max(1, self.engine.cores)):
                inst = self.engine.minit(self.app.address, init=plan.state, streams=[self.stream])
                self.instances.put(inst)
                if self.task_queue:
                    self._check(self.engine.wait(self.engine.submit_task(Opcode.INIT_TSK, inst, 0)), "INIT_TSK")
        except BaseException:
            self.close()
            raise

    @property
    def workers(self) -> int:
        return self.instances.qsize()

    def pages(self, offset: int, length: int) -> tuple[int, int]:
        """``(first page, page count)`` holding ``length`` bytes at file ``offset`` (at least one page)."""
        first = offset // self.page_size
        return first, max(1, -(-(offset + length) // self.page_size) - first)

    def offloadable(self, result: TaskResult, tail: int = LINE_TAIL_BYTES) -> bool:
        """Whether one command can hold the task and ``tail`` bytes past it (the app
        sees one command's pages, and NVMe caps a command at 65,536 of them)."""
        base = max(result.start - 1, 0)
        end = min(result.start + result.length + tail, self.size)
        return result.offloadable and self.pages(base, end - base)[1] <= MAX_PAGES_PER_COMMAND

    def run(self, result: TaskResult) -> TaskResult:
        """The task as device commands (retried, grown, or read raw as needed)."""
        started = time.perf_counter()
        tail = LINE_TAIL_BYTES
        room = self.room.capacity(result.length)
        attempt = 0
        while attempt < MAX_ATTEMPTS:
            fault = self.device.fault_for(result.index, attempt)
            done, out, dst, counters = self._submit(result, tail, room, fault)
            met = FAULT_NAMES[fault] if fault else FAULT_OF_STATUS.get(done.status_name)
            if met:
                result.faults[met] = result.faults.get(met, 0) + 1
            if done.status == Status.OUT_OF_SPACE:
                room = (int(out[RESULT.records_needed]), int(out[RESULT.data_needed]))
                continue
            if done.status == Status.NEEDS_MORE_INPUT:
                tail *= 4
                if not self.offloadable(result, tail):  # its last line outgrows one command: the host's
                    result.offloadable = False
                    return self.run_raw(result)
                continue
            attempt += 1
            if done.status == Status.OK:
                _take_output(result, out, dst, counters)
                self.room.learn(result.length, result.records.shape[0], result.data.size)
                result.side, result.seconds = DEVICE, time.perf_counter() - started
                return result
            if done.status_name not in RAW_FALLBACK and done.status != Status.TIMEOUT:
                raise RuntimeError(f"device command for bytes {result.start}+{result.length} failed: "
                                   f"{done.status_name}")
            if done.status != Status.TIMEOUT:
                break
        return self.run_raw(result)

    def _submit(self, result: TaskResult, tail: int, room: tuple[int, int], fault: int):
        """One command over the task's pages (and ``tail`` bytes past them); its
        completion and output buffers."""
        base = max(result.start - 1, 0)
        first_page, n_pages = self.pages(base, min(result.start + result.length + tail, self.size) - base)
        args = _task_args(result.start - first_page * self.page_size, result.length, result.start == 0, self.mode,
                         room)
        out = np.empty(RESULT.size + RECORD_WORDS * room[0], dtype=np.int64)  # the app writes its header
        dst = np.empty(max(room[1], 8), dtype=np.uint8)
        counters = SEARCH_COUNTERS.zeros()
        outputs = [out.view(np.uint8), dst]
        inst = self.instances.get()
        try:
            if self.task_queue:
                cid = self.engine.submit_task(Opcode.READ_FILT_TSK, inst, 0, self.stream, first_page, n_pages,
                                              outputs, counters, list(args), fault)
            else:
                cid = self.engine.submit_mread(inst, self.stream, first_page, n_pages, outputs, counters,
                                               list(args), fault)
            return self.engine.wait(cid), out, dst, counters
        finally:
            self.instances.put(inst)

    def run_raw(self, result: TaskResult) -> TaskResult:
        """The host READs the task's pages (more while its last line goes on) and searches them."""
        started = time.perf_counter()
        base = max(result.start - 1, 0)
        tail = LINE_TAIL_BYTES
        while True:
            first_page, n_pages = self.pages(base, min(result.start + result.length + tail, self.size) - base)
            pages = np.empty(n_pages * self.page_size, dtype=np.uint8)
            self._check(self.engine.wait(self.engine.submit_read(self.stream, first_page, n_pages, pages)), "READ")
            end = min((first_page + n_pages) * self.page_size, self.size)
            skip = base - first_page * self.page_size
            text = pages[skip: end - first_page * self.page_size]
            if search_buffer(text, base, end >= self.size, result, self.plan, self.mode, self.room) == OK:
                break
            tail *= 4
        result.side, result.seconds = RAW, result.seconds + time.perf_counter() - started
        return result

    def close(self) -> None:
        """Ends every instance and the stream, whatever fails on the way."""
        try:
            while not self.instances.empty():
                inst = self.instances.get()
                try:
                    if self.task_queue:
                        self.engine.wait(self.engine.submit_task(Opcode.FINAL_TSK, inst, 0))
                finally:
                    self.engine.mdeinit(inst)
        finally:
            self.engine.stream_close(self.stream)

    @staticmethod
    def _check(done: Any, what: str) -> None:
        if not done.ok:
            raise OSError(f"{what} failed on the device: {done.status_name}")


def _task_work(result: TaskResult, device: DeviceSearch | None, page_size: int) -> TaskWork:
    """One task as the device's timing model sees it: the pages of its range,
    its text (what the host would read), its output (what the device would send)."""
    first = result.start // page_size
    n_pages = max(1, -(-(result.start + result.length) // page_size) - first)
    return TaskWork(result.index, first, n_pages, result.length, result.output_bytes,
                    SEARCH_COUNTERS.modeled_values(result.counters), result.side, dict(result.faults),
                    result.seconds, device.offloadable(result) if device else True)


# --------------------------------------------------------------------------
# The whole search.
# --------------------------------------------------------------------------
class SearchText:
    """The text to search, in memory: a read-only mapping of a file (its pages
    come from the page cache as the kernel reaches them), or the caller's bytes.

    >>> with SearchText(b"one\\ntwo\\n") as text:
    ...     text.name, text.path, text.text.size
    ('<bytes>', None, 8)
    """

    def __init__(self, source: Any) -> None:
        self.path: Optional[str] = None
        self.name = "<bytes>"
        self._mapping: Optional[mmap.mmap] = None
        if isinstance(source, (str, os.PathLike)):
            self.path = self.name = os.fspath(source)
            with open(self.path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if size:
                    self._mapping = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
                    self._mapping.madvise(mmap.MADV_SEQUENTIAL)
            self.text = np.frombuffer(self._mapping, dtype=np.uint8) if size else np.empty(0, dtype=np.uint8)
        elif isinstance(source, (bytes, bytearray, memoryview)):
            self.text = np.frombuffer(source, dtype=np.uint8)
        elif hasattr(source, "read"):
            self.name = str(getattr(source, "name", "<stream>"))
            self.text = np.frombuffer(source.read(), dtype=np.uint8)
        else:
            raise TypeError(f"grep searches a path, bytes or a binary file object, not {type(source).__name__}")

    def close(self) -> None:
        self.text = np.empty(0, dtype=np.uint8)  # drop the view before the mapping
        mapping, self._mapping = self._mapping, None
        if mapping is not None:
            try:
                mapping.close()
            except BufferError:  # a view still lives (say, in an exception's traceback): unmapped when it goes
                pass

    def __enter__(self) -> "SearchText":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _as_device(device: Any) -> Any:
    """``device=``: a Device, a profile name (an emulated SSD), or None."""
    if isinstance(device, str):
        from device_emulator import ComputationalSSD

        return ComputationalSSD(device)
    return device


def _check_device(device: Any, split: SplitPolicy) -> None:
    """A device whose only compute converts CSV (a ``scope = "all"`` pipeline, no cores) cannot search."""
    profile = getattr(device, "profile", None)
    if split.kind != "host" and profile is not None and profile["pipeline.scope"] == "all":
        raise ValueError(f"{device.name}: its pipeline deserializes CSV and it has no cores for StorageApps, so "
                         f"it cannot search; use split='host' to model the host, or another profile")


def _schedule(device: Any, results: Sequence[TaskResult], split: SplitPolicy, plan: SearchPlan,
             runner: Optional[DeviceSearch], wall_s: float) -> Any:
    """The device's timing model over the tasks: a ``scan`` pipeline (Biscuit's
    matcher) searches when the keywords fit it, else the run is modeled without it."""
    note = "used"
    profile = getattr(device, "profile", None)
    modeled = device
    if profile is not None and profile["pipeline.scope"] == "scan" and not matcher_fits(plan):
        modeled = device.with_overrides(**{"pipeline.scope": "none"})
        note = (f"off (it takes {MATCHER_KEYWORDS - 1} keywords of up to {MATCHER_KEYWORD_BYTES} bytes, in one "
                f"spelling, beside the line break): the cores search")
    page_size = runner.page_size if runner else int(device.page_size)
    works = [_task_work(result, runner, page_size) for result in results]
    planned = modeled.schedule(works, split, wall_s)
    planned.report.meta["app"] = "search"
    if profile is not None and profile["pipeline.scope"] == "scan":
        planned.report.meta["matcher"] = note
    return planned


def run_tasks(text: SearchText, plan: SearchPlan, mode: int, *, device: Any = None, split: str = "host",
              block_size: Optional[int] = None, n_threads: Optional[int] = None) -> list[TaskResult]:
    """Cuts the text into tasks, runs each on the host or the device, and (with a
    device) records the run's Report. Returns the tasks' results in file order.

    >>> with SearchText(b"ab\\ncd\\nab\\n") as text:
    ...     results = run_tasks(text, SearchPlan.build("ab"), COUNT, block_size=4)
    >>> [(r.start, r.length, r.lines, r.matched) for r in results]
    [(0, 4, 2, 1), (4, 4, 1, 1), (8, 1, 0, 0)]
    """
    from ndp_core.report import record

    policy = SplitPolicy.parse(split)
    device = _as_device(device)
    _check_device(device, policy)
    size = int(text.text.size)
    span = int(block_size or DEFAULT_BLOCK_SIZE)
    if span <= 0:
        raise ValueError(f"block_size must be positive, got {block_size}")
    results = [TaskResult(i, start, min(span, size - start)) for i, start in enumerate(range(0, size, span))]
    room = OutputRoom(mode)
    host = HostSearch(text.text, plan, mode, room)
    runner = None
    started = time.perf_counter()
    if device is not None and policy.kind != "host" and device.engine is not None and size:
        if text.path is None:
            raise ValueError("device= needs a file path (the device reads the file's pages)")
        runner = DeviceSearch(device, policy, text.path, size, plan, mode, room)
    try:
        def run(result: TaskResult) -> TaskResult:
            if runner and policy.static_side(result.index) == DEVICE and runner.offloadable(result):
                return runner.run(result)
            return host.run(result)

        workers = max(n_threads or os.cpu_count() or 1, runner.workers if runner else 1)
        with ThreadPoolExecutor(min(workers, max(len(results), 1))) as pool:  # the kernels release the GIL
            results = list(pool.map(run, results))
        if device is not None:
            planned = _schedule(device, results, policy, plan, runner, time.perf_counter() - started)
            for result, side in zip(results, planned.sides):
                if side == RAW and result.side == DEVICE and runner:  # the task queue sent it back: the host's
                    runner.run_raw(result)
            planned.report.wall_s = time.perf_counter() - started
            record(planned.report)
    finally:
        if runner:
            runner.close()
    return results


def _lines_array(result: TaskResult, binary: bool, name: str, first_line: int) -> pa.Array:
    """A task's matching lines as a string (or binary) array over its line bytes, without a copy."""
    lengths = result.records[:, 2]
    if result.data.size > np.iinfo(np.int32).max:
        raise ValueError(f"{name}: more than 2 GiB of matching lines in one task; pass a smaller block_size")
    offsets = np.zeros(lengths.size + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    array = pa.Array.from_buffers(pa.binary() if binary else pa.string(), lengths.size,
                                  [None, pa.py_buffer(offsets), pa.py_buffer(result.data)])
    if not binary:
        try:
            array.validate(full=True)
        except pa.ArrowInvalid:
            for i, line in enumerate(array.cast(pa.binary()).to_pylist()):
                try:
                    line.decode("utf-8")
                except UnicodeDecodeError as error:
                    number = first_line + int(result.records[i, 0])
                    raise UnicodeDecodeError("utf-8", line, error.start, error.end,
                                             f"{name}: line {number} is not valid UTF-8 (binary=True, or "
                                             f"ndp grep --binary, gives the lines as bytes)") from None
    return array


def _assemble(results: Sequence[TaskResult], binary: bool, offsets: bool, name: str) -> pa.Table:
    """The matching lines of every task, in file order: a chunk per task."""
    line_type = pa.binary() if binary else pa.string()
    numbers, lines, starts = [], [], []
    first_line = 1
    for result in results:
        if result.records is not None and result.records.shape[0]:
            numbers.append(pa.array(result.records[:, 0] + first_line, type=pa.int64()))
            lines.append(_lines_array(result, binary, name, first_line))
            starts.append(pa.array(result.records[:, 1] + result.start, type=pa.int64()))
        first_line += result.lines
    columns = {"line_number": pa.chunked_array(numbers, type=pa.int64())}
    if offsets:
        columns["byte_offset"] = pa.chunked_array(starts, type=pa.int64())
    columns["line"] = pa.chunked_array(lines, type=line_type)
    return pa.table(columns)


def grep(source: Any, keywords: Union[str, bytes, Iterable[Union[str, bytes]]], *, count: bool = False,
         ignore_case: bool = False, binary: bool = False, offsets: bool = False, device: Any = None,
         split: str = "host", block_size: Optional[int] = None, n_threads: Optional[int] = None
         ) -> Union[pa.Table, int]:
    """The lines of ``source`` holding any of ``keywords``: a Table of
    ``line_number`` (int64, 1-based) and ``line`` (string; ``binary=True``:
    binary, for text that is not UTF-8), plus ``byte_offset`` (where the line
    starts, as ``grep -b``) with ``offsets=True``; ``count=True``: how many lines
    (``grep -c``).

    ``source`` is a path (mapped, not read into memory), bytes or a binary file
    object. ``ignore_case`` folds ASCII letters. ``device`` (a Device or a
    profile name) and ``split`` (``"host"``, ``"device"``, ``"static:<f>"``,
    ``"dynamic"``) run tasks of ``block_size`` bytes (default 4 MiB) on an
    emulated SSD and record its Report; ``n_threads`` host threads (default:
    all cores). The answer is the same whatever the device, split, faults and
    block size.

    >>> grep(b"alpha\\nbeta\\ngamma\\n", ["ta", "mm"]).to_pydict()
    {'line_number': [2, 3], 'line': ['beta', 'gamma']}
    >>> grep(b"a\\r\\nB\\n", "b", ignore_case=True, offsets=True, binary=True).to_pydict()
    {'line_number': [2], 'byte_offset': [3], 'line': [b'B']}
    """
    plan = SearchPlan.build(keywords, ignore_case)
    mode = COUNT if count else LINES
    with SearchText(source) as text:
        results = run_tasks(text, plan, mode, device=device, split=split, block_size=block_size,
                            n_threads=n_threads)
        name = text.name
    if count:
        return sum(result.matched for result in results)
    return _assemble(results, binary, offsets, name)


def filter_strings(values: Union[pa.Array, pa.ChunkedArray], keywords: Union[str, bytes, Iterable[Union[str, bytes]]],
                   *, ignore_case: bool = False) -> Union[pa.BooleanArray, pa.ChunkedArray]:
    """Which values of a string or binary column hold any of ``keywords`` (null
    where the value is null): the search kernel as a filter stage, for instance
    on a column ``read_csv`` returned (``table.filter(filter_strings(...))``).

    >>> import pyarrow as pa
    >>> filter_strings(pa.array(["GET /a", None, "post /b", "PUT"]), ["GET", "POST"], ignore_case=True).to_pylist()
    [True, None, True, False]
    """
    import pyarrow.compute as pc
    if isinstance(values, pa.ChunkedArray):
        return pa.chunked_array([filter_strings(chunk, keywords, ignore_case=ignore_case) for chunk in values.chunks],
                                type=pa.bool_())
    if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)
            or pa.types.is_binary(values.type) or pa.types.is_large_binary(values.type)):
        raise TypeError(f"filter_strings takes a string or binary column, not {values.type}")
    plan = SearchPlan.build(keywords, ignore_case)
    n = len(values)
    offset_type = np.int64 if pa.types.is_large_string(values.type) or pa.types.is_large_binary(values.type) \
        else np.int32
    buffers = values.buffers()
    offsets = np.frombuffer(buffers[1], dtype=offset_type)[values.offset: values.offset + n + 1].astype(np.int64)
    data = np.frombuffer(buffers[2], dtype=np.uint8) if buffers[2] is not None else np.zeros(8, dtype=np.uint8)
    joined = np.empty(int(offsets[-1] - offsets[0]) + n, dtype=np.uint8)
    starts = join_values(data.ctypes.data, offsets, joined)  # one value per line
    matched = np.zeros(n, dtype=bool)
    if n:
        result = TaskResult(0, 0, joined.size)
        search_buffer(joined, 0, True, result, plan, RECORDS, OutputRoom(RECORDS))
        matched[np.searchsorted(starts, result.records[:, 1], side="right") - 1] = True
    mask = pa.array(matched, type=pa.bool_())
    if values.null_count:
        mask = pc.if_else(values.is_valid(), mask, pa.scalar(None, pa.bool_()))
    return mask
