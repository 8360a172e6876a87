"""A Report's modeled timeline as a Gantt chart (matplotlib, imported when drawing).

Each timeline entry ``(resource, task, start_s, end_s, side)`` is one use of a
resource by a task whose final side was ``side`` (``"device"``, ``"host"`` or
``"raw"``; older 4-tuples have no side: "unknown"). The plot answers *what
happened where*:

* **kinds** (:data:`KINDS`, :func:`use_kind`): each use is coloured by what it
  was - a flash read, a device parse (cores or pipeline), objects or text over
  the link, a raw return (the text of a task the device sent back unprocessed,
  and its host parse), a host parse of a host task, P2P or host-to-GPU copies.
  Colour families follow the side: greens device, blues host, oranges raw;
* **rows**: one group of rows per resource in the order data flows through
  them (:data:`~ndp_core.report.data.RESOURCES`), a Dask worker's ``"<i>:"``
  prefix grouping its resources ("worker 0 · flash"); overlapping uses of a
  multi-unit resource are packed into lanes ``name[i]``;
* **density**: adjacent bars of one kind closer than a time bin are merged, and
  a resource with more lanes than ``max_lanes`` or with bars too dense to see
  becomes one *band*: per time bin, the share of its units busy, stacked by
  kind (so 11,000 tasks draw as a few dozen artists);
* a legend entry per kind present, each resource group's utilization at the
  right, and a title with device, split, makespan and pages by side.

:func:`timeline_layout` is the data layer (testable without matplotlib);
:func:`plot_timeline` only draws it; :func:`timeline_rows` is the plain
lane packing. ``report.plot_timeline()`` calls :func:`plot_timeline`
(:mod:`ndp_core.report.views`).

>>> r = ReportData(timeline=[("flash", 0, 0.0, 0.5, "device"), ("device_cores", 0, 0.5, 1.0, "device"),
...                          ("device_cores", 1, 0.6, 0.9, "device")], makespan_s=1.0)
>>> [label for label, _ in timeline_rows(r)]
['flash', 'device_cores[0]', 'device_cores[1]']
>>> [(row.label, sorted(row.kinds)) for row in timeline_layout(r)]
[('flash', ['flash']), ('device_cores[0]', ['device_parse']), ('device_cores[1]', ['device_parse'])]
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Optional

from ndp_core.report.data import RESOURCES, ReportData
from ndp_core.report.render import format_seconds

__all__ = ["KINDS", "Kind", "TimelineRow", "plot_timeline", "timeline_layout", "timeline_rows", "use_kind"]


class Kind(NamedTuple):
    """How one kind of resource use is shown: its legend label and colour."""

    label: str
    color: str


#: The kinds of resource use, in legend order: name -> (legend label, colour).
#: Greens: the device parsed the task; blues: the host read it as text and
#: parsed it; oranges: the device returned it raw and the host parsed it.
KINDS: dict[str, Kind] = {
    "flash": Kind("flash read", "#8c8c8c"),
    "device_parse": Kind("device parse (cores / pipeline)", "#1b7837"),
    "link_objects": Kind("link: objects (device-parsed tasks)", "#8fd18a"),
    "device_discarded": Kind("device work discarded (task returned raw)", "#b2182b"),
    "raw_link": Kind("raw return: text over link", "#fdb863"),
    "raw_parse": Kind("raw return: host parse", "#e66101"),
    "link_text": Kind("link: text (host-split tasks)", "#92c5de"),
    "host_parse": Kind("host parse (host-split tasks)", "#2166ac"),
    "p2p": Kind("P2P: objects to GPU", "#762a83"),
    "h2d": Kind("host → GPU copy", "#c2a5cf"),
    "link": Kind("link (side unknown)", "#bdbdbd"),
    "host_cpu": Kind("host CPU (side unknown)", "#525252"),
    "other": Kind("other", "#e0e0e0"),
}

_DEVICE_WORK = ("device_cores", "pipeline")
_LINK_KIND = {"device": "link_objects", "host": "link_text", "raw": "raw_link"}
_HOST_KIND = {"host": "host_parse", "raw": "raw_parse"}
_EPS = 1e-15


def use_kind(resource: str, side: Optional[str]) -> str:
    """The :data:`KINDS` name of a use of ``resource`` (``"<i>:"`` worker
    prefix allowed) by a task whose final side is ``side`` (None: unknown).

    >>> use_kind("device_cores", "device"), use_kind("0:link", "raw"), use_kind("host_cpu", "host")
    ('device_parse', 'raw_link', 'host_parse')
    >>> use_kind("link", None), use_kind("flash", "raw"), use_kind("pipeline", "raw")
    ('link', 'flash', 'device_discarded')
    """
    base = resource.split(":", 1)[-1]
    if base == "flash":
        return "flash"
    if base in _DEVICE_WORK:
        return "device_discarded" if side == "raw" else "device_parse"
    if base == "link":
        return _LINK_KIND.get(side, "link")  # type: ignore[arg-type]
    if base == "host_cpu":
        return _HOST_KIND.get(side, "host_cpu")  # type: ignore[arg-type]
    if base in ("p2p", "h2d"):
        return base
    return "other"


def _split_name(name: str) -> tuple[Optional[int], str]:
    """``"3:link"`` -> ``(3, "link")``; ``"link"`` -> ``(None, "link")``."""
    if ":" in name:
        prefix, base = name.split(":", 1)
        try:
            return int(prefix), base
        except ValueError:
            return None, name
    return None, name


def _groups(report: ReportData, max_tasks: Optional[int]) -> dict[str, list[tuple[float, float, Any, str]]]:
    """Uses ``(start_s, end_s, task, kind)`` per resource name, groups ordered by
    worker, then data flow (:data:`RESOURCES`, unknown names after)."""
    order = {r: i for i, r in enumerate(RESOURCES)}
    by_res: dict[str, list] = {}
    for entry in report.timeline:
        res, task, s, e = entry[0], entry[1], entry[2], entry[3]
        if max_tasks is not None and task >= max_tasks:
            continue
        side = entry[4] if len(entry) > 4 else None
        by_res.setdefault(res, []).append((s, e, task, use_kind(res, side)))

    def key(name: str):
        worker, base = _split_name(name)
        return (-1 if worker is None else worker, order.get(base, len(order)), base)

    return {res: by_res[res] for res in sorted(by_res, key=key)}


def _pack(uses: list) -> list[list]:
    """Overlapping uses packed into lanes (each use in the lowest free lane)."""
    lanes: list[list] = []
    busy: list[tuple[float, int]] = []  # (end, lane) of the lanes in use
    free: list[int] = []
    for use in sorted(uses, key=lambda u: (u[0], u[1])):
        while busy and busy[0][0] <= use[0] + _EPS:
            heapq.heappush(free, heapq.heappop(busy)[1])
        if free:
            lane = heapq.heappop(free)
        else:
            lane = len(lanes)
            lanes.append([])
        lanes[lane].append(use)
        heapq.heappush(busy, (use[1], lane))
    return lanes


def timeline_rows(report: ReportData, max_tasks: Optional[int] = None) -> list[tuple[str, list]]:
    """``(label, [(start_s, end_s, task), ...])`` per row, top row first:
    resources in the order data flows through them (:data:`RESOURCES`, unknown
    names after; a Dask worker's ``"<i>:"`` prefix groups its rows), and the
    overlapping uses of a multi-unit resource packed into lanes ``name[i]``.
    ``max_tasks`` keeps only the first tasks. One bar per use, nothing merged
    (:func:`timeline_layout` is what the plot draws).

    >>> timeline_rows(ReportData(timeline=[("link", 0, 0.0, 1.0), ("link", 1, 1.0, 2.0)]))
    [('link', [(0.0, 1.0, 0), (1.0, 2.0, 1)])]
    """
    rows: list[tuple[str, list]] = []
    for res, uses in _groups(report, max_tasks).items():
        lanes = _pack(uses)
        for i, lane in enumerate(lanes):
            rows.append((res if len(lanes) == 1 else f"{res}[{i}]", [(s, e, t) for s, e, t, _ in lane]))
    return rows


@dataclass
class TimelineRow:
    """One row of the plot: a lane of bars, or a band for a whole resource.

    ``key`` names it as :func:`timeline_rows` does (``"0:device_cores[1]"``;
    a band: the resource, ``"0:device_cores"``) and ``label`` for a reader
    (``"worker 0 · device_cores[1]"``). A lane has ``bars``: per kind,
    ``(start_s, width_s)`` with adjacent bars of one kind merged. A band
    (``band=True``) stands for ``units`` units and has ``edges`` (time-bin
    edges) and ``levels``: per kind, the share of the units busy in each bin
    (stacked, at most 1 in all). ``utilization`` is the whole group's: busy
    seconds over ``units`` x the timeline's span (set on its first row, None on
    the others); ``uses`` counts the uses the row stands for, ``merged`` says
    whether some bar stands for several.
    """

    key: str
    label: str
    resource: str
    worker: Optional[int]
    band: bool = False
    units: int = 1
    uses: int = 0
    bars: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    edges: list[float] = field(default_factory=list)
    levels: dict[str, list[float]] = field(default_factory=dict)
    utilization: Optional[float] = None
    merged: bool = False

    @property
    def kinds(self) -> set[str]:
        """The kinds of use drawn in this row."""
        return set(self.bars) | set(self.levels)


def _merge(lane: list, tol: float) -> dict[str, list[tuple[float, float]]]:
    """A lane's uses as ``(start, width)`` bars per kind, a use starting within
    ``tol`` of the end of the previous one of the same kind joining it."""
    bars: dict[str, list[tuple[float, float]]] = {}
    cur_kind, cur_s, cur_e = None, 0.0, 0.0
    for s, e, _, kind in lane:
        if kind == cur_kind and s - cur_e <= tol:
            cur_e = max(cur_e, e)
            continue
        if cur_kind is not None:
            bars.setdefault(cur_kind, []).append((cur_s, cur_e - cur_s))
        cur_kind, cur_s, cur_e = kind, s, e
    if cur_kind is not None:
        bars.setdefault(cur_kind, []).append((cur_s, cur_e - cur_s))
    return bars


def _occupancy(uses: list, edges) -> dict[str, Any]:
    """Per kind, the mean number of units busy in each bin between ``edges``
    (exact: busy time integrated over each bin, O(n log n))."""
    import numpy as np

    by_kind: dict[str, tuple[list, list]] = {}
    for s, e, _, kind in uses:
        starts, ends = by_kind.setdefault(kind, ([], []))
        starts.append(s)
        ends.append(e)
    widths = np.diff(edges)
    out: dict[str, Any] = {}
    for kind, (starts, ends) in by_kind.items():
        s = np.sort(np.asarray(starts, dtype=float))
        e = np.sort(np.asarray(ends, dtype=float))
        # busy(t) = sum over uses of clip(t - s, 0, e - s) = Σ_{s<t}(t - s) - Σ_{e<t}(t - e)
        cs, ce = np.concatenate(([0.0], np.cumsum(s))), np.concatenate(([0.0], np.cumsum(e)))
        ns, ne = np.searchsorted(s, edges), np.searchsorted(e, edges)
        busy = (ns * edges - cs[ns]) - (ne * edges - ce[ne])
        out[kind] = np.maximum(np.diff(busy), 0.0) / np.where(widths > 0, widths, 1.0)
    return out


def _label(worker: Optional[int], name: str) -> str:
    return name if worker is None else f"worker {worker} · {name}"


def timeline_layout(report: ReportData, *, max_tasks: Optional[int] = None, max_lanes: int = 4,
                    aggregate: Optional[bool] = None, resolution: int = 400) -> list[TimelineRow]:
    """The rows :func:`plot_timeline` draws, top row first.

    Each resource (per Dask worker) is packed into lanes of bars
    (:func:`timeline_rows`' order): one bar per use in a lane of at most
    ``resolution // 4`` uses, else bars of one kind closer than a time bin
    (the span over ``resolution``) merged. With ``aggregate=None`` a resource
    becomes one band (:class:`TimelineRow`, ``resolution`` time bins) when it
    needs more than ``max_lanes`` lanes or its bars would average under four
    bins apart; ``aggregate=True`` bands every resource, ``False`` none (one
    bar per use, nothing merged). ``max_tasks`` keeps only the first tasks.

    >>> r = ReportData(timeline=[("0:link", 0, 0.0, 1.0, "device"), ("0:link", 1, 1.0, 2.0, "device"),
    ...                          ("1:host_cpu", 0, 0.0, 1.0, "raw")], makespan_s=2.0)
    >>> for row in timeline_layout(r):
    ...     print(row.label, row.bars)
    worker 0 · link {'link_objects': [(0.0, 1.0), (1.0, 1.0)]}
    worker 1 · host_cpu {'raw_parse': [(0.0, 1.0)]}
    >>> band = timeline_layout(r, aggregate=True, resolution=2)[1]
    >>> band.band, band.edges, band.levels, band.utilization
    (True, [0.0, 1.0, 2.0], {'raw_parse': [1.0, 0.0]}, 0.5)
    """
    groups = _groups(report, max_tasks)
    if not groups:
        return []
    span = max(report.makespan_s, max(e for uses in groups.values() for _, e, _, _ in uses))
    tol = span / resolution if aggregate is not False else -1.0
    workers = {_split_name(res)[0] for res in groups} - {None}
    rows: list[TimelineRow] = []
    for res, uses in groups.items():
        worker, base = _split_name(res)
        lanes = _pack(uses)
        # a combined Dask job's units add up over its workers: a worker has its share
        units = report.units.get(base, 0) // (1 if worker is None else max(len(workers), 1))
        units = max(units, len(lanes), 1)
        busy = sum(e - s for s, e, _, _ in uses)
        utilization = busy / (units * span) if span > 0 else 0.0
        # a sparse lane keeps one bar per use (task boundaries show); a dense one merges
        merged = [_merge(lane, tol if len(lane) > resolution // 4 else -1.0) for lane in lanes]
        n_bars = sum(len(b) for m in merged for b in m.values())
        band = aggregate is True or (aggregate is None and (
            len(lanes) > max_lanes or n_bars * 4 > len(lanes) * resolution))
        if band:
            import numpy as np

            edges = np.linspace(0.0, span, resolution + 1)
            occ = _occupancy(uses, edges)
            levels = {k: [float(x) for x in np.minimum(occ[k] / units, 1.0)] for k in KINDS if k in occ}
            rows.append(TimelineRow(res, _label(worker, f"{base} ×{units}" if units > 1 else base), base, worker,
                                    band=True, units=units, uses=len(uses), edges=[float(x) for x in edges],
                                    levels=levels, utilization=utilization))
            continue
        for i, (lane, bars) in enumerate(zip(lanes, merged)):
            name = base if len(lanes) == 1 else f"{base}[{i}]"
            key = res if len(lanes) == 1 else f"{res}[{i}]"
            rows.append(TimelineRow(key, _label(worker, name), base, worker, uses=len(lane),
                                    bars={k: bars[k] for k in KINDS if k in bars},
                                    merged=sum(map(len, bars.values())) < len(lane),
                                    utilization=utilization if i == 0 else None))
    return rows


_PAGE_SIDES = (("device", "parsed in the device"), ("raw", "returned raw"), ("host", "sent as text"))


def _title(report: ReportData) -> str:
    """Device, split and makespan; then tasks and pages by side when known."""
    title = f"{report.device or '?'} · split {report.split or '?'} · makespan {format_seconds(report.makespan_s)}"
    detail = [f"{report.tasks} tasks"] if report.tasks else []
    if any(report.pages.get(side) for side, _ in _PAGE_SIDES):
        detail.append("pages: " + ", ".join(f"{report.pages.get(side, 0)} {what}" for side, what in _PAGE_SIDES))
    return title + ("\n" + " · ".join(detail) if detail else "")


def _time_unit(span_s: float) -> tuple[str, float]:
    """The time unit the axis is labelled in (the data stay in seconds)."""
    if span_s >= 1:
        return "s", 1
    if span_s >= 1e-3:
        return "ms", 1e3
    return "µs", 1e6


def plot_timeline(report: ReportData, ax=None, *, max_tasks: Optional[int] = None, legend: bool = True,
                  max_lanes: int = 4, aggregate: Optional[bool] = None, resolution: int = 400):
    """Gantt chart of the modeled timeline (:func:`timeline_layout`): a row per
    resource lane (bars coloured by kind, :data:`KINDS`), or one band per
    dense resource (the share of its units busy over time, stacked by kind),
    rows grouped per Dask worker, each group's utilization at the right,
    a legend entry per kind drawn (``legend=False``: none) and a title with
    device, split, makespan and pages by side. Draws on ``ax`` (a new figure,
    sized to the rows, when None) and returns the matplotlib Axes.

    >>> ax = plot_timeline(ReportData(device="d", split="dynamic", timeline=[("flash", 0, 0.0, 1.0, "device")],
    ...                               makespan_s=1.0))
    >>> [t.get_text() for t in ax.get_yticklabels()], ax.get_title()
    (['flash'], 'd · split dynamic · makespan 1.000 s')
    >>> [t.get_text() for t in ax.get_legend().get_texts()]
    ['flash read']
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    import matplotlib.pyplot as plt  # on use: importing the package stays light
    from matplotlib.patches import Patch
    from matplotlib.transforms import blended_transform_factory

    rows = timeline_layout(report, max_tasks=max_tasks, max_lanes=max_lanes, aggregate=aggregate,
                           resolution=resolution)
    heights = [1.8 if row.band else 1.0 for row in rows]
    if ax is None:
        _, ax = plt.subplots(figsize=(11, 1.3 + 0.26 * sum(heights)))
    ax.set_title(_title(report), fontsize="medium")
    ax.set_xlabel("modeled time (s)")
    if not rows:
        ax.set_yticks([])
        ax.text(0.5, 0.5, "no timeline recorded", ha="center", va="center", transform=ax.transAxes)
        return ax
    span = max(report.makespan_s, max((r.edges[-1] for r in rows if r.band), default=0.0),
               max((s + w for r in rows for bars in r.bars.values() for s, w in bars), default=0.0))
    min_w = span / 1000  # about a pixel: a shorter use still shows
    right = blended_transform_factory(ax.transAxes, ax.transData)
    top = sum(heights)
    ticks, labels, present = [], [], set()
    y, prev_group, group_top, util = top, None, top, None

    def show_util() -> None:  # the finished group's utilization, level with its middle
        if util is not None:
            ax.text(1.005, (group_top + y) / 2, f"{util:.0%}", transform=right, va="center", ha="left",
                    fontsize="x-small", color="#444444")

    for row, h in zip(rows, heights):
        group = (row.worker, row.resource)
        if prev_group is not None and group != prev_group:
            show_util()
            same_worker = group[0] == prev_group[0]
            ax.axhline(y, color="#999999" if same_worker else "#333333",
                       lw=0.4 if same_worker else 1.0, zorder=0)
            group_top, util = y, None
        prev_group = group
        util = row.utilization if row.utilization is not None else util
        y -= h
        y0, bar_h = y + 0.1, h - 0.2  # a 0.1 gap above and below
        if row.band:
            xs = row.edges
            ax.broken_barh([(xs[0], xs[-1] - xs[0])], (y0, bar_h), facecolors="#f2f2f2", edgecolor="#cccccc",
                           lw=0.5, zorder=1)
            base = [0.0] * (len(xs) - 1)
            for kind, level in row.levels.items():
                stacked = [b + v for b, v in zip(base, level)]
                ax.stairs([y0 + bar_h * v for v in stacked], xs, baseline=[y0 + bar_h * b for b in base],
                          fill=True, color=KINDS[kind].color, lw=0, zorder=2)
                base = stacked
                present.add(kind)
        else:
            for kind, bars in row.bars.items():
                # white edges mark where one task's use ends and the next begins, where bars are wide
                outlined = not row.merged and min(w for _, w in bars) >= span / 200
                ax.broken_barh([(s, max(w, min_w)) for s, w in bars], (y0, bar_h), facecolors=KINDS[kind].color,
                               edgecolor="white" if outlined else "none", lw=0.4, zorder=2)
                present.add(kind)
        ticks.append(y + h / 2)
        labels.append(row.label)
    show_util()
    ax.set_yticks(ticks)
    ax.set_yticklabels(labels, fontsize="small")
    ax.set_ylim(0, top)
    if span > 0:
        ax.set_xlim(0, span * 1.01)
        unit, scale = _time_unit(span)
        if scale != 1:
            from matplotlib.ticker import FuncFormatter

            ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x * scale:g}"))
            ax.set_xlabel(f"modeled time ({unit})")
    ax.text(1.005, 1.0, "busy", transform=ax.transAxes, va="bottom", ha="left", fontsize="x-small",
            color="#444444")
    if legend:
        handles = [Patch(facecolor=KINDS[k].color, label=KINDS[k].label) for k in KINDS if k in present]
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.05, 1.0), fontsize="small",
                  frameon=False, borderaxespad=0.0)
    return ax
