"""Running a graph of SSDlets: MINIT, packets through bounded queues, MDEINIT.

Packets flow as calls finish. A node that can run (a packet waits on each
input it still reads, its consumers' queues have room: back-pressure, and its
last call is done: an instance runs its calls one after another) gets a call,
submitted to its side's engine at once, so the engine's cores run the calls
of different nodes in parallel; as each call completes its outputs are
routed and the nodes it fed may run. Queues are FIFO, fan-out and fan-in go
round-robin in connection order, and each queue has one producer, so the
packets every node sees, and hence the results, are the same whatever ran
where, in whichever order calls finished, or how the threads were scheduled.
"""
from __future__ import annotations

import os
from collections import deque
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Optional, Union

import numpy as np
import pyarrow as pa

from ndp_core.engine import MAX_PAGES_PER_COMMAND, Engine, Status
from ndp_core.interrupts import interrupts_at_checks
from ndp_core.ssdlets.graph import SIDES, GraphError, Node, PortRef, check_connection, check_graph, node_name
from ndp_core.ssdlets.ports import (PAGES, concat_packets, empty_packet, packet_arrays, packet_from_buffers,
                                   private_copy, to_arrow, to_port_values)
from ndp_core.ssdlets.program import BAD_INPUT, OUT_OF_BUDGET, TRAPPED, SSDlet, SSDletError, packet_bytes

__all__ = ["Application", "RunResult", "NodeWork"]

_WAIT_SLICE_S = 0.0005  # while no call is done: how long the oldest is waited for before all are asked again


@dataclass
class NodeWork:
    """What one node did in a run (the timing model prices it)."""

    node: str
    program: str
    side: str
    calls: int = 0
    values_in: int = 0
    bytes_in: int = 0
    values_out: int = 0
    bytes_out: int = 0
    pages_read: int = 0
    counters: dict[str, int] = field(default_factory=dict)
    prices: dict[str, tuple[float, float]] = field(default_factory=dict)  # (device, host) cycles per unit
    link_bytes: int = 0  # bytes this node received or sent across device <-> host
    link_packets: int = 0  # packets (or page reads) that crossed


@dataclass
class RunResult:
    """A run's collected outputs (``"node.port"`` -> Arrow array) and work."""

    outputs: dict[str, Union[pa.Array, np.ndarray]]
    work: list[NodeWork]
    model: Any = None  # the device's modeled timing, when it models SSDlets

    def __getitem__(self, port: str) -> Union[pa.Array, np.ndarray]:
        return self.outputs[port]

    def __repr__(self) -> str:
        rows = [f"{w.node:<16} {w.side:<7} calls {w.calls:>6}  in {w.values_in:>10}  out {w.values_out:>10}"
                + "".join(f"  {k} {v}" for k, v in w.counters.items()) for w in self.work]
        text = "RunResult: " + ", ".join(f"{k} ({len(v)} values)" for k, v in self.outputs.items())
        return "\n".join([text, *rows] + ([str(self.model)] if self.model is not None else []))


class Application:
    """A graph of SSDlet instances on an emulated device and the host.

    ``device``: the emulated SSD its device nodes run on and whose model times the run
    (None: host nodes only, no modeled time).
    ``packet_rows``: rows per packet of an array fed from the host;
    ``pages_per_packet``: file pages per packet of a scan, one read command, so at
    most ``MAX_PAGES_PER_COMMAND`` (65,536); ``queue_depth``: packets a queue holds
    before the node that fills it waits (back-pressure).

    >>> import pyarrow as pa
    >>> from ndp_core.ssdlets import Out, ssdlet
    >>> @ssdlet(inputs={"x": pa.int64()}, outputs={"total": Out(pa.int64(), rows=1)},
    ...         state={"acc": pa.int64()}, work={"values": 1.0})
    ... def total(p):
    ...     for i in range(p.x.size):
    ...         p.acc[0] += p.x[i]
    ...     p.values[0] += p.x.size
    ...     if p.at_end:
    ...         p.total[0] = p.acc[0]
    ...         return 1
    ...     return 0
    >>> app = Application(packet_rows=1000)
    >>> node = app.add(total, on="host")
    >>> app.feed(node.x, pa.array(range(10_000)))
    >>> app.collect(node.total)
    >>> app.run()["total.total"].to_pylist()
    [49995000]
    """

    def __init__(self, device: Any = None, *, packet_rows: int = 65536, pages_per_packet: int = 64,
                 queue_depth: int = 4) -> None:
        if packet_rows < 1 or pages_per_packet < 1 or queue_depth < 1:
            raise ValueError("packet_rows, pages_per_packet and queue_depth must be >= 1")
        if pages_per_packet > MAX_PAGES_PER_COMMAND:
            # The engine would split a longer read into parts, each a call of its own whose outputs
            # it appends byte by byte: a packet's offsets, validity and call words do not survive that
            raise ValueError(f"pages_per_packet={pages_per_packet}: a scan packet is one read command, "
                             f"at most MAX_PAGES_PER_COMMAND ({MAX_PAGES_PER_COMMAND}) pages")
        self.device, self.packet_rows = device, packet_rows
        self.pages_per_packet, self.queue_depth = pages_per_packet, queue_depth
        self.nodes: dict[str, Node] = {}

    def add(self, program: SSDlet, *, on: str = "device", name: Optional[str] = None, **args: Any) -> Node:
        """A new instance of ``program`` on the ``"device"`` or the ``"host"``,
        with its arguments (checked against its declaration now)."""
        if not isinstance(program, SSDlet):
            raise TypeError(f"add() takes an SSDlet (see ndp_core.ssdlets.ssdlet), not {type(program).__name__}")
        if on not in SIDES:
            raise ValueError(f"on must be one of {SIDES}, got {on!r}")
        if on == "device" and getattr(self.device, "engine", None) is None:
            raise GraphError("a node on the device needs Application(device=...) with an engine "
                             "(e.g. device_emulator.ComputationalSSD)")
        node = Node(program, node_name(program, name, self.nodes), on, program.arg_words(args))
        self.nodes[node.name] = node
        return node

    def connect(self, out: PortRef, inp: PortRef) -> None:
        """Connect an output port to an input port (types must be identical)."""
        check_connection(out, inp)
        out.node.consumers[out.name].append(inp)
        inp.node.producers[inp.name].append(out)

    def feed(self, inp: PortRef, values: Any) -> None:
        """Send host values (an Arrow or NumPy array of the port's type) to an
        input port, cut into packets of ``packet_rows``."""
        _check_host_input(inp)
        inp.node.feeds[inp.name] = private_copy(to_port_values(values, inp.type, f"input {inp!r}"))

    def scan(self, inp: PortRef, path: Union[str, os.PathLike]) -> None:
        """Read a file's pages into a :data:`PAGES` port, ``pages_per_packet`` at a time."""
        _check_host_input(inp)
        if inp.type != PAGES:
            raise GraphError(f"scan() fills a PAGES port; {inp!r} takes {inp.type.name}")
        if len(inp.node.program.inputs) != 1:
            raise GraphError(f"{inp!r}: a node that scans a file has no other input")
        inp.node.scans[inp.name] = os.fspath(path)

    def collect(self, out: PortRef) -> None:
        """Bring an output port's values back to the host (in ``RunResult``)."""
        if not isinstance(out, PortRef) or out.is_input:
            raise GraphError(f"collect() takes an output port, not {out!r}")
        if out.node.consumers[out.name]:
            raise GraphError(f"{out!r} feeds other nodes; a collected port is single-consumer")
        if out.name not in out.node.collected:
            out.node.collected.append(out.name)

    def run(self, *, budget: Optional[int] = None) -> RunResult:
        """Install every instance (MINIT), run the graph to the end, free them
        (MDEINIT) and return the collected outputs; ``budget`` overrides each
        program's per-call loop budget. Raises :class:`SSDletError` when an
        instance fails (every instance is freed first)."""
        order = check_graph(list(self.nodes.values()))
        host = Engine(page_size=self._page_size(), cores=max(2, os.cpu_count() or 2))
        try:
            engines = {"host": host, "device": getattr(self.device, "engine", None)}
            run = _Run(order, engines, self, budget)
            outputs, work = run.until_done()
        finally:
            host.close()
        model = getattr(self.device, "model_ssdlets", None)
        return RunResult(outputs, work, model(work) if model else None)

    def _page_size(self) -> int:
        return int(getattr(self.device, "page_size", 4096))


def _check_host_input(inp: PortRef) -> None:
    if not isinstance(inp, PortRef) or not inp.is_input:
        raise GraphError(f"expected an input port, got {inp!r}")
    if inp.node.sources(inp.name):
        raise GraphError(f"{inp!r} already has a source: host data and file scans are single-producer")


class _Channel:
    """A bounded FIFO of packets from one producer (or host source) to one input."""

    def __init__(self, capacity: Optional[int]) -> None:
        self.packets: deque = deque()
        self.capacity, self.ended = capacity, False

    def has_room(self) -> bool:
        return self.capacity is None or len(self.packets) < self.capacity

    def drained(self) -> bool:
        return self.ended and not self.packets


class _Fan:
    """The channels of one port in connection order and whose turn it is: an
    input takes packets from its producers in turn (skipping drained ones), an
    output deals them to its consumers in turn."""

    def __init__(self) -> None:
        self.channels: list[_Channel] = []
        self.turn = 0

    def source(self) -> Optional[_Channel]:
        """The channel the next packet comes from; None once all have drained."""
        n = len(self.channels)
        for k in range(n):
            channel = self.channels[(self.turn + k) % n]
            if not channel.drained():
                self.turn = (self.turn + k) % n
                return channel
        return None

    def take(self) -> Optional[np.ndarray]:
        channel = self.source()
        if channel is None:
            return None
        self.turn = (self.turn + 1) % len(self.channels)
        return channel.packets.popleft()

    def put(self, packet: np.ndarray) -> None:
        self.channels[self.turn].packets.append(packet)
        self.turn = (self.turn + 1) % len(self.channels)

    def has_room(self) -> bool:
        return all(c.has_room() for c in self.channels)

    def end(self) -> None:
        for channel in self.channels:
            channel.ended = True


class _Call(NamedTuple):
    """One submitted call and the buffers its completion fills."""

    node: Node
    command: int
    outputs: list[np.ndarray]
    counters: np.ndarray
    at_end: bool


class _Run:
    """One run of a checked graph (module doc)."""

    def __init__(self, order: list[Node], engines: dict, app: Application, budget: Optional[int]) -> None:
        self.order, self.engines, self.app, self.budget = order, engines, app, budget
        self.inputs = {(n.name, port): _Fan() for n in order for port in n.program.inputs}
        self.outputs = {(n.name, port): _Fan() for n in order for port in n.program.outputs}
        self.crossing: set[tuple[str, str]] = set()  # inputs whose packets cross between device and host
        self.collected = {f"{n.name}.{port}": [] for n in order for port in n.collected}
        self.work = {n.name: NodeWork(n.name, n.program.name, n.side, counters=dict.fromkeys(n.program.work, 0),
                                      prices=dict(n.program.work)) for n in order}
        self.instances: dict[str, int] = {}
        self.streams: dict[str, tuple[int, int, int]] = {}  # node -> (stream, next page, pages)
        self.finished: set[str] = set()
        self._wire()

    def _wire(self) -> None:
        for node in self.order:
            for port, consumers in node.consumers.items():
                for ref in consumers:
                    channel = _Channel(self.app.queue_depth)
                    self.outputs[(node.name, port)].channels.append(channel)
                    self.inputs[(ref.node.name, ref.name)].channels.append(channel)
                    if ref.node.side != node.side:
                        self.crossing.add((ref.node.name, ref.name))
            for port, values in node.feeds.items():
                channel = _Channel(None)
                step = self.app.packet_rows
                channel.packets.extend(values[i:i + step] for i in range(0, len(values), step))
                channel.ended = True
                self.inputs[(node.name, port)].channels.append(channel)
                if node.side == "device":
                    self.crossing.add((node.name, port))

    # ---- life cycle
    def until_done(self) -> tuple[dict, list[NodeWork]]:
        in_flight: list[_Call] = []  # submitted, not yet consumed: a Ctrl-C may leave some
        try:
            self._install()
            while len(self.finished) < len(self.order):
                running = {call.node.name for call in in_flight}
                with interrupts_at_checks():  # a command submitted is a command tracked
                    for node in self.order:
                        if node.name not in self.finished and node.name not in running and self._ready(node):
                            in_flight.append(self._submit(node))
                if not in_flight:
                    raise GraphError("no SSDlet can run and the graph is not done (a port waits on itself?)")
                for call, completion in self._completed(in_flight):
                    self._complete(call, completion)
        finally:
            self._consume(in_flight)
            self._free()
        outputs = {}
        for key, parts in self.collected.items():
            node, port = key.split(".", 1)
            ptype = self.app.nodes[node].program.outputs[port].type
            outputs[key] = to_arrow(concat_packets(parts, ptype), ptype)
        return outputs, [self.work[n.name] for n in self.order]

    def _completed(self, in_flight: list[_Call]) -> list[tuple[_Call, Any]]:
        """The calls done by now (at least one), taken out of ``in_flight``. Each
        call is asked whether it is done; while none is, the oldest is waited
        for in short slices, so that a short call finishing behind a long one
        is routed (and its node called again) at once. (``Engine.poll`` would
        take completions of other users of a shared engine.)"""
        while True:
            done = []
            for call in list(in_flight):
                try:
                    done.append((call, self.engines[call.node.side].wait(call.command, timeout=0)))
                except TimeoutError:
                    continue
                in_flight.remove(call)
            if done:
                return done
            oldest = in_flight[0]
            try:
                completion = self.engines[oldest.node.side].wait(oldest.command, timeout=_WAIT_SLICE_S)
            except TimeoutError:
                continue
            in_flight.remove(oldest)
            return [(oldest, completion)]

    def _install(self) -> None:
        for node in self.order:
            engine = self.engines[node.side]
            streams = []
            for path in node.scans.values():
                stream = engine.stream_create(path)
                self.streams[node.name] = (stream, 0, engine.stream_pages(stream))
                streams.append(stream)
            self.instances[node.name] = engine.minit(node.program.app.address, state_size=node.program.state_size,
                                                     streams=streams)

    def _consume(self, calls: list[_Call]) -> None:
        """Waits for the calls an interruption left in flight (their buffers are the
        engine's until then, and an instance is freed only when idle); a second
        Ctrl-C meanwhile is held until they are done."""
        interrupted = None
        while calls:
            try:
                self.engines[calls[0].node.side].wait(calls[0].command)
                calls.pop(0)
            except KeyboardInterrupt as again:
                interrupted = again
            except Exception:  # noqa: BLE001 - the call's own failure: the error being raised is the news
                calls.pop(0)
        if interrupted is not None:
            raise interrupted

    def _free(self) -> None:
        try:
            for name, inst in self.instances.items():
                self.engines[self.app.nodes[name].side].mdeinit(inst)
        finally:
            for name, (stream, _, _) in self.streams.items():
                self.engines[self.app.nodes[name].side].stream_close(stream)

    # ---- one call
    def _ready(self, node: Node) -> bool:
        if not all(self.outputs[(node.name, port)].has_room() for port in node.program.outputs):
            return False
        if node.name in self.streams:
            return True
        sources = [self.inputs[(node.name, port)].source() for port in node.program.inputs]
        return all(c is None or c.packets for c in sources)

    def _submit(self, node: Node) -> _Call:
        program, engine = node.program, self.engines[node.side]
        if node.name in self.streams:
            return self._submit_scan(node, engine)
        packets = [self.inputs[(node.name, port)].take() for port in program.inputs]
        at_end = all(p is None for p in packets)
        arrays = [empty_packet(t) if p is None else p for p, t in zip(packets, program.inputs.values())]
        buffers = [b for a in arrays for b in packet_arrays(a)]
        outputs, counters = self._buffers(program, max(len(a) for a in arrays), max(a.nbytes for a in arrays))
        words = program.call_words([b.nbytes for b in buffers], at_end, self.budget, node.arg_words)
        cid = engine.submit_mrun(self.instances[node.name], packet_bytes(buffers), outputs, counters, words)
        self._count_inputs(node, arrays)
        return _Call(node, cid, outputs, counters, at_end)

    def _submit_scan(self, node: Node, engine: Engine) -> _Call:
        stream, first, pages = self.streams[node.name]
        n = min(self.app.pages_per_packet, pages - first)
        program, page = node.program, engine.page_size
        size = max(0, min(n * page, engine.stream_size(stream) - first * page))
        outputs, counters = self._buffers(program, size, size)
        at_end = n == 0
        words = program.call_words([size], at_end, self.budget, node.arg_words)
        if at_end:
            cid = engine.submit_mrun(self.instances[node.name], np.zeros(0, np.uint8), outputs, counters, words)
        else:
            cid = engine.submit_mread(self.instances[node.name], stream, first, n, outputs, counters, words)
        self.streams[node.name] = (stream, first + n, pages)
        work = self.work[node.name]
        work.pages_read += n
        work.values_in += size
        work.bytes_in += size
        if node.side == "host" and n:  # the host reads the SSD's pages: text over the link
            work.link_bytes += size
            work.link_packets += 1
        return _Call(node, cid, outputs, counters, at_end)

    @staticmethod
    def _buffers(program: SSDlet, input_rows: int, input_bytes: int) -> tuple[list[np.ndarray], np.ndarray]:
        # Zeroed: a call that claims more than it wrote hands back zeros, never stale memory.
        outputs = [np.zeros(size, np.uint8) for out in program.outputs.values()
                   for size in out.buffer_sizes(input_rows, input_bytes)]
        error_at = np.full(1, -1, np.int64).view(np.uint8)  # p.error_at: where bad input was, if any
        return outputs + [error_at], np.zeros(len(program.work), np.int64)

    def _count_inputs(self, node: Node, arrays: list[np.ndarray]) -> None:
        work = self.work[node.name]
        work.values_in += sum(len(a) for a in arrays)
        work.bytes_in += sum(a.nbytes for a in arrays)
        for port, a in zip(node.program.inputs, arrays):
            if len(a) and (node.name, port) in self.crossing:
                work.link_bytes += a.nbytes
                work.link_packets += 1

    def _complete(self, call: _Call, done: Any) -> None:
        node = call.node
        if done.status != Status.OK:
            if done.app_status == BAD_INPUT:
                raise self._bad_input(node, int(call.outputs[-1].view(np.int64)[0]))
            raise SSDletError(self._failure(node, done, call.outputs))
        work = self.work[node.name]
        work.calls += 1
        for name, value in zip(node.program.work, call.counters):
            work.counters[name] += int(value)
        for port, out, written in _by_port(node.program, [b[:n] for b, n in zip(call.outputs, done.result_sizes)]):
            try:
                values = packet_from_buffers(written, out.type)
            except ValueError as e:
                raise SSDletError(f"SSDlet {node.name} ({node.program.name}) on the {node.side}, call "
                                  f"{work.calls}: output {port}: {e}") from None
            work.values_out += len(values)
            work.bytes_out += values.nbytes
            if len(values):
                self._route(node, port, values)
        if call.at_end:
            self.finished.add(node.name)
            for port in node.program.outputs:
                self.outputs[(node.name, port)].end()

    def _route(self, node: Node, port: str, values: np.ndarray) -> None:
        if port not in node.collected:
            self.outputs[(node.name, port)].put(values)
            return
        self.collected[f"{node.name}.{port}"].append(values)
        if node.side == "device":
            self.work[node.name].link_bytes += values.nbytes
            self.work[node.name].link_packets += 1

    def _bad_input(self, node: Node, offset: int) -> SSDletError:
        path = next(iter(node.scans.values()), None)
        where = f"byte offset {offset} of {path}" if path is not None else \
            f"byte {offset} of what its first input received"
        return SSDletError(f"SSDlet {node.name} ({node.program.name}) on the {node.side}, call "
                           f"{self.work[node.name].calls + 1}: stopped at bad input, {where}",
                           byte_offset=offset, path=None if path is None else str(path))

    def _failure(self, node: Node, done: Any, outputs: list) -> str:
        where = f"SSDlet {node.name} ({node.program.name}) on the {node.side}, call {self.work[node.name].calls + 1}"
        if done.app_status == OUT_OF_BUDGET:
            budget = node.program.budget if self.budget is None else self.budget
            return (f"{where}: used up its work budget of {budget} loop iterations in one call (a loop that "
                    "does not end?); the call was stopped. Raise it with ssdlet(budget=...) or run(budget=...)")
        if done.app_status == TRAPPED:
            caps = ", ".join(f"{p} holds {len(b[0]) // 4 - 1} values of {len(b[1])} bytes" if o.type.variable else
                             f"{p} holds {len(b[0]) // o.type.itemsize}" for p, o, b in _by_port(node.program, outputs))
            return (f"{where}: stopped by an exception in its code: an index out of bounds (every access is "
                    f"checked: its inputs, state and outputs; output {caps}, Out(..., rows=, bytes=, extra_rows=, "
                    "extra_bytes=, input_per_row=) declare it) or an exception the program raised")
        if done.status == Status.CAPACITY_EXCEEDED:
            return f"{where}: returned a count larger than an output's capacity or below 0"
        return f"{where}: the engine completed it with {done.status_name}"


def _by_port(program: SSDlet, buffers: list[np.ndarray]) -> list[tuple[str, Any, list[np.ndarray]]]:
    """A call's output buffers grouped by port: ``(port, Out, [values] or [offsets, bytes], then [validity])``."""
    grouped, k = [], 0
    for port, out in program.outputs.items():
        grouped.append((port, out, buffers[k:k + out.type.buffers]))
        k += out.type.buffers
    return grouped
