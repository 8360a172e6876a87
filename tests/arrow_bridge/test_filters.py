"""read_csv(filters=...): the same Table as reading everything and filtering with pyarrow.compute,
on every path (host, device splits, stream, block sizes, usecols with hidden filter columns,
types settled late), and clear errors for filters that cannot apply; the stages' work counters,
the same on every path; split="sampled" (Biscuit's offload decision)."""
from __future__ import annotations

import io
import math
import operator
from datetime import date

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pytest

import arrow_bridge
from arrow_bridge.options import PANDAS_NULL_VALUES
from arrow_bridge.executors import TaskRecorder
from arrow_bridge.filters import FilterError, Predicate, RowFilter
from arrow_bridge.span_stages import STAGE_COUNTERS
from device_emulator import ComputationalSSD


def _lineitem_like(rows: int = 3000, seed: int = 7) -> bytes:
    rng = np.random.default_rng(seed)
    days = rng.integers(8000, 10600, rows)
    lines = ["l_shipdate,l_quantity,l_discount,l_flag,l_comment"]
    for i in range(rows):
        flag = "" if i % 97 == 0 else "ANR"[i % 3]  # some nulls
        quantity = "" if i % 89 == 0 else str(int(rng.integers(1, 51)))
        comment = f'"say, {i}"' if i % 5 == 0 else f"note {i}"
        lines.append(f"{np.datetime64(int(days[i]), 'D')},{quantity},{rng.integers(0, 11) / 100},{flag},{comment}")
    return ("\n".join(lines) + "\n").encode()


DATA = _lineitem_like()
LATE_FLOAT = DATA + b"1998-01-01,7.5,0.05,A,late\n"  # l_quantity settles to double in the last span

FILTERS = [
    [("l_shipdate", ">=", date(1994, 1, 1)), ("l_shipdate", "<", date(1995, 1, 1)), ("l_discount", ">=", 0.05)],
    [[("l_quantity", "<", 5)], [("l_flag", "in", ["R"]), ("l_discount", "=", 0.1)]],
    [("l_flag", "not in", ["A", "N"])],  # keeps nulls, as pyarrow's "not in"
    [("l_flag", "is null")],
    [("l_quantity", "is not null"), ("l_comment", "starts with", "say")],
    [("l_comment", "contains", "9"), ("l_comment", "ends with", "1")],
    (pc.field("l_quantity") * 2 > 90) | (pc.field("l_flag") == "N"),
    [("l_quantity", ">", 1000)],  # nothing kept
]


def _expected(data: bytes, filters, usecols=None, **read) -> pa.Table:
    table = pacsv.read_csv(io.BytesIO(data), **read).filter(RowFilter(filters).expression)
    return table.select(usecols) if usecols else table


@pytest.mark.parametrize("filters", FILTERS, ids=range(len(FILTERS)))
@pytest.mark.parametrize("block_size", [None, 1 << 12])
def test_filtered_read_equals_filtering_everything(filters, block_size):
    got = arrow_bridge.read_csv(io.BytesIO(DATA), filters=filters, block_size=block_size)
    assert got.equals(_expected(DATA, filters))


def _quote_every_value(data: bytes) -> bytes:
    """The values before the comment quoted (the fused kernel's quoted path), empty ones left empty (nulls)."""
    lines = data.decode().splitlines()
    rows = [",".join([*(f'"{v}"' if v else v for v in line.split(",", 4)[:4]), line.split(",", 4)[4]])
            for line in lines[1:]]
    return ("\n".join([lines[0], *rows]) + "\n").encode()


@pytest.mark.parametrize("filters", FILTERS[:2], ids=range(2))
def test_quoted_values_are_filtered_as_their_unquoted_selves(filters):
    quoted = _quote_every_value(_lineitem_like(rows=600, seed=3))
    assert b'"1994-' in quoted and b'"0.05"' in quoted
    got = arrow_bridge.read_csv(io.BytesIO(quoted), filters=filters, block_size=1 << 12)
    assert got.equals(_expected(quoted, filters))


@pytest.mark.parametrize("filters", FILTERS[:3] + FILTERS[6:7], ids=range(4))
def test_columns_read_for_the_filter_alone_are_dropped(filters):
    got = arrow_bridge.read_csv(io.BytesIO(DATA), filters=filters, usecols=["l_comment"], block_size=1 << 12)
    assert got.equals(_expected(DATA, filters, ["l_comment"]))


def test_a_type_settled_after_the_filter_ran_gives_the_same_rows():
    filters = [("l_quantity", ">=", 40)]
    got = arrow_bridge.read_csv(io.BytesIO(LATE_FLOAT), filters=filters, block_size=1 << 11)
    expected = _expected(LATE_FLOAT, filters)
    assert expected.schema.field("l_quantity").type == pa.float64()
    assert got.equals(expected)


@pytest.mark.parametrize("split", ["device", "static:0.5", "dynamic"])
def test_device_splits_filter_the_same_rows(tmp_path, split):
    path = tmp_path / "l.csv"
    path.write_bytes(LATE_FLOAT)
    filters = FILTERS[0]
    got = arrow_bridge.read_csv(path, filters=filters, device="modern-gen4", split=split, block_size=1 << 13)
    assert got.equals(_expected(LATE_FLOAT, filters))


@pytest.mark.parametrize("data, filters", [
    (b"c\n" + b"1\n" * 200 + b"a\n", [("c", "==", "a")]),  # int64 spans in a string column
    (b"c\n" + b"2020-01-01\n" * 40 + b"xT\n", [("c", "ends with", "T")]),  # date32 spans
    (b"c,d\n" + b",1\n" * 200 + b"a,1\n", [("c", "contains", "a")]),  # null spans
], ids=["ints", "dates", "nulls"])
@pytest.mark.parametrize("read", [{}, {"device": "modern-gen4", "split": "device"}], ids=["host", "device"])
def test_a_span_the_filter_cannot_take_waits_for_the_settled_types(tmp_path, data, filters, read):
    path = tmp_path / "late.csv"
    path.write_bytes(data)
    got = arrow_bridge.read_csv(path, filters=filters, block_size=256, **read)
    assert got.equals(_expected(data, filters)) and got.num_rows == 1


def test_a_span_that_waits_is_filtered_twice_at_most(monkeypatch):
    """Once at its own types (on its worker) and once at the settled ones, not again in between."""
    tries = []
    selection = arrow_bridge.filters.RowFilter.selection
    monkeypatch.setattr(arrow_bridge.filters.RowFilter, "selection",
                        lambda self, used, nrows: tries.append(nrows) or selection(self, used, nrows))
    data = b"c\n" + b"1\n" * 2000 + b"a\n"
    assert arrow_bridge.read_csv(io.BytesIO(data), filters=[("c", "==", "a")], block_size=256).num_rows == 1
    assert len(tries) <= 2 * (len(data) // 256 + 1)


def test_a_filter_on_columns_of_given_types_fails_at_the_first_span():
    """No span of a column with its type given can widen: nothing is held back for the end."""
    data = b"a,b\n" + b"".join(b"%d,%d\n" % (i, i) for i in range(100_000))
    with pytest.raises(FilterError, match="cannot be evaluated"):
        arrow_bridge.read_csv(io.BytesIO(data), filters=[("a", "==", "x")], dtype={"a": "int64"},
                              memory_limit="600KiB", block_size=1 << 16)


def test_a_filter_the_settled_types_cannot_take_still_raises():
    with pytest.raises(FilterError, match="cannot be evaluated"):
        arrow_bridge.read_csv(io.BytesIO(b"c\n" + b"1\n" * 200), filters=[("c", "==", "a")], block_size=256)


_PYTHON_COMPARISONS = {"=": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
                       ">=": operator.ge}


@pytest.mark.parametrize("type_", [pa.int8(), pa.int64(), pa.uint64()], ids=str)
def test_an_integer_column_against_a_float_compares_exactly(type_):
    """As Python compares an int with a float: exactly (pyarrow casts the ints to float64)."""
    info = np.iinfo(type_.to_pandas_dtype())
    xs = sorted(x for x in {info.min, info.min + 1, -3, -1, 0, 1, 2, 3, 2**53 + 1, info.max - 1, info.max}
                if info.min <= x <= info.max)
    values = [-math.inf, math.inf, math.nan, -2.5, -2.0, -0.5, -0.0, 0.5, 2.0, 2.5, 2.0**53, 2.0**63, -2.0**63,
              2.0**64, 1e300, float(info.min), float(info.max), 127.5, -128.5]
    for op, compare in _PYTHON_COMPARISONS.items():
        for value in values:
            got = Predicate("x", op, value).mask(pa.array([*xs, None], type_)).to_pylist()
            assert got == [compare(x, value) for x in xs] + [None], (op, value)


@pytest.mark.parametrize("read", [{"block_size": None}, {"block_size": 256},
                                  {"block_size": 256, "device": "modern-gen4", "split": "device"}], ids=str)
def test_an_int_past_2_to_the_53_against_a_float_neither_raises_nor_depends_on_the_block(tmp_path, read):
    """The filter's bounds on ``a`` drop the last row in the kernel at one block size and not at
    another: the term on ``b`` must give the same answer whether or not it sees that row."""
    path = tmp_path / "big.csv"
    path.write_bytes(b"a,b\n" + b"1,1\n" * 70 + b"0,9007199254740993\n1,9007199254740993\n")
    for term in [("b", ">", 0.5), ("b", "not in", [math.nan]), ("b", "not in", [2.0**53, 0.5])]:  # 2**53 + 1 isn't
        got = arrow_bridge.read_csv(path, filters=[("a", "<=", 0), term], **read)
        assert got.to_pydict() == {"a": [0], "b": [9007199254740993]}, term


@pytest.mark.parametrize("read", [{"block_size": None}, {"block_size": 64},
                                  {"block_size": 64, "device": "modern-gen4", "split": "device"}], ids=str)
def test_a_uint64_column_takes_values_past_int64(tmp_path, read):
    """pyarrow infers no int past int64 from a Python value; a DNF value only uint64 holds is a uint64."""
    path = tmp_path / "ids.csv"
    path.write_bytes(b"id\n" + b"18446744073709551615\n9223372036854775808\n5\n\n" * 4)
    dtype = {"id": "uint64"}
    table = arrow_bridge.read_csv(path, dtype=dtype)
    for filters, expression in [
            ([("id", ">=", 2**63)], pc.field("id") >= pa.scalar(2**63, pa.uint64())),
            ([("id", "==", 2**64 - 1)], pc.field("id") == pa.scalar(2**64 - 1, pa.uint64())),
            ([("id", "in", [2**64 - 1, 5, None])], pc.field("id").isin(pa.array([2**64 - 1, 5, None], pa.uint64()))),
            ([("id", "not in", [2**64 - 1])], ~pc.field("id").isin(pa.array([2**64 - 1], pa.uint64())))]:
        got = arrow_bridge.read_csv(path, dtype=dtype, filters=filters, **read)
        assert got.equals(table.filter(expression)), filters
        assert 0 < got.num_rows < table.num_rows, filters
    with pytest.raises(FilterError, match="pyarrow cannot take a value"):  # past uint64 too: pyarrow's own refusal
        arrow_bridge.read_csv(path, dtype=dtype, filters=[("id", "in", [2**64 - 1, -1])], **read)


def test_a_device_sends_only_the_kept_rows(tmp_path):
    from ndp_core.report import collect

    path = tmp_path / "l.csv"
    path.write_bytes(DATA)
    with collect() as everything:
        arrow_bridge.read_csv(path, device="modern-gen4", split="device", block_size=1 << 13)
    with collect() as filtered:
        arrow_bridge.read_csv(path, device="modern-gen4", split="device", block_size=1 << 13,
                              filters=[("l_flag", "=", "R")])
    sent_all, sent_kept = (c.total.bytes["host_link"] for c in (everything, filtered))
    assert 0 < sent_kept < sent_all / 2


def test_open_csv_streams_filtered_batches():
    filters = FILTERS[1]
    reader = arrow_bridge.open_csv(io.BytesIO(DATA), filters=filters, block_size=1 << 12)
    assert reader.read_all().equals(_expected(DATA, filters))


def test_nrows_counts_rows_before_the_filter():
    filters = [("l_flag", "=", "A")]
    got = arrow_bridge.read_csv(io.BytesIO(DATA), filters=filters, nrows=100, block_size=1 << 11)
    assert got.equals(pacsv.read_csv(io.BytesIO(DATA)).slice(0, 100).filter(RowFilter(filters).expression))


def test_a_column_finish_filters_the_finished_table():
    filters = [("l_flag", "=", "R")]
    options = pacsv.ConvertOptions(auto_dict_encode=True)
    got = arrow_bridge.read_csv(io.BytesIO(DATA), filters=filters, convert_options=options)
    assert got.equals(_expected(DATA, filters, convert_options=options))


@pytest.mark.parametrize("data, filters, options", [
    (b"ab,b,b\n1,2,3\n2,2,3\n", pc.field("ab") == 1, dict(convert_options=pacsv.ConvertOptions(auto_dict_encode=True))),
    (b"a,,\n1,,\n2,,\n", pc.field("a") == 1, dict(parse_options=pacsv.ParseOptions(ignore_empty_lines=False))),
    (b"x,1,y,c\nx,2,y,d\n", pc.field("n11") == "c",
     dict(read_options=pacsv.ReadOptions(column_names=["n0", "n1", "n10", "n11"]),
          convert_options=pacsv.ConvertOptions(column_types={"n1": pa.null()}, include_columns=["n11"]))),
    (b"s,t,st\nxa,yb,xz\nab,cd,ef\n", pc.starts_with(pc.field("st"), "x"),
     dict(convert_options=pacsv.ConvertOptions(column_types={"s": pa.int64()}, include_columns=["st"]))),
], ids=["a name inside another, repeated", "empty names", "a column left out, named inside another",
        "a text function, names inside the name"])
def test_an_expression_reads_only_the_columns_it_references(data, filters, options):
    """pyarrow lists no Expression's columns; each name its text mentions once counted."""
    got = arrow_bridge.read_csv(io.BytesIO(data), filters=filters, **options)
    assert got.equals(pacsv.read_csv(io.BytesIO(data), **options).filter(filters))


@pytest.mark.parametrize("filters", [[("b", "is null")], [("b", "=", 1)], pc.field("b").is_null()], ids=str)
@pytest.mark.parametrize("split", [None, "device"])
def test_a_filter_reads_a_column_include_missing_columns_adds(tmp_path, filters, split):
    path = tmp_path / "a.csv"
    path.write_bytes(b"a\n1\n2\n")
    options = pacsv.ConvertOptions(include_columns=["a", "b"], include_missing_columns=True)
    device = dict(device="modern-gen4", split=split) if split else {}
    got = arrow_bridge.read_csv(path, convert_options=options, filters=filters, **device)
    assert got.equals(pacsv.read_csv(path, convert_options=options).filter(RowFilter(filters).expression))


def test_read_pandas_and_dask_take_filters(tmp_path):
    import dask_plugin

    path = tmp_path / "l.csv"
    path.write_bytes(DATA)
    filters = FILTERS[0]
    expected = _expected(DATA, filters).to_pandas(types_mapper=pd_arrow_types)
    dask_frame = dask_plugin.read_csv(str(path), filters=filters, blocksize=20_000).compute()
    assert dask_frame.reset_index(drop=True).equals(expected)
    # read_pandas reads values as pandas does (empty text is missing); a column compared with a date is a date
    as_pandas = pacsv.ConvertOptions(strings_can_be_null=True, null_values=PANDAS_NULL_VALUES)
    expected = _expected(DATA, filters, convert_options=as_pandas).to_pandas(types_mapper=pd_arrow_types)
    frame = arrow_bridge.read_pandas(path, filters=filters)
    assert frame.equals(expected)
    assert str(frame.l_shipdate.dtype) == "date32[day][pyarrow]" and frame.l_flag.isna().any()


def pd_arrow_types(type_: pa.DataType):
    import pandas as pd

    return pd.ArrowDtype(type_)


@pytest.mark.parametrize("filters, message", [
    ([("nope", "=", 1)], "does not have: ['nope']"),
    ([("l_flag", "~", 1)], "unknown operator '~'"),
    ([("l_flag", "in", "A")], "needs a collection"),
    ([("l_flag", "is null", 3)], "takes no value"),
    ([("l_flag", ">")], "needs a value"),
    ([("l_flag", ">", 3)], "cannot be evaluated on columns (l_flag: string)"),
    (pc.field("nope") > 1, "No match for FieldRef.Name(nope)"),
    ("l_flag > 1", "non-empty DNF list"),
])
def test_a_filter_that_cannot_apply_says_why(filters, message):
    with pytest.raises(FilterError) as caught:
        arrow_bridge.read_csv(io.BytesIO(DATA), filters=filters)
    assert message in str(caught.value)


def test_a_filter_error_is_a_value_error():
    assert issubclass(FilterError, ValueError)


def test_a_filter_error_is_caught_as_pyarrows():
    """An Expression pyarrow cannot evaluate on the column: its ArrowInvalid, with its words."""
    data = b"c0\n204\n18001292150507727848\n"
    co = pacsv.ConvertOptions(column_types={"c0": pa.uint64()})
    expression = pc.field("c0") != 204
    with pytest.raises(pa.ArrowInvalid, match="not in range") as theirs:
        pacsv.read_csv(io.BytesIO(data), convert_options=co).filter(expression)
    with pytest.raises(pa.ArrowInvalid, match="not in range") as ours:
        arrow_bridge.read_csv(io.BytesIO(data), convert_options=co, filters=expression)
    assert isinstance(ours.value, FilterError) and not isinstance(theirs.value, FilterError)
    import pickle  # a Dask worker's error travels pickled
    assert str(pickle.loads(pickle.dumps(ours.value))) == str(ours.value)


# ---- the span stages' work, as a device's timing model sees it ------------------------------------------
class RecordingSSD(ComputationalSSD):
    """An emulated SSD that keeps the tasks its timing model was given last."""

    tasks: list = []

    def schedule(self, tasks, split, wall_s, **kw):
        self.tasks = list(tasks)
        return super().schedule(tasks, split, wall_s, **kw)


def test_the_stages_count_filter_tests_kept_values_and_aggregate_updates():
    data = b"a,b,c\n1,x,5\n2,y,6\n3,z,7\n"
    filters = [("a", ">", 1), ("b", "!=", "q")]  # 3 rows x 2 terms; 2 rows kept
    recorder = TaskRecorder()
    arrow_bridge.read_csv(io.BytesIO(data), filters=filters, usecols=["c"], device=recorder)
    assert {name: recorder.tasks[0].counters[name] for name in STAGE_COUNTERS.names} == \
        {"filter_tests": 6, "values_kept": 2 * 3, "aggregate_updates": 0}  # a, b read for the filter alone
    arrow_bridge.aggregate_csv(io.BytesIO(data), [("c", "sum"), ("c", "max")], group_by=["b"], filters=filters,
                               device=recorder)
    # per kept row: c's count, sum and max, and the key b
    assert recorder.tasks[0].counters["aggregate_updates"] == 2 * 4
    arrow_bridge.read_csv(io.BytesIO(data), device=recorder)
    assert not set(STAGE_COUNTERS.names) & set(recorder.tasks[0].counters)  # no stages, no stage counters


def _stage_counters_by_offset(tasks) -> dict[int, dict]:
    """``{offset in the data: the task's counters}``: tasks cover the data end to end, in file order."""
    spans, offset = {}, 0
    for task in tasks:
        spans[offset] = dict(task.counters)
        offset += task.text_bytes
    return spans


STAGED_READS = {
    "filter": lambda path, **kw: arrow_bridge.read_csv(path, filters=FILTERS[1], usecols=["l_comment"], **kw),
    "aggregate": lambda path, **kw: arrow_bridge.aggregate_csv(
        path, [("l_quantity", "sum"), ("l_discount", "mean")], group_by=["l_flag"], filters=FILTERS[0], **kw),
}


@pytest.mark.parametrize("read", sorted(STAGED_READS))
def test_stage_work_is_counted_the_same_on_every_path(tmp_path, monkeypatch, read):
    """As the parse's counters (tests/arrow_bridge/test_counters.py): the host's fused and
    general paths, every device split, and tasks a full task queue returns raw."""
    from arrow_bridge.executors import HostExecutor

    path = tmp_path / "l.csv"
    path.write_bytes(DATA)
    run = STAGED_READS[read]
    recorder = TaskRecorder()
    expected = run(path, device=recorder, block_size=1 << 12, n_threads=2)
    reference = _stage_counters_by_offset(recorder.tasks)
    assert sum(c["filter_tests"] for c in reference.values()) > 0 and len(reference) >= 5
    assert sum(c["values_kept" if read == "filter" else "aggregate_updates"] for c in reference.values()) > 0
    devices = [("modern-gen4", split, {}) for split in ("device", "static:0.5", "dynamic")]
    devices.append(("summarizer-board", "dynamic", {"task_queue.slots": 1}))  # returns tasks raw
    for profile, split, overrides in devices:
        with RecordingSSD(profile, workers=2, **overrides) as ssd:
            got = run(path, device=ssd, split=split, block_size=1 << 12, n_threads=2)
        assert got.equals(expected)
        assert _stage_counters_by_offset(ssd.tasks) == reference, (profile, split)
    with monkeypatch.context() as patch:
        patch.setattr(HostExecutor, "parse_fast", lambda self, span, plan, result: False)
        assert run(path, device=recorder, block_size=1 << 12, n_threads=2).equals(expected)
    assert _stage_counters_by_offset(recorder.tasks) == reference


# ---- split="sampled": Biscuit's offload decision ----------------------------------------------------------
SELECTIVE, UNSELECTIVE = [("l_quantity", "<", 2)], [("l_quantity", ">", 1)]  # ~2% and ~97% of rows kept
#: Summarizer's 16x what-if (two cores at 1.6 GHz, [S] Sec. 6.5) with the i5-6500's four host cores ([S] Sec. 6.2):
#: the device's link is half its internal bandwidth, so what it sends decides whether it pays.
SUMMARIZER_16X = {"cores.count": 2, "cores.clock_MHz": 1600.0, "host.cores": 4}


def _sampled_read(path, profile, filters, **overrides):
    from ndp_core.report import collect

    with collect() as runs:
        table = arrow_bridge.read_csv(path, filters=filters, device=ComputationalSSD(profile, **overrides),
                                      split="sampled")
    return table, runs.reports[0]


@pytest.fixture(scope="module")
def larger_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("sampled") / "l.csv"
    path.write_bytes(_lineitem_like(20_000))  # 0.6 MB: five tasks of 128 KiB
    return path


@pytest.mark.parametrize("filters", [SELECTIVE, UNSELECTIVE], ids=["selective", "unselective"])
def test_a_sampled_split_offloads_a_filter_only_where_it_pays(larger_file, filters):
    table, report = _sampled_read(larger_file, "summarizer-board", filters, **SUMMARIZER_16X)
    (decision,) = report.decisions
    assert decision.samples == 5 and decision.sampled_rows > 15_000
    assert (decision.choice == "device") == (filters is SELECTIVE)  # kept rows are the device's output
    assert (decision.device_s < decision.host_s) == (filters is SELECTIVE)
    assert abs(decision.selectivity - (0.02 if filters is SELECTIVE else 0.98)) < 0.02
    assert report.split == decision.choice and report.offload_fraction == (filters is SELECTIVE)
    assert table.equals(_expected(larger_file.read_bytes(), filters))
    assert f"offload (sampled)   {decision.choice}: 5 spans sampled" in str(report)


@pytest.mark.parametrize("overrides, choice", [({}, "host"), ({"host.cores": 1}, "device")],
                         ids=["12 host cores", "one host thread"])
def test_on_biscuit_the_cores_parse_every_row_whatever_the_selectivity(larger_file, overrides, choice):
    """The device parses every record before its filter drops any, so the kept share moves only
    the link's bytes, which never bound biscuit-pm: its two cores lose to the Xeons' twelve, win
    against one thread (Biscuit's Conv, a MariaDB query), for a selective filter and an unselective one."""
    for filters in (SELECTIVE, UNSELECTIVE):
        table, report = _sampled_read(larger_file, "biscuit-pm", filters, **overrides)
        assert report.decisions[0].choice == choice
        assert table.equals(_expected(larger_file.read_bytes(), filters))


def test_sampled_decisions_add_up_and_need_a_device(larger_file):
    from ndp_core.report import Report

    _, selective = _sampled_read(larger_file, "summarizer-board", SELECTIVE, **SUMMARIZER_16X)
    _, unselective = _sampled_read(larger_file, "summarizer-board", UNSELECTIVE, **SUMMARIZER_16X)
    both = Report.combine([selective, unselective], parallel=True)
    assert [d.choice for d in both.decisions] == ["device", "host"]
    assert "2 reads sampled: 1 on the device, 1 on the host" in str(both)
    assert both.to_dict()["decisions"][0]["choice"] == "device"
    with pytest.raises(ValueError, match="split='sampled' needs a device"):
        arrow_bridge.read_csv(larger_file, split="sampled")
