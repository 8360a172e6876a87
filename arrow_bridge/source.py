"""Byte sources: local paths (read by the C++ engine), file objects, fsspec URLs.

The reader pulls fixed-size blocks in order and, rarely (a type widened after
the fact, or an error to locate), re-reads a byte range. Sources that cannot
seek keep nothing extra here; the reader retains what it may need instead.

The reader parses UTF-8: text in another encoding is read through a
:class:`TranscodedSource` (decoded block by block), ASCII through an
:class:`AsciiSource` (checked as it is read); :func:`open_source` picks. It
also decompresses (pandas' ``compression=``) and, for pandas' line keywords,
filters the text (:class:`arrow_bridge.line_filters.LineFilterSource`).
"""
from __future__ import annotations

import bisect
import bz2
import gzip
import io
import lzma
import os
import tarfile
import threading
import zipfile
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from typing import IO, Any, Iterable, Iterator, Sequence

import numpy as np

from arrow_bridge.errors import CsvDecodeError, CsvParseError
from arrow_bridge.transcoding import (
    BlockCodec, DecodeFailure, block_codec, check_error_handler, line_breaks, needs_transcoding, normalize_encoding,
    raw_offset,
)
from ndp_core import BlockReader

#: pandas' ``compression="infer"``: a path's suffix and its method (pandas.io.common's table).
COMPRESSION_SUFFIXES = {".tar": "tar", ".tar.gz": "tar", ".tar.bz2": "tar", ".tar.xz": "tar", ".gz": "gzip",
                        ".bz2": "bz2", ".zip": "zip", ".xz": "xz", ".zst": "zstd"}
COMPRESSIONS = ("bz2", "gzip", "tar", "xz", "zip", "zstd")
_FSSPEC_ONLY_SUFFIXES = (".lz4",)  # inferred by fsspec, not by pandas


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
    rewrites: str | None = None  # what rewrites the file's text on its way (None: its own bytes)
    size: int | None = None  # the bytes it yields, where known before reading them
    #: Whether ``readinto_at`` may run in several threads at once, each cheap (a local file's pread).
    parallel_reads: bool = False

    def lines_before_origin(self) -> int:
        """Physical line breaks in the file before :attr:`origin` (for error lines)."""
        return 0

    def relocate(self, err: CsvParseError) -> None:
        """Moves an error (or a warning's) from this source's byte offset to the
        file's; the offsets of a source that rewrites no text are the file's."""

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
    parallel_reads = True

    def __init__(self, path: str):
        self.name = self.path = path
        self._reader = BlockReader(path)
        self._offset = 0
        self.size = self._reader.size

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
        if isinstance(base, TranscodedSource):
            raise ValueError(f"byte_range with encoding={base.codec.encoding!r}: ranges are offsets in the file, "
                             "which the reader sees transcoded to UTF-8; read the whole file, or convert it to UTF-8")
        if base.rewrites:
            raise ValueError(f"byte_range with {base.rewrites}: ranges are offsets in the file, which the reader "
                             "sees rewritten; read the whole file")
        if not base.random_access:
            raise ValueError("byte_range needs a seekable source (a local path or seekable file)")
        if not 0 <= start <= stop:
            raise ValueError(f"byte_range must satisfy 0 <= start <= stop, got ({start}, {stop})")
        self.name, self.path, self.parallel_reads = base.name, base.path, base.parallel_reads
        self.origin = start
        self._base, self._length, self._pos = base, stop - start, 0
        self.size = stop - start
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
            self._lines_before = _count_lines(self._base, self.origin)
        return self._lines_before

    def close(self) -> None:
        self._base.close()


def _count_lines(base: ByteSource, stop: int) -> int:
    """Physical line breaks in bytes ``[0, stop)`` of a random-access source."""
    from arrow_bridge.kernels.tokenizer import count_line_breaks

    lines, pos, block = 0, 0, 1 << 24
    while pos < stop:
        chunk = base.read_range(pos, min(block, stop - pos))
        if not len(chunk):
            break
        # A CR ending one chunk and an LF starting the next are one break.
        lines += count_line_breaks(chunk, 0, len(chunk))
        if chunk[-1] == 13 and pos + len(chunk) < stop and base.read_range(pos + len(chunk), 1)[0] == 10:
            lines -= 1
        pos += len(chunk)
    return lines


class FileObjectSource(ByteSource):
    """A binary file object (``io.BytesIO``, an open file, an fsspec file)."""

    def __init__(self, fileobj: IO[bytes], name: str | None = None, owned: bool = False,
                 closes: Sequence[Any] = ()):
        self.name = name or getattr(fileobj, "name", None) or f"<{type(fileobj).__name__}>"
        self._file = fileobj
        self._owned = owned
        self._closes = list(closes)  # what it was opened through (a decompressor's file, an archive)
        self._start = fileobj.tell() if is_seekable(fileobj) else 0
        self.random_access = is_seekable(fileobj)

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
        while self._closes:
            self._closes.pop().close()


class AsciiSource(ByteSource):
    """ASCII text (``encoding="ascii"``): UTF-8 already, so read as it is, each
    byte checked to be below 0x80 (a :class:`CsvDecodeError` names the first
    that is not), as pandas and pyarrow refuse them.

    >>> with AsciiSource(open_source(b"a,b\\n1,\\xe9\\n")) as src:
    ...     src.read_block(1 << 20)
    Traceback (most recent call last):
    ...
    arrow_bridge.errors.CsvDecodeError: <bytes>:2: cannot decode b'\\xe9' as ascii: ordinal not in range(128) (byte offset 6)
    """

    def __init__(self, base: ByteSource):
        self._base = base
        self.name, self.path, self.random_access = base.name, base.path, base.random_access
        self._pos, self._lines, self._after_cr = 0, 0, False  # sequential reads, lines counted for pipes

    def readinto(self, buf: np.ndarray) -> int:
        n = self._base.readinto(buf)
        self._check(buf[:n], self._pos)
        if not self.random_access and n:  # an error's line cannot be counted again later
            self._lines += line_breaks(buf[:n], self._after_cr)
            self._after_cr = buf[n - 1] == 13
        self._pos += n
        return n

    def readinto_at(self, buf: np.ndarray, offset: int) -> int:
        n = self._base.readinto_at(buf, offset)
        self._check(buf[:n], offset)
        return n

    def _check(self, data: np.ndarray, offset: int) -> None:
        if len(data) and data.max() >= 0x80:
            at = int(np.argmax(data >= 0x80))
            if self.random_access:
                lines = _count_lines(self._base, offset + at)
            else:
                lines = self._lines + line_breaks(data[:at], self._after_cr)
            raise CsvDecodeError(self.name, 1 + lines, offset + at, "ascii", bytes(data[at: at + 1]),
                                 "ordinal not in range(128)")

    def close(self) -> None:
        self._base.close()


class TranscodedSource(ByteSource):
    """Text in another encoding, read as UTF-8 (what the reader parses).

    The base is read in raw blocks of ``block_size`` bytes, in order; each is
    decoded (:mod:`arrow_bridge.transcoding`) and handed on as UTF-8, so memory
    holds the blocks in flight only. A single-byte codec's blocks are
    transcoded ``threads`` at a time, ahead of the reader (by default one,
    inline, on two cores or fewer: see :func:`_transcoding_threads`).

    Per block the source remembers where it starts in both streams and the
    decoder's state there: with a random-access base it re-reads any UTF-8
    range (:meth:`readinto_at`, by decoding again from the block's start), and
    :meth:`file_offset` maps a UTF-8 offset back to the file.
    :class:`CsvParseError`s raised inside its ``with`` block are moved there
    (:meth:`relocate`): errors name offsets in the file as given. Line numbers
    need no mapping (every codec decodes a line break as one). Under
    ``"strict"``, undecodable bytes raise :class:`CsvDecodeError` (a
    ``UnicodeDecodeError`` too, as pandas raises) with the file's offset.

    ``path`` is None: a device reads the file's raw pages, not this text.

    >>> raw = "a,b\\n1,caf\\u00e9\\n".encode("utf-16")  # a BOM, then 2 bytes a character
    >>> with TranscodedSource(open_source(raw), "utf-16") as src:
    ...     src.read_block(100).tobytes(), src.file_offset(9)  # 'é': after 9 one-byte characters
    (b'a,b\\n1,caf\\xc3\\xa9\\n', 20)
    """

    path = None

    def __init__(self, base: ByteSource, encoding: str, errors: str = "strict", *, block_size: int = 1 << 20,
                 threads: int | None = None, keep: int = 64 << 20):
        self._base = base
        self.name, self.random_access = base.name, base.random_access
        self.codec: BlockCodec = block_codec(normalize_encoding(encoding), check_error_handler(errors))
        self._block_size = block_size
        self._threads = threads or _transcoding_threads(os.cpu_count() or 1)
        # Per block: its UTF-8 offset (``_starts``), and its raw offset with the decoder state there.
        self._starts: list[int] = []
        self._marks: list[tuple[int, Any]] = []
        self._produced = 0  # UTF-8 bytes decoded so far
        # Line breaks in them, for a decode error's line: counted as they go by only where the
        # text cannot be decoded again (counting costs as much as transcoding single-byte text).
        self._lines, self._after_cr = 0, False
        self._ready: deque[tuple[int, np.ndarray]] = deque()  # decoded, not yet read: (UTF-8 offset, bytes)
        self._at = 0  # bytes of the first ready block read
        self._blocks = self._decoded()
        self._lock = threading.RLock()  # the sequential reads, and re-reads from the reader's threads
        self._pool: ThreadPoolExecutor | None = None
        # A base that cannot seek: its latest raw blocks, to place errors in (up to ``keep`` bytes).
        self._keep, self._kept, self._kept_bytes = keep, deque(), 0
        self._relocated: set[int] = set()  # ids of the errors moved to file offsets already

    # ---- reading ------------------------------------------------------------------------------------
    def readinto(self, buf: np.ndarray) -> int:
        total = 0
        with self._lock:
            while total < len(buf):
                if not self._ready and not self._decode_next():
                    break
                block = self._ready[0][1]
                n = min(len(buf) - total, len(block) - self._at)
                buf[total: total + n] = block[self._at: self._at + n]
                total += n
                self._at += n
                if self._at == len(block):
                    self._ready.popleft()
                    self._at = 0
        return total

    def readinto_at(self, buf: np.ndarray, offset: int) -> int:
        if not self.random_access:
            raise io.UnsupportedOperation(f"{self.name}: the file cannot seek")
        with self._lock:
            while self._produced < offset + len(buf) and self._decode_next():
                pass  # decoded ahead of the sequential reads (kept in ``_ready`` for them)
            if self._ready and self._ready[0][0] <= offset and offset + len(buf) <= self._produced:
                return self._copy_ready(buf, offset)  # not read yet: no need to decode it again
        k = bisect.bisect_right(self._starts, offset) - 1
        if k < 0:
            return 0  # an empty file
        at, (raw_at, state) = self._starts[k], self._marks[k]
        filled = 0
        while filled < len(buf):
            raw = self._base.read_range(raw_at, self._block_size)
            final = len(raw) < self._block_size
            out, state = self.codec.decode(raw, state, final)
            lo = max(offset + filled - at, 0)
            n = max(0, min(len(out) - lo, len(buf) - filled))
            buf[filled: filled + n] = out[lo: lo + n]
            filled += n
            at, raw_at = at + len(out), raw_at + len(raw)
            if final:
                break
        return filled

    def _copy_ready(self, buf: np.ndarray, offset: int) -> int:
        return copy_from_blocks(self._ready, buf, offset)

    def _decode_next(self) -> bool:
        """Decodes the next block into ``_ready``; False at the end."""
        with self._lock:
            item = next(self._blocks, None)
            if item is None:
                return False
            raw_at, raw, state, out = item
            self._marks.append((raw_at, state))
            self._starts.append(self._produced)  # after ``_marks``: readers bisect ``_starts``
            self._produced += len(out)
            if not self.random_access:
                self._keep_raw(raw_at, raw)
                if len(out) and self.codec.errors == "strict":
                    self._lines += line_breaks(out, self._after_cr)
                    self._after_cr = out[-1] == 13
            self._ready.append((self._produced - len(out), out))
            return True

    def _decoded(self) -> Iterator[tuple[int, np.ndarray, Any, np.ndarray]]:
        """``(raw offset, raw block, state before it, its UTF-8)`` per block, in order."""
        codec, state, raw_at, at_eof = self.codec, self.codec.start_state, 0, False
        parallel = codec.stateless and self._threads > 1
        if parallel:
            self._pool = ThreadPoolExecutor(self._threads, thread_name_prefix="ndp-transcode")
        ahead: deque = deque()
        while True:
            while not at_eof and len(ahead) < (2 * self._threads if parallel else 1):
                raw = self._base.read_block(self._block_size)
                at_eof = len(raw) < self._block_size
                job = self._pool.submit(codec.decode, raw, None, at_eof) if parallel else None
                ahead.append((raw_at, raw, at_eof, job))
                raw_at += len(raw)
            if not ahead:
                return
            start, raw, final, job = ahead.popleft()
            try:
                out, after = job.result() if job is not None else codec.decode(raw, state, final)
            except DecodeFailure as failure:
                raise self._decode_error(failure, start, raw, state) from None
            yield start, raw, state, out
            state = after

    def _decode_error(self, failure: DecodeFailure, raw_at: int, raw: np.ndarray, state: Any) -> CsvDecodeError:
        held = self.codec.held_bytes(state)  # ``failure`` counts from the block: the held bytes come before
        bad = (held + bytes(raw[: max(failure.end, 0)]))[len(held) + failure.start: len(held) + failure.end]
        lines, after_cr = self._lines_so_far()
        line = 1 + lines + line_breaks(failure.good, after_cr)
        return CsvDecodeError(self.name, line, raw_at + failure.start, self.codec.encoding, bad, failure.reason)

    def _lines_so_far(self) -> tuple[int, bool]:
        """Line breaks in the text decoded so far, and whether it ends with a CR:
        counted again from the start (once, for an error) where the base can seek."""
        if not self.random_access:
            return self._lines, self._after_cr
        lines, after_cr = 0, False
        for raw_at, state in self._marks:
            raw = self._base.read_range(raw_at, self._block_size)
            out, _ = self.codec.decode(raw, state, len(raw) < self._block_size)
            if len(out):
                lines += line_breaks(out, after_cr)
                after_cr = out[-1] == 13
        return lines, after_cr

    def _keep_raw(self, raw_at: int, raw: np.ndarray) -> None:
        self._kept.append((raw_at, raw))
        self._kept_bytes += len(raw)
        while self._kept_bytes > self._keep and len(self._kept) > 1:
            self._kept_bytes -= len(self._kept.popleft()[1])

    # ---- offsets in the file ------------------------------------------------------------------------
    def file_offset(self, offset: int) -> int | None:
        """The file offset of the character at UTF-8 ``offset``; None when its
        block is no longer at hand (a base that cannot seek, ``keep`` bytes
        back), after which :meth:`block_offset` gives its block's start."""
        k = bisect.bisect_right(self._starts, offset) - 1
        if k < 0:
            return 0
        raw_at, state = self._marks[k]
        raw = self._raw_block(raw_at)
        if raw is None:
            return None
        final = len(raw) < self._block_size
        return raw_at + raw_offset(self.codec, raw, state, final, offset - self._starts[k])

    def block_offset(self, offset: int) -> int:
        """The file offset of the start of the block holding UTF-8 ``offset``."""
        k = max(bisect.bisect_right(self._starts, offset) - 1, 0)
        return self._marks[k][0] if self._marks else 0

    def _raw_block(self, raw_at: int) -> np.ndarray | None:
        if self.random_access:
            return self._base.read_range(raw_at, self._block_size)
        return next((raw for at, raw in self._kept if at == raw_at), None)

    def relocate(self, err: CsvParseError) -> None:
        """Moves a reader's error from its UTF-8 offset to the file's (once)."""
        if isinstance(err, CsvDecodeError) or err.byte_offset is None or id(err) in self._relocated:
            return  # a decode error names the file's offset already
        self._relocated.add(id(err))
        offset = self.file_offset(err.byte_offset)
        if offset is None:
            block = self.block_offset(err.byte_offset)
            err.move_to(block, f" (in the {self._block_size}-byte block at this offset: "
                               "the exact offset is no longer known)")
        else:
            err.move_to(offset)

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        if isinstance(exc, CsvParseError):
            self.relocate(exc)
        self.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        self._blocks.close()
        self._base.close()


def copy_from_blocks(blocks: Iterable[tuple[int, np.ndarray]], buf: np.ndarray, offset: int) -> int:
    """Fills ``buf`` with the bytes from ``offset`` on out of consecutive
    ``(start, block)`` pieces (a wrapping source's blocks made ahead); the count copied.

    >>> buf = np.zeros(3, np.uint8)
    >>> copy_from_blocks([(0, np.frombuffer(b"ab", np.uint8)), (2, np.frombuffer(b"cd", np.uint8))], buf, 1), buf.tobytes()
    (3, b'bcd')
    """
    filled = 0
    for start, block in blocks:
        lo = offset + filled - start
        if 0 <= lo < len(block):
            n = min(len(block) - lo, len(buf) - filled)
            buf[filled: filled + n] = block[lo: lo + n]
            filled += n
    return filled


def _transcoding_threads(cores: int) -> int:
    """Threads transcoding a single-byte codec's blocks ahead of the reader.

    Inline (one) on two cores or fewer: the reader's parse threads keep them
    busy and its main thread, which transcodes inline, mostly waits on them;
    a pool only competed there (lineitem 100 MB, latin-1, ``n_threads=2`` on 2
    cores: 0.30 s inline, 0.33 s with 2 pool threads, 0.34 s with 4). With more
    cores the parse threads outrun one transcoding thread (about 1.6 GB/s
    inline, the kernel alone 2 GB/s a core): half of them, up to 4.

    >>> _transcoding_threads(2), _transcoding_threads(16)
    (1, 4)
    """
    return 1 if cores <= 2 else min(4, cores // 2)


def decoded_source(src: ByteSource, encoding: str = "utf-8", encoding_errors: str = "strict",
                   for_device: bool = False) -> ByteSource:
    """``src`` as the UTF-8 the reader parses: as it is (UTF-8; ASCII, checked),
    or transcoded (:class:`TranscodedSource`).

    ``for_device``: a device will parse the file's raw pages, which must then
    be UTF-8 (or ASCII, taken as it is); other encodings raise ``ValueError``.

    >>> decoded_source(open_source(b"a\\n\\xe9\\n"), "latin-1").read_block(10).tobytes()
    b'a\\n\\xc3\\xa9\\n'
    """
    encoding, errors = _checked_encoding(encoding, encoding_errors, for_device)
    if not needs_transcoding(encoding, errors):
        return AsciiSource(src) if encoding == "ascii" and not for_device else src
    return TranscodedSource(src, encoding, errors)


def _checked_encoding(encoding: str, errors: str, for_device: bool) -> tuple[str, str]:
    """The normalized encoding and error handler; ``ValueError`` when a device
    would parse raw pages that are not UTF-8."""
    encoding, errors = normalize_encoding(encoding), check_error_handler(errors)
    if for_device and needs_transcoding(encoding, errors):
        raise ValueError(f"encoding={encoding!r} (encoding_errors={errors!r}) needs the text transcoded on the "
                         "host, but a device parses the file's raw pages as UTF-8: read it on the host "
                         "(split='host'), or convert the file to UTF-8")
    return encoding, errors


def is_seekable(fileobj: Any) -> bool:
    """Whether a file object can seek (a closed or odd one: no)."""
    try:
        return bool(fileobj.seekable())
    except (AttributeError, ValueError, OSError):
        return False


class OpeningOptions(dict):
    """``storage_options`` (the dict fsspec gets) that also say how to turn the
    file into the reader's text: ``compression`` (pandas' keyword) and
    ``line_rules`` (pandas' line keywords, an :class:`arrow_bridge.line_filters.LineRules`
    that :func:`arrow_bridge.line_filters.filtered_source` applies to the opened source).

    :func:`arrow_bridge.pandas_frame.split_keywords` passes pandas' keywords
    this way, through ``read_csv``'s ``storage_options``, which reach
    :func:`open_source` untouched; fsspec sees only the dict's items.

    >>> options = OpeningOptions({"anon": True}, compression="gzip")
    >>> dict(options), options.compression
    ({'anon': True}, 'gzip')
    """

    def __init__(self, storage_options: dict[str, Any] | None = None, *, compression: Any = "infer",
                 line_rules: Any = None):
        super().__init__(storage_options or {})
        self.compression, self.line_rules = compression, line_rules

    def __repr__(self) -> str:
        return f"OpeningOptions({dict(self)!r}, compression={self.compression!r}, line_rules={self.line_rules!r})"


def open_source(source: Any, storage_options: dict[str, Any] | None = None, *, encoding: str = "utf-8",
                encoding_errors: str = "strict", for_device: bool = False, compression: Any = "infer"
                ) -> ByteSource:
    """A :class:`ByteSource` for a path, a binary file object or an fsspec URL,
    giving the reader UTF-8 (:func:`decoded_source`: text in ``encoding`` is
    transcoded, undecodable bytes handled as ``encoding_errors`` says).

    Compressed files (``.gz``, ``.bz2``, ...) and URLs with a protocol go
    through fsspec, which gets ``storage_options`` (credentials, endpoint,
    ...); plain local paths through the C++ block reader. ``compression``
    is pandas': ``"infer"`` (from a path's suffix; file objects are read as
    they are), ``None``, ``"gzip"``, ``"bz2"``, ``"zip"``, ``"xz"``,
    ``"zstd"``, ``"tar"`` or a dict with ``"method"`` and the decompressor's
    keywords; :class:`OpeningOptions` as ``storage_options`` bring it.

    >>> import fsspec
    >>> fsspec.filesystem("memory").pipe("/docs/data.csv", b"a\\n1\\n")
    >>> with open_source("memory://docs/data.csv") as src:
    ...     src.name, src.read_block(1 << 20).tobytes()
    ('memory://docs/data.csv', b'a\\n1\\n')
    >>> fsspec.filesystem("memory").rm("/docs/data.csv")
    >>> import gzip
    >>> with open_source(io.BytesIO(gzip.compress(b"a\\n1\\n")), compression="gzip") as src:
    ...     src.read_block(1 << 20).tobytes()
    b'a\\n1\\n'
    """
    if isinstance(storage_options, OpeningOptions):
        compression = storage_options.compression
    if isinstance(source, io.StringIO):  # pandas' in-memory text: its rest as UTF-8 (an encoding= is moot, as there)
        if compression not in (None, "infer"):
            raise ValueError(f"compression={compression!r} needs a binary source, not an io.StringIO")
        source = FileObjectSource(io.BytesIO(source.read().encode("utf-8")), name="<StringIO>")
        encoding = "utf-8"
    _checked_encoding(encoding, encoding_errors, for_device)  # fail before opening anything
    method, arguments = compression_method(compression)
    return decoded_source(_open_bytes(source, storage_options, method, arguments), encoding, encoding_errors,
                          for_device)


def compression_method(compression: Any) -> tuple[str | None, dict[str, Any]]:
    """pandas' ``compression`` as ``(method, the decompressor's keywords)``;
    the method is ``"infer"``, None or one of :data:`COMPRESSIONS`.

    >>> compression_method({"method": "zip", "metadata_encoding": "cp437"}), compression_method(None)
    (('zip', {'metadata_encoding': 'cp437'}), (None, {}))
    """
    arguments: dict[str, Any] = {}
    if isinstance(compression, dict):
        arguments = dict(compression)
        compression = arguments.pop("method", None)
    if compression is None or compression == "infer" or compression in COMPRESSIONS:
        return compression, arguments
    raise ValueError(f"Unrecognized compression type: {compression}\nValid compression types are "
                     f"{['infer', None, *COMPRESSIONS]}")  # pandas' words


def inferred_compression(path: str) -> str | None:
    """The method ``compression="infer"`` picks for ``path`` (pandas' suffixes).

    >>> inferred_compression("x.csv.gz"), inferred_compression("x.tar.gz"), inferred_compression("x.csv")
    ('gzip', 'tar', None)
    """
    lowered = path.lower()
    for suffix, method in sorted(COMPRESSION_SUFFIXES.items(), key=lambda item: -len(item[0])):
        if lowered.endswith(suffix):
            return method
    return None

def bytes_to_parse(source: Any, byte_range: tuple[int, int] | None) -> int | None:
    """How many bytes a read of ``source`` parses, where that is known without
    reading it: a byte range, or an uncompressed local file (None otherwise).

    >>> bytes_to_parse("data.csv.gz", None) is None, bytes_to_parse("x", (100, 250))
    (True, 150)
    """
    if byte_range is not None:
        return byte_range[1] - byte_range[0]
    if not isinstance(source, (str, os.PathLike)) or not os.path.isfile(source):
        return None
    return None if inferred_compression(os.fspath(source)) else os.path.getsize(source)


def _open_bytes(source: Any, storage_options: dict[str, Any] | None, method: str | None = "infer",
                arguments: dict[str, Any] | None = None) -> ByteSource:
    if isinstance(source, ByteSource):
        return source
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if method == "infer":
            method = inferred_compression(path)
            if method is None and path.endswith(_FSSPEC_ONLY_SUFFIXES):
                method = "fsspec"
        if "://" in path or method is not None:
            import fsspec

            fileobj = fsspec.open(path, "rb", compression="infer" if method == "fsspec" else None,
                                  **dict(storage_options or {})).open()
            if method is None or method == "fsspec":
                return FileObjectSource(fileobj, name=path, owned=True)
            return _decompressed_source(fileobj, method, arguments or {}, path, owns_file=True)
        return PathSource(path)
    if isinstance(source, (bytes, bytearray, memoryview)):
        source = io.BytesIO(bytes(source))
        name = "<bytes>"
    elif isinstance(source, io.TextIOBase):
        raise TypeError("open the file in binary mode ('rb') and give its encoding=: the reader decodes the text "
                        "itself (an io.StringIO is read as it is)")
    elif hasattr(source, "read"):
        name = None
    else:
        raise TypeError(f"cannot read CSV from {type(source).__name__}: give a path, URL or binary file")
    if method is None or method == "infer":  # pandas infers from paths only
        return FileObjectSource(source, name=name)
    return _decompressed_source(source, method, arguments or {}, name, owns_file=False)


def _decompressed_source(fileobj: IO[bytes], method: str, arguments: dict[str, Any], name: str | None,
                         owns_file: bool) -> ByteSource:
    """The decompressed bytes of ``fileobj`` (``method`` one of :data:`COMPRESSIONS`), as pandas opens them:
    an archive (zip, tar) must hold exactly one file."""
    name = name or getattr(fileobj, "name", None) or f"<{type(fileobj).__name__}>"
    closes: list[Any] = [fileobj] if owns_file else []
    try:
        if method == "gzip":
            return FileObjectSource(gzip.GzipFile(fileobj=fileobj, mode="rb", **arguments), name, True, closes)
        if method == "bz2":
            return FileObjectSource(bz2.BZ2File(fileobj, mode="rb", **arguments), name, True, closes)
        if method == "xz":
            return FileObjectSource(lzma.LZMAFile(fileobj, mode="rb", **arguments), name, True, closes)
        if method == "zstd":
            return FileObjectSource(_zstd_reader(fileobj, arguments), name, True, closes)
        if method == "zip":
            archive = zipfile.ZipFile(fileobj, mode="r", **arguments)
            closes.append(archive)
            return FileObjectSource(archive.open(_only_member(archive.namelist(), "ZIP file", name)), name, True,
                                    closes)
        archive = tarfile.open(fileobj=fileobj, mode="r", **arguments)
        closes.append(archive)
        member = _only_member([m for m in archive.getmembers() if m.isfile()], "TAR archive", name)
        return FileObjectSource(archive.extractfile(member), name, True, closes)
    except BaseException:
        for item in reversed(closes):
            item.close()
        raise


def _only_member(members: list, kind: str, name: str) -> Any:
    """The one file an archive holds, or pandas' ``ValueError``."""
    if len(members) == 1:
        return members[0]
    if not members:
        raise ValueError(f"Zero files found in {kind} {name}")
    names = [getattr(member, "name", member) for member in members]
    if kind == "ZIP file":
        raise ValueError(f"Multiple files found in ZIP file. Only one file per ZIP: {names}")
    raise ValueError(f"Multiple files found in TAR archive. Only one file per TAR archive: {names}")


def _zstd_reader(fileobj: IO[bytes], arguments: dict[str, Any]) -> IO[bytes]:
    """A zstd stream reader (the ``zstandard`` package, as pandas uses)."""
    try:
        import zstandard
    except ImportError as exc:
        raise ImportError("compression='zstd' needs the zstandard package (pandas needs it too): "
                          "pip install zstandard") from exc
    return zstandard.ZstdDecompressor(**arguments).stream_reader(fileobj)
