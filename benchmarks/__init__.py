"""Benchmarks and demo for the ndp CSV -> Arrow reader (see benchmarks/README.md).

Each benchmark times a warm process, one that has loaded Numba: importing
this package turns arrow_bridge's startup library off
(``ARROW_BRIDGE_STARTUP_LIBRARY=0``, for the processes it starts too, unless
it is set already), as the library serves only a fresh process's first reads
(:mod:`arrow_bridge.startup`). Start-up itself is timed in fresh ``python -c``
processes with the library (``python -m benchmarks.peers --startup-only``).
"""
import os
import sys

#: The switch, and whether this package set it (the start-up probes then clear it for their processes).
STARTUP_LIBRARY_SWITCH = "ARROW_BRIDGE_STARTUP_LIBRARY"
STARTUP_LIBRARY_TURNED_OFF = STARTUP_LIBRARY_SWITCH not in os.environ
os.environ.setdefault(STARTUP_LIBRARY_SWITCH, "0")
if "arrow_bridge.startup" in sys.modules:  # imported before this package: too late for the switch
    sys.modules["arrow_bridge.startup"].retire()
