"""Energy: each resource's active watts while busy and idle watts otherwise,
per unit, over the run, plus the platform idling.

With a GPU destination, ``[power.p2p]`` is the GPU at the end of both paths:
active while data lands in its memory (P2P writes, host copies), idle otherwise
- for the whole run, as it waits for the data even where no P2P path exists.

>>> power = {"platform_idle_W": 10.0, "flash": {"active_W": 2.0, "idle_W": 1.0}}
>>> energy_j(power, {"flash": 1.0}, {"flash": 2}, 3.0, resources=("flash",))
{'flash': 7.0, 'platform': 30.0, 'total': 37.0}
"""
from __future__ import annotations

from typing import Mapping, Optional, Sequence

from device_emulator.profile.schema import POWER_RESOURCES

__all__ = ["energy_j"]


def energy_j(power: Mapping, busy: Mapping[str, float], units: Mapping[str, int], makespan: float, *,
             gpu: Optional[bool] = False, resources: Sequence[str] = POWER_RESOURCES) -> dict[str, float]:
    """Joules per resource, ``platform`` and ``total``; ``gpu``: the output went to GPU memory."""
    energy: dict[str, float] = {}
    for resource in resources:
        watts = power[resource]
        idle_time = max(units.get(resource, 0) * makespan - busy.get(resource, 0.0), 0.0)
        energy[resource] = watts["active_W"] * busy.get(resource, 0.0) + watts["idle_W"] * idle_time
    if gpu:
        h2d = busy["h2d"]
        watts = power["p2p"]
        energy["p2p"] = watts["active_W"] * busy["p2p"] + watts["idle_W"] * max(makespan - busy["p2p"] - h2d, 0.0)
        energy["h2d"] = watts["active_W"] * h2d
    energy["platform"] = power["platform_idle_W"] * makespan
    energy["total"] = sum(energy.values())
    return energy
