"""What-if workloads: tasks cut from whole-input totals, without the reader.

>>> ts = uniform_tasks(6 << 20, {"bytes_scanned": 6 << 20, "ints": 600000}, page_size=4096)
>>> len(ts), ts[0].n_pages, sum(t.counters["ints"] for t in ts)
(3, 512, 600000)
"""
from __future__ import annotations

import math
from typing import Mapping, Optional

from ndp_core.device import SplitPolicy, TaskWork

from device_emulator.faults import FaultPlan

__all__ = ["uniform_tasks"]


def uniform_tasks(text_bytes: int, counters: Mapping[str, int], *, page_size: int, task_bytes: int = 2 << 20,
                  object_bytes: int = 0, split: "SplitPolicy | str" = "host",
                  measured_s: float = 0.0, faults: Optional[FaultPlan] = None) -> list[TaskWork]:
    """Cut a whole input (its total text bytes, work counters, object bytes and
    measured seconds) into equal tasks of ``task_bytes``; sides follow
    ``split``'s static assignment; ``faults`` (a
    :class:`~device_emulator.faults.FaultPlan`) fills each task's faults as the
    plan would inject them."""
    split = SplitPolicy.parse(split)
    n = max(1, math.ceil(text_bytes / task_bytes))
    out = []
    for i in range(n):
        lo, hi = i * text_bytes // n, (i + 1) * text_bytes // n

        def share(total: float, lo: int = lo, hi: int = hi) -> int:
            return int(total * hi // text_bytes - total * lo // text_bytes) if text_bytes else 0

        out.append(TaskWork(
            index=i, first_page=lo // page_size, n_pages=max(1, math.ceil(hi / page_size) - lo // page_size),
            text_bytes=hi - lo, object_bytes=share(object_bytes), counters={k: share(v) for k, v in counters.items()},
            side=split.static_side(i),
            measured_s=measured_s * (hi - lo) / text_bytes if text_bytes else 0.0,
            faults=faults.faults_for(i) if faults else {},
        ))
    return out
