"""Cutting a byte stream into spans that end at line breaks.

Blocks are read in order; each span is the unparsed tail of the previous one
plus a new block, cut after its last line break. A cut may land inside a
quoted field; the tokenizer detects that, and :func:`recut` joins
the tail to the following span. Spans never depend on anything but the block
size, and the parse result never depends on the spans.

A span that a computational storage device will parse from the file's pages
itself need not be read by the host at all: only the cut matters, and the
last line break of a block lies in its last few KiB. Such a span is
*unread*: its bytes are read only if something asks for them (an error to
locate, a cut inside quotes to join).
"""
from __future__ import annotations

from typing import Callable, Iterator

import numpy as np

from arrow_bridge.kernels.tokenizer import CR, LF, last_line_break_end
from arrow_bridge.source import ByteSource

MAX_SPAN = (1 << 31) - 1  # field positions are int32
_CUT_WINDOW = 64 << 10  # bytes read to find an unread span's cut
NO_BYTES = np.empty(0, dtype=np.uint8)


class Span:
    """Bytes ``buf`` starting at ``offset`` in the file; ``at_eof`` for the last.

    ``block`` is the pooled buffer ``buf`` lies in, if any. An unread span
    (:meth:`unread`) reads its bytes from its source on first use of ``buf``.
    """

    def __init__(self, buf: np.ndarray, offset: int, at_eof: bool, index: int = 0,
                 block: np.ndarray | None = None):
        self._buf, self.length = buf, len(buf)
        self.offset, self.at_eof, self.index, self.block = offset, at_eof, index, block
        self._source: ByteSource | None = None

    @classmethod
    def unread(cls, source: ByteSource, offset: int, length: int, at_eof: bool, index: int,
               block: np.ndarray | None = None) -> "Span":
        """The ``length`` bytes at ``offset`` of a random-access ``source``, not
        read yet (into ``block``, when given, on first use)."""
        span = cls(NO_BYTES, offset, at_eof, index, block)
        span._source, span.length = source, length
        return span

    @property
    def is_read(self) -> bool:
        """Whether the span's bytes are in memory."""
        return self._source is None

    def __repr__(self) -> str:
        state = "read" if self.is_read else "unread"
        return f"Span(offset={self.offset}, length={self.length}, at_eof={self.at_eof}, index={self.index}, {state})"

    @property
    def buf(self) -> np.ndarray:
        """The span's bytes; an unread span reads them on first use (:meth:`read`)."""
        return self.read()

    def read(self) -> np.ndarray:
        """The span's bytes, read now in the calling thread if they were not yet
        (two threads asking at once may both read: harmless, ``_buf`` is set
        before ``_source`` is cleared)."""
        if self._source is not None:
            into = self.block[:self.length] if self.block is not None else None
            self._buf, self._source = self._source.read_range(self.offset, self.length, into), None
        return self._buf


def concat(head: np.ndarray, tail: np.ndarray) -> np.ndarray:
    """A new byte array: ``head`` then ``tail``.

    >>> concat(np.frombuffer(b"ab", np.uint8), np.frombuffer(b"c", np.uint8)).tobytes()
    b'abc'
    """
    out = np.empty(len(head) + len(tail), dtype=np.uint8)
    out[: len(head)] = head
    out[len(head):] = tail
    return out


class SpanCutter:
    """Yields spans of about ``block_size`` bytes from ``source``, starting with
    ``prefix`` (bytes already read) at file offset ``offset``.

    ``prefix_span=True`` makes the prefix (cut at its last line break) the
    first span by itself, however short. ``first_block_end`` (a stream's) makes
    the first span the source's bytes up to that offset, cut at their last line
    break: pyarrow's first block, whose rows its stream infers the types from.

    ``left_unread(offset)`` says whether the span starting at ``offset`` will
    be read where it is parsed (by a device from the file, or by the host
    thread parsing it): such spans are cut from the last bytes of their block
    only and yielded unread (random-access sources only). Either way the cuts
    are the same. ``pooled_unread``: those spans are read into the pooled
    blocks (:meth:`recycle`), as where the host reads them.

    >>> from arrow_bridge.source import open_source
    >>> with open_source(b"a,1\\nbb,2\\nccc,3\\n") as src:
    ...     [(span.offset, span.buf.tobytes()) for span in SpanCutter(src, 6, np.empty(0, np.uint8), 0, False)]
    [(0, b'a,1\\n'), (4, b'bb,2\\n'), (9, b'ccc,3\\n')]
    """

    def __init__(self, source: ByteSource, block_size: int, prefix: np.ndarray, offset: int, eof: bool,
                 left_unread: Callable[[int], bool] | None = None, prefix_span: bool = False,
                 pooled_unread: bool = False, first_block_end: int | None = None):
        self._source = source
        self._prefix_span = prefix_span
        self._first_block_end = first_block_end  # None once the first block is cut
        self._read_past_first_block = 0
        self._block_size = block_size
        self._carry = prefix
        self._offset = offset
        self._read_to = offset + len(prefix)  # the carry is [offset, read_to)
        self._eof = eof
        self._count = 0
        self._free: list[np.ndarray] = []
        self._left_unread = left_unread if source.random_access else None
        self._pooled_unread = pooled_unread

    def recycle(self, span: Span) -> None:
        """Hands a consumed span's block back for reuse.

        Reading into fresh memory costs a page fault per 4 KiB (measured: the
        reading thread spent 1 s of a 2 s lineitem SF1 read in them); a few
        blocks reused round-robin stay mapped.
        """
        if span.block is not None and len(self._free) < 8:
            block = span.block
            self._free.append(block.base if block.base is not None else block)
            span.block = None

    def _block(self, size: int) -> np.ndarray:
        while self._free:
            block = self._free.pop()
            if len(block) >= size:
                return block[:size]
        # Room for a carried partial record too, so that blocks fit again.
        return np.empty(size + (self._block_size >> 4) + 4096, dtype=np.uint8)[:size]

    def __iter__(self) -> Iterator[Span]:
        while True:
            span = self._next()
            yield span
            if span.at_eof:
                return

    def _next(self) -> Span:
        if self._prefix_span and self._count == 0 and len(self._carry) and not self._eof:
            # The preamble's read-ahead is a span of its own: the first span is parsed before the
            # types are known (the general path, several times slower), so it should stay small.
            cut = last_line_break_end(self._carry, 0, len(self._carry))
            if cut > 0:
                buf, self._carry = self._carry[:cut], self._carry[cut:]
                return self._emit(buf, at_eof=False)
        if self._first_block_end is not None:
            span = self._first_block()
            self._first_block_end = None
            if span is not None:
                return span
        if self._left_unread is not None and not self._eof and self._left_unread(self._offset):
            span = self._next_unread()
            if span is not None:
                return span
        # The carry lies in the previous span's block, which may come back
        # through recycle() before this block is filled: copy it out first.
        buf = self._carry.copy() if len(self._carry) else self._carry
        block = None
        scan_from = 0  # the carry may hold line breaks (the preamble's read-ahead)
        while not self._eof:
            # pyarrow's next block ends block_size bytes after its first: bytes read past that count
            want, self._read_past_first_block = max(self._block_size - self._read_past_first_block, 0), 0
            size = len(buf) + want
            if block is None or len(block) < size:
                block = self._grown(block, buf, size)
            # Exactly one block per step, whatever the room: the cuts must not depend on it.
            n = self._read(block[len(buf): size])
            buf = block[: len(buf) + n]
            self._eof = n < want
            cut = -1 if self._eof else last_line_break_end(buf, scan_from, len(buf))
            if cut > 0:
                self._carry = buf[cut:]
                return self._emit(buf[:cut], at_eof=False, block=block)
            if len(buf) > MAX_SPAN:
                raise ValueError(f"{self._source.name}: a record is larger than 2 GiB")
            # No line break before the last byte; a CR there is one once the next byte is read.
            scan_from = len(buf) - 1
        self._carry = buf[:0]
        return self._emit(buf, at_eof=True, block=block)

    def first_block_again(self, end: int) -> None:
        """Cuts the next span as a first block ending at ``end``: pyarrow's first block
        held no rows, and its stream takes the types from the next block."""
        self._first_block_end = end

    def _first_block(self) -> Span | None:
        """The first span up to ``first_block_end``, cut at its last line break; None
        (nothing consumed) where no line break lies before it: cut as any span then."""
        room = self._first_block_end - self._offset
        if room <= 0:
            return None
        buf, block = self._carry, None
        want = room + 1  # a byte past the block: whether a CR that ends it starts a CRLF
        if len(buf) < want and not self._eof:
            block = self._block(want)
            block[: len(buf)] = buf
            n = self._read(block[len(buf): want])
            self._eof = n < want - len(buf)
            buf = self._carry = block[: len(buf) + n]
        self._read_past_first_block = max(self._read_to - self._first_block_end, 0)
        if self._eof and len(buf) <= room:
            self._carry = buf[:0]
            return self._emit(buf, at_eof=True, block=block)
        end = min(room, len(buf))
        if end < len(buf) and buf[end - 1] == CR:  # a line end, as pyarrow's chunker takes it (its LF too)
            cut = end + int(buf[end] == LF)
        else:
            cut = last_line_break_end(buf, 0, end)
        if cut <= 0:
            return None
        self._carry = buf[cut:]
        return self._emit(buf[:cut], at_eof=False, block=block)

    def _grown(self, block: np.ndarray | None, buf: np.ndarray, size: int) -> np.ndarray:
        """A block of at least ``size`` bytes starting with ``buf`` (which lies
        in ``block``, if given; that one goes back to the pool).

        Room doubles, so a record of many blocks is copied O(1) times per
        byte instead of once per block read (quadratic in its length).
        """
        grown = self._block(max(size, 2 * len(buf)))
        grown[: len(buf)] = buf
        if block is not None:
            self._free.append(block.base if block.base is not None else block)
        return grown

    def _read(self, into: np.ndarray) -> int:
        # With unread spans the source's own position is skipped past: read by offset.
        if self._left_unread is None:
            n = self._source.readinto(into)
        else:
            n = self._source.readinto_at(into, self._read_to)
        self._read_to += n
        return n

    def _next_unread(self) -> Span | None:
        """The next span, cut from the last bytes of its block and not read;
        the rest of the file, unread, when it ends in this block; None
        (nothing consumed) when no line break lies in those bytes or the
        file's size is not known: the span is then read as usual."""
        end = self._read_to + self._block_size
        size = self._source.size
        if size is not None and self._offset < size < end:  # (at == end a read span is cut as any other)
            # The last span: the thread parsing it reads it too, rather than the driver before handing it
            # out (a 1 MB read on 2 threads: 0.3 ms on the driver, half the file). It ends at the size
            # the file had when opened: a read covers the file as it was then, not what a writer adds.
            self._carry, self._read_to, self._eof = NO_BYTES, size, True
            block = self._block(size - self._offset) if self._pooled_unread else None
            return self._advance(Span.unread(self._source, self._offset, size - self._offset, True, self._count,
                                             block))
        window = min(_CUT_WINDOW, end - self._offset)
        tail = self._source.read_range(end - window, window)
        if len(tail) < window:
            return None
        cut = last_line_break_end(tail, 0, window)
        if cut <= 0:
            return None
        self._carry, self._read_to = tail[cut:], end
        length = end - window + cut - self._offset
        block = self._block(length) if self._pooled_unread else None
        return self._advance(Span.unread(self._source, self._offset, length, False, self._count, block))

    def _emit(self, buf: np.ndarray, at_eof: bool, block: np.ndarray | None = None) -> Span:
        return self._advance(Span(buf, self._offset, at_eof, self._count, block))

    def _advance(self, span: Span) -> Span:
        self._offset += span.length
        self._count += 1
        return span


def recut(span: Span, parsed: int, following: Span, source: ByteSource) -> Span:
    """The span that continues after a cut inside a record: ``span``'s tail
    from ``parsed`` on joined to the span that followed it. Left unread where
    either was (a device may parse it from the file)."""
    offset, length = span.offset + parsed, span.length - parsed + following.length
    if not (span.is_read and following.is_read):
        return Span.unread(source, offset, length, following.at_eof, following.index)
    return Span(concat(span.buf[parsed:], following.buf), offset, following.at_eof, following.index)
