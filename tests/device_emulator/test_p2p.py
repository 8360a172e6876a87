"""Output to GPU memory: the P2P path, host -> GPU copies, their bytes, busy time and
energy, against hand-computed schedules (see conftest.py's simple_profile)."""
from __future__ import annotations

import pickle
import tomllib

import pytest

from device_emulator import ComputationalSSD, ProfileError, list_profiles, load_profile, simulate, task_costs
from ndp_core.device import DEVICE, HOST, RAW, SplitPolicy

US = 1e-6

approx = lambda x: pytest.approx(x, rel=1e-9, abs=1e-12)  # noqa: E731

# With gpu_profile (conftest.py) the P2P path is capped at 0.5 MB/s (the link runs at 1 MB/s):
# 50 object bytes take 100 us. Host -> GPU copies run at 2 MB/s: 50 bytes in 25 us. The GPU
# draws 10 W while data lands in its memory, 2 W otherwise; nothing else draws power.


def spans(report, resource):
    return [(t, s / US, e / US) for r, t, s, e, _ in report.timeline if r == resource]


def test_rates_and_costs(simple_profile, gpu_profile, task):
    p = gpu_profile()
    assert p.link_bandwidth == approx(1e6) and p.p2p_bandwidth == approx(0.5e6) and p.h2d_bandwidth == approx(2e6)
    # no cap: the SSD's own link bounds the path
    assert gpu_profile(**{"p2p.max_MBps": 0.0}).p2p_bandwidth == approx(1e6)
    assert gpu_profile(**{"p2p.max_MBps": 5.0}).p2p_bandwidth == approx(1e6)
    c = task_costs(gpu_profile(**{"p2p.per_command_overhead_us": 3.0, "p2p.h2d_overhead_us": 4.0}), task(0))
    assert c.p2p_objects == approx(3 * US + 100 * US) and c.h2d == approx(4 * US + 25 * US)
    with pytest.raises(ProfileError):
        gpu_profile(**{"p2p.h2d_MBps": 0.0})
    with pytest.raises(ProfileError):
        gpu_profile(**{"p2p.max_MBps": -1.0})
    # the bare leaf names the link had before [p2p] still mean the link
    q = simple_profile(max_MBps=2.0, per_command_overhead_us=1.0)
    assert q["link.max_MBps"] == 2.0 and q["link.per_command_overhead_us"] == 1.0 and q["p2p.max_MBps"] == 0.0


def test_one_device_task_to_the_gpu_by_hand(gpu_profile, task):
    # flash [0,10], lands 20; core [20,120]; 50 object bytes over P2P at 0.5 MB/s [120,220].
    s = simulate(gpu_profile(), [task(0)], "device", destination="gpu")
    r = s.report
    assert s.sides == [DEVICE]
    assert r.makespan_s == approx(220 * US)
    assert spans(r, "p2p") == [(0, pytest.approx(120), pytest.approx(220))]
    assert spans(r, "link") == [] and spans(r, "h2d") == []
    assert r.bytes == {"internal": 1000, "host_link": 0, "p2p": 50}
    assert r.busy_s["p2p"] == approx(100 * US) and r.busy_s["link"] == 0.0 and r.busy_s["h2d"] == 0.0
    assert r.units["p2p"] == 1 and r.units["h2d"] == 1
    assert r.utilization["p2p"] == approx(100 / 220)
    # the GPU: 10 W for the 100 us data lands, 2 W for the other 120 us
    assert r.energy_j["p2p"] == approx(10.0 * 100 * US + 2.0 * 120 * US)
    assert r.energy_j["h2d"] == 0.0
    assert r.energy_j["total"] == approx(r.energy_j["p2p"])
    assert r.meta["destination"] == "gpu"


def test_one_host_task_to_the_gpu_by_hand(gpu_profile, task):
    # flash [0,10], lands 20; text [20,120] over the link; host parse [120,145];
    # 50 object bytes host -> GPU at 2 MB/s [145,170].
    s = simulate(gpu_profile(), [task(0, HOST)], "host", destination="gpu")
    r = s.report
    assert s.sides == [HOST]
    assert r.makespan_s == approx(170 * US)
    assert spans(r, "link") == [(0, pytest.approx(20), pytest.approx(120))]
    assert spans(r, "host_cpu") == [(0, pytest.approx(120), pytest.approx(145))]
    assert spans(r, "h2d") == [(0, pytest.approx(145), pytest.approx(170))]
    # host_link counts the text in and the objects out to the GPU
    assert r.bytes == {"internal": 1000, "host_link": 150, "p2p": 0}
    assert r.busy_s["h2d"] == approx(25 * US) and r.busy_s["p2p"] == 0.0
    assert r.utilization["h2d"] == approx(25 / 170)
    assert r.energy_j["h2d"] == approx(10.0 * 25 * US)
    assert r.energy_j["p2p"] == approx(2.0 * (170 - 25) * US)  # the GPU idles while it waits
    assert r.host_cpu_s == approx(25 * US)  # the copy is DMA: no host CPU time


def test_two_tasks_share_the_ssd_port(gpu_profile, task):
    # t0 device, t1 host. Reads: t0 [0,10] lands 20, t1 [10,20] lands 30.
    # t0 core [20,120]; t1 text [30,130] then host [130,155], copy [155,180];
    # t0's objects wait for the port (the text holds it until 130): P2P [130,230].
    tasks = [task(0), task(1, HOST)]
    r = simulate(gpu_profile(), tasks, "static:0.5", destination="gpu").report
    assert spans(r, "link") == [(1, pytest.approx(30), pytest.approx(130))]
    assert spans(r, "p2p") == [(0, pytest.approx(130), pytest.approx(230))]
    assert spans(r, "h2d") == [(1, pytest.approx(155), pytest.approx(180))]
    assert r.makespan_s == approx(230 * US)
    assert r.bytes == {"internal": 2000, "host_link": 150, "p2p": 50}
    assert r.busy_s["link"] + r.busy_s["p2p"] == approx(200 * US)
    assert r.utilization["link"] + r.utilization["p2p"] <= 1.0
    assert r.energy_j["p2p"] == approx(10.0 * 100 * US + 2.0 * (230 - 100 - 25) * US)
    assert r.energy_j["h2d"] == approx(10.0 * 25 * US)
    # to host memory the same run ends at 180: t0's objects cross the link [130,180]
    h = simulate(gpu_profile(), tasks, "static:0.5").report
    assert spans(h, "link") == [(1, pytest.approx(30), pytest.approx(130)), (0, pytest.approx(130), pytest.approx(180))]
    assert h.makespan_s == approx(180 * US)
    assert h.bytes == {"internal": 2000, "host_link": 150, "p2p": 0}


def test_without_a_p2p_path_device_output_bounces_through_host_memory(gpu_profile, task):
    # core [20,120]; objects over the link at 1 MB/s [120,170]; copied on [170,195]
    r = simulate(gpu_profile(**{"p2p.enabled": False}), [task(0)], "device", destination="gpu").report
    assert spans(r, "link") == [(0, pytest.approx(120), pytest.approx(170))]
    assert spans(r, "h2d") == [(0, pytest.approx(170), pytest.approx(195))]
    assert r.makespan_s == approx(195 * US)
    assert r.bytes == {"internal": 1000, "host_link": 100, "p2p": 0}
    assert r.units["p2p"] == 0 and r.busy_s["p2p"] == 0.0
    assert r.energy_j["p2p"] == approx(2.0 * (195 - 25) * US) and r.energy_j["h2d"] == approx(10.0 * 25 * US)


def test_pipeline_all_overlaps_conversion_with_the_p2p_transfer(gpu_profile, task):
    p = gpu_profile(**{"cores.count": 0, "pipeline.scope": "all", "pipeline.bytes_per_cycle": 1.0,
                       "pipeline.clock_MHz": 1.0})
    r = simulate(p, [task(0)], "device", destination="gpu").report
    # lands 20; pipeline [20,120]; objects start with it over P2P [20,120]
    assert spans(r, "pipeline") == [(0, pytest.approx(20), pytest.approx(120))]
    assert spans(r, "p2p") == [(0, pytest.approx(20), pytest.approx(120))]
    assert r.makespan_s == approx(120 * US)


def test_faults_with_a_gpu_destination(gpu_profile, task):
    # media error: error status on the link [20,20], re-read with retry [20,50] lands 60,
    # text [60,160], host [160,185], copy [185,210]: the raw task's objects are copied too
    s = simulate(gpu_profile(), [task(0, faults={"media_error": 1})], "device", destination="gpu")
    assert s.sides == [RAW] and s.report.makespan_s == approx(210 * US)
    assert s.report.bytes == {"internal": 2000, "host_link": 150, "p2p": 0}
    # a lost completion: the whole attempt's P2P transfer is repeated, no copy
    r = simulate(gpu_profile(), [task(0, faults={"link_timeout": 1})], "device", destination="gpu").report
    assert r.bytes["p2p"] == 100 and r.busy_s["p2p"] == approx(200 * US) and r.busy_s["h2d"] == 0.0
    assert r.makespan_s == approx(220 * US + 1e-3 + 220 * US)
    # no P2P path: only the final attempt's objects are copied on
    r = simulate(gpu_profile(**{"p2p.enabled": False}), [task(0, faults={"link_timeout": 1})], "device",
                 destination="gpu").report
    assert r.busy_s["h2d"] == approx(25 * US) and r.bytes["host_link"] == 150


def test_host_destination_is_the_default_and_leaves_p2p_alone(gpu_profile, rich_tasks):
    tasks = rich_tasks(24, page_size=1000)
    for split in ("host", "device", "static:0.5", "dynamic"):
        a = simulate(gpu_profile(slots=2), tasks, split).report
        b = simulate(gpu_profile(slots=2), tasks, split, destination="host").report
        assert a.to_dict() == b.to_dict()
        assert a.bytes["p2p"] == 0 and a.busy_s["p2p"] == 0.0 and a.units["p2p"] == 0
        assert a.energy_j["p2p"] == 0.0 and not a.busy_s.get("h2d") and not a.energy_j.get("h2d")
        assert not [e for e in a.timeline if e[0] in ("p2p", "h2d")]
        assert a.meta["destination"] == "host"
        # P2P numbers change nothing on the way to host memory
        c = simulate(gpu_profile(slots=2, **{"p2p.max_MBps": 0.01, "p2p.h2d_MBps": 0.01}), tasks, split).report
        assert (c.makespan_s, c.busy_s, c.energy_j, c.bytes) == (a.makespan_s, a.busy_s, a.energy_j, a.bytes)
    with pytest.raises(ValueError, match="destination"):
        simulate(gpu_profile(), tasks, "host", destination="cpu")


def test_the_device_takes_a_destination(gpu_profile, task):
    ssd = ComputationalSSD(gpu_profile(), destination="gpu")
    s = ssd.schedule([task(0)], SplitPolicy.parse("device"), wall_s=0.0)
    assert s.report.bytes["p2p"] == 50 and s.report.makespan_s == approx(220 * US)
    h = ssd.schedule([task(0)], "device", 0.0, destination="host")
    assert h.report.bytes["p2p"] == 0 and h.report.makespan_s == approx(170 * US)
    assert ComputationalSSD(gpu_profile()).schedule([task(0)], "device", 0.0).report.bytes["p2p"] == 0
    assert ssd.with_overrides(cores=2).destination == "gpu"
    assert pickle.loads(pickle.dumps(ssd)).destination == "gpu"
    assert pickle.loads(pickle.dumps(ComputationalSSD("hods-fpga", destination="gpu"))).destination == "gpu"
    assert "destination='gpu'" in repr(ssd) and "p2p" in ssd._repr_html_()
    with pytest.raises(ValueError, match="destination"):
        ComputationalSSD(destination="nic")


@pytest.mark.parametrize("name", list_profiles())
def test_every_p2p_number_changes_a_gpu_run(name, rich_tasks, profile_text, numeric_leaves, perturb):
    """Each [p2p] and [power.p2p] number of a shipped profile changes some modeled
    result of a run to GPU memory (the run's meta, which lists overrides, left out)."""
    base = load_profile(name)
    tasks = rich_tasks(40, page_size=base.page_size)

    def fingerprint(p):
        d = simulate(p, tasks, "static:0.5", timeline=False, destination="gpu").report.to_dict(timeline=False)
        d.pop("meta")
        return d

    raw = tomllib.loads(profile_text(name))
    paths = [path for path, _ in numeric_leaves(raw) if path.startswith(("p2p.", "power.p2p."))]
    assert {"p2p.max_MBps", "p2p.per_command_overhead_us", "p2p.h2d_MBps", "p2p.h2d_overhead_us",
            "power.p2p.active_W", "power.p2p.idle_W"} <= set(paths)
    assert raw["p2p"]["enabled"] in (True, False)
    fp = fingerprint(base)
    unreachable = [path for path, v in numeric_leaves(raw) if path in paths
                   and fingerprint(base.with_overrides(**{path: perturb(v)})) == fp]
    assert not unreachable, f"{name}: numbers that change nothing: {unreachable}"


def test_shipped_profiles_route_objects_by_destination():
    """On every shipped profile, device-parsed objects reach the GPU over P2P and
    host-parsed ones cross the host link twice (text in, objects out to the GPU)."""
    from device_emulator import uniform_tasks

    ints = {"bytes_scanned": 16 << 20, "rows": 1 << 20, "fields": 2 << 20, "ints": 2 << 20}
    for name in list_profiles():
        p = load_profile(name)
        kw = dict(page_size=p.page_size, object_bytes=8 << 20, task_bytes=1 << 20)
        dev = simulate(p, uniform_tasks(16 << 20, ints, split="device", **kw), "device", destination="gpu").report
        host = simulate(p, uniform_tasks(16 << 20, ints, split="host", **kw), "host", destination="gpu").report
        assert dev.bytes["p2p"] == 8 << 20 and host.bytes["p2p"] == 0, name
        assert host.bytes["host_link"] == (16 << 20) + (8 << 20), name
        assert dev.busy_s["h2d"] == 0.0 and host.busy_s["h2d"] > 0.0, name
