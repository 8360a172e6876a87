"""Compiles the kernels once, filling Numba's on-disk cache.

``make install`` runs ``python -m arrow_bridge.warmup``: the host reader's
kernels (inference, every explicit type, the transcoder, record boundaries,
the writer, the aggregate stage), so that a host read never waits for the JIT; later processes
load the cached machine code in a fraction of a second. The device-side
StorageApps are about half the compile time and only ``device=`` reads use
them: they compile on the first such read (and are cached then), or here
with ``--device`` (``make test`` does). ``--timings`` prints each step's
seconds.
"""
from __future__ import annotations

import io
import sys
import time

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


def warm_up(timings: dict[str, float] | None = None, device: bool = False) -> float:
    """Reads small samples through every converter (and compiles the device
    StorageApps if ``device``); returns the seconds taken (and each step's in
    ``timings`` when given).

    >>> warm_up() >= 0  # quick once the kernels are in Numba's cache (make install puts them there)
    True
    """
    started = time.perf_counter()
    for name, step in _STEPS + (_DEVICE_STEPS if device else ()):
        begun = time.perf_counter()
        step()
        if timings is not None:
            timings[name] = time.perf_counter() - begun
    return time.perf_counter() - started


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


def _warm_device_apps() -> None:
    import arrow_bridge.kernels.format_app  # noqa: F401 - compiles the device-side StorageApps
    import arrow_bridge.kernels.span_app  # noqa: F401


def _warm_writer() -> None:
    from arrow_bridge import read_csv
    from arrow_bridge.writer import write_csv

    write_csv(read_csv(io.BytesIO(_SAMPLE), n_threads=1), io.BytesIO())
    write_csv(pa.table({f"c{i}": pa.nulls(1).cast(t) for i, t in enumerate(_EXPLICIT_TYPES)}), io.BytesIO())


def _warm_aggregates() -> None:
    """Compiles the aggregate stage's group numbering and exact sums."""
    from arrow_bridge import aggregate_csv

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


_STEPS = (
    ("reader, inferred types", _warm_inference),
    ("explicit types", _warm_explicit_types),
    ("transcoder", _warm_transcoder),
    ("record boundaries (Dask)", _warm_ranges),
    ("writer", _warm_writer),
    ("aggregates", _warm_aggregates),
)
_DEVICE_STEPS = (("device StorageApps", _warm_device_apps),)


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
    steps: dict[str, float] = {}
    total = warm_up(steps, device="--device" in sys.argv)
    what = "kernels" if "--device" in sys.argv else "host kernels"
    print(f"arrow_bridge: {what} compiled and cached in {total:.1f} s")
    if "--timings" in sys.argv:
        print("\n".join(f"  {name}: {seconds:.1f} s" for name, seconds in steps.items()))
