"""pandas keywords through ``read_pandas``: the frame ``pandas.read_csv`` gives
(index, dtypes, values), keyword by keyword, on a clean file and a messy one."""
from __future__ import annotations

import io
import warnings

import pandas as pd
import pytest

import arrow_bridge

CLEAN = b"id,name,day,score\n" + b"".join(
    b"%d,n%d,2020-01-%02d,%d.5\n" % (i, i % 7, 1 + i % 28, i) for i in range(60))
# quoted delimiters and line breaks, repeated names, CRLF line ends
MESSY = b"id,name,day,score\r\n" + b"".join(
    b'%d,"n,%d",2021-02-%02d,%d\r\n' % (i, i % 3, 1 + i % 28, -i) if i % 4 else
    b'%d,"two\nlines",2021-02-%02d,%d\r\n' % (i, 1 + i % 28, i) for i in range(40))

CASES = {
    "index_col name": dict(index_col="id"),
    "index_col position": dict(index_col=0),
    "index_col list": dict(index_col=["name", "id"]),
    "parse_dates": dict(parse_dates=["day"]),
    "parse_dates with date_format": dict(parse_dates=["day"], date_format="%Y-%m-%d"),
    "parse_dates position and index": dict(parse_dates=[2], index_col="id"),
    "converters": dict(converters={"name": str.upper}),
    "skipfooter": dict(skipfooter=3),
    "dtype category per column": dict(dtype={"name": "category"}),
    "usecols callable": dict(usecols=lambda name: name in ("id", "score")),
    "usecols callable and index": dict(usecols=lambda name: name != "day", index_col="name"),
}


@pytest.mark.parametrize("data", [CLEAN, MESSY], ids=["clean", "messy"])
@pytest.mark.parametrize("case", list(CASES))
def test_frame_keywords_give_pandas_frame(data, case):
    options = CASES[case]
    expected = pd.read_csv(io.BytesIO(data), **options, **({"engine": "python"} if "skipfooter" in options else {}))
    got = arrow_bridge.read_pandas(io.BytesIO(data), dtype_backend="numpy", **options)
    if "parse_dates" not in options:  # pandas leaves dates as text; our numpy backend gives datetime.date objects
        expected, got = expected.drop(columns="day", errors="ignore"), got.drop(columns="day", errors="ignore")
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


def test_dtype_category_for_every_column():
    got = arrow_bridge.read_pandas(io.BytesIO(CLEAN), dtype="category")
    expected = pd.read_csv(io.BytesIO(CLEAN), dtype="category")
    assert (got.dtypes == "category").all()
    assert [list(got[c].astype(str)) for c in got] == [list(expected[c].astype(str)) for c in expected]


@pytest.mark.parametrize("keyword, value", [("engine", "c"), ("low_memory", False), ("memory_map", True),
                                            ("float_precision", "round_trip")])
def test_engine_keywords_are_accepted_with_a_warning_at_the_callers_line(keyword, value):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        frame = arrow_bridge.read_pandas(io.BytesIO(CLEAN), **{keyword: value})
    assert len(frame) == 60
    assert [str(w.message) for w in seen] == [f"read_csv({keyword}={value!r}) is ignored: "
                                              f"{arrow_bridge.options.IGNORED_PANDAS_KEYWORDS[keyword]}"]
    assert seen[0].filename == __file__


def test_frame_keywords_with_chunks_are_refused_clearly():
    with pytest.raises(NotImplementedError, match="chunksize"):
        arrow_bridge.read_pandas(io.BytesIO(CLEAN), chunksize=10, index_col="id")
