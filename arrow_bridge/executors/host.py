"""The host executor: a span parsed by the host's CPU, on the caller's worker thread.

Once the span's types are known (:class:`SpanPlan` carries a fused plan) the
one-pass fused kernel tries first (:mod:`arrow_bridge.fast_path`); a span it
gives up on, or one parsed before the types settled, takes the general path:
tokenize the span, then convert each output column into Arrow buffers
(inferred columns climbing the inference ladder from the span's start rung).

>>> import io
>>> import arrow_bridge
>>> arrow_bridge.read_csv(io.BytesIO(b"a,b\\n1,x\\n")).to_pydict()  # every span here ran on the host
{'a': [1], 'b': ['x']}
"""
from __future__ import annotations

import threading
import time
from typing import Optional, Sequence

import numpy as np

from arrow_bridge import startup
from arrow_bridge.converters import TokenizedSpan
from arrow_bridge.executors.base import SpanPlan, SpanResult
from arrow_bridge.fast_path import row_capacity_hint
from arrow_bridge.kernels.status import BAD_ROWS, BAD_ROWS_KEPT, NEEDS_MORE, OK
from arrow_bridge.kernels.tokenizer import count_line_breaks, record_capacity, tokenize
from arrow_bridge.read_plan import ReadPlan
from arrow_bridge.spans import Span
from arrow_bridge.workers import WORKSPACE_KEEP_BYTES


class HostExecutor:
    """Parses spans on the host (thread-safe: per-thread workspaces)."""

    def __init__(self) -> None:
        self.read: Optional[ReadPlan] = None

    # ---- the SpanExecutor protocol -------------------------------------------------------------
    def start(self, read: ReadPlan) -> None:
        """Parses against ``read`` from now on (starting twice with the same plan is harmless)."""
        if self.read is not None and self.read is not read:
            raise RuntimeError("a HostExecutor serves one read at a time")
        self.read = read

    def takes(self, offset: int, length: int) -> bool:
        return True

    def leaves_unread(self, offset: int) -> bool:
        return False

    def parse(self, span: Span, plan: SpanPlan) -> SpanResult:
        span.read()  # before the clock starts: reading is not parsing (calibration fits parse time)
        started = time.perf_counter()
        result = SpanResult(span)
        # The fused loop is not in the startup library (pycc cannot compile it): while the library
        # serves the process's first reads, spans take the general path rather than load Numba for it.
        first_reads = startup.in_use()
        if not (plan.fast is not None and not first_reads and self.parse_fast(span, plan, result)):
            # After a tokenizer error too: a value before the failing record
            # that does not convert is the span's first problem.
            self.convert_columns(self.tokenize(span.buf, span.at_eof, result), result, plan.rungs)
        result.seconds = time.perf_counter() - started
        if first_reads:
            startup.parsed(len(span.buf))
        return result

    def finish(self, results: Sequence[SpanResult], plan: SpanPlan) -> None:
        return None

    def close(self) -> None:
        self.read = None

    # ---- the two paths --------------------------------------------------------------------------
    def parse_fast(self, span: Span, plan: SpanPlan, result: SpanResult) -> bool:
        """Parses the span in one pass at ``plan``'s types (see
        :mod:`arrow_bridge.fast_path`); False when the general path must."""
        read = self.read
        capacity = row_capacity_hint(len(span.buf), read.ncols, plan.rows_per_byte)
        parsed = plan.fast.parse(span.buf, capacity, result.counters)
        if parsed is None:
            return False
        result.nrows, result.line_breaks, arrays, result.rows_read = parsed
        result.parsed = len(span.buf)
        result.columns = read.planned_columns(arrays)
        result.rungs = [plan.rungs[j] if c.inferred else -1 for j, c in enumerate(read.columns)]
        return True

    def tokenize(self, buf: np.ndarray, at_eof: bool, result: SpanResult) -> TokenizedSpan:
        """Tokenizes ``buf`` into this thread's workspace; records the status,
        rows, line breaks and bad rows in ``result``. After a tokenizer error
        the tokens are the complete records before the failing one."""
        read = self.read
        ncols = read.ncols
        # This many rows always fit (record_capacity). The workspace is reused,
        # so untouched slots cost address space, not memory.
        capacity = record_capacity(len(buf), ncols, read.row_rules)
        row_starts, ends, flags, scratch = _workspace(capacity, ncols, len(buf))
        bad_rows = np.empty((BAD_ROWS_KEPT, 2), dtype=np.int64)
        status, nrows, pos, lines = tokenize(buf, 0, len(buf), at_eof, ncols, *read.dialect.scan_args,
                                             read.row_rules, row_starts, ends, flags, bad_rows, result.counters)
        result.status, result.nrows, result.line_breaks = status, nrows, lines
        if status not in (OK, NEEDS_MORE):
            result.error_at, pos = pos, int(row_starts[nrows])  # parsed: up to the failing record
        result.parsed = pos
        n_bad = int(result.counters[BAD_ROWS])
        result.bad_rows = bad_rows[: min(n_bad, BAD_ROWS_KEPT)].copy() if n_bad else None
        return TokenizedSpan(buf, row_starts, ends, flags, nrows, capacity,
                             read.dialect.unescape_args, scratch, result.counters)

    def convert_columns(self, tokens: TokenizedSpan, result: SpanResult, start_rungs: Sequence[int]) -> None:
        """Converts every output column; inferred ones from ``start_rungs`` up."""
        read = self.read
        result.columns, result.rungs, result.bad_value = [], [], None
        for j, column in enumerate(read.columns):
            if column.index < 0:
                result.columns.append(None)
                result.rungs.append(-1)
            elif column.type is None:
                rung, array = read.inferring.convert_from(tokens, column.index, start_rungs[j])
                result.columns.append(array)
                result.rungs.append(rung)
            else:
                array, bad_row = read.converters[j](tokens, column.index)
                if array is None:
                    offset = tokens.field_start(bad_row, column.index)
                    if result.bad_value is None or bad_row < result.bad_value[0]:
                        result.bad_value = (bad_row, j, offset)
                result.columns.append(array)
                result.rungs.append(-1)

    # ---- re-parsing a checked span (the driver's nrows cut and type settling) ----------------------
    def truncate(self, result: SpanResult, keep: int) -> None:
        """Keeps the span's first ``keep`` rows, converted as if nothing followed.

        With ``nrows``, types are inferred from the rows returned only (as pandas
        does), so how far past ``nrows`` a span happened to reach cannot matter,
        nor can errors there.
        """
        buf = self.span_text(result.span, result.parsed)
        scratch_result = SpanResult(result.span)
        tokens = self.tokenize(buf, True, scratch_result)
        end_of_kept = int(tokens.row_starts[keep]) if keep < tokens.nrows else len(buf)
        tokens.nrows = keep
        self.convert_columns(tokens, result, [0] * len(self.read.columns))
        result.status, result.nrows, result.parsed = OK, keep, end_of_kept
        result.line_breaks = count_line_breaks(buf, 0, end_of_kept)
        bad = scratch_result.bad_rows
        result.bad_rows = bad[bad[:, 0] < end_of_kept] if bad is not None else None
        result.span = Span(buf, result.span.offset, True, result.span.index)

    def reconvert(self, result: SpanResult, targets: Sequence[int]) -> None:
        """Converts the span's inferred columns again at the rungs ``targets``
        (from each target up) where they ended elsewhere. A staged span
        (filtered, aggregated), or one whose rows the filter's bounds thinned
        as they were parsed, has lost rows: all its columns are converted
        again, to be staged again at their new types."""
        read = self.read
        tokens = self.tokenize(self.span_text(result.span, result.parsed), True, SpanResult(result.span))
        if result.staged or result.rows_read > result.nrows:
            self.convert_columns(tokens, result, targets)
            result.nrows, result.staged, result.partial, result.rows_read = tokens.nrows, False, None, 0
            return
        for j, column in enumerate(read.columns):
            if column.inferred and result.rungs[j] != targets[j]:
                rung, array = read.inferring.convert_from(tokens, column.index, targets[j])
                result.rungs[j], result.columns[j] = rung, array

    def span_text(self, span: Span, length: int) -> np.ndarray:
        """The first ``length`` bytes of a checked span, read again where
        possible (the driver keeps no bytes of random-access sources)."""
        source = self.read.source
        if source.random_access:
            return source.read_range(span.offset, length)
        return span.buf[:length]


_thread_workspace = threading.local()


def _workspace(capacity: int, ncols: int, span_bytes: int) -> tuple[np.ndarray, ...]:
    """This thread's tokenizer arrays, grown as needed and reused across spans.

    They never outlive one span's parse (converters copy what they keep), and
    reusing them avoids mapping and faulting in fresh pages for every span.
    Returns ``(row_starts, ends, flags, scratch)``; ``ends``/``flags`` hold
    ``capacity * ncols`` slots and ``scratch`` can unescape any one field.
    Above :data:`~arrow_bridge.workers.WORKSPACE_KEEP_BYTES` they are made for
    the span and not kept (parse threads outlive a read).
    """
    fields = capacity * ncols
    if 4 * capacity + 5 * fields + span_bytes > WORKSPACE_KEEP_BYTES:  # for this span only
        return (np.empty(capacity, dtype=np.int32), np.empty(fields, dtype=np.int32),
                np.empty(fields, dtype=np.uint8), np.empty(max(span_bytes, 1), dtype=np.uint8))
    ws = _thread_workspace
    if getattr(ws, "fields", -1) < fields or ws.rows < capacity:
        ws.rows, ws.fields = capacity, fields
        ws.row_starts = np.empty(capacity, dtype=np.int32)
        ws.ends = np.empty(fields, dtype=np.int32)
        ws.flags = np.empty(fields, dtype=np.uint8)
    if getattr(ws, "scratch", np.empty(0)).shape[0] < max(span_bytes, 1):
        ws.scratch = np.empty(max(span_bytes, 1), dtype=np.uint8)
    return ws.row_starts[:capacity], ws.ends[:fields], ws.flags[:fields], ws.scratch
