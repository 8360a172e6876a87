"""The timing and energy model: a deterministic discrete-event simulation of one
run, from the tasks' work counters to a :class:`~ndp_core.report.Report`.

Resources (servers with FIFO queues): ``flash`` (one server per channel; page
``p`` lives on channel ``p % channels``), ``device_cores`` (``cores.count`` servers),
``pipeline`` (a fixed-function converter, one server), ``link`` (PCIe, one
server) and ``host_cpu`` (``host.cores`` servers), plus the task queue (TQ,
``task_queue.slots``). The host submits tasks in order, keeping at most
``host.queue_depth`` in flight (submitted, not yet finished); a task then flows

* **device side**: flash read -> TQ slot -> embedded core -> objects over the link
  (with a ``scope = "all"`` pipeline: flash read -> pipeline, overlapped with
  the objects' transfer; ``scope = "scan"``: flash read -> pipeline -> TQ -> core);
* **host side** (and **raw**): flash read -> text over the link -> host core.

With ``destination="gpu"`` the output goes to GPU memory: a device task's
objects take the ``p2p`` path (NVMe peer-to-peer DMA into the GPU; it leaves the
SSD through the same port as the link, so ``link`` and ``p2p`` share one server
and are accounted apart), and a host or raw task's parsed objects are copied
host -> GPU by ``h2d`` (one server: the GPU's copy engine on its own link).
Without a P2P path (``p2p.enabled = false``) device objects cross the link and
are then copied like the host's.

Static split: a device task that finds the TQ full waits for a slot and the
flash stops starting reads meanwhile (the intake stalls). Dynamic split: a task
whose pages are read while every TQ slot is occupied comes back raw. All
decisions use modeled time only, so results are exactly reproducible.

>>> from ndp_core.device import TaskWork, SplitPolicy
>>> from device_emulator.profile import load_profile
>>> p = load_profile("modern-gen4")
>>> t = [TaskWork(0, 0, 4, 60000, 30000, {"bytes_scanned": 60000, "fields": 8000, "ints": 8000}, side="device")]
>>> s = simulate(p, t, SplitPolicy.parse("device"))
>>> s.sides, s.report.pages["device"]
(['device'], 4)
"""
from __future__ import annotations

import heapq
import math
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Sequence

from ndp_core.device import DEVICE, HOST, RAW, FAULT_NAMES, Schedule, SplitPolicy, TaskWork
from ndp_core.report import RESOURCES, Report

from device_emulator.profile import COUNTERS, POWER_RESOURCES, Profile

__all__ = ["simulate", "TaskCosts", "task_costs", "uniform_tasks", "pages_per_channel", "COST_MODELS",
           "DESTINATIONS"]

COST_MODELS = ("cycles", "measured")
#: Where device output lands: host memory or GPU memory.
DESTINATIONS = ("host", "gpu")

_MEDIA, _APP, _TIMEOUT, _TQ = (FAULT_NAMES[k] for k in sorted(FAULT_NAMES))


# ------------------------------------------------------------------ costs
@dataclass(frozen=True)
class TaskCosts:
    """The modeled service times of one task on each resource (seconds)."""

    flash_interval: float  # a channel's time per page (steady state)
    flash_lat: float  # from a channel's last page slot until that page is in DRAM
    flash_interval_retry: float  # same, for a read-retry (tR x read_retry_factor)
    flash_lat_retry: float
    device: float  # embedded core service
    pipeline: float  # fixed-function pipeline
    host: float  # host core service (parsing the text)
    link_objects: float  # objects over the link (+ command overhead)
    link_text: float  # text over the link (+ command overhead)
    link_status: float  # a completion without data (an error status)
    p2p_objects: float = 0.0  # objects over the P2P path into GPU memory (+ command overhead)
    h2d: float = 0.0  # host -> GPU copy of the objects (+ per-copy overhead)


def _flash_times(p: Profile, tR_s: float) -> tuple[float, float]:
    """(interval, extra latency) of a channel reading pages.

    A channel streams one page every ``interval = max(xfer, tR / ways)`` (its
    ways overlap their array reads); it is busy ``k * interval`` for ``k``
    pages, and the last page lands ``tR + xfer - interval`` after that.
    """
    f = p.data["flash"]
    xfer = f["page_size"] / (f["channel_MBps"] * 1e6)
    interval = max(xfer, tR_s / f["ways"])
    return interval, tR_s + xfer - interval


def pages_per_channel(first_page: int, n_pages: int, channels: int) -> list[int]:
    """How many of pages ``first_page .. first_page + n_pages - 1`` each channel
    holds (page ``p`` on channel ``p % channels``).

    >>> pages_per_channel(6, 5, 4)
    [1, 1, 2, 1]
    """
    base, extra = divmod(max(n_pages, 0), channels)
    counts = [base] * channels
    start = first_page % channels
    for j in range(extra):
        counts[(start + j) % channels] += 1
    return counts


def _cycles(table: Mapping[str, float], counters: Mapping[str, int], *, float_factor: float = 1.0,
            skip_scan: bool = False) -> float:
    total = table.get("tasks", 0.0)
    for name in COUNTERS:
        n = counters.get(name, 0)
        if not n or (skip_scan and name == "bytes_scanned"):
            continue
        c = table.get(name, 0.0)
        if name == "floats":
            c *= float_factor
        total += n * c
    return total


def task_costs(p: Profile, t: TaskWork, cost_model: str = "cycles") -> TaskCosts:
    """Service times of task ``t`` under profile ``p``.

    ``cost_model="cycles"``: sum(counter x cycles per unit) / clock, floats x
    ``soft_float_factor`` without an FPU. ``"measured"``: the task's measured
    host seconds, scaled to the device by ``host.clock_MHz / cores.clock_MHz x
    cores.measured_scale`` (the host side takes them as they are).
    """
    if cost_model not in COST_MODELS:
        raise ValueError(f"cost_model must be one of {COST_MODELS}, got {cost_model!r}")
    d = p.data
    f, c, h = d["flash"], d["cores"], d["host"]
    tR = f["tR_us"] * 1e-6
    interval, lat = _flash_times(p, tR)
    interval_r, lat_r = _flash_times(p, tR * f["read_retry_factor"])
    scope = d["pipeline"]["scope"]
    if cost_model == "cycles":
        dev = 0.0
        if c["count"] > 0 and scope != "all":
            dev = _cycles(c["cycles"], t.counters, float_factor=1.0 if c["fpu"] else c["soft_float_factor"],
                          skip_scan=(scope == "scan")) / (c["clock_MHz"] * 1e6)
        host = _cycles(h["cycles"], t.counters) / (h["clock_MHz"] * 1e6)
    else:
        dev = 0.0
        if c["count"] > 0 and scope != "all":
            dev = t.measured_s * (h["clock_MHz"] / c["clock_MHz"]) * c["measured_scale"]
        host = t.measured_s
    rate = p.pipeline_rate
    pipe = t.text_bytes / rate if rate > 0 else 0.0
    bw = p.link_bandwidth
    ovh = d["link"]["per_command_overhead_us"] * 1e-6
    g = d["p2p"]
    p2p = g["per_command_overhead_us"] * 1e-6 + t.object_bytes / p.p2p_bandwidth
    h2d = g["h2d_overhead_us"] * 1e-6 + t.object_bytes / p.h2d_bandwidth
    return TaskCosts(interval, lat, interval_r, lat_r, dev, pipe, host,
                     ovh + t.object_bytes / bw, ovh + t.text_bytes / bw, ovh, p2p, h2d)


# ------------------------------------------------------------- simulation
class _Sim:
    def __init__(self) -> None:
        self.now = 0.0
        self._heap: list = []
        self._seq = 0

    def at(self, time: float, fn: Callable, *args) -> None:
        self._seq += 1
        heapq.heappush(self._heap, (time, self._seq, fn, args))

    def run(self) -> None:
        heap = self._heap
        while heap:
            time, _, fn, args = heapq.heappop(heap)
            self.now = time
            fn(*args)


class _Resource:
    """A FIFO queue in front of ``units`` identical servers. Busy time is kept per
    account (the name a use is booked under: the resource's own by default;
    the SSD's port books ``link`` and ``p2p`` uses apart)."""

    def __init__(self, sim: _Sim, name: str, units: int, timeline: Optional[list],
                 gate: Optional["_Gate"] = None) -> None:
        self.sim, self.name, self.units = sim, name, units
        self.queue: deque = deque()
        self.in_use = 0
        self.gate = gate  # closed: no new service starts (the flash while the TQ stalls intake)
        self.busy: dict[str, float] = {}
        self.timeline = timeline

    def request(self, task: int, duration: float, on_start: Optional[Callable], on_end: Optional[Callable],
                account: Optional[str] = None) -> None:
        self.queue.append((task, duration, on_start, on_end, account or self.name))
        self.dispatch()

    def dispatch(self) -> None:
        while self.queue and self.in_use < self.units and not (self.gate and self.gate.closed):
            task, duration, on_start, on_end, account = self.queue.popleft()
            self.in_use += 1
            start = self.sim.now
            end = start + duration
            self.busy[account] = self.busy.get(account, 0.0) + duration
            if self.timeline is not None:
                self.timeline.append((account, task, start, end))
            self.sim.at(end, self._release)
            if on_start is not None:
                self.sim.at(start, on_start, start)
            if on_end is not None:
                self.sim.at(end, on_end, end)

    def _release(self) -> None:
        self.in_use -= 1
        self.dispatch()


class _Gate:
    """Stops a group of resources (the flash channels) from starting work."""

    def __init__(self) -> None:
        self.closed = 0
        self.members: list[_Resource] = []

    def open_one(self) -> None:
        self.closed -= 1
        if not self.closed:
            for r in self.members:
                r.dispatch()


class _TaskQueue:
    def __init__(self, sim: _Sim, slots: int, gate: _Gate) -> None:
        self.sim, self.slots, self.gate = sim, slots, gate
        self.occupied = 0
        self.waiters: deque = deque()

    def try_acquire(self) -> bool:
        if self.occupied < self.slots:
            self.occupied += 1
            return True
        return False

    def wait_acquire(self, resume: Callable) -> None:
        if self.occupied < self.slots and not self.waiters:
            self.occupied += 1
            self.sim.at(self.sim.now, resume, True)
        else:
            self.waiters.append(resume)
            self.gate.closed += 1

    def release(self) -> None:
        self.occupied -= 1
        if self.waiters:
            resume = self.waiters.popleft()
            self.occupied += 1
            self.sim.at(self.sim.now, resume, True)
            self.gate.open_one()


class _Run:
    """One simulation: processes (generators) driven by the event loop."""

    def __init__(self, p: Profile, tasks: Sequence[TaskWork], split: SplitPolicy, cost_model: str,
                 timeline: bool, destination: str = "host") -> None:
        self.p = p
        self.tasks = tasks
        self.split = split
        self.cost_model = cost_model
        self.sim = _Sim()
        self.tl: Optional[list] = [] if timeline else None
        d = p.data
        scope = d["pipeline"]["scope"]
        self.scope = scope
        self.channels = d["flash"]["channels"]
        self.gate = _Gate()
        self.flash = [_Resource(self.sim, "flash", 1, self.tl, self.gate) for _ in range(self.channels)]
        self.gate.members = self.flash
        self.gpu = destination == "gpu"  # output goes to GPU memory
        self.p2p = self.gpu and d["p2p"]["enabled"]  # ... and device output takes the P2P path
        port = _Resource(self.sim, "link", 1, self.tl)  # the SSD's PCIe port: to host memory or to the GPU
        self.res = {
            "device_cores": _Resource(self.sim, "device_cores", d["cores"]["count"], self.tl),
            "pipeline": _Resource(self.sim, "pipeline", 1 if scope != "none" else 0, self.tl),
            "link": port,
            "p2p": port,
            "h2d": _Resource(self.sim, "h2d", 1, self.tl),
            "host_cpu": _Resource(self.sim, "host_cpu", d["host"]["cores"], self.tl),
        }
        self.tq = _TaskQueue(self.sim, d["task_queue"]["slots"], self.gate)
        self.timeout_s = d["link"]["timeout_s"]
        self.page_size = d["flash"]["page_size"]
        self.internal_bytes = 0
        self.link_bytes = 0  # SSD <-> host memory
        self.p2p_bytes = 0  # SSD -> GPU memory
        self.h2d_bytes = 0  # host memory -> GPU memory
        self.sides: list[str] = [HOST] * len(tasks)
        self.costs = [task_costs(p, t, cost_model) for t in tasks]
        self.end = [0.0] * len(tasks)
        self.host_cpu_s = 0.0

    # -- driving generators -------------------------------------------------
    def _step(self, gen, value: Any = None) -> None:
        try:
            cmd = gen.send(value)
        except StopIteration:
            return
        op = cmd[0]
        resume = lambda v=None, g=gen: self._step(g, v)  # noqa: E731
        if op == "use":  # ("use", resource, task, duration): resume at the end
            self.res[cmd[1]].request(cmd[2], cmd[3], None, resume, cmd[1])
        elif op == "start":  # ("start", resource, task, duration): resume when it starts
            self.res[cmd[1]].request(cmd[2], cmd[3], resume, None, cmd[1])
        elif op == "delay":
            self.sim.at(self.sim.now + cmd[1], resume, None)
        elif op == "until":
            self.sim.at(max(self.sim.now, cmd[1]), resume, None)
        elif op == "flash":  # ("flash", task, [(channel, duration), ...]): resume when all are done
            pending = [len(cmd[2])]

            def one_done(_end, pending=pending, resume=resume):
                pending[0] -= 1
                if not pending[0]:
                    resume(None)

            for ch, duration in cmd[2]:
                self.flash[ch].request(cmd[1], duration, None, one_done)
        elif op == "tq_try":
            self.sim.at(self.sim.now, resume, self.tq.try_acquire())
        elif op == "tq_wait":
            self.tq.wait_acquire(resume)
        else:  # pragma: no cover - programming error
            raise RuntimeError(op)

    # -- processes -----------------------------------------------------------
    def _read(self, i: int, retry: bool = False):
        c, t = self.costs[i], self.tasks[i]
        if t.n_pages <= 0:
            return
        interval, lat = (c.flash_interval_retry, c.flash_lat_retry) if retry else (c.flash_interval, c.flash_lat)
        self.internal_bytes += t.n_pages * self.page_size
        counts = pages_per_channel(t.first_page, t.n_pages, self.channels)
        yield ("flash", i, [(ch, k * interval) for ch, k in enumerate(counts) if k])
        if lat > 0:
            yield ("delay", lat)

    def _to_host(self, i: int, final: bool, reread: bool = False, retry: bool = False):
        """Text to the host (after an optional re-read) and, on the final attempt, the host
        parse (and, for a GPU destination, the copy of its objects to the GPU)."""
        if reread:
            yield from self._read(i, retry=retry)
        self.link_bytes += self.tasks[i].text_bytes
        yield ("use", "link", i, self.costs[i].link_text)
        if final:
            yield ("use", "host_cpu", i, self.costs[i].host)
            self.host_cpu_s += self.costs[i].host
            if self.gpu:
                yield from self._copy_to_gpu(i)

    def _copy_to_gpu(self, i: int):
        """Objects in host memory -> GPU memory (the GPU's copy engine, its own link)."""
        self.h2d_bytes += self.tasks[i].object_bytes
        yield ("use", "h2d", i, self.costs[i].h2d)

    def _send_objects(self, i: int):
        """A device task's objects leave the SSD: over the link to host memory, or
        over the P2P path to GPU memory (destination "gpu" with a P2P path)."""
        if self.p2p:
            self.p2p_bytes += self.tasks[i].object_bytes
            yield ("use", "p2p", i, self.costs[i].p2p_objects)
        else:
            self.link_bytes += self.tasks[i].object_bytes
            yield ("use", "link", i, self.costs[i].link_objects)

    def _bounce(self, i: int, final: bool):
        """GPU destination without a P2P path: objects that landed in host memory are
        copied on (only once the final attempt's completion arrives)."""
        if final and self.gpu and not self.p2p:
            yield from self._copy_to_gpu(i)

    def _host_attempt(self, i: int, final: bool, fault: Optional[str]):
        yield from self._read(i)
        media = fault == _MEDIA
        yield from self._to_host(i, final, reread=media, retry=media)
        return HOST

    def _device_attempt(self, i: int, final: bool, fault: Optional[str]):
        c = self.costs[i]
        yield from self._read(i)
        if fault == _MEDIA:  # uncorrectable read: error status, host re-reads with read-retry
            yield ("use", "link", i, c.link_status)
            yield from self._to_host(i, final, reread=True, retry=True)
            return RAW
        if fault == _TQ:  # the task queue rejects the task: the page comes back raw
            yield from self._to_host(i, final)
            return RAW
        if self.scope == "all":
            started = yield ("start", "pipeline", i, c.pipeline)
            if fault == _APP:
                yield ("until", started + c.pipeline)
                yield ("use", "link", i, c.link_status)
                yield from self._to_host(i, final, reread=True)
                return RAW
            yield from self._send_objects(i)
            yield ("until", started + c.pipeline)
            yield from self._bounce(i, final)
            return DEVICE
        if self.scope == "scan":
            yield ("use", "pipeline", i, c.pipeline)
        if self.split.kind == "dynamic":
            admitted = yield ("tq_try",)
            if not admitted:  # every slot occupied when the pages arrive: return them raw
                yield from self._to_host(i, final)
                return RAW
        else:
            yield ("tq_wait",)
        yield ("use", "device_cores", i, c.device)
        self.tq.release()
        if fault == _APP:  # the app failed: wasted core time, error status, host re-reads
            yield ("use", "link", i, c.link_status)
            yield from self._to_host(i, final, reread=True)
            return RAW
        yield from self._send_objects(i)
        yield from self._bounce(i, final)
        return DEVICE

    def _task(self, i: int, intent: str):
        yield from self._task_body(i, intent)
        self.outstanding -= 1
        self._submit()

    def _submit(self) -> None:
        """Submit tasks in order while fewer than ``host.queue_depth`` are in flight."""
        while self.next_task < len(self.tasks) and self.outstanding < self.queue_depth:
            i = self.next_task
            self.next_task += 1
            self.outstanding += 1
            self.sim.at(self.sim.now, self._step, self._task(i, self.intents[i]), None)

    def _task_body(self, i: int, intent: str):
        t = self.tasks[i]
        faults = t.faults or {}
        timeouts = int(faults.get(_TIMEOUT, 0))
        final_fault = next((k for k in (_MEDIA, _APP, _TQ) if faults.get(k, 0)), None)
        attempt = self._device_attempt if intent == DEVICE else self._host_attempt
        for _ in range(timeouts):  # the completion never arrived: wait, then resubmit
            yield from attempt(i, False, None)
            yield ("delay", self.timeout_s)
        side = yield from attempt(i, True, final_fault)
        self.sides[i] = side
        self.end[i] = self.sim.now

    def run(self) -> None:
        kind = self.split.kind
        self.intents: list[str] = []
        for i, t in enumerate(self.tasks):
            if not t.offloadable:
                intent = HOST
            elif kind == "dynamic":
                intent = DEVICE
            elif kind == "host":
                intent = HOST
            elif kind == "device":
                intent = DEVICE
            else:
                intent = DEVICE if t.side in (DEVICE, RAW) else HOST
            if intent == DEVICE and self.p.data["cores"]["count"] < 1 and self.scope != "all":
                raise ValueError(f"profile {self.p.name!r} has no cores for StorageApps")
            self.intents.append(intent)
        self.queue_depth = self.p.data["host"]["queue_depth"]
        self.next_task = 0
        self.outstanding = 0
        self._submit()
        self.sim.run()


def simulate(profile: Profile, tasks: Sequence[TaskWork], split: "SplitPolicy | str" = "dynamic", *,
             wall_s: float = 0.0, cost_model: str = "cycles", device: Optional[str] = None,
             timeline: bool = True, destination: str = "host") -> Schedule:
    """Model one run: the final side of every task and its :class:`Report`.

    ``tasks`` in order (``TaskWork.index`` is informational); ``split`` a
    :class:`~ndp_core.device.SplitPolicy` or its string; ``wall_s`` the real
    seconds the run took (copied into the report); ``cost_model`` ``"cycles"``
    (work counters x profile cycle costs) or ``"measured"`` (measured seconds
    scaled by clocks); ``timeline=False`` skips recording resource uses;
    ``destination`` where the objects must end up: ``"host"`` memory (the
    default) or ``"gpu"`` memory (device output over the P2P path, host-parsed
    objects copied host -> GPU; see the module docstring).

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
    run = _Run(profile, list(tasks), split, cost_model, timeline, destination)
    run.run()
    d = profile.data
    makespan = max(run.end, default=0.0)
    gpu = destination == "gpu"
    units = {
        "flash": d["flash"]["channels"],
        "device_cores": d["cores"]["count"],
        "pipeline": 1 if d["pipeline"]["scope"] != "none" else 0,
        "link": 1,
        "host_cpu": d["host"]["cores"],
        "p2p": 1 if run.p2p else 0,
    }
    busy = {r: run.res[r].busy.get(r, 0.0) if r in run.res else 0.0 for r in RESOURCES}
    busy["flash"] = sum(ch.busy.get("flash", 0.0) for ch in run.flash)
    power = d["power"]
    energy: dict[str, float] = {}
    for r in POWER_RESOURCES:
        pw = power[r]
        idle_time = max(units.get(r, 0) * makespan - busy.get(r, 0.0), 0.0)
        energy[r] = pw["active_W"] * busy.get(r, 0.0) + pw["idle_W"] * idle_time
    if gpu:
        # [power.p2p] is the GPU at the end of both paths: active while data lands in
        # its memory (P2P writes, host copies), idle otherwise - for the whole run, as
        # it waits for the data even where no P2P path exists.
        h2d = busy["h2d"]
        units["h2d"] = 1
        pw = power["p2p"]
        energy["p2p"] = pw["active_W"] * busy["p2p"] + pw["idle_W"] * max(makespan - busy["p2p"] - h2d, 0.0)
        energy["h2d"] = pw["active_W"] * h2d
    energy["platform"] = power["platform_idle_W"] * makespan
    energy["total"] = sum(energy.values())
    pages = {DEVICE: 0, HOST: 0, RAW: 0}
    faults = {name: 0 for name in FAULT_NAMES.values()}
    for t, side in zip(run.tasks, run.sides):
        pages[side] += t.n_pages
        for k, v in (t.faults or {}).items():
            faults[k] = faults.get(k, 0) + int(v)
    host_all = sum(c.host for c in run.costs)
    report = Report(
        device=device or profile.name,
        split=str(split),
        tasks=len(run.tasks),
        pages=pages,
        bytes={"internal": run.internal_bytes, "host_link": run.link_bytes + run.h2d_bytes, "p2p": run.p2p_bytes},
        text_bytes=sum(t.text_bytes for t in run.tasks),
        object_bytes=sum(t.object_bytes for t in run.tasks),
        busy_s=busy,
        units=units,
        makespan_s=makespan,
        host_cpu_s=run.host_cpu_s,
        # Rounded to the nanosecond: the difference of two equal sums can leave 1e-17.
        host_cpu_saved_s=max(round(host_all - run.host_cpu_s, 9), 0.0),
        energy_j=energy,
        faults=faults,
        wall_s=float(wall_s),
        timeline=run.tl if run.tl is not None else [],
        meta={"profile": profile.name, "cost_model": cost_model, "overrides": dict(profile.overrides),
              "destination": destination},
    )
    return Schedule(list(run.sides), report)


def uniform_tasks(text_bytes: int, counters: Mapping[str, int], *, page_size: int, task_bytes: int = 2 << 20,
                  object_bytes: int = 0, split: "SplitPolicy | str" = "host",
                  measured_s: float = 0.0, faults: Any = None) -> list[TaskWork]:
    """Cut a whole input (its total text bytes, work counters, object bytes and
    measured seconds) into equal tasks of ``task_bytes`` for what-if runs
    without the reader; sides follow ``split``'s static assignment; ``faults``
    (a :class:`~device_emulator.faults.FaultPlan`) fills each task's faults as
    the plan would inject them.

    >>> ts = uniform_tasks(6 << 20, {"bytes_scanned": 6 << 20, "ints": 600000}, page_size=4096)
    >>> len(ts), ts[0].n_pages, sum(t.counters["ints"] for t in ts)
    (3, 512, 600000)
    """
    split = SplitPolicy.parse(split)
    n = max(1, math.ceil(text_bytes / task_bytes))
    out = []
    for i in range(n):
        lo, hi = i * text_bytes // n, (i + 1) * text_bytes // n

        def share(total: float, lo=lo, hi=hi) -> int:
            return int(total * hi // text_bytes - total * lo // text_bytes) if text_bytes else 0

        n_pages = max(1, math.ceil(hi / page_size) - lo // page_size)
        out.append(TaskWork(
            index=i, first_page=lo // page_size, n_pages=n_pages, text_bytes=hi - lo,
            object_bytes=share(object_bytes), counters={k: share(v) for k, v in counters.items()},
            side=split.static_side(i),
            measured_s=measured_s * (hi - lo) / text_bytes if text_bytes else 0.0,
            faults=faults.faults_for(i) if faults else {},
        ))
    return out
