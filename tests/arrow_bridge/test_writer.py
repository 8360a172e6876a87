"""write_csv: text that pyarrow reads back to the same table, host and device alike.

The oracle is pyarrow itself: every table written here is read back with
``pyarrow.csv.read_csv`` (with ``read_back_options`` for the exact guarantee,
and with no options for what inference recovers) and compared bit for bit
(floats by their IEEE bits, so -0.0 and NaN signs count). Float text is also
compared with Python's ``repr`` (the shortest round-trip spelling).
"""
from __future__ import annotations

import datetime as dt
from decimal import Decimal
import io
import math
import os
import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import arrow_bridge
from arrow_bridge import writer as writer_module
from arrow_bridge.kernels import formatting as fk
from arrow_bridge.kernels.format_app import csv_format
from arrow_bridge.kernels.status import BAD_VALUE, OK, OUT_OF_SPACE, empty_counters
from arrow_bridge.writer import CsvWriteResult, read_back_options, write_csv

ndp_core = pytest.importorskip("ndp_core")

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
I64_MIN, I64_MAX, U64_MAX = -(2**63), 2**63 - 1, 2**64 - 1


# --------------------------------------------------------------------------
# Helpers.
# --------------------------------------------------------------------------
def text_of(table, **kw) -> bytes:
    sink = io.BytesIO()
    write_csv(table, sink, **kw)
    return sink.getvalue()


def read_exact(data: bytes, schema: pa.Schema, **dialect) -> pa.Table:
    return pacsv.read_csv(io.BytesIO(data), **read_back_options(schema, **dialect))


def _bits(array: pa.Array) -> np.ndarray:
    width = array.type.bit_width
    values = np.frombuffer(array.buffers()[1], dtype=np.uint64 if width == 64 else np.uint32)
    return values[array.offset:array.offset + len(array)]


def assert_same(got: pa.Table, want: pa.Table) -> None:
    """Equal schema and values; floats compared by their bits (NaN, -0.0)."""
    assert got.schema.equals(want.schema), (got.schema, want.schema)
    assert got.num_rows == want.num_rows
    for name, g, w in zip(want.column_names, got.columns, want.columns):
        g, w = g.combine_chunks(), w.combine_chunks()
        if pa.types.is_floating(w.type):
            valid = np.asarray(w.is_valid())
            assert np.array_equal(np.asarray(g.is_valid()), valid), name
            assert np.array_equal(_bits(g)[valid], _bits(w)[valid]), name
        else:
            assert g.equals(w), (name, g, w)


def every_type_table() -> pa.Table:
    """Each supported type, with nulls and extreme values."""
    ts_values = [0, -1, None, 1_700_000_000_123_456_789, -62_135_596_800_000_000]
    return pa.table({
        "i8": pa.array([-128, 127, None, 0, -1], pa.int8()),
        "i16": pa.array([-32768, 32767, None, 0, 1], pa.int16()),
        "i32": pa.array([-(2**31), 2**31 - 1, None, 0, 7], pa.int32()),
        "i64": pa.array([I64_MIN, I64_MAX, None, 0, -10], pa.int64()),
        "u8": pa.array([0, 255, None, 1, 2], pa.uint8()),
        "u16": pa.array([0, 65535, None, 1, 2], pa.uint16()),
        "u32": pa.array([0, 2**32 - 1, None, 1, 2], pa.uint32()),
        "u64": pa.array([0, U64_MAX, None, 2**63, 1], pa.uint64()),
        "f32": pa.array([np.float32(0.1), np.float32(-3.4028235e38), None, np.float32(1e-45), -0.0],
                        pa.float32()),
        "f64": pa.array([0.1, -1.7976931348623157e308, None, 5e-324, math.nan], pa.float64()),
        "b": pa.array([True, False, None, True, False]),
        "d32": pa.array([0, -719528, None, 2932896, -1], pa.date32()),
        "ts_s": pa.array([0, -62167219200, None, 253402300799, -1], pa.timestamp("s")),
        "ts_ms": pa.array([0, -1, None, 253402300799999, 1], pa.timestamp("ms", tz="UTC")),
        "ts_us": pa.array([0, -1, None, 253402300799999999, 1], pa.timestamp("us")),
        "ts_ns": pa.array(ts_values, pa.timestamp("ns", tz="America/New_York")),
        "t32s": pa.array([0, 86399, None, 1, 3600], pa.time32("s")),
        "t32ms": pa.array([0, 86399999, None, 1, 3600], pa.time32("ms")),
        "t64us": pa.array([0, 86399999999, None, 1, 3600], pa.time64("us")),
        "t64ns": pa.array([0, 86399999999999, None, 1, 3600], pa.time64("ns")),
        "s": pa.array(["plain", 'q"uote', None, "", "NA"]),
        "ls": pa.array(["a,b", "line\nbreak", None, "cr\rx", "ünï €"], pa.large_string()),
        "bin": pa.array([b"\x00\xff", b"", None, b'"', b"x,y"], pa.binary()),
        "lbin": pa.array([b"raw", b"\r\n", None, b"NaN", b"1"], pa.large_binary()),
        "null": pa.array([None] * 5, pa.null()),
    })


# --------------------------------------------------------------------------
# Round trips.
# --------------------------------------------------------------------------
def test_every_type_round_trips_exactly():
    table = every_type_table()
    data = text_of(table)
    assert_same(read_exact(data, table.schema), table)
    # The project's own reader agrees with pyarrow on the same options.
    assert_same(arrow_bridge.read_csv(io.BytesIO(data), **read_back_options(table.schema)), table)


def test_text_of_each_type_is_what_the_docs_promise():
    table = every_type_table().drop_columns(["ls", "bin", "lbin"])  # one line per row
    rows = text_of(table).decode("utf-8").split("\n")
    header = rows[0].split(",")
    first = dict(zip(header, rows[1].split(",")))
    assert first["i64"] == str(I64_MIN) and first["u64"] == "0" and first["f32"] == "0.1"
    assert first["f64"] == "0.1" and first["b"] == "true" and first["d32"] == "1970-01-01"
    assert first["ts_s"] == "1970-01-01T00:00:00" and first["ts_ms"] == "1970-01-01T00:00:00.000Z"
    assert first["ts_us"] == "1970-01-01T00:00:00.000000" and first["t64ns"] == "00:00:00.000000000"
    assert first["t32s"] == "00:00:00" and first["t32ms"] == "00:00:00.000"
    assert first["t64us"] == "00:00:00.000000"
    assert first["s"] == "plain" and first["null"] == ""
    second = dict(zip(header, rows[2].split(",")))
    assert second["u64"] == str(U64_MAX) and second["f64"] == "-1.7976931348623157e+308"
    assert second["d32"] == "0000-01-01" and second["ts_s"] == "0000-01-01T00:00:00"
    assert second["ts_ns"] == "1969-12-31T23:59:59.999999999Z" and second["s"] == '"q""uote"'
    assert rows[3] == "," * (len(header) - 1)  # the row of nulls: every field empty, unquoted
    fourth = dict(zip(header, rows[4].split(",")))
    assert fourth["d32"] == "9999-12-31" and fourth["f32"] == "1e-45" and fourth["s"] == '""'
    assert fourth["f64"] == "5e-324" and fourth["ts_us"] == "9999-12-31T23:59:59.999999"
    fifth = dict(zip(header, rows[5].split(",")))
    assert fifth["f64"] == "NAN" and fifth["f32"] == "-0.0" and fifth["s"] == '"NA"'


def test_inference_recovers_the_types_it_can():
    """With no options pyarrow infers int64, double, bool, date32, time32[s],
    timestamp[s]/[ns] (UTC too), string and null back; null strings read as ""."""
    table = pa.table({
        "i": pa.array([I64_MIN, None, I64_MAX]),
        "f": pa.array([1.0, None, -math.inf]),
        "whole_floats": pa.array([1.0, 2.0, 1e16]),
        "b": pa.array([True, None, False]),
        "d": pa.array([dt.date(2024, 2, 29), None, dt.date(1, 1, 1)]),
        "t": pa.array([dt.time(23, 59, 59), None, dt.time(0, 0)], pa.time32("s")),
        "ts": pa.array([0, None, -1], pa.timestamp("s")),
        "tsn": pa.array([0, None, 1], pa.timestamp("ns")),
        "tsz": pa.array([0, None, 1], pa.timestamp("s", tz="UTC")),
        "s": pa.array(["x", None, ""]),
        "n": pa.array([None, None, None], pa.null()),
    })
    back = pacsv.read_csv(io.BytesIO(text_of(table)))
    expected = table.set_column(9, "s", pa.array(["x", "", ""]))  # strings_can_be_null=False
    assert_same(back, expected)


def test_quoting_does_not_change_pyarrow_inference():
    """Why string columns need column_types: pyarrow infers from the text
    whether or not it was quoted, so "1" in a string column reads as 1."""
    back = pacsv.read_csv(io.BytesIO(b'x\n"1"\n"2"\n'))
    assert back.schema.field("x").type == pa.int64()
    table = pa.table({"s": ["1", "true", "2024-01-01"]})
    assert_same(read_exact(text_of(table), table.schema), table)


def test_nulls_and_empty_strings_stay_apart():
    table = pa.table({"s": ["", None, "NA", "null", "N/A", "NaN", "x"], "i": [1, None, 3, 4, 5, 6, 7]})
    data = text_of(table)
    assert data.decode().splitlines()[1:4] == ['"",1', ",", '"NA",3']
    assert_same(read_exact(data, table.schema), table)
    # The default reader never makes string nulls: both come back as "".
    assert pacsv.read_csv(io.BytesIO(data)).column("s").to_pylist()[:2] == ["", ""]


def test_na_rep_marks_nulls_and_values_equal_to_it_are_quoted():
    table = pa.table({"s": ["NULL", None, ""], "f": [None, 1.5, 2.5]})
    data = text_of(table, na_rep="NULL")
    assert data.decode().splitlines()[1:] == ['"NULL",NULL', "NULL,1.5", '"",2.5']
    assert_same(read_exact(data, table.schema, na_rep="NULL"), table)


def test_one_column_tables_keep_their_null_rows():
    ints = pa.table({"n": pa.array([1, None, 3], pa.int32())})
    data = text_of(ints)
    assert data == b'n\n1\n""\n3\n'  # no blank line for the default reader to skip
    assert_same(read_exact(data, ints.schema), ints)
    assert pacsv.read_csv(io.BytesIO(data)).column("n").to_pylist() == [1, None, 3]
    strings = pa.table({"s": ["a", None, ""]})
    data = text_of(strings)
    assert data == b's\na\n\n""\n'  # the null is the blank line (pyarrow's own writer agrees)
    assert_same(read_exact(data, strings.schema), strings)
    nulls = pa.table({"n": pa.array([None] * 3, pa.null())})
    assert text_of(nulls) == b'n\n""\n""\n""\n'
    assert_same(pacsv.read_csv(io.BytesIO(text_of(nulls))), nulls)


@pytest.mark.parametrize("dialect", [
    dict(sep=";"), dict(sep="\t"), dict(sep="|", quotechar="'"), dict(sep=" "),
    dict(line_terminator="\r\n"), dict(line_terminator="\r"), dict(header=False), dict(na_rep="NA"),
])
def test_dialects_round_trip(dialect):
    table = every_type_table()
    data = text_of(table, **dialect)
    read_dialect = {k: v for k, v in dialect.items() if k != "line_terminator"}
    assert_same(read_exact(data, table.schema, **read_dialect), table)


def test_empty_and_zero_column_tables():
    empty = every_type_table().slice(0, 0)
    data = text_of(empty)
    assert data.count(b"\n") == 1 and data.startswith(b"i8,i16")
    assert_same(read_exact(data, empty.schema), empty)
    assert text_of(empty, header=False) == b""
    assert text_of(pa.table({})) == b""  # like pyarrow.csv.write_csv: nothing to write
    assert text_of(pa.table({"a": [1, 2]}).drop_columns(["a"])) == b""


def test_header_names_are_quoted_when_needed():
    table = pa.table({"a,b": [1], 'q"': [2], "": [3], "ü": [4]})
    data = text_of(table)
    assert data.splitlines()[0] == '"a,b","q""","",ü'.encode()
    assert pacsv.read_csv(io.BytesIO(data)).column_names == table.column_names


@pytest.mark.parametrize("header", [True, False], ids=["header", "no-header"])
@pytest.mark.parametrize("first", ["\ufeff", "\ufeffa", "\ufeff\ufeff"])
def test_a_first_field_starting_with_u_feff_is_quoted(tmp_path, engine_device, header, first):
    """Unquoted, the file would start with the bytes of a UTF-8 BOM, which every
    reader strips: the column '\\ufeff' read back as no column at all, '\\ufeffa'
    as 'a' (fuzz corpus case ``writer-bom-char-name``). Only the file's first
    field needs it: U+FEFF anywhere else is text."""
    table = pa.table({first: [first, "\ufeff"], "\ufeffc": ["\ufeffd", "e"]})
    data = text_of(table, header=header)
    assert data.startswith(f'"{first}"'.encode()) and data.count(b'"') == 2
    path = tmp_path / "device.csv"
    write_csv(table, path, device=engine_device, header=header, batch_rows=1)
    assert path.read_bytes() == data
    options = read_back_options(table.schema, header=header)
    assert_same(pacsv.read_csv(io.BytesIO(data), **options), table)
    assert_same(arrow_bridge.read_csv(io.BytesIO(data), **options), table)


# --------------------------------------------------------------------------
# Numbers: bit-exact, shortest.
# --------------------------------------------------------------------------
def _float_lines(values: np.ndarray) -> list[str]:
    table = pa.table({"x": pa.array(values), "k": pa.array(np.zeros(len(values), np.int8))})
    return [line.rsplit(",", 1)[0] for line in text_of(table).decode().splitlines()[1:]]


def test_doubles_are_spelled_like_repr_and_read_back_bit_exact():
    rng = np.random.default_rng(7)
    values = rng.integers(0, 2**64, 100_000, dtype=np.uint64).view(np.float64)
    values = values[np.isfinite(values)]
    edges = [0.0, -0.0, 5e-324, -5e-324, 1e-323, 2.2250738585072009e-308, 2.2250738585072014e-308,
             1.7976931348623157e308, 1e16, 9007199254740993.0, 0.1, 1e-4, 1e-5, 123456.789, 1e22, 1e23]
    edges += [2.0**e for e in range(-1074, 1024, 7)] + [float(f"1e{e}") for e in range(-323, 309, 5)]
    values = np.concatenate([values, np.array(edges), -np.array(edges)])
    assert _float_lines(values) == [repr(v) for v in values.tolist()]
    table = pa.table({"x": pa.array(values)})
    assert_same(read_exact(text_of(table), table.schema), table)
    assert_same(pacsv.read_csv(io.BytesIO(text_of(table))), table)  # inference: double, same bits


@SETTINGS
@given(st.lists(st.floats(allow_nan=False), min_size=1, max_size=50))
def test_any_double_is_spelled_like_repr(values):
    assert _float_lines(np.array(values, dtype=np.float64)) == [repr(v) for v in values]


def test_float32_reads_back_bit_exact_and_shortest():
    rng = np.random.default_rng(11)
    bits = rng.integers(0, 2**32, 100_000, dtype=np.uint64).astype(np.uint32)
    edges = np.array([0x7F7FFFFF, 0x00800000, 0x80000001], np.uint32)  # max, min normal, -min subnormal
    bits = np.concatenate([bits, np.arange(0, 5000, dtype=np.uint32), edges])
    values = bits.view(np.float32)
    values = values[np.isfinite(values)]
    table = pa.table({"x": pa.array(values, pa.float32())})
    assert_same(read_exact(text_of(table), table.schema), table)
    sample = np.concatenate([values[:3000], values[-5003:]])  # random, subnormals, extremes
    for v, line in zip(sample, _float_lines(sample)):
        # Shortest and closest: the same decimal as numpy's Dragon4 in "unique" mode.
        assert Decimal(line) == Decimal(np.format_float_scientific(v, unique=True)), (v, line)


def test_nan_inf_and_signed_zero():
    values = np.array([math.nan, -math.nan, math.inf, -math.inf, 0.0, -0.0])
    assert _float_lines(values) == ["NAN", "-NAN", "inf", "-inf", "0.0", "-0.0"]
    for t in (pa.float64(), pa.float32()):
        table = pa.table({"x": pa.array(values, t)})
        assert_same(read_exact(text_of(table), table.schema), table)
    # "NAN" is not a null spelling, so inference keeps the column a double.
    assert pacsv.read_csv(io.BytesIO(text_of(pa.table({"x": [math.nan]})))).column("x").null_count == 0


@SETTINGS
@given(st.lists(st.integers(I64_MIN, I64_MAX), min_size=1, max_size=40),
       st.lists(st.integers(0, U64_MAX), min_size=1, max_size=40))
def test_integers_round_trip(signed, unsigned):
    table = pa.table({"i": pa.array(signed, pa.int64())})
    assert_same(pacsv.read_csv(io.BytesIO(text_of(table))), table)
    table = pa.table({"u": pa.array(unsigned, pa.uint64())})
    assert_same(read_exact(text_of(table), table.schema), table)


# --------------------------------------------------------------------------
# Strings and binary.
# --------------------------------------------------------------------------
_TRICKY = st.sampled_from([",", '"', "\n", "\r", "\r\n", "", "NA", "null", "NaN", " ", "é", "😀", ";", "\t",
                           "x"])


@SETTINGS
@given(st.lists(st.one_of(st.none(), st.text(), st.lists(_TRICKY, max_size=6).map("".join)),
                min_size=1, max_size=30),
       st.sampled_from([",", ";", "\t", "|"]))
def test_strings_round_trip(values, sep):
    table = pa.table({"s": pa.array(values, pa.string()), "n": pa.array(range(len(values)))})
    assert_same(read_exact(text_of(table, sep=sep), table.schema, sep=sep), table)


@SETTINGS
@given(st.lists(st.one_of(st.none(), st.binary(max_size=12)), min_size=1, max_size=30))
def test_binary_round_trips_as_raw_bytes(values):
    table = pa.table({"b": pa.array(values, pa.binary()), "n": pa.array(range(len(values)))})
    assert_same(read_exact(text_of(table), table.schema), table)


def test_dictionary_view_date64_and_chunked_columns():
    table = pa.table({
        "dict": pa.array(["a", "b", None, "a"]).dictionary_encode(),
        "view": pa.array(["x", None, "y,z", ""], pa.string_view()),
        "d64": pa.array([0, 86_400_000, None, -86_400_000], pa.date64()),
        "chunked": pa.chunked_array([[1, 2], [None, 4]]),
        "dicts": pa.chunked_array([pa.array(["p", "q"]).dictionary_encode(),
                                   pa.array([None, "r"]).dictionary_encode()]),  # two dictionaries
    })
    back = read_exact(text_of(table), table.schema)
    assert back.column("dict").to_pylist() == ["a", "b", None, "a"]
    assert back.column("view").to_pylist() == ["x", None, "y,z", ""]
    assert back.column("d64").type == pa.date64() and back.column("d64").equals(table.column("d64"))
    assert back.column("chunked").to_pylist() == [1, 2, None, 4]
    assert back.column("dicts").to_pylist() == ["p", "q", None, "r"]
    assert back.column("dicts").type == pa.string()  # dictionaries come back as their values


def test_pandas_and_record_batch_inputs():
    df = pd.DataFrame({"a": [1, 2], "b": ["x", None]}, index=[10, 20])
    assert text_of(df) == b"a,b\n1,x\n2,\n"
    assert text_of(pa.record_batch({"a": [1.5]})) == b"a\n1.5\n"


# --------------------------------------------------------------------------
# Batches, host vs device, OUT_OF_SPACE.
# --------------------------------------------------------------------------
def mixed_table(n: int, seed: int = 3) -> pa.Table:
    rng = np.random.default_rng(seed)
    valid = rng.random(n) > 0.1
    words = np.array(["alpha", 'say "hi"', "a,b", "multi\nline", "", "ünicode", "NA", "42"])
    return pa.table({
        "i": pa.array(rng.integers(-(2**62), 2**62, n), mask=~valid),
        "f": pa.array(rng.standard_normal(n) * 10.0 ** rng.integers(-30, 30, n)),
        "f32": pa.array(rng.standard_normal(n).astype(np.float32), mask=~valid),
        "b": pa.array(rng.random(n) > 0.5, mask=~valid),
        "ts": pa.array(rng.integers(-(2**61), 2**61, n), pa.timestamp("ns", tz="UTC")),
        "d": pa.array(rng.integers(-700_000, 2_900_000, n).astype(np.int32), pa.date32()),
        "s": pa.array(words[rng.integers(0, len(words), n)], mask=~valid),
    })


def test_many_batches_and_chunks_give_the_same_text():
    table = mixed_table(3000)
    whole = text_of(table)
    assert text_of(table, batch_rows=7) == whole
    assert text_of(table, batch_rows=1, n_threads=1) == whole
    chunked = pa.Table.from_batches(table.to_batches(max_chunksize=13))  # merged into bigger batches
    assert text_of(chunked, batch_rows=500) == whole
    sliced = mixed_table(3100).slice(37, 3000)  # non-zero array offsets (bitmaps start mid-byte)
    assert_same(read_exact(text_of(sliced, batch_rows=333), sliced.schema), sliced)
    assert_same(read_exact(whole, table.schema), table)


def test_host_and_device_write_identical_files(tmp_path, engine_device):
    table = mixed_table(5000)
    host = tmp_path / "host.csv"
    dev = tmp_path / "device.csv"
    dev.write_bytes(b"x" * 2_000_000)  # an older, longer file: must end up truncated
    r_host = write_csv(table, host, batch_rows=700)
    r_dev = write_csv(table, dev, device=engine_device, batch_rows=700)
    assert dev.read_bytes() == host.read_bytes()
    assert r_dev.device and not r_host.device
    assert r_dev.bytes_written == r_host.bytes_written == os.path.getsize(dev)
    assert r_dev.batches == r_host.batches == 8
    assert r_dev.counters == r_host.counters
    assert r_dev.counters["rows"] == 5000 and r_dev.counters["fields"] == 5000 * table.num_columns
    assert_same(pacsv.read_csv(dev, **read_back_options(table.schema)), table)


@pytest.mark.parametrize("page_size", [1, 1000, 65536])
def test_device_pages_land_contiguously_for_any_page_size(tmp_path, make_engine_device, page_size):
    table = mixed_table(400, seed=page_size)
    want = text_of(table)
    device = make_engine_device(page_size=page_size, cores=1, queue_depth=4)
    for batch_rows in (1, 64, 1000):
        path = tmp_path / f"p{page_size}_{batch_rows}.csv"
        write_csv(table, path, device=device, batch_rows=batch_rows)
        assert path.read_bytes() == want


def test_device_small_outputs(tmp_path, engine_device):
    for table in (pa.table({"a": pa.array([], pa.int64())}), pa.table({}), pa.table({"s": ["x"]})):
        for header in (True, False):
            path = tmp_path / "small.csv"
            write_csv(table, path, device=engine_device, header=header)
            assert path.read_bytes() == text_of(table, header=header)


def test_out_of_space_is_retried_with_the_size_asked_for(tmp_path, engine_device):
    table = pa.table({"q": ['"' * 500] * 200, "n": list(range(200))})  # quotes double: over the estimate
    want = b'q,n\n' + b"".join(b'"' + b'"' * 1000 + b'",' + str(i).encode() + b"\n" for i in range(200))
    sink = io.BytesIO()
    r_host = write_csv(table, sink, batch_rows=50)
    assert sink.getvalue() == want and r_host.retries == 4
    r_dev = write_csv(table, tmp_path / "q.csv", device=engine_device, batch_rows=50)
    assert (tmp_path / "q.csv").read_bytes() == want and r_dev.retries == 4
    assert r_dev.counters == r_host.counters  # the failed attempts left no trace


def test_every_batch_retries_when_the_estimate_is_tiny(tmp_path, engine_device, monkeypatch):
    table = mixed_table(500)
    want = text_of(table, batch_rows=100)
    real_encode = writer_module._Encoder.encode

    def tiny_estimate(self, batch, flags):
        buf, _ = real_encode(self, batch, flags)
        return buf, 3

    monkeypatch.setattr(writer_module._Encoder, "encode", tiny_estimate)
    sink = io.BytesIO()
    assert write_csv(table, sink, batch_rows=100).retries == 5 and sink.getvalue() == want
    assert write_csv(table, tmp_path / "t.csv", device=engine_device, batch_rows=100).retries == 5
    assert (tmp_path / "t.csv").read_bytes() == want


# --------------------------------------------------------------------------
# Kernel contract.
# --------------------------------------------------------------------------
def _one_batch(table: pa.Table, flags: int = fk.F_HEADER_LINE) -> tuple[np.ndarray, int]:
    dialect = writer_module._dialect(",", '"', "", "\n", True)
    encoder = writer_module._Encoder(table.schema, writer_module._plans(table.schema, ""), dialect)
    return encoder.encode(encoder.prepare(table.to_batches()[0]), flags)


def test_kernel_reports_size_needed_and_never_writes_past_capacity():
    table = mixed_table(50)
    buf, _ = _one_batch(table)
    want = text_of(table)
    for cap in (0, 1, 17, len(want) - 1):
        out = np.full(cap + 64, 0xAB, dtype=np.uint8)
        counters = empty_counters()
        status, end, _ = fk.format_batch(buf, out[:cap], 0, counters)
        assert status == OUT_OF_SPACE and end == len(want)
        assert (out[cap:] == 0xAB).all() and not counters.any()
    out = np.empty(len(want), dtype=np.uint8)
    counters = empty_counters()
    assert fk.format_batch(buf, out, 0, counters)[:2] == (OK, len(want))
    assert out.tobytes() == want and counters[1] == 50


def test_kernel_rejects_malformed_batches():
    buf, _ = _one_batch(mixed_table(20))
    out = np.empty(1 << 16, dtype=np.uint8)
    rng = np.random.default_rng(0)
    words = buf.view(np.int64)
    for slot in range(len(words[:fk.BATCH.size + 7 * fk.COLUMN.size])):
        bad = buf.copy()
        bad.view(np.int64)[slot] = rng.choice([-1, 1 << 40, len(buf) + 8, 255])
        status, _, _ = fk.format_batch(bad, out, 0, empty_counters())
        assert status in (OK, BAD_VALUE, OUT_OF_SPACE)  # never a crash or a read outside the batch
    assert fk.format_batch(buf[:-8], out, 0, empty_counters())[0] == BAD_VALUE
    truncated = buf.copy()
    truncated.view(np.int64)[fk.BATCH.magic] = 0
    assert fk.format_batch(truncated, out, 0, empty_counters()) == (BAD_VALUE, 0, -1)


def test_device_app_rejects_a_malformed_batch(tmp_path, engine_device):
    engine = engine_device.engine
    path = tmp_path / "junk.csv"
    stream = engine.stream_create(str(path), writable=True)
    inst = engine.minit(csv_format.address, state_size=fk.STATE_HEADER + 4096, streams=[stream])
    try:
        junk = np.zeros(256, dtype=np.uint8)
        done = engine.wait(engine.submit_mwrite(inst, stream, 0, junk, [np.empty(64, np.uint8)]))
        assert done.status == ndp_core.Status.BAD_INPUT and done.error_offset == -1
    finally:
        engine.mdeinit(inst)
        engine.stream_close(stream)
    assert path.read_bytes() == b""


# --------------------------------------------------------------------------
# Errors.
# --------------------------------------------------------------------------
@pytest.mark.parametrize("column, row", [
    (pa.array([0, 2_932_897], pa.date32()), 1),  # 10000-01-01
    (pa.array([0, 0, -719_529], pa.date32()), 2),  # -0001-12-31
    (pa.array([253_402_300_800], pa.timestamp("s")), 0),
    (pa.array([0, 86_400_000], pa.time32("ms")), 1),
])
def test_values_csv_cannot_hold_are_clear_errors(tmp_path, engine_device, column, row):
    table = pa.table({"ok": pa.array(range(len(column))), "bad": column})
    for dev in (None, engine_device):
        path = tmp_path / "bad.csv"
        with pytest.raises(ValueError, match=re.escape(f"column 'bad' ({column.type}) row {row}:")):
            write_csv(table, path, device=dev, batch_rows=1)
        assert not path.exists()  # no half-written file left


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(sep=",,"), ValueError, "one ASCII character"),
    (dict(sep="."), ValueError, "inside numbers"),
    (dict(sep="a"), ValueError, "inside numbers"),
    (dict(quotechar=","), ValueError, "must differ"),
    (dict(sep="\n"), ValueError, "inside numbers"),
    (dict(line_terminator="\n\n"), ValueError, "line_terminator"),
    (dict(na_rep="0"), ValueError, "reads back as a value"),
    (dict(na_rep="a,b"), ValueError, "delimiter"),
    (dict(na_rep=None), TypeError, "na_rep"),
    (dict(na_rep="\ufeffNA", header=False), ValueError, "U\\+FEFF"),
    (dict(header="yes"), TypeError, "header"),
    (dict(batch_rows=0), ValueError, "batch_rows"),
    (dict(n_threads=0), ValueError, "n_threads"),
    (dict(device=object()), TypeError, "ndp_core.Engine"),
])
def test_bad_arguments_are_clear_errors(tmp_path, kwargs, error, match):
    path = tmp_path / "never.csv"
    with pytest.raises(error, match=match):
        write_csv(pa.table({"a": [1]}), path, **kwargs)
    assert not path.exists()


def test_unsupported_inputs_are_clear_errors(tmp_path, engine_device):
    path = tmp_path / "never.csv"
    with pytest.raises(TypeError, match="column 'l' of type list<item: int64>"):
        write_csv(pa.table({"l": [[1]]}), path)
    with pytest.raises(TypeError, match="decimal"):
        write_csv(pa.table({"d": pa.array([1], pa.decimal128(5, 2))}), path)
    with pytest.raises(TypeError, match="pyarrow.Table"):
        write_csv([1, 2], path)
    with pytest.raises(TypeError, match="file object"):
        write_csv(pa.table({"a": [1]}), io.BytesIO(), device=engine_device)
    assert not path.exists()


def test_result_reports_the_work():
    result = write_csv(mixed_table(100), io.BytesIO(), batch_rows=40)
    assert isinstance(result, CsvWriteResult) and result.path is None
    assert (result.rows, result.columns, result.batches, result.retries) == (100, 7, 3, 0)
    assert result.counters["rows"] == 100 and result.counters["batches"] == 3
    assert result.counters["floats"] + result.counters["ints"] + result.counters["nulls"] > 0
