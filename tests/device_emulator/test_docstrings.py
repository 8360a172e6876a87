"""Every device_emulator module shows an example (pytest's --doctest-modules runs them)."""
import doctest
import importlib
import pkgutil

import device_emulator

MODULES = ["device_emulator"] + [info.name for info in
                                 pkgutil.walk_packages(device_emulator.__path__, "device_emulator.")]


def test_every_module_has_an_example():
    missing = [name for name in MODULES if not doctest.DocTestFinder().find(importlib.import_module(name))]
    assert not missing, f"modules without a docstring example: {missing}"
