"""The parent: hands out batches of cases to worker processes and watches them.

Each worker is a child process (``multiprocessing`` "spawn": nothing of the
parent's state, no fork of Numba's threads) running
:func:`benchmarks.fuzzing.worker.worker_main`. The parent waits on the
workers' pipes and process handles with a short timeout and, on every tick,
reads each worker's case slot:

* a case running longer than ``case_timeout`` is a **hang**: the worker is
  killed;
* a worker that dies (a signal, a non-zero exit) is a **crash**;

either way the case in the slot is saved (``save_dir``), the worker
restarted with the corpus inputs kept so far, and the rest of its batch
handed out again. Results accumulate in :class:`Totals`; ``on_progress`` is
called every ``progress_every`` seconds (the CLI writes the results files
then, so a partial run leaves them too).

>>> totals = Totals()
>>> totals.cases, totals.failure_count()
(0, 0)
"""
from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any, Callable, Optional

from benchmarks.fuzzing.configs import Rates
from benchmarks.fuzzing.worker import CaseSlot, worker_main

TICK_S = 0.25
START_TIMEOUT_S = 300.0  # a worker's imports and warm-up (a cold Numba cache compiles for minutes)
SAVED_PER_KIND = 5  # failing cases saved per kind (all are counted)
KEPT_CORPUS = 5000  # corpus inputs handed to a restarted worker
MAX_CASELESS_LOSSES = 3  # workers lost outside any case before the run gives up (a broken install)
MAX_FAILED_STARTS = 10  # workers dead before their first case, in a row, before the run gives up
START_RETRY_S = 30.0


@dataclass
class Totals:
    """The run so far."""

    cases: int = 0
    case_seconds: float = 0.0
    by_path: dict = field(default_factory=lambda: defaultdict(lambda: [0, 0.0]))
    verdicts: Counter = field(default_factory=Counter)
    checks: Counter = field(default_factory=Counter)
    crashes: list = field(default_factory=list)  # saved case records
    hangs: list = field(default_factory=list)
    failures: list = field(default_factory=list)  # saved failing cases (up to SAVED_PER_KIND per kind)
    failure_kinds: Counter = field(default_factory=Counter)
    worker_starts: int = 0
    slowest: tuple = (0.0, -1)
    max_rss_kib: int = 0

    def add_batch(self, result: dict) -> list[dict]:
        """Adds a worker's batch result; returns its failures to save (kinds not yet full)."""
        self.cases += result["cases"]
        self.case_seconds += result["seconds"]
        for path, (n, s) in result["by_path"].items():
            self.by_path[path][0] += n
            self.by_path[path][1] += s
        self.verdicts.update(result["verdicts"])
        self.checks.update(result["checks"])
        self.slowest = max(self.slowest, tuple(result["slowest"]))
        self.max_rss_kib = max(self.max_rss_kib, result["max_rss_kib"])
        for label, n in result["verdicts"].items():
            if label != "agree" and not label.startswith(("documented:", "known_bug:")):
                self.failure_kinds[label] += n
        keep = []
        for failure in result["failures"]:
            if sum(f["kind"] == failure["kind"] for f in self.failures) < SAVED_PER_KIND:
                self.failures.append(failure)
                keep.append(failure)
        return keep

    def failure_count(self) -> int:
        """Undocumented mismatches and harness errors."""
        return sum(self.failure_kinds.values())


class _Worker:
    """One child process, its pipe and case slot, and the batch it is running."""

    def __init__(self, context: Any, slot_path: str, options: dict):
        self.conn, child_conn = context.Pipe()
        self.slot = CaseSlot.create(slot_path)
        self.process = context.Process(target=worker_main, args=(child_conn, slot_path, options), daemon=True)
        self.process.start()
        child_conn.close()
        self.started = time.monotonic()
        self.ready = False
        self.batch: Optional[tuple[int, int]] = None

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join(10)
        self.conn.close()
        self.slot.close()


class Runner:
    """Runs ``cases`` fuzz cases on ``workers`` child processes (see the module docstring)."""

    def __init__(self, cases: int, *, workers: int = 1, seed: int = 0, batch: int = 200,
                 case_timeout: float = 20.0, rates: Rates = Rates(), save_dir: Optional[Path] = None,
                 progress_every: float = 60.0, on_progress: Optional[Callable[["Runner"], None]] = None,
                 faults: Optional[dict[int, str]] = None, log: Callable[[str], None] = print):
        self.cases, self.n_workers, self.seed, self.batch = cases, workers, seed, batch
        self.case_timeout, self.rates, self.save_dir = case_timeout, rates, save_dir
        self.progress_every, self.on_progress, self.faults, self.log = progress_every, on_progress, faults or {}, log
        self.totals = Totals()
        self.pending: list[tuple[int, int]] = [(i, min(batch, cases - i)) for i in range(0, cases, batch)]
        self.pending.reverse()  # pop() hands out the lowest first
        self.kept_corpus: list[bytes] = []
        self.started = time.monotonic()
        self.elapsed = 0.0
        self._context = multiprocessing.get_context("spawn")
        self._slots = tempfile.mkdtemp(prefix="ndp-fuzz-slots-")
        self._slot_count = 0
        self._caseless_losses = 0
        self._failed_starts = 0

    # ---- the loop ----------------------------------------------------------------------------------
    def run(self) -> Totals:
        workers = [self._start_worker() for _ in range(self.n_workers)]
        last_progress = time.monotonic()
        try:
            while self.pending or any(w.batch for w in workers):
                ready = wait([w.conn for w in workers] + [w.process.sentinel for w in workers], TICK_S)
                for i, worker in enumerate(workers):
                    if worker.conn in ready or worker.process.sentinel in ready:
                        workers[i] = self._receive(worker)
                for i, worker in enumerate(workers):
                    workers[i] = self._watch(worker)
                    self._feed(workers[i])
                self.elapsed = time.monotonic() - self.started
                if self.on_progress and time.monotonic() - last_progress >= self.progress_every:
                    last_progress = time.monotonic()
                    self.on_progress(self)
        finally:
            for worker in workers:
                self._stop(worker)
            for name in os.listdir(self._slots):
                os.unlink(os.path.join(self._slots, name))
            os.rmdir(self._slots)
        self.elapsed = time.monotonic() - self.started
        return self.totals

    def _start_worker(self) -> _Worker:
        self._slot_count += 1
        options = {"seed": self.seed, "rates": self.rates, "extra": self.kept_corpus[-KEPT_CORPUS:],
                   "faults": self.faults}
        self.totals.worker_starts += 1
        return _Worker(self._context, os.path.join(self._slots, f"slot-{self._slot_count}"), options)

    def _feed(self, worker: _Worker) -> None:
        if worker.ready and worker.batch is None and self.pending:
            worker.batch = self.pending.pop()
            worker.conn.send(("batch", *worker.batch))

    def _receive(self, worker: _Worker) -> _Worker:
        try:
            while worker.conn.poll():
                message = worker.conn.recv()
                if message[0] == "ready":
                    worker.ready = True
                    self._failed_starts = 0
                elif message[0] == "done":
                    _, first, count, result, added = message
                    worker.batch = None
                    for failure in self.totals.add_batch(result):
                        self._save("failure", failure)
                    self.kept_corpus += added
        except (EOFError, OSError):
            pass
        if not worker.process.is_alive():
            return self._lost(worker, "crash", f"worker exited with code {worker.process.exitcode}")
        return worker

    def _watch(self, worker: _Worker) -> _Worker:
        if not worker.ready:
            if time.monotonic() - worker.started > START_TIMEOUT_S:
                raise RuntimeError(f"a fuzz worker did not start within {START_TIMEOUT_S:.0f} s")
            return worker
        index, started = worker.slot.running()
        if index >= 0 and time.monotonic() - started > self.case_timeout and worker.slot.running() == (index, started):
            worker.process.kill()
            worker.process.join(10)
            return self._lost(worker, "hang", f"case ran over {self.case_timeout:.0f} s")
        return worker

    def _lost(self, worker: _Worker, what: str, why: str) -> _Worker:
        """A worker crashed or hung: save its case, hand out the rest of its batch, start another."""
        case = worker.slot.read()
        if case is None and not worker.ready:
            return self._restart_after_failed_start(worker, why)
        record = {"kind": what, "why": why}
        if case is not None:
            index, data, config, _ = case
            record.update(index=index, data=data.hex(), config=json.loads(config), detail=why)
            (self.totals.crashes if what == "crash" else self.totals.hangs).append(record)
            self._save(what, record)
            self.log(f"{what} at case {index}: {why} (config {config})")
            first, count = worker.batch or (index, 1)
            rest = first + count - index - 1
            if rest > 0:
                self.pending.append((index + 1, rest))
            # the cases of the batch before the lost one ran but their results were lost with the worker
            self.totals.verdicts["lost_with_worker"] += index - first
        else:
            self.totals.crashes.append(record)
            self.log(f"{what} between cases: {why}")
            self._caseless_losses += 1
            if self._caseless_losses > MAX_CASELESS_LOSSES:
                raise RuntimeError(f"fuzz workers keep dying outside any case ({why}): giving up")
            if worker.batch:
                self.pending.append(worker.batch)
        worker.kill()
        return self._start_worker()

    def _restart_after_failed_start(self, worker: _Worker, why: str) -> _Worker:
        """A worker died before its first case: the package may be mid-edit in a shared
        tree (an import error), so wait and try again, a few times."""
        worker.kill()
        self._failed_starts += 1
        if self._failed_starts > MAX_FAILED_STARTS:
            raise RuntimeError(f"fuzz workers died while starting {self._failed_starts} times in a row ({why})")
        self.log(f"a worker died while starting ({why}); retrying in {START_RETRY_S:.0f} s")
        time.sleep(START_RETRY_S)
        return self._start_worker()

    def _stop(self, worker: _Worker) -> None:
        try:
            if worker.process.is_alive():
                worker.conn.send(("stop",))
                worker.process.join(10)
        except (OSError, BrokenPipeError):
            pass
        worker.kill()

    # ---- saving cases --------------------------------------------------------------------------
    def _save(self, what: str, record: dict) -> Optional[Path]:
        if self.save_dir is None or "data" not in record:
            return None
        self.save_dir.mkdir(parents=True, exist_ok=True)
        data = bytes.fromhex(record["data"])
        kind = record.get("kind", what).replace(":", "-")
        name = f"{kind}-{hashlib.sha1(data + json.dumps(record['config'], sort_keys=True).encode()).hexdigest()[:10]}"
        (self.save_dir / f"{name}.csv").write_bytes(data)
        meta = {k: v for k, v in record.items() if k != "data"}
        meta["seed"] = self.seed
        (self.save_dir / f"{name}.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
        record["saved_as"] = str(self.save_dir / f"{name}.csv")
        return self.save_dir / f"{name}.csv"
