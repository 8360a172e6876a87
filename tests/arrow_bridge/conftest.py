"""Fixtures of the arrow_bridge tests: test modules take them as arguments and define none of their own.

Random CSV data, reference readers and exact comparisons are a library rather
than fixtures: ``csvgen``, imported as ``from csvgen import ...``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from arrow_bridge.kernels import formatting
from arrow_bridge.kernels.format_app import csv_format
from device_emulator import ComputationalSSD, FaultPlan
from ndp_core import Engine

# Quoted delimiters and a quoted line break, an empty float and an empty bool, dates.
_SAMPLE_HEADER = b"id,name,price,day,ok\n"
_SAMPLE_ROWS = (
    b'1,"Smith, J",1.25,2020-01-01,true\n'
    b'2,"multi\nline",,2020-01-02,false\n'
    b"3,plain,3.5e2,2020-01-03,\n"
)


@pytest.fixture(scope="session")
def write_file(tmp_path_factory) -> Callable[[str, bytes], Path]:
    """``write_file(name, data)``: the path of a new file holding ``data``, in a folder of its own.

    Session-scoped, so that Hypothesis tests may call it once per example.
    """

    def write(name: str, data: bytes) -> Path:
        path = tmp_path_factory.mktemp("data") / name
        path.write_bytes(data)
        return path

    return write


@pytest.fixture
def csv_path(write_file) -> Path:
    """A small CSV file: a header and 150 rows (quoted delimiters and line
    breaks, empty values, ints, floats, dates, bools)."""
    return write_file("sample.csv", _SAMPLE_HEADER + _SAMPLE_ROWS * 50)


@pytest.fixture(scope="module")
def devices():
    """``devices(profile, faults=None, **overrides)``: an emulated SSD, made on first use
    and shared by the module's tests (closed after them)."""
    made = {}

    def device(profile: str, faults: "FaultPlan | None" = None, **overrides) -> ComputationalSSD:
        key = (profile, repr(faults), tuple(sorted(overrides.items())))
        if key not in made:
            made[key] = ComputationalSSD(profile, workers=2, faults=faults, **overrides)
        return made[key]

    yield device
    for ssd in made.values():
        ssd.close()


@pytest.fixture()
def mwrite_engine():
    """An engine with 64-byte pages, so that a few rows of text fill several."""
    with Engine(page_size=64, cores=1, queue_depth=4) as engine:
        yield engine


@pytest.fixture()
def mwrite_app(mwrite_engine, tmp_path):
    """``(instance, stream, path)``: a fresh writer app instance (MWRITE) writing one file."""
    path = tmp_path / "out.csv"
    stream = mwrite_engine.stream_create(str(path), writable=True)
    inst = mwrite_engine.minit(csv_format.address, state_size=formatting.STATE_HEADER + mwrite_engine.page_size,
                               streams=[stream])
    yield inst, stream, path
    mwrite_engine.mdeinit(inst)
    mwrite_engine.stream_close(stream)


class EngineOnlyDevice:
    """The two attributes write_csv needs from a device (ComputationalSSD has more)."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self.page_size = engine.page_size


@pytest.fixture
def make_engine_device():
    """``make_engine_device(**engine_options)``: a device that is only an engine (for the
    writer's MWRITE path), closed after the test."""
    engines = []

    def make(**options) -> EngineOnlyDevice:
        engines.append(Engine(**options))
        return EngineOnlyDevice(engines[-1])

    yield make
    for engine in engines:
        engine.close()


@pytest.fixture(scope="module")
def engine_device():
    """A device that is only an engine (4 KiB pages, 2 workers), for the writer's MWRITE path."""
    with Engine(page_size=4096, cores=2, queue_depth=16) as engine:
        yield EngineOnlyDevice(engine)
