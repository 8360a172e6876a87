"""dask-expr predicate pushdown: a Dask filter on a ``read_csv`` collection reaches the
reader as ``filters=`` where it gives the same rows, and stays Dask's ``Filter`` where it
would not; values equal filtering after the read, on a LocalCluster, for both dtype
backends, with and without the ``ndp`` backend of ``dd.read_csv``."""
from __future__ import annotations

from datetime import date

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

import dask_plugin


@pytest.fixture(scope="module")
def numbers_csv(tmp_path_factory):
    """``i`` (ints, some missing), ``x`` (floats, some NaN), ``s`` (strings, some missing), 6000 rows."""
    rng = np.random.default_rng(3)
    lines = ["i,x,s"]
    for k in range(6000):
        i = "" if k % 53 == 0 else str(int(rng.integers(-100, 100)))
        x = "nan" if k % 61 == 0 else f"{rng.normal():.4f}"
        s = "" if k % 47 == 0 else rng.choice(["apple", "pear", "plum", "fig"])
        lines.append(f"{i},{x},{s}")
    path = tmp_path_factory.mktemp("pushdown") / "numbers.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def _values(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.reset_index(drop=True)


PUSHED = [
    (lambda d: d[d.i > 10], [[("i", ">", 10)]]),
    (lambda d: d[(d.i >= -5) & (d.x < 0.5)], [[("i", ">=", -5), ("x", "<", 0.5)]]),
    (lambda d: d[(d.s == "plum") | (d.i <= -90)], [[("s", "==", "plum")], [("i", "<=", -90)]]),
    (lambda d: d[3 < d.i], [[("i", ">", 3)]]),
    (lambda d: d[d.s > "fig"][["x"]], [[("s", ">", "fig")]]),
    (lambda d: d[d.x >= np.float64(1.5)], [[("x", ">=", 1.5)]]),
]
KEPT = [
    lambda d: d[d.i != 10],  # NaN != 10 keeps the row in NumPy partitions; Arrow drops a null
    lambda d: d[d.s.str.startswith("p")],
    lambda d: d[d.i.isin([1, 2])],
    lambda d: d[(d.i > 3) & (d.s.str.len() > 3)],  # one side of the AND cannot be pushed
    lambda d: d[d.x == 2 ** 55 + 1],  # NumPy rounds the int to a float; Arrow refuses it
    lambda d: d[d.i < 2 ** 64],  # outside int64
    lambda d: d[d.i > "3"],  # a str against an int column
]


@pytest.mark.parametrize("backend", ["pyarrow", "numpy"])
@pytest.mark.parametrize("case", range(len(PUSHED)))
def test_pushed_filters_give_the_rows_of_filtering_after_the_read(client, numbers_csv, backend, case):
    query, expected_filters = PUSHED[case]
    ddf = dask_plugin.read_csv(numbers_csv, blocksize="16KiB", dtype_backend=backend)
    filtered = query(ddf)
    assert dask_plugin.pushed_filters(filtered) == expected_filters
    got = _values(filtered.compute())
    opaque = ddf.map_partitions(lambda part: part, meta=ddf._meta)  # a Filter cannot pass through it
    assert dask_plugin.pushed_filters(query(opaque)) is None
    pd.testing.assert_frame_equal(got, _values(query(opaque).compute()))
    assert ddf.npartitions > 1 and len(got) > 0


@pytest.mark.parametrize("case", range(len(KEPT)))
def test_filters_that_would_change_rows_stay_with_dask(client, numbers_csv, case):
    ddf = dask_plugin.read_csv(numbers_csv, blocksize="16KiB", dtype_backend="numpy")
    query = KEPT[case]
    if case == len(KEPT) - 1:
        with pytest.raises(TypeError):
            query(ddf).compute()
        return
    assert dask_plugin.pushed_filters(query(ddf)) is None
    expected = query(pd.read_csv(numbers_csv))
    got = query(ddf).compute()
    assert len(got) == len(expected)


def test_an_int_column_with_missing_values_is_compared_as_the_partitions_hold_it(client, numbers_csv):
    ddf = dask_plugin.read_csv(numbers_csv, blocksize="16KiB", dtype_backend="numpy")
    assert ddf.i.dtype == np.float64  # read as float64 in every partition, so the pushed filter compares floats
    filtered = ddf[ddf.i > 3]
    assert dask_plugin.pushed_filters(filtered) == [[("i", ">", 3)]]
    expected = pd.read_csv(numbers_csv)
    pd.testing.assert_series_equal(_values(filtered.i.compute()), _values(expected.i[expected.i > 3]))


def test_a_float_against_an_int_column_stays_with_dask(client, numbers_csv):
    ddf = dask_plugin.read_csv(numbers_csv, blocksize="16KiB", dtype_backend="pyarrow")
    assert ddf.i.dtype == "int64[pyarrow]"  # Arrow would cast its values to float64, refusing those past 2**53
    assert dask_plugin.pushed_filters(ddf[ddf.i > 2.5]) is None
    expected = pd.read_csv(numbers_csv, dtype_backend="pyarrow")
    assert len(ddf[ddf.i > 2.5].compute()) == len(expected[expected.i > 2.5]) > 0


def test_pushed_filters_join_the_reads_own(client, numbers_csv):
    ddf = dask_plugin.read_csv(numbers_csv, blocksize="16KiB", filters=[("s", "==", "pear")])
    filtered = ddf[ddf.i > 50]
    assert dask_plugin.pushed_filters(filtered) == [[("i", ">", 50)]]
    got = _values(filtered.compute())
    frame = pd.read_csv(numbers_csv, dtype_backend="pyarrow")
    assert len(got) == len(frame[(frame.s == "pear") & (frame.i > 50)]) > 0
    assert set(got.s) == {"pear"} and got.i.min() > 50


def test_dd_read_csv_with_the_ndp_backend_pushes_filters(client, numbers_csv):
    with dask.config.set({"dataframe.backend": "ndp"}):
        ddf = dd.read_csv(numbers_csv, blocksize="16KiB")
    filtered = ddf[ddf.x > 1.0]
    assert dask_plugin.pushed_filters(filtered) == [[("x", ">", 1.0)]]
    expected = pd.read_csv(numbers_csv)
    assert len(filtered.compute()) == len(expected[expected.x > 1.0])


def test_a_date_column_takes_dates_and_not_text(client, tmp_path):
    path = tmp_path / "dated.csv"
    path.write_text("d,n\n" + "".join(f"{np.datetime64(k * 3, 'D')},{k}\n" for k in range(3000)))
    ddf = dask_plugin.read_csv(path, blocksize="8KiB")  # pyarrow semantics: d is date32
    filtered = ddf[(ddf.d >= date(1975, 1, 1)) & (ddf.d < date(1976, 1, 1))]
    assert dask_plugin.pushed_filters(filtered) == [[("d", ">=", date(1975, 1, 1)), ("d", "<", date(1976, 1, 1))]]
    assert filtered.n.compute().tolist() == [k for k in range(3000) if 1826 <= k * 3 < 2191]
    with dask.config.set({"dataframe.backend": "ndp"}):
        as_text = dd.read_csv(path, blocksize="8KiB")  # pandas semantics: d is text
    assert dask_plugin.pushed_filters(as_text[as_text.d >= "1975-01-01"]) == [[("d", ">=", "1975-01-01")]]
