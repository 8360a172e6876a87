"""Connecting SSDlet instances: nodes, ports and the rules checked before a run.

An :class:`~ndp_core.ssdlets.Application` holds instances of programs placed on
the device or the host. Ports connect only with identical types. Inside one
side a port may fan out (SPMC: packets go to its consumers in turn) or fan in
(MPSC: packets taken from its producers in turn); a connection between the two
sides, a host feed and a collected output are single-producer,
single-consumer (Biscuit, Sec. III-C). Every rule is checked when the
connection is made or, for what only a whole graph shows (an unconnected
port, a cycle), when the run starts: nothing runs on a graph that breaks one.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from ndp_core.ssdlets.ports import PAGES, PortType
from ndp_core.ssdlets.program import SSDlet

__all__ = ["Node", "PortRef", "GraphError", "SIDES"]

SIDES = ("device", "host")


class GraphError(ValueError):
    """A graph that cannot run: a type mismatch, an unconnected port, a cycle..."""


@dataclass(frozen=True, eq=False)
class PortRef:
    """One port of one node (``node.port_name``)."""

    node: "Node"
    name: str
    is_input: bool

    @property
    def type(self) -> PortType:
        program = self.node.program
        return program.inputs[self.name] if self.is_input else program.outputs[self.name].type

    def __repr__(self) -> str:
        return f"{self.node.name}.{self.name}"


@dataclass(eq=False)
class Node:
    """An SSDlet instance in a graph: its program, side, arguments and connections."""

    program: SSDlet
    name: str
    side: str
    arg_words: list[int]
    producers: dict[str, list[PortRef]] = field(default_factory=dict)  # input port -> upstream outputs
    consumers: dict[str, list[PortRef]] = field(default_factory=dict)  # output port -> downstream inputs
    feeds: dict[str, np.ndarray] = field(default_factory=dict)  # input port -> host values
    scans: dict[str, str] = field(default_factory=dict)  # PAGES input port -> file path
    collected: list[str] = field(default_factory=list)  # output ports the host collects, in order

    def __post_init__(self) -> None:
        self.producers = {k: [] for k in self.program.inputs}
        self.consumers = {k: [] for k in self.program.outputs}

    def __getattr__(self, name: str) -> PortRef:
        if "program" not in self.__dict__:  # not set up yet (copy and pickle probe before __init__)
            raise AttributeError(name)
        return self.port(name)

    def port(self, name: str) -> PortRef:
        """The port ``name``, also where it shares a name with a node attribute
        (``node.name`` is the node's name; ``node.port("name")`` a port called so)."""
        program = self.program
        if name in program.inputs or name in program.outputs:
            return PortRef(self, name, name in program.inputs)
        raise AttributeError(f"{self.name!r} has no port {name!r}; its ports: {[*program.inputs, *program.outputs]}")

    def __repr__(self) -> str:
        return f"<{self.name}: {self.program.name} on the {self.side}>"

    def sources(self, port: str) -> int:
        return len(self.producers[port]) + (port in self.feeds) + (port in self.scans)


def check_connection(out: PortRef, inp: PortRef) -> None:
    """The rules one connection must keep (module doc)."""
    if not isinstance(out, PortRef) or out.is_input:
        raise GraphError(f"connect(out, in): {out!r} is not an output port")
    if not isinstance(inp, PortRef) or not inp.is_input:
        raise GraphError(f"connect(out, in): {inp!r} is not an input port")
    if out.type != inp.type:
        raise GraphError(f"cannot connect {out!r} ({out.type.name}) to {inp!r} ({inp.type.name}): "
                         "ports connect only with identical types")
    if inp.type == PAGES:
        raise GraphError(f"{inp!r} takes file pages: give it a file with scan(), not another port")
    if inp.name in inp.node.feeds or inp.name in inp.node.scans:
        raise GraphError(f"{inp!r} already takes host data")
    if out.name in out.node.collected:
        raise GraphError(f"{out!r} is collected by the host (SPSC): it cannot also feed {inp!r}")
    crossing = out.node.side != inp.node.side
    if crossing and (out.node.consumers[out.name] or inp.node.producers[inp.name]):
        raise GraphError(f"{out!r} -> {inp!r} crosses between device and host: such a port is "
                         "single-producer, single-consumer")
    if any(c.node.side != out.node.side for c in out.node.consumers[out.name]) or \
            any(p.node.side != inp.node.side for p in inp.node.producers[inp.name]):
        raise GraphError(f"{out!r} -> {inp!r}: the port already crosses between device and host (SPSC)")


def check_graph(nodes: list[Node]) -> list[Node]:
    """Whole-graph rules; returns the nodes in an order producers-first."""
    for node in nodes:
        for port in node.program.inputs:
            if node.sources(port) == 0:
                raise GraphError(f"input {node.name}.{port} is not connected (connect, feed or scan it)")
        if not node.program.inputs:
            raise GraphError(f"{node.name}: an SSDlet needs an input port (its packets drive it)")
        for port in node.program.outputs:
            if not node.consumers[port] and port not in node.collected:
                raise GraphError(f"output {node.name}.{port} goes nowhere (connect or collect it)")
    return _producers_first(nodes)


def _producers_first(nodes: list[Node]) -> list[Node]:
    order: list[Node] = []
    state: dict[int, int] = {}  # 1: visiting, 2: done

    def visit(node: Node, path: list[str]) -> None:
        mark = state.get(id(node))
        if mark == 2:
            return
        if mark == 1:
            raise GraphError(f"the graph has a cycle: {' -> '.join(path + [node.name])}")
        state[id(node)] = 1
        for refs in node.producers.values():
            for ref in refs:
                visit(ref.node, path + [node.name])
        state[id(node)] = 2
        order.append(node)

    for node in nodes:
        visit(node, [])
    return order


def node_name(program: SSDlet, name: Optional[str], taken: dict[str, Any]) -> str:
    """A unique node name: ``name``, else the program's name, numbered from the
    second instance on (``keep_above``, ``keep_above#2``, ...)."""
    if name is not None:
        if name in taken:
            raise GraphError(f"a node named {name!r} exists already")
        return name
    candidates = (program.name if k == 1 else f"{program.name}#{k}" for k in itertools.count(1))
    return next(c for c in candidates if c not in taken)
