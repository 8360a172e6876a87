"""Override names and their application: what ``cores=8``, ``link_lanes=8``,
``tR_us=40`` or ``host={"clock_MHz": 3000}`` set in a profile's data.

>>> resolve_name("cores"), resolve_name("link_lanes"), resolve_name("tR_us")
('cores.count', 'link.lanes', 'flash.tR_us')
>>> resolve_name("host_cycles_floats")
'host.cycles.floats'
"""
from __future__ import annotations

import difflib
from typing import Any, Mapping, Optional

from device_emulator.profile.schema import PARAMETERS, SECTIONS, ProfileError, coerce, is_price_table

__all__ = ["ALIASES", "resolve_name", "unknown_parameter", "apply_override", "merge_section", "get_path"]

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


def unknown_parameter(name: str) -> ProfileError:
    """The error for a name no parameter has, with the closest names as a hint."""
    close = difflib.get_close_matches(name, list(PARAMETERS) + list(ALIASES), n=3)
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    return ProfileError(f"unknown profile parameter {name!r}{hint}")


def _is_parameter(path: str) -> bool:
    table, _, entry = path.rpartition(".")
    return path in PARAMETERS or (is_price_table(table) and entry.isidentifier())


def resolve_name(name: str) -> str:
    """The dotted path an override name refers to.

    Accepted: a dotted path (``"link.lanes"``, ``"host.cycles.ints"``), an alias
    (``"cores"`` -> ``"cores.count"``), a ``section_key`` spelling
    (``"link_lanes"``, ``"host_cycles_floats"``) or a leaf name found in one
    section only (``"tR_us"``). Anything else raises :class:`ProfileError`.
    """
    if _is_parameter(name):
        return name
    if name in ALIASES:
        return ALIASES[name]
    if name in SECTIONS:
        return name
    # section_key spellings: the longest section prefix wins.
    for section in sorted(SECTIONS, key=len, reverse=True):
        flat = section.replace(".", "_") + "_"
        if name.startswith(flat) and _is_parameter(f"{section}.{name[len(flat):]}"):
            return f"{section}.{name[len(flat):]}"
    matches = [path for path in PARAMETERS if path.rsplit(".", 1)[-1] == name]
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        raise ProfileError(f"ambiguous profile parameter {name!r}: say which of {', '.join(matches)}")
    raise unknown_parameter(name)


def get_path(tree: Mapping, path: str) -> Any:
    """The value at dotted ``path`` of nested ``tree`` (``KeyError`` if absent)."""
    node: Any = tree
    for part in path.split("."):
        node = node[part]
    return node


def _set_path(tree: dict, path: str, value: Any) -> None:
    parts = path.split(".")
    node = tree
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value


def merge_section(data: dict, section: str, entries: Mapping, applied: dict) -> None:
    """Sets ``entries`` (nested) into ``section`` of ``data``; records each in ``applied``."""
    for key, value in entries.items():
        path = f"{section}.{key}"
        if isinstance(value, Mapping):
            if path not in SECTIONS:
                raise unknown_parameter(path)
            merge_section(data, path, value, applied)
        else:
            if not _is_parameter(path):
                raise unknown_parameter(path)
            value = coerce(path, value)
            _set_path(data, path, value)
            applied[path] = value


def _as_mapping(value: Any) -> Optional[Mapping]:
    if isinstance(value, Mapping):
        return value
    to_section = getattr(value, "to_section", None)  # e.g. calibrate()'s HostCosts
    if callable(to_section):
        return to_section()
    return None


def apply_override(data: dict, name: str, value: Any, applied: dict) -> None:
    """Sets override ``name`` = ``value`` in ``data`` (a section name takes a
    mapping, merged in); records what it set in ``applied``.

    >>> data, applied = {"link": {"lanes": 4}}, {}
    >>> apply_override(data, "link_lanes", 8.0, applied)
    >>> data, applied
    ({'link': {'lanes': 8}}, {'link.lanes': 8})
    """
    mapping = _as_mapping(value)
    path = name if (mapping is not None and name in SECTIONS) else resolve_name(name)
    if path in SECTIONS:
        if mapping is None:
            raise ProfileError(f"{name!r} names a section: give a mapping of its parameters")
        merge_section(data, path, mapping, applied)
        return
    value = coerce(path, value)
    _set_path(data, path, value)
    applied[path] = value
