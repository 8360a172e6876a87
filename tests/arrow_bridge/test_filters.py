"""read_csv(filters=...): the same Table as reading everything and filtering with pyarrow.compute,
on every path (host, device splits, stream, block sizes, usecols with hidden filter columns,
types settled late), and clear errors for filters that cannot apply."""
from __future__ import annotations

import io
from datetime import date

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pytest

import arrow_bridge
from arrow_bridge.filters import FilterError, RowFilter


def _lineitem_like(rows: int = 3000, seed: int = 7) -> bytes:
    rng = np.random.default_rng(seed)
    days = rng.integers(8000, 10600, rows)
    lines = ["l_shipdate,l_quantity,l_discount,l_flag,l_comment"]
    for i in range(rows):
        flag = "" if i % 97 == 0 else "ANR"[i % 3]  # some nulls
        quantity = "" if i % 89 == 0 else str(int(rng.integers(1, 51)))
        comment = f'"say, {i}"' if i % 5 == 0 else f"note {i}"
        lines.append(f"{np.datetime64(int(days[i]), 'D')},{quantity},{rng.integers(0, 11) / 100},{flag},{comment}")
    return ("\n".join(lines) + "\n").encode()


DATA = _lineitem_like()
LATE_FLOAT = DATA + b"1998-01-01,7.5,0.05,A,late\n"  # l_quantity settles to double in the last span

FILTERS = [
    [("l_shipdate", ">=", date(1994, 1, 1)), ("l_shipdate", "<", date(1995, 1, 1)), ("l_discount", ">=", 0.05)],
    [[("l_quantity", "<", 5)], [("l_flag", "in", ["R"]), ("l_discount", "=", 0.1)]],
    [("l_flag", "not in", ["A", "N"])],  # keeps nulls, as pyarrow's "not in"
    [("l_flag", "is null")],
    [("l_quantity", "is not null"), ("l_comment", "starts with", "say")],
    [("l_comment", "contains", "9"), ("l_comment", "ends with", "1")],
    (pc.field("l_quantity") * 2 > 90) | (pc.field("l_flag") == "N"),
    [("l_quantity", ">", 1000)],  # nothing kept
]


def _expected(data: bytes, filters, usecols=None, **read) -> pa.Table:
    table = pacsv.read_csv(io.BytesIO(data), **read).filter(RowFilter(filters).expression)
    return table.select(usecols) if usecols else table


@pytest.mark.parametrize("filters", FILTERS, ids=range(len(FILTERS)))
@pytest.mark.parametrize("block_size", [None, 1 << 12])
def test_filtered_read_equals_filtering_everything(filters, block_size):
    got = arrow_bridge.read_csv(io.BytesIO(DATA), filters=filters, block_size=block_size)
    assert got.equals(_expected(DATA, filters))


@pytest.mark.parametrize("filters", FILTERS[:3] + FILTERS[6:7], ids=range(4))
def test_columns_read_for_the_filter_alone_are_dropped(filters):
    got = arrow_bridge.read_csv(io.BytesIO(DATA), filters=filters, usecols=["l_comment"], block_size=1 << 12)
    assert got.equals(_expected(DATA, filters, ["l_comment"]))


def test_a_type_settled_after_the_filter_ran_gives_the_same_rows():
    filters = [("l_quantity", ">=", 40)]
    got = arrow_bridge.read_csv(io.BytesIO(LATE_FLOAT), filters=filters, block_size=1 << 11)
    expected = _expected(LATE_FLOAT, filters)
    assert expected.schema.field("l_quantity").type == pa.float64()
    assert got.equals(expected)


@pytest.mark.parametrize("split", ["device", "static:0.5", "dynamic"])
def test_device_splits_filter_the_same_rows(tmp_path, split):
    path = tmp_path / "l.csv"
    path.write_bytes(LATE_FLOAT)
    filters = FILTERS[0]
    got = arrow_bridge.read_csv(path, filters=filters, device="modern-gen4", split=split, block_size=1 << 13)
    assert got.equals(_expected(LATE_FLOAT, filters))


def test_a_device_sends_only_the_kept_rows(tmp_path):
    from ndp_core.report import collect

    path = tmp_path / "l.csv"
    path.write_bytes(DATA)
    with collect() as everything:
        arrow_bridge.read_csv(path, device="modern-gen4", split="device", block_size=1 << 13)
    with collect() as filtered:
        arrow_bridge.read_csv(path, device="modern-gen4", split="device", block_size=1 << 13,
                              filters=[("l_flag", "=", "R")])
    sent_all, sent_kept = (c.total.bytes["host_link"] for c in (everything, filtered))
    assert 0 < sent_kept < sent_all / 2


def test_open_csv_streams_filtered_batches():
    filters = FILTERS[1]
    reader = arrow_bridge.open_csv(io.BytesIO(DATA), filters=filters, block_size=1 << 12)
    assert reader.read_all().equals(_expected(DATA, filters))


def test_nrows_counts_rows_before_the_filter():
    filters = [("l_flag", "=", "A")]
    got = arrow_bridge.read_csv(io.BytesIO(DATA), filters=filters, nrows=100, block_size=1 << 11)
    assert got.equals(pacsv.read_csv(io.BytesIO(DATA)).slice(0, 100).filter(RowFilter(filters).expression))


def test_a_column_finish_filters_the_finished_table():
    filters = [("l_flag", "=", "R")]
    options = pacsv.ConvertOptions(auto_dict_encode=True)
    got = arrow_bridge.read_csv(io.BytesIO(DATA), filters=filters, convert_options=options)
    assert got.equals(_expected(DATA, filters, convert_options=options))


def test_read_pandas_and_dask_take_filters(tmp_path):
    import dask_plugin

    path = tmp_path / "l.csv"
    path.write_bytes(DATA)
    filters = FILTERS[0]
    expected = _expected(DATA, filters).to_pandas(types_mapper=pd_arrow_types)
    frame = arrow_bridge.read_pandas(path, filters=filters)
    assert frame.equals(expected)
    dask_frame = dask_plugin.read_csv(str(path), filters=filters, blocksize=20_000).compute()
    assert dask_frame.reset_index(drop=True).equals(expected)


def pd_arrow_types(type_: pa.DataType):
    import pandas as pd

    return pd.ArrowDtype(type_)


@pytest.mark.parametrize("filters, message", [
    ([("nope", "=", 1)], "does not have: ['nope']"),
    ([("l_flag", "~", 1)], "unknown operator '~'"),
    ([("l_flag", "in", "A")], "needs a collection"),
    ([("l_flag", "is null", 3)], "takes no value"),
    ([("l_flag", ">")], "needs a value"),
    ([("l_flag", ">", 3)], "cannot be evaluated on columns (l_flag: string)"),
    (pc.field("nope") > 1, "No match for FieldRef.Name(nope)"),
    ("l_flag > 1", "non-empty DNF list"),
])
def test_a_filter_that_cannot_apply_says_why(filters, message):
    with pytest.raises(FilterError) as caught:
        arrow_bridge.read_csv(io.BytesIO(DATA), filters=filters)
    assert message in str(caught.value)


def test_a_filter_error_is_a_value_error():
    assert issubclass(FilterError, ValueError)
