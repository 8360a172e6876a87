"""Shared helpers for the device_emulator tests: a hand-computable profile and tasks."""
from __future__ import annotations

from device_emulator.profile import WORK_UNITS, load_profile
from ndp_core.device import DEVICE, HOST, TaskWork

US = 1e-6


def zero_power() -> dict:
    out = {"platform_idle_W": 0.0}
    for r in ("flash", "device_cores", "pipeline", "link", "host_cpu", "p2p"):
        out[r] = {"active_W": 0.0, "idle_W": 0.0}
    return out


def simple_profile(**extra):
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
        "cores": {"count": 1, "clock_MHz": 1.0, "fpu": True, "soft_float_factor": 1.0,
                  "cycles": {u: 0.0 for u in WORK_UNITS} | {"bytes_scanned": 1.0}},
        "pipeline": {"scope": "none"},
        "link": {"pcie_gen": 3, "lanes": 1, "efficiency": 1.0, "max_MBps": 1.0,
                 "per_command_overhead_us": 0.0, "timeout_s": 1e-3},
        "host": {"cores": 1, "clock_MHz": 1.0, "cycles": {u: 0.0 for u in WORK_UNITS} | {"bytes_scanned": 0.25}},
        "power": zero_power(),
        "task_queue": {"slots": 8},
    }
    p = load_profile("modern-gen4", **base)
    return p.with_overrides(**extra) if extra else p


def task(i: int, side: str = DEVICE, *, text: int = 100, objects: int = 50, pages: int = 1,
         faults=None, measured_s: float = 0.0, **counters) -> TaskWork:
    c = {"bytes_scanned": text}
    c.update(counters)
    return TaskWork(index=i, first_page=i * pages, n_pages=pages, text_bytes=text, object_bytes=objects,
                    counters=c, side=side, faults=faults or {}, measured_s=measured_s)


def rich_tasks(n: int = 48, page_size: int = 16384, split_share: float = 0.5) -> list[TaskWork]:
    """A mixed workload touching every work unit, both sides and every fault kind."""
    from ndp_core.device import SplitPolicy

    pol = SplitPolicy("static", split_share)
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
        }
        out.append(TaskWork(index=i, first_page=i * pages, n_pages=pages, text_bytes=text,
                            object_bytes=text // 2, counters=counters, side=pol.static_side(i),
                            faults=fault_cycle[i % len(fault_cycle)], measured_s=text / 150e6))
    return out


__all__ = ["US", "simple_profile", "task", "rich_tasks", "zero_power", "DEVICE", "HOST"]
