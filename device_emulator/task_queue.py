"""The device's task queue (TQ): slots for tasks between flash and the cores.

Static split: a device task that finds every slot taken waits for one, and the
flash stops starting reads meanwhile (the intake stalls: the queue closes the
flash gate). Dynamic split: a task whose pages arrive while every slot is taken
is not admitted and comes back raw.

>>> from device_emulator.sim.events import EventLoop
>>> from device_emulator.sim.resources import Gate
>>> tq = TaskQueue(EventLoop(), 1, Gate())
>>> tq.try_acquire(), tq.try_acquire()
(True, False)
"""
from __future__ import annotations

from collections import deque
from typing import Callable, NamedTuple

from device_emulator.sim.events import EventLoop
from device_emulator.sim.resources import Gate

__all__ = ["TaskQueue", "TryAdmit", "WaitAdmit"]


class TaskQueue:
    """``slots`` slots; waiters are admitted in FIFO order and, while any waits, ``intake`` stays closed."""

    def __init__(self, loop: EventLoop, slots: int, intake: Gate) -> None:
        self.loop, self.slots, self.intake = loop, slots, intake
        self.occupied = 0
        self.waiters: deque[Callable] = deque()

    def try_acquire(self) -> bool:
        """Takes a slot if one is free."""
        if self.occupied < self.slots:
            self.occupied += 1
            return True
        return False

    def wait_acquire(self, resume: Callable) -> None:
        """Takes a slot now or, closing the intake, once one frees; then ``resume(True)``."""
        if self.occupied < self.slots and not self.waiters:
            self.occupied += 1
            self.loop.at(self.loop.now, resume, True)
        else:
            self.waiters.append(resume)
            self.intake.close_one()

    def release(self) -> None:
        """Frees a slot (handing it to the first waiter)."""
        self.occupied -= 1
        if self.waiters:
            resume = self.waiters.popleft()
            self.occupied += 1
            self.loop.at(self.loop.now, resume, True)
            self.intake.open_one()


class TryAdmit(NamedTuple):
    """Command: take a slot if one is free; resume with whether it was."""

    queue: TaskQueue

    def issue(self, loop: EventLoop, resume: Callable) -> None:
        loop.at(loop.now, resume, self.queue.try_acquire())


class WaitAdmit(NamedTuple):
    """Command: wait for a slot (stalling the intake meanwhile)."""

    queue: TaskQueue

    def issue(self, loop: EventLoop, resume: Callable) -> None:
        self.queue.wait_acquire(resume)
