"""``Report``: what one device run cost, in modeled hardware time, bytes and energy.

Every run through a :class:`~ndp_core.device.Device` yields a :class:`Report`:
pages by the side that parsed them, bytes over each link, busy seconds and
utilization per resource, the modeled makespan, host CPU seconds (spent and
saved), an energy estimate, the faults seen and the real wall-clock time.
Reports add up (``a + b``, :meth:`Report.combine`), print as a table, become a
pandas DataFrame and plot as a Gantt chart of the modeled timeline.

Pure Python: pandas and matplotlib are imported only inside the methods that
need them.

>>> r = Report(device="demo", split="dynamic", tasks=2, pages={"device": 3, "host": 1},
...            busy_s={"flash": 0.5, "link": 0.25}, units={"flash": 1, "link": 1},
...            makespan_s=1.0)
>>> r.utilization["flash"]
0.5
>>> (r + r).pages["device"], (r + r).makespan_s, (r + r).runs
(6, 2.0, 2)

Callers collect the Reports of the runs made inside a block:

>>> with collect() as c:
...     record(r)
...     record(r)
>>> len(c.reports), c.total.tasks
(2, 4)
"""
from __future__ import annotations

import contextlib
import contextvars
import html
from dataclasses import dataclass, field, fields
from typing import Any, Iterable, Iterator, Optional, Sequence

__all__ = ["Report", "Collector", "collect", "record", "RESOURCES", "SIDES", "LINKS"]

#: Resources the timing model accounts for (keys of ``busy_s``/``units``/``energy_j``).
RESOURCES = ("flash", "device_cores", "pipeline", "link", "host_cpu", "p2p", "h2d")
#: Final sides of a task (keys of ``pages``).
SIDES = ("device", "host", "raw")
#: Links data crosses (keys of ``bytes``).
LINKS = ("internal", "host_link", "p2p")

_FAULT_KEYS = ("media_error", "app_failure", "link_timeout", "tq_overflow")


def _zeros(keys: Sequence[str], kind=int) -> dict:
    return {k: kind(0) for k in keys}


def _add_dicts(dicts: Iterable[dict]) -> dict:
    out: dict = {}
    for d in dicts:
        for k, v in d.items():
            out[k] = out.get(k, 0) + v
    return out


def _fmt_s(s: float) -> str:
    """Seconds with a readable unit."""
    a = abs(s)
    if a == 0:
        return "0 s"
    if a < 1e-3:
        return f"{s * 1e6:.1f} µs"
    if a < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.3f} s"


def _fmt_bytes(n: float) -> str:
    a = abs(n)
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if a >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{int(n)} B"


def _fmt_j(j: float) -> str:
    return f"{j / 1e3:.2f} kJ" if abs(j) >= 1e3 else f"{j:.3g} J"


@dataclass(repr=False)
class Report:
    """The accounting of one run (or, combined, of several).

    Fields
    ------
    device, split
        The device's name and the split policy (``"host"``, ``"device"``,
        ``"static:<f>"``, ``"dynamic"``; ``"mixed"`` when combined runs differ).
    runs, tasks
        How many runs (1 unless combined) and tasks (spans of whole records).
    pages
        Device pages by final side: ``"device"`` (parsed in the device),
        ``"host"`` (read as text and parsed on the host), ``"raw"`` (sent to the
        device but returned unprocessed, by a full task queue or a fault, and
        parsed on the host).
    bytes
        ``"internal"`` (flash to controller), ``"host_link"`` (over PCIe to the
        host), ``"p2p"`` (device to GPU).
    text_bytes, object_bytes
        Input text of all tasks; Arrow buffers they produced.
    busy_s, units
        Busy seconds per resource (summed over its units) and how many units
        (cores, servers) each resource has: ``flash``, ``device_cores``,
        ``pipeline``, ``link``, ``host_cpu``, ``p2p``.
    makespan_s
        Modeled time from the first command to the last result.
    host_cpu_s, host_cpu_saved_s
        Modeled host CPU seconds spent parsing, and saved against parsing every
        task on the host.
    energy_j
        Joules per resource (active power while busy, idle power otherwise),
        ``"platform"`` (the rest of the system idling for the makespan) and
        ``"total"``.
    faults
        Faults seen, by kind (``media_error``, ``app_failure``,
        ``link_timeout``, ``tq_overflow``).
    wall_s
        Real seconds the run took on this machine.
    timeline
        ``(resource, task, start_s, end_s)`` tuples of modeled resource use
        (may be empty).
    meta
        Free-form details (profile, cost model, overrides).
    """

    device: str = ""
    split: str = ""
    tasks: int = 0
    runs: int = 1
    pages: dict = field(default_factory=lambda: _zeros(SIDES))
    bytes: dict = field(default_factory=lambda: _zeros(LINKS))
    text_bytes: int = 0
    object_bytes: int = 0
    busy_s: dict = field(default_factory=lambda: _zeros(RESOURCES, float))
    units: dict = field(default_factory=dict)
    makespan_s: float = 0.0
    host_cpu_s: float = 0.0
    host_cpu_saved_s: float = 0.0
    energy_j: dict = field(default_factory=dict)
    faults: dict = field(default_factory=lambda: _zeros(_FAULT_KEYS))
    wall_s: float = 0.0
    timeline: list = field(default_factory=list)
    meta: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Missing keys read as zero, so every Report has the same shape.
        for d, keys, kind in ((self.pages, SIDES, int), (self.bytes, LINKS, int),
                              (self.busy_s, RESOURCES, float), (self.faults, _FAULT_KEYS, int)):
            for k in keys:
                d.setdefault(k, kind(0))

    # ------------------------------------------------------------------ derived
    @property
    def utilization(self) -> dict[str, float]:
        """Busy fraction per resource: ``busy_s / (makespan_s * units)`` (0 when
        the resource has no units or the makespan is 0).

        >>> Report(busy_s={"link": 1.0}, units={"link": 1}, makespan_s=4.0).utilization["link"]
        0.25
        """
        out = {}
        for r, busy in self.busy_s.items():
            n = self.units.get(r, 0)
            out[r] = busy / (self.makespan_s * n) if n and self.makespan_s > 0 else 0.0
        return out

    @property
    def energy_total_j(self) -> float:
        """Total modeled energy in joules."""
        if "total" in self.energy_j:
            return self.energy_j["total"]
        return sum(v for k, v in self.energy_j.items() if k != "total")

    @property
    def total_pages(self) -> int:
        return sum(self.pages.values())

    @property
    def offload_fraction(self) -> float:
        """Share of pages parsed in the device."""
        n = self.total_pages
        return self.pages.get("device", 0) / n if n else 0.0

    # -------------------------------------------------------------- constructors
    @classmethod
    def host_only(cls, pages: int, text_bytes: int, wall_s: float, device: str = "host-only",
                  tasks: int = 0) -> "Report":
        """The report of a run with no offload (``ndp_core.device.HostOnly``): every
        page parsed on the host, all text over the link, and - nothing being
        modeled - makespan and host CPU time equal to the measured wall time.

        >>> r = Report.host_only(pages=8, text_bytes=32768, wall_s=0.5)
        >>> r.pages["host"], r.bytes["host_link"], r.makespan_s
        (8, 32768, 0.5)
        """
        return cls(
            device=device, split="host", tasks=tasks,
            pages={"device": 0, "host": int(pages), "raw": 0},
            bytes={"internal": int(text_bytes), "host_link": int(text_bytes), "p2p": 0},
            text_bytes=int(text_bytes),
            busy_s={"host_cpu": float(wall_s)}, units={"host_cpu": 1},
            makespan_s=float(wall_s), host_cpu_s=float(wall_s), host_cpu_saved_s=0.0,
            wall_s=float(wall_s), meta={"cost_model": "measured (host only)"},
        )

    # ---------------------------------------------------------------- combining
    @classmethod
    def combine(cls, reports: Iterable["Report"], parallel: bool = False) -> "Report":
        """One Report for several runs: counts, bytes, busy time, energy, faults
        and wall time add up; the makespan adds up for runs made one after the
        other (``parallel=False``) and is the longest one for runs made at the
        same time on separate devices (``parallel=True``, e.g. Dask workers,
        where resource units add up too).

        >>> a = Report(tasks=1, makespan_s=2.0, busy_s={"link": 1.0}, units={"link": 1})
        >>> Report.combine([a, a]).makespan_s, Report.combine([a, a], parallel=True).makespan_s
        (4.0, 2.0)
        >>> Report.combine([a, a], parallel=True).units["link"]
        2
        """
        reports = list(reports)
        if not reports:
            return cls()
        if len(reports) == 1:
            r = reports[0]
            return cls(**{f.name: _copy(getattr(r, f.name)) for f in fields(cls)})

        def same(attr: str) -> Optional[str]:
            vals = {getattr(r, attr) for r in reports}
            return vals.pop() if len(vals) == 1 else None

        devices = list(dict.fromkeys(r.device for r in reports))
        device = devices[0] if len(devices) == 1 else " + ".join(devices)
        split = same("split") or "mixed"
        makespans = [r.makespan_s for r in reports]
        makespan = max(makespans) if parallel else sum(makespans)
        if parallel:
            units = _add_dicts(r.units for r in reports)
        else:
            units = {}
            for r in reports:
                for k, v in r.units.items():
                    units[k] = max(units.get(k, 0), v)
        timeline: list = []
        offset = 0.0
        with_tl = [r for r in reports if r.timeline]
        for i, r in enumerate(reports):
            if r.timeline:
                if parallel:
                    prefix = f"{i}:" if len(with_tl) > 1 else ""
                    timeline.extend((prefix + res, t, s, e) for res, t, s, e in r.timeline)
                else:
                    timeline.extend((res, t, s + offset, e + offset) for res, t, s, e in r.timeline)
            offset += r.makespan_s
        meta: dict = {}
        for k in reports[0].meta:
            vals = [r.meta.get(k) for r in reports]
            if all(v == vals[0] for v in vals):
                meta[k] = vals[0]
        meta["combined"] = "parallel" if parallel else "sequential"
        return cls(
            device=device, split=split,
            tasks=sum(r.tasks for r in reports), runs=sum(r.runs for r in reports),
            pages=_add_dicts(r.pages for r in reports),
            bytes=_add_dicts(r.bytes for r in reports),
            text_bytes=sum(r.text_bytes for r in reports),
            object_bytes=sum(r.object_bytes for r in reports),
            busy_s=_add_dicts(r.busy_s for r in reports),
            units=units, makespan_s=makespan,
            host_cpu_s=sum(r.host_cpu_s for r in reports),
            host_cpu_saved_s=sum(r.host_cpu_saved_s for r in reports),
            energy_j=_add_dicts(r.energy_j for r in reports),
            faults=_add_dicts(r.faults for r in reports),
            wall_s=sum(r.wall_s for r in reports),
            timeline=timeline, meta=meta,
        )

    def __add__(self, other: "Report") -> "Report":
        if not isinstance(other, Report):
            return NotImplemented
        return Report.combine([self, other])

    def __radd__(self, other):
        # sum(reports) starts from 0
        if other == 0:
            return Report.combine([self])
        return NotImplemented

    # ----------------------------------------------------------------- exports
    def to_dict(self, timeline: bool = True) -> dict[str, Any]:
        """Plain-Python dict of every field (plus ``utilization`` and
        ``energy_total_j``); ``timeline=False`` leaves the timeline out.

        >>> sorted(Report().to_dict())[:4]
        ['busy_s', 'bytes', 'device', 'energy_j']
        """
        d = {f.name: _copy(getattr(self, f.name)) for f in fields(self)}
        if not timeline:
            d.pop("timeline")
        else:
            d["timeline"] = [tuple(t) for t in self.timeline]
        d["utilization"] = self.utilization
        d["energy_total_j"] = self.energy_total_j
        return d

    def to_frame(self, kind: str = "metrics"):
        """A pandas DataFrame.

        ``kind="metrics"`` (default): one row per metric, columns ``group``,
        ``metric``, ``value``, ``unit`` - easy to filter, concatenate across
        runs and pivot. ``kind="resources"``: one row per resource, columns
        ``units``, ``busy_s``, ``utilization``, ``energy_j``.

        >>> Report(makespan_s=1.0).to_frame().set_index("metric").loc["makespan_s", "value"]
        1.0
        """
        import pandas as pd

        if kind == "resources":
            util = self.utilization
            rows = []
            for r in RESOURCES:
                rows.append({"resource": r, "units": self.units.get(r, 0),
                             "busy_s": self.busy_s.get(r, 0.0), "utilization": util.get(r, 0.0),
                             "energy_j": self.energy_j.get(r, 0.0)})
            return pd.DataFrame(rows).set_index("resource")
        if kind != "metrics":
            raise ValueError("kind must be 'metrics' or 'resources'")
        rows = [
            ("run", "device", self.device, ""), ("run", "split", self.split, ""),
            ("run", "runs", self.runs, "count"), ("run", "tasks", self.tasks, "count"),
            ("time", "makespan_s", self.makespan_s, "s"), ("time", "wall_s", self.wall_s, "s"),
            ("time", "host_cpu_s", self.host_cpu_s, "s"),
            ("time", "host_cpu_saved_s", self.host_cpu_saved_s, "s"),
            ("data", "text_bytes", self.text_bytes, "B"), ("data", "object_bytes", self.object_bytes, "B"),
        ]
        rows += [("pages", k, v, "pages") for k, v in self.pages.items()]
        rows += [("bytes", k, v, "B") for k, v in self.bytes.items()]
        rows += [("busy_s", k, v, "s") for k, v in self.busy_s.items()]
        rows += [("utilization", k, v, "fraction") for k, v in self.utilization.items()]
        rows += [("energy_j", k, v, "J") for k, v in self.energy_j.items()]
        rows += [("faults", k, v, "count") for k, v in self.faults.items()]
        return pd.DataFrame(rows, columns=["group", "metric", "value", "unit"])

    # ----------------------------------------------------------------- display
    def __repr__(self) -> str:
        return (f"Report(device={self.device!r}, split={self.split!r}, runs={self.runs}, tasks={self.tasks}, "
                f"pages={self.pages}, makespan_s={self.makespan_s:.6g}, wall_s={self.wall_s:.6g})")

    def _summary_rows(self) -> list[tuple[str, str]]:
        n = self.total_pages
        pages = ", ".join(f"{k} {v}" for k, v in self.pages.items())
        rows = [
            ("device", self.device), ("split", self.split),
            ("runs / tasks", f"{self.runs} / {self.tasks}"),
            ("pages", f"{n} ({pages})"),
            ("text -> objects", f"{_fmt_bytes(self.text_bytes)} -> {_fmt_bytes(self.object_bytes)}"),
            ("bytes", ", ".join(f"{k} {_fmt_bytes(v)}" for k, v in self.bytes.items())),
            ("makespan (modeled)", _fmt_s(self.makespan_s)),
            ("wall clock (real)", _fmt_s(self.wall_s)),
            ("host CPU (modeled)", f"{_fmt_s(self.host_cpu_s)} spent, {_fmt_s(self.host_cpu_saved_s)} saved"),
            ("energy (modeled)", _fmt_j(self.energy_total_j)),
        ]
        faults = {k: v for k, v in self.faults.items() if v}
        rows.append(("faults", ", ".join(f"{k} {v}" for k, v in faults.items()) if faults else "none"))
        return rows

    def _resource_rows(self) -> list[tuple[str, str, str, str, str]]:
        util = self.utilization
        out = []
        for r in RESOURCES:
            if not self.units.get(r) and not self.busy_s.get(r) and not self.energy_j.get(r):
                continue
            out.append((r, str(self.units.get(r, 0)), _fmt_s(self.busy_s.get(r, 0.0)),
                        f"{100 * util.get(r, 0.0):.1f}%", _fmt_j(self.energy_j.get(r, 0.0))))
        return out

    def __str__(self) -> str:
        rows = self._summary_rows()
        w = max(len(k) for k, _ in rows)
        lines = [f"Report: {self.device or '?'} [{self.split or '?'}]"]
        lines += [f"  {k.ljust(w)}  {v}" for k, v in rows]
        res = self._resource_rows()
        if res:
            head = ("resource", "units", "busy", "util", "energy")
            widths = [max(len(head[i]), *(len(r[i]) for r in res)) for i in range(5)]
            lines.append("")
            lines.append("  " + "  ".join(h.rjust(widths[i]) if i else h.ljust(widths[i])
                                          for i, h in enumerate(head)))
            for r in res:
                lines.append("  " + "  ".join(c.rjust(widths[i]) if i else c.ljust(widths[i])
                                              for i, c in enumerate(r)))
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        esc = html.escape
        parts = [f"<div><b>Report</b>: {esc(self.device or '?')} [{esc(self.split or '?')}]",
                 "<table>"]
        parts += [f"<tr><th style='text-align:left'>{esc(k)}</th><td style='text-align:left'>{esc(v)}</td></tr>"
                  for k, v in self._summary_rows()]
        parts.append("</table>")
        res = self._resource_rows()
        if res:
            parts.append("<table><tr><th>resource</th><th>units</th><th>busy</th><th>utilization</th>"
                         "<th>energy</th></tr>")
            for r in res:
                parts.append("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>")
            parts.append("</table>")
        parts.append("</div>")
        return "".join(parts)

    def plot_timeline(self, ax=None, *, max_tasks: Optional[int] = None, legend: bool = True):
        """Gantt chart of the modeled timeline: one row per resource unit
        (overlapping uses of a multi-unit resource are packed into lanes), one
        bar per use, coloured by task. Returns the matplotlib Axes.

        ``max_tasks`` draws only the first tasks (large runs).
        """
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(10, 3.5))
        entries = list(self.timeline)
        if max_tasks is not None:
            entries = [e for e in entries if e[1] < max_tasks]
        # Order resources the way data flows, unknown names after.
        order = {r: i for i, r in enumerate(RESOURCES)}

        def res_key(name: str):
            base = name.split(":", 1)[-1]
            prefix = name.split(":", 1)[0] if ":" in name else ""
            return (prefix, order.get(base, len(order)), base)

        by_res: dict[str, list] = {}
        for res, task, s, e in entries:
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
        ax.set_title(f"{self.device} [{self.split}]: makespan {_fmt_s(self.makespan_s)}")
        if self.makespan_s > 0:
            ax.set_xlim(0, self.makespan_s * 1.02)
        if not rows:
            ax.text(0.5, 0.5, "no timeline recorded", ha="center", va="center", transform=ax.transAxes)
        return ax


def _copy(v):
    if isinstance(v, dict):
        return {k: _copy(x) for k, x in v.items()}
    if isinstance(v, list):
        return list(v)
    return v


# ---------------------------------------------------------------- collecting
class Collector:
    """The Reports recorded while a :func:`collect` block was active."""

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
    run). A no-op outside :func:`collect` blocks."""
    for c in _active.get():
        c.reports.append(report)
