"""device_emulator: an emulated computational SSD.

Functionally real (the engine runs the reader's StorageApps on real file
pages), with a deterministic timing and energy model of the hardware in a
profile: flash channels, embedded cores or a fixed-function pipeline, the
PCIe link, the host CPU, the task queue, and injected faults.

>>> from device_emulator import ComputationalSSD, list_profiles
>>> list_profiles()
['biscuit-pm', 'hods-fpga', 'modern-gen4', 'morpheus-isca16', 'summarizer-board']
>>> ComputationalSSD("hods-fpga").profile.pipeline_rate
1040000000.0

Public names:

* :class:`ComputationalSSD` - the device (``ndp_core.device.Device``);
* :func:`load_profile`, :func:`list_profiles`, :class:`Profile`, :class:`ProfileError`;
* :func:`simulate` - the timing model on its own; :func:`task_costs`, :class:`TaskCosts`
  - one task's service times; :func:`uniform_tasks` - what-if tasks;
* :class:`FaultPlan` - deterministic fault injection;
* :func:`calibrate`, :class:`HostCosts`, :class:`CalibrationWarning` - fit host costs from measured tasks;
* :func:`sweep`, :class:`Sweep` - what-if grids (profiles x splits x parameters) over one read;
* ``Report`` (re-exported from ``ndp_core.report``).

The source tree follows the hardware: ``sim/`` (event loop, resources,
processes), ``flash``, ``task_queue``, ``compute`` (cores, pipeline, prices),
``link`` (PCIe, P2P, host -> GPU), ``host``, ``energy``; ``costs`` and
``flows`` put one task through them, ``model`` wires a run; ``profile/`` holds
the schema, units and loading.
"""
from ndp_core.report import Report, collect, record

from device_emulator.calibrate import CalibrationWarning, HostCosts, calibrate, host_clock_MHz
from device_emulator.compute import COST_MODELS
from device_emulator.costs import TaskCosts, task_costs
from device_emulator.faults import FAULT_CODES, FaultPlan
from device_emulator.link import DESTINATIONS
from device_emulator.model import simulate
from device_emulator.profile import Profile, ProfileError, list_profiles, load_profile
from device_emulator.ssd import ComputationalSSD
from device_emulator.sweep import Sweep, sweep
from device_emulator.workload import uniform_tasks

__all__ = [
    "ComputationalSSD",
    "DESTINATIONS",
    "Profile",
    "ProfileError",
    "load_profile",
    "list_profiles",
    "simulate",
    "task_costs",
    "TaskCosts",
    "uniform_tasks",
    "COST_MODELS",
    "FaultPlan",
    "FAULT_CODES",
    "calibrate",
    "HostCosts",
    "CalibrationWarning",
    "host_clock_MHz",
    "sweep",
    "Sweep",
    "Report",
    "collect",
    "record",
]
