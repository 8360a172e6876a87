"""The CSV StorageApp's buffers, host side: the plan blob, a task's args and arena, its result.

Everything here follows the layouts of :mod:`arrow_bridge.kernels.span_layout`,
the same ones the app reads inside the device; nothing is positional.

>>> from arrow_bridge.executors.device_buffers import conversion_words
>>> from arrow_bridge.converters import ValueRules, conversion_spec
>>> from arrow_bridge.options import CsvOptions
>>> import pyarrow as pa
>>> rules = ValueRules.from_options(CsvOptions())
>>> words = conversion_words(conversion_spec(pa.int32(), rules), rules)
>>> int(words[CONVERSION.out_code]) == VALUE_TYPES.int32
True
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np
import pyarrow as pa

from arrow_bridge.converters import STRINGS, ConversionSpec, ValueRules, conversion_spec, wrap_buffers
from arrow_bridge.executors.base import SpanResult
from arrow_bridge.fast_path import FastPlan, FusedBuffers, data_stride, fused_capacity
from arrow_bridge.inference import INFERENCE_LADDER, inference_ladder
from arrow_bridge.kernels import columns
from arrow_bridge.kernels.span_layout import (
    CHECK_UTF8,
    CONVERSION,
    FUSED,
    NO_UTF8_CHECK,
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
    fused_outputs,
)
from arrow_bridge.kernels.status import BAD_ROWS_KEPT, NEEDS_MORE, OK
from arrow_bridge.kernels.tokenizer import byte_classes, record_capacity
from arrow_bridge.read_plan import ReadPlan
from ndp_core.layout import align8, fields_of, word_list

# ---- the plan (MINIT's instance state) ----------------------------------------------------------
def conversion_words(spec: ConversionSpec, rules: ValueRules) -> list[int]:
    """One :data:`CONVERSION` row for ``spec`` (a string's ``params[0]``: whether
    ``rules`` let its values be null)."""
    if spec.kind == STRINGS:
        return word_list(CONVERSION, kind=STRING_KIND, large_offsets=int(spec.large),
                         params=[int(rules.strings_can_be_null), 0, 0],
                         string_mode=CHECK_UTF8 if spec.check_utf8 else NO_UTF8_CHECK)
    return word_list(CONVERSION, kind=spec.kind, params=[int(p) for p in spec.params],
                     out_code=getattr(VALUE_TYPES, np.dtype(spec.dtype).name))


class _PlanWriter:
    """Collects the plan's 8-byte aligned sections, which follow its :data:`PLAN` header."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.size = 8 * PLAN.size

    def add(self, data: bytes) -> int:
        """Appends a section; returns its byte offset in the plan."""
        offset = self.size
        padded = data + b"\0" * (-len(data) % 8)
        self.parts.append(padded)
        self.size += len(padded)
        return offset

    def add_words(self, words: list[int]) -> int:
        """Appends int64 words as a section; returns its byte offset."""
        return self.add(np.array(words, dtype=np.int64).tobytes())

    def add_spellings(self, spellings: tuple) -> list[int]:
        """Appends a spelling set's sections; returns its :data:`SPELLINGS` words."""
        data, offsets, first_byte_lengths, has_empty = spellings
        return word_list(SPELLINGS, data=self.add(data.tobytes()), data_len=len(data),
                         offsets=self.add(offsets.astype(np.int64).tobytes()), n_offsets=len(offsets),
                         first_bytes=self.add(first_byte_lengths.astype(np.int64).tobytes()),
                         has_empty=int(has_empty))

    def blob(self, header: list[int]) -> np.ndarray:
        return np.frombuffer(np.array(header, dtype=np.int64).tobytes() + b"".join(self.parts),
                             dtype=np.uint8).copy()


def pack_plan(read: ReadPlan) -> np.ndarray:
    """The app's parameters for this read (MINIT's initial instance state)."""
    dialect, rules = read.dialect, read.rules
    writer = _PlanWriter()
    planned = [word for c in read.columns for word in word_list(
        PLANNED_COLUMN, file_column=c.index, explicit=int(c.type is not None),
        conversion=conversion_words(conversion_spec(c.type, rules, inferring=c.converted_as_inferred), c.kernel_rules(rules))
        if c.type is not None
        else [0] * CONVERSION.size)]
    ladder = [word for t in inference_ladder(rules)
              for word in conversion_words(conversion_spec(t, rules, inferring=True), rules)]
    header = word_list(
        PLAN, version=PLAN_VERSION, ncols=read.ncols, nplanned=len(read.columns),
        delimiter=dialect.delimiter, quote=dialect.quote, escape=dialect.escape,
        double_quote=int(dialect.double_quote), row_rules=read.row_rules,
        quoted_nulls=int(rules.quoted_nulls), strings_can_be_null=int(rules.strings_can_be_null),
        nulls=writer.add_spellings(rules.nulls), trues=writer.add_spellings(rules.trues),
        falses=writer.add_spellings(rules.falses),
        byte_classes=writer.add(byte_classes(dialect.delimiter, dialect.escape).tobytes()),
        columns=writer.add_words(planned), ladder=writer.add_words(ladder), rungs=len(INFERENCE_LADDER))
    return writer.blob(header)


_TASK_COLUMN_FIELDS = fields_of(TASK_COLUMN)


# ---- one task's args and buffer sizes -----------------------------------------------------------
class OutputEstimate:
    """Output sizes seen so far (per text byte), with slack, for dense arenas,
    and whether the fused kernel gave up on the last task that tried it (the
    next ones then keep room for the general path)."""

    SLACK = 1.25

    def __init__(self, ncols: int):
        self.rows_per_byte = 0.0
        self.strings_per_byte = [0.0] * ncols
        self.fused_gave_up = False

    @property
    def known(self) -> bool:
        """Whether a task has come back yet (before that, capacities cover any input)."""
        return self.rows_per_byte > 0

    def rows(self, length: int) -> int:
        return int(length * self.rows_per_byte * self.SLACK) + 64

    def string_bytes(self, j: int, length: int) -> int:
        return int(length * self.strings_per_byte[j] * self.SLACK) + 256

    def learn(self, parsed: int, nrows: int, string_bytes: Sequence[int]) -> None:
        if parsed <= 0:
            return
        self.rows_per_byte = max(self.rows_per_byte, nrows / parsed)
        for j, used in enumerate(string_bytes):
            self.strings_per_byte[j] = max(self.strings_per_byte[j], used / parsed)


@dataclass
class TaskLayout:
    """Where one task's outputs go: the command args and the two buffer sizes
    (and the fused attempt's plan, when the args ask for one)."""

    args: np.ndarray
    arena_size: int
    scratch_size: int
    fast: Optional[FastPlan] = None


def column_specs(read: ReadPlan) -> list[Optional[ConversionSpec]]:
    """Each output column's conversion (None: inferred, any rung may come)."""
    return [conversion_spec(c.type, read.rules) if c.type is not None else None for c in read.columns]


def _value_width(spec: Optional[ConversionSpec]) -> int:
    """Bytes per value slot of a column's region (an inferred column: any rung's widest)."""
    if spec is None or spec.kind == STRINGS and spec.large:
        return 8
    return 4 if spec.kind == STRINGS else np.dtype(spec.dtype).itemsize


def task_layout(length: int, skip: int, at_eof: bool, read: ReadPlan, estimate: Optional[OutputEstimate],
                specs: Sequence[Optional[ConversionSpec]], rungs: Sequence[int], fast: Optional[FastPlan],
                fused_only: bool = False) -> TaskLayout:
    """Args and buffer sizes for a task of ``length`` text bytes, columns of
    ``specs`` (None: inferred, starting at ``rungs``), with a fused attempt by
    ``fast`` first when given.

    Without an estimate the capacities cover any input (``record_capacity``
    records; strings never outgrow their text). With one they
    are sized from earlier tasks, so the outputs are dense: an arena mostly
    untouched would still cost a huge page per region once touched (or pages
    the allocator recycles). A task that outgrows them comes back
    OUT_OF_SPACE and is retried without. ``fused_only`` (with an estimate)
    sizes the arena for the fused layout alone, which is smaller: a span the
    fused kernel gives up on then comes back OUT_OF_SPACE too.
    """
    capacity = record_capacity(length, read.ncols, read.row_rules)
    if estimate is not None:
        capacity = min(capacity, estimate.rows(length))
    header = align8(8 * (RESULT.size + RESULT_COLUMN.size * len(read.columns)))
    bad_rows = header
    arena = bad_rows + 16 * BAD_ROWS_KEPT
    bitmap = align8((capacity + 7) // 8)
    values, validity, bits, data, rooms = [], [], [], [], []
    for j, spec in enumerate(specs):
        strings = spec is None or spec.kind == STRINGS
        values.append(arena)
        bits_at = arena = arena + align8(_value_width(spec) * (capacity + 1)) + bitmap
        validity.append(bits_at - bitmap)
        bits.append(bits_at)
        if spec is None or spec.kind == columns.BOOL:
            arena += bitmap
        room = (length if estimate is None else estimate.string_bytes(j, length)) if strings else 0
        data.append(arena)
        rooms.append(room)
        arena += align8(room)
    by_field = dict(start_rung=rungs, values=values, validity=validity, bits=bits, data=data, data_capacity=rooms)
    # One TASK_COLUMN row per column, in the layout's field order (a field left out is a KeyError).
    column_words = [word for row in zip(*(by_field[name] for name in _TASK_COLUMN_FIELDS)) for word in row]
    general_arena = arena
    row_starts = 0
    ends = row_starts + align8(4 * capacity)
    flags = ends + align8(4 * capacity * read.ncols)
    unescape = flags + align8(capacity * read.ncols)
    scratch = unescape + align8(max(length, 1))
    fused_at = TASK.size + len(column_words)
    fused_words: list[int] = []
    if fast is not None:
        fused_words, fused_arena, fused_scratch = fused_section(fast, capacity, length, header)
        arena = fused_arena if fused_only and estimate is not None else max(arena, fused_arena)
        scratch = max(scratch, fused_scratch)
    head = word_list(TASK, skip=skip, length=length, at_eof=int(at_eof), capacity=capacity, result=0,
                     bad_rows=bad_rows, row_starts=row_starts, ends=ends, flags=flags, unescape=unescape,
                     unescape_len=max(length, 1), general_size=general_arena, arena_size=arena,
                     scratch_size=scratch, fused=fused_at if fast is not None else 0)
    args = np.array(head + column_words + fused_words, dtype=np.int64)
    return TaskLayout(args, arena, scratch, fast)


def fused_section(plan: FastPlan, capacity: int, length: int, arena_at: int) -> tuple[list[int], int, int]:
    """The args of a fused attempt (a :data:`FUSED` section and its per-column
    words) and the arena and scratch sizes it needs. Its arena regions start
    at ``arena_at``, over the general layout's (an attempt that gives up
    leaves nothing to keep); its string data goes to the scratch, one
    span-sized stretch per string column."""
    rows = fused_capacity(capacity)
    regions = {}
    for name, (dtype, shape, _) in plan.regions(rows).items():
        regions[name] = arena_at
        arena_at += align8(np.dtype(dtype).itemsize * math.prod(shape))
    n_i64, n_i32, n_f64, n_bits, n_str = plan.counts
    head = word_list(FUSED, capacity=rows, n_i64=n_i64, n_i32=n_i32, n_f64=n_f64, n_bits=n_bits, n_str=n_str,
                     data=0, stride=data_stride(length), **regions)
    return head + plan.column_words, arena_at, plan.string_bytes(length)


# ---- reading a task's arena back ----------------------------------------------------------------
def read_arena(arena: np.ndarray, scratch: np.ndarray, layout: TaskLayout, read: ReadPlan,
               estimate: OutputEstimate, result: SpanResult) -> None:
    """Fills ``result`` from a finished task's arena (and scratch, for the
    fused kernel's string data), wrapping its buffers zero-copy; teaches
    ``estimate`` the output sizes it saw."""
    args = layout.args
    nplanned = len(read.columns)
    at = int(args[TASK.result])
    words = arena[at: at + 8 * (RESULT.size + RESULT_COLUMN.size * nplanned)].view(np.int64)
    head = words[: RESULT.size].tolist()  # one conversion, then plain ints by field
    per_column = words[RESULT.size:].reshape(nplanned, RESULT_COLUMN.size)
    nrows = head[RESULT.nrows]
    result.status, result.nrows, result.line_breaks = head[RESULT.status], nrows, head[RESULT.lines]
    result.parsed = head[RESULT.parsed]
    n_bad = head[RESULT.n_bad_rows]
    if n_bad:
        at = int(args[TASK.bad_rows])
        bad = arena[at: at + 16 * BAD_ROWS_KEPT].view(np.int64)
        result.bad_rows = bad.reshape(-1, 2)[: min(n_bad, BAD_ROWS_KEPT)].copy()
    failed = head[RESULT.bad_column] >= 0
    if failed:  # in a complete record: before any tokenizer error
        result.bad_value = (head[RESULT.bad_row], head[RESULT.bad_column], head[RESULT.bad_offset])
    if result.status not in (OK, NEEDS_MORE):
        result.error_at = head[RESULT.error_at]
        return
    estimate.learn(result.parsed, nrows, per_column[:, RESULT_COLUMN.string_bytes].tolist())
    fused = head[RESULT.fused]
    if layout.fast is not None:
        estimate.fused_gave_up = not fused
    result.rungs = per_column[:, RESULT_COLUMN.rung].tolist()
    if fused:
        fused = args[args[TASK.fused]:]
        arrays = layout.fast.wrap(nrows, FusedBuffers(*fused_outputs(arena, scratch, fused, read.ncols)))
        result.columns = read.planned_columns(arrays)
        return
    result.columns = []
    task_columns = args[TASK.size: TASK.size + TASK_COLUMN.size * nplanned].reshape(nplanned, TASK_COLUMN.size)
    # An explicit column that failed holds a conversion stopped part way and
    # no result words (a string column's offsets then outrun its 0 bytes).
    # Only the earliest failure is named, so none of them is wrapped: the
    # span raises at its check anyway, as on the host.
    for j, column in enumerate(read.columns):
        if column.index < 0 or failed and column.type is not None:
            result.columns.append(None)
            continue
        type_ = column.type if column.type is not None else INFERENCE_LADDER[result.rungs[j]]
        result.columns.append(wrap_column(arena, task_columns[j], type_, read, nrows,
                                          int(per_column[j, RESULT_COLUMN.null_count]),
                                          int(per_column[j, RESULT_COLUMN.string_bytes])))


def wrap_column(arena: np.ndarray, regions: np.ndarray, type_: pa.DataType, read: ReadPlan, nrows: int,
                null_count: int, string_bytes: int) -> pa.Array:
    """One general-path column's Arrow array over its arena regions (its
    :data:`TASK_COLUMN` words), zero-copy."""
    spec = conversion_spec(type_, read.rules)
    bitmap_bytes = (nrows + 7) // 8
    values_at = int(regions[TASK_COLUMN.values])
    validity_at = int(regions[TASK_COLUMN.validity])
    validity = arena[validity_at: validity_at + bitmap_bytes]
    if spec.kind == STRINGS:
        width = 8 if spec.large else 4
        data_at = int(regions[TASK_COLUMN.data])
        return wrap_buffers(type_, nrows, validity, null_count, arena[values_at: values_at + width * (nrows + 1)],
                            arena[data_at: data_at + string_bytes])
    if spec.kind == columns.NULL:
        return pa.nulls(nrows)
    if spec.kind == columns.BOOL:
        bits_at = int(regions[TASK_COLUMN.bits])
        return wrap_buffers(type_, nrows, validity, null_count, arena[bits_at: bits_at + bitmap_bytes])
    width = np.dtype(spec.dtype).itemsize
    return wrap_buffers(type_, nrows, validity, null_count, arena[values_at: values_at + width * nrows])


def object_bytes(arrays: Sequence[Optional[pa.Array]]) -> int:
    """Bytes of Arrow buffers a task produced (what crosses the link: each
    buffer whole). ``get_total_buffer_size``, not ``nbytes``: the latter walks
    the array's ranges, ~2 us an array, 0.7 s of a 2-thread device read of
    lineitem SF1 (5,843 tasks x 17 arrays) spent holding the GIL.

    >>> object_bytes([pa.array([1, 2]), None, pa.array(["ab", None])])  # 16 + (1 + 12 + 2)
    31
    """
    return sum(a.get_total_buffer_size() for a in arrays if a is not None)
