"""The reader on an emulated computational SSD: the same Table as the host path.

Differential: random CSV files (``csvgen``) read on the host and through
``device_emulator.ComputationalSSD`` under every split policy, several
profiles (page sizes 512 B-16 KiB), small block sizes (many tasks, records
crossing pages) and fault plans; the Tables must be identical bit for bit, or
both reads must fail with the same error. Once column types are known the app
tries the fused kernel first (``kernels/fused.py``); spies on the host side
count how often it was asked to and how often it parsed the span.
"""
from __future__ import annotations

import os
import tempfile
import threading

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

import arrow_bridge
from arrow_bridge import fast_path
from arrow_bridge.converters import ValueRules
from arrow_bridge.dialect import Dialect
from arrow_bridge.executors import DeviceExecutor, HostExecutor, device as device_executor
from arrow_bridge.executors.device_buffers import fused_section
from arrow_bridge.kernels.span_layout import RESULT, TASK, fused_outputs
from arrow_bridge.kernels.status import READER_COUNTERS
from arrow_bridge.options import CsvOptions
from arrow_bridge.reader import CsvReader
from csvgen import assert_tables_identical, csv_cases, outcome
from device_emulator import CalibrationWarning, ComputationalSSD, FaultPlan
from ndp_core.device import HostOnly
from ndp_core.engine import Status
from ndp_core.report import collect

SPLITS = ["host", "device", "static:0", "static:0.3", "static:1", "dynamic"]
PROFILES = ["modern-gen4", "summarizer-board", "morpheus-isca16", "hods-fpga", "biscuit-pm", "modern-gen4/512"]
FAULTS = [None, FaultPlan(media_error=0.2, app_failure=0.2, link_timeout=0.2, tq_overflow=0.2, seed=3)]


def _device(devices, profile: str, faults: int) -> ComputationalSSD:
    """The SSD of ``profile`` (``modern-gen4/512``: 512-byte pages, so records span
    many pages) with fault plan ``FAULTS[faults]``."""
    name, _, page_size = profile.partition("/")
    return devices(name, FAULTS[faults], **({"flash.page_size": int(page_size)} if page_size else {}))


class FusedSpy:
    """Counts the device tasks read back: those whose args asked for a fused
    attempt, and those the fused kernel parsed (the others gave up in the app
    and ran the general path there); and the commands that came back
    OUT_OF_SPACE (a give-up in an arena sized for the fused layout alone)."""

    def __init__(self, monkeypatch):
        self.tasks = self.asked = self.fused = self.out_of_space = 0
        self._lock = threading.Lock()
        read_arena, submit = device_executor.read_arena, DeviceExecutor._submit

        def count_submit(executor, *args):
            done = submit(executor, *args)
            with self._lock:
                self.out_of_space += done.status == Status.OUT_OF_SPACE
            return done

        def spy(arena, scratch, layout, *args):
            read_arena(arena, scratch, layout, *args)
            header = arena[layout.args[TASK.result]:][: 8 * RESULT.size].view(np.int64)
            with self._lock:
                self.tasks += 1
                self.asked += bool(layout.args[TASK.fused])
                self.fused += int(header[RESULT.fused])

        monkeypatch.setattr(device_executor, "read_arena", spy)
        monkeypatch.setattr(DeviceExecutor, "_submit", count_submit)


def _span_counters(monkeypatch, read) -> tuple[pa.Table, list[list[int]]]:
    """The table ``read()`` returns and each span's work counters, in file order."""
    results = []
    executor_for = CsvReader._executor_for

    class Recording:
        """Passes a span to the executor the reader chose and keeps its result."""

        def __init__(self, executor):
            self.executor = executor

        def parse(self, span, plan):
            results.append(self.executor.parse(span, plan))
            return results[-1]

    with monkeypatch.context() as patch:
        patch.setattr(CsvReader, "_executor_for", lambda self, span: Recording(executor_for(self, span)))
        table = read()
    return table, [r.counters.tolist() for r in sorted(results, key=lambda r: r.span.offset)]


def _read(path: str, case, **kw):
    kw.update(case.dialect.pandas_kwargs())
    if not case.header:
        kw["header"] = None
    if case.skip_rows:
        kw["skiprows"] = case.skip_rows
    return outcome(lambda: arrow_bridge.read_csv(path, **kw))


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=csv_cases(max_rows=60), split=st.sampled_from(SPLITS), profile=st.sampled_from(PROFILES),
       faults=st.sampled_from(range(len(FAULTS))), block_size=st.sampled_from([64, 300, 4096, 1 << 20]),
       on_bad_lines=st.sampled_from(["error", "skip"]))
def test_device_path_equals_host_path(devices, case, split, profile, faults, block_size, on_bad_lines):
    with tempfile.NamedTemporaryFile(suffix=".csv", delete=False) as f:
        f.write(case.data)
    try:
        kw = dict(block_size=case.effective_block_size(block_size), on_bad_lines=on_bad_lines, n_threads=2)
        host_table, host_error = _read(f.name, case, **kw)
        with collect() as runs:
            table, error = _read(f.name, case, device=_device(devices, profile, faults), split=split, **kw)
    finally:
        os.unlink(f.name)
    if host_error is not None:
        assert error is not None and str(error) == str(host_error), (error, host_error)
    else:
        assert error is None, error
        assert_tables_identical(table, host_table, f"{profile} {split} faults={faults}")
        pages = runs.total.pages
        if split in ("device", "static:1") and table.num_rows and not faults:
            assert pages["device"] > 0 and pages["host"] == 0, pages


def _lineitem_like(tmp_path, rows: int = 3000) -> str:
    path = tmp_path / "mixed.csv"
    lines = ["id,price,flag,day,note"]
    for i in range(rows):
        note = f'"multi\nline {i}"' if i % 97 == 0 else f"n{i % 13}"
        lines.append(f"{i},{i * 1.25:.2f},{'true' if i % 3 else 'false'},2020-01-{1 + i % 28:02d},{note}")
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_report_counts_every_page_once_and_sides_follow_the_split(tmp_path):
    path = _lineitem_like(tmp_path)
    host = arrow_bridge.read_csv(path, block_size=4096)
    with ComputationalSSD("summarizer-board", workers=2) as ssd:
        for split, device_pages in [("host", 0), ("device", None), ("static:0.5", None)]:
            with collect() as runs:
                table = arrow_bridge.read_csv(path, device=ssd, split=split, block_size=4096)
            assert_tables_identical(table, host)
            (report,) = runs.reports
            assert report.split == split and report.device == ssd.name
            assert report.text_bytes == os.path.getsize(path) - len("id,price,flag,day,note\n")
            pages = report.pages
            if split == "host":
                assert pages["device"] == 0 and pages["host"] > 0
            elif split == "device":
                assert pages["host"] == 0 and pages["device"] > 0
            else:
                assert pages["host"] > 0 and pages["device"] > 0
            assert report.makespan_s > 0 and report.wall_s > 0


def test_faults_are_counted_and_do_not_change_the_table(tmp_path):
    path = _lineitem_like(tmp_path)
    host = arrow_bridge.read_csv(path, block_size=2048)
    plan = FaultPlan(tasks={0: "media_error", 1: "app_failure", 2: "link_timeout", 3: "tq_overflow"})
    with ComputationalSSD("modern-gen4", workers=2, faults=plan) as ssd, collect() as runs:
        table = arrow_bridge.read_csv(path, device=ssd, split="device", block_size=2048)
    assert_tables_identical(table, host)
    faults = runs.total.faults
    assert {k: faults[k] for k in ("media_error", "app_failure", "link_timeout", "tq_overflow")} == {
        "media_error": 1, "app_failure": 1, "link_timeout": 1, "tq_overflow": 1}
    assert runs.total.pages["raw"] > 0


def test_a_tiny_task_queue_sends_tasks_back_raw_in_dynamic_mode(tmp_path):
    path = _lineitem_like(tmp_path, rows=6000)
    host = arrow_bridge.read_csv(path, block_size=4096)
    with ComputationalSSD("summarizer-board", workers=2, **{"task_queue.slots": 1}) as ssd, collect() as runs:
        table = arrow_bridge.read_csv(path, device=ssd, split="dynamic", block_size=4096)
    assert_tables_identical(table, host)
    assert runs.total.pages["raw"] > 0 and runs.total.pages["device"] > 0


def test_errors_from_the_device_name_the_same_line_and_offset(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_bytes(b"a,b\n" + b"1,2\n" * 5000 + b"3,oops\n" + b"4,5\n" * 10)
    with pytest.raises(arrow_bridge.CsvParseError) as on_host:
        arrow_bridge.read_csv(str(path), dtype={"b": pa.int64()}, block_size=4096)
    with ComputationalSSD("modern-gen4", workers=2) as ssd, pytest.raises(arrow_bridge.CsvParseError) as on_ssd:
        arrow_bridge.read_csv(str(path), device=ssd, split="device", dtype={"b": pa.int64()}, block_size=4096)
    assert str(on_ssd.value) == str(on_host.value) and on_ssd.value.line == 5002


def test_host_only_device_and_profile_names(tmp_path):
    path = _lineitem_like(tmp_path, rows=200)
    host = arrow_bridge.read_csv(path)
    with collect() as runs:
        assert_tables_identical(arrow_bridge.read_csv(path, device=HostOnly()), host)
        assert_tables_identical(arrow_bridge.read_csv(path, device="modern-gen4", split="device"), host)
    assert [r.device for r in runs.reports] == ["host-only", "modern-gen4"]


def test_device_needs_a_local_file():
    with pytest.raises(ValueError, match="local file"):
        arrow_bridge.read_csv(b"a\n1\n", device="modern-gen4", split="device")


def test_a_bad_split_is_rejected(tmp_path):
    path = _lineitem_like(tmp_path, rows=10)
    with pytest.raises(ValueError, match="split must be"):
        arrow_bridge.read_csv(path, device="modern-gen4", split="static:2")


def test_calibrate_fits_host_costs_the_model_accepts(tmp_path):
    path = _lineitem_like(tmp_path, rows=20000)
    ints = tmp_path / "ints.csv"
    ints.write_text("a,b\n" + "".join(f"{i},{i * 7}\n" for i in range(100000)))
    # Two shapes and no nulls: the fit must say so (which units, and why), not stay silent.
    with pytest.warns(CalibrationWarning) as warned:
        costs = arrow_bridge.calibrate([path, str(ints)], block_sizes=(1 << 13, 1 << 15, 1 << 17))
    assert any("nulls: no task exercised them" in str(w.message) for w in warned)
    assert costs.n_samples > 20 and not set(costs.unfitted) & {"bytes_scanned", "ints", "floats", "temporals"}
    assert costs.rel_rmse < 1.0  # a usable fit, not a precise one (timings are noisy here)
    with ComputationalSSD("modern-gen4", workers=2, host_costs=costs) as ssd, collect() as runs:
        arrow_bridge.read_csv(path, device=ssd, split="host", block_size=1 << 14)
    assert runs.total.host_cpu_s > 0


def test_write_csv_through_the_device_writes_what_the_host_writes(tmp_path):
    import pyarrow.csv as pacsv

    table = arrow_bridge.read_csv(_lineitem_like(tmp_path, rows=5000))
    on_host, on_ssd = tmp_path / "host.csv", tmp_path / "ssd.csv"
    arrow_bridge.write_csv(table, str(on_host), batch_rows=700)
    with ComputationalSSD("morpheus-isca16", workers=2) as ssd:
        arrow_bridge.write_csv(table, str(on_ssd), device=ssd, batch_rows=700)
    assert on_ssd.read_bytes() == on_host.read_bytes()
    back = pacsv.read_csv(on_ssd, **arrow_bridge.read_back_options(table.schema))
    assert_tables_identical(back, table)


def test_a_span_over_one_commands_page_limit_is_parsed_on_the_host(tmp_path):
    path = _lineitem_like(tmp_path, rows=40000)  # ~1.3 MB: more than 65,536 pages of 16 bytes
    host = arrow_bridge.read_csv(path, block_size=4 << 20)
    with ComputationalSSD("modern-gen4", workers=2, **{"flash.page_size": 16}) as ssd, collect() as runs:
        table = arrow_bridge.read_csv(path, device=ssd, split="device", block_size=4 << 20)
    assert_tables_identical(table, host)
    assert runs.total.pages["device"] == 0 and runs.total.pages["host"] > 0


def test_large_strings_on_the_device_need_no_retries(tmp_path):
    path = _lineitem_like(tmp_path, rows=4000)
    types = {"note": pa.large_string(), "flag": pa.large_binary()}
    host = arrow_bridge.read_csv(path, dtype=types, block_size=4096)
    with ComputationalSSD("modern-gen4", workers=2) as ssd:
        submitted = []
        engine = ssd.engine
        table = None

        class Counting:  # counts the commands the reader submits through the device
            name, page_size = ssd.name, ssd.page_size
            engine = type("E", (), {k: getattr(engine, k) for k in ("cores", "stream_create", "stream_close",
                                                                     "minit", "mdeinit", "wait", "submit_read",
                                                                     "submit_task")})()
            fault_for, schedule = ssd.fault_for, ssd.schedule

        Counting.engine.submit_mread = lambda *a, **k: submitted.append(1) or engine.submit_mread(*a, **k)
        table = arrow_bridge.read_csv(path, device=Counting(), split="device", dtype=types, block_size=4096)
    assert_tables_identical(table, host)
    tasks = -(-os.path.getsize(path) // 4096)
    assert len(submitted) <= tasks + 1  # only the first task may need a second try (no estimate yet)


def test_explicit_types_of_every_width_on_the_device(tmp_path):
    path = tmp_path / "typed.csv"
    rows = [f"{i % 100},{i % 60000},{i * 0.5},{'true' if i % 2 else 'false'},2021-03-{1 + i % 28:02d},"
            f"12:{i % 60:02d}:00,2021-03-01 00:00:{i % 60:02d}.250,s{i},{'' if i % 7 else 'x'},"
            for i in range(3000)]
    path.write_text("a,b,c,d,e,f,g,h,i,j\n" + "\n".join(rows) + "\n")
    types = {"a": pa.int8(), "b": pa.uint16(), "c": pa.float32(), "d": pa.bool_(), "e": pa.date32(),
             "f": pa.time32("s"), "g": pa.timestamp("ms"), "h": pa.large_string(), "i": pa.binary(),
             "j": pa.null()}
    host = arrow_bridge.read_csv(str(path), dtype=types, block_size=4096)
    with ComputationalSSD("modern-gen4", workers=2) as ssd:
        table = arrow_bridge.read_csv(str(path), dtype=types, block_size=4096, device=ssd, split="device")
    assert_tables_identical(table, host)


_MIXED_TYPES = {"id": pa.int32(), "price": pa.float64(), "flag": pa.bool_(), "day": pa.date32(),
                "note": pa.large_string()}


def test_the_app_parses_with_the_fused_kernel_when_types_are_given(tmp_path, monkeypatch):
    path = _lineitem_like(tmp_path, rows=6000)
    kw = dict(dtype=_MIXED_TYPES, block_size=4096, n_threads=1)
    host = arrow_bridge.read_csv(path, **kw)
    with monkeypatch.context() as patch:  # the general path's counters: what the model must see
        patch.setattr(HostExecutor, "parse_fast", lambda self, span, plan, result: False)
        general, general_counters = _span_counters(patch, lambda: arrow_bridge.read_csv(path, **kw))
    spy = FusedSpy(monkeypatch)
    with ComputationalSSD("modern-gen4", workers=2) as ssd:
        table, counters = _span_counters(monkeypatch, lambda: arrow_bridge.read_csv(
            path, device=ssd, split="device", **kw))
    assert_tables_identical(table, host)
    assert_tables_identical(general, host)
    assert spy.tasks > 10 and spy.asked == spy.fused == spy.tasks
    # A host read makes the preamble's read-ahead a span of its own and a device read does not,
    # so the spans differ at the start: the work adds up the same (but for the count of spans).
    spans = READER_COUNTERS.names.index("spans")
    totals = [[sum(column) for i, column in enumerate(zip(*each)) if i != spans] for each in (counters, general_counters)]
    assert totals[0] == totals[1]


def test_the_app_parses_with_the_fused_kernel_once_types_are_inferred(tmp_path, monkeypatch):
    path = _lineitem_like(tmp_path, rows=6000)
    host = arrow_bridge.read_csv(path, block_size=4096, n_threads=2)
    spy = FusedSpy(monkeypatch)
    with ComputationalSSD("summarizer-board", workers=2) as ssd:
        table = arrow_bridge.read_csv(path, device=ssd, split="dynamic", block_size=4096, n_threads=2)
    assert_tables_identical(table, host)
    assert 0 < spy.asked < spy.tasks and spy.fused == spy.asked  # not before the first span was checked


def test_spans_the_fused_kernel_gives_up_on_give_the_same_table(tmp_path, monkeypatch):
    rows = [f"{i},{i % 7},w{i}" for i in range(8000)]
    rows[3000] = "3000,2.5,w3000"  # widens b to float64 in a later span
    for i in range(4000, 5000, 40):
        rows[i] = f"{i},1"  # bad rows (skipped) in consecutive spans
    rows[6000] = '6000,3,"two\nlines, one ""quoted"""'  # fused takes it: no reason to give up
    path = tmp_path / "irregular.csv"
    path.write_text("a,b,c\n" + "\n".join(rows))  # no final line break: the last span gives up
    kw = dict(block_size=4096, n_threads=1, on_bad_lines="skip")
    host = arrow_bridge.read_csv(str(path), **kw)
    spy = FusedSpy(monkeypatch)
    with ComputationalSSD("modern-gen4", workers=2) as ssd:
        table = arrow_bridge.read_csv(str(path), device=ssd, split="device", **kw)
    assert_tables_identical(table, host)
    assert host.schema.field("b").type == pa.float64()
    gave_up = spy.asked - spy.fused
    assert spy.fused > 10 and gave_up >= 5
    # A give-up after a fused task finds an arena sized for the fused layout and is retried
    # with room for both; one after another give-up runs the general path in the same command.
    assert 0 < spy.out_of_space < gave_up


def test_row_capacities_are_rounded_to_whole_bitmap_bytes():
    """The fused kernel takes its row capacity from the bitmaps' width (a
    multiple of 8): the value arrays must hold that many rows too."""
    opts = CsvOptions()
    plan = fast_path.FastPlan.build(2, [(0, pa.int64()), (1, pa.string())], ValueRules.from_options(opts),
                                    Dialect.from_options(opts))
    body = np.frombuffer(b"".join(b"%d,s%d\n" % (i, i) for i in range(12)), np.uint8).copy()
    rows, _, arrays, _ = plan.parse(body, 10, np.zeros(11, np.int64))
    assert rows == 12 and arrays[0].to_pylist() == list(range(12))
    assert arrays[1].to_pylist() == [f"s{i}" for i in range(12)]


def test_the_app_views_the_arena_as_the_host_allocates_the_fused_outputs():
    """``FastPlan.regions`` lays out both; the app's Numba ``fused_outputs``
    must take the same dtypes and shapes from a task's arena."""
    opts = CsvOptions()
    types = [pa.int64(), pa.int32(), pa.float64(), pa.bool_(), pa.string(), pa.date32(), pa.int16()]
    plan = fast_path.FastPlan.build(len(types) + 1, list(enumerate(types)), ValueRules.from_options(opts),
                                    Dialect.from_options(opts))
    words, arena_size, scratch_size = fused_section(plan, 100, 5000, 64)
    views = fused_outputs(np.zeros(arena_size, np.uint8), np.zeros(scratch_size, np.uint8),
                            np.array(words, np.int64), plan.ncols)
    host = plan.allocate(100, 5000)
    for name in ("i64", "i32", "f64", "bits", "offsets", "validity", "null_counts", "data_used"):
        view, array = getattr(fast_path.FusedBuffers(*views), name), getattr(host, name)
        assert (view.dtype, view.shape) == (array.dtype, array.shape), name
    assert len(views[5]) == len(host.data) == plan.string_bytes(5000) and views[6] == host.stride


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=csv_cases(max_rows=60, malformed=False, unique_names=True),
       split=st.sampled_from(["device", "dynamic"]), profile=st.sampled_from(PROFILES),
       block_size=st.sampled_from([64, 300, 4096]))
def test_device_path_with_known_types_equals_host_path(devices, case, split, profile, block_size):
    """Types given up front (those the host inferred): the app tries the fused
    kernel from the first task on. (Faults send tasks to the host: the test
    above covers them.)"""
    with tempfile.NamedTemporaryFile(suffix=".csv", delete=False) as f:
        f.write(case.data)
    try:
        kw = dict(block_size=case.effective_block_size(block_size), n_threads=2)
        inferred, error = _read(f.name, case, **kw)
        assume(error is None and inferred.num_columns)
        kw["dtype"] = dict(zip(inferred.column_names, inferred.schema.types))
        host_table, host_error = _read(f.name, case, **kw)
        with pytest.MonkeyPatch.context() as patch:
            spy = FusedSpy(patch)
            table, error = _read(f.name, case, device=_device(devices, profile, 0), split=split, **kw)
    finally:
        os.unlink(f.name)
    event(f"fused parsed a task: {spy.fused > 0}; gave up on one: {spy.asked > spy.fused}")
    assert (error is None) == (host_error is None), (error, host_error)
    if error is None:
        assert_tables_identical(table, host_table, f"{profile} {split}")
    else:
        assert str(error) == str(host_error)


def test_a_header_ending_a_page_aligned_file_gives_an_empty_table(tmp_path):
    """The empty span after the header lies past the last page: no device command."""
    path = tmp_path / "header-only.csv"
    path.write_bytes(b"#" * 16381 + b"\nc0")  # 16 KiB, modern-gen4's page size
    host = arrow_bridge.read_csv(str(path), skiprows=1, block_size=64)
    with ComputationalSSD("modern-gen4", workers=2) as ssd:
        table = arrow_bridge.read_csv(str(path), skiprows=1, block_size=64, device=ssd, split="device")
    assert_tables_identical(table, host)
    assert table.num_rows == 0


def _quoted_newlines(tmp_path, rows: int) -> str:
    """Every record holds a quoted line break: many cuts land inside quotes."""
    path = tmp_path / "quoted.csv"
    path.write_text("id,note\n" + "".join(f'{i},"line {i}\nand more"\n' for i in range(rows)))
    return str(path)


@pytest.mark.parametrize("make_file, splits", [(_lineitem_like, ("device", "static:0.5")),
                                               (_quoted_newlines, ("device",))])
def test_the_host_reads_only_the_cuts_of_spans_the_device_parses(tmp_path, monkeypatch, make_file, splits):
    """The device reads a task's pages itself; the host's span cutter reads the
    last 64 KiB of each block to find the cut, not the block (besides the
    header's block and the last, short one), also where a cut lands inside
    quotes and the span's tail joins the next. (With a static split, a joined
    span takes the side of the block its tail lies in.)"""
    from arrow_bridge.source import PathSource

    path, block = make_file(tmp_path, rows=300_000), 1 << 20
    size = os.path.getsize(path)
    host = arrow_bridge.read_csv(path, block_size=block)
    read = []
    for name in ("readinto", "readinto_at"):  # read_range reads through readinto_at
        original = getattr(PathSource, name)
        monkeypatch.setattr(PathSource, name, lambda self, *a, _f=original: read.append(_f(self, *a)) or read[-1])
    with ComputationalSSD("modern-gen4", workers=2) as ssd:
        most = {"device": 2 * block + (64 << 10) * (size // block), "static:0.5": 0.75 * size}
        for split in splits:
            read.clear()
            table = arrow_bridge.read_csv(path, device=ssd, split=split, block_size=block)
            assert_tables_identical(table, host)
            host_bytes = sum(n if isinstance(n, int) else len(n) for n in read)
            assert 0 < host_bytes <= most[split], (split, host_bytes, size)


def test_a_file_of_whole_blocks_reads_no_host_page(devices, tmp_path):
    # 128 bytes in 64-byte blocks: the cutter ends with an empty span at EOF, which the device
    # declines and the host "parses"; it reads no page and the Report must not count one
    path = tmp_path / "blocks.csv"
    path.write_bytes(b"a,b\n" + b"".join(b"%03d,%03d\n" % (k, k) for k in range(15)) + b"9,9\n")
    assert path.stat().st_size == 128
    with collect() as runs:
        table = arrow_bridge.read_csv(path, device=_device(devices, "modern-gen4", 0), split="static:1",
                                      block_size=64)
    assert table.equals(arrow_bridge.read_csv(path, block_size=64))
    assert runs.total.pages["device"] > 0 and runs.total.pages["host"] == 0, runs.total.pages
