"""The profile schema: every parameter a profile may set, its type, unit and
default, grouped in sections; the rules a profile's values must meet.

A parameter's type is its default's type. Price tables (``[cores.cycles]``,
``[host.cycles]``) are free-form: each maps a work-counter name, as the app that
counts it names it, to cycles per unit (``tasks``: a fixed cost per command).

>>> SCHEMA["flash"]["tR_us"].unit, SCHEMA["flash"]["tR_us"].default
('us', 50.0)
>>> is_price_table("host.cycles"), coerce("flash.channels", 8.0)
(True, 8)
>>> coerce("host.cycles.ints", -1)
Traceback (most recent call last):
...
device_emulator.profile.schema.ProfileError: host.cycles.ints must be a non-negative number, got -1
"""
from __future__ import annotations

import math
from typing import Any, Iterator, Mapping, NamedTuple

from device_emulator.profile.units import bytes_per_s, pcie_lane_bytes_per_s

__all__ = ["ProfileError", "Param", "PriceTable", "SCHEMA", "POWER_RESOURCES", "PIPELINE_SCOPES", "SECTIONS",
           "PARAMETERS", "PRICE_TABLES", "TASK_PRICE", "defaults", "leaves", "is_price_table", "coerce",
           "validate", "pipeline_rate"]


class ProfileError(ValueError):
    """A profile or an override is invalid."""


class Param(NamedTuple):
    """One parameter: its default (whose type it takes), unit and meaning."""

    default: Any
    unit: str = ""
    doc: str = ""


class PriceTable(NamedTuple):
    """A free-form table: work-counter name -> cost per unit (non-negative)."""

    unit: str = "cycles"
    doc: str = ""


#: The resources with a power entry; ``p2p`` is the GPU at the end of the P2P
#: path and of host -> GPU copies (destination "gpu" only).
POWER_RESOURCES = ("flash", "device_cores", "pipeline", "link", "host_cpu", "p2p")
PIPELINE_SCOPES = ("none", "all", "scan")
#: The cost every price table may hold besides counters: one command's handling.
TASK_PRICE = "tasks"


def _power_section() -> dict:
    section: dict[str, Any] = {"platform_idle_W": Param(0.0, "W", "the rest of the platform, idling")}
    for resource in POWER_RESOURCES:
        section[resource] = {"active_W": Param(0.0, "W", "per unit while busy"),
                             "idle_W": Param(0.0, "W", "per unit while idle")}
    return section


SCHEMA: dict[str, Any] = {
    "name": Param(""),
    "description": Param(""),
    "references": Param([]),
    "flash": {
        "channels": Param(8, "", "independent flash channels"),
        "ways": Param(4, "", "dies interleaved on each channel"),
        "page_size": Param(16384, "bytes", "bytes per flash page"),
        "tR_us": Param(50.0, "us", "array read time of one page"),
        "channel_MBps": Param(800.0, "MB/s", "channel transfer rate"),
        "read_retry_factor": Param(3.0, "", "tR multiplier of a read-retry (after an uncorrectable read)"),
    },
    "cores": {
        "count": Param(1, "", "embedded cores available to StorageApps (0: none)"),
        "clock_MHz": Param(500.0, "MHz"),
        "fpu": Param(True),
        "soft_float_factor": Param(1.0, "", "cost multiplier of float_counters when fpu = false"),
        "float_counters": Param([], "", "counters that are floating-point work (soft float without an FPU)"),
        "measured_scale": Param(1.0, "", 'cost_model="measured": device s = measured_s * host/device clock * this'),
        "cycles": PriceTable("cycles", "cycles per unit of each work counter on one core"),
    },
    "pipeline": {
        "scope": Param("none", "", '"none" | "all" (converts everything) | "scan" (finds delimiters; cores convert)'),
        "scan_counters": Param([], "", "counters a scan pipeline does in place of the cores"),
        "bytes_per_cycle": Param(0.0, "bytes"),
        "clock_MHz": Param(0.0, "MHz"),
        "MBps": Param(0.0, "MB/s", "alternative to bytes_per_cycle * clock_MHz when only a rate is known"),
        "efficiency": Param(1.0, "", "sustained / peak rate"),
    },
    "link": {
        "pcie_gen": Param(3, "", "PCIe generation"),
        "lanes": Param(4),
        "efficiency": Param(1.0, "", "payload / raw lane rate (TLP, DLLP, flow-control overheads)"),
        "max_MBps": Param(0.0, "MB/s", "optional cap (0: none)"),
        "per_command_overhead_us": Param(0.0, "us", "submission + completion + interrupt, per command"),
        "timeout_s": Param(1.0, "s", "how long the host waits before retrying a command"),
    },
    "p2p": {
        "enabled": Param(True, "", "the SSD can DMA into GPU memory; false: GPU-bound output bounces via the host"),
        "max_MBps": Param(0.0, "MB/s", "cap of the P2P path (switch / root complex); 0: the SSD's link bounds it"),
        "per_command_overhead_us": Param(0.0, "us", "per P2P command: submission + completion"),
        "h2d_MBps": Param(12000.0, "MB/s", "host -> GPU copies (pinned memory) over the GPU's own link"),
        "h2d_overhead_us": Param(0.0, "us", "per host -> GPU copy: launch + completion"),
    },
    "host": {
        "cores": Param(1, "", "host threads parsing"),
        "clock_MHz": Param(2500.0, "MHz"),
        "queue_depth": Param(64, "", "tasks the host keeps in flight (submitted, not yet finished)"),
        "cycles": PriceTable("cycles", "cycles per unit of each work counter on one host core"),
    },
    "power": _power_section(),
    "task_queue": {
        "slots": Param(32, "", "tasks the device's task queue holds"),
        "task_bytes": Param(2 << 20, "bytes", "a device read's task (span) size when the reader is given no "
                            "block_size: small enough that a full queue holds little work"),
    },
}


def _walk(tree: Mapping, prefix: str = "") -> Iterator[tuple[str, Any]]:
    for key, value in tree.items():
        if isinstance(value, Mapping):
            yield prefix + key, None
            yield from _walk(value, prefix + key + ".")
        else:
            yield prefix + key, value


#: Dotted path -> :class:`Param` / dotted paths of sections / of price tables.
PARAMETERS: dict[str, Param] = {path: spec for path, spec in _walk(SCHEMA) if isinstance(spec, Param)}
PRICE_TABLES: frozenset[str] = frozenset(path for path, spec in _walk(SCHEMA) if isinstance(spec, PriceTable))
SECTIONS: frozenset[str] = frozenset(path for path, spec in _walk(SCHEMA) if spec is None) | PRICE_TABLES


def defaults(tree: Mapping = SCHEMA) -> dict:
    """A profile's data with every parameter at its default (price tables empty)."""
    out: dict[str, Any] = {}
    for key, spec in tree.items():
        if isinstance(spec, Mapping):
            out[key] = defaults(spec)
        elif isinstance(spec, PriceTable):
            out[key] = {}
        else:
            out[key] = list(spec.default) if isinstance(spec.default, list) else spec.default
    return out


def leaves(tree: Mapping, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """``(dotted path, value)`` of every value in a profile's data."""
    for key, value in tree.items():
        if isinstance(value, Mapping):
            yield from leaves(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


def is_price_table(path: str) -> bool:
    """Whether ``path`` names a price table (``"host.cycles"``)."""
    return path in PRICE_TABLES


def _price(path: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ProfileError(f"{path} must be a non-negative number, got {value!r}")
    return float(value)


def coerce(path: str, value: Any) -> Any:
    """``value`` as parameter ``path``'s type (an entry of a price table: a
    non-negative float); :class:`ProfileError` when it is not one."""
    table = path.rsplit(".", 1)[0]
    if is_price_table(table):
        return _price(path, value)
    default = PARAMETERS[path].default
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
    if not isinstance(value, (list, tuple)):
        raise ProfileError(f"{path} must be a list, got {value!r}")
    return list(value)


def pipeline_rate(pipeline: Mapping) -> float:
    """Fixed-function pipeline bytes/s of a ``[pipeline]`` section (0 when there is none)."""
    if pipeline["scope"] == "none":
        return 0.0
    if pipeline["MBps"] > 0:
        peak = bytes_per_s(pipeline["MBps"])
    else:
        peak = bytes_per_s(pipeline["bytes_per_cycle"] * pipeline["clock_MHz"])
    return peak * pipeline["efficiency"]


def _require(ok: bool, message: str) -> None:
    if not ok:
        raise ProfileError(message)


def _validate_flash(flash: Mapping) -> None:
    for key in ("channels", "ways", "page_size"):
        _require(flash[key] >= 1, f"flash.{key} must be >= 1")
    for key in ("tR_us", "channel_MBps"):
        _require(flash[key] > 0, f"flash.{key} must be > 0")
    _require(flash["read_retry_factor"] >= 1, "flash.read_retry_factor must be >= 1")


def _validate_compute(cores: Mapping, pipeline: Mapping) -> None:
    _require(cores["count"] >= 0, "cores.count must be >= 0")
    _require(cores["count"] == 0 or cores["clock_MHz"] > 0, "cores.clock_MHz must be > 0")
    _require(cores["soft_float_factor"] >= 0 and cores["measured_scale"] >= 0,
             "cores.soft_float_factor and cores.measured_scale must be >= 0")
    scope = pipeline["scope"]
    _require(scope in PIPELINE_SCOPES, f"pipeline.scope must be 'none', 'all' or 'scan', got {scope!r}")
    _require(scope == "none" or pipeline_rate(pipeline) > 0,
             "a pipeline needs a rate: bytes_per_cycle and clock_MHz, or MBps")
    _require(scope == "all" or cores["count"] >= 1, "cores.count must be >= 1 unless pipeline.scope = 'all'")
    for path, names in (("cores.float_counters", cores["float_counters"]),
                        ("pipeline.scan_counters", pipeline["scan_counters"])):
        _require(all(isinstance(name, str) for name in names), f"{path} must list counter names")


def _validate_links(link: Mapping, p2p: Mapping) -> None:
    try:
        pcie_lane_bytes_per_s(link["pcie_gen"])
    except ValueError as error:
        raise ProfileError(str(error)) from None
    _require(link["lanes"] >= 1 and link["efficiency"] > 0 and link["timeout_s"] >= 0
             and link["per_command_overhead_us"] >= 0,
             "link.lanes >= 1, link.efficiency > 0 and non-negative overheads are required")
    _require(p2p["max_MBps"] >= 0 and p2p["per_command_overhead_us"] >= 0 and p2p["h2d_overhead_us"] >= 0
             and p2p["h2d_MBps"] > 0,
             "p2p.h2d_MBps > 0 and non-negative p2p.max_MBps and overheads are required")


def validate(data: Mapping) -> None:
    """Raise :class:`ProfileError` on values the model cannot use.

    >>> validate(defaults())
    >>> validate(defaults() | {"task_queue": {"slots": 0}})
    Traceback (most recent call last):
    ...
    device_emulator.profile.schema.ProfileError: task_queue.slots must be >= 1
    """
    _validate_flash(data["flash"])
    _validate_compute(data["cores"], data["pipeline"])
    _validate_links(data["link"], data["p2p"])
    host = data["host"]
    _require(host["cores"] >= 1 and host["clock_MHz"] > 0 and host["queue_depth"] >= 1,
             "host.cores >= 1, host.clock_MHz > 0 and host.queue_depth >= 1 are required")
    _require(data["task_queue"]["slots"] >= 1, "task_queue.slots must be >= 1")
    _require(data["task_queue"]["task_bytes"] >= 1, "task_queue.task_bytes must be >= 1")
    for table in sorted(PRICE_TABLES):
        section, key = table.split(".")
        for name, price in data[section][key].items():
            _price(f"{table}.{name}", price)
    for path, watts in leaves(data["power"], "power."):
        _require(watts >= 0, f"{path} must be >= 0")
