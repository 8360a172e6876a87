"""Every benchmark script imports: a helper moved from one script to another
(``cluster()`` to ``benchmarks.common.local_cluster``) must not leave a script
that no test runs unable to start."""
from __future__ import annotations

import importlib
from pathlib import Path

import pytest

import benchmarks

SCRIPTS = sorted(p.stem for p in Path(benchmarks.__file__).parent.glob("*.py") if p.stem != "__init__")


@pytest.mark.parametrize("name", SCRIPTS)
def test_the_script_imports_and_says_what_it_is(name):
    module = importlib.import_module(f"benchmarks.{name}")
    assert module.__doc__, f"benchmarks/{name}.py: a module docstring says what it is"
