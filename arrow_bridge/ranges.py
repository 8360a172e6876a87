"""Exact record-aligned byte ranges of a CSV file, for partitioned reads.

:func:`record_ranges` cuts a file's data (after its header) into page-aligned
blocks and moves every cut to the first byte where the tokenizer would begin a
record at or after it, so that range ``i`` holds exactly the records that
*start* in block ``i`` (and completes the one crossing its end). A quoted
field may hold line breaks, so "the next newline" is not a record start; the
tokenizer's state at a cut decides, and that state depends on the whole file
before the cut. Two exact methods find it (kernels in
:mod:`arrow_bridge.kernels.boundaries`):

1. **Probe** (cheap, local, used first): the states the tokenizer can be in at
   the cut are those reachable through the ``lookbehind`` bytes before it
   from any state (all of them merge after a line break outside quotes, so a
   few KiB usually leave a single one). If every possible state gives the
   same first record start after the cut, that is *the* record start: no
   other bytes can change it.
2. **Transfer functions** (for cuts the probe cannot settle, e.g. inside long
   multi-line quoted fields): for every range, the first record start and
   the exit state for each entry state; composed in file order from a known
   record start they give the exact state at each cut. Ranges are
   independent, so callers may compute them in parallel (``map=``).

A range with no quote or escape byte costs one backward scan; elsewhere scans
jump from quote to quote.

>>> import os, tempfile
>>> with tempfile.TemporaryDirectory() as folder:
...     path = os.path.join(folder, "x.csv")
...     _ = open(path, "wb").write(b'a,b\\n1,"x\\ny"\\n2,z\\n')
...     record_ranges(path, 4, os.path.getsize(path), blocksize=8, page_size=1)
[(4, 12), (12, 16)]
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Optional, Protocol, Sequence

import numpy as np

from arrow_bridge.kernels.boundaries import (
    N_STATES,
    NONE,
    REC,
    exit_state,
    first_record_start,
    last_special,
    possible_states,
    reachable_states,
    transition_table,
)
from arrow_bridge.source import open_source

PAGE_SIZE = 4096  # device page size used when no device says otherwise
LOOKBEHIND = 4096  # bytes before a cut the probe looks at
PROBE_WINDOW = 64 << 10  # first bytes after a cut the probe looks at (grows 4x, up to PROBE_MAX)
PROBE_MAX = 4 << 20
SCAN_CHUNK = 8 << 20  # bytes per read when scanning a whole range (bounds memory)

class Reader(Protocol):
    """Positional reads of a file (:meth:`arrow_bridge.source.ByteSource.read_range`)."""

    def __call__(self, offset: int, length: int, out: Optional[np.ndarray] = None) -> np.ndarray: ...


# ---- the dialect, as the boundary kernels take it --------------------------------------------
@dataclass(frozen=True)
class ScanDialect:
    """Delimiter, quote and escape bytes as the boundary kernels use them.

    >>> ScanDialect.from_options({"sep": ";"}).delimiter
    59
    """

    delimiter: int
    quote: int  # -1: none
    escape: int  # -1: none
    double_quote: bool

    @classmethod
    def from_options(cls, options: Any = None) -> "ScanDialect":
        """From reader keywords (``sep``, ``quotechar``, ``escapechar``,
        ``doublequote``, ``quoting``, ...), a ``CsvOptions`` or a ScanDialect."""
        if isinstance(options, ScanDialect):
            return options
        from arrow_bridge.dialect import Dialect
        from arrow_bridge.options import CsvOptions, resolve_options

        opts = options if isinstance(options, CsvOptions) else resolve_options(**_dialect_keywords(options))
        d = Dialect.from_options(opts)
        return cls(d.delimiter, d.quote, d.escape, d.double_quote)

    @property
    def table(self) -> np.ndarray:
        return _table(self)

    @property
    def reachable(self) -> np.ndarray:
        return reachable_states(self.table)


_TABLES: dict = {}


def _table(d: ScanDialect) -> np.ndarray:
    if d not in _TABLES:
        _TABLES[d] = transition_table(d.delimiter, d.quote, d.escape, d.double_quote)
    return _TABLES[d]


_DIALECT_KEYS = ("sep", "delimiter", "quotechar", "escapechar", "doublequote", "quoting",
                 "parse_options")


def _dialect_keywords(options: Optional[Mapping[str, Any]]) -> dict:
    return {k: v for k, v in (options or {}).items() if k in _DIALECT_KEYS}


# ---- cuts -----------------------------------------------------------------------------------
def plan_cuts(data_offset: int, data_end: int, blocksize: int, page_size: int = PAGE_SIZE) -> list[int]:
    """Nominal cuts: the data start, every multiple of the block size (rounded
    up to whole pages) inside the data, and the data end. Range ``i`` is
    ``[cuts[i], cuts[i + 1])``; there is always at least one.

    >>> plan_cuts(100, 10000, 4096)
    [100, 4096, 8192, 10000]
    >>> plan_cuts(100, 10000, 1), plan_cuts(100, 10000, 1 << 30), plan_cuts(50, 50, 4096)
    ([100, 4096, 8192, 10000], [100, 10000], [50, 50])
    """
    if page_size < 1:
        raise ValueError(f"page_size must be >= 1, got {page_size}")
    block = max(page_size, -(-int(blocksize) // page_size) * page_size)
    first = (data_offset // block + 1) * block
    return [data_offset, *range(first, data_end, block), max(data_end, data_offset)]


# ---- per-range summaries (the transfer functions) ------------------------------------------------
@dataclass(frozen=True)
class RangeSummary:
    """For each entry state: the first record start in ``[start, stop)``
    (``NONE`` when none) and the state at ``stop`` (``NONE``: not computed)."""

    start: int
    stop: int
    first: tuple[int, ...]
    exit: tuple[int, ...]


@dataclass(frozen=True)
class SummaryJob:
    """A range to summarize: its bytes, the entry states wanted and whether the
    exit states are needed (not for the last range before a settled cut)."""

    start: int
    stop: int
    entries: tuple[int, ...]
    need_exit: bool = True


def summarize(read: Reader, job: SummaryJob, dialect: ScanDialect, chunk: int = SCAN_CHUNK) -> RangeSummary:
    """The transfer function of one range (see :class:`RangeSummary`).

    One sweep over the range in chunks (the first small, growing to
    ``chunk`` bytes: memory stays bounded). Entries look for their first
    record start; from there each is in state ``REC`` and becomes a *path*
    whose state is carried to the end. Paths in the same state at a chunk's
    end are the same from then on and merge, so in practice one scan carries
    every entry.
    """
    table, q, e = dialect.table, dialect.quote, dialect.escape
    first, exits = [NONE] * N_STATES, [NONE] * N_STATES
    searching = {s: s for s in job.entries}  # entry -> state, until its first record start
    paths: dict[int, list[int]] = {}  # state at the current position -> entries on that path
    pos, size = job.start, min(PROBE_WINDOW, chunk)
    out = np.empty(min(chunk, max(job.stop - job.start, 0)), np.uint8)
    while pos < job.stop and (searching or (job.need_exit and paths)):
        buf = read(pos, min(size, job.stop - pos), out)
        if not len(buf):
            break
        n, special_end = len(buf), last_special(buf, 0, len(buf), q, e)
        moved: dict[int, list[int]] = {}
        for state, entries in paths.items():
            moved.setdefault(int(exit_state(buf, 0, n, state, table, q, e, special_end)), []).extend(entries)
        started: dict[int, list[int]] = {}
        for entry, state in list(searching.items()):
            at, state = first_record_start(buf, 0, n, state, table, q, e, special_end)
            if at >= 0:
                first[entry] = pos + at
                started.setdefault(int(at), []).append(entry)
                del searching[entry]
            else:
                searching[entry] = int(state)
        if job.need_exit:
            for at, entries in started.items():
                moved.setdefault(int(exit_state(buf, at, n, REC, table, q, e, special_end)), []).extend(entries)
        paths = moved
        pos += n
        size = min(size * 4, chunk)
    for entry, state in searching.items():  # no record start: their state is the range's exit state
        exits[entry] = state
    for state, entries in paths.items():
        for entry in entries:
            exits[entry] = state
    return RangeSummary(job.start, job.stop, tuple(first), tuple(exits))


# ---- probing one cut ---------------------------------------------------------------------------
def probe(read: Reader, cut: int, data_offset: int, data_end: int, dialect: ScanDialect,
          lookbehind: int = LOOKBEHIND) -> Optional[int]:
    """The first record start at or after ``cut`` when the bytes around it
    settle it (see the module docstring), ``data_end`` when no record starts
    after it, or None when they do not settle it.

    >>> import numpy as np
    >>> data = np.frombuffer(b'a,b\\n1,x\\n2,"y\\n3,z"\\n', np.uint8)
    >>> read = lambda off, n, out=None: data[off:off + n]
    >>> probe(read, 5, 4, len(data), ScanDialect.from_options())
    8
    >>> probe(read, 13, 4, len(data), ScanDialect.from_options(), lookbehind=1) is None
    True
    """
    table, q, e = dialect.table, dialect.quote, dialect.escape
    behind = max(data_offset, cut - max(lookbehind, 0))
    if behind == data_offset:  # the window reaches the data start: the state there is REC
        entries = np.zeros(N_STATES, np.bool_)
        entries[REC] = True
    else:
        entries = dialect.reachable
    head = read(behind, cut - behind)
    states = np.flatnonzero(possible_states(head, 0, len(head), table, entries))
    window = PROBE_WINDOW
    while True:
        stop = min(data_end, cut + window)
        buf = read(cut, stop - cut)
        special_end = last_special(buf, 0, len(buf), q, e)
        starts = set()
        for state in states:
            at, _ = first_record_start(buf, 0, len(buf), state, table, q, e, special_end)
            if at < 0 and stop < data_end:
                break  # not within the window: look further
            starts.add(cut + at if at >= 0 else data_end)
        else:
            return starts.pop() if len(starts) == 1 else None
        if window >= PROBE_MAX:
            return None
        window *= 4


# ---- putting it together ------------------------------------------------------------------------
class RangePlanner:
    """Exact record ranges between given cuts, in two steps so that the
    expensive part can run elsewhere (a Dask cluster, a thread pool):

    >>> import numpy as np
    >>> data = np.frombuffer(b'a,b\\n1,"x\\ny"\\n2,z\\n', np.uint8)
    >>> read = lambda off, n, out=None: data[off:off + n]
    >>> dialect = ScanDialect.from_options()
    >>> planner = RangePlanner(read, plan_cuts(4, len(data), 8, page_size=1), dialect, lookbehind=0)
    >>> summaries = [summarize(read, job, dialect) for job in planner.jobs]
    >>> planner.ranges(summaries)
    [(4, 12), (12, 16)]

    ``cuts[0]`` must be a record start (the data start) and ``cuts[-1]`` the
    data end. The constructor probes every other cut (reading a few KiB
    around each); ``jobs`` lists the range summaries still needed for the
    cuts probing did not settle (usually none).
    """

    def __init__(self, read: Reader, cuts: Sequence[int], dialect: ScanDialect, lookbehind: int = LOOKBEHIND):
        self.cuts = list(cuts)
        self.data_end = self.cuts[-1]
        n = len(self.cuts) - 1
        starts: list[Optional[int]] = [self.cuts[0]] + [None] * (n - 1)
        for i in range(1, n):
            if starts[i - 1] is not None and starts[i - 1] >= self.cuts[i]:
                starts[i] = starts[i - 1]  # no record starts in range i - 1: the same first start
            else:
                starts[i] = probe(read, self.cuts[i], self.cuts[0], self.data_end, dialect, lookbehind)
        self._starts = starts
        self._runs = _unsettled_runs(starts)
        self.jobs: list[SummaryJob] = []
        all_entries = tuple(int(s) for s in np.flatnonzero(dialect.reachable))
        for i, k in self._runs:
            # From the settled record start before the run (state REC there) ...
            self.jobs.append(SummaryJob(starts[i - 1], self.cuts[i], (REC,)))
            # ... through every unsettled range (the last needs no exit state).
            self.jobs += [SummaryJob(self.cuts[m], self.cuts[m + 1], all_entries, m < k - 1)
                          for m in range(i, k)]

    def ranges(self, summaries: Sequence[RangeSummary] = ()) -> list[tuple[int, int]]:
        """The exact ``[start, stop)`` of every range, given the summaries of
        :attr:`jobs` (in order)."""
        if len(summaries) != len(self.jobs):
            raise ValueError(f"expected {len(self.jobs)} range summaries, got {len(summaries)}")
        starts = list(self._starts)
        it = iter(summaries)
        for i, k in self._runs:
            state = next(it).exit[REC]
            for m in range(i, k):
                summary = next(it)
                starts[m] = summary.first[state] if summary.first[state] != NONE else None
                state = summary.exit[state]
        # A range where no record starts is empty: it starts where the next one does.
        following = self.data_end
        for m in range(len(starts) - 1, -1, -1):
            if starts[m] is None:
                starts[m] = following
            following = starts[m]
        return list(zip(starts, starts[1:] + [self.data_end]))


def _unsettled_runs(starts: Sequence[Optional[int]]) -> list[tuple[int, int]]:
    """``(i, k)`` for each maximal run ``starts[i:k]`` of None."""
    runs, i = [], 0
    while i < len(starts):
        if starts[i] is None:
            k = i
            while k < len(starts) and starts[k] is None:
                k += 1
            runs.append((i, k))
            i = k
        else:
            i += 1
    return runs


def record_ranges(
    path: str | os.PathLike,
    data_offset: int,
    file_size: int,
    blocksize: int,
    options: Any = None,
    *,
    page_size: int = PAGE_SIZE,
    lookbehind: int = LOOKBEHIND,
    map: Callable[[Callable, Iterable], Iterable] = map,
    storage_options: Optional[Mapping[str, Any]] = None,
) -> list[tuple[int, int]]:
    """Exact record-boundary byte ranges of a file's data.

    ``data_offset`` is where the data starts (after BOM, skipped rows and
    header: ``arrow_bridge.preamble.read_preamble(...).data_offset``),
    ``file_size`` where it ends. The data is cut every ``blocksize`` bytes
    (rounded up to whole ``page_size`` pages, cuts on page boundaries) and
    each cut moved to the first record start at or after it; range ``i`` holds
    the records that start in block ``i``, and is empty when none does.
    ``options`` gives the dialect (reader keywords such as ``sep``,
    ``quotechar``, ``escapechar``, ``doublequote``, ``quoting``, or a
    ``CsvOptions``). ``map`` runs the range summaries (default: one after the
    other, here); ``lookbehind=0`` forces the transfer-function method.

    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = os.path.join(folder, "x.csv")
    ...     _ = open(path, "wb").write(b"a\\n" + b"1\\n" * 5000)
    ...     record_ranges(path, 2, os.path.getsize(path), blocksize=4096)
    [(2, 4096), (4096, 8192), (8192, 10002)]
    """
    dialect = ScanDialect.from_options(options)
    with open_source(os.fspath(path), storage_options) as source:
        cuts = plan_cuts(data_offset, file_size, blocksize, page_size)
        planner = RangePlanner(source.read_range, cuts, dialect, lookbehind)
    jobs = planner.jobs
    summaries = list(map(_SummarizeJob(os.fspath(path), dialect, storage_options), jobs)) if jobs else []
    return planner.ranges(summaries)


@dataclass(frozen=True)
class _SummarizeJob:
    """``summarize`` of one job of a file, as a picklable callable (for ``map``)."""

    path: str
    dialect: ScanDialect
    storage_options: Optional[Mapping[str, Any]] = None

    def __call__(self, job: SummaryJob) -> RangeSummary:
        return summarize_path(self.path, job, self.dialect, self.storage_options)


def summarize_path(path: str, job: SummaryJob, dialect: ScanDialect,
                   storage_options: Optional[Mapping[str, Any]] = None) -> RangeSummary:
    """:func:`summarize` of a range of the file at ``path`` (runs anywhere the
    path is readable: a thread, a Dask worker)."""
    with open_source(path, storage_options) as source:
        return summarize(source.read_range, job, dialect)
