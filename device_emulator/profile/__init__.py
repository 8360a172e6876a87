"""Device profiles: the numbers a timing model needs, loaded from TOML.

A profile describes one computational SSD and the host it is plugged into:
flash geometry, embedded cores (or a fixed-function pipeline), the PCIe link,
the peer-to-peer path to a GPU, the host CPU, power, and the task queue.

* :mod:`~device_emulator.profile.schema` - every parameter, its type, unit and
  default; the free-form price tables; validation;
* :mod:`~device_emulator.profile.units` - PCIe lane rates, MB/s, MHz, us to SI;
* :mod:`~device_emulator.profile.overrides` - override names and their application;
* :mod:`~device_emulator.profile.device_profile` - :class:`Profile` and its derived rates;
* :mod:`~device_emulator.profile.loading` - TOML files, shipped profiles.

>>> load_profile("hods-fpga", tR_us=40)["flash.tR_us"]
40.0
"""
from device_emulator.profile.device_profile import Profile
from device_emulator.profile.loading import list_profiles, load_profile
from device_emulator.profile.overrides import resolve_name
from device_emulator.profile.schema import ProfileError
from device_emulator.profile.units import pcie_lane_bytes_per_s

__all__ = ["Profile", "ProfileError", "load_profile", "list_profiles", "resolve_name", "pcie_lane_bytes_per_s"]
