"""``Report``: the class users get - :class:`~ndp_core.report.data.ReportData` that
shows itself: ``print(report)`` a text table, notebooks HTML, ``plot_timeline()``
a Gantt chart (:mod:`ndp_core.report.render`, :mod:`ndp_core.report.timeline`).

>>> print(str(Report(device="demo", split="host")).splitlines()[0])
Report: demo [host]
"""
from __future__ import annotations

from typing import Optional

from ndp_core.report.data import ReportData
from ndp_core.report.render import as_html, as_text
from ndp_core.report.timeline import plot_timeline

__all__ = ["Report"]


class Report(ReportData):
    """The accounting of one run (or, combined, of several): the fields, derived
    figures, combining and exports of :class:`~ndp_core.report.data.ReportData`,
    shown as a text table (``str``), HTML (``_repr_html_``) and a timeline plot.

    >>> r = Report(device="demo", makespan_s=1.0)
    >>> type(r + r).__name__, (r + r).makespan_s
    ('Report', 2.0)
    """

    def __str__(self) -> str:
        return as_text(self)

    def _repr_html_(self) -> str:
        return as_html(self)

    def plot_timeline(self, ax=None, *, max_tasks: Optional[int] = None, legend: bool = True):
        """Gantt chart of the modeled timeline: one row per resource unit
        (overlapping uses of a multi-unit resource are packed into lanes), one
        bar per use, coloured by task. Returns the matplotlib Axes
        (:func:`ndp_core.report.timeline.plot_timeline`).

        ``max_tasks`` draws only the first tasks (large runs).

        >>> ax = Report(timeline=[("link", 0, 0.0, 1.0)], makespan_s=1.0).plot_timeline()
        >>> ax.get_xlabel()
        'modeled time (s)'
        >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
        """
        return plot_timeline(self, ax, max_tasks=max_tasks, legend=legend)
