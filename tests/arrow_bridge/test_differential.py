"""Differential tests: ``arrow_bridge.read_csv`` against ``pyarrow.csv.read_csv``.

For random CSV files (``csvgen.csv_cases``) read with any block size and
thread count, our table must equal pyarrow's exactly (schema, values, float
bits), or both readers must reject the input. pyarrow is always run with
``newlines_in_values=True`` (we always handle quoted newlines across blocks).

Documented, intended divergences (encoded here, not failures):

1. The file ends inside a quoted field: pyarrow swallows the rest of the file
   into the field; we raise ``CsvParseError`` ("unterminated quoted field").
2. A header row with no line break and no data (``b'x,y'``): pyarrow raises
   "Empty CSV file or block"; we return the 0-row table pyarrow gives for
   ``b'x,y\\n'``. Empty input / zero columns: both raise.

When both reject a wrong field count, our ``line``/``byte_offset`` must name
the first bad record (found by ``csvgen.scan_records``), and every
``CsvParseError`` must satisfy ``line == physical line of byte_offset``.
"""
from __future__ import annotations

import re
from typing import Any, Optional

import pyarrow as pa
import pyarrow.csv as pacsv
import pytest
from hypothesis import HealthCheck, Phase, assume, event, given, note, settings
from hypothesis import strategies as st

import arrow_bridge
from arrow_bridge import CsvParseError
from csvgen import (
    SOURCE_KINDS,
    CsvCase,
    assert_tables_identical,
    bad_records,
    call_with_source,
    check_error_location,
    csv_cases,
    error_signature,
    first_bad_record,
    outcome,
    read_pyarrow,
    scan_records,
    without_records,
)

_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
_PHASES = [Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink]  # no "explain": slow


def _settings(n: int) -> settings:
    return settings(max_examples=n, deadline=None, suppress_health_check=_HEALTH, phases=_PHASES)


block_sizes = st.one_of(
    st.integers(1, 300),
    st.integers(1, 300),
    st.sampled_from([1, 2, 3, 7, 16, 1000, 1 << 16, 1 << 20]),
)
thread_counts = st.sampled_from([1, 2, 4])
source_kinds = st.sampled_from(SOURCE_KINDS)


# ------------------------------------------------------------------------------------------
# Calling the two readers.
# ------------------------------------------------------------------------------------------
def read_ours(case: CsvCase, *, source: str, block_size: int, n_threads: int, dialect_style: str,
              extra_skip: int = 0, **kwargs: Any):
    """Our reader, with the dialect, header and skipped rows given either as
    pandas keywords ('kw') or as pyarrow ParseOptions/ReadOptions ('pyarrow')."""
    kw: dict[str, Any] = dict(kwargs, block_size=case.effective_block_size(block_size), n_threads=n_threads)
    skip = case.skip_rows + extra_skip
    if dialect_style == "kw":
        handler = kw.pop("invalid_row_handler", None)
        if handler is not None:  # the dialect keywords apply on top of these ParseOptions
            kw["parse_options"] = pacsv.ParseOptions(invalid_row_handler=handler)
        kw.update(case.dialect.pandas_kwargs())
        if not case.header:
            kw["header"] = None
        if skip:
            kw["skiprows"] = skip
    else:
        handler = kw.pop("invalid_row_handler", None)
        kw["parse_options"] = case.dialect.parse_options(invalid_row_handler=handler)
        if not case.header or skip:
            kw["read_options"] = case.pyarrow_read_options(extra_skip)
    return outcome(lambda: call_with_source(source, case.data, lambda src: arrow_bridge.read_csv(src, **kw)))


_FIELD_COUNT = re.compile(r"Expected (\d+) columns, got (\d+)")


def check_error_invariants(data: bytes, err: BaseException) -> None:
    """Every CsvParseError: a line/offset pair that agree, inside the file."""
    assert isinstance(err, CsvParseError), f"unexpected exception type: {err!r}"
    assert isinstance(err, ValueError)
    assert isinstance(err.reason, str) and err.reason
    check_error_location(data, err)


def judge(case: CsvCase, ours, theirs, *, pyarrow_retry, extra_skip: int = 0, nrows: Optional[int] = None,
          allow_key_error: bool = False, names_given: Optional[int] = None, quoted_nulls: bool = True) -> None:
    """Asserts that ``ours`` (table, error) is acceptable given pyarrow's ``theirs``.

    ``pyarrow_retry(data)`` re-runs pyarrow with the same options on other bytes
    (for divergence 2 and pyarrow's quoted empty last field); ``quoted_nulls``:
    the read's ``quoted_strings_can_be_null``."""
    ours_tab, ours_err = ours
    pa_tab, pa_err = theirs
    quote, delimiter = case.dialect.quote_char, case.dialect.delimiter
    if not quoted_nulls and quote is not None and case.data.endswith((quote + delimiter).encode()):
        # A pyarrow bug (docs/reader.md, quoted_strings_can_be_null): the empty last field that
        # no line break ends takes the quote of the field before it; a line break unquotes it.
        alt_tab, alt_err = pyarrow_retry(case.data + b"\n")
        if (alt_err is None) != (pa_err is None) or (alt_err is None and not alt_tab.equals(pa_tab)):
            event("empty last field quoted by pyarrow")
            pa_tab, pa_err = alt_tab, alt_err
    note(f"ours: {ours_err!r}" if ours_err else f"ours: {ours_tab.schema}")
    note(f"pyarrow: {pa_err!r}" if pa_err else f"pyarrow: {pa_tab.schema}")
    if ours_err is not None:
        if allow_key_error and isinstance(ours_err, KeyError) and pa_err is not None:
            return  # a usecols name that does not exist (pyarrow may fail earlier, for another reason)
        check_error_invariants(case.data, ours_err)
    scan = scan_records(case.data, case.dialect, case.skip_rows + extra_skip)

    # Divergence 1: an unterminated quoted field at EOF → we raise.
    if scan.open_quote and not scan.skip_failed:
        event("open quote at EOF")
        if ours_err is None and nrows is not None and pa_err is None:
            # We may stop before the open quote; pyarrow's types count the swallowed
            # text, so only the names and the row count are comparable.
            assert ours_tab.column_names == pa_tab.column_names
            assert ours_tab.num_rows == nrows < pa_tab.num_rows, (
                f"nrows={nrows}: we returned {ours_tab.num_rows} rows, but the row holding the "
                f"open quote is row {pa_tab.num_rows}")
            return
        assert ours_err is not None, (
            f"the input ends inside a quoted field (opened at byte {scan.open_quote_at}): "
            f"expected CsvParseError, got a table with {ours_tab.num_rows} rows")
        return

    # Divergence 3: a header that is not valid UTF-8 → we raise (pyarrow may return
    # a table whose column names cannot be decoded).
    if isinstance(ours_err, CsvParseError) and "header is not valid UTF-8" in ours_err.reason:
        event("header not UTF-8")
        return

    # Divergence 2: a file whose only line has no line break (a header, or one
    # row without a header) is read as if the line break were there.
    if pa_err is not None and "cannot infer number of columns" in str(pa_err):
        alt_tab, alt_err = pyarrow_retry(case.data + b"\n")
        if alt_err is None and alt_tab.num_columns > 0:
            event("single line without newline")
            pa_tab, pa_err = alt_tab, None

    if pa_err is not None and ours_err is not None:
        event("both reject")
        m = _FIELD_COUNT.search(str(pa_err))
        if m and nrows is None and isinstance(ours_err, CsvParseError):
            rec = first_bad_record(scan, names_given)
            assert rec is not None, "reference tokenizer found no bad record (csvgen bug?)"
            assert rec.nfields == int(m.group(2)), f"reference tokenizer disagrees with pyarrow: {rec}"
            if ours_err.column is not None and "fields" not in ours_err.reason:
                # A value that does not convert, before the bad record: reporting the
                # first problem in file order is fine (pyarrow parses before converting).
                assert ours_err.byte_offset < rec.offset, (
                    f"we report a conversion error ({ours_err!r}) after the first bad record "
                    f"(line {rec.line}, byte {rec.offset}; pyarrow: {pa_err})")
                return
            assert (ours_err.line, ours_err.byte_offset) == (rec.line, rec.offset), (
                f"bad record is at line {rec.line}, byte {rec.offset}; we said line {ours_err.line}, "
                f"byte {ours_err.byte_offset}: {ours_err!r}")
        return
    if pa_err is not None:
        if nrows is not None:
            return  # we may stop before the row pyarrow rejects
        if "cannot infer number of columns" in str(pa_err):
            # Not divergence 2 (that one is a header with no data): e.g. a header-less
            # file whose only line has no line break. Kept separate so that Hypothesis
            # reports it apart from other "only pyarrow rejects" failures.
            raise AssertionError(f"pyarrow cannot infer the columns ({pa_err!r}) but we returned "
                                 f"a table with {ours_tab.num_rows} rows:\n{ours_tab}")
        raise AssertionError(f"pyarrow rejects the input ({pa_err!r}) but we returned a table:\n{ours_tab}")
    if ours_err is not None:
        raise AssertionError(f"we reject the input but pyarrow accepts it:\n{pa_tab}") from ours_err
    event("tables compared")
    if nrows is None:
        assert_tables_identical(ours_tab, pa_tab)
        return
    try:
        assert_tables_identical(ours_tab, pa_tab.slice(0, nrows))
    except AssertionError as exc:  # raised from here, so that Hypothesis reports it apart
        raise AssertionError(f"nrows={nrows}: we differ from pyarrow's table sliced to nrows: {exc}") from None


# ------------------------------------------------------------------------------------------
# (a) Random files, random block size and threads: equal to pyarrow.
# ------------------------------------------------------------------------------------------
@_settings(2000)
@given(case=csv_cases(), block_size=block_sizes, n_threads=thread_counts, source=source_kinds,
       dialect_style=st.sampled_from(["kw", "pyarrow"]))
def test_matches_pyarrow(case, block_size, n_threads, source, dialect_style):
    read_opts = case.pyarrow_read_options()
    parse_opts = case.dialect.parse_options()
    theirs = read_pyarrow(case.data, read_opts, parse_opts)
    ours = read_ours(case, source=source, block_size=block_size, n_threads=n_threads,
                     dialect_style=dialect_style)
    judge(case, ours, theirs, pyarrow_retry=lambda data: read_pyarrow(data, read_opts, parse_opts))


# ------------------------------------------------------------------------------------------
# (b) The same file, two block sizes / thread counts / sources: identical results.
# ------------------------------------------------------------------------------------------
@_settings(1000)
@given(case=csv_cases(), bs1=block_sizes, bs2=block_sizes, t1=thread_counts, t2=thread_counts,
       s1=source_kinds, s2=source_kinds)
def test_block_size_and_threads_do_not_matter(case, bs1, bs2, t1, t2, s1, s2):
    a_tab, a_err = read_ours(case, source=s1, block_size=bs1, n_threads=t1, dialect_style="kw")
    b_tab, b_err = read_ours(case, source=s2, block_size=bs2, n_threads=t2, dialect_style="kw")
    if a_err is not None or b_err is not None:
        assert a_err is not None and b_err is not None, (
            f"only one read failed: block {bs1}/{t1} threads → {a_err!r}; block {bs2}/{t2} threads → {b_err!r}")
        assert error_signature(a_err) == error_signature(b_err), (
            f"errors differ: {error_signature(a_err)} vs {error_signature(b_err)}")
        check_error_invariants(case.data, a_err)
        return
    assert_tables_identical(a_tab, b_tab, f"block {bs1} x{t1} {s1} vs block {bs2} x{t2} {s2}")
    for col in a_tab.columns:  # every chunk has the column's type
        assert all(chunk.type == col.type for chunk in col.chunks)


# ------------------------------------------------------------------------------------------
# (c) Options: usecols, dtype, null/true/false values, skiprows, nrows, on_bad_lines.
# ------------------------------------------------------------------------------------------
_DTYPES = [pa.string(), pa.string(), pa.string(), pa.large_string(), pa.binary(), pa.int64(), pa.int32(),
           pa.int8(), pa.uint64(), pa.float64(), pa.float32(), pa.bool_(), pa.date32(), pa.time32("s"),
           pa.timestamp("s"), pa.timestamp("ns"), pa.timestamp("s", tz="UTC"), pa.null()]
_EXTRA_NULLS = ["", "NA", "-", "None", "x", "n/a", "0"]


@st.composite
def convert_option_sets(draw) -> dict[str, Any]:
    """Keyword arguments for ``pyarrow.csv.ConvertOptions`` (given to both readers)."""
    kw: dict[str, Any] = {}
    if draw(st.booleans()):
        defaults = list(pacsv.ConvertOptions().null_values)
        kw["null_values"] = draw(st.lists(st.sampled_from(defaults + _EXTRA_NULLS), max_size=6, unique=True))
    if draw(st.integers(0, 3)) == 0:
        kw["true_values"] = draw(st.lists(st.sampled_from(["yes", "1", "T", "true", "y"]), min_size=1,
                                          max_size=3, unique=True))
    if draw(st.integers(0, 3)) == 0:
        kw["false_values"] = draw(st.lists(st.sampled_from(["no", "0", "F", "false", "n"]), min_size=1,
                                           max_size=3, unique=True))
    if draw(st.integers(0, 2)) == 0:
        kw["strings_can_be_null"] = True
    if draw(st.integers(0, 3)) == 0:
        kw["quoted_strings_can_be_null"] = False
    return kw


@_settings(1700)
@given(case=csv_cases(unique_names=True), data=st.data(), block_size=block_sizes, n_threads=thread_counts,
       source=source_kinds, dialect_style=st.sampled_from(["kw", "pyarrow"]), conv=convert_option_sets())
def test_options_match_pyarrow(case, data, block_size, n_threads, source, dialect_style, conv):
    names = case.column_names
    ours_kw: dict[str, Any] = {}
    pa_parse: dict[str, Any] = {}
    pa_conv: dict[str, Any] = dict(conv)
    if conv:
        ours_kw["convert_options"] = pacsv.ConvertOptions(**conv)

    if data.draw(st.booleans(), label="use usecols"):
        usecols = data.draw(st.lists(st.sampled_from(names), min_size=1, unique=True), label="usecols")
        if data.draw(st.integers(0, 9), label="missing col") == 0:
            usecols.append("zz_missing")
        ours_kw["usecols"] = usecols
        pa_conv["include_columns"] = usecols
    if data.draw(st.booleans(), label="use dtype"):
        cols = data.draw(st.lists(st.sampled_from(names), min_size=1, unique=True), label="dtype cols")
        dtype = {c: data.draw(st.sampled_from(_DTYPES), label=f"dtype {c}") for c in cols}
        ours_kw["dtype"] = dtype
        pa_conv["column_types"] = dtype
    skip = data.draw(st.sampled_from([0, 0, 0, 1, 2, 3]), label="extra skiprows")
    nrows = data.draw(st.one_of(st.none(), st.none(), st.integers(0, 12)), label="nrows")
    if nrows is not None:
        ours_kw["nrows"] = nrows
    bad = data.draw(st.sampled_from(["error", "error", "skip", "handler"]), label="on_bad_lines")
    if bad == "skip":
        ours_kw["on_bad_lines"] = "skip"
    if bad != "error":
        pa_parse["invalid_row_handler"] = lambda row: "skip"
    if bad == "handler":
        ours_kw["invalid_row_handler"] = lambda row: "skip"

    read_opts = case.pyarrow_read_options(skip)
    parse_opts = case.dialect.parse_options(**pa_parse)
    conv_opts = pacsv.ConvertOptions(**pa_conv)
    swallowed: list = []
    kept = case.data
    theirs = read_pyarrow(case.data, read_opts, parse_opts, conv_opts, unraisable=swallowed)
    if swallowed and bad != "error":
        # pyarrow could not give a non-UTF-8 bad row to the handler (it raised
        # instead of skipping): the expectation is pyarrow on the file without
        # the bad records.
        event("pyarrow handler failed: bad records removed by hand")
        scan = scan_records(case.data, case.dialect, case.skip_rows + skip)
        kept = without_records(case.data, bad_records(scan))
        theirs = read_pyarrow(kept, read_opts, case.dialect.parse_options(), conv_opts)
    ours = read_ours(case, source=source, block_size=block_size, n_threads=n_threads,
                     dialect_style=dialect_style, extra_skip=skip, **ours_kw)
    if nrows is not None:
        # With nrows, types come from the rows returned only (pandas' semantics):
        # the reference is pyarrow on the file cut after the nrows-th good record.
        if nrows == 0 and not case.header and ours[1] is None:
            event("nrows=0 without a header: names only")  # pyarrow cannot express it
            assert ours[0].num_rows == 0 and set(ours[0].schema.types) <= {pa.null(), *_dtype_types(ours_kw)}
            return
        cut = _cut_after_rows(kept if swallowed and bad != "error" else case.data, case, skip, nrows)
        if cut is None:
            # Fewer good rows than nrows before the file ends or turns malformed:
            # covered exactly by test_reader.test_nrows_infers_types_from_the_rows_returned.
            assume(not (case.unterminated or case.bad_rows))
        else:
            event("nrows: reference cut after the rows returned")
            (ours_tab, ours_err), (pa_tab, pa_err) = ours, read_pyarrow(cut, read_opts, parse_opts, conv_opts)
            if isinstance(ours_err, CsvParseError) and "header is not valid UTF-8" in ours_err.reason:
                return  # divergence 3, see judge()
            if pa_err is not None:
                assert ours_err is not None, f"pyarrow rejects the first {nrows} rows ({pa_err!r}); we did not"
            else:
                assert ours_err is None, f"we reject the first {nrows} rows: {ours_err!r}"
                assert_tables_identical(ours_tab, pa_tab)
            return
    judge(case, ours, theirs, pyarrow_retry=lambda d: read_pyarrow(d, read_opts, parse_opts, conv_opts),
          extra_skip=skip, nrows=nrows, allow_key_error=True,
          quoted_nulls=pa_conv.get("quoted_strings_can_be_null", True))


def _dtype_types(kwargs: dict) -> set:
    return {arrow_bridge.options.to_arrow_type(t) for t in kwargs.get("dtype", {}).values()}


def _cut_after_rows(data: bytes, case: CsvCase, skip: int, nrows: int) -> Optional[bytes]:
    """``data`` cut just after its ``nrows``-th good data record (None when nothing
    follows it, or the file has too few lines: the judge handles those)."""
    scan = scan_records(data, case.dialect, case.skip_rows + skip)
    if scan.skip_failed:
        return None
    records = [r for r in scan.records if not r.empty]
    if not records:
        return None
    expected = records[0].nfields
    body = records[1:] if case.header else records
    good = 0
    for record in body:  # the reader stops right after the nrows-th good record
        if good == nrows:
            return data[:record.offset]
        good += record.nfields == expected
    return None


# ------------------------------------------------------------------------------------------
# A few fixed examples, so failures of the basic contract show without Hypothesis.
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("data", [
    b"x,y\n1,2\n3,4\n",
    b"x,y\r\n1,2.5\r\n-0,nan\r\n",
    b'x,y\n"a\nb",1\n"c\r\nd",2\n',
    b"\xef\xbb\xbfx\n1\n\n3\n",
    b"x,y\n1,a\xff\n2,b\n",
    b"a,b,c\n0x10,2020-01-01,12:34\n-1,2020-01-02,12:35:00\n",
    b"t\n2020-01-01T12:34:56+01:00\n2020-01-01 00:00:00.5Z\n",
])
@pytest.mark.parametrize("block_size", [1, 5, 1 << 20])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_fixed_examples(data, block_size, n_threads):
    expected = pacsv.read_csv(pa.py_buffer(data), parse_options=pacsv.ParseOptions(newlines_in_values=True))
    got = arrow_bridge.read_csv(data, block_size=block_size, n_threads=n_threads)
    assert_tables_identical(got, expected)


def test_header_without_newline_is_an_empty_table():
    """Divergence 2: pyarrow raises; we return pyarrow's result for b'x,y\\n'."""
    with pytest.raises(pa.ArrowInvalid):
        pacsv.read_csv(pa.py_buffer(b"x,y"))
    assert_tables_identical(arrow_bridge.read_csv(b"x,y"), pacsv.read_csv(pa.py_buffer(b"x,y\n")))


@pytest.mark.parametrize("data", [b"x,y\n1,\"abc", b"x,y\n1,\"abc\n2,3\n", b'x\n"'])
def test_unterminated_quote_raises(data):
    """Divergence 1: pyarrow swallows the rest of the file; we raise."""
    pacsv.read_csv(pa.py_buffer(data), parse_options=pacsv.ParseOptions(newlines_in_values=True))
    with pytest.raises(CsvParseError, match="unterminated"):
        arrow_bridge.read_csv(data)
