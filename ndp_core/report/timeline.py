"""A Report's modeled timeline as a Gantt chart (matplotlib, imported when drawing).

:func:`timeline_rows` lays the ``(resource, task, start_s, end_s)`` uses out in
rows, one per resource unit in use; :func:`plot_timeline` draws them
(``report.plot_timeline()`` calls it, :mod:`ndp_core.report.views`).

>>> r = ReportData(timeline=[("flash", 0, 0.0, 0.5), ("device_cores", 0, 0.5, 1.0),
...                      ("device_cores", 1, 0.6, 0.9)], makespan_s=1.0)
>>> [label for label, _ in timeline_rows(r)]
['flash', 'device_cores[0]', 'device_cores[1]']
"""
from __future__ import annotations

from typing import Optional

from ndp_core.report.data import RESOURCES, ReportData
from ndp_core.report.render import format_seconds

__all__ = ["plot_timeline", "timeline_rows"]


def timeline_rows(report: ReportData, max_tasks: Optional[int] = None) -> list[tuple[str, list]]:
    """``(label, [(start_s, end_s, task), ...])`` per row, top row first:
    resources in the order data flows through them (:data:`RESOURCES`, unknown
    names after; a Dask worker's ``"<i>:"`` prefix groups its rows), and the
    overlapping uses of a multi-unit resource packed into lanes ``name[i]``.
    ``max_tasks`` keeps only the first tasks.

    >>> timeline_rows(ReportData(timeline=[("link", 0, 0.0, 1.0), ("link", 1, 1.0, 2.0)]))
    [('link', [(0.0, 1.0, 0), (1.0, 2.0, 1)])]
    """
    entries = list(report.timeline)
    if max_tasks is not None:
        entries = [e for e in entries if e[1] < max_tasks]
    order = {r: i for i, r in enumerate(RESOURCES)}

    def res_key(name: str):
        base = name.split(":", 1)[-1]
        prefix = name.split(":", 1)[0] if ":" in name else ""
        return (prefix, order.get(base, len(order)), base)

    by_res: dict[str, list] = {}
    for res, task, s, e, *_ in entries:
        by_res.setdefault(res, []).append((s, e, task))
    rows: list[tuple[str, list]] = []
    for res in sorted(by_res, key=res_key):
        lanes: list[list] = []
        lane_end: list[float] = []
        for s, e, task in sorted(by_res[res]):
            for i, end in enumerate(lane_end):
                if end <= s + 1e-15:
                    lanes[i].append((s, e, task))
                    lane_end[i] = e
                    break
            else:
                lanes.append([(s, e, task)])
                lane_end.append(e)
        for i, lane in enumerate(lanes):
            rows.append((res if len(lanes) == 1 else f"{res}[{i}]", lane))
    return rows


def plot_timeline(report: ReportData, ax=None, *, max_tasks: Optional[int] = None, legend: bool = True):
    """Gantt chart of the modeled timeline: one row per resource unit
    (:func:`timeline_rows`), one bar per use, coloured by task. Draws on ``ax``
    (a new figure when None) and returns the matplotlib Axes. ``legend`` is
    accepted for compatibility and draws nothing.

    >>> ax = plot_timeline(ReportData(timeline=[("flash", 0, 0.0, 1.0)], makespan_s=1.0))
    >>> [t.get_text() for t in ax.get_yticklabels()], ax.get_title()
    (['flash'], ' []: makespan 1.000 s')
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    import matplotlib.pyplot as plt  # on use: importing the package stays light

    if ax is None:
        _, ax = plt.subplots(figsize=(10, 3.5))
    rows = timeline_rows(report, max_tasks)
    cmap = plt.get_cmap("tab20")
    labels = []
    for y, (label, lane) in enumerate(reversed(rows)):
        ax.broken_barh([(s, max(e - s, 0.0)) for s, e, _ in lane],
                       (y - 0.4, 0.8), facecolors=[cmap(t % 20) for _, _, t in lane],
                       edgecolor="none")
        labels.append(label)
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels(labels)
    ax.set_xlabel("modeled time (s)")
    ax.set_title(f"{report.device} [{report.split}]: makespan {format_seconds(report.makespan_s)}")
    if report.makespan_s > 0:
        ax.set_xlim(0, report.makespan_s * 1.02)
    if not rows:
        ax.text(0.5, 0.5, "no timeline recorded", ha="center", va="center", transform=ax.transAxes)
    return ax
