"""The CSV reader's driver: cut spans, hand them to executors, check in order, settle types, assemble.

It never parses a byte itself and never asks where a span ran: a span goes to
the first executor that takes it (offload executors such as a device first,
the host executor last), results are checked in file order, and the units
it drives do the rest — :mod:`arrow_bridge.span_errors` (error text),
:mod:`arrow_bridge.type_settling` (inferred types),
:mod:`arrow_bridge.assembly` (the Table). See docs/architecture.md for the
walk of one block.

One loop serves both ways out (:meth:`CsvReader._checked`): :meth:`~CsvReader.read`
keeps every checked span and assembles one Table; :meth:`~CsvReader.stream`
turns each into a record batch as soon as it and every span before it are
checked, its types fixed by the first block (:mod:`arrow_bridge.first_block`).
A :class:`MemoryBudget` (``memory_limit``) holds spans back while the next
would not fit, and stops the read with a :class:`MemoryLimitError` before it
goes over.

>>> import io
>>> from arrow_bridge.options import CsvOptions
>>> from arrow_bridge.reader import CsvReader
>>> from arrow_bridge.source import open_source
>>> CsvReader(open_source(io.BytesIO(b"x,y\\n1,a\\n")), CsvOptions()).read().num_rows
1
"""
from __future__ import annotations

import dataclasses
import threading
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import closing, contextmanager
from typing import TYPE_CHECKING, Any, Callable, Iterator, Optional, Sequence, Union

import pyarrow as pa

from arrow_bridge import startup
from arrow_bridge.assembly import assemble, assembly_bytes, settled_type
from arrow_bridge.column_finish import finish_chunk, settle_past_int64, settled_text
from arrow_bridge.errors import EmptyCsvError, MemoryLimitError
from arrow_bridge.executors import DeviceExecutor, HostExecutor, SpanExecutor, SpanResult
from arrow_bridge.executors.base import SpanPlan, SpanSink
from arrow_bridge.executors.device_buffers import object_bytes
from arrow_bridge.first_block import FixedTypeErrors, fix_types
from arrow_bridge.inference import INFERENCE_LADDER
from arrow_bridge.kernels.status import NEEDS_MORE, OK
from arrow_bridge.options import PYARROW_BLOCK_SIZE, CsvOptions
from arrow_bridge.preamble import Preamble, read_preamble
from arrow_bridge.read_plan import ColumnPlan, ReadPlan, plan_columns
from arrow_bridge.source import ByteSource, RangeSource
from arrow_bridge.span_errors import SpanErrors
from arrow_bridge.span_stages import run_span_stages
from arrow_bridge.spans import NO_BYTES, Span, SpanCutter, recut
from arrow_bridge.streaming import TextChunks
from arrow_bridge.type_settling import TypeState, settle_types, settled_timestamps
from arrow_bridge.workers import parse_threads, release
from ndp_core.interrupts import interrupts_at_checks
from ndp_core.report import Report, record

if TYPE_CHECKING:
    from arrow_bridge.filters import RowFilter

#: The largest span a whole host read cuts by itself (``block_size`` unset).
LARGEST_AUTO_SPAN_BYTES = 8 << 20
#: Spans each thread gets at least, before spans grow past ``block_size``'s default.
SPANS_PER_THREAD = 8
#: From this many threads a whole read's spans grow (see ``CsvReader._span_bytes``).
MANY_THREADS = 8
#: The smallest span a small file is shared out in: below it a second thread costs more than it saves.
SMALL_SPAN_BYTES = 256 << 10
#: Added to an even share so that the cut after a share's last whole record leaves no sliver of a span.
SPAN_SLACK_BYTES = 4 << 10


class CsvReader:
    """Reads one source into a ``pyarrow.Table`` (:meth:`read`) or a stream of
    record batches (:meth:`stream`) with the given options.

    ``device``/``split`` register a :class:`DeviceExecutor` for that device;
    ``offload`` registers executors of any kind (a GPU, say), tried in order
    before ``host`` (default: a new :class:`HostExecutor`), which takes the
    rest. An offload executor that falls back should be given the same ``host``.
    ``memory_limit`` (bytes, or None) bounds what the read holds (:class:`MemoryBudget`).
    ``sinks`` (:class:`SpanSink`) see each span's result as :meth:`read` checks it.

    Ctrl-C stops a read at once, but for the spans being parsed (a kernel
    cannot be interrupted; each takes a few ms at the default block size):
    the worker threads are joined, the executors closed, and the
    KeyboardInterrupt goes on.
    """

    def __init__(self, source: ByteSource, opts: CsvOptions, device=None, split: str = "host", *,
                 host: Optional[HostExecutor] = None, offload: Sequence[SpanExecutor] = (),
                 memory_limit: Optional[int] = None, sinks: Sequence[SpanSink] = ()):
        self.source = source
        self.memory_limit = memory_limit
        self.opts = opts if device is None else _with_task_size(opts, device)
        self.host = host if host is not None else HostExecutor()
        self.offload = list(offload)
        self.sinks = list(sinks)
        if device is not None:
            self.offload.append(DeviceExecutor(device, split, self.host))
        elif split != "host":  # it would quietly run on the host, with no Report
            raise ValueError(f"split={split!r} needs a device: pass device= (a ComputationalSSD, a profile name "
                             "such as 'modern-gen4', or ndp_core.device.HostOnly())")
        self.report: Optional[Report] = None  # the offload run's Report, when there was one

    # ---- the two ways out ---------------------------------------------------------------------------
    def read(self) -> pa.Table:
        """The whole source as one Table (its offload executors' Report in ``self.report``)."""
        if self._empty_range():
            return assemble([], plan_columns(list(self.opts.column_names), self.opts))
        with _keyboard_interrupts(), self._started() as pre:
            with interrupts_at_checks():  # only the sinks run between two checks
                results = []
                for result in self._checked(pre):
                    results.append(result)
                    for sink in self.sinks:
                        sink.checked(result)
            reports = [executor.finish(results, self.types.plan()) for executor in self._executors]
            settle_types(results, self.plan, self.host)
            for result in results:  # spans parsed again since their check
                run_span_stages(result, self.plan)
        for report in reports:
            if report is not None:
                self.report = report
                record(report)
        if self.opts.grouped_query is not None:
            return self._aggregated(results)
        self.budget.assemble(assembly_bytes(results, self.plan.columns))
        table = assemble(results, self.plan.columns, self.opts.nrows, self._table_filter)
        if self.opts.semantics == "pandas":
            table = settle_past_int64(table, self.plan.columns, self.plan.inferring)
        schema = self._marked(table.schema)
        return table if schema.metadata == table.schema.metadata else table.replace_schema_metadata(schema.metadata)

    def _aggregated(self, results: list[SpanResult]) -> pa.Table:
        """An aggregate read's answer: the spans' partial states merged in file order (or,
        where the stages could not run on spans, the finished Table's one state)."""
        from arrow_bridge.aggregates import query_schema

        query, columns = self.opts.grouped_query, self.plan.columns
        if not self.plan.stages_spans:
            table = assemble(results, [dataclasses.replace(c, hidden=False) for c in columns], self.opts.nrows,
                             self._table_filter)
            return query.merge([query.partial(table)], query_schema(query, dict(zip(table.column_names,
                                                                                    table.schema.types))))
        types = {c.name: settled_type(results, j, c) for j, c in enumerate(columns)}
        return query.merge([r.partial for r in results if r.partial is not None], query_schema(query, types))

    def stream(self) -> Iterator[Union[pa.Schema, pa.RecordBatch]]:
        """Yields the schema, then a record batch per span (spans without rows
        yield none), each as soon as it and every span before it are checked;
        ``threads + 1`` spans in flight at most.

        Types are those of the first span with rows (``pyarrow.csv.open_csv``'s
        rule, :mod:`arrow_bridge.first_block`); a later value that does not fit
        raises a :class:`~arrow_bridge.errors.FirstBlockTypeError` naming its
        line, column and value. For ``read_pandas``' chunks
        (``chunk_typed_columns`` set) the batches come unfinished, the
        ``chunk_typed_columns`` as text, and the first item is a
        :class:`~arrow_bridge.streaming.TextChunks` whose ``finish`` types a
        chunk from its own values (:func:`~arrow_bridge.column_finish.finish_chunk`).
        Closing the generator stops the worker threads. A ``memory_limit``
        bounds the spans in flight and the batch not yet handed out. Offload executors
        (``device=``) cannot stream: they settle the whole run at the end.

        >>> import io
        >>> from arrow_bridge.source import open_source
        >>> data = b"x\\n" + b"".join(b"%d\\n" % i for i in range(10))
        >>> stream = CsvReader(open_source(io.BytesIO(data)), CsvOptions(block_size=8)).stream()
        >>> [item.num_rows if isinstance(item, pa.RecordBatch) else str(item) for item in stream]
        ['x: int64', 3, 4, 3]
        """
        if self.offload:
            raise NotImplementedError(
                "open_csv cannot stream through device= or offload= executors: their finish() needs every "
                "span's result at the end of the run (the device's timing model schedules all tasks at once, "
                "and in dynamic mode decides then which ones come back raw for the host), so the whole file's "
                "results would be held. Use read_csv(..., device=...), or dask_plugin.read_csv for files "
                "larger than memory")
        if self._empty_range():
            yield assemble([], plan_columns(list(self.opts.column_names), self.opts)).schema
            return
        with _keyboard_interrupts(), self._started() as pre, closing(self._checked(pre, first_block=True)) as checked:
            schema = None
            for result in checked:
                if not result.nrows:
                    continue
                if schema is None:  # the types are fixed now
                    schema = yield from self._stream_head()
                table = assemble([result], self._batch_columns, table_filter=self._table_filter)
                yield pa.RecordBatch.from_arrays([column.chunk(0) for column in table.columns], schema=schema)
            if schema is None:  # no rows: as read_csv's empty Table
                yield from self._stream_head()

    def _stream_head(self) -> Iterator[Union[pa.Schema, TextChunks]]:
        """Yields a stream's first item (its schema, or :class:`TextChunks`); returns the batches' schema."""
        schema = self._marked(assemble([], self._batch_columns).schema)
        if self.opts.chunk_typed_columns is not None:
            plan = self.plan
            yield TextChunks(schema, lambda chunk: finish_chunk(chunk, plan.columns, plan.inferring))
        else:
            yield schema
        return schema

    def _marked(self, schema: pa.Schema) -> pa.Schema:
        """``schema`` naming in its metadata the columns pandas' implicit index made up (if any)."""
        made_up = self.opts.made_up_columns
        return schema.with_metadata({**(schema.metadata or {}), **made_up.metadata()}) if made_up else schema

    @property
    def _batch_columns(self) -> list[ColumnPlan]:
        """The columns of a stream's batches: finished, but for ``read_pandas``' chunks (finished per chunk)."""
        if self.opts.chunk_typed_columns is None:
            return self.plan.columns
        return [dataclasses.replace(c, finish=None) for c in self.plan.columns]

    # ---- driver -------------------------------------------------------------------------------------
    def _empty_range(self) -> bool:
        """An empty byte range with given names (nothing to read, not even a header). An empty
        file is pyarrow's "Empty CSV file" error, names given or not."""
        source = self.source
        return bool(isinstance(source, RangeSource) and not source.size and self.opts.column_names)

    @contextmanager
    def _started(self) -> Iterator[Preamble]:
        """Reads the preamble, plans the read (``self.plan``, ``self.types``,
        ``self.errors``) and starts every executor; closes them on the way out."""
        startup.read_starts(self.source.size)
        pre = read_preamble(self.source, self.opts)
        if not pre.names:
            raise EmptyCsvError(self.source.name, pre.data_line, None, pre.data_offset,
                                "empty CSV file: cannot infer the number of columns")
        self.opts = pre.columns_read(self.opts)
        self.plan = ReadPlan.build(self.source, self.opts, pre.names)
        self.types = TypeState(self.plan)
        self.errors = SpanErrors(self.plan)
        self._executors: list[SpanExecutor] = []
        try:
            with interrupts_at_checks():  # Ctrl-C once an executor is started, not half way
                for executor in [self.host, *self.offload]:
                    self._executors.append(executor)  # closed even if its start fails part way
                    executor.start(self.plan)
            yield pre
        finally:
            with interrupts_at_checks():  # nor half way through closing one
                for executor in reversed(self._executors):
                    executor.close()

    def _executor_for(self, span: Span) -> SpanExecutor:
        for executor in self.offload:
            if executor.takes(span.offset, span.length):
                return executor
        return self.host

    def _leaves_unread(self, offset: int) -> bool:
        return any(executor.leaves_unread(offset) for executor in self.offload)

    def _host_reads(self, whole: bool) -> Optional[Callable[[int], bool]]:
        """On a whole host read, every span is left for the thread that parses it
        to read (pread, GIL released): the driver reads only the bytes around
        each cut instead of copying the whole file on one thread (TPC-H Q14's
        filtered lineitem read, 2 threads, fresh process: 0.33-0.36 s -> 0.27-0.29 s;
        benchmarks/results/pushdown.md). Only a local file's pread runs in parallel cheaply (not a file
        object's seek and read, nor a transcoder's); not under a memory limit,
        which counts the driver's reads."""
        parallel = whole and self.source.parallel_reads and self.memory_limit is None
        return (lambda offset: True) if parallel else None

    def _checked(self, pre: Preamble, first_block: bool = False) -> Iterator[SpanResult]:
        """:meth:`_checked_spans`, with small pages under a memory limit (:func:`small_pages`)."""
        with small_pages(self.memory_limit is not None):
            yield from self._checked_spans(pre, first_block)

    def _checked_spans(self, pre: Preamble, first_block: bool = False) -> Iterator[SpanResult]:
        """Every span parsed, checked and yielded in file order (up to ``nrows``).

        Until the first span has settled the types one span is in flight, then
        ``threads + 1`` (fewer while the memory budget has no room); the next
        ones are handed out before a checked span is yielded, so they parse
        while the caller works. With ``first_block`` (a stream) the first span
        with rows fixes the types for the rest (:meth:`_fix_types`), and a
        yielded span is the caller's: the budget stops counting it.
        """
        opts, source = self.opts, self.source
        # A small first span (the preamble's read-ahead) for whole reads on the host; a stream infers
        # its types from pyarrow's first block (the file's first block_size bytes, its rule), and
        # devices number tasks by block.
        whole = not first_block and not self.offload
        span_bytes = self._span_bytes(whole, pre)
        first_block_end = self._first_block_end(pre) if first_block else None
        spans = SpanCutter(source, span_bytes, pre.prefix, pre.data_offset, pre.eof,
                           left_unread=self._leaves_unread if self.offload else self._host_reads(whole),
                           prefix_span=whole, pooled_unread=not self.offload,
                           first_block_end=first_block_end)
        cutter = iter(spans)
        held_back: list[Span] = []  # a span cut but not handed out: the budget had no room for it yet
        budget = self.budget = MemoryBudget(self.memory_limit, source.name)
        # A file of one span after the first has nothing to parse in parallel: no pool to start.
        one_span = whole and source.size is not None and source.size - pre.data_offset <= span_bytes
        threads = 1 if one_span else opts.threads
        pool = parse_threads(threads)
        pending: deque[tuple[Span, Future]] = deque()
        abandoned: list[Future] = []  # parses of spans a recut took over: waited for at the end
        unfixed = first_block and not self.plan.types_known  # they wait for the first span with rows
        # A whole read's span stages run on the worker threads, in parallel, right after the parse; a
        # stream's (its types may be fixed after the parse) and a cut at nrows (rows counted before the
        # filter) wait for the check.
        stage_in_workers = not first_block and opts.nrows is None and self.plan.stages_spans

        def cut() -> Optional[Span]:
            return held_back.pop() if held_back else next(cutter, None)

        def parse(span: Span) -> Future:
            executor, plan = self._executor_for(span), self.types.plan()
            budget.reserve(span)
            return _run(pool, _parsed_and_staged if stage_in_workers else executor.parse, span, plan,
                        *((executor, self.plan) if stage_in_workers else ()))

        def refill(interrupted: Callable[[], None]) -> None:
            # Spans parsed before the first one has settled the types would all take the general
            # path (four times slower than the fused kernel): until then, one at a time.
            depth = threads + 1 if self.types.known and not unfixed else 1
            while len(pending) < depth and (span := cut()) is not None:
                interrupted()
                # A span in flight makes room once checked, and a stream's batch once handed out.
                if not budget.admits(span, can_wait=bool(pending) or (first_block and budget.held > 0)):
                    held_back.append(span)
                    return
                pending.append((span, parse(span)))

        line, rows = pre.data_line, 0

        def check_next(interrupted: Callable[[], None]) -> SpanResult:
            """The next span's result, checked; the following ones handed out."""
            nonlocal line, rows, unfixed, first_block_end
            span, future = pending.popleft()
            result = future.result()
            interrupted()  # Ctrl-C: before handing out more
            budget.release(span)
            remaining = None if opts.nrows is None else opts.nrows - rows
            if self.types.empty_rows is not None:  # ignore_empty_lines=False: empty lines are rows too
                self.types.empty_rows.rows_of(result, remaining)
            elif remaining is not None and (result.nrows > remaining or (
                    result.nrows == remaining and result.status not in (OK, NEEDS_MORE))):
                self.host.truncate(result, remaining)
            self.types.learn(result)
            self.errors.check(result, line)
            if unfixed and result.nrows:
                self._fix_types(result)
                unfixed = False
            elif unfixed and not pending and result.status == OK:  # pyarrow's next block gives the types
                first_block_end += self._pyarrow_block
                spans.first_block_again(first_block_end)
            line += result.line_breaks
            rows += result.nrows
            # now: its rejected rows are not held. A stream's types are fixed by now; a whole read's
            # may still widen (it stages again at the end what its types did not take)
            run_span_stages(result, self.plan, types_final=first_block)
            checked = self._release(result)
            if result.status == NEEDS_MORE and not self._enough(rows):
                def following() -> Span:
                    if not pending:
                        after = cut()
                    else:
                        after, future = pending.popleft()
                        abandoned.append(future)
                    budget.release(after)
                    return after

                tail = span.length - result.parsed
                fresh = recut(span, result.parsed, following(), source)
                # A record longer than a block: the retry takes at least twice the tail, or every retry
                # would scan the whole tail again for one more block (quadratic in the record's length).
                while fresh.length < 2 * tail and not fresh.at_eof:
                    fresh = recut(fresh, 0, following(), source)
                pending.appendleft((fresh, parse(fresh)))
            budget.keep(checked)
            if source.random_access:  # nothing keeps the span's bytes: reuse its block
                spans.recycle(span)
            if not self._enough(rows):
                refill(interrupted)
            return checked

        # Ctrl-C comes where no lock of the pool's is held (interrupts_at_checks), at the latest once
        # the span waited for is parsed; never while the caller holds a yielded span.
        try:
            with interrupts_at_checks() as interrupted:
                refill(interrupted)
            while pending:
                with interrupts_at_checks() as interrupted:
                    checked = check_next(interrupted)
                yield checked
                if self._enough(rows):
                    break
                if first_block:  # a stream's batch is the caller's now
                    budget.hand_out(checked)
                    if not pending:  # the budget held the next span back until now
                        with interrupts_at_checks() as interrupted:
                            refill(interrupted)
        finally:
            with interrupts_at_checks():
                running = [future for _, future in pending] + abandoned
                for future in running:
                    future.cancel()
                wait(running)  # what runs still finishes (a kernel cannot stop)
                release(pool)

    @property
    def _pyarrow_block(self) -> int:
        """pyarrow's block size for this read: ``block_size``, or its default without one."""
        return self.opts.block_size or PYARROW_BLOCK_SIZE

    def _first_block_end(self, pre: Preamble) -> int:
        """Where pyarrow's first block of data ends in the source: its blocks are
        :attr:`_pyarrow_block` bytes of its text, which under ``utf-8-sig`` is
        decoded (no BOM); the first that holds data counts."""
        end = self._pyarrow_block + (pre.bom_bytes if self.opts.encoding == "utf-8-sig" else 0)
        while end <= pre.data_offset:  # the header or skipped rows filled it
            end += self._pyarrow_block
        return end

    def _span_bytes(self, whole: bool, pre: Preamble) -> int:
        """``block_size``; unset, on a whole host read:

        * of a file smaller than a span per thread, the rest shared evenly among
          the threads (down to :data:`SMALL_SPAN_BYTES`): a 1 MB lineitem read
          then parses on both threads, not one;
        * of a larger one, with span stages or :data:`MANY_THREADS` threads,
          up to :data:`LARGEST_AUTO_SPAN_BYTES` while each thread still gets
          :data:`SPANS_PER_THREAD` spans. A span costs about 0.5 ms of Python
          holding the GIL (its wrapping, its check, its stages' pyarrow calls),
          serial work that at 16 threads weighed: on an H200 machine's 16
          cores lineitem SF1 parsed in 0.267 s in 2 MiB spans, 0.186 s in
          8 MiB ones (pyarrow 0.405 s; ``results/span-sizes-16t-nvidia-h200.txt``).
          On 2 threads the evidence was mixed: faster in one process
          (``benchmarks.span_sizes --threads 2``), not in two fresh-process
          rounds of ``benchmarks.peers --readers ndp`` (lineitem 0.81 against
          0.87-0.91 s, the edge list 0.58-0.75 against 0.54-0.56 s), whose
          peak RSS also rose (edge list 844 -> 881 MB: the outputs' row slack,
          see :func:`~arrow_bridge.fast_path.row_capacity_hint`); so few
          threads keep the default."""
        opts, size = self.opts, self.source.size
        if opts.block_size is not None or not whole or size is None or self.memory_limit is not None:
            return opts.span_bytes
        rest = size - pre.data_offset - len(pre.prefix)  # the prefix is a span of its own
        if rest < opts.threads * opts.span_bytes:
            return max(SMALL_SPAN_BYTES, -(-rest // opts.threads) + SPAN_SLACK_BYTES)
        if opts.nrows is not None or not (self.plan.stages_spans or opts.threads >= MANY_THREADS):
            return opts.span_bytes
        even = (size - pre.data_offset) // (opts.threads * SPANS_PER_THREAD)
        return max(opts.span_bytes, min(LARGEST_AUTO_SPAN_BYTES, even))

    def _fix_types(self, result: SpanResult) -> None:
        """Makes the types ``result`` inferred explicit for the rest of the read
        (no other span is in flight: none was handed out before this one's check)."""
        inferred = [j for j, column in enumerate(self.plan.columns) if column.inferred]
        if self.opts.semantics == "pandas":
            self._settle_first_block(result, inferred)
        timestamps = settled_timestamps([result], self.plan, self.host, self.types.empty_rows, first_block=True)
        for j, settled in timestamps.items():  # the rest of the stream reads these columns as this text
            result.columns[j] = settled.texts[0]
        self.plan = fix_types(self.plan, result.rungs, {j: settled.rung for j, settled in timestamps.items()})
        for executor in self._executors:
            executor.close()
            executor.start(self.plan)
        self.types = TypeState(self.plan)
        self.types.learn(result)  # its density sizes the next spans' outputs
        self.errors = FixedTypeErrors(self.plan, inferred)

    def _settle_first_block(self, result: SpanResult, inferred: Sequence[int]) -> None:
        """The first block's text columns as floats or uint64 where pandas reads them so
        (an integer past int64 after a float: :func:`settle_past_int64`); the stream's type then."""
        text = INFERENCE_LADDER.index(pa.string())
        for j in inferred:
            if result.rungs[j] == text:
                outcome, settled = settled_text(pa.chunked_array([result.columns[j]]), self.plan.inferring)
                if outcome in ("floats", "uint64"):
                    result.columns[j], result.rungs[j] = settled.chunk(0), INFERENCE_LADDER.index(settled.type)

    @property
    def _table_filter(self) -> Optional["RowFilter"]:
        """The row filter where it runs on the finished Table rather than on each span."""
        return None if self.plan.stages_spans else self.opts.row_filter

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


_page_lock = threading.Lock()
_small_page_reads = 0  # reads under a memory limit now running (numpy's advice is process-wide)
_advice_before = True  # numpy's huge-page advice before the first of them


@contextmanager
def small_pages(wanted: bool) -> Iterator[None]:
    """numpy advises huge pages (2 MiB) for arrays of 4 MiB and more. A span's
    output arrays are sized for the most rows the span could hold, and with
    huge pages their resident part rounds up towards that capacity, which a
    memory budget (counting the rows used) does not see: 10^9 one-digit rows
    under ``memory_limit="4GiB"`` peaked 0.50 GiB over the budget and the
    libraries' 0.18 GiB, 6 MiB without the advice. While a read under a limit
    runs, new arrays get small pages (a little slower to fault in); the advice
    comes back as it was when the last such read ends.

    >>> with small_pages(True):
    ...     pass
    """
    global _small_page_reads, _advice_before
    if not wanted:
        yield
        return
    with _page_lock:
        _small_page_reads += 1
        if _small_page_reads == 1:
            _advice_before = _set_huge_page_advice(False)
    try:
        yield
    finally:
        with _page_lock:
            _small_page_reads -= 1
            if _small_page_reads == 0:
                _set_huge_page_advice(_advice_before)


def _set_huge_page_advice(enabled: bool) -> bool:
    """Sets numpy's advice; returns the one before."""
    try:
        from numpy._core.multiarray import _set_madvise_hugepage
    except ImportError:  # numpy < 2
        from numpy.core.multiarray import _set_madvise_hugepage
    return bool(_set_madvise_hugepage(enabled))


class MemoryBudget:
    """What one read holds, against its ``memory_limit`` (None: no limit).

    It counts the parsed output kept (a whole read keeps every checked
    span's until it assembles the Table, and the text of spans that cannot be
    read again; a stream keeps only the batch not yet handed out) and the
    spans in flight: their text, and their output as estimated from the
    densest span so far (output bytes per text byte). Assembling the Table
    copies nothing (:func:`arrow_bridge.assembly.assembly_bytes` says what it
    adds). The driver asks :meth:`admits` before it hands a span out: while
    the span would not fit, it waits for the spans in flight; with none in
    flight, the read cannot go on and :class:`MemoryLimitError` says so,
    before the span's output is allocated. Each checked span's real output is
    counted after (:meth:`keep`), and going over raises too. Workspaces of a
    fixed size per thread (the tokenizer's, a device task's scratch) are not
    counted.

    >>> import numpy as np
    >>> from arrow_bridge.spans import Span
    >>> budget = MemoryBudget(1000, "x.csv")
    >>> budget.admits(Span(np.zeros(600, np.uint8), 0, False), can_wait=False)
    True
    >>> try:
    ...     budget.admits(Span(np.zeros(2000, np.uint8), 0, False), can_wait=False)
    ... except MemoryLimitError as err:
    ...     print(err)
    x.csv: the read would exceed memory_limit=1000 B: it holds 0 B of parsed output and 0 B of spans in \
flight, and the next span needs about 2.0 KiB more. Give a larger memory_limit or a smaller block_size
    """

    def __init__(self, limit: Optional[int], path: str):
        self.limit, self.path = limit, path
        self.held = 0  # output (and text) of checked spans kept
        self.reserved: dict[int, int] = {}  # id(span) -> its estimate, for the spans in flight
        self.output_per_byte = 0.0  # the densest checked span's output per text byte

    @property
    def in_flight(self) -> int:
        return sum(self.reserved.values())

    def estimate(self, span: Span) -> int:
        """A span's text and the output it will likely make."""
        return int(span.length * (1.0 + self.output_per_byte))

    def admits(self, span: Span, can_wait: bool) -> bool:
        """Whether ``span`` may be handed out now; False while it would not
        fit but the driver ``can_wait`` for room (a span in flight, a stream's
        batch about to be handed out); MemoryLimitError when it cannot."""
        if self.limit is None or self.held + self.in_flight + self.estimate(span) <= self.limit:
            return True
        if can_wait:
            return False
        raise self._error(self.estimate(span), "the next span needs")

    def reserve(self, span: Span) -> None:
        if self.limit is not None:
            self.reserved[id(span)] = self.estimate(span)

    def release(self, span: Optional[Span]) -> None:
        self.reserved.pop(id(span), None)

    def keep(self, result: SpanResult) -> None:
        """Counts a checked span's output and kept text; raises if they do not fit."""
        if self.limit is None:
            return
        output = object_bytes(result.columns)
        if result.parsed > 0:
            self.output_per_byte = max(self.output_per_byte, output / result.parsed)
        needed = output + len(result.span.buf)  # the text a source that cannot seek keeps
        if self.held + self.in_flight + needed > self.limit:
            raise self._error(needed, "the span just parsed needs")
        self.held += needed

    def hand_out(self, result: SpanResult) -> None:
        """A stream's batch went to the caller: no longer the read's to hold."""
        if self.limit is not None:
            self.held -= object_bytes(result.columns) + len(result.span.buf)

    def assemble(self, extra: int) -> None:
        """Before assembly, which adds ``extra`` bytes."""
        if self.limit is not None and self.held + extra > self.limit:
            raise self._error(extra, "assembling the Table needs")

    def _error(self, needed: int, step: str) -> MemoryLimitError:
        advice = ("Give a larger memory_limit, fewer columns (usecols), or stream the file (open_csv, "
                  "dask_plugin.read_csv)")
        if not self.held and not self.reserved:  # one span alone is too much
            advice = "Give a larger memory_limit or a smaller block_size"
        return MemoryLimitError(self.path, self.limit, self.held, self.in_flight, needed, advice, step)


def _parsed_and_staged(span: Span, plan: SpanPlan, executor: SpanExecutor, read: ReadPlan) -> SpanResult:
    """``executor``'s parse of ``span`` through the span stages (where it ran, on its thread)."""
    result = executor.parse(span, plan)
    run_span_stages(result, read, types_final=False)  # a whole read's: its types may still widen
    return result


@contextmanager
def _keyboard_interrupts() -> Iterator[None]:
    """Ctrl-C that lands inside a Numba dispatcher call on this thread (while
    it loads a cached kernel or boxes a result) comes out as a SystemError
    caused by the KeyboardInterrupt, or by a SystemError so caused: the
    dispatcher returns with the exception set. It goes on as the KeyboardInterrupt."""
    try:
        yield
    except SystemError as error:
        cause = error.__cause__
        while isinstance(cause, SystemError):
            cause = cause.__cause__
        if isinstance(cause, KeyboardInterrupt):
            raise cause from None
        raise


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
