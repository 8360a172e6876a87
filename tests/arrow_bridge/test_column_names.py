"""Column names where a header leaves one empty or repeats one: pandas'
``Unnamed: i`` and ``a.1`` under ``semantics="pandas"`` (``read_pandas``,
Dask's backend), pyarrow's fields as they are otherwise; and pandas'
``usecols`` order (the file's)."""
from __future__ import annotations

import io
import random

import pandas as pd
import pyarrow.csv as pacsv
import pytest
from pandas.io.common import mangle_dupe_names

import arrow_bridge
from arrow_bridge.column_names import pandas_header

#: a file written by ``DataFrame.to_csv()`` with its index: the header's first field is empty
INDEXED = b",a,b,a,\n0,1,x,2.5,\n1,3,y,4.5,z\n"

CASES = {
    "empty and repeated names": (INDEXED, {}),
    "the index column back": (INDEXED, dict(index_col=0)),
    "index_col by its made-up name": (INDEXED, dict(index_col="Unnamed: 0")),
    "index_col list": (INDEXED, dict(index_col=[0, "a.1"])),
    "usecols by position": (INDEXED, dict(usecols=[4, 0])),
    "usecols by made-up and renamed names": (INDEXED, dict(usecols=["Unnamed: 4", "a.1", "a"])),
    "usecols callable": (INDEXED, dict(usecols=lambda name: name.startswith(("Unnamed", "a")))),
    "usecols in the file's order": (b"a,b,c\n1,2,3\n", dict(usecols=["c", "a"])),
    "usecols repeated": (b"a,b,c\n1,2,3\n", dict(usecols=[2, 0, 2])),
    "dtype of a renamed repeat": (INDEXED, dict(dtype={"a.1": str})),
    "a repeat's own dtype": (INDEXED, dict(dtype={"a": "float32", "a.1": str})),
    "parse_dates of a repeated name": (b"d,d\n2020-01-02,5\n", dict(parse_dates=["d"])),
    "converters of a repeated name": (b"a,a\n1,5\n", dict(converters={"a": lambda s: int(s) * 2})),
    "category of a repeated name, its repeat its own": (b"a,a\n1,5\n", dict(dtype={"a": "category", "a.1": "Int64"})),
    "dtype of a made-up name": (INDEXED, dict(dtype={"Unnamed: 0": "int8"})),
    "na_values of a repeat": (INDEXED, dict(na_values={"a.1": ["2.5"]})),
    "converters of a made-up name": (INDEXED, dict(converters={"Unnamed: 4": repr})),
    "parse_dates of a made-up name": (b",x\n2020-01-02,1\n", dict(parse_dates=["Unnamed: 0"])),
    "a repeat of a made-up name": (b"Unnamed: 0,,a\n1,2,3\n", {}),
    "a made-up name the header already has": (b",Unnamed: 0,a\n1,2,3\n", {}),
    "a repeat of a renamed repeat": (b"x,x,x.1\n1,2,3\n", {}),
    "header=1": (b"junk\n,a,a\n1,2,3\n", dict(header=1)),
    "skiprows": (b"junk\n,a,a\n1,2,3\n", dict(skiprows=1)),
    "names given keep theirs": (b",a\n1,2\n", dict(names=["p", "q"], header=0)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_names_are_the_ones_pandas_gives(case):
    data, keywords = CASES[case]
    got = arrow_bridge.read_pandas(io.BytesIO(data), dtype_backend="numpy", **keywords)
    pd.testing.assert_frame_equal(got, pd.read_csv(io.BytesIO(data), **keywords), check_exact=True)


@pytest.mark.parametrize("case", ["empty and repeated names", "usecols in the file's order",
                                  "a repeat's own dtype"])
def test_in_chunks_and_with_the_pyarrow_backend(case):
    data, keywords = CASES[case]
    expected = pd.read_csv(io.BytesIO(data), **keywords)
    with arrow_bridge.read_pandas(io.BytesIO(data), dtype_backend="numpy", chunksize=1, **keywords) as chunks:
        ours = pd.concat(list(chunks))
    # each chunk typed by its own rows, as pandas types its chunks (a column empty in one: object when concatenated)
    pd.testing.assert_frame_equal(ours, pd.concat(pd.read_csv(io.BytesIO(data), chunksize=1, **keywords)),
                                  check_exact=True)
    arrow = arrow_bridge.read_pandas(io.BytesIO(data), **keywords)
    assert arrow.columns.tolist() == expected.columns.tolist()


@pytest.mark.parametrize("how", [dict(), dict(device="modern-gen4", block_size=16), dict(block_size=16, n_threads=2)])
def test_every_path_names_and_types_the_columns_alike(how):
    data = INDEXED + b"".join(b"%d,%d,w,%d.5,v\n" % (i, i, i) for i in range(2, 200))
    table = arrow_bridge.read_csv(io.BytesIO(data), semantics="pandas", dtype={"a.1": "float32"}, **how)
    assert table.column_names == ["Unnamed: 0", "a", "b", "a.1", "Unnamed: 4"]
    assert str(table.schema.field("a.1").type) == "float"


def test_a_byte_range_names_the_columns_from_the_header():
    data = INDEXED + b"5,6,z,7.5,w\n"
    table = arrow_bridge.read_csv(io.BytesIO(data), semantics="pandas", dtype={"a.1": "float32"},
                                  byte_range=(len(INDEXED), len(data)))
    assert table.column_names == ["Unnamed: 0", "a", "b", "a.1", "Unnamed: 4"]
    assert [str(t) for t in table.schema.types] == ["int64", "int64", "string", "float", "string"]


def test_pyarrow_semantics_keep_the_header_as_it_is():
    expected = pacsv.read_csv(io.BytesIO(INDEXED))
    assert arrow_bridge.read_csv(io.BytesIO(INDEXED)).column_names == expected.column_names == ["", "a", "b", "a", ""]
    assert arrow_bridge.read_csv(io.BytesIO(b"a,b,c\n1,2,3\n"), usecols=["c", "a"]).column_names == ["c", "a"]


def test_names_match_pandas_mangling_on_random_headers():
    rng = random.Random(5)
    words = ["", "a", "a.1", "a.2", "b", "Unnamed: 0", "Unnamed: 1", "Unnamed: 0.1", "x.1.1"]
    for _ in range(3000):
        fields = [rng.choice(words) for _ in range(rng.randint(1, 8))]
        made_up = [f"Unnamed: {i}" if field == "" else field for i, field in enumerate(fields)]
        unnamed = [i for i, field in enumerate(fields) if field == ""]
        assert pandas_header(fields) == mangle_dupe_names(made_up, unnamed), fields
