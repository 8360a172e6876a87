"""``semantics="pandas"`` (``read_pandas``' default): values read as ``pandas.read_csv`` reads them.

pandas infers no dates, times or timestamps, and its NA spellings (pyarrow's plus
``<NA>`` and ``None``) are missing in every column, text and quoted fields included.
Random files mixing those families are compared with ``pandas.read_csv`` for the
three dtype backends, and the Table is the same on the host and the device, at
every block size.
"""
from __future__ import annotations

import datetime
import io

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pytest

import arrow_bridge
from csvgen import pandas_family_file as mixed_file
from device_emulator import ComputationalSSD

SEEDS = range(40)


@pytest.mark.parametrize("backend", ["numpy", "numpy_nullable", "pyarrow"])
@pytest.mark.parametrize("seed", SEEDS)
def test_read_pandas_gives_pandas_values(seed, backend):
    data = mixed_file(seed)
    expected = pd.read_csv(io.BytesIO(data), dtype_backend=backend) if backend != "numpy" else \
        pd.read_csv(io.BytesIO(data))
    got = arrow_bridge.read_pandas(io.BytesIO(data), dtype_backend=backend)
    pd.testing.assert_frame_equal(got, expected, check_exact=True, obj=data.decode()[:200])


@pytest.mark.parametrize("seed", SEEDS[:10])
def test_the_table_is_the_same_on_the_device_and_at_every_block_size(seed, tmp_path):
    data = mixed_file(seed, rows=400)
    path = tmp_path / "mixed.csv"
    path.write_bytes(data)
    expected = arrow_bridge.read_csv(io.BytesIO(data), semantics="pandas")
    assert not any(pa.types.is_temporal(t) for t in expected.schema.types)
    for block_size in (64, 1000):
        got = arrow_bridge.read_csv(io.BytesIO(data), semantics="pandas", block_size=block_size)
        assert got.equals(expected), block_size
    ssd = ComputationalSSD("modern-gen4")
    for split in ("device", "dynamic", "static:0.5"):
        got = arrow_bridge.read_csv(path, semantics="pandas", device=ssd, split=split, block_size=1000)
        assert got.equals(expected), split


def test_a_date_column_that_starts_late_stays_text():
    """The first blocks see only nulls; the dates come later and still read as text."""
    data = b"d,n\n" + b",1\n" * 3000 + b"2020-01-02,2\n"
    table = arrow_bridge.read_csv(io.BytesIO(data), semantics="pandas", block_size=1024)
    assert table.schema.field("d").type == pa.string()
    assert table.column("d").null_count == 3000
    assert table.column("d")[-1].as_py() == "2020-01-02"


def test_pyarrow_semantics_stay_the_default_of_read_csv():
    table = arrow_bridge.read_csv(io.BytesIO(b"d,s\n2020-01-02,\n2020-01-03,None\n"))
    assert table.schema.types == [pa.date32(), pa.string()]
    assert table.column("s").to_pylist() == ["", "None"]


def test_na_values_add_to_pandas_spellings_unless_keep_default_na_is_false():
    data = b"s,n\nNone,-\n<NA>,1\n"
    got = arrow_bridge.read_pandas(io.BytesIO(data), na_values=["-"], dtype_backend="numpy")
    pd.testing.assert_frame_equal(got, pd.read_csv(io.BytesIO(data), na_values=["-"]))
    got = arrow_bridge.read_pandas(io.BytesIO(data), na_values=["-"], keep_default_na=False, dtype_backend="numpy")
    pd.testing.assert_frame_equal(got, pd.read_csv(io.BytesIO(data), na_values=["-"], keep_default_na=False))


def test_an_explicit_dtype_still_reads_dates():
    """pandas itself refuses a datetime dtype in read_csv (it wants parse_dates); the Arrow reader takes it."""
    table = arrow_bridge.read_csv(io.BytesIO(b"d\n2020-01-02\nNone\n"), semantics="pandas", dtype={"d": pa.date32()})
    assert table.column("d").to_pylist() == [datetime.date(2020, 1, 2), None]


def test_unknown_semantics_and_custom_timestamp_parsers_are_refused():
    with pytest.raises(ValueError, match="semantics must be one of"):
        arrow_bridge.read_csv(io.BytesIO(b"a\n1\n"), semantics="polars")
    with pytest.raises(ValueError, match="timestamp_parsers"):
        arrow_bridge.read_csv(io.BytesIO(b"a\n1\n"), semantics="pandas",
                              convert_options=pacsv.ConvertOptions(timestamp_parsers=["%Y"]))


EXTENSION_DTYPES = ["Int64", pd.Int32Dtype(), "UInt8", "Float64", "boolean", "string", pd.StringDtype("pyarrow"),
                    "int64[pyarrow]", "object", "str", "float32"]


@pytest.mark.parametrize("backend", ["numpy", "numpy_nullable", "pyarrow"])
@pytest.mark.parametrize("dtype", EXTENSION_DTYPES, ids=[str(d) for d in EXTENSION_DTYPES])
def test_pandas_dtypes_in_dtype_give_pandas_columns(dtype, backend):
    """pandas extension dtypes (and object) asked for by name or instance are the frame's dtypes, made
    from the Arrow column (nulls kept as the dtype's missing value)."""
    data = b"n,s,f,b,u\n1,x,1.5,True,7\n,y,,False,\n3,NA,2.5,,9\n"
    column = {"Float64": "f", "float32": "f", "boolean": "b", "UInt8": "u"}.get(str(dtype), "n")
    if str(dtype) in ("string", "str", "object") or isinstance(dtype, pd.StringDtype):
        column = "s"
    keywords = {} if backend == "numpy" else {"dtype_backend": backend}
    expected = pd.read_csv(io.BytesIO(data), dtype={column: dtype}, **keywords)
    got = arrow_bridge.read_pandas(io.BytesIO(data), dtype={column: dtype}, dtype_backend=backend)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


def test_pandas_dtypes_apply_to_every_chunk():
    data = b"n,s\n1,x\n,y\n3,\n4,z\n5,w\n"
    with arrow_bridge.read_pandas(io.BytesIO(data), dtype={"n": "Int64", "s": object}, chunksize=2,
                                  dtype_backend="numpy") as chunks:
        got = pd.concat(list(chunks))
    expected = pd.concat(pd.read_csv(io.BytesIO(data), dtype={"n": "Int64", "s": object}, chunksize=2))
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


SHORT_ROWS = {  # pandas reads a record with fewer fields as if the missing ones were empty
    "a short row": b"a,b,c\n1,x,2\n3\n4,y\n",
    "the last, without a line end": b"a,b,c\n1,x,2\n3",
    "quoted and CRLF": b'a,b,c\r\n"1",x,2\r\n"3\r\nz"\r\n4,"y"\r\n',
    "an empty first field": b"a,b,c\n,\n1,2,3\n",
}


@pytest.mark.parametrize("keywords", [{}, dict(keep_default_na=False), dict(na_filter=False),
                                      dict(dtype={"c": "Int64"}), dict(usecols=["c", "a"]),
                                      dict(on_bad_lines="skip"), dict(skip_blank_lines=False)],
                         ids=["defaults", "keep_default_na", "na_filter", "dtype", "usecols", "skip", "blank lines"])
@pytest.mark.parametrize("case", list(SHORT_ROWS))
def test_short_rows_get_empty_fields_as_in_pandas(case, keywords):
    data = SHORT_ROWS[case]
    got = arrow_bridge.read_pandas(io.BytesIO(data), dtype_backend="numpy", **keywords)
    pd.testing.assert_frame_equal(got, pd.read_csv(io.BytesIO(data), **keywords), check_exact=True)


def test_short_rows_read_alike_on_every_path(tmp_path):
    data = b"a,b,c\n" + b"".join(b"%d,x%d,%d.5\n" % (i, i, i) if i % 7 else b"%d\n" % i for i in range(3000))
    path = tmp_path / "short.csv"
    path.write_bytes(data)
    assert _read_alike_on_every_path(path).column("c").null_count == len(range(0, 3000, 7))


LONG_ROWS = {  # given usecols, pandas reads a record with more fields up to the header's count
    "one longer record": (b"a,b\n1,2\n3,4,5\n", dict(usecols=["a"])),
    "every column used": (b"a,b\n1,2\n3,4,5\n", dict(usecols=[0, 1])),
    "a callable": (b"a,b\n1,2\n3,4,5\n", dict(usecols=lambda name: name == "b")),
    "longer and shorter": (b"a,b\n1,2\n3,4,5,6,7\n8\n", dict(usecols=["b"])),
    "quoted line break in an extra field": (b'a,b\n1,2\n3,4,"5\n6"\n7,8\n', dict(usecols=["a"])),
    "not a bad line to skip": (b"a,b\n1,2\n3,4,5\n", dict(usecols=["a"], on_bad_lines="skip")),
    "names, no header": (b"1,2\n3,4,5\n", dict(names=["a", "b"], usecols=["a"])),
    "no header": (b"1,2\n3,4,5\n", dict(header=None, usecols=[0])),
    "after an implicit index": (b"a,b\n1,2,3\n3,4,5,6\n", dict(usecols=["a"])),
    "with an index column": (b"a,b\n1,2\n3,4,5\n", dict(usecols=["a", "b"], index_col="a")),
}


@pytest.mark.parametrize("case", list(LONG_ROWS))
def test_longer_rows_are_cut_given_usecols_as_in_pandas(case):
    _reads_as_pandas(*LONG_ROWS[case])


def test_longer_rows_stay_errors_without_usecols_or_pandas_semantics():
    data = LONG_ROWS["one longer record"][0]
    with pytest.raises(pd.errors.ParserError, match="Expected 2 fields in line 3, saw 3"):
        pd.read_csv(io.BytesIO(data))
    for read in (arrow_bridge.read_pandas, lambda source: arrow_bridge.read_csv(source, usecols=["a"])):
        with pytest.raises(arrow_bridge.CsvParseError, match="expected 2 fields, got 3"):
            read(io.BytesIO(data))


def test_longer_rows_read_alike_on_every_path(tmp_path):
    data = b"a,b,c\n" + b"".join(b"%d,x%d,%d.5%s\n" % (i, i, i, b",7,y" if i % 7 == 0 else b"") for i in range(3000))
    path = tmp_path / "long.csv"
    path.write_bytes(data)
    table = _read_alike_on_every_path(path, usecols=["c", "a"])
    assert table.column_names == ["a", "c"] and table.num_rows == 3000


def _read_alike_on_every_path(path, **options) -> pa.Table:
    """The file's Table under pandas semantics, checked the same at block size 64, on one
    thread, on the device, in a dynamic split and in a stream, and pandas' frame in read_pandas."""
    expected = arrow_bridge.read_csv(path, semantics="pandas", **options)
    for how in (dict(block_size=64), dict(n_threads=1), dict(device="modern-gen4", block_size=1000),
                dict(device=ComputationalSSD("modern-gen4"), split="dynamic", block_size=1000)):
        assert arrow_bridge.read_csv(path, semantics="pandas", **how, **options).equals(expected), how
    with arrow_bridge.open_csv(path, semantics="pandas", block_size=1000, **options) as stream:
        assert stream.read_all().equals(expected)
    pd.testing.assert_frame_equal(arrow_bridge.read_pandas(path, dtype_backend="numpy", **options),
                                  pd.read_csv(path, **options), check_exact=True)
    return expected


def _reads_as_pandas(data: bytes, options: dict) -> None:
    """read_pandas (NumPy dtypes) gives pandas.read_csv's frame for ``data``, exactly."""
    pd.testing.assert_frame_equal(arrow_bridge.read_pandas(io.BytesIO(data), dtype_backend="numpy", **options),
                                  pd.read_csv(io.BytesIO(data), **options), check_exact=True)


NUMERIC_NA_VALUES = {  # pandas: a whole number's spellings n and n.0 as text; in a float column, the number
    "n.0 in a float column": (b"a\n-999.0\n1.5\n", dict(na_values=[-999])),
    "n.0 asked, n in an int column": (b"a\n-999\n1\n", dict(na_values=["-999.0"])),
    "n.0 in a text column": (b"a\n0.0\nx\n", dict(na_values=["0"])),
    "other spellings of n in text stay": (b"a\n-0.0\n1e0\n+1\n1.\n01\n1.00\nx\n", dict(na_values=["1", "0"])),
    "another spelling in a float column": (b"a\n1e3\n-0.0\n2.5\n", dict(na_values=["1000", "0"])),
    "-0 is an int, not the spelling 0": (b"a\n-0\n1\n", dict(na_values=["0"])),
    "a column's own": (b"a,b\n1.5,-999.00\n-999,3\n", dict(na_values={"b": [-999.0]})),
    "without the defaults": (b"a,b\n-999.0,NA\n1,2\n", dict(na_values=[-999], keep_default_na=False)),
    "not a whole number": (b"a\n1.50\n1.5\n2\n", dict(na_values=["1.5"])),
    "past 2**53": (b"a\n9007199254740993\n9007199254740992\n", dict(na_values=["9007199254740992"])),
    "with spaces": (b"a\n5\n1.5\n", dict(na_values=[" 5 "])),
    "an explicit float type": (b"a,b\n1,2.0\n3,4\n", dict(na_values=["2"], dtype={"b": "float32"})),
    "floats made by thousands": (b'a\n"1,000.5"\n-999.00\n', dict(thousands=",", na_values=[-999])),
}


@pytest.mark.parametrize("case", list(NUMERIC_NA_VALUES))
def test_na_values_that_read_as_numbers_are_missing_as_in_pandas(case):
    _reads_as_pandas(*NUMERIC_NA_VALUES[case])


def test_numeric_na_values_read_alike_on_every_path(tmp_path):
    data = b"a,b,c\n" + b"".join(b"%d,%s,x%d\n" % (i, b"-999.00" if i % 5 == 0 else b"%d.5" % i, i) for i in range(3000))
    path = tmp_path / "sentinels.csv"
    path.write_bytes(data)
    table = _read_alike_on_every_path(path, na_values=[-999])
    assert table.column("b").null_count == 600 and table.column("b").type == pa.float64()


BLANK_LINES = {  # pandas' tokenizer skips a line of spaces and tabs as it skips an empty line
    "between records": b"a,b\n1,2\n  \n3,4\n",
    "the first and the last, no line end": b"a,b\n \n1,2\n\t",
    "tab separated: a tab is a delimiter": b"a\tb\n1\t2\n  \n\t\n3\t4\n",
    "quoted spaces are a value": b'a,b\n1,2\n"  "\n3,4\n',
    "spaces after a delimiter are a value": b"a,b\n1, \n",
}


@pytest.mark.parametrize("keywords", [{}, dict(dtype={"a": "string"}), dict(nrows=2), dict(skip_blank_lines=False)],
                         ids=["defaults", "dtype", "nrows", "blank lines kept"])
@pytest.mark.parametrize("case", list(BLANK_LINES))
def test_lines_of_spaces_are_blank_lines_as_in_pandas(case, keywords):
    data = BLANK_LINES[case]
    if case.startswith("tab separated"):
        keywords = dict(keywords, sep="\t")
    got = arrow_bridge.read_pandas(io.BytesIO(data), dtype_backend="numpy", **keywords)
    pd.testing.assert_frame_equal(got, pd.read_csv(io.BytesIO(data), **keywords), check_exact=True)


def test_lines_of_spaces_read_alike_on_every_path(tmp_path):
    # one column: the fused kernel reads the plain lines and leaves the blank ones to the tokenizer
    for ncols, record in ((3, b"%d,x%d,%d.5\n"), (2, b"%d,%d.%d\n"), (1, b"%d\n"), (1, b"x%d\r\n")):
        data = b",".join([b"a", b"b", b"c"][:ncols]) + b"\n" + b"".join(
            record % (i, i, i)[:record.count(b"%")] if i % 7 else b" \t \n" for i in range(3000))
        path = tmp_path / f"blank-{ncols}.csv"
        path.write_bytes(data)
        assert _read_alike_on_every_path(path).num_rows == 3000 - len(range(0, 3000, 7))
        if ncols == 1:  # under pyarrow's semantics such a line is a row
            assert arrow_bridge.read_csv(path).equals(pacsv.read_csv(path))
    with pytest.raises(arrow_bridge.CsvParseError, match="expected 3 fields, got 1"):  # pyarrow's semantics
        arrow_bridge.read_csv(io.BytesIO(b"a,b,c\n1,2,3\n  \n"))


def test_short_rows_stay_errors_under_pyarrows_semantics():
    with pytest.raises(arrow_bridge.CsvParseError, match="expected 3 fields, got 1") as raised:
        arrow_bridge.read_csv(io.BytesIO(SHORT_ROWS["a short row"]))
    with pytest.raises(pa.ArrowInvalid, match="Expected 3 columns, got 1"):
        pacsv.read_csv(io.BytesIO(SHORT_ROWS["a short row"]))
    assert raised.value.line == 3


def test_integers_past_int64_are_uint64_as_in_pandas(tmp_path):
    """pandas infers uint64 where every value is a non-negative integer and some pass int64;
    pyarrow a double. Small values first, so the spans settle int64 against uint64."""
    data = b"a,b\n" + b"".join(b"%d,%d\n" % (i, 2**64 - 1 - i if i % 500 == 499 else i) for i in range(3000))
    path = tmp_path / "unsigned.csv"
    path.write_bytes(data)
    expected = arrow_bridge.read_csv(path, semantics="pandas")
    assert expected.schema.types == [pa.int64(), pa.uint64()]
    for how in (dict(block_size=100), dict(n_threads=1), dict(device="modern-gen4", block_size=1000),
                dict(device=ComputationalSSD("modern-gen4"), split="dynamic", block_size=1000)):
        assert arrow_bridge.read_csv(path, semantics="pandas", **how).equals(expected), how
    for backend in ("numpy", "numpy_nullable", "pyarrow"):
        pd.testing.assert_frame_equal(arrow_bridge.read_pandas(path, dtype_backend=backend),
                                      pd.read_csv(path, **({} if backend == "numpy" else {"dtype_backend": backend})),
                                      check_exact=True)
    assert arrow_bridge.read_csv(path).schema.types == pacsv.read_csv(path).schema.types == [pa.int64(), pa.float64()]


BOOLEANS = {  # pandas' booleans are words; 1 and 0 are ints, and a bool asked for takes them
    "1 and a word: text": (b"a\n1\nfalse\n", {}),
    "1, NA and a word: text": (b"a\n1\nN/A\n1\nTrue\n", {}),
    "words: bools": (b"a\ntrue\nFalse\nTRUE\n", {}),
    "1 and 0: ints": (b"a\n1\n0\n", {}),
    "1 and 0 asked as bool": (b"a\n1\n0\n", dict(dtype={"a": bool})),
    "1, 0 and words asked as boolean": (b"a\n1\nTRUE\n0\nfalse\n", dict(dtype={"a": "boolean"})),
    "1 made a true value": (b"a\n1\ntrue\n", dict(true_values=["1"])),
    "a word made a true value": (b"a\nyes\nFalse\n", dict(true_values=["yes"])),
    "words in any case": (b"a\nTRUE\ntRuE\nfalse\nFaLsE\n", {}),
    "an index of words and a gap: floats": (b"a,b\nx,False\ny,\nz,true\n", dict(index_col="b")),
    "an index level of words and a gap": (b"a,b,c\n,,x\n,False,y\n", dict(index_col=["c", "b"])),
    "an index of words: bools": (b"a,b\nx,False\ny,True\n", dict(index_col="b")),
    "an index of words asked as objects": (b"a,b\nx,False\ny,\n", dict(index_col="b", dtype={"b": object})),
}


@pytest.mark.parametrize("case", list(BOOLEANS))
def test_booleans_as_pandas_reads_them(case):
    _reads_as_pandas(*BOOLEANS[case])


def test_booleans_read_alike_on_every_path(tmp_path):
    """An inferred column of 1 and words stays text in every span (a span of words
    alone would infer bool); a boolean asked for takes 1 and 0 on the fused, general,
    device and streaming paths alike."""
    rows = [b"%s,%s,%d" % (b"True" if i % 3 else b"1", [b"1", b"0", b"True", b"false"][i % 4], i) for i in range(3000)]
    path = tmp_path / "flags.csv"
    path.write_bytes(b"mixed,flag,n\n" + b"\n".join(rows) + b"\n")
    table = _read_alike_on_every_path(path, dtype={"flag": "boolean"})
    assert table.column("mixed").type == pa.string() and table.column("flag").type == pa.bool_()
    assert table.column("flag").to_pylist()[:4] == [True, False, True, False]


@pytest.mark.parametrize("dtype, words", [(bool, "Bool"), ("int32", "Integer"), ("uint8", "Integer")])
def test_a_numpy_dtype_without_missing_values_refuses_them_as_pandas_does(dtype, words):
    data = b"a,b\n1,1\n,2\n" if words == "Integer" else b"a,b\nTrue,1\n,2\n"
    with pytest.raises(ValueError, match=f"{words} column has NA values in column 0"):
        pd.read_csv(io.BytesIO(data), dtype={"a": dtype})
    with pytest.raises(ValueError, match=f"{words} column has NA values in column 0"):  # not a False or 0 made up
        arrow_bridge.read_pandas(io.BytesIO(data), dtype={"a": dtype})


def test_a_streams_first_block_of_words_does_not_take_a_later_1_as_true(tmp_path):
    """open_csv keeps the first block's types: a later 1 in a bool column is then a
    type break, as a later x would be, never a True (pandas reads 1 as an int)."""
    path = tmp_path / "flags.csv"
    path.write_bytes(b"a,n\n" + b"".join(b"%s,%d\n" % (b"True" if i % 2 else b"False", i) for i in range(2000))
                     + b"1,1\n0,2\n")
    assert arrow_bridge.read_csv(path, semantics="pandas").column("a").to_pylist()[-2:] == ["1", "0"]
    with pytest.raises(pa.ArrowInvalid, match="cannot convert .1. to bool, the type the first block inferred"):
        with arrow_bridge.open_csv(path, semantics="pandas", block_size=64) as stream:
            stream.read_all()


def test_numeric_na_values_leave_other_columns_and_span_stages_alone(tmp_path):
    """Only a column that can hold floats gets the numeric rule; a filtered read keeps
    the rows a filter of the whole Table keeps."""
    from arrow_bridge.options import resolve_options
    from arrow_bridge.read_plan import plan_columns
    plans = plan_columns(["f", "s", "i"], resolve_options(semantics="pandas", na_values=[-999],
                                                          dtype={"s": "string", "i": "int64"}))
    assert [type(c.finish).__name__ for c in plans] == ["NumericNulls", "NoneType", "NoneType"]
    path = tmp_path / "sentinels.csv"
    path.write_bytes(b"f,s\n" + b"".join(b"%s,x%d\n" % (b"-999.0" if i % 4 == 0 else b"%d.5" % -i, i)
                                         for i in range(2000)))
    options = dict(semantics="pandas", na_values=[-999])
    whole = arrow_bridge.read_csv(path, **options)
    filtered = arrow_bridge.read_csv(path, filters=[("f", "<", 0)], **options)
    assert filtered.equals(whole.filter(pc.less(whole.column("f"), 0)))
    assert filtered.num_rows == 1500  # every -i.5; the -999.0 sentinels are missing, not below 0


BIG_INTEGERS = {  # pandas tries int64, uint64, Python ints, floats: where each stops decides (python_ints)
    "beside a negative number: text, as pandas": b"a\n1\n-13\n9223372036854775808\n",
    "a negative one first: text, as pandas": b"a\n1\n9223372036854775808\n-1\n",
    "fits uint64: uint64, as pandas": b"a\n1\n9223372036854775808\n",
    "int64's least: int64": b"a\n-9223372036854775808\n1\n",
    "below int64: Python ints, as pandas": b"a\n1\n-9223372036854775809\n",
    "past uint64: Python ints, as pandas": b"a\n1\n18446744073709551616\n",
    "past uint64 beside a negative one: Python ints, as pandas": b"a\n-1\n+18446744073709551616\n",
    "a negative one beside uint64's: text, as pandas": b"a\n18446744073709551615\n-9223372036854775809\n",
    "missing values: NaN among Python ints, as pandas": b"a\n007\nNA\n\n-18446744073709551616\n",
    "a float, then past uint64: floats": b"a\n1.5\n18446744073709551616\n",
    "past uint64, then a float: text": b"a\n18446744073709551616\n1.5\n",
    "uint64's, then a float: floats": b"a\n9223372036854775808\n1e3\n",
    "below int64, then a float: floats": b"a\n-9223372036854775809\ninf\n",
    "below int64, then a negative float: text": b"a\n-9223372036854775809\n-1.5\n",
    "uint64's, a missing value, a float: floats": b"a,b\n9223372036854775808,1\nNA,2\n1.5,3\n",
    "a space before: Python ints": b'a\n" 18446744073709551616"\n',
    "a space after: no integer, a float": b'a\n"18446744073709551616 "\n',
    "uint64's with a blank after: no integer, floats": b"a\n18446744073709551615 \n1\n",
    "a blank after, a missing value: floats": b"a,b\n,1\n9223372036854775808\t,2\n",
    "uint64's, then one with a blank after: uint64": b"a\n9223372036854775808\n+9223372036854775809 \n",
    "other blanks after (C's isspace)": b'a\n9223372036854775808\n9223372036854775808\x0b\n"9223372036854775809\r"\n',
    "a blank before, alone": b"a\n\x0b9223372036854775808\n",
    # pandas gives up on numbers there and keeps every value's text, NA spellings and empty ones too
    "uint64's and missing values: text as written": b"a,b\n9223372036854775808,1\nNA,2\n,3\n",
    "uint64's, a negative one and N/A: text as written": b"a\n9223372036854775808\n-1\nN/A\n",
    "past uint64, a float and NA: text as written": b"a\n18446744073709551616\n1.5\nNA\n",
}


@pytest.mark.parametrize("keep_default_na", [True, False])
@pytest.mark.parametrize("text", ["NaN ", " nan", "NaN", "-nan", "+nan", "NAN", "INF ", " inf", "-inf ", "inf", "+inf",
                                  "-Infinity", "iNf", " 1.5 ", "1e5 "])
def test_float_specials_as_pandas_float_parser_takes_them(text, keep_default_na):
    """pandas reads NaN only as a missing value's spelling, and an infinity without blanks
    around it; pyarrow's semantics keep Arrow's grammar (NaN text, blanks trimmed)."""
    data = b'a,b\n"%s",1\n1.5,2\n' % text.encode()
    _reads_as_pandas(data, dict(keep_default_na=keep_default_na))
    if text.strip().lower() in ("nan", "-nan", "+nan", "inf", "-inf", "+inf"):
        assert arrow_bridge.read_csv(io.BytesIO(data)).column("a").type == pa.float64()


@pytest.mark.parametrize("case", list(BIG_INTEGERS))
def test_integers_past_int64_read_as_pandas_reads_them(case):
    _reads_as_pandas(BIG_INTEGERS[case], {})
    data = io.BytesIO(BIG_INTEGERS[case])  # pandas' nullable dtypes: the text of its Python ints
    pd.testing.assert_frame_equal(arrow_bridge.read_pandas(data, dtype_backend="numpy_nullable"),
                                  pd.read_csv(io.BytesIO(data.getvalue()), dtype_backend="numpy_nullable"))


def test_text_as_written_stays_text_under_thousands():
    _reads_as_pandas(b'a,b\n"1,234",9223372036854775808\n5,\n', dict(thousands=","))  # b: '' stays ''


def test_text_as_written_needs_a_second_read():
    """Where pandas keeps NA spellings as text, read_pandas reads the column again so; the
    Table names the column, its missing values missing; a source read once keeps them so."""
    data = BIG_INTEGERS["uint64's and missing values: text as written"]
    table = arrow_bridge.read_csv(io.BytesIO(data), semantics="pandas")
    assert table.column("a").to_pylist() == [2**63, None, None]  # uint64, exact
    assert table.schema.metadata == {b"arrow_bridge.text_as_written": b'["a"]'}

    class OnceOnly(io.BytesIO):
        def seekable(self):
            return False
    assert arrow_bridge.read_pandas(OnceOnly(data), dtype_backend="pyarrow").a.isna().tolist() == [False, True, True]


@pytest.mark.parametrize("first", [b"1.5", b"18446744073709551616"])
def test_an_integer_past_int64_among_floats_reads_alike_on_every_path(tmp_path, first):
    """A float first: pandas reads floats, the late integer past uint64 too (a stream's
    first block of floats takes it). The integer first: pandas keeps the text."""
    rows = [first] + [b"%d.25" % i for i in range(3000)] + [b"18446744073709551616"]
    path = tmp_path / "values.csv"
    path.write_bytes(b"x,n\n" + b"".join(b"%s,%d\n" % (value, i) for i, value in enumerate(rows)))
    table = _read_alike_on_every_path(path)
    assert table.column("x").type == (pa.float64() if first == b"1.5" else pa.string())


@pytest.mark.parametrize("late", [b"18446744073709551615 ", b"9223372036854775809\t"])
def test_uint64s_with_a_blank_after_read_alike_on_every_path(tmp_path, late):
    """A value past int64 with a blank after its digits is no integer to pandas' int64 try:
    the column is floats (pandas), early or late, on every path; the first one uint64's."""
    for first in (b"9223372036854775808", b"7"):
        path = tmp_path / "ids.csv"
        path.write_bytes(b"id,x\n" + b"".join(b"%s,%d\n" % (first if i == 0 else b"%d" % i, i) for i in range(3000))
                         + b"%s,1\n" % late)
        if first == b"7":  # (a stream's first block of ints refuses it, as any later value past them)
            expected = arrow_bridge.read_csv(path, semantics="pandas")
            for how in (dict(block_size=64), dict(n_threads=1), dict(device="modern-gen4", block_size=1000),
                        dict(device=ComputationalSSD("modern-gen4"), split="dynamic", block_size=1000)):
                assert arrow_bridge.read_csv(path, semantics="pandas", **how).equals(expected), how
            pd.testing.assert_frame_equal(arrow_bridge.read_pandas(path, dtype_backend="numpy"), pd.read_csv(path),
                                          check_exact=True)
        else:
            expected = _read_alike_on_every_path(path)
        assert expected.column("id").type == (pa.uint64() if first != b"7" else pa.float64())


def test_a_late_integer_past_int64_reads_alike_on_every_path(tmp_path):
    """Floats and ints for 3,000 rows, then an integer past uint64: a span the fused
    kernel read as floats gives up on it, and every path settles on text."""
    rows = [b"%d,%d.25" % (i, -i) for i in range(3000)] + [b"18446744073709551616,1"]
    path = tmp_path / "ids.csv"
    path.write_bytes(b"id,x\n" + b"\n".join(rows) + b"\n")
    expected = arrow_bridge.read_csv(path, semantics="pandas")
    assert expected.column("id").type == pa.string() and expected.column("id")[-1].as_py() == "18446744073709551616"
    for how in (dict(block_size=64), dict(n_threads=1), dict(device="modern-gen4", block_size=1000),
                dict(device=ComputationalSSD("modern-gen4"), split="dynamic", block_size=1000)):
        assert arrow_bridge.read_csv(path, semantics="pandas", **how).equals(expected), how
    assert arrow_bridge.read_csv(path).column("id").type == pa.float64()  # pyarrow's semantics: pyarrow's double
    pd.testing.assert_frame_equal(arrow_bridge.read_pandas(path, dtype_backend="numpy"), pd.read_csv(path),
                                  check_exact=True)  # Python ints, as pandas


@pytest.mark.parametrize("keywords", [dict(index_col="a"), dict(index_col=["a", "b"]), dict(dtype={"a": str}),
                                      dict(converters={"a": str}), dict(usecols=["a"]), dict(na_filter=False)],
                         ids=["index", "MultiIndex", "dtype str", "converter", "usecols", "na_filter"])
def test_python_ints_as_pandas_makes_them_with_other_keywords(keywords):
    for data in (b"a,b\n1,x\n18446744073709551616,y\n", b"a,b\n1,x\n,y\n-9223372036854775809,z\n"):
        _reads_as_pandas(data, keywords)


def test_chunks_keep_ints_exact_beside_a_value_with_a_blank_after():
    """A chunked stream does not refuse a uint64 with a blank after (its first block would make
    every chunk float): ints stay exact chunk by chunk; the chunk holding it is uint64 (pandas: float)."""
    data = b"a\n9007199254740993\n1\n9223372036854775808 \n"
    first, second = arrow_bridge.read_pandas(io.BytesIO(data), chunksize=2, dtype_backend="numpy")
    pd.testing.assert_frame_equal(first, next(iter(pd.read_csv(io.BytesIO(data), chunksize=2))), check_exact=True)
    assert second.a.tolist() == [2**63]


AS_WRITTEN_PER_CHUNK = {  # pandas keeps a chunk's text as written where that chunk's values say so
    "a missing value beside uint64's": b"a,b\n9223372036854775808,1\n,2\n3,3\n,4\n",
    "N/A after a text value": b"a\n1\nN/A\n9223372036854775808\n-\nN/A\n1\nN/A\n",
    "the first chunk only": b"x,a\n1,9223372036854775808\n2,-1\n3,N/A\n4,5\n5,NA\n6,7\n",
}


@pytest.mark.parametrize("chunksize", [1, 2, 3, 100])
@pytest.mark.parametrize("case", list(AS_WRITTEN_PER_CHUNK))
def test_text_as_written_per_chunk(case, chunksize):
    """A chunk whose values make pandas keep a column's text as written has it so (the
    stream is read again with that column's raw text); the other chunks are typed by theirs."""
    data = AS_WRITTEN_PER_CHUNK[case]
    for options in (dict(chunksize=chunksize), dict(chunksize=chunksize, thousands=",")):
        got = list(arrow_bridge.read_pandas(io.BytesIO(data), dtype_backend="numpy", **options))
        expected = list(pd.read_csv(io.BytesIO(data), **options))
        assert len(got) == len(expected)
        for ours, theirs in zip(got, expected):
            pd.testing.assert_frame_equal(ours, theirs, check_exact=True)


def test_python_ints_per_chunk_and_only_with_numpy_dtypes(tmp_path):
    path = tmp_path / "ids.csv"
    path.write_bytes(b"a\n1\n18446744073709551616\n2\n3\n")
    for got, expected in zip(arrow_bridge.read_pandas(path, chunksize=2, dtype_backend="numpy"),
                             pd.read_csv(path, chunksize=2)):
        pd.testing.assert_frame_equal(got, expected, check_exact=True)  # object, then int64
    table = arrow_bridge.read_csv(path, semantics="pandas")
    assert table.column("a").type == pa.string() and table.schema.metadata == {
        b"arrow_bridge.python_ints": b'["a"]'}
    assert arrow_bridge.read_pandas(path, dtype_backend="numpy_nullable").a.dtype == pd.read_csv(
        path, dtype_backend="numpy_nullable").a.dtype == "string"  # pandas keeps the text there
    assert arrow_bridge.read_pandas(path).a.tolist()[1] == "18446744073709551616"  # pandas' pyarrow dtypes raise
