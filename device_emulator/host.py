"""The host: its cores parse what the device sends back as text, and it keeps
at most ``host.queue_depth`` tasks in flight (submitted, not yet finished).

>>> from device_emulator.profile import load_profile
>>> from ndp_core.device import TaskWork
>>> HostTime(load_profile("modern-gen4"), "cycles").seconds(TaskWork(0, 0, 1, 3000, 0, {"bytes_scanned": 3000}))
6.7666...e-05
"""
from __future__ import annotations

from typing import Callable

from ndp_core.device import TaskWork

from device_emulator.compute import Prices
from device_emulator.profile import Profile, units

__all__ = ["HostTime", "SubmissionWindow"]


class HostTime:
    """One host core's time to parse a task: cycles at the host's prices, or the
    measured seconds as they are."""

    def __init__(self, profile: Profile, cost_model: str) -> None:
        self.measured = cost_model == "measured"
        self.prices = Prices(profile, "host.cycles")
        self.hertz = units.hertz(profile.data["host"]["clock_MHz"])

    def seconds(self, task: TaskWork) -> float:
        """``task``'s parse time on one host core."""
        if self.measured:
            return task.measured_s
        return self.prices.cycles(task.counters) / self.hertz


class SubmissionWindow:
    """Submits tasks ``0 .. n-1`` in order, at most ``depth`` in flight;
    ``launch(i)`` starts task ``i``, which calls :meth:`finished` when done.

    >>> started = []
    >>> window = SubmissionWindow(3, 2, started.append)
    >>> window.fill(); started
    [0, 1]
    >>> window.finished(); started
    [0, 1, 2]
    """

    def __init__(self, n_tasks: int, depth: int, launch: Callable[[int], None]) -> None:
        self.n_tasks, self.depth, self.launch = n_tasks, depth, launch
        self.next_task = 0
        self.outstanding = 0

    def fill(self) -> None:
        """Submits tasks while fewer than ``depth`` are in flight."""
        while self.next_task < self.n_tasks and self.outstanding < self.depth:
            task = self.next_task
            self.next_task += 1
            self.outstanding += 1
            self.launch(task)

    def finished(self) -> None:
        """A task finished: submit more."""
        self.outstanding -= 1
        self.fill()
