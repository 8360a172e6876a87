"""Fixtures for the ndp_core tests: engines, files and streams, cleaned up after each test.

Test data are constants in the test modules; the StorageApps the engine tests
install are Numba cfuncs in ``ndp_test_apps.py`` (compiled once, cached on disk).
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterator, Optional

import pytest

from ndp_core import Engine


@pytest.fixture
def make_engine() -> Iterator[Callable[..., Engine]]:
    """``make_engine(**options)``: an ``Engine(**options)`` closed after the test."""
    made: list[Engine] = []

    def make(**options) -> Engine:
        eng = Engine(**options)
        made.append(eng)
        return eng

    yield make
    for eng in made:
        eng.close()


@pytest.fixture
def engine(make_engine) -> Engine:
    """A small engine: 4 KiB pages, 2 workers, 8 queue slots."""
    return make_engine(page_size=4096, cores=2, queue_depth=8)


@pytest.fixture
def write_file(tmp_path) -> Callable[[str, bytes], Path]:
    """``write_file(name, data)``: the path of a new file in the test's temporary folder."""

    def write(name: str, data: bytes) -> Path:
        path = tmp_path / name
        path.write_bytes(data)
        return path

    return write


@pytest.fixture
def stream_of(request, write_file) -> Callable[..., int]:
    """``stream_of(data, name="data.bin", on=None)``: a stream over a new file
    holding ``data``, created on engine ``on`` (the ``engine`` fixture when None)."""

    def create(data: bytes, name: str = "data.bin", on: Optional[Engine] = None) -> int:
        eng = request.getfixturevalue("engine") if on is None else on
        return eng.stream_create(str(write_file(name, data)))

    return create
