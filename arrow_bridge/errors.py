"""The reader's errors: where in the file and what went wrong, a read over its memory budget; warnings
that point at the caller; and Ctrl-C held back to points where it leaves no lock behind."""
from __future__ import annotations

import os
import sys
import threading
import warnings

import pyarrow as pa

_REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The packages whose frames a warning skips: arrow_bridge, and those calling it for the user.
_PACKAGE_DIRS = tuple(os.path.join(_REPOSITORY, name) + os.sep for name in ("arrow_bridge", "dask_plugin", "cuda_p2p"))


def warn_at_caller(message: str, category: type[Warning] = UserWarning) -> None:
    """Warns with the ``stacklevel`` that points at the first caller outside
    ``arrow_bridge``, ``dask_plugin`` and ``cuda_p2p`` (the user's
    ``read_csv`` line, or Dask's), however deep
    the reader's own calls go.

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as seen:
    ...     warnings.simplefilter("always")
    ...     warn_at_caller("careful")
    >>> str(seen[0].message)
    'careful'
    """
    frame, level = sys._getframe(1), 2  # stacklevel 2 is our caller, frame 1 here
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIRS):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)




class CsvParseError(pa.ArrowInvalid):
    """Malformed CSV input, located precisely. A ``pyarrow.ArrowInvalid``
    (so a ``ValueError``), as ``pyarrow.csv`` raises: code that catches
    pyarrow's error keeps working.

    Attributes: ``path`` (file name or description of the source), ``line``
    (1-based physical line), ``column`` (name, or None when the problem is the
    field count), ``byte_offset`` (0-based, in the file) and ``reason``.

    >>> err = CsvParseError("x.csv", 3, "price", 57, "invalid float64 value 'abc'")
    >>> str(err)
    "x.csv:3: column 'price': invalid float64 value 'abc' (byte offset 57)"

    Built from one message (as Dask re-raises a backend's error,
    ``type(e)(message)``), it keeps the message; the location fields are None:

    >>> again = CsvParseError(str(err))
    >>> str(again) == str(err), again.line
    (True, None)
    """

    def __init__(self, path: str, line: int | None = None, column: str | None = None,
                 byte_offset: int | None = None, reason: str | None = None):
        self.path = path if line is not None else None
        self.line = line
        self.column = column
        self.byte_offset = byte_offset
        self.reason = reason
        if line is None and reason is None:  # a message only
            super().__init__(path)
            return
        super().__init__(self._text())

    def _text(self) -> str:
        where = f"column {self.column!r}: " if self.column is not None else ""
        return f"{self.path}:{self.line}: {where}{self.reason} (byte offset {self.byte_offset})"

    def move_to(self, byte_offset: int, note: str = "") -> None:
        """Re-anchors the error at ``byte_offset`` (in the file as given, where
        the reader parsed a transcoded copy), ``note`` added to the reason."""
        self.byte_offset, self.reason = byte_offset, self.reason + note
        self.args = (self._text(),)

    def __reduce__(self):  # keep the fields across processes (Dask workers)
        if self.line is None and self.reason is None:  # a message only (and the column it may name)
            return (type(self), (str(self),), {"column": self.column})
        return (type(self), (self.path, self.line, self.column, self.byte_offset, self.reason))


class EmptyCsvError(CsvParseError):
    """Nothing to read columns from: the input is empty, or holds only lines a
    read skips (blank lines, comments, ``skiprows``) where a header or a first
    record should be. ``read_pandas`` raises :class:`PandasEmptyCsvError`
    instead, which ``except pandas.errors.EmptyDataError`` catches too.

    >>> import io, arrow_bridge
    >>> arrow_bridge.read_csv(io.BytesIO(b""))
    Traceback (most recent call last):
    ...
    arrow_bridge.errors.EmptyCsvError: <BytesIO>:1: empty CSV file (byte offset 0)
    """


def __getattr__(name: str) -> type:
    # PandasEmptyCsvError derives from pandas' EmptyDataError: made on first use, so
    # that importing the reader does not import pandas (pickle finds it here too).
    if name != "PandasEmptyCsvError":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        import pandas as pd
    except ImportError:  # no pandas: no such class (hasattr says False)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r} without pandas") from None
    with _MAKING:  # once: two threads would make two classes
        if name not in globals():
            class PandasEmptyCsvError(EmptyCsvError, pd.errors.EmptyDataError):
                """:class:`EmptyCsvError` as ``read_pandas`` raises it: also pandas'
                ``EmptyDataError`` (``pandas.read_csv``'s "No columns to parse from file")."""

            PandasEmptyCsvError.__module__, PandasEmptyCsvError.__qualname__ = __name__, name
            globals()[name] = PandasEmptyCsvError
    return globals()[name]


_MAKING = threading.Lock()


class FirstBlockTypeError(CsvParseError):
    """A stream's value that does not fit the type its first block inferred for
    its column (``column``): ``read_pandas``' chunks then read that column as
    text, each chunk typed by its own values, as pandas types its chunks.

    >>> str(FirstBlockTypeError("x.csv", 9, "a", 80, "cannot convert 'x' to int64"))
    "x.csv:9: column 'a': cannot convert 'x' to int64 (byte offset 80)"
    """


class CsvDecodeError(CsvParseError, UnicodeDecodeError):
    """Bytes the file's encoding cannot decode (``encoding_errors="strict"``).

    A :class:`CsvParseError` located in the file as given (line, byte offset)
    and the ``UnicodeDecodeError`` pandas raises (``encoding``, ``object``: the
    bytes, ``start``/``end`` in them, ``reason``).

    >>> err = CsvDecodeError("x.csv", 2, 7, "cp1252", b"\\x81", "character maps to <undefined>")
    >>> print(err)
    x.csv:2: cannot decode b'\\x81' as cp1252: character maps to <undefined> (byte offset 7)
    >>> isinstance(err, UnicodeDecodeError), err.object, err.start, err.end
    (True, b'\\x81', 0, 1)
    >>> str(CsvDecodeError(str(err))) == str(err)  # a message only, as Dask re-raises
    True
    """

    def __init__(self, path: str, line: int | None = None, byte_offset: int | None = None,
                 encoding: str | None = None, bad: bytes = b"", reason: str | None = None):
        if line is None and reason is None:  # a message only
            UnicodeDecodeError.__init__(self, encoding or "unknown", bad, 0, len(bad), path)
            self.path = self.line = self.column = self.byte_offset = None
            self.message = path
            return
        UnicodeDecodeError.__init__(self, encoding, bad, 0, len(bad), reason)
        self.path, self.line, self.column, self.byte_offset = path, line, None, byte_offset
        self.message = f"{path}:{line}: cannot decode {bad!r} as {encoding}: {reason} (byte offset {byte_offset})"

    def __str__(self) -> str:
        return self.message

    def __reduce__(self):
        if self.line is None:
            return (type(self), (self.message,))
        return (type(self), (self.path, self.line, self.byte_offset, self.encoding, self.object, self.reason))


class MemoryLimitError(MemoryError):
    """A read that would go over its ``memory_limit``, stopped before it does.

    A ``MemoryError``. Attributes (bytes): ``limit``; ``held``, the parsed
    output kept so far (a whole read keeps every span's until it assembles
    the Table; a stream only the batch not yet handed out); ``in_flight``,
    the spans being parsed (their text, and their output as estimated from
    the densest span so far); ``needed``, what the next step would add; and
    ``path``, the source.

    >>> err = MemoryLimitError("x.csv", 64 << 20, 60 << 20, 3 << 20, 6 << 20)
    >>> print(err)
    x.csv: the read would exceed memory_limit=64.0 MiB: it holds 60.0 MiB of parsed output and 3.0 MiB \
of spans in flight, and the next span needs about 6.0 MiB more. Give a larger memory_limit, fewer \
columns (usecols), or stream the file (open_csv, dask_plugin.read_csv)
    >>> isinstance(err, MemoryError), err.limit
    (True, 67108864)
    """

    def __init__(self, path: str, limit: int, held: int = 0, in_flight: int = 0, needed: int = 0,
                 advice: str = "Give a larger memory_limit, fewer columns (usecols), or stream the file "
                               "(open_csv, dask_plugin.read_csv)", step: str = "the next span needs"):
        self.path, self.limit, self.held, self.in_flight, self.needed = path, limit, held, in_flight, needed
        self.advice, self.step = advice, step
        super().__init__(f"{path}: the read would exceed memory_limit={byte_size(limit)}: it holds "
                         f"{byte_size(held)} of parsed output and {byte_size(in_flight)} of spans in flight, "
                         f"and {step} about {byte_size(needed)} more. {advice}")

    def __reduce__(self):  # the fields, across processes (Dask workers)
        return (type(self), (self.path, self.limit, self.held, self.in_flight, self.needed, self.advice, self.step))


def byte_size(size: int) -> str:
    """A byte count for people (binary units).

    >>> byte_size(512), byte_size(1536), byte_size(3 << 20), byte_size(3 << 30)
    ('512 B', '1.5 KiB', '3.0 MiB', '3.0 GiB')
    """
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(size) >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} B"


class CsvBadLineWarning(UserWarning):
    """A malformed row skipped under ``on_bad_lines="warn"``."""


class MissingColumnsError(pa.ArrowKeyError, ValueError):
    """Selected columns the file does not have: pyarrow's ``ArrowKeyError`` (a
    ``KeyError``) as pyarrow raises for ``include_columns``, and a ``ValueError``
    as pandas raises for ``usecols``; the message speaks the keyword the caller used.

    >>> str(MissingColumnsError(["zzz"], "usecols"))
    "Usecols do not match columns, columns expected but not found: ['zzz']"
    >>> str(MissingColumnsError(["zzz"], "include_columns"))
    "Column 'zzz' in include_columns does not exist in CSV file"
    """

    def __init__(self, missing: list, keyword: str = "include_columns"):
        self.missing = list(missing)
        self.keyword = keyword
        if keyword == "usecols":
            message = f"Usecols do not match columns, columns expected but not found: {self.missing}"
        else:
            message = "; ".join(f"Column {name!r} in {keyword} does not exist in CSV file" for name in self.missing)
        super().__init__(message)

    def __str__(self) -> str:
        return str(self.args[0])

    def __reduce__(self):
        return (type(self), (self.missing, self.keyword))
