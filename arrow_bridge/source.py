"""Byte sources: local paths (read by the C++ engine), file objects, fsspec URLs.

The reader pulls fixed-size blocks in order and, rarely (a type widened after
the fact, or an error to locate), re-reads a byte range. Sources that cannot
seek keep nothing extra here; the reader retains what it may need instead.
"""
from __future__ import annotations

import io
import os
from typing import IO, Any

import numpy as np

from ndp_core import BlockReader

_COMPRESSED_SUFFIXES = (".gz", ".bz2", ".xz", ".zst", ".zip", ".lz4")


class ByteSource:
    """Sequential block reads with optional random access.

    >>> with open_source(b"a,b\\n1,2\\n") as src:
    ...     src.read_block(1 << 20).tobytes()
    b'a,b\\n1,2\\n'
    """

    name: str = "<stream>"
    random_access: bool = False
    origin: int = 0  # file offset of this source's first byte (byte ranges)
    path: str | None = None  # the local file, when there is one (devices read it by pages)

    def lines_before_origin(self) -> int:
        """Physical line breaks in the file before :attr:`origin` (for error lines)."""
        return 0

    def readinto(self, buf: np.ndarray) -> int:
        """Fills ``buf`` with the next bytes; returns the count (short at end)."""
        raise NotImplementedError

    def readinto_at(self, buf: np.ndarray, offset: int) -> int:
        """Fills ``buf`` with the bytes at ``offset``; returns the count (short
        at the end). Random-access sources only."""
        raise NotImplementedError

    def read_range(self, offset: int, length: int, out: np.ndarray | None = None) -> np.ndarray:
        """The bytes at ``[offset, offset + length)`` (short at the end), in
        ``out`` when it has room. Random-access sources only."""
        length = max(length, 0)
        buf = out[:length] if out is not None and len(out) >= length else np.empty(length, dtype=np.uint8)
        return buf[: self.readinto_at(buf, offset)]

    def read_block(self, size: int) -> np.ndarray:
        buf = np.empty(size, dtype=np.uint8)
        return buf[: self.readinto(buf)]

    def close(self) -> None:
        pass

    def __enter__(self) -> "ByteSource":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class PathSource(ByteSource):
    """A local file read through ``ndp_core.BlockReader`` (pread, GIL released)."""

    random_access = True

    def __init__(self, path: str):
        self.name = self.path = path
        self._reader = BlockReader(path)
        self._offset = 0

    def readinto(self, buf: np.ndarray) -> int:
        n = self._reader.readinto(buf, self._offset)
        self._offset += n
        return n

    def readinto_at(self, buf: np.ndarray, offset: int) -> int:
        return self._reader.readinto(buf, offset)

    def close(self) -> None:
        self._reader.close()


class RangeSource(ByteSource):
    """Bytes ``[start, stop)`` of a random-access source, read as a file of its own.

    Errors keep file-global positions: :attr:`origin` is ``start`` and the line
    breaks before it are counted only when an error needs them.

    >>> with RangeSource(open_source(b"a,b\\n1,2\\n3,4\\n"), 4, 8) as part:
    ...     part.read_block(1 << 20).tobytes(), part.origin
    (b'1,2\\n', 4)
    """

    random_access = True

    def __init__(self, base: ByteSource, start: int, stop: int):
        if not base.random_access:
            raise ValueError("byte_range needs a seekable source (a local path or seekable file)")
        if not 0 <= start <= stop:
            raise ValueError(f"byte_range must satisfy 0 <= start <= stop, got ({start}, {stop})")
        self.name, self.path = base.name, base.path
        self.origin = start
        self._base, self._length, self._pos = base, stop - start, 0
        self._lines_before: int | None = None

    def readinto(self, buf: np.ndarray) -> int:
        want = min(len(buf), self._length - self._pos)
        n = self._base.readinto_at(buf[:want], self.origin + self._pos) if want > 0 else 0
        self._pos += n
        return n

    def readinto_at(self, buf: np.ndarray, offset: int) -> int:
        want = max(0, min(len(buf), self._length - offset))
        return self._base.readinto_at(buf[:want], self.origin + offset) if want else 0

    def lines_before_origin(self) -> int:
        if self._lines_before is None:  # counted once, on the first error that needs it
            self._lines_before = self._count_lines_before()
        return self._lines_before

    def _count_lines_before(self) -> int:
        from arrow_bridge.kernels.tokenizer import count_line_breaks

        lines, pos, block = 0, 0, 1 << 24
        while pos < self.origin:
            chunk = self._base.read_range(pos, min(block, self.origin - pos))
            if not len(chunk):
                break
            # A CR ending one chunk and an LF starting the next are one break.
            lines += count_line_breaks(chunk, 0, len(chunk))
            if chunk[-1] == 13 and pos + len(chunk) < self.origin and self._base.read_range(pos + len(chunk), 1)[0] == 10:
                lines -= 1
            pos += len(chunk)
        return lines

    def close(self) -> None:
        self._base.close()


class FileObjectSource(ByteSource):
    """A binary file object (``io.BytesIO``, an open file, an fsspec file)."""

    def __init__(self, fileobj: IO[bytes], name: str | None = None, owned: bool = False):
        self.name = name or getattr(fileobj, "name", None) or f"<{type(fileobj).__name__}>"
        self._file = fileobj
        self._owned = owned
        self._start = fileobj.tell() if _seekable(fileobj) else 0
        self.random_access = _seekable(fileobj)

    def readinto(self, buf: np.ndarray) -> int:
        view = memoryview(buf)
        total = 0
        while total < len(buf):
            if hasattr(self._file, "readinto"):
                n = self._file.readinto(view[total:])
            else:
                chunk = self._file.read(len(buf) - total)
                n = len(chunk)
                buf[total : total + n] = np.frombuffer(chunk, dtype=np.uint8)
            if not n:
                break
            total += n
        return total

    def readinto_at(self, buf: np.ndarray, offset: int) -> int:
        here = self._file.tell()  # the sequential reads go on from here
        try:
            self._file.seek(self._start + offset)
            return self.readinto(buf)
        finally:
            self._file.seek(here)

    def close(self) -> None:
        if self._owned:
            self._file.close()


def _seekable(fileobj: Any) -> bool:
    try:
        return bool(fileobj.seekable())
    except (AttributeError, ValueError, OSError):
        return False


def open_source(source: Any, storage_options: dict[str, Any] | None = None) -> ByteSource:
    """A :class:`ByteSource` for a path, a binary file object or an fsspec URL.

    Compressed files (``.gz``, ``.bz2``, ...) and URLs with a protocol go
    through fsspec, which gets ``storage_options`` (credentials, endpoint,
    ...); plain local paths through the C++ block reader.

    >>> import fsspec
    >>> fsspec.filesystem("memory").pipe("/docs/data.csv", b"a\\n1\\n")
    >>> with open_source("memory://docs/data.csv") as src:
    ...     src.name, src.read_block(1 << 20).tobytes()
    ('memory://docs/data.csv', b'a\\n1\\n')
    >>> fsspec.filesystem("memory").rm("/docs/data.csv")
    """
    if isinstance(source, ByteSource):
        return source
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if "://" in path or path.endswith(_COMPRESSED_SUFFIXES):
            import fsspec

            fileobj = fsspec.open(path, "rb", compression="infer", **(storage_options or {})).open()
            return FileObjectSource(fileobj, name=path, owned=True)
        return PathSource(path)
    if isinstance(source, (bytes, bytearray, memoryview)):
        return FileObjectSource(io.BytesIO(bytes(source)), name="<bytes>")
    if isinstance(source, io.TextIOBase):
        raise TypeError("open the file in binary mode ('rb'): the reader decodes UTF-8 itself")
    if hasattr(source, "read"):
        return FileObjectSource(source)
    raise TypeError(f"cannot read CSV from {type(source).__name__}: give a path, URL or binary file")
