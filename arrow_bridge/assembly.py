"""Arrow assembly: checked span results become one ``pyarrow.Table``, a chunk per span.

Assembly copies no data: a column is a ``ChunkedArray`` of the spans' own
arrays (all of the column's type: ``pa.chunked_array`` wraps them, it never
casts), and ``Table.from_arrays`` and ``slice`` wrap buffers too. It
allocates only the columns the file lacks (``pa.nulls``):
:func:`assembly_bytes` says how much, for a read's memory budget.

>>> import pyarrow as pa
>>> from arrow_bridge.read_plan import ColumnPlan
>>> assemble([], [ColumnPlan("a", 0, pa.int32())]).schema
a: int32
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence

import pyarrow as pa

from arrow_bridge.column_finish import finish_table
from arrow_bridge.executors.base import SpanResult
from arrow_bridge.inference import INFERENCE_LADDER
from arrow_bridge.read_plan import ColumnPlan

if TYPE_CHECKING:
    from arrow_bridge.filters import RowFilter


def assembly_bytes(results: Sequence[SpanResult], columns: Sequence[ColumnPlan]) -> int:
    """Bytes :func:`assemble` allocates beyond the results' buffers: a
    null column's values for each column the file lacks.

    >>> assembly_bytes([SpanResult(None, nrows=1000)], [ColumnPlan("a", -1, pa.int64()), ColumnPlan("b", 0, None)])
    8000
    """
    total = sum(r.nrows for r in results)
    extra = 0
    for column in columns:
        if column.index < 0 and column.type is not None and column.type != pa.null():
            try:
                bits = column.type.bit_width
            except ValueError:  # variable width: the offsets
                bits = 64 if pa.types.is_large_string(column.type) or pa.types.is_large_binary(column.type) else 32
            extra += (total * bits + 7) // 8
    return extra


def settled_type(results: Sequence[SpanResult], j: int, column: ColumnPlan) -> pa.DataType:
    """Output column ``j``'s type once ``results``' types are settled (the kernels' type,
    before any finish).

    >>> settled_type([], 0, ColumnPlan("a", 0, None))
    DataType(null)
    """
    return column.type or (INFERENCE_LADDER[results[0].rungs[j]] if results else pa.null())


def assemble(results: Sequence[SpanResult], columns: Sequence[ColumnPlan], nrows: Optional[int] = None,
             table_filter: Optional["RowFilter"] = None) -> pa.Table:
    """The table of ``results`` (types settled) with ``columns``, cut at
    ``nrows``, finished, filtered by ``table_filter`` (a filter that could not
    run on the spans), without the columns read for the filter alone."""
    total = sum(r.nrows for r in results)
    arrays = []
    for j, column in enumerate(columns):
        if column.index < 0:
            arrays.append(pa.chunked_array([pa.nulls(total, column.type or pa.null())]))
            continue
        type_ = settled_type(results, j, column)
        arrays.append(pa.chunked_array([r.columns[j] for r in results], type=type_))
    table = pa.Table.from_arrays(arrays, names=[c.name for c in columns])
    if nrows is not None and table.num_rows > nrows:
        table = table.slice(0, nrows)
    table = finish_table(table, columns)  # after the cut: value-dependent types see only the rows returned
    if table_filter is not None:
        table = table_filter.filter_table(table)
    if any(column.hidden for column in columns):
        table = table.select([j for j, column in enumerate(columns) if not column.hidden])
    return table
