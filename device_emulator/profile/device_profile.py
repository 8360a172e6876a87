"""``Profile``: one device's validated parameters, indexed by dotted path, with
the rates the timing model derives from them.

>>> from device_emulator.profile import load_profile
>>> p = load_profile("modern-gen4")
>>> p["link.lanes"], round(p.link_bandwidth / 1e9, 2), p.page_size
(4, 7.0, 16384)
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from device_emulator.profile.units import bytes_per_s, capped, pcie_link_bytes_per_s, seconds
from device_emulator.profile.overrides import apply_override, get_path, resolve_name, unknown_parameter
from device_emulator.profile.schema import ProfileError, leaves, pipeline_rate, validate

__all__ = ["Profile"]


@dataclass
class Profile:
    """A device profile: nested parameters (``data``), the overrides applied
    on top of the file, and derived rates.

    Index with dotted paths: ``profile["flash.tR_us"]``. ``flat()`` lists
    every parameter. Profiles are plain data (picklable).
    """

    data: dict
    source: str = ""  # shipped profile name or file path
    overrides: dict = field(default_factory=dict)

    # ------------------------------------------------------------ access
    @property
    def name(self) -> str:
        return self.data.get("name") or Path(self.source).stem or "custom"

    @property
    def description(self) -> str:
        return self.data.get("description", "")

    def __getitem__(self, path: str) -> Any:
        try:
            return get_path(self.data, resolve_name(path))
        except KeyError:
            raise unknown_parameter(path) from None

    def get(self, path: str, default: Any = None) -> Any:
        """``self[path]``, or ``default`` for a name the profile lacks."""
        try:
            return self[path]
        except ProfileError:
            return default

    def flat(self) -> dict[str, Any]:
        """Every parameter by dotted path."""
        return dict(leaves(self.data))

    def with_overrides(self, **overrides: Any) -> "Profile":
        """A copy with more overrides (same rules as :func:`~device_emulator.profile.load_profile`)."""
        data = copy.deepcopy(self.data)
        applied = dict(self.overrides)
        for name, value in overrides.items():
            apply_override(data, name, value, applied)
        profile = Profile(data, self.source, applied)
        profile.validate()
        return profile

    def validate(self) -> None:
        """Raise :class:`~device_emulator.profile.ProfileError` on values the model cannot use."""
        validate(self.data)

    # ----------------------------------------------------------- derived
    @property
    def page_size(self) -> int:
        return self.data["flash"]["page_size"]

    @property
    def flash_page_interval_s(self) -> float:
        """Steady-state time between pages on one channel: the channel transfer
        or a die's read spread over the ways, whichever is longer."""
        flash = self.data["flash"]
        transfer = flash["page_size"] / bytes_per_s(flash["channel_MBps"])
        return max(transfer, seconds(flash["tR_us"]) / flash["ways"])

    @property
    def internal_bandwidth(self) -> float:
        """Flash -> controller bytes/s with every channel streaming."""
        flash = self.data["flash"]
        return flash["channels"] * flash["page_size"] / self.flash_page_interval_s

    @property
    def link_bandwidth(self) -> float:
        """Device <-> host payload bytes/s."""
        link = self.data["link"]
        rate = pcie_link_bytes_per_s(link["pcie_gen"], link["lanes"], link["efficiency"])
        return capped(rate, link["max_MBps"])

    @property
    def p2p_bandwidth(self) -> float:
        """Device -> GPU payload bytes/s over the peer-to-peer path: the SSD's
        own link bounds it (:attr:`link_bandwidth`), ``p2p.max_MBps`` caps it
        further when > 0 (a switch or root complex that forwards P2P slower)."""
        return capped(self.link_bandwidth, self.data["p2p"]["max_MBps"])

    @property
    def h2d_bandwidth(self) -> float:
        """Host -> GPU copy bytes/s (``p2p.h2d_MBps``, the GPU's own link)."""
        return bytes_per_s(self.data["p2p"]["h2d_MBps"])

    @property
    def pipeline_rate(self) -> float:
        """Fixed-function pipeline bytes/s (0 when there is none)."""
        return pipeline_rate(self.data["pipeline"])

    # ----------------------------------------------------------- display
    def summary(self) -> str:
        """One line: cores, flash, link, host."""
        cores, host = self.data["cores"], self.data["host"]
        scope = self.data["pipeline"]["scope"]
        if scope == "all":
            compute = f"pipeline {self.pipeline_rate / 1e9:.2f} GB/s"
        else:
            compute = f"{cores['count']}x{cores['clock_MHz']:g} MHz cores{'' if cores['fpu'] else ' (no FPU)'}"
            if scope == "scan":
                compute += f" + scan pipeline {self.pipeline_rate / 1e9:.2f} GB/s"
        return (f"{compute}, flash {self['flash.channels']}ch x {self['flash.ways']}w "
                f"{self.internal_bandwidth / 1e9:.2f} GB/s, PCIe {self['link.pcie_gen']} "
                f"x{self['link.lanes']} {self.link_bandwidth / 1e9:.2f} GB/s, TQ {self['task_queue.slots']}, "
                f"host {host['cores']}x{host['clock_MHz']:g} MHz")

    def __repr__(self) -> str:
        extra = f", overrides={self.overrides}" if self.overrides else ""
        return f"Profile({self.name!r}: {self.summary()}{extra})"
