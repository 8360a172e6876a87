"""The device executor: spans parsed by a computational storage device's StorageApp.

A span the split policy gives the device becomes a task: one MREAD (Morpheus)
or READ_PROC_TSK (Summarizer policies) over the device pages that hold it, run
by :func:`arrow_bridge.kernels.span_app.csv_app` on the pages the engine read
from the file. Its Arrow buffers come back in an output arena and are wrapped
zero-copy (:mod:`arrow_bridge.executors.device_buffers`). When the span's
types are known the task asks the app to try the fused kernel first.

Faults injected by the device make a command fail the way hardware would: a
link timeout is resubmitted; a media error, an app failure or a full task
queue sends the task back raw — the host READs the pages and the host
executor this one was given parses them. After the run the device's timing
model decides, in modeled time, where each task ended up (in dynamic mode a
full task queue returns tasks raw; those the host parses again) and returns
the run's Report.

Simplification (docs/architecture.md): the host's span cutter finds record
boundaries, reading the last 64 KiB of each block planned for the device (the
span itself stays unread); the model charges nothing for it.

>>> from device_emulator import ComputationalSSD
>>> from arrow_bridge.executors import DeviceExecutor, HostExecutor
>>> DeviceExecutor(ComputationalSSD("modern-gen4"), "dynamic", HostExecutor()).split.kind
'dynamic'
"""
from __future__ import annotations

import os
import queue
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Optional, Sequence, Union

import numpy as np
import pyarrow as pa

from arrow_bridge.executors.base import SpanExecutor, SpanPlan, SpanResult
from arrow_bridge.executors.device_buffers import (
    OutputEstimate,
    TaskLayout,
    column_specs,
    object_bytes,
    pack_plan,
    read_arena,
    task_layout,
)
from arrow_bridge.kernels.status import OK, READER_COUNTERS
from arrow_bridge.read_plan import ReadPlan
from arrow_bridge.source import ByteSource
from arrow_bridge.span_stages import run_span_stages, sent_bytes, stage_work
from arrow_bridge.spans import Span
from arrow_bridge.type_settling import TypeState
from ndp_core import MAX_PAGES_PER_COMMAND
from ndp_core.device import (DEVICE, FAULT_APP, FAULT_MEDIA, FAULT_NAMES, FAULT_TIMEOUT, FAULT_TQ_OVERFLOW, RAW,
                             Device, HostOnly, Schedule, SplitPolicy, TaskWork, decide_offload)
from ndp_core.engine import Opcode, Status
from ndp_core.interrupts import interrupts_at_checks
from ndp_core.report import OffloadDecision, Report

MAX_ATTEMPTS = 3
#: Spans a sampled split (``split="sampled"``) parses before the read, spread over the input.
SAMPLE_SPANS = 8
# Device failures the host recovers from by reading the raw pages and parsing them.
RAW_FALLBACK = (Status.IO_ERROR, Status.APP_ERROR, Status.RETURNED_RAW)  # a TIMEOUT is resubmitted
# The fault a failed command amounts to, for the Report and the timing model, when none was
# injected (say the app refused a plan of other layouts).
FAULT_OF_STATUS = {Status.IO_ERROR: FAULT_NAMES[FAULT_MEDIA], Status.APP_ERROR: FAULT_NAMES[FAULT_APP],
                   Status.RETURNED_RAW: FAULT_NAMES[FAULT_TQ_OVERFLOW], Status.TIMEOUT: FAULT_NAMES[FAULT_TIMEOUT]}


class DeviceExecutor:
    """One read's use of a device: its stream, app instances and tasks."""

    def __init__(self, device: Device, split: Union[str, SplitPolicy], host: SpanExecutor):
        self.device = device
        self.requested = SplitPolicy.parse(split)
        self.split = self.requested  # "sampled" becomes "host" or "device" at start
        self.decision: Optional[OffloadDecision] = None  # a sampled split's
        self.host = host  # parses what the device hands back raw
        self.engine = None  # the device's engine, from start on (asking for it starts its threads)
        self.page_size = int(device.page_size)
        self.read: Optional[ReadPlan] = None
        self._stream = self._instances = None
        self._scratch: dict = {}

    @property
    def _task_queue(self) -> bool:
        """Whether the split uses Summarizer's task commands (INIT_TSK, READ_PROC_TSK, FINAL_TSK)."""
        return self.split.kind in ("static", "dynamic")

    # ---- set-up / tear-down --------------------------------------------------------------------
    def start(self, read: ReadPlan) -> None:
        """Installs the CSV StorageApp with this read's plan (MINIT), one instance per engine worker."""
        self.read = read
        self.host.start(read)  # the fallback parses against the same plan (a no-op if the reader started it)
        self.engine = self.device.engine
        self.origin = read.source.origin
        self._estimate = OutputEstimate(len(read.columns))
        self._specs = column_specs(read)
        self._started = time.perf_counter()
        if self.engine is None or self.requested.kind == "host":
            self.split = SplitPolicy.parse("host") if self.requested.kind == "sampled" else self.requested
            return
        path = read.source.path
        if path is None:
            raise ValueError("device= needs a local file path (the device reads the file's pages)")
        if self.requested.kind == "sampled":
            self.split = self._sampled_split(read)
            if self.split.kind == "host":
                return
        from arrow_bridge.kernels.span_app import csv_app  # compiles or loads the app: only when used

        self._instances = queue.Queue()
        self._stream = self.engine.stream_create(path)
        try:
            plan = pack_plan(read)
            for _ in range(max(1, self.engine.cores)):
                inst = self.engine.minit(csv_app.address, init=plan, streams=[self._stream])
                self._instances.put(inst)
                if self._task_queue:
                    self._completion(self.engine.submit_task(Opcode.INIT_TSK, inst, 0))
        except BaseException:
            self.close()
            raise

    def _sampled_split(self, read: ReadPlan) -> SplitPolicy:
        """Biscuit's decision (``split="sampled"``): a few spans of the input parsed and
        staged on the host, the whole read modeled from them on both sides
        (:func:`ndp_core.device.decide_offload`); the faster side."""
        started = time.perf_counter()
        length = source_length(read.source)
        results = sample_spans(read, self.host, length, SAMPLE_SPANS)
        self.decision = decide_offload(
            self.device, [self._task_work(i, r) for i, r in enumerate(results)], length, read.opts.span_bytes,
            sampled_rows=sum(r.rows_read if r.staged else r.nrows for r in results),
            kept_rows=sum(r.nrows for r in results), sample_wall_s=time.perf_counter() - started)
        return SplitPolicy.parse(self.decision.choice)

    def close(self) -> None:
        """Frees every instance, the stream and the scratch buffers, whatever fails on the way."""
        self._scratch.clear()
        if self._instances is None:
            return
        instances, self._instances = self._instances, None
        try:
            while not instances.empty():
                inst = instances.get()
                try:
                    if self._task_queue:
                        self._completion(self.engine.submit_task(Opcode.FINAL_TSK, inst, 0))
                finally:
                    self.engine.mdeinit(inst)
        finally:
            self.engine.stream_close(self._stream)

    # ---- which spans ---------------------------------------------------------------------------
    def task_number(self, offset: int) -> int:
        """Tasks are numbered by where they start in the file (in blocks), so a
        byte range (a Dask partition) gets the static split and faults of its
        place in the whole file, not those of a file of its own."""
        return (self.origin + offset) // self.read.opts.span_bytes

    def takes(self, offset: int, length: int) -> bool:
        # An empty span (a header at the very end of the file) may lie past the last page.
        return bool(length) and self.leaves_unread(offset) and self.offloadable(offset, length)

    def leaves_unread(self, offset: int) -> bool:
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

    # ---- one span ------------------------------------------------------------------------------
    def parse(self, span: Span, plan: SpanPlan) -> SpanResult:
        """Runs ``span`` as a device task, falling back to a raw read on faults."""
        started = time.perf_counter()
        result = SpanResult(span)
        first_page, n_pages = self._pages(span.offset, span.length)
        skip = self.origin + span.offset - first_page * self.page_size
        estimate = self._estimate if self._estimate.known else None

        def layout_for(estimate: Optional[OutputEstimate]) -> TaskLayout:
            return task_layout(span.length, skip, span.at_eof, self.read, estimate, self._specs, plan.rungs,
                               plan.fast, fused_only=not self._estimate.fused_gave_up)

        layout = layout_for(estimate)
        attempt = 0
        while attempt < MAX_ATTEMPTS:
            fault = self.device.fault_for(self.task_number(span.offset), attempt)
            done = self._submit(first_page, n_pages, layout, result, fault)
            met = FAULT_NAMES[fault] if fault else FAULT_OF_STATUS.get(done.status)
            if met:
                result.faults[met] = result.faults.get(met, 0) + 1
            if done.status == Status.OUT_OF_SPACE and estimate is not None:
                self._estimate.fused_gave_up |= plan.fast is not None  # a fused parse never runs out of space
                estimate = None  # an emulator artifact, not a fault: retry with room for anything
                layout = layout_for(None)
                continue
            attempt += 1
            if done.status == Status.TIMEOUT:
                continue  # the completion was lost: resubmit
            if done.status in (Status.OK, Status.BAD_INPUT):  # _submit has read the arena
                result.side, result.object_bytes = DEVICE, object_bytes(result.columns)
                result.seconds = time.perf_counter() - started
                return result
            if done.status not in RAW_FALLBACK:
                raise RuntimeError(f"device command for bytes {self.origin + span.offset}+{span.length} failed: "
                                   f"{done.status_name}")
            break
        self.parse_raw(span, plan, result, first_page, n_pages)
        return result

    def _submit(self, first_page: int, n_pages: int, layout: TaskLayout, result: SpanResult, fault: int):
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
            done = self._completion(cid)
            if done.status in (Status.OK, Status.BAD_INPUT):  # BAD_INPUT: the arena says where and why
                read_arena(arena, scratch, layout, self.read, self._estimate, result)
            return done
        finally:
            self._instances.put(inst)

    def _completion(self, cid: int):
        """Command ``cid``'s completion. Ctrl-C interrupts the wait (the
        engine's waits let it through), not the command: it writes into this
        read's buffers and its instance serves the read's next commands, so
        it is waited for and consumed before the KeyboardInterrupt goes on,
        and the engine keeps nothing of it (a task takes milliseconds)."""
        try:
            return self.engine.wait(cid)
        except KeyboardInterrupt:
            while True:
                try:
                    self.engine.wait(cid)
                    break
                except KeyboardInterrupt:  # pressed again: the command still has to end first
                    continue
                except KeyError:  # the wait had consumed it: Ctrl-C came as the wait returned
                    break
            raise

    def parse_raw(self, span: Span, plan: SpanPlan, result: SpanResult, first_page: int, n_pages: int,
                  length: Optional[int] = None) -> None:
        """The host READs the task's pages and its executor parses ``length``
        bytes (default: the span's) from the span's start."""
        length = span.length if length is None else length
        started = time.perf_counter()
        pages = np.empty(n_pages * self.page_size, dtype=np.uint8)
        done = self._completion(self.engine.submit_read(self._stream, first_page, n_pages, pages))
        if not done.ok:
            raise OSError(f"{self.read.source.name}: reading pages {first_page}+{n_pages} failed: "
                          f"{done.status_name}")
        skip = self.origin + span.offset - first_page * self.page_size
        text = pages[skip: skip + length]
        fresh = self.host.parse(Span(text, span.offset, span.at_eof, span.index), plan)
        result.take(fresh)
        result.side = RAW
        result.seconds = time.perf_counter() - started

    # ---- after the run ---------------------------------------------------------------------------
    def finish(self, results: Sequence[SpanResult], plan: SpanPlan) -> Report:
        """Asks the device where each task ended (modeled time); re-parses the
        tasks it sent back raw (at ``plan``, the types as settled by the last
        span); returns the run's Report."""
        tasks = [self._task_work(i, r) for i, r in enumerate(results)]
        schedule = self.device.schedule(tasks, self.split, time.perf_counter() - self._started)
        raw = [r for r, side in zip(results, schedule.sides)
               if side == RAW and r.side == DEVICE and self._instances is not None]
        if raw:
            # Ctrl-C where the pool holds no lock, once the tasks under way are parsed; the rest are not
            with interrupts_at_checks() as interrupted:
                pool = ThreadPoolExecutor(self.read.opts.threads)  # kernels release the GIL
                try:
                    for future in [pool.submit(self._reparse_raw, result, plan) for result in raw]:
                        future.result()
                        interrupted()
                finally:
                    pool.shutdown(wait=True, cancel_futures=True)
        schedule.report.wall_s = time.perf_counter() - self._started
        if self.decision is not None:
            schedule.report.decisions = [self.decision]
        return schedule.report

    def _reparse_raw(self, result: SpanResult, plan: SpanPlan) -> None:
        """A task the task queue returned raw: the host parses its pages."""
        span = result.span
        first_page, n_pages = self._pages(span.offset, result.parsed)
        # No bytes: parse_raw reads the pages through the device; offset, index and length place them.
        self.parse_raw(Span(span.buf[:0], span.offset, True, span.index), plan, result, first_page, n_pages,
                       length=result.parsed)

    def _task_work(self, index: int, result: SpanResult) -> TaskWork:
        """The span as the timing model sees it: the parse's modeled counters and the span stages' work."""
        first_page, n_pages = self._pages(result.span.offset, result.parsed)
        counters = {**READER_COUNTERS.modeled_values(result.counters), **stage_work(result, self.read)}
        # A task reads at least a page; the empty span that ends a file of whole blocks reads none.
        pages = max(1, n_pages) if result.parsed else 0
        return TaskWork(index, first_page, pages, result.parsed, sent_bytes(result), counters,
                        result.side, dict(result.faults), result.seconds,
                        self.offloadable(result.span.offset, result.parsed))


def sample_spans(read: ReadPlan, host: SpanExecutor, length: int, count: int) -> list[SpanResult]:
    """Up to ``count`` spans of the read's span size, one from the middle of each
    of ``count`` equal parts of the source's ``length`` bytes (Biscuit samples
    pages across the table), parsed by ``host`` with the types they infer and
    put through the span stages. Each runs from the first line break after its
    place to the last one in its span size; one that does not parse or stage
    there (a line break inside a quoted field, say) is left out: the read
    itself reports what is wrong with the file.

    >>> import os, tempfile
    >>> from arrow_bridge.executors import HostExecutor
    >>> from arrow_bridge.filters import RowFilter
    >>> from arrow_bridge.options import CsvOptions
    >>> from arrow_bridge.read_plan import ReadPlan
    >>> from arrow_bridge.source import open_source
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = os.path.join(folder, "t.csv")
    ...     _ = open(path, "wb").write(b"a,b\\n" + b"".join(b"%d,x\\n" % i for i in range(4000)))
    ...     with open_source(path) as source:
    ...         opts = CsvOptions(block_size=4096, row_filter=RowFilter([("a", "<", 100)]))
    ...         read, host = ReadPlan.build(source, opts, ["a", "b"]), HostExecutor()
    ...         host.start(read)
    ...         spans = sample_spans(read, host, source_length(source), 4)
    >>> len(spans), [r.nrows for r in spans], all(r.rows_read > 500 for r in spans)
    (4, [0, 0, 0, 0], True)
    """
    size, plan = read.opts.span_bytes, TypeState(read).plan()
    parts = max(1, min(count, -(-length // size)))
    results = []
    for i in range(parts):
        place = max(0, min((2 * i + 1) * length // (2 * parts), length - size))  # whole spans where they fit
        text = read.source.read_range(place, size)
        breaks = np.flatnonzero(text == ord("\n"))
        if len(breaks) < 2:
            continue
        # Whole records, parsed as if they ended the input: a span cut inside a record counts its work
        # only once the driver hands it the rest (NEEDS_MORE).
        first, end = int(breaks[0]) + 1, len(text) if place + len(text) >= length else int(breaks[-1]) + 1
        try:
            result = host.parse(Span(text[first:end], place + first, True, i), plan)
            run_span_stages(result, read)
        except (TypeError, ValueError, pa.ArrowException):  # FilterError, CsvParseError: the read will say
            continue
        if result.staged or (result.status == OK and not read.stages_spans):
            results.append(result)
    return results


def source_length(source: ByteSource) -> int:
    """The bytes a random-access source holds (a byte range ends before its file
    does, and says so only by a short read).

    >>> from arrow_bridge.source import open_source
    >>> with open_source(b"a,b\\n1,2\\n") as src:
    ...     source_length(src)
    8
    """
    probe = np.empty(1, dtype=np.uint8)
    low, high = 0, (os.path.getsize(source.path) - source.origin if source.path else 1 << 62)
    if high and source.readinto_at(probe, high - 1) == 1:
        return high
    while low < high:  # low bytes are there, more than high are not
        middle = (low + high + 1) // 2
        if source.readinto_at(probe, middle - 1) == 1:
            low = middle
        else:
            high = middle - 1
    return low


class TaskRecorder(HostOnly):
    """A host-only device that keeps the tasks of its last run (for calibration)."""

    name = "task-recorder"

    def __init__(self, page_size: int = 4096):
        super().__init__(page_size)
        self.tasks: list[TaskWork] = []

    def schedule(self, tasks: Sequence[TaskWork], split: SplitPolicy, wall_s: float) -> Schedule:
        """Keeps ``tasks``, then schedules them as :class:`HostOnly` does."""
        self.tasks = list(tasks)
        return super().schedule(tasks, split, wall_s)
