"""Benchmarks and demo for the ndp CSV -> Arrow reader (see benchmarks/README.md).

Each benchmark times a warm process, one that has loaded Numba: importing
this package retires arrow_bridge's startup library, which serves only a
fresh process's first reads (:mod:`arrow_bridge.startup`). Start-up itself is
timed in fresh ``python -c`` processes (``python -m benchmarks.peers
--startup-only``).
"""
from arrow_bridge import startup as _startup

_startup.retire()
