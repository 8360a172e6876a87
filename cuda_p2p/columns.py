"""Columns and tables in GPU memory, in Arrow layout.

A :class:`GpuColumn` holds an Arrow array's buffers as device arrays: the
validity bitmap (absent when nothing is null), then the values (a bitmap
for booleans), or the offsets and bytes of strings and binaries. A
:class:`GpuTable` is named columns of one length. Both copy back to Arrow
exactly (:meth:`GpuColumn.to_arrow`), hand fixed-width values to other GPU
libraries without a copy (``__cuda_array_interface__``, ``__dlpack__`` with
CuPy) and print what lies where.

>>> from cuda_p2p.columns import device_width
>>> import pyarrow as pa
>>> device_width(pa.timestamp("ms")), device_width(pa.bool_()), device_width(pa.string())
(8, 0, None)
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np
import pyarrow as pa

from cuda_p2p import runtime
from ndp_core.report.render import format_bytes


def device_width(type_: pa.DataType) -> Optional[int]:
    """Bytes per value in a fixed-width values buffer (0: a bitmap, booleans),
    None for variable-width types (offsets and data)."""
    if pa.types.is_boolean(type_):
        return 0
    if pa.types.is_null(type_):
        return 0
    try:
        return type_.bit_width // 8
    except ValueError:
        return None


def _numeric_dtype(type_: pa.DataType) -> Optional[np.dtype]:
    """The NumPy dtype GPU libraries see the values as (None: not a plain number array)."""
    if pa.types.is_integer(type_) or pa.types.is_floating(type_):
        return np.dtype(type_.to_pandas_dtype())
    if pa.types.is_temporal(type_):
        return np.dtype(f"int{type_.bit_width}")
    return None


@dataclass
class GpuColumn:
    """One column in GPU memory, Arrow's buffers as Numba device arrays.

    ``values``: fixed-width values (as unsigned bytes, ``width`` per row), or a
    bitmap for booleans; ``offsets``/``data``: strings and binaries;
    ``validity``: a bitmap, LSB first as in Arrow, None when no value is null.
    """

    type: pa.DataType
    length: int
    null_count: int
    validity: Any = None
    values: Any = None
    offsets: Any = None
    data: Any = None

    # ---- what it is -------------------------------------------------------------------------------
    @property
    def nbytes(self) -> int:
        """Bytes of GPU memory its buffers take."""
        return sum(int(b.nbytes) for b in (self.validity, self.values, self.offsets, self.data) if b is not None)

    def __len__(self) -> int:
        return self.length

    def __repr__(self) -> str:
        return f"<GpuColumn {self.type}: {self.length:,} rows, {self.null_count:,} null, {format_bytes(self.nbytes)} on GPU>"

    # ---- to other GPU libraries -------------------------------------------------------------------
    def device_values(self) -> Any:
        """The values as a typed Numba device array (no copy): numbers and
        temporals as their integer storage; nulls' slots hold unspecified values."""
        dtype = _numeric_dtype(self.type)
        if dtype is None:
            raise TypeError(f"{self.type} values are not a flat number array (strings: .offsets/.data; "
                            "booleans: a bitmap in .values)")
        return self.values.view(dtype)

    @property
    def __cuda_array_interface__(self) -> dict:
        """The values for CuPy, PyTorch, JAX, cudf (no copy): numbers and
        temporals without nulls (as cudf, a column with nulls has none: use
        :meth:`to_cupy` with a null policy)."""
        try:
            values = self.device_values()
        except TypeError as e:
            raise AttributeError(str(e)) from None
        if self.null_count:
            raise AttributeError(f"a column with {self.null_count} nulls has no __cuda_array_interface__: "
                                 "use to_cupy(nulls='nan' | 'fill' | 'mask')")
        return runtime.array_interface(values)

    def __dlpack__(self, stream: Any = None, **protocol: Any) -> Any:
        """A DLPack capsule of the values (through CuPy; same rule as
        ``__cuda_array_interface__``); newer protocol keywords (``max_version``,
        ...) go to CuPy as given."""
        return self._cupy_module("__dlpack__").asarray(self).__dlpack__(stream=stream, **protocol)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._cupy_module("__dlpack_device__").asarray(self).__dlpack_device__()

    def to_cupy(self, nulls: str = "raise", fill_value: Any = None) -> Any:
        """The values as a CuPy array; ``nulls`` says what becomes of nulls:
        ``"raise"`` (a ValueError when there are any), ``"nan"`` (floats with NaN;
        integers become float64, as pandas does), ``"fill"`` (``fill_value`` in
        their place) or ``"mask"`` (a ``(values, valid)`` pair, ``valid`` a bool array)."""
        cp = self._cupy_module("to_cupy")
        values = cp.asarray(self.device_values())
        if self.null_count == 0 and nulls != "mask":
            return values
        valid = self._valid_cupy(cp)
        if nulls == "mask":
            return values, valid
        if nulls == "raise":
            raise ValueError(f"{self.null_count} nulls: pass nulls='nan', 'fill' (with fill_value) or 'mask'")
        if nulls == "nan":
            values = values.astype(np.float64) if values.dtype.kind in "iu" else values.copy()
            return cp.where(valid, values, cp.nan)
        if nulls == "fill":
            if fill_value is None:
                raise ValueError("nulls='fill' needs a fill_value")
            return cp.where(valid, values, values.dtype.type(fill_value))
        raise ValueError(f"nulls={nulls!r}: expected 'raise', 'nan', 'fill' or 'mask'")

    def _valid_cupy(self, cp: Any) -> Any:
        if self.validity is None:
            return cp.ones(self.length, dtype=bool)
        bits = cp.asarray(self.validity.view(np.uint8))
        return cp.unpackbits(bits, bitorder="little")[: self.length].astype(bool)

    @staticmethod
    def _cupy_module(what: str) -> Any:
        cp = runtime.cupy()
        if cp is None:
            raise RuntimeError(f"{what} needs CuPy (pip install cupy-cuda12x) on a real GPU; "
                               "device_values() gives a Numba device array without it")
        return cp

    # ---- back to the host -------------------------------------------------------------------------
    def __reduce__(self) -> tuple:
        """Pickled as host copies of its buffers, which go to the GPU of the process that
        unpickles them: Dask moves a partition between workers so (device arrays do not
        pickle: the CUDA simulator's recurse without end, and the GPU is another one there)."""
        host = [None if b is None else b.copy_to_host() for b in (self.validity, self.values, self.offsets, self.data)]
        return _column_on_gpu, (self.type, self.length, self.null_count, *host)

    def to_arrow(self) -> pa.Array:
        """A copy in host memory: equals the Arrow array it was made from."""
        if pa.types.is_null(self.type):
            return pa.nulls(self.length)
        buffers = [None if b is None else pa.py_buffer(b.copy_to_host())
                   for b in (self.validity, self.values, self.offsets, self.data)]
        validity, values, offsets, data = buffers
        rest = [offsets, data] if offsets is not None else [values]
        return pa.Array.from_buffers(self.type, self.length, [validity, *rest], null_count=self.null_count)


def _column_on_gpu(type_: pa.DataType, length: int, null_count: int, *host: Optional[np.ndarray]) -> GpuColumn:
    """A :class:`GpuColumn` of host copies of its buffers (its pickle), copied to this process's GPU."""
    cuda = runtime.cuda()
    return GpuColumn(type_, length, null_count, *(None if b is None else cuda.to_device(b) for b in host))


@dataclass
class TransferStats:
    """How a table reached GPU memory: bytes copied host to device, the path."""

    path: str = "host"  # "host" (host parse, pinned copies), "p2p" (device arenas), "gpu" (GPU-parsed)
    h2d_bytes: int = 0
    d2d_bytes: int = 0  # placed GPU to GPU: columns of GPU-parsed spans, never sent up again
    copies: int = 0  # host -> GPU copies
    launches: int = 0  # kernels launched to place them (bitmaps, zeroing)
    allocations: int = 0  # GPU buffers allocated for them
    batches: int = 0  # groups of spans copied together while the read went on
    seconds: float = 0.0  # from the delivery's start (the read's) to its last copy queued
    after_read_seconds: float = 0.0  # of which after the host Table was done: the last batch, copies waited for
    spans_parsed_on_gpu: int = 0
    spans_parsed_elsewhere: int = 0
    gpu_parsed_bytes: int = 0  # text of the spans parsed on the GPU
    d2h_bytes: int = 0  # their outputs copied back to the host (before their columns go up again)
    gpu_parse_seconds: float = 0.0  # their parse, each span's wall time summed: text in, kernels, outputs back
    gpu_text_seconds: float = 0.0  # of which copying their text in
    gpu_busy_seconds: float = 0.0  # wall time some span was past its text's copy in (overlaps once)
    gpu_parse_steps: dict[str, float] = field(default_factory=dict)  # all of it by step (gpu_parse.GpuParseTime)
    columns_streamed: int = 0  # copied in batches while the read went on
    columns_recopied: int = 0  # copied again from the finished Table (types settled late, rows cut, ...)
    growths: int = 0  # GPU buffers that outgrew their estimate (each a copy on the GPU)

    @property
    def gpu_parse_gb_per_s(self) -> Optional[float]:
        """GB/s of GPU parsing once the text is on the GPU (kernels and outputs
        back; None when no span was parsed there): the text over the wall time
        some span spent past its copy in (``gpu_busy_seconds``), or over the
        spans' summed times less their copies where that was not recorded.
        Spans the GPU declined after trying are left out, their time too: many
        of them and this overstates what a read got.

        >>> TransferStats(gpu_parsed_bytes=2 * 10**9, gpu_parse_seconds=1.5, gpu_text_seconds=0.5).gpu_parse_gb_per_s
        2.0
        >>> TransferStats(gpu_parsed_bytes=2 * 10**9, gpu_parse_seconds=9.0, gpu_busy_seconds=0.5).gpu_parse_gb_per_s
        4.0
        """
        seconds = self.gpu_busy_seconds or self.gpu_parse_seconds - self.gpu_text_seconds
        return self.gpu_parsed_bytes / seconds / 1e9 if self.gpu_parsed_bytes and seconds > 0 else None

    def add_copies(self, stager: Any) -> None:
        """Counts what a :class:`~cuda_p2p.transfer.PinnedStager` copied."""
        self.h2d_bytes += stager.copied
        self.d2d_bytes += stager.copied_on_gpu
        self.copies += stager.copies
        self.launches += stager.launches
        self.allocations += stager.allocations


@dataclass
class GpuTable:
    """Named :class:`GpuColumn` s of one length, with the schema ``arrow_bridge.read_csv`` gives.

    ``report`` is the device's Report when an emulated SSD parsed (P2P),
    ``stats`` what was copied.
    """

    schema: pa.Schema
    columns: list[GpuColumn]
    num_rows: int
    stats: TransferStats = field(default_factory=TransferStats)
    report: Any = None

    @property
    def column_names(self) -> list[str]:
        return list(self.schema.names)

    @property
    def nbytes(self) -> int:
        return sum(c.nbytes for c in self.columns)

    def column(self, key: int | str) -> GpuColumn:
        """A column by position or name."""
        return self.columns[key if isinstance(key, int) else self.schema.get_field_index(key)]

    __getitem__ = column

    def select(self, keys: list[int | str]) -> "GpuTable":
        """These columns, in this order (as ``pyarrow.Table.select``)."""
        picked = [self.column(key) for key in keys]
        fields = [self.schema.field(key) for key in keys]
        return dataclasses.replace(self, schema=pa.schema(fields, metadata=self.schema.metadata), columns=picked)

    def __len__(self) -> int:
        return self.num_rows

    def to_arrow(self) -> pa.Table:
        """A host copy: ``equals`` the Table ``arrow_bridge.read_csv`` reads from the same file."""
        return pa.Table.from_arrays([c.to_arrow() for c in self.columns], schema=self.schema)

    def to_cudf(self) -> Any:
        """A ``cudf.DataFrame`` (cudf must be importable)."""
        try:
            import cudf
        except ImportError as e:
            raise RuntimeError("to_cudf() needs cudf (RAPIDS); to_arrow() or column(...).to_cupy() work "
                               "without it") from e
        return cudf.DataFrame.from_arrow(self.to_arrow())

    def __repr__(self) -> str:
        lines = [f"cuda_p2p.GpuTable: {self.num_rows:,} rows x {len(self.columns)} columns, "
                 f"{format_bytes(self.nbytes)} on {runtime.describe()}"]
        width = max((len(n) for n in self.column_names), default=0)
        for name, column in zip(self.column_names, self.columns):
            nulls = f", {column.null_count:,} null" if column.null_count else ""
            lines.append(f"  {name:<{width}}  {str(column.type):<16} {format_bytes(column.nbytes):>10}{nulls}")
        back = f", {format_bytes(self.stats.d2d_bytes)} GPU->GPU" if self.stats.d2d_bytes else ""
        back += f", {format_bytes(self.stats.d2h_bytes)} GPU->host" if self.stats.d2h_bytes else ""
        lines.append(f"  (arrived by {self.stats.path}: {format_bytes(self.stats.h2d_bytes)} host->GPU "
                     f"in {self.stats.copies} copies{back})")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        import html

        rows = "".join(f"<tr><td>{html.escape(n)}</td><td>{html.escape(str(c.type))}</td>"
                       f"<td style='text-align:right'>{format_bytes(c.nbytes)}</td>"
                       f"<td style='text-align:right'>{c.null_count:,}</td></tr>"
                       for n, c in zip(self.column_names, self.columns))
        return (f"<b>GpuTable</b>: {self.num_rows:,} rows, {format_bytes(self.nbytes)} on "
                f"{html.escape(runtime.describe())}, arrived by {self.stats.path}"
                "<table><tr><th>column</th><th>type</th><th>GPU bytes</th><th>nulls</th></tr>"
                f"{rows}</table>")

