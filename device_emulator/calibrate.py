"""Fit this machine's host costs from measured tasks, and say how far to trust the fit.

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
>>> round(costs.r2, 6), costs.n_dropped, costs.warnings
(1.0, 0, ())
>>> from device_emulator.profile import load_profile
>>> load_profile("modern-gen4", host=costs)["host.cycles.ints"] == costs.cycles["ints"]
True

What the fit reports (:class:`HostCosts`): R² and the relative RMSE over the
tasks it kept, the tasks it dropped as outliers (a task measured far slower or
faster than the fit of all others: a preempted thread, a one-time cost), the
relative error per source when the samples are labelled, the units no task
exercised and the units whose counts rise together so that their costs cannot
be told apart. Each of these that makes the fit doubtful is also a
:class:`CalibrationWarning` (a ``UserWarning``) naming the reason:

>>> one_shape = [TaskWork(i, 0, 1, n, 0, {"bytes_scanned": n, "fields": n // 10, "bools": 0},
...                       measured_s=(4 * n + 30 * (n // 10)) / 3e9) for i, n in enumerate([10**4, 10**5, 10**6])]
>>> import warnings
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore", CalibrationWarning)  # the same sentences are in costs.warnings
...     costs = calibrate(one_shape, clock_MHz=3000)
>>> print("\\n".join(costs.warnings))  # doctest: +ELLIPSIS
bools: no task exercised them; they keep the profile's price
bytes_scanned, fields cannot be told apart: their counts rise together in these tasks, ...
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional, Sequence

import numpy as np

from ndp_core.device import TaskWork

from device_emulator.profile.schema import TASK_PRICE

__all__ = ["calibrate", "CalibrationWarning", "HostCosts", "SourceFit", "host_clock_MHz", "nnls", "counter_names"]

# ---- when a fit is doubtful (the thresholds, and why these) ------------------------------------------
#: R² below this warns. R² is the share of the spread in per-task time the counters explain;
#: spans of several sizes spread the times over an order of magnitude, and the reader's fits
#: on lineitem, the edge list and the float matrix reach 0.98-0.998 on a shared 2-core VM
#: (``benchmarks/results/calibration.json``), so under 0.9 something other than the counted
#: work drives the times (noise, or tasks that took other code paths).
POOR_R2 = 0.9
#: Relative RMSE above this warns: a typical task's modeled host time off by a quarter is the
#: size of the effects the model is used to compare (the papers' offload gains are 1.3-3x),
#: while timing noise on a busy machine is 3-10% per task.
POOR_REL_RMSE = 0.25
#: A labelled source whose modeled total is off its measured total by more than this warns:
#: the model's host time for a read is the sum over its tasks, so that read's host/device
#: comparison would be off by as much.
POOR_SOURCE_RATIO = 0.2
#: Outliers: tasks whose log(measured / fitted) lies more than OUTLIER_MADS robust standard
#: deviations (1.4826 MAD) from the median, and at least OUTLIER_FLOOR (28%) from it, are
#: dropped and the fit is redone (up to OUTLIER_ROUNDS times). Noise on a shared machine only
#: ever adds time and comes in bursts (a preempted thread); a linear model with the right
#: units leaves Gaussian-like residuals, for which 5 deviations happen once in ~2 million.
OUTLIER_MADS = 5.0
OUTLIER_FLOOR = 0.25
OUTLIER_ROUNDS = 3
#: At most this share of the tasks is dropped: more "outliers" than that are a misfit, not
#: outliers, and are kept (and the fit's error says so).
MAX_DROPPED = 0.1
#: Units cannot be told apart when some change of their prices that changes the tasks'
#: predicted times by only CONFOUND_NOISE RMS (2%: per-task times are not measured better than
#: that on any machine) moves more than CONFOUND_SHARE of the modeled time between them. This
#: depends on the counters only, not on the timings or how many tasks there are: a million
#: tasks of one file's shape still cannot separate that file's bytes from its fields.
CONFOUND_NOISE = 0.02
CONFOUND_SHARE = 0.1


class CalibrationWarning(UserWarning):
    """A host-cost fit to use with care, and why (poor fit, unexercised or confounded units)."""


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




@dataclass(frozen=True)
class SourceFit:
    """How well the fitted costs predict one source's tasks (``calibrate(..., sources=...)``)."""

    n_samples: int
    rel_rmse: float  # RMS of (modeled - measured) / measured over the source's kept tasks
    ratio: float  # modeled / measured seconds, summed over the source's kept tasks

    def __str__(self) -> str:
        return f"{self.n_samples} tasks, rel. RMSE {self.rel_rmse:.1%}, modeled/measured {self.ratio:.2f}"


@dataclass
class HostCosts:
    """Fitted host costs: cycles per work unit at ``clock_MHz``.

    ``cycles`` holds the units the samples could identify (a unit no sample
    exercised keeps the profile's value: ``unfitted``). ``r2`` and
    ``rel_rmse`` describe the fit on the ``n_samples`` tasks it kept;
    ``n_dropped`` tasks were left out as outliers. ``per_source`` has each
    labelled source's fit quality, ``confounded`` the groups of units whose
    costs the samples cannot tell apart (their split within a group is
    arbitrary; their sum holds for tasks shaped like the samples), and
    ``warnings`` every reason to doubt the fit (also issued as
    :class:`CalibrationWarning`). ``left_out``: how these costs predict the
    measured tasks the caller kept out of the fit (``calibrate(...,
    left_out=...)``; :func:`arrow_bridge.calibrate`: each read's first span,
    parsed on the slower general path). Pass it as ``load_profile(..., host=costs)``
    or ``ComputationalSSD(..., host_costs=costs)``.
    """

    clock_MHz: float
    cycles: dict[str, float]
    n_samples: int
    r2: float
    rel_rmse: float
    cores: Optional[int] = None
    unfitted: tuple[str, ...] = field(default_factory=tuple)
    n_dropped: int = 0
    per_source: dict[str, SourceFit] = field(default_factory=dict)
    confounded: tuple[tuple[str, ...], ...] = field(default_factory=tuple)
    warnings: tuple[str, ...] = field(default_factory=tuple)
    left_out: Optional[SourceFit] = None

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
        dropped = f", {self.n_dropped} dropped as outliers" if self.n_dropped else ""
        lines = [f"HostCosts at {self.clock_MHz:g} MHz from {self.n_samples} tasks{dropped} "
                 f"(R^2 {self.r2:.3f}, rel. RMSE {self.rel_rmse:.1%}): {parts}"]
        lines += [f"  {name}: {fit}" for name, fit in self.per_source.items()]
        if self.left_out is not None:
            lines.append(f"  left out of the fit: {self.left_out}")
        lines += [f"  warning: {w}" for w in self.warnings]
        return "\n".join(lines)


def counter_names(samples: Sequence[TaskWork]) -> list[str]:
    """The counter names the tasks carry, in first-seen order.

    >>> counter_names([TaskWork(0, 0, 1, 9, 0, {"rows": 1}), TaskWork(1, 0, 1, 9, 0, {"rows": 2, "ints": 3})])
    ['rows', 'ints']
    """
    return list(dict.fromkeys(name for task in samples for name in task.counters))


def calibrate(samples: Sequence[TaskWork], *, clock_MHz: Optional[float] = None,
              units: Optional[Iterable[str]] = None, relative: bool = True,
              cores: Optional[int] = None, sources: Optional[Sequence[str]] = None,
              robust: bool = True, left_out: Sequence[TaskWork] = (), stacklevel: int = 2) -> HostCosts:
    """Fit host cycles per work unit from tasks measured on this machine.

    ``samples``: tasks with ``measured_s > 0`` (others are ignored) and their
    counters. ``clock_MHz``: the clock the cycles refer to (default: this
    machine's, :func:`host_clock_MHz`); the fitted host times do not depend on
    it. ``units``: which work units to fit (default: every counter the samples
    carry, then ``"tasks"``, a fixed cost per task). ``relative=True`` weighs
    each task by ``1 / measured_s`` (fits relative error, so small tasks count
    as much as big ones). ``cores``: also set ``host.cores`` (e.g. the
    reader's thread count). ``sources``: a label per sample (say its file),
    for the fit quality per source (``HostCosts.per_source``). ``robust``:
    drop outlier tasks (far off the fit of all others, see ``OUTLIER_MADS``;
    at most ``MAX_DROPPED`` of them) and fit again. ``left_out``: measured
    tasks not to fit, whose prediction is reported (``HostCosts.left_out``).
    ``stacklevel``: where warnings point (a function wrapping this one passes 3).

    Warns (:class:`CalibrationWarning`, each reason also in
    ``HostCosts.warnings``) when R² is under ``POOR_R2`` or the relative RMSE
    over ``POOR_REL_RMSE``, when a source's modeled total is off by more than
    ``POOR_SOURCE_RATIO``, when a unit got no samples, and when units cannot
    be told apart (``CONFOUND_*``: e.g. tasks from one file only, whose
    bytes, rows and fields all rise together).

    Raises ``ValueError`` with fewer measured tasks than identifiable units.
    """
    clock = float(clock_MHz) if clock_MHz else host_clock_MHz()
    if sources is not None and len(sources) != len(samples):
        raise ValueError(f"sources: one label per sample, got {len(sources)} for {len(samples)} samples")
    keep = [i for i, t in enumerate(samples) if t.measured_s and t.measured_s > 0]
    if not keep:
        raise ValueError("calibrate needs tasks with measured_s > 0")
    rows = [samples[i] for i in keep]
    labels = [str(sources[i]) for i in keep] if sources is not None else None
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
    x, kept, misfits = _robust_fit(Au, y, w, robust)
    Ak, yk = Au[kept], y[kept]
    pred = Ak @ x
    ss_res = float(np.sum((yk - pred) ** 2))
    ss_tot = float(np.sum((yk - yk.mean()) ** 2))
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else (1.0 if ss_res == 0 else 0.0)
    rel_rmse = float(np.sqrt(np.mean(((pred - yk) / yk) ** 2)))
    per_source = {} if labels is None else _source_fits(pred, yk, [lab for lab, k in zip(labels, kept) if k])
    # Unit-norm columns make the analysis blind to a constant weight: only relative weights matter.
    confounded = _confounded(Ak, w[kept], [units[j] for j in used])
    notes = _notes(unfitted, r2, rel_rmse, yk, per_source, confounded, misfits, len(y))
    for note in notes:
        warnings.warn(note, CalibrationWarning, stacklevel=stacklevel)
    cycles = {units[j]: float(x[k]) for k, j in enumerate(used)}
    costs = HostCosts(clock_MHz=clock, cycles=cycles, n_samples=int(kept.sum()), r2=r2, rel_rmse=rel_rmse,
                      cores=cores, unfitted=unfitted, n_dropped=int((~kept).sum()), per_source=per_source,
                      confounded=confounded, warnings=tuple(notes))
    aside = [t for t in left_out if t.measured_s and t.measured_s > 0]
    if aside:
        modeled = np.array([costs.predict_s(t) for t in aside])
        measured = np.array([t.measured_s for t in aside])
        costs.left_out = SourceFit(len(aside), float(np.sqrt(np.mean((modeled / measured - 1) ** 2))),
                                   float(modeled.sum() / measured.sum()))
    return costs


def _robust_fit(A: np.ndarray, y: np.ndarray, w: np.ndarray, robust: bool) -> tuple[np.ndarray, np.ndarray, int]:
    """The fit, after dropping outliers (``OUTLIER_*``) when ``robust``: ``(x, kept
    mask, misfits)``, where ``misfits`` counts the tasks found far off the fit when
    they were too many to drop (more than ``MAX_DROPPED``; 0 otherwise)."""
    kept = np.ones(len(y), dtype=bool)
    x = _fit(A, y, w)
    for _ in range(OUTLIER_ROUNDS if robust else 0):
        out = _outliers(A @ x, y) & kept
        if not out.any():
            break
        far = int((~kept).sum() + out.sum())
        if far > MAX_DROPPED * len(y) or len(y) - far < A.shape[1]:
            return x, kept, far
        kept &= ~out
        x = _fit(A[kept], y[kept], w[kept])
    return x, kept, 0


def _source_fits(pred: np.ndarray, y: np.ndarray, labels: Sequence[str]) -> dict[str, SourceFit]:
    """Fit quality per label, in first-seen order."""
    fits = {}
    for name in dict.fromkeys(labels):
        mask = np.array([label == name for label in labels])
        p, m = pred[mask], y[mask]
        fits[name] = SourceFit(int(mask.sum()), float(np.sqrt(np.mean(((p - m) / m) ** 2))), float(p.sum() / m.sum()))
    return fits


def _fit(A: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """NNLS of ``A x ~ y`` with row weights ``w``, columns scaled to unit norm (conditioning)."""
    Aw = A * w[:, None]
    scale = np.linalg.norm(Aw, axis=0)
    scale[scale == 0] = 1.0
    return nnls(Aw / scale, y * w) / scale


def _outliers(pred: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Tasks whose ``log(measured / fitted)`` lies far from the median (``OUTLIER_*``).

    >>> _outliers(np.ones(8), np.array([1.0, 1.02, 0.98, 1.01, 0.99, 1.0, 3.0, 0.2])).tolist()
    [False, False, False, False, False, False, True, True]
    """
    r = np.log(y / np.maximum(pred, 1e-300))
    med = np.median(r)
    spread = 1.4826 * np.median(np.abs(r - med))
    return np.abs(r - med) > max(OUTLIER_MADS * spread, OUTLIER_FLOOR)


def _confounded(A: np.ndarray, w: np.ndarray, names: Sequence[str]) -> tuple[tuple[str, ...], ...]:
    """Groups of units whose costs the tasks cannot tell apart (``CONFOUND_*``).

    In the weighted design (rows ``w``: relative error; columns scaled to unit
    norm) a change ``t v`` of the prices along a right singular vector ``v``
    (singular value ``s``) changes the RMS relative error of the ``n`` tasks
    by ``t s / sqrt(n)``, and moves ``t v_j colsum_j / total`` of the modeled
    time to or from unit ``j``: for a change of ``CONFOUND_NOISE`` RMS,
    ``CONFOUND_NOISE sqrt(n) |v_j| colsum_j / (s total)``. Units that move
    more than ``CONFOUND_SHARE`` along the same direction form a group.

    >>> A = np.array([[10.0, 20.0, 1.0], [30.0, 60.0, 1.0], [50.0, 100.0, 1.0], [70.0, 140.0, 1.0]])
    >>> _confounded(A, 1 / (A @ [1.0, 1.0, 5.0]), ["rows", "fields", "tasks"])
    (('rows', 'fields'),)
    """
    n, p = A.shape
    X = A * w[:, None]
    norms = np.linalg.norm(X, axis=0)
    X = X / np.where(norms > 0, norms, 1.0)
    _, s, vt = np.linalg.svd(X, full_matrices=False)
    share = X.sum(axis=0) / n  # colsum_j / total: a task's weighted time is ~1
    groups: list[set[int]] = []
    for i in range(len(s)):
        if s[i] < 1e-9 * s[0]:  # exactly collinear: any split fits as well
            moved = np.where(np.abs(vt[i]) > 1e-6, np.inf, 0.0)
        else:
            moved = CONFOUND_NOISE * np.sqrt(n) / s[i] * np.abs(vt[i]) * share
        members = {j for j in range(p) if moved[j] > CONFOUND_SHARE}
        if len(members) < 2:
            continue
        for g in [g for g in groups if g & members]:
            members |= g
            groups.remove(g)
        groups.append(members)
    return tuple(tuple(names[j] for j in sorted(g)) for g in sorted(groups, key=min))


def _notes(unfitted, r2, rel_rmse, y, per_source, confounded, misfits, n_all) -> list[str]:
    """Every reason to doubt the fit, one sentence each (see the thresholds above)."""
    notes = []
    if unfitted:
        notes.append(f"{', '.join(unfitted)}: no task exercised them; they keep the profile's price")
    if r2 < POOR_R2 or rel_rmse > POOR_REL_RMSE:
        spread = float(np.std(y) / np.mean(y))
        why = (f"the tasks' times vary little (coefficient of variation {spread:.0%}), so R^2 says little: "
               "measure spans of several sizes" if spread < 0.3 and rel_rmse <= POOR_REL_RMSE else
               "the counters do not explain the times: timings may be noisy (repeat the reads and keep each "
               "task's fastest time) or tasks took code paths of different cost per unit")
        notes.append(f"poor fit: R^2 {r2:.2f} (warns under {POOR_R2}), relative RMSE {rel_rmse:.0%} (warns over "
                     f"{POOR_REL_RMSE:.0%}) over {len(y)} tasks; {why}")
    if misfits:
        notes.append(f"{misfits} of {n_all} tasks lie far off the fit, more than {MAX_DROPPED:.0%}: kept, "
                     "as a misfit rather than outliers")
    for name, fit in per_source.items():
        if abs(fit.ratio - 1) > POOR_SOURCE_RATIO or fit.rel_rmse > POOR_REL_RMSE:
            notes.append(f"{name}: modeled {fit.ratio:.2f}x its measured time (relative RMSE {fit.rel_rmse:.0%}); "
                         "one price per unit does not fit this source together with the others")
    for group in confounded:
        hint = ("measure spans of several sizes (block sizes)" if TASK_PRICE in group else
                "give files of different shapes (other column types, columns per row, value lengths, nulls)")
        notes.append(f"{', '.join(group)} cannot be told apart: their counts rise together in these tasks, so the "
                     f"fit splits their cost arbitrarily (their sum holds for tasks shaped like these); {hint}")
    return notes
