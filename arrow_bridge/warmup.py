"""Compiles the kernels once, filling Numba's on-disk cache.

``make install`` runs ``python -m arrow_bridge.warmup``: the host reader's
kernels (inference, every explicit type, the transcoder, record boundaries,
the writer, the aggregate stage), so that a host read never waits for the JIT; later processes
load the cached machine code in a fraction of a second. The device-side
StorageApps are about half the compile time and only ``device=`` reads use
them: they compile on the first such read (and are cached then), or here
with ``--device`` (``make test`` does). Numba compiles on one core, so the
steps run in as many processes as there are cores (``--jobs N``), in groups
of about equal compile time. ``--timings`` prints each step's seconds.
"""
from __future__ import annotations

import io
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

import pyarrow as pa

_SAMPLE = (
    b"i,f,b,d,t,ts,tsn,tz,s,n\n"
    b'1,1.5,true,2020-01-01,12:34,2020-01-01 00:00:00,2020-01-01 00:00:00.5,2020-01-01T00:00Z,"a""b",\n'
    b"-2,1e300,false,1969-12-31,23:59:59,2020-01-01T12,2020-01-01 00:00:00.25,2020-01-01T00:00+01:00,x,NA\n"
)
_BAD = b"x\n1\n\xff\n"

_EXPLICIT_TYPES = [
    pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64(),
    pa.float32(), pa.float64(), pa.bool_(), pa.date32(), pa.time32("s"), pa.time32("ms"),
    pa.time64("us"), pa.time64("ns"), pa.timestamp("s"), pa.timestamp("ms"), pa.timestamp("us"),
    pa.timestamp("ns"), pa.timestamp("ns", tz="UTC"), pa.string(), pa.large_string(), pa.binary(),
    pa.large_binary(), pa.null(),
]


def warm_up(timings: dict[str, float] | None = None, device: bool = False, jobs: int = 1) -> float:
    """Reads small samples through every converter (and compiles the device
    StorageApps if ``device``), in ``jobs`` processes; returns the seconds taken
    (and each step's in ``timings`` when given).

    >>> warm_up() >= 0  # quick once the kernels are in Numba's cache (make install puts them there)
    True
    """
    started = time.perf_counter()
    groups = _groups(_STEPS + (_DEVICE_STEPS if device else ()), jobs)
    if len(groups) == 1:
        steps = _run_steps(groups[0])
    else:  # a fresh interpreter per group: Numba's compiler is not shared between them, its cache is
        with ProcessPoolExecutor(len(groups), mp_context=get_context("spawn"), initializer=_lock_cache_saves) as pool:
            steps = {name: seconds for done in pool.map(_run_steps, groups) for name, seconds in done.items()}
    if timings is not None:
        timings.update(steps)
    return time.perf_counter() - started


def _groups(steps: tuple, jobs: int) -> list[list[str]]:
    """Step names dealt into at most ``jobs`` groups, longest step first, each to the group with least work."""
    groups: list[list[str]] = [[] for _ in range(max(1, min(jobs, len(steps))))]
    work = [0.0] * len(groups)
    for name, _, seconds in sorted(steps, key=lambda step: -step[2]):
        least = work.index(min(work))
        groups[least].append(name)
        work[least] += seconds
    return [group for group in groups if group]


def _run_steps(names: list[str]) -> dict[str, float]:
    """Runs the named steps in this process: ``{name: seconds}``."""
    every = {name: step for name, step, _ in _STEPS + _DEVICE_STEPS}
    timings = {}
    for name in names:
        begun = time.perf_counter()
        every[name]()
        timings[name] = time.perf_counter() - begun
    return timings


def _lock_cache_saves() -> None:
    """Makes Numba's cache saves in this process exclusive across processes.

    Numba saves an entry by reading the function's index, adding a data file
    name to it and writing both back, unlocked: two processes compiling one
    function at different signatures (``convert_fixed`` is compiled for several
    types by several steps) could lose an entry, or map two signatures to one
    data file. The warm-up's processes take a file lock around each save.
    """
    import fcntl
    import tempfile

    from numba.core import caching

    save = caching.IndexDataCacheFile.save
    if getattr(save, "locked", False):
        return
    lock_path = os.path.join(tempfile.gettempdir(), f"arrow_bridge-numba-cache-{os.getuid()}.lock")

    def locked_save(self, key, data):
        with open(lock_path, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
            save(self, key, data)

    locked_save.locked = True
    caching.IndexDataCacheFile.save = locked_save


def _warm_inference() -> None:
    from arrow_bridge import read_csv

    read_csv(io.BytesIO(_SAMPLE), n_threads=1)
    read_csv(io.BytesIO(_BAD), n_threads=1)
    read_csv(io.BytesIO(b"x,y\n1,2\n3\n"), on_bad_lines="skip", n_threads=1)


def _warm_explicit_types() -> None:
    from arrow_bridge import read_csv

    for type_ in _EXPLICIT_TYPES:
        try:
            read_csv(io.BytesIO(b"x\n1\n"), dtype={"x": type_}, n_threads=1)
        except ValueError:
            pass  # the value may not convert; the kernel is compiled either way


def _warm_transcoder() -> None:
    from arrow_bridge import read_csv

    read_csv(io.BytesIO("x\né\n".encode("latin-1")), encoding="latin-1", n_threads=1)  # the byte-table transcoder


def _warm_csv_app() -> None:
    import arrow_bridge.kernels.span_app  # noqa: F401 - compiles the device's CSV StorageApp


def _warm_format_app() -> None:
    import arrow_bridge.kernels.format_app  # noqa: F401 - compiles the device's CSV-writing StorageApp


def _warm_writer() -> None:
    from arrow_bridge import read_csv
    from arrow_bridge.writer import write_csv

    write_csv(read_csv(io.BytesIO(_SAMPLE), n_threads=1), io.BytesIO())
    write_csv(pa.table({f"c{i}": pa.nulls(1).cast(t) for i, t in enumerate(_EXPLICIT_TYPES)}), io.BytesIO())


def _warm_aggregates() -> None:
    """Compiles the aggregate stage's group numbering and exact sums."""
    from arrow_bridge import aggregate_csv

    sample = io.BytesIO(b"k,i,f\na,1,1.5\nb,2,2.5\nb,,\n")  # columns with nulls are summed from copies
    aggregate_csv(sample, [("i", "sum"), ("f", "sum")], group_by=["k"], n_threads=1)
    aggregate_csv(io.BytesIO(b"k,i,f\na,1,1.5\nb,2,2.5\n"), [("i", "sum"), ("f", "sum")], group_by=["k"], n_threads=1)


def _warm_ranges() -> None:
    """Compiles the record-boundary kernels Dask partitioning uses."""
    import os
    import tempfile

    from arrow_bridge.ranges import record_ranges

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "ranges.csv")
        with open(path, "wb") as f:
            f.write(b'a,b\n1,"x\ny"\n2,z\n3,w\n' * 50)
        for blocksize in (8, 64):
            record_ranges(path, 4, os.path.getsize(path), blocksize=blocksize, page_size=1)


#: (name, step, its compile seconds on the 2-core development machine: how the groups are balanced).
_STEPS = (
    ("reader, inferred types", _warm_inference, 23.0),
    ("explicit types", _warm_explicit_types, 33.0),
    ("transcoder", _warm_transcoder, 1.0),
    ("record boundaries (Dask)", _warm_ranges, 1.0),
    ("writer", _warm_writer, 14.0),
    ("aggregates", _warm_aggregates, 2.0),
)
_DEVICE_STEPS = (("device CSV app", _warm_csv_app, 36.0), ("device format app", _warm_format_app, 12.0))


def device_apps_cached() -> bool:
    """Whether Numba's cache holds the device StorageApps (else the first device read compiles them).

    >>> isinstance(device_apps_cached(), bool)
    True
    """
    import glob
    import os

    folder = os.path.join(os.environ["NUMBA_CACHE_DIR"], "**") if os.environ.get("NUMBA_CACHE_DIR") else \
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels", "__pycache__")
    return bool(glob.glob(os.path.join(folder, "span_app.*.nbi"), recursive=True))


if __name__ == "__main__":
    jobs = int(sys.argv[sys.argv.index("--jobs") + 1]) if "--jobs" in sys.argv else len(os.sched_getaffinity(0))
    device = "--device" in sys.argv
    steps: dict[str, float] = {}
    total = warm_up(steps, device=device, jobs=jobs)
    processes = len(_groups(_STEPS + (_DEVICE_STEPS if device else ()), jobs))
    print(f"arrow_bridge: {'kernels' if device else 'host kernels'} compiled and cached in {total:.1f} s "
          f"({processes} processes)")
    if "--timings" in sys.argv:
        print("\n".join(f"  {name}: {seconds:.1f} s" for name, seconds in steps.items()))
