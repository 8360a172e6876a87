"""The ``ndp`` command line, driven as a user drives it: the installed script in a subprocess,
on real files, from a directory that is not the repository's.

Each subprocess costs about a second (interpreter, imports), so each test groups what
one kind of use needs to show.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as pq
import pytest

import arrow_bridge

BIN = Path(sys.executable).parent


def _command(name: str) -> list[str]:
    """The installed script, or the module when the venv has no script (not installed with -e)."""
    script = BIN / name
    if script.exists():
        return [str(script)]
    entry = "read_csv_main" if name == "ndp-read-csv" else "main"
    return [sys.executable, "-c", f"import sys; from arrow_bridge.cli import {entry}; sys.exit({entry}())"]


def ndp(*args: str, cwd: Path, script: str = "ndp") -> subprocess.CompletedProcess:
    environment = {key: value for key, value in os.environ.items() if key != "NDP_TRACEBACK"}
    return subprocess.run([*_command(script), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env=environment)


def one_line_error(result: subprocess.CompletedProcess, code: int) -> str:
    """The single stderr line of a failed command, checked: its exit code, no traceback."""
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ndp: error: "), result.stderr
    return lines[0]


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("cli")
    rows = [f"2024-01-{1 + i % 28:02d},{['north', 'south'][i % 2]},{i},{i * 0.25}" for i in range(3000)]
    (folder / "sales.csv").write_text("date,store,qty,price\n" + "\n".join(rows) + "\n")
    (folder / "sales.tsv").write_text("date\tstore\tqty\tprice\n" + "\n".join(r.replace(",", "\t") for r in rows) + "\n")
    (folder / "bad.csv").write_text("a,b\n1,2\n3\n4,5\n")
    (folder / "export.txt").write_text("# exported by till v2\nid;name;amount\n1;\"Smith; J\";3\n2;Doe;4\n3;Roe;1\n")
    (folder / "latin.csv").write_bytes("name,city\nJosé,Zürich\n".encode("latin-1"))
    return folder


def test_help_reads_well(files):
    top = ndp("--help", cwd=files)
    assert top.returncode == 0
    for command in ("read", "convert", "sniff", "simulate", "profiles", "exit status:", "examples:"):
        assert command in top.stdout
    read = ndp("read", "--help", cwd=files)
    assert read.returncode == 0
    assert "--block-size SIZE" in read.stdout and "first call, includes start-up" in read.stdout
    assert "ndp read data.tsv --sep '\\t'" in read.stdout and "4    malformed CSV" in read.stdout


def test_read_takes_what_users_type(files):
    result = ndp("read", "sales.tsv", "--sep", "\\t", "--usecols", "0,2", "--block-size", "64KiB",
                 "--dtype", "qty=int32", "--head", "2", cwd=files)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "date: date32[day]\nqty: int32\n" in out
    assert "rows: 3,000  columns: 2" in out
    assert "first call, includes start-up" in out  # one cold read, and it says so
    assert "2024-01-02    1" in out  # the head


def test_read_times_warm_and_compares_peers_the_same_way(files):
    result = ndp("read", "bad.csv", "--on-bad-lines", "skip", "--repeat", "2", "--compare", "pyarrow,pandas",
                 cwd=files)
    assert result.returncode == 0, result.stderr
    assert "rows: 2  columns: 2" in result.stdout
    assert "best of 2 after a warm-up read" in result.stdout
    assert "pyarrow.csv: " in result.stdout and "ndp / pyarrow speed" in result.stdout
    assert "pandas (c): " in result.stdout and "failed" not in result.stdout


def test_errors_are_one_line_with_their_exit_code(files):
    missing_column = one_line_error(ndp("read", "sales.csv", "--usecols", "date,zzz", cwd=files), 2)
    assert "zzz" in missing_column
    assert "No such file" in one_line_error(ndp("read", "nope.csv", cwd=files), 3)
    malformed = one_line_error(ndp("read", "bad.csv", cwd=files), 4)
    assert "bad.csv:3:" in malformed and "expected 2 fields" in malformed
    decode = one_line_error(ndp("read", "latin.csv", "--encoding", "ascii", cwd=files), 5)
    assert "latin.csv:2:" in decode
    for command in (["read", "sales.csv"], ["convert", "sales.csv", "small.parquet"]):
        memory = one_line_error(ndp(*command, "--memory-limit", "4KiB", "--block-size", "16KiB", cwd=files), 6)
        assert "4096" in memory or "4.0 KiB" in memory or "4 KiB" in memory, memory
    assert ndp("read", "sales.csv", "--memory-limit", "64MiB", cwd=files).returncode == 0
    assert "unknown profile 'nope'" in one_line_error(ndp("profiles", "show", "nope", cwd=files), 2)
    usage = ndp("read", "sales.csv", "--block-size", "lots", cwd=files)
    assert usage.returncode == 2 and "not a size: 'lots'" in usage.stderr and "Traceback" not in usage.stderr
    (files / "widen.csv").write_text("a,b\n" + "".join(f"{i},x\n" for i in range(5000)) + "2.5,y\n")
    widened = one_line_error(ndp("convert", "widen.csv", "widen.parquet", "--block-size", "4KiB", cwd=files), 4)
    assert "widen.csv:5002: column 'a'" in widened and "--dtype a=TYPE" in widened  # a later batch's error
    loud = ndp("read", "bad.csv", "--traceback", cwd=files)
    assert loud.returncode == 4 and "Traceback" in loud.stderr and "CsvParseError" in loud.stderr


@pytest.mark.parametrize("out, reread", [
    ("sales.parquet", pq.read_table),
    ("sales.feather", feather.read_table),
    ("sales.bin", lambda path: pa.ipc.open_stream(path).read_all()),  # --format arrows
    ("copy.csv", arrow_bridge.read_csv),
])
def test_convert_streams_to_each_format(files, out, reread):
    extra = ["--format", "arrows"] if out.endswith(".bin") else []
    result = ndp("convert", "sales.csv", out, "--block-size", "16KiB", *extra, cwd=files)
    assert result.returncode == 0, result.stderr
    assert "3,000 rows" in result.stdout and "batches" in result.stdout
    assert result.stdout.count("batches") == 1 and " 1 batches" not in result.stdout  # streamed in batches
    assert result.stderr == ""  # stderr is no terminal here: no progress bar
    assert reread(str(files / out)).equals(arrow_bridge.read_csv(files / "sales.csv"))


def test_convert_of_a_malformed_file_leaves_no_output(files):
    assert "bad.csv:3:" in one_line_error(ndp("convert", "bad.csv", "bad.parquet", cwd=files), 4)
    assert not (files / "bad.parquet").exists()


def test_sniff_prints_dialect_options_and_reasons(files):
    result = ndp("sniff", "export.txt", cwd=files)
    assert result.returncode == 0, result.stderr
    assert "delimiter:       ';'" in result.stdout and "skip_rows:       1" in result.stdout
    assert "options: read_csv(path, sep=';', header=0, skiprows=1" in result.stdout
    assert "why:\n  - " in result.stdout


def test_simulate_prints_the_report_and_draws_the_timeline(files):
    result = ndp("simulate", "sales.csv", "--profile", "summarizer-board", "--split", "dynamic",
                 "--block-size", "32KiB", "--faults", "media_error=0.05,seed=1", "--timeline", "run.png", cwd=files)
    assert result.returncode == 0, result.stderr
    assert "Report: summarizer-board [dynamic]" in result.stdout and "makespan (modeled)" in result.stdout
    assert "Table: 3,000 rows x 4 columns, equal to the host read: yes" in result.stdout
    assert (files / "run.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_profiles_list_and_show_with_sources(files):
    listing = ndp("profiles", cwd=files)
    assert listing.returncode == 0
    assert all(name in listing.stdout for name in ("biscuit-pm", "hods-fpga", "modern-gen4", "morpheus-isca16",
                                                   "summarizer-board"))
    shown = ndp("profiles", "show", "summarizer-board", cwd=files)
    assert shown.returncode == 0
    assert "[flash]" in shown.stdout and "[S] Sec. 6.2: \"we set the frequency of the ARM core" in shown.stdout
    assert "clock_MHz                200.0 MHz" in shown.stdout


def test_ndp_read_csv_is_still_there(files):
    result = ndp("sales.tsv", "--sep", "\\t", "--block-size", "64KiB", "--compare-pyarrow", cwd=files,
                 script="ndp-read-csv")
    assert result.returncode == 0, result.stderr
    assert "rows: 3,000  columns: 4" in result.stdout and "pyarrow.csv: " in result.stdout
    assert "best of 3 after a warm-up read" in result.stdout
