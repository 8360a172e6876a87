"""Resources: FIFO queues in front of identical servers, and gates that stop a
group of them from starting work.

A resource books each use's busy time under an account (its own name unless
the use names another: the SSD's port books ``link`` and ``p2p`` apart) and,
when given a timeline, records every use as ``(account, task, start, end)``
(the format of ``Report.timeline``). Queued uses are plain tuples too: a run
makes one per use, and they never leave the resource.

>>> from device_emulator.sim.events import EventLoop
>>> loop, timeline = EventLoop(), []
>>> core = Resource(loop, "core", 1, timeline)
>>> core.request(0, 2.0); core.request(1, 3.0)
>>> loop.run(); timeline, core.busy
([('core', 0, 0.0, 2.0), ('core', 1, 2.0, 5.0)], {'core': 5.0})
"""
from __future__ import annotations

from collections import deque
from typing import Callable, Optional

from device_emulator.sim.events import EventLoop

__all__ = ["Resource", "Gate"]


class Gate:
    """Closed (``closed > 0``): its members start no new service (the flash
    channels while a full task queue stalls the intake)."""

    def __init__(self) -> None:
        self.closed = 0
        self.members: list[Resource] = []

    def close_one(self) -> None:
        """One more reason to stay closed."""
        self.closed += 1

    def open_one(self) -> None:
        """One reason fewer; the last one reopens the members."""
        self.closed -= 1
        if not self.closed:
            for member in self.members:
                member.dispatch()


class Resource:
    """A FIFO queue in front of ``units`` identical servers."""

    def __init__(self, loop: EventLoop, name: str, units: int, timeline: Optional[list],
                 gate: Optional[Gate] = None) -> None:
        self.loop, self.name, self.units = loop, name, units
        self.queue: deque[tuple] = deque()  # (task, duration, on_start, on_end, account)
        self.in_use = 0
        self.gate = gate
        self.busy: dict[str, float] = {}
        self.timeline = timeline

    def request(self, task: int, duration: float, on_start: Optional[Callable] = None,
                on_end: Optional[Callable] = None, account: Optional[str] = None) -> None:
        """Queues a use of ``duration`` seconds for ``task``."""
        self.queue.append((task, duration, on_start, on_end, account or self.name))
        self.dispatch()

    def dispatch(self) -> None:
        """Starts queued uses while a server is free and the gate is open."""
        queue, loop, gate = self.queue, self.loop, self.gate
        while queue and self.in_use < self.units and not (gate and gate.closed):
            task, duration, on_start, on_end, account = queue.popleft()
            self.in_use += 1
            start = loop.now
            end = start + duration
            self.busy[account] = self.busy.get(account, 0.0) + duration
            if self.timeline is not None:
                self.timeline.append((account, task, start, end))
            loop.at(end, self._release)
            if on_start is not None:
                loop.at(start, on_start, start)
            if on_end is not None:
                loop.at(end, on_end, end)

    def _release(self) -> None:
        self.in_use -= 1
        self.dispatch()
