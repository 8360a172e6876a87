"""Per-partition work: read one record-aligned byte range into a pandas DataFrame.

Everything here runs inside a Dask task (a worker process, a thread of the
threaded scheduler, or the caller with the synchronous scheduler); the graph
is built in :mod:`dask_plugin.core`. A task receives one :class:`Part` and the
shared :class:`CsvPartReader` (column names, the sample's schema, reader
options, device spec), reads with ``arrow_bridge.read_csv(path,
byte_range=...)``, logs the read's device Reports (:mod:`dask_plugin.reports`)
and converts to pandas.
"""
from __future__ import annotations

import contextvars
from dataclasses import dataclass, field, replace
from typing import Any, Callable, NamedTuple, Optional, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa

import arrow_bridge
from arrow_bridge import CsvParseError
from arrow_bridge.api import to_pandas
from arrow_bridge.filters import and_filters
from arrow_bridge.pandas_frame import with_pandas_dtypes
from dask_plugin.devices import DeviceSpec, device_for
from dask_plugin.reports import publish
from ndp_core.report import collect


class Part(NamedTuple):
    """One partition: bytes ``[start, stop)`` of ``path`` (both None: the whole
    file, for compressed files that cannot be split)."""

    path: str
    start: Optional[int]
    stop: Optional[int]
    index: int  # partition number in the collection
    file_index: int  # position of ``path`` in the file list (the path column's code)


@dataclass(frozen=True)
class CsvPartReader:
    """Reads one :class:`Part`; one instance is shared by all partitions.

    ``names`` are the file's columns, ``schema`` the selected columns with
    the types every partition uses (the sample's, or the user's ``dtype``).
    ``options`` are reader keywords for the data rows (dialect, null
    spellings, ``on_bad_lines``, ...); ``whole_file_options`` add the header
    handling for parts that read a whole file. The ``columns`` keyword lets
    Dask's optimizer push a column selection into the read.
    """

    names: tuple[str, ...]
    schema: pa.Schema
    options: dict
    whole_file_options: dict
    user_typed: frozenset = frozenset()
    dtype_backend: str = "pyarrow"
    path_column: Optional[str] = None
    paths: tuple[str, ...] = ()
    device: Optional[DeviceSpec] = None
    split: str = "host"
    read_id: str = ""
    storage_options: dict = field(default_factory=dict)
    destination: str = "host"  # "gpu": partitions in GPU memory (cuda_p2p), as cudf DataFrames
    gpu_share: float = 0.0  # of the spans, parsed on the GPU (destination "gpu")
    filters: Optional[list] = None  # a DNF Dask's optimizer pushed into the read (dask_plugin.pushdown)
    dtypes: "FrameDtypes" = field(default_factory=lambda: FrameDtypes())  # every partition's pandas dtypes (the meta's)

    def __call__(self, part: Part, columns: Optional[Sequence[str]] = None) -> Any:
        if self.destination == "gpu":
            return self.gpu_table(part, columns).to_cudf()
        wanted = list(self.schema.names) if columns is None else [c for c in columns if c != self.path_column]
        # Only the path column asked for: read one column anyway, for the row count.
        read_cols = wanted or list(self.schema.names[:1])
        empty = part.start is not None and part.start >= part.stop  # no data (a 0-byte file has no header either)
        table = self.schema.empty_table().select(read_cols) if empty else self._read(part, read_cols)
        df = self.dtypes.frame(table.select(wanted), self.dtype_backend, _where(part))
        if self.path_column is not None and (columns is None or self.path_column in columns):
            df[self.path_column] = pd.Categorical.from_codes(np.full(len(df), part.file_index, dtype=np.int32), categories=self.paths)
        return df if columns is None else df[list(columns)]

    def __dask_tokenize__(self) -> tuple:
        # ``read_id`` (dask_plugin.core.read_csv) tokenizes the files, reader
        # options, schema, dtype backend, path column, device spec, split,
        # storage options and pandas extension dtypes: every other field is derived
        # from those (names and user_typed from the files' headers and the options,
        # paths from the files, dtypes from the sample).
        return ("CsvPartReader", self.read_id, repr(self.filters))

    def with_filters(self, terms: list) -> "CsvPartReader":
        """This reader, keeping only the rows ``terms`` (a DNF) keeps too."""
        return replace(self, filters=terms if self.filters is None else and_filters(self.filters, terms))

    def gpu_table(self, part: Part, columns: Optional[Sequence[str]] = None) -> Any:
        """The part as a ``cuda_p2p.GpuTable`` in this worker's GPU memory."""
        import cuda_p2p

        return self._read(part, list(self.schema.names) if columns is None else list(columns),
                          reader=cuda_p2p.read_csv, gpu_share=self.gpu_share)

    # ---- reading ---------------------------------------------------------------------------
    def _read(self, part: Part, columns: list[str], reader: Callable[..., Any] = arrow_bridge.read_csv,
              **extra: Any) -> Any:
        kwargs = dict(self.whole_file_options if part.start is None else self.options, **extra)
        kwargs["usecols"] = wanted = columns
        if self.filters is not None:
            kwargs["filters"] = and_filters(kwargs.get("filters"), self.filters)
            columns = [*columns, *(term[0] for group in self.filters for term in group if term[0] not in columns)]
        kwargs["dtype"] = {name: self.schema.field(name).type for name in columns}  # the filter's columns too
        if part.start is not None:
            kwargs.update(byte_range=(part.start, part.stop), names=list(self.names), header=None)
        if self.device is not None:
            kwargs.update(device=device_for(self.device), split=self.split)
        kwargs["storage_options"] = self.storage_options
        try:
            table, reports = _read_collecting(reader, part.path, kwargs)
        except CsvParseError as err:
            raise self._explain(err) from None
        if reports:
            publish(self.read_id, part.index, reports)
        # pandas' usecols gives the file's order (semantics="pandas"); a projection wants its own
        return table if table.column_names == wanted else table.select(wanted)

    def _explain(self, err: CsvParseError) -> CsvParseError:
        """A value that does not fit the sample's type: say where the type came from."""
        if err.column is None or err.column in self.user_typed or not (err.reason or "").startswith("cannot convert"):
            return err
        hint = (f"; the Dask partitions use the types inferred from a sample of the first file "
                f"({err.column!r}: {self.schema.field(err.column).type}); pass dtype={{{err.column!r}: ...}} "
                f"to read_csv, or a larger sample=")
        return CsvParseError(err.path, err.line, err.column, err.byte_offset, err.reason + hint)


def _where(part: Part) -> str:
    return part.path if part.start is None else f"{part.path} (bytes {part.start}-{part.stop})"


@dataclass(frozen=True)
class FrameDtypes:
    """The pandas dtypes of a read's partitions, which must be those of its meta
    whatever a partition holds.

    ``extension``: the pandas extension dtypes ``dtype=`` asked for (``Int64``,
    ``boolean``, ``category``...), which the Arrow Table cannot carry: each
    column is converted to it as ``read_pandas`` converts (``with_pandas_dtypes``:
    from its Arrow values, so ``Int64`` keeps integers past 2**53, where NumPy's
    float64 would not). ``expected``: the meta's dtypes
    (None while the meta itself is made): with NumPy dtypes a partition's own
    missing values would change them (an int column becomes float64, a bool one
    object), so a partition is given them, or raises as Dask does where its
    values cannot take them.

    >>> dtypes = FrameDtypes({"b": pd.BooleanDtype()})
    >>> dtypes.frame(pa.table({"a": [1, None], "b": [True, None]}), "numpy").dtypes.astype(str).tolist()
    ['float64', 'boolean']
    """

    extension: dict = field(default_factory=dict)
    expected: Optional[dict] = None

    def frame(self, table: pa.Table, dtype_backend: str, where: str = "") -> pd.DataFrame:
        df = with_pandas_dtypes(to_pandas(table, dtype_backend), table, self.extension)  # as read_pandas does
        return df if self.expected is None else self._conformed(df, where)

    def _conformed(self, df: pd.DataFrame, where: str) -> pd.DataFrame:
        mismatched = []
        for j, (name, have) in enumerate(zip(df.columns, df.dtypes)):
            want = self.expected.get(name)
            if want is None or have == want or isinstance(want, pd.CategoricalDtype) and isinstance(have, type(want)):
                continue  # (each partition has its own categories, as in Dask)
            if len(df) == 0 or want == object:  # no values, or bools held as objects (the sample had a NaN)
                df.isetitem(j, df.iloc[:, j].astype(want))
            else:
                mismatched.append(f"{name!r}: found {have}, expected {want}")
        if mismatched:
            raise ValueError(
                f"Mismatched dtypes found in {where}: {'; '.join(mismatched)}. The partitions take the dtypes "
                "of a sample of the first file (or dtype=), where these columns had no missing value; NumPy's "
                "int and bool dtypes cannot hold one. Pass dtype= for them that can (float64, Int64, boolean or "
                "object), assume_missing=True for integer columns, or a larger sample=")
        return df


def _read_collecting(reader: Callable[..., Any], source: Any, kwargs: dict) -> tuple[Any, list]:
    """``reader(source, **kwargs)`` (``arrow_bridge.read_csv`` or ``cuda_p2p.read_csv``) and the Reports it recorded.

    Runs in a fresh ``contextvars`` context: with the synchronous scheduler
    the task runs in the caller's thread, whose own ``collect()`` blocks must
    not get the partition's Report directly as well as inside the job Report.
    """
    return contextvars.Context().run(_read_and_collect, reader, source, kwargs)


def _read_and_collect(reader: Callable[..., Any], source: Any, kwargs: dict) -> tuple[Any, list]:
    with collect() as collector:
        table = reader(source, **kwargs)
    return table, list(collector.reports)
