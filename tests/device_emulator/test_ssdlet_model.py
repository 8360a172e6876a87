"""The SSDlet timing model: a scan pipeline (fixed-function unit) does the scanning counters of
device nodes on profiles that have one; cores do the rest, and host nodes do all of theirs."""
import pytest

from device_emulator.profile import load_profile
from device_emulator.ssdlet_model import model_ssdlets, node_seconds
from ndp_core.ssdlets import NodeWork

PRICES = {"bytes_scanned": (4.0, 1.0), "parsed": (10.0, 5.0)}


def _work(side: str, scanned: int = 64 << 20, parsed: int = 1 << 20) -> NodeWork:
    return NodeWork("parse", "parse", side, calls=100, counters={"bytes_scanned": scanned, "parsed": parsed},
                    prices=PRICES)


def test_a_scan_pipeline_takes_the_scanning_counters_off_the_device_cores():
    biscuit = load_profile("biscuit-pm")
    hertz = biscuit.data["cores"]["clock_MHz"] * 1e6
    task = biscuit.data["cores"]["cycles"]["tasks"]
    timing = model_ssdlets(biscuit, [_work("device")])
    assert timing.node_s["parse"] == pytest.approx((100 * task + 10.0 * (1 << 20)) / hertz)
    assert timing.resource_s["scan pipeline"] == pytest.approx((64 << 20) / biscuit.pipeline_rate)
    assert timing.makespan_s == max(timing.resource_s.values())


def test_without_a_scan_pipeline_or_on_the_host_the_cores_do_it_all():
    for profile, side in ((load_profile("modern-gen4"), "device"), (load_profile("biscuit-pm"), "host")):
        work = _work(side)
        timing = model_ssdlets(profile, [work])
        assert "scan pipeline" not in timing.resource_s
        k = 0 if side == "device" else 1
        section = "cores" if side == "device" else "host"
        hertz = profile.data[section]["clock_MHz"] * 1e6
        task = profile.data[section]["cycles"].get("tasks", 0.0)
        expected = (100 * task + PRICES["bytes_scanned"][k] * (64 << 20) + PRICES["parsed"][k] * (1 << 20)) / hertz
        assert node_seconds(profile, work) == pytest.approx(expected)


def test_device_nodes_share_the_pipeline():
    biscuit = load_profile("biscuit-pm")
    grep = NodeWork("grep", "grep", "device", calls=1, counters={"bytes_scanned": 3 << 20}, prices=PRICES)
    timing = model_ssdlets(biscuit, [_work("device", scanned=1 << 20), grep])
    assert timing.resource_s["scan pipeline"] == pytest.approx((4 << 20) / biscuit.pipeline_rate)
