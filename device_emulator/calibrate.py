"""Fit this machine's host costs from measured tasks.

The reader measures how long each task's kernels took on the host
(``TaskWork.measured_s``) next to its work counters. :func:`calibrate` fits
non-negative cycles per work unit (each counter the tasks carry, and
``tasks``, a fixed cost per task) at the host clock (non-negative least
squares, relative error by default) so that the model's host times match this
machine. The result plugs into a profile:

>>> from ndp_core.device import TaskWork
>>> sizes = [(10000, 900), (50000, 7000), (200000, 12000), (80000, 10000), (400000, 30000)]
>>> samples = [TaskWork(i, 0, 1, n, 0, {"bytes_scanned": n, "ints": k},
...                     measured_s=(5 * n + 40 * k + 20000) / 3e9)
...            for i, (n, k) in enumerate(sizes)]
>>> costs = calibrate(samples, clock_MHz=3000)
>>> round(costs.cycles["bytes_scanned"], 2), round(costs.cycles["ints"], 1), round(costs.cycles["tasks"])
(5.0, 40.0, 20000)
>>> from device_emulator.profile import load_profile
>>> load_profile("modern-gen4", host=costs)["host.cycles.ints"] == costs.cycles["ints"]
True
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional, Sequence

import numpy as np

from ndp_core.device import TaskWork

from device_emulator.profile.schema import TASK_PRICE

__all__ = ["calibrate", "HostCosts", "host_clock_MHz", "nnls", "counter_names"]


def host_clock_MHz(default: float = 3000.0) -> float:
    """This machine's CPU clock in MHz (cpufreq maximum, else /proc/cpuinfo, else ``default``)."""
    try:
        khz = Path("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq").read_text().strip()
        return int(khz) / 1000.0
    except (OSError, ValueError):
        pass
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("cpu mhz"):
                return float(line.split(":", 1)[1])
    except (OSError, ValueError):
        pass
    return default


def nnls(A: np.ndarray, b: np.ndarray, max_iter: Optional[int] = None) -> np.ndarray:
    """Non-negative least squares, ``argmin ||A x - b|| s.t. x >= 0`` (Lawson-Hanson
    active set; numpy only).

    >>> nnls(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([2.0, -1.0])).tolist()
    [2.0, 0.0]
    """
    A = np.asarray(A, dtype=float)
    b = np.asarray(b, dtype=float)
    m, n = A.shape
    max_iter = max_iter or 3 * n + 10
    passive = np.zeros(n, dtype=bool)
    x = np.zeros(n)
    tol = 10 * np.finfo(float).eps * max(m, n) * (np.abs(A).sum(axis=0).max() if A.size else 1.0)
    w = A.T @ (b - A @ x)
    for _ in range(max_iter):
        if passive.all() or not (w[~passive] > tol).any():
            break
        j = int(np.argmax(np.where(passive, -np.inf, w)))
        passive[j] = True
        while True:
            s = np.zeros(n)
            s[passive] = np.linalg.lstsq(A[:, passive], b, rcond=None)[0]
            if (s[passive] > 0).all():
                x = s
                break
            neg = passive & (s <= 0)
            alpha = np.min(x[neg] / (x[neg] - s[neg]))
            x = x + alpha * (s - x)
            passive &= x > tol
            x[~passive] = 0.0
            if not passive.any():
                break
        w = A.T @ (b - A @ x)
    return x


@dataclass
class HostCosts:
    """Fitted host costs: cycles per work unit at ``clock_MHz``.

    ``cycles`` holds the units the samples could identify (a unit no sample
    exercised keeps the profile's value). ``r2`` and ``rel_rmse`` describe
    the fit on the samples. Pass it as ``load_profile(..., host=costs)`` or
    ``ComputationalSSD(..., host_costs=costs)``.
    """

    clock_MHz: float
    cycles: dict[str, float]
    n_samples: int
    r2: float
    rel_rmse: float
    cores: Optional[int] = None
    unfitted: tuple[str, ...] = field(default_factory=tuple)

    def to_section(self) -> dict:
        """The ``[host]`` section entries this fit sets."""
        d: dict = {"clock_MHz": self.clock_MHz, "cycles": dict(self.cycles)}
        if self.cores:
            d["cores"] = self.cores
        return d

    def to_overrides(self) -> dict[str, float]:
        """The same as dotted overrides (``{"host.cycles.ints": ...}``)."""
        d: dict = {"host.clock_MHz": self.clock_MHz}
        d.update({f"host.cycles.{k}": v for k, v in self.cycles.items()})
        if self.cores:
            d["host.cores"] = self.cores
        return d

    def predict_s(self, task: TaskWork) -> float:
        """Modeled host seconds of ``task`` with these costs (fitted units only)."""
        cyc = self.cycles.get(TASK_PRICE, 0.0)
        cyc += sum(task.counters.get(u, 0) * c for u, c in self.cycles.items() if u != TASK_PRICE)
        return cyc / (self.clock_MHz * 1e6)

    def __str__(self) -> str:
        parts = ", ".join(f"{k} {v:.3g}" for k, v in self.cycles.items())
        return (f"HostCosts at {self.clock_MHz:g} MHz from {self.n_samples} tasks "
                f"(R^2 {self.r2:.3f}, rel. RMSE {self.rel_rmse:.1%}): {parts}")


def counter_names(samples: Sequence[TaskWork]) -> list[str]:
    """The counter names the tasks carry, in first-seen order.

    >>> counter_names([TaskWork(0, 0, 1, 9, 0, {"rows": 1}), TaskWork(1, 0, 1, 9, 0, {"rows": 2, "ints": 3})])
    ['rows', 'ints']
    """
    return list(dict.fromkeys(name for task in samples for name in task.counters))


def calibrate(samples: Sequence[TaskWork], *, clock_MHz: Optional[float] = None,
              units: Optional[Iterable[str]] = None, relative: bool = True,
              cores: Optional[int] = None) -> HostCosts:
    """Fit host cycles per work unit from tasks measured on this machine.

    ``samples``: tasks with ``measured_s > 0`` (others are ignored) and their
    counters. ``clock_MHz``: the clock the cycles refer to (default: this
    machine's, :func:`host_clock_MHz`); the fitted host times do not depend on
    it. ``units``: which work units to fit (default: every counter the samples
    carry, then ``"tasks"``, a fixed cost per task). ``relative=True`` weighs each task by ``1 / measured_s`` (fits
    relative error, so small tasks count as much as big ones). ``cores``: also
    set ``host.cores`` (e.g. the reader's thread count).

    Raises ``ValueError`` with fewer measured tasks than identifiable units.
    """
    clock = float(clock_MHz) if clock_MHz else host_clock_MHz()
    rows = [t for t in samples if t.measured_s and t.measured_s > 0]
    if not rows:
        raise ValueError("calibrate needs tasks with measured_s > 0")
    units = counter_names(rows) + [TASK_PRICE] if units is None else list(units)
    A = np.array([[1.0 if u == TASK_PRICE else float(t.counters.get(u, 0)) for u in units] for t in rows])
    y = np.array([t.measured_s * clock * 1e6 for t in rows])
    used = [j for j in range(len(units)) if np.any(A[:, j] != 0)]
    unfitted = tuple(units[j] for j in range(len(units)) if j not in used)
    if len(rows) < len(used):
        raise ValueError(f"calibrate needs at least {len(used)} measured tasks for units "
                         f"{[units[j] for j in used]}, got {len(rows)}")
    Au = A[:, used]
    w = 1.0 / y if relative else np.ones_like(y)
    Aw = Au * w[:, None]
    yw = y * w
    scale = np.linalg.norm(Aw, axis=0)
    scale[scale == 0] = 1.0
    x = nnls(Aw / scale, yw) / scale
    pred = Au @ x
    ss_res = float(np.sum((y - pred) ** 2))
    ss_tot = float(np.sum((y - y.mean()) ** 2))
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else (1.0 if ss_res == 0 else 0.0)
    rel_rmse = float(np.sqrt(np.mean(((pred - y) / y) ** 2)))
    cycles = {units[j]: float(x[k]) for k, j in enumerate(used)}
    return HostCosts(clock_MHz=clock, cycles=cycles, n_samples=len(rows), r2=r2, rel_rmse=rel_rmse,
                     cores=cores, unfitted=unfitted)
