"""Inferred types: what the spans checked so far settled, and settling every span at the end.

Spans are parsed in parallel, each inferring its columns' types from its own
values (climbing pyarrow's inference ladder). :class:`TypeState` keeps, per
column, the highest rung any checked span needed, so later spans start there
and take the fused kernel; :func:`settle_types` re-converts, at the end, any
span whose column ended below the column's final rung.

>>> import io
>>> import arrow_bridge
>>> arrow_bridge.read_csv(io.BytesIO(b"a\\n1\\n2.5\\n"), block_size=4).column("a").type  # int64 span, then float64
DataType(double)
"""
from __future__ import annotations

import dataclasses
from typing import NamedTuple, Optional, Sequence

import numpy as np
import pyarrow as pa

from arrow_bridge.column_finish import Inferred, first_timestamp_rung, float_like_format
from arrow_bridge.converters import TokenizedSpan, converter_for
from arrow_bridge.executors.base import SpanPlan, SpanResult
from arrow_bridge.executors.host import HostExecutor
from arrow_bridge.fast_path import FastPlanCache
from arrow_bridge.inference import INFERENCE_LADDER
from arrow_bridge.kernels.status import NEEDS_MORE, OK
from arrow_bridge.kernels.tokenizer import count_line_breaks
from arrow_bridge.preamble import empty_line_offsets, with_empty_rows
from arrow_bridge.read_plan import ReadPlan
from arrow_bridge.spans import Span
from ndp_core.device import RAW


class TypeState:
    """The types settled by the spans checked so far (in file order)."""

    def __init__(self, read: ReadPlan):
        self.read = read
        self.fast_plans = FastPlanCache(read)
        self.rungs = [0] * len(read.columns)  # per output column: the highest rung a span needed
        self.known = read.types_known  # else: after the first span
        self.rows_per_byte = 0.0  # the densest span so far
        self.empty_rows = EmptyLineRows(read) if not read.opts.ignore_empty_lines else None
        # a stream's column finishes that take their type from its first block with rows
        self.deciding = [j for j, c in enumerate(read.columns)
                         if c.finish is not None and c.finish.awaiting_first_block]

    def learn(self, result: SpanResult) -> None:
        """Takes in a checked span's rungs and density (and, in a stream, lets the
        first span with rows decide the types its column finishes choose from
        values: :meth:`~arrow_bridge.column_finish.ColumnFinish.decide`). With
        ``ignore_empty_lines=False`` the span's empty lines are rows by now
        (:meth:`EmptyLineRows.fill`)."""
        for j, rung in enumerate(result.rungs):
            if rung > self.rungs[j]:
                self.rungs[j] = rung
        self.known = True
        if result.parsed:
            self.rows_per_byte = max(self.rows_per_byte, (result.rows_read or result.nrows) / result.parsed)
        if self.deciding and result.nrows:
            for j in self.deciding:
                column = self.read.columns[j]
                if column.finish.awaiting_first_block:
                    column.finish.decide(result.columns[j], column)

    def plan(self) -> SpanPlan:
        """How to parse the next span: at the rungs so far, with the fused
        kernel once the types are known."""
        rungs = tuple(self.rungs)
        return SpanPlan(rungs, self.fast_plans.get(rungs) if self.known else None, self.rows_per_byte)


def settle_types(results: Sequence[SpanResult], read: ReadPlan, host: HostExecutor) -> None:
    """Re-converts (on the host) every span whose inferred column ended below
    the rung the column needs in some other span, until all agree."""
    inferred = [j for j, c in enumerate(read.columns) if c.inferred]
    empty_rows = EmptyLineRows(read) if not read.opts.ignore_empty_lines else None
    if empty_rows is not None:  # spans a device returned raw were parsed again by its finish()
        for result in results:
            if result.side == RAW:
                empty_rows.fill(result)
    while True:
        targets = [max((r.rungs[j] for r in results), default=0) for j in range(len(read.columns))]
        stale = [r for r in results if any(r.rungs[j] != targets[j] for j in inferred)]
        if not stale:
            break
        for result in stale:
            if empty_rows is not None:
                empty_rows.fill(result, targets)
            else:
                host.reconvert(result, targets)
    settle_timestamps(results, read, host, empty_rows)


def settle_timestamps(results: Sequence[SpanResult], read: ReadPlan, host: HostExecutor,
                      empty_rows: Optional["EmptyLineRows"] = None) -> None:
    """Inferred columns the kernels settled, all spans at one rung, that custom
    ``timestamp_parsers`` read as timestamps where the Inferred finish could not
    tell from the column alone (:func:`_timestamp_candidates`): at the first
    timestamp rung whose parsers read every value of their text read again."""
    for j, settled in settled_timestamps(results, read, host, empty_rows).items():
        for result, array in zip(results, settled.timestamps):
            result.columns[j], result.rungs[j] = array, settled.rung


class SettledTimestamps(NamedTuple):
    """A column custom parsers read as timestamps: its rung, and per span its text
    (read again with a timestamp's null rules) and timestamps."""

    rung: int
    texts: list[pa.Array]
    timestamps: list[pa.Array]


def settled_timestamps(results: Sequence[SpanResult], read: ReadPlan, host: HostExecutor,
                       empty_rows: Optional["EmptyLineRows"] = None, first_block: bool = False
                       ) -> dict[int, SettledTimestamps]:
    """The columns :func:`settle_timestamps` settles, by position. A stream's
    ``first_block`` keeps their text, and the rest of the stream reads them so
    (:mod:`~arrow_bridge.first_block`); there, with ``quoted_strings_can_be_null=False``,
    a text column is a candidate without a null spelling too: a later block may hold one."""
    candidates = _timestamp_candidates(results, read, first_block)
    if not candidates:
        return {}
    texts: dict[int, list[pa.Array]] = {j: [] for j in candidates}
    as_text = converter_for(pa.string(), dataclasses.replace(read.rules, strings_can_be_null=True))
    for result in results:  # each span tokenized once for all candidates
        tokens = _tokens_again(result, host, empty_rows)
        for j in candidates:
            texts[j].append(as_text(tokens, read.columns[j].index)[0])
    found = {}
    for j in candidates:
        read_as = first_timestamp_rung(pa.chunked_array(texts[j], pa.string()), read.columns[j].finish.parsers)
        if read_as is not None:
            found[j] = SettledTimestamps(read_as[0], texts[j], read_as[1].chunks)
    return found


_FLOAT_RUNG = INFERENCE_LADDER.index(pa.float64())
_STRING_RUNG = INFERENCE_LADDER.index(pa.string())


def _timestamp_candidates(results: Sequence[SpanResult], read: ReadPlan, every_text: bool = False) -> list[int]:
    """Inferred columns with custom timestamp parsers that are:
    float64 where a parser may read a float (``"%H.%M"`` reads ``10.30``: pyarrow
    tries timestamps first); or, with ``quoted_strings_can_be_null=False`` (and
    strings that cannot be null), text holding a null spelling (or ``every_text``)
    whose other values the parsers read: for a timestamp a spelling is null unquoted
    only, and the text no longer says which were quoted."""
    if not results:
        return []
    rules = read.rules
    spellings = None if rules.strings_can_be_null or rules.quoted_nulls else read.opts.null_values
    found = []
    for j, c in enumerate(read.columns):
        if not (c.inferred and isinstance(c.finish, Inferred) and c.finish.parsers):
            continue
        rung = results[0].rungs[j]
        if rung == _FLOAT_RUNG and any(isinstance(p, str) and float_like_format(p) for p in c.finish.parsers):
            found.append(j)
        elif rung == _STRING_RUNG and spellings is not None:
            import pyarrow.compute as pc  # here: start-up imports no pyarrow.compute (tens of ms)
            text = pa.chunked_array([r.columns[j] for r in results], pa.string())
            if (every_text or pc.any(pc.is_in(text, value_set=pa.array(spellings))).as_py()) and \
                    first_timestamp_rung(text, c.finish.parsers, spellings) is not None:
                found.append(j)
    return found


def _tokens_again(result: SpanResult, host: HostExecutor, empty_rows: Optional["EmptyLineRows"]) -> TokenizedSpan:
    """A checked span tokenized again (its empty lines as rows where they are)."""
    tokens = empty_rows.tokens_of(result) if empty_rows is not None else \
        host.tokenize(host.span_text(result.span, result.parsed), True, SpanResult(result.span))
    assert tokens.nrows >= result.nrows, "a span read again has fewer rows than its result"
    tokens.nrows = result.nrows  # a cut at nrows kept fewer
    return tokens


class EmptyLineRows:
    """``ignore_empty_lines=False``: each empty line of a span is a row of empty
    fields (pyarrow's rule; the kernels skip empty lines). A span that has
    some is parsed again on the host with them written out as such rows
    (:func:`~arrow_bridge.preamble.with_empty_rows`): a slower path, taken only
    for this option."""

    def __init__(self, read: ReadPlan):
        self.read = read
        self.host = HostExecutor()
        self.host.start(read)

    def fill(self, result: SpanResult, targets: Optional[Sequence[int]] = None) -> None:
        """Parses ``result``'s span again with its empty lines as rows (inferred
        columns from ``targets``' rungs, else from the bottom); a value that does
        not convert is located in the span as it is in the file."""
        if result.status not in (OK, NEEDS_MORE):
            return
        text = self._text(result)
        offsets = empty_line_offsets(text, self.read.dialect)
        if not len(offsets):  # nothing to write out: converted again as any span is, or types never settle
            if targets is not None:
                self.host.reconvert(result, targets)
            return
        tokens = self._tokenized(text, offsets, result)
        starts = list(targets) if targets is not None else [0] * len(self.read.columns)
        self.host.convert_columns(tokens, result, starts)
        result.nrows = tokens.nrows
        if result.bad_value is not None:
            row, j, offset = result.bad_value
            result.bad_value = (row, j, _offset_before_filling(offset, offsets, len(tokens.buf) - len(text)))

    def tokens_of(self, result: SpanResult) -> TokenizedSpan:
        """``result``'s span (filled: see :meth:`fill`) tokenized again as its rows are, empty lines as rows."""
        text = self._text(result)
        return self._tokenized(text, empty_line_offsets(text, self.read.dialect), result)

    def _tokenized(self, text: np.ndarray, empty_lines: np.ndarray, result: SpanResult) -> TokenizedSpan:
        """``text`` (a span's) tokenized with its ``empty_lines`` written out as rows
        (:func:`~arrow_bridge.preamble.with_empty_rows`; ``tokens.buf`` is that text). A lone
        column's empty line is written as a byte, then made the empty field it stands for."""
        if not len(empty_lines):
            return self.host.tokenize(text, True, SpanResult(result.span))
        filled = with_empty_rows(text, empty_lines, self.read.ncols, self.read.dialect)
        tokens = self.host.tokenize(filled, True, SpanResult(result.span))
        if self.read.ncols == 1:
            width = (len(filled) - len(text)) // len(empty_lines)  # bytes written per empty line
            written = empty_lines + width * np.arange(len(empty_lines))  # where each is in filled
            rows = np.nonzero(np.isin(tokens.row_starts[:tokens.nrows], written))[0]
            tokens.ends[rows] = tokens.row_starts[rows]
            tokens.flags[rows] = 0
        return tokens

    def _text(self, result: SpanResult) -> np.ndarray:
        span = result.span
        return span.buf[: result.parsed] if len(span.buf) >= result.parsed else \
            self.host.span_text(span, result.parsed)

    def rows_of(self, result: SpanResult, keep: Optional[int]) -> None:
        """The span's rows with its empty lines among them, its first ``keep``
        only where given (``nrows``). A span that stopped at bad input keeps
        its error unless the rows before it are ``keep`` or more."""
        if keep is not None and result.status not in (OK, NEEDS_MORE):
            self.cut(result, keep)  # cut fills what it keeps
            return
        self.fill(result)
        if keep is not None and result.nrows > keep:
            self.cut(result, keep)

    def cut(self, result: SpanResult, keep: int) -> None:
        """Keeps the first ``keep`` rows of a span, its empty lines counted as
        rows: the span ends where row ``keep`` starts, and is filled again, its
        types inferred from the rows kept, as pandas infers them. Nothing
        changes where fewer rows end the span or precede its bad input."""
        text = self.host.span_text(result.span, result.parsed)
        tokens = self.host.tokenize(text, True, SpanResult(result.span))
        empty = empty_line_offsets(text, self.read.dialect)
        starts = np.sort(np.concatenate([tokens.row_starts[:tokens.nrows].astype(np.int64), empty]))
        if keep > len(starts):
            return  # too few rows before the span's end or its bad input
        end = int(starts[keep]) if keep < len(starts) else len(text)
        if not np.any(empty < end):  # the rows kept are records only
            self.host.truncate(result, keep)
            return
        result.status, result.parsed, result.line_breaks = OK, end, count_line_breaks(text, 0, end)
        result.span = Span(text, result.span.offset, True, result.span.index)
        if result.bad_rows is not None:
            result.bad_rows = result.bad_rows[result.bad_rows[:, 0] < end]
        self.fill(result)


def _offset_before_filling(offset: int, empty_lines: np.ndarray, added: int) -> int:
    """A byte offset of a span with its empty lines filled, in the span as read."""
    width = added // len(empty_lines)  # bytes written per empty line
    filled_at = empty_lines + width * np.arange(len(empty_lines))
    before = int(np.searchsorted(filled_at, offset, side="right"))
    if before and offset < filled_at[before - 1] + width:  # inside a written row: the empty line itself
        return int(empty_lines[before - 1])
    return offset - width * before

