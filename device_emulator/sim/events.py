"""The event loop: callbacks run in time order, ties broken by scheduling order.

Every decision of the timing model happens in modeled time, so a run is a pure
function of its inputs.

>>> loop = EventLoop()
>>> seen = []
>>> loop.at(2.0, seen.append, "late"); loop.at(1.0, seen.append, "early"); loop.at(1.0, seen.append, "tie")
>>> loop.run(); seen, loop.now
(['early', 'tie', 'late'], 2.0)
"""
from __future__ import annotations

import heapq
from typing import Any, Callable

__all__ = ["EventLoop"]


class EventLoop:
    """A clock and a heap of pending events, each ``(time, seq, callback, args)``:
    ``seq`` orders events due at the same time. (Plain tuples: the heap holds
    one per event and they never leave the loop.)"""

    def __init__(self) -> None:
        self.now = 0.0
        self._heap: list[tuple[float, int, Callable, tuple]] = []
        self._seq = 0

    def at(self, time: float, callback: Callable, *args: Any) -> None:
        """Runs ``callback(*args)`` at modeled ``time``."""
        self._seq += 1
        heapq.heappush(self._heap, (time, self._seq, callback, args))

    def run(self) -> None:
        """Runs events until none is left."""
        heap = self._heap
        while heap:
            time, _, callback, args = heapq.heappop(heap)
            self.now = time
            callback(*args)
