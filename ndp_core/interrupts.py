"""Ctrl-C held back to safe points: shared by the engine's users (the reader, SSDlet graphs).

A KeyboardInterrupt may come between any two bytecodes of the main thread;
the code that submits commands to an engine, or takes a lock worker threads
need, must not be cut half way. :class:`interrupts_at_checks` lets its caller
choose where the interrupt is raised.
"""
from __future__ import annotations

import signal
import threading
from typing import Callable


class interrupts_at_checks:  # named as the function it reads as: ``with interrupts_at_checks() as check:``
    """Ctrl-C on the main thread held back to the points its caller checks.

    Python raises KeyboardInterrupt between any two bytecodes. One raised
    just as the main thread took a lock that worker threads need (inside a
    ``threading.Condition``'s ``__enter__``, as in ``ThreadPoolExecutor.submit``
    or ``queue.Queue.put``) leaves it taken, and the pool hangs when shut
    down (CPython issue 74174, bpo-29988). In this block SIGINT only marks the
    interrupt: the ``check()`` it gives raises KeyboardInterrupt where the
    caller holds no lock, and so does leaving the block. Waits are not cut
    short by it (an interrupted lock wait goes on; an ``ndp_core`` engine
    wait goes on to its command's end). A block inside another shares the
    outer one's mark, at no cost. Other threads, and a program that handles
    SIGINT itself, are left as they are.

    >>> with interrupts_at_checks() as check:
    ...     check()  # nothing pressed: nothing raised
    """

    def __enter__(self) -> Callable[[], None]:
        global _holding
        self._held = None
        if threading.current_thread() is not threading.main_thread():
            return _nothing_pressed
        if _holding is not None:  # an outer block holds it back already
            return _holding.check
        if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
            return _nothing_pressed
        self._held = _holding = _HeldInterrupt()
        self._previous = signal.signal(signal.SIGINT, self._held)
        return self._held.check

    def __exit__(self, exc_type, exc, traceback) -> None:
        global _holding
        if self._held is not None:
            signal.signal(signal.SIGINT, self._previous)
            _holding = None
            if exc_type is None:
                self._held.check()


class _HeldInterrupt:
    """The SIGINT handler of :class:`interrupts_at_checks`: it marks, ``check`` raises."""

    def __init__(self) -> None:
        self.pressed = False

    def __call__(self, signum: int, frame: object) -> None:
        self.pressed = True

    def check(self) -> None:
        if self.pressed:
            self.pressed = False
            raise KeyboardInterrupt


def _nothing_pressed() -> None:
    """``check()`` where Ctrl-C is not held back."""


_holding: "_HeldInterrupt | None" = None  # the main thread's outermost block's, while it runs
