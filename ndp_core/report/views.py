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

    def plot_timeline(self, ax=None, *, max_tasks: Optional[int] = None, legend: bool = True,
                      max_lanes: int = 4, aggregate: Optional[bool] = None, resolution: int = 400):
        """Gantt chart of the modeled timeline: rows per resource (per Dask
        worker: "worker 0 · flash"), bars coloured by kind of use - flash
        read, device parse, objects or text over the link, raw return, host
        parse, P2P/GPU copies - with a legend entry per kind drawn. A resource
        with more than ``max_lanes`` lanes, or bars too dense to see, is drawn
        as one band of its busy share over time (``aggregate=True``: every
        resource, ``False``: none; ``resolution`` time bins). Returns the
        matplotlib Axes (:func:`ndp_core.report.timeline.plot_timeline`).

        ``max_tasks`` draws only the first tasks.

        >>> ax = Report(timeline=[("link", 0, 0.0, 1.0, "raw")], makespan_s=1.0).plot_timeline()
        >>> ax.get_xlabel(), [t.get_text() for t in ax.get_legend().get_texts()]
        ('modeled time (s)', ['raw return: text over link'])
        >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
        """
        return plot_timeline(self, ax, max_tasks=max_tasks, legend=legend, max_lanes=max_lanes,
                             aggregate=aggregate, resolution=resolution)
