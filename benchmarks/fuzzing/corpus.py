"""The seed corpus, fresh generated inputs, and the inputs kept for new behaviour.

Seeds live in ``tests/arrow_bridge/fuzz_corpus/seeds/``: hand-written tricky
files (``hand-*.csv``: quotes, CRLF, quoted line breaks, nulls, dates,
timestamps, bad rows, BOM, wide integers and floats, ...) and small files
from the property tests' generator (``csvgen-*.csv``, written once by
:func:`write_csvgen_seeds`). Cases found by the fuzzer (``found/``) are seeds
too.

Guidance: :class:`Corpus` keeps a mutant when its case showed a behaviour
not seen before - a new outcome signature of ours or of pyarrow's (error
message with numbers blanked, or result column types), a new pair of them,
or a new verdict - the cheap part of coverage guidance that reaches into
the Numba kernels (which no Python coverage tool sees).

>>> import random
>>> corpus = Corpus([b"a\\n1\\n"], random.Random(0))
>>> features = ("host", "table #x# [int64]", "table #x# [int64]", "agree", None)
>>> corpus.offer(b"a\\n2\\n", features), corpus.offer(b"a\\n3\\n", features)
(True, False)
>>> len(corpus.inputs)
2
"""
from __future__ import annotations

import random
from pathlib import Path
from typing import Iterable, Sequence

from benchmarks.fuzzing.reference import POOLS

CORPUS_DIR = Path(__file__).resolve().parents[2] / "tests" / "arrow_bridge" / "fuzz_corpus"
SEEDS_DIR = CORPUS_DIR / "seeds"
FOUND_DIR = CORPUS_DIR / "found"
MAX_KEPT = 20_000


def load_seeds(folders: Iterable[Path] = (SEEDS_DIR, FOUND_DIR)) -> list[bytes]:
    """Every ``*.csv`` file of ``folders``, in name order (the fuzzer's starting corpus)."""
    seeds = []
    for folder in folders:
        if folder.is_dir():
            seeds += [path.read_bytes() for path in sorted(folder.glob("*.csv"))]
    return seeds


class Corpus:
    """Inputs to mutate: the seeds, plus mutants that showed new behaviour."""

    def __init__(self, seeds: Sequence[bytes], rng: random.Random, max_kept: int = MAX_KEPT):
        self.inputs: list[bytes] = list(seeds) or [b"a\n1\n"]
        self.n_seeds = len(self.inputs)
        self.seen: set = set()
        self.rng = rng
        self.max_kept = max_kept
        self.added: list[bytes] = []  # kept since the last ``take_added``

    def pick(self, rng: random.Random) -> bytes:
        return rng.choice(self.inputs)

    def offer(self, data: bytes, features: tuple) -> bool:
        """Keeps ``data`` when ``features`` (path, ours, pyarrow's, kind, difference) hold something new."""
        path, ours, theirs, kind, difference = features
        keys = {("ours", ours), ("theirs", theirs), ("pair", ours, theirs), ("verdict", path, kind, difference)}
        new = keys - self.seen
        if not new:
            return False
        self.seen |= new
        self.add(data)
        self.added.append(data)
        return True

    def add(self, data: bytes) -> None:
        if len(self.inputs) < self.max_kept:
            self.inputs.append(data)
        else:  # full: replace a kept mutant, never a seed
            self.inputs[self.rng.randrange(self.n_seeds, len(self.inputs))] = data

    def take_added(self) -> list[bytes]:
        added, self.added = self.added, []
        return added


# ---- fresh inputs ------------------------------------------------------------------------------
def generate(rng: random.Random) -> bytes:
    """A small random CSV file from csvgen's value pools: 1-6 columns, 0-30 rows,
    fields quoted when they need it (or at random), one line-end style.

    >>> generate(random.Random(3)) == generate(random.Random(3))
    True
    """
    families = sorted(POOLS)
    ncols = rng.randint(1, 6)
    kinds = [rng.choice(families) for _ in range(ncols)]
    eol = rng.choice((b"\n", b"\n", b"\r\n", b"\r"))
    lines = [b",".join(b"c%d" % i for i in range(ncols))] if rng.random() < 0.85 else []
    for _ in range(rng.randint(0, 30)):
        lines.append(b",".join(_field(rng, rng.choice(POOLS[k] if rng.random() < 0.85 else POOLS["null"]))
                               for k in kinds))
    text = eol.join(lines)
    return text + eol if rng.random() < 0.9 else text


def _field(rng: random.Random, value: bytes) -> bytes:
    if any(c in value for c in b',"\r\n') or rng.random() < 0.1:
        return b'"' + value.replace(b'"', b'""') + b'"'
    return value


def write_csvgen_seeds(folder: Path = SEEDS_DIR, count: int = 60, max_bytes: int = 1500) -> list[Path]:
    """Writes ``count`` files from the property tests' generator
    (``csvgen.csv_cases``, no 64 KiB padding, derandomized: the same files
    every time for a given Hypothesis version) as ``csvgen-NNN.csv``; files over
    ``max_bytes`` are skipped (the corpus stays small)."""
    from hypothesis import HealthCheck, Phase, given, settings

    from csvgen import csv_cases

    found: list[bytes] = []

    @settings(max_examples=count * 3, derandomize=True, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck), deadline=None)
    @given(csv_cases(max_rows=20, pad=False))
    def collect(case) -> None:
        if len(found) < count and 0 < len(case.data) <= max_bytes and case.data not in found:
            found.append(case.data)

    collect()
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, data in enumerate(found):
        paths.append(folder / f"csvgen-{i:03d}.csv")
        paths[-1].write_bytes(data)
    return paths

