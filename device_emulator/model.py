"""The timing and energy model of one run: a deterministic discrete-event
simulation from the tasks' work counters to a :class:`~ndp_core.report.Report`.

Resources (servers with FIFO queues): ``flash`` (one server per channel,
:mod:`~device_emulator.flash`), ``device_cores`` (``cores.count`` servers) and
``pipeline`` (:mod:`~device_emulator.compute`), the SSD's port shared by
``link`` and ``p2p`` and the GPU's ``h2d`` copy engine
(:mod:`~device_emulator.link`), ``host_cpu`` (``host.cores`` servers,
:mod:`~device_emulator.host`), plus the task queue
(:mod:`~device_emulator.task_queue`). The host submits tasks in order, keeping
at most ``host.queue_depth`` in flight; each then follows its flow
(:mod:`~device_emulator.flows`). All decisions use modeled time only, so
results are exactly reproducible.

>>> from ndp_core.device import TaskWork, SplitPolicy
>>> from device_emulator.profile import load_profile
>>> p = load_profile("modern-gen4")
>>> t = [TaskWork(0, 0, 4, 60000, 30000, {"bytes_scanned": 60000, "fields": 8000, "ints": 8000}, side="device")]
>>> s = simulate(p, t, SplitPolicy.parse("device"))
>>> s.sides, s.report.pages["device"]
(['device'], 4)
"""
from __future__ import annotations

from typing import Optional, Sequence

from ndp_core.device import DEVICE, FAULT_NAMES, HOST, RAW, Schedule, SplitPolicy, TaskWork, distinct_pages
from ndp_core.report import RESOURCES, Report

from device_emulator.costs import CostModel
from device_emulator.energy import energy_j
from device_emulator.flows import Hardware, TaskFlows, build_hardware, intent
from device_emulator.host import SubmissionWindow
from device_emulator.link import DESTINATIONS
from device_emulator.profile import Profile
from device_emulator.profile.schema import POWER_RESOURCES
from device_emulator.sim.process import start

__all__ = ["simulate"]


def simulate(profile: Profile, tasks: Sequence[TaskWork], split: "SplitPolicy | str" = "dynamic", *,
             wall_s: float = 0.0, cost_model: str = "cycles", device: Optional[str] = None,
             timeline: bool = True, destination: str = "host") -> Schedule:
    """Model one run: the final side of every task and its :class:`Report`.

    ``tasks`` in order (``TaskWork.index`` is informational); ``split`` a
    :class:`~ndp_core.device.SplitPolicy` or its string (not ``"sampled"``,
    which a read resolves to ``"host"`` or ``"device"``); ``wall_s`` the real
    seconds the run took (copied into the report); ``cost_model`` ``"cycles"``
    (work counters x profile prices) or ``"measured"`` (measured seconds
    scaled by clocks); ``timeline=False`` skips recording resource uses;
    ``destination`` where the objects must end up: ``"host"`` memory (the
    default) or ``"gpu"`` memory (device output over the P2P path, host-parsed
    objects copied host -> GPU).

    >>> from ndp_core.device import TaskWork
    >>> from device_emulator.profile import load_profile
    >>> t = [TaskWork(0, 0, 4, 60000, 30000, {"bytes_scanned": 60000}, side="device")]
    >>> r = simulate(load_profile("modern-gen4"), t, "device", destination="gpu").report
    >>> r.bytes["p2p"], r.bytes["host_link"], r.units["p2p"]
    (30000, 0, 1)
    """
    if destination not in DESTINATIONS:
        raise ValueError(f"destination must be one of {DESTINATIONS}, got {destination!r}")
    split = SplitPolicy.parse(split)
    if split.kind == "sampled":
        raise ValueError("split='sampled' is decided by a read from a sample of its input (it then runs as "
                         "'host' or 'device'): model those")
    tasks = list(tasks)
    uses: Optional[list] = [] if timeline else None
    hardware = build_hardware(profile, uses)
    cost_of = CostModel(profile, cost_model).of
    costs = [cost_of(task) for task in tasks]
    flows = TaskFlows(hardware, profile, tasks, costs, split, destination)
    sides = [intent(task, split) for task in tasks]
    window = SubmissionWindow(len(tasks), profile["host.queue_depth"], lambda i: start(
        hardware.loop, flows.task(i, sides[i], window.finished)))
    window.fill()
    hardware.loop.run()

    makespan = max(flows.end, default=0.0)
    units = _units(profile, flows)
    busy = _busy(hardware)
    energy = energy_j(profile.data["power"], busy, units, makespan, gpu=flows.gpu)
    if flows.gpu:
        units["h2d"] = 1
    port = hardware.port
    host_all_s = sum(cost.host for cost in costs)
    report = Report(
        device=device or profile.name, split=str(split), tasks=len(tasks), pages=_pages(tasks, flows.sides),
        file_pages=distinct_pages(tasks),
        bytes={"internal": flows.internal_bytes, "host_link": port.link_bytes + port.h2d_bytes,
               "p2p": port.p2p_bytes},
        text_bytes=sum(task.text_bytes for task in tasks),
        object_bytes=sum(task.object_bytes for task in tasks),
        busy_s=busy, units=units, makespan_s=makespan, host_cpu_s=flows.host_cpu_s,
        # Rounded to the nanosecond: the difference of two equal sums can leave 1e-17.
        host_cpu_saved_s=max(round(host_all_s - flows.host_cpu_s, 9), 0.0),
        energy_j=energy, faults=_faults(tasks), wall_s=float(wall_s), timeline=_with_sides(uses, flows.sides),
        meta={"profile": profile.name, "cost_model": cost_model, "overrides": dict(profile.overrides),
              "destination": destination, "unpowered": _unpowered(profile, busy)},
    )
    return Schedule(list(flows.sides), report)


def _with_sides(uses: Optional[list], sides: list[str]) -> list:
    """Timeline entries with their task's final side appended (it is known only at the end)."""
    return [(resource, task, start, end, sides[task]) for resource, task, start, end in uses or ()]


def _unpowered(profile: Profile, busy: dict[str, float]) -> list[str]:
    """Busy resources the profile gives no power of their own (folded into others: see its notes)."""
    power = profile.data["power"]
    return [r for r in POWER_RESOURCES if busy.get(r) and not power[r]["active_W"]]


def _units(profile: Profile, flows: TaskFlows) -> dict[str, int]:
    """Servers per report resource."""
    return {
        "flash": profile["flash.channels"],
        "device_cores": profile["cores.count"],
        "pipeline": 1 if profile["pipeline.scope"] != "none" else 0,
        "link": 1,
        "host_cpu": profile["host.cores"],
        "p2p": 1 if flows.p2p else 0,
    }


def _busy(hardware: Hardware) -> dict[str, float]:
    """Busy seconds per report resource."""
    port = hardware.port
    busy = {"flash": hardware.flash.busy_s(), "device_cores": hardware.cores.busy.get("device_cores", 0.0),
            "pipeline": hardware.pipeline.busy.get("pipeline", 0.0), "link": port.busy_s("link"),
            "p2p": port.busy_s("p2p"), "h2d": port.busy_s("h2d"),
            "host_cpu": hardware.host_cpu.busy.get("host_cpu", 0.0)}
    return {resource: busy.get(resource, 0.0) for resource in RESOURCES}


def _pages(tasks: list[TaskWork], sides: list[str]) -> dict[str, int]:
    """Pages by the side that finally parsed them."""
    pages = {DEVICE: 0, HOST: 0, RAW: 0}
    for task, side in zip(tasks, sides):
        pages[side] += task.n_pages
    return pages


def _faults(tasks: list[TaskWork]) -> dict[str, int]:
    """Faults met, by kind."""
    faults = {name: 0 for name in FAULT_NAMES.values()}
    for task in tasks:
        for kind, count in (task.faults or {}).items():
            faults[kind] = faults.get(kind, 0) + int(count)
    return faults
