"""Arrow assembly: checked span results become one ``pyarrow.Table``, a chunk per span.

>>> import pyarrow as pa
>>> from arrow_bridge.read_plan import ColumnPlan
>>> assemble([], [ColumnPlan("a", 0, pa.int32())]).schema
a: int32
"""
from __future__ import annotations

from typing import Optional, Sequence

import pyarrow as pa

from arrow_bridge.executors.base import SpanResult
from arrow_bridge.inference import INFERENCE_LADDER
from arrow_bridge.read_plan import ColumnPlan


def assemble(results: Sequence[SpanResult], columns: Sequence[ColumnPlan], nrows: Optional[int] = None) -> pa.Table:
    """The table of ``results`` (types settled) with ``columns``, cut at ``nrows``."""
    total = sum(r.nrows for r in results)
    arrays = []
    for j, column in enumerate(columns):
        if column.index < 0:
            arrays.append(pa.chunked_array([pa.nulls(total, column.type or pa.null())]))
            continue
        type_ = column.type or (INFERENCE_LADDER[results[0].rungs[j]] if results else pa.null())
        arrays.append(pa.chunked_array([r.columns[j] for r in results], type=type_))
    table = pa.Table.from_arrays(arrays, names=[c.name for c in columns])
    if nrows is not None and table.num_rows > nrows:
        table = table.slice(0, nrows)
    return table
