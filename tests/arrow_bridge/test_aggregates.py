"""aggregate_csv: pyarrow's group_by answer from per-span partial states, the same on every
path and block size; float sums exact (correctly rounded), so independent of the split."""
from __future__ import annotations

import io
import math
from fractions import Fraction

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pytest

import arrow_bridge
from arrow_bridge.aggregates import Aggregation, GroupedQuery, _exact_float_sums, _exact_int_sums, _key_codes
from arrow_bridge.filters import RowFilter


def _data(rows: int = 4000, seed: int = 3) -> bytes:
    rng = np.random.default_rng(seed)
    keys = rng.choice(["a", "b", "c", ""], rows)
    lines = ["k,flag,n,x,day"]
    for i in range(rows):
        n = "" if i % 53 == 0 else str(int(rng.integers(-10**6, 10**6)))
        x = repr(float(rng.normal() * 10.0 ** rng.integers(-3, 9)))
        lines.append(f"{keys[i]},{'YN'[i % 2]},{n},{x},{np.datetime64(8000 + i % 365, 'D')}")
    return ("\n".join(lines) + "\n").encode()


DATA = _data()
AGGREGATIONS = [("n", "sum"), ("n", "mean"), ("n", "count"), ("n", "min"), ("x", "max"), ("x", "count"),
                ("day", "min"), ("day", "max"), ("k", "count")]


def _reference(data: bytes, aggregations, group_by, filters=None) -> pa.Table:
    table = pacsv.read_csv(io.BytesIO(data))
    if filters is not None:
        table = table.filter(RowFilter(filters).expression)
    return table.group_by(group_by, use_threads=False).aggregate(aggregations)


@pytest.mark.parametrize("group_by", [[], ["k"], ["k", "flag"]])
@pytest.mark.parametrize("block_size", [None, 1 << 12])
def test_exact_aggregates_equal_pyarrows(group_by, block_size):
    got = arrow_bridge.aggregate_csv(io.BytesIO(DATA), AGGREGATIONS, group_by=group_by, block_size=block_size)
    assert got.equals(_reference(DATA, AGGREGATIONS, group_by))


@pytest.mark.parametrize("longest", [1, 7, 12])
def test_group_keys_of_every_length_equal_pyarrows(longest):
    """Keys of 0 to ``longest`` bytes, 3000 distinct (the word table grows), over many spans."""
    rng = np.random.default_rng(longest)
    keys = ["".join(chr(97 + int(c)) for c in rng.integers(0, 26, rng.integers(0, longest + 1))) for _ in range(3000)]
    rows = rng.choice(keys, 20000)
    data = ("k,n\n" + "".join(f"{k},{i % 7}\n" for i, k in enumerate(rows))).encode()
    got = arrow_bridge.aggregate_csv(io.BytesIO(data), [("n", "sum"), ("n", "count")], group_by=["k"],
                                     block_size=1 << 14)
    # Ours lists groups by first appearance; pyarrow's hash grouper, with this many keys, not quite.
    expected = _reference(data, [("n", "sum"), ("n", "count")], ["k"])
    assert got.sort_by("k").equals(expected.sort_by("k"))


def test_key_codes_number_values_as_dictionary_encoding_does():
    for array in (pa.array(["bb", "a", "", "bb", "a", "ccccccc"]), pa.array(["x", None, "x", "y"]),
                  pa.array(["longer than seven", "a", "a"]), pa.array(["q", "r", "s", "q"]).slice(1)):
        codes, width = _key_codes(array)
        assert codes.tolist() == pc.dictionary_encode(array, null_encoding="encode").indices.to_pylist()
        assert width > max(codes)


def test_with_a_filter_and_a_derived_column():
    derived = {"scaled": pc.field("x") * 2}
    got = arrow_bridge.aggregate_csv(io.BytesIO(DATA), [("scaled", "max"), ("n", "sum")], group_by=["flag"],
                                     derived=derived, filters=[("n", ">", 0)], block_size=1 << 12)
    table = pacsv.read_csv(io.BytesIO(DATA)).filter(pc.field("n") > 0)
    table = table.append_column("scaled", pc.multiply(table["x"], 2))
    assert got.equals(table.group_by(["flag"], use_threads=False).aggregate([("scaled", "max"), ("n", "sum")]))


def test_a_derived_column_reads_only_the_columns_it_references():
    """A column whose name is inside a used one ("x" in "xx") is not read."""
    query = GroupedQuery([Aggregation("twice", "sum")], ["k"], {"twice": pc.field("xx") * 2})
    assert query.columns_of(["k", "x", "xx"]) == ("k", "xx")


def _float_sums(**read) -> dict:
    got = arrow_bridge.aggregate_csv(io.BytesIO(DATA), [("x", "sum"), ("x", "mean")], group_by=["k"], **read)
    return {k: (s, m) for k, s, m in zip(*(got.column(j).to_pylist() for j in range(3)))}


def test_float_sums_are_correctly_rounded_whatever_the_block_size(tmp_path):
    table = pacsv.read_csv(io.BytesIO(DATA))
    path = tmp_path / "d.csv"
    path.write_bytes(DATA)
    answers = [_float_sums(), _float_sums(block_size=1 << 11),
               _float_sums(block_size=1 << 13, n_threads=1)]
    device = arrow_bridge.aggregate_csv(path, [("x", "sum"), ("x", "mean")], group_by=["k"],
                                        device="modern-gen4", split="dynamic", block_size=1 << 12)
    answers.append({k: (s, m) for k, s, m in zip(*(device.column(j).to_pylist() for j in range(3)))})
    assert all(answer == answers[0] for answer in answers)
    for key, (total, mean) in answers[0].items():
        values = table.filter(pc.field("k") == key)["x"].to_pylist()
        assert total == math.fsum(values)
        assert mean == pytest.approx(math.fsum(values) / len(values), rel=1e-15)


def test_a_type_settled_late_is_aggregated_at_its_final_type():
    data = DATA + b"a,Y,2.5,1.0,1990-01-01\n"  # n becomes double in the last span
    got = arrow_bridge.aggregate_csv(io.BytesIO(data), [("n", "max"), ("n", "count")], group_by=["k"],
                                     block_size=1 << 12)
    assert got.schema.field("n_max").type == pa.float64()
    assert got.equals(_reference(data, [("n", "max"), ("n", "count")], ["k"]))


def test_no_rows_gives_pyarrows_empty_answers():
    empty = b"k,n\n"
    for group_by in ([], ["k"]):
        got = arrow_bridge.aggregate_csv(io.BytesIO(empty), [("n", "sum"), ("n", "count")], group_by=group_by,
                                         dtype={"n": "int64", "k": "string"})
        table = pa.table({"k": pa.array([], pa.string()), "n": pa.array([], pa.int64())})
        assert got.equals(table.group_by(group_by, use_threads=False).aggregate([("n", "sum"), ("n", "count")]))


def test_exact_sums_of_extreme_values():
    assert _exact_int_sums(np.array([2**62, 2**62, -5]), np.array([0, 0, 1]), 2) == [2**63, -5]
    values = np.array([1e308, 1e308, -1e308, 1e-320, np.nan, 1.0, np.inf, 2.0, -np.inf])
    scaled, specials = _exact_float_sums(values, np.array([0, 0, 0, 0, 1, 2, 2, 3, 3]), 4)
    assert scaled[0] == (Fraction(1e308) + Fraction(1e-320)) * 2 ** 1126
    assert specials.tolist() == [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]


def test_exact_float_sums_of_many_groups_take_bounded_bins(monkeypatch):
    """Values over the whole exponent range in 3000 groups, the bins 64 KiB a pass: exact still."""
    monkeypatch.setattr("arrow_bridge.aggregates._FLOAT_BINS_BYTES", 64 << 10)
    rng = np.random.default_rng(5)
    values = rng.random(6000) * 2.0 ** rng.integers(-1070, 1020, 6000)
    groups = rng.integers(0, 3000, 6000)
    scaled, specials = _exact_float_sums(values, groups, 3000)
    exact = [Fraction(0)] * 3000
    for value, group in zip(values.tolist(), groups.tolist()):
        exact[group] += Fraction(value)
    assert [Fraction(s, 2 ** 1126) for s in scaled] == exact and not specials.any()


def test_an_integer_sum_past_int64_is_an_error_not_a_wraparound():
    data = b"x\n" + b"9223372036854775807\n" * 2
    with pytest.raises(OverflowError, match="x_sum does not fit its type int64"):
        arrow_bridge.aggregate_csv(io.BytesIO(data), [("x", "sum")])


@pytest.mark.parametrize("block_size", [None, 16])
def test_integer_sums_of_a_column_with_nulls_stay_exact(block_size):
    """Nulls do not send an int column through float64 (2**53 + 1 and INT64_MAX survive)."""
    data = b"x,k\n9007199254740993,a\n,a\n9223372036854775807,b\n,b\n-1,b\n"
    aggregations = [("x", "sum"), ("x", "mean"), ("x", "count")]
    got = arrow_bridge.aggregate_csv(io.BytesIO(data), aggregations, group_by=["k"], block_size=block_size)
    assert got.to_pydict()["x_sum"] == [2**53 + 1, 2**63 - 2]
    assert got.equals(_reference(data, aggregations, ["k"]))


@pytest.mark.parametrize("block_size", [None, 64])
def test_float_group_keys_are_told_apart_as_pyarrow_does(block_size):
    """Every NaN is one group, over all spans; -0.0 and 0.0 are two."""
    data = b"k,v\n" + b"nan,1\n0.0,2\n-0.0,3\n" * 20
    got = arrow_bridge.aggregate_csv(io.BytesIO(data), [("v", "sum")], group_by=["k"], block_size=block_size)
    assert got.num_rows == 3 and got.equals(_reference(data, [("v", "sum")], ["k"]))


@pytest.mark.parametrize("block_size", [None, 8])
def test_nans_of_other_bits_are_other_groups_as_in_pyarrow(block_size):
    """0/0 gives -NaN, a parsed nan +NaN: pyarrow groups keys by their bits."""
    data = b"a,b,v\n0,0,1\nnan,1,2\n0,0,4\n"
    types = pacsv.ConvertOptions(null_values=[], column_types={"a": pa.float64(), "b": pa.float64()})
    derived = {"k": pc.divide(pc.field("a"), pc.field("b"))}
    got = arrow_bridge.aggregate_csv(io.BytesIO(data), [("v", "sum")], group_by=["k"], derived=derived,
                                     convert_options=types, block_size=block_size)
    assert got.column("v_sum").to_pylist() == [5, 2]


def test_a_repeated_aggregation_gives_a_column_each():
    aggregations = [("n", "sum"), ("n", "sum")]
    got = arrow_bridge.aggregate_csv(io.BytesIO(DATA), aggregations, group_by=["k"])
    assert got.column_names == ["k", "n_sum", "n_sum"] and got.equals(_reference(DATA, aggregations, ["k"]))


@pytest.mark.parametrize("block_size", [None, 64])
@pytest.mark.parametrize("data", [b"x,y\n,1\n,2\n", b"x,y\n" + b",1\n" * 40 + b"5,1\n"], ids=["nulls", "late"])
def test_sums_over_nulls_equal_pyarrows(data, block_size):
    """A column of nulls sums to null; spans holding only its nulls add nothing (at any block size)."""
    aggregations = [("x", "sum"), ("x", "mean"), ("x", "count")]
    got = arrow_bridge.aggregate_csv(io.BytesIO(data), aggregations, block_size=block_size)
    assert got.equals(_reference(data, aggregations, []))


@pytest.mark.parametrize("call, message", [
    (dict(aggregations=[("n", "median")]), "unknown function 'median'"),
    (dict(aggregations=[("zzz", "sum")]), "neither in the file"),
    (dict(aggregations=[("n", "sum")], usecols=["n"]), "drop usecols"),
])
def test_a_query_that_cannot_run_says_why(call, message):
    with pytest.raises((ValueError, KeyError, TypeError)) as caught:
        arrow_bridge.aggregate_csv(io.BytesIO(DATA), **call)
    assert message in str(caught.value)


@pytest.mark.parametrize("block_size", [None, 1 << 10])
def test_mean_of_decimal_and_boolean_columns_equals_pyarrows(block_size):
    """pyarrow's decimal mean keeps the column's scale and rounds a half away from zero."""
    rng = np.random.default_rng(5)
    lines = ["k,d,b"] + [f"{'abc'[i % 3]},{int(rng.integers(-10**6, 10**6)) / 100:.2f},{'true' if rng.random() < 0.3 else 'false'}"
                         for i in range(3000)]
    lines += ["a,0.05,true", "b,-0.05,", "c,,false"]
    data = ("\n".join(lines) + "\n").encode()
    types = {"d": pa.decimal128(12, 2)}
    aggregations = [("d", "mean"), ("d", "sum"), ("b", "mean"), ("b", "sum")]
    got = arrow_bridge.aggregate_csv(io.BytesIO(data), aggregations, group_by=["k"], dtype=types,
                                     block_size=block_size)
    table = pacsv.read_csv(io.BytesIO(data), convert_options=pacsv.ConvertOptions(column_types=types))
    expected = table.group_by(["k"], use_threads=False).aggregate(aggregations)
    assert got.sort_by("k").equals(expected.sort_by("k"))
