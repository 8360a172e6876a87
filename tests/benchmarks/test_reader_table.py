"""The reader table's fit: value prices from whole reads, the scan/row/field split held."""
from __future__ import annotations

import pytest

from benchmarks.reader_table import FITTED, SPLIT, fit, modeled_cycles

CLOCK_MHZ = 2500.0


def _read(counters: dict, table: dict) -> dict:
    return {"counters": counters, "cpu_s": modeled_cycles({"counters": counters}, table) / (CLOCK_MHZ * 1e6)}


def test_the_fit_finds_the_prices_that_made_the_reads():
    truth = dict(SPLIT, ints=9.0, floats=35.0, temporals=15.0, string_bytes=1.5, bools=6.0, nulls=3.0)
    base = {"bytes_scanned": 9_000_000, "rows": 500_000, "fields": 1_000_000}
    reads = {kind: _read(dict(base, **{kind: 1_000_000}), truth) for kind in FITTED}
    reads["mixed"] = _read(dict(base, ints=300_000, floats=200_000, temporals=300_000, string_bytes=2_000_000), truth)
    table = fit(reads, CLOCK_MHZ)
    assert list(table) == [*SPLIT, *FITTED]
    assert table == pytest.approx(truth, rel=1e-6)
    assert all(modeled_cycles(r, table) / (r["cpu_s"] * CLOCK_MHZ * 1e6) == pytest.approx(1.0) for r in reads.values())


def test_a_kind_no_read_has_costs_nothing_rather_than_anything():
    truth = dict(SPLIT, ints=9.0)
    reads = {"edges": _read({"bytes_scanned": 9_000, "rows": 1_000, "fields": 2_000, "ints": 2_000}, truth)}
    table = fit(reads, CLOCK_MHZ)
    assert table["ints"] == pytest.approx(9.0)
    assert table["bools"] == 0.0


def test_modern_gen4_prices_the_committed_reader_table():
    """modern-gen4's [host.cycles] is reader-table.json's table to 0.1 cycle, its cores' twice that."""
    import json
    from pathlib import Path

    from device_emulator.profile import load_profile

    results = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "reader-table.json"
    table = json.loads(results.read_text())["table"]
    cycles = load_profile("modern-gen4").data
    for unit, price in table.items():
        assert cycles["host"]["cycles"][unit] == pytest.approx(round(price, 1), abs=0.051), unit
        assert cycles["cores"]["cycles"][unit] == pytest.approx(2 * cycles["host"]["cycles"][unit]), unit
