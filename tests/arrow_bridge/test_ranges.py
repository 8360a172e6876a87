"""Exact record ranges (``arrow_bridge.ranges``) against brute-force references.

* Record starts: ``csvgen.scan_records`` (an independent reference tokenizer)
  lists where every record begins; each range must begin at the first of them
  at or after its nominal cut, for random CSV files (quoted newlines, CR/CRLF,
  escapes, stray quotes, unterminated quotes), random block sizes, and both
  methods (probes and transfer functions, ``lookbehind=0``).
* Kernels: the fast jump scans against a byte-by-byte automaton, from every
  entry state, over random byte soup.
* Reading: the ranges read with ``byte_range=`` concatenate to the whole file.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import arrow_bridge
from arrow_bridge.kernels.boundaries import (
    CR,
    FIELD,
    N_STATES,
    Q,
    Q_ESC,
    Q_QUOTE,
    REC,
    STATE_NAMES,
    UNQ,
    UNQ_ESC,
    exit_state,
    first_record_start,
    last_special,
    possible_states,
    transition_table,
)
from arrow_bridge.ranges import (
    RangePlanner,
    ScanDialect,
    plan_cuts,
    record_ranges,
    summarize,
)
from csvgen import BOM, assert_tables_identical, csv_cases, scan_records

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))


def _scan_dialect(d) -> ScanDialect:
    return ScanDialect(ord(d.delimiter), ord(d.quote_char) if d.quote_char else -1,
                       ord(d.escape_char) if d.escape_char else -1, d.double_quote)


def _expected_ranges(data: bytes, d, cuts: list[int]) -> list[tuple[int, int]]:
    starts = sorted(r.offset for r in scan_records(data, d).records)
    firsts = [next((s for s in starts if s >= c), len(data)) for c in cuts[:-1]]
    firsts[0] = cuts[0]
    return list(zip(firsts, firsts[1:] + [len(data)]))


@SETTINGS
@given(case=csv_cases(max_rows=30), blocksize=st.integers(1, 200), lookbehind=st.sampled_from([0, 2, 4096]))
def test_ranges_start_where_the_reference_tokenizer_starts_records(write_file, case, blocksize, lookbehind):
    data = case.body
    assume(not data.startswith(BOM))
    path = write_file("f.csv", data)
    cuts = plan_cuts(0, len(data), blocksize, page_size=1)
    got = record_ranges(path, 0, len(data), blocksize, _scan_dialect(case.dialect), page_size=1,
                        lookbehind=lookbehind)
    assert got == _expected_ranges(data, case.dialect, cuts)


@SETTINGS
@given(case=csv_cases(max_rows=30), blocksize=st.integers(1, 64), chunk=st.integers(1, 40))
def test_summaries_read_in_small_chunks_agree(case, blocksize, chunk):
    """Chunked scans (memory bound for big ranges) give the same transfer functions."""
    data = case.body
    d = _scan_dialect(case.dialect)
    read = lambda off, n, out=None: np.frombuffer(data, np.uint8)[off:off + n]  # noqa: E731
    planner = RangePlanner(read, plan_cuts(0, len(data), blocksize, page_size=1), d, lookbehind=0)
    whole = [summarize(read, job, d) for job in planner.jobs]
    assert [summarize(read, job, d, chunk=chunk) for job in planner.jobs] == whole
    assert planner.ranges(whole) == _expected_ranges(data, case.dialect, planner.cuts)


# ---- kernels against a byte-by-byte automaton ------------------------------------------------------
def _step(state: int, c: int, delim: int, quote: int, esc: int, dq: bool) -> int:
    unq = FIELD if c == delim else REC if c == 10 else CR if c == 13 else UNQ_ESC if c == esc else UNQ
    if state in (REC, FIELD):
        return Q if c == quote else unq
    if state == CR:
        return REC if c == 10 else (Q if c == quote else unq)
    if state == UNQ:
        return unq
    if state == UNQ_ESC:
        return UNQ
    if state == Q:
        return (Q_QUOTE if dq else UNQ) if c == quote else Q_ESC if c == esc else Q
    if state == Q_ESC:
        return Q
    return Q if c == quote else unq  # Q_QUOTE


def _reference(buf: bytes, state: int, dialect: tuple) -> tuple[int, int]:
    """(first record start or -1, state at the end) the slow way."""
    first = -1
    for pos, c in enumerate(buf):
        if first < 0 and (state == REC or (state == CR and c != 10)):
            first = pos
        state = _step(state, c, *dialect)
    return first, state


_SOUP = b'a,"\\\n\r;x'
soup = st.binary(max_size=80).map(lambda b: bytes(_SOUP[x % len(_SOUP)] for x in b))


@settings(max_examples=300, deadline=None)
@given(buf=soup, escape=st.booleans(), quote=st.booleans(), dq=st.booleans(),
       state=st.integers(0, N_STATES - 1))
def test_jump_scans_match_the_automaton_byte_by_byte(buf, escape, quote, dq, state):
    dialect = (ord(","), ord('"') if quote else -1, ord("\\") if escape else -1, dq)
    table = transition_table(*dialect)
    assert all(table[s, c] == _step(s, c, *dialect) for s in range(N_STATES) for c in range(256))
    arr = np.frombuffer(buf, np.uint8)
    first, end_state = _reference(buf, state, dialect)
    special_end = last_special(arr, 0, len(arr), dialect[1], dialect[2])
    assert exit_state(arr, 0, len(arr), state, table, dialect[1], dialect[2], special_end) == end_state
    at, st_ = first_record_start(arr, 0, len(arr), state, table, dialect[1], dialect[2], special_end)
    assert at == first
    if at < 0:
        assert st_ == end_state
    entries = np.zeros(N_STATES, np.bool_)
    entries[state] = True
    assert list(np.flatnonzero(possible_states(arr, 0, len(arr), table, entries))) == [end_state]


def test_reachable_states_follow_the_dialect():
    names = lambda d: [STATE_NAMES[s] for s in np.flatnonzero(ScanDialect(*d).reachable)]  # noqa: E731
    assert names((44, 34, -1, True)) == ["REC", "FIELD", "UNQ", "Q", "Q_QUOTE", "CR"]
    assert names((44, 34, 92, False)) == ["REC", "FIELD", "UNQ", "UNQ_ESC", "Q", "Q_ESC", "CR"]


# ---- edge cases -----------------------------------------------------------------------------------
def test_a_record_bigger_than_several_blocks_leaves_empty_ranges(write_file):
    big = b'"' + b"x\n" * 5000 + b'"'
    data = b"a,b\n1,x\n2," + big + b"\n3,y\n"
    path = write_file("big.csv", data)
    for lookbehind in (0, 4096):
        ranges = record_ranges(path, 4, len(data), 4096, lookbehind=lookbehind)
        assert ranges == [(4, data.index(b"3,y")), (len(data) - 4, len(data) - 4), (len(data) - 4, len(data))]


def test_blocks_smaller_than_a_page_and_larger_than_the_file(write_file):
    data = b"h\n" + b"12345\n" * 2000
    path = write_file("f.csv", data)
    tiny = record_ranges(path, 2, len(data), 1)  # one page per block
    assert tiny == [(2, 4100), (4100, 8192), (8192, len(data))]  # records start at 2 + 6k
    assert record_ranges(path, 2, len(data), 1 << 30) == [(2, len(data))]
    assert record_ranges(path, len(data), len(data), 100) == [(len(data), len(data))]


def test_crlf_split_by_a_cut(write_file):
    data = b"h\r\n" + b"a" * 4092 + b"\r\n" + b"b\r\n"  # the CR is the last byte of page 0
    path = write_file("f.csv", data)
    assert data[4095:4097] == b"\r\n"
    assert record_ranges(path, 3, len(data), 4096) == [(3, 4097), (4097, len(data))]


# ---- reading the ranges --------------------------------------------------------------------------
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=csv_cases(max_rows=25, malformed=False, header=True), blocksize=st.integers(1, 120))
def test_byte_ranges_concatenate_to_the_whole_file(write_file, case, blocksize):
    data = case.prefix + case.body
    path = str(write_file("f.csv", data))
    opts = dict(sep=case.dialect.delimiter, quotechar=case.dialect.quote_char,
                escapechar=case.dialect.escape_char, skiprows=case.skip_rows)
    try:
        whole = arrow_bridge.read_csv(path, **opts)
    except arrow_bridge.CsvParseError:
        assume(False)
    from arrow_bridge.options import resolve_options
    from arrow_bridge.preamble import read_preamble
    from arrow_bridge.source import open_source

    with open_source(path) as src:
        pre = read_preamble(src, resolve_options(**opts))
    ranges = record_ranges(path, pre.data_offset, len(data), blocksize, opts, page_size=1)
    dtype = {f.name: f.type for f in whole.schema}
    assume(len(dtype) == len(whole.schema))  # duplicate header names
    parts = [arrow_bridge.read_csv(path, byte_range=r, names=whole.column_names, header=None,
                                   dtype=dtype, **{k: v for k, v in opts.items() if k != "skiprows"})
             for r in ranges]
    got = pa.concat_tables(parts) if parts else whole.schema.empty_table()
    assert_tables_identical(got, whole)


def test_a_record_starting_with_bom_bytes_keeps_them(write_file):
    data = b"c0\n" + BOM + b"Y\n"
    path = write_file("bom.csv", data)
    part = arrow_bridge.read_csv(str(path), byte_range=(3, len(data)), names=["c0"], header=None)
    assert part.column("c0").to_pylist() == ["\ufeffY"] == arrow_bridge.read_csv(str(path)).column("c0").to_pylist()
