"""``ReportData``: one run's accounting, its derived figures, combining and exports.

Plain data and arithmetic, nothing about showing it: the text table and HTML
(:mod:`ndp_core.report.render`) and the timeline plot
(:mod:`ndp_core.report.timeline`) import this module, and
:class:`ndp_core.report.views.Report` - the class users get - adds them to it.
Only :meth:`ReportData.to_frame` imports pandas, when called.

>>> r = ReportData(pages={"device": 3, "host": 1}, busy_s={"link": 0.5}, units={"link": 1}, makespan_s=1.0)
>>> r.offload_fraction, r.utilization["link"], (r + r).makespan_s
(0.75, 0.5, 2.0)
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Iterable, Optional, Sequence

__all__ = ["ReportData", "OffloadDecision", "RESOURCES", "SIDES", "LINKS"]

#: Resources the timing model accounts for (keys of ``busy_s``/``units``/``energy_j``).
RESOURCES = ("flash", "device_cores", "pipeline", "link", "host_cpu", "p2p", "h2d")
#: Final sides of a task (keys of ``pages``).
SIDES = ("device", "host", "raw")
#: Links data crosses (keys of ``bytes``).
LINKS = ("internal", "host_link", "p2p")

_FAULT_KEYS = ("media_error", "app_failure", "link_timeout", "tq_overflow")
# Fields that add up when runs are combined, whether run one after the other or
# side by side (units, makespan and timeline depend on which; see ReportData.combine).
_SUMMED = ("tasks", "runs", "file_pages", "text_bytes", "object_bytes", "host_cpu_s", "host_cpu_saved_s", "wall_s")
_SUMMED_BY_KEY = ("pages", "bytes", "busy_s", "energy_j", "faults")


def _zeros(keys: Sequence[str], kind=int) -> dict:
    return {k: kind(0) for k in keys}


def _add_dicts(dicts: Iterable[dict]) -> dict:
    out: dict = {}
    for d in dicts:
        for k, v in d.items():
            out[k] = out.get(k, 0) + v
    return out


def _copy(v):
    if isinstance(v, dict):
        return {k: _copy(x) for k, x in v.items()}
    if isinstance(v, list):
        return list(v)
    return v


@dataclass(frozen=True)
class OffloadDecision:
    """Biscuit's sampled offload decision for one read (``split="sampled"``):
    spans sampled from the input were parsed and filtered for real, the whole
    read was modeled from their work counters on the host and on the device,
    and the read ran where the model was faster.

    >>> OffloadDecision(samples=8, sampled_rows=8000, kept_rows=160, host_s=1.2, device_s=0.11,
    ...                 choice="device").selectivity
    0.02
    """

    samples: int  # spans sampled (parsed and filtered on the host)
    sampled_rows: int  # rows they held
    kept_rows: int  # rows the read's filter kept among them
    host_s: float  # modeled makespan of the whole read on the host
    device_s: float  # ... with every span offloaded to the device
    choice: str  # "device" or "host": where the read ran
    sample_wall_s: float = 0.0  # real seconds the sampling took (not modeled)

    @property
    def selectivity(self) -> float:
        """The sampled rows' kept fraction (NaN when the sample held no row)."""
        return self.kept_rows / self.sampled_rows if self.sampled_rows else math.nan


@dataclass(repr=False)
class ReportData:
    """The accounting of one run (or, combined, of several): the fields of a
    :class:`~ndp_core.report.Report` and their arithmetic.

    Fields
    ------
    device, split
        The device's name and the split policy (``"host"``, ``"device"``,
        ``"static:<f>"``, ``"dynamic"``; ``"mixed"`` when combined runs differ).
    runs, tasks
        How many runs (1 unless combined) and tasks (spans of whole records).
    pages
        Page reads by the task's final side: ``"device"`` (parsed in the
        device), ``"host"`` (read as text and parsed on the host), ``"raw"``
        (sent to the device but returned unprocessed, by a full task queue or
        a fault, and parsed on the host). Tasks are spans of whole records, so
        a page holding a task boundary is read by both tasks: these add up to
        at least ``file_pages``.
    file_pages
        Distinct pages of the input the tasks covered (the same for a file
        whatever the task size; summed over the runs of a combined Report).
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
        ``"total"`` (the sum of all the others).
    faults
        Faults seen, by kind (``media_error``, ``app_failure``,
        ``link_timeout``, ``tq_overflow``).
    wall_s
        Real seconds the run took on this machine.
    timeline
        ``(resource, task, start_s, end_s, side)`` tuples of modeled resource
        use (may be empty); ``side`` is the task's final side (:data:`SIDES`).
    meta
        Free-form details (profile, cost model, overrides).
    decisions
        The :class:`OffloadDecision` of each run whose split was ``"sampled"``
        (empty otherwise).
    """

    device: str = ""
    split: str = ""
    tasks: int = 0
    runs: int = 1
    pages: dict = field(default_factory=lambda: _zeros(SIDES))
    file_pages: int = 0
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
    decisions: list = field(default_factory=list)

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

        >>> ReportData(busy_s={"link": 1.0}, units={"link": 1}, makespan_s=4.0).utilization["link"]
        0.25
        """
        out = {}
        for r, busy in self.busy_s.items():
            n = self.units.get(r, 0)
            out[r] = busy / (self.makespan_s * n) if n and self.makespan_s > 0 else 0.0
        return out

    @property
    def energy_total_j(self) -> float:
        """Total modeled energy in joules: ``energy_j["total"]`` when present,
        else the sum of the parts.

        >>> ReportData(energy_j={"flash": 1.5, "platform": 2.0}).energy_total_j
        3.5
        """
        if "total" in self.energy_j:
            return self.energy_j["total"]
        return sum(v for k, v in self.energy_j.items() if k != "total")

    @property
    def empty(self) -> bool:
        """No run recorded (e.g. a ``collect()`` block that read nothing).

        >>> ReportData.combine([]).empty, ReportData(tasks=1).empty
        (True, False)
        """
        return self.runs == 0

    @property
    def page_reads_parsed_on(self) -> dict[str, int]:
        """Page reads by the side that parsed them: ``device``, and ``host``
        (read as text, or returned raw by the device).

        >>> ReportData(pages={"device": 3, "host": 1, "raw": 2}).page_reads_parsed_on
        {'device': 3, 'host': 3}
        """
        return {"device": self.pages.get("device", 0), "host": self.pages.get("host", 0) + self.pages.get("raw", 0)}

    @property
    def page_reads_sent_to(self) -> dict[str, int]:
        """Page reads by where the host sent them first: ``device`` (a task
        command, parsed there or returned raw) or ``host`` (a plain read of text).

        >>> ReportData(pages={"device": 3, "host": 1, "raw": 2}).page_reads_sent_to
        {'device': 5, 'host': 1}
        """
        return {"device": self.pages.get("device", 0) + self.pages.get("raw", 0), "host": self.pages.get("host", 0)}

    @property
    def total_pages(self) -> int:
        """Page reads of every side.

        >>> ReportData(pages={"device": 3, "host": 1, "raw": 1}).total_pages
        5
        """
        return sum(self.pages.values())

    @property
    def offload_fraction(self) -> float:
        """Share of pages parsed in the device.

        >>> ReportData(pages={"device": 3, "host": 1}).offload_fraction
        0.75
        """
        n = self.total_pages
        return self.pages.get("device", 0) / n if n else 0.0

    # -------------------------------------------------------------- constructors
    @classmethod
    def host_only(cls, pages: int, text_bytes: int, wall_s: float, device: str = "host-only",
                  tasks: int = 0, file_pages: Optional[int] = None) -> "ReportData":
        """The report of a run with no offload (``ndp_core.device.HostOnly``): every
        page parsed on the host, all text over the link, and - nothing being
        modeled - makespan and host CPU time equal to the measured wall time.

        >>> r = ReportData.host_only(pages=8, text_bytes=32768, wall_s=0.5)
        >>> r.pages["host"], r.bytes["host_link"], r.makespan_s
        (8, 32768, 0.5)
        """
        return cls(
            device=device, split="host", tasks=tasks,
            pages={"device": 0, "host": int(pages), "raw": 0},
            file_pages=int(pages if file_pages is None else file_pages),
            bytes={"internal": int(text_bytes), "host_link": int(text_bytes), "p2p": 0},
            text_bytes=int(text_bytes),
            busy_s={"host_cpu": float(wall_s)}, units={"host_cpu": 1},
            makespan_s=float(wall_s), host_cpu_s=float(wall_s), host_cpu_saved_s=0.0,
            wall_s=float(wall_s), meta={"cost_model": "measured (host only)"},
        )

    # ---------------------------------------------------------------- combining
    @classmethod
    def combine(cls, reports: Iterable["ReportData"], parallel: bool = False) -> "ReportData":
        """One Report for several runs: counts, bytes, busy time, energy, faults
        and wall time add up; the makespan adds up for runs made one after the
        other (``parallel=False``) and is the longest one for runs made at the
        same time on separate devices (``parallel=True``, e.g. Dask workers,
        where resource units add up too).

        >>> a = ReportData(tasks=1, makespan_s=2.0, busy_s={"link": 1.0}, units={"link": 1})
        >>> ReportData.combine([a, a]).makespan_s, ReportData.combine([a, a], parallel=True).makespan_s
        (4.0, 2.0)
        >>> ReportData.combine([a, a], parallel=True).units["link"]
        2
        """
        reports = list(reports)
        if not reports:
            return cls(runs=0)
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
        for i, r in enumerate(reports):
            if r.timeline:
                if parallel:  # "<i>:" even if only one run has a timeline: units add up over every run
                    prefix = f"{i}:"
                    timeline.extend((prefix + res, *rest) for res, *rest in r.timeline)
                else:
                    timeline.extend((res, t, s + offset, e + offset, *rest) for res, t, s, e, *rest in r.timeline)
            offset += r.makespan_s
        meta: dict = {}
        for k in reports[0].meta:
            vals = [r.meta.get(k) for r in reports]
            if all(v == vals[0] for v in vals):
                meta[k] = vals[0]
        meta["combined"] = "parallel" if parallel else "sequential"
        sums = {name: sum(getattr(r, name) for r in reports) for name in _SUMMED}
        sums.update({name: _add_dicts(getattr(r, name) for r in reports) for name in _SUMMED_BY_KEY})
        return cls(device=device, split=split, units=units, makespan_s=makespan,
                   timeline=timeline, meta=meta, decisions=[d for r in reports for d in r.decisions], **sums)

    def __add__(self, other: "ReportData") -> "ReportData":
        if not isinstance(other, ReportData):
            return NotImplemented
        return type(self).combine([self, other])

    def __radd__(self, other):
        # sum(reports) starts from 0
        if other == 0:
            return type(self).combine([self])
        return NotImplemented

    # ----------------------------------------------------------------- exports
    def to_dict(self, timeline: bool = True) -> dict[str, Any]:
        """Plain-Python dict of every field (plus ``utilization`` and
        ``energy_total_j``); ``timeline=False`` leaves the timeline out.

        >>> sorted(ReportData().to_dict())[:4]
        ['busy_s', 'bytes', 'decisions', 'device']
        """
        d = {f.name: _copy(getattr(self, f.name)) for f in fields(self)}
        if not timeline:
            d.pop("timeline")
        else:
            d["timeline"] = [tuple(t) for t in self.timeline]
        d["decisions"] = [asdict(decision) for decision in self.decisions]
        d["utilization"] = self.utilization
        d["energy_total_j"] = self.energy_total_j
        return d

    def to_frame(self, kind: str = "metrics"):
        """A pandas DataFrame.

        ``kind="metrics"`` (default): one row per metric, columns ``group``,
        ``metric``, ``value``, ``unit`` - easy to filter, concatenate across
        runs and pivot. ``kind="resources"``: one row per resource, columns
        ``units``, ``busy_s``, ``utilization``, ``energy_j``.

        >>> ReportData(makespan_s=1.0).to_frame().set_index("metric").loc["makespan_s", "value"]
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
            ("data", "file_pages", self.file_pages, "pages"),
            ("data", "text_bytes", self.text_bytes, "B"), ("data", "object_bytes", self.object_bytes, "B"),
        ]
        rows += [("pages", k, v, "pages") for k, v in self.pages.items()]
        rows += [("bytes", k, v, "B") for k, v in self.bytes.items()]
        rows += [("busy_s", k, v, "s") for k, v in self.busy_s.items()]
        rows += [("utilization", k, v, "fraction") for k, v in self.utilization.items()]
        rows += [("energy_j", k, v, "J") for k, v in self.energy_j.items()]
        rows += [("faults", k, v, "count") for k, v in self.faults.items()]
        return pd.DataFrame(rows, columns=["group", "metric", "value", "unit"])

    # ---------------------------------------------------------------- debugging
    def __repr__(self) -> str:
        return (f"{type(self).__name__}(device={self.device!r}, split={self.split!r}, runs={self.runs}, tasks={self.tasks}, "
                f"pages={self.pages}, makespan_s={self.makespan_s:.6g}, wall_s={self.wall_s:.6g})")

