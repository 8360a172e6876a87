"""The reader's CSV app as SSDlets: pages -> typed columns (the reader's own kernels and
rules), then a DNF row filter; the same Table as arrow_bridge.read_csv (with filters=),
whichever side runs each program and however the file is cut into packets."""
import dataclasses
import datetime
import itertools
import math
import random

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import arrow_bridge
from arrow_bridge.csv_ssdlets import (MAX_RECORD_BYTES, connect_columns, csv_parser, group_aggregate,
                                      parse_in_parallel, prefilter_keys, reader_error, row_filter, scan_filter)
from arrow_bridge.filters import FilterError
from device_emulator import ComputationalSSD
from ndp_core.ssdlets import Application, SSDletError

SIDES = list(itertools.product(["device", "host"], repeat=2))
#: The small files' columns: one schema, so that their tests share compiled programs
#: (each schema, filter shape and key set compiles once, in seconds).
KV = pa.schema({"k": pa.string(), "v": pa.int64()})
FILTERS = [[("id", ">", 100), ("day", "<=", datetime.date(2020, 1, 10)), ("note", "contains", "a")],
           [("price", "is null"), ("id", "in", [7, 14, 21, 10**12])],
           [("note", "starts with", "two"), ("when", ">=", datetime.datetime(2021, 6, 1, 12))],
           [("name", "not in", ["n1", "n2", None]), ("price", "<", -2.5), ("count", "!=", 3)]]


@pytest.fixture(scope="module")
def ssd():
    with ComputationalSSD("modern-gen4", workers=2) as device:
        yield device


@pytest.fixture(scope="module")
def messy_csv(tmp_path_factory):
    """Every port type, nulls in each, quoted fields with line feeds, delimiters and doubled
    quotes, CRLF and LF, records longer than a page, no line end at the end."""
    rng = random.Random(7)
    rows = []
    for i in range(4000):
        note = rng.choice(["plain", '"a, b"', '"two\nlines"', '"say ""hi"""', '"' + "y" * rng.randrange(9000) + '"'])
        price = rng.choice(["", "NA", f"{rng.uniform(-1e6, 1e6):.6g}", f"{rng.uniform(-9, 9):.17e}"])
        name = rng.choice(["n1", "n2", "", f"name {i}", "ünï"])
        day = "" if i % 13 == 3 else f"2020-01-{1 + i % 28:02d}"
        when = f"2021-{1 + i % 12:02d}-0{1 + i % 9} {i % 24:02d}:{i % 60:02d}:05"
        count = rng.choice(["", str(rng.randrange(-5, 5)), str(rng.randrange(-2**40, 2**40))])
        rows.append(f"{i},{note},{price},{name},{day},{when},{count}" + rng.choice(["\n", "\r\n"]))
    path = tmp_path_factory.mktemp("csv") / "messy.csv"
    path.write_text("id,note,price,name,day,when,count\n" + "".join(rows).rstrip("\r\n"), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def parse(messy_csv):
    return csv_parser(messy_csv)


@pytest.fixture(scope="module")
def keep(messy_csv):
    """FILTERS as an SSDlet (compiled once: every placement runs the same program)."""
    return row_filter(FILTERS, arrow_bridge.read_csv(messy_csv).schema)


def _run(ssd, path, parse, sides, pages_per_packet, *programs):
    """scan -> parse -> programs..., each on its side; the last program's Table."""
    app = Application(ssd, pages_per_packet=pages_per_packet, queue_depth=2)
    last = app.add(parse, on=sides[0])
    app.scan(last.pages, path)
    for program, side in zip(programs, sides[1:]):
        node = app.add(program, on=side)
        connect_columns(app, last, node)
        last = node
    for port in last.program.outputs:
        app.collect(last.port(port))
    return last.program.table(app.run(), last)


def test_the_parser_takes_the_readers_types_and_names(messy_csv, parse):
    assert parse.columns == {name: name for name in ("id", "note", "price", "name", "day", "when", "count")}
    assert [parse.outputs[port].type.arrow for port in parse.columns] == arrow_bridge.read_csv(messy_csv).schema.types


@pytest.mark.parametrize("side", ["device", "host"])
@pytest.mark.parametrize("pages_per_packet", [1, 64])
def test_the_parser_gives_read_csvs_table(ssd, messy_csv, parse, side, pages_per_packet):
    table = _run(ssd, messy_csv, parse, (side, None), pages_per_packet)
    expected = arrow_bridge.read_csv(messy_csv)
    assert table.equals(expected)
    assert table.equals(pacsv.read_csv(messy_csv))  # the referee agrees too
    assert table["price"].null_count > 0 and table["day"].null_count > 0


@pytest.mark.parametrize("sides", SIDES)
def test_the_filter_keeps_what_read_csv_filters_keep(ssd, messy_csv, parse, keep, sides):
    table = _run(ssd, messy_csv, parse, sides, 16, keep)
    expected = arrow_bridge.read_csv(messy_csv, filters=FILTERS)
    assert 0 < expected.num_rows < 4000
    assert table.equals(expected)
    assert table.equals(pacsv.read_csv(messy_csv).filter(arrow_bridge.filters.RowFilter(FILTERS).expression))


def test_a_value_past_the_first_blocks_type_stops_the_run(ssd, tmp_path):
    path = tmp_path / "widens.csv"
    path.write_text("k,v\n" + "a,1\n" * 5000 + "b,1.5\n")
    program = csv_parser(path, block_size=4096)  # the first block says int64
    assert program.schema == KV
    with pytest.raises(SSDletError, match="csv_parser"):
        _run(ssd, path, program, ("host", None), 4)
    widened = csv_parser(path, dtype={"v": "float64"})  # as the reader would, given the type
    assert _run(ssd, path, widened, ("device", None), 4).equals(arrow_bridge.read_csv(path))


BAD_INPUT = {  # after 45 KB of records, so each is some pages in; "value": a record longer than a page
    "value": "k,v\n" + "abcdefgh,12345\n" * 3000 + "x" * 9000 + ",12z\nb,2\n",
    "field count": "k,v\n" + "abcdefgh,12345\n" * 3000 + "xx,1,2\nb,2\n",
    "unterminated quote": "k,v\n" + "abcdefgh,12345\n" * 3000 + 'xx,1\n"b,2\n',
}


@pytest.mark.parametrize("bad", BAD_INPUT)
def test_bad_input_is_located_as_the_reader_locates_it(ssd, tmp_path, bad):
    path = tmp_path / "bad.csv"
    path.write_text(BAD_INPUT[bad])
    with pytest.raises(arrow_bridge.CsvParseError) as expected:
        arrow_bridge.read_csv(path, dtype=dict(zip(KV.names, KV.types)))
    for side in ("device", "host"):
        with pytest.raises(SSDletError, match=f"bad input, byte offset {expected.value.byte_offset} of") as found:
            _run(ssd, path, csv_parser(KV), (side, None), 1)
        assert (found.value.byte_offset, found.value.path) == (expected.value.byte_offset, str(path))
    # A filtered scan that parses every record raises the reader's error (the first block,
    # which types the columns, ends before the bad record).
    with pytest.raises(arrow_bridge.CsvParseError) as raised:
        scan_filter(path, [("k", "=", "hit")], ssd, plan="parse_all", block_size=4096)
    assert str(raised.value) == str(expected.value)


def test_the_first_bad_input_in_file_order_is_the_one_located(ssd, tmp_path):
    """A bad value before a record the tokenizer refuses, in one packet: the value first,
    as the reader reports it; an unterminated quote carried past MAX_RECORD_BYTES has no
    offset, and the reader's error still comes out of a filtered scan."""
    path = tmp_path / "two.csv"
    path.write_text("k,v\na,x\nb,1,2\n")
    with pytest.raises(SSDletError, match="bad input, byte offset 6 of"):
        _run(ssd, path, csv_parser(KV), ("host", None), 1)
    path.write_text('k,v\na,1\n"b,2\n' + "c,3\n" * 20_000)
    with pytest.raises(SSDletError, match="MAX_RECORD_BYTES|exception") as found:
        _run(ssd, path, csv_parser(KV), ("device", None), 1)
    assert found.value.byte_offset is None
    with pytest.raises(arrow_bridge.CsvParseError, match="unterminated quoted field .byte offset 8."):
        scan_filter(path, [("k", "=", "hit")], ssd, plan="parse_all", dtype={"v": "int64"})


@pytest.mark.parametrize("line_end", ["\n", "\r", "\r\n"])
def test_records_of_a_byte_a_field_fit_the_outputs(ssd, tmp_path, line_end):
    """The parse's outputs hold a row per ncols input bytes (Out(input_per_row=)): the
    shortest records, an unterminated last one too, fit them."""
    path = tmp_path / "short.csv"
    path.write_text(f"k,v{line_end}" + f",{line_end}" * 300_000 + ",", newline="")
    expected = arrow_bridge.read_csv(path, dtype=dict(zip(KV.names, KV.types)))
    for side, pages_per_packet in (("device", 1), ("host", 64)):  # 64 pages: more rows than the carry's room
        assert _run(ssd, path, csv_parser(KV), (side, None), pages_per_packet).equals(expected)
    assert expected.num_rows == 300_001


_KEYS = st.sampled_from(["a", "bb", '"q,x"', '"d""q"', '"two\nlines"', "", "ünï", "x" * 5000])
_RECORD = st.tuples(_KEYS, st.one_of(st.integers(-999, 999).map(str), st.just("")),
                    st.sampled_from([None] * 12 + ["value", "utf8", "fields"]),
                    st.sampled_from(["\n", "\r\n", "\r", "\n\n"]))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=st.lists(_RECORD, min_size=1, max_size=400), bom=st.booleans(), blank_first=st.booleans(),
       unterminated=st.booleans(), open_quote=st.booleans(), pages=st.sampled_from([1, 3]))
def test_any_bad_input_is_located_where_the_reader_locates_it(ssd, tmp_path, records, bom, blank_first,
                                                               unterminated, open_quote, pages):
    """Random files of quoted, multi-line and long fields, mixed line ends, a BOM, bad values,
    text that is not UTF-8, field counts, a last record with an open quote: the graph's
    Table equals read_csv's, or both stop at the same byte offset."""
    bad = {"value": lambda k, v: f"{k},1x".encode(), "utf8": lambda k, v: b"\xff" + f"{k},{v}".encode(),
           "fields": lambda k, v: f"{k},{v},9".encode(), None: lambda k, v: f"{k},{v}".encode()}
    body = b"".join(bad[kind](k, v) + end.encode() for k, v, kind, end in records)
    if open_quote:
        body += b'z,"5'
    data = b"\xef\xbb\xbf" * bom + b"\n" * blank_first + b"k,v\n" + (body.rstrip(b"\r\n") if unterminated else body)
    path = tmp_path / "random.csv"
    path.write_bytes(data)
    try:
        expected, where = arrow_bridge.read_csv(path, dtype=dict(zip(KV.names, KV.types))), None
    except arrow_bridge.CsvParseError as error:
        expected, where = None, error.byte_offset
    try:
        table = _run(ssd, path, csv_parser(KV), ("host", None), pages)
    except SSDletError as error:
        assert where is not None and error.byte_offset == where
    else:
        assert expected is not None and table.equals(expected)


def test_a_record_longer_than_the_carry_stops_the_run(ssd, tmp_path):
    path = tmp_path / "long.csv"
    path.write_text("k,v\n" + "x" * (MAX_RECORD_BYTES + 40_000) + ",1\nshort,2\n")
    with pytest.raises(SSDletError):
        _run(ssd, path, csv_parser(KV), ("device", None), 1)


def test_options_that_choose_rows_or_columns_are_refused(messy_csv):
    for options in ({"usecols": ["id"]}, {"nrows": 5}, {"skiprows": 2}, {"on_bad_lines": "skip"}):
        with pytest.raises(ValueError, match="csv_parser does not take"):
            csv_parser(messy_csv, **options)
    with pytest.raises(TypeError, match="'b' is bool"):
        csv_parser(pa.schema({"b": pa.bool_()}))


def test_the_parser_follows_the_dialect_and_null_spellings(ssd, tmp_path):
    path = tmp_path / "semi.csv"
    path.write_text("a;b\n1;'x;y'\n-;'z'\n3;''\n")
    options = {"sep": ";", "quotechar": "'", "na_values": ["-"], "keep_default_na": False}
    table = _run(ssd, path, csv_parser(path, **options), ("device", None), 1)
    assert table.equals(arrow_bridge.read_csv(path, **options))
    assert table.to_pydict() == {"a": [1, None, 3], "b": ["x;y", "z", ""]}


def test_filters_it_cannot_compile_say_why():
    schema = pa.schema({"n": pa.int64(), "d": pa.date32(), "s": pa.string()})
    with pytest.raises(FilterError, match="not an Expression"):
        row_filter(pc.field("n") > 1, schema)
    with pytest.raises(FilterError, match="'d' is date32"):
        row_filter([("d", "<", "2020-01-01")], schema)
    with pytest.raises(FilterError, match="for string columns"):
        row_filter([("n", "starts with", "1")], schema)
    with pytest.raises(FilterError, match="does not have"):
        row_filter([("x", "=", 1)], schema)


def test_a_column_named_like_a_node_attribute_is_still_a_port(ssd, tmp_path):
    path = tmp_path / "names.csv"
    path.write_text("name,side,my col\nx,1,2\n")
    program = csv_parser(path)
    assert program.columns == {"name": "name", "side": "side", "column_2": "my col"}
    assert _run(ssd, path, program, ("host", None), 1).equals(arrow_bridge.read_csv(path))


RARE = [("name", "=", "name 17"), ("id", ">", 3)]
EVERY_DAY = [("day", "in", [datetime.date(2020, 1, d) for d in range(1, 29)])]


@pytest.fixture(scope="module")
def biscuit():
    with ComputationalSSD("biscuit-pm", workers=2) as device:
        yield device


KEYED = [[("name", "in", ["n1", "ünï"]), ("price", "is not null")],
         [("day", "=", datetime.date(2020, 1, 5)), ("note", "contains", "a")]]


@pytest.mark.parametrize("plan", ["prefilter", "parse_all"])
def test_the_matcher_in_front_gives_read_csvs_filtered_table(biscuit, messy_csv, plan):
    table, result, decision = scan_filter(messy_csv, KEYED, biscuit, plan=plan)
    assert decision.keys == ("n1", "ünï", "2020-01-05") and decision.sample_bytes == 0  # a forced plan: no sample
    assert table.equals(arrow_bridge.read_csv(messy_csv, filters=KEYED))
    nodes = [w.program for w in result.work]
    assert nodes == (["records_containing", "csv_parser", "row_filter"] if plan == "prefilter"
                     else ["csv_parser", "row_filter"])


def test_the_sample_decides_whether_the_matcher_pays(ssd, biscuit, messy_csv):
    table, result, rare = scan_filter(messy_csv, RARE, biscuit)  # its matcher is a fixed-function unit
    assert rare.prefilter and rare.selectivity < 0.01 and result.work[0].program == "records_containing"
    assert table.equals(arrow_bridge.read_csv(messy_csv, filters=RARE))
    table, result, common = scan_filter(messy_csv, EVERY_DAY, ssd)  # modern-gen4's cores would search
    assert not common.prefilter and common.selectivity > 0.9 and result.work[0].program == "csv_parser"
    assert table.equals(arrow_bridge.read_csv(messy_csv, filters=EVERY_DAY))


def test_only_filters_whose_records_must_hold_a_text_have_keys():
    schema = pa.schema({"n": pa.int64(), "d": pa.date32(), "s": pa.string()})
    assert prefilter_keys([("s", "in", ["a", "b"]), ("n", "<", 3)], schema) == ["a", "b"]
    assert prefilter_keys([("n", "=", 3)], schema) is None  # 3 may be written 03 or 3.0e0
    assert prefilter_keys([("s", "in", ["a", None])], schema) is None  # a null holds no text
    assert prefilter_keys([("s", "=", 'say "hi"')], schema) is None  # written with doubled quotes
    assert prefilter_keys([("d", ">=", datetime.date(2020, 1, 1))], schema) is None


AGGREGATES = [("price", "sum"), ("price", "mean"), ("price", "min"), ("price", "max"), ("count", "sum"),
              ("count", "mean"), ("count", "max"), ("day", "min"), ("when", "max"), ("note", "count"), ("id", "count")]


@pytest.mark.parametrize("sides", [("device", "device"), ("host", "host"), ("device", "host")])
def test_aggregates_in_a_graph_equal_aggregate_csv(ssd, messy_csv, parse, sides):
    program = group_aggregate(AGGREGATES, parse.schema, group_by=["name", "day"])
    table = _run(ssd, messy_csv, parse, sides, 8, program)
    expected = arrow_bridge.aggregate_csv(messy_csv, AGGREGATES, group_by=["name", "day"])
    assert table.equals(expected)
    assert table.num_rows > 100 and table["name"].null_count == 0 and table["day"].null_count > 0


def test_float_sums_are_exact_with_specials_and_int_sums_past_int64(ssd, tmp_path):
    """Values whose running double sum loses bits, NaN and infinities in some groups, and
    integer sums past int64 (aggregate_csv's sum then does not fit: the same error)."""
    rng = random.Random(3)
    specials = {"a": [], "b": ["nan"], "c": ["inf"], "d": ["inf", "-inf"], "e": ["-inf"]}
    rows = [f"{k},{v},{rng.randrange(-2**62, 2**62)}" for k in specials
            for v in [f"{rng.choice([1e300, -1e300, 1e-300, 3.0, -0.0])}" for _ in range(300)] + specials[k]]
    rng.shuffle(rows)
    path = tmp_path / "sums.csv"
    path.write_text("k,x,n\n" + "\n".join(rows) + "\n")
    program = csv_parser(path)
    aggregations = [("x", "sum"), ("x", "mean"), ("x", "min"), ("x", "max")]
    table = _run(ssd, path, program, ("device", "device"), 1,
                 group_aggregate(aggregations, program.schema, group_by=["k"]))
    assert _bits(table).equals(_bits(arrow_bridge.aggregate_csv(path, aggregations, group_by=["k"])))
    assert table.to_pydict()["x_sum"][0] == float("inf") and math.isnan(table.to_pydict()["x_sum"][1])
    with pytest.raises(OverflowError, match="n_sum does not fit"):
        arrow_bridge.aggregate_csv(path, [("n", "sum")])
    with pytest.raises(OverflowError, match="n_sum does not fit"):
        _run(ssd, path, program, ("host", "device"), 1, group_aggregate([("n", "sum")], program.schema))


def _bits(table):
    """``table`` with doubles as their bit patterns (Table.equals takes no NaN as equal)."""
    return pa.table([c.combine_chunks().view(pa.int64()) if c.type == pa.float64() else c for c in table.columns],
                    names=table.column_names)


def test_aggregates_it_does_not_take_say_why():
    schema = pa.schema({"s": pa.string(), "f": pa.float64(), "u": pa.uint64()})
    with pytest.raises(TypeError, match="cannot sum 's'"):
        group_aggregate([("s", "sum")], schema)
    with pytest.raises(TypeError, match="key 'f' is double"):
        group_aggregate([("s", "count")], schema, group_by=["f"])
    with pytest.raises(TypeError, match="min/max of 's'"):
        group_aggregate([("s", "max")], schema)
    with pytest.raises(TypeError, match="cannot sum 'u'"):
        group_aggregate([("u", "sum")], schema)
    with pytest.raises(KeyError, match="no column 'x'"):
        group_aggregate([("x", "sum")], schema)


def test_records_that_are_not_whole_stop_the_run_instead_of_overrunning(ssd):
    """A records input must hold whole records, one per value; 50 lines in one value
    would be 50 rows for outputs sized for 2."""
    program = csv_parser(KV, records=True)
    app = Application(ssd)
    node = app.add(program, on="host")
    app.feed(node.records, pa.array([b"x,0\n" * 50], pa.binary()))
    for port in program.outputs:
        app.collect(node.port(port))
    with pytest.raises(SSDletError):
        app.run()


@pytest.mark.parametrize("text, filters", [
    ('k,v\n"hi"t,1\nhit,2\nmiss,3\n', [("k", "=", "hit")]),  # the reader joins text after a closing quote
    ("k,v\rhit,1\rmiss,2\rhit,3\r", [("k", "=", "hit")]),  # lone CR line ends
    ("\nk,v\nk,1\ny,2\n", [("k", "=", "k")]),  # an empty line before the header
    ('\ufeffk,v\nhit,1\nmiss,2\n', [("k", "=", "hit")]),  # a BOM
])
def test_the_prefilter_keeps_every_record_the_filter_keeps(biscuit, tmp_path, text, filters):
    path = tmp_path / "keys.csv"
    path.write_bytes(text.encode())
    expected = arrow_bridge.read_csv(path, filters=filters)
    for plan in ("prefilter", "parse_all"):
        assert scan_filter(path, filters, biscuit, plan=plan)[0].equals(expected)


def test_header_options_and_names_read_as_read_csv_reads_them(ssd, tmp_path):
    path = tmp_path / "named.csv"
    path.write_bytes("\ufeffk,v\nhit,1\nz,2\n".encode())
    for options in ({"names": ["c", "d"], "header": 0}, {"header": None}, {}):
        table = _run(ssd, path, csv_parser(path, **options), ("device",), 1)
        assert table.equals(arrow_bridge.read_csv(path, **options)), options
    filters = [("k", "=", "hit")]
    assert scan_filter(path, filters, ssd, header=0)[0].equals(arrow_bridge.read_csv(path, filters=filters, header=0))


def test_filter_values_compare_as_pyarrow_compares_them(ssd, tmp_path):
    path = tmp_path / "values.csv"
    path.write_text("i,t\n1,2020-01-01 00:00:00\n3,2020-01-01 00:00:01\n2,2020-01-01 00:00:02\n")
    program = csv_parser(path)
    half = datetime.datetime(2020, 1, 1, 0, 0, 1, 500000)
    for filters in ([("i", "in", [1.5, 3])], [("i", "not in", [1.5])], [("i", "in", [2.9999999, 300])],
                    [("t", ">=", datetime.datetime(2020, 1, 1, 0, 0, 0, 500000))], [("t", "==", half)],
                    [("t", "<", half)]):
        table = _run(ssd, path, program, ("host", "device"), 1, row_filter(filters, program.schema))
        assert table.equals(arrow_bridge.read_csv(path, filters=filters)), filters


def test_a_filter_over_other_values_is_the_same_program_with_other_arguments(ssd, messy_csv, parse, keep):
    """A new date in Q6 must not compile a new program: the values are its arguments."""
    other = [[("id", ">", 3000), ("day", "<=", datetime.date(2020, 1, 20)), ("note", "contains", "a")],
             FILTERS[1], FILTERS[2],
             [("name", "not in", ["n1", "n2", None]), ("price", "<", 1e5), ("count", "!=", -4)]]
    again = row_filter(other, parse.schema)
    assert again.func is keep.func and again.args == keep.args and again.arg_values != keep.arg_values
    table = _run(ssd, messy_csv, parse, ("device", "host"), 64, again)
    assert table.equals(arrow_bridge.read_csv(messy_csv, filters=other))
    assert 0 < table.num_rows != _run(ssd, messy_csv, parse, ("device", "host"), 64, keep).num_rows


def test_filter_arguments_of_every_column_type_compare_as_read_csv(ssd, tmp_path):
    """The arguments take the column's integer type, float64 for float32 columns, and a
    timestamp's own unit; NaN and a bound every value passes are arguments or folded."""
    path = tmp_path / "types.csv"
    path.write_text("u,i,f,ms,ns\n9223372036854775808,-5,0.1,2000-01-01 00:00:00.001,2000-01-01 00:00:00.000000001\n"
                    "18446744073709551615,7,0.25,2000-01-02,2000-01-02\n1,100,-1.5,1999-12-31,1999-12-31\n")
    dtype = {"u": "uint64", "i": "int8", "f": "float32", "ms": "timestamp[ms]", "ns": "timestamp[ns]"}
    program = csv_parser(path, dtype=dtype)
    moment = datetime.datetime(2000, 1, 1)
    for filters in ([("u", ">", 2**62 + 0.5)], [("i", "<", 1000)], [("i", ">", 6.5)], [("f", ">", 0.1)],
                    [("f", "!=", math.nan)], [("ms", ">", moment)], [("ns", ">", moment)], [("ns", "<=", moment)],
                    [[("u", ">=", 2**63)], [("u", "in", [2**64 - 1, 1])]]):
        table = _run(ssd, path, program, ("host", "device"), 1, row_filter(filters, program.schema))
        assert table.equals(arrow_bridge.read_csv(path, filters=filters, dtype=dtype)), filters


def test_a_value_past_what_the_columns_unit_holds_is_refused():
    schema = pa.schema({"t": pa.timestamp("ns"), "i": pa.int8()})
    with pytest.raises(FilterError, match=r"past what a timestamp\[ns\] column holds"):
        row_filter([("t", "<", datetime.datetime(9999, 1, 1))], schema)
    assert row_filter([("i", "<", 1000)], schema).args == {}  # always true for an int8: no value to pass


def test_an_int_column_against_a_float_compares_exactly_as_read_csv_does(ssd, tmp_path):
    path = tmp_path / "big.csv"
    path.write_text("i\n9007199254740993\n9007199254740992\n-1\n0\n")  # 2**53 + 1 is 2**53 as a float
    program = csv_parser(path)
    filters = [[("i", ">", 9007199254740992.0)], [("i", "<=", -0.5)],
               [("i", "in", [9007199254740992.0, math.nan, -1.0, 1.5])]]  # sorted() leaves a NaN's list unsorted
    table = _run(ssd, path, program, ("host", "device"), 1, row_filter(filters, program.schema))
    assert table.equals(arrow_bridge.read_csv(path, filters=filters))
    assert table.column("i").to_pylist() == [9007199254740993, 9007199254740992, -1]


def test_short_records_are_padded_under_pandas_semantics_as_read_csv_pads_them(ssd, tmp_path):
    path = tmp_path / "short.csv"
    path.write_text("a,b,c\n1,x,2.5\n2\n3,y\n4,z,1.5\n" + "5\n" * 3000)  # two bytes a record: the outputs hold them
    expected = arrow_bridge.read_csv(path, semantics="pandas")
    parse = csv_parser(path, semantics="pandas")
    for side, pages_per_packet in (("device", 1), ("host", 64)):
        assert _run(ssd, path, parse, (side, None), pages_per_packet).equals(expected)
    assert expected.slice(0, 4).to_pydict() == {"a": [1, 2, 3, 4], "b": ["x", None, "y", "z"],
                                                "c": [2.5, None, None, 1.5]}
    with pytest.raises(SSDletError, match="byte offset 14"):  # pyarrow's semantics: a short record is bad input
        _run(ssd, path, csv_parser(expected.schema), ("device", None), 1)


def _parallel(ssd, path, instances, side, pages_per_packet, program, **options):
    """scan -> split_records -> ``instances`` parsers -> ``program`` (their fan-in), all on ``side``."""
    app = Application(ssd, pages_per_packet=pages_per_packet, queue_depth=2)
    parallel = parse_in_parallel(app, path, instances, on=side, device=ssd, **options)
    node = app.add(program, on=side)
    connect_columns(app, parallel.parsers, node)
    for port in program.outputs:
        app.collect(node.port(port))
    result = app.run()
    return program.table(result, node), result


@pytest.mark.parametrize("instances", [1, 3])
@pytest.mark.parametrize("side", ["device", "host"])
@pytest.mark.parametrize("pages_per_packet", [1, 16])
def test_a_parse_spread_over_instances_keeps_file_order(ssd, messy_csv, keep, instances, side, pages_per_packet):
    table, result = _parallel(ssd, messy_csv, instances, side, pages_per_packet, keep)
    assert table.equals(arrow_bridge.read_csv(messy_csv, filters=FILTERS))
    calls = [w.calls for w in result.work if w.program == "csv_parser"]
    assert len(calls) == instances and min(calls) > 1


def test_aggregates_over_a_parse_spread_over_instances(ssd, messy_csv, parse):
    program = group_aggregate(AGGREGATES, parse.schema, group_by=["name", "day"])
    table, _ = _parallel(ssd, messy_csv, 4, "device", 4, program)
    assert table.equals(arrow_bridge.aggregate_csv(messy_csv, AGGREGATES, group_by=["name", "day"]))


def test_more_instances_model_faster_on_a_device_with_more_cores(ssd, messy_csv, keep):
    from device_emulator.ssdlet_model import model_ssdlets

    work = {k: _parallel(ssd, messy_csv, k, "device", 4, keep)[1].work for k in (1, 4)}
    modeled = {k: model_ssdlets(ssd.profile, w) for k, w in work.items()}
    parse_s = {k: [s for node, s in modeled[k].node_s.items() if node.startswith("csv_parser")] for k in work}
    assert len(parse_s[4]) == 4 and max(parse_s[4]) < parse_s[1][0] / 2  # each parser takes a share of the records
    assert modeled[4].makespan_s <= modeled[1].makespan_s
    # On this file of long strings, cutting records costs about what parsing them does (the splitter is
    # priced as the search kernel's copy): without the splitter's work, one parser on one of the four
    # cores is the bottleneck, and four of them take under half its time.
    no_split = {k: [dataclasses.replace(n, calls=0, counters={}) if n.program == "split_records" else n for n in w]
                for k, w in work.items()}
    modeled = {k: model_ssdlets(ssd.profile, w) for k, w in no_split.items()}
    assert modeled[1].bottleneck == "device cores"
    assert modeled[4].makespan_s < modeled[1].makespan_s / 2


def test_bad_input_in_a_parallel_parse_is_located_in_the_file(ssd, tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text(BAD_INPUT["value"])
    with pytest.raises(arrow_bridge.CsvParseError) as expected:
        arrow_bridge.read_csv(path, dtype=dict(zip(KV.names, KV.types)))
    keep_all = row_filter([("v", "is not null")], KV)
    with pytest.raises(SSDletError) as stopped:
        _parallel(ssd, path, 2, "device", 1, keep_all, schema=KV)
    assert str(reader_error(stopped.value, path, KV)) == str(expected.value)


def test_parsers_cannot_fan_in_across_the_link(ssd, messy_csv, keep):
    from ndp_core.ssdlets import GraphError

    app = Application(ssd)
    parallel = parse_in_parallel(app, messy_csv, 2, on="device")
    with pytest.raises(GraphError):
        connect_columns(app, parallel.parsers, app.add(keep, on="host"))
