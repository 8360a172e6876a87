"""Fixtures for the SSDlet tests."""
from typing import Iterator

import pytest

from device_emulator import ComputationalSSD


@pytest.fixture(scope="module")
def ssd() -> Iterator[ComputationalSSD]:
    """An emulated modern-gen4 SSD with two workers, one per test module."""
    with ComputationalSSD("modern-gen4", workers=2) as device:
        yield device
