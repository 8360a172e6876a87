"""The fused kernel's filter bounds (late materialization): rows a filter's AND-terms
reject are parsed but never kept. The Table equals reading everything and
filtering with pyarrow.compute, on random files with nulls, quotes, NaNs, bools
and strings; a bad, widening or non-UTF-8 value in a rejected row still counts."""
from __future__ import annotations

import io
import math
from datetime import date

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pytest

import arrow_bridge
from arrow_bridge.errors import CsvParseError
from arrow_bridge.fast_path import FastPlanCache
from arrow_bridge.filters import RowFilter
from arrow_bridge.inference import INFERENCE_LADDER
from arrow_bridge.options import CsvOptions
from arrow_bridge.read_plan import ReadPlan
from arrow_bridge.source import open_source

TYPES = {"i": pa.int64(), "f": pa.float64(), "d": pa.date32(), "s": pa.string(), "b": pa.bool_()}


def test_bounds_of_comparisons_with_constants():
    f = RowFilter([("i", ">", 3), ("i", "<=", 10), ("f", "<", 2), ("d", "=", date(1970, 1, 2)), ("s", ">", "a")])
    assert f.bounds(TYPES) == {"i": (4, 10), "f": (-math.inf, math.nextafter(2.0, -math.inf)), "d": (1, 1)}


@pytest.mark.parametrize("filters", [
    [[("i", ">", 3)], [("i", "<", 0)]],  # an OR: no single interval
    [("i", "!=", 3)],
    [("i", ">", 2.5)],  # a float constant on an int column
    [("i", ">", True)],
    [("i", "<", (1 << 63) - 1)],  # no int above it to bound with
    [("f", ">", float("nan"))],
    [("f", "<", math.inf)],
    [("f", ">", (1 << 53) + 1)],  # not exact as a float64
    [("d", "<", "1970-01-01")],
    [("i", "in", [1, 2])],
    [("i", "is not null")],
], ids=str)
def test_terms_without_an_exact_interval_make_no_bounds(filters):
    assert RowFilter(filters).bounds(TYPES) == {}


def _random_file(rows: int, seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    lines = ["i,f,d,s,b,q"]
    for r in range(rows):
        i = "" if rng.random() < 0.05 else str(int(rng.integers(-50, 50)))
        f = rng.choice(["", "nan", "-0.0", "inf", f"{rng.normal():.3f}", f"{rng.integers(-5, 5)}"],
                       p=[0.05, 0.05, 0.05, 0.02, 0.73, 0.10])
        d = "" if rng.random() < 0.05 else str(np.datetime64(int(rng.integers(0, 60)), "D"))
        s = rng.choice(["", "x", '"a, b"', '"say ""hi"""', "word"])
        b = rng.choice(["", "true", "false"])
        q = f'"{i}"' if rng.random() < 0.1 else i  # a quoted int: off the fast path
        lines.append(",".join([i, str(f), d, str(s), str(b), q]))
    return ("\n".join(lines) + "\n").encode()


def _random_filters(rng: np.random.Generator) -> list:
    choices = [("i", ">", int(rng.integers(-60, 60))), ("i", "<=", int(rng.integers(-60, 60))),
               ("f", ">=", float(rng.normal())), ("f", "<", float(rng.normal())), ("f", "=", 0.0),
               ("d", ">", date(1970, 1, 1 + int(rng.integers(0, 30)))), ("d", "<=", date(1970, 2, 15)),
               ("q", "<", int(rng.integers(-60, 60))), ("s", "=", "x"), ("b", "=", True), ("i", "=", 7)]
    picked = rng.choice(len(choices), size=int(rng.integers(1, 4)), replace=False)
    return [choices[k] for k in picked]


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("block_size", [1 << 12, None])
def test_bounded_reads_equal_filtering_everything(seed, block_size):
    data = _random_file(3000, seed)
    filters = _random_filters(np.random.default_rng(seed))
    expected = pacsv.read_csv(io.BytesIO(data)).filter(RowFilter(filters).expression)
    got = arrow_bridge.read_csv(io.BytesIO(data), filters=filters, block_size=block_size)
    assert got.equals(expected), filters


def test_a_file_with_bounds_rejects_rows_in_the_kernel():
    data = _random_file(200, 1)
    opts = CsvOptions(row_filter=RowFilter([("i", ">", 0), ("s", "=", "x")]))
    read = ReadPlan.build(open_source(io.BytesIO(data)), opts, ["i", "f", "d", "s", "b", "q"])
    rung = {type_: k for k, type_ in reversed(list(enumerate(INFERENCE_LADDER)))}
    rungs = tuple(rung[t] for t in (pa.int64(), pa.float64(), pa.date32(), pa.string(), pa.string(), pa.int64()))
    tested = FastPlanCache(read).get(rungs).bounds[0]
    assert tested.tolist() == [1, 0, 0, 0, 0, 0]  # the string term is the filter stage's alone


def _rows_with(last_line: bytes, rows: int = 5000) -> bytes:
    body = "".join(f"{k % 10},{k}.5,x{k}\n" for k in range(rows)).encode()
    return b"a,b,c\n" + body + last_line


def test_a_bad_value_in_a_rejected_row_is_still_an_error():
    data = _rows_with(b"0,oops,x\n")
    typed = pacsv.ConvertOptions(column_types={"a": pa.int64(), "b": pa.float64(), "c": pa.string()})
    with pytest.raises(CsvParseError) as unfiltered:
        arrow_bridge.read_csv(io.BytesIO(data), convert_options=typed)
    with pytest.raises(CsvParseError) as filtered:
        arrow_bridge.read_csv(io.BytesIO(data), convert_options=typed, filters=[("a", ">", 5)])
    assert str(filtered.value) == str(unfiltered.value)


def test_a_widening_value_in_a_rejected_row_still_widens_the_column():
    data = _rows_with(b"0,7,12345678901234567890123\n")  # c stays a string; b stays double
    data = data.replace(b"0,7,", b"0.5,7,")  # a is double in the last row only, which a > 5 rejects
    got = arrow_bridge.read_csv(io.BytesIO(data), filters=[("a", ">", 5)])
    assert got.schema.field("a").type == pa.float64()
    assert got.equals(pacsv.read_csv(io.BytesIO(data)).filter(RowFilter([("a", ">", 5)]).expression))


def test_non_utf8_text_in_a_rejected_row_still_counts():
    data = _rows_with(b"0,1.5,\xff\xfe\n")
    got = arrow_bridge.read_csv(io.BytesIO(data), filters=[("a", ">", 5)])
    assert got.schema.field("c").type == pa.binary()  # inferred: the row the filter rejects makes it binary
    assert got.equals(pacsv.read_csv(io.BytesIO(data)).filter(RowFilter([("a", ">", 5)]).expression))
    typed = pacsv.ConvertOptions(column_types={"c": pa.string()})
    with pytest.raises(CsvParseError) as unfiltered:
        arrow_bridge.read_csv(io.BytesIO(data), convert_options=typed)
    with pytest.raises(CsvParseError) as filtered:
        arrow_bridge.read_csv(io.BytesIO(data), convert_options=typed, filters=[("a", ">", 5)])
    assert str(filtered.value) == str(unfiltered.value)


def test_a_filter_the_types_cannot_take_fails_even_when_bounds_reject_every_row():
    data = b"a,s\n" + b"".join(b"%d,xxxxxxxx\n" % (i + 10) for i in range(50))
    filters, dtype = [("a", "<", 5), ("s", "<", 3)], {"a": pa.int64(), "s": pa.string()}
    with pytest.raises(Exception) as unfiltered:
        arrow_bridge.read_csv(io.BytesIO(data), dtype=dtype).filter(RowFilter(filters).expression)
    with pytest.raises(ValueError, match="cannot be evaluated") as filtered:
        arrow_bridge.read_csv(io.BytesIO(data), dtype=dtype, filters=filters)
    assert "string" in str(unfiltered.value) and "string" in str(filtered.value)


def test_a_string_filter_passes_over_empty_spans_read_before_the_types_are_known():
    data = b"a,s\n" + b"\n" * 9000 + b"1,x\n" * 100  # the first spans hold only empty lines
    got = arrow_bridge.read_csv(io.BytesIO(data), filters=[("s", "starts with", "x")], block_size=4096)
    assert got.num_rows == 100 and got.equals(pacsv.read_csv(io.BytesIO(data)))


def test_a_thinned_span_left_for_the_settled_types_is_converted_whole():
    """Spans of timestamps the string filter cannot take wait for the settled type
    (string); their rows the bounds on ``n`` dropped are parsed again with them."""
    rows = b"".join(b"20%02d-01-02 03:04:05,%s\n" % (i % 30, b"" if i % 3 == 0 else b"%d" % i) for i in range(3000))
    data = b"t,n\n" + rows + b"not a time,1\n"
    filters = [("t", "starts with", "201"), ("n", "<", 1000)]
    got = arrow_bridge.read_csv(io.BytesIO(data), filters=filters, block_size=1 << 12)
    assert got.equals(pacsv.read_csv(io.BytesIO(data)).filter(RowFilter(filters).expression))
