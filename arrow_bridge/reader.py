"""The CSV reader's driver: cut spans, hand them to executors, check in order, settle types, assemble.

It never parses a byte itself and never asks where a span ran: a span goes to
the first executor that takes it (offload executors such as a device first,
the host executor last), results are checked in file order, and the units
it drives do the rest — :mod:`arrow_bridge.span_errors` (error text),
:mod:`arrow_bridge.type_settling` (inferred types),
:mod:`arrow_bridge.assembly` (the Table). See docs/architecture.md for the
walk of one block.

>>> import io
>>> from arrow_bridge.options import CsvOptions
>>> from arrow_bridge.reader import CsvReader
>>> from arrow_bridge.source import open_source
>>> CsvReader(open_source(io.BytesIO(b"x,y\\n1,a\\n")), CsvOptions()).read().num_rows
1
"""
from __future__ import annotations

import dataclasses
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Optional, Sequence

import pyarrow as pa

from arrow_bridge.assembly import assemble
from arrow_bridge.errors import CsvParseError
from arrow_bridge.executors import DeviceExecutor, HostExecutor, SpanExecutor, SpanPlan, SpanResult
from arrow_bridge.kernels.status import NEEDS_MORE, OK
from arrow_bridge.options import CsvOptions
from arrow_bridge.preamble import Preamble, read_preamble
from arrow_bridge.read_plan import ReadPlan, plan_columns
from arrow_bridge.source import ByteSource
from arrow_bridge.span_errors import SpanErrors
from arrow_bridge.spans import NO_BYTES, Span, SpanCutter, recut
from arrow_bridge.type_settling import TypeState, settle_types
from ndp_core.report import Report, record


class CsvReader:
    """Reads one source into a ``pyarrow.Table`` with the given options.

    ``device``/``split`` register a :class:`DeviceExecutor` for that device;
    ``offload`` registers executors of any kind (a GPU, say), tried in order
    before ``host`` (default: a new :class:`HostExecutor`), which takes the
    rest. An offload executor that falls back should be given the same ``host``.
    """

    def __init__(self, source: ByteSource, opts: CsvOptions, device=None, split: str = "host", *,
                 host: Optional[HostExecutor] = None, offload: Sequence[SpanExecutor] = ()):
        self.source = source
        self.opts = opts if device is None else _with_task_size(opts, device)
        self.host = host if host is not None else HostExecutor()
        self.offload = list(offload)
        if device is not None:
            self.offload.append(DeviceExecutor(device, split, self.host))
        elif split != "host":  # it would quietly run on the host, with no Report
            raise ValueError(f"split={split!r} needs a device: pass device= (a ComputationalSSD, a profile name "
                             "such as 'modern-gen4', or ndp_core.device.HostOnly())")
        self.report: Optional[Report] = None  # the offload run's Report, when there was one

    # ---- driver -------------------------------------------------------------------------------------
    def read(self) -> pa.Table:
        """The whole source as one Table (its offload executors' Report in ``self.report``)."""
        opts = self.opts
        if self.source.random_access and not len(self.source.read_range(0, 1)) and opts.column_names:
            return assemble([], plan_columns(list(opts.column_names), opts))  # e.g. an empty byte range
        pre = read_preamble(self.source, opts)
        if not pre.names:
            raise CsvParseError(self.source.name, pre.data_line, None, pre.data_offset,
                                "empty CSV file: cannot infer the number of columns")
        read = ReadPlan.build(self.source, opts, pre.names)
        self.types = TypeState(read)
        self.errors = SpanErrors(read)
        started: list[SpanExecutor] = []
        try:
            for executor in [self.host, *self.offload]:
                started.append(executor)  # closed even if its start fails part way
                executor.start(read)
            results = self._parse_all(pre)
            reports = [executor.finish(results, self.types.plan()) for executor in started]
            settle_types(results, read, self.host)
        finally:
            for executor in reversed(started):
                executor.close()
        for report in reports:
            if report is not None:
                self.report = report
                record(report)
        return assemble(results, read.columns, opts.nrows)

    def _executor_for(self, span: Span) -> SpanExecutor:
        for executor in self.offload:
            if executor.takes(span.offset, span.length):
                return executor
        return self.host

    def _leaves_unread(self, offset: int) -> bool:
        return any(executor.leaves_unread(offset) for executor in self.offload)

    def _parse_all(self, pre: Preamble) -> list[SpanResult]:
        """Every span parsed, checked and in file order (up to ``nrows``)."""
        opts, source = self.opts, self.source
        spans = SpanCutter(source, opts.span_bytes, pre.prefix, pre.data_offset, pre.eof,
                           left_unread=self._leaves_unread if self.offload else None)
        cutter = iter(spans)
        threads = opts.threads
        pool = ThreadPoolExecutor(threads) if threads > 1 else None
        pending: deque[tuple[Span, Future]] = deque()

        def parse(span: Span) -> Future:
            executor, plan = self._executor_for(span), self.types.plan()
            return _run(pool, executor.parse, span, plan)

        def refill() -> None:
            # Spans parsed before the first one has settled the types would all take the general
            # path (four times slower than the fused kernel): until then, one at a time.
            depth = threads + 1 if self.types.known else 1
            while len(pending) < depth and (span := next(cutter, None)) is not None:
                pending.append((span, parse(span)))

        results: list[SpanResult] = []
        line, rows = pre.data_line, 0
        try:
            refill()
            while pending:
                span, future = pending.popleft()
                result = future.result()
                remaining = None if opts.nrows is None else opts.nrows - rows
                if remaining is not None and (result.nrows > remaining or (
                        result.nrows == remaining and result.status not in (OK, NEEDS_MORE))):
                    self.host.truncate(result, remaining)
                self.types.learn(result)
                self.errors.check(result, line)
                line += result.line_breaks
                rows += result.nrows
                results.append(self._release(result))
                if result.status == NEEDS_MORE and not self._enough(rows):
                    following = pending.popleft()[0] if pending else next(cutter)
                    fresh = recut(span, result.parsed, following, source)
                    pending.appendleft((fresh, parse(fresh)))
                if source.random_access:  # nothing keeps the span's bytes: reuse its block
                    spans.recycle(span)
                if self._enough(rows):
                    break
                refill()
        finally:
            for _, future in pending:
                future.cancel()
            if pool is not None:
                pool.shutdown(wait=True)
        return results

    def _enough(self, rows: int) -> bool:
        return self.opts.nrows is not None and rows >= self.opts.nrows

    def _release(self, result: SpanResult) -> SpanResult:
        """Keeps a span's parsed bytes only where they cannot be read again.

        The result gets its own ``Span``: the driver still needs the original's
        unparsed tail when the cut fell inside a record.
        """
        span = result.span
        # A view would keep the whole block alive: random-access sources keep nothing.
        kept = NO_BYTES if self.source.random_access else span.buf[: result.parsed]
        result.span = Span(kept, span.offset, span.at_eof, span.index)
        return result


def _with_task_size(opts: CsvOptions, device: Any) -> CsvOptions:
    """``opts`` with the device's task size as the span size, unless the caller chose one: a
    device read's spans are its tasks, and the split policies need many per task-queue slot."""
    task_bytes = getattr(device, "task_bytes", None)
    if opts.block_size is not None or not task_bytes:
        return opts
    return dataclasses.replace(opts, block_size=int(task_bytes))


def _run(pool: Optional[ThreadPoolExecutor], fn: Callable[..., Any], *args: Any) -> Future:
    if pool is not None:
        return pool.submit(fn, *args)
    future: Future = Future()
    future.set_result(fn(*args))
    return future
