"""Inferred types: what the spans checked so far settled, and settling every span at the end.

Spans are parsed in parallel, each inferring its columns' types from its own
values (climbing pyarrow's inference ladder). :class:`TypeState` keeps, per
column, the highest rung any checked span needed, so later spans start there
and take the fused kernel; :func:`settle_types` re-converts, at the end, any
span whose column ended below the column's final rung.

>>> import io
>>> import arrow_bridge
>>> arrow_bridge.read_csv(io.BytesIO(b"a\\n1\\n2.5\\n"), block_size=4).column("a").type  # int64 span, then float64
DataType(double)
"""
from __future__ import annotations

from typing import Sequence

from arrow_bridge.executors.base import SpanPlan, SpanResult
from arrow_bridge.executors.host import HostExecutor
from arrow_bridge.fast_path import FastPlanCache
from arrow_bridge.read_plan import ReadPlan


class TypeState:
    """The types settled by the spans checked so far (in file order)."""

    def __init__(self, read: ReadPlan):
        self.read = read
        self.fast_plans = FastPlanCache(read)
        self.rungs = [0] * len(read.columns)  # per output column: the highest rung a span needed
        self.known = read.types_known  # else: after the first span
        self.rows_per_byte = 0.0  # the densest span so far

    def learn(self, result: SpanResult) -> None:
        """Takes in a checked span's rungs and density."""
        for j, rung in enumerate(result.rungs):
            if rung > self.rungs[j]:
                self.rungs[j] = rung
        self.known = True
        if result.parsed:
            self.rows_per_byte = max(self.rows_per_byte, result.nrows / result.parsed)

    def plan(self) -> SpanPlan:
        """How to parse the next span: at the rungs so far, with the fused
        kernel once the types are known."""
        rungs = tuple(self.rungs)
        return SpanPlan(rungs, self.fast_plans.get(rungs) if self.known else None, self.rows_per_byte)


def settle_types(results: Sequence[SpanResult], read: ReadPlan, host: HostExecutor) -> None:
    """Re-converts (on the host) every span whose inferred column ended below
    the rung the column needs in some other span, until all agree."""
    inferred = [j for j, c in enumerate(read.columns) if c.inferred]
    while True:
        targets = [max((r.rungs[j] for r in results), default=0) for j in range(len(read.columns))]
        stale = [r for r in results if any(r.rungs[j] != targets[j] for j in inferred)]
        if not stale:
            return
        for result in stale:
            host.reconvert(result, targets)
