"""Reading through a computational storage device: the host driver of the CSV StorageApp.

The reader cuts spans as always; a span whose side (per the split policy) is
the device becomes a task: one MREAD (Morpheus) or READ_PROC_TSK (Summarizer
policies) over the device pages that hold it, run by the app of
:mod:`arrow_bridge.kernels.span_app` on the pages the engine read from the
file. Its Arrow buffers come back in an output arena and are wrapped zero-copy.
Once every column's type is known (as on the host path: explicit, or inferred
by the first span) a task asks the app to try the one-pass fused kernel first;
its output is wrapped by the host path's own :meth:`FastPlan.wrap`.

Faults injected by the device make a command fail the way hardware would: a
link timeout is retried; a media error, an app failure or a full task queue
sends the task back raw — the host READs the pages and parses them itself.
After the run the device's timing model decides, in modeled time, where each
task ended up (in dynamic mode a full task queue returns tasks raw; those the
host parses again) and returns the run's Report.

Simplification (documented in docs/architecture.md): the host's span cutter
finds record boundaries, reading the last 64 KiB of each block planned for the
device (the span itself stays unread); the model charges nothing for it.
"""
from __future__ import annotations

import math
import queue
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

import numpy as np
import pyarrow as pa

from arrow_bridge.converters import STRINGS, ConversionSpec, _wrap, conversion_spec
from arrow_bridge.fast_path import FastPlan, FusedBuffers, data_stride, fused_capacity
from arrow_bridge.inference import INFERENCE_LADDER
from arrow_bridge.kernels import columns as K
from arrow_bridge.kernels import span_app as A
from arrow_bridge.kernels import status as S
from arrow_bridge.kernels.tokenizer import byte_classes
from ndp_core import MAX_PAGES_PER_COMMAND
from ndp_core.engine import Opcode, Status
from ndp_core.device import (
    DEVICE,
    FAULT_NAMES,
    HOST,
    HostOnly,
    RAW,
    SplitPolicy,
    WORK_COUNTERS,
    TaskWork,
)

if TYPE_CHECKING:
    from arrow_bridge.reader import CsvReader, SpanResult
    from arrow_bridge.spans import Span

_MAX_ATTEMPTS = 3
# Device failures the host recovers from by reading the raw pages and parsing them.
_RAW_FALLBACK = (Status.IO_ERROR, Status.APP_ERROR, Status.RETURNED_RAW)  # a TIMEOUT is resubmitted
_OUT_CODES = {np.dtype(t): code for t, code in (
    (np.uint8, A.OUT_U8), (np.int8, A.OUT_I8), (np.int16, A.OUT_I16), (np.int32, A.OUT_I32),
    (np.int64, A.OUT_I64), (np.uint16, A.OUT_U16), (np.uint32, A.OUT_U32), (np.uint64, A.OUT_U64),
    (np.float32, A.OUT_F32), (np.float64, A.OUT_F64))}
COUNTER_NAMES = {name: S.SLOT_NAMES.index(name) for name in WORK_COUNTERS}  # model name -> kernel slot


def _conv_row(spec: ConversionSpec) -> list[int]:
    if spec.kind == STRINGS:
        mode = A.CHECK_UTF8 if spec.check_utf8 else A.NO_UTF8_CHECK
        return [A.STRING_KIND, 0, 0, 0, 0, mode, int(spec.large), 0]
    return [spec.kind, *map(int, spec.params), _OUT_CODES[np.dtype(spec.dtype)], 0, 0, 0]


class _PlanWriter:
    """Packs the plan blob: int64 header, then 8-byte aligned sections."""

    def __init__(self):
        self.header = np.zeros(A.HEADER_WORDS, dtype=np.int64)
        self.parts: list[bytes] = []
        self.size = 8 * A.HEADER_WORDS

    def add(self, data: bytes) -> int:
        offset = self.size
        padded = data + b"\0" * (-len(data) % 8)
        self.parts.append(padded)
        self.size += len(padded)
        return offset

    def add_spellings(self, word: int, spellings: tuple) -> None:
        data, offsets, first_byte_lengths, has_empty = spellings
        h = self.header
        h[word], h[word + 1] = self.add(data.tobytes()), len(data)
        h[word + 2], h[word + 3] = self.add(offsets.astype(np.int64).tobytes()), len(offsets)
        h[word + 4], h[word + 5] = self.add(first_byte_lengths.astype(np.int64).tobytes()), int(has_empty)

    def blob(self) -> np.ndarray:
        return np.frombuffer(self.header.tobytes() + b"".join(self.parts), dtype=np.uint8).copy()


def build_plan(reader: "CsvReader") -> np.ndarray:
    """The app's parameters for this read (MINIT's initial instance state)."""
    d, rules, opts = reader.dialect, reader.rules, reader.opts
    w = _PlanWriter()
    h = w.header
    h[A.H_VERSION], h[A.H_NCOLS], h[A.H_NPLANNED] = A.PLAN_VERSION, len(reader.names), len(reader.plans)
    h[A.H_DELIM], h[A.H_QUOTE], h[A.H_ESCAPE] = d.delimiter, d.quote, d.escape
    h[A.H_DOUBLE_QUOTE], h[A.H_SKIP_BAD] = int(d.double_quote), int(opts.on_bad_lines != "error")
    h[A.H_QUOTED_NULLS], h[A.H_STRINGS_NULL] = int(rules.quoted_nulls), int(rules.strings_can_be_null)
    h[A.H_SPECIAL] = w.add(byte_classes(d.delimiter, d.escape).tobytes())
    w.add_spellings(A.H_NULLS, rules.nulls)
    w.add_spellings(A.H_TRUES, rules.trues)
    w.add_spellings(A.H_FALSES, rules.falses)
    columns = []
    for plan in reader.plans:
        row = _conv_row(conversion_spec(plan.type, rules)) if plan.type is not None else [0] * A.CONV_WORDS
        columns.append([plan.index, int(plan.type is not None), *row])
    h[A.H_COLUMNS] = w.add(np.array(columns, dtype=np.int64).reshape(-1).tobytes())
    ladder = [_conv_row(conversion_spec(t, rules)) for t in INFERENCE_LADDER]
    h[A.H_LADDER], h[A.H_RUNGS] = w.add(np.array(ladder, dtype=np.int64).tobytes()), len(ladder)
    return w.blob()


@dataclass
class _Layout:
    """Where one task's outputs go: the command args and the two buffer sizes
    (and the fused attempt's plan, when the args ask for one)."""

    args: np.ndarray
    arena_size: int
    scratch_size: int
    fast: Optional[FastPlan] = None


def _align(n: int) -> int:
    return (n + 7) & ~7


def column_specs(reader: "CsvReader") -> list[Optional[ConversionSpec]]:
    """Each planned column's conversion (None: inferred, any rung may come)."""
    return [conversion_spec(p.type, reader.rules) if p.type is not None else None for p in reader.plans]


def task_layout(length: int, skip: int, at_eof: bool, reader: "CsvReader", estimate: Optional["_Estimate"],
                specs: list[Optional[ConversionSpec]], rungs: tuple[int, ...], fast: Optional[FastPlan],
                fused_only: bool = False) -> _Layout:
    """Args and buffer sizes for a task of ``length`` text bytes, columns of
    ``specs`` (None: inferred, starting at ``rungs``), with a fused attempt by
    ``fast`` first when given.

    Without an estimate the capacities cover any input (every record holds
    at least ``ncols`` bytes; strings never outgrow their text). With one they
    are sized from earlier tasks, so the outputs are dense: an arena mostly
    untouched would still cost a huge page per region once touched (or pages
    the allocator recycles). A task that outgrows them comes back
    OUT_OF_SPACE and is retried without. ``fused_only`` (with an estimate)
    sizes the arena for the fused layout alone, which is smaller: a span the
    fused kernel gives up on then comes back OUT_OF_SPACE too.
    """
    ncols = len(reader.names)
    capacity = length // ncols + 1
    if estimate is not None:
        capacity = min(capacity, estimate.rows(length))
    args = [skip, length, int(at_eof), capacity, 0, 0, 0, 0, 0, 0, max(length, 1), 0, 0, 0, 0]
    header = arena = _align(8 * (A.RESULT_WORDS + A.R_COL * len(reader.plans)))
    args[A.A_BAD_ROWS], arena = arena, arena + 16 * A.BAD_ROWS_KEPT
    bitmap = _align((capacity + 7) // 8)
    for j, spec in enumerate(specs):
        # Regions only as wide as the column's type needs (an inferred column: any rung's).
        strings = spec is None or spec.kind == STRINGS
        width = 8 if spec is None or spec.kind == STRINGS and spec.large else (
            4 if spec.kind == STRINGS else np.dtype(spec.dtype).itemsize)
        values = arena
        validity = arena + _align(width * (capacity + 1))
        bits = arena = validity + bitmap
        if spec is None or spec.kind == K.BOOL:
            arena += bitmap
        room = (length if estimate is None else estimate.string_bytes(j, length)) if strings else 0
        data = arena
        arena += _align(room)
        args += [rungs[j], values, validity, bits, data, room]
    scratch = 0
    args[A.A_ROW_STARTS], scratch = scratch, scratch + _align(4 * capacity)
    args[A.A_ENDS], scratch = scratch, scratch + _align(4 * capacity * ncols)
    args[A.A_FLAGS], scratch = scratch, scratch + _align(capacity * ncols)
    args[A.A_UNESCAPE], scratch = scratch, scratch + _align(max(length, 1))
    args[A.A_GENERAL_SIZE] = arena
    if fast is not None:
        words, fused_arena, fused_scratch = _fused_section(fast, capacity, length, header)
        args[A.A_FUSED] = len(args)
        args += words
        arena = fused_arena if fused_only and estimate is not None else max(arena, fused_arena)
        scratch = max(scratch, fused_scratch)
    args[A.A_ARENA_SIZE], args[A.A_SCRATCH_SIZE] = arena, scratch
    return _Layout(np.array(args, dtype=np.int64), arena, scratch, fast)


def _fused_section(plan: FastPlan, capacity: int, length: int, arena_at: int) -> tuple[list[int], int, int]:
    """The args of a fused attempt (span_app's ``F_*`` words) and the arena and
    scratch sizes it needs. Its arena regions start at ``arena_at``, over the
    general layout's (an attempt that gives up leaves nothing to keep); its
    string data goes to the scratch, one span-sized stretch per column."""
    rows = fused_capacity(capacity)
    regions = []
    for dtype, shape, _ in plan.regions(rows):  # F_I64 .. F_COUNTERS
        regions.append(arena_at)
        arena_at += _align(np.dtype(dtype).itemsize * math.prod(shape))
    stride = data_stride(length)
    words = [rows, *plan.counts, *regions, 0, stride, *plan.kinds, *plan.slots, *plan.params.reshape(-1)]
    return [int(w) for w in words], arena_at, plan.string_bytes(length)


class _Estimate:
    """Output sizes seen so far (per text byte), with slack, for dense arenas,
    and whether the fused kernel gave up on the last task that tried it (the
    next ones then keep room for the general path)."""

    SLACK = 1.25

    def __init__(self, ncols: int):
        self.rows_per_byte = 0.0
        self.strings_per_byte = [0.0] * ncols
        self.fused_gave_up = False

    def rows(self, length: int) -> int:
        return int(length * self.rows_per_byte * self.SLACK) + 64

    def string_bytes(self, j: int, length: int) -> int:
        return int(length * self.strings_per_byte[j] * self.SLACK) + 256

    def learn(self, parsed: int, nrows: int, string_bytes: list[int]) -> None:
        if parsed <= 0:
            return
        self.rows_per_byte = max(self.rows_per_byte, nrows / parsed)
        for j, used in enumerate(string_bytes):
            self.strings_per_byte[j] = max(self.strings_per_byte[j], used / parsed)


class DeviceSession:
    """One read's use of a device: its stream, app instances and tasks."""

    def __init__(self, reader: "CsvReader", device, split: SplitPolicy):
        self.reader, self.device, self.split = reader, device, split
        self.engine = device.engine
        self.page_size = int(device.page_size)
        self.origin = reader.source.origin
        self._started = time.perf_counter()
        self._stream = self._instances = None
        self._scratch: dict = {}
        self._estimate = _Estimate(len(reader.plans))
        self._specs = column_specs(reader)
        if self.engine is not None and split.kind != "host":
            self._open()

    # ---- set-up / tear-down ------------------------------------------------------------------
    def _open(self) -> None:
        from arrow_bridge.kernels.span_app import csv_app

        path = self.reader.source.path
        if path is None:
            raise ValueError("device= needs a local file path (the device reads the file's pages)")
        self._app = csv_app
        self._task_queue = self.split.kind in ("static", "dynamic")
        self._instances = queue.Queue()
        self._stream = self.engine.stream_create(path)
        try:
            plan = build_plan(self.reader)
            for _ in range(max(1, self.engine.cores)):
                inst = self.engine.minit(self._app.address, init=plan, streams=[self._stream])
                self._instances.put(inst)
                if self._task_queue:
                    self.engine.wait(self.engine.submit_task(Opcode.INIT_TSK, inst, 0))
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Frees every instance and the stream, whatever fails on the way."""
        if self._instances is None:
            return
        instances, self._instances = self._instances, None
        try:
            while not instances.empty():
                inst = instances.get()
                try:
                    if self._task_queue:
                        self.engine.wait(self.engine.submit_task(Opcode.FINAL_TSK, inst, 0))
                finally:
                    self.engine.mdeinit(inst)
        finally:
            self.engine.stream_close(self._stream)

    # ---- one span ------------------------------------------------------------------------------
    def task_number(self, offset: int) -> int:
        """Tasks are numbered by where they start in the file (in blocks), so a
        byte range (a Dask partition) gets the static split and faults of its
        place in the whole file, not those of a file of its own."""
        return (self.origin + offset) // self.reader.opts.block_size

    def side_of(self, span: "Span") -> str:
        # An empty span (a header at the very end of the file) may lie past the last page.
        if not (span.length and self.reads_pages(span.offset) and self.offloadable(span.offset, span.length)):
            return HOST
        return DEVICE

    def reads_pages(self, offset: int) -> bool:
        """Whether the span at ``offset`` is planned for the device, which
        reads its pages from the file: the host's span cutter need not. (A
        span over one command's pages, from blocks near 256 MiB, then goes to
        the host after all and is read there when parsed.)"""
        return self._instances is not None and self.split.static_side(self.task_number(offset)) == DEVICE

    def offloadable(self, offset: int, length: int) -> bool:
        """Whether one device command can hold the span: the app sees one
        command's pages, and NVMe caps a command at 65,536 of them."""
        return self._pages(offset, length)[1] <= MAX_PAGES_PER_COMMAND

    def _pages(self, offset: int, length: int) -> tuple[int, int]:
        """``(first page, page count)`` of ``length`` bytes at ``offset`` of the source."""
        start = self.origin + offset
        first = start // self.page_size
        return first, -(-(start + length) // self.page_size) - first

    def parse_on_device(self, span: "Span", result: "SpanResult") -> None:
        """Runs ``span`` as a device task, falling back to a raw read on faults."""
        started = time.perf_counter()
        offset = self.origin + span.offset
        first_page, n_pages = self._pages(span.offset, span.length)
        skip = offset - first_page * self.page_size
        estimate = self._estimate if self._estimate.rows_per_byte else None
        rungs = tuple(self.reader.hints)  # one snapshot: the fused plan and the general path's start
        fast = self.reader.fast_plan(rungs) if self.reader._types_known else None  # as the host path decides

        def layout_for(estimate: Optional[_Estimate]) -> _Layout:
            return task_layout(span.length, skip, span.at_eof, self.reader, estimate, self._specs, rungs, fast,
                               fused_only=not self._estimate.fused_gave_up)

        layout = layout_for(estimate)
        attempt = 0
        while attempt < _MAX_ATTEMPTS:
            fault = self.device.fault_for(self.task_number(span.offset), attempt)
            if fault:
                result.faults[FAULT_NAMES[fault]] = result.faults.get(FAULT_NAMES[fault], 0) + 1
            done = self._submit(first_page, n_pages, layout, result, fault)
            if done.status == Status.OUT_OF_SPACE and estimate is not None:
                self._estimate.fused_gave_up |= fast is not None  # a fused parse never runs out of space
                estimate = None  # an emulator artifact, not a fault: retry with room for anything
                layout = layout_for(None)
                continue
            attempt += 1
            if done.status == Status.TIMEOUT:
                continue  # the completion was lost: resubmit
            if done.status in (Status.OK, Status.BAD_INPUT):  # _submit has read the arena
                result.side, result.object_bytes = DEVICE, _object_bytes(result.columns)
                result.seconds = time.perf_counter() - started
                return
            if done.status not in _RAW_FALLBACK:
                raise RuntimeError(f"device command for bytes {offset}+{span.length} failed: {done.status_name}")
            break
        self.parse_raw(span, result, first_page, n_pages)

    def _submit(self, first_page: int, n_pages: int, layout: _Layout, result: "SpanResult", fault: int):
        """Runs one command; on OK or BAD_INPUT reads its arena into ``result``
        before the instance (and its scratch, which may hold string data) is
        reused. Returns the completion."""
        arena = np.empty(layout.arena_size, dtype=np.uint8)
        inst = self._instances.get()
        try:
            scratch = self._scratch.get(inst)
            if scratch is None or len(scratch) < layout.scratch_size:  # one per instance, reused
                scratch = self._scratch[inst] = np.empty(layout.scratch_size, dtype=np.uint8)
            if self._task_queue:
                cid = self.engine.submit_task(Opcode.READ_PROC_TSK, inst, 0, self._stream, first_page,
                                              n_pages, [arena, scratch], result.counters, layout.args, fault)
            else:
                cid = self.engine.submit_mread(inst, self._stream, first_page, n_pages, [arena, scratch],
                                               result.counters, layout.args, fault)
            done = self.engine.wait(cid)
            if done.status in (Status.OK, Status.BAD_INPUT):  # BAD_INPUT: the arena says where and why
                self._read_arena(arena, scratch, layout, result)
            return done
        finally:
            self._instances.put(inst)

    def parse_raw(self, span: "Span", result: "SpanResult", first_page: int, n_pages: int,
                  length: Optional[int] = None) -> None:
        """The host READs the task's pages and parses ``length`` bytes (default:
        the span's) from the span's start itself."""
        length = span.length if length is None else length
        started = time.perf_counter()
        pages = np.empty(n_pages * self.page_size, dtype=np.uint8)
        done = self.engine.wait(self.engine.submit_read(self._stream, first_page, n_pages, pages))
        if not done.ok:
            raise OSError(f"{self.reader.source.name}: reading pages {first_page}+{n_pages} failed: "
                          f"{done.status_name}")
        skip = self.origin + span.offset - first_page * self.page_size
        text = pages[skip: skip + length]
        fresh = self.reader._parse_on_host(type(span)(text, span.offset, span.at_eof, span.index))
        fresh.counters += result.counters  # keep what the failed device attempts counted
        result.take(fresh)
        result.side = RAW
        result.seconds = time.perf_counter() - started

    def _read_arena(self, arena: np.ndarray, scratch: np.ndarray, layout: _Layout, result: "SpanResult") -> None:
        reader = self.reader
        args = layout.args
        res = arena[args[A.A_RESULT]: args[A.A_RESULT] + 8 * (A.RESULT_WORDS + A.R_COL * len(reader.plans))]
        res = res.view(np.int64)
        nrows = int(res[A.R_NROWS])
        result.status, result.nrows, result.line_breaks = int(res[A.R_STATUS]), nrows, int(res[A.R_LINES])
        result.parsed = int(res[A.R_PARSED])
        n_bad = int(res[A.R_N_BAD_ROWS])
        if n_bad:
            bad = arena[args[A.A_BAD_ROWS]: args[A.A_BAD_ROWS] + 16 * A.BAD_ROWS_KEPT].view(np.int64)
            result.bad_rows = bad.reshape(-1, 2)[: min(n_bad, A.BAD_ROWS_KEPT)].copy()
        if result.status not in (S.OK, S.NEEDS_MORE):
            result.error_at = int(res[A.R_ERROR_AT])
            return
        result.columns, result.rungs = [], []
        used_bytes = res[A.RESULT_WORDS + 2::A.R_COL][: len(reader.plans)]
        self._estimate.learn(result.parsed, nrows, used_bytes.tolist())
        if layout.fast is not None:
            self._estimate.fused_gave_up = not res[A.R_FUSED]
        if res[A.R_FUSED]:
            result.rungs = res[A.RESULT_WORDS::A.R_COL][: len(reader.plans)].tolist()
            outputs = A.fused_outputs(arena, scratch, args[args[A.A_FUSED]:], len(reader.names))
            arrays = layout.fast.wrap(nrows, FusedBuffers(*outputs))
            result.columns = reader.planned_columns(arrays)
            return
        for j, plan in enumerate(reader.plans):
            rung, null_count, used = (int(v) for v in res[A.RESULT_WORDS + A.R_COL * j:][:3])
            regions = args[A.A_FIXED + A.A_COL * j:][:A.A_COL]
            result.rungs.append(rung)
            if plan.index < 0:
                result.columns.append(None)
                continue
            type_ = plan.type if plan.type is not None else INFERENCE_LADDER[rung]
            result.columns.append(_wrap_column(arena, regions, type_, reader.rules, nrows, null_count, used))
        if res[A.R_BAD_COL] >= 0:
            j = int(res[A.R_BAD_COL])
            result.bad_value = (int(res[A.R_BAD_ROW]), j, int(res[A.R_BAD_OFFSET]))
            result.columns[j] = None

    # ---- after the run ------------------------------------------------------------------------
    def finish(self, results: list) -> Optional[object]:
        """Asks the device where each task ended (modeled time); re-parses the
        tasks it sent back raw; returns the run's Report."""
        tasks = [self._task_work(i, r) for i, r in enumerate(results)]
        schedule = self.device.schedule(tasks, self.split, time.perf_counter() - self._started)
        raw = [r for r, side in zip(results, schedule.sides)
               if side == RAW and r.side == DEVICE and self._instances is not None]
        if raw:
            with ThreadPoolExecutor(self.reader.opts.threads) as pool:  # kernels release the GIL
                list(pool.map(self._reparse_raw, raw))
        schedule.report.wall_s = time.perf_counter() - self._started
        return schedule.report

    def _reparse_raw(self, result: "SpanResult") -> None:
        """A task the task queue returned raw: the host parses its pages."""
        span = result.span
        first_page, n_pages = self._pages(span.offset, result.parsed)
        # No bytes: parse_raw reads the pages through the device; offset, index and length place them.
        self.parse_raw(type(span)(span.buf[:0], span.offset, True, span.index), result, first_page, n_pages,
                       length=result.parsed)

    def _task_work(self, index: int, result: "SpanResult") -> TaskWork:
        first_page, n_pages = self._pages(result.span.offset, result.parsed)
        n_pages = max(1, n_pages)
        counters = {name: int(result.counters[slot]) for name, slot in COUNTER_NAMES.items()}
        return TaskWork(index, first_page, n_pages, result.parsed, result.object_bytes or
                        _object_bytes(result.columns), counters, result.side, dict(result.faults),
                        result.seconds, self.offloadable(result.span.offset, result.parsed))


class TaskRecorder(HostOnly):
    """A host-only device that keeps the tasks of its last run (for calibration)."""

    name = "task-recorder"

    def __init__(self, page_size: int = 4096):
        super().__init__(page_size)
        self.tasks: list[TaskWork] = []

    def schedule(self, tasks, split, wall_s):
        self.tasks = list(tasks)
        return super().schedule(tasks, split, wall_s)


def _wrap_column(arena, regions, type_, rules, nrows, null_count, used) -> pa.Array:
    spec = conversion_spec(type_, rules)
    validity = arena[regions[2]: regions[2] + (nrows + 7) // 8]
    if spec.kind == STRINGS:
        width = 8 if spec.large else 4
        offsets = arena[regions[1]: regions[1] + width * (nrows + 1)]
        return _wrap(type_, nrows, validity, null_count, offsets, arena[regions[4]: regions[4] + used])
    if spec.kind == K.NULL:
        return pa.nulls(nrows)
    if spec.kind == K.BOOL:
        return _wrap(type_, nrows, validity, null_count, arena[regions[3]: regions[3] + (nrows + 7) // 8])
    width = np.dtype(spec.dtype).itemsize
    return _wrap(type_, nrows, validity, null_count, arena[regions[1]: regions[1] + width * nrows])


def _object_bytes(columns: list) -> int:
    return sum(c.nbytes for c in columns if c is not None)
