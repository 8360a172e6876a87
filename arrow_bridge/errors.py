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
    """

    def __init__(self, path: str, line: int, column: str | None, byte_offset: int, reason: str):
        self.path = path
        self.line = line
        self.column = column
        self.byte_offset = byte_offset
        self.reason = reason
        where = f"column {column!r}: " if column is not None else ""
        super().__init__(f"{path}:{line}: {where}{reason} (byte offset {byte_offset})")

    def __reduce__(self):  # keep the fields across processes (Dask workers)
        return (type(self), (self.path, self.line, self.column, self.byte_offset, self.reason))


class CsvBadLineWarning(UserWarning):
    """A malformed row skipped under ``on_bad_lines="warn"``."""
