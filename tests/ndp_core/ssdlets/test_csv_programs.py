"""scan -> parse as SSDlets: csv_records cuts file pages into records (quoted line
feeds kept, a record cut by a packet boundary carried in the state), int_field parses
one column with its nulls; the same column as arrow_bridge.read_csv, on every placement."""
import itertools
import random

import pyarrow as pa
import pytest

import arrow_bridge
from ndp_core.ssdlets import Application, SSDletError
from ndp_core.ssdlets.examples import MAX_RECORD_BYTES, csv_records, int_field


@pytest.fixture(scope="module")
def messy_csv(tmp_path_factory):
    """Quoted fields with line feeds, delimiters and doubled quotes before the ints;
    CRLF and LF line ends; empty ints (nulls); long records; no line end at the end."""
    rng = random.Random(4)
    rows = []
    for i in range(3000):
        note = rng.choice(["plain", '"a, b"', '"two\nlines"', '"say ""hi"""', '"' + "x" * rng.randrange(9000) + '"'])
        value = "" if i % 11 == 5 else str(rng.randrange(-10**15, 10**15))
        rows.append(f"{i},{note},{value}" + rng.choice(["\n", "\r\n"]))
    path = tmp_path_factory.mktemp("csv") / "messy.csv"
    path.write_text("id,note,value\n" + "".join(rows).rstrip("\r\n"))
    return path


def _value_column(ssd, path, sides, pages_per_packet, column=2):
    app = Application(ssd, pages_per_packet=pages_per_packet, queue_depth=2)
    records = app.add(csv_records, on=sides[0], delimiter=ord(","), quote=ord('"'))
    values = app.add(int_field, on=sides[1], column=column, delimiter=ord(","), quote=ord('"'), header=1)
    app.scan(records.pages, path)
    app.connect(records.records, values.records)
    app.collect(values.values)
    return app.run()


@pytest.mark.parametrize("sides", list(itertools.product(["device", "host"], repeat=2)))
@pytest.mark.parametrize("pages_per_packet", [1, 64])
def test_a_column_parsed_by_two_programs_equals_the_readers(ssd, messy_csv, sides, pages_per_packet):
    result = _value_column(ssd, messy_csv, sides, pages_per_packet)
    expected = arrow_bridge.read_csv(messy_csv)["value"].combine_chunks()
    got = result["int_field.values"]
    assert got.type == pa.int64() and got.null_count == expected.null_count > 0 and got.equals(expected)
    work = {w.node: w for w in result.work}
    assert work["csv_records"].counters["emitted"] == 3001 and work["csv_records"].pages_read > 0


def test_a_record_longer_than_the_carry_stops_the_run(ssd, tmp_path):
    path = tmp_path / "long.csv"
    path.write_text("a,b,c\n1," + "x" * (MAX_RECORD_BYTES + 100_000) + ",3\n")  # packets past the carry
    with pytest.raises(SSDletError, match="csv_records .csv_records. on the device.*an index out of bounds"):
        _value_column(ssd, path, ("device", "host"), 1)


@pytest.mark.parametrize("text, expected", [
    (b'id,v\nab"c,1\nd"e,2\nf,3\n', [1, 2, 3]),  # a quote inside an unquoted field is text
    (b'id,v\n"x,""y""\n z",5\n\nq,\r\n\r\n', [5, None]),  # doubled quotes, a quoted LF, blank lines
    (b"id,v\nx,9223372036854775807\ny,-9223372036854775808", [2**63 - 1, -2**63]),
])
def test_quotes_blank_lines_and_int64_edges_as_the_reader_reads_them(tmp_path, text, expected):
    path = tmp_path / "case.csv"
    path.write_bytes(text)
    got = _value_column(None, path, ("host", "host"), 1, column=1)["int_field.values"]
    assert got.to_pylist() == expected == arrow_bridge.read_csv(path)["v"].to_pylist()


@pytest.mark.parametrize("value", ["9223372036854775808", "-9223372036854775809", "-", "1x"])
def test_a_value_outside_int64_or_not_an_integer_stops_the_run(tmp_path, value):
    path = tmp_path / "bad.csv"
    path.write_text(f"id,v\n1,{value}\n")
    with pytest.raises(SSDletError, match="int_field .int_field. on the host.*an exception the program raised"):
        _value_column(None, path, ("host", "host"), 1, column=1)
