"""Compiles the kernels once, filling Numba's on-disk cache.

``make install`` runs ``python -m arrow_bridge.warmup``: the host reader's
kernels (inference, every explicit type, the transcoder, record boundaries,
the writer, the aggregate stage), so that a host read never waits for the JIT; later processes
load the cached machine code in a fraction of a second. It also builds the
startup library (:mod:`arrow_bridge.startup`): the kernels a first read
calls, compiled ahead of time, so that a fresh process reads its first files
without importing Numba. The device-side
StorageApps are about half the compile time and only ``device=`` reads use
them: they compile on the first such read (and are cached then), or here
with ``--device`` (``make test`` does). Numba compiles on one core, so the
steps run in as many processes as there are cores (``--jobs N``), in groups
of about equal compile time. ``--timings`` prints each step's seconds.
"""
from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import shutil
import sys
import tempfile
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import pyarrow as pa

from arrow_bridge import startup
from arrow_bridge.jit import lock_cache_saves

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
        with ProcessPoolExecutor(len(groups), mp_context=get_context("spawn"), initializer=lock_cache_saves) as pool:
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


def _warm_startup_library() -> None:
    """The kernels a small read calls, compiled ahead of time (:mod:`arrow_bridge.startup`);
    right after the inferred types, whose kernels its recording reads load from the cache."""
    _warm_inference()
    try:
        build_startup_library()
    except Exception as error:  # noqa: BLE001 - reads still work, through Numba: say so and go on
        print(f"arrow_bridge: no startup library ({type(error).__name__}: {error}); "
              "small reads in fresh processes will load Numba", file=sys.stderr)


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


#: What a first small read parses: every inferred type, nulls, quotes, CRLF;
#: the last, read in spans of :data:`STARTUP_SPAN` bytes, stands for a file of
#: several spans (cut at line breaks, parsed on the read's threads).
STARTUP_SAMPLES = (
    b"a,b,c\n1,2.5,x\n3,4.5,y\n",
    b"i,f,b,d,ts,s,n\n1,1.5,true,2020-01-01,2020-01-01 00:00:00,\"a\"\"b\",\n"
    b"-2,1e300,false,1969-12-31,2020-01-01T12:00:00,x,NA\n",
    b"x,y\r\n1,\r\n,2\r\n",
    b"only\n7\n",
    b"i,f,b,d,s,n\n" + b"".join(b'%d,%d.25,%s,2020-01-%02d,"s%d",%s\n' % (
        k, -k, b"true" if k % 3 else b"false", 1 + k % 28, k % 7, b"" if k % 5 else b"NA") for k in range(600)),
)
STARTUP_SPAN = 4096


def record_calls(samples=STARTUP_SAMPLES) -> dict[str, dict[str, Any]]:
    """Reads ``samples`` with Numba and returns the kernels called from Python:
    ``{kernel id: {repr(argument types): (kernel, argument types, Numba signature)}}``,
    those whose argument types map back to Numba's (what a retiring library loads)."""
    from arrow_bridge import read_csv
    from arrow_bridge.jit import Kernel

    calls: dict[str, dict[str, Any]] = {}
    plain_call = Kernel.__call__

    def recording_call(kernel, *args, **kwargs):
        result = plain_call(kernel, *args, **kwargs)
        if not kwargs:
            try:
                key = startup.type_key(args)
            except startup.NoTypeKey:
                return result
            if "<locals>" in kernel.__qualname__ or not kernel.startup_library:
                return result  # made inside a function (its name may not be its own), or kept out
            known = calls.setdefault(startup.kernel_id(kernel), {})
            signature = None if repr(key) in known else _signature(kernel, args)
            if signature is not None and startup.numba_types(key) == signature.args:  # what a retiring library loads
                known[repr(key)] = (kernel, key, signature)
        return result

    startup.retire()
    Kernel.__call__ = recording_call
    try:
        with tempfile.TemporaryDirectory() as folder:
            for number, sample in enumerate(samples):
                path = Path(folder, f"sample{number}.csv")
                path.write_bytes(sample)
                read_csv(path)  # as a script would: a path, the default threads
                read_csv(io.BytesIO(sample), n_threads=1)
                if len(sample) > STARTUP_SPAN:
                    read_csv(path, block_size=STARTUP_SPAN)
    finally:
        Kernel.__call__ = plain_call
    return calls


def _signature(kernel, args: tuple):
    import numba

    types = tuple(numba.typeof(arg) for arg in args)
    return kernel.dispatcher.overloads[types].signature


def build_startup_library(out_dir: Path = startup.LIBRARY_FOLDER, force: bool = False) -> Path:
    """Records a small read's kernel calls and compiles them into the library
    (unless it matches the sources already, or ``force``); returns its folder.

    ``numba.pycc`` is pending deprecation in Numba (a successor is announced,
    not released): its warning is silenced here, and when it goes, small
    reads load Numba again (:mod:`arrow_bridge.startup` finds no library).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=DeprecationWarning)
        warnings.simplefilter("ignore", category=PendingDeprecationWarning)
        from numba.pycc import CC

    if not force and startup.built_from_these_sources(out_dir):
        return out_dir
    calls = record_calls()
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.mkdir(parents=True)
    compiler = CC("kernels")
    compiler.output_dir = str(out_dir)
    kernels: dict[str, dict[str, str]] = {}
    for number, (kernel_name, entries) in enumerate(sorted(calls.items())):
        for variant, (key, (kernel, _, signature)) in enumerate(sorted(entries.items())):
            name = f"kernel{number}_{variant}"
            compiler.export(name, signature)(kernel.py_func)
            kernels.setdefault(kernel_name, {})[key] = name
    with _fresh_flags_per_export({kernel.py_func: kernel.options for entries in calls.values()
                                  for kernel, _, _ in entries.values()}):
        compiler.compile()
    manifest = {"fingerprint": startup.fingerprint(), "kernels": kernels}
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True))
    return out_dir


@contextlib.contextmanager
def _fresh_flags_per_export(options: dict):
    """Each export compiled with its own copy of pycc's flags, set to its kernel's
    error model (``options``: ``{Python function: njit options}``).

    Numba 0.68's pycc compiles every export with one ``Flags`` object, which a
    compile changes: ``tokenize`` failed to type after ``split_record`` (its
    ``status`` variable locked to one literal); and pycc has no per-export
    options, where ``convert_fixed`` is declared ``error_model="numpy"``.
    """
    from numba.pycc import compiler as pycc_compiler

    compile_extra = pycc_compiler.compile_extra

    def with_own_flags(typing_context, target_context, function, args, return_type, flags, **more):
        flags = copy.deepcopy(flags)
        flags.error_model = options.get(function, {}).get("error_model", "python")
        return compile_extra(typing_context, target_context, function, args, return_type, flags, **more)

    pycc_compiler.compile_extra = with_own_flags
    try:
        yield
    finally:
        pycc_compiler.compile_extra = compile_extra


#: (name, step, its compile seconds on the 2-core development machine: how the groups are balanced).
_STEPS = (
    ("reader, inferred types + startup library", _warm_startup_library, 32.0),
    ("explicit types", _warm_explicit_types, 40.0),
    ("transcoder", _warm_transcoder, 1.0),
    ("record boundaries (Dask)", _warm_ranges, 1.0),
    ("writer", _warm_writer, 16.0),
    ("aggregates", _warm_aggregates, 5.0),
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
