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

import os
from dataclasses import dataclass, field
from typing import Mapping, Optional, Protocol, Sequence, runtime_checkable

from ndp_core.report import Report

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
    share realised) or ``"dynamic"`` (every task goes to the device; its task
    queue returns a task raw when full, decided in modeled time).

    >>> [SplitPolicy.parse("static:0.5").static_side(i) for i in range(4)]
    ['device', 'host', 'device', 'host']
    >>> [SplitPolicy.parse("static:0.25").static_side(i) for i in range(11)].count("device")
    3
    """

    kind: str  # "host" | "device" | "static" | "dynamic"
    device_share: float = 0.0

    @classmethod
    def parse(cls, split: "str | SplitPolicy") -> "SplitPolicy":
        if isinstance(split, SplitPolicy):
            return split
        if split in ("host", "device", "dynamic"):
            return cls(split, {"host": 0.0, "device": 1.0, "dynamic": 1.0}[split])
        if isinstance(split, str) and split.startswith("static:"):
            try:
                share = float(split.split(":", 1)[1])
            except ValueError:
                share = -1.0
            if 0.0 <= share <= 1.0:
                return cls("static", share)
        raise ValueError(f"split must be 'host', 'device', 'dynamic' or 'static:<fraction in [0, 1]>', "
                         f"got {split!r}")

    def static_side(self, index: int) -> str:
        """The side of task ``index`` before any modeled-time decision: static
        shares are spread evenly, centred (task i is on the device when
        ``round((i + 1) * f) > round(i * f)``, halves rounding up), so any
        first n tasks hold ``n * f`` device tasks to within one half."""
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
