"""The reader end to end: sources, options, blocks and threads, pandas output."""
import gzip
import io

import fsspec
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pytest

import arrow_bridge
from csvgen import NonSeekableStream


def reference(data: bytes, **kw) -> pa.Table:
    return pacsv.read_csv(io.BytesIO(data), parse_options=pacsv.ParseOptions(newlines_in_values=True), **kw)


@pytest.mark.parametrize("block_size", [1, 7, 64, 1 << 20])
@pytest.mark.parametrize("n_threads", [1, 2, 4])
def test_same_table_for_every_block_size_and_thread_count(csv_path, block_size, n_threads):
    table = arrow_bridge.read_csv(csv_path, block_size=block_size, n_threads=n_threads)
    assert table.equals(pacsv.read_csv(csv_path, parse_options=pacsv.ParseOptions(newlines_in_values=True)))


def test_sources_path_fileobj_bytes_fsspec_and_gzip(csv_path, write_file):
    expected = arrow_bridge.read_csv(csv_path)
    with open(csv_path, "rb") as fh:
        assert arrow_bridge.read_csv(fh).equals(expected)
    assert arrow_bridge.read_csv(csv_path.read_bytes()).equals(expected)
    assert arrow_bridge.read_csv(str(csv_path)).equals(expected)
    assert arrow_bridge.read_csv(f"file://{csv_path}").equals(expected)
    with fsspec.open("memory://data/t.csv", "wb") as fh:
        fh.write(csv_path.read_bytes())
    assert arrow_bridge.read_csv("memory://data/t.csv").equals(expected)
    gz = write_file("t.csv.gz", gzip.compress(csv_path.read_bytes()))
    assert arrow_bridge.read_csv(gz).equals(expected)


def test_storage_options_configure_the_filesystem(csv_path):
    """fsspec's ``dir://`` filesystem cannot open anything without its root and target."""
    fsspec.filesystem("memory").pipe("/prefixed/t.csv", csv_path.read_bytes())
    options = {"path": "/prefixed", "target_protocol": "memory"}
    assert arrow_bridge.read_csv("dir://t.csv", storage_options=options).equals(arrow_bridge.read_csv(csv_path))


def test_text_mode_file_is_rejected(csv_path):
    with open(csv_path, "r") as fh, pytest.raises(TypeError, match="binary"):
        arrow_bridge.read_csv(fh)


def test_pandas_keywords():
    data = b"skip me\na;b;c\n1;x;2,5\n2;NA;3\n"
    table = arrow_bridge.read_csv(io.BytesIO(data), sep=";", skiprows=1, usecols=["c", "a"],
                                  dtype={"a": "int32"}, decimal=",")
    assert table.schema.names == ["c", "a"]
    assert table.column("a").type == pa.int32()
    assert table.column("c").to_pylist() == [2.5, 3.0]


def test_header_and_names():
    data = b"1,2\n3,4\n"
    assert arrow_bridge.read_csv(io.BytesIO(data), header=None).schema.names == ["f0", "f1"]
    named = arrow_bridge.read_csv(io.BytesIO(data), names=["a", "b"])
    assert named.num_rows == 2 and named.schema.names == ["a", "b"]
    replaced = arrow_bridge.read_csv(io.BytesIO(b"x,y\n1,2\n"), names=["a", "b"], header=0)
    assert replaced.to_pydict() == {"a": [1], "b": [2]}


def test_na_true_false_values_extend_the_defaults():
    data = b"a,b\n-,yes\n1,no\n"
    table = arrow_bridge.read_csv(io.BytesIO(data), na_values=["-"], true_values=["yes"],
                                  false_values=["no"])
    assert table.to_pydict() == {"a": [None, 1], "b": [True, False]}
    table = arrow_bridge.read_csv(io.BytesIO(b"a\nNA\n"), keep_default_na=False)
    assert table.column("a").to_pylist() == ["NA"]


def test_pyarrow_option_objects():
    ro = pacsv.ReadOptions(column_names=["p", "q"], skip_rows=1)
    po = pacsv.ParseOptions(delimiter="|")
    co = pacsv.ConvertOptions(column_types={"q": pa.string()}, include_columns=["q"])
    data = b"junk\n1|2\n3|4\n"
    assert arrow_bridge.read_csv(io.BytesIO(data), read_options=ro, parse_options=po,
                                 convert_options=co).equals(
        pacsv.read_csv(io.BytesIO(data), read_options=ro, parse_options=po, convert_options=co))


def test_usecols_positions_and_missing_columns():
    data = b"a,b,c\n1,2,3\n"
    assert arrow_bridge.read_csv(io.BytesIO(data), usecols=[2, 0]).schema.names == ["c", "a"]
    # each vocabulary's own error and words: pandas' ValueError for usecols, pyarrow's KeyError for include_columns
    with pytest.raises(ValueError, match=r"Usecols do not match columns, columns expected but not found: \['zz', 'y'\]"):
        arrow_bridge.read_csv(io.BytesIO(data), usecols=["a", "zz", "y"])
    with pytest.raises(ValueError, match="Usecols do not match"):
        pd.read_csv(io.BytesIO(data), usecols=["a", "zz", "y"])
    with pytest.raises(KeyError, match="Column 'zz' in include_columns does not exist in CSV file"):
        arrow_bridge.read_csv(io.BytesIO(data), convert_options=pacsv.ConvertOptions(include_columns=["zz"]))
    with pytest.raises(KeyError, match="Column 'zz' in include_columns does not exist in CSV file"):
        pacsv.read_csv(io.BytesIO(data), convert_options=pacsv.ConvertOptions(include_columns=["zz"]))
    co = pacsv.ConvertOptions(include_columns=["a", "zz"], include_missing_columns=True)
    assert arrow_bridge.read_csv(io.BytesIO(data), convert_options=co).equals(
        pacsv.read_csv(io.BytesIO(data), convert_options=co))


@pytest.mark.parametrize("nrows", [1, 3, 1000])
def test_nrows(csv_path, nrows):
    table = arrow_bridge.read_csv(csv_path, nrows=nrows, block_size=64)
    assert table.equals(arrow_bridge.read_csv(csv_path).slice(0, nrows))


def test_nrows_zero_reads_the_header_only(csv_path):
    table = arrow_bridge.read_csv(csv_path, nrows=0, block_size=64)
    assert table.num_rows == 0 and table.schema.names == ["id", "name", "price", "day", "ok"]
    assert set(table.schema.types) == {pa.null()}  # nothing to infer from, like a header-only file


def test_type_widening_in_a_late_block_retypes_earlier_chunks(write_file):
    path = write_file("w.csv", b"x\n" + b"1\n" * 5000 + b"2.5\n" + b"7\n" * 10 + b"true\n")
    for threads in (1, 2):
        table = arrow_bridge.read_csv(path, block_size=1000, n_threads=threads)
        assert table.equals(pacsv.read_csv(path))
        assert table.column("x").type == pa.string()


def test_widening_from_a_non_seekable_stream():
    data = b"x\n" + b"1\n" * 3000 + b"2.5\n"
    table = arrow_bridge.read_csv(NonSeekableStream(data), block_size=512)
    assert table.equals(pacsv.read_csv(io.BytesIO(data)))


def test_quoted_newline_cut_from_a_non_seekable_stream():
    # Regression: the unparsed tail of a span cut inside a quoted field was
    # dropped when the source could not seek.
    # The first 64 KiB arrive with the header; spans are cut after that.
    data = b"a,b\n" + b"1,x\n" * 20_000 + b'"9\nc""d",y\n' + b"2,z\n" * 5
    expected = reference(data)
    for block_size in (7, 13, 50, 173):
        table = arrow_bridge.read_csv(NonSeekableStream(data), block_size=block_size, n_threads=2)
        assert table.equals(expected), block_size


def test_bom_crlf_and_missing_trailing_newline():
    data = b"\xef\xbb\xbfa,b\r\n1,2\r\n3,4"
    assert arrow_bridge.read_csv(io.BytesIO(data)).equals(reference(data))


def test_header_only_and_empty_files():
    assert arrow_bridge.read_csv(io.BytesIO(b"a,b\n")).equals(reference(b"a,b\n"))
    with pytest.raises(arrow_bridge.CsvParseError, match="empty"):
        arrow_bridge.read_csv(io.BytesIO(b""))


def test_read_pandas_backends(csv_path):
    df = arrow_bridge.read_pandas(csv_path)
    assert isinstance(df.dtypes["id"], pd.ArrowDtype)
    np_df = arrow_bridge.read_pandas(csv_path, dtype_backend="numpy")
    assert str(np_df.dtypes["id"]) == "int64"
    nullable = arrow_bridge.read_pandas(csv_path, dtype_backend="numpy_nullable")
    assert str(nullable.dtypes["price"]) == "Float64"
    with pytest.raises(ValueError):
        arrow_bridge.read_pandas(csv_path, dtype_backend="nope")


def test_unknown_keyword_is_a_type_error():
    with pytest.raises(TypeError, match="sepp"):
        arrow_bridge.read_csv(io.BytesIO(b"a\n1\n"), sepp=";")


def test_invalid_row_handler_sees_the_row():
    seen = []

    def handler(row):
        seen.append(row)
        return "skip"

    data = b"a,b\n1,2\n3\n4,5\n"
    table = arrow_bridge.read_csv(io.BytesIO(data),
                                  parse_options=pacsv.ParseOptions(invalid_row_handler=handler))
    assert table.to_pydict() == {"a": [1, 4], "b": [2, 5]}
    assert [(r.expected_columns, r.actual_columns, r.number, r.text) for r in seen] == [(2, 1, 3, "3")]


@pytest.mark.parametrize("block_size", [1, 4, 64, 1 << 20])
def test_nrows_infers_types_from_the_rows_returned(block_size):
    data = b"x,y\n" + b"1,a\n" * 50 + b"1.5,b\n" + b"oops\n"
    table = arrow_bridge.read_csv(io.BytesIO(data), nrows=2, block_size=block_size, n_threads=1)
    assert table.to_pydict() == {"x": [1, 1], "y": ["a", "a"]}
    assert table.schema.field("x").type == pa.int64()  # the 1.5 and the bad row lie past nrows
    with pytest.raises(arrow_bridge.CsvParseError):
        arrow_bridge.read_csv(io.BytesIO(data), nrows=52, block_size=block_size)


def test_byte_range_reads_exactly_its_records_with_global_error_positions(write_file):
    data = b'a,b\r\n1,x\r\n2,"y\nz"\r\n3,w\r\n4,bad,extra\r\n'
    path = write_file("r.csv", data)
    cuts = [data.index(b"1,"), data.index(b"2,"), data.index(b"3,"), data.index(b"4,")]
    parts = [arrow_bridge.read_csv(str(path), byte_range=(a, b), dtype={"a": pa.int64(), "b": pa.string()})
             for a, b in zip(cuts, cuts[1:])]
    assert pa.concat_tables(parts).equals(arrow_bridge.read_csv(str(path), nrows=3))
    empty = arrow_bridge.read_csv(str(path), byte_range=(cuts[1], cuts[1]), names=["a", "b"], header=None)
    assert empty.num_rows == 0 and empty.column_names == ["a", "b"]
    with pytest.raises(arrow_bridge.CsvParseError) as err:
        arrow_bridge.read_csv(str(path), byte_range=(cuts[3], len(data)))
    assert (err.value.line, err.value.byte_offset) == (6, cuts[3])


def test_read_pandas_makes_duplicate_names_unique_as_pandas_does():
    data = b"a,a,b,a,a.1\n1,2,3,4,5\n"
    ours = arrow_bridge.read_pandas(io.BytesIO(data), dtype_backend="numpy")
    pd.testing.assert_frame_equal(ours, pd.read_csv(io.BytesIO(data)))
    assert arrow_bridge.read_csv(io.BytesIO(data)).column_names == ["a", "a", "b", "a", "a.1"]  # pyarrow's names


def test_per_column_na_values_apply_to_their_column_only():
    """pandas' dict form: each named column's own spellings (tests/arrow_bridge/test_pyarrow_options.py
    compares with pandas.read_csv)."""
    table = arrow_bridge.read_csv(io.BytesIO(b"score,tag\n-,-\n1,x\n"), na_values={"score": ["-"]})
    assert table.to_pydict() == {"score": [None, 1], "tag": ["-", "x"]}
