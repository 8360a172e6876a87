"""``write_csv``: a pyarrow Table as CSV text that pyarrow reads back exactly.

The text is formatted by Numba kernels (``arrow_bridge.kernels.formatting``)
one batch of rows at a time, column-interleaved into row-major text, and
streamed to the file; the whole text is never held in memory. The same
kernel runs in two places:

* the host (``device=None``): batches are formatted on a small thread pool
  (the kernel releases the GIL) and written in order;
* a computational device (``device=`` an object with an ``ndp_core.Engine``
  as ``.engine``): each batch's Arrow buffers go to the device as one
  Morpheus MWRITE and the device's StorageApp turns them into text and
  stores it. Host and device produce identical bytes.

Example::

    >>> import os, tempfile
    >>> import pyarrow as pa, pyarrow.csv as pacsv
    >>> from arrow_bridge.writer import write_csv, read_back_options
    >>> table = pa.table({"x": [1.5, None, -0.0], "s": ["a,b", "", None]})
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     out = os.path.join(folder, "out.csv")
    ...     result = write_csv(table, out)
    ...     pacsv.read_csv(out, **read_back_options(table.schema)).equals(table)
    True
"""
from __future__ import annotations

import os
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, BinaryIO, Callable, Iterable, Iterator, Optional, Union

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from arrow_bridge.kernels import formatting
from arrow_bridge.kernels.status import BAD_VALUE, OK, OUT_OF_SPACE
from ndp_core.layout import align8
from ndp_core.engine import Status

__all__ = ["write_csv", "read_back_options", "CsvWriteResult", "DEFAULT_BATCH_ROWS"]

DEFAULT_BATCH_ROWS = 65_536
# Spellings pyarrow reads as null by default; string values equal to one of
# them are quoted so that readers with quoted_strings_can_be_null=False keep them.
PYARROW_NULL_SPELLINGS: tuple[str, ...] = tuple(pacsv.ConvertOptions().null_values)
# Characters that appear in the text of non-string values: a delimiter or
# quote char among them would need quoting numbers, which no reader expects.
_VALUE_CHARS = frozenset("0123456789.+-:eETZ")
_VALUE_WORDS = frozenset({"true", "false", "inf", "-inf", "NAN", "-NAN"})
# A file starting with its UTF-8 bytes starts with a byte order mark to every reader.
_BOM_CHAR = "\ufeff"

PathOrFile = Union[str, "os.PathLike[str]", BinaryIO]


@dataclass
class CsvWriteResult:
    """What one ``write_csv`` call did.

    ``bytes_written`` is the file's size; ``retries`` counts batches that came
    back OUT_OF_SPACE and were formatted again with the size they asked for;
    ``counters`` are the kernel's work counters by name (``formatting.WRITER_COUNTERS``).

    >>> CsvWriteResult(None, 0, 0, 0, 0, 0, False, {}).device
    False
    """

    path: Optional[str]
    rows: int
    columns: int
    bytes_written: int
    batches: int
    retries: int
    device: bool
    counters: dict[str, int]


# --------------------------------------------------------------------------
# Arguments.
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class _Dialect:
    sep: str
    quotechar: str
    na_rep: str
    line_terminator: str
    header: bool


def _check_char(name: str, ch: Any) -> None:
    if not isinstance(ch, str) or len(ch) != 1 or ord(ch) > 127:
        raise ValueError(f"{name} must be one ASCII character, got {ch!r}")
    if ch.isalnum() or ch in ".+-:\r\n":
        raise ValueError(f"{name}={ch!r} can occur inside numbers, dates or line ends; "
                         f"use another character (',', ';', '\\t', '|', ...)")


def _dialect(sep: Any, quotechar: Any, na_rep: Any, line_terminator: Any, header: Any) -> _Dialect:
    """Validated writing options (a clear ValueError/TypeError otherwise)."""
    _check_char("sep", sep)
    _check_char("quotechar", quotechar)
    if sep == quotechar:
        raise ValueError(f"sep and quotechar must differ, both are {sep!r}")
    if line_terminator not in ("\n", "\r\n", "\r"):
        raise ValueError(f"line_terminator must be '\\n', '\\r\\n' or '\\r', got {line_terminator!r}")
    if not isinstance(na_rep, str):
        raise TypeError(f"na_rep must be a str, got {type(na_rep).__name__}")
    if any(ch in na_rep for ch in (sep, quotechar, "\r", "\n")):
        raise ValueError(f"na_rep={na_rep!r} contains the delimiter, the quote char or a line end")
    if na_rep in _VALUE_WORDS or (na_rep and set(na_rep) <= _VALUE_CHARS):
        raise ValueError(f"na_rep={na_rep!r} reads back as a value, not a null; use e.g. '' or 'NA'")
    if not isinstance(header, bool):
        raise TypeError(f"header must be True or False, got {header!r}")
    if not header and na_rep.startswith(_BOM_CHAR):
        raise ValueError(f"na_rep={na_rep!r} starts with U+FEFF: as the file's first field (header=False) "
                         f"it would read as a byte order mark, which readers drop; use e.g. '' or 'NA'")
    return _Dialect(sep, quotechar, na_rep, line_terminator, header)


def _as_table(data: Any) -> pa.Table:
    """A pyarrow Table from a Table, a RecordBatch or a pandas DataFrame."""
    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    if type(data).__name__ == "DataFrame" and type(data).__module__.startswith("pandas"):
        # The index is not data in CSV; df.reset_index() keeps it as a column.
        return pa.Table.from_pandas(data, preserve_index=False)
    raise TypeError(f"write_csv takes a pyarrow.Table, a pyarrow.RecordBatch or a pandas.DataFrame, "
                    f"got {type(data).__name__}")


# --------------------------------------------------------------------------
# Column plans: Arrow type -> kernel kind.
# --------------------------------------------------------------------------
_INT_WIDTH = {pa.int8(): 1, pa.int16(): 2, pa.int32(): 4, pa.int64(): 8}
_UINT_WIDTH = {pa.uint8(): 1, pa.uint16(): 2, pa.uint32(): 4, pa.uint64(): 8}
_UNIT_DIGITS = {"s": 0, "ms": 3, "us": 6, "ns": 9}
# Longest text of one value (the capacity estimate; strings are counted apart).
_INT_TEXT = {1: 4, 2: 6, 4: 11, 8: 20}
_UINT_TEXT = {1: 3, 2: 5, 4: 10, 8: 20}
_FLOAT_TEXT = {4: 15, 8: 24}
_is_string_view = getattr(pa.types, "is_string_view", lambda t: False)  # pyarrow >= 16
_is_binary_view = getattr(pa.types, "is_binary_view", lambda t: False)


@dataclass(frozen=True)
class _ColumnPlan:
    kind: int
    width: int  # value bytes; offset bytes for strings
    aux: int  # fraction digits of temporal units
    flags: int  # CF_UTC, CF_NULL_QUOTED
    read_type: pa.DataType  # what read_back_options asks pyarrow for
    prepare: Optional[Callable[[pa.Array], pa.Array]]  # host-side conversion (dictionary, views)
    max_text: int  # longest value text (fixed kinds)


def _plan_for(t: pa.DataType, name: str) -> _ColumnPlan:
    def plan(kind, width=0, aux=0, flags=0, read_type=t, prepare=None, max_text=0):
        return _ColumnPlan(kind, width, aux, flags, read_type, prepare, max_text)

    if pa.types.is_dictionary(t):
        inner = _plan_for(t.value_type, name)
        decode = inner.prepare

        def prepare(a: pa.Array) -> pa.Array:
            a = a.dictionary_decode()
            return decode(a) if decode else a

        return plan(inner.kind, inner.width, inner.aux, inner.flags, inner.read_type, prepare, inner.max_text)
    if t in _INT_WIDTH:
        return plan(formatting.K_INT, _INT_WIDTH[t], max_text=_INT_TEXT[_INT_WIDTH[t]])
    if t in _UINT_WIDTH:
        return plan(formatting.K_UINT, _UINT_WIDTH[t], max_text=_UINT_TEXT[_UINT_WIDTH[t]])
    if pa.types.is_float32(t) or pa.types.is_float64(t):
        width = t.bit_width // 8
        return plan(formatting.K_FLOAT, width, max_text=_FLOAT_TEXT[width])
    if pa.types.is_boolean(t):
        return plan(formatting.K_BOOL, max_text=5)
    if pa.types.is_date32(t):
        return plan(formatting.K_DATE32, 4, max_text=10)
    if pa.types.is_date64(t):  # a safe cast: ms that are not whole days raise
        return plan(formatting.K_DATE32, 4, prepare=lambda a: a.cast(pa.date32()), max_text=10)
    if pa.types.is_timestamp(t):
        digits = _UNIT_DIGITS[t.unit]
        utc = formatting.CF_UTC if t.tz is not None else 0
        return plan(formatting.K_TIMESTAMP, 8, digits, utc, max_text=19 + (digits + 1 if digits else 0) + 1)
    if pa.types.is_time32(t) or pa.types.is_time64(t):
        digits = _UNIT_DIGITS[t.unit]
        return plan(formatting.K_TIME, t.bit_width // 8, digits, max_text=8 + (digits + 1 if digits else 0))
    if pa.types.is_string(t) or pa.types.is_binary(t):
        return plan(formatting.K_BYTES, 4)
    if pa.types.is_large_string(t) or pa.types.is_large_binary(t):
        return plan(formatting.K_BYTES, 8)
    if _is_string_view(t) or _is_binary_view(t):
        plain = pa.string() if _is_string_view(t) else pa.binary()
        return plan(formatting.K_BYTES, 4, read_type=plain, prepare=lambda a: a.cast(plain))
    if pa.types.is_null(t):
        return plan(formatting.K_NULL)
    raise TypeError(f"write_csv cannot write column {name!r} of type {t}: supported are integers, "
                    f"floats (32/64), bool, date32/64, timestamp, time32/64, string, binary (and large/"
                    f"view variants), null and dictionaries of those")


def _plans(schema: pa.Schema, na_rep: str) -> list[_ColumnPlan]:
    plans = [_plan_for(f.type, f.name) for f in schema]
    if len(plans) == 1 and na_rep == "" and plans[0].kind != formatting.K_BYTES:
        # A lone empty null would be a blank line, which readers skip; `""` is
        # a null for every non-string type under pyarrow's defaults.
        p = plans[0]
        plans[0] = _ColumnPlan(p.kind, p.width, p.aux, p.flags | formatting.CF_NULL_QUOTED, p.read_type,
                               p.prepare, p.max_text)
    return plans


def read_back_options(schema: Union[pa.Schema, pa.Table, Any], *, sep: str = ",", quotechar: str = '"',
                      na_rep: str = "", header: bool = True) -> dict[str, Any]:
    """Keyword arguments for ``pyarrow.csv.read_csv`` that read ``write_csv``'s
    text (written with the same dialect) back to a table equal to the original.

    They give every column its type (``column_types``), make unquoted
    ``na_rep`` the only null (``strings_can_be_null=True``; a quoted empty
    field is an empty string, not null), allow newlines in quoted values and,
    for a one-string-column table with ``na_rep=""``, keep blank lines (its
    nulls).

    >>> import pyarrow as pa
    >>> opts = read_back_options(pa.schema([("n", pa.int8())]))
    >>> opts["convert_options"].column_types["n"]
    DataType(int8)
    """
    if not isinstance(schema, pa.Schema):
        schema = _as_table(schema).schema if not hasattr(schema, "schema") else schema.schema
    dialect = _dialect(sep, quotechar, na_rep, "\n", header)
    plans = [_plan_for(f.type, f.name) for f in schema]
    string_like = any(p.kind == formatting.K_BYTES for p in plans)
    blank_nulls = len(plans) == 1 and string_like and na_rep == ""
    return {
        "read_options": pacsv.ReadOptions(column_names=None if dialect.header else schema.names),
        "parse_options": pacsv.ParseOptions(delimiter=sep, quote_char=quotechar, double_quote=True,
                                            newlines_in_values=True, ignore_empty_lines=not blank_nulls),
        "convert_options": pacsv.ConvertOptions(
            column_types={f.name: p.read_type for f, p in zip(schema, plans)},
            null_values=[na_rep], strings_can_be_null=True,
            # Only string columns tell "" (empty text) from an unquoted null;
            # elsewhere a quoted empty field is a null (one-column tables).
            quoted_strings_can_be_null=not string_like,
            true_values=["true"], false_values=["false"]),
    }


# --------------------------------------------------------------------------
# Batches: Arrow buffers -> the kernel's self-describing layout.
# --------------------------------------------------------------------------
def _offsets_section(items: list[bytes]) -> tuple[np.ndarray, bytes]:
    offsets = np.zeros(len(items) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(b) for b in items]) if items else []
    return offsets, b"".join(items)


def _u8(buffer: Optional[pa.Buffer]) -> np.ndarray:
    return np.frombuffer(buffer, dtype=np.uint8) if buffer is not None else np.empty(0, np.uint8)


def _bits(buffer: pa.Buffer, offset: int, n: int) -> tuple[np.ndarray, int]:
    """The bytes of an Arrow bitmap covering bits [offset, offset + n), and the first bit."""
    start = offset // 8
    return _u8(buffer)[start:start + (offset % 8 + n + 7) // 8], offset % 8


class _Encoder:
    """Builds batch buffers for one table: the dialect, names and null
    spellings once; each batch's column buffers per call."""

    def __init__(self, schema: pa.Schema, plans: list[_ColumnPlan], dialect: _Dialect):
        self.schema, self.plans, self.dialect = schema, plans, dialect
        names = [f.name.encode("utf-8") for f in schema]
        na = dialect.na_rep.encode("utf-8")
        spellings = [s.encode() for s in dict.fromkeys(PYARROW_NULL_SPELLINGS + (dialect.na_rep,)) if s]
        ns_offsets, ns_data = _offsets_section(spellings)
        name_offsets, name_data = _offsets_section(names)
        head = 8 * (formatting.BATCH.size + formatting.COLUMN.size * len(plans))
        # The constant sections, laid out after the header and descriptors.
        parts = [(formatting.BATCH.na_offset, na), (formatting.BATCH.null_spelling_offsets, ns_offsets.tobytes()),
                 (formatting.BATCH.null_spelling_data, ns_data), (formatting.BATCH.name_offsets, name_offsets.tobytes()),
                 (formatting.BATCH.name_data, name_data)]
        self.words = np.zeros(formatting.BATCH.size, dtype=np.int64)
        w = self.words
        w[formatting.BATCH.magic], w[formatting.BATCH.version] = formatting.MAGIC, formatting.LAYOUT_VERSION
        w[formatting.BATCH.cols] = len(plans)
        w[formatting.BATCH.sep], w[formatting.BATCH.quote] = ord(dialect.sep), ord(dialect.quotechar)
        lt = dialect.line_terminator.encode()
        w[formatting.BATCH.line_terminator_len], w[formatting.BATCH.line_terminator0], w[formatting.BATCH.line_terminator1] = len(lt), lt[0], lt[-1]
        w[formatting.BATCH.na_len], w[formatting.BATCH.null_spellings] = len(na), len(spellings)
        fixed = bytearray()
        for slot, blob in parts:
            w[slot] = head + len(fixed)
            fixed += blob + b"\0" * (align8(len(blob)) - len(blob))
        self.fixed = np.frombuffer(bytes(fixed), dtype=np.uint8)
        self.head = head
        header_text = sum(2 * len(n) + 2 for n in names) + len(names) + len(lt)
        self.header_text = header_text if dialect.header and plans else 0
        null_text = max(len(na), 2)
        self.row_text = len(plans) + len(lt)  # separators and the line end
        self.fixed_text = sum(max(p.max_text, null_text) for p in plans if p.kind != formatting.K_BYTES)
        self.null_text = null_text

    def prepare(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """The batch with every column in a kernel-ready type (dictionaries
        decoded, views cast to plain strings, date64 to date32)."""
        if not any(p.prepare for p in self.plans):
            return batch
        columns = [p.prepare(a) if p.prepare else a for p, a in zip(self.plans, batch.columns)]
        return pa.RecordBatch.from_arrays(columns, names=batch.schema.names)

    def encode(self, batch: pa.RecordBatch, flags: int) -> tuple[np.ndarray, int]:
        """``(batch buffer, estimated text size)`` for one prepared batch."""
        columns, n_rows = batch.columns, batch.num_rows
        sections: list[tuple[int, np.ndarray]] = []  # (descriptor word, bytes)
        descs = np.zeros((len(self.plans), formatting.COLUMN.size), dtype=np.int64)
        string_text = 0
        for c, (plan, arr) in enumerate(zip(self.plans, columns)):
            d = descs[c]
            d[formatting.COLUMN.kind], d[formatting.COLUMN.width] = plan.kind, plan.width
            d[formatting.COLUMN.aux], d[formatting.COLUMN.flags] = plan.aux, plan.flags
            if plan.kind == formatting.K_NULL:
                continue
            bufs, off = arr.buffers(), arr.offset
            if arr.null_count > 0:
                bits, d[formatting.COLUMN.validity_bit] = _bits(bufs[0], off, n_rows)
                d[formatting.COLUMN.flags] |= formatting.CF_VALIDITY
                sections.append((c * formatting.COLUMN.size + formatting.COLUMN.validity, bits))
            if plan.kind == formatting.K_BOOL:
                bits, d[formatting.COLUMN.values_bit] = _bits(bufs[1], off, n_rows)
                sections.append((c * formatting.COLUMN.size + formatting.COLUMN.values, bits))
            elif plan.kind == formatting.K_BYTES:
                dtype = np.int32 if plan.width == 4 else np.int64
                offsets = np.frombuffer(bufs[1], dtype=dtype)[off:off + n_rows + 1] if n_rows else \
                    np.zeros(1, dtype=dtype)
                base, last = int(offsets[0]), int(offsets[-1])
                data = _u8(bufs[2])[base:last]
                d[formatting.COLUMN.base], d[formatting.COLUMN.data_len] = base, last - base
                sections.append((c * formatting.COLUMN.size + formatting.COLUMN.values, offsets.view(np.uint8)))
                sections.append((c * formatting.COLUMN.size + formatting.COLUMN.data, data))
                string_text += (last - base) + n_rows * 2 + (arr.null_count * self.null_text)
            else:
                w = plan.width
                values = _u8(bufs[1])[off * w:(off + n_rows) * w]
                sections.append((c * formatting.COLUMN.size + formatting.COLUMN.values, values))
        total = self.head + self.fixed.size + sum(align8(s.size) for _, s in sections)
        buf = np.zeros(total, dtype=np.uint8)
        pos = self.head + self.fixed.size
        flat = descs.reshape(-1)
        for word, data in sections:
            flat[word] = pos
            buf[pos:pos + data.size] = data
            pos += align8(data.size)
        words = self.words.copy()
        words[formatting.BATCH.flags], words[formatting.BATCH.rows], words[formatting.BATCH.total] = flags, n_rows, total
        buf[:8 * formatting.BATCH.size] = words.view(np.uint8)
        buf[8 * formatting.BATCH.size:self.head] = flat.view(np.uint8)
        buf[self.head:self.head + self.fixed.size] = self.fixed
        estimate = n_rows * (self.row_text + self.fixed_text) + string_text
        if flags & formatting.F_HEADER_LINE:
            estimate += self.header_text
        return buf, estimate


@dataclass
class _Batch:
    buf: np.ndarray
    estimate: int
    first_row: int
    n_rows: int


def _concat(group: list[pa.RecordBatch]) -> pa.RecordBatch:
    if len(group) == 1:
        return group[0]
    if hasattr(pa, "concat_batches"):  # pyarrow >= 19
        return pa.concat_batches(group)
    return pa.Table.from_batches(group).combine_chunks().to_batches()[0]


def _record_batches(table: pa.Table, batch_rows: int,
                    prepare: Callable[[pa.RecordBatch], pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Prepared batches of at most ``batch_rows`` rows; small chunks are
    merged (after preparing, so chunks with different dictionaries merge) so a
    table of many tiny chunks still makes few kernel calls."""
    group: list[pa.RecordBatch] = []
    rows = 0
    for b in table.to_batches(max_chunksize=batch_rows):
        if group and rows + b.num_rows > batch_rows:
            yield _concat(group)
            group, rows = [], 0
        group.append(prepare(b))
        rows += b.num_rows
    if group:
        yield _concat(group)


def _encoded(table: pa.Table, encoder: _Encoder, batch_rows: int) -> Iterator[_Batch]:
    """Every batch encoded, the first flagged F_FILE_START (and F_HEADER_LINE
    with a header), the last F_LAST (always at least one batch, so an empty
    table still gets its header)."""
    header = formatting.F_HEADER_LINE if encoder.dialect.header else 0
    file_start = formatting.F_FILE_START
    source = _record_batches(table, batch_rows, encoder.prepare)
    current = next(source, None)
    if current is None:
        current = encoder.prepare(pa.RecordBatch.from_arrays(
            [pa.array([], type=f.type) for f in table.schema], schema=table.schema))
    first_row = 0
    while current is not None:
        following = next(source, None)
        flags = header | file_start | (formatting.F_LAST if following is None else 0)
        n = current.num_rows
        buf, estimate = encoder.encode(current, flags)
        yield _Batch(buf, estimate, first_row, n)
        header = file_start = 0
        first_row += n
        current = following


# --------------------------------------------------------------------------
# Running the kernel.
# --------------------------------------------------------------------------
def _bad_value_error(table: pa.Table, batch: _Batch, bad_field: int) -> Exception:
    n_cols = table.num_columns
    if bad_field < 0 or n_cols == 0:
        return RuntimeError("internal error: the formatting kernel rejected a batch layout")
    row, col = divmod(bad_field, n_cols)
    field = table.schema.field(col)
    return ValueError(f"cannot write column {field.name!r} ({field.type}) row {batch.first_row + row}: "
                      f"CSV text can hold dates and timestamps in years 0000-9999 and times of day "
                      f"in [00:00:00, 24:00:00) only")


def _format_on_host(batch: _Batch) -> tuple[int, int, int, np.ndarray, int, np.ndarray]:
    """Format one batch (runs on a pool thread): ``(status, end, bad, out, retries, counters)``."""
    counters = formatting.WRITER_COUNTERS.zeros()
    out = np.empty(max(batch.estimate, 1), dtype=np.uint8)
    status, end, bad = formatting.format_batch(batch.buf, out, 0, counters)
    retries = 0
    if status == OUT_OF_SPACE:  # the kernel counted what it needs: one retry fits
        retries = 1
        out = np.empty(end, dtype=np.uint8)
        status, end, bad = formatting.format_batch(batch.buf, out, 0, counters)
    return status, end, bad, out, retries, counters


def _write_host(table: pa.Table, batches: Iterable[_Batch], sink: BinaryIO,
                n_threads: int) -> tuple[int, int, int, np.ndarray]:
    """Format on a thread pool, write in order: ``(bytes, batches, retries, counters)``."""
    total = n_batches = retries = 0
    counters = formatting.WRITER_COUNTERS.zeros()
    pending: deque[tuple[_Batch, Future]] = deque()

    def finish(batch: _Batch, future: Future) -> None:
        nonlocal total, n_batches, retries
        status, end, bad, out, r, c = future.result()
        if status == BAD_VALUE:
            raise _bad_value_error(table, batch, bad)
        if status != OK:
            raise RuntimeError(f"formatting kernel failed with status {status}")
        sink.write(memoryview(out)[:end])
        total += end
        n_batches += 1
        retries += r
        counters[:] += c

    with ThreadPoolExecutor(max_workers=n_threads, thread_name_prefix="csv-format") as pool:
        try:
            for batch in batches:
                pending.append((batch, pool.submit(_format_on_host, batch)))
                if len(pending) > n_threads:  # bounded memory: a few batches in flight
                    finish(*pending.popleft())
            while pending:
                finish(*pending.popleft())
        finally:
            for _, future in pending:
                future.cancel()
    return total, n_batches, retries, counters


def _device_engine(device: Any) -> tuple[Any, int]:
    engine = getattr(device, "engine", None)
    page = getattr(device, "page_size", None)
    for name in ("stream_create", "minit", "submit_mwrite", "wait", "mdeinit"):
        if not callable(getattr(engine, name, None)):
            raise TypeError(f"device must have an ndp_core.Engine as .engine (missing {name!r}); "
                            f"got {type(device).__name__}")
    if not isinstance(page, int) or page < 1:
        raise TypeError(f"device.page_size must be a positive int, got {page!r}")
    engine_page = getattr(engine, "page_size", page)
    if engine_page != page:
        raise ValueError(f"device.page_size ({page}) differs from its engine's page size ({engine_page})")
    return engine, page


def _write_device(table: pa.Table, batches: Iterable[_Batch], path: str,
                  device: Any) -> tuple[int, int, int, np.ndarray]:
    """Morpheus MWRITE: each batch's buffers through the device's formatting
    app into the file. Whole pages are stored as they fill; the app keeps the
    partial last page in its state and the F_LAST batch flushes it, so
    consecutive batches land contiguously. Returns like ``_write_host``."""
    engine, page = _device_engine(device)
    from arrow_bridge.kernels.format_app import csv_format  # compiled on first use: the host path never pays

    with open(path, "wb"):  # create or empty it: the engine's stream does not truncate
        pass
    stream = engine.stream_create(path, writable=True)
    counters = formatting.WRITER_COUNTERS.zeros()
    total = n_batches = retries = 0
    first_page = 0
    inst: Optional[int] = None
    outstanding: Optional[int] = None
    try:
        inst = engine.minit(csv_format.address, state_size=formatting.STATE_HEADER + page, streams=[stream])
        source = iter(batches)
        batch = next(source, None)
        while batch is not None:
            out = np.empty(batch.estimate + page, dtype=np.uint8)  # + the carried tail
            outstanding = engine.submit_mwrite(inst, stream, first_page, batch.buf, [out], counters)
            following = next(source, None)  # encode the next batch while the device works
            done = engine.wait(outstanding)
            outstanding = None
            while done.status == Status.OUT_OF_SPACE:  # state and counters were rolled back
                retries += 1
                out = np.empty(done.result_sizes[0], dtype=np.uint8)
                done = engine.wait(engine.submit_mwrite(inst, stream, first_page, batch.buf, [out], counters))
            if done.status == Status.BAD_INPUT:
                raise _bad_value_error(table, batch, done.error_offset)
            if done.status != Status.OK:
                raise RuntimeError(f"MWRITE of rows {batch.first_row}..{batch.first_row + batch.n_rows} "
                                   f"failed: {done.status_name}")
            written = done.result_sizes[0]
            total += written
            first_page += written // page  # whole pages, except after the last batch
            n_batches += 1
            batch = following
    finally:
        try:
            if outstanding is not None:
                engine.wait(outstanding)
            if inst is not None:
                engine.mdeinit(inst)
        finally:
            engine.stream_close(stream)
    os.truncate(path, total)  # exact size: a plain reader must see no bytes past the text
    return total, n_batches, retries, counters


def write_csv(table: Any, path: PathOrFile, *, device: Any = None, sep: str = ",", header: bool = True,
              na_rep: str = "", quotechar: str = '"', line_terminator: str = "\n",
              batch_rows: int = DEFAULT_BATCH_ROWS, n_threads: Optional[int] = None) -> CsvWriteResult:
    """Write ``table`` as CSV text that ``pyarrow.csv.read_csv`` reads back exactly.

    ``table``: a pyarrow Table or RecordBatch, or a pandas DataFrame (converted
    with pyarrow; the index is not written). ``path``: a file path, or (host
    path only) a writable binary file object. ``device``: None for the host,
    or an object with ``.engine`` (an ``ndp_core.Engine``) and ``.page_size``
    to format inside the device with MWRITE (a device whose engine is None
    formats on the host). ``batch_rows`` rows are formatted per kernel call;
    ``n_threads`` host threads format batches in parallel (default: up to 4).

    Read back with ``pyarrow.csv.read_csv(path, **read_back_options(table.schema,
    ...same dialect...))`` to get a table equal to ``table``; plain
    ``read_csv(path)`` recovers what inference can (see docs/reader.md).

    Raises TypeError for unsupported column types or arguments, ValueError for
    bad options or values CSV cannot hold (a date beyond year 9999); the
    partly written file is removed then.

    Example::

        >>> import os, tempfile
        >>> import pyarrow as pa
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     out = os.path.join(folder, "t.csv")
        ...     print(write_csv(pa.table({"a": [1, None], "b": ["x", "y,z"]}), out).bytes_written)
        ...     print(repr(open(out).read()))
        15
        'a,b\\n1,x\\n,"y,z"\\n'
    """
    dialect = _dialect(sep, quotechar, na_rep, line_terminator, header)
    if (isinstance(batch_rows, bool) or not isinstance(batch_rows, int)
            or not 1 <= batch_rows <= formatting.MAX_BATCH_ROWS):
        raise ValueError(f"batch_rows must be an int in [1, {formatting.MAX_BATCH_ROWS}], got {batch_rows!r}")
    if n_threads is None:
        n_threads = max(1, min(4, os.cpu_count() or 1))
    if isinstance(n_threads, bool) or not isinstance(n_threads, int) or n_threads < 1:
        raise ValueError(f"n_threads must be a positive int, got {n_threads!r}")
    table = _as_table(table)
    plans = _plans(table.schema, dialect.na_rep)  # unsupported types fail before any file is touched
    encoder = _Encoder(table.schema, plans, dialect)
    batches = _encoded(table, encoder, batch_rows)
    if device is not None and not hasattr(device, "engine"):
        raise TypeError(f"device must have an ndp_core.Engine as .engine (or None, to format on the host); "
                        f"got {type(device).__name__}")
    on_device = device is not None and device.engine is not None
    is_file = hasattr(path, "write")
    if is_file and on_device:
        raise TypeError("the device path writes a file by name: pass a path, not a file object")
    target = None if is_file else os.fspath(path)
    if target is not None and not isinstance(target, str):
        raise TypeError(f"path must be a str path, a PathLike or a binary file object, got {path!r}")
    try:
        if on_device:
            total, n_batches, retries, counters = _write_device(table, batches, target, device)
        elif is_file:
            total, n_batches, retries, counters = _write_host(table, batches, path, n_threads)
        else:
            with open(target, "wb") as sink:
                total, n_batches, retries, counters = _write_host(table, batches, sink, n_threads)
    except BaseException:
        if target is not None and os.path.exists(target):
            os.unlink(target)  # no half-written CSV left behind to be mistaken for a whole one
        raise
    return CsvWriteResult(
        path=target, rows=table.num_rows, columns=table.num_columns, bytes_written=total,
        batches=n_batches, retries=retries, device=on_device,
        counters=formatting.WRITER_COUNTERS.values(counters),
    )
