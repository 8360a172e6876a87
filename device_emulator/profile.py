"""Device profiles: the numbers a timing model needs, loaded from TOML.

A profile describes one computational SSD and the host it is plugged into:
flash geometry, embedded cores (or a fixed-function pipeline), the PCIe link,
the peer-to-peer path to a GPU, the host CPU, power, and the task queue.
Shipped profiles live in ``device_emulator/profiles/*.toml``, every number with
its source next to it.

>>> p = load_profile("modern-gen4", cores=8, **{"link.lanes": 8})
>>> p["cores.count"], p["link.lanes"]
(8, 8)
>>> "morpheus-isca16" in list_profiles()
True
>>> load_profile("modern-gen4", no_such_thing=1)
Traceback (most recent call last):
...
device_emulator.profile.ProfileError: unknown profile parameter 'no_such_thing'
"""
from __future__ import annotations

from ndp_core.device import WORK_COUNTERS

import copy
import difflib
import math
import os
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Iterator, Mapping, Optional, Union

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

__all__ = [
    "Profile", "ProfileError", "load_profile", "list_profiles", "WORK_UNITS", "COUNTERS",
    "pcie_lane_bytes_per_s",
]

#: Work counters a StorageApp reports (``TaskWork.counters`` names).
COUNTERS = WORK_COUNTERS  # the names TaskWork.counters uses (ndp_core.device)
#: Work units with a cycle cost: the counters plus ``tasks`` (a fixed cost per task).
WORK_UNITS = COUNTERS + ("tasks",)

POWER_RESOURCES = ("flash", "device_cores", "pipeline", "link", "host_cpu", "p2p")


def _cycles_schema() -> dict:
    return {u: 0.0 for u in WORK_UNITS}


def _power_schema() -> dict:
    # Watts per unit of each resource (flash channel, core, pipeline, link) while
    # busy and while idle, plus the rest of the platform idling. "p2p" is the GPU
    # at the end of the P2P path and of host -> GPU copies (destination="gpu" only).
    d: dict[str, Any] = {"platform_idle_W": 0.0}
    for r in POWER_RESOURCES:
        d[r] = {"active_W": 0.0, "idle_W": 0.0}
    return d


#: Every parameter a profile may set, with its default (the default's type is
#: the parameter's type). A TOML file may leave any of them out.
SCHEMA: dict[str, Any] = {
    "name": "",
    "description": "",
    "references": [],
    "flash": {
        "channels": 8,  # independent flash channels
        "ways": 4,  # dies interleaved on each channel
        "page_size": 16384,  # bytes per flash page
        "tR_us": 50.0,  # array read time of one page
        "channel_MBps": 800.0,  # channel transfer rate (MB/s, 1e6 bytes)
        "read_retry_factor": 3.0,  # tR multiplier of a read-retry (after an uncorrectable read)
    },
    "cores": {
        "count": 1,  # embedded cores available to StorageApps (0: none)
        "clock_MHz": 500.0,
        "fpu": True,
        "soft_float_factor": 1.0,  # per-float cost multiplier when fpu = false
        "measured_scale": 1.0,  # cost_model="measured": device s = measured_s * host/device clock * this
        "cycles": _cycles_schema(),  # cycles per work unit
    },
    "pipeline": {
        "scope": "none",  # "none" | "all" (converts everything) | "scan" (finds delimiters; cores convert)
        "bytes_per_cycle": 0.0,
        "clock_MHz": 0.0,
        "MBps": 0.0,  # alternative to bytes_per_cycle * clock_MHz when only a rate is known
        "efficiency": 1.0,  # sustained / peak rate
    },
    "link": {
        "pcie_gen": 3,
        "lanes": 4,
        "efficiency": 1.0,  # payload / raw lane rate (TLP, DLLP, flow-control overheads)
        "max_MBps": 0.0,  # optional cap (0: none)
        "per_command_overhead_us": 0.0,  # submission + completion + interrupt, per command
        "timeout_s": 1.0,  # how long the host waits before retrying a command
    },
    "p2p": {
        "enabled": True,  # the SSD can DMA into GPU memory (NVMe P2P); false: GPU-bound output bounces via host memory
        "max_MBps": 0.0,  # cap of the P2P path (switch / root complex); 0: only the SSD's own link bounds it
        "per_command_overhead_us": 0.0,  # per P2P command: submission + completion, as on the link
        "h2d_MBps": 12000.0,  # host -> GPU copies (pinned memory) over the GPU's own link
        "h2d_overhead_us": 0.0,  # per host -> GPU copy: launch + completion
    },
    "host": {
        "cores": 1,  # host threads parsing
        "clock_MHz": 2500.0,
        "queue_depth": 64,  # tasks the host keeps in flight (submitted, not yet finished)
        "cycles": _cycles_schema(),
    },
    "power": _power_schema(),
    "task_queue": {
        "slots": 32,
    },
}

#: Short names accepted as overrides, besides dotted paths, ``section_key``
#: spellings and unique leaf names.
ALIASES = {
    "cores": "cores.count",
    "device_cores": "cores.count",
    "clock": "cores.clock_MHz",
    "host_cores": "host.cores",
    "host_clock": "host.clock_MHz",
    "queue_depth": "host.queue_depth",
    "slots": "task_queue.slots",
    "tq_slots": "task_queue.slots",
    "gen": "link.pcie_gen",
    "timeout": "link.timeout_s",
    # leaf names that were unique before [p2p] reused them keep meaning the link
    "max_MBps": "link.max_MBps",
    "per_command_overhead_us": "link.per_command_overhead_us",
}

# PCIe: transfer rate per lane (GT/s) and line-code efficiency per generation.
_PCIE_GTS = {1: 2.5, 2: 5.0, 3: 8.0, 4: 16.0, 5: 32.0, 6: 64.0}
_PCIE_ENCODING = {1: 8 / 10, 2: 8 / 10, 3: 128 / 130, 4: 128 / 130, 5: 128 / 130, 6: 242 / 256}


def pcie_lane_bytes_per_s(gen: int) -> float:
    """Raw payload bytes/s of one PCIe lane after line coding (PCI-SIG base specs).

    >>> round(pcie_lane_bytes_per_s(3) / 1e6, 1), round(pcie_lane_bytes_per_s(4) / 1e6, 1)
    (984.6, 1969.2)
    """
    if gen not in _PCIE_GTS:
        raise ProfileError(f"link.pcie_gen must be one of {sorted(_PCIE_GTS)}, got {gen}")
    return _PCIE_GTS[gen] * 1e9 * _PCIE_ENCODING[gen] / 8


class ProfileError(ValueError):
    """A profile or an override is invalid."""


def _leaves(tree: Mapping, prefix: str = "") -> Iterator[tuple[str, Any]]:
    for k, v in tree.items():
        path = f"{prefix}{k}"
        if isinstance(v, Mapping):
            yield from _leaves(v, path + ".")
        else:
            yield path, v


_SCHEMA_LEAVES = dict(_leaves(SCHEMA))
_SECTIONS = {p for p in (".".join(k.split(".")[:i]) for k in _SCHEMA_LEAVES
                         for i in range(1, k.count(".") + 1))}


def _coerce(path: str, value: Any) -> Any:
    default = _SCHEMA_LEAVES[path]
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ProfileError(f"{path} must be true or false, got {value!r}")
        return value
    if isinstance(default, int):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
            raise ProfileError(f"{path} must be an integer, got {value!r}")
        return int(value)
    if isinstance(default, float):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ProfileError(f"{path} must be a number, got {value!r}")
        return float(value)
    if isinstance(default, str):
        if not isinstance(value, str):
            raise ProfileError(f"{path} must be a string, got {value!r}")
        return value
    if isinstance(default, list):
        if not isinstance(value, (list, tuple)):
            raise ProfileError(f"{path} must be a list, got {value!r}")
        return list(value)
    return value


def _get(tree: Mapping, path: str) -> Any:
    node: Any = tree
    for part in path.split("."):
        node = node[part]
    return node


def _set(tree: dict, path: str, value: Any) -> None:
    parts = path.split(".")
    node = tree
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value


def _unknown(name: str) -> ProfileError:
    candidates = list(_SCHEMA_LEAVES) + list(ALIASES)
    close = difflib.get_close_matches(name, candidates, n=3)
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    return ProfileError(f"unknown profile parameter {name!r}{hint}")


def resolve_name(name: str) -> str:
    """The dotted path an override name refers to.

    Accepted: a dotted path (``"link.lanes"``), an alias (``"cores"`` ->
    ``"cores.count"``), a ``section_key`` spelling (``"link_lanes"``,
    ``"host_cycles_floats"``) or a leaf name found in one section only
    (``"tR_us"``). Anything else raises :class:`ProfileError`.

    >>> resolve_name("cores"), resolve_name("link_lanes"), resolve_name("tR_us")
    ('cores.count', 'link.lanes', 'flash.tR_us')
    """
    if name in _SCHEMA_LEAVES:
        return name
    if name in ALIASES:
        return ALIASES[name]
    if name in _SECTIONS:
        return name
    # section_key spellings: the longest section prefix wins.
    for section in sorted(_SECTIONS, key=len, reverse=True):
        flat = section.replace(".", "_") + "_"
        if name.startswith(flat):
            rest = name[len(flat):]
            cand = f"{section}.{rest}"
            if cand in _SCHEMA_LEAVES:
                return cand
    matches = [p for p in _SCHEMA_LEAVES if p.rsplit(".", 1)[-1] == name]
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        raise ProfileError(f"ambiguous profile parameter {name!r}: say which of {', '.join(matches)}")
    raise _unknown(name)


def _merge_section(data: dict, section: str, value: Mapping, applied: dict) -> None:
    for key, v in value.items():
        path = f"{section}.{key}"
        if isinstance(v, Mapping):
            if path not in _SECTIONS:
                raise _unknown(path)
            _merge_section(data, path, v, applied)
        else:
            if path not in _SCHEMA_LEAVES:
                raise _unknown(path)
            v = _coerce(path, v)
            _set(data, path, v)
            applied[path] = v


def _as_mapping(value: Any) -> Optional[Mapping]:
    if isinstance(value, Mapping):
        return value
    to_section = getattr(value, "to_section", None)  # e.g. calibrate()'s HostCosts
    if callable(to_section):
        return to_section()
    return None


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
            return _get(self.data, resolve_name(path))
        except KeyError:
            raise _unknown(path) from None

    def get(self, path: str, default: Any = None) -> Any:
        try:
            return self[path]
        except ProfileError:
            return default

    def flat(self) -> dict[str, Any]:
        """Every parameter by dotted path."""
        return dict(_leaves(self.data))

    def with_overrides(self, **overrides: Any) -> "Profile":
        """A copy with more overrides (same rules as :func:`load_profile`)."""
        data = copy.deepcopy(self.data)
        applied = dict(self.overrides)
        for name, value in overrides.items():
            _apply_override(data, name, value, applied)
        p = Profile(data, self.source, applied)
        p.validate()
        return p

    # ----------------------------------------------------------- derived
    @property
    def page_size(self) -> int:
        return self.data["flash"]["page_size"]

    @property
    def flash_page_interval_s(self) -> float:
        """Steady-state time between pages on one channel: the channel transfer
        or a die's read spread over the ways, whichever is longer."""
        f = self.data["flash"]
        xfer = f["page_size"] / (f["channel_MBps"] * 1e6)
        return max(xfer, f["tR_us"] * 1e-6 / f["ways"])

    @property
    def internal_bandwidth(self) -> float:
        """Flash -> controller bytes/s with every channel streaming."""
        f = self.data["flash"]
        return f["channels"] * f["page_size"] / self.flash_page_interval_s

    @property
    def link_bandwidth(self) -> float:
        """Device <-> host payload bytes/s."""
        l = self.data["link"]
        bw = pcie_lane_bytes_per_s(l["pcie_gen"]) * l["lanes"] * l["efficiency"]
        if l["max_MBps"] > 0:
            bw = min(bw, l["max_MBps"] * 1e6)
        return bw

    @property
    def p2p_bandwidth(self) -> float:
        """Device -> GPU payload bytes/s over the peer-to-peer path: the SSD's
        own link bounds it (:attr:`link_bandwidth`), ``p2p.max_MBps`` caps it
        further when > 0 (a switch or root complex that forwards P2P slower)."""
        bw = self.link_bandwidth
        cap = self.data["p2p"]["max_MBps"]
        return min(bw, cap * 1e6) if cap > 0 else bw

    @property
    def h2d_bandwidth(self) -> float:
        """Host -> GPU copy bytes/s (``p2p.h2d_MBps``, the GPU's own link)."""
        return self.data["p2p"]["h2d_MBps"] * 1e6

    @property
    def pipeline_rate(self) -> float:
        """Fixed-function pipeline bytes/s (0 when there is none)."""
        p = self.data["pipeline"]
        if p["scope"] == "none":
            return 0.0
        peak = p["MBps"] * 1e6 if p["MBps"] > 0 else p["bytes_per_cycle"] * p["clock_MHz"] * 1e6
        return peak * p["efficiency"]

    def validate(self) -> None:
        """Raise :class:`ProfileError` on values the model cannot use."""
        d = self.data
        f = d["flash"]
        for k in ("channels", "ways", "page_size"):
            if f[k] < 1:
                raise ProfileError(f"flash.{k} must be >= 1")
        for k in ("tR_us", "channel_MBps"):
            if f[k] <= 0:
                raise ProfileError(f"flash.{k} must be > 0")
        if f["read_retry_factor"] < 1:
            raise ProfileError("flash.read_retry_factor must be >= 1")
        c = d["cores"]
        if c["count"] < 0:
            raise ProfileError("cores.count must be >= 0")
        if c["count"] > 0 and c["clock_MHz"] <= 0:
            raise ProfileError("cores.clock_MHz must be > 0")
        if c["soft_float_factor"] < 0 or c["measured_scale"] < 0:
            raise ProfileError("cores.soft_float_factor and cores.measured_scale must be >= 0")
        p = d["pipeline"]
        if p["scope"] not in ("none", "all", "scan"):
            raise ProfileError(f"pipeline.scope must be 'none', 'all' or 'scan', got {p['scope']!r}")
        if p["scope"] != "none" and self.pipeline_rate <= 0:
            raise ProfileError("a pipeline needs a rate: bytes_per_cycle and clock_MHz, or MBps")
        if p["scope"] != "all" and c["count"] < 1:
            raise ProfileError("cores.count must be >= 1 unless pipeline.scope = 'all'")
        l = d["link"]
        pcie_lane_bytes_per_s(l["pcie_gen"])
        if l["lanes"] < 1 or l["efficiency"] <= 0 or l["timeout_s"] < 0 or l["per_command_overhead_us"] < 0:
            raise ProfileError("link.lanes >= 1, link.efficiency > 0 and non-negative overheads are required")
        g = d["p2p"]
        if g["max_MBps"] < 0 or g["per_command_overhead_us"] < 0 or g["h2d_overhead_us"] < 0 or g["h2d_MBps"] <= 0:
            raise ProfileError("p2p.h2d_MBps > 0 and non-negative p2p.max_MBps and overheads are required")
        h = d["host"]
        if h["cores"] < 1 or h["clock_MHz"] <= 0 or h["queue_depth"] < 1:
            raise ProfileError("host.cores >= 1, host.clock_MHz > 0 and host.queue_depth >= 1 are required")
        if d["task_queue"]["slots"] < 1:
            raise ProfileError("task_queue.slots must be >= 1")
        for section in ("cores", "host"):
            for u, v in d[section]["cycles"].items():
                if v < 0:
                    raise ProfileError(f"{section}.cycles.{u} must be >= 0")
        for path, v in _leaves(d["power"], "power."):
            if v < 0:
                raise ProfileError(f"{path} must be >= 0")

    def summary(self) -> str:
        """One line: cores, flash, link, host."""
        c, h = self.data["cores"], self.data["host"]
        pipe = self.data["pipeline"]
        if pipe["scope"] == "all":
            compute = f"pipeline {self.pipeline_rate / 1e9:.2f} GB/s"
        else:
            compute = f"{c['count']}x{c['clock_MHz']:g} MHz cores{'' if c['fpu'] else ' (no FPU)'}"
            if pipe["scope"] == "scan":
                compute += f" + scan pipeline {self.pipeline_rate / 1e9:.2f} GB/s"
        return (f"{compute}, flash {self['flash.channels']}ch x {self['flash.ways']}w "
                f"{self.internal_bandwidth / 1e9:.2f} GB/s, PCIe {self['link.pcie_gen']} "
                f"x{self['link.lanes']} {self.link_bandwidth / 1e9:.2f} GB/s, TQ {self['task_queue.slots']}, "
                f"host {h['cores']}x{h['clock_MHz']:g} MHz")

    def __repr__(self) -> str:
        extra = f", overrides={self.overrides}" if self.overrides else ""
        return f"Profile({self.name!r}: {self.summary()}{extra})"


def _apply_override(data: dict, name: str, value: Any, applied: dict) -> None:
    mapping = _as_mapping(value)
    path = name if (mapping is not None and name in _SECTIONS) else resolve_name(name)
    if path in _SECTIONS:
        if mapping is None:
            raise ProfileError(f"{name!r} names a section: give a mapping of its parameters")
        _merge_section(data, path, mapping, applied)
        return
    v = _coerce(path, value)
    _set(data, path, v)
    applied[path] = v


def _profiles_dir():
    return resources.files("device_emulator") / "profiles"


def list_profiles() -> list[str]:
    """Names of the shipped profiles.

    >>> list_profiles()[:2]
    ['biscuit-pm', 'hods-fpga']
    """
    return sorted(p.name[:-5] for p in _profiles_dir().iterdir() if p.name.endswith(".toml"))


def _from_toml(text: str, source: str) -> dict:
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ProfileError(f"{source}: {e}") from None
    data = copy.deepcopy(SCHEMA)
    for key, value in raw.items():
        if isinstance(value, Mapping):
            if key not in _SECTIONS:
                raise ProfileError(f"{source}: unknown section [{key}]")
            _merge_section(data, key, value, {})
        else:
            if key not in _SCHEMA_LEAVES:
                raise ProfileError(f"{source}: unknown key {key!r}")
            data[key] = _coerce(key, value)
    return data


def load_profile(name_or_path: Union[str, os.PathLike, Profile], **overrides: Any) -> Profile:
    """Load a shipped profile by name, a TOML file by path, or copy a Profile,
    then apply ``overrides``.

    Overrides are named by dotted path (``**{"link.lanes": 8}``), alias
    (``cores=8``), ``section_key`` (``link_lanes=8``) or a unique leaf name
    (``tR_us=40``). A section name takes a mapping, merged into it
    (``host={"clock_MHz": 3000}``, or the object :func:`~device_emulator.calibrate`
    returns). Unknown names raise :class:`ProfileError`.
    """
    if isinstance(name_or_path, Profile):
        return name_or_path.with_overrides(**overrides)
    text = str(name_or_path)
    path = Path(text)
    if text.endswith(".toml") or os.sep in text or path.exists():
        if not path.exists():
            raise ProfileError(f"no profile file {text!r}")
        data = _from_toml(path.read_text(), text)
        source = str(path)
    else:
        res = _profiles_dir() / f"{text}.toml"
        if not res.is_file():
            raise ProfileError(f"unknown profile {text!r}; shipped profiles: {', '.join(list_profiles())}")
        data = _from_toml(res.read_text(), text)
        source = text
    profile = Profile(data, source, {})
    if overrides:
        return profile.with_overrides(**overrides)
    profile.validate()
    return profile
