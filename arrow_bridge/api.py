"""Public entry points: ``read_csv`` (→ pyarrow.Table), ``read_pandas`` and ``to_pandas``."""
from __future__ import annotations

import dataclasses
import os
from typing import IO, TYPE_CHECKING, Any, Sequence, Union

import pyarrow as pa
import pyarrow.csv as pacsv

from arrow_bridge.options import CsvOptions, resolve_options
from arrow_bridge.preamble import read_preamble
from arrow_bridge.executors import SpanExecutor
from arrow_bridge.reader import CsvReader
from arrow_bridge.source import ByteSource, RangeSource, open_source

if TYPE_CHECKING:
    import pandas as pd

Source = Union[str, os.PathLike, IO[bytes], bytes]


def read_csv(
    source: Source,
    *,
    read_options: pacsv.ReadOptions | None = None,
    parse_options: pacsv.ParseOptions | None = None,
    convert_options: pacsv.ConvertOptions | None = None,
    byte_range: tuple[int, int] | None = None,
    device: Any = None,
    split: str = "host",
    storage_options: dict[str, Any] | None = None,
    offload: Sequence[SpanExecutor] = (),
    **options: Any,
) -> pa.Table:
    """Reads CSV into a ``pyarrow.Table``: the same schema and values as
    ``pyarrow.csv.read_csv``, parsed in parallel by compiled kernels.

    ``source`` is a path, an fsspec URL (``s3://…``, ``file://…``, compressed
    ``.gz``/``.bz2``…), a binary file object or ``bytes``. Options are pyarrow's
    option objects and/or pandas-style keywords: ``sep``, ``header``,
    ``names``, ``usecols``, ``dtype``, ``na_values``, ``keep_default_na``,
    ``true_values``, ``false_values``, ``skiprows``, ``nrows``,
    ``on_bad_lines`` (``"error"``, ``"skip"``, ``"warn"``), ``quotechar``,
    ``escapechar``, ``doublequote``, ``quoting``, ``decimal``, plus
    ``n_threads`` and ``block_size``. ``storage_options`` (as in pandas) go
    to ``fsspec.open`` for URLs and compressed files: credentials, endpoint,
    ... (``{"anon": True}`` for a public S3 bucket); other sources ignore them.

    ``byte_range=(start, stop)`` reads only the data rows in bytes
    ``[start, stop)`` of a seekable source (both ends on record boundaries,
    e.g. from :func:`arrow_bridge.ranges.record_ranges`); names come from
    ``names``/``column_names`` or the file's header. Errors still name
    file-global lines and byte offsets.

    ``device=`` runs the kernels inside a computational storage device: a
    ``Device`` (``device_emulator.ComputationalSSD(...)``,
    ``ndp_core.device.HostOnly()``) or a profile name such as
    ``"modern-gen4"``; ``split`` shares the work between host and device:
    ``"host"``, ``"device"``, ``"static:<fraction>"`` or ``"dynamic"`` (any
    but ``"host"`` needs a ``device``: a ValueError says so). The
    Table is the same whatever the device and split; the run's
    ``ndp_core.report.Report`` is recorded (``with ndp_core.report.collect()
    as c: ...``).

    ``offload`` adds places to parse spans (``arrow_bridge.executors.SpanExecutor``
    implementations, e.g. a GPU's), tried in order before the host; packages
    that bring one pass it here.

    Malformed input raises :class:`arrow_bridge.CsvParseError` (a
    ``ValueError``) naming the file, line, column and byte offset.

    >>> import io, arrow_bridge
    >>> arrow_bridge.read_csv(io.BytesIO(b"a,b\\n1,x\\n2,y\\n")).to_pydict()
    {'a': [1, 2], 'b': ['x', 'y']}
    """
    opts = resolve_options(read_options, parse_options, convert_options, **options)
    with open_source(source, storage_options) as src:
        if byte_range is not None:
            src, opts = _range_of(src, opts, byte_range)
        return CsvReader(src, opts, _device(device), split, offload=offload).read()


def calibrate(sources: Source | list[Source], block_sizes: tuple[int, ...] = (1 << 16, 1 << 18, 1 << 20),
              **options: Any):
    """Measures this machine's cost of the reader's kernels, for the timing model.

    Reads every source on the host (one thread) at each block size, timing
    every span, and fits cycles per work unit by non-negative least squares
    (``device_emulator.calibrate``). Varied spans make a good fit: give files
    with different mixes of types (integers, floats, strings, dates).
    Pass the result to ``ComputationalSSD(..., host_costs=...)`` so modeled
    host times match this machine.

    >>> import arrow_bridge
    >>> from device_emulator import ComputationalSSD
    >>> ints = b"a,b\\n" + b"".join(b"%d,%d\\n" % (i, 7 * i) for i in range(20000))
    >>> costs = arrow_bridge.calibrate(ints)
    >>> ssd = ComputationalSSD("modern-gen4", host_costs=costs)
    >>> type(costs).__name__
    'HostCosts'
    """
    from arrow_bridge.executors import TaskRecorder
    from device_emulator import calibrate as fit

    samples = []
    for source in sources if isinstance(sources, list) else [sources]:
        for block_size in block_sizes:
            recorder = TaskRecorder()
            read_csv(source, device=recorder, n_threads=1, block_size=block_size, **options)
            samples += recorder.tasks
    return fit(samples)


def _device(device: Any) -> Any:
    """``device=``: a Device, a profile name (an emulated SSD), or None (host path)."""
    if isinstance(device, str):
        from device_emulator import ComputationalSSD

        return ComputationalSSD(device)
    return device


def _range_of(src: ByteSource, opts: CsvOptions, byte_range: tuple[int, int]) -> tuple[ByteSource, CsvOptions]:
    """The source and options reading only the data rows in ``byte_range``."""
    names = opts.column_names
    if names is None:  # the file's own header names the columns
        names = read_preamble(src, opts).names
    start, stop = (int(v) for v in byte_range)
    opts = dataclasses.replace(opts, column_names=tuple(names), header=False, skip_rows=0,
                               skip_rows_after_names=0)
    return RangeSource(src, start, stop), opts


def read_pandas(source: Source, *, dtype_backend: str = "pyarrow", **options: Any) -> "pd.DataFrame":
    """Reads CSV straight into a pandas DataFrame: :func:`read_csv`, then
    :func:`to_pandas` with ``dtype_backend`` (``"pyarrow"``, ``"numpy"`` or
    ``"numpy_nullable"``).

    >>> import io, arrow_bridge
    >>> arrow_bridge.read_pandas(io.BytesIO(b"a\\n1\\n"), dtype_backend="numpy").dtypes["a"]
    dtype('int64')
    """
    return to_pandas(read_csv(source, **options), dtype_backend)


def to_pandas(table: pa.Table, dtype_backend: str = "pyarrow") -> "pd.DataFrame":
    """A pandas DataFrame of ``table``: ``pd.ArrowDtype`` columns (``"pyarrow"``,
    no conversion), NumPy dtypes (``"numpy"``, ``table.to_pandas()``) or
    pandas' nullable extension dtypes (``"numpy_nullable"``).

    >>> import pyarrow as pa
    >>> to_pandas(pa.table({"a": [1, None]}), "numpy_nullable").dtypes["a"]
    Int64Dtype()
    """
    import pandas as pd

    if dtype_backend == "pyarrow":
        return table.to_pandas(types_mapper=pd.ArrowDtype)
    if dtype_backend == "numpy":
        return table.to_pandas()
    if dtype_backend == "numpy_nullable":
        return table.to_pandas(types_mapper={
            pa.int8(): pd.Int8Dtype(), pa.int16(): pd.Int16Dtype(), pa.int32(): pd.Int32Dtype(),
            pa.int64(): pd.Int64Dtype(), pa.uint8(): pd.UInt8Dtype(), pa.uint16(): pd.UInt16Dtype(),
            pa.uint32(): pd.UInt32Dtype(), pa.uint64(): pd.UInt64Dtype(), pa.bool_(): pd.BooleanDtype(),
            pa.float32(): pd.Float32Dtype(), pa.float64(): pd.Float64Dtype(), pa.string(): pd.StringDtype(),
        }.get)
    raise ValueError(f"dtype_backend must be 'pyarrow', 'numpy' or 'numpy_nullable', got {dtype_backend!r}")
