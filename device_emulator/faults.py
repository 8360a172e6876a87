"""Fault plans: which device commands fail, and how - deterministically.

A :class:`FaultPlan` gives per-task rates for each fault kind (or an explicit
``{task: kind}`` map). Whether attempt ``a`` of task ``t`` fails is decided by
a 64-bit mix of ``(seed, t, a)`` - not Python's (salted) ``hash`` - so every
process, worker and rerun injects exactly the same faults.

Rules: a retried attempt (``attempt >= 1``) after a link timeout succeeds;
nothing is ever injected on ``attempt >= 2``; explicit faults hit attempt 0.

>>> plan = FaultPlan(media_error=0.1, link_timeout=0.1, seed=7)
>>> codes = [plan.fault_code(t, 0) for t in range(1000)]
>>> 60 < sum(c == FAULT_MEDIA for c in codes) < 140
True
>>> codes == [plan.fault_code(t, 0) for t in range(1000)]
True
>>> FaultPlan(tasks={3: "app_failure"}).fault_code(3, 0) == FAULT_APP
True
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional, Union

from ndp_core.device import (FAULT_APP, FAULT_MEDIA, FAULT_NAMES, FAULT_NONE, FAULT_TIMEOUT,
                             FAULT_TQ_OVERFLOW)

__all__ = ["FaultPlan", "FAULT_CODES", "fault_name"]

#: Fault kind name -> code (the inverse of ``ndp_core.device.FAULT_NAMES``).
FAULT_CODES = {name: code for code, name in FAULT_NAMES.items()}
_ORDER = (FAULT_MEDIA, FAULT_APP, FAULT_TIMEOUT, FAULT_TQ_OVERFLOW)
_MASK = (1 << 64) - 1


def fault_name(code: int) -> Optional[str]:
    """``"media_error"`` etc. for a code, ``None`` for 0."""
    return FAULT_NAMES.get(code)


def _splitmix64(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


def _uniform(seed: int, task: int, attempt: int) -> float:
    """A number in [0, 1) fixed by (seed, task, attempt)."""
    h = _splitmix64(seed & _MASK)
    h = _splitmix64(h ^ (task & _MASK))
    h = _splitmix64(h ^ (attempt & _MASK))
    return (h >> 11) / float(1 << 53)


def _code(kind: Union[str, int]) -> int:
    if isinstance(kind, str):
        if kind not in FAULT_CODES:
            raise ValueError(f"unknown fault kind {kind!r}; kinds: {', '.join(FAULT_CODES)}")
        return FAULT_CODES[kind]
    if kind not in FAULT_NAMES:
        raise ValueError(f"unknown fault code {kind!r}; codes: {sorted(FAULT_NAMES)}")
    return int(kind)


@dataclass(frozen=True)
class FaultPlan:
    """Per-task fault rates (probabilities that a task's device command
    fails that way), a seed, and optional explicit faults ``tasks={task: kind}``
    (kind by name or ``FAULT_*`` code; explicit tasks get no random fault).

    Kinds: ``media_error`` (uncorrectable page read: the host re-reads with
    read-retry and parses), ``app_failure`` (the StorageApp fails: wasted
    device work, host re-reads and parses), ``link_timeout`` (the completion
    never arrives: the host waits ``link.timeout_s`` and resubmits; the retry
    succeeds), ``tq_overflow`` (the task queue rejects the task: the page
    comes back raw and the host parses it).
    """

    media_error: float = 0.0
    app_failure: float = 0.0
    link_timeout: float = 0.0
    tq_overflow: float = 0.0
    seed: int = 0
    tasks: Optional[Any] = None  # normalized to a sorted tuple of (task, code) pairs

    def __post_init__(self) -> None:
        rates = self.rates
        for k, v in rates.items():
            if not 0.0 <= float(v) <= 1.0:
                raise ValueError(f"{k} rate must be in [0, 1], got {v}")
        if sum(rates.values()) > 1.0 + 1e-12:
            raise ValueError(f"fault rates add up to {sum(rates.values())} > 1")
        if self.tasks is not None:
            items = self.tasks.items() if isinstance(self.tasks, Mapping) else self.tasks
            norm = tuple(sorted((int(t), _code(k)) for t, k in items))
            object.__setattr__(self, "tasks", norm)

    @property
    def rates(self) -> dict[str, float]:
        return {"media_error": self.media_error, "app_failure": self.app_failure,
                "link_timeout": self.link_timeout, "tq_overflow": self.tq_overflow}

    @property
    def explicit(self) -> dict[int, int]:
        """The explicit faults as ``{task: code}``."""
        return dict(self.tasks or ())

    def __bool__(self) -> bool:
        return bool(self.tasks) or any(v > 0 for v in self.rates.values())

    @classmethod
    def coerce(cls, plan: "FaultPlan | Mapping | None") -> Optional["FaultPlan"]:
        """``None``, a FaultPlan, or a mapping of its fields."""
        if plan is None or isinstance(plan, FaultPlan):
            return plan
        if isinstance(plan, Mapping):
            return cls(**plan)
        raise TypeError(f"faults must be a FaultPlan, a mapping or None, got {type(plan).__name__}")

    def _draw(self, task: int, attempt: int) -> int:
        u = _uniform(self.seed, task, attempt)
        acc = 0.0
        rates = (self.media_error, self.app_failure, self.link_timeout, self.tq_overflow)
        for code, rate in zip(_ORDER, rates):
            acc += rate
            if u < acc:
                return code
        return FAULT_NONE

    def fault_code(self, task: int, attempt: int) -> int:
        """The ``FAULT_*`` code for attempt ``attempt`` of task ``task``'s device command."""
        if attempt >= 2 or attempt < 0:
            return FAULT_NONE
        explicit = self.explicit
        if task in explicit:
            return explicit[task] if attempt == 0 else FAULT_NONE
        if attempt == 1 and self._draw(task, 0) == FAULT_TIMEOUT:
            return FAULT_NONE  # the retry of a timed-out command succeeds
        return self._draw(task, attempt)

    def faults_for(self, task: int) -> dict[str, int]:
        """The faults a task meets when each failure is handled as the plan
        describes (timeout -> retry; other kinds -> raw fallback), by name."""
        out: dict[str, int] = {}
        for attempt in range(2):
            code = self.fault_code(task, attempt)
            if code == FAULT_NONE:
                break
            out[FAULT_NAMES[code]] = out.get(FAULT_NAMES[code], 0) + 1
            if code != FAULT_TIMEOUT:
                break
        return out
