"""Per-field helpers every column converter uses: the value's bytes, spelling
sets (nulls, true/false values) and validity bits.

A field is ``[start, end)`` in the span buffer plus the tokenizer's flags. A
plain quoted field is read in place without its quotes; only fields with
doubled quotes or escapes are unescaped, into a scratch buffer.
"""
import numpy as np

from arrow_bridge.jit import njit
from arrow_bridge.kernels.status import COMPLEX, QUOTED
from arrow_bridge.numbers.swar import byte_at, word_at


@njit(nogil=True, cache=True)
def unescape(buf, start, end, quote, escape, double_quote, out):
    """Writes the decoded value of the raw field ``buf[start:end]`` to ``out``;
    returns its length (``out`` must hold ``end - start`` bytes)."""
    n = 0
    pos = start
    in_quotes = False
    if pos < end and buf[pos] == quote:
        in_quotes = True
        pos += 1
    while pos < end:
        c = buf[pos]
        if c == escape and pos + 1 < end:
            out[n] = buf[pos + 1]
            n += 1
            pos += 2
            continue
        if in_quotes and c == quote:
            if double_quote and pos + 1 < end and buf[pos + 1] == quote:
                out[n] = quote
                n += 1
                pos += 2
                continue
            in_quotes = False
            pos += 1
            continue
        if c != escape:
            out[n] = c
            n += 1
        pos += 1
    return n


@njit(nogil=True, cache=True, inline="always")
def field_value(buf, start, end, flag, dialect, scratch):
    """The decoded bytes of a field as ``(array, start, end)``.

    ``dialect`` is ``(quote, escape, double_quote)``; ``scratch`` must hold the
    longest field of the span.
    """
    if flag & COMPLEX:
        n = unescape(buf, start, end, dialect[0], dialect[1], dialect[2], scratch)
        return scratch, 0, n
    if flag & QUOTED:
        return buf, start + 1, end - 1
    return buf, start, end


@njit(nogil=True, cache=True, inline="always")
def spelling_addresses(spellings):
    """A spelling set (:func:`spelling_set`) as plain numbers for
    :func:`in_spelling_set`: ``(data_at, offsets_at, count, first_at,
    has_empty)``. Taken once before a loop over values: unpacking the set's
    arrays for each value costs their reference counts, about 90 cycles a
    value here, six times the comparison itself. The set must outlive the
    loop (its caller holds it)."""
    data, offsets, first_byte_lengths, has_empty = spellings
    return data.ctypes.data, offsets.ctypes.data, offsets.shape[0] - 1, first_byte_lengths.ctypes.data, has_empty


@njit(nogil=True, cache=True, inline="always")
def in_spelling_set(at, start, end, addresses):
    """Whether bytes ``[start, end)`` at address ``at`` equal one of the
    spellings (an address, not an array: the kernels ask this per value, and
    an array costs reference counts per use).

    ``addresses`` is a spelling set as :func:`spelling_addresses` gives it:
    a field whose first byte and length match no spelling (nearly every
    number) is rejected with one table look-up.
    """
    data_at, offsets_at, count, first_at, has_empty = addresses
    n = end - start
    if n == 0:
        return has_empty
    if n >= 64 or not (np.int64(word_at(first_at, 8 * np.int64(byte_at(at, start)))) >> n) & 1:
        return False
    return spelled(at, start, end, data_at, offsets_at, count)


@njit(nogil=True, cache=True, inline="always")
def parse_bool(at, start, end, trues, falses, digits):
    """``(ok, value)`` of a boolean field, bytes ``[start, end)`` at address
    ``at``: one of the ``trues`` or ``falses`` spellings
    (:func:`spelling_addresses`), or with ``digits`` (an explicit bool under
    pandas' semantics, whose spellings are words) ``1`` or ``0`` too."""
    if in_spelling_set(at, start, end, trues):
        return True, True
    if in_spelling_set(at, start, end, falses):
        return True, False
    if digits and end - start == 1 and (byte_at(at, start) == 48 or byte_at(at, start) == 49):
        return True, byte_at(at, start) == 49
    return False, False


@njit(nogil=True, cache=True)
def spelled(at, start, end, data_at, offsets_at, count):
    """Whether bytes ``[start, end)`` at address ``at`` are one of ``count``
    strings: a spelling set's bytes at ``data_at``, int64 offsets at
    ``offsets_at``. Addresses rather than arrays: hot kernels call this for
    every value whose first byte and length match a spelling (e.g. a price
    ``1234.56`` against ``1.#QNAN``), and an array argument costs reference
    counting and a copy of its descriptor on each call."""
    n = end - start
    for k in range(count):
        a = np.int64(word_at(offsets_at, 8 * k))
        if np.int64(word_at(offsets_at, 8 * k + 8)) - a != n:
            continue
        i = 0
        while i < n and byte_at(data_at, a + i) == byte_at(at, start + i):
            i += 1
        if i == n:
            return True
    return False


@njit(nogil=True, cache=True, inline="always")
def set_valid(validity, row):
    """Sets the validity bit of ``row`` in an Arrow bitmap.

    >>> validity = np.zeros(2, np.uint8)
    >>> set_valid(validity, 9)
    >>> validity.tolist()
    [0, 2]
    """
    validity[row >> 3] |= np.uint8(1 << (row & 7))


@njit(nogil=True, cache=True)
def mark_valid_before(validity, row):
    """Sets the validity bits of rows ``0..row-1``: kernels leave the bitmap
    untouched until the first null, as most columns have none.

    >>> validity = np.zeros(2, np.uint8)
    >>> mark_valid_before(validity, 10)
    >>> validity.tolist()
    [255, 3]
    """
    full = row >> 3
    validity[:full] = 0xFF
    for r in range(full << 3, row):
        set_valid(validity, r)


def spelling_set(values) -> tuple:
    """Packs byte strings into a spelling set: the kernels' argument for
    nulls, trues and falses (:func:`spelling_addresses` readies it for
    :func:`in_spelling_set`).

    >>> data, offsets, lengths, has_empty = spelling_set([b"NA", b""])
    >>> offsets.tolist(), bin(lengths[ord("N")]), has_empty
    ([0, 2, 2], '0b100', True)
    """
    encoded = [v.encode() if isinstance(v, str) else bytes(v) for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(v) for v in encoded]) if encoded else []
    data = np.frombuffer(b"".join(encoded) or b"\0", dtype=np.uint8).copy()
    first_byte_lengths = np.zeros(256, dtype=np.int64)
    for v in encoded:
        if 0 < len(v) < 64:
            first_byte_lengths[v[0]] |= np.int64(1) << np.int64(len(v))
    return data, offsets, first_byte_lengths, b"" in encoded
