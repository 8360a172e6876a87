"""Text in any Python codec, turned into UTF-8 one block at a time.

The reader's kernels parse UTF-8. Input in another encoding goes through a
:class:`BlockCodec` first (:class:`arrow_bridge.source.TranscodedSource`
drives it): each raw block is decoded, with the decoder state carried from the
previous block, and written out as UTF-8.

Two kinds of codec:

* :class:`SingleByteCodec` — every byte is one character whatever comes
  before it, ASCII bytes are ASCII (latin-1, cp1252, the iso-8859 family,
  koi8-r, mac-roman, cp437, ...).
  A 256-entry table of UTF-8 sequences, built from Python's own codec with the
  chosen error handler, is applied by a Numba kernel that releases the GIL:
  blocks are independent, so they may be transcoded in parallel.
* :class:`IncrementalCodec` — everything else (UTF-16/32, UTF-8 with an error
  handler, Shift-JIS, GB18030, ISO-2022, EBCDIC, ...): Python's incremental decoder,
  one block after another, its state (the bytes of a split character, a byte
  order, a shift state) carried over.

Either way :meth:`BlockCodec.decode` is a pure function of a block, the state
before it and whether it is the last, so a block can be decoded again from a
remembered state: how the source re-reads byte ranges and finds where in the
original file an error lies (:func:`raw_offset`).

>>> codec = block_codec("cp1252", "strict")
>>> out, _ = codec.decode(np.frombuffer("caf\\u00e9 \\u20ac5".encode("cp1252"), np.uint8), None, True)
>>> out.tobytes().decode("utf-8")
'café €5'
"""
from __future__ import annotations

import codecs
import functools
from typing import Any

import numpy as np

from arrow_bridge.jit import njit


UTF8_NAMES = ("utf-8", "utf-8-sig")  # the reader's own input: no transcoding (it strips a BOM itself)


def normalize_encoding(encoding: str | None) -> str:
    """The codec's canonical name; ``LookupError`` (as pandas raises) for an
    unknown name or a codec that is not a text encoding (``base64``, ``zlib``).

    >>> normalize_encoding("UTF8"), normalize_encoding("latin-1"), normalize_encoding(None)
    ('utf-8', 'iso8859-1', 'utf-8')
    """
    name = codecs.lookup(encoding or "utf-8").name
    try:
        b"\0".decode(name, "ignore")  # LookupError: "'base64' is not a text encoding; ..."
    except UnicodeError:
        pass  # a text codec that refuses this byte or handler
    return name


def check_error_handler(errors: str) -> str:
    """``errors`` if Python knows the handler (``strict``, ``replace``,
    ``ignore``, ``backslashreplace``, ``surrogateescape``, registered ones), else
    ``LookupError`` as pandas raises.

    >>> check_error_handler("replace")
    'replace'
    """
    if not isinstance(errors, str):
        raise TypeError(f"encoding_errors must be a str, got {type(errors).__name__}")
    codecs.lookup_error(errors)
    return errors


def needs_transcoding(encoding: str, errors: str) -> bool:
    """Whether text in ``encoding`` must be decoded before the reader parses it.

    UTF-8 (with or without BOM) is parsed as it is, and so is ASCII, a subset of
    it, under ``"strict"`` (checked as it is read); any other error handler
    asks for the bytes it does not take to be replaced or dropped.

    >>> needs_transcoding("utf-8", "strict"), needs_transcoding("ascii", "strict")
    (False, False)
    >>> needs_transcoding("utf-8", "replace"), needs_transcoding("utf-16", "strict")
    (True, True)
    """
    return not (errors == "strict" and encoding in (*UTF8_NAMES, "ascii"))


class DecodeFailure(Exception):
    """Bytes a strict codec cannot decode: ``start``/``end`` in the block
    (``start`` < 0 when the bad sequence began in the previous block),
    ``good`` the UTF-8 of what came before it in the block."""

    def __init__(self, start: int, end: int, reason: str, good: np.ndarray):
        super().__init__(reason)
        self.start, self.end, self.reason, self.good = start, end, reason, good


class BlockCodec:
    """Decodes raw blocks to UTF-8 (see the module's docstring)."""

    encoding: str
    errors: str
    stateless: bool = False  # blocks decode independently (in parallel)
    start_state: Any = None

    def decode(self, raw: np.ndarray, state: Any, final: bool) -> tuple[np.ndarray, Any]:
        """``raw``'s UTF-8 after ``state`` and the state after it; bytes of a
        character ``raw`` ends inside are held in the state unless ``final``.
        Raises :class:`DecodeFailure` under ``"strict"``."""
        raise NotImplementedError

    def held_bytes(self, state: Any) -> bytes:
        """The raw bytes ``state`` holds back (the start of a split character)."""
        return b""

    def held(self, state: Any) -> int:
        return len(self.held_bytes(state))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.encoding!r}, {self.errors!r})"


class SingleByteCodec(BlockCodec):
    """One byte, one character: a lookup table applied by :func:`table_transcode`."""

    stateless = True

    def __init__(self, encoding: str, errors: str, table: np.ndarray, lengths: np.ndarray):
        self.encoding, self.errors = encoding, errors
        self.table, self.lengths = table, lengths
        self.widest = max(1, int(lengths.max()))

    def decode(self, raw: np.ndarray, state: Any = None, final: bool = True) -> tuple[np.ndarray, Any]:
        out = np.empty(self.widest * len(raw) + 3, dtype=np.uint8)
        written, bad = table_transcode(raw, self.table, self.lengths, out)
        if bad >= 0:
            reason = _strict_reason(self.encoding, bytes(raw[bad: bad + 1]))
            raise DecodeFailure(bad, bad + 1, reason, out[:written])
        return out[:written], None


class IncrementalCodec(BlockCodec):
    """Python's incremental decoder for ``encoding``, then UTF-8."""

    def __init__(self, encoding: str, errors: str):
        self.encoding, self.errors = encoding, errors
        self._factory = codecs.getincrementaldecoder(encoding)
        self.start_state = self._factory(errors).getstate()
        # Lone surrogates an error handler produces: back to their bytes
        # (surrogateescape) or encoded as they are (invalid UTF-8, read as binary).
        self._encode_errors = "surrogateescape" if errors == "surrogateescape" else "surrogatepass"

    def decode(self, raw: np.ndarray, state: Any, final: bool) -> tuple[np.ndarray, Any]:
        try:
            text, after = self._text(raw, state, final)
        except UnicodeDecodeError as exc:
            raise self._failure(raw, state, exc) from None
        return np.frombuffer(text.encode("utf-8", self._encode_errors), dtype=np.uint8), after

    def _text(self, raw: np.ndarray, state: Any, final: bool) -> tuple[str, Any]:
        decoder = self._factory(self.errors)
        decoder.setstate(state)
        return decoder.decode(memoryview(raw), final), decoder.getstate()

    def _failure(self, raw: np.ndarray, state: Any, exc: UnicodeDecodeError) -> DecodeFailure:
        """Where the bad bytes start: after the longest prefix that decodes, less
        the bytes it holds back (the bad sequence's start). ``exc.start`` counts
        from what the decoder was given, which is not always the block
        (``utf-8-sig`` strips its BOM first)."""
        lo, hi = 0, len(raw)  # the longest prefix that decodes (not final): in [lo, hi]
        while lo < hi:
            mid = (lo + hi + 1) // 2
            try:
                self._text(raw[:mid], state, False)
                lo = mid
            except UnicodeDecodeError:
                hi = mid - 1
        start = lo - self.held(self._text(raw[:lo], state, False)[1])
        good, _ = self.decode(raw[:start], state, False) if start > 0 else (_NO_BYTES, None)
        return DecodeFailure(start, start + max(exc.end - exc.start, 1), exc.reason, good)

    def held_bytes(self, state: Any) -> bytes:
        return state[0]


_NO_BYTES = np.empty(0, dtype=np.uint8)


@functools.lru_cache(maxsize=64)
def block_codec(encoding: str, errors: str) -> BlockCodec:
    """The codec for ``encoding`` (a normalized name) under ``errors``:
    table-driven when every byte decodes alone, leaves no state behind and
    ASCII bytes are ASCII.

    >>> block_codec("iso8859-15", "strict"), block_codec("utf-16", "replace")
    (SingleByteCodec('iso8859-15', 'strict'), IncrementalCodec('utf-16', 'replace'))
    """
    table = _single_byte_table(encoding, errors)
    if table is None:
        return IncrementalCodec(encoding, errors)
    return SingleByteCodec(encoding, errors, *table)


def _single_byte_table(encoding: str, errors: str) -> tuple[np.ndarray, np.ndarray] | None:
    """Each byte's UTF-8 (up to 4 bytes; length -1 where a strict codec
    refuses it), or None when some byte starts a longer sequence or changes
    the decoder's state (multi-byte and stateful codecs)."""
    factory = codecs.getincrementaldecoder(encoding)
    initial = factory(errors).getstate()
    encode_errors = "surrogateescape" if errors == "surrogateescape" else "surrogatepass"
    table = np.zeros((256, 4), dtype=np.uint8)
    lengths = np.full(256, -1, dtype=np.int8)
    decoded = []
    for byte in range(256):
        decoder = factory(errors)
        try:
            text = decoder.decode(bytes([byte]))
        except UnicodeDecodeError:
            continue  # a byte a strict codec refuses: an error wherever it stands
        if decoder.getstate() != initial or (not text and errors == "strict"):
            return None  # held back or shifted: not one byte per character ("ignore" may drop it)
        utf8 = text.encode("utf-8", encode_errors)
        if len(utf8) > 4:
            return None
        table[byte, : len(utf8)] = np.frombuffer(utf8, dtype=np.uint8)
        lengths[byte] = len(utf8)
        decoded.append((byte, text))
    # One call over all the bytes gives the same text as byte by byte: no context.
    if factory(errors).decode(bytes(b for b, _ in decoded), True) != "".join(t for _, t in decoded):
        return None
    if (lengths[:128] != 1).any() or (table[:128, 0] != np.arange(128)).any():
        return None  # not ASCII-compatible (EBCDIC): the kernel copies ASCII words as they are
    return table, lengths


def _strict_reason(encoding: str, bad: bytes) -> str:
    try:
        bad.decode(encoding)
    except UnicodeDecodeError as exc:
        return exc.reason
    return "undecodable byte"  # pragma: no cover - the table says it fails


_HIGH_BITS = np.uint64(0x8080808080808080)


@njit(nogil=True, cache=True)
def table_transcode(raw, table, lengths, out):
    """Writes the UTF-8 of single-byte text ``raw`` to ``out`` (room for
    ``lengths.max()`` bytes per byte, and 3 more); returns ``(bytes written,
    index of the first byte without a character or -1)``. The table's first
    128 rows must be ASCII (checked by :class:`SingleByteCodec`).

    Eight bytes at a time: a word without a high bit is ASCII, copied as it
    is; in other words each byte's row (up to 4 bytes) is stored whole and
    the output advances by its length, without a branch on it. 2 GB/s on
    lineitem-like text with a few accents, 1 GB/s on French prose, one core.

    >>> table = np.zeros((256, 4), np.uint8); lengths = np.full(256, -1, np.int8)
    >>> table[:128, 0] = np.arange(128); lengths[:128] = 1
    >>> table[0xe9, :2] = (0xc3, 0xa9); lengths[0xe9] = 2
    >>> out = np.empty(32, np.uint8)
    >>> raw = np.frombuffer(b"0123456789a\\xe9\\xff", np.uint8)
    >>> table_transcode(raw, table, lengths, out), out[:13].tobytes()
    ((13, 12), b'0123456789a\\xc3\\xa9')
    """
    n = len(raw)
    nw = n >> 3
    words = raw[: nw << 3].view(np.uint64)
    j = 0
    for w in range(nw + 1):
        start = w << 3
        if w < nw and (words[w] & _HIGH_BITS) == 0:
            for k in range(8):
                out[j + k] = raw[start + k]
            j += 8
            continue
        for i in range(start, min(start + 8, n)):
            b = raw[i]
            m = lengths[b]
            if m < 0:
                return j, i
            out[j] = table[b, 0]
            out[j + 1] = table[b, 1]
            out[j + 2] = table[b, 2]
            out[j + 3] = table[b, 3]
            j += m
    return j, -1


def line_breaks(utf8: np.ndarray, after_cr: bool = False) -> int:
    """Line breaks in ``utf8`` (LF, CRLF, lone CR), one fewer when it starts
    with the LF of a CR the previous block ended with.

    >>> line_breaks(np.frombuffer(b"\\na\\r\\nb\\r", np.uint8), True)
    2
    """
    n = int(np.count_nonzero(utf8 == 10))
    crs = int(np.count_nonzero(utf8 == 13))
    if crs:
        n += crs - int(np.count_nonzero((utf8[:-1] == 13) & (utf8[1:] == 10)))
    return n - 1 if after_cr and len(utf8) and utf8[0] == 10 else n


def raw_offset(codec: BlockCodec, raw: np.ndarray, state: Any, final: bool, target: int) -> int:
    """Where, in a block decoded from ``state``, the character at UTF-8 offset
    ``target`` of the block's output starts (negative when it began in the
    previous block and ``state`` holds its first bytes).

    The most raw bytes whose output stays within ``target`` (found by
    bisection: errors are rare, so decoding the block some 20 times is fine),
    less the bytes of the character they end inside. A BOM or bytes an
    ``"ignore"`` handler drops before the character are skipped.

    >>> codec = block_codec("utf-16", "strict")
    >>> raw = np.frombuffer("a\\u00e9,b".encode("utf-16"), np.uint8)  # BOM, then 2 bytes a character
    >>> [raw_offset(codec, raw, codec.start_state, True, target) for target in (0, 1, 3, 4)]  # 'a', 'é', ',', 'b'
    [2, 4, 6, 8]
    """
    lo, hi = 0, len(raw)  # the most bytes with at most ``target`` bytes of output
    while lo < hi:
        mid = (lo + hi + 1) // 2
        out, _ = codec.decode(raw[:mid], state, final and mid == len(raw))
        if len(out) <= target:
            lo = mid
        else:
            hi = mid - 1
    _, after = codec.decode(raw[:lo], state, final and lo == len(raw))
    return lo - codec.held(after)
