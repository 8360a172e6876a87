"""The flash array: channels of interleaved dies, page reads, read retry.

Page ``p`` lives on channel ``p % channels`` (the FTL stripes logical pages).
A channel streams one page every ``interval = max(transfer, tR / ways)`` (its
ways overlap their array reads); it is busy ``k * interval`` for ``k`` pages,
and the last page lands ``tR + transfer - interval`` after that. A read-retry
(after an uncorrectable read) takes ``tR x read_retry_factor``.

>>> from device_emulator.profile import load_profile
>>> timing = page_timing(load_profile("modern-gen4"), 50e-6)
>>> round(timing.interval * 1e6, 2), round(timing.latency * 1e6, 2)
(12.5, 47.74)
"""
from __future__ import annotations

from typing import Callable, NamedTuple, Optional

from device_emulator.profile import Profile, units
from device_emulator.sim.events import EventLoop
from device_emulator.sim.resources import Gate, Resource

__all__ = ["PageTiming", "page_timing", "read_timings", "pages_per_channel", "FlashArray", "ReadPages"]


class PageTiming(NamedTuple):
    """A channel's time per page (steady state) and the extra latency from its
    last page slot until that page is in DRAM."""

    interval: float
    latency: float


def page_timing(profile: Profile, tR_s: float) -> PageTiming:
    """The :class:`PageTiming` of a channel whose dies read a page in ``tR_s`` seconds."""
    flash = profile.data["flash"]
    transfer = flash["page_size"] / units.bytes_per_s(flash["channel_MBps"])
    interval = max(transfer, tR_s / flash["ways"])
    return PageTiming(interval, tR_s + transfer - interval)


def read_timings(profile: Profile) -> tuple[PageTiming, PageTiming]:
    """(normal read, read-retry) page timings of ``profile``'s flash."""
    flash = profile.data["flash"]
    tR = units.seconds(flash["tR_us"])
    return page_timing(profile, tR), page_timing(profile, tR * flash["read_retry_factor"])


def pages_per_channel(first_page: int, n_pages: int, channels: int) -> list[int]:
    """How many of pages ``first_page .. first_page + n_pages - 1`` each channel
    holds (page ``p`` on channel ``p % channels``).

    >>> pages_per_channel(6, 5, 4)
    [1, 1, 2, 1]
    """
    base, extra = divmod(max(n_pages, 0), channels)
    counts = [base] * channels
    start = first_page % channels
    for j in range(extra):
        counts[(start + j) % channels] += 1
    return counts


class FlashArray:
    """One server per channel, all behind one gate (closed while a full task
    queue stalls the intake)."""

    def __init__(self, loop: EventLoop, profile: Profile, timeline: Optional[list]) -> None:
        flash = profile.data["flash"]
        self.page_size = flash["page_size"]
        self.gate = Gate()
        self.channels = [Resource(loop, "flash", 1, timeline, self.gate) for _ in range(flash["channels"])]
        self.gate.members = self.channels

    def read(self, task: int, first_page: int, n_pages: int, interval: float) -> "ReadPages":
        """The command reading pages ``first_page .. first_page + n_pages - 1`` on every
        channel they are on, ``interval`` seconds a page."""
        return ReadPages(self.channels, task, pages_per_channel(first_page, n_pages, len(self.channels)), interval)

    def busy_s(self) -> float:
        """Busy seconds summed over the channels."""
        return sum(channel.busy.get("flash", 0.0) for channel in self.channels)


class ReadPages(NamedTuple):
    """Command: each channel reads its ``counts[channel]`` pages of ``task``,
    ``interval`` seconds a page; resume when the last channel is done."""

    channels: list[Resource]
    task: int
    counts: list[int]
    interval: float

    def issue(self, loop: EventLoop, resume: Callable) -> None:
        pending = [sum(1 for k in self.counts if k)]

        def one_done(_end: float) -> None:
            pending[0] -= 1
            if not pending[0]:
                resume(None)

        for channel, k in zip(self.channels, self.counts):
            if k:
                channel.request(self.task, k * self.interval, None, one_done)
