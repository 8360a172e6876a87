"""Fixtures for the device_emulator tests: a hand-computable profile and tasks.

Each fixture is a factory (call it with the arguments you need).
"""
from __future__ import annotations

from importlib import resources

import pytest

from device_emulator.profile import load_profile
from ndp_core.device import DEVICE, SplitPolicy, TaskWork

#: The counters the reader's StorageApps report (what its tasks carry).
READER_COUNTERS = ("bytes_scanned", "rows", "fields", "ints", "floats", "bools", "temporals", "string_bytes", "nulls")
#: Every work unit a price table of the simple profile prices: the counters plus ``tasks``.
PRICED = READER_COUNTERS + ("tasks",)


def _zero_power() -> dict:
    out = {"platform_idle_W": 0.0}
    for resource in ("flash", "device_cores", "pipeline", "link", "host_cpu", "p2p"):
        out[resource] = {"active_W": 0.0, "idle_W": 0.0}
    return out


def _simple_profile(**extra):
    """Round numbers, easy to follow by hand.

    flash: 1 channel x 1 way, 1000-byte pages, tR 10 us, 100 MB/s -> a page
    transfers in 10 us; the array is busy 10 us per page and the page lands
    10 us later (tR + xfer - interval). Device core: 1 MHz, 1 cycle per byte
    scanned. Link: 1 MB/s, no command overhead. Host: 1 core at 1 MHz, 0.25
    cycles per byte scanned. No power unless given.
    """
    base = {
        "flash": {"channels": 1, "ways": 1, "page_size": 1000, "tR_us": 10.0, "channel_MBps": 100.0,
                  "read_retry_factor": 3.0},
        "cores": {"count": 1, "clock_MHz": 1.0, "fpu": True, "soft_float_factor": 1.0, "float_counters": ["floats"],
                  "cycles": {u: 0.0 for u in PRICED} | {"bytes_scanned": 1.0}},
        "pipeline": {"scope": "none", "scan_counters": ["bytes_scanned"]},
        "link": {"pcie_gen": 3, "lanes": 1, "efficiency": 1.0, "max_MBps": 1.0,
                 "per_command_overhead_us": 0.0, "timeout_s": 1e-3},
        "host": {"cores": 1, "clock_MHz": 1.0, "cycles": {u: 0.0 for u in PRICED} | {"bytes_scanned": 0.25}},
        "power": _zero_power(),
        "task_queue": {"slots": 8},
    }
    p = load_profile("modern-gen4", **base)
    return p.with_overrides(**extra) if extra else p


def _task(i: int, side: str = DEVICE, *, text: int = 100, objects: int = 50, pages: int = 1,
          faults=None, measured_s: float = 0.0, **counters) -> TaskWork:
    c = {"bytes_scanned": text}
    c.update(counters)
    return TaskWork(index=i, first_page=i * pages, n_pages=pages, text_bytes=text, object_bytes=objects,
                    counters=c, side=side, faults=faults or {}, measured_s=measured_s)


def _rich_tasks(n: int = 48, page_size: int = 16384, split_share: float = 0.5) -> list[TaskWork]:
    """A mixed workload touching every work unit (the reader's, its span stages', the search's),
    both sides and every fault kind."""
    policy = SplitPolicy("static", split_share)
    out = []
    fault_cycle = [{}, {}, {"media_error": 1}, {}, {"app_failure": 1}, {}, {"link_timeout": 1},
                   {"tq_overflow": 1}, {}, {}]
    for i in range(n):
        text = 200_000 + 7919 * (i % 13)
        pages = -(-text // page_size) + 1
        counters = {
            "bytes_scanned": text, "rows": text // 40, "fields": text // 8, "ints": text // 24,
            "floats": text // 24, "bools": text // 200, "temporals": text // 100, "string_bytes": text // 5,
            "nulls": text // 300,
            "bytes_searched": text, "lines_matched": text // 400, "bytes_emitted": text // 20,
            "filter_tests": text // 10, "values_kept": text // 80, "aggregate_updates": text // 60,
        }
        out.append(TaskWork(index=i, first_page=i * pages, n_pages=pages, text_bytes=text,
                            object_bytes=text // 2, counters=counters, side=policy.static_side(i),
                            faults=fault_cycle[i % len(fault_cycle)], measured_s=text / 150e6))
    return out


@pytest.fixture
def simple_profile():
    """``simple_profile(**overrides)``: the hand-computable profile (see ``_simple_profile``)."""
    return _simple_profile


@pytest.fixture
def task():
    """``task(i, side="device", *, text=100, objects=50, pages=1, faults=None, measured_s=0, **counters)``:
    one task on pages ``i * pages ..``, ``bytes_scanned = text`` plus ``counters``."""
    return _task


@pytest.fixture
def rich_tasks():
    """``rich_tasks(n=48, page_size=16384, split_share=0.5)``: a mixed workload touching
    every work unit, both sides and every fault kind."""
    return _rich_tasks


@pytest.fixture
def reader_counters():
    """The counter names the reader's tasks carry, in its order."""
    return READER_COUNTERS


def _profile_text(name: str) -> str:
    return (resources.files("device_emulator") / "profiles" / f"{name}.toml").read_text()


def _numeric_leaves(tree, prefix=""):
    for key, value in tree.items():
        if isinstance(value, dict):
            yield from _numeric_leaves(value, f"{prefix}{key}.")
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            yield f"{prefix}{key}", value


def _perturb(value):
    if isinstance(value, int):
        return value // 2 if value > 1 else value + 1
    return value * 0.5 if value else 1.0


@pytest.fixture
def profile_text():
    """``profile_text(name)``: a shipped profile's TOML text."""
    return _profile_text


@pytest.fixture
def numeric_leaves():
    """``numeric_leaves(tree)``: ``(dotted path, number)`` of every number in a parsed TOML tree."""
    return _numeric_leaves


@pytest.fixture
def perturb():
    """``perturb(value)``: a different number of the same type (half, or one more / 1.0 from zero)."""
    return _perturb


# gpu_profile's settings: the P2P path capped at 0.5 MB/s with no per-command overhead, host -> GPU
# copies at 2 MB/s; the GPU draws 10 W while data lands in its memory, 2 W otherwise.
P2P = {"enabled": True, "max_MBps": 0.5, "per_command_overhead_us": 0.0, "h2d_MBps": 2.0, "h2d_overhead_us": 0.0}
GPU_W = {"active_W": 10.0, "idle_W": 2.0}


@pytest.fixture
def gpu_profile(simple_profile):
    """``gpu_profile(**overrides)``: the simple profile with the P2P path and GPU power above."""
    def make(**extra):
        p = simple_profile(p2p=P2P)
        p = p.with_overrides(**{"power.p2p.active_W": GPU_W["active_W"], "power.p2p.idle_W": GPU_W["idle_W"]})
        return p.with_overrides(**extra) if extra else p

    return make
