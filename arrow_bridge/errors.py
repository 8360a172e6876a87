"""The reader's error: where in the file, and what went wrong; and warnings that point at the caller."""
from __future__ import annotations

import os
import sys
import warnings

import pyarrow as pa

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def warn_at_caller(message: str, category: type[Warning] = UserWarning) -> None:
    """Warns with the ``stacklevel`` that points at the first caller outside
    ``arrow_bridge`` (the user's ``read_csv`` line, or Dask's), however deep
    the reader's own calls go.

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as seen:
    ...     warnings.simplefilter("always")
    ...     warn_at_caller("careful")
    >>> str(seen[0].message)
    'careful'
    """
    frame, level = sys._getframe(1), 2  # stacklevel 2 is our caller, frame 1 here
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
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
        if self.line is None and self.reason is None:
            return (type(self), (str(self),))
        return (type(self), (self.path, self.line, self.column, self.byte_offset, self.reason))


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


class CsvBadLineWarning(UserWarning):
    """A malformed row skipped under ``on_bad_lines="warn"``."""


class MissingColumnsError(KeyError, ValueError):
    """Selected columns the file does not have: a ``KeyError`` as pyarrow
    raises for ``include_columns``, and a ``ValueError`` as pandas raises for
    ``usecols``; the message speaks the keyword the caller used.

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
