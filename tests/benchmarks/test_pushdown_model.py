"""benchmarks.pushdown_model's studies on a small TPC-H lineitem (scale factor 0.01): they run,
give figures of the right shape, and the sampled reads return the host path's Table. No timing
thresholds: the figures themselves are checked by the full run's report."""
from __future__ import annotations

import doctest
import json
import math

import pytest

from benchmarks import datasets, pushdown_model

SCALE_FACTOR = 0.01  # ~60,000 rows, 7 MB: under a second per read


@pytest.fixture(scope="module")
def lineitem(tmp_path_factory):
    return datasets.make("lineitem", scale_factor=SCALE_FACTOR, data_dir=tmp_path_factory.mktemp("tpch"))


@pytest.fixture(scope="module")
def results(lineitem):
    return {
        "files": {"summarizer": lineitem.name, "biscuit": lineitem.name, "modern": lineitem.name},
        "stage_prices": pushdown_model.stage_prices(rows=5000, repeat=1),
        "summarizer": pushdown_model.summarizer(lineitem, queries=("q6", "q14"),
                                                splits=("host", "static:0.1", "dynamic")),
        "biscuit": pushdown_model.biscuit(lineitem, {name: pushdown_model.BISCUIT_QUERIES[name]
                                                     for name in ("query1", "unselective")}),
        "modern": pushdown_model.modern(lineitem, selectivities=(0.01, 1.0)),
    }


def test_summarizer_gains_for_each_query(results):
    s = results["summarizer"]
    assert s["internal_over_link"] == 2.0  # the paper's board: the link at half the internal bandwidth
    for q in s["queries"].values():
        assert q["host_s"] > 0 and q["best_static"] == "static:0.1"
        assert q["dynamic_16x"] > q["dynamic"]  # a faster device takes more and gains more
        assert 0 < q["dynamic_share"] < q["dynamic_16x_share"] <= 1


def test_biscuit_selectivities_decisions_and_what_if(results):
    b = results["biscuit"]
    query1, unselective = b["query1"], b["unselective"]
    assert 0 < query1["row_selectivity"] < 0.01 < query1["page_selectivity"] < 0.2
    assert unselective["row_selectivity"] > 0.9 and unselective["page_selectivity"] == 1.0
    for q in (query1, unselective):
        assert all(d["same_table"] for d in q["sampled"].values())
        for host, decision in q["sampled"].items():
            assert decision["choice"] == ("device" if decision["device_s"] < decision["host_s"] else "host")
    # one host thread is slower than twelve, so the device's speed-up over it is larger
    assert query1["speedup"]["one host thread (Conv)"] > query1["speedup"]["12 host cores"]
    assert query1["what_if_matcher"]["keys"] == ["1995-01-17"]
    assert query1["what_if_matcher"]["pages_to_cores"] < 0.2 and unselective["what_if_matcher"]["pages_to_cores"] == 1
    # the matcher dropping pages helps the selective query only
    assert query1["what_if_matcher"]["12 host cores"] > query1["speedup"]["12 host cores"]
    assert math.isclose(unselective["what_if_matcher"]["12 host cores"], unselective["speedup"]["12 host cores"],
                        rel_tol=0.05)


def test_modern_speedups_by_selectivity(results):
    rows = results["modern"]
    assert [round(row["target"], 3) for row in rows] == [0.01, 1.0]
    assert 0.005 < rows[0]["selectivity"] < 0.02 and rows[1]["selectivity"] == 1.0
    assert all(value > 0 for row in rows for key, value in row.items() if "host core" in key)


def test_report_plot_and_json(results, tmp_path):
    text = pushdown_model.markdown(results)
    for heading in ("## Summarizer", "## Biscuit", "## modern-gen4", "## Span-stage prices"):
        assert heading in text
    assert "| Q6 |" in text and "| query1 |" in text
    pushdown_model.plot_modern(results["modern"], tmp_path / "plot.png")
    assert (tmp_path / "plot.png").stat().st_size > 10_000
    json.dumps(results, default=str)  # the results file's content


def test_docstring_examples():
    # benchmarks/ is not a pytest path, so its doctests run here.
    assert doctest.testmod(pushdown_model).failed == 0
