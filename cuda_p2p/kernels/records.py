"""Record boundaries of a span on the GPU, quoted line breaks included.

Each thread takes a chunk of bytes and counts, at once for both states it
may start in (outside or inside quotes), the line breaks that end records;
it also counts quotes, whose parity says which state the next chunk starts
in. An exclusive scan of those per-chunk counts, on the GPU too, gives every
chunk its start state and first record number, and a second pass writes each
record's end; only the span's totals (four numbers) go to the host, which
sizes the ends array by them.

The scan's element is a chunk's *state*: quote parity, record ends if it
starts outside quotes, record ends if it starts inside, line breaks. Two
states in a row combine as ``(pa ^ pb, oa + (ib if pa else ob),
ia + (ob if pa else ib), ba + bb)``: associative, with ``(0, 0, 0, 0)`` as
identity, so a block scans its chunks in shared memory and a second (third)
level scans the blocks' totals. A doubled quote inside a quoted field
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


#: Most chunks one block scans (its threads, one chunk each; the simulator runs fewer).
SCAN_BLOCK = 256


@cuda.jit(device=True)
def _combined(lp, lo, li, lb, cp, co, ci, cb):
    """The state of chunks ``l`` then ``c`` (see the module's docstring)."""
    return lp ^ cp, lo + (ci if lp else co), li + (co if lp else ci), lb + cb


@cuda.jit
def scan_block_states(state, totals):
    """In place, per block of chunks: each chunk's state (``state[:, i]``: quotes
    or parity, ends outside, ends inside, line breaks) becomes the combined state
    of the chunks before it in its block; ``totals[:, b]`` gets block ``b``'s whole."""
    parity = cuda.shared.array(SCAN_BLOCK, np.int64)
    outside = cuda.shared.array(SCAN_BLOCK, np.int64)
    inside = cuda.shared.array(SCAN_BLOCK, np.int64)
    breaks = cuda.shared.array(SCAN_BLOCK, np.int64)
    t = cuda.threadIdx.x
    width = cuda.blockDim.x
    i = cuda.blockIdx.x * width + t
    n = state.shape[1]
    if i < n:
        parity[t], outside[t], inside[t], breaks[t] = state[0, i] & 1, state[1, i], state[2, i], state[3, i]
    else:
        parity[t], outside[t], inside[t], breaks[t] = 0, 0, 0, 0
    cuda.syncthreads()
    step = 1
    while step < width:  # Hillis-Steele: after it, each slot holds its block prefix, itself included
        lp, lo, li, lb = 0, 0, 0, 0
        if t >= step:
            lp, lo, li, lb = parity[t - step], outside[t - step], inside[t - step], breaks[t - step]
        cuda.syncthreads()
        parity[t], outside[t], inside[t], breaks[t] = _combined(lp, lo, li, lb, parity[t], outside[t], inside[t],
                                                                breaks[t])
        cuda.syncthreads()
        step *= 2
    if i < n:
        if t == 0:
            state[0, i], state[1, i], state[2, i], state[3, i] = 0, 0, 0, 0
        else:
            state[0, i], state[1, i], state[2, i], state[3, i] = (parity[t - 1], outside[t - 1], inside[t - 1],
                                                                  breaks[t - 1])
    if t == width - 1:
        b = cuda.blockIdx.x
        totals[0, b], totals[1, b], totals[2, b], totals[3, b] = parity[t], outside[t], inside[t], breaks[t]


@cuda.jit
def add_block_prefixes(state, prefixes, width):
    """Chunk ``i``'s state after the chunks of the blocks before its own
    (``prefixes``: the blocks' scanned totals; ``width``: chunks per block)."""
    i = cuda.grid(1)
    if i >= state.shape[1]:
        return
    b = i // width
    state[0, i], state[1, i], state[2, i], state[3, i] = _combined(
        prefixes[0, b], prefixes[1, b], prefixes[2, b], prefixes[3, b], state[0, i], state[1, i], state[2, i],
        state[3, i])


def scan_states_on_host(state: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`scan_block_states` for all chunks at once, with NumPy: each chunk's
    exclusive prefix state, and the whole span's (4 x 1). For the simulator,
    whose Python threads make the GPU scan's launches cost more than the parse.

    Chunks ``'a,"x'`` and ``'\\ny"\\n'``: the first LF is inside the quotes.

    >>> before, whole = scan_states_on_host(np.array([[1, 1], [0, 1], [0, 1], [0, 2]]))
    >>> before[:2].tolist(), whole[:, 0].tolist()
    ([[0, 1], [0, 0]], [0, 1, 1, 2])
    """
    inside = np.zeros(state.shape[1], dtype=np.int64)
    np.cumsum(state[0] & 1, out=inside)
    inside &= 1  # parity after each chunk
    starts_inside = np.concatenate(([0], inside[:-1]))
    ends_from_outside = np.where(starts_inside == 1, state[2], state[1])
    ends_from_inside = np.where(starts_inside == 1, state[1], state[2])
    rows = (ends_from_outside, ends_from_inside, state[3])
    before = np.stack([starts_inside] + [np.concatenate(([0], np.cumsum(row)[:-1])) for row in rows])
    whole = np.array([[inside[-1] if inside.size else 0]] + [[int(row.sum())] for row in rows], dtype=np.int64)
    return before.astype(np.int64), whole
