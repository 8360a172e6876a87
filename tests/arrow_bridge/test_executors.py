"""The executor seam: executors registered with ``offload=`` give the same Table.

A third executor is added by registration alone (as the GPU will be): these
tests register a small one that delegates to a host executor of its own, a
device executor with its own host fallback, and one whose start fails.
"""
from __future__ import annotations

import warnings

import pytest

import arrow_bridge
from arrow_bridge.executors import DeviceExecutor, HostExecutor, SpanExecutor, SpanPlan, SpanResult
from csvgen import assert_tables_identical
from device_emulator import ComputationalSSD, FaultPlan
from ndp_core.report import collect

ROWS = b"".join(b"%d,%d.5,w%d,2020-01-%02d\n" % (i, i % 97, i, 1 + i % 28) for i in range(20_000))
TEXT = b"id,price,word,day\n" + ROWS


class EveryOtherSpan:
    """Takes every other block's span and parses it with a host executor of its
    own: what a GPU executor would do with its fallback."""

    def __init__(self, block_size: int):
        self.block_size = block_size
        self.host = HostExecutor()
        self.taken: list[int] = []
        self.events: list[str] = []

    def start(self, read) -> None:
        self.events.append("start")
        self.host.start(read)

    def takes(self, offset: int, length: int) -> bool:
        return (offset // self.block_size) % 2 == 1

    def leaves_unread(self, offset: int) -> bool:
        return False

    def parse(self, span, plan: SpanPlan) -> SpanResult:
        self.taken.append(span.offset)
        return self.host.parse(span, plan)

    def finish(self, results, plan: SpanPlan) -> None:
        self.events.append(f"finish {len(results)}")

    def close(self) -> None:
        self.events.append("close")
        self.host.close()


class FailsToStart(EveryOtherSpan):
    def start(self, read) -> None:
        self.events.append("start")
        raise RuntimeError("no such accelerator")


def test_a_registered_executor_parses_its_spans_and_the_table_is_the_same(write_file):
    path = write_file("rows.csv", TEXT)
    host = arrow_bridge.read_csv(path, block_size=1 << 16)
    executor = EveryOtherSpan(1 << 16)
    assert isinstance(executor, SpanExecutor)
    table = arrow_bridge.read_csv(path, block_size=1 << 16, offload=[executor])
    assert_tables_identical(table, host)
    assert len(executor.taken) >= 3
    assert executor.events[0] == "start" and executor.events[-1] == "close"
    assert executor.events[1].startswith("finish ")


def test_executors_are_closed_when_one_fails_to_start(write_file):
    path = write_file("rows.csv", TEXT)
    executor = FailsToStart(1 << 16)
    with pytest.raises(RuntimeError, match="no such accelerator"):
        arrow_bridge.read_csv(path, offload=[executor])
    assert executor.events == ["start", "close"]


def test_a_device_executor_with_its_own_host_falls_back_on_faults(write_file):
    """The device executor parses what fails on the host executor it was given,
    even one the reader did not create."""
    path = write_file("rows.csv", TEXT)
    host = arrow_bridge.read_csv(path, block_size=1 << 16)
    faults = FaultPlan(tasks={0: "app_failure", 2: "media_error"})
    with ComputationalSSD("modern-gen4", workers=2, faults=faults) as ssd, collect() as runs:
        device = DeviceExecutor(ssd, "device", HostExecutor())
        table = arrow_bridge.read_csv(path, block_size=1 << 16, offload=[device])
    assert_tables_identical(table, host)
    report = runs.total
    assert report.faults["app_failure"] == 1 and report.faults["media_error"] >= 1
    assert report.pages["raw"] > 0 and report.pages["device"] > 0


def test_bad_line_warnings_point_at_the_callers_line(write_file):
    path = write_file("bad.csv", b"a,b\n1,2\n3\n4,5\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        arrow_bridge.read_csv(path, on_bad_lines="warn")
    assert [w.filename for w in caught] == [__file__]


def test_an_app_refuses_a_plan_of_other_layouts_and_the_host_parses(write_file, monkeypatch):
    """A kernel cached before its layouts changed would read words where they no
    longer are: the plan's version (a fingerprint of the layouts) differs from the
    one compiled in, so the app refuses every task and the host parses the pages."""
    from arrow_bridge.executors import device_buffers

    path = write_file("rows.csv", TEXT)
    host = arrow_bridge.read_csv(path, block_size=1 << 16)
    monkeypatch.setattr(device_buffers, "PLAN_VERSION", device_buffers.PLAN_VERSION + 1)
    with ComputationalSSD("modern-gen4", workers=2) as ssd, collect() as runs:
        table = arrow_bridge.read_csv(path, block_size=1 << 16, device=ssd, split="device")
    assert_tables_identical(table, host)
    report = runs.total
    assert report.pages["device"] == 0 and report.pages["raw"] > 0
    assert report.faults["app_failure"] == report.tasks  # what the model charged: each task fell back


@pytest.mark.parametrize("split", ["device", "dynamic", "static:0.5"])
def test_a_split_without_a_device_is_an_error_not_a_quiet_host_read(write_file, split):
    path = write_file("rows.csv", TEXT)
    with pytest.raises(ValueError, match=f"split='{split}' needs a device"):
        arrow_bridge.read_csv(path, split=split)
