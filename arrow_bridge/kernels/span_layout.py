"""The CSV StorageApp's binary layouts, defined once for the app and its host driver.

The app (:mod:`arrow_bridge.kernels.span_app`) reads these words inside the
device; the device executor (:mod:`arrow_bridge.executors.device_buffers`) packs
and reads the same words on the host. Each layout is a
:func:`ndp_core.layout.word_layout`: a ``NamedTuple`` of word offsets, a
compile-time constant in Numba code.

Three flat buffers carry everything (the ABI passes no host pointers):

* the **plan** (instance state, written once at MINIT): :data:`PLAN` header,
  then 8-byte aligned sections it points at: the byte-class table, three
  :data:`SPELLINGS` sets, one :data:`PLANNED_COLUMN` per output column and the
  inference ladder (one :data:`CONVERSION` per rung);
* the **args** (per command): :data:`TASK` then one :data:`TASK_COLUMN` per
  planned column; for a fused attempt, a :data:`FUSED` section after them
  (``TASK.fused`` says where), followed by its per-file-column kinds, slots
  and parameters;
* the **arena** (output 0) gets a :data:`RESULT` header, one
  :data:`RESULT_COLUMN` per planned column and the Arrow buffers at the
  offsets the args give; the **scratch** (output 1) holds the tokenizer's
  arrays or the fused kernel's string data.

>>> TASK.skip, TASK.size, TASK_COLUMN.size
(0, 15, 6)
>>> RESULT.size, RESULT_COLUMN.size
(16, 3)
"""
from collections import namedtuple

import numpy as np

from arrow_bridge.jit import njit
from arrow_bridge.kernels import status
from ndp_core.layout import layout_fingerprint, word_layout


#: One spelling set (nulls, trues, falses): byte offsets in the plan of its data,
#: offsets and first-byte table, and their lengths.
SPELLINGS = word_layout("Spellings", ["data", "data_len", "offsets", "n_offsets", "first_bytes", "has_empty"])

#: The plan header (MINIT's instance state starts with it).
PLAN = word_layout("PlanHeader", [
    "version", "ncols", "nplanned", "delimiter", "quote", "escape", "double_quote", "row_rules",
    "quoted_nulls", "strings_can_be_null",
    "byte_classes",  # plan offset of the tokenizer's 256-entry byte-class table
    ("nulls", SPELLINGS.size), ("trues", SPELLINGS.size), ("falses", SPELLINGS.size),
    "columns",  # plan offset of the PLANNED_COLUMN rows
    "ladder", "rungs",  # plan offset of the inference ladder's CONVERSION rows, and their count
], size=32)

#: How one Arrow type is produced: a kernel kind (``STRING_KIND`` for strings),
#: its three parameters, the value array's element type (:data:`VALUE_TYPES`), and for
#: strings the UTF-8 check mode and whether offsets are 64-bit.
CONVERSION = word_layout("Conversion", ["kind", ("params", 3), "out_code", "string_mode", "large_offsets"],
                         size=8)
STRING_KIND = -1
CHECK_UTF8, NO_UTF8_CHECK = 1, 2
#: ``CONVERSION.out_code``: the element type a fixed-width column's values are written as.
VALUE_TYPES = namedtuple("ValueTypes", ["uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64",
                                        "float32", "float64"])(*range(10))

#: One planned (output) column: its file column (-1: missing), whether its type
#: is explicit (1) or inferred (0), and its conversion (explicit types only).
PLANNED_COLUMN = word_layout("PlannedColumn", ["file_column", "explicit", ("conversion", CONVERSION.size)])

#: A command's args: where the span lies in the input pages, the row capacity,
#: arena and scratch offsets of the general path's buffers, the sizes the
#: layout needs (the app checks them before writing), where the fused section
#: starts (0: no fused attempt) and the arena bytes the general path needs
#: (above ``arena_size`` it runs only without a fused attempt).
TASK = word_layout("TaskArgs", [
    "skip", "length", "at_eof", "capacity",
    "result", "bad_rows",  # arena offsets
    "row_starts", "ends", "flags", "unescape", "unescape_len",  # scratch offsets (and the unescape room)
    "arena_size", "scratch_size", "fused", "general_size",
])  # the TASK_COLUMN rows follow, from word TASK.size

#: Per planned column in the args: the inference rung to start at and the
#: arena offsets of its values, validity, boolean bits and string data, and
#: the string data's capacity.
TASK_COLUMN = word_layout("TaskColumn", ["start_rung", "values", "validity", "bits", "data", "data_capacity"])

#: The fused section of the args (see ``fused.fused_parse``): row capacity (a
#: multiple of 8), slot counts per storage class, the arena offsets of its
#: outputs (in this order), the scratch offset of the string data and its
#: stride; then, per file column, its kind, then its slot, then 3 parameters.
FUSED_REGIONS = ("i64", "i32", "f64", "bits", "offsets", "validity", "null_counts", "data_used", "counters")
FUSED = word_layout("FusedArgs", [
    "capacity", "n_i64", "n_i32", "n_f64", "n_bits", "n_str", *FUSED_REGIONS, "data", "stride",
])  # the per-file-column words follow, from word FUSED.size
FUSED_COLUMN_WORDS = 5  # kind + slot + 3 parameters, per file column

#: The result header at ``TASK.result`` in the arena.
RESULT = word_layout("ResultHeader", [
    "status", "nrows", "parsed", "lines", "error_at", "bad_row", "bad_column", "bad_offset", "n_bad_rows",
    "fused",  # 1: the outputs are in the fused layout
], size=16)

#: Per planned column after the result header: the rung it ended at (-1:
#: explicit), its null count and the string bytes it used.
RESULT_COLUMN = word_layout("ResultColumn", ["rung", "null_count", "string_bytes"])


#: The plan's version: a fingerprint of every layout above and the statuses the
#: app returns. The app refuses a plan of another version (see ``layout_fingerprint``).
PLAN_VERSION = layout_fingerprint(
    SPELLINGS, PLAN, CONVERSION, VALUE_TYPES, PLANNED_COLUMN, TASK, TASK_COLUMN, FUSED_REGIONS, FUSED,
    FUSED_COLUMN_WORDS, RESULT, RESULT_COLUMN, status.BAD_ROWS_KEPT,
    (status.OK, status.NEEDS_MORE, status.OUT_OF_SPACE, status.BAD_VALUE, status.UNTERMINATED_QUOTE,
     status.BAD_ROW, status.GIVE_UP, status.INVALID_ARGS))


@njit(nogil=True, cache=True)
def int64_words(buf, offset, count):
    """``count`` int64 words of the byte buffer ``buf`` at byte ``offset``."""
    return buf[offset: offset + 8 * count].view(np.int64)


def fused_column_words(kinds: np.ndarray, slots: np.ndarray, params: np.ndarray) -> np.ndarray:
    """The per-file-column words after a :data:`FUSED` section, as
    :func:`fused_columns` reads them: every kind, then every slot, then each
    column's 3 parameters."""
    return np.concatenate([kinds, slots, params.reshape(-1)]).astype(np.int64)


@njit(nogil=True, cache=True)
def fused_columns(fused, ncols):
    """``(kinds, slots, params)`` of a fused section's per-file-column words."""
    words = fused[FUSED.size: FUSED.size + FUSED_COLUMN_WORDS * ncols]
    return words[:ncols], words[ncols: 2 * ncols], words[2 * ncols:].reshape((ncols, 3))


@njit(nogil=True, cache=True)
def fused_outputs(arena, scratch, fused, ncols):
    """The fused kernel's output arguments (``FusedBuffers`` order) as views of
    a task's arena and scratch, per the :data:`FUSED` section ``fused`` of its
    args. The app parses into them; the host wraps what it wrote with them."""
    cap = fused[FUSED.capacity]
    bitmap = cap // 8
    n_i64, n_i32, n_f64 = fused[FUSED.n_i64], fused[FUSED.n_i32], fused[FUSED.n_f64]
    n_bits, n_str = fused[FUSED.n_bits], fused[FUSED.n_str]
    i64 = int64_words(arena, fused[FUSED.i64], n_i64 * cap).reshape((n_i64, cap))
    i32 = arena[fused[FUSED.i32]: fused[FUSED.i32] + 4 * n_i32 * cap].view(np.int32).reshape((n_i32, cap))
    f64 = arena[fused[FUSED.f64]: fused[FUSED.f64] + 8 * n_f64 * cap].view(np.float64).reshape((n_f64, cap))
    bits = arena[fused[FUSED.bits]: fused[FUSED.bits] + n_bits * bitmap].reshape((n_bits, bitmap))
    offsets = arena[fused[FUSED.offsets]: fused[FUSED.offsets] + 4 * n_str * (cap + 1)].view(
        np.int32).reshape((n_str, cap + 1))
    data = scratch[fused[FUSED.data]: fused[FUSED.data] + n_str * fused[FUSED.stride]]
    validity = arena[fused[FUSED.validity]: fused[FUSED.validity] + ncols * bitmap].reshape((ncols, bitmap))
    return (i64, i32, f64, bits, offsets, data, fused[FUSED.stride],
            int64_words(arena, fused[FUSED.data_used], n_str), validity,
            int64_words(arena, fused[FUSED.null_counts], ncols))
