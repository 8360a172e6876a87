"""Streaming reads handed to users: a ``pyarrow.RecordBatchReader``, and pandas-style chunks.

Both wrap the same stream: a generator that yields the schema, then record
batches (:meth:`arrow_bridge.reader.CsvReader.stream`), and owns the source
and the worker threads until it is exhausted or closed.

>>> import io
>>> import pyarrow as pa
>>> def stream():
...     schema = pa.schema([("a", pa.int64())])
...     yield schema
...     yield pa.record_batch([pa.array([1, 2, 3])], schema=schema)
>>> with DataFrameChunks(stream(), chunksize=2, to_frame=pa.Table.to_pandas) as chunks:
...     [chunk["a"].tolist() for chunk in chunks]
[[1, 2], [3]]
"""
from __future__ import annotations

import sys
import threading
import warnings
from typing import TYPE_CHECKING, Any, Callable, Iterator, NamedTuple, Optional, Union

import pyarrow as pa

from arrow_bridge.column_names import ImplicitColumns
from arrow_bridge.errors import CsvBadLineWarning, CsvParseError, FirstBlockTypeError
from arrow_bridge.python_ints import AS_WRITTEN_KEY, named
from ndp_core.engine import raise_keyboard_interrupt_after

if TYPE_CHECKING:
    import pandas as pd


class TextChunks(NamedTuple):
    """A stream's first item where each chunk takes its own types (``chunk_typed_columns``
    set: pandas' chunks): the schema of its batches, which come unfinished (those
    columns as text), and ``finish``, which types a chunk (a Table of such batches)
    from its own values."""

    schema: pa.Schema
    finish: Callable[[pa.Table], pa.Table]


Stream = Iterator[Union[pa.Schema, TextChunks, pa.RecordBatch]]  # the schema (or TextChunks) first, then batches


def record_batch_reader(stream: Stream) -> pa.RecordBatchReader:
    """A ``pyarrow.RecordBatchReader`` over ``stream`` (its schema taken now).

    ``RecordBatchReader.from_batches`` alone lets go of its iterator only when
    the reader is garbage-collected (its ``close()`` does nothing), so the
    reader handed out imports that one through the Arrow C stream interface:
    ``close()`` (or leaving a ``with`` block) then releases the stream, which
    closes the generator: worker threads stop, the source closes. The price:
    an exception raised while iterating reaches the caller as
    ``pyarrow.ArrowInvalid`` (a ``ValueError``, as ``pyarrow.csv.open_csv``
    raises) carrying the original message; Ctrl-C is kept apart
    (:func:`interrupts_reach_the_caller`).

    >>> schema = pa.schema([("a", pa.int64())])
    >>> reader = record_batch_reader(iter([schema, pa.record_batch([pa.array([1])], schema=schema)]))
    >>> reader.read_all().num_rows
    1
    """
    schema = next(stream)
    if isinstance(schema, TextChunks):  # batches of text to be typed per chunk: no one schema to hand over
        stream.close()
        raise TypeError("chunk_typed_columns is read_pandas' (its chunks take their own types); open_csv's "
                        "batches share one schema")
    batches = interrupts_reach_the_caller(stream)
    reader = pa.RecordBatchReader.from_batches(schema, batches)
    if any("\x00" in name for name in schema.names):  # the C interface's names end at a NUL: pyarrow's reader
        return reader  # (its close() lets go of the stream only when garbage-collected)
    return pa.RecordBatchReader.from_stream(reader)


def interrupts_reach_the_caller(stream: Stream) -> Iterator[pa.RecordBatch]:
    """``stream``'s batches, for pyarrow to pull; Ctrl-C stays a KeyboardInterrupt.

    pyarrow would turn a KeyboardInterrupt met while the stream waits for a
    batch into an ``ArrowInvalid``, which ``except KeyboardInterrupt`` misses.
    Here it closes the stream (its threads stop, its source closes, as the
    exception leaves it) and the batches end; the caller gets the
    KeyboardInterrupt back as soon as the pyarrow call that asked for a batch
    returns (:func:`ndp_core.engine.raise_keyboard_interrupt_after`): a
    ``read_all()`` raises it instead of returning, a ``for`` loop over the
    reader ends and it comes at the next call.

    >>> def interrupted():
    ...     yield pa.record_batch([pa.array([1])], names=["a"])
    ...     raise KeyboardInterrupt
    >>> schema = pa.schema([("a", pa.int64())])
    >>> batches = pa.RecordBatchReader.from_batches(schema, interrupts_reach_the_caller(interrupted()))
    >>> reader = pa.RecordBatchReader.from_stream(batches)
    >>> try:
    ...     batches = reader.read_all()
    ... except KeyboardInterrupt:
    ...     print("KeyboardInterrupt")
    KeyboardInterrupt
    """
    try:
        yield from stream
    except KeyboardInterrupt:
        if threading.current_thread() is not threading.main_thread():
            raise  # raised by hand: only the main thread gets Ctrl-C
        raise_keyboard_interrupt_after(sys._getframe())


class DataFrameChunks:
    """pandas' ``TextFileReader`` over a stream: ``get_chunk(n)``, ``read(n)``,
    iteration (``chunksize`` rows a frame, the last shorter), ``close()`` and
    ``with``. Frames keep counting the index (rows 0..n-1, then n..2n-1, ...) as
    pandas' chunks do, unless not ``numbered`` (``to_frame`` gave them an index of
    their own); ``to_frame`` turns each chunk's Table into a DataFrame, after the
    stream's :class:`TextChunks` typed it, where it began with one.
    At most ``n`` rows plus one batch are held.

    pandas types each chunk by its own values; the stream, by its first block.
    Where a later value does not fit a column's first-block type
    (:class:`~arrow_bridge.errors.FirstBlockTypeError`), ``restart`` (given
    the columns to type per chunk, the stream's ``chunk_typed_columns``)
    opens the stream again with that column as text, and the rows already
    handed out are skipped: the chunk holding the value, and every later
    one, take that column's type from their own values, as in pandas.
    Without ``restart`` (a source that cannot be read twice) the error stands.
    ``empty_frame``: whether an input without rows gives one empty frame (as pandas'
    does, but for ``nrows=0``). Where a value does not parse as the dtype asked of its column, ``fall_back``
    (given the error) says whether pandas falls back there, and if so has changed
    what ``restart`` reads: the column is then typed per chunk the same way.
    """

    def __init__(self, stream: Stream, chunksize: Optional[int], to_frame: Callable[[pa.Table], "pd.DataFrame"],
                 numbered: bool = True, restart: Optional[Callable[[tuple[str, ...]], Stream]] = None,
                 fall_back: Callable[[CsvParseError], bool] = lambda error: False, empty_frame: bool = True):
        if chunksize is not None and (isinstance(chunksize, bool) or not isinstance(chunksize, int)
                                      or chunksize < 1):
            raise ValueError(f"'chunksize' must be an integer >=1, got {chunksize!r}")
        self.chunksize = chunksize
        self._stream, self._to_frame, self._restart, self._fall_back = stream, to_frame, restart, fall_back
        self._chunk_typed: tuple[str, ...] = ()
        self._skip = 0  # rows of a reopened stream already handed out
        self._batches = 0  # batches the stream gave so far
        self._warned = 0  # batches of a reopened stream whose warnings the streams before gave
        self._warned_most = 0  # the most batches any stream before gave
        self._begin(self._head(stream))
        self._numbered = numbered and not ImplicitColumns.of(self.schema).index  # pandas' implicit index is theirs
        self._held: list[pa.RecordBatch] = []
        self._held_rows = 0
        self._rows_out = 0  # rows returned so far: the next frame's first index
        self._frames = 0 if empty_frame else 1  # (pandas gives no frame at all for nrows=0)
        self._exhausted = False

    def _begin(self, first: Union[pa.Schema, TextChunks]) -> None:
        self.schema: pa.Schema = first.schema if isinstance(first, TextChunks) else first
        self._finish = first.finish if isinstance(first, TextChunks) else None

    def _next_batch(self) -> Optional[pa.RecordBatch]:
        """The stream's next batch (None at its end), read again with a column as
        text where a value broke that column's first-block type."""
        while True:
            try:
                with warnings.catch_warnings():
                    if self._warned:  # the stream reopened: those batches' bad lines were reported once
                        self._warned -= 1
                        warnings.simplefilter("ignore", CsvBadLineWarning)
                    batch = next(self._stream, None)
                self._batches += batch is not None
            except CsvParseError as err:
                if not self._recoverable(err):
                    raise
                self._reopen(err.column)
                continue
            if batch is None or not self._skip:
                return batch
            if batch.num_rows > self._skip:
                batch, self._skip = batch.slice(self._skip), 0
                return batch
            self._skip -= batch.num_rows

    def _recoverable(self, err: CsvParseError) -> bool:
        """Whether the stream goes on past ``err`` with its column typed per chunk: a value
        that broke the type the first block inferred, or one that the dtype asked of the
        column refused where pandas falls back (``fall_back``)."""
        if self._restart is None or err.column is None or err.column in self._chunk_typed:
            return False
        return isinstance(err, FirstBlockTypeError) or self._fall_back(err)

    def _head(self, stream: Stream) -> Union[pa.Schema, TextChunks]:
        """``stream``'s first item, the stream reopened where its first block says so (:meth:`_recoverable`)."""
        while True:
            try:
                return next(stream)
            except CsvParseError as err:
                if not self._recoverable(err):
                    raise
                column = err.column
            stream = self._reopened(column)

    def _reopened(self, *columns: str) -> Stream:
        """The stream again from the start, ``columns`` typed per chunk too."""
        self._stream.close()
        self._chunk_typed += columns
        self._stream = self._restart(self._chunk_typed)
        return self._stream

    def _reopen(self, *columns: str) -> None:
        """The stream again from the start, ``columns`` typed per chunk: the rows
        handed out are skipped, those held are read again."""
        with warnings.catch_warnings():  # its first block's bad lines were reported by the stream before
            warnings.simplefilter("ignore", CsvBadLineWarning)
            self._begin(self._head(self._reopened(*columns)))
        self._held, self._held_rows, self._skip, self._exhausted = [], 0, self._rows_out, False
        self._warned_most = max(self._warned_most, self._batches)
        self._warned, self._batches = self._warned_most, 0

    def get_chunk(self, size: Optional[int] = None) -> "pd.DataFrame":
        """The next ``size`` rows (default ``chunksize``; with neither, all that
        remain) as a DataFrame; ``StopIteration`` when none remain (an input
        without rows gives one empty frame first, as pandas does)."""
        return self._take(self.chunksize if size is None else size)

    def read(self, nrows: Optional[int] = None) -> "pd.DataFrame":
        """The next ``nrows`` rows, all that remain by default (pandas' ``read``)."""
        return self._take(nrows)

    def _take(self, size: Optional[int]) -> "pd.DataFrame":
        if size is not None and size < 0:
            raise ValueError(f"size must be >= 0, got {size}")
        while not self._exhausted and (size is None or self._held_rows < size):
            batch = self._next_batch()
            if batch is None:
                self._exhausted = True
            elif batch.num_rows:
                self._held.append(batch)
                self._held_rows += batch.num_rows
        if not self._held_rows and self._exhausted and self._frames:
            self.close()
            raise StopIteration
        table = pa.Table.from_batches(self._held, schema=self.schema)
        take = table.num_rows if size is None else min(size, table.num_rows)
        rest = table.slice(take)
        self._held, self._held_rows = rest.to_batches(), rest.num_rows
        chunk = table.slice(0, take)
        try:
            chunk = self._finish(chunk) if self._finish is not None else chunk
        except CsvParseError as err:  # a column's finish met the value (its own na_values...)
            if not self._recoverable(err):
                raise
            self._reopen(err.column)
            return self._take(size)
        as_written = [name for name in named(chunk.schema, AS_WRITTEN_KEY) if name not in self._chunk_typed]
        if as_written and self._restart is not None:  # pandas keeps their text as written: read it raw
            self._reopen(*as_written)
            return self._take(size)
        frame = self._to_frame(chunk)
        if self._numbered:
            frame.index = _range_index(self._rows_out, take)
        self._rows_out += take
        self._frames += 1
        return frame

    def close(self) -> None:
        """Stops reading: the stream (threads, source) is closed; safe to call twice."""
        close = getattr(self._stream, "close", None)
        if close is not None:
            close()
        self._held, self._held_rows, self._exhausted = [], 0, True

    def __iter__(self) -> "DataFrameChunks":
        return self

    def __next__(self) -> "pd.DataFrame":
        return self.get_chunk()

    def __enter__(self) -> "DataFrameChunks":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _range_index(start: int, length: int) -> Any:
    import pandas as pd

    return pd.RangeIndex(start, start + length)
