"""Record boundaries of a span on the GPU, quoted line breaks included.

Each thread takes a chunk of bytes and counts, at once for both states it
may start in (outside or inside quotes), the line breaks that end records;
it also counts quotes, whose parity says which state the next chunk starts
in. An exclusive scan of those per-chunk counts (on the host: one number per
chunk) gives every chunk its start state and first record number, and a
second pass writes each record's end. A doubled quote inside a quoted field
toggles twice, so parity stays right; an escape character is not handled
here (the span parser declines such dialects).
"""
import numpy as np
from numba import cuda

LF = 10
CR = 13


@cuda.jit
def chunk_counts(buf, chunk, quote, quotes, ends_outside, ends_inside, line_breaks):
    """Per chunk: quote bytes, record ends if it starts outside / inside quotes, and line
    breaks as the host counts them (LF, CR LF, a lone CR)."""
    t = cuda.grid(1)
    start = t * chunk
    if start >= buf.shape[0]:
        return
    stop = min(buf.shape[0], start + chunk)
    q = 0
    outside = 0
    inside = 0
    breaks = 0
    for i in range(start, stop):
        c = buf[i]
        if c == quote:
            q += 1
        elif c == LF:
            breaks += 1
            if q & 1:
                inside += 1
            else:
                outside += 1
        elif c == CR and (i + 1 == buf.shape[0] or buf[i + 1] != LF):
            breaks += 1  # a lone CR (inside quotes: the record parser declines others) is a line too
    quotes[t] = q
    ends_outside[t] = outside
    ends_inside[t] = inside
    line_breaks[t] = breaks


@cuda.jit
def record_ends(buf, chunk, quote, starts_inside, first_record, ends):
    """Writes the position of every record-ending LF into ``ends``, in order."""
    t = cuda.grid(1)
    start = t * chunk
    if start >= buf.shape[0]:
        return
    stop = min(buf.shape[0], start + chunk)
    inside = starts_inside[t]
    k = first_record[t]
    for i in range(start, stop):
        c = buf[i]
        if c == quote:
            inside = 1 - inside
        elif c == LF and inside == 0:
            ends[k] = i
            k += 1


def scan_chunks(quotes: np.ndarray, ends_outside: np.ndarray, ends_inside: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, int, bool]:
    """From per-chunk counts: ``(starts_inside, first_record, records, ends_inside_quotes)``.

    Chunks ``'a,"x'`` and ``'\\ny"\\n'``: the first LF is inside the quotes.

    >>> scan_chunks(np.array([1, 1]), np.array([0, 1]), np.array([0, 1]))
    (array([0, 1], dtype=int8), array([0, 0]), 1, False)
    """
    parity = np.cumsum(quotes) & 1
    starts_inside = np.zeros(len(quotes), dtype=np.int8)
    starts_inside[1:] = parity[:-1]
    per_chunk = np.where(starts_inside == 1, ends_inside, ends_outside)
    first_record = np.zeros(len(quotes), dtype=np.int64)
    np.cumsum(per_chunk[:-1], out=first_record[1:])
    total = int(per_chunk.sum())
    return starts_inside, first_record, total, bool(parity[-1]) if len(parity) else False
