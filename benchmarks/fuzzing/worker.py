"""The child process that runs batches of fuzz cases.

The parent (:mod:`benchmarks.fuzzing.runner`) sends ``("batch", first, count)``;
the worker makes and judges cases ``first .. first + count - 1`` and answers
with a :class:`BatchResult`. Before each case it writes the case (index,
start time, input bytes, config) to a shared *case slot*, a small
memory-mapped file: if the worker crashes (a segfault in compiled code, an
abort) or hangs, the parent reads the offending case from there, saves it,
kills and restarts the worker.

Case ``i`` of a run is made from ``random.Random(f"{seed}/{i}")``: a fresh
input from csvgen's pools (8%) or a mutant of a corpus input, and a
configuration for it. The corpus grows with the mutants that showed new
behaviour, so a case depends on the cases before it in the same worker; one
worker and one seed replay the same run.

>>> slot = CaseSlot.create(__import__("tempfile").mktemp())
>>> slot.write(7, b"a\\n1\\n", '{"block_size": 3}')
>>> slot.read()[:3]
(7, b'a\\n1\\n', '{"block_size": 3}')
>>> slot.clear(); slot.read() is None
True
"""
from __future__ import annotations

import mmap
import os
import random
import resource
import struct
import time
import traceback
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Optional

_HEADER = struct.Struct("<qdII")  # case index (-1: idle), start (time.monotonic), data bytes, config bytes
SLOT_BYTES = 1 << 20
FRESH_RATE = 0.08  # cases that are a fresh generated input rather than a mutant
FAILURES_KEPT_PER_KIND = 3  # per batch: the counts say how many there were


class CaseSlot:
    """The case a worker is running, in a file both processes map."""

    def __init__(self, path: str):
        self.path = path
        self._file = open(path, "r+b")
        self._map = mmap.mmap(self._file.fileno(), SLOT_BYTES)

    @classmethod
    def create(cls, path: str) -> "CaseSlot":
        with open(path, "wb") as f:
            f.truncate(SLOT_BYTES)
        slot = cls(path)
        slot.clear()
        return slot

    def write(self, index: int, data: bytes, config: str) -> None:
        raw = config.encode()
        data = data[: SLOT_BYTES - _HEADER.size - len(raw)]
        body_at = _HEADER.size
        self._map[body_at:body_at + len(data)] = data
        self._map[body_at + len(data):body_at + len(data) + len(raw)] = raw
        self._map[:_HEADER.size] = _HEADER.pack(index, time.monotonic(), len(data), len(raw))

    def clear(self) -> None:
        self._map[:_HEADER.size] = _HEADER.pack(-1, 0.0, 0, 0)

    def running(self) -> tuple[int, float]:
        """``(case index, start time)`` of the running case (index -1: none)."""
        index, started, _, _ = _HEADER.unpack(self._map[:_HEADER.size])
        return index, started

    def read(self) -> Optional[tuple[int, bytes, str, float]]:
        """``(index, data, config json, start time)`` of the case in the slot, or None."""
        index, started, n_data, n_config = _HEADER.unpack(self._map[:_HEADER.size])
        if index < 0:
            return None
        body = self._map[_HEADER.size:_HEADER.size + n_data + n_config]
        return index, bytes(body[:n_data]), bytes(body[n_data:]).decode(), started

    def close(self) -> None:
        self._map.close()
        self._file.close()


@dataclass
class BatchResult:
    """What one batch did: cases and seconds by path, verdict counts, and up to
    :data:`FAILURES_KEPT_PER_KIND` failing cases per kind (hex input, config, detail)."""

    cases: int = 0
    seconds: float = 0.0
    by_path: dict = field(default_factory=lambda: defaultdict(lambda: [0, 0.0]))
    verdicts: Counter = field(default_factory=Counter)  # "agree", "documented:<name>", failure kinds
    checks: Counter = field(default_factory=Counter)  # comparisons made (Verdict.checks)
    failures: list = field(default_factory=list)
    slowest: tuple = (0.0, -1)  # (seconds, case index)
    max_rss_kib: int = 0

    def record(self, index: int, path: str, verdict: Any, seconds: float, data: bytes, config: Any) -> None:
        self.cases += 1
        self.seconds += seconds
        self.by_path[path][0] += 1
        self.by_path[path][1] += seconds
        if seconds > self.slowest[0]:
            self.slowest = (seconds, index)
        label = verdict.label
        self.verdicts[label] += 1
        self.checks.update(verdict.checks)
        if (verdict.failed or verdict.bug) and sum(f["kind"] == label for f in self.failures) < FAILURES_KEPT_PER_KIND:
            self.failures.append({"kind": label, "index": index, "detail": verdict.detail[:2000],
                                  "data": data.hex(), "config": config.to_json()})

    def to_dict(self) -> dict:
        return {"cases": self.cases, "seconds": self.seconds, "by_path": {k: list(v) for k, v in self.by_path.items()},
                "verdicts": dict(self.verdicts), "checks": dict(self.checks), "failures": self.failures,
                "slowest": self.slowest, "max_rss_kib": self.max_rss_kib}


class CaseMaker:
    """Makes case ``i`` of a run (see the module docstring)."""

    def __init__(self, seed: int, rates: Any, extra: list[bytes]):
        from benchmarks.fuzzing.corpus import Corpus, load_seeds
        from benchmarks.fuzzing.mutate import Mutator

        self.seed = seed
        self.rates = rates
        self.mutator = Mutator()
        self.corpus = Corpus(load_seeds() + list(extra), random.Random(f"{seed}/corpus"))

    def make(self, index: int) -> tuple[bytes, Any]:
        from benchmarks.fuzzing.configs import draw_config
        from benchmarks.fuzzing.corpus import generate

        rng = random.Random(f"{self.seed}/{index}")
        if rng.random() < FRESH_RATE:
            data = generate(rng)
        else:
            data = self.mutator.mutate(rng, self.corpus.pick(rng), self.corpus.inputs)
        return data, draw_config(rng, len(data), self.rates)


def _inject(kind: Optional[str]) -> None:
    """Self-test faults (the watchdog's tests): die like a segfault, or hang."""
    if kind == "crash":
        os._exit(139)
    if kind == "hang":
        time.sleep(3600)


def _warm_up(judge: Any) -> None:
    """One small case per path, so that compiled code is loaded before the first timed case."""
    from benchmarks.fuzzing.configs import ReadConfig

    for config in (ReadConfig(), ReadConfig(path="ranges", range_block=4, source="path"),
                   ReadConfig(path="device", split="dynamic", source="path", block_size=8), ReadConfig(writer=True)):
        judge.run(b"a,b\n1,x\n2.5,\"y\nz\"\n", config)


def worker_main(conn: Any, slot_path: str, options: dict) -> None:
    """The worker loop (the target of the child process).

    ``options``: ``seed``, ``rates`` (a ``Rates``), ``extra`` (corpus inputs the
    parent kept from earlier workers), ``faults`` ({case index: "crash"|"hang"},
    for self-tests)."""
    from benchmarks.fuzzing.configs import config_json
    from benchmarks.fuzzing.judge import Judge, Verdict

    slot = CaseSlot(slot_path)
    judge = Judge()
    maker = CaseMaker(options["seed"], options["rates"], options.get("extra", []))
    faults = options.get("faults", {})
    _warm_up(judge)
    conn.send(("ready", os.getpid()))
    try:
        while True:
            message = conn.recv()
            if message[0] == "stop":
                break
            if message[0] == "corpus":
                for data in message[1]:
                    maker.corpus.add(data)
                continue
            _, first, count = message
            result = BatchResult()
            for index in range(first, first + count):
                data, config = maker.make(index)
                slot.write(index, data, config_json(config))
                _inject(faults.get(index))
                started = time.perf_counter()
                try:
                    verdict = judge.run(data, config)
                except Exception:  # noqa: BLE001 - a bug of the harness: reported as such, with the case
                    verdict = Verdict("harness_error", traceback.format_exc()[-2000:])
                result.record(index, config.path, verdict, time.perf_counter() - started, data, config)
                if verdict.features:
                    maker.corpus.offer(data, verdict.features)
            slot.clear()
            result.max_rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            conn.send(("done", first, count, result.to_dict(), maker.corpus.take_added()))
    finally:
        judge.close()
        slot.close()

