"""``ndp grep``, driven as a user drives it: the installed script in a subprocess, on real
files, from a directory that is not the repository's, its output beside the real grep's.

Each subprocess costs about a second (interpreter, imports), so each test groups what
one kind of use needs to show.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

BIN = Path(sys.executable).parent
GREP = shutil.which("grep")


def ndp(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    script = BIN / "ndp"
    command = [str(script)] if script.exists() else [
        sys.executable, "-c", "import sys; from arrow_bridge.cli import main; sys.exit(main())"]
    environment = {key: value for key, value in os.environ.items() if key != "NDP_TRACEBACK"}
    return subprocess.run([*command, *args], cwd=cwd, capture_output=True, timeout=120, env=environment)


def real_grep(*args: str, cwd: Path) -> bytes:
    return subprocess.run([GREP, "-F", *args], cwd=cwd, capture_output=True, env={"LC_ALL": "C"}).stdout


def one_line_error(result: subprocess.CompletedProcess, code: int) -> str:
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    err = result.stderr.decode()
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ndp: error: "), err
    return lines[0]


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("grep-cli")
    lines = [f"10.0.0.{i % 250} - - \"GET /p{i} HTTP/1.1\" {[200, 404, 500][i % 3]} {i * 7}" for i in range(3000)]
    lines[17] = "10.9.9.9 - - \"GET /wp-login.php HTTP/1.1\" 404 0 \"sqlmap/1.7\""
    lines[2500] = "-rf --force"
    (folder / "access.log").write_text("\r\n".join(lines[:1500]) + "\r\n" + "\n".join(lines[1500:]))
    (folder / "latin.txt").write_bytes("ok\nZürich\n".encode("latin-1"))
    return folder


@pytest.mark.skipif(GREP is None, reason="no grep binary")
def test_lines_and_counts_equal_grep(logs):
    for keywords in (["sqlmap"], ["wp-login.php", " 500 "], ["/p1", "/p2"]):
        flags = [part for keyword in keywords for part in ("-e", keyword)]
        out = ndp("grep", *keywords, "access.log", cwd=logs)
        assert out.returncode == 0 and out.stdout == real_grep("-n", *flags, "access.log", cwd=logs)
        count = ndp("grep", "-c", *flags, "access.log", cwd=logs)
        assert count.stdout == real_grep("-c", *flags, "access.log", cwd=logs)
    offsets = ndp("grep", "-b", "-i", "GET /WP", "access.log", cwd=logs)
    assert offsets.stdout == real_grep("-n", "-b", "-i", "GET /WP", "access.log", cwd=logs)
    dashed = ndp("grep", "--keyword=-rf", "access.log", cwd=logs)
    assert dashed.stdout == ndp("grep", "--", "-rf", "access.log", cwd=logs).stdout == b"2501:-rf --force\n"
    nothing = ndp("grep", "no such words", "access.log", cwd=logs)
    assert nothing.returncode == 0 and nothing.stdout == b""


def test_table_output_and_device_report(logs):
    out = ndp("grep", " 404 ", "access.log", "-o", "hits.parquet", "-b", cwd=logs)
    assert out.returncode == 0 and b"wrote hits.parquet: parquet, 1,000 matching lines" in out.stdout
    table = pq.read_table(logs / "hits.parquet")
    assert table.column_names == ["line_number", "byte_offset", "line"] and table.num_rows == 1000
    assert table.column("line").type == pa.string() and table.column("line_number")[0].as_py() == 2
    device = ndp("grep", "-c", " 404 ", "access.log", "--device", "biscuit-pm", "--block-size", "64KiB", cwd=logs)
    assert device.returncode == 0 and device.stdout == b"1000\n"
    report = device.stderr.decode()
    assert "Report: biscuit-pm [device]" in report and "pipeline" in report
    faulty = ndp("grep", " 404 ", "access.log", "--device", "modern-gen4", "--split", "dynamic",
                 "--faults", "media_error=0.3,seed=2", "--block-size", "16KiB", cwd=logs)
    assert faulty.returncode == 0 and faulty.stdout == ndp("grep", " 404 ", "access.log", cwd=logs).stdout


def test_errors_are_one_line(logs):
    assert "which keywords?" in one_line_error(ndp("grep", "access.log", cwd=logs), 2)
    assert "No such file" in one_line_error(ndp("grep", "x", "missing.log", cwd=logs), 3)
    assert "cannot search" in one_line_error(ndp("grep", "x", "access.log", "--device", "hods-fpga", cwd=logs), 2)
    assert "need --device" in one_line_error(ndp("grep", "x", "access.log", "--split", "device", cwd=logs), 2)
    assert "line 2 is not valid UTF-8" in one_line_error(ndp("grep", "Z", "latin.txt", cwd=logs), 5)
    binary = ndp("grep", "Z", "latin.txt", "--binary", cwd=logs)
    assert binary.returncode == 0 and binary.stdout == "2:Zürich\n".encode("latin-1")
    assert "destroy" in one_line_error(ndp("grep", "x", "access.log", "-o", "access.log", "--format", "csv",
                                           cwd=logs), 2)
    helped = ndp("grep", "--help", cwd=logs)
    assert helped.returncode == 0 and b"grep -F -n" in helped.stdout and b"exit status:" in helped.stdout
