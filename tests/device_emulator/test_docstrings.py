"""The examples in the modules' docstrings run."""
import doctest
import importlib

import pytest

MODULES = ["ndp_core.report", "device_emulator", "device_emulator.profile", "device_emulator.model",
           "device_emulator.faults", "device_emulator.ssd", "device_emulator.calibrate"]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
