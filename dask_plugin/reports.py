"""Getting the partitions' device Reports back to the caller as one job Report.

Every partition task captures the ``ndp_core.report.Report`` of its read
(``ndp_core.report.collect``) and appends it to a small log in the process
that ran it (:func:`publish`): the caller's process with the threaded and
synchronous schedulers, a worker process with ``distributed``. The log holds
``(process id, sequence number, worker, read id, partition, report)`` entries
and forgets the oldest beyond ``LOG_LENGTH``.

:func:`job_report` marks every log's position when the block starts and, when
it ends, takes what was appended since: locally, and from every worker with
one ``client.run`` (a worker that restarted or joined in between gives all
its entries). Nothing rides along with the partitions themselves, so
``compute()``, ``persist()``, ``to_parquet()``... all work unchanged, and no
message size or event-log limit applies.

>>> import dask_plugin, os, shutil, tempfile
>>> folder = tempfile.mkdtemp()
>>> with open(os.path.join(folder, "data.csv"), "w") as f:
...     _ = f.write("a\\n" + "1\\n" * 1000)
>>> with job_report() as job:
...     ddf = dask_plugin.read_csv(os.path.join(folder, "*.csv"), device="modern-gen4", split="dynamic")
...     df = ddf.compute()
>>> job.partitions, job.report.pages["device"]
(1, 1)
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

LOG_LENGTH = 100_000  # Reports kept per process until a job_report takes them

_PROCESS = uuid.uuid4().hex  # tells a restarted worker from the one that was marked
_log: deque = deque(maxlen=LOG_LENGTH)
_counter = itertools.count(1)
_lock = threading.Lock()


@dataclass(frozen=True)
class Entry:
    """One partition's Report, as logged where it ran."""

    process: str
    seq: int
    worker: str  # the worker's address, or "pid:<n>" outside distributed
    read_id: str
    partition: int
    report: Any


def publish(read_id: str, partition: int, reports: Sequence[Any], worker: Optional[str] = None) -> None:
    """Logs the Reports of one partition's read (called by the partition task)."""
    where = worker or f"pid:{os.getpid()}"
    with _lock:
        for report in reports:
            _log.append(Entry(_PROCESS, next(_counter), where, read_id, partition, report))


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

    ``entries`` are ordered by read and partition; ``reports`` are their
    Reports; :attr:`report` is the job's Report: each worker's partitions
    combined one after the other (they share its device), the workers side by
    side (``Report.combine(..., parallel=True)``).
    """

    entries: list[Entry] = field(default_factory=list)
    lost: bool = False  # a log overflowed: some partitions' Reports are missing

    @property
    def reports(self) -> list[Any]:
        return [e.report for e in self.entries]

    @property
    def partitions(self) -> int:
        return len({(e.read_id, e.partition) for e in self.entries})

    @property
    def workers(self) -> list[str]:
        return sorted({e.worker for e in self.entries})

    @property
    def report(self) -> Any:
        """The job's ``ndp_core.report.Report`` (an empty one when no partition ran on a device)."""
        from ndp_core.report import Report

        per_worker = [Report.combine([e.report for e in self.entries if e.worker == w]) for w in self.workers]
        return Report.combine(per_worker, parallel=True)

    def __repr__(self) -> str:
        return f"JobReport({len(self.entries)} reports from {self.partitions} partitions on {len(self.workers)} workers)"


@contextlib.contextmanager
def job_report(client: Any = "auto") -> Iterator[JobReport]:
    """Collects the Reports of the Dask partitions computed inside the block.

    ``client``: a ``distributed.Client`` whose workers may run partitions
    (default: the current client, if any; None: this process only). On exit
    the job's Report is also recorded into any enclosing
    ``ndp_core.report.collect()`` block.

    >>> with job_report(client=None) as job:
    ...     pass
    >>> job.partitions
    0
    """
    client = _default_client() if client == "auto" else client
    job = JobReport()
    local_mark = _mark()
    worker_marks = client.run(_mark) if client is not None else {}
    ok = False
    try:
        yield job
        ok = True
    finally:
        try:
            _gather(job, local_mark, client, worker_marks)
        except Exception:  # noqa: BLE001 - never mask the block's own error
            if ok:
                raise
    if job.lost:
        warnings.warn(f"some partition Reports were dropped (more than {LOG_LENGTH} per process "
                      "since the job started)", RuntimeWarning, stacklevel=3)
    if job.entries:
        from ndp_core.report import record

        record(job.report)


def _gather(job: JobReport, local_mark: tuple, client: Any, worker_marks: dict) -> None:
    found, lost = _since(local_mark)
    entries = list(found)
    if client is not None:
        for got, worker_lost in client.run(_worker_since, worker_marks).values():
            entries += got
            lost = lost or worker_lost
    unique = {(e.process, e.seq): e for e in entries}  # workers sharing a process see one log
    job.entries = sorted(unique.values(), key=lambda e: (e.read_id, e.partition, e.seq))
    job.lost = lost


def _default_client() -> Any:
    from distributed import default_client

    try:
        return default_client()
    except ValueError:  # no client
        return None
