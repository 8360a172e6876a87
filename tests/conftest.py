"""Fixtures shared by the test packages (each package's own are in its conftest.py)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Sequence

import pytest
from hypothesis import settings

# No timing thresholds in unit tests: Hypothesis' default 200 ms deadline per example failed a test on a
# loaded 2-core machine whose first example compiled a Numba function (280 ms). Tests set their own.
settings.register_profile("ndp", deadline=None)
settings.load_profile("ndp")

# Compiled SSDlets go under the checkout's build/, not the user's ~/.cache; the suite's
# workers (and child processes) share them: one compiles a program, the others load it.
os.environ.setdefault("NDP_SSDLET_CACHE", str(Path(__file__).resolve().parents[1] / "build" / "ssdlet-cache"))


@pytest.fixture
def interrupted_child(tmp_path) -> Callable[..., tuple[dict, float]]:
    """``interrupted_child(script, args, ready, after)``: runs ``script`` (Python source) in a
    child process, sends it SIGINT ``after`` seconds past its line ``ready``, and returns the
    JSON report it prints next and when SIGINT was sent. A KeyboardInterrupt reaching the test
    runner would stop it; the child must exit 0."""

    def run(script: str, args: Sequence[str], ready: str, after: float, timeout: float = 120) -> tuple[dict, float]:
        path = tmp_path / "interrupted_child.py"
        path.write_text(script)
        child = subprocess.Popen([sys.executable, str(path), *map(str, args)], stdout=subprocess.PIPE, text=True)
        try:
            assert child.stdout.readline().strip() == ready
            time.sleep(after)
            sent = time.monotonic()
            child.send_signal(signal.SIGINT)
            report = json.loads(child.stdout.readline())
        finally:
            child.stdout.close()
            assert child.wait(timeout=timeout) == 0
        return report, sent

    return run
