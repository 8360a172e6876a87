"""The startup library: a fresh process reads small files without Numba, and gets Numba's answers."""
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import arrow_bridge
from arrow_bridge import startup

REPO = Path(__file__).resolve().parents[2]


def _fresh_env(**env: str) -> dict[str, str]:
    """A fresh process's environment: this one's, less the switch that importing ``benchmarks``
    (some tests do) sets for its own processes, plus ``env``."""
    return {**{key: value for key, value in os.environ.items() if key != "ARROW_BRIDGE_STARTUP_LIBRARY"}, **env}


def _small_files(folder: Path, count: int = 24) -> list[Path]:
    """Small CSVs with every inferred type, nulls, quotes, CRLF and odd numbers (seeded)."""
    rng = random.Random(7)
    digits = "0123456789"

    def number() -> str:
        whole = "".join(rng.choice(digits) for _ in range(rng.randint(1, 19)))
        return rng.choice(["", "-"]) + whole + rng.choice(["", "." + "".join(rng.choice(digits) for _ in range(17)),
                                                            f"e{rng.randint(-330, 310)}"])

    cells = [
        lambda: str(rng.randint(-2**63, 2**63 - 1)),
        number,
        lambda: rng.choice(["true", "false", "True", "FALSE"]),
        lambda: f"{rng.randint(1, 9999):04d}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
        lambda: f"2020-01-{rng.randint(1, 28):02d} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00",
        lambda: '"' + rng.choice(["a,b", 'say ""hi""', "two\nlines", "é ü", ""]) + '"',
        lambda: rng.choice(["x", "yz", "NA", "null", "word"]),
    ]
    paths = []
    for n in range(count):
        kinds = rng.sample(cells, rng.randint(1, len(cells)))
        end = rng.choice(["\n", "\r\n"])
        rows = [",".join(f"c{k}" for k in range(len(kinds)))]
        for _ in range(rng.randint(1, 40)):
            rows.append(",".join("" if rng.random() < 0.1 else kind() for kind in kinds))
        path = folder / f"small{n}.csv"
        path.write_bytes((end.join(rows) + end).encode())
        paths.append(path)
    return paths


def _printed_by_child(code: str, **env: str) -> list[str]:
    """What a fresh Python process running ``code`` prints, word by word (after
    ``import sys, arrow_bridge`` and ``from arrow_bridge import startup``)."""
    done = subprocess.run([sys.executable, "-c", "import sys, arrow_bridge\nfrom arrow_bridge import startup\n" + code],
                          capture_output=True, text=True, timeout=300, env=_fresh_env(**env))
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def _read_in_fresh_process(paths: list[Path], out: Path) -> dict:
    code = (
        "import json, sys, pyarrow as pa, arrow_bridge\n"
        "from arrow_bridge import startup\n"
        "for i, path in enumerate(sys.argv[2:]):\n"
        "    table = arrow_bridge.read_csv(path)\n"
        "    with pa.OSFile(f'{sys.argv[1]}/{i}.arrow', 'wb') as f, pa.ipc.new_file(f, table.schema) as w:\n"
        "        w.write_table(table)\n"
        "print(json.dumps({'numba': 'numba' in sys.modules, 'library': startup.in_use()}))\n")
    done = subprocess.run([sys.executable, "-c", code, str(out), *map(str, paths)], capture_output=True, text=True,
                          timeout=300, env=_fresh_env())
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_fresh_process_reads_small_files_without_numba_and_as_numba_does(tmp_path):
    assert startup._load() is not None, "no startup library matching these sources: run `make install`"
    paths = _small_files(tmp_path)
    seen = _read_in_fresh_process(paths, tmp_path)
    assert seen == {"numba": False, "library": True}
    startup.retire()  # this process: Numba's kernels only
    for i, path in enumerate(paths):
        expected = arrow_bridge.read_csv(path)
        got = pa.ipc.open_file(str(tmp_path / f"{i}.arrow")).read_all()
        assert got.equals(expected), path.read_text()


def test_a_plain_first_read_imports_what_it_needs_only(tmp_path):
    """pyarrow.compute takes tens of milliseconds to import, the sniffer's patterns and the
    writer's kernels a few each: a plain first read leaves them alone."""
    path = tmp_path / "plain.csv"
    path.write_text("i,f,s,d,t\n1,2.5,x,2020-01-02,2020-01-02 03:04:05\n,,\"a,b\",,\n")
    unneeded = ["pyarrow.compute", "arrow_bridge.sniffing", "arrow_bridge.writer", "arrow_bridge.search"]
    printed = _printed_by_child(f"arrow_bridge.read_csv({str(path)!r})\n"
                                f"print(*[name in sys.modules for name in {unneeded!r}])")
    assert dict(zip(unneeded, printed)) == dict.fromkeys(unneeded, "False")


def test_a_file_of_several_spans_is_read_without_numba_too(tmp_path):
    """A first read of a few MB (spans on the read's threads, the general path) stays in the library."""
    rng = random.Random(3)
    path = tmp_path / "mid.csv"
    path.write_text("i,f,s,d,b\n" + "".join(
        f"{rng.randint(-10**12, 10**12)},{rng.random() * 1e6:.6f},{'' if k % 11 == 0 else 'w' + str(k % 97)},"
        f"2021-{1 + k % 12:02d}-{1 + k % 28:02d},{'true' if k % 3 else 'false'}\n" for k in range(120_000)))
    assert path.stat().st_size > 2 * arrow_bridge.options.DEFAULT_BLOCK_SIZE
    seen = _read_in_fresh_process([path], tmp_path)
    assert seen == {"numba": False, "library": True}
    startup.retire()
    assert pa.ipc.open_file(str(tmp_path / "0.arrow")).read_all().equals(arrow_bridge.read_csv(path))


def test_a_read_past_the_librarys_bytes_retires_it_and_numba_loads_what_it_ran(tmp_path):
    small, big = tmp_path / "small.csv", tmp_path / "big.csv"
    small.write_text("a,b\n1,x\n")
    big.write_text("a,b\n" + "".join(f"{i},{i * 0.5}\n" for i in range(200_000)))
    printed = _printed_by_child(
        "from arrow_bridge.kernels.tokenizer import split_record, tokenize\n"
        "startup.LIBRARY_BYTES = 1 << 20  # the big file is 2.6 MB\n"
        f"arrow_bridge.read_csv({str(small)!r}); print('numba' in sys.modules, startup.in_use())\n"
        f"t = arrow_bridge.read_csv({str(big)!r}); print('numba' in sys.modules, startup.in_use(), t.num_rows)\n"
        "print(len(split_record.signatures), len(tokenize.signatures), startup._state['bytes'] < 100)\n")
    # Numba loaded what the library had run (the next read finds the process warm), and the big
    # read ran in Numba from its start: the library parsed none of it
    assert printed == ["False", "True", "True", "False", "200000", "1", "1", "True"]


def test_a_stream_moves_to_numba_once_the_library_parsed_its_bytes(tmp_path):
    """A source of unknown size: the spans the library parsed are counted, and past the budget the
    rest of the read (and the process) runs in Numba, with the same answer."""
    big = tmp_path / "big.csv"
    big.write_text("a,b\n" + "".join(f"{i},{i * 0.5}\n" for i in range(200_000)))
    printed = _printed_by_child(
        "import io\n"
        "startup.LIBRARY_BYTES = 1 << 20\n"
        f"data = open({str(big)!r}, 'rb').read()\n"
        "t = arrow_bridge.read_csv(io.BytesIO(data)); print('numba' in sys.modules, startup.in_use())\n"
        f"print(t.equals(arrow_bridge.read_csv({str(big)!r})))\n")
    assert printed == ["True", "False", "True"]


def test_the_first_kernel_numba_must_run_retires_the_library(tmp_path):
    path = tmp_path / "small.csv"
    path.write_text("a,b\n1,x\n")
    printed = _printed_by_child(
        f"arrow_bridge.read_csv({str(path)!r}); print('numba' in sys.modules, startup.in_use())\n"
        f"t = arrow_bridge.read_csv({str(path)!r}, comment='#')  # the line filter's kernel is Numba's\n"
        "print('numba' in sys.modules, startup.in_use(), t.num_rows)\n")
    assert printed[:2] == ["False", "True"] and printed[2:] == ["True", "False", "1"]


def test_a_library_built_from_other_sources_is_not_used(monkeypatch):
    monkeypatch.setattr(startup, "fingerprint", lambda: "0" * 64)
    assert startup._load() is None


@pytest.mark.parametrize("value, key", [
    (np.zeros(2, np.int64), ("a", "<i8", 1, "C", False, True)),
    (np.zeros((2, 2), np.float64, order="F"), ("a", "<f8", 2, "F", False, True)),
    (np.zeros(4, np.uint8)[::2], ("a", "|u1", 1, "A", False, True)),
    (np.frombuffer(b"ab", np.uint8), ("a", "|u1", 1, "C", True, True)),
    (np.int64(3), ("s", "<i8")),
    (3, "i8"),
    (2**63, "u8"),
    (True, "b"),
    (1.5, "f8"),
    ((1, (np.uint8(1),)), ("t", "i8", ("t", ("s", "|u1")))),
])
def test_argument_types_are_told_apart_as_numba_tells_them(value, key):
    assert startup.type_key(value) == key


@pytest.mark.parametrize("value", [2**64, "text", None, np.datetime64("2020-01-01")])
def test_other_arguments_have_no_key_so_numba_runs_the_kernel(value):
    with pytest.raises(startup.NoTypeKey):
        startup.type_key(value)


def test_the_makefile_rebuilds_the_library_from_the_sources_it_is_made_of():
    makefile = (REPO / "Makefile").read_text()
    listed = re.search(r"KERNEL_SOURCES := \$\(wildcard (.*?)\)\n\$\(WARM\)", makefile, re.S).group(1)
    prefixed = re.search(r"\$\(addprefix arrow_bridge/,(.*?)\)", listed)
    patterns = listed[:prefixed.start()].replace("\\", " ").split() + [f"arrow_bridge/{name}"
                                                                      for name in prefixed.group(1).split()]
    assert sorted(patterns) == sorted(startup.KERNEL_SOURCES)


def test_a_broken_library_warns_and_numba_reads(tmp_path, monkeypatch):
    import shutil

    folder = tmp_path / "library"
    shutil.copytree(startup.LIBRARY_FOLDER, folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    first = next(iter(manifest["kernels"].values()))
    first[next(iter(first))] = "no_such_function"
    (folder / "manifest.json").write_text(json.dumps(manifest))
    monkeypatch.setattr(startup, "LIBRARY_FOLDER", folder)
    with pytest.warns(RuntimeWarning, match="startup library .* not usable"):
        assert startup._load() is None


@pytest.mark.parametrize("setting", ["NUMBA_BOUNDSCHECK", "NUMBA_DISABLE_JIT", "ARROW_BRIDGE_STARTUP_LIBRARY"])
def test_numba_debug_settings_turn_the_library_off(setting):
    value = "0" if setting == "ARROW_BRIDGE_STARTUP_LIBRARY" else "1"
    assert _printed_by_child("print(startup.in_use())", **{setting: value}) == ["False"]


def test_a_process_of_many_small_reads_moves_to_numba_once_the_library_cost_as_much(tmp_path):
    small = tmp_path / "small.csv"
    small.write_text("a,b,c\n1,x,2.5\n")
    printed = _printed_by_child(
        "startup.RETIRE_AFTER_CALLS = 100  # a read here makes 34 calls\n"
        f"first = arrow_bridge.read_csv({str(small)!r}); print(startup.in_use(), 'numba' in sys.modules)\n"
        f"for _ in range(5): later = arrow_bridge.read_csv({str(small)!r})\n"
        "print(startup.in_use(), 'numba' in sys.modules, later.equals(first))\n")
    assert printed == ["True", "False", "False", "True", "True"]
