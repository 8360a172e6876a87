"""Compiles every kernel specialization once, filling Numba's on-disk cache.

Run by ``make install`` (``python -m arrow_bridge.warmup``) so that users never
wait for the one-time JIT compile (66 s on a 2-core machine); later processes load the
cached machine code in a fraction of a second.
"""
from __future__ import annotations

import io
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


def warm_up() -> float:
    """Reads small samples through every converter; returns the seconds taken.

    >>> warm_up() >= 0  # quick once the kernels are in Numba's cache (make install puts them there)
    True
    """
    from arrow_bridge import read_csv

    started = time.perf_counter()
    read_csv(io.BytesIO(_SAMPLE), n_threads=1)
    read_csv(io.BytesIO(_BAD), n_threads=1)
    for type_ in _EXPLICIT_TYPES:
        try:
            read_csv(io.BytesIO(b"x\n1\n"), dtype={"x": type_}, n_threads=1)
        except ValueError:
            pass  # the value may not convert; the kernel is compiled either way
    read_csv(io.BytesIO(b"x,y\n1,2\n3\n"), on_bad_lines="skip", n_threads=1)
    read_csv(io.BytesIO("x\né\n".encode("latin-1")), encoding="latin-1", n_threads=1)  # the byte-table transcoder
    import arrow_bridge.kernels.format_app  # noqa: F401 - compiles the device-side StorageApps
    import arrow_bridge.kernels.span_app  # noqa: F401
    from arrow_bridge.writer import write_csv

    _warm_ranges()
    sample = read_csv(io.BytesIO(_SAMPLE), n_threads=1)
    write_csv(sample, io.BytesIO())
    write_csv(pa.table({f"c{i}": pa.nulls(1).cast(t) for i, t in enumerate(_EXPLICIT_TYPES)}), io.BytesIO())
    return time.perf_counter() - started


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


if __name__ == "__main__":
    print(f"arrow_bridge: kernels compiled and cached in {warm_up():.1f} s")
