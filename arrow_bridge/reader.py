"""The CSV reader: spans parsed in parallel, assembled into one Arrow table.

Data path of one span (see docs/architecture.md): read a block → cut at the
last line break → (worker thread) count lines, tokenize, convert each selected
column straight into Arrow buffers → (in file order) check the cut, account
lines and bad rows → at the end, settle inferred types and assemble.
"""
from __future__ import annotations

import threading
import time
import warnings
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np
import pyarrow as pa

from arrow_bridge.converters import TokenizedSpan, ValueRules, converter_for
from arrow_bridge.errors import CsvBadLineWarning, CsvParseError
from arrow_bridge.fast_path import FastPlan, row_capacity_hint
from arrow_bridge.inference import INFERENCE_LADDER, InferringConverter
from arrow_bridge.kernels import status as S
from arrow_bridge.kernels.status import empty_counters
from arrow_bridge.kernels.tokenizer import (
    count_line_breaks,
    split_record,
    tokenize,
)
from arrow_bridge.options import CsvOptions
from arrow_bridge.dialect import Dialect
from arrow_bridge.preamble import Preamble, read_preamble
from arrow_bridge.source import ByteSource
from arrow_bridge.spans import NO_BYTES, Span, SpanCutter, recut

_BAD_ROWS_KEPT = 4096


@dataclass
class SpanResult:
    """What a worker produced for one span."""

    span: Span
    status: int = S.OK
    parsed: int = 0  # bytes of complete, good records (all, unless NEEDS_MORE or an error)
    nrows: int = 0
    line_breaks: int = 0
    columns: list = field(default_factory=list)  # pa.Array per selected column
    rungs: list = field(default_factory=list)  # inference rung per column (-1: explicit)
    bad_rows: Optional[np.ndarray] = None  # [(offset in span, field count)]
    error_at: int = 0  # offset in span of a tokenizer error
    bad_value: Optional[tuple] = None  # (row, selected column, offset in span) of a conversion error
    counters: np.ndarray = field(default_factory=empty_counters)
    side: str = "host"  # who parsed it: "host", "device", or "raw" (the host, after a device fault)
    faults: dict = field(default_factory=dict)  # device faults met, by name
    object_bytes: int = 0
    seconds: float = 0.0  # wall time of the parse

    def take(self, other: "SpanResult") -> None:
        """Becomes ``other``'s parse (same span; a re-parse elsewhere)."""
        for f in ("status", "parsed", "nrows", "line_breaks", "columns", "rungs", "bad_rows", "error_at",
                  "bad_value", "counters"):
            setattr(self, f, getattr(other, f))


@dataclass
class ColumnPlan:
    """One output column: its position in the file and how it is converted."""

    name: str
    index: int  # file column, or -1 when missing (include_missing_columns)
    type: Optional[pa.DataType]  # explicit type, or None to infer


class CsvReader:
    """Reads one source into a ``pyarrow.Table`` with the given options."""

    def __init__(self, source: ByteSource, opts: CsvOptions, device=None, split: str = "host"):
        self.source = source
        self.opts = opts
        self.device = device
        self.split = split
        self.session = None
        self.report = None  # the device run's Report, when a device was given
        self.rules = ValueRules.from_options(opts)
        self.inferring = InferringConverter(self.rules)
        self.dialect = Dialect.from_options(opts)

    # ---- driver -------------------------------------------------------------------------
    def read(self) -> pa.Table:
        if self.source.random_access and not len(self.source.read_range(0, 1)) and self.opts.column_names:
            return self._empty_table(list(self.opts.column_names))  # e.g. an empty byte range
        pre = read_preamble(self.source, self.opts)
        if not pre.names:
            raise CsvParseError(self.source.name, pre.data_line, None, pre.data_offset,
                                "empty CSV file: cannot infer the number of columns")
        self.names = pre.names
        self.plans = self._plan_columns(pre.names)
        self.converters = [converter_for(p.type, self.rules) if p.type is not None else None
                           for p in self.plans]
        self.hints = [0] * len(self.plans)
        self._fast_plans: dict[tuple, Optional[FastPlan]] = {}
        self._types_known = all(p.type is not None for p in self.plans)  # else: after the first span
        self._densest = 0.0  # rows per byte, the most any span had
        if self.device is None:
            results = self._parse_all(pre)
        else:
            results = self._parse_all_on(self.device, pre)
        self._settle_types(results)
        return self._assemble(results)

    def _parse_all_on(self, device, pre: Preamble) -> list[SpanResult]:
        from arrow_bridge.device_path import DeviceSession
        from ndp_core.device import SplitPolicy
        from ndp_core.report import record

        policy = SplitPolicy.parse(self.split)
        self.session = DeviceSession(self, device, policy)  # closes what it opened if it fails
        try:
            results = self._parse_all(pre)
            self.report = self.session.finish(results)
        finally:
            self.session.close()
        record(self.report)
        return results

    def _plan_columns(self, names: list[str]) -> list[ColumnPlan]:
        opts = self.opts
        wanted = opts.include_columns if opts.include_columns is not None else range(len(names))
        plans = []
        for key in wanted:
            if isinstance(key, int):
                if not -len(names) <= key < len(names):
                    raise IndexError(f"usecols position {key} is out of range for {len(names)} columns")
                index, name = key % len(names), names[key]
            elif key in names:
                index, name = names.index(key), key
            elif opts.include_missing_columns:
                index, name = -1, key
            else:
                raise KeyError(f"Column {key!r} in include_columns does not exist in CSV file")
            plans.append(ColumnPlan(name, index, opts.column_types.get(name, opts.default_type)))
        return plans

    def _parse_all(self, pre: Preamble) -> list[SpanResult]:
        spans = SpanCutter(self.source, self.opts.block_size, pre.prefix, pre.data_offset, pre.eof,
                           left_unread=self.session.reads_pages if self.session is not None else None)
        cutter = iter(spans)
        threads = self.opts.threads
        executor = ThreadPoolExecutor(threads) if threads > 1 else None
        pending: deque[tuple[Span, Future]] = deque()

        def submit(span: Span) -> None:
            pending.append((span, _run(executor, self._parse_span, span)))

        def refill() -> None:
            # Spans parsed before the first one has settled the types would all take the general
            # path (four times slower than the fused kernel): until then, one at a time.
            depth = threads + 1 if self._types_known else 1
            while len(pending) < depth and (span := next(cutter, None)) is not None:
                submit(span)

        results: list[SpanResult] = []
        line, rows = pre.data_line, 0
        try:
            refill()
            while pending:
                span, future = pending.popleft()
                result = future.result()
                remaining = None if self.opts.nrows is None else self.opts.nrows - rows
                if remaining is not None and (result.nrows > remaining or (
                        result.nrows == remaining and result.status not in (S.OK, S.NEEDS_MORE))):
                    self._truncate(result, remaining)
                self._check(result, line)
                line += result.line_breaks
                rows += result.nrows
                results.append(self._release(result))
                if result.status == S.NEEDS_MORE and not self._enough(rows):
                    following = pending.popleft()[0] if pending else next(cutter)
                    pending.appendleft((fresh := recut(span, result.parsed, following, self.source),
                                        _run(executor, self._parse_span, fresh)))
                if self.source.random_access:  # nothing keeps the span's bytes: reuse its block
                    spans.recycle(span)
                if self._enough(rows):
                    break
                refill()
        finally:
            for _, future in pending:
                future.cancel()
            if executor is not None:
                executor.shutdown(wait=True)
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

    # ---- one span (runs in a worker thread) --------------------------------------------------
    def _tokenize(self, buf: np.ndarray, at_eof: bool, result: SpanResult) -> Optional[TokenizedSpan]:
        ncols = len(self.names)
        # Every record holds at least ncols bytes (delimiters and a line end),
        # so this many rows always fit. The workspace is reused, so untouched
        # slots cost address space, not memory.
        capacity = len(buf) // ncols + 1
        row_starts, ends, flags, scratch = _workspace(capacity, ncols, len(buf))
        bad_rows = np.empty((_BAD_ROWS_KEPT, 2), dtype=np.int64)
        skip_bad = self.opts.on_bad_lines != "error"
        status, nrows, pos, lines = tokenize(buf, 0, len(buf), at_eof, ncols, *self.dialect.scan_args,
                                             skip_bad, row_starts, ends, flags, bad_rows, result.counters)
        result.status, result.nrows, result.line_breaks = status, nrows, lines
        if status not in (S.OK, S.NEEDS_MORE):
            result.error_at = pos
            result.parsed = int(row_starts[nrows])  # the failing record's start
            return None
        result.parsed = pos
        n_bad = int(result.counters[S.BAD_ROWS])
        result.bad_rows = bad_rows[: min(n_bad, _BAD_ROWS_KEPT)].copy() if n_bad else None
        return TokenizedSpan(buf, row_starts, ends, flags, nrows, capacity,
                             self.dialect.unescape_args, scratch, result.counters)

    def _parse_span(self, span: Span) -> SpanResult:
        if self.session is not None and self.session.side_of(span) == "device":
            result = SpanResult(span)
            self.session.parse_on_device(span, result)
            return result
        return self._parse_on_host(span)

    def _parse_on_host(self, span: Span) -> SpanResult:
        started = time.perf_counter()
        result = SpanResult(span)
        if not (self._types_known and self._parse_fast(span, result)):
            tokens = self._tokenize(span.buf, span.at_eof, result)
            if tokens is not None:
                self._convert_columns(tokens, result, self.hints)
        result.seconds = time.perf_counter() - started
        return result

    def fast_plan(self, rungs: tuple[int, ...]) -> Optional[FastPlan]:
        """The fused kernel's plan with inferred columns at ``rungs`` (None: it
        cannot run); built once per rungs, for the host and the device path."""
        if rungs not in self._fast_plans:
            columns = [(p.index, p.type if p.type is not None else INFERENCE_LADDER[rungs[j]])
                       for j, p in enumerate(self.plans) if p.index >= 0]
            self._fast_plans[rungs] = FastPlan.build(len(self.names), columns, self.rules, self.dialect)
        return self._fast_plans[rungs]

    def _parse_fast(self, span: Span, result: SpanResult) -> bool:
        """Parses the span in one pass at the types known so far (see
        :mod:`arrow_bridge.fast_path`); False when the general path must."""
        rungs = tuple(self.hints)
        plan = self.fast_plan(rungs)
        if plan is None:
            return False
        capacity = row_capacity_hint(len(span.buf), len(self.names), self._densest)
        parsed = plan.parse(span.buf, capacity, result.counters)
        if parsed is None:
            return False
        result.nrows, result.line_breaks, arrays = parsed
        result.parsed = len(span.buf)
        result.columns = self.planned_columns(arrays)
        result.rungs = [-1 if p.type is not None or p.index < 0 else rungs[j] for j, p in enumerate(self.plans)]
        return True

    def planned_columns(self, arrays: dict[int, pa.Array]) -> list[Optional[pa.Array]]:
        """Each planned column's array from the fused kernel's ``{file column:
        array}`` (None for a column missing from the file)."""
        return [arrays[p.index] if p.index >= 0 else None for p in self.plans]

    def _convert_columns(self, tokens: TokenizedSpan, result: SpanResult, start_rungs: list[int]) -> None:
        """Converts every planned column; inferred ones from ``start_rungs`` up."""
        result.columns, result.rungs, result.bad_value = [], [], None
        for j, plan in enumerate(self.plans):
            if plan.index < 0:
                result.columns.append(None)
                result.rungs.append(-1)
            elif plan.type is None:
                rung, array = self.inferring.convert_from(tokens, plan.index, start_rungs[j])
                result.columns.append(array)
                result.rungs.append(rung)
            else:
                array, bad_row = self.converters[j](tokens, plan.index)
                if array is None:
                    offset = tokens.field_start(bad_row, plan.index)
                    if result.bad_value is None or bad_row < result.bad_value[0]:
                        result.bad_value = (bad_row, j, offset)
                result.columns.append(array)
                result.rungs.append(-1)

    def _truncate(self, result: SpanResult, keep: int) -> None:
        """Keeps the span's first ``keep`` rows, converted as if nothing followed.

        With ``nrows``, types are inferred from the rows returned only (as pandas
        does), so how far past ``nrows`` a span happened to reach cannot matter,
        nor can errors there.
        """
        buf = self._span_text(result.span, result.parsed)
        scratch_result = SpanResult(result.span)
        tokens = self._tokenize(buf, True, scratch_result)
        end_of_kept = int(tokens.row_starts[keep]) if keep < tokens.nrows else len(buf)
        tokens.nrows = keep
        self._convert_columns(tokens, result, [0] * len(self.plans))
        result.status, result.nrows, result.parsed = S.OK, keep, end_of_kept
        result.line_breaks = count_line_breaks(buf, 0, end_of_kept)
        bad = scratch_result.bad_rows
        result.bad_rows = bad[bad[:, 0] < end_of_kept] if bad is not None else None
        result.span = Span(buf, result.span.offset, True, result.span.index)

    def _span_text(self, span: Span, length: int) -> np.ndarray:
        """The first ``length`` bytes of a span, read again where possible."""
        if self.source.random_access:
            return self.source.read_range(span.offset, length)
        return span.buf[:length]

    # ---- in-order checks: errors and bad lines -------------------------------------------------
    def _check(self, result: SpanResult, line: int) -> None:
        span = result.span
        for j, rung in enumerate(result.rungs):
            if rung > self.hints[j]:
                self.hints[j] = rung
        self._types_known = True
        if result.parsed:
            self._densest = max(self._densest, result.nrows / result.parsed)
        if result.status == S.BAD_ROW:
            raise self._field_count_error(span, result.error_at, line)[0]
        if result.status == S.UNTERMINATED_QUOTE:
            raise self._error(span, result.error_at, line, None, "unterminated quoted field")
        if result.bad_value is not None:
            row, j, offset = result.bad_value
            plan = self.plans[j]
            value = self._field_text(span.buf, offset)
            raise self._error(span, offset, line, plan.name,
                              f"cannot convert {value!r} to {self.plans[j].type}")
        if result.bad_rows is not None:
            self._report_bad_rows(result, line)

    def _report_bad_rows(self, result: SpanResult, line: int) -> None:
        policy = self.opts.on_bad_lines
        if policy == "skip":
            return
        for offset, nfields in result.bad_rows:
            err, text = self._field_count_error(result.span, int(offset), line)
            if callable(policy):
                if _invalid_row_verdict(policy, len(self.names), int(nfields), err.line, text) != "skip":
                    raise err
            else:
                warnings.warn(f"skipping bad line: {err}", CsvBadLineWarning, stacklevel=5)

    def _field_count_error(self, span: Span, offset: int, line: int) -> tuple[CsvParseError, str]:
        """The error for the record at ``offset`` and the record's text."""
        buf = span.buf
        starts = np.empty(len(self.names) + 64, dtype=np.int64)
        ends, flags = np.empty_like(starts), np.empty(len(starts), dtype=np.uint8)
        status, nfields, end = split_record(buf, offset, len(buf), True, *self.dialect.scan_args,
                                            starts, ends, flags)
        got = f"{nfields}" if status != S.OUT_OF_SPACE else f"more than {len(starts)}"
        text = bytes(buf[offset:end]).rstrip(b"\r\n").decode("utf-8", "replace")
        shown = text if len(text) <= 100 else text[:96] + " ..."
        missing = self.names[nfields] if nfields < len(self.names) else None
        err = self._error(span, offset, line, missing,
                          f"expected {len(self.names)} fields, got {got}: {shown!r}")
        return err, text

    def _error(self, span: Span, offset: int, line: int, column: Optional[str], reason: str) -> CsvParseError:
        line += count_line_breaks(span.buf, 0, offset) + self.source.lines_before_origin()
        return CsvParseError(self.source.name, line, column, self.source.origin + span.offset + offset, reason)

    def _field_text(self, buf: np.ndarray, offset: int) -> str:
        starts = np.empty(1, np.int64)
        ends, flags = np.empty(1, np.int64), np.empty(1, np.uint8)
        split_record(buf, offset, len(buf), True, *self.dialect.scan_args, starts, ends, flags)
        return bytes(buf[starts[0]:ends[0]]).decode("utf-8", "replace")

    # ---- settling inferred types and assembling --------------------------------------------------
    def _settle_types(self, results: list[SpanResult]) -> None:
        """Re-converts spans whose inferred rung is below the column's final one."""
        while True:
            targets = [max((r.rungs[j] for r in results), default=0) for j in range(len(self.plans))]
            stale = [r for r in results if any(r.rungs[j] != t for j, t in enumerate(targets)
                                               if self.plans[j].type is None and self.plans[j].index >= 0)]
            if not stale:
                return
            for result in stale:
                self._reconvert(result, targets)

    def _reconvert(self, result: SpanResult, targets: list[int]) -> None:
        buf = self._span_text(result.span, result.parsed)
        scratch_result = SpanResult(result.span)
        tokens = self._tokenize(buf, True, scratch_result)
        for j, plan in enumerate(self.plans):
            if plan.type is None and plan.index >= 0 and result.rungs[j] != targets[j]:
                rung, array = self.inferring.convert_from(tokens, plan.index, targets[j])
                result.rungs[j], result.columns[j] = rung, array

    def _empty_table(self, names: list[str]) -> pa.Table:
        self.names = names
        self.plans = self._plan_columns(names)
        return self._assemble([])

    def _assemble(self, results: list[SpanResult]) -> pa.Table:
        total = sum(r.nrows for r in results)
        arrays = []
        for j, plan in enumerate(self.plans):
            if plan.index < 0:
                arrays.append(pa.chunked_array([pa.nulls(total, plan.type or pa.null())]))
                continue
            type_ = plan.type or (INFERENCE_LADDER[results[0].rungs[j]] if results else pa.null())
            arrays.append(pa.chunked_array([r.columns[j] for r in results], type=type_))
        table = pa.Table.from_arrays(arrays, names=[p.name for p in self.plans])
        if self.opts.nrows is not None and table.num_rows > self.opts.nrows:
            table = table.slice(0, self.opts.nrows)
        return table


_thread_workspace = threading.local()


def _workspace(capacity: int, ncols: int, span_bytes: int) -> tuple[np.ndarray, ...]:
    """This thread's tokenizer arrays, grown as needed and reused across spans.

    They never outlive one span's parse (converters copy what they keep), and
    reusing them avoids mapping and faulting in fresh pages for every span.
    Returns ``(row_starts, ends, flags, scratch)``; ``ends``/``flags`` hold
    ``capacity * ncols`` slots and ``scratch`` can unescape any one field.
    """
    ws = _thread_workspace
    fields = capacity * ncols
    if getattr(ws, "fields", -1) < fields or ws.rows < capacity:
        ws.rows, ws.fields = capacity, fields
        ws.row_starts = np.empty(capacity, dtype=np.int32)
        ws.ends = np.empty(fields, dtype=np.int32)
        ws.flags = np.empty(fields, dtype=np.uint8)
    if getattr(ws, "scratch", np.empty(0)).shape[0] < max(span_bytes, 1):
        ws.scratch = np.empty(max(span_bytes, 1), dtype=np.uint8)
    return ws.row_starts[:capacity], ws.ends[:fields], ws.flags[:fields], ws.scratch


def _run(executor: Optional[ThreadPoolExecutor], fn, *args: Any) -> Future:
    if executor is not None:
        return executor.submit(fn, *args)
    future: Future = Future()
    future.set_result(fn(*args))
    return future


def _invalid_row_verdict(handler, expected: int, actual: int, line: int, text: str) -> str:
    """Asks a pyarrow-style ``invalid_row_handler``: it gets a
    ``pyarrow.csv.InvalidRow`` and answers ``"skip"`` or ``"error"``."""
    from pyarrow.csv import InvalidRow

    return handler(InvalidRow(expected, actual, line, text))
