"""Compiled SSDlets kept on disk: a second process loads what the first compiled, gets the
same answers, and never loads code whose values or helpers changed."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ndp_core.ssdlets import disk_cache

# A program in a module of its own (rewritten between runs), a helper it reaches through a
# package's attribute (the package imports it from a module of its own), and a run on both
# sides of the link; the child prints how each program came and the answers.
_PROGRAM = """
import numba
import numpy as np
import pyarrow as pa
import helpers
from ndp_core.ssdlets import Out, ssdlet

LIMIT = {limit}

@ssdlet(inputs={{"x": pa.int64()}}, outputs={{"y": pa.int64()}}, work={{"tested": 1.0}})
def above_limit(p):
    n = 0
    for i in range(p.x.size):
        if p.x[i] > LIMIT:
            p.y[n] = helpers.bump(p.x[i])
            n += 1
    p.tested[0] += p.x.size
    return n
"""
_HELPER = """
import numba

@numba.njit
def bump(v):
    return v + {step}
"""
_CHILD = """
import json, sys
import numpy as np
import program
if len(sys.argv) > 1:  # the helper's file edited after it was imported: the process runs the old one
    open("helpers/impl.py", "w").write(sys.argv[1])
from device_emulator import ComputationalSSD
from ndp_core.ssdlets import Application
from ndp_core.ssdlets.examples import total
from program import above_limit

answers = {}
with ComputationalSSD("modern-gen4") as ssd:
    for side in ("device", "host"):
        app = Application(ssd)
        keep = app.add(above_limit, on=side)
        add = app.add(total, on="host")
        app.feed(keep.x, np.arange(20, dtype=np.int64))
        app.connect(keep.y, add.x)
        app.collect(add.total)
        app.collect(add.count)
        result = app.run()
        answers[side] = [result["total.total"].to_pylist(), result["total.count"].to_pylist()]
print(json.dumps({"how": [above_limit.compiled_how, total.compiled_how], "answers": answers}))
"""


def _run(folder: Path, cache: Path, limit: int = 5, step: int = 100, *, edit_after_import: str = "",
         env: dict = {}) -> dict:
    (folder / "program.py").write_text(_PROGRAM.format(limit=limit))
    (folder / "helpers").mkdir(exist_ok=True)
    (folder / "helpers" / "__init__.py").write_text("from helpers.impl import bump\n")
    (folder / "helpers" / "impl.py").write_text(_HELPER.format(step=step))
    env = {**os.environ, "NDP_SSDLET_CACHE": str(cache), **env,
           "PYTHONPATH": os.pathsep.join([str(folder), str(Path(__file__).resolve().parents[3])])}
    args = [edit_after_import] if edit_after_import else []
    done = subprocess.run([sys.executable, "-c", _CHILD, *args], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _expected(limit: int, step: int) -> list:
    kept = [v + step for v in range(20) if v > limit]
    return [[sum(kept)], [len(kept)]]


def test_a_second_process_loads_what_the_first_compiled_and_answers_the_same(tmp_path):
    first = _run(tmp_path, tmp_path / "cache")
    second = _run(tmp_path, tmp_path / "cache")
    assert first["how"] == ["compiled", "compiled"]
    assert second["how"] == ["loaded", "loaded"]
    assert first["answers"] == second["answers"] == {side: _expected(5, 100) for side in ("device", "host")}


def test_a_changed_global_or_helper_is_compiled_anew(tmp_path):
    """The module's constant, then the body of a helper reached as ``helpers.bump`` (in
    ``helpers/impl.py``): each change makes another program, never the saved one; going
    back loads the first again."""
    cache = tmp_path / "cache"
    _run(tmp_path, cache)
    time.sleep(0.01)  # a rewritten file gets a later time
    changed_limit = _run(tmp_path, cache, limit=12)
    assert changed_limit["how"] == ["compiled", "loaded"]
    assert changed_limit["answers"]["device"] == _expected(12, 100)
    changed_helper = _run(tmp_path, cache, limit=12, step=7)
    assert changed_helper["how"] == ["compiled", "loaded"]
    assert changed_helper["answers"]["host"] == _expected(12, 7)
    back = _run(tmp_path, cache)
    assert back["how"] == ["loaded", "loaded"] and back["answers"]["device"] == _expected(5, 100)


def test_what_runs_is_saved_not_what_the_file_says_later(tmp_path):
    """A helper's file edited after the process imported it: that process compiles (and
    saves) the code it holds; the next process reads the new file and compiles it."""
    cache = tmp_path / "cache"
    stale = _run(tmp_path, cache, edit_after_import=_HELPER.format(step=7))
    assert stale["how"] == ["compiled", "compiled"] and stale["answers"]["host"] == _expected(5, 100)
    fresh = _run(tmp_path, cache, step=7)
    assert fresh["how"] == ["compiled", "loaded"] and fresh["answers"]["host"] == _expected(5, 7)


def test_numbas_settings_are_part_of_the_program(tmp_path):
    """NUMBA_BOUNDSCHECK=0 compiles without the bounds checks SSDlets rely on: a process
    without it must not load that code."""
    cache = tmp_path / "cache"
    unchecked = _run(tmp_path, cache, env={"NUMBA_BOUNDSCHECK": "0"})
    assert unchecked["how"] == ["compiled", "compiled"]
    checked = _run(tmp_path, cache)
    assert checked["how"] == ["compiled", "compiled"]
    assert checked["answers"] == unchecked["answers"]


def test_the_cache_switched_off_compiles_in_the_process(tmp_path):
    run = _run(tmp_path, Path("off"))
    assert run["how"] == ["compiled in this process (the cache is off)"] * 2
    assert run["answers"]["host"] == _expected(5, 100)


def test_a_value_without_a_fingerprint_is_compiled_in_the_process(monkeypatch, tmp_path):
    numba = pytest.importorskip("numba")
    import numba.experimental

    monkeypatch.setenv("NDP_SSDLET_CACHE", str(tmp_path))
    @numba.experimental.jitclass([("x", numba.int64)])
    class Box:  # a class the fingerprint does not know, which the code loads
        def __init__(self, x):
            self.x = x

    source = "def app(call):\n    return Box(call).x + 1\n"
    app, how = disk_cache.compiled_app(source, "app", {"Box": Box}, lambda func, cache: numba.njit(func))
    assert how.startswith("compiled in this process (no fingerprint for the class "), how
    assert app(2) == 3 and not list(tmp_path.iterdir())


def test_the_folder_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("NDP_SSDLET_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert disk_cache.cache_folder() == tmp_path / "ndp" / "ssdlets"
    monkeypatch.setenv("NDP_SSDLET_CACHE", "OFF")
    assert disk_cache.cache_folder() is None
    monkeypatch.setenv("NDP_SSDLET_CACHE", str(tmp_path / "mine"))
    assert disk_cache.cache_folder() == tmp_path / "mine"


def test_prune_deletes_the_programs_used_longest_ago(tmp_path):
    (tmp_path / "__pycache__").mkdir()
    for age, stem in enumerate(["ssdlet_new", "ssdlet_mid", "ssdlet_old", "ssdlet_loaded"]):
        files = [tmp_path / f"{stem}.py", tmp_path / "__pycache__" / f"{stem}.app-1.py311.nbi",
                 tmp_path / "__pycache__" / f"{stem}.app-1.py311.1.nbc"]
        for file in files:
            file.write_bytes(b"x" * 100)
            os.utime(file, (time.time() - 1000 * (age + 1),) * 2)
    os.utime(tmp_path / "__pycache__" / "ssdlet_loaded.app-1.py311.nbi")  # the oldest, loaded just now
    (tmp_path / "unrelated.txt").write_bytes(b"x" * 10_000)
    assert disk_cache.prune(tmp_path, limit_bytes=1200) == 0  # 1,200 bytes of programs: not past the limit
    assert disk_cache.prune(tmp_path, limit_bytes=1000) == 2  # down to 3/4 of it: two programs stay
    left = sorted({p.name.split(".")[0] for p in tmp_path.rglob("ssdlet_*")})
    assert left == ["ssdlet_loaded", "ssdlet_new"]
    assert (tmp_path / "unrelated.txt").exists()


def test_the_fingerprint_follows_helpers_through_their_globals(tmp_path, monkeypatch):
    """A global of a helper the code calls (two files away) is part of the fingerprint."""
    pytest.importorskip("numba")
    (tmp_path / "steps.py").write_text("import numba\nSTEP = 1\n@numba.njit\ndef inner(v):\n    return v + STEP\n")
    (tmp_path / "outer_mod.py").write_text("import numba\nfrom steps import inner\n"
                                           "@numba.njit\ndef outer(v):\n    return inner(v) * 2\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import outer_mod
    import steps

    text = "def app(call):\n    return outer(call)\n"
    before = disk_cache.fingerprint(text, {"outer": outer_mod.outer})
    monkeypatch.setattr(steps, "STEP", 2)
    assert before is not None and disk_cache.fingerprint(text, {"outer": outer_mod.outer}) != before
    steps.STEP = 1
    assert disk_cache.fingerprint(text, {"outer": outer_mod.outer}) == before
    namespace: dict = {}  # code without a file: its code object is what counts
    exec("def nowhere(v):\n    return v\n", namespace)
    other: dict = {}
    exec("def nowhere(v):\n    return v + 1\n", other)
    text = "def app(call):\n    return nowhere(call)\n"
    assert disk_cache.fingerprint(text, namespace) != disk_cache.fingerprint(text, other)


def test_a_folder_it_cannot_write_compiles_in_the_process(monkeypatch, tmp_path):
    numba = pytest.importorskip("numba")
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("NDP_SSDLET_CACHE", str(tmp_path / "a-file" / "cache"))
    app, how = disk_cache.compiled_app("def app(call):\n    return call + 1\n", "app", {},
                                       lambda func, cache: numba.njit(func))
    assert how.startswith("compiled in this process (") and "cannot be written: Not a directory" in how
    assert app(1) == 2
