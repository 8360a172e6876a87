"""benchmarks.ssdlets on a small file: every placement agrees with pyarrow."""
from benchmarks.ssdlets import PLACEMENTS, make_numbers, measure


def test_every_placement_gives_pyarrows_answer_and_a_model(tmp_path):
    path = make_numbers(tmp_path / "numbers.txt", 20_000)
    results = measure(path, repeat=1, floor=500_000_000)  # measure() asserts the answers agree
    rows = results["placements"]
    assert set(rows) == set(PLACEMENTS)
    assert rows["all on the device"]["link_bytes"] == 16  # the sum and the count
    assert rows["all on the host"]["link_bytes"] == path.stat().st_size
    assert all(row["modeled_ms_biscuit-pm"] > 0 for row in rows.values())
    assert set(results["programs_came"]) <= {"compiled", "loaded"}  # the suite's cache folder is writable
