"""Which partitions ran more than once: every attempt of every task, as the scheduler saw it.

``distributed`` retries by itself: a task whose worker dies while running
it is sent to another worker (up to ``distributed.scheduler.allowed-failures``
times, 3 by default, before it fails with ``KilledWorker``), and a finished
task whose result only that worker held is computed again, which for a
partition means reading its byte range again. The partitions' Reports
(:mod:`dask_plugin.reports`) are logged in the worker processes, so the
Report of an attempt that died with its worker never arrives: counting
Reports cannot tell how often a partition ran. The scheduler can. Each time
it sends a task to a worker it gives that attempt a new ``run_id``, which
the worker also knows; :class:`AttemptLedger`, a scheduler plugin that
``job_report`` adds for the length of its block, records each attempt
``(run_id, worker, finished)`` per task key, and the partition task logs its
own key and ``run_id`` with its Report (:func:`current_attempt`). Joining
the two says which partitions were retried and which attempt's Report is
the one whose result the job used.

A key's record starts when the task is first sent to a worker and ends when
the scheduler forgets the key; tasks that ran once are then dropped, so
the ledger holds only live tasks and retried ones.

>>> ledger = AttemptLedger()
>>> for run_id, worker in [(7, "tcp://a"), (9, "tcp://b")]:   # sent to a, a died, sent to b
...     ledger.started("x", run_id, worker)
>>> ledger.finished("x", 9)
>>> ledger.forgotten("x")
>>> [(a.run_id, a.worker, a.finished) for a in ledger.retried()[0].attempts]
[(7, 'tcp://a', False), (9, 'tcp://b', True)]
>>> ledger.retried()[0].used.run_id
9
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, Optional

from distributed.diagnostics.plugin import SchedulerPlugin

from dask_plugin.devices import current_worker

PLUGIN_PREFIX = "ndp-attempts-"


@dataclass(frozen=True)
class Attempt:
    """One run of a task: the scheduler's ``run_id`` for it, the worker it
    was sent to, and whether the scheduler accepted its result (a result a
    worker loss destroyed later still counts as finished)."""

    run_id: int
    worker: str
    finished: bool


@dataclass(frozen=True)
class TaskRuns:
    """The attempts of one task key, from its first dispatch until the scheduler forgot it."""

    key: Any
    attempts: tuple[Attempt, ...]

    @property
    def used(self) -> Optional[Attempt]:
        """The attempt whose result the job used: the last one the scheduler
        accepted (None when none finished).

        >>> TaskRuns("x", (Attempt(1, "a", True), Attempt(2, "b", True))).used.run_id
        2
        """
        return next((a for a in reversed(self.attempts) if a.finished), None)


@dataclass(frozen=True)
class LedgerSnapshot:
    """What an :class:`AttemptLedger` saw: the tasks sent to workers more
    than once, and the workers that left or joined the cluster meanwhile."""

    retried: tuple[TaskRuns, ...] = ()
    workers_lost: tuple[str, ...] = ()
    workers_joined: tuple[str, ...] = ()


class AttemptLedger(SchedulerPlugin):
    """A scheduler plugin recording every dispatch of every task (see the module docstring).

    Runs on the scheduler's event loop, like every scheduler plugin: no locks.
    """

    def __init__(self, scheduler: Any = None):
        self._scheduler = scheduler
        self._live: dict[Any, list[list]] = {}  # key -> [[run_id, worker, finished], ...]
        self._retried: list[TaskRuns] = []
        self.workers_lost: list[str] = []
        self.workers_joined: list[str] = []

    # ---- the scheduler's hooks ------------------------------------------------------------
    def transition(self, key: Any, start: str, finish: str, *args: Any, **kwargs: Any) -> None:
        if finish == "processing":
            ts = self._scheduler.tasks.get(key)
            if ts is not None and ts.processing_on is not None:
                self.started(key, ts.run_id, ts.processing_on.address)
        elif start == "processing" and finish == "memory":
            ts = self._scheduler.tasks.get(key)
            if ts is not None:
                self.finished(key, ts.run_id, kwargs.get("worker"))
        elif finish == "forgotten":
            self.forgotten(key)

    def remove_worker(self, scheduler: Any, worker: str, **kwargs: Any) -> None:
        self.workers_lost.append(worker)

    def add_worker(self, scheduler: Any, worker: str) -> None:
        self.workers_joined.append(worker)

    # ---- the record ----------------------------------------------------------------------
    def started(self, key: Any, run_id: int, worker: str) -> None:
        """Attempt ``run_id`` of ``key`` was sent to ``worker``."""
        self._live.setdefault(key, []).append([run_id, worker, False])

    def finished(self, key: Any, run_id: int, worker: Optional[str] = None) -> None:
        """The scheduler accepted attempt ``run_id``'s result (from ``worker``).

        Work stealing moves a task that has not started to another worker
        with a new ``run_id`` but no transition: a finished ``run_id`` the
        ledger has not seen is the last attempt, moved.

        >>> ledger = AttemptLedger()
        >>> ledger.started("x", 1, "tcp://a")
        >>> ledger.finished("x", 2, "tcp://b")   # stolen by b
        >>> ledger._live["x"]
        [[2, 'tcp://b', True]]
        """
        attempts = self._live.get(key)
        if not attempts:
            return
        for attempt in attempts:
            if attempt[0] == run_id:
                attempt[2] = True
                return
        if not attempts[-1][2]:
            attempts[-1] = [run_id, worker or attempts[-1][1], True]

    def forgotten(self, key: Any) -> None:
        """The scheduler forgot ``key``: a later dispatch is a new computation, not a retry."""
        runs = self._live.pop(key, None)
        if runs is not None and len(runs) > 1:
            self._retried.append(_task_runs(key, runs))

    def retried(self) -> list[TaskRuns]:
        """Every task sent to workers more than once since the ledger started
        (those the scheduler still knows included)."""
        live = [_task_runs(key, runs) for key, runs in self._live.items() if len(runs) > 1]
        return self._retried + live

    def snapshot(self) -> LedgerSnapshot:
        return LedgerSnapshot(tuple(self.retried()), tuple(self.workers_lost), tuple(self.workers_joined))


def _task_runs(key: Any, runs: list[list]) -> TaskRuns:
    return TaskRuns(key, tuple(Attempt(run_id, worker, finished) for run_id, worker, finished in runs))


# ---- from the client -----------------------------------------------------------------------------
def start_ledger(client: Any) -> str:
    """Adds an :class:`AttemptLedger` to ``client``'s scheduler; returns its
    name for :func:`take_ledger`. The scheduler must be able to import
    ``dask_plugin`` (as the workers must)."""
    name = PLUGIN_PREFIX + uuid.uuid4().hex
    client.run_on_scheduler(_add_ledger, name)
    return name


def take_ledger(client: Any, name: str) -> LedgerSnapshot:
    """Removes the ledger ``name`` from the scheduler and returns what it saw."""
    return client.run_on_scheduler(_pop_ledger, name)


def _add_ledger(name: str, dask_scheduler: Any = None) -> None:
    dask_scheduler.add_plugin(AttemptLedger(dask_scheduler), name=name)


def _pop_ledger(name: str, dask_scheduler: Any = None) -> LedgerSnapshot:
    ledger = dask_scheduler.plugins.get(name)
    if ledger is None:  # the scheduler restarted meanwhile
        return LedgerSnapshot()
    dask_scheduler.remove_plugin(name=name)
    return ledger.snapshot()


# ---- in the task -------------------------------------------------------------------------------------
def current_attempt() -> tuple[Any, Optional[int]]:
    """The key and ``run_id`` of the ``distributed`` task running in this
    thread, or ``(None, None)`` (another scheduler, or not in a task).

    >>> current_attempt()
    (None, None)
    """
    worker = current_worker()
    if worker is None:
        return None, None
    try:
        key = worker.get_current_task()
    except KeyError:  # a thread that is not running a task
        return None, None
    state = getattr(worker, "state", None)
    task = state.tasks.get(key) if state is not None else None
    return key, getattr(task, "run_id", None)
