"""SSDlets: user programs for the device, connected into graphs (Biscuit's model).

* :func:`ssdlet` — declare a program (typed ports, arguments, state, work
  counters) as a Numba function; compiled at run time into a StorageApp.
* :class:`Application` — place instances on the device or the host, connect
  ports, feed host data or scan a file, collect outputs, run.
* :class:`Out`, :data:`PAGES`, :func:`Nullable`, :class:`PortType` — port types.
* :mod:`ndp_core.ssdlets.examples` — small programs to start from.

See docs/ssdlets.md.
"""
from ndp_core.ssdlets.application import Application, NodeWork, RunResult
from ndp_core.ssdlets.graph import GraphError, Node, PortRef
from ndp_core.ssdlets.ports import PAGES, Nullable, Out, PortType, port_type
from ndp_core.ssdlets.program import DEFAULT_BUDGET, SSDlet, SSDletError, ssdlet

__all__ = ["Application", "DEFAULT_BUDGET", "GraphError", "Node", "NodeWork", "Nullable", "Out", "PAGES", "PortRef",
           "PortType", "RunResult", "SSDlet", "SSDletError", "port_type", "ssdlet"]
