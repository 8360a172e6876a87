"""The reader as one StorageApp: tokenize a span and convert its columns, in one call.

The device executor ships this kernel to the (emulated) SSD with MINIT; each
MREAD / READ_PROC_TSK then runs :func:`parse_span_into` on the pages it read.
It calls the very kernels the host executor calls, so both sides produce the
same bytes: when the host asks for it (every column's type is known) first
the one-pass ``fused_parse``, and where that gives up the general path,
``tokenize`` then ``convert_fixed`` / ``convert_strings`` per column.

Its plan, args and result header are laid out in
:mod:`arrow_bridge.kernels.span_layout` (the host driver packs and reads the
same layouts); the kernel only follows the offsets they hold.
"""
import numpy as np

from arrow_bridge.jit import load_numba, njit
from arrow_bridge.kernels import columns
from arrow_bridge.kernels.fused import STRING, no_bounds, parse_every_record
from arrow_bridge.kernels.span_layout import (
    CHECK_UTF8,
    CONVERSION,
    FUSED,
    FUSED_COLUMN_WORDS,
    PLAN,
    PLAN_VERSION,
    PLANNED_COLUMN,
    RESULT,
    RESULT_COLUMN,
    SPELLINGS,
    STRING_KIND,
    TASK,
    TASK_COLUMN,
    VALUE_TYPES,
    fused_columns,
    fused_outputs,
    int64_words,
)
from arrow_bridge.kernels.status import (BAD_ROWS, BAD_ROWS_KEPT, INVALID_ARGS, N_COUNTERS, NEEDS_MORE, OK,
                                         OUT_OF_SPACE)
from arrow_bridge.kernels.tokenizer import tokenize
from ndp_core.engine import (
    Status,
    app_args,
    app_counters,
    app_input,
    app_output,
    app_set_error_offset,
    app_set_written,
    app_state,
    storage_app,
)

load_numba()  # the app below is compiled by Numba itself, calling the kernels declared through arrow_bridge.jit

BAD_INPUT = int(Status.BAD_INPUT)  # a tokenizer error leaves the app as the ABI's BAD_INPUT


@njit(nogil=True, cache=True)
def _spellings(plan, h, k):
    """The spelling set whose :data:`SPELLINGS` words start at header word ``k``."""
    data = plan[h[k + SPELLINGS.data]: h[k + SPELLINGS.data] + h[k + SPELLINGS.data_len]]
    return (data, int64_words(plan, h[k + SPELLINGS.offsets], h[k + SPELLINGS.n_offsets]),
            int64_words(plan, h[k + SPELLINGS.first_bytes], 256), h[k + SPELLINGS.has_empty] != 0)


@njit(nogil=True, cache=True)
def _convert_fixed_as(code, span, col, nulls, quoted_nulls, kind, params, trues, falses, region, nrows,
                      bits, validity, counters):
    """``convert_fixed`` with the output region viewed as the column's value type
    (a view's dtype must be known when compiling, hence one branch per type)."""
    head = (span, col, nulls, quoted_nulls, kind, params, trues, falses)
    tail = (bits, validity, counters)
    if code == VALUE_TYPES.int8:
        return columns.convert_fixed(*head, region[:nrows].view(np.int8), *tail)
    if code == VALUE_TYPES.int16:
        return columns.convert_fixed(*head, region[:2 * nrows].view(np.int16), *tail)
    if code == VALUE_TYPES.int32:
        return columns.convert_fixed(*head, region[:4 * nrows].view(np.int32), *tail)
    if code == VALUE_TYPES.int64:
        return columns.convert_fixed(*head, region[:8 * nrows].view(np.int64), *tail)
    if code == VALUE_TYPES.uint16:
        return columns.convert_fixed(*head, region[:2 * nrows].view(np.uint16), *tail)
    if code == VALUE_TYPES.uint32:
        return columns.convert_fixed(*head, region[:4 * nrows].view(np.uint32), *tail)
    if code == VALUE_TYPES.uint64:
        return columns.convert_fixed(*head, region[:8 * nrows].view(np.uint64), *tail)
    if code == VALUE_TYPES.float32:
        return columns.convert_fixed(*head, region[:4 * nrows].view(np.float32), *tail)
    if code == VALUE_TYPES.float64:
        return columns.convert_fixed(*head, region[:8 * nrows].view(np.float64), *tail)
    return columns.convert_fixed(*head, region[:nrows], *tail)


@njit(nogil=True, cache=True)
def _convert(conv, span, col, plan, h, arena, regions, counters):
    """One column at one type. Returns ``(status, bad_row, null_count, string_bytes)``."""
    nrows = span[4]
    nulls = _spellings(plan, h, PLAN.nulls)
    quoted_nulls = h[PLAN.quoted_nulls] != 0
    validity = arena[regions[TASK_COLUMN.validity]: regions[TASK_COLUMN.validity] + (nrows + 7) // 8]
    validity[:] = 0
    if conv[CONVERSION.kind] == STRING_KIND:
        if columns.string_bytes_upper_bound(span, col) > regions[TASK_COLUMN.data_capacity]:
            return OUT_OF_SPACE, -1, 0, 0
        data = arena[regions[TASK_COLUMN.data]: regions[TASK_COLUMN.data] + max(regions[TASK_COLUMN.data_capacity], 1)]
        region = arena[regions[TASK_COLUMN.values]: regions[TASK_COLUMN.values] + 8 * (nrows + 1)]
        check = conv[CONVERSION.string_mode] == CHECK_UTF8
        use_nulls = conv[CONVERSION.params] != 0  # the read's strings_can_be_null, or a raw text column's no
        if conv[CONVERSION.large_offsets] != 0:
            offsets64 = region.view(np.int64)
            status, bad_row, null_count = columns.convert_strings(span, col, nulls, use_nulls, quoted_nulls, check,
                                                            offsets64, data, validity, counters)
            return status, bad_row, null_count, offsets64[nrows] if status == OK else 0
        offsets32 = region[: 4 * (nrows + 1)].view(np.int32)
        status, bad_row, null_count = columns.convert_strings(span, col, nulls, use_nulls, quoted_nulls, check,
                                                        offsets32, data, validity, counters)
        return status, bad_row, null_count, offsets32[nrows] if status == OK else 0
    if conv[CONVERSION.kind] == columns.BOOL:  # only booleans have a values bitmap (and room for one)
        bits = arena[regions[TASK_COLUMN.bits]: regions[TASK_COLUMN.bits] + (nrows + 7) // 8]
        bits[:] = 0
    else:
        bits = arena[regions[TASK_COLUMN.bits]: regions[TASK_COLUMN.bits]]
    params = (conv[CONVERSION.params], conv[CONVERSION.params + 1], conv[CONVERSION.params + 2])
    status, bad_row, null_count = _convert_fixed_as(
        conv[CONVERSION.out_code], span, col, nulls, quoted_nulls, conv[CONVERSION.kind], params, _spellings(plan, h, PLAN.trues),
        _spellings(plan, h, PLAN.falses), arena[regions[TASK_COLUMN.values]: regions[TASK_COLUMN.values] + 8 * nrows], nrows, bits, validity,
        counters)
    return status, bad_row, null_count, 0


@njit(nogil=True, cache=True)
def _field_start(row_starts, ends, capacity, row, col):
    return row_starts[row] if col == 0 else ends[(col - 1) * capacity + row] + 1


@njit(nogil=True, cache=True)
def _parse_fused(buf, plan, h, args, arena, scratch, res, counters):
    """One ``fused_parse`` attempt into the fused layout. On ``OK`` adds its
    work counters and fills the result header; on ``GIVE_UP`` leaves both
    alone (the general path parses the span from scratch). Returns the status."""
    ncols, nplanned = h[PLAN.ncols], h[PLAN.nplanned]
    f = args[args[TASK.fused]:]
    kinds, slots, params = fused_columns(f, ncols)
    i64, i32, f64, bits, offsets, data, stride, data_used, validity, null_counts = fused_outputs(
        arena, scratch, f, ncols)
    bits[:] = 0  # the kernel only sets bits
    validity[:] = 0
    work = int64_words(arena, f[FUSED.counters], N_COUNTERS)  # added only if the attempt succeeds
    work[:] = 0
    status, rows, lines, _ = parse_every_record(
        buf, 0, buf.size, ncols, h[PLAN.delimiter], h[PLAN.quote],
        h[PLAN.double_quote] != 0, kinds, slots, params, _spellings(plan, h, PLAN.nulls), h[PLAN.quoted_nulls] != 0,
        _spellings(plan, h, PLAN.trues), _spellings(plan, h, PLAN.falses), no_bounds(ncols), i64, i32, f64, bits,
        offsets, data, stride, data_used, validity, null_counts, work)
    if status != OK:
        return status
    for k in range(N_COUNTERS):
        counters[k] += work[k]
    res[RESULT.status], res[RESULT.nrows], res[RESULT.parsed], res[RESULT.lines] = OK, rows, buf.size, lines
    res[RESULT.bad_column], res[RESULT.fused] = -1, 1
    planned = int64_words(plan, h[PLAN.columns], PLANNED_COLUMN.size * nplanned)
    for j in range(nplanned):
        column = planned[j * PLANNED_COLUMN.size: (j + 1) * PLANNED_COLUMN.size]
        col, explicit = column[PLANNED_COLUMN.file_column], column[PLANNED_COLUMN.explicit] == 1
        out = RESULT.size + RESULT_COLUMN.size * j
        planned_rung = args[TASK.size + j * TASK_COLUMN.size + TASK_COLUMN.start_rung]
        res[out + RESULT_COLUMN.rung] = -1 if col < 0 or explicit else planned_rung
        if col >= 0:
            res[out + RESULT_COLUMN.null_count] = null_counts[col]
            res[out + RESULT_COLUMN.string_bytes] = data_used[slots[col]] if kinds[col] == STRING else 0
    return OK


@njit(nogil=True, cache=True)
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
    h = int64_words(plan, 0, PLAN.size)
    ncols, nplanned = h[PLAN.ncols], h[PLAN.nplanned]
    skip, length, capacity = args[TASK.skip], args[TASK.length], args[TASK.capacity]
    buf = data[skip: skip + length]
    res = int64_words(arena, args[TASK.result], RESULT.size + RESULT_COLUMN.size * nplanned)
    res[:] = 0
    if args[TASK.fused] > 0:
        if _parse_fused(buf, plan, h, args, arena, scratch, res, counters) == OK:
            return OK
        if args[TASK.general_size] > args[TASK.arena_size]:
            return OUT_OF_SPACE  # an arena sized for the fused layout alone: the host retries with room
    bad_rows = int64_words(arena, args[TASK.bad_rows], 2 * BAD_ROWS_KEPT).reshape((BAD_ROWS_KEPT, 2))
    row_starts = scratch[args[TASK.row_starts]: args[TASK.row_starts] + 4 * capacity].view(np.int32)
    ends = scratch[args[TASK.ends]: args[TASK.ends] + 4 * capacity * ncols].view(np.int32)
    flags = scratch[args[TASK.flags]: args[TASK.flags] + capacity * ncols]
    unescape_room = scratch[args[TASK.unescape]: args[TASK.unescape] + args[TASK.unescape_len]]
    special = plan[h[PLAN.byte_classes]: h[PLAN.byte_classes] + 256]
    quote, escape, double_quote = h[PLAN.quote], h[PLAN.escape], h[PLAN.double_quote] != 0
    bad_before = counters[BAD_ROWS]
    status, nrows, pos, lines = tokenize(buf, 0, length, args[TASK.at_eof] != 0, ncols, h[PLAN.delimiter], special,
                                         quote, escape, double_quote, h[PLAN.row_rules], row_starts, ends,
                                         flags, bad_rows, counters)
    res[RESULT.status], res[RESULT.nrows], res[RESULT.lines], res[RESULT.bad_column] = status, nrows, lines, -1
    res[RESULT.n_bad_rows] = counters[BAD_ROWS] - bad_before
    if status == OUT_OF_SPACE:
        return status
    if status != OK and status != NEEDS_MORE:
        # The complete records before the failing one are converted all the
        # same: a value there that does not convert is the span's first problem.
        res[RESULT.error_at], pos = pos, row_starts[nrows]
    res[RESULT.parsed] = pos
    span = (buf, row_starts, ends, flags, nrows, capacity, (quote, escape, double_quote), unescape_room)
    planned = int64_words(plan, h[PLAN.columns], PLANNED_COLUMN.size * nplanned)
    ladder = int64_words(plan, h[PLAN.ladder], CONVERSION.size * h[PLAN.rungs])
    for j in range(nplanned):
        column = planned[j * PLANNED_COLUMN.size: (j + 1) * PLANNED_COLUMN.size]
        regions = args[TASK.size + j * TASK_COLUMN.size: TASK.size + (j + 1) * TASK_COLUMN.size]
        out = RESULT.size + RESULT_COLUMN.size * j
        col = column[PLANNED_COLUMN.file_column]
        res[out + RESULT_COLUMN.rung] = -1
        if col < 0:
            continue
        if column[PLANNED_COLUMN.explicit] == 1:
            status, bad_row, null_count, used = _convert(column[PLANNED_COLUMN.conversion:], span, col, plan, h, arena, regions,
                                                         counters)
            if status == OUT_OF_SPACE:
                return OUT_OF_SPACE
            if status != OK:
                if res[RESULT.bad_column] < 0 or bad_row < res[RESULT.bad_row]:
                    res[RESULT.bad_row], res[RESULT.bad_column] = bad_row, j
                    res[RESULT.bad_offset] = _field_start(row_starts, ends, capacity, bad_row, col)
                continue
        else:
            rung = regions[TASK_COLUMN.start_rung]
            while True:  # the last rung (binary) accepts every value
                conv = ladder[rung * CONVERSION.size: (rung + 1) * CONVERSION.size]
                status, bad_row, null_count, used = _convert(conv, span, col, plan, h, arena, regions,
                                                             counters)
                if status == OK or status == OUT_OF_SPACE or rung == h[PLAN.rungs] - 1:
                    break
                rung += 1
            if status == OUT_OF_SPACE:
                return OUT_OF_SPACE
            res[out + RESULT_COLUMN.rung] = rung
        res[out + RESULT_COLUMN.null_count], res[out + RESULT_COLUMN.string_bytes] = null_count, used
    return res[RESULT.status]


# The StorageApp itself. Compiled (or loaded from Numba's cache) when this
# module is imported, which only the device path does.
@storage_app(cache=True)
def csv_app(call):
    """The compiled StorageApp (a Numba cfunc; ``.address`` goes to MINIT).

    Output 0 is the arena, output 1 the scratch; the plan is the instance
    state and the span description the command's args. INIT_TSK/FINAL_TSK
    (no args) do nothing. A tokenizer error returns BAD_INPUT with its
    offset; everything else is reported in the arena's result header. Args,
    outputs or a plan it cannot trust return ``INVALID_ARGS``, a status
    outside the ABI on purpose: the engine completes the command with
    APP_ERROR and the host parses the pages itself.
    """
    args = app_args(call)
    if args.size < TASK.size:
        return 0  # INIT_TSK / FINAL_TSK: nothing to set up or flush
    data, arena, scratch = app_input(call), app_output(call, 0), app_output(call, 1)
    # Never trust the layout: a span past the input (e.g. one part of a split
    # command) or outputs smaller than the layout would mean writing blind.
    plan = app_state(call)
    if plan.size < 8 * PLAN.size or int64_words(plan, 0, PLAN.size)[PLAN.version] != PLAN_VERSION:
        return INVALID_ARGS  # a plan for other layouts (say, this kernel was cached before they changed)
    fused_words = FUSED.size + FUSED_COLUMN_WORDS * int64_words(plan, 0, PLAN.size)[PLAN.ncols]
    if (args[TASK.skip] < 0 or args[TASK.skip] + args[TASK.length] > data.size or arena.size < args[TASK.arena_size]
            or scratch.size < args[TASK.scratch_size] or args[TASK.fused] < 0
            or args[TASK.fused] > 0 and args[TASK.fused] + fused_words > args.size):
        return INVALID_ARGS
    status = parse_span_into(data, plan, args, arena, scratch, app_counters(call))
    app_set_written(call, 0, args[TASK.arena_size])
    if status == OUT_OF_SPACE:
        return OUT_OF_SPACE  # the host retries with room for every row and string byte
    if status != OK and status != NEEDS_MORE:
        app_set_error_offset(call, args[TASK.skip] + int64_words(arena, args[TASK.result], RESULT.size)[RESULT.error_at])
        return BAD_INPUT
    return OK
