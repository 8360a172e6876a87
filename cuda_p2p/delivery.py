"""Spans to GPU memory while the read goes on: a :class:`~arrow_bridge.executors.SpanSink`.

The reader hands each span's result to :class:`SpanDelivery` as soon as it is
checked, in file order, while its workers parse the spans after it. Spans
are gathered into batches of about ``batch_bytes`` of Arrow data, and each
batch's columns start their asynchronous copies into GPU buffers at once
(:class:`~cuda_p2p.transfer.ColumnBuilder`, sized from the first span's
density and the source's size, grown if that falls short): a batch costs a
few CUDA calls per column whether it holds 16 host spans or 250 device tasks.
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
from typing import Any, Optional

import pyarrow as pa

from arrow_bridge.executors.base import SpanResult
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
    """Copies spans' columns to the GPU as the reader checks them (see the module)."""

    def __init__(self, source_bytes: Optional[int] = None, staging_bytes: int = DEFAULT_STAGING,
                 batch_bytes: int = DEFAULT_BATCH):
        self.source_bytes, self.batch_bytes = source_bytes, batch_bytes
        self.stager = PinnedStager(staging_bytes)
        self.builders: dict[int, Optional[ColumnBuilder]] = {}  # output column -> builder (None: given up)
        self.copied: dict[int, list[tuple]] = {}  # output column -> identities of the chunks copied
        self.pending: dict[int, list[pa.Array]] = defaultdict(list)  # the batch not yet copied
        self.pending_bytes = 0
        self.batches = 0
        self.started = time.perf_counter()

    # ---- the SpanSink protocol -------------------------------------------------------------------
    def checked(self, result: SpanResult) -> None:
        for j, array in enumerate(result.columns):
            if array is None:
                continue  # a column the file lacks: the Table's nulls are copied at the end
            if j not in self.builders:
                self.builders[j] = self._builder(array, result)
                self.copied[j] = []
            builder = self.builders[j]
            if builder is None or builder.type != array.type:  # a type that changed: copied at the end
                self.builders[j] = None
                self.pending_bytes -= sum(a.nbytes for a in self.pending.pop(j, ()))
                continue
            self.pending[j].append(array)
            self.pending_bytes += array.nbytes
            self.copied[j].append(chunk_identity(array))
        if self.pending_bytes >= self.batch_bytes:
            self._flush()

    def _flush(self, columns: Optional[set[int]] = None) -> None:
        """Starts the copies of the batch gathered so far (of ``columns`` only, when given)."""
        for j, chunks in self.pending.items():
            builder = self.builders.get(j)
            if builder is not None and chunks and (columns is None or j in columns):
                builder.append_batch(chunks)
        self.batches += bool(self.pending)
        self.pending.clear()
        self.pending_bytes = 0

    def _builder(self, array: pa.Array, result: SpanResult) -> Optional[ColumnBuilder]:
        """A builder sized for the whole source from this first span (None: a type not delivered so)."""
        if pa.types.is_dictionary(array.type):
            return None
        scale = self.source_bytes / max(result.parsed, 1) if self.source_bytes else 4.0
        rows = int(max(len(array), 1) * scale * _SLACK) + 1024
        data = int(string_bytes(array) * scale * _SLACK) + 4096
        return ColumnBuilder(array.type, rows, data, self.stager)

    # ---- after the read ---------------------------------------------------------------------------
    def finish(self, table: pa.Table, stats: TransferStats) -> GpuTable:
        """The GPU table of the finished ``table``: columns copied while it was read
        where they match it chunk for chunk, the others copied now."""
        by_chunks = {tuple(ids): j for j, ids in self.copied.items() if self.builders.get(j) is not None}
        kept = [by_chunks.pop(tuple(chunk_identity(c) for c in column.chunks), None) for column in table.columns]
        self._flush(set(kept))  # the last batch, of the columns the Table kept
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
        stats.seconds += time.perf_counter() - self.started
        return GpuTable(table.schema, columns, table.num_rows, stats)

    def close(self) -> Any:
        """Waits for copies in flight (after a failed read); safe to call twice."""
        self.builders.clear()
        self.pending.clear()
        self.stager.finish()
