"""benchmarks.gpu on tiny generated files: exit 0, results where --out says; without a
GPU (or under Numba's simulator, as here) the GPU rows are skipped with the reason and
the CPU rows are timed."""
from __future__ import annotations

import doctest
import json
import shutil
import sys
from pathlib import Path

import pytest

from benchmarks import gpu

SIZES = ["--scale-factor", "0.001", "--edge-rows", "2000", "--float-rows", "1000"]  # seconds, not minutes
CPU_ROWS = (gpu.CPU_BASE, "pandas (parse only)", "ndp (parse only)", "ndp SSD->host (modern-gen4)")

needs_tpchgen = pytest.mark.skipif(
    shutil.which("tpchgen-cli") is None and not Path(sys.executable).with_name("tpchgen-cli").exists(),
    reason="lineitem needs tpchgen-cli")


def _run(tmp_path: Path, *extra: str) -> int:
    return gpu.main(["--data-dir", str(tmp_path / "data"), "--out", str(tmp_path / "out"), "--host-tag", "test",
                     "--repeat", "1", "--threads", "1", *SIZES, *extra])


@needs_tpchgen
def test_cpu_rows_are_timed_and_gpu_rows_say_why_not(tmp_path):
    assert _run(tmp_path) == 0
    result = json.loads((tmp_path / "out" / "gpu-test.json").read_text())
    reason = gpu.gpu_missing_reason()
    assert "pinned bounce buffer" in result["gpu"]["transfer"] and result["gpu"]["gpudirect_storage"] is False
    assert result["versions"]["pyarrow"]
    assert set(result["datasets"]) == {"lineitem", "edges", "floats"}
    for kind, found in result["datasets"].items():
        rows = found["rows"]
        assert {rows[name]["rows"] for name in CPU_ROWS} == {rows[gpu.CPU_BASE]["rows"]} != {0}, kind
        assert all(rows[name]["best_s"] > 0 for name in CPU_ROWS), kind
        gpu_rows = [row for name, row in rows.items() if name not in CPU_ROWS]
        if reason:  # never a made-up GPU figure
            assert all(row == {"skipped": reason} for row in gpu_rows), kind
            assert found["text_to_gpu"] == {"skipped": reason}
        else:
            assert all("best_s" in row or "skipped" in row for row in gpu_rows), kind
    if reason:
        assert reason.startswith("no CUDA GPU: ") and result["pinned_h2d"] == {"skipped": reason}


@needs_tpchgen
def test_scaling_writes_results_and_plot_capped_at_the_core_count(tmp_path, capsys):
    assert _run(tmp_path, "--scaling", "--scaling-threads", "1,100000") == 0
    result = json.loads((tmp_path / "out" / "scaling-test.json").read_text())
    assert result["threads"] == [1]
    by_reader = result["summary"]["1"]
    assert by_reader["ndp"]["best_s"] > 0 and by_reader["pyarrow"]["best_s"] > 0
    assert by_reader["ndp"]["rows"] == by_reader["pyarrow"]["rows"]
    if result["plot"]:
        assert Path(result["plot"]).stat().st_size > 0
    assert "ndp/pyarrow" in capsys.readouterr().out


def test_a_data_set_that_cannot_be_made_is_skipped_with_the_reason(tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise RuntimeError("tpchgen-cli not found: pip install tpchgen-cli")

    monkeypatch.setattr(gpu.datasets, "make", refuse)
    assert _run(tmp_path, "--datasets", "lineitem") == 0
    result = json.loads((tmp_path / "out" / "gpu-test.json").read_text())
    assert "tpchgen-cli not found" in result["datasets"]["lineitem"]["skipped"]


def test_docstring_examples():
    # benchmarks/ is not a pytest path, so its doctests run here.
    assert doctest.testmod(gpu).failed == 0
