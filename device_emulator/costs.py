"""One task's service time on every resource, gathered from the hardware modules.

>>> from ndp_core.device import TaskWork
>>> from device_emulator.profile import load_profile
>>> t = TaskWork(0, 0, 4, 60000, 30000, {"bytes_scanned": 60000, "fields": 8000, "ints": 8000})
>>> c = task_costs(load_profile("modern-gen4"), t)
>>> round(c.device * 1e6, 1), round(c.host * 1e6, 1), round(c.link_objects * 1e6, 2)
(186.1, 109.9, 9.28)
"""
from __future__ import annotations

from dataclasses import dataclass

from ndp_core.device import TaskWork

from device_emulator.compute import COST_MODELS, CoreTime, pipeline_seconds
from device_emulator.flash import read_timings
from device_emulator.host import HostTime
from device_emulator.link import link_rates, transfer_times
from device_emulator.profile import Profile

__all__ = ["TaskCosts", "CostModel", "task_costs"]


@dataclass(frozen=True)
class TaskCosts:
    """The modeled service times of one task on each resource (seconds)."""

    flash_interval: float  # a channel's time per page (steady state)
    flash_lat: float  # from a channel's last page slot until that page is in DRAM
    flash_interval_retry: float  # same, for a read-retry (tR x read_retry_factor)
    flash_lat_retry: float
    device: float  # embedded core service
    pipeline: float  # fixed-function pipeline
    host: float  # host core service (parsing the text)
    link_objects: float  # objects over the link (+ command overhead)
    link_text: float  # text over the link (+ command overhead)
    link_status: float  # a completion without data (an error status)
    p2p_objects: float = 0.0  # objects over the P2P path into GPU memory (+ command overhead)
    h2d: float = 0.0  # host -> GPU copy of the objects (+ per-copy overhead)


class CostModel:
    """The service times a profile gives tasks: what does not depend on the task
    (page timings, rates, clocks, price tables) is worked out once."""

    def __init__(self, profile: Profile, cost_model: str = "cycles") -> None:
        if cost_model not in COST_MODELS:
            raise ValueError(f"cost_model must be one of {COST_MODELS}, got {cost_model!r}")
        self.read, self.retry = read_timings(profile)
        self.links = link_rates(profile)
        self.pipeline_rate = profile.pipeline_rate
        self.cores = CoreTime(profile, cost_model)
        self.host = HostTime(profile, cost_model)

    def of(self, task: TaskWork) -> TaskCosts:
        """``task``'s :class:`TaskCosts`."""
        transfers = transfer_times(self.links, task)
        return TaskCosts(self.read.interval, self.read.latency, self.retry.interval, self.retry.latency,
                         self.cores.seconds(task), pipeline_seconds(self.pipeline_rate, task),
                         self.host.seconds(task), transfers.objects, transfers.text, transfers.status,
                         transfers.p2p_objects, transfers.h2d)


def task_costs(profile: Profile, task: TaskWork, cost_model: str = "cycles") -> TaskCosts:
    """Service times of ``task`` under ``profile``.

    ``cost_model="cycles"``: the task's work counters at the profile's prices
    (:mod:`~device_emulator.compute`); ``"measured"``: the task's measured host
    seconds, scaled to the device by ``host.clock_MHz / cores.clock_MHz x
    cores.measured_scale`` (the host side takes them as they are).
    """
    return CostModel(profile, cost_model).of(task)
