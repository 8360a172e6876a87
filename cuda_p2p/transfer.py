"""Arrow buffers in host memory -> GPU buffers per column, through pinned staging.

A :class:`ColumnBuilder` fills one column's GPU buffers in row order, a batch
of chunks at a time: each of the batch's buffers (values, offsets, bytes,
bitmaps) is gathered from all its chunks into a ring of pinned host buffers
(:class:`PinnedStager`) and copied asynchronously on one CUDA stream, so
filling the next pinned buffer overlaps the DMA of the previous one. A batch
costs a few copies and launches whatever its number of chunks: each CUDA call
made from Python costs tens of microseconds, which at one call per chunk and
buffer decided the time (measured on an H200: lineitem SF1, 845 MB of
columns, took 4.3 s in 366 spans and 70.8 s in 5,843 device tasks; see
docs/gpu.md). Nothing is concatenated on the GPU; values and
string bytes take one host pass, the gather into pinned memory, string
offsets rebased on the way. Bitmaps, where a column has nulls or is boolean,
take one more: unpacked, joined and packed again on the host (a byte per row
for a moment), then ORed into place on the GPU (:mod:`cuda_p2p.kernels.bits`),
since batches start at any bit. A validity bitmap is allocated at the
column's first null (a column without nulls has none, as in Arrow). Sized
exactly (:func:`to_gpu`, a finished Table) a column is allocated once; sized
by an estimate (:mod:`cuda_p2p.delivery`, spans as they are parsed) a buffer
that falls short grows: a larger one, and a copy on the GPU.

>>> from cuda_p2p.transfer import DEFAULT_STAGING
>>> DEFAULT_STAGING
8388608
"""
from __future__ import annotations

import time
from typing import Any, Callable, Optional, Sequence

import numpy as np
import pyarrow as pa

from cuda_p2p import runtime
from cuda_p2p.columns import GpuColumn, GpuTable, TransferStats, device_width

DEFAULT_STAGING = 8 << 20  # bytes per pinned buffer; two of them
_INT32_MAX = 2**31 - 1


class PinnedStager:
    """Two pinned host buffers taking turns, both ways: fill one while the
    other's copy to the GPU runs (:meth:`put`), or copy one out while the
    other's copy from the GPU runs (:meth:`take`).

    Everything it is handed runs on its one stream, in order: copies, and the
    bit kernels of the builders using it. ``copies``, ``launches`` and
    ``allocations`` count the CUDA calls made through it.
    """

    def __init__(self, nbytes: int = DEFAULT_STAGING, ring: int = 2):
        if nbytes % 8:
            raise ValueError("staging buffers hold whole 8-byte words (offsets are rebased per piece)")
        if ring < 2:
            raise ValueError(f"a ring of {ring} pinned buffer(s): copies overlap only with two or more")
        cuda = runtime.cuda()
        self.stream = cuda.stream()
        self.buffers = [cuda.pinned_array(nbytes, dtype=np.uint8) for _ in range(ring)]
        self.events = [cuda.event() for _ in range(ring)]
        self.pending = [False] * ring  # a copy from that buffer may still run
        self.turn = 0
        self.nbytes = nbytes
        self.copied = self.copies = self.launches = self.allocations = 0
        self.copied_back = 0  # bytes fetched from the GPU (take)
        self.copied_on_gpu = 0  # bytes copied GPU to GPU (copy_on_gpu)
        self._scratch: Optional[Any] = None

    def put(self, dst: Any, nbytes: int, fill: Callable[[np.ndarray, int, int], None]) -> None:
        """Copies ``nbytes`` into the device byte array ``dst`` (from its start),
        ``fill(buf, start, stop)`` writing source bytes ``[start, stop)`` into ``buf``."""
        for start in range(0, nbytes, self.nbytes):
            stop = min(nbytes, start + self.nbytes)
            k = self.turn
            self.turn = (k + 1) % len(self.buffers)
            if self.pending[k]:
                self.events[k].synchronize()  # its previous copy has left the buffer
            staged = self.buffers[k][: stop - start]
            fill(staged, start, stop)
            dst[start:stop].copy_to_device(staged, stream=self.stream)
            self.events[k].record(self.stream)
            self.pending[k] = True
            self.copied += stop - start
            self.copies += 1

    def take(self, src: Any, dst: np.ndarray) -> None:
        """Copies the device byte array ``src`` into the host bytes ``dst``, after
        the stream's work before it; returns with ``dst`` filled. Each piece goes
        by DMA into a pinned buffer, the next piece's DMA running while this one
        is copied out: a copy straight into pageable memory ran at about 2 GB/s
        on an H200, a pinned one at 50.

        >>> from cuda_p2p import runtime
        >>> if runtime.available():
        ...     stager, out = PinnedStager(8), np.zeros(20, dtype=np.uint8)
        ...     stager.take(runtime.cuda().to_device(np.arange(20, dtype=np.uint8)), out)
        ...     print(out[[0, 9, 19]].tolist())
        ... else:
        ...     print([0, 9, 19])
        [0, 9, 19]
        """
        pieces = [(start, min(dst.shape[0], start + self.nbytes)) for start in range(0, dst.shape[0], self.nbytes)]
        in_flight = {0: self._fetch(src, *pieces[0])} if pieces else {}
        for i, (start, stop) in enumerate(pieces):
            if i + 1 < len(pieces):
                in_flight[i + 1] = self._fetch(src, *pieces[i + 1])
            k = in_flight.pop(i)
            self.events[k].synchronize()
            dst[start:stop] = self.buffers[k][:stop - start]
            self.pending[k] = False

    def _fetch(self, src: Any, start: int, stop: int) -> int:
        """Starts the DMA of ``src[start:stop]`` into the next pinned buffer; returns which."""
        k = self.turn
        self.turn = (k + 1) % len(self.buffers)
        if self.pending[k]:
            self.events[k].synchronize()
        src[start:stop].copy_to_host(self.buffers[k][:stop - start], stream=self.stream)
        self.events[k].record(self.stream)
        self.pending[k] = True
        self.copied_back += stop - start
        return k

    def launch(self, kernel: Any, n: int, *args: Any) -> None:
        """``kernel(*args)`` over ``n`` threads on the stream (counted)."""
        blocks, threads = runtime.launch_shape(n)
        with runtime.KERNEL_TURN:
            kernel[blocks, threads, self.stream](*args)
        self.launches += 1

    def copy_on_gpu(self, dst: Any, src: Any) -> None:
        """Copies the device bytes ``src`` into ``dst`` (GPU to GPU), on the stream."""
        dst.copy_to_device(src, stream=self.stream)
        self.copied_on_gpu += int(src.shape[0])

    def put_bytes(self, dst: Any, src: np.ndarray) -> None:
        """Copies the bytes of ``src`` into ``dst``."""
        flat = src.view(np.uint8).reshape(-1)
        self.put(dst, flat.nbytes, Gather([flat]).fill)

    def scratch(self, nbytes: int) -> Any:
        """A device byte buffer of at least ``nbytes`` for data on its way into place
        (reused: what reads it runs on this stream before the next copy into it)."""
        if self._scratch is None or self._scratch.shape[0] < nbytes:
            self._scratch = _allocate(max(nbytes, 1 << 16), False, self)
        return self._scratch

    def finish(self) -> None:
        """Waits for every copy."""
        self.stream.synchronize()


class Gather:
    """1-D host arrays of one dtype read as their concatenation, each plus its
    ``shift`` (string offsets rebased to where their bytes go): ``fill`` is
    :meth:`PinnedStager.put`'s, in bytes, at whole elements.

    >>> buf = np.zeros(6, dtype=np.uint8)
    >>> Gather([np.array([1, 2], np.uint8), np.array([], np.uint8), np.array([3], np.uint8)], [0, 0, 10]).fill(buf, 1, 3)
    >>> buf[:2].tolist()
    [2, 13]
    """

    def __init__(self, pieces: Sequence[np.ndarray], shifts: Optional[Sequence[int]] = None):
        self.pieces, self.shifts = list(pieces), shifts
        self.dtype = self.pieces[0].dtype if self.pieces else np.dtype(np.uint8)
        self.starts = np.cumsum([0] + [p.shape[0] for p in self.pieces])
        self.nbytes = int(self.starts[-1]) * self.dtype.itemsize

    def fill(self, buf: np.ndarray, start: int, stop: int) -> None:
        width = self.dtype.itemsize
        out, lo, hi = buf[: stop - start].view(self.dtype), start // width, stop // width
        k, at = int(np.searchsorted(self.starts, lo, side="right")) - 1, lo
        while at < hi:
            piece, i = self.pieces[k], at - int(self.starts[k])
            take = min(hi - at, piece.shape[0] - i)
            dst = out[at - lo: at - lo + take]
            if self.shifts is None:
                dst[:] = piece[i:i + take]
            else:
                np.add(piece[i:i + take], self.shifts[k], out=dst, casting="unsafe")
            at, k = at + take, k + 1


def to_gpu(table: pa.Table, *, staging_bytes: int = DEFAULT_STAGING, stats: Optional[TransferStats] = None
           ) -> GpuTable:
    """``table`` in GPU memory, each column allocated once at its final size.

    >>> import pyarrow as pa
    >>> from cuda_p2p import runtime
    >>> if runtime.available():
    ...     gpu = to_gpu(pa.table({"a": [1, None, 3], "s": ["x", "yz", None]}))
    ...     print(gpu.to_arrow().to_pydict())
    ... else:
    ...     print({'a': [1, None, 3], 's': ['x', 'yz', None]})
    {'a': [1, None, 3], 's': ['x', 'yz', None]}
    """
    started = time.perf_counter()
    stats = stats if stats is not None else TransferStats()
    stager = PinnedStager(staging_bytes)
    columns = [column_to_gpu(column, stager) for column in table.columns]
    stager.finish()
    stats.add_copies(stager)
    stats.seconds += time.perf_counter() - started
    return GpuTable(table.schema, columns, table.num_rows, stats)


def column_to_gpu(column: pa.ChunkedArray, stager: "PinnedStager") -> GpuColumn:
    """One column, allocated at its exact size and filled as one batch of its chunks."""
    builder = ColumnBuilder(column.type, len(column), sum(string_bytes(c) for c in column.chunks), stager)
    builder.append_batch(column.chunks)
    return builder.finish()


class DeviceBuffer:
    """A GPU byte buffer of some capacity, filled from the front; it grows (a
    larger allocation and a copy on the GPU) when a write would pass its end."""

    def __init__(self, capacity: int, zeroed: bool, stager: PinnedStager):
        self.zeroed, self.stager = zeroed, stager
        self.memory = _allocate(capacity, zeroed, stager)
        self.growths = 0

    def reserve(self, nbytes: int, used: int) -> Any:
        """The buffer, at least ``nbytes`` long (its first ``used`` bytes kept)."""
        if nbytes > self.memory.shape[0]:
            larger = _allocate(max(nbytes, 2 * self.memory.shape[0]), self.zeroed, self.stager)
            if used:
                larger[:used].copy_to_device(self.memory[:used], stream=self.stager.stream)
            self.memory = larger
            self.growths += 1
        return self.memory


class ColumnBuilder:
    """One column's GPU buffers, filled with Arrow chunks of its type in row order.

    ``rows`` and ``data_bytes`` are capacities (exact, or estimates that may be
    passed: buffers then grow). A validity bitmap is made at the first null, as
    Arrow has one only where a value is null.
    """

    def __init__(self, type_: pa.DataType, rows: int, data_bytes: int, stager: "PinnedStager"):
        if pa.types.is_dictionary(type_):
            raise NotImplementedError("dictionary columns on the GPU: read them as strings (no auto_dict_encode) "
                                      "or decode with pyarrow after to_arrow()")
        self.type, self.stager, self.capacity = type_, stager, rows
        self.rows = self.data_at = self.null_count = 0
        self.width = device_width(type_)
        self.offset_dtype = _offset_dtype(type_)
        self.validity: Optional[DeviceBuffer] = None
        self.values = self.offsets = self.data = None
        if pa.types.is_null(type_):
            return
        if self.width == 0:  # booleans: a bitmap
            self.values = DeviceBuffer(_bitmap_bytes(rows), True, stager)
        elif self.width is not None:
            self.values = DeviceBuffer(rows * self.width, False, stager)
        else:
            self.offsets = DeviceBuffer((rows + 1) * self.offset_dtype.itemsize, False, stager)
            self.data = DeviceBuffer(data_bytes, False, stager)

    @property
    def growths(self) -> int:
        return sum(b.growths for b in (self.validity, self.values, self.offsets, self.data) if b is not None)

    def append_batch(self, chunks: Sequence[pa.Array], on_gpu: Optional[Sequence[Optional[GpuColumn]]] = None
                     ) -> None:
        """Copies ``chunks`` (this column's type), in order, after the rows so far:
        one staged copy per buffer for all of them, except chunks with a copy
        already on the GPU (``on_gpu``, parallel to ``chunks``; None where
        not), placed from there, GPU to GPU."""
        run: list[pa.Array] = []  # host chunks since the last one placed from the GPU
        for chunk, copy in zip(chunks, on_gpu or [None] * len(chunks)):
            if copy is None:
                run.append(chunk)
                continue
            self._append_host(run)
            run = []
            self._append_from_gpu(copy)
        self._append_host(run)

    def _append_host(self, chunks: Sequence[pa.Array]) -> None:
        """Host chunks after the rows so far, through the pinned ring."""
        chunks = [c for c in chunks if len(c)]
        n, row = sum(len(c) for c in chunks), self.rows
        if n == 0:
            return
        nulls = sum(c.null_count for c in chunks)
        if nulls and not pa.types.is_null(self.type) or self.validity is not None:
            self._append_validity(chunks, row, n)
        self.null_count += nulls
        if pa.types.is_null(self.type):
            pass
        elif self.width == 0:
            bitmap = self.values.reserve(_bitmap_bytes(row + n), _bitmap_bytes(row))
            self._or_bits(bitmap, row, gather_bits(chunks, 1))
        elif self.width:
            w = self.width
            memory = self.values.reserve((row + n) * w, row * w)
            gather = Gather([np.frombuffer(c.buffers()[1], dtype=np.uint8)[c.offset * w:(c.offset + len(c)) * w]
                             for c in chunks])
            self.stager.put(memory[row * w:(row + n) * w], gather.nbytes, gather.fill)
        else:
            self._append_strings(chunks, n)
        self.rows += n

    def _append_from_gpu(self, column: GpuColumn) -> None:
        """A chunk already in GPU memory (a GPU-parsed span's) after the rows so
        far: copies and launches on the GPU, no host pass."""
        n, row = column.length, self.rows
        if n == 0:
            return
        if column.null_count or self.validity is not None:
            words = self._validity_words(row, n)
            _launch_bits(words, row, n, self.stager, column.validity if column.null_count else None)
        self.null_count += column.null_count
        if self.width == 0:
            _launch_bits(self.values.reserve(_bitmap_bytes(row + n), _bitmap_bytes(row)), row, n, self.stager,
                         column.values)
        elif self.width:
            w = self.width
            memory = self.values.reserve((row + n) * w, row * w)
            self.stager.copy_on_gpu(memory[row * w:(row + n) * w], column.values[:n * w])
        else:
            self._append_strings_from_gpu(column)
        self.rows += n

    def _append_strings_from_gpu(self, column: GpuColumn) -> None:
        """A GPU chunk's offsets (from 0; rebased on the GPU) and bytes."""
        from cuda_p2p.kernels import bits

        n, row, width, at = column.length, self.rows, self.offset_dtype.itemsize, self.data_at
        used = int(column.data.shape[0])
        self._check_offsets(at + used)
        memory = self.offsets.reserve((row + n + 1) * width, (row + 1) * width)
        dst = memory[row * width:(row + n + 1) * width].view(self.offset_dtype)
        self.stager.launch(bits.shift_offsets, n + 1, column.offsets[:n + 1], at, dst)
        if used:
            self.stager.copy_on_gpu(self.data.reserve(at + used, at)[at:at + used], column.data)
        self.data_at = at + used

    def _validity_words(self, row: int, n: int) -> Any:
        """The validity bitmap, room for ``n`` more rows after ``row``; made at
        the column's first null, its rows so far all valid."""
        if self.validity is None:
            self.validity = DeviceBuffer(_bitmap_bytes(max(self.capacity, row + n)), True, self.stager)
            _launch_bits(self.validity.memory, 0, row, self.stager)
        return self.validity.reserve(_bitmap_bytes(row + n), _bitmap_bytes(row))

    def _append_validity(self, chunks: list[pa.Array], row: int, n: int) -> None:
        """The chunks' validity bits."""
        words = self._validity_words(row, n)
        if all(c.null_count == 0 for c in chunks):
            _launch_bits(words, row, n, self.stager)
        else:
            self._or_bits(words, row, gather_bits(chunks, 0))

    def _or_bits(self, dst: Any, row: int, bitmap: tuple[np.ndarray, int]) -> None:
        """ORs a host bitmap ``(bytes, bits)`` into ``dst`` from bit ``row``."""
        packed, count = bitmap
        src = self.stager.scratch(packed.nbytes)
        self.stager.put_bytes(src, packed)
        _launch_bits(dst, row, count, self.stager, src)

    def _append_strings(self, chunks: list[pa.Array], n: int) -> None:
        """The chunks' offsets (rebased to where their bytes go) and bytes."""
        row, width = self.rows, self.offset_dtype.itemsize
        offsets, shifts, data, at = [], [], [], self.data_at
        for chunk in chunks:
            chunk_offsets = _offsets(chunk)
            first, stop = int(chunk_offsets[0]), int(chunk_offsets[-1])
            offsets.append(chunk_offsets[:-1])
            shifts.append(at - first)
            if stop > first:
                data.append(np.frombuffer(chunk.buffers()[2], dtype=np.uint8)[first:stop])
            at += stop - first
        self._check_offsets(at)
        offsets.append(np.array([at], dtype=self.offset_dtype))
        shifts.append(0)
        memory = self.offsets.reserve((row + n + 1) * width, (row + 1) * width)
        gather = Gather(offsets, shifts)
        self.stager.put(memory[row * width:(row + n + 1) * width], gather.nbytes, gather.fill)
        if at > self.data_at:
            memory = self.data.reserve(at, self.data_at)
            gather = Gather(data)
            self.stager.put(memory[self.data_at:at], gather.nbytes, gather.fill)
        self.data_at = at

    def _check_offsets(self, data_bytes: int) -> None:
        """Raises where ``data_bytes`` of strings pass the type's int32 offsets."""
        if self.offset_dtype.itemsize == 4 and data_bytes > _INT32_MAX:
            raise OverflowError(f"a {self.type} column of {data_bytes} bytes passes its int32 offsets; read it as "
                                f"{'large_binary' if pa.types.is_binary(self.type) else 'large_string'} (dtype=)")

    def finish(self) -> GpuColumn:
        """The column: its buffers cut to the rows appended (copies still in
        flight on the stager's stream until its ``finish``)."""
        n = self.rows
        out = GpuColumn(self.type, n, n if pa.types.is_null(self.type) else self.null_count)
        if self.validity is not None:  # made at the first null
            out.validity = self.validity.memory[:_bitmap_bytes(n)]
        if self.values is not None:
            out.values = self.values.memory[:_bitmap_bytes(n) if self.width == 0 else n * self.width]
        if self.offsets is not None:
            if n == 0:  # one zero offset
                self.stager.put_bytes(self.offsets.memory, np.zeros(1, dtype=self.offset_dtype))
            out.offsets = self.offsets.memory[:(n + 1) * self.offset_dtype.itemsize].view(self.offset_dtype)
            out.data = self.data.memory[:self.data_at]
        return out


def gather_bits(chunks: Sequence[pa.Array], index: int) -> tuple[np.ndarray, int]:
    """Bitmap ``index`` of the chunks (0: validity, 1: boolean values) as one:
    ``(bytes, bits)``, bit 0 the first chunk's first row; a chunk without that
    buffer (all valid) gives ones.

    >>> a = pa.array([True, None, False, True]).slice(1)
    >>> packed, bits = gather_bits([a, pa.array([True])], 0)
    >>> bits, [int(b) for b in np.unpackbits(packed, bitorder="little")[:bits]]
    (4, [0, 1, 1, 1])
    """
    parts = []
    for chunk in chunks:
        buffer = chunk.buffers()[index]
        if buffer is None:
            parts.append(np.ones(len(chunk), dtype=np.uint8))
            continue
        first, last = chunk.offset // 8, (chunk.offset + len(chunk) + 7) // 8
        bits = np.unpackbits(np.frombuffer(buffer, dtype=np.uint8)[first:last], bitorder="little")
        skip = chunk.offset - first * 8
        parts.append(bits[skip:skip + len(chunk)])
    flat = np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint8)
    return np.packbits(flat, bitorder="little"), flat.shape[0]


def _bitmap_bytes(n: int) -> int:
    """Bytes of a bitmap of ``n`` bits, padded to whole ``uint32`` words (the kernels' unit)."""
    return (n + 31) // 32 * 4


def _allocate(nbytes: int, zeroed: bool, stager: PinnedStager) -> Any:
    """A GPU byte array (at least one byte: no empty allocations), zeroed on the
    stager's stream if asked; counted there."""
    from cuda_p2p.kernels import bits

    size = max(nbytes + (-nbytes) % 4, 4)
    memory = runtime.cuda().device_array(size, dtype=np.uint8)
    stager.allocations += 1
    if zeroed:
        words = memory.view(np.uint32)
        stager.launch(bits.zero_words, words.shape[0], words)
    return memory


def _launch_bits(dst: Any, row: int, count: int, stager: PinnedStager, src: Any = None) -> None:
    """Sets (``src`` None) or ORs in ``count`` bits of ``dst`` from bit ``row``
    (``src``'s bits from bit 0), on the stager's stream."""
    from cuda_p2p.kernels import bits

    if count == 0:
        return
    words = dst.view(np.uint32)
    if src is None:
        stager.launch(bits.set_bits, count, words, row, count)
    else:
        stager.launch(bits.or_bits, count, src, count, words, row)


def string_extent(chunk: pa.Array) -> tuple[int, int]:
    """The chunk's bytes in its data buffer: ``(first, stop)``."""
    offsets = _offsets(chunk)
    return (int(offsets[0]), int(offsets[-1])) if len(offsets) else (0, 0)


def string_bytes(chunk: pa.Array) -> int:
    """Bytes of string data a chunk holds (0 for other types)."""
    if device_width(chunk.type) is not None or pa.types.is_dictionary(chunk.type):
        return 0
    first, stop = string_extent(chunk)
    return stop - first


def _offset_dtype(type_: pa.DataType) -> np.dtype:
    """The offsets' dtype of a string or binary type (int64 for the large ones)."""
    return np.dtype(np.int64 if pa.types.is_large_string(type_) or pa.types.is_large_binary(type_) else np.int32)


def _offsets(chunk: pa.Array) -> np.ndarray:
    offsets = np.frombuffer(chunk.buffers()[1], dtype=_offset_dtype(chunk.type))
    return offsets[chunk.offset: chunk.offset + len(chunk) + 1]
