"""The reader's error: where in the file, and what went wrong."""
from __future__ import annotations


class CsvParseError(ValueError):
    """Malformed CSV input, located precisely.

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
        where = f"column {column!r}: " if column is not None else ""
        super().__init__(f"{path}:{line}: {where}{reason} (byte offset {byte_offset})")

    def __reduce__(self):  # keep the fields across processes (Dask workers)
        if self.line is None and self.reason is None:
            return (type(self), (str(self),))
        return (type(self), (self.path, self.line, self.column, self.byte_offset, self.reason))


class CsvBadLineWarning(UserWarning):
    """A malformed row skipped under ``on_bad_lines="warn"``."""
