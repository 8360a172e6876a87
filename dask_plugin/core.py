"""``read_csv``: building the Dask DataFrame (graph side; per-partition work is in
:mod:`dask_plugin.io`).

Steps, all on the client when ``read_csv`` is called:

1. expand ``urlpath`` (path, glob, list, fsspec URL) to files, in order;
2. open each file once: read its preamble (BOM, skipped rows, header),
   which gives the column names and the byte where its data starts (every
   file must have the same columns), and cut its data every ``blocksize``
   bytes on page boundaries, each cut settled by probing a few KiB around
   it (:mod:`arrow_bridge.ranges`);
3. read a sample (the records in the first ``sample`` bytes of the first
   file with data) with type inference: its schema is every partition's;
4. settle the cuts a probe could not (long multi-line quoted fields) by
   per-range transfer functions, computed as tasks on the current scheduler
   when there is much to scan; the cuts then give each file's exact
   record-aligned byte ranges;
5. ``dd.from_map`` one partition per range.
"""
from __future__ import annotations

import importlib
import inspect
import os
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence, Union

import numpy as np
import pandas as pd
import pyarrow as pa

import arrow_bridge
from arrow_bridge.errors import warn_at_caller
from arrow_bridge.options import resolve_options
from arrow_bridge.pandas_frame import check_no_missing, name_positions
from arrow_bridge.preamble import read_preamble
from arrow_bridge.source import ByteSource, open_source
from arrow_bridge.ranges import (
    PAGE_SIZE,
    RangePlanner,
    RangeSummary,
    ScanDialect,
    SummaryJob,
    plan_cuts,
    summarize,
    summarize_path,
)
from dask_plugin.devices import DeviceLike, page_size_of, resolve_spec
from dask_plugin.io import CsvPartReader, FrameDtypes, Part
from dask_plugin.pushdown import csv_collection

#: ``dtype_backend`` values of the partitions: those of :func:`arrow_bridge.api.to_pandas`
#: that the Dask reader documents and tests.
DTYPE_BACKENDS = ("pyarrow", "numpy")
#: Where partitions live: host memory (pandas) or GPU memory (cudf, through cuda_p2p).
DESTINATIONS = ("host", "gpu")
DEFAULT_BLOCKSIZE = "64MiB"
DEFAULT_SAMPLE = 256_000
#: Range summaries (for cuts probing did not settle) run as Dask tasks above this many bytes.
PARALLEL_SCAN_BYTES = 32 << 20
#: Keywords that describe the file's header: used for preambles and whole-file reads only.
_HEADER_KEYS = ("header", "names", "skiprows")
#: ``dask.dataframe.read_csv`` keywords with no meaning here (accepted for the backend switch).
_IGNORED_DASK_KEYS = ("sample_rows", "enforce")


@dataclass(frozen=True)
class FileInfo:
    """One input file: its path (a local path or a URL), size, and compression (None: none)."""

    path: str
    size: int
    codec: Optional[str] = None

    @property
    def compressed(self) -> bool:
        return self.codec is not None


@dataclass(frozen=True)
class FilePlan:
    """A file's column names, where its data starts, and its cuts as probed
    (None: one partition, for a compressed file or no ``blocksize``)."""

    file: FileInfo
    names: tuple[str, ...]
    data_offset: int
    planner: Optional[RangePlanner] = None


def read_csv(
    urlpath: Union[str, os.PathLike, Sequence[Union[str, os.PathLike]]],
    *,
    blocksize: Union[int, str, None] = DEFAULT_BLOCKSIZE,
    include_path_column: Union[bool, str] = False,
    device: DeviceLike = None,
    split: str = "host",
    dtype_backend: str = "pyarrow",
    sample: Union[int, str] = DEFAULT_SAMPLE,
    page_size: Optional[int] = None,
    storage_options: Optional[Mapping[str, Any]] = None,
    compression: Optional[str] = "infer",
    destination: str = "host",
    **options: Any,
):
    """Reads CSV files into a Dask DataFrame, one partition per block of each file.

    ``urlpath``: a path, a glob (``"data/*.csv"``), a list of paths, or fsspec
    URLs (``storage_options`` for the filesystem). Each file's data (after its
    header) is cut every ``blocksize`` bytes (``"64MiB"``, an int, or None
    for one partition per file; rounded up to whole device pages, cuts on
    page boundaries) and each partition reads exactly the records that
    *start* in its block, even when quoted fields hold line breaks. Files
    compressed as a whole (``.gz``, ...) are one partition each.

    Partitions are pandas DataFrames with ``pd.ArrowDtype`` columns
    (``dtype_backend="pyarrow"``) or NumPy dtypes (``"numpy"``), each with
    its own index from 0, row order as in the files; divisions are unknown.
    All partitions use one schema: the types inferred from the first
    ``sample`` bytes of data (plus ``dtype=``). As in Dask, a partition whose
    values do not fit those types raises ``arrow_bridge.CsvParseError``
    saying so: pass ``dtype={column: type}``, or ``assume_missing=True``
    (as in Dask: integer columns not in ``dtype`` are read as float64).
    With ``dtype_backend="numpy"``, an integer column with a missing value in
    the sample is read as float64 (pandas' dtype for it) in every partition.

    ``include_path_column``: add a categorical column (named ``"path"``, or
    the given name) with each row's file. Reader options (``sep``,
    ``quotechar``, ``escapechar``, ``dtype``, ``usecols``, ``na_values``,
    ``on_bad_lines``, ``header``, ``names``, ``skiprows``, ...) are
    ``arrow_bridge.read_csv``'s; the header is handled per file. Each
    partition is parsed by one thread unless ``n_threads=`` says otherwise
    (Dask already runs partitions in parallel).

    ``device``: None (the host path), an emulated SSD profile name
    (``"modern-gen4"``), a name given to :func:`dask_plugin.install_devices`,
    or a factory returning a device; each worker builds its own once.
    ``split``: ``"host"``, ``"device"``, ``"static:<fraction>"`` or
    ``"dynamic"`` (see ``docs/dask.md``). Capture the device Reports with
    :func:`dask_plugin.job_report`.

    ``destination="gpu"``: partitions are ``cudf.DataFrame`` s in the GPU
    memory of the worker that reads them (needs dask_cudf); each is read by
    ``cuda_p2p.read_csv`` (so ``gpu_share=`` parses spans on the GPU, and a
    ``device`` is modeled with NVMe P2P). Without cudf, :func:`gpu_tables`
    gives the same partitions as ``cuda_p2p.GpuTable`` s (CuPy, DLPack).

    Malformed rows raise ``arrow_bridge.CsvParseError`` on ``compute()``,
    naming the file, its line and byte offset.

    >>> import dask_plugin, os, shutil, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> with open(os.path.join(folder, "trips-1.csv"), "w") as f:
    ...     _ = f.write("vendor,fare\\n" + "".join(f"{'ab'[i % 2]},{i}.5\\n" for i in range(1000)))
    >>> ddf = dask_plugin.read_csv(os.path.join(folder, "trips-*.csv"), blocksize="4KiB")
    >>> ddf.npartitions
    2
    >>> ddf.groupby("vendor").fare.mean().compute().sort_index().to_dict()
    {'a': 499.5, 'b': 500.5}
    >>> shutil.rmtree(folder)
    """
    import dask.dataframe as dd

    if destination not in DESTINATIONS:
        raise ValueError(f"destination must be one of {DESTINATIONS}, got {destination!r}")
    if destination == "gpu":
        try:
            importlib.import_module("dask_cudf")  # registers the cudf DataFrame backend with Dask
        except ImportError as e:
            raise RuntimeError("destination='gpu' makes cudf partitions and needs dask_cudf (RAPIDS); without it "
                               "dask_plugin.gpu_tables(...) gives each partition as a cuda_p2p.GpuTable") from e
    func, parts, meta = _partition_plan(urlpath, blocksize=blocksize, include_path_column=include_path_column,
                                        device=device, split=split, dtype_backend=dtype_backend, sample=sample,
                                        page_size=page_size, storage_options=storage_options,
                                        compression=compression, destination=destination, options=options)
    if destination == "gpu":
        import cudf

        meta = cudf.DataFrame.from_arrow(func.schema.empty_table())
        return dd.from_map(func, parts, meta=meta, divisions=None, label="read-csv-ndp", enforce_metadata=False)
    return csv_collection(func, parts, meta, label="read-csv-ndp")


def gpu_tables(urlpath: Union[str, os.PathLike, Sequence[Union[str, os.PathLike]]], **kwargs: Any) -> list:
    """The partitions :func:`read_csv` would make, each as a ``dask.delayed``
    ``cuda_p2p.GpuTable`` read into the GPU memory of the worker that computes
    it (same keywords as :func:`read_csv`, plus ``gpu_share=``). For GPU
    pipelines without cudf: map CuPy work over the tables, keep them on the
    workers with ``client.persist``.

    >>> import dask_plugin, os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> with open(os.path.join(folder, "x.csv"), "w") as f:
    ...     _ = f.write("a\\n" + "".join(f"{i}\\n" for i in range(2000)))
    >>> parts = dask_plugin.gpu_tables(os.path.join(folder, "x.csv"), blocksize="4KiB")
    >>> len(parts)
    3
    """
    from dask import delayed

    func, parts, _ = _partition_plan(urlpath, destination="gpu", **_plan_keywords(kwargs))
    return [delayed(func.gpu_table, pure=True)(part, dask_key_name=f"gpu-table-{func.read_id}-{part.index}")
            for part in parts]


def _plan_keywords(kwargs: dict) -> dict:
    """:func:`read_csv`'s keywords split into :func:`_partition_plan`'s own (with
    read_csv's defaults, read from its signature) and the reader options."""
    defaults = {name: p.default for name, p in inspect.signature(read_csv).parameters.items()
                if p.kind is inspect.Parameter.KEYWORD_ONLY and name != "destination"}
    planned = {key: kwargs.pop(key, default) for key, default in defaults.items()}
    return dict(planned, options=kwargs)


def _partition_plan(urlpath: Any, *, blocksize: Union[int, str, None], include_path_column: Union[bool, str],
                    device: DeviceLike, split: str, dtype_backend: str, sample: Union[int, str],
                    page_size: Optional[int], storage_options: Optional[Mapping[str, Any]],
                    compression: Optional[str], destination: str, options: dict
                    ) -> tuple[CsvPartReader, list[Part], pd.DataFrame]:
    """The per-partition reader, the parts and the pandas meta of a read (graph building)."""
    options = dict(options)
    gpu_share = float(options.pop("gpu_share", 0.0))
    if gpu_share and destination != "gpu":
        raise ValueError("gpu_share= parses spans on the GPU: pass destination='gpu' (or use gpu_tables)")
    if destination == "gpu" and include_path_column:
        raise NotImplementedError("include_path_column with destination='gpu'")
    assume_missing = bool(options.pop("assume_missing", False))
    options, extension = _pandas_dtypes(options)
    reader_options = _reader_options(options)
    if dtype_backend not in DTYPE_BACKENDS:
        raise ValueError(f"dtype_backend must be one of {DTYPE_BACKENDS}, got {dtype_backend!r}")
    spec = resolve_spec(device)
    _check_split(split, spec)
    storage_options = dict(storage_options or {})
    files = expand_paths(urlpath, storage_options, compression)
    block = None if blocksize is None else _bytes(blocksize if blocksize != "default" else DEFAULT_BLOCKSIZE,
                                                  "blocksize")
    _warn_whole_compressed_files(files, block)
    page = int(page_size) if page_size else page_size_of(spec)
    plans = [read_file_plan(f, reader_options, storage_options, block, page) for f in files]
    names = _common_names(plans)
    extension = _by_name(extension, names)
    if isinstance(reader_options.get("dtype"), Mapping):  # positions as names: the sample knows them typed
        reader_options["dtype"] = _by_name(reader_options["dtype"], names)
    sampled, user_typed = sample_table(plans, reader_options, _bytes(sample, "sample"), storage_options)
    schema = _partition_schema(sampled, user_typed, assume_missing, dtype_backend)
    # pandas' own conversion of a lossy int -> float64 (past 2**53), where Arrow's safe cast refuses
    sample_frame = FrameDtypes(extension).frame(sampled.cast(schema, safe=False), dtype_backend)
    if dtype_backend == "numpy":
        _check_typed_columns_hold_their_nulls(sampled, schema, user_typed - set(extension))
    dtypes = FrameDtypes(extension, dict(zip(schema.names, sample_frame.dtypes)))
    path_column = _path_column(include_path_column, schema)
    parts = plan_parts(plans, reader_options, storage_options)
    paths = tuple(f.path for f in files)
    read_id = _tokenize("ndp-read-csv", [(f.path, f.size) for f in files], reader_options, block, page,
                        str(schema), dtype_backend, path_column, spec, split, storage_options, destination, gpu_share,
                        repr(sorted(extension.items())))
    func = CsvPartReader(names, schema, _data_options(reader_options), reader_options, frozenset(user_typed),
                         dtype_backend, path_column, paths, spec, split, read_id, storage_options, destination,
                         gpu_share, dtypes=dtypes)
    return func, parts, _meta(sample_frame, path_column, paths, extension)


# ---- options -----------------------------------------------------------------------------------
def _reader_options(options: dict) -> dict:
    """The keywords for ``arrow_bridge.read_csv`` (Dask-only ones checked and dropped)."""
    options = dict(options)
    for key in _IGNORED_DASK_KEYS:
        options.pop(key, None)
    if options.pop("lineterminator", None) not in (None, "\n", "\r\n"):
        raise NotImplementedError("lineterminator: LF, CRLF and CR line ends are always recognized; "
                                  "other terminators are not supported")
    for key in ("nrows", "byte_range"):
        if options.pop(key, None) is not None:
            raise NotImplementedError(f"{key}= is not supported by the Dask reader "
                                      "(use ddf.head(n) or dask_plugin.read_csv(...).partitions[...])")
    options.setdefault("n_threads", 1)
    resolve_options(**options)  # unknown or invalid keywords fail here, not in every task
    return options


def _pandas_dtypes(options: dict) -> tuple[dict, dict]:
    """``dtype=``'s pandas extension dtypes (``Int64``, ``boolean``, ``string``,
    ``category``...) by column (``"*"``: one for every column), taken out for the
    partitions' frames; the reader reads those columns as their Arrow types (a
    categorical's as inferred, as pandas does).

    >>> options, extension = _pandas_dtypes({"dtype": {"a": "Int64", "b": "category", "c": "float32"}})
    >>> options, sorted(extension)
    ({'dtype': {'a': 'Int64', 'c': 'float32'}}, ['a', 'b'])
    """
    dtype = options.get("dtype")
    if dtype is None or isinstance(dtype, pa.DataType):
        return options, {}
    given = dict(dtype) if isinstance(dtype, Mapping) else {"*": dtype}
    extension = {key: _pandas_dtype(value) for key, value in given.items()}
    extension = {key: value for key, value in extension.items()
                 if isinstance(value, pd.api.extensions.ExtensionDtype) and not isinstance(value, pd.ArrowDtype)}
    kept = {key: value for key, value in given.items() if not isinstance(extension.get(key), pd.CategoricalDtype)}
    reader_dtype = kept.get("*") if not isinstance(dtype, Mapping) else kept or None
    return dict(options, dtype=reader_dtype), extension


def _by_name(keyed: Mapping, names: Sequence[str]) -> dict:
    """A ``dtype`` dict with positions given as the columns' names (pandas takes a name
    first and ignores a position the file lacks) and ``"*"`` (every column) spelled out.

    >>> _by_name({0: "Int64", "b": "str", 5: "x", "*": "boolean"}, ["a", "b", "c"])
    {'a': 'Int64', 'b': 'str', 'c': 'boolean'}
    """
    every = dict.fromkeys(names, keyed["*"]) if "*" in keyed else {}
    return {**every, **name_positions({"dtype": {k: v for k, v in keyed.items() if k != "*"}}, names)["dtype"]}


def _check_typed_columns_hold_their_nulls(sampled: pa.Table, schema: pa.Schema, numpy_typed: set) -> None:
    """pandas refuses a missing value in a column ``dtype=`` makes a NumPy int or bool
    (under the NumPy backend); in the sample it would make that column float64 (or
    object) for every partition."""
    for name in numpy_typed & set(schema.names):
        kind = schema.field(name).type
        if pa.types.is_integer(kind) or pa.types.is_boolean(kind):
            check_no_missing(sampled.column(name), np.dtype(kind.to_pandas_dtype()), repr(name))


def _pandas_dtype(value: Any) -> Any:
    try:
        return pd.api.types.pandas_dtype(value)
    except TypeError:
        return value  # an Arrow type, or one the reader explains


def _data_options(reader_options: dict) -> dict:
    """The reader keywords for data rows only: without those describing the header."""
    return {k: v for k, v in reader_options.items() if k not in _HEADER_KEYS}


def _check_split(split: str, spec: Any) -> None:
    from ndp_core.device import SplitPolicy

    SplitPolicy.parse(split)  # raises for an unknown policy
    if spec is None and split != "host":
        raise ValueError(f"split={split!r} needs a device: pass device= (a profile name, a name given "
                         "to install_devices, or a factory)")


def _bytes(value: Union[int, str], what: str) -> int:
    from dask.utils import parse_bytes

    n = parse_bytes(value) if isinstance(value, str) else int(value)
    if n < 1:
        raise ValueError(f"{what} must be at least 1 byte, got {value!r}")
    return n


def _tokenize(*args: Any) -> str:
    from dask.base import tokenize

    return tokenize(*args)


# ---- files and preambles ---------------------------------------------------------------------------
def expand_paths(urlpath: Any, storage_options: Optional[Mapping[str, Any]] = None,
                 compression: Optional[str] = "infer") -> list[FileInfo]:
    """The files ``urlpath`` names, in order (globs expanded and sorted, as Dask does).

    Local files keep plain paths (read by the C++ block reader); others
    become full URLs.
    """
    from fsspec.core import get_fs_token_paths
    from fsspec.utils import infer_compression

    if isinstance(urlpath, (list, tuple)):
        urlpath = [os.fspath(p) for p in urlpath]
    else:
        urlpath = os.fspath(urlpath)
    fs, _, paths = get_fs_token_paths(urlpath, mode="rb", storage_options=dict(storage_options or {}))
    if not paths:
        raise FileNotFoundError(f"no files match {urlpath!r}")
    local = "file" in _protocols(fs)
    files = []
    for path in paths:
        codec = infer_compression(path) if compression == "infer" else compression
        size = os.path.getsize(path) if local else int(fs.size(path))
        files.append(FileInfo(path if local else fs.unstrip_protocol(path), size, codec))
    return files


def _warn_whole_compressed_files(files: Sequence[FileInfo], blocksize: Optional[int]) -> None:
    """Dask's warning, in its words: a compressed file is one partition whatever ``blocksize`` says."""
    codec = next((f.codec for f in files if f.compressed), None)
    if blocksize is not None and codec is not None:
        warn_at_caller(f"Warning {codec} compression does not support breaking apart files\n"
                       "Please ensure that each individual file can fit in memory and\n"
                       "use the keyword ``blocksize=None to remove this message``\n"
                       "Setting ``blocksize=None``")


def _protocols(fs: Any) -> tuple:
    protocol = fs.protocol
    return (protocol,) if isinstance(protocol, str) else tuple(protocol)


def read_file_plan(file: FileInfo, reader_options: dict, storage_options: Optional[Mapping[str, Any]] = None,
                   blocksize: Optional[int] = None, page_size: int = PAGE_SIZE) -> FilePlan:
    """Column names and data start of one file (after its BOM, skipped rows
    and header) and, given a ``blocksize``, its cuts probed: one open of the
    file (a round trip less per remote file)."""
    opts = resolve_options(**{**reader_options, "block_size": 64 << 10})
    with open_source(file.path, storage_options) as src:
        try:
            pre = read_preamble(src, opts)
        except arrow_bridge.CsvParseError:
            if file.size == 0 and opts.column_names is not None:
                return FilePlan(file, tuple(opts.column_names), 0)
            raise
        # A header with no line break after it ends the file: the data start at its end
        data_offset = pre.data_offset if file.compressed else min(pre.data_offset, file.size)
        planner = _probe_cuts(src, file, data_offset, blocksize, page_size, reader_options)
    return FilePlan(file, tuple(pre.names), data_offset, planner)


def _probe_cuts(src: ByteSource, file: FileInfo, data_offset: int, blocksize: Optional[int], page_size: int,
                reader_options: dict) -> Optional[RangePlanner]:
    """The file's data cut every ``blocksize`` bytes, each cut probed (None:
    one partition, for a compressed file or no ``blocksize``)."""
    if blocksize is None or file.compressed:
        return None
    cuts = plan_cuts(data_offset, file.size, blocksize, page_size)
    return RangePlanner(src.read_range, cuts, ScanDialect.from_options(reader_options))


def _common_names(plans: Sequence[FilePlan]) -> tuple[str, ...]:
    names = plans[0].names
    for plan in plans[1:]:
        if plan.names != names:
            raise ValueError(f"{plan.file.path}: columns {list(plan.names)} differ from those of "
                             f"{plans[0].file.path}: {list(names)}")
    return names


# ---- the sample: every partition's schema ---------------------------------------------------------------
def sample_table(plans: Sequence[FilePlan], reader_options: dict, sample: int,
                 storage_options: Optional[Mapping[str, Any]] = None) -> tuple[pa.Table, set[str]]:
    """The selected columns of the records that start in the first ``sample``
    bytes of data of the first file that has data (their types are the
    read's, whatever rows ``filters=`` keeps); and the names of the columns
    typed by the user's ``dtype``."""
    reader_options = {key: value for key, value in reader_options.items() if key != "filters"}
    plan = next((p for p in plans if p.file.size > p.data_offset or p.file.compressed), plans[0])
    if plan.file.compressed:  # cannot seek: its first rows
        table = arrow_bridge.read_csv(plan.file.path, **reader_options, nrows=max(sample // 64, 1000),
                                      storage_options=storage_options)
    else:
        start, stop = _sample_range(plan, sample, reader_options, storage_options)
        table = arrow_bridge.read_csv(plan.file.path, byte_range=(start, stop), names=list(plan.names), header=None,
                                      storage_options=storage_options, **_data_options(reader_options))
    dtype = reader_options.get("dtype")
    if dtype is None:
        user_typed: set[str] = set()
    elif isinstance(dtype, Mapping):
        user_typed = {str(k) for k in dtype}
    else:
        user_typed = set(table.column_names)
    return table, user_typed


def _partition_schema(sampled: pa.Table, user_typed: set[str], assume_missing: bool, dtype_backend: str) -> pa.Schema:
    """Every partition's types: the sample's, with integer columns the user did
    not type as float64 under ``assume_missing``, or (NumPy has no int with NA:
    pandas' float64) those missing a value in the sample under the NumPy backend."""
    schema = sampled.schema
    if assume_missing:
        schema = ints_as_floats(schema, user_typed)
    elif dtype_backend == "numpy":
        schema = ints_as_floats(schema, user_typed | _without_nulls(sampled))
    if dtype_backend == "numpy" and sampled.num_rows:  # a column empty in the sample is pandas' float64, not null
        schema = pa.schema([field.with_type(pa.float64()) if pa.types.is_null(field.type) and
                            field.name not in user_typed else field for field in schema])
    return schema


def ints_as_floats(schema: pa.Schema, keep: set[str]) -> pa.Schema:
    """Dask's ``assume_missing=True``: integer columns the user did not type
    become float64, so a later partition's missing values fit.

    >>> ints_as_floats(pa.schema([("a", pa.int64()), ("b", pa.int64()), ("c", pa.string())]), {"b"}).types
    [DataType(double), DataType(int64), DataType(string)]
    """
    return pa.schema([field.with_type(pa.float64()) if pa.types.is_integer(field.type) and field.name not in keep
                      else field for field in schema])


def _sample_range(plan: FilePlan, sample: int, reader_options: dict,
                  storage_options: Optional[Mapping[str, Any]]) -> tuple[int, int]:
    d, end = plan.data_offset, plan.file.size
    cuts = [d, end] if d + sample >= end else [d, d + sample, end]
    dialect = ScanDialect.from_options(reader_options)
    with open_source(plan.file.path, storage_options) as source:
        planner = RangePlanner(source.read_range, cuts, dialect)
        summaries = [summarize(source.read_range, job, dialect) for job in planner.jobs]
    return planner.ranges(summaries)[0]


def _without_nulls(table: pa.Table) -> set[str]:
    return {name for name, column in zip(table.column_names, table.columns) if not column.null_count}


def _path_column(include_path_column: Union[bool, str], schema: pa.Schema) -> Optional[str]:
    if not include_path_column:
        return None
    name = "path" if include_path_column is True else str(include_path_column)
    if name in schema.names:
        raise ValueError(f"the files already have a column {name!r}: pass include_path_column='<another name>'")
    return name


def _meta(sample_frame: pd.DataFrame, path_column: Optional[str], paths: Sequence[str],
          extension: Mapping[str, Any]) -> pd.DataFrame:
    """The dtypes of the frame of the sampled rows, as Dask's pandas backend takes its meta
    from the rows it samples (with NumPy dtypes a missing value makes a bool column object);
    the categories of ``dtype="category"`` are unknown, as in Dask (each partition has its
    own), those of a ``CategoricalDtype`` listing them known."""
    from dask.dataframe.utils import clear_known_categories

    unknown = [name for name, kind in extension.items()
               if isinstance(kind, pd.CategoricalDtype) and kind.categories is None and name in sample_frame]
    meta = clear_known_categories(sample_frame.iloc[:0], cols=unknown) if unknown else sample_frame.iloc[:0]
    if path_column is not None:
        meta[path_column] = pd.Categorical.from_codes([], categories=list(paths))
    return meta


# ---- partitions ---------------------------------------------------------------------------------------
def plan_parts(plans: Sequence[FilePlan], reader_options: dict,
               storage_options: Optional[Mapping[str, Any]] = None) -> list[Part]:
    """One :class:`Part` per record-aligned range of every file, in file order."""
    dialect = ScanDialect.from_options(reader_options)
    pending = [(plan.file.path, job) for plan in plans if plan.planner is not None for job in plan.planner.jobs]
    summaries = iter(_summarize_jobs(pending, dialect, storage_options))
    parts: list[Part] = []
    for i, plan in enumerate(plans):
        f = plan.file
        if f.compressed:
            ranges = [(None, None)]
        elif plan.planner is None:
            ranges = [(plan.data_offset, max(f.size, plan.data_offset))]
        else:
            ranges = plan.planner.ranges([next(summaries) for _ in plan.planner.jobs])
        parts += [Part(f.path, start, stop, len(parts) + j, i) for j, (start, stop) in enumerate(ranges)]
    return parts


def _summarize_jobs(pending: list[tuple[str, SummaryJob]], dialect: ScanDialect,
                    storage_options: Optional[Mapping[str, Any]]) -> list[RangeSummary]:
    """Range summaries: as tasks on the current Dask scheduler (a cluster's
    workers scan in parallel, reading where the data is) when there is much
    to scan, else here."""
    if not pending:
        return []
    if len(pending) > 1 and sum(job.stop - job.start for _, job in pending) >= PARALLEL_SCAN_BYTES:
        import dask

        tasks = [dask.delayed(summarize_path, pure=True)(path, job, dialect, storage_options)
                 for path, job in pending]
        return list(dask.compute(*tasks))
    return [summarize_path(path, job, dialect, storage_options) for path, job in pending]
