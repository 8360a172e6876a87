"""The SSD's PCIe link to host memory, its peer-to-peer path into GPU memory,
and host -> GPU copies.

The P2P path (NVMe DMA into GPU memory) leaves the SSD through the same port as
the link, so the two share one server (the :class:`Port`) and are booked apart
(``link``, ``p2p``). Host -> GPU copies (``h2d``) run on the GPU's copy engine
over its own link. Each transfer pays its path's per-command overhead.

>>> from device_emulator.profile import load_profile
>>> from ndp_core.device import TaskWork
>>> times = transfer_times(link_rates(load_profile("modern-gen4")), TaskWork(0, 0, 1, 7000, 3500, {}))
>>> round(times.text * 1e6, 3), round(times.status * 1e6, 3)
(6.0, 5.0)
"""
from __future__ import annotations

from typing import NamedTuple, Optional

from ndp_core.device import TaskWork

from device_emulator.profile import Profile, units
from device_emulator.sim.events import EventLoop
from device_emulator.sim.process import Use
from device_emulator.sim.resources import Resource

__all__ = ["DESTINATIONS", "LinkRates", "link_rates", "TransferTimes", "transfer_times", "Port"]

#: Where device output lands: host memory or GPU memory.
DESTINATIONS = ("host", "gpu")


class LinkRates(NamedTuple):
    """A profile's transfer rates (bytes/s) and per-command overheads (seconds)."""

    link: float
    link_overhead: float
    p2p: float
    p2p_overhead: float
    h2d: float
    h2d_overhead: float


def link_rates(profile: Profile) -> LinkRates:
    """``profile``'s :class:`LinkRates`."""
    paths = profile.data["p2p"]
    return LinkRates(profile.link_bandwidth, units.seconds(profile.data["link"]["per_command_overhead_us"]),
                     profile.p2p_bandwidth, units.seconds(paths["per_command_overhead_us"]),
                     profile.h2d_bandwidth, units.seconds(paths["h2d_overhead_us"]))


class TransferTimes(NamedTuple):
    """One task's transfer times (seconds, command overheads included)."""

    objects: float  # objects over the link to host memory
    text: float  # text over the link
    status: float  # a completion without data (an error status)
    p2p_objects: float  # objects over the P2P path into GPU memory
    h2d: float  # host -> GPU copy of the objects


def transfer_times(rates: LinkRates, task: TaskWork) -> TransferTimes:
    """``task``'s :class:`TransferTimes` at ``rates``."""
    overhead = rates.link_overhead
    return TransferTimes(overhead + task.object_bytes / rates.link, overhead + task.text_bytes / rates.link,
                         overhead, rates.p2p_overhead + task.object_bytes / rates.p2p,
                         rates.h2d_overhead + task.object_bytes / rates.h2d)


class Port:
    """The SSD's PCIe port (one server; ``link`` and ``p2p`` uses booked apart)
    and the GPU's copy engine (``h2d``), with the bytes each path carried."""

    def __init__(self, loop: EventLoop, timeline: Optional[list]) -> None:
        self.server = Resource(loop, "link", 1, timeline)
        self.copy_engine = Resource(loop, "h2d", 1, timeline)
        self.link_bytes = 0  # SSD <-> host memory
        self.p2p_bytes = 0  # SSD -> GPU memory
        self.h2d_bytes = 0  # host memory -> GPU memory

    def to_host(self, task: int, n_bytes: int, seconds: float) -> Use:
        """The command sending ``n_bytes`` over the link (to host memory)."""
        self.link_bytes += n_bytes
        return Use(self.server, task, seconds, "link")

    def to_gpu(self, task: int, n_bytes: int, seconds: float) -> Use:
        """The command sending ``n_bytes`` over the P2P path (into GPU memory)."""
        self.p2p_bytes += n_bytes
        return Use(self.server, task, seconds, "p2p")

    def status(self, task: int, seconds: float) -> Use:
        """The command returning a completion without data (an error status)."""
        return Use(self.server, task, seconds, "link")

    def copy_to_gpu(self, task: int, n_bytes: int, seconds: float) -> Use:
        """The command copying ``n_bytes`` from host memory to GPU memory."""
        self.h2d_bytes += n_bytes
        return Use(self.copy_engine, task, seconds, "h2d")

    def busy_s(self, account: str) -> float:
        """Busy seconds booked under ``account`` (``link``, ``p2p`` or ``h2d``)."""
        server = self.copy_engine if account == "h2d" else self.server
        return server.busy.get(account, 0.0)
