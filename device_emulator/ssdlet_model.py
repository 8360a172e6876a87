"""Modeled time of an SSDlet graph run: each node's work on its side's cores,
the flash pages scanned, and the bytes that crossed the link.

An SSDlet declares its work counters with prices (cycles per unit on a device
core and on a host core); a call also costs the profile's per-task price
(``tasks`` in ``[cores.cycles]`` / ``[host.cycles]``: the command and port
overhead). Nodes on one side share its cores. Queues are bounded and every
stage streams, so the run is modeled as a pipeline bound: the makespan is the
busiest resource's time, with one node never faster than its own work.

Fixed-function units: on a profile with a scan pipeline (``[pipeline]``
``scope = "scan"``, e.g. Biscuit's per-channel pattern matcher), a device
node's counters named in ``pipeline.scan_counters`` (``bytes_scanned``,
``bytes_searched``) are done by the pipeline at its rate, one resource shared
by the device's nodes, instead of the cores: an SSDlet that names its
scanning work so says it is work the hardware unit can do.

>>> from ndp_core.ssdlets import NodeWork
>>> from device_emulator.profile import load_profile
>>> w = NodeWork("count", "count", "device", calls=4, bytes_in=1 << 20, pages_read=256,
...              counters={"bytes": 1 << 20}, prices={"bytes": (2.0, 1.0)}, link_bytes=64, link_packets=1)
>>> t = model_ssdlets(load_profile("modern-gen4"), [w])
>>> t.bottleneck, round(t.makespan_s * 1e3, 3)
('device cores', 1.451)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ndp_core.ssdlets import NodeWork

from device_emulator.profile import Profile, ProfileError, units
from device_emulator.profile.schema import TASK_PRICE

__all__ = ["SSDletTiming", "model_ssdlets"]


@dataclass(frozen=True)
class SSDletTiming:
    """Seconds per node and per resource; ``makespan_s`` the pipeline bound."""

    profile: str
    node_s: dict[str, float]
    resource_s: dict[str, float]
    makespan_s: float
    bottleneck: str

    def __str__(self) -> str:
        rows = [f"modeled on {self.profile}: {self.makespan_s * 1e3:.3f} ms (bound by {self.bottleneck})"]
        rows += [f"  {name:<20} {s * 1e3:10.3f} ms" for name, s in self.node_s.items()]
        rows += [f"  [{name}]{'':<{max(0, 18 - len(name))}} {s * 1e3:10.3f} ms" for name, s in self.resource_s.items()]
        return "\n".join(rows)


def _side(profile: Profile, side: str) -> tuple[float, int, float]:
    """(clock Hz, cores, per-call cycles) of ``side``."""
    section = "cores" if side == "device" else "host"
    cores = profile.data[section]["count" if side == "device" else "cores"]
    if cores <= 0:
        raise ProfileError(f"profile {profile.name!r} has no {section} to run SSDlets on the {side}")
    task = profile.data[section]["cycles"].get(TASK_PRICE, 0.0)
    return units.hertz(profile.data[section]["clock_MHz"]), cores, task


def node_seconds(profile: Profile, work: NodeWork) -> float:
    """``work``'s busy time on one core of its side (without what a scan pipeline does)."""
    hertz, _, task = _side(profile, work.side)
    k = 0 if work.side == "device" else 1
    piped = pipelined(profile, work)
    cycles = work.calls * task + sum(count * work.prices[name][k] for name, count in work.counters.items()
                                     if name not in piped)
    return cycles / hertz


def pipelined(profile: Profile, work: NodeWork) -> dict[str, int]:
    """The counters of ``work`` the profile's scan pipeline does (a device node's only).

    >>> from device_emulator.profile import load_profile
    >>> w = NodeWork("grep", "grep", "device", counters={"bytes_searched": 100, "lines": 3})
    >>> pipelined(load_profile("biscuit-pm"), w), pipelined(load_profile("modern-gen4"), w)
    ({'bytes_searched': 100}, {})
    """
    pipeline = profile.data["pipeline"]
    if work.side != "device" or pipeline["scope"] != "scan":
        return {}
    return {name: count for name, count in work.counters.items() if name in pipeline["scan_counters"]}


def model_ssdlets(profile: Profile, work: Sequence[NodeWork]) -> SSDletTiming:
    """The modeled time of a run whose nodes did ``work`` (module doc)."""
    node_s = {w.node: node_seconds(profile, w) for w in work}
    resource_s = {}
    for side, label in (("device", "device cores"), ("host", "host cores")):
        busy = [node_s[w.node] for w in work if w.side == side]
        if busy:
            resource_s[label] = max(max(busy), sum(busy) / _side(profile, side)[1])
    piped = sum(sum(pipelined(profile, w).values()) for w in work)
    if piped:
        resource_s["scan pipeline"] = piped / profile.pipeline_rate
    scanned = sum(w.bytes_in for w in work if w.pages_read)
    resource_s["flash"] = scanned / profile.internal_bandwidth
    overhead = units.seconds(profile.data["link"]["per_command_overhead_us"])
    resource_s["link"] = sum(w.link_bytes / profile.link_bandwidth + w.link_packets * overhead for w in work)
    bottleneck = max(resource_s, key=resource_s.get)
    return SSDletTiming(profile.name, node_s, resource_s, resource_s[bottleneck], bottleneck)
