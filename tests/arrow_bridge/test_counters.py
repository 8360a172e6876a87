"""Work counters are the same for the same span, whichever path parsed it.

The timing model prices each task's work counters (``READER_COUNTERS``:
bytes scanned, rows, fields, values converted per type, string bytes, nulls),
so every place a span can be parsed must count the same work for it: the
host's fused kernel and its general path (tokenize + convert), the device's
StorageApp (fused and general), every split, and tasks that failed on the
device and were parsed on the host instead. Each test reads real files with
small blocks (many spans, records and quoted line breaks across cuts) and
compares what the timing model was handed, task by task, keyed by where the
span starts in the file.
"""
from __future__ import annotations

import numpy as np
import pytest

import arrow_bridge
from arrow_bridge import fast_path
from arrow_bridge.executors import HostExecutor, TaskRecorder
from arrow_bridge.executors import device as device_executor
from arrow_bridge.kernels.span_layout import RESULT, TASK
from arrow_bridge.kernels.status import READER_COUNTERS
from arrow_bridge.reader import CsvReader
from csvgen import assert_tables_identical
from device_emulator import ComputationalSSD, FaultPlan
from ndp_core.device import DEVICE, HOST, RAW

BLOCK = 4096


class RecordingSSD(ComputationalSSD):
    """An emulated SSD that keeps the tasks its timing model was given (the last run's)."""

    tasks: list = []

    def schedule(self, tasks, split, wall_s, **kw):
        self.tasks = list(tasks)
        return super().schedule(tasks, split, wall_s, **kw)


# ---- the files ------------------------------------------------------------------------------------
def _numbers(rows: int = 2500) -> bytes:
    lines = [b"id,qty,price,ratio"]
    for i in range(rows):
        lines.append(b"%d,%d,%.2f,%s" % (i, (i * 7919) % 1000 - 500, i * 1.25,
                                         b"%.17g" % (i / 7.0) if i % 5 else b"-1.5e-%d" % (i % 300)))
    return b"\n".join(lines) + b"\n"


def _strings(rows: int = 1500) -> bytes:
    lines = [b"k,name,note"]
    for i in range(rows):
        if i % 11 == 0:
            note = b'"two\nlines, %d"' % i  # a quoted line break (spans are cut inside it)
        elif i % 7 == 0:
            note = b'"say ""hi"" %d"' % i  # doubled quotes: unescaped
        elif i % 5 == 0:
            note = b'"a,b,%d"' % i  # a quoted delimiter
        else:
            note = b"plain %d" % i
        lines.append(b"%d,%s,%s" % (i, b"n" * (i % 37), note))
    return b"\r\n".join(lines) + b"\r\n"


def _temporals(rows: int = 2000) -> bytes:
    lines = [b"day,at,when"]
    for i in range(rows):
        lines.append(b"2020-%02d-%02d,%02d:%02d:%02d,2021-%02d-%02dT%02d:%02d:%02d" % (
            1 + i % 12, 1 + i % 28, i % 24, i % 60, (7 * i) % 60, 1 + (i * 5) % 12, 1 + i % 27, i % 24,
            (3 * i) % 60, i % 60))
    return b"\n".join(lines) + b"\n"


def _bools_nulls_bad(rows: int = 2500) -> bytes:
    """Bools and nulls (empty, NA, NULL) in every kind of column, and a row of the wrong width."""
    lines = [b"ok,n,x,s"]
    for i in range(rows):
        ok = [b"true", b"false", b"", b"True"][i % 4]
        n = b"NA" if i % 3 == 0 else b"%d" % i
        x = b"" if i % 4 == 1 else (b"NULL" if i % 9 == 0 else b"%.3f" % (i / 3))
        s = b"" if i % 6 == 0 else b"s%d" % i
        lines.append(b",".join([ok, n, x, s]))
        if i == 1234:
            lines.append(b"true,1,2.0,too,many")  # skipped with on_bad_lines="skip"
    return b"\n".join(lines) + b"\n"


FILES = {"numbers": (_numbers, {}), "strings": (_strings, {}), "temporals": (_temporals, {}),
         "bools_nulls_bad": (_bools_nulls_bad, {"on_bad_lines": "skip"})}


@pytest.fixture(scope="module", params=sorted(FILES))
def csv_file(request, tmp_path_factory):
    make, options = FILES[request.param]
    path = tmp_path_factory.mktemp("counters") / f"{request.param}.csv"
    path.write_bytes(make())
    return str(path), options


@pytest.fixture(scope="module")
def reference(csv_file):
    """The host fast path's table and per-span counters: what every other path must match."""
    path, options = csv_file
    recorder, fused = TaskRecorder(), []
    parse = fast_path.FastPlan.parse
    with pytest.MonkeyPatch.context() as patch:  # counts the spans the fused kernel parsed
        patch.setattr(fast_path.FastPlan, "parse", lambda *a, **kw: fused.append(parse(*a, **kw)) or fused[-1])
        table = arrow_bridge.read_csv(path, device=recorder, block_size=BLOCK, n_threads=2, **options)
    assert sum(out is not None for out in fused) >= 3, "the fused kernel hardly ran: nothing to compare"
    return table, by_offset(recorder.tasks)


def by_offset(tasks) -> dict[int, tuple]:
    """``{offset in the data: (text bytes, counters)}``: tasks cover the data end to end, in file order."""
    spans, offset = {}, 0
    for task in tasks:
        spans[offset] = (task.text_bytes, dict(task.counters))
        offset += task.text_bytes
    return spans


def assert_same_counters(tasks, reference_spans, label: str) -> None:
    spans = by_offset(tasks)
    assert list(spans) == list(reference_spans), f"{label}: spans cut elsewhere"
    for offset, (length, counters) in spans.items():
        assert (length, counters) == reference_spans[offset], f"{label}: span at data offset {offset}"


# ---- the comparisons ------------------------------------------------------------------------------
def test_the_spans_exercise_every_counter(csv_file, reference):
    """Guards the comparisons below: several spans, and each file's types are counted at all."""
    _, spans = reference
    totals = {name: sum(c[name] for _, c in spans.values()) for name in next(iter(spans.values()))[1]}
    assert len(spans) >= 5
    assert totals["bytes_scanned"] == sum(length for length, _ in spans.values())
    assert totals["rows"] > 0 and totals["fields"] >= totals["rows"]
    expected = {"numbers": ["ints", "floats"], "strings": ["string_bytes", "ints"],
                "temporals": ["temporals"], "bools_nulls_bad": ["bools", "nulls", "ints", "floats", "string_bytes"]}
    name = csv_file[0].rsplit("/", 1)[-1][:-4]
    for counter in expected[name]:
        assert totals[counter] > 0, counter


def test_host_general_path_counts_what_the_fused_kernel_counts(monkeypatch, csv_file, reference):
    path, options = csv_file
    table, spans = reference
    monkeypatch.setattr(HostExecutor, "parse_fast", lambda self, span, plan, result: False)
    recorder = TaskRecorder()
    general = arrow_bridge.read_csv(path, device=recorder, block_size=BLOCK, n_threads=2, **options)
    assert_tables_identical(general, table)
    assert_same_counters(recorder.tasks, spans, "host general path")


@pytest.mark.parametrize("split", ["device", "static:0.5", "dynamic"])
@pytest.mark.parametrize("fused", [True, False], ids=["device-fused", "device-general"])
def test_device_counts_what_the_host_counts(monkeypatch, csv_file, reference, split, fused):
    path, options = csv_file
    table, spans = reference
    if not fused:  # no fused attempt in the app: every task tokenizes and converts on the device
        layout = device_executor.task_layout
        monkeypatch.setattr(device_executor, "task_layout",
                            lambda *args, **kw: layout(*args[:7], None, **dict(kw, fused_only=False)))
    fused_tasks = []
    read_arena = device_executor.read_arena

    def spy(arena, scratch, layout, *args):  # the result header says whether the app's fused kernel ran
        read_arena(arena, scratch, layout, *args)
        fused_tasks.append(int(arena[layout.args[TASK.result]:][: 8 * RESULT.size].view(np.int64)[RESULT.fused]))

    monkeypatch.setattr(device_executor, "read_arena", spy)
    with RecordingSSD("modern-gen4", workers=2) as ssd:
        got = arrow_bridge.read_csv(path, device=ssd, split=split, block_size=BLOCK, n_threads=2, **options)
    assert_tables_identical(got, table)
    assert (sum(fused_tasks) > 0) == fused
    sides = {task.side for task in ssd.tasks}
    assert DEVICE in sides and (HOST in sides) == (split == "static:0.5")
    assert_same_counters(ssd.tasks, spans, f"{split}, fused={fused}")


@pytest.mark.parametrize("split", ["device", "dynamic"])
def test_tasks_that_fail_on_the_device_count_the_host_parse_once(csv_file, reference, split):
    """Media errors and app failures: the host reads the pages and parses them.
    The engine rolls back the counters of a failed command, so the task counts
    the host's parse only; the timing model adds the wasted device work from the
    fault itself (``device_emulator.flows``)."""
    path, options = csv_file
    table, spans = reference
    plan = FaultPlan(media_error=0.3, app_failure=0.2, link_timeout=0.1, seed=11)
    with RecordingSSD("modern-gen4", workers=2, faults=plan) as ssd:
        got = arrow_bridge.read_csv(path, device=ssd, split=split, block_size=BLOCK, n_threads=2, **options)
    assert_tables_identical(got, table)
    assert {task.side for task in ssd.tasks} == {DEVICE, RAW}
    assert any(task.faults.get("app_failure") for task in ssd.tasks)
    assert_same_counters(ssd.tasks, spans, f"{split} with faults")


def _raw_returned_run(monkeypatch, path, options):
    """Dynamic mode with one task-queue slot: the model sends tasks back raw (in
    modeled time) and the host parses them again after the run. Returns the
    table, the tasks the model was given and every span's result after the read."""
    results = []
    executor_for = CsvReader._executor_for

    class Keeping:
        def __init__(self, executor):
            self.executor = executor

        def parse(self, span, plan):
            results.append(self.executor.parse(span, plan))
            return results[-1]

    monkeypatch.setattr(CsvReader, "_executor_for", lambda self, span: Keeping(executor_for(self, span)))
    with RecordingSSD("summarizer-board", workers=2, **{"task_queue.slots": 1}) as ssd:
        table = arrow_bridge.read_csv(path, device=ssd, split="dynamic", block_size=BLOCK, n_threads=2, **options)
    return table, ssd.tasks, results


def test_tasks_a_full_task_queue_returns_raw_were_modeled_with_one_parse(monkeypatch, csv_file, reference):
    path, options = csv_file
    table, spans = reference
    got, tasks, results = _raw_returned_run(monkeypatch, path, options)
    assert_tables_identical(got, table)
    assert any(r.side == RAW for r in results), "no task came back raw"
    assert_same_counters(tasks, spans, "dynamic, one slot (as modeled)")


def test_tasks_a_full_task_queue_returns_raw_keep_one_parse_of_counters(monkeypatch, csv_file, reference):
    """After the run the span's result holds one parse's counters, as every
    other span's does (what a later consumer of the results would price)."""
    path, options = csv_file
    _, spans = reference
    _, _, results = _raw_returned_run(monkeypatch, path, options)
    first = min(r.span.offset for r in results)
    after = {r.span.offset - first: READER_COUNTERS.modeled_values(r.counters) for r in results}
    assert {offset: after[offset] for offset in spans} == {offset: c for offset, (_, c) in spans.items()}
