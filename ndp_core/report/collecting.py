"""Collecting Reports: ``with collect() as c:`` gathers the Report of every run
made inside the block (readers and devices call :func:`record` after each run).

>>> with collect() as c:
...     record(Report(tasks=3))
>>> c.total.tasks
3
"""
from __future__ import annotations

import contextlib
import contextvars
from typing import Iterator

from ndp_core.report.views import Report

__all__ = ["Collector", "collect", "record"]


class Collector:
    """The Reports recorded while a :func:`collect` block was active.

    >>> c = Collector(parallel=True)
    >>> c.reports += [Report(makespan_s=1.0), Report(makespan_s=2.0)]
    >>> len(c), c.total.makespan_s
    (2, 2.0)
    """

    def __init__(self, parallel: bool = False) -> None:
        self.reports: list[Report] = []
        self.parallel = parallel

    @property
    def total(self) -> Report:
        """All recorded reports combined (an empty Report when none)."""
        return Report.combine(self.reports, parallel=self.parallel)

    def __len__(self) -> int:
        return len(self.reports)

    def __iter__(self) -> Iterator[Report]:
        return iter(self.reports)

    def __repr__(self) -> str:
        return f"Collector({len(self.reports)} reports)"


_active: contextvars.ContextVar[tuple[Collector, ...]] = contextvars.ContextVar("ndp_report_collectors",
                                                                                default=())


@contextlib.contextmanager
def collect(parallel: bool = False) -> Iterator[Collector]:
    """Collect the Reports of the runs made inside the block (nested blocks each
    get every report). Context-local (``contextvars``): a thread started inside
    the block does not see it unless it runs in a copied context.

    >>> with collect() as outer:
    ...     with collect() as inner:
    ...         record(Report(tasks=1))
    ...     record(Report(tasks=2))
    >>> len(inner.reports), outer.total.tasks
    (1, 3)
    """
    c = Collector(parallel=parallel)
    token = _active.set(_active.get() + (c,))
    try:
        yield c
    finally:
        _active.reset(token)


def record(report: Report) -> None:
    """Append ``report`` to every active collector (readers call this after each
    run). A no-op outside :func:`collect` blocks.

    >>> record(Report())  # nobody collects: nothing happens
    >>> with collect() as c:
    ...     record(Report())
    >>> len(c)
    1
    """
    for c in _active.get():
        c.reports.append(report)
