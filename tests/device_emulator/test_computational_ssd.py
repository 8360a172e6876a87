"""ComputationalSSD: the Device protocol, the lazy engine, pickling, display."""
from __future__ import annotations

import pickle

import pytest

from device_emulator import ComputationalSSD, FaultPlan
from ndp_core.device import Device, HostOnly, SplitPolicy


def test_defaults_and_protocol():
    ssd = ComputationalSSD(workers=1)
    try:
        assert ssd.name == "modern-gen4" and ssd.page_size == 16384
        assert isinstance(ssd, Device)
        eng = ssd.engine
        assert eng is ssd.engine  # created once
        assert eng.page_size == 16384 and eng.cores == 1 and eng.queue_depth == ssd.profile["host.queue_depth"]
    finally:
        ssd.close()
    assert ssd._engine is None
    with ComputationalSSD("hods-fpga", workers=1, queue_depth=8) as ssd2:
        assert ssd2.engine.page_size == 16384 and ssd2.engine.queue_depth == 8
    assert ssd2._engine is None


def test_overrides_name_and_with_overrides():
    ssd = ComputationalSSD("morpheus-isca16", cores=8, **{"link.lanes": 8})
    assert ssd.name == "morpheus-isca16*" and ssd.profile["cores.count"] == 8 and ssd.profile["link.lanes"] == 8
    assert ComputationalSSD("morpheus-isca16", name="m").name == "m"
    more = ssd.with_overrides(slots=2)
    assert more.profile["task_queue.slots"] == 2 and more.profile["cores.count"] == 8
    with pytest.raises(ValueError):
        ComputationalSSD(cost_model="vibes")


def test_pickles_without_its_engine(tmp_path, simple_profile):
    plan = FaultPlan(media_error=0.1, seed=3)
    ssd = ComputationalSSD("summarizer-board", workers=1, faults=plan, cost_model="measured", cores=2)
    ssd.engine  # an engine exists and must not travel
    try:
        clone = pickle.loads(pickle.dumps(ssd))
    finally:
        ssd.close()
    assert clone._engine is None
    assert clone.profile.flat() == ssd.profile.flat() and clone.faults == plan
    assert clone.cost_model == "measured" and clone.name == ssd.name
    assert clone.engine.page_size == 8192  # re-created on use
    clone.close()
    # a profile that is not a shipped file travels whole
    f = tmp_path / "x.toml"
    f.write_text('name = "x"\n')
    custom = ComputationalSSD(str(f), cores=3)
    f.unlink()
    again = pickle.loads(pickle.dumps(custom))
    assert again.profile["cores.count"] == 3 and again.name == custom.name
    hand = pickle.loads(pickle.dumps(ComputationalSSD(simple_profile())))
    assert hand.profile.flat() == simple_profile().flat()


def test_schedule_is_deterministic_and_matches_sides(simple_profile, task):
    ssd = ComputationalSSD(simple_profile(slots=1))
    tasks = [task(i) for i in range(5)]
    a = ssd.schedule(tasks, SplitPolicy.parse("dynamic"), 0.1)
    b = ssd.schedule(tasks, "dynamic", 0.1)
    assert a.sides == b.sides and a.report.to_dict() == b.report.to_dict()
    assert a.report.pages["device"] + a.report.pages["raw"] == 5


def test_display():
    ssd = ComputationalSSD("biscuit-pm", cores=3, faults=FaultPlan(media_error=0.01))
    r = repr(ssd)
    assert "biscuit-pm" in r and "cores.count=3" in r and "FaultPlan" in r
    h = ssd._repr_html_()
    assert h.startswith("<div>") and "biscuit-pm" in h and "pipeline" in h


def test_host_only_baseline_reports(task):
    s = HostOnly().schedule([task(0), task(1)], SplitPolicy.parse("host"), wall_s=0.2)
    assert s.sides == ["host", "host"]
    assert s.report.pages["host"] == 2 and s.report.bytes["host_link"] == 200 and s.report.makespan_s == 0.2


def test_calibrated_host_costs_plug_in(task):
    from device_emulator import calibrate

    samples = [task(i, text=n, ints=k, measured_s=(3 * n + 20 * k) / 2e9)
               for i, (n, k) in enumerate([(1000, 10), (5000, 400), (20000, 100), (9000, 900), (3000, 50)])]
    costs = calibrate(samples, clock_MHz=2000, units=["bytes_scanned", "ints"])
    ssd = ComputationalSSD("modern-gen4", host_costs=costs)
    from device_emulator import task_costs

    for t in samples:
        assert task_costs(ssd.profile, t).host == pytest.approx(t.measured_s + 200000 / 2e9, rel=1e-6)
    assert ssd.profile["host.clock_MHz"] == 2000.0


@pytest.fixture(scope="module")
def lineitem_like(tmp_path_factory):
    """~1.2 MB of lineitem-shaped rows: ints, floats, dates, flags, quoted strings."""
    path = tmp_path_factory.mktemp("ssd") / "li.csv"
    rows = (f'{i},{i * 7 % 1000},{i % 50}.{i % 100:02d},1996-{1 + i % 12:02d}-{1 + i % 28:02d},N,"comment {i} x"\n'
            for i in range(30000))
    path.write_text("a,b,c,d,e,f\n" + "".join(rows))
    return path


def _report_of(path, **kwargs):
    import arrow_bridge
    from ndp_core.report import collect

    with collect() as runs:
        arrow_bridge.read_csv(path, **kwargs)
    return runs.total


def test_a_device_read_takes_the_profiles_task_size_unless_given_one(lineitem_like):
    ssd = ComputationalSSD("summarizer-board", workers=1)
    assert ssd.task_bytes == 128 << 10 and ComputationalSSD("hods-fpga").task_bytes == 2 << 20
    size = lineitem_like.stat().st_size
    auto = _report_of(lineitem_like, device=ssd, split="dynamic")
    given = _report_of(lineitem_like, device=ssd, split="dynamic", block_size=512 << 10)
    assert abs(auto.tasks - size / (128 << 10)) < 1 and abs(given.tasks - size / (512 << 10)) < 1
    bigger = ssd.with_overrides(**{"task_queue.task_bytes": 256 << 10})
    assert abs(_report_of(lineitem_like, device=bigger, split="dynamic").tasks - size / (256 << 10)) < 1
    # the same input pages whatever the task size; smaller tasks re-read more boundary pages
    assert auto.file_pages == given.file_pages == -(-size // ssd.page_size)
    assert auto.total_pages - auto.file_pages > given.total_pages - given.file_pages > 0


def test_static_split_shares_blocks_and_the_report_shows_the_realised_share(lineitem_like):
    ssd = ComputationalSSD("summarizer-board", workers=1)
    report = _report_of(lineitem_like, device=ssd, split="static:0.25")
    assert report.offload_fraction == pytest.approx(0.25, abs=0.05)
    assert f"device {report.pages['device']:,} ({100 * report.offload_fraction:.1f}%)" in str(report)
    assert "static:0.25 sends that share of blocks to the device" in str(report)


def test_every_power_figure_is_sourced_or_marked_an_assumption():
    import re
    from importlib import resources

    for toml in resources.files("device_emulator.profiles").iterdir():
        if not toml.name.endswith(".toml"):
            continue
        for number, line in enumerate(toml.read_text().splitlines(), 1):
            if re.match(r"\s*(active_W|idle_W|platform_idle_W)\s*=", line):
                comment = line.partition("#")[2]
                assert re.search(r"assumption|derived|part of|folded|\[[A-Z]\]|datasheet|spec", comment), \
                    f"{toml.name}:{number}: a power figure without its source: {line.strip()}"
