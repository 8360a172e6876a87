"""The span stages: what a read does to each checked span after its parse, where the span ran.

A read with ``filters=`` keeps only the span's matching rows
(:mod:`arrow_bridge.filters`); an aggregate read (``aggregate_csv``) then
reduces them to a partial state per group (:mod:`arrow_bridge.aggregates`),
which a device sends instead of rows. A span whose types the whole read
settles differently is parsed again and staged again
(:meth:`arrow_bridge.executors.host.HostExecutor.reconvert`), so the stages
see the types the Table has.

The stages' work is counted (:data:`STAGE_COUNTERS`, :func:`stage_work`) beside
the parse's, so a device's timing model charges the cores that filter and
aggregate, as it charges the parse.

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
from ndp_core.counters import WorkCounters

if TYPE_CHECKING:
    from arrow_bridge.aggregates import GroupedQuery

#: The span stages' work counters, declared once; every device profile prices
#: them (``[cores.cycles]``, ``[host.cycles]``). ``filter_tests``: values the
#: filter compares (rows x :meth:`~arrow_bridge.filters.RowFilter.tests_per_row`);
#: ``values_kept``: values its selection copies (kept rows x columns, when it
#: drops any row); ``aggregate_updates``: partial-aggregate state updates (kept
#: rows x :attr:`~arrow_bridge.aggregates.GroupedQuery.updates_per_row`).
STAGE_COUNTERS = WorkCounters(("filter_tests", "values_kept", "aggregate_updates"))


#: What a stage raises when a column's type cannot take the filter or the aggregate
#: (FilterError is a pyarrow.ArrowInvalid; pyarrow's own errors where it evaluates).
STAGE_TYPE_ERRORS = (TypeError, ValueError, pa.ArrowException)


def run_span_stages(result: SpanResult, plan: ReadPlan, *, types_final: bool = True) -> None:
    """A parsed span through the read's span stages, once: its rows filtered
    (:func:`filter_span`), then reduced to a partial aggregate
    (:func:`aggregate_span`). A span that failed is left for its check to raise.

    Before the read has settled its types (``types_final=False``), a span's
    own types may still widen (a column of ints in this span, of strings in
    the file): a stage that cannot take them leaves the span as parsed, and
    the read stages it again at the settled types, raising then if those
    cannot take it either, as filtering the whole Table would."""
    if result.staged or not plan.stages_spans or result.status not in (OK, NEEDS_MORE) or \
            result.bad_value is not None or (result.stage_deferred and not types_final):
        return  # (a deferred span's types have not changed since: no second try until they settle)
    as_parsed = result.columns, result.nrows, result.rows_read, result.object_bytes
    # rows_read: the rows the parse read (the fused kernel's bounds may have dropped some already)
    result.staged, result.rows_read = True, max(result.rows_read, result.nrows)
    try:
        if plan.opts.row_filter is not None:
            filter_span(result, plan)
        if plan.opts.grouped_query is not None:
            aggregate_span(result, plan, plan.opts.grouped_query)
    except STAGE_TYPE_ERRORS:
        if types_final or _stage_types_given(plan):
            raise
        result.columns, result.nrows, result.rows_read, result.object_bytes = as_parsed
        result.staged, result.partial, result.stage_deferred = False, None, True


def _stage_types_given(read: ReadPlan) -> bool:
    """Whether every column the stages read has its type given (so no span's can widen):
    the filter's columns, and for an aggregate every column the read keeps."""
    used = read.columns if read.opts.grouped_query is not None else [read.columns[j] for j in read.filter_columns]
    return not any(column.inferred for column in used)


def filter_span(result: SpanResult, read: ReadPlan) -> None:
    """Keeps the rows of a checked span that the read's filter selects. A
    device's span then counts only its kept rows' bytes as crossing the link.

    >>> import io
    >>> from arrow_bridge import read_csv
    >>> read_csv(io.BytesIO(b"a,b\\n1,x\\n2,y\\n3,z\\n"), usecols=["b"], filters=[("a", "!=", 2)]).to_pydict()
    {'b': ['x', 'z']}
    """
    used = {read.columns[j].name: _values(result, read, j) for j in read.filter_columns}
    if not result.nrows and any(pa.types.is_null(array.type) for array in used.values()):
        return  # nothing to keep, and no types yet to check the filter against
    # Otherwise evaluated even on a span left empty (by the kernel's bounds): a filter the
    # columns' types cannot take must fail as it does on the whole table.
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


def stage_work(result: SpanResult, read: ReadPlan) -> dict[str, int]:
    """The work the read's span stages did on a span, by :data:`STAGE_COUNTERS`
    name: the same wherever the span ran (it depends on the span's rows and
    the rows kept only); zeros for a span not staged (it failed), nothing for
    a read whose spans have no stages (they add no counter to its tasks).

    >>> import io, arrow_bridge
    >>> from arrow_bridge.executors import TaskRecorder
    >>> recorder = TaskRecorder()
    >>> _ = arrow_bridge.read_csv(io.BytesIO(b"a,b\\n1,x\\n2,y\\n3,z\\n"), filters=[("a", ">", 1)], device=recorder)
    >>> {name: recorder.tasks[0].counters[name] for name in STAGE_COUNTERS.names}
    {'filter_tests': 3, 'values_kept': 4, 'aggregate_updates': 0}
    """
    if not read.stages_spans:
        return {}
    work = dict.fromkeys(STAGE_COUNTERS.names, 0)
    if not result.staged:
        return work
    row_filter, query = read.opts.row_filter, read.opts.grouped_query
    if row_filter is not None:
        work["filter_tests"] = result.rows_read * row_filter.tests_per_row(len(read.filter_columns))
        if result.nrows < result.rows_read:
            work["values_kept"] = result.nrows * sum(column.index >= 0 for column in read.columns)
    if query is not None:
        work["aggregate_updates"] = result.nrows * query.updates_per_row
    return work


def sent_bytes(result: SpanResult) -> int:
    """What a span's output takes on the link: the bytes a device counted, else
    its partial aggregate's or its (kept) columns'."""
    if result.object_bytes:
        return result.object_bytes
    return result.partial.nbytes if result.partial is not None else object_bytes(result.columns)
