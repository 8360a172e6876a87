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
from typing import TYPE_CHECKING, Any, Callable, Iterator, Optional, Union

import pyarrow as pa

from arrow_bridge.column_names import index_levels
from ndp_core.engine import raise_keyboard_interrupt_after

if TYPE_CHECKING:
    import pandas as pd

Stream = Iterator[Union[pa.Schema, pa.RecordBatch]]  # the schema first, then batches


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
    batches = interrupts_reach_the_caller(stream)
    return pa.RecordBatchReader.from_stream(pa.RecordBatchReader.from_batches(schema, batches))


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
    their own); ``to_frame`` turns each chunk's Table into a DataFrame.
    At most ``n`` rows plus one batch are held.
    """

    def __init__(self, stream: Stream, chunksize: Optional[int], to_frame: Callable[[pa.Table], "pd.DataFrame"],
                 numbered: bool = True):
        if chunksize is not None and (isinstance(chunksize, bool) or not isinstance(chunksize, int)
                                      or chunksize < 1):
            raise ValueError(f"'chunksize' must be an integer >=1, got {chunksize!r}")
        self.chunksize = chunksize
        self._stream, self._to_frame, self._numbered = stream, to_frame, numbered
        self.schema: pa.Schema = next(stream)
        self._numbered = numbered and not index_levels(self.schema.names)  # pandas' implicit index is theirs
        self._held: list[pa.RecordBatch] = []
        self._held_rows = 0
        self._rows_out = 0  # rows returned so far: the next frame's first index
        self._frames = 0
        self._exhausted = False

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
            batch = next(self._stream, None)
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
        frame = self._to_frame(table.slice(0, take))
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
