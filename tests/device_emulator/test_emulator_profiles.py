"""Shipped profiles: they load, every number carries its source, every number
changes the model's answer, and overrides work."""
from __future__ import annotations

import re
import tomllib

import pytest

from device_emulator import ProfileError, list_profiles, load_profile, simulate
from device_emulator.profile import Profile, resolve_name

SHIPPED = ["biscuit-pm", "hods-fpga", "modern-gen4", "morpheus-isca16", "summarizer-board"]


def test_list_profiles():
    assert list_profiles() == SHIPPED


@pytest.mark.parametrize("name", SHIPPED)
def test_profile_loads_and_is_described(name, profile_text, numeric_leaves):
    p = load_profile(name)
    assert p.name == name and p.description and p.data["references"]
    assert p.internal_bandwidth > 0 and p.link_bandwidth > 0
    assert name in repr(p)
    raw = tomllib.loads(profile_text(name))
    # every value in the file is what the profile reports
    for path, v in numeric_leaves(raw):
        assert p[path] == v


@pytest.mark.parametrize("name", SHIPPED)
def test_every_number_has_its_source_next_to_it(name, profile_text):
    for lineno, line in enumerate(profile_text(name).splitlines(), 1):
        m = re.match(r"\s*([A-Za-z_]+)\s*=\s*([-+0-9.eE_]+|true|false)\s*(#.*)?$", line)
        if m:
            comment = (m.group(3) or "").lstrip("#").strip()
            assert len(comment) > 5, f"{name}.toml:{lineno}: {line.strip()!r} has no source"


#: Profile numbers the reader reads (tested with the reader), not the timing model.
READER_KNOBS = ("task_queue.task_bytes",)


def _fingerprint(p, tasks, split, model, destination="host"):
    r = simulate(p, tasks, split, cost_model=model, timeline=False, destination=destination).report
    d = r.to_dict(timeline=False)
    d.pop("meta", None)  # it names the overrides: any perturbation would "change" it
    return d


@pytest.mark.parametrize("name", SHIPPED)
def test_every_number_is_reachable(name, rich_tasks, profile_text, numeric_leaves, perturb):
    """Changing any number of a shipped profile changes some modeled result
    (with a workload that uses both sides, every work unit and every fault)."""
    base = load_profile(name)
    tasks = rich_tasks(40, page_size=base.page_size)
    # Some numbers matter only when another one stops hiding them (a capped
    # link hides its lanes; a channel-bound flash hides tR): variants lift those.
    variants = [("static:0.5", {}, "cycles", "host"), ("dynamic", {}, "cycles", "host"),
                ("static:0.5", {}, "measured", "host"), ("static:0.5", {"cores.fpu": False}, "cycles", "host"),
                ("static:0.5", {"pipeline.scope": "none"}, "cycles", "host"),
                ("static:0.5", {}, "cycles", "gpu"), ("static:0.5", {"flash.ways": 1}, "cycles", "host"),
                ("static:0.5", {"flash.channel_MBps": 1e5}, "cycles", "host"),
                ("static:0.5", {"link.max_MBps": 0}, "cycles", "host")]
    usable = []
    for split, extra, model, dest in variants:
        try:
            p = base.with_overrides(**extra)
        except ProfileError:
            continue  # e.g. HODS without its pipeline has no cores
        usable.append((p, split, model, dest, _fingerprint(p, tasks, split, model, dest)))
    unreachable = []
    for path, v in numeric_leaves(tomllib.loads(profile_text(name))):
        if path in READER_KNOBS:
            continue
        for p, split, model, dest, fp in usable:
            if _fingerprint(p.with_overrides(**{path: perturb(v)}), tasks, split, model, dest) != fp:
                break
        else:
            unreachable.append(path)
    assert not unreachable, f"{name}: numbers that change nothing: {unreachable}"


def test_overrides_by_every_spelling():
    p = load_profile("modern-gen4", cores=8, **{"link.lanes": 8}, host_cores=2, tR_us=40, flash_channels=4,
                     host_cycles_floats=99.0, slots=3)
    assert (p["cores.count"], p["link.lanes"], p["host.cores"], p["flash.tR_us"], p["flash.channels"],
            p["host.cycles.floats"], p["task_queue.slots"]) == (8, 8, 2, 40.0, 4, 99.0, 3)
    assert p.overrides["cores.count"] == 8
    assert isinstance(p["flash.tR_us"], float)
    assert resolve_name("link_lanes") == "link.lanes" and resolve_name("cores") == "cores.count"
    # a section takes a mapping
    q = load_profile("modern-gen4", host={"clock_MHz": 1234, "cycles": {"ints": 1.0}})
    assert q["host.clock_MHz"] == 1234.0 and q["host.cycles.ints"] == 1.0
    assert q["host.cycles.floats"] == load_profile("modern-gen4")["host.cycles.floats"]
    # overrides stack
    assert p.with_overrides(cores=2).overrides["cores.count"] == 2
    # load_profile of a Profile copies it
    assert load_profile(p, cores=1)["cores.count"] == 1 and p["cores.count"] == 8


@pytest.mark.parametrize("bad", [{"no_such": 1}, {"clock_MHz": 100}, {"flash.nope": 1}, {"cores": "many"},
                                 {"flash.channels": 2.5}, {"cores.fpu": 1}, {"slots": 0}, {"flash.tR_us": -1},
                                 {"pipeline.scope": "magic"}, {"link.pcie_gen": 9}, {"host": {"nope": 1}},
                                 {"host": 3}])
def test_bad_overrides_raise(bad):
    with pytest.raises(ProfileError):
        load_profile("modern-gen4", **bad)


def test_unknown_profile_and_files(tmp_path):
    with pytest.raises(ProfileError, match="shipped profiles"):
        load_profile("no-such-ssd")
    f = tmp_path / "mine.toml"
    f.write_text('name = "mine"\n[cores]\ncount = 2 # me\n[flash]\ntR_us = 30.0 # me\n')
    p = load_profile(str(f), lanes=2)
    assert p.name == "mine" and p["cores.count"] == 2 and p["flash.tR_us"] == 30.0 and p["link.lanes"] == 2
    f.write_text("[nonsense]\nx = 1\n")
    with pytest.raises(ProfileError, match="unknown section"):
        load_profile(str(f))
    f.write_text("[cores\n")
    with pytest.raises(ProfileError):
        load_profile(str(f))


def test_profile_is_plain_data():
    import pickle

    p = load_profile("summarizer-board", cores=2)
    q = pickle.loads(pickle.dumps(p))
    assert isinstance(q, Profile) and q.flat() == p.flat() and q.overrides == p.overrides


def test_paper_sanity_checks():
    """The derived numbers reproduce the papers' headline ratios."""
    from device_emulator import uniform_tasks

    ints = {"bytes_scanned": 80 << 20, "rows": 5 << 20, "fields": 10 << 20, "ints": 10 << 20}
    m = load_profile("morpheus-isca16")
    host = simulate(m, uniform_tasks(80 << 20, ints, page_size=m.page_size, split="host"), "host").report
    dev = simulate(m, uniform_tasks(80 << 20, ints, page_size=m.page_size, split="device"), "device").report
    speedup = host.makespan_s / dev.makespan_s
    assert 1.5 < speedup < 1.8  # Morpheus: 1.66x deserialization
    assert 0.5 < dev.energy_total_j / host.energy_total_j < 0.65  # Morpheus: 42% less energy
    power = (dev.energy_total_j / dev.makespan_s) / (host.energy_total_j / host.makespan_s)
    assert 0.88 < power < 0.97  # Morpheus: 7% less power
    floats = {"bytes_scanned": 90 << 20, "rows": 5 << 20, "fields": 10 << 20, "floats": 10 << 20}
    h = load_profile("hods-fpga")
    host = simulate(h, uniform_tasks(90 << 20, floats, page_size=h.page_size, split="host"), "host").report
    dev = simulate(h, uniform_tasks(90 << 20, floats, page_size=h.page_size, split="device"), "device").report
    assert 17 < host.makespan_s / dev.makespan_s < 21  # HODS: 17-21x on floats
    host = simulate(h, uniform_tasks(80 << 20, ints, page_size=h.page_size, split="host"), "host").report
    dev = simulate(h, uniform_tasks(80 << 20, ints, page_size=h.page_size, split="device"), "device").report
    assert 8 < host.makespan_s / dev.makespan_s < 12  # HODS: 8-12x on integers
