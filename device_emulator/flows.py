"""Task flows: the path one task takes through the hardware, as a process.

* **device side**: flash read -> TQ slot -> embedded core -> objects over the
  link (a ``scope = "all"`` pipeline: flash read -> pipeline, overlapped with
  the objects' transfer; ``scope = "scan"``: flash read -> pipeline -> TQ -> core);
* **host side** (and **raw**): flash read -> text over the link -> host core.

With a GPU destination a device task's objects take the P2P path, and a host or
raw task's parsed objects are copied host -> GPU; without a P2P path
(``p2p.enabled = false``) device objects cross the link and are copied too.

Faults: a media error returns an error status and the host re-reads with
read-retry; an app failure wastes the device work, returns an error status and
the host re-reads; a task-queue overflow returns the pages raw; a link timeout
makes the host wait ``link.timeout_s`` and resubmit.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from ndp_core.device import (DEVICE, FAULT_APP, FAULT_MEDIA, FAULT_NAMES, FAULT_TIMEOUT, FAULT_TQ_OVERFLOW, HOST,
                             RAW, SplitPolicy, TaskWork)

from device_emulator.costs import TaskCosts
from device_emulator.flash import FlashArray
from device_emulator.link import Port
from device_emulator.profile import Profile
from device_emulator.sim.events import EventLoop
from device_emulator.sim.process import Delay, Process, StartUse, Until, Use
from device_emulator.sim.resources import Resource
from device_emulator.task_queue import TaskQueue, TryAdmit, WaitAdmit

__all__ = ["Hardware", "build_hardware", "intent", "TaskFlows"]

MEDIA, APP, TIMEOUT, TQ_OVERFLOW = (FAULT_NAMES[code] for code in
                                    (FAULT_MEDIA, FAULT_APP, FAULT_TIMEOUT, FAULT_TQ_OVERFLOW))
#: The faults that decide a final attempt's outcome, in precedence order.
FINAL_FAULTS = (MEDIA, APP, TQ_OVERFLOW)


@dataclass
class Hardware:
    """The resources of one run."""

    loop: EventLoop
    flash: FlashArray
    task_queue: TaskQueue
    cores: Resource
    pipeline: Resource
    port: Port
    host_cpu: Resource


def build_hardware(profile: Profile, timeline: Optional[list]) -> Hardware:
    """Fresh resources for ``profile`` (recording uses in ``timeline`` unless None)."""
    loop = EventLoop()
    flash = FlashArray(loop, profile, timeline)
    has_pipeline = profile["pipeline.scope"] != "none"
    return Hardware(
        loop=loop, flash=flash,
        task_queue=TaskQueue(loop, profile["task_queue.slots"], flash.gate),
        cores=Resource(loop, "device_cores", profile["cores.count"], timeline),
        pipeline=Resource(loop, "pipeline", 1 if has_pipeline else 0, timeline),
        port=Port(loop, timeline),
        host_cpu=Resource(loop, "host_cpu", profile["host.cores"], timeline),
    )


def intent(task: TaskWork, split: SplitPolicy) -> str:
    """The side ``task`` is first sent to under ``split``."""
    if not task.offloadable or split.kind == "host":
        return HOST
    if split.kind in ("dynamic", "device"):
        return DEVICE
    return DEVICE if task.side in (DEVICE, RAW) else HOST


class TaskFlows:
    """The processes of one run's tasks and what they moved."""

    def __init__(self, hardware: Hardware, profile: Profile, tasks: Sequence[TaskWork],
                 costs: Sequence[TaskCosts], split: SplitPolicy, destination: str) -> None:
        self.hw, self.tasks, self.costs, self.split = hardware, tasks, costs, split
        self.scope = profile["pipeline.scope"]
        self.timeout_s = profile["link.timeout_s"]
        self.gpu = destination == "gpu"  # output goes to GPU memory
        self.p2p = self.gpu and profile["p2p.enabled"]  # ... and device output takes the P2P path
        self.internal_bytes = 0
        self.host_cpu_s = 0.0
        self.sides: list[str] = [HOST] * len(tasks)
        self.end = [0.0] * len(tasks)

    # -- one task -------------------------------------------------------------------
    def task(self, i: int, side: str, on_done: Callable[[], None]) -> Process:
        """Task ``i`` sent to ``side``: timed-out attempts, then the final one."""
        faults = self.tasks[i].faults or {}
        final_fault = next((kind for kind in FINAL_FAULTS if faults.get(kind, 0)), None)
        attempt = self.device_attempt if side == DEVICE else self.host_attempt
        for _ in range(int(faults.get(TIMEOUT, 0))):  # the completion never arrived: wait, then resubmit
            yield from attempt(i, False, None)
            yield Delay(self.timeout_s)
        self.sides[i] = yield from attempt(i, True, final_fault)
        self.end[i] = self.hw.loop.now
        on_done()

    def host_attempt(self, i: int, final: bool, fault: Optional[str]) -> Process:
        """Pages read, sent as text, parsed by the host (a media error re-reads with read-retry)."""
        yield from self.read(i)
        media = fault == MEDIA
        yield from self.to_host(i, final, reread=media, retry=media)
        return HOST

    def device_attempt(self, i: int, final: bool, fault: Optional[str]) -> Process:
        """Pages read and converted on the device; faults fall back to the host."""
        yield from self.read(i)
        if fault == MEDIA:  # uncorrectable read: error status, host re-reads with read-retry
            yield self.hw.port.status(i, self.costs[i].link_status)
            yield from self.to_host(i, final, reread=True, retry=True)
            return RAW
        if fault == TQ_OVERFLOW:  # the task queue rejects the task: the page comes back raw
            yield from self.to_host(i, final)
            return RAW
        if self.scope == "all":
            return (yield from self.pipeline_converts(i, final, fault))
        return (yield from self.cores_convert(i, final, fault))

    def pipeline_converts(self, i: int, final: bool, fault: Optional[str]) -> Process:
        """A ``scope = "all"`` pipeline converts while the objects stream out."""
        cost = self.costs[i]
        started = yield StartUse(self.hw.pipeline, i, cost.pipeline)
        if fault == APP:
            yield Until(started + cost.pipeline)
            yield self.hw.port.status(i, cost.link_status)
            yield from self.to_host(i, final, reread=True)
            return RAW
        yield from self.send_objects(i)
        yield Until(started + cost.pipeline)
        yield from self.bounce(i, final)
        return DEVICE

    def cores_convert(self, i: int, final: bool, fault: Optional[str]) -> Process:
        """(A scan pipeline, then) a TQ slot and an embedded core convert."""
        cost = self.costs[i]
        if self.scope == "scan":
            yield Use(self.hw.pipeline, i, cost.pipeline)
        if self.split.kind == "dynamic":
            admitted = yield TryAdmit(self.hw.task_queue)
            if not admitted:  # every slot occupied when the pages arrive: return them raw
                yield from self.to_host(i, final)
                return RAW
        else:
            yield WaitAdmit(self.hw.task_queue)
        yield Use(self.hw.cores, i, cost.device)
        self.hw.task_queue.release()
        if fault == APP:  # the app failed: wasted core time, error status, host re-reads
            yield self.hw.port.status(i, cost.link_status)
            yield from self.to_host(i, final, reread=True)
            return RAW
        yield from self.send_objects(i)
        yield from self.bounce(i, final)
        return DEVICE

    # -- steps ----------------------------------------------------------------------
    def read(self, i: int, retry: bool = False) -> Process:
        """Task ``i``'s pages from flash into the controller's DRAM."""
        task, cost = self.tasks[i], self.costs[i]
        if task.n_pages <= 0:
            return
        interval, latency = (cost.flash_interval_retry, cost.flash_lat_retry) if retry else \
            (cost.flash_interval, cost.flash_lat)
        self.internal_bytes += task.n_pages * self.hw.flash.page_size
        yield self.hw.flash.read(i, task.first_page, task.n_pages, interval)
        if latency > 0:
            yield Delay(latency)

    def to_host(self, i: int, final: bool, reread: bool = False, retry: bool = False) -> Process:
        """Text to the host (after an optional re-read) and, on the final attempt, the host
        parse (and, for a GPU destination, the copy of its objects to the GPU)."""
        if reread:
            yield from self.read(i, retry=retry)
        yield self.hw.port.to_host(i, self.tasks[i].text_bytes, self.costs[i].link_text)
        if final:
            yield Use(self.hw.host_cpu, i, self.costs[i].host)
            self.host_cpu_s += self.costs[i].host
            if self.gpu:
                yield self.copy_to_gpu(i)

    def copy_to_gpu(self, i: int) -> Use:
        """Objects in host memory -> GPU memory (the GPU's copy engine, its own link)."""
        return self.hw.port.copy_to_gpu(i, self.tasks[i].object_bytes, self.costs[i].h2d)

    def send_objects(self, i: int) -> Process:
        """A device task's objects leave the SSD: over the link to host memory, or
        over the P2P path to GPU memory (destination "gpu" with a P2P path)."""
        if self.p2p:
            yield self.hw.port.to_gpu(i, self.tasks[i].object_bytes, self.costs[i].p2p_objects)
        else:
            yield self.hw.port.to_host(i, self.tasks[i].object_bytes, self.costs[i].link_objects)

    def bounce(self, i: int, final: bool) -> Process:
        """GPU destination without a P2P path: objects that landed in host memory are
        copied on (only once the final attempt's completion arrives)."""
        if final and self.gpu and not self.p2p:
            yield self.copy_to_gpu(i)
