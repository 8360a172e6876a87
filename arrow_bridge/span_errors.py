"""Error text for malformed input: file, line, column and byte offset of what went wrong.

The driver checks each span's result in file order (so line numbers never
depend on thread timing) and this unit turns a result's status, bad value or
bad rows into a :class:`~arrow_bridge.errors.CsvParseError`, a warning, or a
question to the user's ``on_bad_lines`` callable.

>>> import io
>>> import arrow_bridge
>>> try:
...     arrow_bridge.read_csv(io.BytesIO(b"a,b\\n1,2\\n3\\n"))
... except arrow_bridge.CsvParseError as err:
...     print(err.line, err.column)
3 b
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from arrow_bridge.errors import CsvBadLineWarning, CsvParseError, warn_at_caller
from arrow_bridge.executors.base import SpanResult
from arrow_bridge.kernels.status import BAD_ROW, OUT_OF_SPACE, UNTERMINATED_QUOTE
from arrow_bridge.kernels.tokenizer import count_line_breaks, split_record
from arrow_bridge.read_plan import ReadPlan
from arrow_bridge.spans import Span


class SpanErrors:
    """Locates and words the errors of one read's spans."""

    def __init__(self, read: ReadPlan):
        self.read = read

    def check(self, result: SpanResult, line: int) -> None:
        """Applies ``on_bad_lines`` to the span's bad rows before its first
        error, then raises that error (if any), then the rest: in file order,
        as a reader going line by line meets them; ``line`` is the file line
        the span starts on."""
        error, at = self._first_error(result, line)
        if result.bad_rows is not None:
            self._report_bad_rows(result, line, before=at)
        if error is not None:
            raise error

    def _first_error(self, result: SpanResult, line: int) -> tuple[Optional[CsvParseError], Optional[int]]:
        """The span's error and its offset in the span, or ``(None, None)``."""
        span = result.span
        if result.bad_value is not None:  # in a complete record: before any tokenizer error
            _, j, offset = result.bad_value
            column = self.read.columns[j]
            value = self._field_text(span.buf, offset)
            return self.error(span, offset, line, column.name, f"cannot convert {value!r} to {column.type}"), offset
        if result.status == BAD_ROW:
            return self.field_count_error(span, result.error_at, line)[0], result.error_at
        if result.status == UNTERMINATED_QUOTE:
            return self.error(span, result.error_at, line, None, "unterminated quoted field"), result.error_at
        return None, None

    def _report_bad_rows(self, result: SpanResult, line: int, before: Optional[int] = None) -> None:
        """Warns about (or asks the handler for) each bad row, those at offsets below ``before`` only if given."""
        policy = self.read.opts.on_bad_lines
        if policy == "skip":
            return
        for offset, nfields in result.bad_rows:
            if before is not None and offset >= before:
                break
            err, text = self.field_count_error(result.span, int(offset), line)
            if callable(policy):
                if _invalid_row_verdict(policy, self.read.ncols, int(nfields), err.line, text) != "skip":
                    raise err
            else:
                self.read.source.relocate(err)  # the file's offset, where line keywords or transcoding moved it
                warn_at_caller(f"skipping bad line: {err}", CsvBadLineWarning)

    def field_count_error(self, span: Span, offset: int, line: int) -> tuple[CsvParseError, str]:
        """The error for the record at ``offset`` and the record's text."""
        buf, names = span.buf, self.read.names
        starts = np.empty(len(names) + 64, dtype=np.int64)
        ends, flags = np.empty_like(starts), np.empty(len(starts), dtype=np.uint8)
        status, nfields, end = split_record(buf, offset, len(buf), True, *self.read.dialect.scan_args,
                                            starts, ends, flags)
        got = f"{nfields}" if status != OUT_OF_SPACE else f"more than {len(starts)}"
        text = bytes(buf[offset:end]).rstrip(b"\r\n").decode("utf-8", "replace")
        shown = text if len(text) <= 100 else text[:96] + " ..."
        missing = names[nfields] if nfields < len(names) else None
        err = self.error(span, offset, line, missing, f"expected {len(names)} fields, got {got}: {shown!r}")
        return err, text

    def error(self, span: Span, offset: int, line: int, column: Optional[str], reason: str) -> CsvParseError:
        """A parse error at ``offset`` of ``span`` (which starts on ``line``)."""
        source = self.read.source
        line += count_line_breaks(span.buf, 0, offset) + source.lines_before_origin()
        return CsvParseError(source.name, line, column, source.origin + span.offset + offset, reason)

    def _field_text(self, buf: np.ndarray, offset: int) -> str:
        starts = np.empty(1, np.int64)
        ends, flags = np.empty(1, np.int64), np.empty(1, np.uint8)
        split_record(buf, offset, len(buf), True, *self.read.dialect.scan_args, starts, ends, flags)
        return bytes(buf[starts[0]:ends[0]]).decode("utf-8", "replace")


def _invalid_row_verdict(handler, expected: int, actual: int, line: int, text: str) -> str:
    """Asks a pyarrow-style ``invalid_row_handler``: it gets a
    ``pyarrow.csv.InvalidRow`` and answers ``"skip"`` or ``"error"``."""
    from pyarrow.csv import InvalidRow

    return handler(InvalidRow(expected, actual, line, text))
