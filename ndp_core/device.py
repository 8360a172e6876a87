"""The ``Device`` protocol: what a reader needs from a (computational) storage device.

A reader cuts its input into *tasks* (one span of whole records covering a run
of device pages), runs each task's StorageApp on the side a split policy
chooses, and afterwards hands the tasks' work counters to the device, which
answers with a :class:`Schedule`: the side each task ended on and the modeled
times, as a :class:`~ndp_core.report.Report`.

Two implementations exist: :class:`HostOnly` here (no offload, the baseline)
and ``device_emulator.ComputationalSSD`` (an emulated SSD with a timing model).

>>> from ndp_core.device import HostOnly, SplitPolicy
>>> SplitPolicy.parse("static:0.25").device_share
0.25
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Mapping, Protocol, Sequence, runtime_checkable

from ndp_core.report import OffloadDecision, Report

# Where a task ended up: parsed by the device, parsed by the host, or sent to
# the host raw by a full task queue (dynamic mode) and parsed there.
DEVICE, HOST, RAW = "device", "host", "raw"

# Faults a device can inject into a task's command (codes the engine knows;
# names are the keys of ``Report.faults``).
FAULT_NONE = 0
FAULT_MEDIA = 1  # uncorrectable page read: the command fails with IO_ERROR
FAULT_APP = 2  # the StorageApp fails: APP_ERROR
FAULT_TIMEOUT = 3  # the completion never arrives in time: the host retries
FAULT_TQ_OVERFLOW = 4  # the task queue rejects the task: the page comes back raw
FAULT_NAMES = {FAULT_MEDIA: "media_error", FAULT_APP: "app_failure", FAULT_TIMEOUT: "link_timeout",
               FAULT_TQ_OVERFLOW: "tq_overflow"}


@dataclass(frozen=True)
class SplitPolicy:
    """How tasks are shared between host and device.

    ``"host"`` (all on the host), ``"device"`` (all on the device),
    ``"static:<fraction>"`` (that fraction of the file's blocks on the
    device, spread evenly; blocks are ``block_size`` bytes, so it is that
    fraction of the bytes to within half a block, and a Report shows the
    share realised), ``"dynamic"`` (every task goes to the device; its task
    queue returns a task raw when full, decided in modeled time) or
    ``"sampled"`` (Biscuit: the read samples a few spans of its input, models
    the whole read on the host and on the device from their real work
    counters, and runs as ``"host"`` or ``"device"``, whichever the model
    finds faster: :func:`decide_offload`).

    >>> [SplitPolicy.parse("static:0.5").static_side(i) for i in range(4)]
    ['device', 'host', 'device', 'host']
    >>> [SplitPolicy.parse("static:0.25").static_side(i) for i in range(11)].count("device")
    3
    """

    kind: str  # "host" | "device" | "static" | "dynamic" | "sampled"
    device_share: float = 0.0

    @classmethod
    def parse(cls, split: "str | SplitPolicy") -> "SplitPolicy":
        if isinstance(split, SplitPolicy):
            return split
        if split in ("host", "device", "dynamic", "sampled"):
            return cls(split, {"host": 0.0, "device": 1.0, "dynamic": 1.0, "sampled": 0.0}[split])
        if isinstance(split, str) and split.startswith("static:"):
            try:
                share = float(split.split(":", 1)[1])
            except ValueError:
                share = -1.0
            if 0.0 <= share <= 1.0:
                return cls("static", share)
        raise ValueError(f"split must be 'host', 'device', 'dynamic', 'sampled' or 'static:<fraction in [0, 1]>', "
                         f"got {split!r}")

    def static_side(self, index: int) -> str:
        """The side of task ``index`` before any modeled-time decision: static
        shares are spread evenly, centred (task i is on the device when
        ``round((i + 1) * f) > round(i * f)``, halves rounding up), so any
        first n tasks hold ``n * f`` device tasks to within one half.
        ``"sampled"`` has no side until a read has decided it (:func:`decide_offload`)."""
        if self.kind == "sampled":
            raise ValueError("split='sampled' is decided by the read, from a sample of its input: "
                             "its tasks run as 'host' or 'device'")
        if self.kind == "host":
            return HOST
        if self.kind in ("device", "dynamic"):
            return DEVICE
        f = self.device_share
        return DEVICE if int((index + 1) * f + 0.5 + 1e-9) > int(index * f + 0.5 + 1e-9) else HOST

    def __str__(self) -> str:
        return f"static:{self.device_share:g}" if self.kind == "static" else self.kind


@dataclass
class TaskWork:
    """One task as the timing model sees it.

    ``counters`` are the work counters the StorageApp declares as modeled
    (:class:`ndp_core.counters.WorkCounters`), by name: the device's profile
    prices each one; ``object_bytes`` is the size of the Arrow
    buffers the task produced (what crosses the link when the device parsed
    it); ``faults`` the faults injected into its commands, by kind.
    """

    index: int
    first_page: int
    n_pages: int
    text_bytes: int
    object_bytes: int
    counters: Mapping[str, int]
    side: str = HOST  # the side it was run on functionally (DEVICE or HOST)
    faults: Mapping[str, int] = field(default_factory=dict)
    measured_s: float = 0.0  # wall seconds the kernel took on this machine (for calibration)
    offloadable: bool = True  # False: the task cannot run on the device (e.g. over one command's pages)


@dataclass
class Schedule:
    """The device's answer for a run: each task's final side and the Report."""

    sides: list[str]
    report: Report


@runtime_checkable
class Device(Protocol):
    """What ``arrow_bridge.read_csv(..., device=...)`` and Dask need from a device."""

    name: str
    page_size: int
    # Optional, so not declared (a runtime-checkable Protocol would demand it):
    # ``task_bytes``, the span size a read uses when the caller sets no
    # ``block_size`` (a device with a task queue wants many tasks per slot);
    # absent or None: the reader's default.

    @property
    def engine(self):  # -> Optional[ndp_core.Engine]: None when nothing runs on a device
        ...

    def fault_for(self, task: int, attempt: int) -> int:
        """The fault code to inject into attempt ``attempt`` of task ``task``'s
        device command (0: none). Deterministic."""
        ...

    def schedule(self, tasks: Sequence[TaskWork], split: SplitPolicy, wall_s: float) -> Schedule:
        """Final sides and modeled times for a finished run (deterministic)."""
        ...


class HostOnly:
    """No offload: every task is parsed on the host. The baseline device.

    Its report counts pages and link bytes (all text) and wall-clock time; it
    models no hardware, so modeled times are the measured ones.

    >>> HostOnly().engine is None
    True
    """

    name = "host-only"
    task_bytes = None

    def __init__(self, page_size: int = 4096):
        self.page_size = page_size

    @property
    def engine(self):
        return None

    def fault_for(self, task: int, attempt: int) -> int:
        return 0

    def schedule(self, tasks: Sequence[TaskWork], split: SplitPolicy, wall_s: float) -> Schedule:
        report = Report.host_only(
            pages=sum(t.n_pages for t in tasks),
            file_pages=distinct_pages(tasks),
            text_bytes=sum(t.text_bytes for t in tasks),
            wall_s=wall_s,
            device=self.name,
            tasks=len(tasks),
        )
        return Schedule([HOST] * len(tasks), report)

    def __repr__(self) -> str:
        return f"HostOnly(page_size={self.page_size})"


def distinct_pages(tasks: Sequence[TaskWork]) -> int:
    """Pages the tasks cover, each counted once (a page holding the boundary
    of two tasks is read by both).

    >>> distinct_pages([TaskWork(0, 0, 2, 9, 0, {}), TaskWork(1, 1, 2, 9, 0, {}), TaskWork(2, 5, 1, 9, 0, {})])
    4
    """
    covered, end = 0, 0
    for first, n in sorted((t.first_page, t.n_pages) for t in tasks if t.n_pages > 0):
        covered += max(0, first + n - max(first, end))
        end = max(end, first + n)
    return covered


def default_workers() -> int:
    """Real threads an emulated device runs apps on (not its modeled core count)."""
    return max(1, os.cpu_count() or 1)


#: Most tasks :func:`decide_offload` models per side: a larger input is modeled as
#: this many tasks of its samples and the makespans scaled to its size.
MODELED_TASKS = 1024


def extrapolated_tasks(samples: Sequence[TaskWork], text_bytes: int, task_bytes: int,
                       page_size: int) -> list[TaskWork]:
    """An input of ``text_bytes`` cut into tasks of ``task_bytes``, each a copy
    of the sample nearest its place in the input (``samples`` in input order)
    with its counters and object bytes scaled to the task's length; every task
    on the device.

    >>> s = [TaskWork(0, 0, 1, 100, 10, {"rows": 4}), TaskWork(1, 9, 1, 200, 0, {"rows": 6})]
    >>> [(t.first_page, t.n_pages, t.text_bytes, t.object_bytes, t.counters["rows"])
    ...  for t in extrapolated_tasks(s, 250, 100, 64)]
    [(0, 2, 100, 10, 4), (1, 3, 100, 10, 4), (3, 1, 50, 0, 2)]
    """
    n = max(1, -(-text_bytes // task_bytes))
    tasks = []
    for i in range(n):
        sample = samples[i * len(samples) // n]
        start = i * task_bytes
        length = min(task_bytes, text_bytes - start)
        scale = length / sample.text_bytes if sample.text_bytes else 0.0
        first = start // page_size
        tasks.append(TaskWork(i, first, max(1, -(-(start + length) // page_size) - first), length,
                              round(sample.object_bytes * scale),
                              {name: round(count * scale) for name, count in sample.counters.items()}, DEVICE))
    return tasks


def decide_offload(device: Device, samples: Sequence[TaskWork], text_bytes: int, task_bytes: int, *,
                   sampled_rows: int, kept_rows: int, sample_wall_s: float = 0.0) -> OffloadDecision:
    """Biscuit's offload decision for a read of ``text_bytes`` in tasks of
    ``task_bytes``: the whole read modeled from the work counters of
    ``samples`` (tasks parsed and filtered for real; ``sampled_rows`` rows, of
    which the filter kept ``kept_rows``) on the host (``split="host"``) and on
    the device (``split="device"``) by ``device.schedule``; the device is
    chosen when its makespan is shorter. Biscuit's planner compares the
    sampled selectivity with a threshold; the model compares the two times
    the selectivity leads to (kept rows cross the link, rejected ones do not).
    Without samples the read stays on the host. Inputs of more than
    :data:`MODELED_TASKS` tasks are modeled as that many, scaled to their size.

    >>> samples = [TaskWork(0, 0, 1, 4096, 0, {}, DEVICE)]
    >>> d = decide_offload(HostOnly(), samples, 1 << 20, 4096, sampled_rows=100, kept_rows=2)
    >>> d.choice, d.selectivity
    ('host', 0.02)
    """
    if not samples:
        return OffloadDecision(0, sampled_rows, kept_rows, math.nan, math.nan, HOST, sample_wall_s)
    modeled_bytes = min(text_bytes, MODELED_TASKS * task_bytes)
    tasks = extrapolated_tasks(samples, modeled_bytes, task_bytes, int(device.page_size))
    scale = text_bytes / modeled_bytes if modeled_bytes else 1.0
    host_s, device_s = (device.schedule(tasks, SplitPolicy.parse(side), 0.0).report.makespan_s * scale
                        for side in (HOST, DEVICE))
    return OffloadDecision(len(samples), sampled_rows, kept_rows, host_s, device_s,
                           DEVICE if device_s < host_s else HOST, sample_wall_s)
