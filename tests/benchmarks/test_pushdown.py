"""benchmarks.pushdown's query definitions, on TPC-H at scale factor 0.01: every
ndp answer equals DuckDB's (integers and strings exactly, floats to REL_TOL)."""
from __future__ import annotations

import doctest
from pathlib import Path

import pytest

from benchmarks import datasets, pushdown
from benchmarks.common import write_head

SCALE_FACTOR = 0.01  # lineitem ~60,000 rows, part 2,000: seconds to make and query


@pytest.fixture(scope="module")
def paths(tmp_path_factory) -> pushdown.Paths:
    return pushdown.table_paths(SCALE_FACTOR, tmp_path_factory.mktemp("tpch"))


@pytest.fixture(scope="module")
def duckdb_answers(paths) -> dict[str, pushdown.Answer]:
    return {query: pushdown.answer("duckdb", query, paths, threads=2) for query in pushdown.QUERIES}


@pytest.mark.parametrize("system", ["ndp-pushdown", "ndp-usecols"])
@pytest.mark.parametrize("query", list(pushdown.QUERIES))
def test_ndp_answers_equal_duckdbs(paths, duckdb_answers, system, query):
    got = pushdown.answer(system, query, paths, threads=2)
    worst, problems = pushdown.compare(got, duckdb_answers[query])
    assert problems == [], f"{system} {query}: {problems}"
    assert worst <= pushdown.REL_TOL


def test_answers_are_not_empty(duckdb_answers):
    # A filter that kept nothing would make every system agree on nothing.
    assert len(duckdb_answers["q1"]["count_order"]) == 4 and sum(duckdb_answers["q1"]["count_order"]) > 50_000
    assert duckdb_answers["q6"]["revenue"][0] > 0
    assert 0 < duckdb_answers["q14"]["promo_revenue"][0] < 100


def test_part_is_made_once(paths):
    assert datasets.make_part(paths.part, SCALE_FACTOR).stat().st_mtime_ns == \
        Path(paths.part).stat().st_mtime_ns


def test_docstring_examples():
    # benchmarks/ is not a pytest path, so its doctests run here.
    assert doctest.testmod(pushdown).failed == 0


@pytest.mark.parametrize("system", ["ndp-pushdown", "ndp-usecols", "duckdb"])
def test_a_child_warms_up_on_heads_where_q14_joins_nothing(paths, duckdb_answers, tmp_path, system):
    # At SF1 the files' first rows share no part key: the warm-up must still pass.
    heads = pushdown.Paths(*(str(write_head(Path(path), tmp_path / Path(path).name, rows=20))
                             for path in (paths.lineitem, paths.part)))
    assert pushdown.answer(system, "q14", heads, threads=2) == {"promo_revenue": [None]}
    result = pushdown.measure(system, "q14", paths, heads, threads=2)
    assert pushdown.compare(result["answer"], duckdb_answers["q14"])[1] == []
