"""The span stages: what a read does to each checked span after its parse, where the span ran.

A read with ``filters=`` keeps only the span's matching rows
(:mod:`arrow_bridge.filters`); an aggregate read (``aggregate_csv``) then
reduces them to a partial state per group (:mod:`arrow_bridge.aggregates`),
which a device sends instead of rows. A span whose types the whole read
settles differently is parsed again and staged again
(:meth:`arrow_bridge.executors.host.HostExecutor.reconvert`), so the stages
see the types the Table has.

>>> import io, arrow_bridge
>>> arrow_bridge.read_csv(io.BytesIO(b"a,b\\n1,x\\n2,y\\n"), filters=[("a", ">", 1)]).to_pydict()
{'a': [2], 'b': ['y']}
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from arrow_bridge.executors.base import SpanResult
from arrow_bridge.executors.device_buffers import object_bytes
from arrow_bridge.kernels.status import NEEDS_MORE, OK
from arrow_bridge.read_plan import ReadPlan

if TYPE_CHECKING:
    from arrow_bridge.aggregates import GroupedQuery


def run_span_stages(result: SpanResult, plan: ReadPlan) -> None:
    """A parsed span through the read's span stages, once: its rows filtered
    (:func:`filter_span`), then reduced to a partial aggregate
    (:func:`aggregate_span`). A span that failed is left for its check to raise."""
    if result.staged or not plan.stages_spans or result.status not in (OK, NEEDS_MORE) or \
            result.bad_value is not None:
        return
    result.staged, result.rows_read = True, result.nrows
    if plan.opts.row_filter is not None:
        filter_span(result, plan)
    if plan.opts.grouped_query is not None:
        aggregate_span(result, plan, plan.opts.grouped_query)


def filter_span(result: SpanResult, read: ReadPlan) -> None:
    """Keeps the rows of a checked span that the read's filter selects. A
    device's span then counts only its kept rows' bytes as crossing the link.

    >>> import io
    >>> from arrow_bridge import read_csv
    >>> read_csv(io.BytesIO(b"a,b\\n1,x\\n2,y\\n3,z\\n"), usecols=["b"], filters=[("a", "!=", 2)]).to_pydict()
    {'b': ['x', 'z']}
    """
    if not result.nrows:
        return
    used = {read.columns[j].name: _values(result, read, j) for j in read.filter_columns}
    kept = read.opts.row_filter.selection(used, result.nrows)
    if kept is None:
        return
    result.columns = [None if array is None else array.take(kept) for array in result.columns]
    result.nrows = len(kept)
    if result.object_bytes:  # what the device sends: the kept rows
        result.object_bytes = object_bytes(result.columns)


def _values(result: SpanResult, read: ReadPlan, j: int) -> pa.Array:
    array = result.columns[j]
    return array if array is not None else pa.nulls(result.nrows, read.columns[j].type or pa.null())


def aggregate_span(result: SpanResult, read: ReadPlan, query: "GroupedQuery") -> None:
    """Replaces a (filtered) span's columns by its partial state (``result.partial``):
    what a device sends instead of the rows."""
    table = pa.table({c.name: _values(result, read, j) for j, c in enumerate(read.columns)})
    result.partial = query.partial(table)  # it reads the columns it needs
    result.columns = [None] * len(result.columns)
    if result.object_bytes:
        result.object_bytes = result.partial.nbytes
