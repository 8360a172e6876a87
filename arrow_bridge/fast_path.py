"""The one-pass path for spans whose column types are known.

Once every selected column has a type (given, or the rung the first spans
inferred), a span is parsed by :func:`kernels.fused.fused_parse` straight into
typed buffers, without the tokenizer's field table. The kernel gives up on
anything irregular, and the reader then parses that span on the general path:
the result is the same Table either way, only faster when the data is regular.

A :class:`FastPlan` is built per combination of column types; it knows each
file column's kind and its row in the kernel's 2-D output arrays, and wraps
those rows as Arrow arrays (zero-copy except string data, which is copied out
of a reused workspace at its exact size). The device path runs the same
kernel inside its StorageApp, into views of a task's arena, and wraps them
with the same :meth:`FastPlan.wrap`.
"""
from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Iterator, Mapping, NamedTuple, Optional, Sequence

import numpy as np
import pyarrow as pa

from arrow_bridge.converters import STRINGS, ValueRules, conversion_spec, wrap_buffers
from arrow_bridge.dialect import Dialect
from arrow_bridge.inference import INFERENCE_LADDER
from arrow_bridge.kernels import columns
from arrow_bridge.kernels.span_layout import FUSED_REGIONS, fused_column_words
from arrow_bridge.kernels.status import OK, READER_COUNTERS
from arrow_bridge.kernels.fused import SKIP, STRING, fused_parse, no_bounds
from arrow_bridge.kernels.tokenizer import NO_CHAR
from arrow_bridge.workers import WORKSPACE_KEEP_BYTES

if TYPE_CHECKING:
    from arrow_bridge.read_plan import ReadPlan

# Storage classes: the kernel's 2-D output arrays.
_I64, _I32, _F64, _BITS, _STR = range(5)


@dataclass(frozen=True)
class _Column:
    """One selected column: its file position, type, kind and storage slot."""

    index: int
    type: pa.DataType
    kind: int
    storage: int
    slot: int
    dtype: type  # value dtype of the Arrow array (narrower ints are cast from int64)
    large: bool  # int64 string offsets


class ColumnBuffers(NamedTuple):
    """One column of a span's fused outputs, as slices of them (see
    :meth:`FastPlan.column_buffers`): the validity bitmap (from bit 0), then
    the values (a bitmap for booleans) or the string offsets and bytes. The
    Arrow array takes them as they are, except string offsets of a large type
    and ints narrower than int64 (both stored wider)."""

    column: _Column
    nulls: int
    validity: Any = None
    values: Any = None  # values, a boolean bitmap, or string offsets (int32)
    data: Any = None  # string bytes

    @property
    def as_stored(self) -> bool:
        """Whether the column's Arrow array is these very buffers (not widened
        string offsets, not ints cast narrower; a null column has none)."""
        c = self.column
        if c.kind == columns.NULL:
            return False
        if self.data is not None:
            return not c.large
        return not (c.storage == _I64 and c.kind == columns.SIGNED and self.values.dtype != c.dtype)


def _storage_of(spec, type_: pa.DataType) -> int:
    if spec.kind == STRINGS:
        return _STR
    if spec.kind == columns.FLOAT:
        return _F64
    if spec.kind == columns.BOOL:
        return _BITS
    if spec.kind in (columns.DATE, columns.TIME) and type_.bit_width == 32:
        return _I32
    return _I64


def _fusable(spec, type_: pa.DataType) -> bool:
    if spec.kind == STRINGS:
        return True
    if spec.kind == columns.FLOAT:
        return type_.bit_width == 64
    return spec.kind != columns.UNSIGNED


class FastPlan:
    """The fused kernel's arguments for one assignment of types to columns."""

    def __init__(self, ncols: int, columns: Sequence[tuple[int, pa.DataType]], rules: ValueRules,
                 dialect: Dialect, bounds: Mapping[int, tuple[Any, Any]] = MappingProxyType({}),
                 string_nulls: Mapping[int, bool] = MappingProxyType({}), inferred: frozenset[int] = frozenset()):
        self.ncols = ncols
        self.rules = rules
        self.dialect = dialect
        self.bounds = _bounds_arrays(ncols, dict(columns), bounds)
        self.kinds = np.full(ncols, SKIP, dtype=np.int64)
        self.slots = np.zeros(ncols, dtype=np.int64)
        self.params = np.zeros((ncols, 3), dtype=np.int64)
        self.counts = [0] * 5
        self._column_words: Optional[list[int]] = None
        self.columns: list[_Column] = []
        for index, type_ in columns:
            spec = conversion_spec(type_, rules, inferring=index in inferred)
            storage = _storage_of(spec, type_)
            column = _Column(index, type_, STRING if spec.kind == STRINGS else spec.kind, storage,
                             self.counts[storage], spec.dtype, spec.large)
            self.counts[storage] += 1
            self.columns.append(column)
            self.kinds[index], self.slots[index] = column.kind, column.slot
            nulls = string_nulls.get(index, rules.strings_can_be_null)
            self.params[index] = (int(spec.check_utf8), int(nulls), 0) if spec.kind == STRINGS else spec.params

    @property
    def column_words(self) -> list[int]:
        """Its per-file-column words for a device task's fused section
        (``span_layout.fused_column_words``), computed once."""
        if self._column_words is None:
            self._column_words = fused_column_words(self.kinds, self.slots, self.params).tolist()
        return self._column_words

    @classmethod
    def build(cls, ncols: int, columns: Sequence[tuple[int, pa.DataType]], rules: ValueRules,
              dialect: Dialect, bounds: Mapping[int, tuple[Any, Any]] = MappingProxyType({}),
              string_nulls: Mapping[int, bool] = MappingProxyType({}), inferred: frozenset[int] = frozenset()
              ) -> Optional["FastPlan"]:
        """The plan, or None where the fused kernel cannot answer exactly
        (an escape character, a type it does not produce, a column selected twice).
        ``string_nulls``: ``{file column: whether a null spelling makes its text null}``
        where it is not ``rules.strings_can_be_null``
        (:meth:`arrow_bridge.read_plan.ColumnPlan.kernel_rules`).
        ``bounds``: ``{file column: (low, high)}``, rows to keep
        (:meth:`arrow_bridge.filters.RowFilter.bounds`). ``inferred``: file columns
        whose type inference chose (:func:`~arrow_bridge.converters.conversion_spec`).

        >>> from arrow_bridge.options import CsvOptions
        >>> opts = CsvOptions()
        >>> plan = FastPlan.build(2, [(0, pa.int64()), (1, pa.string())],
        ...                       ValueRules.from_options(opts), Dialect.from_options(opts))
        >>> plan.kinds.tolist()
        [1, 9]
        """
        indices = [i for i, _ in columns]
        if dialect.escape != NO_CHAR or len(set(indices)) != len(indices):
            return None
        if not all(_fusable(conversion_spec(t, rules), t) for _, t in columns):
            return None
        return cls(ncols, columns, rules, dialect, bounds, string_nulls, inferred)

    def parse(self, buf: np.ndarray, row_capacity: int, counters: np.ndarray
              ) -> Optional[tuple[int, int, dict[int, pa.Array], int]]:
        """``(rows kept, line_breaks, {file column: array}, rows parsed)``, or
        None when the kernel gave up. A span with more rows than
        ``row_capacity`` (an estimate) is parsed again with room for the
        most it can hold."""
        d, rules = self.dialect, self.rules
        most = row_capacity_hint(len(buf), self.ncols, 0.0)
        while True:
            out = self.allocate(row_capacity, len(buf))
            scratch_counters = np.zeros_like(counters)
            status, rows, lines, parsed = fused_parse(
                buf, 0, len(buf), self.ncols, np.int64(d.delimiter), np.int64(d.quote), d.double_quote,
                self.kinds, self.slots, self.params, rules.nulls, rules.quoted_nulls, rules.trues, rules.falses,
                self.bounds, *out, scratch_counters)
            if status == OK or rows < fused_capacity(row_capacity) or row_capacity >= most:
                break
            row_capacity = most
        if status != OK:
            return None
        counters += scratch_counters
        return rows, lines, self.wrap(rows, out), parsed

    def regions(self, rows: int) -> dict[str, tuple[type, tuple[int, ...], bool]]:
        """The kernel's output arrays for ``rows`` (a multiple of 8) as
        ``{region: (dtype, shape, zeroed)}``, named and ordered as a device
        task's arena regions (``span_layout.FUSED_REGIONS``; the app's
        :func:`~arrow_bridge.kernels.span_layout.fused_outputs` takes the same
        views). ``zeroed``: the kernel only sets bits in it, so it must start
        at zero (the app zeroes its own views)."""
        n_i64, n_i32, n_f64, n_bits, n_str = self.counts
        shapes = dict(
            i64=(np.int64, (n_i64, rows), False), i32=(np.int32, (n_i32, rows), False),
            f64=(np.float64, (n_f64, rows), False), bits=(np.uint8, (n_bits, rows // 8), True),
            offsets=(np.int32, (n_str, rows + 1), False), validity=(np.uint8, (self.ncols, rows // 8), True),
            null_counts=(np.int64, (self.ncols,), False), data_used=(np.int64, (n_str,), False),
            counters=(np.int64, (len(READER_COUNTERS),), False))
        return {name: shapes[name] for name in FUSED_REGIONS}

    def allocate(self, row_capacity: int, span_bytes: int) -> "FusedBuffers":
        """Fresh output arrays for a span of ``span_bytes`` (string values go to
        this thread's workspace: :meth:`wrap` copies them out)."""
        i64, i32, f64, bits, offsets, validity, null_counts, data_used, _ = (
            (np.zeros if zeroed else np.empty)(shape, dtype)
            for dtype, shape, zeroed in self.regions(fused_capacity(row_capacity)).values())
        return FusedBuffers(i64, i32, f64, bits, offsets, _string_workspace(self.string_bytes(span_bytes)),
                            data_stride(span_bytes), data_used, validity, null_counts)

    def string_bytes(self, span_bytes: int) -> int:
        """Room for the string columns' values of a span: one stretch each."""
        return self.counts[_STR] * data_stride(span_bytes)

    def column_buffers(self, rows: int, out: "FusedBuffers") -> Iterator[ColumnBuffers]:
        """Each column's slices of the kernel's outputs ``out``, in Arrow's
        layout and without a copy, whatever memory ``out`` lies in (host
        arrays, a device arena's views, GPU arrays): the one place that knows
        where a column's values are."""
        storage = {_I64: out.i64, _I32: out.i32, _F64: out.f64}
        bitmap_bytes = (rows + 7) // 8
        for c in self.columns:
            nulls = int(out.null_counts[c.index])
            if c.kind == columns.NULL:
                yield ColumnBuffers(c, nulls)
                continue
            bitmap = out.validity[c.index, :bitmap_bytes]
            if c.storage == _STR:
                base = c.slot * out.stride
                yield ColumnBuffers(c, nulls, bitmap, out.offsets[c.slot, : rows + 1],
                                    out.data[base: base + int(out.data_used[c.slot])])
            elif c.storage == _BITS:
                yield ColumnBuffers(c, nulls, bitmap, out.bits[c.slot, :bitmap_bytes])
            else:
                yield ColumnBuffers(c, nulls, bitmap, storage[c.storage][c.slot, :rows])

    def wrap(self, rows: int, out: "FusedBuffers") -> dict[int, pa.Array]:
        """The kernel's output rows as ``{file column: array}``: values and
        validity zero-copy (``out`` may be views of a device arena), string
        data copied out at its exact size (it lies in a reused workspace)."""
        arrays = {}
        for b in self.column_buffers(rows, out):
            c = b.column
            if c.kind == columns.NULL:
                arrays[c.index] = pa.nulls(rows)
            elif b.data is not None:
                offsets = b.values if b.as_stored else b.values.astype(np.int64)
                arrays[c.index] = wrap_buffers(c.type, rows, b.validity, b.nulls, offsets, b.data.copy())
            else:
                values = b.values if b.as_stored else b.values.astype(c.dtype)
                arrays[c.index] = wrap_buffers(c.type, rows, b.validity, b.nulls, values)
        return arrays


class FastPlanCache:
    """One :class:`FastPlan` per assignment of inference rungs, built on first
    use and shared by every executor of a read (None where the fused kernel
    cannot run at those types).

    >>> import io
    >>> from arrow_bridge.options import CsvOptions
    >>> from arrow_bridge.read_plan import ReadPlan
    >>> from arrow_bridge.source import open_source
    >>> read = ReadPlan.build(open_source(io.BytesIO(b"")), CsvOptions(), ["a", "b"])
    >>> cache = FastPlanCache(read)
    >>> cache.get((1, 7)) is cache.get((1, 7))  # int64, string
    True
    """

    def __init__(self, read: "ReadPlan"):
        self.read = read
        self._plans: dict[tuple[int, ...], Optional[FastPlan]] = {}
        self._lock = threading.Lock()

    def get(self, rungs: tuple[int, ...]) -> Optional[FastPlan]:
        """The plan with inferred columns at ``rungs`` (explicit ones at their type)."""
        with self._lock:
            if rungs not in self._plans:
                read = self.read
                typed = [(c.index, c.type if c.type is not None else INFERENCE_LADDER[rungs[j]])
                         for j, c in enumerate(read.columns) if c.index >= 0]
                string_nulls = {c.index: c.kernel_rules(read.rules).strings_can_be_null
                                for c in read.columns if c.index >= 0}
                inferred = frozenset(c.index for c in read.columns if c.converted_as_inferred)
                self._plans[rungs] = FastPlan.build(read.ncols, typed, read.rules, read.dialect,
                                                    self._bounds(typed), string_nulls, inferred)
            return self._plans[rungs]

    def _bounds(self, typed: Sequence[tuple[int, pa.DataType]]) -> dict[int, tuple[Any, Any]]:
        """The read filter's bounds by file column, at these types. None where
        the filter runs on the finished Table (``stages_spans``), where
        ``nrows`` counts the rows parsed, or on a column selected twice."""
        row_filter = self.read.opts.row_filter
        if row_filter is None or not self.read.stages_spans or self.read.opts.nrows is not None:
            return {}
        types = dict(typed)
        names = [c.name for c in self.read.columns]
        files = {c.name: c.index for c in self.read.columns if c.index >= 0 and names.count(c.name) == 1}
        bounds = row_filter.bounds({name: types[index] for name, index in files.items()})
        return {files[name]: interval for name, interval in bounds.items()}


def _bounds_arrays(ncols: int, types: Mapping[int, pa.DataType], bounds: Mapping[int, tuple[Any, Any]]) -> tuple:
    """``bounds`` as the fused kernel's argument (:func:`kernels.fused.no_bounds`)."""
    tested, low_i, high_i, low_f, high_f = no_bounds(ncols)
    for index, (low, high) in bounds.items():
        tested[index] = 1
        if pa.types.is_floating(types[index]):
            low_f[index], high_f[index] = low, high
        else:
            low_i[index], high_i[index] = low, high
    return tested, low_i, high_i, low_f, high_f


class FusedBuffers(NamedTuple):
    """The fused kernel's output arguments, in its order: arrays the host path
    allocates, or views of a device task's arena and scratch
    (:func:`kernels.span_app.fused_outputs`)."""

    i64: np.ndarray  # (slots, capacity) values of the int64-stored columns
    i32: np.ndarray  # (slots, capacity) date32 / time32 values
    f64: np.ndarray  # (slots, capacity)
    bits: np.ndarray  # (slots, capacity / 8) boolean values, zeroed
    offsets: np.ndarray  # (string slots, capacity + 1) int32
    data: np.ndarray  # string slot k's bytes at [k * stride:]
    stride: int
    data_used: np.ndarray  # per string slot
    validity: np.ndarray  # (file columns, capacity / 8), zeroed
    null_counts: np.ndarray  # per file column


def fused_capacity(row_capacity: int) -> int:
    """The rows the kernel's arrays hold for ``row_capacity``: a multiple of 8,
    as the kernel takes its capacity from the validity bitmaps' width."""
    return (row_capacity + 7) & ~7


def data_stride(span_bytes: int) -> int:
    """Bytes per string slot: a slot may take the whole span, and the kernel
    stores whole 8-byte words."""
    return span_bytes + 8


_workspace = threading.local()


def _string_workspace(size: int) -> np.ndarray:
    """This thread's buffer for string values, grown as needed; the kernel
    writes each string column in its own stretch, copied out after the call."""
    size = max(size, 1)
    if size > WORKSPACE_KEEP_BYTES:
        return np.empty(size, dtype=np.uint8)
    if getattr(_workspace, "data", np.empty(0)).shape[0] < size:
        _workspace.data = np.empty(size, dtype=np.uint8)
    return _workspace.data[:size]


def row_capacity_hint(span_bytes: int, ncols: int, densest: float) -> int:
    """Rows to make room for: from the densest span seen (rows per byte), with
    slack; without one, the most a span can hold (each record takes at least
    ``ncols`` bytes). A span with more rows is parsed again with room for the
    most.

    The slack is four standard deviations of a span's row count where row
    lengths vary as much as their mean (``4 / sqrt(rows)``), at least 1/16:
    25% at 256 rows, 9% at 2,000, 1/16 from 4,096 up. Slack is memory kept:
    the kernel's (slots, capacity) arrays hold it between their slots, and
    NumPy asks for huge pages for arrays of 4 MB and more, so a slot's 2 MB
    page touched at its start is resident whole (a flat 25% kept the edge list
    in 8 MiB spans at 920 MB, 1/16 at 856 MB).

    >>> row_capacity_hint(2 << 20, 2, 0.0), row_capacity_hint(2 << 20, 2, 1 / 16)
    (1048577, 139328)
    """
    most = span_bytes // max(ncols, 1) + 1
    if densest <= 0:
        return most
    rows = span_bytes * densest
    slack = max(1 / 16, 4 / math.sqrt(max(rows, 1.0)))
    return min(most, int(rows * (1 + slack)) + 64)
