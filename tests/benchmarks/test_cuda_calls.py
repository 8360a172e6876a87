"""benchmarks.cuda_calls on a small lineitem slice: it counts what the paths call, and
batching shows in the counts (a subprocess: the counting wraps the simulator's API)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from test_gpu_bench import needs_tpchgen  # tests/benchmarks is on sys.path (pytest's prepend imports)

REPO = Path(__file__).parents[2]


@needs_tpchgen
def test_calls_of_each_path_are_counted_and_batches_hide_the_chunks(tmp_path):
    subprocess.run([sys.executable, "-m", "benchmarks.cuda_calls", "--rows", "6000", "--gpu-rows", "1500",
                    "--data-dir", str(tmp_path / "data"), "--out", str(tmp_path)], cwd=REPO, check=True,
                   capture_output=True)
    paths = json.loads((tmp_path / "cuda-calls.json").read_text())["paths"]
    assert set(paths) == {"host", "p2p", "gpu"}
    host, p2p, gpu = paths["host"], paths["p2p"], paths["gpu"]
    assert p2p["chunks_per_column"] > host["chunks_per_column"]  # the device's small tasks
    assert p2p["calls"] == host["calls"]  # one batch either way: as many copies whatever the chunks
    assert gpu["gpu_spans"] > 0 and gpu["calls"]["launches"] > 0 and gpu["calls"]["copies back"] > 0
