"""The reader as one StorageApp: tokenize a span and convert its columns, in one call.

The device path ships this kernel to the (emulated) SSD with MINIT; each
MREAD / READ_PROC_TSK then runs :func:`parse_span_into` on the pages it read.
It calls the very kernels the host path calls, so both sides produce the
same bytes: when the host asks for it (every column's type is known) first
the one-pass ``fused_parse``, and where that gives up the general path,
``tokenize`` then ``convert_fixed`` / ``convert_strings`` per column.

Everything the app needs is in three flat byte buffers, as the ABI demands
(no host pointers):

* the **plan** (instance state, written once at MINIT by
  :mod:`arrow_bridge.device_path`): dialect, spelling sets, per-column
  conversion rows and the inference ladder, all at 8-byte aligned offsets;
* the **args** (per command): where the span lies in the input, the row
  capacity and, per column, the starting inference rung and output regions;
  for a fused attempt also the fused kernel's per-file-column kinds, slots
  and parameters and its output regions;
* the **arena** (output 0) receiving a result header and the Arrow buffers
  (general or fused layout: the header says which; both start after the
  header and overlap, as a fused attempt that gives up leaves nothing; an
  arena may have room for the fused layout only, see ``A_GENERAL_SIZE``), and
  the **scratch** (output 1) holding the tokenizer's arrays or the fused
  kernel's string data (the host copies it out, as the host path does from
  its workspace, so the arena stays as dense as its estimates).

Layouts are defined by the word indices below; the host side computes the
offsets, the kernel only follows them.
"""
import numba as nb
import numpy as np

from arrow_bridge.kernels import columns as K
from arrow_bridge.kernels.fused import STRING, fused_parse
from arrow_bridge.kernels.status import BAD_ROWS, N_COUNTERS, NEEDS_MORE, OK, OUT_OF_SPACE
from arrow_bridge.kernels.tokenizer import tokenize
from ndp_core.engine import (
    app_args,
    app_counters,
    app_input,
    app_output,
    app_set_error_offset,
    app_set_written,
    app_state,
    storage_app,
)

BAD_INPUT = 2  # the ABI's status for a tokenizer error (the offset goes to error_offset)
BAD_ARGS = 64  # outside the ABI: the engine reports APP_ERROR and the host parses the pages itself

PLAN_VERSION = 1
BAD_ROWS_KEPT = 4096

# Plan header (int64 words).
H_VERSION, H_NCOLS, H_NPLANNED, H_DELIM, H_QUOTE, H_ESCAPE, H_DOUBLE_QUOTE, H_SKIP_BAD = range(8)
H_QUOTED_NULLS, H_STRINGS_NULL, H_SPECIAL = 8, 9, 10
H_NULLS, H_TRUES, H_FALSES = 11, 17, 23  # 6 words each: data, len, offsets, count, first-byte table, has_empty
H_COLUMNS, H_LADDER, H_RUNGS = 29, 30, 31
HEADER_WORDS = 32

# A conversion row: how one Arrow type is produced.
CONV_WORDS = 8  # kind (-1: strings), p0, p1, p2, out code, string mode, large offsets, unused
STRING_KIND = -1
CHECK_UTF8, NO_UTF8_CHECK = 1, 2
OUT_U8, OUT_I8, OUT_I16, OUT_I32, OUT_I64, OUT_U16, OUT_U32, OUT_U64, OUT_F32, OUT_F64 = range(10)

# A planned column: file index (-1: missing), explicit (1) or inferred (0), conversion row.
COL_WORDS = 2 + CONV_WORDS

# Per-command args.
A_SKIP, A_LENGTH, A_AT_EOF, A_CAPACITY, A_RESULT, A_BAD_ROWS = range(6)
A_ROW_STARTS, A_ENDS, A_FLAGS, A_UNESCAPE, A_UNESCAPE_LEN = 6, 7, 8, 9, 10
A_ARENA_SIZE, A_SCRATCH_SIZE = 11, 12  # what the layout needs: the app checks before writing
A_FUSED = 13  # where the fused section starts in the args; 0: no fused attempt
A_GENERAL_SIZE = 14  # arena bytes the general path needs; above A_ARENA_SIZE it runs only without a fused attempt
A_FIXED = 15
A_COL = 6  # per column: start rung, values, validity, bits, string data offsets (in the arena), data capacity

# The fused section of the args (see fused.fused_parse): row capacity (a multiple of 8),
# slot counts per storage class, arena offsets of the outputs, the scratch offset of the
# string data and its stride, then per file column its kind, slot and 3 parameters.
F_CAPACITY, F_N_I64, F_N_I32, F_N_F64, F_N_BITS, F_N_STR = range(6)
F_I64, F_I32, F_F64, F_BITS, F_OFFSETS, F_VALIDITY, F_NULL_COUNTS, F_DATA_USED, F_COUNTERS = range(6, 15)
F_DATA, F_STRIDE = 15, 16
F_COLUMNS = 17
F_COL_WORDS = 5

# Result header (int64 words in the arena).
R_STATUS, R_NROWS, R_PARSED, R_LINES, R_ERROR_AT, R_BAD_ROW, R_BAD_COL, R_BAD_OFFSET = range(8)
R_N_BAD_ROWS, R_FUSED = 8, 9  # R_FUSED: 1 when the outputs are in the fused layout
RESULT_WORDS = 16
R_COL = 3  # per column: rung (-1 explicit), null count, string bytes used


@nb.njit(nogil=True, cache=True)
def _int64s(buf, offset, count):
    return buf[offset: offset + 8 * count].view(np.int64)


@nb.njit(nogil=True, cache=True)
def _spellings(plan, h, k):
    data = plan[h[k]: h[k] + h[k + 1]]
    return (data, _int64s(plan, h[k + 2], h[k + 3]), _int64s(plan, h[k + 4], 256), h[k + 5] != 0)


@nb.njit(nogil=True, cache=True)
def _convert_fixed_as(code, span, col, nulls, quoted_nulls, kind, params, trues, falses, region, nrows,
                      bits, validity, counters):
    """``convert_fixed`` with the output region viewed as the column's value type
    (a view's dtype must be known when compiling, hence one branch per type)."""
    head = (span, col, nulls, quoted_nulls, kind, params, trues, falses)
    tail = (bits, validity, counters)
    if code == OUT_I8:
        return K.convert_fixed(*head, region[:nrows].view(np.int8), *tail)
    if code == OUT_I16:
        return K.convert_fixed(*head, region[:2 * nrows].view(np.int16), *tail)
    if code == OUT_I32:
        return K.convert_fixed(*head, region[:4 * nrows].view(np.int32), *tail)
    if code == OUT_I64:
        return K.convert_fixed(*head, region[:8 * nrows].view(np.int64), *tail)
    if code == OUT_U16:
        return K.convert_fixed(*head, region[:2 * nrows].view(np.uint16), *tail)
    if code == OUT_U32:
        return K.convert_fixed(*head, region[:4 * nrows].view(np.uint32), *tail)
    if code == OUT_U64:
        return K.convert_fixed(*head, region[:8 * nrows].view(np.uint64), *tail)
    if code == OUT_F32:
        return K.convert_fixed(*head, region[:4 * nrows].view(np.float32), *tail)
    if code == OUT_F64:
        return K.convert_fixed(*head, region[:8 * nrows].view(np.float64), *tail)
    return K.convert_fixed(*head, region[:nrows], *tail)


@nb.njit(nogil=True, cache=True)
def _convert(conv, span, col, plan, h, arena, regions, counters):
    """One column at one type. Returns ``(status, bad_row, null_count, string_bytes)``."""
    nrows = span[4]
    nulls = _spellings(plan, h, H_NULLS)
    quoted_nulls = h[H_QUOTED_NULLS] != 0
    validity = arena[regions[2]: regions[2] + (nrows + 7) // 8]
    validity[:] = 0
    if conv[0] == STRING_KIND:
        if K.string_bytes_upper_bound(span, col) > regions[5]:
            return OUT_OF_SPACE, -1, 0, 0
        data = arena[regions[4]: regions[4] + max(regions[5], 1)]
        region = arena[regions[1]: regions[1] + 8 * (nrows + 1)]
        check = conv[5] == CHECK_UTF8
        use_nulls = h[H_STRINGS_NULL] != 0
        if conv[6] != 0:
            offsets64 = region.view(np.int64)
            status, bad_row, null_count = K.convert_strings(span, col, nulls, use_nulls, quoted_nulls, check,
                                                            offsets64, data, validity, counters)
            return status, bad_row, null_count, offsets64[nrows] if status == OK else 0
        offsets32 = region[: 4 * (nrows + 1)].view(np.int32)
        status, bad_row, null_count = K.convert_strings(span, col, nulls, use_nulls, quoted_nulls, check,
                                                        offsets32, data, validity, counters)
        return status, bad_row, null_count, offsets32[nrows] if status == OK else 0
    if conv[0] == K.BOOL:  # only booleans have a values bitmap (and room for one)
        bits = arena[regions[3]: regions[3] + (nrows + 7) // 8]
        bits[:] = 0
    else:
        bits = arena[regions[3]: regions[3]]
    params = (conv[1], conv[2], conv[3])
    status, bad_row, null_count = _convert_fixed_as(
        conv[4], span, col, nulls, quoted_nulls, conv[0], params, _spellings(plan, h, H_TRUES),
        _spellings(plan, h, H_FALSES), arena[regions[1]: regions[1] + 8 * nrows], nrows, bits, validity,
        counters)
    return status, bad_row, null_count, 0


@nb.njit(nogil=True, cache=True)
def _field_start(row_starts, ends, capacity, row, col):
    return row_starts[row] if col == 0 else ends[(col - 1) * capacity + row] + 1


@nb.njit(nogil=True, cache=True)
def fused_outputs(arena, scratch, f, ncols):
    """The fused kernel's output arguments (``FusedBuffers`` order) as views of
    a task's arena and scratch, per the fused section ``f`` of its args. The
    app parses into them; the host calls this too, to wrap what it wrote."""
    cap = f[F_CAPACITY]
    bitmap = cap // 8
    n_i64, n_i32, n_f64, n_bits, n_str = f[F_N_I64], f[F_N_I32], f[F_N_F64], f[F_N_BITS], f[F_N_STR]
    i64 = _int64s(arena, f[F_I64], n_i64 * cap).reshape((n_i64, cap))
    i32 = arena[f[F_I32]: f[F_I32] + 4 * n_i32 * cap].view(np.int32).reshape((n_i32, cap))
    f64 = arena[f[F_F64]: f[F_F64] + 8 * n_f64 * cap].view(np.float64).reshape((n_f64, cap))
    bits = arena[f[F_BITS]: f[F_BITS] + n_bits * bitmap].reshape((n_bits, bitmap))
    offsets = arena[f[F_OFFSETS]: f[F_OFFSETS] + 4 * n_str * (cap + 1)].view(np.int32).reshape((n_str, cap + 1))
    data = scratch[f[F_DATA]: f[F_DATA] + n_str * f[F_STRIDE]]
    validity = arena[f[F_VALIDITY]: f[F_VALIDITY] + ncols * bitmap].reshape((ncols, bitmap))
    return (i64, i32, f64, bits, offsets, data, f[F_STRIDE], _int64s(arena, f[F_DATA_USED], n_str), validity,
            _int64s(arena, f[F_NULL_COUNTS], ncols))


@nb.njit(nogil=True, cache=True)
def _parse_fused(buf, plan, h, args, arena, scratch, res, counters):
    """One ``fused_parse`` attempt into the fused layout. On ``OK`` adds its
    work counters and fills the result header; on ``GIVE_UP`` leaves both
    alone (the general path parses the span from scratch). Returns the status."""
    ncols, nplanned = h[H_NCOLS], h[H_NPLANNED]
    f = args[args[A_FUSED]:]
    kinds = f[F_COLUMNS: F_COLUMNS + ncols]
    slots = f[F_COLUMNS + ncols: F_COLUMNS + 2 * ncols]
    params = f[F_COLUMNS + 2 * ncols: F_COLUMNS + F_COL_WORDS * ncols].reshape((ncols, 3))
    i64, i32, f64, bits, offsets, data, stride, data_used, validity, null_counts = fused_outputs(
        arena, scratch, f, ncols)
    bits[:] = 0  # the kernel only sets bits
    validity[:] = 0
    work = _int64s(arena, f[F_COUNTERS], N_COUNTERS)  # added only if the attempt succeeds
    work[:] = 0
    status, rows, lines = fused_parse(
        buf, 0, buf.size, ncols, h[H_DELIM], h[H_QUOTE],
        h[H_DOUBLE_QUOTE] != 0, kinds, slots, params, _spellings(plan, h, H_NULLS), h[H_QUOTED_NULLS] != 0,
        _spellings(plan, h, H_TRUES), _spellings(plan, h, H_FALSES), i64, i32, f64, bits, offsets, data, stride,
        data_used, validity, null_counts, work)
    if status != OK:
        return status
    for k in range(N_COUNTERS):
        counters[k] += work[k]
    res[R_STATUS], res[R_NROWS], res[R_PARSED], res[R_LINES] = OK, rows, buf.size, lines
    res[R_BAD_COL], res[R_FUSED] = -1, 1
    columns = _int64s(plan, h[H_COLUMNS], COL_WORDS * nplanned)
    for j in range(nplanned):
        col, explicit = columns[j * COL_WORDS], columns[j * COL_WORDS + 1] == 1
        out = RESULT_WORDS + R_COL * j
        res[out] = -1 if col < 0 or explicit else args[A_FIXED + j * A_COL]  # the rung the host planned
        if col >= 0:
            res[out + 1] = null_counts[col]
            res[out + 2] = data_used[slots[col]] if kinds[col] == STRING else 0
    return OK


@nb.njit(nogil=True, cache=True)
def parse_span_into(data, plan, args, arena, scratch, counters):
    """Tokenizes ``data[skip:skip + length]`` and converts every planned column
    (after a fused attempt, when ``args`` ask for one and it succeeds: no more;
    when it gives up, the general path runs if the arena has room for it).

    Writes the result header and Arrow buffers into ``arena`` at the offsets
    in ``args``; returns the tokenizer's status (``OK``, ``NEEDS_MORE`` or an
    error, whose offset is in the result header), or ``OUT_OF_SPACE`` when
    the rows or a column's string bytes outgrow the capacities in ``args``.
    A value that does not convert to an explicit type is reported in the
    header, not as a status.
    """
    h = _int64s(plan, 0, HEADER_WORDS)
    ncols, nplanned = h[H_NCOLS], h[H_NPLANNED]
    skip, length, capacity = args[A_SKIP], args[A_LENGTH], args[A_CAPACITY]
    buf = data[skip: skip + length]
    res = _int64s(arena, args[A_RESULT], RESULT_WORDS + R_COL * nplanned)
    res[:] = 0
    if args[A_FUSED] > 0:
        if _parse_fused(buf, plan, h, args, arena, scratch, res, counters) == OK:
            return OK
        if args[A_GENERAL_SIZE] > args[A_ARENA_SIZE]:
            return OUT_OF_SPACE  # an arena sized for the fused layout alone: the host retries with room
    bad_rows = _int64s(arena, args[A_BAD_ROWS], 2 * BAD_ROWS_KEPT).reshape((BAD_ROWS_KEPT, 2))
    row_starts = scratch[args[A_ROW_STARTS]: args[A_ROW_STARTS] + 4 * capacity].view(np.int32)
    ends = scratch[args[A_ENDS]: args[A_ENDS] + 4 * capacity * ncols].view(np.int32)
    flags = scratch[args[A_FLAGS]: args[A_FLAGS] + capacity * ncols]
    unescape_room = scratch[args[A_UNESCAPE]: args[A_UNESCAPE] + args[A_UNESCAPE_LEN]]
    special = plan[h[H_SPECIAL]: h[H_SPECIAL] + 256]
    quote, escape, double_quote = h[H_QUOTE], h[H_ESCAPE], h[H_DOUBLE_QUOTE] != 0
    bad_before = counters[BAD_ROWS]
    status, nrows, pos, lines = tokenize(buf, 0, length, args[A_AT_EOF] != 0, ncols, h[H_DELIM], special,
                                         quote, escape, double_quote, h[H_SKIP_BAD] != 0, row_starts, ends,
                                         flags, bad_rows, counters)
    res[R_STATUS], res[R_NROWS], res[R_LINES], res[R_BAD_COL] = status, nrows, lines, -1
    res[R_N_BAD_ROWS] = counters[BAD_ROWS] - bad_before
    if status == OUT_OF_SPACE:
        return status
    if status != OK and status != NEEDS_MORE:
        res[R_ERROR_AT], res[R_PARSED] = pos, row_starts[nrows]
        return status
    res[R_PARSED] = pos
    span = (buf, row_starts, ends, flags, nrows, capacity, (quote, escape, double_quote), unescape_room)
    columns = _int64s(plan, h[H_COLUMNS], COL_WORDS * nplanned)
    ladder = _int64s(plan, h[H_LADDER], CONV_WORDS * h[H_RUNGS])
    for j in range(nplanned):
        column = columns[j * COL_WORDS: (j + 1) * COL_WORDS]
        regions = args[A_FIXED + j * A_COL: A_FIXED + (j + 1) * A_COL]
        out = RESULT_WORDS + R_COL * j
        col = column[0]
        res[out] = -1
        if col < 0:
            continue
        if column[1] == 1:
            status, bad_row, null_count, used = _convert(column[2:], span, col, plan, h, arena, regions,
                                                         counters)
            if status == OUT_OF_SPACE:
                return OUT_OF_SPACE
            if status != OK:
                if res[R_BAD_COL] < 0 or bad_row < res[R_BAD_ROW]:
                    res[R_BAD_ROW], res[R_BAD_COL] = bad_row, j
                    res[R_BAD_OFFSET] = _field_start(row_starts, ends, capacity, bad_row, col)
                continue
        else:
            rung = regions[0]
            while True:  # the last rung (binary) accepts every value
                conv = ladder[rung * CONV_WORDS: (rung + 1) * CONV_WORDS]
                status, bad_row, null_count, used = _convert(conv, span, col, plan, h, arena, regions,
                                                             counters)
                if status == OK or status == OUT_OF_SPACE or rung == h[H_RUNGS] - 1:
                    break
                rung += 1
            if status == OUT_OF_SPACE:
                return OUT_OF_SPACE
            res[out] = rung
        res[out + 1], res[out + 2] = null_count, used
    return res[R_STATUS]


# The StorageApp itself. Compiled (or loaded from Numba's cache) when this
# module is imported, which only the device path does.
@storage_app(cache=True)
def csv_app(call):
    """The compiled StorageApp (a Numba cfunc; ``.address`` goes to MINIT).

    Output 0 is the arena, output 1 the scratch; the plan is the instance
    state and the span description the command's args. INIT_TSK/FINAL_TSK
    (no args) do nothing. A tokenizer error returns BAD_INPUT with its
    offset; everything else is reported in the arena's result header.
    """
    args = app_args(call)
    if args.size < A_FIXED:
        return 0  # INIT_TSK / FINAL_TSK: nothing to set up or flush
    data, arena, scratch = app_input(call), app_output(call, 0), app_output(call, 1)
    # Never trust the layout: a span past the input (e.g. one part of a split
    # command) or outputs smaller than the layout would mean writing blind.
    plan = app_state(call)
    fused_words = F_COLUMNS + F_COL_WORDS * _int64s(plan, 0, HEADER_WORDS)[H_NCOLS]
    if (args[A_SKIP] < 0 or args[A_SKIP] + args[A_LENGTH] > data.size or arena.size < args[A_ARENA_SIZE]
            or scratch.size < args[A_SCRATCH_SIZE] or args[A_FUSED] < 0
            or args[A_FUSED] > 0 and args[A_FUSED] + fused_words > args.size):
        return BAD_ARGS
    status = parse_span_into(data, plan, args, arena, scratch, app_counters(call))
    app_set_written(call, 0, args[A_ARENA_SIZE])
    if status == OUT_OF_SPACE:
        return OUT_OF_SPACE  # the host retries with room for every row and string byte
    if status != OK and status != NEEDS_MORE:
        app_set_error_offset(call, args[A_SKIP] + _int64s(arena, args[A_RESULT], RESULT_WORDS)[R_ERROR_AT])
        return BAD_INPUT
    return OK
