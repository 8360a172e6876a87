"""Arrow buffers in host memory -> GPU buffers per column, through pinned staging.

A :class:`ColumnBuilder` fills one column's GPU buffers chunk by chunk, in
row order: every chunk's buffers are copied into place through a ring of
pinned host buffers (:class:`PinnedStager`), each copy asynchronous on one
CUDA stream, so filling the next pinned buffer overlaps the DMA of the
previous one. Nothing is concatenated on the host or on the GPU. String
offsets are rebased while they are staged (the staging copy is the only
host pass); bitmaps are ORed into place on the GPU
(:mod:`cuda_p2p.kernels.bits`), since chunks start at any bit. Sized
exactly (:func:`to_gpu`, a finished Table) a column is allocated once;
sized by an estimate (:mod:`cuda_p2p.delivery`, spans as they are parsed)
a buffer that falls short grows: a larger one, and a copy on the GPU.

>>> from cuda_p2p.transfer import DEFAULT_STAGING
>>> DEFAULT_STAGING
8388608
"""
from __future__ import annotations

import time
from typing import Any, Callable, Optional

import numpy as np
import pyarrow as pa

from cuda_p2p import runtime
from cuda_p2p.columns import GpuColumn, GpuTable, TransferStats, device_width

DEFAULT_STAGING = 8 << 20  # bytes per pinned buffer; two of them


class PinnedStager:
    """Two pinned host buffers taking turns: fill one while the other's copy runs."""

    def __init__(self, nbytes: int = DEFAULT_STAGING, ring: int = 2):
        if nbytes % 8:
            raise ValueError("staging buffers hold whole 8-byte words (offsets are rebased per piece)")
        cuda = runtime.cuda()
        self.stream = cuda.stream()
        self.buffers = [cuda.pinned_array(nbytes, dtype=np.uint8) for _ in range(ring)]
        self.events: list[Optional[Any]] = [None] * ring
        self.turn = 0
        self.nbytes = nbytes
        self.copied = 0
        self.copies = 0

    def put(self, dst: Any, nbytes: int, fill: Callable[[np.ndarray, int, int], None]) -> None:
        """Copies ``nbytes`` into the device byte array ``dst`` (from its start),
        ``fill(buf, start, stop)`` writing source bytes ``[start, stop)`` into ``buf``."""
        for start in range(0, nbytes, self.nbytes):
            stop = min(nbytes, start + self.nbytes)
            k = self.turn
            self.turn = (k + 1) % len(self.buffers)
            if self.events[k] is not None:
                self.events[k].synchronize()  # its previous copy has left the buffer
            staged = self.buffers[k][: stop - start]
            fill(staged, start, stop)
            dst[start:stop].copy_to_device(staged, stream=self.stream)
            event = runtime.cuda().event()
            event.record(self.stream)
            self.events[k] = event
            self.copied += stop - start
            self.copies += 1

    def put_bytes(self, dst: Any, src: np.ndarray) -> None:
        """Copies the bytes of ``src`` into ``dst``."""
        flat = src.view(np.uint8).reshape(-1)

        def fill(buf: np.ndarray, start: int, stop: int) -> None:
            buf[:] = flat[start:stop]

        self.put(dst, flat.nbytes, fill)

    def finish(self) -> None:
        """Waits for every copy."""
        self.stream.synchronize()


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
    """One column, allocated at its exact size and filled chunk by chunk."""
    builder = ColumnBuilder(column.type, len(column), sum(string_bytes(c) for c in column.chunks), stager,
                            nullable=column.null_count > 0)
    for chunk in column.chunks:
        builder.append(chunk)
    return builder.finish()


class DeviceBuffer:
    """A GPU byte buffer of some capacity, filled from the front; it grows (a
    larger allocation and a copy on the GPU) when a write would pass its end."""

    def __init__(self, capacity: int, zeroed: bool, stream: Any):
        self.zeroed, self.stream = zeroed, stream
        self.memory = _allocate(capacity, zeroed)
        self.growths = 0

    def reserve(self, nbytes: int, used: int) -> Any:
        """The buffer, at least ``nbytes`` long (its first ``used`` bytes kept)."""
        if nbytes > self.memory.shape[0]:
            larger = _allocate(max(nbytes, 2 * self.memory.shape[0]), self.zeroed)
            if used:
                larger[:used].copy_to_device(self.memory[:used], stream=self.stream)
            self.memory = larger
            self.growths += 1
        return self.memory


class ColumnBuilder:
    """One column's GPU buffers, filled with Arrow chunks of its type in row order.

    ``rows`` and ``data_bytes`` are capacities (exact, or estimates that may be
    passed: buffers then grow). ``nullable=False`` promises no chunk has nulls
    (no validity bitmap is kept); otherwise one is, and dropped at
    :meth:`finish` if no value turned out null, as Arrow does.
    """

    def __init__(self, type_: pa.DataType, rows: int, data_bytes: int, stager: "PinnedStager", *,
                 nullable: bool = True):
        if pa.types.is_dictionary(type_):
            raise NotImplementedError("dictionary columns on the GPU: read them as strings (no auto_dict_encode) "
                                      "or decode with pyarrow after to_arrow()")
        self.type, self.stager, self.nullable = type_, stager, nullable
        self.rows = self.data_at = self.null_count = 0
        self.width = device_width(type_)
        self.large = pa.types.is_large_string(type_) or pa.types.is_large_binary(type_)
        stream = stager.stream
        self.validity = DeviceBuffer(_bitmap_bytes(rows), True, stream) if nullable else None
        self.values = self.offsets = self.data = None
        if pa.types.is_null(type_):
            return
        if self.width == 0:  # booleans: a bitmap
            self.values = DeviceBuffer(_bitmap_bytes(rows), True, stream)
        elif self.width is not None:
            self.values = DeviceBuffer(rows * self.width, False, stream)
        else:
            self.offsets = DeviceBuffer((rows + 1) * self.offset_width, False, stream)
            self.data = DeviceBuffer(data_bytes, False, stream)

    @property
    def offset_width(self) -> int:
        return 8 if self.large else 4

    @property
    def growths(self) -> int:
        return sum(b.growths for b in (self.validity, self.values, self.offsets, self.data) if b is not None)

    def append(self, chunk: pa.Array) -> None:
        """Copies ``chunk`` (this column's type) after the rows so far."""
        n, row = len(chunk), self.rows
        if self.validity is not None:
            words = self.validity.reserve(_bitmap_bytes(row + n), _bitmap_bytes(row))
            if chunk.buffers()[0] is None:  # every value of this chunk is valid
                _launch_bits(words, row, n, stream=self.stager.stream)
            else:
                _or_bits(chunk.buffers()[0], chunk.offset, n, words, row, self.stager)
        elif chunk.null_count:
            raise ValueError("a chunk with nulls for a column built without a validity bitmap")
        self.null_count += chunk.null_count
        if self.width == 0 and not pa.types.is_null(self.type):
            bitmap = self.values.reserve(_bitmap_bytes(row + n), _bitmap_bytes(row))
            _or_bits(chunk.buffers()[1], chunk.offset, n, bitmap, row, self.stager)
        elif self.width:
            memory = self.values.reserve((row + n) * self.width, row * self.width)
            values = np.frombuffer(chunk.buffers()[1], dtype=np.uint8)
            first = chunk.offset * self.width
            self.stager.put_bytes(memory[row * self.width:(row + n) * self.width], values[first:first + n * self.width])
        elif self.width is None:
            self._append_strings(chunk)
        self.rows += n

    def _append_strings(self, chunk: pa.Array) -> None:
        """A chunk's offsets (rebased to where its bytes go) and bytes."""
        offsets = _offsets(chunk)
        first, stop = string_extent(chunk)
        row, width, shift = self.rows, self.offset_width, self.data_at - first

        def rebased(buf: np.ndarray, start: int, end: int) -> None:
            lo, hi = start // width, end // width  # whole offsets: pieces are multiples of 8 bytes
            np.add(offsets[lo:hi], shift, out=buf.view(offsets.dtype), casting="unsafe")

        memory = self.offsets.reserve((row + len(chunk) + 1) * width, (row + 1) * width)
        self.stager.put(memory[row * width:(row + len(chunk) + 1) * width], offsets.nbytes, rebased)
        if stop > first:
            data = self.data.reserve(self.data_at + stop - first, self.data_at)
            self.stager.put_bytes(data[self.data_at:self.data_at + stop - first],
                                  np.frombuffer(chunk.buffers()[2], dtype=np.uint8)[first:stop])
        self.data_at += stop - first

    def finish(self) -> GpuColumn:
        """The column: its buffers cut to the rows appended (copies still in
        flight on the stager's stream until its ``finish``)."""
        n = self.rows
        out = GpuColumn(self.type, n, n if pa.types.is_null(self.type) else self.null_count)
        if self.validity is not None and self.null_count and not pa.types.is_null(self.type):
            out.validity = self.validity.memory[:_bitmap_bytes(n)]
        if self.values is not None:
            out.values = self.values.memory[:_bitmap_bytes(n) if self.width == 0 else n * self.width]
        if self.offsets is not None:
            if n == 0:  # one zero offset
                self.stager.put_bytes(self.offsets.memory, np.zeros(1, dtype=np.int64 if self.large else np.int32))
            out.offsets = self.offsets.memory[:(n + 1) * self.offset_width].view(np.int64 if self.large else np.int32)
            out.data = self.data.memory[:self.data_at]
        return out


def _bitmap_bytes(n: int) -> int:
    """Bytes of a bitmap of ``n`` bits, padded to whole ``uint32`` words (the kernels' unit)."""
    return (n + 31) // 32 * 4


def device_zeros(shape: tuple[int, ...], dtype: Any) -> Any:
    """A zeroed GPU array, zeroed by a kernel (no host buffer of zeros copied over)."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape)) * dtype.itemsize
    return _allocate(nbytes, True)[:nbytes].view(dtype).reshape(shape)


def _allocate(nbytes: int, zeroed: bool) -> Any:
    """A GPU byte array (at least one byte: no empty allocations), zeroed on the GPU if asked."""
    from cuda_p2p.kernels import bits

    cuda = runtime.cuda()
    size = max(nbytes + (-nbytes) % 4, 4)
    memory = cuda.device_array(size, dtype=np.uint8)
    if zeroed:
        words = memory.view(np.uint32)
        blocks, threads = runtime.launch_shape(words.shape[0])
        with runtime.KERNEL_TURN:
            bits.zero_words[blocks, threads](words)
    return memory


def _or_bits(bitmap: pa.Buffer, bit0: int, count: int, dst: Any, row: int, stager: PinnedStager) -> None:
    """ORs ``count`` bits of a host bitmap from ``bit0`` into the GPU bitmap ``dst`` at bit ``row``."""
    if count == 0:
        return
    first, last = bit0 // 8, (bit0 + count + 7) // 8
    src = runtime.cuda().device_array(last - first, dtype=np.uint8)
    stager.put_bytes(src, np.frombuffer(bitmap, dtype=np.uint8)[first:last])
    _launch_bits(dst, row, count, src, bit0 - first * 8, stager.stream)


def _launch_bits(dst: Any, row: int, count: int, src: Any = None, src_bit: int = 0, stream: Any = 0) -> None:
    """Sets (``src`` None) or ORs in ``count`` bits of ``dst`` from bit ``row``."""
    from cuda_p2p.kernels import bits

    if count == 0:
        return
    words = dst.view(np.uint32)
    blocks, threads = runtime.launch_shape(count)
    with runtime.KERNEL_TURN:
        if src is None:
            bits.set_bits[blocks, threads, stream](words, row, count)
        else:
            bits.or_bits[blocks, threads, stream](src, src_bit, count, words, row)


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


def _offsets(chunk: pa.Array) -> np.ndarray:
    large = pa.types.is_large_string(chunk.type) or pa.types.is_large_binary(chunk.type)
    dtype = np.int64 if large else np.int32
    return np.frombuffer(chunk.buffers()[1], dtype=dtype)[chunk.offset: chunk.offset + len(chunk) + 1]
