"""``ComputationalSSD``: the emulated device a reader runs against.

Functionally real: its :attr:`~ComputationalSSD.engine` is an
``ndp_core.Engine`` whose worker threads run the reader's StorageApps on the
real file pages. Timing is modeled: after a run, :meth:`~ComputationalSSD.schedule`
turns the tasks' work counters into each task's final side and a
:class:`~ndp_core.report.Report` through the profile's timing model.

>>> ssd = ComputationalSSD("morpheus-isca16", cores=8)
>>> ssd.name, ssd.page_size, ssd.profile["cores.count"]
('morpheus-isca16*', 8192, 8)
>>> import pickle
>>> pickle.loads(pickle.dumps(ssd)).profile["cores.count"]
8
"""
from __future__ import annotations

import html
import threading
from typing import Any, Mapping, Optional, Sequence, Union

from ndp_core.device import FAULT_NONE, Schedule, SplitPolicy, TaskWork, default_workers
from ndp_core.ssdlets import NodeWork

from device_emulator.compute import COST_MODELS
from device_emulator.faults import FaultPlan
from device_emulator.link import DESTINATIONS
from device_emulator.model import simulate
from device_emulator.profile import Profile, list_profiles, load_profile
from device_emulator.ssdlet_model import SSDletTiming, model_ssdlets

__all__ = ["ComputationalSSD"]


class ComputationalSSD:
    """An emulated computational SSD (implements ``ndp_core.device.Device``).

    Parameters
    ----------
    profile
        A shipped profile name (``list_profiles()``), a TOML path or a
        :class:`~device_emulator.profile.Profile`.
    workers
        Real threads the engine runs StorageApps on (default
        ``ndp_core.device.default_workers()``). The *modeled* core count is the
        profile's ``cores.count``.
    faults
        A :class:`~device_emulator.faults.FaultPlan` (or a mapping of its
        fields) deciding which device commands fail.
    cost_model
        ``"cycles"`` (work counters x profile cycle costs, the default) or
        ``"measured"`` (measured kernel seconds scaled by clock ratio).
    host_costs
        Host costs from :func:`~device_emulator.calibrate.calibrate` (or a
        mapping for the ``[host]`` section), applied over the profile's.
    destination
        Where the modeled output lands: ``"host"`` memory (default) or
        ``"gpu"`` memory (device output over the profile's ``[p2p]`` path,
        host-parsed objects copied host -> GPU). :meth:`schedule` takes it per
        run too.
    name
        The device's name in reports (default: the profile name, with ``*``
        when overridden).
    **overrides
        Profile parameters (``cores=8``, ``**{"link.lanes": 8}``, ``tR_us=40``).
    """

    def __init__(self, profile: Union[str, Profile] = "modern-gen4", *, workers: Optional[int] = None,
                 faults: "FaultPlan | Mapping | None" = None, cost_model: str = "cycles",
                 host_costs: Any = None, name: Optional[str] = None, destination: str = "host",
                 **overrides: Any) -> None:
        if cost_model not in COST_MODELS:
            raise ValueError(f"cost_model must be one of {COST_MODELS}, got {cost_model!r}")
        if destination not in DESTINATIONS:
            raise ValueError(f"destination must be one of {DESTINATIONS}, got {destination!r}")
        if host_costs is not None:
            overrides["host"] = host_costs
        self.profile: Profile = load_profile(profile, **overrides)
        self.faults: Optional[FaultPlan] = FaultPlan.coerce(faults)
        self.cost_model = cost_model
        self.destination = destination
        self.workers = workers
        self._name = name
        self._engine = None
        self._lock = threading.Lock()

    # ---------------------------------------------------------- Device protocol
    @property
    def name(self) -> str:
        if self._name:
            return self._name
        return self.profile.name + ("*" if self.profile.overrides else "")

    @property
    def page_size(self) -> int:
        """Flash page size: tasks cover runs of these pages."""
        return self.profile.page_size

    @property
    def task_bytes(self) -> int:
        """The task size a read uses when given no ``block_size`` (the
        profile's ``task_queue.task_bytes``, rounded to whole pages).

        >>> ComputationalSSD("summarizer-board").task_bytes
        131072
        """
        pages = max(1, self.profile["task_queue.task_bytes"] // self.page_size)
        return pages * self.page_size

    @property
    def engine(self):
        """The ``ndp_core.Engine`` (created on first use; never pickled). Its
        submission queue depth is the profile's ``host.queue_depth``, the
        number of tasks the model lets the host keep in flight."""
        if self._engine is None:
            with self._lock:
                if self._engine is None:
                    import ndp_core

                    self._engine = ndp_core.Engine(page_size=self.page_size,
                                                   cores=self.workers or default_workers(),
                                                   queue_depth=self.profile["host.queue_depth"])
        return self._engine

    def with_destination(self, destination: str) -> "ComputationalSSD":
        """This device with its output modeled as going to ``destination``
        (``"host"`` or ``"gpu"``): the same engine, profile and faults, this
        object unchanged (a read may model GPU delivery while others share the device).

        >>> ssd = ComputationalSSD("modern-gen4")
        >>> to_gpu = ssd.with_destination("gpu")
        >>> (to_gpu.destination, ssd.destination, to_gpu.engine is ssd.engine)
        ('gpu', 'host', True)
        >>> ssd.close()
        """
        if destination not in DESTINATIONS:
            raise ValueError(f"destination must be one of {DESTINATIONS}, got {destination!r}")
        self.engine  # started now, so that both share it
        view = object.__new__(ComputationalSSD)
        view.__dict__.update(self.__dict__, destination=destination)
        return view

    def fault_for(self, task: int, attempt: int) -> int:
        """The ``FAULT_*`` code to inject into attempt ``attempt`` of task ``task``."""
        return self.faults.fault_code(task, attempt) if self.faults else FAULT_NONE

    def schedule(self, tasks: Sequence[TaskWork], split: "SplitPolicy | str", wall_s: float, *,
                 destination: Optional[str] = None) -> Schedule:
        """Final sides and the modeled Report of a finished run (deterministic);
        ``destination`` (``"host"`` or ``"gpu"``) defaults to the device's."""
        s = simulate(self.profile, tasks, split, wall_s=wall_s, cost_model=self.cost_model, device=self.name,
                     destination=destination or self.destination)
        s.report.meta["faults"] = repr(self.faults) if self.faults else None
        return s

    def model_ssdlets(self, work: Sequence[NodeWork]) -> SSDletTiming:
        """The modeled time of an SSDlet graph run (``ndp_core.ssdlets.Application``
        calls this with its nodes' work; see :mod:`device_emulator.ssdlet_model`)."""
        return model_ssdlets(self.profile, work)

    # ------------------------------------------------------------------ extras
    def with_overrides(self, **overrides: Any) -> "ComputationalSSD":
        """A new device: this one's profile, fault plan and settings plus ``overrides``."""
        return ComputationalSSD(self.profile.with_overrides(**overrides), workers=self.workers,
                                faults=self.faults, cost_model=self.cost_model, name=self._name,
                                destination=self.destination)

    def close(self) -> None:
        """Stop the engine's threads (a later use creates a new engine)."""
        with self._lock:
            engine, self._engine = self._engine, None
        if engine is not None:
            engine.close()

    def __enter__(self) -> "ComputationalSSD":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---------------------------------------------------------------- pickling
    def __getstate__(self) -> dict:
        p = self.profile
        shipped = p.source in list_profiles()
        return {
            "profile": p.source if shipped else p,
            "overrides": dict(p.overrides) if shipped else {},
            "faults": self.faults, "cost_model": self.cost_model, "workers": self.workers,
            "name": self._name, "destination": self.destination,
        }

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["profile"], workers=state["workers"], faults=state["faults"],
                      cost_model=state["cost_model"], name=state["name"],
                      destination=state.get("destination", "host"), **state["overrides"])

    # ----------------------------------------------------------------- display
    def _rows(self) -> list[tuple[str, str]]:
        p = self.profile
        c, pipe = p.data["cores"], p.data["pipeline"]
        rows = [("profile", p.name), ("description", p.description)]
        if c["count"] > 0 and pipe["scope"] != "all":
            rows.append(("cores", f"{c['count']} x {c['clock_MHz']:g} MHz" + ("" if c["fpu"] else
                                                                                 f", no FPU (soft float x{c['soft_float_factor']:g})")))
        if pipe["scope"] != "none":
            rows.append(("pipeline", f"{p.pipeline_rate / 1e9:.2f} GB/s ({pipe['scope']})"))
        rows += [
            ("flash", f"{p['flash.channels']} ch x {p['flash.ways']} ways, {p.page_size} B pages, "
                      f"tR {p['flash.tR_us']:g} us, {p.internal_bandwidth / 1e9:.2f} GB/s"),
            ("link", f"PCIe {p['link.pcie_gen']} x{p['link.lanes']}, {p.link_bandwidth / 1e9:.2f} GB/s, "
                     f"{p['link.per_command_overhead_us']:g} us/command"),
            ("p2p", (f"to GPU memory {p.p2p_bandwidth / 1e9:.2f} GB/s, {p['p2p.per_command_overhead_us']:g} us/command"
                     if p["p2p.enabled"] else "none (GPU-bound output bounces via host memory)")
                    + f"; host -> GPU copies {p.h2d_bandwidth / 1e9:.2f} GB/s"),
            ("destination", self.destination),
            ("task queue", f"{p['task_queue.slots']} slots, {self.task_bytes >> 10} KiB tasks by default"),
            ("host", f"{p['host.cores']} x {p['host.clock_MHz']:g} MHz, {p['host.queue_depth']} tasks in flight"),
            ("cost model", self.cost_model),
            ("faults", repr(self.faults) if self.faults else "none"),
        ]
        if p.overrides:
            rows.append(("overrides", ", ".join(f"{k}={v}" for k, v in p.overrides.items())))
        return rows

    def __repr__(self) -> str:
        extra = "".join(f", {k}={v!r}" for k, v in self.profile.overrides.items())
        faults = f", faults={self.faults!r}" if self.faults else ""
        model = f", cost_model={self.cost_model!r}" if self.cost_model != "cycles" else ""
        dest = f", destination={self.destination!r}" if self.destination != "host" else ""
        return f"ComputationalSSD({self.profile.name!r}{extra}{faults}{model}{dest}) # {self.profile.summary()}"

    def _repr_html_(self) -> str:
        rows = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
                       f"<td style='text-align:left'>{html.escape(v)}</td></tr>" for k, v in self._rows())
        return f"<div><b>ComputationalSSD</b> {html.escape(self.name)}<table>{rows}</table></div>"
