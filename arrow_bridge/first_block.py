"""Types of a streaming read: the first block decides them, as in ``pyarrow.csv.open_csv``.

A whole-file read (:func:`arrow_bridge.read_csv`) settles each inferred
column's type over every span (:mod:`arrow_bridge.type_settling`). A stream
cannot: its first batch leaves before the last span is read. So the types the
first span with rows infers become explicit for the rest of the read
(:func:`fix_types`), and a later value that does not fit is an error naming
the file, line, column and value, with the remedy (:class:`FixedTypeErrors`).

>>> import io
>>> from arrow_bridge.api import open_csv
>>> reader = open_csv(io.BytesIO(b"a\\n1\\n2\\n2.5\\n"), block_size=4)
>>> reader.schema.field("a").type
DataType(int64)
>>> try:
...     reader.read_all()
... except ValueError as err:  # pyarrow.ArrowInvalid, as pyarrow's open_csv raises
...     print(str(err).splitlines()[0].split(". Detail")[0])
Invalid: <BytesIO>:4: column 'a': cannot convert '2.5' to int64, the type the first block inferred (give the column its type: dtype={'a': ...}) (byte offset 6)
"""
from __future__ import annotations

import dataclasses
from types import MappingProxyType
from typing import Mapping, Sequence

import pyarrow as pa

from arrow_bridge.column_finish import plan_column
from arrow_bridge.converters import converter_for
from arrow_bridge.errors import CsvParseError, FirstBlockTypeError
from arrow_bridge.executors.base import SpanResult
from arrow_bridge.inference import INFERENCE_LADDER
from arrow_bridge.read_plan import ColumnPlan, ReadPlan
from arrow_bridge.span_errors import SpanErrors


def fix_types(read: ReadPlan, rungs: Sequence[int], timestamps: Mapping[int, int] = MappingProxyType({})) -> ReadPlan:
    """``read`` with every column whose type was open made explicit: an inferred
    column at its rung in ``rungs`` (a checked span's), a missing one as null;
    one in ``timestamps`` (``{column: rung}``) as the timestamps that custom
    parsers read from its text (:func:`~arrow_bridge.type_settling.settled_timestamps`).

    >>> import io
    >>> from arrow_bridge.options import CsvOptions
    >>> from arrow_bridge.source import open_source
    >>> read = ReadPlan.build(open_source(io.BytesIO(b"")), CsvOptions(), ["a", "b"])
    >>> [c.type for c in fix_types(read, [1, 11]).columns]
    [DataType(int64), DataType(string)]
    """
    columns = [_parsed_timestamps(c, timestamps[j], read) if j in timestamps else dataclasses.replace(
        c, type=(INFERENCE_LADDER[rungs[j]] if c.index >= 0 else pa.null()) if c.type is None else c.type,
        first_block=c.inferred,  # converted as inference converts (pandas: a bool takes no 1 or 0)
        # its type, too, from the first block (unless each chunk takes its own: CsvReader.stream)
        finish=c.finish.for_stream() if c.finish is not None and read.opts.chunk_typed_columns is None
        else c.finish)
        for j, c in enumerate(read.columns)]
    converters = [converter_for(c.type, c.kernel_rules(read.rules), inferring=c.converted_as_inferred) for c in columns]
    return dataclasses.replace(read, columns=columns, converters=converters)


def _parsed_timestamps(column: ColumnPlan, rung: int, read: ReadPlan) -> ColumnPlan:
    """An inferred column typed as the timestamps at ``rung`` that its custom parsers read:
    its text, with a timestamp's null rules, parsed by them (a typed column's plan)."""
    kernel, finish = plan_column(INFERENCE_LADDER[rung], True, read.opts, read.rules)
    return dataclasses.replace(column, type=kernel, finish=finish, first_block=True)


class FixedTypeErrors(SpanErrors):
    """:class:`SpanErrors` for the spans after the first block: a value that
    does not convert to the type the first block inferred for its column says
    so, and how to read the column wider.

    ``inferred``: the output columns (positions) whose type the first block gave.
    """

    def __init__(self, read: ReadPlan, inferred: Sequence[int]):
        super().__init__(read)
        self.inferred = frozenset(inferred)

    def check(self, result: SpanResult, line: int) -> None:
        """As :meth:`SpanErrors.check`, with the first block named in a type break."""
        try:
            super().check(result, line)
        except CsvParseError as err:
            if result.bad_value is None or result.bad_value[1] not in self.inferred:
                raise
            reason = f"{err.reason}, the type the first block inferred (give the column its type: " \
                     f"dtype={{{err.column!r}: ...}})"
            raise FirstBlockTypeError(err.path, err.line, err.column, err.byte_offset, reason) from None
