"""Differential tests of pyarrow's option objects: every field of ``ReadOptions``,
``ParseOptions`` and ``ConvertOptions``, given to ``arrow_bridge.read_csv`` and to
``pyarrow.csv.read_csv``, must give an equal Table (``Table.equals``) or make both
raise, ours with pyarrow's kind of error (``ArrowInvalid``, ``ArrowNotImplementedError``,
``ArrowIndexError``, ``KeyError``, ...), so that ``except`` clauses written for pyarrow
keep working.

The files are small and messy on purpose: quoted values with delimiters, doubled
quotes and line breaks, null spellings quoted and not, empty lines, CRLF, a BOM,
bad rows, invalid UTF-8, blanks around numbers. pyarrow reads each in one block,
so its per-block rules (``auto_dict_encode``'s cardinality, ``newlines_in_values``)
and ours (whole column, always) agree; where they cannot, a test below says so.

pandas' per-column ``na_values`` (a dict) has no pyarrow counterpart: its tests
compare with ``pandas.read_csv``.

Documented divergences, each encoded in a test of its own (see docs/reader.md):

1. ``skip_rows_after_names`` when no line break follows the header (no data, or
   one unterminated line): pyarrow raises "straddling object straddles two block
   boundaries"; we return the empty Table it gives when a line break is there.
2. ``auto_dict_encode`` counts a column's distinct values over the whole file
   (pyarrow: per block of ``block_size`` bytes).
3. ``block_size`` smaller than a row: pyarrow raises; we read the file.
4. ``quoted_strings_can_be_null=False``: an empty last field of a file without a
   final line break is quoted to pyarrow when the field before it was (its bug);
   we read it as if the line break were there.
"""
from __future__ import annotations

import csv
import io
import itertools
from typing import Any, Optional

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pytest

import arrow_bridge
from csvgen import assert_tables_identical

# ---------------------------------------------------------------------------------------------
# Files.
# ---------------------------------------------------------------------------------------------
FILES = {
    "plain": b"i,f,s,d,t,b\n1,1.5,x,2020-01-01,2020-01-01 10:00:00,true\n"
             b"2,-2.25,y,2020-01-02,2020-01-02T11:30:00,false\n3,0,x,2020-01-03,2020-01-03 00:00:00,true\n",
    "quoted": b'i,s,n\n1,"a,b",2\n2,"say ""hi""",3\n3,"multi\nline",4\n"4",plain,"5"\n',
    "nulls": b'i,s,f\n1,NA,1.5\n,"NA",\nnull,x,nan\n"",N/A,2\n4,,-inf\n',
    "empty_lines": b"a,b\n\n1,x\n\n\n2,y\r\n\r\n3,z\n\n",
    "bad_rows": b"a,b\n1,2\n3,4,5\n6,7\n8\n9,10\n",
    "bom_crlf": b"\xef\xbb\xbfa,b\r\n1,2\r\n3,4\r\n",
    "utf8": "n,s\n1,caf\u00e9\n2,\u00fcber\n".encode() + b"3,\xff\xfe\n",
    "decimals": b"p,q\n1.5,-2\n 3 ,1e2\n-0.25,007\n,NA\n",
    "timestamps": b"ts,day,hm\n02/01/2020 10:00,2020-01-02,10.30\n03/01/2020 11:15,2020-01-03,11.45\n,NA,\n",
    "skippable": b"junk line\n# another, with, commas\na,b\n1,2\n3,4\n5,6\n",
    "short": b"a,b\n1,2\n",
    "header_only": b"a,b\n",
    "one_column": b"v\n1\n\n2\nNA\n",
}
SOME = ["plain", "quoted", "nulls", "empty_lines", "bad_rows", "bom_crlf", "utf8"]


def outcome(reader, data: bytes, **options: Any) -> tuple[Optional[pa.Table], Optional[BaseException]]:
    try:
        return reader(io.BytesIO(data), **options), None
    except Exception as err:  # noqa: BLE001 - both readers' errors are compared
        return None, err


#: pyarrow's error classes, most specific first, and what a pyarrow user catches for each.
_KINDS = [(pa.ArrowNotImplementedError, pa.ArrowNotImplementedError), (pa.ArrowIndexError, pa.ArrowIndexError),
          (pa.ArrowTypeError, pa.ArrowTypeError), (pa.ArrowKeyError, KeyError), (KeyError, KeyError),
          (UnicodeDecodeError, ValueError), (pa.ArrowInvalid, pa.ArrowInvalid), (ValueError, ValueError),
          (TypeError, TypeError)]


def caught_as(err: BaseException) -> type:
    """The class a pyarrow user's ``except`` names for pyarrow's ``err``."""
    return next(caught for kind, caught in _KINDS if isinstance(err, kind))


def assert_same(data: bytes, **options: Any) -> Optional[pa.Table]:
    """Our Table equals pyarrow's, or both raise and ours is caught as pyarrow's is."""
    theirs, their_err = outcome(pacsv.read_csv, data, **options)
    ours, our_err = outcome(arrow_bridge.read_csv, data, **options)
    if their_err is not None:
        assert our_err is not None, f"pyarrow raises {their_err!r}; we returned\n{ours}"
        assert isinstance(our_err, caught_as(their_err)), f"pyarrow raises {their_err!r}; we raise {our_err!r}"
        return None
    assert our_err is None, f"we raise {our_err!r}; pyarrow returns\n{theirs}"
    assert_equal_tables(ours, theirs)
    return ours


def assert_equal_tables(ours: pa.Table, theirs: pa.Table) -> None:
    """``Table.equals``, with NaNs equal when their bits are (``equals`` calls NaN unequal)."""
    if not ours.equals(theirs):
        assert_tables_identical(ours, theirs)


# ---------------------------------------------------------------------------------------------
# ReadOptions.
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", SOME)
@pytest.mark.parametrize("use_threads", [True, False])
def test_use_threads(name, use_threads):
    assert_same(FILES[name], read_options=pacsv.ReadOptions(use_threads=use_threads))


@pytest.mark.parametrize("name", SOME)
@pytest.mark.parametrize("block_size", [64, 1 << 10, 1 << 20])
def test_block_size(name, block_size):
    assert_same(FILES[name], read_options=pacsv.ReadOptions(block_size=block_size))


_SKIP_FILES = ["skippable", "plain", "short", "header_only", "empty_lines", "quoted"]


@pytest.mark.parametrize("name", _SKIP_FILES)
@pytest.mark.parametrize("skip_rows", [0, 1, 2, 3, 4, 9])
@pytest.mark.parametrize("names", [None, ["p", "q"], "auto"])
def test_skip_rows_with_names(name, skip_rows, names):
    kw = dict(skip_rows=skip_rows)
    if names == "auto":
        kw["autogenerate_column_names"] = True
    elif names:
        kw["column_names"] = names
    assert_same(FILES[name], read_options=pacsv.ReadOptions(**kw))


@pytest.mark.parametrize("name", ["plain", "short", "empty_lines", "quoted", "skippable"])
@pytest.mark.parametrize("after", [0, 1, 2, 3, 9])
@pytest.mark.parametrize("names", [None, ["p", "q", "r", "s", "t", "u"], "auto"])
def test_skip_rows_after_names(name, after, names):
    data = FILES[name]
    kw: dict[str, Any] = dict(skip_rows_after_names=after)
    if names == "auto":
        kw["autogenerate_column_names"] = True
    elif names:
        kw["column_names"] = names[: data.split(b"\n")[0].count(b",") + 1]
    assert_same(data, read_options=pacsv.ReadOptions(**kw))


@pytest.mark.parametrize("data", [b'a\n"x\ny"\n2\n3\n', b'a\n\n"x\ny"\n2\n3\n', b'a\r\n"x\r\ny"\r\n\r\n2\r\n3\r\n',
                                  b'a,b\n1,"p\n\nq"\n"r\ns",2\n3,4\n'])
@pytest.mark.parametrize("after", [1, 2, 3])
@pytest.mark.parametrize("newlines_in_values", [False, True])
def test_skip_rows_after_names_counts_records_with_newlines_in_values(data, after, newlines_in_values):
    """pyarrow's parser skips records (quoted line breaks inside, an empty line one) with
    newlines_in_values, its chunker physical lines without (a fuzz find: we counted lines)."""
    parse = pacsv.ParseOptions(newlines_in_values=newlines_in_values)
    theirs = assert_same(data, read_options=pacsv.ReadOptions(skip_rows_after_names=after), parse_options=parse)
    if theirs is not None:  # and at a block size pyarrow cannot read it with
        ours = arrow_bridge.read_csv(io.BytesIO(data), read_options=pacsv.ReadOptions(
            skip_rows_after_names=after, block_size=16), parse_options=parse)
        assert_equal_tables(ours, theirs)


def test_an_empty_file_is_an_error_even_with_column_names(tmp_path):
    """pyarrow: "Empty CSV file", names given or not (a fuzz find: we gave a Table of nulls);
    an empty byte range of a file with names is an empty Table (a Dask partition)."""
    path = tmp_path / "empty.csv"
    path.write_bytes(b"")
    options = dict(read_options=pacsv.ReadOptions(column_names=["a"]))
    for source in (path, b""):
        assert_same(source if isinstance(source, bytes) else path.read_bytes(), **options)
        with pytest.raises(arrow_bridge.EmptyCsvError):
            arrow_bridge.read_csv(source, **options)
    path.write_bytes(b"1\n2\n")
    assert arrow_bridge.read_csv(path, byte_range=(2, 2), **options).schema.names == ["a"]


def test_column_names_with_autogenerate_is_pyarrows_error():
    options = dict(read_options=pacsv.ReadOptions(column_names=["a", "b"], autogenerate_column_names=True))
    with pytest.raises(pa.ArrowInvalid, match="autogenerate_column_names"):
        arrow_bridge.read_csv(io.BytesIO(FILES["short"]), **options)
    assert_same(FILES["short"], **options)


@pytest.mark.parametrize("encoding,text", [("utf8", "a,b\n\u00e9,1\n"), ("latin-1", "a,b\n\u00e9,1\n"),
                                           ("utf-16", "a,b\n\u00e9,1\n"), ("cp1252", "a,\u20ac\nx,1\n")])
def test_encoding(encoding, text):
    assert_same(text.encode(encoding), read_options=pacsv.ReadOptions(encoding=encoding))


# ---------------------------------------------------------------------------------------------
# ParseOptions.
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", SOME)
@pytest.mark.parametrize("options", [
    dict(delimiter=";"), dict(delimiter="\t"), dict(quote_char="'"), dict(quote_char=False),
    dict(double_quote=False), dict(escape_char="\\"), dict(newlines_in_values=True),
    dict(newlines_in_values=False), dict(ignore_empty_lines=True),
], ids=str)
def test_parse_options(name, options):
    assert_same(FILES[name], parse_options=pacsv.ParseOptions(**options))


@pytest.mark.parametrize("data", [
    FILES["empty_lines"], FILES["one_column"], b"\n\na\n1\n\n3\n", b"a,b\n1,2\n\n", b"a,b\n\n\n",
    b'a,b\n"x\n\ny",1\n\n2,3\n', b"a,b\r\n1,2\r\n\r\n3,4\r\n", b"a\nx\n\n\ny\n", b"a,b\n1,2\n\n3,4,5\n",
    b"a,b\n" + b"".join(b"%d,x\n\n" % i for i in range(300)) + b"1.5,\n",
    # a span without empty lines whose column widens in a later span: it hung, never reconverted
    b"a,b\n1,2\n\nx,4\n5,6\n7,8\n9,10\n", b',a\n,"q,r"\n"q,r",\n',
], ids=itertools.count())
@pytest.mark.parametrize("block_size", [16, 1 << 20])
def test_ignore_empty_lines_false(data, block_size):
    """An empty line is a row of empty fields (nulls, or empty strings)."""
    parse = pacsv.ParseOptions(ignore_empty_lines=False)
    theirs = pacsv.read_csv(io.BytesIO(data), parse_options=parse) if b"3,4,5" not in data else None
    if theirs is None:  # a bad row: both raise
        assert_same(data, parse_options=parse)
        return
    ours = arrow_bridge.read_csv(io.BytesIO(data), parse_options=parse, block_size=block_size)
    assert_equal_tables(ours, theirs)


@pytest.mark.parametrize("data", [b"a\n1.5\n\n2.5\n", b'a\n"x"\n\n""\n', b"a\n2020/01/02\n\n", b"a\n\n\n"],
                         ids=range(4))
@pytest.mark.parametrize("column_types", [{}, {"a": pa.decimal128(5, 1)}, {"a": pa.string()}], ids=str)
@pytest.mark.parametrize("nulls", [dict(quoted_strings_can_be_null=False),
                                   dict(quoted_strings_can_be_null=False, strings_can_be_null=True)], ids=str)
@pytest.mark.parametrize("parse", [dict(), dict(quote_char=False), dict(delimiter="x", quote_char="_", escape_char="0")],
                         ids=str)
def test_a_lone_columns_empty_line_is_an_unquoted_empty_field(data, column_types, nulls, parse):
    """The tokenizer gets it as a byte no dialect reads specially, made an empty unquoted
    field for the null rules; no quote character is needed."""
    options = dict(parse_options=pacsv.ParseOptions(ignore_empty_lines=False, **parse),
                   convert_options=pacsv.ConvertOptions(column_types=column_types, timestamp_parsers=["%Y/%m/%d"],
                                                        **nulls))
    assert_same(data, **options)
    for block_size in (4, 16):
        theirs, their_err = outcome(pacsv.read_csv, data, **options)
        ours, our_err = outcome(lambda source, **kw: arrow_bridge.read_csv(source, block_size=block_size, **kw),
                                data, **options)
        _assert_same_outcome(ours, our_err, theirs, their_err)


def test_ignore_empty_lines_false_locates_a_bad_value_in_the_file():
    data = b"a,b\n1,2\n\n3,4\n"
    options = dict(parse_options=pacsv.ParseOptions(ignore_empty_lines=False),
                   convert_options=pacsv.ConvertOptions(column_types={"a": pa.int64()}, null_values=["NA"]))
    assert_same(data, **options)
    with pytest.raises(arrow_bridge.CsvParseError) as info:
        arrow_bridge.read_csv(io.BytesIO(data), **options)
    assert (info.value.line, info.value.byte_offset) == (3, 8)


def test_ignore_empty_lines_false_in_a_stream():
    data = b"a,b\n" + b"".join(b"%d,x\n\n" % i for i in range(100))
    parse = pacsv.ParseOptions(ignore_empty_lines=False)
    ours = arrow_bridge.open_csv(io.BytesIO(data), parse_options=parse, block_size=64).read_all()
    assert ours.equals(pacsv.read_csv(io.BytesIO(data), parse_options=parse))


# A stream's types come from its first block (pyarrow's rule): of 8 bytes, it would hold only an
# empty line here, a row of nulls, and the next block's values would not fit (pyarrow raises too).
_SMALL_BLOCK = 16


@pytest.mark.parametrize("nrows", [0, 1, 2, 3, 5, 9])
@pytest.mark.parametrize("block_size", [_SMALL_BLOCK, 1 << 20])
def test_nrows_counts_empty_lines_as_rows_when_they_are_rows(nrows, block_size):
    """With skip_blank_lines=False an empty line is one of the nrows rows, in a stream
    as in a whole read (a stream once cut at nrows records, then added the empty lines)."""
    data = b"a,b\n\n1,2\n\n\n3,x\n5,6\n\n7,8\n"
    expected = pd.read_csv(io.BytesIO(data), skip_blank_lines=False, nrows=nrows)
    options = dict(skip_blank_lines=False, nrows=nrows, block_size=block_size)
    whole = arrow_bridge.read_csv(io.BytesIO(data), **options)
    streamed = arrow_bridge.open_csv(io.BytesIO(data), **options).read_all()
    assert whole.num_rows == streamed.num_rows == len(expected)
    assert streamed.to_pydict() == whole.to_pydict()
    assert whole.column("a").null_count == int(expected["a"].isna().sum())


@pytest.mark.parametrize("data", [b"a,b\n1,2\n\n\n1,2,3\n", b"a,b\n\n\n\n1,2,3\n", b'a,b\n\n1,2\n"x\n'])
@pytest.mark.parametrize("nrows", [1, 2, 3, 4])
@pytest.mark.parametrize("block_size", [_SMALL_BLOCK, 1 << 20])
def test_nrows_of_empty_lines_before_bad_input_are_read_without_its_error(data, nrows, block_size):
    """Empty lines are rows: as many before a bad record as nrows asks for, and the
    bad record is never reached, as in pandas."""
    try:
        expected = len(pd.read_csv(io.BytesIO(data), skip_blank_lines=False, nrows=nrows))
    except (ValueError, pd.errors.ParserError):
        expected = None
    options = dict(skip_blank_lines=False, nrows=nrows, block_size=block_size)
    for read in (arrow_bridge.read_csv, lambda *args, **kw: arrow_bridge.open_csv(*args, **kw).read_all()):
        if expected is None:
            with pytest.raises(arrow_bridge.CsvParseError):
                read(io.BytesIO(data), **options)
        else:
            assert read(io.BytesIO(data), **options).num_rows == expected


@pytest.mark.parametrize("name", ["bad_rows", "plain", "quoted"])
@pytest.mark.parametrize("verdict", ["skip", "error", "selective"])
def test_invalid_row_handler(name, verdict):
    def handler(row):
        if verdict == "selective":
            return "skip" if row.actual_columns > row.expected_columns else "error"
        return verdict

    seen_theirs: list = []
    seen_ours: list = []
    theirs, their_err = outcome(pacsv.read_csv, FILES[name], parse_options=pacsv.ParseOptions(
        invalid_row_handler=lambda row: seen_theirs.append(row) or handler(row)))
    ours, our_err = outcome(arrow_bridge.read_csv, FILES[name], parse_options=pacsv.ParseOptions(
        invalid_row_handler=lambda row: seen_ours.append(row) or handler(row)))
    assert (their_err is None) == (our_err is None), (their_err, our_err)
    if their_err is None:
        assert ours.equals(theirs)
    else:
        assert isinstance(our_err, pa.ArrowInvalid)
    assert [(r.expected_columns, r.actual_columns, r.text) for r in seen_ours] == \
        [(r.expected_columns, r.actual_columns, r.text) for r in seen_theirs]


# ---------------------------------------------------------------------------------------------
# ConvertOptions: values.
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", SOME + ["decimals", "timestamps"])
@pytest.mark.parametrize("options", [
    dict(check_utf8=False), dict(null_values=["x", ""]), dict(null_values=[]),
    dict(true_values=["x"], false_values=["y"]),
    dict(decimal_point=","), dict(strings_can_be_null=True), dict(quoted_strings_can_be_null=False),
    dict(strings_can_be_null=True, quoted_strings_can_be_null=False),
], ids=str)
def test_value_options(name, options):
    assert_same(FILES[name], convert_options=pacsv.ConvertOptions(**options))


@pytest.mark.parametrize("options", [
    dict(include_columns=["s", "i"]), dict(include_columns=["zz"]),
    dict(include_columns=["zz", "i"], include_missing_columns=True),
    dict(include_columns=["zz"], include_missing_columns=True, column_types={"zz": pa.decimal128(5, 2)}),
    dict(include_columns=["zz"], include_missing_columns=True,
         column_types={"zz": pa.dictionary(pa.int32(), pa.string())}),
    dict(include_columns=["zz", "i"], include_missing_columns=True, default_column_type=pa.string()),
    dict(default_column_type=pa.string()), dict(default_column_type=pa.int64()),
    dict(default_column_type=pa.string(), column_types={"i": pa.int8()}),
], ids=str)
def test_column_selection(options):
    assert_same(FILES["plain"], convert_options=pacsv.ConvertOptions(**options))


def test_a_missing_include_column_is_caught_as_pyarrows_is():
    with pytest.raises(pa.ArrowKeyError, match="Column 'zz' in include_columns does not exist"):
        arrow_bridge.read_csv(io.BytesIO(FILES["plain"]), convert_options=pacsv.ConvertOptions(include_columns=["zz"]))


@pytest.mark.parametrize("data, options", [
    (b"\xef\xbb\xbf", dict(read_options=pacsv.ReadOptions(column_names=["a"]))),
    (b"c0\n\xff\n", dict(convert_options=pacsv.ConvertOptions(check_utf8=False,
                                                               column_types={"c0": pa.decimal128(10, 2)}))),
], ids=["a BOM alone is an empty file", "a decimal of bytes that are not UTF-8"])
def test_inputs_a_differential_fuzz_found(data, options):
    assert_same(data, **options)


# ---------------------------------------------------------------------------------------------
# ConvertOptions: every type pyarrow reads from CSV (and the ones it refuses).
# ---------------------------------------------------------------------------------------------
COLUMN_TYPES = [
    pa.null(), pa.bool_(), pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(),
    pa.uint64(), pa.float32(), pa.float64(), pa.decimal128(11, 2), pa.decimal128(3, 1), pa.decimal128(38, 10),
    pa.decimal128(5, -1), pa.date32(), pa.date64(), pa.time32("s"), pa.time32("ms"), pa.time64("us"),
    pa.time64("ns"), pa.timestamp("s"), pa.timestamp("ms"), pa.timestamp("us"), pa.timestamp("ns"),
    pa.timestamp("s", "UTC"), pa.timestamp("ms", "Europe/Paris"), pa.timestamp("us", "+01:00"),
    pa.duration("s"), pa.duration("ms"), pa.duration("us"), pa.duration("ns"), pa.string(), pa.large_string(),
    pa.binary(), pa.large_binary(), pa.binary(1), pa.binary(2),
    pa.dictionary(pa.int32(), pa.string()), pa.dictionary(pa.int32(), pa.large_string()),
    pa.dictionary(pa.int32(), pa.binary()), pa.dictionary(pa.int32(), pa.large_binary()),
    *(pa.dictionary(pa.int32(), value) for value in (pa.int32(), pa.int64(), pa.uint32(), pa.uint64(), pa.float32(),
                                                     pa.float64())),
    pa.dictionary(pa.int32(), pa.decimal128(5, 2)), pa.dictionary(pa.int32(), pa.duration("ms")),
    pa.dictionary(pa.int32(), pa.binary(1)),
    # pyarrow refuses these (ArrowNotImplementedError); so must we.
    pa.dictionary(pa.int8(), pa.string()), pa.dictionary(pa.int64(), pa.string()),
    pa.dictionary(pa.int32(), pa.date32()),
    pa.dictionary(pa.int32(), pa.bool_()), pa.decimal256(40, 2), pa.float16(), pa.string_view(), pa.list_(pa.int64()),
    pa.month_day_nano_interval(),
]
TYPED_VALUES = {
    "ints": b"v\n1\n-2\n\"3\"\nNA\n\n 4 \n0x1F\n1\n",
    "floats": b"v\n1.5\n-2\n1e2\n\"3.25\"\nNA\n 4 \n1.5\n",
    "dates": b"v\n2020-01-01\n1969-12-31\n\nNA\n2020-01-01\n",
    "times": b"v\n12:34:56\n01:02:03.123\n\n23:59:59.123456789\n",
    "times, a point without digits": b"v\n12:34:56.\n01:02:03\n",  # a time whose unit has a fraction takes it
    "timestamps, a point without digits": b"v\n2020-01-01 10:00:00.\n",  # which no timestamp takes
    "timestamps": b"v\n2020-01-01 10:00:00\n2020-01-01T10:00:00.5\n\n2020-01-01 10:00:00Z\n",
    "zoned": b"v\n2020-01-01 10:00:00Z\n2020-01-01T10:00:00+01:00\nNA\n",
    "text": b'v\nab\nc\n\n"NA"\nNA\nab\n"x,y"\n',
    "bytes": b"v\na\nb\na\n\xff\nNA\n\n",
    "bools": b"v\ntrue\nFalse\n1\n0\n\nNA\n",
}


@pytest.mark.parametrize("values", list(TYPED_VALUES))
@pytest.mark.parametrize("type_", COLUMN_TYPES, ids=str)
def test_column_types(type_, values):
    assert_same(TYPED_VALUES[values], convert_options=pacsv.ConvertOptions(column_types={"v": type_}))


@pytest.mark.parametrize("type_", [pa.decimal128(11, 2), pa.decimal128(3, 1), pa.binary(2), pa.date64(),
                                   pa.duration("s"), pa.dictionary(pa.int32(), pa.string()),
                                   pa.dictionary(pa.int32(), pa.decimal128(5, 2))], ids=str)
@pytest.mark.parametrize("options", [dict(strings_can_be_null=True), dict(quoted_strings_can_be_null=False),
                                     dict(null_values=["-", "1"]), dict(decimal_point=","), dict(check_utf8=False)],
                         ids=str)
def test_column_types_with_value_options(type_, options):
    for values in ("ints", "floats", "text", "dates"):
        assert_same(TYPED_VALUES[values], convert_options=pacsv.ConvertOptions(column_types={"v": type_}, **options))


_DECIMAL_TEXTS = ["1", "1.5", "-1.5", "+1.5", "1e2", "1E-2", ".5", "5.", "-.5", "1.234", "0.001", "12345678901",
                  "123456789.12", " 1", "1 ", "\t1", "00012", "-0", "1e", "e1", ".", "-", "1..2", "inf", "0x10",
                  "99999999999", "1e10", "1.00000", "-00.10", "1e+2", "1e0x1", "0E32", "1e+-2", "9" * 38, "1e38",
                  "1e39", "-" + "9" * 38, "0.0000000000000000000000000000000000000001"]


@pytest.mark.parametrize("type_", [pa.decimal128(11, 2), pa.decimal128(3, 1), pa.decimal128(38, 0),
                                   pa.decimal128(38, 38), pa.decimal128(5, -2), pa.decimal128(5, 5)], ids=str)
@pytest.mark.parametrize("point", [".", ","])
def test_decimal_values_one_by_one(type_, point):
    """Each literal read alone: pyarrow's precision (of the literal), rescaling and 128-bit rules."""
    for text in _DECIMAL_TEXTS:
        literal = text.replace(".", point)
        data = b"v\n" + literal.encode() + b"\n"
        assert_same(data, parse_options=pacsv.ParseOptions(delimiter=";"),
                    convert_options=pacsv.ConvertOptions(column_types={"v": type_}, decimal_point=point))


def test_decimal_error_is_caught_as_pyarrows():
    with pytest.raises(pa.ArrowInvalid, match="not a valid decimal128"):
        arrow_bridge.read_csv(io.BytesIO(b"v\n1\nabc\n"),
                              convert_options=pacsv.ConvertOptions(column_types={"v": pa.decimal128(5, 2)}))


# ---------------------------------------------------------------------------------------------
# ConvertOptions: auto_dict_encode.
# ---------------------------------------------------------------------------------------------
_CARDINALITY = {
    "fits": b"a,b\nx,1\ny,2\nx,3\n",
    "one_more_last": b"a,b\nx,1\ny,2\nz,3\n",  # max + 1 distinct values, the last one last: still fits
    "one_more_then_more": b"a,b\nx,1\ny,2\nz,3\nz,4\n",
    "nulls_after": b"a,b\nx,1\ny,2\nz,3\n,4\nNA,5\n",
    "bytes": b"a,b\nx,1\n\xff,2\n",
    "bytes_many": b"a,b\nx,1\n\xff,2\nz,3\nw,4\n",
    "all_null": b"a,b\n,1\nNA,2\n",
    "mixed": FILES["plain"].replace(b"i,f,s,d,t,b", b"a,f,s,d,t,b"),
}


@pytest.mark.parametrize("name", list(_CARDINALITY) + SOME)
@pytest.mark.parametrize("max_cardinality", [0, 1, 2, 50])
@pytest.mark.parametrize("extra", [{}, dict(strings_can_be_null=True), dict(column_types={"a": pa.string()})], ids=str)
def test_auto_dict_encode(name, max_cardinality, extra):
    data = _CARDINALITY.get(name) or FILES[name]
    assert_same(data, convert_options=pacsv.ConvertOptions(auto_dict_encode=True,
                                                           auto_dict_max_cardinality=max_cardinality, **extra))


def test_auto_dict_encode_over_many_spans_is_one_dictionary():
    """Our spans differ from pyarrow's blocks; the column still has one dictionary in
    first-appearance order, so the Table equals pyarrow's one-block Table."""
    data = b"a,b\n" + b"".join(b"v%d,%d\n" % (i % 7, i) for i in range(3000))
    co = pacsv.ConvertOptions(auto_dict_encode=True)
    ours = arrow_bridge.read_csv(io.BytesIO(data), convert_options=co, block_size=512, n_threads=2)
    assert ours.column("a").num_chunks > 1
    assert ours.equals(pacsv.read_csv(io.BytesIO(data), convert_options=co))


def test_auto_dict_encode_counts_the_whole_file():
    """Divergence 2: pyarrow counts per block; we count the whole column (block size never matters)."""
    data = b"a\n" + b"".join(b"v%d\n" % (i % 30) for i in range(300))  # 30 distinct, about 25 per block
    small_blocks = pacsv.ReadOptions(block_size=100)
    co = pacsv.ConvertOptions(auto_dict_encode=True, auto_dict_max_cardinality=28)
    assert pa.types.is_dictionary(pacsv.read_csv(io.BytesIO(data), read_options=small_blocks,
                                                 convert_options=co).column("a").type)
    ours = arrow_bridge.read_csv(io.BytesIO(data), read_options=small_blocks, convert_options=co)
    assert ours.column("a").type == pa.string()
    assert ours.equals(pacsv.read_csv(io.BytesIO(data), convert_options=co))  # pyarrow, one block


# ---------------------------------------------------------------------------------------------
# ConvertOptions: timestamp_parsers.
# ---------------------------------------------------------------------------------------------
_TIMESTAMP_FILES = [
    b"a\n2020-01-01 10:00\n2020-01-02 11:00\n", b"a\n2020-01-01 10:00:00\n", b"a\n2020-01-01\n", b"a\n12:00:00\n",
    b"a\n2020-01-01 10:00\n2020-01-01 10:00:00\n", b"a\n2020-01-01 10:00\n2020-01-01 10:00:00.5\n",
    b"a\n2020-01-01 10:00+0100\n", b"a\n2020-01-01 10:00+0100\n2020-01-01 10:00\n", b"a\n01.02\n03.04\n",
    b"a\n 2020-01-01 10:00 \n", b"a\n\"2020-01-01 10:00\"\nNA\n\n", b"a\n2020-01-01T10:00:00\n", b"a\n1600000000\n",
    b"a\nx1600000000\n", b"a\n2020/1/2\n", b"a\n2020-13-01 10:00\n", b"a\n2020-01-01 10:00:05.123\n",
    b"a\n2020-01-01 10:00+01:00\n", b"a,b\n2020-01-01 10:00,2020-01-01T10:00:00Z\n2020-01-01 11:00,x\n",
    b"a\n10.30\n11.45\n", b"a\n\xff\n", b"a\n2020-01-01T10:00:00Z\n2020-01-01 10:00\n", FILES["timestamps"],
]
_PARSERS = [["%Y-%m-%d %H:%M"], [pacsv.ISO8601, "%Y-%m-%d %H:%M"], ["%Y-%m-%d %H:%M", pacsv.ISO8601],
            ["%Y-%m-%d %H:%M%z"], ["%Y-%m-%d %H:%M%z", "%Y-%m-%d %H:%M"], ["%m.%d"], ["%H.%M"], ["%s"], ["x%s"],
            ["%Y/%m/%d"], [pacsv.ISO8601], ["%Y-%m-%dT%H:%M:%SZ", pacsv.ISO8601], [pacsv.ISO8601, "%Y-%m-%dT%H:%M:%SZ"],
            ["%d/%m/%Y %H:%M"]]


@pytest.mark.parametrize("parsers", _PARSERS, ids=lambda p: "|".join(x if isinstance(x, str) else "ISO8601" for x in p))
@pytest.mark.parametrize("type_", [None, pa.timestamp("s"), pa.timestamp("ms"), pa.timestamp("ns", "UTC"),
                                   pa.timestamp("us", "Europe/Paris"), pa.string(),
                                   pa.dictionary(pa.int32(), pa.string())],
                         ids=str)
@pytest.mark.parametrize("extra", [{}, dict(strings_can_be_null=True), dict(auto_dict_encode=True)], ids=str)
def test_timestamp_parsers(parsers, type_, extra):
    for data in _TIMESTAMP_FILES:
        name = data.split(b"\n")[0].split(b",")[0].decode("utf-8-sig")
        column_types = {name: type_} if type_ is not None else {}
        assert_same(data, convert_options=pacsv.ConvertOptions(timestamp_parsers=parsers, column_types=column_types,
                                                               **extra))


def test_timestamp_parsers_in_many_spans():
    data = b"a,b\n" + b"".join(b"%02d/01/2020 10:%02d,%d\n" % (i % 28 + 1, i % 60, i) for i in range(2000))
    co = pacsv.ConvertOptions(timestamp_parsers=["%d/%m/%Y %H:%M"])
    ours = arrow_bridge.read_csv(io.BytesIO(data), convert_options=co, block_size=1000, n_threads=2)
    assert ours.column("a").type == pa.timestamp("s")
    assert ours.equals(pacsv.read_csv(io.BytesIO(data), convert_options=co))


def test_float_like_timestamp_format_over_many_spans():
    """``%H.%M`` also reads as a float: pyarrow tries timestamps first."""
    data = b"a\n" + b"".join(b"%d.%02d\n" % (i % 24, i % 60) for i in range(2000))
    co = pacsv.ConvertOptions(timestamp_parsers=["%H.%M"])
    ours = arrow_bridge.read_csv(io.BytesIO(data), convert_options=co, block_size=1000, n_threads=2)
    assert ours.equals(pacsv.read_csv(io.BytesIO(data), convert_options=co))


@pytest.mark.parametrize("data, read_options, parsers", [
    # found by a fuzz campaign: an ArrowInvalid ("Negative offsets"), or a crash (heap corruption)
    (b"\r\r3|17:07:54|91|12:07:12|2020-01-01T|8823-01-22 20:24:30+14:00|4.463252548189722e+298\r\r",
     pacsv.ReadOptions(skip_rows=2, column_names=list("abcdefg")), ["%Y-%m-%d %H:%M:%S", "%Y-%m-%d"]),
    (b"a|b\n" + b"".join(b"%d|%d.%02d\n%s" % (i, i % 24, i % 60, b"\n" if i % 3 else b"") for i in range(2000)),
     pacsv.ReadOptions(), ["%H.%M"]),
], ids=["two empty lines", "many spans"])
def test_float_like_timestamp_formats_with_empty_lines_as_rows(data, read_options, parsers):
    """The float column is read again as text for the timestamp parsers: its empty lines
    must be rows there too, or the text has fewer rows than the column."""
    options = dict(read_options=read_options, parse_options=pacsv.ParseOptions(delimiter="|", ignore_empty_lines=False),
                   convert_options=pacsv.ConvertOptions(timestamp_parsers=parsers))
    theirs = pacsv.read_csv(io.BytesIO(data), **options)
    for block_size in (64, 1 << 20):
        assert arrow_bridge.read_csv(io.BytesIO(data), n_threads=2, block_size=block_size, **options).equals(theirs)


_DATES_AND_NULL_SPELLINGS = [b"a,b\n" + rows + b"2020/01/02,3\n" for rows in (
    b'"NA",1\n', b"NA,1\n", b'"",1\n,2\n', b'"NA",1\nNA,2\n')]


@pytest.mark.parametrize("data", _DATES_AND_NULL_SPELLINGS, ids=range(len(_DATES_AND_NULL_SPELLINGS)))
@pytest.mark.parametrize("column_types", [{}, {"a": pa.timestamp("s")}, {"a": pa.decimal128(5, 1)},
                                          {"a": pa.binary(2)}], ids=str)
@pytest.mark.parametrize("read", [{}, {"block_size": 8}, {"device": "modern-gen4", "split": "device"}], ids=str)
def test_a_quoted_null_spelling_is_text_for_a_non_string_type(tmp_path, data, column_types, read):
    """quoted_strings_can_be_null=False: for a column read as text for another type (or
    inferred with timestamp_parsers) a quoted null spelling is text, which the type then
    takes or refuses; only unquoted ones are null (``"NA"`` beside dates makes the column text)."""
    path = tmp_path / "d.csv"
    path.write_bytes(data)
    options = dict(convert_options=pacsv.ConvertOptions(column_types=column_types, timestamp_parsers=["%Y/%m/%d"],
                                                        quoted_strings_can_be_null=False))
    theirs, their_err = outcome(pacsv.read_csv, data, **options)
    ours, our_err = outcome(lambda source, **kw: arrow_bridge.read_csv(path, **kw, **read), data, **options)
    _assert_same_outcome(ours, our_err, theirs, their_err)


@pytest.mark.parametrize("later", [b"NA,5\n", b'"NA",5\n', b",5\n", b'"",5\n'])
def test_a_stream_types_its_timestamps_with_quoted_null_spellings_as_text(later):
    """The first block settles timestamps; a later block's null spellings are null unquoted
    only (a quoted one is no timestamp: pyarrow's error)."""
    data = b"a,b\n" + b"2020/01/02,3\n" * 2000 + later
    co = pacsv.ConvertOptions(timestamp_parsers=["%Y/%m/%d"], quoted_strings_can_be_null=False)
    theirs, their_err = outcome(lambda source: pacsv.open_csv(
        source, convert_options=co, read_options=pacsv.ReadOptions(block_size=4096)).read_all(), data)
    ours, our_err = outcome(lambda source: arrow_bridge.open_csv(source, convert_options=co, block_size=4096).read_all(),
                            data)
    _assert_same_outcome(ours, our_err, theirs, their_err)
    assert (their_err is None) == (b'"' not in later)


@pytest.mark.parametrize("later", [b"", b"NA\n", b"24.00\n"], ids=["dates", "null", "no time"])
def test_a_stream_reads_float_like_timestamps_as_pyarrow(later):
    """``%H.%M`` reads the first block's floats: pyarrow's stream types the column as timestamps."""
    data = b"a\n" + b"".join(b"%d.%02d\n" % (i % 24, i % 60) for i in range(2000)) + later
    co = pacsv.ConvertOptions(timestamp_parsers=["%H.%M"])
    theirs, their_err = outcome(lambda source: pacsv.open_csv(
        source, convert_options=co, read_options=pacsv.ReadOptions(block_size=4096)).read_all(), data)
    ours, our_err = outcome(lambda source: arrow_bridge.open_csv(source, convert_options=co, block_size=4096).read_all(),
                            data)
    _assert_same_outcome(ours, our_err, theirs, their_err)


def _assert_same_outcome(ours: Optional[pa.Table], our_err: Optional[BaseException], theirs: Optional[pa.Table],
                         their_err: Optional[BaseException]) -> None:
    assert (our_err is None) == (their_err is None), (our_err, their_err)
    if their_err is not None:
        assert isinstance(our_err, caught_as(their_err)), (our_err, their_err)
    else:
        assert_equal_tables(ours, theirs)


# ---------------------------------------------------------------------------------------------
# Everything at once, and the streaming reader.
# ---------------------------------------------------------------------------------------------
def test_all_options_together():
    data = (b"junk\nid;price;day;when;tag;raw\n"
            b"1;1,50;2020-01-01;01/02/2020 10:00;x;ab\n\n2;-2,25;2020-01-02;02/02/2020 11:00;y;cd\n"
            b"3;NA;;;x;ef\n")
    ro = pacsv.ReadOptions(skip_rows=1, use_threads=False, block_size=1 << 16)
    po = pacsv.ParseOptions(delimiter=";", ignore_empty_lines=True)
    co = pacsv.ConvertOptions(column_types={"price": pa.decimal128(6, 2), "day": pa.date64(), "raw": pa.binary(2)},
                              timestamp_parsers=["%d/%m/%Y %H:%M"], auto_dict_encode=True, decimal_point=",",
                              include_columns=["id", "price", "day", "when", "tag", "raw", "missing"],
                              include_missing_columns=True)
    ours = assert_same(data, read_options=ro, parse_options=po, convert_options=co)
    assert [str(t) for t in ours.schema.types] == [
        "int64", "decimal128(6, 2)", "date64[ms]", "timestamp[s]",
        "dictionary<values=string, indices=int32, ordered=0>", "fixed_size_binary[2]", "null"]


@pytest.mark.parametrize("options", [
    dict(auto_dict_encode=True), dict(auto_dict_encode=True, auto_dict_max_cardinality=3),
    dict(timestamp_parsers=["%d/%m/%Y %H:%M"]), dict(column_types={"p": pa.decimal128(6, 2), "d": pa.date64()}),
    dict(column_types={"t": pa.dictionary(pa.int32(), pa.string())}),
], ids=str)
def test_stream_takes_the_options(options):
    data = b"p,d,w,t\n" + b"".join(b"%d.25,2020-01-%02d,%02d/01/2020 10:00,t%d\n" % (i, i % 28 + 1, i % 28 + 1, i % 3)
                                   for i in range(400))
    co = pacsv.ConvertOptions(**options)
    ours = arrow_bridge.open_csv(io.BytesIO(data), convert_options=co, block_size=1 << 12)
    theirs = pacsv.open_csv(io.BytesIO(data), convert_options=co, read_options=pacsv.ReadOptions(block_size=1 << 12))
    assert ours.schema == theirs.schema
    assert ours.read_all().combine_chunks().equals(theirs.read_all().combine_chunks())


_NUMBERS = b"a,b\n" + b"".join(b"%d,%d\n" % (i, 7 * i) for i in range(150_000))  # 1.9 MB


@pytest.mark.parametrize("data, block_size", [
    (_NUMBERS, None), (_NUMBERS[:400_000], 4096), (_NUMBERS[:400_000].replace(b"\n", b"\r\n"), 4096),
    (b"\xef\xbb\xbfskipped\n" + _NUMBERS, 1 << 16), (b"a\nx\ny\nz\nw\n", 6), (b"a\n1\n2\n3.5\n", 6),
    (b"a\n" + b"1\n" * 5 + b"1.5\r\n2\n", 16), (b"a\n" + b"1\r" * 5 + b"1.5\r2\r", 16),
    ("ab\n1\n1\n1.5\n2\n".encode("utf-8-sig"), 11), (b"c0\n22\n\n22\n-3\n22\n123456\nx\n", 9),
], ids=["default", "4 KiB", "CRLF", "BOM and a skipped row", "dictionary", "int then float", "CR ends the block",
        "lone CR ends the block", "utf-8-sig", "rows skipped past the block"])
def test_a_streams_first_batch_is_pyarrows_first_block(data, block_size):
    """The types come from the same rows as pyarrow's: the file's first block_size bytes
    (of its decoded text; the next block where the header or skipped rows fill it)."""
    skip = int(data.startswith(b"\xef\xbb\xbfskipped"))
    options = dict(skip_rows=skip, encoding="utf-8-sig" if data.startswith(b"\xef\xbb\xbfab") else "utf8",
                   skip_rows_after_names=3 if data.startswith(b"c0") else 0)
    read_options = pacsv.ReadOptions(**options, **({"block_size": block_size} if block_size else {}))
    co = pacsv.ConvertOptions(auto_dict_encode=True, auto_dict_max_cardinality=1)
    theirs, their_err = outcome(lambda source: pacsv.open_csv(source, read_options=read_options, convert_options=co),
                                data)
    ours, our_err = outcome(lambda source: arrow_bridge.open_csv(source, read_options=read_options,
                                                                 convert_options=co), data)
    assert our_err is None and their_err is None, (our_err, their_err)
    assert ours.schema == theirs.schema and ours.read_next_batch().num_rows == theirs.read_next_batch().num_rows
    theirs, their_err = outcome(lambda source: pacsv.open_csv(source, read_options=read_options, convert_options=co)
                                .read_all(), data)
    ours, our_err = outcome(lambda source: arrow_bridge.open_csv(source, read_options=read_options,
                                                                 convert_options=co).read_all(), data)
    _assert_same_outcome(ours and ours.combine_chunks(), our_err, theirs and theirs.combine_chunks(), their_err)


def test_stream_later_value_that_breaks_the_first_blocks_type_raises():
    data = b"a\n" + b"x\n" * 300 + b"".join(b"v%d\n" % i for i in range(100))
    co = pacsv.ConvertOptions(auto_dict_encode=True, auto_dict_max_cardinality=5)
    with pytest.raises(pa.ArrowException, match="max cardinality"):
        pacsv.open_csv(io.BytesIO(data), convert_options=co, read_options=pacsv.ReadOptions(block_size=256)).read_all()
    with pytest.raises(pa.ArrowInvalid, match="max cardinality"):
        arrow_bridge.open_csv(io.BytesIO(data), convert_options=co, block_size=256).read_all()


# ---------------------------------------------------------------------------------------------
# Errors stay catchable as pyarrow's, and CsvParseError keeps its fields.
# ---------------------------------------------------------------------------------------------
def test_parse_error_keeps_its_fields_with_new_options():
    data = b"a,b\n1,2\n3,4,5\n"
    co = pacsv.ConvertOptions(auto_dict_encode=True, column_types={"a": pa.decimal128(5, 1)})
    with pytest.raises(pa.ArrowInvalid) as info:
        arrow_bridge.read_csv(io.BytesIO(data), convert_options=co)
    err = info.value
    assert isinstance(err, arrow_bridge.CsvParseError)
    assert (err.line, err.byte_offset) == (3, 8)


@pytest.mark.parametrize("type_", [pa.decimal128(5, 1), pa.date64(), pa.binary(3), pa.timestamp("s")], ids=str)
def test_conversion_errors_are_arrow_invalid(type_):
    co = pacsv.ConvertOptions(column_types={"v": type_}, timestamp_parsers=["%Y"])
    with pytest.raises(pa.ArrowInvalid):
        pacsv.read_csv(io.BytesIO(b"v\n2020\nnope\n"), convert_options=co)
    with pytest.raises(pa.ArrowInvalid):
        arrow_bridge.read_csv(io.BytesIO(b"v\n2020\nnope\n"), convert_options=co)


# ---------------------------------------------------------------------------------------------
# Documented divergences.
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("data", [b"a,b\n", b"a,b\n1,2"])
def test_skip_rows_after_names_past_an_unterminated_end(data):
    """Divergence 1: pyarrow's chunker raises; we give what it gives with the line break."""
    ro = pacsv.ReadOptions(skip_rows_after_names=2)
    with pytest.raises(pa.ArrowInvalid, match="straddl"):
        pacsv.read_csv(io.BytesIO(data), read_options=ro)
    ours = arrow_bridge.read_csv(io.BytesIO(data), read_options=ro)
    assert ours.equals(pacsv.read_csv(io.BytesIO(data + b"\n"), read_options=ro))


@pytest.mark.parametrize("data", [b'a,b\n1,2\n"1",', b'a,b\n"1",'])
@pytest.mark.parametrize("column_types", [{}, {"b": pa.int64()}], ids=["inferred", "int64"])
def test_an_empty_last_field_after_a_quoted_one_is_unquoted(data, column_types):
    """Divergence 4: pyarrow carries the quote of the field before to an empty last field
    that no line break ends (b is text ``['2', '']`` for the first file; as int64, an error)."""
    co = pacsv.ConvertOptions(quoted_strings_can_be_null=False, column_types=column_types)
    theirs, their_err = outcome(pacsv.read_csv, data, convert_options=co)
    assert isinstance(their_err, pa.ArrowInvalid) if column_types else theirs.column("b")[-1].as_py() == ""
    assert_same(data + b"\n", convert_options=co)
    ours = arrow_bridge.read_csv(io.BytesIO(data), convert_options=co)
    assert ours.equals(pacsv.read_csv(io.BytesIO(data + b"\n"), convert_options=co))


def test_block_size_smaller_than_a_row():
    """Divergence 3: pyarrow cannot read a row longer than its block; we can."""
    data = b"a,b\n" + b"x" * 200 + b",1\n"
    with pytest.raises(pa.ArrowInvalid):
        pacsv.read_csv(io.BytesIO(data), read_options=pacsv.ReadOptions(block_size=64))
    ours = arrow_bridge.read_csv(io.BytesIO(data), read_options=pacsv.ReadOptions(block_size=64))
    assert ours.equals(pacsv.read_csv(io.BytesIO(data)))


# ---------------------------------------------------------------------------------------------
# pandas' per-column na_values (and dtype/na_values naming columns the file lacks).
# ---------------------------------------------------------------------------------------------
_PANDAS_DATA = b'a,b,c,d\n1,-,x,1.5\n2,x,-,?\nNA,"-",,2.5\n-,5,NA,-\n'


@pytest.mark.parametrize("keywords", [
    dict(na_values={"b": ["-"]}), dict(na_values={"a": ["-"]}), dict(na_values={"a": "-"}),
    dict(na_values={"a": ["-"]}, keep_default_na=False), dict(na_values={"d": ["?", "-"]}),
    dict(na_values={1: ["-"]}), dict(na_values={"b": ["-", "x"]}, usecols=["b", "c"]),
    dict(na_values={"a": ["-"], "d": ["?", "-"]}, dtype={"a": "float32"}),
    dict(na_values={"d": ["?", "-"]}, dtype={"d": "string"}),
    dict(na_values={"a": ["-", "1"]}, nrows=3),
    dict(na_values={"zz": ["-"]}), dict(dtype={"zz": "int64"}), dict(dtype={"zz": "int64"}, na_values={"yy": ["-"]}),
], ids=str)
def test_per_column_na_values_match_pandas(keywords):
    """The columns named in the dict read as pandas reads them; names the file
    lacks are ignored, as pandas ignores them (no error, no warning)."""
    import warnings

    named = {k for k in keywords.get("na_values", {}) if isinstance(k, str)}
    named |= {"abcd"[k] for k in keywords.get("na_values", {}) if isinstance(k, int)}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = arrow_bridge.read_pandas(io.BytesIO(_PANDAS_DATA), dtype_backend="numpy", **keywords)
        theirs = pd.read_csv(io.BytesIO(_PANDAS_DATA), **keywords)
    assert list(ours.columns) == list(theirs.columns)
    for name in sorted(named & set(theirs.columns)):
        pd.testing.assert_series_equal(ours[name], theirs[name], check_dtype=False)
        assert ours[name].dtype.kind == theirs[name].dtype.kind or theirs[name].dtype == object \
            or str(theirs[name].dtype).startswith("str")


def test_per_column_na_values_in_many_spans_and_a_stream():
    data = b"k,v\n" + b"".join(b"%d,%s\n" % (i, b"-" if i % 7 == 0 else b"%d" % i) for i in range(3000))
    expected = pd.read_csv(io.BytesIO(data), na_values={"v": ["-"]})
    ours = arrow_bridge.read_pandas(io.BytesIO(data), dtype_backend="numpy", na_values={"v": ["-"]},
                                    block_size=2048, n_threads=2)
    pd.testing.assert_frame_equal(ours, expected)
    table = arrow_bridge.read_csv(io.BytesIO(data), na_values={"v": ["-"]}, block_size=2048)
    assert table.column("v").type == pa.int64()
    streamed = arrow_bridge.open_csv(io.BytesIO(data), na_values={"v": ["-"]}, block_size=2048).read_all()
    assert streamed.equals(table)


def test_per_column_na_values_keep_the_other_columns_pyarrow_nulls():
    table = arrow_bridge.read_csv(io.BytesIO(_PANDAS_DATA), na_values={"a": ["-"]})
    assert table.column("a").to_pylist() == [1, 2, None, None]
    assert table.column("b").to_pylist() == ["-", "x", "-", "5"]


@pytest.mark.parametrize("where", [
    dict(), dict(block_size=2048), dict(block_size=2048, n_threads=1), dict(block_size=2048, escapechar="\\"),
    dict(device="modern-gen4", split="dynamic", block_size=16384),
    dict(device="modern-gen4", split="device", block_size=16384, escapechar="\\"),
], ids=["host", "spans", "one thread", "general path", "device", "device general path"])
def test_a_raw_text_column_keeps_every_spelling_on_every_path(where, tmp_path):
    """A column with no null spelling of its own (fewer than the read's): the kernels hand its
    text over as it is, fused or not, host or device, so its finish sees 'NA' and '' apart."""
    words = ["NA", "", "null", "x", '"NA"', '""', "N/A", "y z", "NaN"]
    data = ("a,n,b\n" + "".join(f"{words[i % 9]},{i},{words[(i * 5) % 9]}\n" for i in range(4000))).encode()
    path = tmp_path / "raw.csv"
    path.write_bytes(data)
    table = arrow_bridge.read_csv(path, semantics="pandas", raw_text_columns=["a"],
                                  dtype={"a": "string"}, **where)
    expected = [row[0] for row in csv.reader(io.StringIO(data.decode()))][1:]
    assert table.column("a").to_pylist() == expected
    assert table.column("b").null_count == sum(words[(i * 5) % 9] not in ("x", "y z") for i in range(4000))
    streamed = arrow_bridge.open_csv(io.BytesIO(data), semantics="pandas", raw_text_columns=["a"],
                                     dtype={"a": "string"}, block_size=2048).read_all()
    assert streamed.column("a").to_pylist() == expected


@pytest.mark.parametrize("n_threads", [1, 2])
def test_spellings_with_doubled_quotes_are_read_unescaped(n_threads):
    """A null or bool spelling holding a quote, written doubled in a quoted field, matches its unescaped self."""
    data = b'a,b,c\n' + b'"t""x",1,"N""A"\n"N""A",2,x\nf,"N""A",\n' * 700
    convert = pacsv.ConvertOptions(null_values=['N"A', ""], true_values=['t"x'], false_values=["f"],
                                   quoted_strings_can_be_null=True, strings_can_be_null=True)
    expected = pacsv.read_csv(io.BytesIO(data), convert_options=convert)
    assert expected.schema.types == [pa.bool_(), pa.int64(), pa.string()]
    got = arrow_bridge.read_csv(io.BytesIO(data), convert_options=convert, block_size=4096, n_threads=n_threads)
    assert got.equals(expected)
