"""pandas keywords through ``read_pandas``: the frame ``pandas.read_csv`` gives
(index, dtypes, values), keyword by keyword, on a clean file, a messy one and
files made for the keyword (comment lines, spaces after delimiters, thousands
separators, two header rows, a custom line terminator, compressed bytes)."""
from __future__ import annotations

import bz2
import csv
import gzip
import io
import lzma
import pickle
import random
import tarfile
import warnings
import zipfile
from decimal import Decimal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pytest

import arrow_bridge
from arrow_bridge.errors import CsvParseError
from csvgen import NonSeekableStream

CLEAN = b"id,name,day,score\n" + b"".join(
    b"%d,n%d,2020-01-%02d,%d.5\n" % (i, i % 7, 1 + i % 28, i) for i in range(60))
# quoted delimiters and line breaks, repeated names, CRLF line ends
MESSY = b"id,name,day,score\r\n" + b"".join(
    b'%d,"n,%d",2021-02-%02d,%d\r\n' % (i, i % 3, 1 + i % 28, -i) if i % 4 else
    b'%d,"two\nlines",2021-02-%02d,%d\r\n' % (i, 1 + i % 28, i) for i in range(40))

CASES = {
    "index_col name": dict(index_col="id"),
    "index_col position": dict(index_col=0),
    "index_col list": dict(index_col=["name", "id"]),
    "index_col every column": dict(index_col=[0, 1, 2, 3]),  # no columns left: pandas' empty Index is of objects
    "parse_dates": dict(parse_dates=["day"]),
    "parse_dates with date_format": dict(parse_dates=["day"], date_format="%Y-%m-%d"),
    "parse_dates position and index": dict(parse_dates=[2], index_col="id"),
    "converters": dict(converters={"name": str.upper}),
    "skipfooter": dict(skipfooter=3),
    "dtype category per column": dict(dtype={"name": "category"}),
    "usecols callable": dict(usecols=lambda name: name in ("id", "score")),
    "usecols callable and index": dict(usecols=lambda name: name != "day", index_col="name"),
}


@pytest.mark.parametrize("data", [CLEAN, MESSY], ids=["clean", "messy"])
@pytest.mark.parametrize("case", list(CASES))
def test_frame_keywords_give_pandas_frame(data, case):
    options = CASES[case]
    expected = pd.read_csv(io.BytesIO(data), **options, **({"engine": "python"} if "skipfooter" in options else {}))
    got = arrow_bridge.read_pandas(io.BytesIO(data), dtype_backend="numpy", **options)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


CONVERTER_CASES = {  # a converter gets each value's text; pandas then makes its NA spellings missing
    "empty fields": (b"a,b\n1,\n,y\n", dict(converters={"a": repr, "b": repr})),
    "NA spellings and an empty quoted field": (b'a,b\nNA,\nx,1\n"",2\n', dict(converters={"a": repr})),
    "what it returns made missing": (b"a,b\nNA,\nx,1\n", dict(converters={"a": lambda s: s})),
    "na_filter=False": (b"a,b\nNA,\nx,1\n", dict(converters={"a": lambda s: s}, na_filter=False)),
    "keep_default_na=False": (b"a,b\nNA,\nx,1\n", dict(converters={"a": lambda s: s}, keep_default_na=False)),
    "the column's own na_values": (b"a,b\nNA,\n-,1\n", dict(converters={"a": lambda s: s}, na_values={"a": ["-"]})),
    "na_values by position": (b"a,b\nx,1\n-,2\n", dict(converters={"a": len}, na_values={0: ["-", "x"]})),
    "a number for the empty text": (b"a,b\n1,\n2,y\n,z\n", dict(converters={"a": lambda s: int(s) if s else -1})),
    "by position": (b"a,b\n1,\n2,y\n,z\n", dict(converters={0: lambda s: s + "!"})),
    "by name and by position: the name's": (b"a,b\nx,y\n", dict(converters={"a": str.upper, 0: lambda s: s + "!"})),
    # one text dtype for every column: thousands leaves their text as written
    "a text dtype and thousands": (b'a,b\n+5,x\n"1,000",y\n00,z\n', dict(converters={"b": str.upper}, dtype=str,
                                                                        thousands=",")),
    "a text dtype, thousands, another column's": (b'a,b\n+5,x\n"1,000",y\n', dict(converters={"zz": str},
                                                                                  dtype=str, thousands=",")),
    "an index, an object dtype and thousands": (b'a,b\nx,+5\ny,"1,000"\n', dict(converters={"zz": str},
                                                                                  dtype=object, thousands=",",
                                                                                  index_col=0)),
    "a numeric dtype and thousands": (b'a,b,c\n"1,000","2,000",x\n', dict(converters={"c": str.upper},
                                                                          dtype="float64", thousands=",")),
    # and numbers (bools too) equal to a spelling that reads as a number
    "a number equal to a spelling": (b"a,b\nx,1\nyy,2\n", dict(converters={"a": len}, na_values=["1.0"])),
    "a bool equal to one": (b"a,b\nTrue,1\nx,2\n", dict(converters={"a": lambda s: s == "True"}, na_values=["0"])),
    "a float, its own spelling": (b"a,b\nx,1\ny,2\n", dict(converters={"a": lambda s: 5.0}, na_values={"a": ["5"]})),
    "but not with na_filter=False": (b"a,b\nx,1\n", dict(converters={"a": len}, na_values=["1"], na_filter=False)),
    "exactly: a big int is no float": (b"a,b\n9223372036854775806,1\n", dict(converters={"a": int},
                                                                             na_values=["9223372036854775807"])),
    "na_values by position, a converter by name": (b"a,b\n1,1\n2,2\n", dict(converters={"a": int},
                                                                              na_values={0: ["1"], "b": ["2"]})),
    "a Decimal equal to one": (b"a,b\n1,1\n2,2\n", dict(converters={"a": Decimal}, na_values=["1"])),
    "a NumPy timedelta": (b"a,b\n1,1\n", dict(converters={"a": lambda s: np.timedelta64(int(s), "s")},
                                             na_values=["5"])),
    # no rows: nothing converted, and pandas gives the column the dtype asked of it
    "no rows, a dtype for it": (b"a,b\n", dict(converters={"a": str}, dtype={"a": "Int64"})),
    "no rows, one dtype": (b"a,b\n", dict(converters={"a": str}, dtype="float64")),
    "no rows, one category dtype": (b"a,b\n", dict(converters={0: str}, dtype="category")),
}


def _reads_as_pandas(data: bytes, **keywords) -> None:
    """read_pandas (NumPy dtypes) gives pandas.read_csv's frame for ``data``, exactly (chunk by
    chunk, given a ``chunksize``)."""
    got = arrow_bridge.read_pandas(io.BytesIO(data), dtype_backend="numpy", **keywords)
    expected = pd.read_csv(io.BytesIO(data), **keywords)
    for mine, theirs in zip(got, expected, strict=True) if "chunksize" in keywords else [(got, expected)]:
        pd.testing.assert_frame_equal(mine, theirs, check_exact=True)


PARSE_DATES_LEFT_AS_TEXT = {  # pandas.read_csv leaves a column to_datetime cannot parse as its text
    "a signed number": (b"a\n+7726153\n", dict(parse_dates=["a"])),
    "one value of two": (b"a\n2020-01-01\nzz\n", dict(parse_dates=["a"])),
    "one column of two": (b"a,b\nx,2020-01-01\n", dict(parse_dates=["a", "b"])),
    "a number": (b"a\n1\n", dict(parse_dates=["a"])),
    "out of its format": (b"a\n2020-13-45\n", dict(parse_dates=["a"], date_format="%Y-%m-%d")),
    "the index": (b"a,b\nzz,1\n", dict(parse_dates=True, index_col="a")),
    "no rows": (b"a,b\n", dict(parse_dates=["b"])),
}
INDEX_DATES = {  # pandas parses an index level's text; where that fails, types it by its values
    "ints": (b"a,b\n007,1\n2,2\n", dict(index_col="a", parse_dates=["a"])),
    "yyyymmdd: dates": (b"a,b\n20200102,1\n20200103,2\n", dict(index_col="a", parse_dates=True)),
    "floats with a gap, by position": (b"a,b\n1.5,1\n,2\n", dict(index_col=0, parse_dates=[0])),
    "booleans with a gap: objects": (b"a,b\nTrue,1\n,2\n", dict(index_col="a", parse_dates=["a"])),
    "one level of two": (b"a,b,c\n1,x,2020-01-02\n2,y,2020-01-03\n", dict(index_col=["a", "c"], parse_dates=["a", "c"])),
    "text stays text": (b"a,b\nzz,1\n,2\n", dict(index_col="a", parse_dates=["a"])),
    "yyyymmdd by position": (b"a,b\n20200102,1\n20200103,2\n", dict(index_col=0, parse_dates=True)),
    "levels by position": (b"a,b,c\n1,20200102,1\n2,20200103,2\n", dict(index_col=[0, 1], parse_dates=True)),
    "date_format alone: the index's": (b"a,b\n2020-01-01,2\n", dict(index_col=0, date_format="%Y-%m-%d")),
    # pandas' implicit index is typed, then parsed from its values' text, kept where that fails
    "implicit, numbers: their text": (b"a\n1,\nNA,\n", dict(parse_dates=True)),
    "implicit, ints as dates": (b"a\n20200102,\n", dict(parse_dates=True)),
    "implicit, with date_format": (b"a\n1.5,x\n2020-01-01,y\n", dict(date_format="%Y-%m-%d")),
    "implicit, a gap only": (b"a\n,1\n", dict(date_format="%Y-%m-%d")),
    "implicit, two levels": (b"a\n1,2,\n", dict(parse_dates=True)),
    "no rows: an empty Index of objects": (b",,,,\n", dict(index_col=4, parse_dates=True)),
}


@pytest.mark.parametrize("data", [b"a,b\n1,x\n2,y\n", b'a\n"1"\nNA\n', b"a\n100000000000000000000\n", b"a\nTrue\n",
                                  b'a\n"1,234"\n5\n'])
@pytest.mark.parametrize("options", [{}, dict(dtype={"a": "int64"}), dict(chunksize=1), dict(index_col="a"),
                                     dict(thousands=",")],
                         ids=["inferred", "an int dtype", "chunks", "the index", "thousands"])
def test_quote_nonnumeric_infers_floats_as_pandas(data, options):
    """pandas' C parser infers no integer column under QUOTE_NONNUMERIC (floats, past int64
    too); a dtype asked for still applies."""
    keywords = dict(quoting=csv.QUOTE_NONNUMERIC, **options)
    try:
        expected = pd.read_csv(io.BytesIO(data), **keywords)
    except (ValueError, OverflowError):  # (an int dtype over NA or past int64: pandas raises, as do we)
        with pytest.raises((ValueError, OverflowError)):
            arrow_bridge.read_pandas(io.BytesIO(data), dtype_backend="numpy", **keywords)
        return
    got = arrow_bridge.read_pandas(io.BytesIO(data), dtype_backend="numpy", **keywords)
    for mine, theirs in zip(got, expected, strict=True) if "chunksize" in options else [(got, expected)]:
        pd.testing.assert_frame_equal(mine, theirs, check_exact=True)


UNNAMED_INDEX = {  # pandas names no index level made of an empty header field, but one spelled "Unnamed: 0"
    "an empty field": (b",b\n1,2\n", dict(index_col=0)),
    "spelled so": (b'"Unnamed: 0",b\n1,2\n', dict(index_col=0)),
    "spelled so, no rows": (b"Unnamed: 5,b\n", dict(index_col="Unnamed: 5")),
    "one of each": (b",Unnamed: 0\n1,2\n", dict(index_col=[0, 1])),
    "spelled so, in chunks": (b"Unnamed: 0,b\n1,2\n3,4\n", dict(index_col=0, chunksize=1)),
    "given as names": (b"1,2\n", dict(index_col=0, names=["Unnamed: 0", "b"])),
}


@pytest.mark.parametrize("data", [b"a\n.5\n1.5\n", b"a\n-.5e3\n1..5\nNA\n-inf\n", b'a\n"1.5 "\n12.\n',
                                  b"a\n1.234.5\n"])
@pytest.mark.parametrize("options", [dict(thousands="."), dict(thousands=".", chunksize=1),
                                     dict(thousands=".", dtype="float64"), dict(thousands=",", decimal=",", sep=";")],
                         ids=["inferred", "chunks", "float64", "both commas"])
def test_thousands_equal_to_the_decimal_point_as_pandas_floats(data, options):
    """pandas' float parser takes one separator after each digit of the whole part; one
    more, or one before any digit, is the decimal point (``1.5`` is 15, ``.5`` is 0.5)."""
    if options.get("decimal") == ",":
        data = data.replace(b".", b",")
    got = arrow_bridge.read_pandas(io.BytesIO(data), dtype_backend="numpy", **options)
    expected = pd.read_csv(io.BytesIO(data), **options)
    for mine, theirs in zip(got, expected, strict=True) if "chunksize" in options else [(got, expected)]:
        pd.testing.assert_frame_equal(mine, theirs, check_exact=True)


@pytest.mark.parametrize("options", [{}, dict(chunksize=2)], ids=["whole", "chunks"])
def test_thousands_with_na_filter_false_keeps_empty_text(options):
    """Without NA spellings an empty field is text: pandas keeps such a column as text."""
    _reads_as_pandas(b',\n1,\n,",000"\n"1,000",x\n', thousands=",", na_filter=False, **options)


@pytest.mark.parametrize("keywords", [dict(header=0, names=["c", "f"]), dict(names=["c", "f"], usecols=["c", "f"])],
                         ids=["header=0", "usecols"])
def test_names_longer_than_the_fields_pad_where_pandas_refuses(keywords):
    """A documented difference: pandas' C engine raises "Too many columns specified" there;
    we pad, as pandas does without header=0 or usecols."""
    data = b"a\nx\n"
    with pytest.raises(ValueError, match="Too many columns specified"):
        pd.read_csv(io.BytesIO(data), **keywords)
    got = arrow_bridge.read_pandas(io.BytesIO(data), dtype_backend="numpy", **keywords)
    rows = data.split(b"\n", 1)[1] if "header" in keywords else data  # (header=0: the first line is replaced)
    expected = pd.read_csv(io.BytesIO(rows), names=["c", "f"])
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


class NonNumeric(csv.excel):
    quoting = csv.QUOTE_NONNUMERIC


def test_a_dialect_quoting_nonnumeric_infers_floats_with_thousands():
    _reads_as_pandas(b'a\n"1,234"\n5\n', dialect=NonNumeric, thousands=",")


@pytest.mark.parametrize("dtype", ["float64", "float32", {"a": "float64"}])
def test_thousands_with_floats_asked_reads_integers_past_uint64(dtype):
    _reads_as_pandas(b'a\n100000000000000000000\n"1,000,000,000,000,000,000,000"\nNA\n', thousands=",", dtype=dtype)


THOUSANDS_WITH_DTYPES = {  # pandas.read_csv reads these with thousands=","
    "a date column's number dtype first": (b'a\n"1,000"\n', dict(dtype={"a": "int64"}, parse_dates=["a"])),
    "... an extension one": (b'a\n"1,000"\n', dict(dtype={"a": "Int64"}, parse_dates=[0])),
    "floats asked of ints past 2**53": (b'a\n46116860184273879\n"-9,223,372,036,854,775"\n', dict(dtype="float64")),
    "... float32": (b'a\n"46,116,860,184,273,879"\n', dict(dtype={"a": "float32"})),
    "... Float64": (b'a\n"46,116,860,184,273,879"\n', dict(dtype={"a": "Float64"})),
    "a repeat of a str field": (b'e,e,\n,"0,1"\n', dict(dtype={"e": str})),
    "... of a category": (b'e,e\n"1,000","2,000"\n', dict(dtype={"e": "category"})),
    "... of a converter's": (b'e,e\n"1,000","2,000"\n', dict(converters={"e": str})),
    "... of a converter's, one dtype for all": (b'e,e\n"1,000","2,000"\n', dict(converters={"e": str}, dtype="int64")),
    "... of a converter's, one extension dtype for all": (b'e,e\n"1,000","2,000"\n', dict(converters={"e": str},
                                                                                        dtype="Int64")),
    "a date column, one number dtype for all": (b'a\n"1,000"\n"2,000"\n', dict(dtype="int32", parse_dates=["a"])),
}


@pytest.mark.filterwarnings("ignore:Both a converter and dtype")  # pandas' warning, from both reads
@pytest.mark.parametrize("case", list(THOUSANDS_WITH_DTYPES))
def test_thousands_with_dtypes_as_pandas(case):
    data, keywords = THOUSANDS_WITH_DTYPES[case]
    _reads_as_pandas(data, thousands=",", **keywords)


@pytest.mark.parametrize("na_values", [{"b": ["0"]}, {1: ["0"]}, {"b": ["x", "0"], "a": ["1"]}],
                         ids=["by name", "by position", "two columns"])
@pytest.mark.parametrize("options", [{}, dict(keep_default_na=False), dict(chunksize=1)],
                         ids=["defaults too", "its own only", "chunks"])
def test_thousands_floats_take_a_columns_numeric_na_values(na_values, options):
    """pandas' float of "1,234.5" and "-0" takes na_values "0": -0.0 is 0 (the column's own)."""
    _reads_as_pandas(b'a,b\n1,"1,234.5"\n2,-0\n3,0.0\n', thousands=",", na_values=na_values, **options)


@pytest.mark.parametrize("case", list(UNNAMED_INDEX))
def test_an_unnamed_index_level_as_pandas(case):
    data, keywords = UNNAMED_INDEX[case]
    got = arrow_bridge.read_pandas(io.BytesIO(data), dtype_backend="numpy", **keywords)
    expected = pd.read_csv(io.BytesIO(data), **keywords)
    for mine, theirs in zip(got, expected, strict=True) if "chunksize" in keywords else [(got, expected)]:
        pd.testing.assert_frame_equal(mine, theirs, check_exact=True)


@pytest.mark.filterwarnings("ignore:Could not infer format")  # pandas' own, from both reads
@pytest.mark.parametrize("case", list(INDEX_DATES))
def test_parse_dates_of_an_index_as_pandas(case):
    _reads_as_pandas(*INDEX_DATES[case][:1], **INDEX_DATES[case][1])


@pytest.mark.parametrize("case", list(PARSE_DATES_LEFT_AS_TEXT))
def test_parse_dates_leaves_what_it_cannot_parse_as_text(case):
    data, keywords = PARSE_DATES_LEFT_AS_TEXT[case]
    _reads_as_pandas(data, **keywords)


PARSE_DATES_WITH_A_DTYPE = {  # pandas reads the dtype, then parses the text of its values
    "yyyymmdd ints": (b"a,b\n20200102,1\n20200103,2\n", {"a": "int64"}),
    "floats as text": (b"a,b\n1,1\n,2\n", {"a": "float64"}),
    "category of numbers": (b"a,b\n1.5,1\n2,2\n", {"a": "category"}),
    "category of dates": (b"a,b\n2020-01-02,1\n2020-01-03,2\n", {"a": "category"}),
    "booleans as text": (b"a,b\nTrue,1\nFalse,2\n", {"a": "boolean"}),
    "Int64 as text": (b"a,b\n1,1\n2,2\n", {"a": "Int64"}),
    "Int64 with a missing value: floats' text": (b"a,b\n1,1\n,2\n", {"a": "Int64"}),
    "string left as str": (b"a,b\n2020-01-02,1\nx,2\n", {"a": "string"}),
    "object holds the dates": (b"a,b\n2020-01-02,1\n,2\n", {"a": "object"}),
    "int64 refusing a date: text": (b"a,b\n2020-01-02,1\n2020-01-03,2\n", {"a": "int64"}),
    "float64 refusing a value: text": (b"a,b\n2020-01-02,1\nx,2\n", {"a": "float64"}),
    "int64 refusing a float: text": (b"a,b\n1.5,1\n2,2\n", {"a": "int64"}),
    "one dtype for every column": (b"a,b\n20200102,1\n", "int64"),
    "no rows": (b"a,b\n", {"a": "Int64"}),
}


@pytest.mark.filterwarnings("ignore:Could not infer format")  # pandas' own, from both reads
@pytest.mark.parametrize("case", list(PARSE_DATES_WITH_A_DTYPE))
def test_parse_dates_reads_a_columns_dtype_first_as_pandas(case):
    data, dtype = PARSE_DATES_WITH_A_DTYPE[case]
    _reads_as_pandas(data, dtype=dtype, parse_dates=["a"])


def test_parse_dates_with_an_extension_dtype_raises_as_pandas():
    data = b"a\n2020-01-02\n"
    with pytest.raises(ValueError, match="Unable to parse string '2020-01-02'"):
        pd.read_csv(io.BytesIO(data), dtype={"a": "Int64"}, parse_dates=["a"])
    with pytest.raises(ValueError, match="Unable to parse string '2020-01-02'"):
        arrow_bridge.read_pandas(io.BytesIO(data), dtype={"a": "Int64"}, parse_dates=["a"])


REPEATED_NAMES = {  # a dtype entry for a header field types its repeats too (a.1, a.2), unless they have their own
    "float64": (b"a,a\n1,2\n", dict(dtype={"a": "float64"})),
    "an entry of its own": (b"a,a\n1,2\n", dict(dtype={"a": "float64", "a.1": "str"})),
    "the repeat's alone": (b"a,a\n1,2\n", dict(dtype={"a.1": "float64"})),
    "an extension dtype, three times": (b"a,b,a,a\n1,x,2,3\n", dict(dtype={"a": "Int8"})),
    "category": (b"a,a\n,\n1,2\n", dict(dtype={"a": "category"})),
    "object: the field's alone": (b"a,a\n1,2\n", dict(dtype={"a": object})),
    "a real a.1 is no repeat": (b"a,a.1\n1,2\n", dict(dtype={"a": "float64"})),
    "usecols the repeat": (b"a,b,a\n1,2,3\n", dict(dtype={"a": "category"}, usecols=["a.1"])),
    "index_col the repeat": (b"a,a\n1,2\n", dict(dtype={"a": "category"}, index_col="a.1")),
    "a converter: the field's alone": (b"a,a\n1,2\n", dict(converters={"a": lambda text: text + "!"})),
    "parse_dates: the field's alone": (b"a,a\n2020-01-01,2\n", dict(parse_dates=["a"])),
    # by position, a dtype types that field alone
    "by position: the field's alone": (b"d,e,d\n1,2,3\n", dict(dtype={0: "str"})),
    "by position, a category": (b"d,e,d\n1,2,3\n", dict(dtype={0: "category"})),
    "by position, an extension dtype": (b"a\ta\n\ta\n", dict(sep="\t", dtype={0: "Float64"})),
    "by position, with thousands": (b'd,e,d\n"1,5",2,"3,5"\n', dict(dtype={0: "str"}, thousands=",")),
    "by name and by position: the name's": (b"d,e,d\n1,2,3\n", dict(dtype={0: "str", "d": "float64"})),
}


@pytest.mark.parametrize("case", list(REPEATED_NAMES))
def test_a_dtype_types_a_repeated_header_fields_repeats_as_in_pandas(case):
    data, keywords = REPEATED_NAMES[case]
    for how in ({}, dict(device="modern-gen4")):
        got = arrow_bridge.read_pandas(io.BytesIO(data), dtype_backend="numpy", **keywords, **how)
        pd.testing.assert_frame_equal(got, pd.read_csv(io.BytesIO(data), **keywords), check_exact=True)


ONE_DTYPE_AND_THE_INDEX = {  # one dtype for every column: pandas infers the index under object, else applies it
    "object, by name": dict(dtype="object", index_col="b"),
    "object, by position": dict(dtype=object, index_col=1),
    "object, the first position": dict(dtype="object", index_col=0),
    "object, two levels": dict(dtype="object", index_col=["b", "a"]),
    "object with dates": dict(dtype="object", parse_dates=["a"], index_col="b"),
    "object with a converter on the index": dict(dtype="object", index_col="b", converters={"b": len}),
    "category": dict(dtype="category", index_col="b"),
    "category with a converter": dict(dtype="category", converters={"c": len}, index_col="a"),
    "string": dict(dtype="string", index_col="b"),
    "float64 with usecols": dict(dtype="float64", index_col="b", usecols=["b"]),
}


@pytest.mark.filterwarnings("ignore:Both a converter and dtype")  # pandas' warning, from both reads
@pytest.mark.parametrize("case", list(ONE_DTYPE_AND_THE_INDEX))
def test_one_dtype_for_every_column_and_the_index_as_in_pandas(case):
    data, keywords = b"a,b,c\n2020-01-01,1,x\n2020-01-02,2,y\n", ONE_DTYPE_AND_THE_INDEX[case]
    _reads_as_pandas(data, **keywords)


@pytest.mark.parametrize("index_col", [0, [0, 1], "a"])
def test_object_by_position_keeps_an_index_level_of_objects(index_col):
    """pandas types a column given object by position by its values at the end, but not an index level."""
    _reads_as_pandas(b"a,b,c\nx,1,y\nz,2,w\n", dtype={0: object}, index_col=index_col)


@pytest.mark.parametrize("keywords, listed", [
    (dict(usecols=lambda label: label in (0, 2)), dict(usecols=[0, 2])),
    (dict(usecols=lambda label: label != 1, index_col=0), dict(usecols=[0, 2], index_col=0)),
], ids=["columns", "and the index"])
def test_a_usecols_callable_gets_column_numbers_with_header_none(keywords, listed):
    """With ``header=None`` pandas labels columns by number, and asks the callable with those
    (pandas 3.1.1 itself then reads no rows, a bug: the list spelling is the referee)."""
    data = b"1,2,3\n4,5,6\n"
    got = arrow_bridge.read_pandas(io.BytesIO(data), dtype_backend="numpy", header=None, **keywords)
    pd.testing.assert_frame_equal(got, pd.read_csv(io.BytesIO(data), header=None, **listed), check_exact=True)


OBJECT_BY_POSITION = {  # pandas reads object by position, but its last step types the column by its values
    "text: str": (b"a,b\n1,2\n", dict(dtype={1: "object"})),
    "a name's object stays": (b"a,b\n1,2\n", dict(dtype={1: object, "a": object})),
    "no value: object": (b"a,b\nx,\n", dict(dtype={1: "object"})),
    "named too: object": (b"a,b\n1,2\n", dict(dtype={1: "object", "b": "object"})),
    "header=None labels are names": (b"a,b\n1,2\n", dict(dtype={1: "object"}, header=None)),
    "dates": (b"a,b\n1,2020-01-01\n", dict(dtype={1: "object"}, parse_dates=["b"])),
}


@pytest.mark.parametrize("case", list(OBJECT_BY_POSITION))
def test_object_by_position_as_in_pandas(case):
    data, keywords = OBJECT_BY_POSITION[case]
    _reads_as_pandas(data, **keywords)


@pytest.mark.parametrize("data, keywords", [
    (b"a,b\n1,2015-01-01\n", dict(usecols=["b"], parse_dates=[0])),
    (b"a,b,c\n2015-01-01,x,2016-01-01\n", dict(usecols=[2, 0], parse_dates=[1])),
    (b"a,b,c\n2015-01-01,x,2016-01-01\n", dict(usecols=["c", "a"], parse_dates=[1, "a"])),
    (b",b,c\n,1987-01-28 01:17:08,x\n", dict(usecols=lambda name: name in ("b", "c"), parse_dates=[0])),
], ids=["names", "positions", "a name too", "callable"])
def test_parse_dates_positions_count_the_columns_usecols_keeps(data, keywords):
    _reads_as_pandas(data, **keywords)


def test_converters_for_columns_the_file_lacks_are_ignored_as_in_pandas():
    keywords = dict(converters={"zz": str, 5: str, "a": str})
    got = arrow_bridge.read_pandas(io.BytesIO(b"a,b\n1,2\n"), dtype_backend="numpy", **keywords)
    pd.testing.assert_frame_equal(got, pd.read_csv(io.BytesIO(b"a,b\n1,2\n"), **keywords), check_exact=True)


@pytest.mark.parametrize("keywords", [
    dict(dtype={"a": "Int64"}, converters={"a": lambda text: text[::-1]}),
    dict(dtype={"a": "float32", "b": "float32"}, converters={"a": len}),
    dict(dtype={0: "float32"}, converters={"a": len}),
    dict(dtype={"a": "float32"}, converters={0: len}),
    dict(dtype={"a": "boolean"}, converters={"a": lambda text: text.strip().lower()}),
    dict(dtype={"a": "category"}, converters={"a": lambda text: text * 2}),
    dict(dtype={"a": object}, converters={"a": len}),  # pandas' last step makes the ints objects
    dict(dtype=object, converters={"a": len}),  # one dtype as a type, not a name (a TypeError before)
    dict(dtype="float64", converters={"a": lambda text: text + "!"}),  # the converter got a float before
    dict(dtype="category", converters={"a": str.strip}),
], ids=["Int64", "float32 and another", "dtype by position", "converter by position", "boolean", "category", "object",
        "object for every column", "float64 for every column", "category for every column"])
def test_a_converter_wins_over_a_dtype_with_pandas_warning(keywords):
    data = b"a,b\nx,1\n y ,2\n"
    with pytest.warns(pd.errors.ParserWarning, match="Both a converter and dtype were specified for column"):
        expected = pd.read_csv(io.BytesIO(data), **keywords)
    with pytest.warns(pd.errors.ParserWarning, match="Both a converter and dtype were specified for column"):
        got = arrow_bridge.read_pandas(io.BytesIO(data), dtype_backend="numpy", **keywords)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


@pytest.mark.filterwarnings("ignore:Both a converter and dtype")  # pandas' warning, from both reads
@pytest.mark.parametrize("case", list(CONVERTER_CASES))
def test_converters_get_the_text_as_pandas_hands_it(case):
    data, keywords = CONVERTER_CASES[case]
    _reads_as_pandas(data, **keywords)


@pytest.mark.parametrize("dtype_backend", ["numpy", "numpy_nullable", "pyarrow"])
def test_dtype_category_for_every_column(dtype_backend):
    got = arrow_bridge.read_pandas(io.BytesIO(CLEAN), dtype="category", dtype_backend=dtype_backend)
    expected = pd.read_csv(io.BytesIO(CLEAN), dtype="category",
                           **({} if dtype_backend == "numpy" else {"dtype_backend": dtype_backend}))
    assert (got.dtypes == "category").all()
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


@pytest.mark.parametrize("data, keywords", [
    (b"a,b\nx,1\n,2\n", dict(dtype={1: "category", "a": "category"})),  # by position: a KeyError once
    (b",\n", dict(dtype={1: "category"})),  # no rows
    (b"0\n", dict(thousands=" ", dtype={"0": "float32"})),  # no rows to read numbers from: an IndexError once
    (b"a,b\n,1\n,2\n", dict(thousands=" ", dtype={"a": "float32"})),  # no values
    (b"1,x,y\n2,z,y\n", dict(header=None, usecols=[1, 2], dtype={2: "category"})),  # labels are file numbers
    (b"1,x,y\n2,z,y\n", dict(header=None, usecols=[1, 2], dtype={1: "category"})),  # not positions
    (b"a,b\nx,1\n", dict(dtype={5: "category", "zz": "category"})),  # columns the file lacks: ignored
], ids=["category by position", "category, no rows", "thousands, no rows", "thousands, all null",
        "category by label 2", "category by label 1", "category, missing columns"])
def test_dtype_keywords_on_columns_without_values(data, keywords):
    _reads_as_pandas(data, **keywords)


@pytest.mark.parametrize("data, keywords", [
    (b"a,b,c\n1,2,3.5\n", dict(usecols=[0, 2], dtype={1: "Int64"})),  # a column not read: ignored
    (b"a,b,c\n1,2,3\n", dict(usecols=["a", "c"], dtype={2: "Int32"})),  # the file's third, the frame's second
    (b"a,b,c\n1,2,3\n", dict(usecols=["a", "c"], dtype={2: "Int32", "c": "Int8"})),  # the name wins
    (b",,,,,\n,,,,,x\n", dict(usecols=[3, 5], dtype={1: "boolean"})),
    (b"a,b,c\n1,2,3\n", dict(index_col=0, dtype={1: "Int32", 2: "float32"})),  # the index takes the first
    (b"a,b\n0,1,2\n", dict(dtype={1: "Int32", 2: "float32"})),  # an implicit index's field counts
    (b"a,b,c\n1,2,3\n", dict(dtype={-1: "Int32", 5: "Int32"})),  # positions the file lacks: ignored
    (b"a,b,c\n1,2,3\n", dict(dtype={-1: "category"})),
], ids=["not read", "after usecols", "name first", "boolean, not read", "after the index", "implicit index",
        "missing", "negative category"])
def test_dtype_positions_are_the_files_columns(data, keywords):
    _reads_as_pandas(data, **keywords)


DTYPE_FALLBACKS = {  # pandas infers a column whose values its dtype refused, then casts where it is exact
    "int64 of float spellings": (b"a\n1.0\n2.0\n1e3\n", dict(dtype={"a": "int64"})),
    "uint8 of floats": (b"a\n1.0\n2.0\n", dict(dtype={"a": "uint8"})),
    "int64 of booleans": (b"a\nTrue\nFalse\n", dict(dtype={"a": "int64"})),
    "float32 of booleans with a missing one": (b"a\nTrue\n\n", dict(dtype={"a": "float32"}, skip_blank_lines=False)),
    "bool of 1 and 0": (b"a\n1\n0\n", dict(dtype={"a": "bool"})),
    "Int64 of float spellings": (b"a\n1.0\nNA\n2\n", dict(dtype={"a": "Int64"})),
    "Float64 of ints and floats": (b"a\n1.0\n2\n", dict(dtype={"a": "Float64"})),
    "boolean of 1 and a missing one": (b"a\n1\n\n", dict(dtype={"a": "boolean"}, skip_blank_lines=False)),
    "one dtype for every column": (b"a,b\n1.0,2.0\n3,4.0\n", dict(dtype="int64")),
    "the index": (b"a,b\n1.0,2.0\n3,4.0\n", dict(dtype="int64", index_col="b")),
    "two columns": (b"a,b,c\n1.0,True,x\n2,False,y\n", dict(dtype={"a": "int8", "b": "float64", "c": "str"})),
    "float64 of booleans, na_values of its own": (b"a,b\ntrue,1\nx,2\n", dict(dtype={"a": "float64"},
                                                                            na_values={"a": ["x"]})),
}
DTYPE_FALLBACK_ERRORS = {  # and raises where the cast is not exact, as pandas raises
    "int64 of 2.5": (b"a\n1.0\n2.5\n", dict(dtype={"a": "int64"}), "for float64 dtyped data in column 0"),
    "uint8 of 300": (b"a,b\n1,300\n", dict(dtype={"b": "uint8"}), "uint8 for int64 dtyped data in column 1"),
    "uint8 of -1": (b"a\n-1\n", dict(dtype={"a": "uint8"}), "uint8 for int64 dtyped data in column 0"),
    "int64 of a missing float": (b"a\n1.0\n\n2\n", dict(dtype={"a": "int64"}, skip_blank_lines=False),
                                 "for float64 dtyped data"),
    "int64 of a missing boolean": (b"a\nTrue\n\n", dict(dtype={"a": "int64"}, skip_blank_lines=False),
                                   "due to NA values"),
    "bool of 2": (b"a\n1\n2\n", dict(dtype={"a": "bool"}), "bool for int64 dtyped data"),
    "Int64 of 1.5": (b"a\n1.5\n", dict(dtype={"a": "Int64"}), "cannot safely cast non-equivalent"),
}


@pytest.mark.parametrize("case", list(DTYPE_FALLBACKS))
def test_a_dtype_that_refuses_a_value_falls_back_as_in_pandas(case):
    data, keywords = DTYPE_FALLBACKS[case]
    _reads_as_pandas(data, **keywords)


def test_a_later_chunks_refusal_names_its_own_value_as_pandas():
    data = b"a\n1\n1.0\nx\n2\n"
    with pytest.raises(ValueError, match="invalid literal for int.. with base 10: 'x'"):
        list(pd.read_csv(io.BytesIO(data), dtype={"a": "int64"}, chunksize=1))
    with pytest.raises(ValueError, match="invalid literal for int.. with base 10: 'x'"):
        list(arrow_bridge.read_pandas(io.BytesIO(data), dtype={"a": "int64"}, chunksize=1))
    with pytest.raises(arrow_bridge.CsvParseError, match="3: column 'a': cannot convert '1.0' to int64"):
        arrow_bridge.read_pandas(io.BytesIO(data), dtype={"a": "int64"})  # the whole read: located, as before


@pytest.mark.parametrize("case", list(DTYPE_FALLBACKS))
def test_a_dtype_falls_back_per_chunk_as_in_pandas(case):
    """A chunk whose value the dtype refuses: the stream reopens with that column typed
    per chunk, cast as pandas casts each chunk (earlier chunks keep the dtype as read)."""
    data, keywords = DTYPE_FALLBACKS[case]
    with arrow_bridge.read_pandas(io.BytesIO(data), dtype_backend="numpy", chunksize=1, **keywords) as ours:
        for mine, theirs in zip(ours, pd.read_csv(io.BytesIO(data), chunksize=1, **keywords), strict=True):
            pd.testing.assert_frame_equal(mine, theirs, check_exact=True)


@pytest.mark.filterwarnings("ignore:invalid value encountered in cast:RuntimeWarning")  # pandas' own cast of NaN
@pytest.mark.parametrize("case", list(DTYPE_FALLBACK_ERRORS))
def test_a_dtype_fallback_that_is_not_exact_raises_as_in_pandas(case):
    data, keywords, message = DTYPE_FALLBACK_ERRORS[case]
    with pytest.raises((ValueError, TypeError), match=message) as expected:
        pd.read_csv(io.BytesIO(data), **keywords)
    with pytest.raises(expected.type, match=message):
        arrow_bridge.read_pandas(io.BytesIO(data), **keywords)


def test_a_dtype_fallback_reads_any_source_twice_and_keeps_the_readers_error_otherwise(tmp_path):
    data = b"a,b\n" + b"".join(b"%d.0,x%d\n" % (i, i) for i in range(3000)) + b"7.5,y\n"
    path = tmp_path / "floats.csv"
    path.write_bytes(data)
    with pytest.raises(ValueError, match="int64 for float64 dtyped data in column 0"):
        pd.read_csv(path, dtype={"a": "int64"})
    fits = data.replace(b"7.5,", b"7.0,")
    path.write_bytes(fits)
    expected = pd.read_csv(path, dtype={"a": "int64"})
    for source in (path, io.BytesIO(fits), fits):
        for how in ({}, dict(block_size=1000), dict(device="modern-gen4", block_size=1000)):
            got = arrow_bridge.read_pandas(source, dtype_backend="numpy", dtype={"a": "int64"}, **how)
            pd.testing.assert_frame_equal(got, expected, check_exact=True)
            if hasattr(source, "seek"):
                source.seek(0)
    with pytest.raises(arrow_bridge.CsvParseError, match="cannot convert '0.0' to int64"):  # a pipe: read once
        arrow_bridge.read_pandas(NonSeekableStream(fits), dtype={"a": "int64"})
    with pytest.raises(arrow_bridge.CsvParseError, match="cannot convert 'x0' to double"):  # text: the error stands
        arrow_bridge.read_pandas(path, dtype={"b": "float64"})


CATEGORY_FILES = {  # pandas reads the categories as numbers or booleans where every one reads as such
    "ints, floats, booleans": (b"a,b,c,d\nx,1,1.5,True\ny,2,2,false\nx,,1.50,TRUE\n", {}),
    "other spellings": (b"a,b\ntRuE,yes\nFALSE,no\n", dict(true_values=["yes"], false_values=["no"])),
    "text after all": (b"a,b\n1,2020-01-01\nx,2021-01-01\n", {}),
    "decimal comma": (b"a;b\n1,5;x\n2;y\n", dict(sep=";", decimal=",")),
    "thousands": (b'a\n"1,000"\n2\n', dict(thousands=",")),
    "thousands: numbers stay text": (b"a\n1.5\n2\n", dict(thousands=",")),
    "past int64": (b"a\n%d\n2\n1e400\n" % 2**70, {}),
    "only missing": (b"a,b\nNA,1\n,2\n", {}),
}


@pytest.mark.parametrize("dtype", [{"b": pd.CategoricalDtype([1, 2])}, {"a": pd.CategoricalDtype(["x", "z"], ordered=True)},
                                   pd.CategoricalDtype(["x", "y"]), pd.CategoricalDtype(ordered=True),
                                   {"b": pd.CategoricalDtype([True, False])}],
                         ids=["int categories", "ordered", "for every column", "ordered, no categories", "booleans"])
def test_a_categorical_dtype_reads_as_pandas_reads_it(dtype):
    """Given categories are converted to their type; a value not among them is missing (pandas warns)."""
    data = b"a,b\nx,1\ny,2\nx,3\n"
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        expected = pd.read_csv(io.BytesIO(data), dtype=dtype)
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        got = arrow_bridge.read_pandas(io.BytesIO(data), dtype=dtype, dtype_backend="numpy")
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]


@pytest.mark.skipif(not hasattr(pd.Categorical, "_maybe_convert_categories"),
                    reason="pandas before 3.1 keeps text categories, as read_pandas then does")
@pytest.mark.parametrize("case", list(CATEGORY_FILES))
def test_category_columns_get_the_categories_pandas_infers(case):
    data, keywords = CATEGORY_FILES[case]
    for dtype in ("category", {"a": "category"}):
        got = arrow_bridge.read_pandas(io.BytesIO(data), dtype=dtype, dtype_backend="numpy", **keywords)
        pd.testing.assert_frame_equal(got, pd.read_csv(io.BytesIO(data), dtype=dtype, **keywords), check_exact=True)


@pytest.mark.parametrize("keyword, value", [("engine", "c"), ("low_memory", False), ("memory_map", True),
                                            ("float_precision", "round_trip")])
def test_engine_keywords_are_accepted_with_a_warning_at_the_callers_line(keyword, value):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        frame = arrow_bridge.read_pandas(io.BytesIO(CLEAN), **{keyword: value})
    assert len(frame) == 60
    assert [str(w.message) for w in seen] == [f"read_csv({keyword}={value!r}) is ignored: "
                                              f"{arrow_bridge.options.IGNORED_PANDAS_KEYWORDS[keyword]}"]
    assert seen[0].filename == __file__


CHUNKED_CASES = {name: options for name, options in CASES.items() if name != "skipfooter"}
CHUNKED_CASES.update({
    "thousands": dict(thousands=",", usecols=["id", "score"]),
    "header rows": dict(header=[0, 1]),
    "index and categories": dict(index_col=[3, 0], dtype={"name": "category"}),
})


@pytest.mark.parametrize("data", [CLEAN, MESSY], ids=["clean", "messy"])
@pytest.mark.parametrize("case", list(CHUNKED_CASES))
def test_frame_keywords_shape_each_chunk_as_pandas_does(data, case):
    """pandas shapes each chunk on its own (its index, dates, converters, categories);
    frames without an index_col keep counting rows from the previous one."""
    options = CHUNKED_CASES[case]
    with arrow_bridge.read_pandas(io.BytesIO(data), dtype_backend="numpy", chunksize=7, **options) as chunks:
        got = list(chunks)
    expected = list(pd.read_csv(io.BytesIO(data), chunksize=7, **options))
    assert len(got) == len(expected) > 1
    for ours, theirs in zip(got, expected):
        pd.testing.assert_frame_equal(ours, theirs, check_exact=True)


def test_a_footer_dropped_after_the_read_is_refused_with_chunks():
    with pytest.raises(NotImplementedError, match="skipfooter .* chunksize"):
        arrow_bridge.read_pandas(io.BytesIO(CLEAN), chunksize=10, skipfooter=2, sep=None)


# ---- line keywords, thousands, header rows, compression: a matrix against pandas.read_csv ----------------

# comment lines before the header and between rows, trailing comments, '#' inside quotes, blank lines, CRLF
COMMENTED = (b"# exported by a logger\n#\n"
             b"id,name,score\n"
             b"1,ann,1.5 # first\n"
             b"#2,bob,2.5\n"
             b"\n"
             b'3,"c#d",3.5\r\n'
             b'4,"multi\nline # kept",4.5\n'
             b"5,eve,5.5#tight\n"
             b"6,\"q\"\"#\",6.5\n")
# spaces after the delimiter, a quoted field after a space, a tab (not skipped), leading spaces
SPACED = (b"id, name, score\n"
          b"1, ann, 1.5\n"
          b'2,  "b, c", 2.5\n'
          b"3,\t tab, 3.5\n"
          b'  4, "d", 4.5\n')
# thousands separators in quoted fields, a text column with the separator, floats, NA in a number column
NUMBERS = (b"id,amount,price,label\n"
           b'1,"1,234","1,234.5","a,b"\n'
           b"2,5,6.25,c\n"
           b'3,"12,345,678","-1,000.125","1,2x"\n'
           b'4,NA," 7 ",d\n')
NUMBERS_EU = b"id;amount;price\n1;1.234;1.234,5\n2;5;6,25\n3;12.345.678;-1.000,125\n"
TWO_HEADER_ROWS = b"a,a,b\nx,y,z\n1,2,3\n4,5.5,6\n"
TILDE = b'id,name~1,"a~b"~2,"two\nlines"~3,c~'
CR_ONLY = b"id,name\r1,a\r\r2,b\r"

FILES = {"clean": CLEAN, "messy": MESSY, "commented": COMMENTED, "spaced": SPACED, "numbers": NUMBERS,
         "numbers_eu": NUMBERS_EU, "two_header_rows": TWO_HEADER_ROWS, "tilde": TILDE, "cr_only": CR_ONLY}

# (keywords, the files they are read from)
LINE_CASES = {
    "skiprows list": (dict(skiprows=[1, 3, 4]), ["clean", "messy", "cr_only"]),
    "skiprows list and comment": (dict(skiprows=[1, 3, 4], comment="#"), ["commented"]),
    "skiprows list with the header": (dict(skiprows=[0, 2]), ["clean", "messy"]),
    "skiprows range": (dict(skiprows=range(2, 30, 3)), ["clean", "messy"]),
    "skiprows set": (dict(skiprows={1, 2}), ["clean", "messy"]),
    "skiprows callable": (dict(skiprows=lambda i: i % 3 == 2), ["clean", "messy", "cr_only"]),
    "skiprows callable and comment": (dict(skiprows=lambda i: i % 3 == 2, comment="#"), ["commented"]),
    "skiprows int": (dict(skiprows=3), ["clean", "messy"]),  # pandas counts records: a quoted line break is in one
    "header int": (dict(header=2), ["clean", "messy", "commented"]),
    "header int with names": (dict(header=1, names=["i", "n", "day", "s"]), ["clean", "messy"]),
    "header int after skiprows": (dict(skiprows=[1], header=1), ["clean", "messy"]),
    "comment": (dict(comment="#"), ["commented", "clean", "messy"]),
    "comment, skiprows and header": (dict(comment="#", skiprows=[3], header=1), ["commented"]),
    "comment with usecols callable": (dict(comment="#", usecols=lambda name: name != "name"), ["commented"]),
    "comment with index_col": (dict(comment="#", index_col="id"), ["commented"]),
    "skipinitialspace": (dict(skipinitialspace=True), ["spaced", "clean", "messy"]),
    "skipinitialspace and comment": (dict(skipinitialspace=True, comment="#"), ["spaced", "commented"]),
    "lineterminator ~": (dict(lineterminator="~"), ["tilde"]),
    "lineterminator CR": (dict(lineterminator="\r"), ["cr_only"]),
    "lineterminator LF": (dict(lineterminator="\n"), ["clean", "two_header_rows"]),
    "thousands": (dict(thousands=","), ["numbers", "clean", "messy"]),
    "thousands with a dtype": (dict(thousands=",", dtype={"amount": "float64", "label": "str"}), ["numbers"]),
    "thousands with index_col": (dict(thousands=",", index_col="amount"), ["numbers"]),
    "thousands and decimal": (dict(thousands=".", decimal=",", sep=";"), ["numbers_eu"]),
    "thousands with one dtype": (dict(thousands=".", decimal=",", sep=";", dtype="float64"), ["numbers_eu"]),
    "thousands the decimal point too": (dict(thousands=".", sep=";"), ["numbers_eu"]),  # pandas: 1.5 is 15
    "header rows": (dict(header=[0, 1]), ["two_header_rows", "clean"]),
    "header rows apart": (dict(header=[0, 2]), ["two_header_rows", "clean"]),
    "header rows after skiprows": (dict(header=[0, 1], skiprows=[1]), ["clean"]),
}
LINE_MATRIX = [(case, file) for case, (_, files) in LINE_CASES.items() for file in files]


@pytest.mark.parametrize("case, file", LINE_MATRIX, ids=[f"{case}-{file}" for case, file in LINE_MATRIX])
def test_line_keywords_give_pandas_frame(case, file):
    options, data = LINE_CASES[case][0], FILES[file]
    expected = pd.read_csv(io.BytesIO(data), **options)
    got = arrow_bridge.read_pandas(io.BytesIO(data), dtype_backend="numpy", **options)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


@pytest.mark.parametrize("case", ["skiprows callable", "comment", "thousands", "header int", "skipinitialspace"])
def test_line_keywords_with_the_pyarrow_backend(case):
    options, files = LINE_CASES[case]
    data = FILES[files[0]]
    expected = pd.read_csv(io.BytesIO(data), dtype_backend="pyarrow", **options)
    got = arrow_bridge.read_pandas(io.BytesIO(data), **options)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


def test_line_keywords_stream_in_chunks():
    expected = pd.read_csv(io.BytesIO(COMMENTED), comment="#", skiprows=[4])
    with arrow_bridge.read_pandas(io.BytesIO(COMMENTED), comment="#", skiprows=[4], chunksize=2,
                                  dtype_backend="numpy") as chunks:
        got = pd.concat(list(chunks))
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


def test_line_keywords_from_a_path_and_a_pipe(write_file):
    path = write_file("commented.csv", COMMENTED)
    expected = pd.read_csv(path, comment="#", skiprows=lambda i: i == 4)
    for source in (path, NonSeekableStream(COMMENTED)):
        got = arrow_bridge.read_pandas(source, comment="#", skiprows=lambda i: i == 4, dtype_backend="numpy")
        pd.testing.assert_frame_equal(got, expected, check_exact=True)


def test_comment_in_a_transcoded_file():
    data = COMMENTED.decode().replace("ann", "änn").encode("utf-16")
    expected = pd.read_csv(io.BytesIO(data), comment="#", encoding="utf-16")
    got = arrow_bridge.read_pandas(io.BytesIO(data), comment="#", encoding="utf-16", dtype_backend="numpy")
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


@pytest.mark.parametrize("case", ["skiprows list", "comment", "header int", "header rows"])
def test_line_keywords_with_type_widening_far_down(case):
    """A column whose type widens after the first block is parsed again (re-read through the filter)."""
    data = b"a,b\n" + b"".join(b"%d,%d # c\n" % (i, i) for i in range(40_000)) + b"1,2.5\n"
    options = LINE_CASES[case][0]
    expected = pd.read_csv(io.BytesIO(data), **options)
    got = arrow_bridge.read_pandas(io.BytesIO(data), dtype_backend="numpy", block_size=1 << 16, **options)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


def test_thousands_leave_text_that_is_not_numbers():
    frame = arrow_bridge.read_pandas(io.BytesIO(NUMBERS), thousands=",", dtype_backend="numpy")
    assert frame["amount"].tolist()[:3] == [1234.0, 5.0, 12345678.0] and frame["label"].tolist()[0] == "a,b"


@pytest.mark.parametrize("data, dtype", [(b"v\nfalse\n", "float64"), (b"v\nTrue\nfalse\n", "int64"),
                                         (b"v\nTrue\n\n", "float32"), (b"v\nTRUE\n", "uint8")])
def test_thousands_with_a_numeric_dtype_take_pandas_booleans_as_1_and_0(data, dtype):
    keywords = dict(thousands=",", dtype={"v": dtype}, skip_blank_lines=False)
    pd.testing.assert_frame_equal(arrow_bridge.read_pandas(io.BytesIO(data), dtype_backend="numpy", **keywords),
                                  pd.read_csv(io.BytesIO(data), **keywords), check_exact=True)
    with pytest.raises(ValueError, match="due to NA values"):  # an int dtype holds no missing value, in pandas either
        arrow_bridge.read_pandas(io.BytesIO(b"v\nTrue\n\n"), **{**keywords, "dtype": {"v": "int64"}})


@pytest.mark.parametrize("value, dtype", [("1,234.5", "int64"), ("x", "float64"), ("300", "int8"),
                                          # pandas' nullable dtypes take no bool words
                                          ("true", {"v": "Int64"}), ("false", "Float64"), ("True", "UInt8")])
def test_thousands_with_a_dtype_that_does_not_fit_raise_as_pandas(value, dtype):
    data = f'v\n"{value}"\n'.encode()
    dtype = dtype if isinstance(dtype, dict) or dtype[0].isupper() else {"v": dtype}
    with pytest.raises(ValueError):
        pd.read_csv(io.BytesIO(data), thousands=",", dtype=dtype)
    with pytest.raises(ValueError, match="column 'v'"):
        arrow_bridge.read_pandas(io.BytesIO(data), thousands=",", dtype=dtype)


@pytest.mark.parametrize("options, error, message", [
    (dict(comment="##"), ValueError, "Only length-1 comment characters supported"),
    (dict(lineterminator="\r\n"), ValueError, "Only length-1 line terminators supported"),
    (dict(thousands=",,"), ValueError, "Only length-1 thousands markers supported"),
    (dict(header=[0, 1], names=["a", "b", "c"]), ValueError, "cannot specify names"),
    (dict(header=[0, 1], usecols=[0]), ValueError, "cannot specify usecols"),
    (dict(header=-1), ValueError, "Passing negative integer to header is invalid"),
    (dict(index_col="zz"), ValueError, "Index zz invalid"),
    (dict(index_col=[0, "zz"]), ValueError, "Index zz invalid"),
    (dict(index_col=True), ValueError, "The value of index_col couldn't be 'True'"),
    (dict(parse_dates=["zz"]), ValueError, "Missing column provided to 'parse_dates': 'zz'"),
    (dict(usecols=[0, "a"]), ValueError, "'usecols' must either be list-like of all strings"),
    (dict(usecols="a"), ValueError, "'usecols' must either be list-like of all strings"),
    (dict(usecols=[9]), ValueError, r"Usecols do not match columns, columns expected but not found: \[9\]"),
    (dict(names=["x", "x", "y"]), ValueError, "Duplicate names are not allowed"),
    (dict(sep=",", delimiter=";"), ValueError, "Specified a sep and a delimiter; you can only specify one"),
])
def test_bad_keywords_raise_as_pandas(options, error, message):
    with pytest.raises(error, match=message):
        pd.read_csv(io.BytesIO(TWO_HEADER_ROWS), **options)
    with pytest.raises(error, match=message):
        arrow_bridge.read_pandas(io.BytesIO(TWO_HEADER_ROWS), **options)


@pytest.mark.parametrize("options, keyword", [
    (dict(header=[0, 1], index_col=0), "index_col"),
    (dict(comment="#", sep=None), "comment"),
    (dict(lineterminator="\n"), "lineterminator"),  # CRLF: pandas keeps the CR in the last value
])
def test_what_cannot_be_done_here_says_so(options, keyword):
    with pytest.raises(NotImplementedError, match=keyword):
        arrow_bridge.read_pandas(io.BytesIO(MESSY), **options)


# ---- compression ----------------------------------------------------------------------------------------

def _zip(data: bytes, names=("data.csv",)) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name in names:
            archive.writestr(name, data)
    return out.getvalue()


def _tar(data: bytes) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as archive:
        member = tarfile.TarInfo("data.csv")
        member.size = len(data)
        archive.addfile(member, io.BytesIO(data))
    return out.getvalue()


COMPRESSED = {"gzip": (gzip.compress, ".gz"), "bz2": (bz2.compress, ".bz2"), "xz": (lzma.compress, ".xz"),
              "zip": (_zip, ".zip"), "tar": (_tar, ".tar")}


@pytest.mark.parametrize("method", list(COMPRESSED))
@pytest.mark.parametrize("spelling", ["name", "dict"])
def test_compression_of_file_objects(method, spelling):
    data = COMPRESSED[method][0](MESSY)
    compression = method if spelling == "name" else {"method": method}
    expected = pd.read_csv(io.BytesIO(data), compression=compression)
    got = arrow_bridge.read_pandas(io.BytesIO(data), compression=compression, dtype_backend="numpy")
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


@pytest.mark.parametrize("method", list(COMPRESSED))
@pytest.mark.parametrize("compression", ["infer", "explicit"])
def test_compression_of_paths(method, compression, write_file):
    compress, suffix = COMPRESSED[method]
    path = write_file(f"data.csv{suffix}" if compression == "infer" else "data.bin", compress(MESSY))
    options = {} if compression == "infer" else {"compression": method}
    expected = pd.read_csv(path, **options)
    got = arrow_bridge.read_pandas(path, dtype_backend="numpy", **options)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


def test_compression_with_line_keywords(write_file):
    path = write_file("commented.csv.gz", gzip.compress(COMMENTED))
    expected = pd.read_csv(path, comment="#", skiprows=[3])
    got = arrow_bridge.read_pandas(path, comment="#", skiprows=[3], dtype_backend="numpy")
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


def test_compression_none_reads_a_gz_path_as_it_is(write_file):
    path = write_file("data.csv.gz", gzip.compress(CLEAN))
    with pytest.raises(ValueError):  # pandas: UnicodeDecodeError
        pd.read_csv(path, compression=None)
    with pytest.raises(ValueError):  # ours: CsvParseError, the header is not UTF-8
        arrow_bridge.read_pandas(path, compression=None)


def test_compressed_file_objects_are_not_inferred():
    """pandas infers compression from paths only: a file object of gzip bytes is read as it is."""
    with pytest.raises(ValueError):
        pd.read_csv(io.BytesIO(gzip.compress(CLEAN)))
    with pytest.raises(ValueError):
        arrow_bridge.read_pandas(io.BytesIO(gzip.compress(CLEAN)))


@pytest.mark.parametrize("data, compression, message", [
    (_zip(CLEAN, ("a.csv", "b.csv")), "zip", "Multiple files found in ZIP file"),
    (_zip(CLEAN, ()), "zip", "Zero files found in ZIP file"),
    (gzip.compress(CLEAN), "snappy", "Unrecognized compression type: snappy"),
])
def test_compression_errors_are_pandas(data, compression, message):
    with pytest.raises(ValueError, match=message):
        pd.read_csv(io.BytesIO(data), compression=compression)
    with pytest.raises(ValueError, match=message):
        arrow_bridge.read_pandas(io.BytesIO(data), compression=compression)


def test_zstd_needs_zstandard_as_in_pandas():
    try:
        import zstandard
    except ImportError:
        with pytest.raises(ImportError):
            pd.read_csv(io.BytesIO(b""), compression="zstd")
        with pytest.raises(ImportError, match="zstandard"):
            arrow_bridge.read_pandas(io.BytesIO(b""), compression="zstd")
        return
    data = zstandard.ZstdCompressor().compress(MESSY)
    expected = pd.read_csv(io.BytesIO(data), compression="zstd")
    got = arrow_bridge.read_pandas(io.BytesIO(data), compression="zstd", dtype_backend="numpy")
    pd.testing.assert_frame_equal(got, expected, check_exact=True)



def _random_numbers_file(rng: random.Random, separator: str, decimal: str) -> bytes:
    """Numbers with and without separators (anywhere after the first digit, doubled, trailing), decimals,
    exponents, spaces, infinities, and text that is almost a number."""
    def value() -> str:
        digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 8)))
        pick = rng.random()
        if pick < 0.45:
            # "1,234,567" (built from the right), now and then a group without its separator
            text = "".join(d + separator if n % 3 == 2 and n + 1 < len(digits) and rng.random() < 0.9 else d
                           for n, d in enumerate(reversed(digits)))[::-1]
            if rng.random() < 0.3:
                text += decimal + "".join(rng.choice("0123456789") for _ in range(rng.randint(0, 3)))
            if rng.random() < 0.1:
                text += rng.choice(["e3", "E-2", "e"])
            if rng.random() < 0.15:
                text = "-" + text
            return f" {text} " if rng.random() < 0.1 else text
        if pick < 0.65:
            return digits
        if pick < 0.7:
            return rng.choice(["inf", "-Infinity"])
        if pick < 0.75:
            return rng.choice([separator + digits, digits + separator * 2 + "1", decimal + digits, "x",
                               "1" + separator + "2" + decimal + "3" + separator])
        return digits[:3] + decimal + digits[3:]

    ncols = rng.randint(1, 3)
    rows = [[value() for _ in range(ncols)] for _ in range(rng.randint(1, 5))]
    quoted = [";".join(f'"{v}"' if v != v.strip() else v for v in row) for row in rows]
    return (";".join(f"c{j}" for j in range(ncols)) + "\n" + "\n".join(quoted) + "\n").encode()


@pytest.mark.parametrize("separator, decimal", [(",", "."), (".", ","), (" ", "."), ("'", ".")])
def test_thousands_on_random_numbers_give_pandas_frame(separator, decimal):
    rng = random.Random(7)
    for _ in range(60):
        data = _random_numbers_file(rng, separator, decimal)
        options = dict(sep=";", thousands=separator, decimal=decimal)
        expected = pd.read_csv(io.BytesIO(data), **options)
        got = arrow_bridge.read_pandas(io.BytesIO(data), dtype_backend="numpy", **options)
        pd.testing.assert_frame_equal(got, expected, check_exact=True, obj=repr(data))


@pytest.mark.parametrize("case", ["skiprows list", "skiprows callable", "comment", "header int", "thousands",
                                  "lineterminator ~", "skipinitialspace and comment"])
def test_arrow_keywords_give_read_csv_the_same_table(case):
    """read_csv takes the line keywords too: with pandas' semantics, the Table read_pandas' frame is made of."""
    options, files = LINE_CASES[case]
    data = FILES[files[0]]
    table = arrow_bridge.read_csv(io.BytesIO(data), semantics="pandas", **options)
    frame = arrow_bridge.read_pandas(io.BytesIO(data), **options)
    assert table.equals(pa.Table.from_pandas(frame, preserve_index=False))


class SemicolonDialect(csv.Dialect):
    delimiter, quotechar, doublequote, escapechar = ";", "'", True, None
    skipinitialspace, quoting, lineterminator = True, csv.QUOTE_MINIMAL, "\r\n"


@pytest.mark.parametrize("data, keywords", [
    (b"a,b\n1,2\n\n3,4\n", dict(skip_blank_lines=False)),
    (b"a,b\n1,x\n\n3,y\n\n", dict(skip_blank_lines=False)),
    (b'a\tb\n1\t"x\ty"\n', dict(dialect="excel-tab")),
    (b"a;b\n1; 'x;y'\n", dict(dialect=SemicolonDialect, sep=",")),
    (b"d\n01/02/2020\n13/02/2020\n", dict(parse_dates=["d"], dayfirst=True)),
    (b"1,2,x\n3,4,y\n", dict(header=None)),
    (b"1,2,x\n3,4,y\n", dict(header=None, usecols=[1, 2], index_col=1)),
    (b"1,2,x\n3,4,y\n", dict(header=None, dtype={1: "float64"})),
    (b"i,a,b\n1,1,1\n2,2,2\n", dict(index_col=[0, 1], parse_dates=True)),
    (b"i,a,b\n2020-01-01,1,x\n2020-01-02,2,y\n", dict(index_col=[0, 1], parse_dates=True)),
    (b"i,a,b\n1,1,1\n", dict(index_col=0, parse_dates=True)),
    (b"a,b\n1,x\n", dict(converters={-1: lambda s: s * 2})),
], ids=["skip_blank_lines numbers", "skip_blank_lines text", "dialect name", "dialect class", "dayfirst",
        "header=None labels", "header=None usecols index_col", "header=None dtype", "parse_dates=True, numbers",
        "parse_dates=True, a date level and a number level", "parse_dates=True, a number index",
        "a negative converter key"])
@pytest.mark.filterwarnings("ignore:Could not infer format:UserWarning")  # pandas', trying an index of numbers
def test_more_pandas_keywords_give_pandas_frame(data, keywords):
    expected = pd.read_csv(io.BytesIO(data), **keywords)
    got = arrow_bridge.read_pandas(io.BytesIO(data), dtype_backend="numpy", **keywords)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


def test_cache_dates_is_accepted_with_a_warning():
    with pytest.warns(UserWarning, match=r"read_csv\(cache_dates=False\) is ignored") as seen:
        arrow_bridge.read_pandas(io.BytesIO(b"d\n2020-01-02\n"), parse_dates=["d"], cache_dates=False)
    assert seen[0].filename == __file__


@pytest.mark.parametrize("keywords", [dict(skiprows=[1]), dict(skiprows=lambda i: i == 1), dict(comment="#"),
                                      dict(header=1)], ids=["skiprows", "callable", "comment", "header"])
def test_lines_dropped_with_blank_lines_kept_are_refused_not_read_as_blank_rows(keywords):
    """A dropped line leaves its line break behind: with skip_blank_lines=False it would be a row of NaNs."""
    data = b"a,b\n#c\n1,2\n\n3,4\n"
    with pytest.raises(NotImplementedError, match="skip_blank_lines=False"):
        arrow_bridge.read_pandas(io.BytesIO(data), skip_blank_lines=False, **keywords)
    with pytest.raises(NotImplementedError, match="skip_blank_lines=False"):  # pyarrow's spelling of it
        arrow_bridge.read_pandas(io.BytesIO(data), parse_options=pacsv.ParseOptions(ignore_empty_lines=False),
                                 **keywords)


def test_an_io_stringio_reads_as_pandas_reads_it():
    """pandas' in-memory text: read from where it stands, whatever encoding= says; errors name it."""
    text = io.StringIO("skip me\nk,v\nü,1\n")
    text.readline()
    pd.testing.assert_frame_equal(arrow_bridge.read_pandas(text, encoding="latin-1", dtype_backend="numpy"),
                                  pd.read_csv(io.StringIO("k,v\nü,1\n")), check_exact=True)
    with pytest.raises(CsvParseError, match="<StringIO>:3"):
        arrow_bridge.read_csv(io.StringIO("a,b\n1,2\n3\n"))


@pytest.mark.parametrize("data, options", [
    (b"", {}), (b"\n\n", {}), (b"", {"header": None}), (b"#c\n", {"comment": "#"}), (b"a\n", {"skiprows": 1}),
    (b"", {"chunksize": 2}), (b"\n\na\n1\n", {"skip_blank_lines": False}),
    (b"\r\n1\n", {"skip_blank_lines": False, "header": None}),
], ids=["empty", "blank lines", "header=None", "comment lines", "skiprows past the end", "chunks",
        "a blank line kept as the header", "a blank line kept as the first record"])
def test_nothing_to_read_is_pandas_empty_data_error(data, options):
    """``except pd.errors.EmptyDataError`` catches ours where it catches pandas' (and it stays
    a located CsvParseError, which survives pickling to a Dask client)."""
    with pytest.raises(pd.errors.EmptyDataError):
        pd.read_csv(io.BytesIO(data), **options)
    with pytest.raises(pd.errors.EmptyDataError) as raised:
        arrow_bridge.read_pandas(io.BytesIO(data), **options)
    assert isinstance(raised.value, arrow_bridge.EmptyCsvError) and raised.value.byte_offset is not None
    again = pickle.loads(pickle.dumps(raised.value))
    assert type(again) is type(raised.value) and str(again) == str(raised.value)
    with pytest.raises(arrow_bridge.EmptyCsvError) as arrow_level:  # read_csv's is pandas-free
        arrow_bridge.read_csv(io.BytesIO(data), **{k: v for k, v in options.items() if k != "chunksize"},
                              semantics="pandas")
    assert not isinstance(arrow_level.value, pd.errors.EmptyDataError)


@pytest.mark.parametrize("options", [dict(names=["a", "b"]), dict(names=["a", "b"], header=0),
                                     dict(names=["a", "b"], index_col="a"), dict(names=["a", "b"], chunksize=2)],
                         ids=["names", "names and header=0", "names and index_col", "chunks"])
def test_an_empty_file_with_names_is_an_empty_frame_as_in_pandas(options):
    got = arrow_bridge.read_pandas(io.BytesIO(b""), dtype_backend="numpy", **options)
    expected = pd.read_csv(io.BytesIO(b""), **options)
    for got, expected in zip(*[(frames if "chunksize" in options else [frames]) for frames in (got, expected)],
                             strict=True):
        pd.testing.assert_frame_equal(got, expected, check_exact=True)
    with pytest.raises(arrow_bridge.EmptyCsvError):  # pyarrow's semantics: pyarrow raises, given names or not
        arrow_bridge.read_csv(io.BytesIO(b""), read_options=pacsv.ReadOptions(column_names=["a", "b"]))


@pytest.mark.parametrize("data, options", [
    (b"  \na,b\n1,2\n", {}), (b" \t \r\n\r\na,b\r\n1,2\r\n", {}), (b"  \na\n1\n", {}), (b"  \n1,2\n", {"header": None}),
    (b"x\n  \na,b\n1,2\n", {"skiprows": 1}), (b"\t\na\tb\n1\t2\n", {"sep": "\t"}),
], ids=["spaces", "spaces, tabs, CRLF", "one column", "header=None", "after skiprows", "tab is the delimiter"])
def test_lines_of_spaces_before_the_header_are_blank_as_in_pandas(data, options):
    pd.testing.assert_frame_equal(arrow_bridge.read_pandas(io.BytesIO(data), dtype_backend="numpy", **options),
                                  pd.read_csv(io.BytesIO(data), **options), check_exact=True)
    with pytest.raises(pd.errors.EmptyDataError):  # and nothing but them is an empty file
        arrow_bridge.read_pandas(io.BytesIO(b"  \n\n \t\n"))


# pandas' implicit index: a first record with more fields than names (R's write.table, trailing delimiters)
IMPLICIT_INDEX = {
    "one leading field": (b"a,b\nx,1,2\ny,3,4\n", {}),
    "two leading fields": (b"a,b\nx,z,1,2\ny,w,3,4\n", {}),
    "later records short": (b"a,b\n1,2,3\n4,5\n6\n", {}),
    "names given": (b"1,2,3\n4,5,6\n", dict(names=["a", "b"])),
    "names replace the header": (b"a,b\n1,2,3\n", dict(names=["x", "y"], header=0)),
    "missing index values": (b"a,b\nx,2,3\n,5,6\n", {}),
    "booleans with a gap: objects": (b"a\nTrue,1\n,2\n", {}),  # (an index_col index: floats)
    "Python ints with a gap: objects": (b"a\n,1\n18446744073709551616,2\n", {}),
    "one object dtype: text levels are str": (b"a\nNA,1\nx,2\n", dict(dtype=object)),
    "a thousand levels": ((",".join(map(str, range(1000))) + "\n").encode(), dict(names=["a", "b"])),
    "one object dtype, two levels": (b"a\nx,y,1\nz,,2\n", dict(dtype=object)),
    "quoted field": (b'a,b\n"x,y",2,3\n4,5,6\n', {}),
    "blank line first": (b"a,b\n\n1,2,3\n4,5,6\n", {}),
    "CRLF": (b"a,b\r\n1,2,3\r\n4,5,6\r\n", {}),
    "repeated names": (b"a,a\n1,2,3\n4,5,6\n", {}),
    "index_col position": (b"a,b\n1,2,3\n4,5,6\n", dict(index_col=0)),
    "index_col middle": (b"a,b\n1,2,3\n4,5,6\n", dict(index_col=1)),
    "index_col last": (b"a,b\n1,2,3\n4,5,6\n", dict(index_col=2)),
    "index_col list in order": (b"a,b\n1,2,3,4\n4,5,6,7\n", dict(index_col=[2, 0])),
    "index_col=False: trailing delimiters": (b"a,b\n1,2,\n3,4,\n", dict(index_col=False)),
    "index_col=False: trailing values": (b"a,b\n1,2,3\n4,5\n", dict(index_col=False)),
    "index_col=False with names": (b"1,2,3\n4,5,6\n", dict(names=["a", "b"], index_col=False)),
    "index_col=False, usecols and dtype": (b"a,b\n1,2,3\n4,5,6\n", dict(usecols=["b"], index_col=False,
                                                                          dtype={"b": "float64"})),
    "usecols names": (b"a,b\n1,2,3\n4,5,6\n", dict(usecols=["a"])),
    "usecols callable": (b"a,b\n1,2,3\n4,5,6\n", dict(usecols=lambda name: name == "b")),
    "usecols callable, index_col=False": (b"a,b\n1,2,3\n", dict(usecols=lambda name: name == "b", index_col=False)),
    # (not index_col=2 with usecols: pandas then reads b from the first field, where without usecols b is the second)
    "usecols callable, index_col position": (b"a,b\n1,2,3\n", dict(usecols=lambda name: name == "a", index_col=0)),
    "dtype by name": (b"a,b\n1,2,3\n4,5,6\n", dict(dtype={"a": "float64"})),
    "dtype by position: the index's": (b"a,b\n1,2,3\n", dict(dtype={0: str})),
    "converters": (b"a,b\n1,2,3\n4,5,6\n", dict(converters={"a": str})),
    "parse_dates the index": (b"a,b\n2020-01-02,2,3\n2020-01-03,5,6\n", dict(parse_dates=True)),
    "parse_dates each level": (b"a\n2020-01-02,x,3\nzz,2020-01-03,6\n2020-01-04,2020-01-05,7\n",
                               dict(parse_dates=True)),
    "skiprows": (b"a,b\n1,2,3\n4,5,6\n", dict(skiprows=[1])),
    "nrows": (b"a,b\n1,2,3\n4,5,6\n", dict(nrows=1)),
    "bad records skipped": (b"a,b\n1,2,3\n4,5,6,7\n8,9,10\n", dict(on_bad_lines="skip")),
    "sep": (b"a;b\n1;2;3\n", dict(sep=";")),
    "sep sniffed": (b"a;b\nx;1;2\ny;3;4\nz;5;6\n", dict(sep=None)),
    "sep sniffed, R's write.table": (b'"a"\t"b"\t"c"\n"r1"\t1\t2.5\t"u"\n"r2"\t4\t5.5\t"v"\n', dict(sep=None)),
    # usecols as a list counts: as many as the names, the extra fields are not read; fewer, the index
    "usecols every name: trailing delimiters": (b"a,b\n1,2,\n3,4,\n", dict(usecols=["a", "b"])),
    "usecols every name, reordered": (b"a,b\nx,1,2\n", dict(usecols=["b", "a"])),
    "usecols every name, index_col": (b"a,b\n1,2,3\n", dict(usecols=["a", "b"], index_col=0)),
    "parse_dates positions count names": (b"a,b\nx,2020-01-01,2\n", dict(parse_dates=[0])),
    "parse_dates positions count names (2)": (b"a,b\nx,2020-01-01,2\n", dict(parse_dates=[1])),
    "converters positions count fields": (b"a,b\nx,1,2\n", dict(converters={0: lambda s: s * 2})),
    "nrows=0: no record looked at": (b"a,b\nx,1,2\n", dict(nrows=0)),
    "a header spelling a made-up level": (b'"v","__index_level_0__"\n1,10\n2,20\n', {}),
    "a header spelling a made-up trailing field": (b"a,__trailing_1__\n1,2\n", {}),
    "made-up names beside a header's own": (b'"__index_level_0__",b\nx,1,2\n', {}),
    "usecols repeating a name": (b"a,b\nx,1,2\ny,3,4\n", dict(usecols=["a", "a"])),
    "usecols repeating names, all there": (b"a,b\nx,1,2\ny,3,4\n", dict(usecols=["b", "a", "b"])),
    "parse_dates position: the column and the index field": (
        b"a,b\n2020-01-01,2021-01-01,x\n2020-01-02,2021-01-02,y\n", dict(parse_dates=[0])),
    "parse_dates position of a second level": (b"a,b\nx,2020-01-01,2021-01-01,y\n", dict(parse_dates=[1])),
}


@pytest.mark.parametrize("case", list(IMPLICIT_INDEX))
def test_a_first_record_longer_than_the_names_is_pandas_implicit_index(case):
    data, options = IMPLICIT_INDEX[case]
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        expected = pd.read_csv(io.BytesIO(data), **options)
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        got = arrow_bridge.read_pandas(io.BytesIO(data), dtype_backend="numpy", **options)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    # index_col=False warns of the fields it drops, as pandas does, at the caller's line
    lost = [[(w.category, str(w.message)) for w in seen if "loss of data" in str(w.message)] for seen in (ours, theirs)]
    assert lost[0] == lost[1]
    assert all(w.filename == __file__ for w in ours if w.category is pd.errors.ParserWarning)


@pytest.mark.parametrize("options", [{}, dict(index_col=False)], ids=["index", "index_col=False"])
def test_the_implicit_index_of_each_chunk_is_pandas(options):
    data = b"a,b\n" + b"".join(b"r%d,%d,%d\n" % (i, i, -i) for i in range(50))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pd.errors.ParserWarning)  # index_col=False's, tested above
        with arrow_bridge.read_pandas(io.BytesIO(data), dtype_backend="numpy", chunksize=7, **options) as chunks:
            got = list(chunks)
        expected = list(pd.read_csv(io.BytesIO(data), chunksize=7, **options))
    assert len(got) == len(expected) == 8
    for ours, theirs in zip(got, expected):
        pd.testing.assert_frame_equal(ours, theirs, check_exact=True)


@pytest.mark.parametrize("data, options, error, message", [
    (b"a,b\n1,2\n4,5,6\n", {}, CsvParseError, "expected 2 fields, got 3"),  # decided by the first record
    (b"a,b\n1,2,3\n4,5,6,7\n", dict(index_col=False), CsvParseError, "expected 3 fields, got 4"),
    (b"a,b\n1,2,3\n4,5,6\n", dict(index_col=[0, 1]), ValueError, "Could not construct index. Requested to use 2"),
    (b"a,b\n1,2,3\n4,5,6\n", dict(index_col="a"), KeyError, "a"),
    (b"x,1,2\n", dict(names=["a", "b"], header=None, usecols=["a"]), ValueError,
     "Number of passed names did not match number of header fields in the file"),
    (b"a,b\nx,1,2\n", dict(usecols=["__index_level_0__"]), ValueError, "Usecols do not match columns"),
], ids=["a later record", "past the dropped fields", "index_col too long", "index_col a name", "names and usecols",
        "a made-up name in usecols"])
def test_records_an_implicit_index_cannot_take_raise_as_in_pandas(data, options, error, message):
    with pytest.raises(error if error is not CsvParseError else ValueError, match=message if error is not
                       CsvParseError else None):
        pd.read_csv(io.BytesIO(data), **options)
    with pytest.raises(error, match=message):
        arrow_bridge.read_pandas(io.BytesIO(data), **options)


def test_a_read_csv_without_the_rule_still_rejects_the_longer_record():
    with pytest.raises(CsvParseError, match="expected 2 fields, got 3"):
        arrow_bridge.read_csv(io.BytesIO(b"a,b\n1,2,3\n"), semantics="pandas")
    table = arrow_bridge.read_csv(io.BytesIO(b"a,b\n1,2,3\n"), semantics="pandas", implicit_index="leading")
    assert table.column_names == ["__index_level_0__", "a", "b"]


@pytest.mark.parametrize("path_options", [dict(), dict(block_size=64), dict(n_threads=1),
                                          dict(device="modern-gen4"), dict(device="modern-gen4", split="dynamic")],
                         ids=["host", "block 64", "one thread", "device", "dynamic split"])
def test_an_implicit_index_reads_alike_on_every_path(tmp_path, path_options):
    path = tmp_path / "indexed.csv"
    path.write_bytes(b"a,b,c\n" + b"".join(b"r%d,%d,%d.5,x%d\n" % (i, i, i, i) for i in range(3000)))
    got = arrow_bridge.read_pandas(path, dtype_backend="numpy", **path_options)
    pd.testing.assert_frame_equal(got, pd.read_csv(path), check_exact=True)


def _column_changing_type(rows: int) -> bytes:
    """Ints, then a stretch of text, floats, missing values and booleans, then ints again."""
    lines = []
    for i in range(rows):
        stretch = i * 6 // rows
        value = [f"{i}", f"x{i}", f"{i}.5", "" if i % 2 else f"{i}", "True" if i % 3 else "false", f"{-i}"][stretch]
        lines.append(f"{value},{i},{'NA' if stretch == 3 else i * 2}\n")
    return ("a,b,c\n" + "".join(lines)).encode()


@pytest.mark.parametrize("chunksize", [1, 7, 1000, 2500])
def test_each_chunk_takes_the_types_of_its_own_values_as_in_pandas(chunksize):
    """pandas types each chunk by its rows: a column of ints with text further down
    is int64 in the chunks before the text (our first-block types raised there)."""
    data = _column_changing_type(6000)
    with arrow_bridge.read_pandas(io.BytesIO(data), dtype_backend="numpy", chunksize=chunksize,
                                  block_size=4096) as chunks:
        got = list(chunks)
    expected = list(pd.read_csv(io.BytesIO(data), chunksize=chunksize))
    assert len(got) == len(expected)
    assert len({str(frame.dtypes.tolist()) for frame in expected}) > 1  # the types do change
    for ours, theirs in zip(got, expected):
        pd.testing.assert_frame_equal(ours, theirs, check_exact=True)


def test_get_chunk_types_the_rows_it_takes_as_in_pandas():
    data = _column_changing_type(600)
    ours = arrow_bridge.read_pandas(io.BytesIO(data), dtype_backend="numpy", iterator=True, block_size=512)
    theirs = pd.read_csv(io.BytesIO(data), iterator=True)
    with ours, theirs:
        for size in (5, 95, 1, 200, 299):
            pd.testing.assert_frame_equal(ours.get_chunk(size), theirs.get_chunk(size), check_exact=True)


def _two_breaks(rows: int) -> bytes:
    """Two int columns that take text far past the first block, at different rows."""
    lines = [f"{f'a{i}' if i == rows * 2 // 3 else i},{f'b{i}' if i == rows // 3 else -i},{i}.25\n"
             for i in range(rows)]
    return ("a,b,c\n" + "".join(lines)).encode()


@pytest.mark.parametrize("source", ["path", "seekable", "bytes"])
def test_a_later_value_that_breaks_the_first_blocks_type_reads_as_pandas(tmp_path, source):
    """The stream is read again with such a column as text, the rows handed out skipped."""
    data = _two_breaks(30_000)
    path = tmp_path / "breaks.csv"
    path.write_bytes(data)
    given = {"path": path, "seekable": io.BytesIO(data), "bytes": data}[source]
    with arrow_bridge.read_pandas(given, dtype_backend="numpy", chunksize=4_000, block_size=8192,
                                  na_values={"c": ["7.25"]}) as chunks:
        got = list(chunks)
    expected = list(pd.read_csv(io.BytesIO(data), chunksize=4_000, na_values={"c": ["7.25"]}))
    assert [str(frame.a.dtype) for frame in expected] == ["int64"] * 5 + ["str"] + ["int64"] * 2  # text in one
    assert len(got) == len(expected)
    for ours, theirs in zip(got, expected):
        pd.testing.assert_frame_equal(ours, theirs, check_exact=True)


def test_a_stream_that_cannot_be_read_again_says_which_type_broke():
    data = _two_breaks(30_000)
    with pytest.raises(ValueError, match="cannot convert 'b10000' to int64, the type the first block inferred"):
        with arrow_bridge.read_pandas(NonSeekableStream(data), chunksize=4_000, block_size=8192) as chunks:
            list(chunks)


def test_usecols_positions_with_an_implicit_index_are_refused_plainly():
    """pandas picks those fields and renames them (``usecols=[1, 2]``: a=1, b=2): not followed here."""
    with pytest.raises(NotImplementedError, match="usecols positions .* give usecols the columns' names"):
        arrow_bridge.read_pandas(io.BytesIO(b"a,b\nx,1,2\n"), usecols=[1, 2])


def test_a_byte_range_takes_the_implicit_index_of_the_file_not_of_its_first_record():
    data = b"a,b\nk,1,2\nm,3,4\nn,5,6\n"
    got = arrow_bridge.read_pandas(io.BytesIO(data), dtype_backend="numpy", byte_range=(data.index(b"m"), len(data)))
    pd.testing.assert_frame_equal(got, pd.read_csv(io.BytesIO(data)).iloc[1:], check_exact=True)
    short = b"a,b\n1,2\n3,4\n5,6,7\n8,9\n"  # no implicit index: a range starting at a longer (bad) record
    got = arrow_bridge.read_pandas(io.BytesIO(short), dtype_backend="numpy", on_bad_lines="skip",
                                   byte_range=(short.index(b"5,6,7"), len(short)))
    assert got.to_dict("split") == {"index": [0], "columns": ["a", "b"], "data": [[8, 9]]}


@pytest.mark.parametrize("data", [b"a\n1\n", b"a\n"], ids=["rows", "header only"])
def test_nrows_0_gives_no_chunk_as_in_pandas(data):
    assert len(list(arrow_bridge.read_pandas(io.BytesIO(data), chunksize=3, nrows=0))) == 0 == \
        len(list(pd.read_csv(io.BytesIO(data), chunksize=3, nrows=0)))
    with pytest.raises(StopIteration):
        arrow_bridge.read_pandas(io.BytesIO(data), iterator=True, nrows=0).get_chunk()


def test_a_reopened_stream_reports_each_bad_line_once():
    data = b"a,b\n" + b"".join(b"%d,%d\n" % (i, i) if i != 1 else b"1,1,9\n" for i in range(2000)) + b"x,0\n"
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with arrow_bridge.read_pandas(io.BytesIO(data), chunksize=1000, block_size=4096, on_bad_lines="warn") as chunks:
            frames = list(chunks)
    assert [str(frame.a.dtype) for frame in frames] == ["int64[pyarrow]", "string[pyarrow]"]  # reopened once
    bad_lines = [str(w.message) for w in seen if w.category is arrow_bridge.CsvBadLineWarning]
    assert len(bad_lines) == 1 and "<BytesIO>:3:" in bad_lines[0]


@pytest.mark.parametrize("first, later", [(b"True", b""), (b"%d" % (2**63 + 1), b"7"), (b"5", b""), (b"x", b""),
                                          (b"x", b"3"), (b"", b"4.5"), (b"1.5", b"3.0"), (b"1.5", b"inf")],
                         ids=["bool, then empty", "uint64, then ints", "int, then empty", "text, then empty",
                              "text, then ints", "empty, then floats", "floats, then whole floats",
                              "floats, then inf"])
def test_a_chunk_narrower_than_the_first_block_takes_its_own_type(first, later):
    data = b"a,b\n" + b"".join(b"%s,%d\n" % (first if i < 3000 else later, i) for i in range(6000))
    with arrow_bridge.read_pandas(io.BytesIO(data), dtype_backend="numpy", chunksize=2000, block_size=8192) as ours:
        for mine, theirs in zip(ours, pd.read_csv(io.BytesIO(data), chunksize=2000, low_memory=False), strict=True):
            pd.testing.assert_frame_equal(mine, theirs, check_exact=True)
