"""Shared fixtures of the engine tests."""
import pytest

from ndp_core import Engine


@pytest.fixture
def engine():
    """A small engine (4 KiB pages, 2 workers, 8 queue slots), closed after the test."""
    with Engine(page_size=4096, cores=2, queue_depth=8) as eng:
        yield eng
