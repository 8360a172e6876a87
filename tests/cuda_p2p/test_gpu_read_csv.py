"""cuda_p2p.read_csv's three paths give arrow_bridge.read_csv's Table; the P2P path's Report models P2P."""
from __future__ import annotations

import subprocess
import sys

import pytest

import arrow_bridge
import cuda_p2p
from device_emulator import ComputationalSSD, FaultPlan


@pytest.fixture
def lineitem_like(tmp_path):
    rows = ["l_orderkey,l_quantity,l_extendedprice,l_shipdate,l_comment"]
    rows += [f'{k},{k % 50 + 1},{(k * 7919) % 100000 / 100:.2f},1998-0{k % 9 + 1}-{k % 28 + 1:02d},"c{k}, ok"'
             for k in range(150)]
    path = tmp_path / "lineitem.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


def test_host_path(lineitem_like) -> None:
    gpu = cuda_p2p.read_csv(lineitem_like, block_size=1024)
    assert gpu.to_arrow().equals(arrow_bridge.read_csv(lineitem_like, block_size=1024))
    assert gpu.stats.path == "host" and gpu.stats.h2d_bytes >= gpu.nbytes - 64 and gpu.report is None
    assert gpu.stats.d2h_bytes == 0 and "GPU->host" not in repr(gpu)


@pytest.mark.parametrize("split", ["device", "static:0.5", "dynamic"])
def test_p2p_path_models_p2p_and_equals_the_host(lineitem_like, split: str) -> None:
    ssd = ComputationalSSD("modern-gen4")
    try:
        gpu = cuda_p2p.read_csv(lineitem_like, device=ssd, split=split, block_size=1024)
        assert ssd.destination == "host"  # the device is the caller's: modeled as P2P for that read only
    finally:
        ssd.close()
    assert gpu.to_arrow().equals(arrow_bridge.read_csv(lineitem_like, block_size=1024))
    assert gpu.stats.path == "p2p"
    if split == "device":
        assert gpu.report.bytes["p2p"] > 0
    assert "p2p" in gpu.report.bytes


def test_p2p_path_with_faults_falls_back_without_loss(lineitem_like) -> None:
    ssd = ComputationalSSD("modern-gen4", faults=FaultPlan(seed=3, app_failure=0.3, link_timeout=0.2, media_error=0.1))
    try:
        gpu = cuda_p2p.read_csv(lineitem_like, device=ssd, split="device", block_size=512)
    finally:
        ssd.close()
    assert gpu.to_arrow().equals(arrow_bridge.read_csv(lineitem_like, block_size=512))


def test_profile_name_and_every_path_at_once(lineitem_like) -> None:
    gpu = cuda_p2p.read_csv(lineitem_like, device="modern-gen4", split="static:0.5", gpu_share=0.5, block_size=512)
    assert gpu.to_arrow().equals(arrow_bridge.read_csv(lineitem_like, block_size=512))
    assert gpu.stats.spans_parsed_on_gpu > 0


def test_malformed_input_raises_the_hosts_error(tmp_path) -> None:
    path = tmp_path / "bad.csv"
    path.write_bytes(b"a,b\n" + b"1,2\n" * 100 + b"3\n")
    with pytest.raises(arrow_bridge.CsvParseError) as host:
        arrow_bridge.read_csv(path, block_size=64)
    with pytest.raises(arrow_bridge.CsvParseError) as gpu:
        cuda_p2p.read_csv(path, block_size=64, gpu_share=1.0)
    assert (gpu.value.line, gpu.value.column, gpu.value.byte_offset) == (host.value.line, host.value.column,
                                                                        host.value.byte_offset) == (102, "b", 404)


def test_without_gpu_or_simulator_a_clear_error() -> None:
    code = ("import cuda_p2p, io\n"
            "try:\n    cuda_p2p.read_csv(io.BytesIO(b'a\\n1\\n'))\n"
            "except cuda_p2p.GpuUnavailable as e:\n    print('GpuUnavailable:', e)\n")
    env = {"NUMBA_ENABLE_CUDASIM": "0", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    if "GpuUnavailable" not in out.stdout:
        pytest.skip(f"this machine has a CUDA driver: {out.stdout or out.stderr}")
    assert "NUMBA_ENABLE_CUDASIM=1" in out.stdout
