"""Loading profiles: shipped TOML files by name, TOML files by path, then overrides.

Shipped profiles live in ``device_emulator/profiles/*.toml``, every number with
its source next to it.

>>> "morpheus-isca16" in list_profiles()
True
>>> p = load_profile("modern-gen4", cores=8, **{"link.lanes": 8})
>>> p["cores.count"], p["link.lanes"], p.overrides
(8, 8, {'cores.count': 8, 'link.lanes': 8})
>>> load_profile("modern-gen4", no_such_thing=1)
Traceback (most recent call last):
...
device_emulator.profile.schema.ProfileError: unknown profile parameter 'no_such_thing'
"""
from __future__ import annotations

import os
from importlib import resources
from pathlib import Path
from typing import Any, Mapping, Union

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

from device_emulator.profile.device_profile import Profile
from device_emulator.profile.overrides import merge_section
from device_emulator.profile.schema import PARAMETERS, SECTIONS, ProfileError, coerce, defaults

__all__ = ["load_profile", "list_profiles", "parse_toml"]


def _profiles_dir():
    return resources.files("device_emulator") / "profiles"


def list_profiles() -> list[str]:
    """Names of the shipped profiles.

    >>> list_profiles()[:2]
    ['biscuit-pm', 'hods-fpga']
    """
    return sorted(p.name[:-5] for p in _profiles_dir().iterdir() if p.name.endswith(".toml"))


def parse_toml(text: str, source: str) -> dict:
    """A profile's data from TOML text: the schema's defaults with the file's
    values set (``source`` names the file in errors).

    >>> parse_toml('[flash]\\nchannels = 2', "inline")["flash"]["channels"]
    2
    """
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ProfileError(f"{source}: {error}") from None
    data = defaults()
    for key, value in raw.items():
        if isinstance(value, Mapping):
            if key not in SECTIONS:
                raise ProfileError(f"{source}: unknown section [{key}]")
            merge_section(data, key, value, {})
        else:
            if key not in PARAMETERS:
                raise ProfileError(f"{source}: unknown key {key!r}")
            data[key] = coerce(key, value)
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
        data = parse_toml(path.read_text(), text)
        source = str(path)
    else:
        shipped = _profiles_dir() / f"{text}.toml"
        if not shipped.is_file():
            raise ProfileError(f"unknown profile {text!r}; shipped profiles: {', '.join(list_profiles())}")
        data = parse_toml(shipped.read_text(), text)
        source = text
    profile = Profile(data, source, {})
    if overrides:
        return profile.with_overrides(**overrides)
    profile.validate()
    return profile
