"""Arrow buffers in host memory -> one GPU allocation per column, through pinned staging.

The reader's Table is a chunk per span, each chunk a zero-copy view of the
buffers its executor wrote (host output, or a device task's arena). Here
every column gets its GPU buffers once, at their final size, and every
chunk's buffers are copied into place: through a ring of pinned host
buffers, each copy asynchronous on one CUDA stream, so filling the next
pinned buffer overlaps the DMA of the previous one. Nothing is concatenated
on the host or on the GPU. String offsets are rebased while they are staged
(the staging copy is the only host pass); bitmaps are ORed into place on the
GPU (:mod:`cuda_p2p.kernels.bits`), since chunks start at any bit.

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
    columns = [_column_to_gpu(column, stager) for column in table.columns]
    stager.finish()
    stats.h2d_bytes += stager.copied
    stats.copies += stager.copies
    stats.staging_bytes = staging_bytes * len(stager.buffers)
    stats.seconds += time.perf_counter() - started
    return GpuTable(table.schema, columns, table.num_rows, stats)


def _column_to_gpu(column: pa.ChunkedArray, stager: PinnedStager) -> GpuColumn:
    cuda = runtime.cuda()
    type_, n = column.type, len(column)
    if pa.types.is_dictionary(type_):
        raise NotImplementedError("dictionary columns on the GPU: read them as strings (no auto_dict_encode) "
                                  "or decode with pyarrow after to_arrow()")
    out = GpuColumn(type_, n, column.null_count)
    if pa.types.is_null(type_):
        return out
    if column.null_count:
        out.validity = _zeroed_bitmap(cuda, n)
    width = device_width(type_)
    if width == 0:  # booleans: a bitmap
        out.values = _zeroed_bitmap(cuda, n)
    elif width is not None:
        out.values = _device_bytes(cuda, n * width)
    else:
        large = pa.types.is_large_string(type_) or pa.types.is_large_binary(type_)
        out.offsets = cuda.device_array(n + 1, dtype=np.int64 if large else np.int32)
        data_bytes = sum(_string_extent(chunk)[1] - _string_extent(chunk)[0] for chunk in column.chunks)
        out.data = _device_bytes(cuda, data_bytes)
        if n == 0:
            stager.put_bytes(out.offsets.view(np.uint8), np.zeros(1, dtype=out.offsets.dtype))
    row, data_at = 0, 0
    for chunk in column.chunks:
        _place_validity(chunk, out, row, stager)
        if width == 0:
            _or_bits(chunk.buffers()[1], chunk.offset, len(chunk), out.values, row, stager)
        elif width is not None:
            values = np.frombuffer(chunk.buffers()[1], dtype=np.uint8)
            first = chunk.offset * width
            stager.put_bytes(out.values[row * width:(row + len(chunk)) * width], values[first:first + len(chunk) * width])
        else:
            data_at = _place_strings(chunk, out, row, data_at, stager)
        row += len(chunk)
    return out


def _device_bytes(cuda: Any, n: int) -> Any:
    """``n`` bytes of GPU memory (a view of one byte when ``n`` is 0: no empty allocations)."""
    return cuda.device_array(max(n, 1), dtype=np.uint8)[:n]


def _zeroed_bitmap(cuda: Any, n: int) -> Any:
    """A zeroed bitmap of ``n`` bits as bytes, padded to whole ``uint32`` words
    (Arrow takes a buffer longer than it needs; the kernels take the words)."""
    return cuda.to_device(np.zeros(max((n + 31) // 32, 1), dtype=np.uint32)).view(np.uint8)


def _place_validity(chunk: pa.Array, out: GpuColumn, row: int, stager: PinnedStager) -> None:
    if out.validity is None:
        return
    bitmap = chunk.buffers()[0]
    if bitmap is None:  # every value of this chunk is valid
        _launch_bits(out.validity, row, len(chunk), stream=stager.stream)
    else:
        _or_bits(bitmap, chunk.offset, len(chunk), out.validity, row, stager)


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


def _string_extent(chunk: pa.Array) -> tuple[int, int]:
    """The chunk's bytes in its data buffer: ``(first, stop)``."""
    offsets = _offsets(chunk)
    return (int(offsets[0]), int(offsets[-1])) if len(offsets) else (0, 0)


def _offsets(chunk: pa.Array) -> np.ndarray:
    large = pa.types.is_large_string(chunk.type) or pa.types.is_large_binary(chunk.type)
    dtype = np.int64 if large else np.int32
    return np.frombuffer(chunk.buffers()[1], dtype=dtype)[chunk.offset: chunk.offset + len(chunk) + 1]


def _place_strings(chunk: pa.Array, out: GpuColumn, row: int, data_at: int, stager: PinnedStager) -> int:
    """Copies a string chunk's offsets (rebased to ``data_at``) and bytes; returns the next data position."""
    offsets = _offsets(chunk)
    first, stop = _string_extent(chunk)
    shift = data_at - first
    width = offsets.dtype.itemsize

    def rebased(buf: np.ndarray, start: int, end: int) -> None:
        lo, hi = start // width, end // width  # whole offsets: pieces are multiples of 8 bytes
        np.add(offsets[lo:hi], shift, out=buf.view(offsets.dtype), casting="unsafe")

    dst = out.offsets.view(np.uint8)[row * width:(row + len(chunk) + 1) * width]
    stager.put(dst, offsets.nbytes, rebased)
    if stop > first:
        data = np.frombuffer(chunk.buffers()[2], dtype=np.uint8)[first:stop]
        stager.put_bytes(out.data[data_at:data_at + stop - first], data)
    return data_at + stop - first
