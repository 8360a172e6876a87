"""Spans to GPU memory while the read goes on: a :class:`~arrow_bridge.executors.SpanSink`.

The reader hands each span's result to :class:`SpanDelivery` as soon as it is
checked, in file order, while its workers parse the spans after it. Spans
are gathered into batches of about ``batch_bytes`` of Arrow data, and each
batch goes to a thread of the delivery's own, which copies its columns into
GPU buffers (:class:`~cuda_p2p.transfer.ColumnBuilder`, sized from the first span's
density and the source's size, grown if that falls short): a batch costs a
few CUDA calls per column whether it holds 16 host spans or 250 device tasks.
A span the GPU parsed comes with its columns still on the GPU
(``SpanResult.kept_copies``): those are placed GPU to GPU, a few calls each.
When the read is done, each column of the finished Table is matched with what
was copied: if its chunks are the very arrays that were copied, in the same
order, the GPU column is ready; otherwise (a type settled at the end of the
read re-parsed spans, ``nrows`` cut a span, a filter or a value-dependent
type replaced the column) that column is copied again from the Table. Exact
either way.

>>> from cuda_p2p.delivery import chunk_identity
>>> import pyarrow as pa
>>> a = pa.array([1, 2, 3])
>>> chunk_identity(a) == chunk_identity(a), chunk_identity(a) == chunk_identity(a.slice(1))
(True, False)
"""
from __future__ import annotations

import time
from collections import defaultdict
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Optional

import pyarrow as pa

from arrow_bridge.executors.base import SpanResult
from cuda_p2p import runtime
from cuda_p2p.columns import GpuColumn, GpuTable, TransferStats
from cuda_p2p.transfer import DEFAULT_STAGING, ColumnBuilder, PinnedStager, column_to_gpu, string_bytes

_SLACK = 1.15  # estimates from the first span get this much room (and a few rows) before a buffer grows
#: Arrow bytes of spans gathered before their copies start: large enough that the CUDA
#: calls per batch cost little next to its copy, small enough to overlap the parse.
DEFAULT_BATCH = 64 << 20


def chunk_identity(array: pa.Array) -> tuple:
    """What makes two arrays the same chunk: type, slice and buffer addresses."""
    return (array.type, array.offset, len(array), tuple(b.address if b is not None else 0 for b in array.buffers()))


class SpanDelivery:
    """Copies spans' columns to the GPU as the reader checks them (see the module).

    The reader's driver thread only gathers each batch's chunks (:meth:`checked`);
    one thread of the delivery's own (``ndp-gpu-delivery``) sizes the GPU
    buffers and stages and copies the batches, in order. A batch takes tens of
    milliseconds of host copying: on the driver it held back the spans after it
    from the parse threads, which then waited.
    """

    def __init__(self, source_bytes: Optional[int] = None, staging_bytes: int = DEFAULT_STAGING,
                 batch_bytes: int = DEFAULT_BATCH):
        self.source_bytes, self.batch_bytes = source_bytes, batch_bytes
        self.stager = PinnedStager(staging_bytes)
        self.types: dict[int, Optional[pa.DataType]] = {}  # output column -> its type (None: given up)
        self.estimates: dict[int, tuple[int, int]] = {}  # output column -> (rows, string bytes) to size it for
        self.builders: dict[int, ColumnBuilder] = {}  # the copying thread's, until finish()
        self.copied: dict[int, list[tuple]] = {}  # output column -> identities of the chunks copied
        #: the batch not yet handed over: per output column, its chunks, each with its copy
        #: on the GPU where the span was parsed there (else None)
        self.pending: dict[int, list[tuple[pa.Array, Optional[GpuColumn]]]] = defaultdict(list)
        self.pending_bytes = 0
        self.batches = 0
        self.copying = ThreadPoolExecutor(1, thread_name_prefix="ndp-gpu-delivery",
                                          initializer=runtime.thread_on_this_gpu())
        self.handed: list[Future] = []
        self.started = time.perf_counter()

    # ---- the SpanSink protocol -------------------------------------------------------------------
    def checked(self, result: SpanResult) -> None:
        kept, result.kept_copies = result.kept_copies, []  # taken: the result may live as long as the read
        for j, array in enumerate(result.columns):
            if array is None:
                continue  # a column the file lacks: the Table's nulls are copied at the end
            if j not in self.types:
                self._first_chunk(j, array, result)
            if self.types[j] != array.type:  # a type that changed (or is not delivered so): copied at the end
                self.types[j] = None
                self.pending_bytes -= sum(a.nbytes for a, _ in self.pending.pop(j, ()))
                continue
            copy = kept[j] if j < len(kept) and kept[j] is not None and kept[j][0] is array else None
            self.pending[j].append((array, copy[1] if copy is not None else None))
            self.pending_bytes += array.nbytes
            self.copied[j].append(chunk_identity(array))
        if self.pending_bytes >= self.batch_bytes:
            self._hand_over()

    def _first_chunk(self, j: int, array: pa.Array, result: SpanResult) -> None:
        """Column ``j``'s type and sizes for the whole source, from its first span."""
        self.types[j] = None if pa.types.is_dictionary(array.type) else array.type
        scale = self.source_bytes / max(result.parsed, 1) if self.source_bytes else 4.0
        self.estimates[j] = (int(max(len(array), 1) * scale * _SLACK) + 1024,
                             int(string_bytes(array) * scale * _SLACK) + 4096)
        self.copied[j] = []

    def _hand_over(self, columns: Optional[set[int]] = None) -> None:
        """Gives the batch gathered so far (of ``columns`` only, when given) to the
        copying thread; a batch that failed there is raised here, ending the read."""
        failed = next((f for f in self.handed if f.done() and f.exception() is not None), None)
        if failed is not None:
            raise failed.exception()
        self.handed = [f for f in self.handed if not f.done()]  # copied: nothing left to wait for
        batch = {j: chunks for j, chunks in self.pending.items()
                 if chunks and self.types.get(j) is not None and (columns is None or j in columns)}
        self.pending.clear()
        self.pending_bytes = 0
        if batch:
            self.batches += 1
            self.handed.append(self.copying.submit(self._copy, batch))

    def _copy(self, batch: dict[int, list[tuple[pa.Array, Optional[GpuColumn]]]]) -> None:
        """On the copying thread: each column's chunks after its rows so far."""
        for j, pairs in batch.items():
            chunks, on_gpu = zip(*pairs)
            if j not in self.builders:
                rows, data = self.estimates[j]
                self.builders[j] = ColumnBuilder(chunks[0].type, rows, data, self.stager)
            self.builders[j].append_batch(chunks, on_gpu)
        if any(c is not None for pairs in batch.values() for _, c in pairs):
            self.stager.finish()  # the spans' GPU buffers are freed with the batch: copied out first

    def _copied_all(self) -> None:
        """Waits for the batches handed over; the first failure is raised here
        (the batches after it are left to :meth:`close`)."""
        for future in self.handed:
            future.result()
        self.handed.clear()

    # ---- after the read ---------------------------------------------------------------------------
    def finish(self, table: pa.Table, stats: TransferStats) -> GpuTable:
        """The GPU table of the finished ``table``: columns copied while it was read
        where they match it chunk for chunk, the others copied now."""
        finishing = time.perf_counter()
        by_chunks = {tuple(ids): j for j, ids in self.copied.items() if self.types.get(j) is not None}
        kept = [by_chunks.pop(tuple(chunk_identity(c) for c in column.chunks), None) for column in table.columns]
        self._hand_over(set(kept))  # the last batch, of the columns the Table kept
        self._copied_all()
        self.copying.shutdown()
        columns: list[GpuColumn] = []
        for column, j in zip(table.columns, kept):
            if j is not None:
                builder = self.builders[j]
                stats.growths += builder.growths
                stats.columns_streamed += 1
                columns.append(builder.finish())
            else:
                stats.columns_recopied += 1
                columns.append(column_to_gpu(column, self.stager))
        self.stager.finish()
        self.builders.clear()  # buffers of columns not used are freed
        stats.add_copies(self.stager)
        stats.batches += self.batches
        done = time.perf_counter()
        stats.seconds += done - self.started
        stats.after_read_seconds += done - finishing
        return GpuTable(table.schema, columns, table.num_rows, stats)

    def close(self) -> Any:
        """Waits for copies in flight (after a failed read); safe to call twice."""
        self.pending.clear()
        self.copying.shutdown(wait=True, cancel_futures=True)  # the batch being copied finishes
        self.handed.clear()
        self.builders.clear()
        self.stager.finish()
