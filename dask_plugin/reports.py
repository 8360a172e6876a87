"""Getting the partitions' device Reports back to the caller as one job Report.

Every partition task captures the ``ndp_core.report.Report`` of its read
(``ndp_core.report.collect``) and appends it to a small log in the process
that ran it (:func:`publish`): the caller's process with the threaded and
synchronous schedulers, a worker process with ``distributed``. The log holds
``(process id, sequence number, worker, read id, partition, report, task
key, run id)`` entries and forgets the oldest beyond ``LOG_LENGTH``.

:func:`job_report` marks every log's position when the block starts and, when
it ends, takes what was appended since: locally, and from every worker with
one ``client.run`` (a worker that restarted or joined in between gives all
its entries). Nothing rides along with the partitions themselves, so
``compute()``, ``persist()``, ``to_parquet()``... all work unchanged, and no
message size or event-log limit applies.

With ``distributed``, a worker can die mid-job; the scheduler then runs its
partitions again elsewhere, and the Reports logged in the dead process are
gone with it. :mod:`dask_plugin.attempts` records on the scheduler every
attempt of every task during the block, so the job Report also says which
partitions were retried, and its totals count exactly one Report per
partition: the attempt whose result the job used (a Report of an earlier
attempt that still arrived is left out, :attr:`JobReport.superseded`).

>>> import dask_plugin, os, shutil, tempfile
>>> folder = tempfile.mkdtemp()
>>> with open(os.path.join(folder, "data.csv"), "w") as f:
...     _ = f.write("a\\n" + "1\\n" * 1000)
>>> with job_report() as job:
...     ddf = dask_plugin.read_csv(os.path.join(folder, "*.csv"), device="modern-gen4", split="dynamic")
...     df = ddf.compute()
>>> job.partitions, job.report.pages["device"], job.retried_partitions
(1, 1, 0)
>>> shutil.rmtree(folder)
"""
from __future__ import annotations

import contextlib
import itertools
import os
import threading
import uuid
import warnings
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional, Sequence

from dask_plugin.attempts import LedgerSnapshot, TaskRuns, current_attempt, start_ledger, take_ledger
from dask_plugin.devices import current_worker

LOG_LENGTH = 100_000  # Reports kept per process until a job_report takes them

_PROCESS = uuid.uuid4().hex  # tells a restarted worker from the one that was marked
_log: deque = deque(maxlen=LOG_LENGTH)
_counter = itertools.count(1)
_lock = threading.Lock()


@dataclass(frozen=True)
class Entry:
    """One partition's Report, as logged where it ran; ``key`` and
    ``run_id`` name the ``distributed`` task attempt that read it (None
    with other schedulers)."""

    process: str
    seq: int
    worker: str  # the worker's address, or "pid:<n>" outside distributed
    read_id: str
    partition: int
    report: Any
    key: Any = None
    run_id: Optional[int] = None


def publish(read_id: str, partition: int, reports: Sequence[Any]) -> None:
    """Logs the Reports of one partition's read (called by the partition
    task, in its thread: the task's worker and attempt go with them)."""
    worker = current_worker()
    where = worker.address if worker is not None else f"pid:{os.getpid()}"
    key, run_id = current_attempt()
    with _lock:
        for report in reports:
            _log.append(Entry(_PROCESS, next(_counter), where, read_id, partition, report, key, run_id))


def _mark() -> tuple[str, int]:
    """This process's log position."""
    with _lock:
        return _PROCESS, (_log[-1].seq if _log else 0)


def _since(mark: Optional[tuple[str, int]]) -> tuple[list[Entry], bool]:
    """Entries logged after ``mark`` and whether some were already forgotten."""
    process, seq = mark if mark and mark[0] == _PROCESS else (_PROCESS, 0)
    with _lock:
        entries = [e for e in _log if e.seq > seq]
        lost = bool(_log) and _log[0].seq > seq + 1 and len(_log) == _log.maxlen
    return entries, lost


def _worker_since(marks: dict, dask_worker: Any = None) -> tuple[list[Entry], bool]:
    return _since(marks.get(getattr(dask_worker, "address", None)))


@dataclass
class JobReport:
    """The Reports of the partitions computed inside a :func:`job_report` block.

    ``entries`` are every Report that arrived, ordered by read and
    partition; :attr:`counted` are those the totals use, one per partition
    computed (per computation of it): the attempt whose result the job used.
    :attr:`report` is the job's Report: each worker's counted partitions
    combined one after the other (they share its device), the workers side
    by side (``Report.combine(..., parallel=True)``).

    ``ledger``: what the scheduler saw (:mod:`dask_plugin.attempts`), None
    when attempts were not tracked (no ``distributed`` client).
    """

    entries: list[Entry] = field(default_factory=list)
    lost: bool = False  # a log overflowed: some partitions' Reports are missing
    ledger: Optional[LedgerSnapshot] = None
    unreachable: list[str] = field(default_factory=list)  # workers whose log could not be read

    # ---- attempts -----------------------------------------------------------------------------
    @property
    def retried(self) -> dict[tuple[str, int], TaskRuns]:
        """``(read id, partition)`` -> the attempts of its task, for every
        partition the scheduler sent to workers more than once."""
        runs = self._runs_by_id()
        return {(e.read_id, e.partition): runs[e.run_id] for e in self.entries if e.run_id in runs}

    @property
    def counted(self) -> list[Entry]:
        """The entries the totals use: all but :attr:`superseded`."""
        superseded = self._superseded_ids()
        return [e for e in self.entries if e.run_id not in superseded]

    @property
    def superseded(self) -> list[Entry]:
        """Reports of attempts whose result the job did not use (an attempt
        the scheduler gave up on while its worker lived on, or whose result
        was lost and computed again): left out of the totals."""
        superseded = self._superseded_ids()
        return [e for e in self.entries if e.run_id in superseded]

    def _retried_tasks(self) -> tuple[TaskRuns, ...]:
        return self.ledger.retried if self.ledger is not None else ()

    def _runs_by_id(self) -> dict[int, TaskRuns]:
        return {a.run_id: runs for runs in self._retried_tasks() for a in runs.attempts}

    def _superseded_ids(self) -> set[int]:
        """The run ids of retried tasks' attempts other than the one whose result was used."""
        out = set()
        for runs in self._retried_tasks():
            used = runs.used or runs.attempts[-1]
            out.update(a.run_id for a in runs.attempts if a.run_id != used.run_id)
        return out

    # ---- counts ---------------------------------------------------------------------------------
    @property
    def reports(self) -> list[Any]:
        """One Report per partition computed: those of :attr:`counted`."""
        return [e.report for e in self.counted]

    @property
    def partitions(self) -> int:
        return len({(e.read_id, e.partition) for e in self.entries})

    @property
    def retried_partitions(self) -> int:
        """Partitions the scheduler sent to workers more than once: a worker
        left while one was queued or running there, or holding its result
        before the job used it (0 when attempts were not tracked)."""
        return len(self.retried)

    @property
    def attempts(self) -> int:
        """Times the scheduler sent a partition's task to a worker: one per
        partition computed (per :attr:`counted` Report) plus every retry."""
        return len(self.counted) + sum(len(runs.attempts) - 1 for runs in self.retried.values())

    @property
    def workers(self) -> list[str]:
        return sorted({e.worker for e in self.entries})

    @property
    def workers_lost(self) -> list[str]:
        """Workers that left the cluster during the block (killed, crashed, retired)."""
        return list(self.ledger.workers_lost) if self.ledger is not None else []

    @property
    def workers_joined(self) -> list[str]:
        """Workers that joined during the block (a nanny's restart of a dead one included)."""
        return list(self.ledger.workers_joined) if self.ledger is not None else []

    def summary(self) -> dict[str, Any]:
        """The Dask figures of the job as a plain dict (also ``report.meta["dask"]``).

        >>> sorted(JobReport().summary())[:3]
        ['attempts', 'attempts_tracked', 'partitions']
        """
        return {"partitions": self.partitions, "attempts": self.attempts,
                "retried_partitions": self.retried_partitions, "attempts_tracked": self.ledger is not None,
                "superseded_reports": len(self.superseded), "workers": self.workers,
                "workers_lost": self.workers_lost, "workers_joined": self.workers_joined,
                "unreachable_workers": list(self.unreachable), "reports_dropped": self.lost}

    # ---- the job's Report ---------------------------------------------------------------------------
    @property
    def report(self) -> Any:
        """The job's ``ndp_core.report.Report`` over :attr:`counted` (an empty
        one when no partition ran on a device); ``meta["dask"]`` holds :meth:`summary`."""
        from ndp_core.report import Report

        counted = self.counted
        workers = sorted({e.worker for e in counted})
        per_worker = [Report.combine([e.report for e in counted if e.worker == w]) for w in workers]
        report = Report.combine(per_worker, parallel=True)
        if not report.empty:
            report.meta["dask"] = self.summary()
        return report

    def describe(self) -> list[str]:
        """The Dask lines printed above the Report: partitions, workers, retries.

        >>> JobReport().describe()[0]
        'Dask job: 0 partitions on 0 workers'
        """
        lines = [f"Dask job: {self.partitions} partitions on {len(self.workers)} workers"]
        if self.workers_lost or self.workers_joined:
            lines[0] += f" ({len(self.workers_lost)} left, {len(self.workers_joined)} joined during the job)"
        if self.ledger is None:
            retried = "not tracked (attempts are tracked with a distributed client)"
        else:
            retried = f"{self.retried_partitions} (sent to workers {self.attempts} times for {self.partitions} partitions)"
        superseded = len(self.superseded)
        counted = "one Report per partition: the attempt whose result the job used"
        if superseded:
            counted += f" ({superseded} Reports of earlier attempts left out)"
        rows = [("retried partitions", retried), ("totals count", counted)]
        width = max(len(label) for label, _ in rows)
        return lines + [f"  {label.ljust(width)}  {value}" for label, value in rows]

    def __str__(self) -> str:
        return "\n".join(self.describe()) + "\n" + str(self.report)

    def __repr__(self) -> str:
        return (f"JobReport({len(self.entries)} reports from {self.partitions} partitions on "
                f"{len(self.workers)} workers, {self.retried_partitions} retried)")


@contextlib.contextmanager
def job_report(client: Any = "auto") -> Iterator[JobReport]:
    """Collects the Reports of the Dask partitions computed inside the block.

    ``client``: a ``distributed.Client`` whose workers may run partitions
    (default: the current client, if any; None: this process only). With a
    client the scheduler also records every task attempt during the block
    (the retried partitions of a worker loss; its scheduler must be able to
    import ``dask_plugin``). On exit the job's Report is also recorded into
    any enclosing ``ndp_core.report.collect()`` block.

    >>> with job_report(client=None) as job:
    ...     pass
    >>> job.partitions, job.retried_partitions
    (0, 0)
    """
    client = _default_client() if client == "auto" else client
    job = JobReport()
    local_mark = _mark()
    worker_marks = client.run(_mark) if client is not None else {}
    ledger = _start_ledger(client)
    ok = False
    try:
        yield job
        ok = True
    finally:
        try:
            _gather(job, local_mark, client, worker_marks, ledger)
        except Exception:  # noqa: BLE001 - never mask the block's own error
            if ok:
                raise
    _warn_incomplete(job)
    if job.entries:
        from ndp_core.report import record

        record(job.report)


def _start_ledger(client: Any) -> Optional[str]:
    if client is None:
        return None
    try:
        return start_ledger(client)
    except Exception as exc:  # noqa: BLE001 - Reports still come back; only retries go uncounted
        warnings.warn(f"retried partitions are not counted: the scheduler could not add the attempt ledger "
                      f"({type(exc).__name__}: {exc})", RuntimeWarning, stacklevel=4)
        return None


def _gather(job: JobReport, local_mark: tuple, client: Any, worker_marks: dict, ledger: Optional[str]) -> None:
    found, lost = _since(local_mark)
    entries = list(found)
    if client is not None:
        for worker, result in client.run(_worker_since, worker_marks, on_error="return").items():
            if isinstance(result, BaseException):  # the worker died after being listed
                job.unreachable.append(worker)
                continue
            got, worker_lost = result
            entries += got
            lost = lost or worker_lost
        if ledger is not None:
            job.ledger = take_ledger(client, ledger)
    unique = {(e.process, e.seq): e for e in entries}  # workers sharing a process see one log
    job.entries = sorted(unique.values(), key=lambda e: (e.read_id, e.partition, e.seq))
    job.lost = lost


def _warn_incomplete(job: JobReport) -> None:
    if job.lost:
        warnings.warn(f"some partition Reports were dropped (more than {LOG_LENGTH} per process "
                      "since the job started)", RuntimeWarning, stacklevel=4)
    if job.unreachable:
        warnings.warn(f"the Reports logged on {', '.join(job.unreachable)} could not be read "
                      "(the worker left as the job ended)", RuntimeWarning, stacklevel=4)


def _default_client() -> Any:
    from distributed import default_client

    try:
        return default_client()
    except ValueError:  # no client
        return None
