"""Processes: generators that yield commands (typed records) and are resumed
when the command completes.

A command has ``issue(loop, resume)``: it arranges for ``resume(value)`` to be
called in modeled time; the value is what the ``yield`` returns (a use's start
time for :class:`StartUse`, an admission for a task queue's try).

>>> from device_emulator.sim.events import EventLoop
>>> from device_emulator.sim.resources import Resource
>>> loop = EventLoop()
>>> core = Resource(loop, "core", 1, None)
>>> def job(log):
...     yield Use(core, 0, 2.0)
...     yield Delay(1.0)
...     log.append(loop.now)
>>> log = []
>>> start(loop, job(log)); loop.run(); log
[3.0]
"""
from __future__ import annotations

from typing import Any, Callable, Generator, NamedTuple, Optional, Protocol

from device_emulator.sim.events import EventLoop
from device_emulator.sim.resources import Resource

__all__ = ["Command", "Process", "Use", "StartUse", "Delay", "Until", "start", "step"]


class Command(Protocol):
    """What a process yields."""

    def issue(self, loop: EventLoop, resume: Callable) -> None:
        """Arranges for ``resume(value)`` once the command is done."""


Process = Generator[Command, Any, Any]


class Use(NamedTuple):
    """Use ``resource`` for ``duration``; resume when the use ends. ``account``:
    the name its busy time is booked under (default: the resource's)."""

    resource: Resource
    task: int
    duration: float
    account: Optional[str] = None

    def issue(self, loop: EventLoop, resume: Callable) -> None:
        self.resource.request(self.task, self.duration, None, resume, self.account)


class StartUse(NamedTuple):
    """Use ``resource`` for ``duration``; resume (with the start time) when the use starts."""

    resource: Resource
    task: int
    duration: float
    account: Optional[str] = None

    def issue(self, loop: EventLoop, resume: Callable) -> None:
        self.resource.request(self.task, self.duration, resume, None, self.account)


class Delay(NamedTuple):
    """Resume ``seconds`` later."""

    seconds: float

    def issue(self, loop: EventLoop, resume: Callable) -> None:
        loop.at(loop.now + self.seconds, resume, None)


class Until(NamedTuple):
    """Resume at modeled ``time`` (now, if that has passed)."""

    time: float

    def issue(self, loop: EventLoop, resume: Callable) -> None:
        loop.at(max(loop.now, self.time), resume, None)


def step(loop: EventLoop, process: Process, value: Any = None) -> None:
    """Resumes ``process`` with ``value`` and issues the command it yields next."""
    try:
        command = process.send(value)
    except StopIteration:
        return
    command.issue(loop, lambda result=None: step(loop, process, result))


def start(loop: EventLoop, process: Process) -> None:
    """Starts ``process`` at the loop's current time (after the events already due then)."""
    loop.at(loop.now, step, loop, process, None)
