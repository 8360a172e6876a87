"""The timing model against hand-computed schedules (see conftest.py's simple_profile)."""
from __future__ import annotations

import pytest

from device_emulator import ComputationalSSD, simulate, task_costs, uniform_tasks
from ndp_core.device import DEVICE, HOST, RAW, SplitPolicy, TaskWork

US = 1e-6

approx = lambda x: pytest.approx(x, rel=1e-9, abs=1e-12)  # noqa: E731


def spans(report, resource):
    return [(t, s / US, e / US) for r, t, s, e, _ in report.timeline if r == resource]


def test_one_device_task_by_hand(simple_profile, task):
    # flash busy [0, 10] us, page lands at 20; core 100 cycles at 1 MHz [20, 120];
    # 50 object bytes at 1 MB/s [120, 170].
    s = simulate(simple_profile(), [task(0)], "device")
    r = s.report
    assert s.sides == [DEVICE]
    assert r.makespan_s == approx(170 * US)
    assert spans(r, "flash") == [(0, 0.0, pytest.approx(10))]
    assert spans(r, "device_cores") == [(0, pytest.approx(20), pytest.approx(120))]
    assert spans(r, "link") == [(0, pytest.approx(120), pytest.approx(170))]
    assert r.busy_s["device_cores"] == approx(100 * US)
    assert r.utilization["device_cores"] == approx(100 / 170)
    assert r.pages == {"device": 1, "host": 0, "raw": 0}
    assert r.bytes == {"internal": 1000, "host_link": 50, "p2p": 0}
    # host parse would have cost 0.25 x 100 cycles = 25 us: saved
    assert r.host_cpu_s == 0.0 and r.host_cpu_saved_s == approx(25 * US)


def test_one_host_task_by_hand(simple_profile, task):
    # flash [0, 10], lands 20; 100 text bytes [20, 120]; host 25 cycles [120, 145].
    s = simulate(simple_profile(), [task(0, HOST)], "host")
    r = s.report
    assert s.sides == [HOST]
    assert r.makespan_s == approx(145 * US)
    assert spans(r, "host_cpu") == [(0, pytest.approx(120), pytest.approx(145))]
    assert r.bytes["host_link"] == 100
    assert r.host_cpu_s == approx(25 * US) and r.host_cpu_saved_s == 0.0


def test_flash_geometry_striping_and_die_bound(simple_profile, task):
    p = simple_profile(**{"flash.channels": 2, "flash.ways": 2, "flash.tR_us": 40.0})
    # xfer 10 us, interval max(10, 40/2) = 20 us; a page lands tR + xfer - interval = 30 us
    # after its channel slot ends. Read-retry: tR x 3 = 120 us, interval 60, lands 70 later.
    c = task_costs(p, task(0, pages=3))
    assert c.flash_interval == approx(20 * US) and c.flash_lat == approx(30 * US)
    assert c.flash_interval_retry == approx(60 * US) and c.flash_lat_retry == approx(70 * US)
    assert p.internal_bandwidth == approx(2 * 1000 / (20 * US))
    # pages 0-2 of t0: channel 0 gets pages 0 and 2 (busy [0,40]), channel 1 page 1 ([0,20]);
    # t1's pages 3-5: channel 1 gets 3 and 5 ([20,60]), channel 0 gets 4 ([40,60]).
    s = simulate(p, [task(0, HOST, pages=3), task(1, HOST, pages=3)], "host")
    assert sorted(spans(s.report, "flash")) == [(0, 0.0, pytest.approx(20)), (0, 0.0, pytest.approx(40)),
                                                (1, pytest.approx(20), pytest.approx(60)),
                                                (1, pytest.approx(40), pytest.approx(60))]
    # t0 lands at 40 + 30 = 70: text [70,170], host [170,195]; t1 lands 90: text [170,270], host [270,295]
    assert s.report.makespan_s == approx(295 * US)
    assert s.report.units["flash"] == 2 and s.report.busy_s["flash"] == approx(120 * US)
    assert s.report.bytes["internal"] == 6000


def test_static_split_uses_task_sides(simple_profile, task):
    tasks = [task(0, HOST), task(1, DEVICE)]
    s = simulate(simple_profile(), tasks, "static:0.5")
    assert s.sides == [HOST, DEVICE]
    r = s.report
    # flash: t0 [0,10] lands 20, t1 [10,20] lands 30. Link: t0 text [20,120];
    # t1 core [30,130], objects [130,180]; host parses t0 [120,145].
    assert spans(r, "link") == [(0, pytest.approx(20), pytest.approx(120)), (1, pytest.approx(130), pytest.approx(180))]
    assert r.makespan_s == approx(180 * US)
    assert r.pages == {"device": 1, "host": 1, "raw": 0}


def test_dynamic_tiny_task_queue_returns_tasks_raw(simple_profile, task):
    # One slot: t0 is admitted at 20 and holds it until its core finishes at 120.
    # t1 (lands 30) and t2 (lands 40) find the queue full and come back raw.
    s = simulate(simple_profile(slots=1), [task(0), task(1), task(2)], "dynamic")
    r = s.report
    assert s.sides == [DEVICE, RAW, RAW]
    assert r.pages == {"device": 1, "host": 0, "raw": 2}
    # link in arrival order: t1 text [30,130], t2 text [130,230], t0 objects (ready 120) [230,280]
    assert spans(r, "link") == [(1, pytest.approx(30), pytest.approx(130)),
                                (2, pytest.approx(130), pytest.approx(230)),
                                (0, pytest.approx(230), pytest.approx(280))]
    assert spans(r, "host_cpu") == [(1, pytest.approx(130), pytest.approx(155)),
                                    (2, pytest.approx(230), pytest.approx(255))]
    assert r.makespan_s == approx(280 * US)
    assert r.host_cpu_s == approx(50 * US) and r.host_cpu_saved_s == approx(25 * US)
    # with room in the queue, everything stays on the device
    assert simulate(simple_profile(slots=3), [task(0), task(1), task(2)], "dynamic").sides == [DEVICE] * 3


def test_static_full_task_queue_stalls_intake(simple_profile, task):
    tasks = [task(i) for i in range(4)]
    s = simulate(simple_profile(slots=1), tasks, "device")
    r = s.report
    assert s.sides == [DEVICE] * 4
    # t1 lands at 30 to a full queue: the flash starts nothing new until it is admitted
    # (120, when t0's core finishes), t2 (already reading [20,30]) waits too, so t3's
    # read waits until t2 is admitted at 220.
    assert spans(r, "flash") == [(0, 0.0, pytest.approx(10)), (1, pytest.approx(10), pytest.approx(20)),
                                 (2, pytest.approx(20), pytest.approx(30)),
                                 (3, pytest.approx(220), pytest.approx(230))]
    assert spans(r, "device_cores") == [(0, pytest.approx(20), pytest.approx(120)),
                                        (1, pytest.approx(120), pytest.approx(220)),
                                        (2, pytest.approx(220), pytest.approx(320)),
                                        (3, pytest.approx(320), pytest.approx(420))]
    assert r.makespan_s == approx(470 * US)
    # a roomy queue does not stall the reads
    roomy = simulate(simple_profile(slots=8), tasks, "device").report
    assert spans(roomy, "flash")[3] == (3, pytest.approx(30), pytest.approx(40))


def test_multiple_cores_run_in_parallel(simple_profile, task):
    s = simulate(simple_profile(cores=2), [task(0), task(1)], "device")
    assert spans(s.report, "device_cores") == [(0, pytest.approx(20), pytest.approx(120)),
                                               (1, pytest.approx(30), pytest.approx(130))]
    assert s.report.units["device_cores"] == 2


def test_link_rate_and_command_overhead(simple_profile, task):
    p = simple_profile(**{"link.max_MBps": 0.0, "link.lanes": 4, "link.efficiency": 0.5,
                          "link.per_command_overhead_us": 7.0})
    assert p.link_bandwidth == approx(4 * 8e9 * 128 / 130 / 8 * 0.5)
    c = task_costs(p, task(0, objects=1_000_000))
    assert c.link_objects == approx(7 * US + 1_000_000 / p.link_bandwidth)
    assert c.link_status == approx(7 * US)


def test_soft_float_without_fpu(simple_profile, task):
    costs = {"cores.cycles.floats": 10.0, "cores.cycles.bytes_scanned": 0.0}
    t = task(0, floats=5)
    with_fpu = task_costs(simple_profile(**costs), t).device
    no_fpu = task_costs(simple_profile(**costs, **{"cores.fpu": False, "cores.soft_float_factor": 4.0}), t).device
    assert with_fpu == approx(50 * US) and no_fpu == approx(200 * US)


def test_every_counter_is_charged(simple_profile, reader_counters):
    for name in reader_counters:
        p = simple_profile(**{f"cores.cycles.{name}": 3.0, f"host.cycles.{name}": 2.0})
        t = TaskWork(0, 0, 1, 0, 0, {name: 10})
        c = task_costs(p, t)
        assert c.device == approx(30 * US), name
        assert c.host == approx(20 * US), name
    p = simple_profile(**{"cores.cycles.tasks": 5.0, "host.cycles.tasks": 7.0})
    c = task_costs(p, TaskWork(0, 0, 1, 0, 0, {}))
    assert c.device == approx(5 * US) and c.host == approx(7 * US)


def test_counters_are_the_apps_names(simple_profile):
    # any name an app declares is priced by the profile's tables, nothing is built in
    p = simple_profile(**{"cores.cycles.matches": 4.0, "host_cycles_matches": 2.0})
    assert p["cores.cycles.matches"] == 4.0 and p["host.cycles.matches"] == 2.0
    c = task_costs(p, TaskWork(0, 0, 1, 0, 0, {"matches": 10}))
    assert c.device == approx(40 * US) and c.host == approx(20 * US)


def test_a_counter_the_profile_does_not_price_is_an_error(simple_profile):
    from device_emulator import ProfileError

    t = TaskWork(0, 0, 1, 0, 0, {"bytes_scanned": 5, "widgets": 1}, side=DEVICE)
    with pytest.raises(ProfileError, match=r"profile 'modern-gen4' has no price for work counter 'widgets' "
                                           r"in \[cores.cycles\]; it prices aggregate_updates, bools, .*bytes_scanned, .*values_kept$"):
        task_costs(simple_profile(), t)
    with pytest.raises(ProfileError, match=r"'widgets' in \[host.cycles\]"):
        simulate(simple_profile(**{"cores.cycles.widgets": 1.0}), [t], "host")
    # the measured cost model prices nothing by name
    assert task_costs(simple_profile(), t, "measured").host == 0.0
    # a price must be a non-negative number
    with pytest.raises(ProfileError, match="non-negative"):
        simple_profile(**{"host.cycles.widgets": -1.0})


def test_float_and_scan_counters_are_profile_lists(simple_profile, task):
    # soft float scales the counters cores.float_counters names, a scan pipeline takes pipeline.scan_counters
    costs = {"cores.cycles.floats": 10.0, "cores.cycles.ints": 10.0, "cores.cycles.bytes_scanned": 0.0,
             "cores.fpu": False, "cores.soft_float_factor": 4.0}
    t = task(0, floats=5, ints=5)
    assert task_costs(simple_profile(**costs), t).device == approx(250 * US)
    assert task_costs(simple_profile(**costs, **{"cores.float_counters": ["ints", "floats"]}), t).device == \
        approx(400 * US)
    scan = {"pipeline.scope": "scan", "pipeline.MBps": 1.0}
    assert task_costs(simple_profile(**scan), t).device == 0.0
    assert task_costs(simple_profile(**scan, **{"pipeline.scan_counters": []}), t).device == approx(100 * US)


def test_pipeline_all_overlaps_conversion_with_transfer(simple_profile, task):
    p = simple_profile(**{"cores.count": 0, "pipeline.scope": "all", "pipeline.bytes_per_cycle": 1.0,
                          "pipeline.clock_MHz": 1.0})
    assert p.pipeline_rate == approx(1e6)
    s = simulate(p, [task(0)], "dynamic")  # no task queue on a wire-speed pipeline
    r = s.report
    # lands at 20; pipeline [20,120]; objects start with it [20,70]; done at 120
    assert s.sides == [DEVICE]
    assert spans(r, "pipeline") == [(0, pytest.approx(20), pytest.approx(120))]
    assert spans(r, "link") == [(0, pytest.approx(20), pytest.approx(70))]
    assert r.makespan_s == approx(120 * US)
    assert r.units["device_cores"] == 0 and r.units["pipeline"] == 1
    # efficiency and MBps
    assert simple_profile(**{"cores.count": 0, "pipeline.scope": "all", "pipeline.MBps": 2.0,
                             "pipeline.efficiency": 0.5}).pipeline_rate == approx(1e6)


def test_pipeline_scan_takes_the_byte_scanning_off_the_cores(simple_profile, task):
    p = simple_profile(**{"pipeline.scope": "scan", "pipeline.MBps": 1.0, "cores.cycles.ints": 4.0})
    s = simulate(p, [task(0, ints=10)], "device")
    # lands 20; scan pipeline 100 B at 1 MB/s [20,120]; core pays only ints: 40 us [120,160]; objects [160,210]
    assert spans(s.report, "pipeline") == [(0, pytest.approx(20), pytest.approx(120))]
    assert spans(s.report, "device_cores") == [(0, pytest.approx(120), pytest.approx(160))]
    assert s.report.makespan_s == approx(210 * US)


def test_measured_cost_model(simple_profile, task):
    p = simple_profile(**{"host.clock_MHz": 2.0, "cores.measured_scale": 1.5})
    c = task_costs(p, task(0, measured_s=1e-3), cost_model="measured")
    assert c.device == approx(1e-3 * 2.0 / 1.0 * 1.5)
    assert c.host == approx(1e-3)
    with pytest.raises(ValueError):
        task_costs(p, task(0), cost_model="guess")


def test_energy_by_hand(simple_profile, task):
    power = {"platform_idle_W": 10.0, "flash": {"active_W": 2.0, "idle_W": 1.0},
             "device_cores": {"active_W": 3.0, "idle_W": 0.5}, "link": {"active_W": 4.0, "idle_W": 0.0}}
    r = simulate(simple_profile(power=power), [task(0)], "device").report
    m = 170 * US
    assert r.energy_j["flash"] == approx(2.0 * 10 * US + 1.0 * (m - 10 * US))
    assert r.energy_j["device_cores"] == approx(3.0 * 100 * US + 0.5 * (m - 100 * US))
    assert r.energy_j["link"] == approx(4.0 * 50 * US)
    assert r.energy_j["host_cpu"] == 0.0
    assert r.energy_j["platform"] == approx(10.0 * m)
    assert r.energy_j["total"] == approx(sum(v for k, v in r.energy_j.items() if k != "total"))


def test_faults_link_timeout_retries_after_the_timeout(simple_profile, task):
    r = simulate(simple_profile(), [task(0, faults={"link_timeout": 1})], "device").report
    # attempt 1 [0,170] wasted; +1 ms; attempt 2 = the same 170 us shifted to 1170
    assert r.makespan_s == approx(1340 * US)
    assert spans(r, "flash")[1] == (0, pytest.approx(1170), pytest.approx(1180))
    assert r.busy_s["device_cores"] == approx(200 * US) and r.busy_s["link"] == approx(100 * US)
    assert r.faults["link_timeout"] == 1
    assert r.pages["device"] == 1


def test_faults_media_error_rereads_with_read_retry(simple_profile, task):
    s = simulate(simple_profile(), [task(0, faults={"media_error": 1})], "device")
    r = s.report
    # lands 20; error status; re-read with tR x 3: busy 30 [20,50], lands 60;
    # text [60,160]; host [160,185]
    assert s.sides == [RAW]
    assert spans(r, "flash") == [(0, 0.0, pytest.approx(10)), (0, pytest.approx(20), pytest.approx(50))]
    assert r.makespan_s == approx(185 * US)
    assert r.bytes["internal"] == 2000 and r.bytes["host_link"] == 100
    assert r.busy_s["device_cores"] == 0.0
    assert r.faults["media_error"] == 1 and r.pages["raw"] == 1


def test_faults_app_failure_charges_the_wasted_work(simple_profile, task):
    s = simulate(simple_profile(), [task(0, faults={"app_failure": 1})], "device")
    r = s.report
    # core [20,120] wasted; re-read [120,130] lands 140; text [140,240]; host [240,265]
    assert s.sides == [RAW]
    assert r.busy_s["device_cores"] == approx(100 * US)
    assert r.makespan_s == approx(265 * US)
    assert r.host_cpu_s == approx(25 * US) and r.host_cpu_saved_s == 0.0


def test_faults_tq_overflow_returns_the_page_raw(simple_profile, task):
    s = simulate(simple_profile(), [task(0, faults={"tq_overflow": 1})], "device")
    assert s.sides == [RAW]
    assert s.report.makespan_s == approx(145 * US)  # same as a host task: no re-read
    assert s.report.faults["tq_overflow"] == 1


def test_faults_on_a_host_task(simple_profile, task):
    r = simulate(simple_profile(), [task(0, HOST, faults={"media_error": 1})], "host").report
    # read [0,10] lands 20 uncorrectable; read-retry [20,50] lands 60; text [60,160]; host [160,185]
    assert r.makespan_s == approx(185 * US)
    assert r.pages["host"] == 1 and r.faults["media_error"] == 1


def test_deterministic_and_order_of_events_is_stable(simple_profile, rich_tasks):
    tasks = rich_tasks(64)
    for split in ("dynamic", "static:0.5", "device", "host"):
        a = simulate(simple_profile(slots=3, cores=2), tasks, split)
        b = simulate(simple_profile(slots=3, cores=2), tasks, split)
        assert a.sides == b.sides
        assert a.report.to_dict() == b.report.to_dict()


def test_all_host_vs_all_device_on_a_shipped_profile():
    from device_emulator import load_profile

    p = load_profile("hods-fpga")
    counters = {"bytes_scanned": 64 << 20, "rows": 4_000_000, "fields": 8_000_000, "ints": 8_000_000}
    host = simulate(p, uniform_tasks(64 << 20, counters, page_size=p.page_size, object_bytes=64_000_000,
                                     split="host"), "host").report
    dev = simulate(p, uniform_tasks(64 << 20, counters, page_size=p.page_size, object_bytes=64_000_000,
                                    split="device"), "device").report
    # HODS: 8-12x over one host thread on integers
    assert 8 < host.makespan_s / dev.makespan_s < 13
    assert dev.energy_total_j < host.energy_total_j
    assert dev.bytes["host_link"] < host.bytes["host_link"]


def test_schedule_through_the_device(simple_profile, task):
    ssd = ComputationalSSD(simple_profile())
    s = ssd.schedule([task(0), task(1, HOST)], SplitPolicy.parse("static:0.5"), wall_s=0.25)
    assert s.report.wall_s == 0.25 and s.report.device == ssd.name
    assert s.report.meta["profile"] == ssd.profile.name


def test_host_queue_depth_back_pressure(simple_profile, task):
    # one task in flight: t1 is submitted when t0 finishes at 170, so its read starts then
    s = simulate(simple_profile(queue_depth=1), [task(0), task(1)], "device")
    assert spans(s.report, "flash") == [(0, 0.0, pytest.approx(10)), (1, pytest.approx(170), pytest.approx(180))]
    assert s.report.makespan_s == approx(340 * US)
    # in dynamic mode the window keeps raw tasks from flooding the host: with a
    # window of 2 and one slot, t1 goes raw, t2 waits for a finished task and then
    # finds the queue free again
    s = simulate(simple_profile(queue_depth=2, slots=1), [task(0), task(1), task(2)], "dynamic")
    # t0 lands 20 -> core [20,120]; t1 lands 30 -> raw: text [30,130], host [130,155];
    # t0 objects [130,180]... t1 finishes first (155) -> t2 submitted: read [155,165], lands 175
    # while t0 no longer holds the slot (freed at 120) -> device: core [175,275], objects [275,325]
    assert s.sides == [DEVICE, RAW, DEVICE]
    assert spans(s.report, "flash")[2] == (2, pytest.approx(155), pytest.approx(165))
    assert s.report.makespan_s == approx(325 * US)
