"""Public entry points: ``read_csv`` (→ pyarrow.Table), ``open_csv`` (→ a stream of record batches),
``read_pandas`` and ``to_pandas``."""
from __future__ import annotations

import dataclasses
import os
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING, Any, Callable, Iterator, Mapping, Sequence, Union

import pyarrow as pa
import pyarrow.csv as pacsv

from arrow_bridge.column_names import ImplicitColumns, deduplicated
from arrow_bridge import dtype_fallback, errors, python_ints
from arrow_bridge.errors import EmptyCsvError, MemoryLimitError
from arrow_bridge.options import CALLABLE_USECOLS, CsvOptions, resolve_options
from arrow_bridge.line_filters import open_text
from arrow_bridge.pandas_frame import (FrameSteps, arrow_keywords, name_positions, numbered_columns,
                                       objects_by_position, positions_named, positions_only, selected_names, shape,
                                       split_keywords, with_pandas_dtypes)
from arrow_bridge.preamble import read_preamble
from arrow_bridge.executors import SpanExecutor, SpanSink
from arrow_bridge.progress import ProgressBar
from arrow_bridge.reader import CsvReader
from arrow_bridge.sizes import parse_size
from arrow_bridge.source import ByteSource, RangeSource, bytes_to_parse, is_seekable
from arrow_bridge.streaming import DataFrameChunks, Stream, record_batch_reader

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
    memory_limit: int | str | None = None,
    sinks: Sequence[SpanSink] = (),
    progress: bool = False,
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
    ``n_threads`` and ``block_size``. ``semantics="pandas"`` reads values as
    ``pandas.read_csv`` does (``read_pandas``' default): no column inferred
    as a date, time or timestamp, pandas' NA spellings (pyarrow's plus
    ``<NA>`` and ``None``) null in text columns too; the default
    ``"pyarrow"`` is ``pyarrow.csv``'s. ``storage_options`` (as in pandas) go
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
    ``"host"``, ``"device"``, ``"static:<fraction>"``, ``"dynamic"`` or
    ``"sampled"`` (Biscuit's decision: host or device, whichever a model of
    the read from a sample of its spans finds faster; docs/pushdown.md) (any
    but ``"host"`` needs a ``device``: a ValueError says so). The
    Table is the same whatever the device and split; the run's
    ``ndp_core.report.Report`` is recorded (``with ndp_core.report.collect()
    as c: ...``).

    ``offload`` adds places to parse spans (``arrow_bridge.executors.SpanExecutor``
    implementations, e.g. a GPU's), tried in order before the host; packages
    that bring one pass it here. ``sinks`` (``arrow_bridge.executors.SpanSink``)
    see each span's result in file order as soon as it is checked, while
    later spans parse (``cuda_p2p`` copies spans to the GPU so).
    ``progress=True`` shows a progress bar over the bytes parsed (tqdm: a
    widget in Jupyter, stderr in scripts).

    ``memory_limit`` bounds what the read holds: bytes, or a size such as
    ``"512MiB"`` or ``"2GB"`` (Dask's spelling). It counts the parsed output
    kept until the Table is assembled (assembly copies nothing), and the
    spans in flight (their text, and their output estimated from the densest
    span so far); while the next span would not fit the reader waits for
    those in flight, and when it cannot go on it raises
    :class:`arrow_bridge.MemoryLimitError` (a ``MemoryError``) naming the
    limit and what it held, before it allocates more, instead of the
    operating system killing the process. Fixed per-thread workspaces and
    the interpreter's own memory are not counted. A read that fits gives the
    same Table as one without a limit.

    Ctrl-C raises ``KeyboardInterrupt`` once the spans being parsed are done
    (milliseconds at the default block size): no worker threads are left and
    a device's engine keeps no command or instance of the read.

    Malformed input raises :class:`arrow_bridge.CsvParseError` (a
    ``pyarrow.ArrowInvalid``, as pyarrow raises, so a ``ValueError``) naming
    the file, line, column and byte offset.

    >>> import io, arrow_bridge
    >>> arrow_bridge.read_csv(io.BytesIO(b"a,b\\n1,x\\n2,y\\n")).to_pydict()
    {'a': [1, 2], 'b': ['x', 'y']}
    """
    return _read_table(source, None, read_options=read_options, parse_options=parse_options,
                       convert_options=convert_options, byte_range=byte_range, device=device, split=split,
                       storage_options=storage_options, offload=offload, memory_limit=memory_limit, sinks=sinks,
                       progress=progress, **options)


def aggregate_csv(source: Source, aggregations: Sequence[tuple[str, str]], *, group_by: Sequence[str] = (),
                  derived: dict[str, Any] | None = None, filters: Any = None, **options: Any) -> pa.Table:
    """``read_csv(source, filters=filters, **options)`` grouped by ``group_by``
    and aggregated, without building the Table: each span is reduced to
    partial states where it ran (on a ``device=``, the device sends those
    instead of its rows) and the states are merged (Summarizer's FINAL_TSK).

    ``aggregations`` are pyarrow's ``(column, function)`` pairs with
    ``sum``, ``count``, ``min``, ``max``, ``mean``; ``derived`` names computed
    columns (``pyarrow.compute.Expression``) they may use. The answer is
    ``Table.group_by(group_by, use_threads=False).aggregate(aggregations)``'s:
    names, types, groups in first-appearance order; float sums are exact
    (correctly rounded), so they do not depend on block size, split or
    threads, and may differ from pyarrow's in the last bits
    (:mod:`arrow_bridge.aggregates`). Every ``read_csv`` option applies
    but ``usecols``/``include_columns``: the query says what it reads.

    >>> import io, arrow_bridge
    >>> data = b"flag,qty,price\\nA,1,2.5\\nB,3,1.0\\nA,5,0.5\\n"
    >>> arrow_bridge.aggregate_csv(io.BytesIO(data), [("qty", "sum"), ("price", "max")], group_by=["flag"],
    ...                            filters=[("qty", ">", 1)]).to_pydict()
    {'flag': ['B', 'A'], 'qty_sum': [3, 5], 'price_max': [1.0, 0.5]}
    """
    from arrow_bridge.aggregates import Aggregation, GroupedQuery

    if "usecols" in options or (options.get("convert_options") is not None
                                and options["convert_options"].include_columns):
        raise TypeError("aggregate_csv() reads the columns its query names: drop usecols/include_columns")
    query = GroupedQuery([Aggregation.parse(item) for item in aggregations], list(group_by), dict(derived or {}))
    return _read_table(source, query, filters=filters, **options)


def _read_table(source: Source, query: Any, *, read_options: pacsv.ReadOptions | None = None,
                parse_options: pacsv.ParseOptions | None = None, convert_options: pacsv.ConvertOptions | None = None,
                byte_range: tuple[int, int] | None = None, device: Any = None, split: str = "host",
                storage_options: dict[str, Any] | None = None, offload: Sequence[SpanExecutor] = (),
                memory_limit: int | str | None = None, sinks: Sequence[SpanSink] = (), progress: bool = False,
                **options: Any) -> pa.Table:
    """read_csv's and aggregate_csv's read (``query``: the latter's GroupedQuery, or None)."""
    options, storage_options, numbers = arrow_keywords(options, storage_options, split=split, byte_range=byte_range)
    if numbers is not None and (query is not None or options.get("filters") is not None):
        raise NotImplementedError("thousands= with filters= or aggregate_csv: the filter would see the text "
                                  "before the separators are removed; read, then filter")
    source, options = _dialect(source, options, storage_options)
    opts = resolve_options(read_options, parse_options, convert_options, **options)
    if query is not None:
        opts = dataclasses.replace(opts, grouped_query=query, include_columns=())
    bar = ProgressBar(bytes_to_parse(source, byte_range)) if progress else None
    try:
        with _opened(source, opts, byte_range, storage_options, device, split, offload, memory_limit,
                     [*sinks, bar] if bar else sinks) as reader:
            table = reader.read()
        if bar is not None:
            bar.complete()
    finally:
        if bar is not None:
            bar.close()
    return table if numbers is None else numbers.apply(table)


def _dialect(source: Source, options: dict[str, Any], storage_options: dict[str, Any] | None
             ) -> tuple[Source, dict[str, Any]]:
    """``sep=None`` (pandas' spelling): the dialect sniffed from the source's
    first MiB in its place (:func:`arrow_bridge.sniffing.sniff`); keywords the
    caller gave win. Anything else passes through."""
    if "sep" in options and options["sep"] is None or "delimiter" in options and options["delimiter"] is None:
        from arrow_bridge.sniffing import sniff_for_read  # here: its patterns cost start-up time
        return sniff_for_read(source, options, storage_options)
    return source, options


@contextmanager
def _opened(source: Source, opts: CsvOptions, byte_range: tuple[int, int] | None,
            storage_options: dict[str, Any] | None, device: Any, split: str,
            offload: Sequence[SpanExecutor], memory_limit: int | str | None,
            sinks: Sequence[SpanSink] = ()) -> Iterator[CsvReader]:
    """The reader of ``source`` (opened here, closed on the way out): read_csv's and open_csv's.
    A device made here from a profile name is the read's own: closed on the way out too (its
    engine's threads stop)."""
    limit = parse_memory_limit(memory_limit)
    with open_text(source, storage_options, encoding=opts.encoding, encoding_errors=opts.encoding_errors,
                   for_device=split != "host", reads_header=opts.header) as src:
        if getattr(src, "drops_first_record", False):  # skipfooter took every line: the columns stay
            opts = dataclasses.replace(opts, nrows=0)
        if byte_range is not None:
            src, opts = _range_of(src, opts, byte_range)
        own_device = _device(device)
        try:
            yield CsvReader(src, opts, own_device, split, offload=offload, memory_limit=limit, sinks=sinks)
        finally:
            if own_device is not device:
                own_device.close()


def parse_memory_limit(value: int | str | None) -> int | None:
    """``memory_limit=`` in bytes: an int, or a size (:func:`arrow_bridge.sizes.parse_size`:
    ``"512MiB"``, ``"2GB"``, ``"1.5 GiB"``); None for none.

    >>> parse_memory_limit("512MiB"), parse_memory_limit("2GB"), parse_memory_limit(4096)
    (536870912, 2000000000, 4096)
    >>> parse_memory_limit("lots")
    Traceback (most recent call last):
    ...
    ValueError: memory_limit: could not interpret 'lots' as a size (try 536870912, "512MiB" or "2GB")
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise TypeError(f"memory_limit must be a number of bytes or a size such as '512MiB', got {value!r}")
    if isinstance(value, str):
        try:
            value = parse_size(value)
        except ValueError:
            raise ValueError(f"memory_limit: could not interpret {value!r} as a size "
                             '(try 536870912, "512MiB" or "2GB")') from None
    if value < 1:
        raise ValueError(f"memory_limit must be at least 1 byte, got {value!r}")
    return int(value)


def open_csv(source: Source, *, read_options: pacsv.ReadOptions | None = None,
             parse_options: pacsv.ParseOptions | None = None, convert_options: pacsv.ConvertOptions | None = None,
             **options: Any) -> pa.RecordBatchReader:
    """Opens CSV as a stream of record batches: a ``pyarrow.RecordBatchReader``
    (iterate it, ``read_next_batch()``, or hand it to ``pq.ParquetWriter``,
    ``pyarrow.dataset.write_dataset``, DuckDB, polars), a batch per block of
    about ``block_size`` bytes (2 MiB by default); the first is pyarrow's first
    block (1 MiB by default), so that the types come from the same rows.

    Takes :func:`read_csv`'s sources and options (pyarrow's option objects,
    pandas-style keywords, ``byte_range``, ``storage_options``, ...); the
    batches concatenated are ``read_csv``'s Table wherever the first block's
    types hold for the whole file. Memory stays bounded by the batches in flight (``n_threads + 1``
    blocks ahead of the one the caller holds), whatever the file size.

    Types are inferred from the first block, as ``pyarrow.csv.open_csv``
    does: opening reads it (errors in it raise :class:`arrow_bridge.CsvParseError`
    here). A later value that does not fit its column's type, or any other
    error met while iterating, raises ``pyarrow.ArrowInvalid`` (a
    ``ValueError``, what pyarrow's ``open_csv`` raises) whose message names
    the file, line, column and value; give such a column its type (``dtype=``,
    ``column_types``) to read it wider. ``close()`` (or leaving a ``with``
    block) stops the worker threads and closes the source; so does
    exhausting or dropping the reader. ``device=`` and ``offload=`` raise
    ``NotImplementedError``: they settle the run only at its end.

    ``memory_limit`` (as for :func:`read_csv`) bounds the spans in flight and
    the batch not yet handed out: fewer spans are parsed ahead while they
    would not fit, and a block that cannot fit alone raises a
    ``MemoryError``: :class:`arrow_bridge.MemoryLimitError` when opening,
    ``pyarrow.ArrowMemoryError`` with its message while iterating (pyarrow's
    stream carries the message only). Ctrl-C while the reader waits for a
    batch stops its threads, ends the stream and raises
    ``KeyboardInterrupt`` in the caller as the call that asked for the batch
    returns.

    >>> import io
    >>> from arrow_bridge.api import open_csv
    >>> data = b"a,b\\n" + b"".join(b"%d,x\\n" % i for i in range(10))
    >>> with open_csv(io.BytesIO(data), block_size=16) as reader:
    ...     print(reader.schema.types, [batch.num_rows for batch in reader])
    [DataType(int64), DataType(string)] [3, 4, 3]
    """
    return record_batch_reader(_stream(source, read_options=read_options, parse_options=parse_options,
                                       convert_options=convert_options, **options))


def _stream(source: Source, *, read_options: pacsv.ReadOptions | None = None,
            parse_options: pacsv.ParseOptions | None = None, convert_options: pacsv.ConvertOptions | None = None,
            byte_range: tuple[int, int] | None = None, device: Any = None, split: str = "host",
            storage_options: dict[str, Any] | None = None, offload: Sequence[SpanExecutor] = (),
            memory_limit: int | str | None = None, **options: Any) -> Stream:
    """The schema, then the record batches of ``source`` (:meth:`CsvReader.stream`); the source
    stays open until the generator ends or is closed."""
    options, storage_options, numbers = arrow_keywords(options, storage_options, split=split, byte_range=byte_range)
    if numbers is not None:
        raise NotImplementedError("thousands= with open_csv or chunksize/iterator: which columns are numbers is "
                                  "decided over the whole file; read_csv or read_pandas without chunks take it")
    source, options = _dialect(source, options, storage_options)
    opts = resolve_options(read_options, parse_options, convert_options, **options)
    with _opened(source, opts, byte_range, storage_options, device, split, offload, memory_limit) as reader:
        yield from reader.stream()


def calibrate(sources: Source | list[Source], block_sizes: tuple[int, ...] = (1 << 16, 1 << 18, 1 << 20),
              *, repeat: int = 3, **options: Any):
    """Measures this machine's cost of the reader's kernels, for the timing model.

    Reads every source on the host (one thread) at each block size, timing
    every span, and fits cycles per work unit by non-negative least squares
    (:func:`device_emulator.calibrate.calibrate`), with R², the relative
    error per source and warnings (``CalibrationWarning``) where the fit is
    doubtful. Varied spans make a good fit: give files of different shapes
    (integers, floats, strings, dates, bools, nulls; few and many columns) and
    more than one block size. Pass the result to ``ComputationalSSD(...,
    host_costs=...)`` so modeled host times match this machine.

    What it leaves out, and why:

    * A warm-up read of each source comes first and is not timed: it loads
      the compiled kernels from Numba's cache and faults in the reader's
      workspaces.
    * **The first span of every read is not a sample.** It is parsed before
      the column types are known, so it takes the general path (tokenize,
      infer, convert: 5-10x the fused kernel's time for the same counters,
      here) and pays the read's one-time costs. The prices fitted
      are those of the spans after it, which the fused kernel parses; the
      model therefore underprices a read's first span (negligible for a read
      of many spans; ``costs.left_out`` says by how much: modeled/measured
      was 0.1-0.2 for lineitem, edges and floats here). A source needs more
      than one span at a block size to give samples at it.
    * Each block size is read ``repeat`` times and each span keeps its
      fastest time: noise on a shared machine only ever adds time.

    ``options`` go to :func:`read_csv` (but ``n_threads`` and ``block_size``,
    which are set here). File objects are read into memory once. The result's
    ``per_source`` is keyed by file name (``bytes[i]`` for in-memory sources).

    >>> import warnings, arrow_bridge
    >>> from device_emulator import ComputationalSSD
    >>> ints = b"a,b\\n" + b"".join(b"%d,%d\\n" % (i, 7 * i) for i in range(20000))
    >>> floats = b"x,y,z\\n" + b"".join(b"%d.5,-%d.25,%de-3\\n" % (i, 3 * i, i) for i in range(20000))
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")  # e.g. "bools, ...: no task exercised them" (costs.warnings)
    ...     costs = arrow_bridge.calibrate([ints, floats], block_sizes=(1 << 12, 1 << 14))
    >>> sorted(costs.per_source), costs.unfitted
    (['bytes[0]', 'bytes[1]'], ('bools', 'temporals', 'string_bytes', 'nulls'))
    >>> ssd = ComputationalSSD("modern-gen4", host_costs=costs)
    """
    from arrow_bridge import startup
    from arrow_bridge.executors import TaskRecorder
    from device_emulator.calibrate import calibrate as fit

    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat}")
    fixed = sorted(set(options) & {"block_size", "n_threads"})
    if fixed:
        raise ValueError(f"calibrate sets {' and '.join(fixed)} itself (block_sizes=; one thread)")
    options = dict(options, n_threads=1)
    named = _labelled_sources(sources)

    def tasks(source: Source, block_size: int) -> list:
        recorder = TaskRecorder()
        read_csv(source, device=recorder, block_size=block_size, **options)
        return recorder.tasks

    startup.retire()  # prices are Numba's kernels': the startup library serves only a process's first calls
    for _, source in named:  # warm-up: kernels loaded, workspaces faulted in
        tasks(source, min(block_sizes))
    samples, labels, first_spans = [], [], []
    for label, source in named:
        for block_size in block_sizes:
            spans = _fastest([tasks(source, block_size) for _ in range(repeat)])
            first_spans += spans[:1]  # general path, one-time costs: reported, not fitted
            samples += spans[1:]
            labels += [label] * len(spans[1:])
    if not samples:
        raise ValueError(f"calibrate: no spans to measure: every read was one span; give larger files or "
                         f"smaller block_sizes than {sorted(block_sizes)}")
    return fit(samples, sources=labels, left_out=first_spans, stacklevel=3)


def _labelled_sources(sources: Source | list[Source]) -> list[tuple[str, Source]]:
    """``(label, source)`` per source: file names, ``bytes[i]``; file objects read into memory once."""
    named: list[tuple[str, Source]] = []
    for i, source in enumerate(sources if isinstance(sources, (list, tuple)) else [sources]):
        if hasattr(source, "read"):  # a file object: read once, measured as bytes
            label = os.path.basename(str(getattr(source, "name", ""))) or f"source[{i}]"
            source = source.read()
        elif isinstance(source, (bytes, bytearray)):
            label = f"bytes[{i}]"
        else:
            label = os.path.basename(os.fspath(source)) or str(source)
        if any(label == other for other, _ in named):
            label = f"{label}[{i}]"
        named.append((label, source))
    return named


def _fastest(runs: list[list]) -> list:
    """The first run's tasks, each with its fastest time over the runs that cut the same spans."""
    same = [run for run in runs if [t.text_bytes for t in run] == [t.text_bytes for t in runs[0]]]
    return [dataclasses.replace(task, measured_s=min(run[i].measured_s for run in same))
            for i, task in enumerate(runs[0])]


def sweep(source: Source, **options: Any):
    """A what-if grid of emulated SSDs over one read of ``source``:
    :func:`device_emulator.sweep` with this reader (profiles, splits,
    ``overrides`` and reader options as it takes them).

    >>> import io, arrow_bridge
    >>> data = b"a,b\\n" + b"".join(b"%d,%d.5\\n" % (i, i) for i in range(3000))
    >>> s = arrow_bridge.sweep(io.BytesIO(data), profiles=["modern-gen4"], splits=["dynamic"],
    ...                        overrides={"cores.count": [1, 4]}, block_size=4096)
    >>> s.frame[["cores.count", "tasks"]].values.tolist()
    [[1, 8], [4, 8]]
    """
    from device_emulator import sweep as run

    return run(source, reader=read_csv, **options)


def _device(device: Any) -> Any:
    """``device=``: a Device, a profile name (an emulated SSD), or None (host path)."""
    if isinstance(device, str):
        from device_emulator import ComputationalSSD

        return ComputationalSSD(device)
    return device


def _range_of(src: ByteSource, opts: CsvOptions, byte_range: tuple[int, int]) -> tuple[ByteSource, CsvOptions]:
    """The source and options reading only the data rows in ``byte_range``."""
    pre = read_preamble(src, opts)  # the names (the file's header, or given; pandas' implicit index)
    start, stop = (int(v) for v in byte_range)
    opts = dataclasses.replace(pre.columns_read(opts), column_names=tuple(pre.names), header=False, skip_rows=0,
                               skip_rows_after_names=0, implicit_index=None)
    return RangeSource(src, start, stop), opts


def read_pandas(source: Source, *, dtype_backend: str = "pyarrow", chunksize: int | None = None,
                iterator: bool = False, **options: Any) -> "pd.DataFrame | DataFrameChunks":
    """Reads CSV straight into a pandas DataFrame: :func:`read_csv`, then
    :func:`to_pandas` with ``dtype_backend`` (``"pyarrow"``, ``"numpy"`` or
    ``"numpy_nullable"``). pandas' frame keywords work as in
    ``pandas.read_csv`` (:mod:`arrow_bridge.pandas_frame`): ``index_col``,
    ``parse_dates`` with ``date_format`` and ``dayfirst``, ``converters``
    (applied to each value's text in Python, as pandas hands it, NA
    spellings and empty text too: a slow path), ``skipfooter``
    (the footer's lines dropped before the parse, so types are the rest's),
    ``dtype="category"`` (or per column), pandas and NumPy dtypes in
    ``dtype`` (the column gets that dtype whatever ``dtype_backend``),
    ``usecols`` as a callable, ``dialect``, ``na_filter``,
    ``skip_blank_lines``; and ``engine``, ``low_memory``, ``memory_map``,
    ``float_precision``, ``cache_dates`` are accepted with a warning. Values
    read as pandas reads them (``semantics="pandas"``, see :func:`read_csv`):
    dates and timestamps stay text unless ``parse_dates`` or ``dtype`` ask,
    and empty or NA-spelled text is missing.

    ``chunksize=N`` or ``iterator=True`` read it a piece at a time, as pandas
    does: the result (:class:`arrow_bridge.streaming.DataFrameChunks`, like
    pandas' ``TextFileReader``) yields DataFrames of ``N`` rows (the last
    shorter), gives the next ``n`` with ``get_chunk(n)`` and closes with
    ``close()`` or a ``with`` block. It streams (:func:`open_csv`: memory
    bounded, types from the first block; errors stay ``CsvParseError``); each
    frame's dtypes are what ``read_pandas`` gives for its rows, and its index
    continues the previous frame's.

    ``memory_limit`` (as for :func:`read_csv`) bounds the read; the
    ``"pyarrow"`` backend wraps the Table without a copy, while the NumPy
    backends copy it (strings become Python objects, larger still): with a
    limit, a Table that cannot fit next to a copy of itself raises
    :class:`arrow_bridge.MemoryLimitError` before the conversion.

    An input with nothing to read columns from raises
    :class:`arrow_bridge.errors.PandasEmptyCsvError`: a ``CsvParseError`` that
    ``except pandas.errors.EmptyDataError`` catches, as pandas raises.

    >>> import io, arrow_bridge
    >>> arrow_bridge.read_pandas(io.BytesIO(b"a\\n1\\n"), dtype_backend="numpy").dtypes["a"]
    dtype('int64')
    >>> with arrow_bridge.read_pandas(io.BytesIO(b"a\\n1\\n2\\n3\\n"), chunksize=2) as chunks:
    ...     [frame.index.tolist() for frame in chunks]
    [[0, 1], [2]]
    """
    try:
        return _read_pandas(source, dtype_backend, chunksize, iterator, options)
    except EmptyCsvError as error:  # what pandas users catch: pandas.errors.EmptyDataError
        raise errors.PandasEmptyCsvError(*error.__reduce__()[1]) from None
    except errors.CsvParseError as error:
        if not _not_utf8(error):
            raise
        if error.line is None:  # a column finish's (pyarrow's words, no location)
            raise errors.CsvDecodeError(str(error)) from None
        bad, offset = _undecodable_at(source, error.byte_offset)
        raise errors.CsvDecodeError(error.path, error.line, offset, "utf-8", bad,
                                    f"invalid UTF-8 in column {error.column!r}") from None


def _not_utf8(error: errors.CsvParseError) -> bool:
    """Whether ``error`` is a text column's value that is not UTF-8 (the one thing a string
    conversion refuses): pandas raises ``UnicodeDecodeError`` there."""
    if error.line is None:
        return "CSV conversion error to string: invalid value" in str(error)
    return error.reason is not None and error.reason.startswith("cannot convert") \
        and error.reason.endswith(("to string", "to large_string"))


def _undecodable_at(source: Source, offset: int) -> tuple[bytes, int]:
    """The bytes that are not UTF-8 in the field at ``offset`` of ``source``, and where they
    start; ``(b"", offset)`` where the source cannot be read again."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        raw = bytes(source[offset: offset + 64])
    elif isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as file:
            file.seek(offset)
            raw = file.read(64)
    elif _readable_twice(source):
        position = source.tell()
        source.seek(offset)
        raw = source.read(64)
        source.seek(position)
    else:
        return b"", offset
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as error:
        if error.end < len(raw) or len(raw) < 64:  # (not a character the 64 bytes cut in two)
            return raw[error.start: error.end], offset + error.start
    return b"", offset


def _read_pandas(source: Source, dtype_backend: str, chunksize: int | None, iterator: bool,
                 options: dict[str, Any]) -> "pd.DataFrame | DataFrameChunks":
    options.setdefault("semantics", "pandas")
    numbered = "header" in options and options["header"] is None and options.get("names") is None
    by_position: tuple[str, ...] = ()
    typed_by_position: tuple[str, ...] = ()  # a dtype for a position types that field only, not its repeats
    if callable(options.get("usecols")) or positions_named(options):
        names, made_up = _header_names(source, options)  # (read without usecols: once serves both)
    if callable(options.get("usecols")):  # the names it takes; pandas' implicit index is kept, as without usecols
        made_up_names = {*made_up.index, *made_up.trailing}
        options["usecols"] = selected_names(options["usecols"], [name for name in names if name not in made_up_names],
                                            numbered)
        options["columns_keyword"] = CALLABLE_USECOLS
    if positions_named(options):  # parse_dates=[2]: read that column as text, as pandas does
        by_position = () if numbered else objects_by_position(options.get("dtype"), names)
        typed_by_position = positions_only(options.get("dtype"), names)
        options = name_positions(options, names, made_up)
    options, steps = split_keywords(options)
    if typed_by_position:
        options["repeats_typed"] = tuple(name for name in options["repeats_typed"] if name not in typed_by_position)
        steps.typed_by_position = typed_by_position
    steps.objects_by_position = by_position
    steps.object_columns = tuple(key for key in steps.object_columns if key not in by_position)
    strict = options.get("encoding_errors") in (None, "strict")

    def to_frame(table: pa.Table) -> "pd.DataFrame":
        if strict:
            _refuse_undecodable(table, source)
        return with_pandas_dtypes(to_pandas(table, dtype_backend), table, steps.pandas_dtypes)

    def labelled(frame: "pd.DataFrame") -> "pd.DataFrame":
        return numbered_columns(frame) if numbered else frame

    if chunksize is not None or iterator:
        if steps.skipfooter:
            raise NotImplementedError("skipfooter where the text is read as it is (sep=None, byte_range, a device "
                                      "split) is not supported with chunksize/iterator: the footer is known at the "
                                      "end only")
        # each chunk as pandas shapes its chunks: its own types, index, dates, converters and categories
        options.setdefault("chunk_typed_columns", ())
        start = source.tell() if hasattr(source, "read") and _readable_twice(source) else None
        restart = _restarts(source, options)  # (reads ``options`` as they are then: a fallback changes them)
        return DataFrameChunks(_stream(source, **options), chunksize,
                               lambda table: labelled(shape(table, steps, to_frame)),
                               numbered=steps.index_col is None or steps.index_col is False, restart=restart,
                               fall_back=lambda error: _fall_back(error, source, start, options, steps),
                               empty_frame=options.get("nrows") != 0)
    table = _read_falling_back(source, options, steps)
    _check_conversion(table, source, parse_memory_limit(options.get("memory_limit")), dtype_backend)
    return labelled(shape(table, steps, to_frame))


def _read_falling_back(source: Source, options: dict[str, Any], steps: FrameSteps) -> pa.Table:
    """``read_csv``, read again where a value did not parse as the numeric or boolean
    dtype asked of its column: the column is then inferred (or, for an extension dtype,
    text) and ``steps`` cast it as pandas does (:mod:`arrow_bridge.dtype_fallback`). A
    source that cannot be read twice keeps the error. Read again too where pandas keeps
    a column's text as written (:func:`_as_written`); once only is that left as read."""
    start = source.tell() if hasattr(source, "read") and _readable_twice(source) else None
    while True:
        try:
            table = read_csv(source, **options)
            as_written = python_ints.named(table.schema, python_ints.AS_WRITTEN_KEY)
            if not as_written or not _readable_twice(source):
                return table
            if start is not None:
                source.seek(start)
            table = read_csv(source, **_as_written(options, as_written))  # still named: thousands= leaves them
            return table.replace_schema_metadata(python_ints.marked(table.schema, as_written,
                                                                    python_ints.AS_WRITTEN_KEY).metadata)
        except errors.CsvParseError as error:
            if not _readable_twice(source) or not _fall_back(error, source, start, options, steps):
                raise


def _fall_back(error: errors.CsvParseError, source: Source, start: int | None, options: dict[str, Any],
               steps: FrameSteps) -> bool:
    """Whether ``error`` is a value the dtype asked of its column refused, which pandas
    falls back from (:mod:`arrow_bridge.dtype_fallback`); if so, ``options`` now read that
    column again (inferred, or as text) and ``steps`` cast it as pandas does. ``start``:
    where ``source`` (readable twice) begins, for its header."""
    name = error.column
    wanted = None if name is None else dtype_fallback.dtype_asked(options.get("dtype"), name)
    if wanted is None:
        return False
    if start is not None:
        source.seek(start)
    names = _header_names(source, options)[0]
    as_text = dtype_fallback.falls_back_to_text(wanted, name, steps.parse_dates)
    options.update(dtype_fallback.read_again(options, name, wanted, names, as_text))
    # the other columns keep their pandas dtypes (a single one now per column); this one its fallback's
    given = steps.pandas_dtypes
    every = {other: given[None] for other in names} if None in given else {}
    steps.pandas_dtypes = {key: kind for key, kind in {**every, **given}.items() if key not in (None, name)}
    if not as_text:  # (text: parse_dates reads it)
        steps.dtype_fallbacks[name] = dtype_fallback.Fallback(wanted, names.index(name), error)
    return True


def _refuse_undecodable(table: pa.Table, source: Source) -> None:
    """pandas decodes every value with ``encoding_errors="strict"``: a column the reader
    kept as bytes (invalid in the encoding) raises its ``UnicodeDecodeError``, naming
    the column and row here (of ``table``: a chunk's, with ``chunksize``).

    >>> _refuse_undecodable(pa.table({"a": pa.array([b"x", b"\\xe9"])}), "f.csv")
    Traceback (most recent call last):
    ...
    UnicodeDecodeError: 'utf-8' codec can't decode byte 0xe9 in position 0: unexpected end of data (column 'a', row 1 of f.csv; pass encoding= or encoding_errors=)
    """
    for name, column in zip(table.column_names, table.columns):
        if not (pa.types.is_binary(column.type) or pa.types.is_large_binary(column.type)):
            continue
        for row, value in enumerate(column.to_pylist()):
            try:
                value is None or value.decode("utf-8")
            except UnicodeDecodeError as error:
                where = os.fspath(source) if isinstance(source, (str, os.PathLike)) else f"<{type(source).__name__}>"
                raise UnicodeDecodeError(error.encoding, error.object, error.start, error.end,
                                         f"{error.reason} (column {name!r}, row {row} of {where}; pass encoding= "
                                         "or encoding_errors=)") from None


def _as_written(options: dict[str, Any], names: Sequence[str]) -> dict[str, Any]:
    """``options`` reading the columns ``names`` as text as written, NA spellings and empty
    fields too: where pandas gave up on numbers past int64 (:mod:`arrow_bridge.python_ints`).

    >>> _as_written({"dtype": "int8"}, ["a"])
    {'dtype': {None: 'int8', 'a': 'string'}, 'raw_text_columns': ['a']}
    """
    dtype = options.get("dtype")
    text = dict.fromkeys(names, "string")
    dtype = text if dtype is None else {**dtype, **text} if isinstance(dtype, Mapping) else {None: dtype, **text}
    return {**options, "dtype": dtype, "raw_text_columns": [*options.get("raw_text_columns", ()), *names]}


def _restarts(source: Source, options: dict[str, Any]) -> Callable[[tuple[str, ...]], Stream] | None:
    """How a chunked read opens ``source`` again from its start with columns typed per
    chunk (:class:`DataFrameChunks`); None where it cannot be read twice."""
    if not _readable_twice(source):
        return None
    start = source.tell() if hasattr(source, "read") else None

    def again(typed: tuple[str, ...]) -> Stream:
        if start is not None:
            source.seek(start)
        return _stream(source, **{**options, "chunk_typed_columns": typed})
    return again


def _readable_twice(source: Source) -> bool:
    """Whether ``source`` can be read again from where it is now (a path, bytes, a seekable file)."""
    return not hasattr(source, "read") or is_seekable(source)


def _check_conversion(table: pa.Table, source: Source, limit: int | None, dtype_backend: str) -> None:
    """NumPy-backed frames copy the Table: with a memory limit, the Table and (at least) one copy must fit."""
    if limit is None or dtype_backend == "pyarrow" or 2 * table.nbytes <= limit:
        return
    name = os.fspath(source) if isinstance(source, (str, os.PathLike)) else f"<{type(source).__name__}>"
    raise MemoryLimitError(name, limit, table.nbytes, 0, table.nbytes,
                           "Give a larger memory_limit, or dtype_backend='pyarrow' (no copy)",
                           f"converting it to pandas (dtype_backend={dtype_backend!r}) copies at least")


def _header_names(source: Source, options: dict[str, Any]) -> tuple[list[str], ImplicitColumns]:
    """The column names a read of ``source`` with ``options`` would see (for a callable
    ``usecols``, or keywords naming columns by position), and those pandas' implicit index
    would make up (the first record read: where it has more fields than the names)."""
    if not _readable_twice(source):
        raise NotImplementedError("usecols as a callable needs a path, bytes or a seekable file object")
    position = source.tell() if hasattr(source, "read") else None
    head = read_csv(source, **{**split_keywords({**options, "dtype": None})[0], "usecols": None, "nrows": 1})
    if position is not None:
        source.seek(position)
    return head.column_names, ImplicitColumns.of(head.schema)


def to_pandas(table: pa.Table, dtype_backend: str = "pyarrow") -> "pd.DataFrame":
    """A pandas DataFrame of ``table``: ``pd.ArrowDtype`` columns (``"pyarrow"``,
    no conversion), NumPy dtypes (``"numpy"``, ``table.to_pandas()``) or
    pandas' nullable extension dtypes (``"numpy_nullable"``). Duplicate
    names are made unique as pandas does (:func:`deduplicated`).

    >>> import pyarrow as pa
    >>> to_pandas(pa.table({"a": [1, None]}), "numpy_nullable").dtypes["a"]
    Int64Dtype()
    """
    import pandas as pd

    names = deduplicated(table.column_names)
    if names != table.column_names:
        table = table.rename_columns(names)
    if dtype_backend == "pyarrow":
        return table.to_pandas(types_mapper=pd.ArrowDtype)
    if dtype_backend not in ("numpy", "numpy_nullable"):
        raise ValueError(f"dtype_backend must be 'pyarrow', 'numpy' or 'numpy_nullable', got {dtype_backend!r}")
    # pandas.read_csv's choices: a column of nulls is float64 (numpy) or Int64 (nullable), an empty one
    # object; a missing bool is NaN
    nulls_as = pa.float64() if dtype_backend == "numpy" else pa.int64()
    for j, column in enumerate(table.columns):
        if pa.types.is_null(column.type) and table.num_rows:
            table = table.set_column(j, table.field(j).with_type(nulls_as), column.cast(nulls_as))
    if dtype_backend == "numpy":
        return _python_ints(_missing_bools_as_nan(table.to_pandas(), table), table)
    return _python_ints_as_text(table).to_pandas(types_mapper={
        pa.int8(): pd.Int8Dtype(), pa.int16(): pd.Int16Dtype(), pa.int32(): pd.Int32Dtype(),
        pa.int64(): pd.Int64Dtype(), pa.uint8(): pd.UInt8Dtype(), pa.uint16(): pd.UInt16Dtype(),
        pa.uint32(): pd.UInt32Dtype(), pa.uint64(): pd.UInt64Dtype(), pa.bool_(): pd.BooleanDtype(),
        pa.float32(): pd.Float32Dtype(), pa.float64(): pd.Float64Dtype(), pa.string(): pd.StringDtype(),
    }.get)


def _python_ints(frame: "pd.DataFrame", table: pa.Table) -> "pd.DataFrame":
    """pandas makes Python ints (in an object column) of integers past 64 bits; the reader named those
    columns (:mod:`arrow_bridge.python_ints`)."""
    import pandas as pd

    for name in python_ints.named(table.schema):
        j = table.column_names.index(name)
        values = python_ints.as_python_ints(table.column(j).to_pylist())
        frame.isetitem(j, pd.Series(values, index=frame.index, dtype=object, name=frame.columns[j]))
    return frame


def _python_ints_as_text(table: pa.Table) -> pa.Table:
    """pandas' nullable dtypes hold the text of the Python ints it made (:mod:`arrow_bridge.python_ints`),
    not the text as written: ``+007`` is ``'7'``."""
    for name in python_ints.named(table.schema):
        j = table.column_names.index(name)
        texts = [None if text is None else str(int(text)) for text in table.column(j).to_pylist()]
        table = table.set_column(j, table.field(j), pa.array(texts, pa.string()))
    return table


def _missing_bools_as_nan(frame: "pd.DataFrame", table: pa.Table) -> "pd.DataFrame":
    """pyarrow gives a bool column with nulls as objects holding None; pandas holds NaN there."""
    for j, column in enumerate(table.columns):
        if pa.types.is_boolean(column.type) and column.null_count:
            frame.isetitem(j, frame.iloc[:, j].where(frame.iloc[:, j].notna(), float("nan")))
    return frame
