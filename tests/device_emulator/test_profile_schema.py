"""The profile schema, its unit arithmetic and price tables (device_emulator.profile)."""
from __future__ import annotations

import pytest

from device_emulator.profile import ProfileError, load_profile, pcie_lane_bytes_per_s
from device_emulator.profile.schema import PARAMETERS, PRICE_TABLES, SCHEMA, defaults, validate
from device_emulator.profile.units import bytes_per_s, capped, pcie_link_bytes_per_s


def test_every_parameter_has_a_unit_where_its_name_says_one():
    for path, param in PARAMETERS.items():
        for suffix, unit in (("_us", "us"), ("_MHz", "MHz"), ("_MBps", "MB/s"), ("_W", "W"), ("_s", "s")):
            if path.endswith(suffix):
                assert param.unit == unit, path
    assert PRICE_TABLES == {"cores.cycles", "host.cycles"}
    assert SCHEMA["cores"]["cycles"].unit == "cycles"


def test_defaults_are_valid_and_price_nothing():
    data = defaults()
    validate(data)
    assert data["cores"]["cycles"] == {} and data["host"]["cycles"] == {}
    assert data["cores"]["float_counters"] == [] and data["pipeline"]["scan_counters"] == []


def test_unit_arithmetic():
    assert pcie_lane_bytes_per_s(3) == pytest.approx(8e9 * 128 / 130 / 8, rel=1e-15)
    assert pcie_link_bytes_per_s(4, 4, 0.5) == pcie_lane_bytes_per_s(4) * 4 * 0.5
    assert capped(3e9, 1000.0) == bytes_per_s(1000.0) and capped(3e9, 0.0) == 3e9
    with pytest.raises(ProfileError, match="pcie_gen"):
        load_profile("modern-gen4", gen=9)


def test_price_tables_take_any_counter_name(tmp_path):
    f = tmp_path / "mine.toml"
    f.write_text("[cores.cycles]\nmatches = 3.0\ntasks = 10.0\n[host.cycles]\nmatches = 1\n")
    p = load_profile(str(f))
    assert p["cores.cycles"] == {"matches": 3.0, "tasks": 10.0} and p["host.cycles.matches"] == 1.0
    f.write_text("[host.cycles]\nmatches = -2.0\n")
    with pytest.raises(ProfileError, match="host.cycles.matches must be a non-negative number"):
        load_profile(str(f))
    f.write_text('[host.cycles]\nmatches = "cheap"\n')
    with pytest.raises(ProfileError, match="non-negative number"):
        load_profile(str(f))
    with pytest.raises(ProfileError):
        load_profile("modern-gen4", **{"host.cycles": 3})
