"""Per-field helpers every column converter uses: the value's bytes, spelling
sets (nulls, true/false values) and validity bits.

A field is ``[start, end)`` in the span buffer plus the tokenizer's flags. A
plain quoted field is read in place without its quotes; only fields with
doubled quotes or escapes are unescaped, into a scratch buffer.
"""
import numba as nb
import numpy as np

from arrow_bridge.kernels.status import COMPLEX, QUOTED


@nb.njit(nogil=True, cache=True)
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


@nb.njit(nogil=True, cache=True, inline="always")
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


@nb.njit(nogil=True, cache=True, inline="always")
def in_spelling_set(src, start, end, spellings):
    """Whether ``src[start:end]`` equals one of the spellings.

    ``spellings`` is ``(bytes, offsets, length_mask)`` as built by
    :func:`spelling_set`; the length mask rejects most fields at once.
    """
    data, offsets, length_mask = spellings
    n = end - start
    if n >= 63 or not (length_mask >> n) & 1:
        return False
    for k in range(offsets.shape[0] - 1):
        a = offsets[k]
        if offsets[k + 1] - a != n:
            continue
        same = True
        for i in range(n):
            if data[a + i] != src[start + i]:
                same = False
                break
        if same:
            return True
    return False


@nb.njit(nogil=True, cache=True, inline="always")
def set_valid(validity, row):
    validity[row >> 3] |= np.uint8(1 << (row & 7))


def spelling_set(values) -> tuple:
    """Packs byte strings for :func:`in_spelling_set`.

    >>> data, offsets, mask = spelling_set([b"NA", b""])
    >>> offsets.tolist(), bin(mask)
    ([0, 2, 2], '0b101')
    """
    encoded = [v.encode() if isinstance(v, str) else bytes(v) for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(v) for v in encoded]) if encoded else []
    data = np.frombuffer(b"".join(encoded) or b"\0", dtype=np.uint8).copy()
    mask = 0
    for v in encoded:
        if len(v) < 63:
            mask |= 1 << len(v)
    return data, offsets, np.int64(mask)
