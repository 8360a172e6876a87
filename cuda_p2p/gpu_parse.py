"""A span parsed on the GPU: text in, the host fused kernel's outputs back.

Steps, each a kernel over the whole span, after the text went to the GPU
through pinned bounce buffers (GPUDirect Storage / cuFile is not used yet):
record ends by a parallel scan of
quote parity (:mod:`cuda_p2p.kernels.records`), then one thread per record
converting its fields (:mod:`cuda_p2p.kernels.fields`), then the string
bytes copied to their offsets and the validity and boolean flags packed
into Arrow bitmaps (:mod:`cuda_p2p.kernels.bits`). Spans of several threads
run at once, each on a lane (its own GPU buffers, CUDA stream and pinned
ring, reused span after span while the read lasts); a span's outputs lie side
by side, so a span costs a few launches and copies (each tens of
microseconds from Python) and no allocation once its lane's buffers have
grown (``python -m benchmarks.cuda_calls`` counts them). The outputs come back as
:class:`arrow_bridge.fast_path.FusedBuffers`, wrapped into Arrow arrays by
the span's :class:`~arrow_bridge.fast_path.FastPlan` exactly as the host's
are; with ``keep_on_gpu`` the same columns also stay on the GPU, in buffers
of the span's own (two more allocations a span), for the delivery to place
GPU to GPU. A span the kernels decline (see :mod:`cuda_p2p.kernels.fields`)
returns None and the host parses it.

>>> from cuda_p2p.gpu_parse import gpu_kinds
>>> sorted(gpu_kinds())[:3]
[0, 1, 3]
"""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

import numba as nb
import numpy as np
import pyarrow as pa

from arrow_bridge.fast_path import ColumnBuffers, FastPlan, FusedBuffers
from arrow_bridge.jit import load_numba
from arrow_bridge.kernels import columns
from arrow_bridge.kernels.fused import SKIP, STRING
from arrow_bridge.numbers.parse_floats import parse_float64
from arrow_bridge.kernels.status import (
    BOOLS_CONVERTED,
    BYTES_SCANNED,
    FIELDS,
    FLOATS_CONVERTED,
    INTS_CONVERTED,
    NULLS,
    ROWS,
    SPANS,
    STRING_BYTES,
    TEMPORALS_CONVERTED,
)
from cuda_p2p import runtime
from cuda_p2p.columns import GpuColumn
from cuda_p2p.transfer import DEFAULT_STAGING, PinnedStager

load_numba()  # the host kernels the span parser below calls are typed by Numba from here on

CHUNK = 256  # bytes per thread in the record-boundary scan
_LF = 10


def gpu_kinds() -> set[int]:
    """Column kinds the GPU kernels convert (others send the span to the host)."""
    return {columns.NULL, columns.SIGNED, columns.FLOAT, columns.BOOL, columns.DATE, columns.TIMESTAMP, SKIP,
            STRING}


def supports(plan: FastPlan) -> bool:
    """Whether the GPU can parse spans at ``plan``'s types (its int and date
    columns stored as the kernels write them: int64 values, date32 days)."""
    for c in plan.columns:
        if c.kind not in gpu_kinds():
            return False
        if c.kind == columns.DATE and not pa.types.is_date32(c.type):
            return False
    return True


_COUNTER_OF_KIND = {columns.SIGNED: INTS_CONVERTED, columns.FLOAT: FLOATS_CONVERTED,
                    columns.BOOL: BOOLS_CONVERTED, columns.DATE: TEMPORALS_CONVERTED,
                    columns.TIMESTAMP: TEMPORALS_CONVERTED}


@dataclass
class GpuParseTime:
    """Text bytes and wall seconds of the spans parsed on the GPU (declined
    ones left out; spans on several threads overlap, so this is a sum of
    their times, more than the read's), and those seconds by step: ``text``
    copied in, ``records``
    (the record-end scans), ``convert`` (the field kernel), ``back`` (outputs
    to the host), ``host_floats`` (floats the GPU left undecided, rounded on
    the host), ``strings`` (bytes placed, and back).

    ``busy_seconds`` is wall time instead: how long at least one span was past
    its text's copy in and not yet done (the union of those intervals), the
    figure for "parse speed once the text is on the GPU" when spans overlap.

    >>> spent = GpuParseTime()
    >>> spent.add(1000, {"text": 0.25, "convert": 0.5}, (10.25, 10.75))
    >>> spent.add(1000, {"text": 0.25, "convert": 0.5}, (10.5, 11.0))
    >>> spent.seconds, spent.text_seconds, spent.busy_seconds
    (1.5, 0.5, 0.75)
    """

    bytes: int = 0
    steps: dict[str, float] = field(default_factory=dict)
    intervals: list[tuple[float, float]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def seconds(self) -> float:
        """All of it: the steps' sum."""
        return sum(self.steps.values())

    @property
    def text_seconds(self) -> float:
        """Of ``seconds``, the text's copy in."""
        return self.steps.get("text", 0.0)

    @property
    def busy_seconds(self) -> float:
        """Wall seconds some span spent past its text's copy (overlaps counted once)."""
        busy, reach = 0.0, float("-inf")
        for start, end in sorted(self.intervals):
            busy += max(0.0, end - max(start, reach))
            reach = max(reach, end)
        return busy

    def add(self, nbytes: int, steps: dict[str, float], past_text: tuple[float, float]) -> None:
        """One parsed span: its text bytes, its seconds by step and the
        ``perf_counter`` interval from its text's arrival to its end."""
        with self._lock:
            self.bytes += nbytes
            self.intervals.append(past_text)
            for name, seconds in steps.items():
                self.steps[name] = self.steps.get(name, 0.0) + seconds


class _Laps:
    """Wall seconds between calls, by name (each step ends waiting for its
    lane's stream, so a lap is the step's time)."""

    def __init__(self) -> None:
        self.steps: dict[str, float] = {}
        self.last = time.perf_counter()  # when the last lap ended

    def __call__(self, name: str) -> None:
        now = time.perf_counter()
        self.steps[name] = self.steps.get(name, 0.0) + now - self.last
        self.last = now


class GpuSpanParser:
    """Parses spans at one :class:`FastPlan`'s types on the GPU, adding the time
    of those it parses to ``time``. Spans from several threads run side by
    side, each on a lane of its own (:class:`_Lane`: GPU buffers, a CUDA
    stream, a pinned ring), so that one span's host work (its text copied in,
    its outputs copied out) overlaps another's; only kernel launches take
    turns (Numba's simulator runs no two kernels at once)."""

    def __init__(self, plan: FastPlan, time_spent: Optional[GpuParseTime] = None, lanes: Optional[LanePool] = None,
                 keep_on_gpu: bool = False):
        self.plan = plan
        self.keep_on_gpu = keep_on_gpu
        self.time = time_spent if time_spent is not None else GpuParseTime()
        self.lanes = lanes if lanes is not None else LanePool()
        self._device_plan: Optional[dict[str, Any]] = None
        self._plan_lock = threading.Lock()

    def parse(self, buf: np.ndarray, counters: np.ndarray
              ) -> Optional[tuple[int, int, dict[int, pa.Array], dict[int, GpuColumn]]]:
        """``(rows, line_breaks, {file column: array}, {file column: the same on the GPU})``,
        or None when the host must parse the span. The GPU columns are there
        with ``keep_on_gpu``, for the columns whose Arrow arrays are the
        kernels' buffers as they are (not large strings, not narrow ints):
        buffers of the span's own, which the delivery copies into place on the
        GPU instead of sending the arrays up again."""
        if len(buf) == 0 or buf[-1] != _LF:
            return None
        with self.lanes.lane() as lane:
            laps = _Laps()
            text = lane.text_on_gpu(buf)
            laps("text")
            text_there = laps.last
            parsed = self._parse(lane, buf, text, laps)
        if parsed is None:
            return None
        self.time.add(len(buf), laps.steps, (text_there, laps.last))
        rows, lines, out, on_gpu = parsed
        self._count(counters, len(buf), rows, out)
        return rows, lines, self.plan.wrap(rows, out), on_gpu

    # ---- steps --------------------------------------------------------------------------------
    def _parse(self, lane: _Lane, buf: np.ndarray, text: Any, laps: _Laps
               ) -> Optional[tuple[int, int, FusedBuffers, dict[int, GpuColumn]]]:
        from cuda_p2p.kernels import bits, fields

        bounds = self._record_ends(lane, text, len(buf))
        laps("records")
        if bounds is None:
            return None
        ends, lines = bounds
        rows = ends.shape[0]
        plan, d = self.plan, self._constants(lane)
        cap = (rows + 63) & ~63  # a multiple of 64: packed bitmaps end on whole words
        layout = _output_layout(plan, rows, cap)
        out = layout.views(lane.work.device("out", layout.nbytes))
        words = layout.region(out, "status", "valid").view(np.uint32)
        lane.launch(bits.zero_words, words.shape[0], words)
        rules, dialect = plan.rules, plan.dialect
        lane.launch(fields.parse_records, rows,
                    text, ends, plan.ncols, dialect.delimiter, dialect.quote, d["kinds"], d["slots"], d["params"],
                    rules.quoted_nulls, *d["nulls"], *d["trues"], *d["falses"], out["i64"], out["i32"], out["f64"],
                    out["flags"], out["valid"], out["str_start"], out["str_len"], out["null_counts"],
                    out["host_floats"], out["host_floats_used"], out["status"])
        back = np.empty(layout.end("validity"), dtype=np.uint8)  # this span's own: its arrays are views of it
        small = layout.views(back, "status", "null_counts")
        lane.to_host(layout.region(out, "status", "null_counts"), layout.region(small, "status", "null_counts"))
        laps("convert")
        if small["status"][0]:
            return None
        host = layout.views(back, "i64", "validity")
        listed = int(small["host_floats_used"][0])
        flags = layout.region(out, "flags", "valid")
        lane.launch(bits.pack_bits, max(flags.shape[0] // 8, 1), flags, layout.region(out, "bits", "validity"))
        kept = _kept_outputs(lane, layout, out) if self.keep_on_gpu else None
        lane.take(layout.region(out, "i64", "validity"), layout.region(host, "i64", "validity"))
        laps("back")
        if listed and not round_on_host(buf, lane.to_host(out["host_floats"][:listed]), host["f64"],
                                        rules.decimal_point):
            return None
        if listed and kept is not None:  # the GPU's copy takes the host's roundings too (rare: one copy)
            kept["f64"].copy_to_device(host["f64"], stream=lane.stream)
        laps("host_floats")
        offsets, data, stride, used, area = self._strings(lane, text, out, lane.to_host(out["str_len"]), rows, cap)
        laps("strings")
        on_gpu = {}
        if kept is not None:
            on_gpu = self._columns_on_gpu(rows, kept, small["null_counts"], stride, used, area)
            if area is not None:
                lane.work.give_up("strings")  # the columns keep it: the lane's next span gets another
            lane.wait()  # all of them in place before another stream reads them
        return rows, lines, FusedBuffers(host["i64"], host["i32"], host["f64"], host["bits"], offsets, data, stride,
                                         used, host["validity"], small["null_counts"]), on_gpu

    def _columns_on_gpu(self, rows: int, kept: dict[str, Any], null_counts: np.ndarray, stride: int,
                        used: np.ndarray, strings: Optional[dict[str, Any]]) -> dict[int, GpuColumn]:
        """The span's columns as GPU columns over its kept outputs and string area."""
        if strings is not None:
            offsets, data = strings["offsets"], strings["data"].reshape(strings["data"].size)
        else:
            offsets, data = np.zeros((0, rows + 1), dtype=np.int32), np.zeros(0, dtype=np.uint8)
        outputs = FusedBuffers(kept["i64"], kept["i32"], kept["f64"], kept["bits"], offsets, data, stride, used,
                               kept["validity"], null_counts)
        return {b.column.index: _gpu_column(b, rows) for b in self.plan.column_buffers(rows, outputs) if b.as_stored}

    def _record_ends(self, lane: _Lane, text: Any, n: int) -> Optional[tuple[Any, int]]:
        """Every record's end (its LF) as a device array, and the span's line breaks."""
        from cuda_p2p.kernels import records

        chunks = (n + CHUNK - 1) // CHUNK
        state = lane.work.arrays("chunks", state=(np.int64, (4, chunks)))["state"]
        quote = self.plan.dialect.quote
        lane.launch(records.chunk_counts, chunks, text, CHUNK, quote, state[0], state[1], state[2], state[3])
        if runtime.simulator_requested():  # Python threads: the scan's launches would cost more than the parse
            before, whole = records.scan_states_on_host(lane.to_host(state))
            state.copy_to_device(before, stream=lane.stream)
        else:
            whole = lane.to_host(_scan_chunk_states(lane, state))
        open_quote, total, _, breaks = whole[:, 0]
        if open_quote or total == 0:
            return None
        ends = lane.work.arrays("ends", ends=(np.int64, (int(total),)))["ends"]
        lane.launch(records.record_ends, chunks, text, CHUNK, quote, state[0], state[1], ends)
        return ends, int(breaks)

    def _strings(self, lane: _Lane, text: Any, out: dict, lengths: np.ndarray, rows: int, cap: int
                 ) -> tuple[np.ndarray, np.ndarray, int, np.ndarray, Optional[dict[str, Any]]]:
        """Offsets (a scan of the lengths, on the host: one number per value)
        and the bytes, copied on the GPU: ``(offsets, bytes, stride, used, the
        GPU's offsets and bytes)`` (None for the last without string columns)."""
        from cuda_p2p.kernels import fields

        offsets = np.zeros((lengths.shape[0], cap + 1), dtype=np.int32)
        np.cumsum(lengths[:, :rows], axis=1, out=offsets[:, 1:rows + 1])
        used = offsets[:, rows].astype(np.int64)
        stride = int(used.max(initial=0)) + 8
        if not lengths.shape[0]:
            return offsets, np.zeros(0, dtype=np.uint8), stride, used, None
        area = lane.work.arrays("strings", offsets=(np.int32, offsets.shape),
                                data=(np.uint8, (lengths.shape[0], stride)))
        area["offsets"].copy_to_device(offsets, stream=lane.stream)
        lane.launch(fields.copy_strings, rows, text, self.plan.dialect.quote, rows, out["str_start"], out["str_len"],
                    area["offsets"], area["data"])
        data = np.empty(lengths.shape[0] * stride, dtype=np.uint8)  # each slot's used bytes only come back:
        for k, n in enumerate(used.tolist()):                        # slots are padded to the longest one
            if n:
                lane.take(area["data"][k, :n], data[k * stride:k * stride + n])
        return offsets, data, stride, used, area

    def _constants(self, lane: _Lane) -> dict[str, Any]:
        """The plan's arrays on the GPU, copied once (on the lane's stream, and
        waited for: other lanes' kernels read them)."""
        with self._plan_lock:
            if self._device_plan is None:
                plan, rules, stream = self.plan, self.plan.rules, lane.stream
                on_gpu = lambda a: runtime.cuda().to_device(a, stream=stream)  # noqa: E731
                spelled = {name: (*(on_gpu(a) for a in spellings[:3]), bool(spellings[3]))
                           for name, spellings in dict(nulls=rules.nulls, trues=rules.trues,
                                                       falses=rules.falses).items()}
                device_plan = dict(kinds=on_gpu(plan.kinds), slots=on_gpu(plan.slots), params=on_gpu(plan.params),
                                   **spelled)
                stream.synchronize()
                self._device_plan = device_plan
            return self._device_plan

    def _count(self, counters: np.ndarray, nbytes: int, rows: int, out: FusedBuffers) -> None:
        """The work counters the host's fused kernel adds for the same span."""
        plan = self.plan
        counters[BYTES_SCANNED] += nbytes
        counters[ROWS] += rows
        counters[FIELDS] += rows * plan.ncols
        counters[SPANS] += 1
        for c in plan.columns:
            nulls = int(out.null_counts[c.index])
            counters[NULLS] += nulls
            if c.kind == STRING:
                counters[STRING_BYTES] += int(out.data_used[c.slot])
            elif c.kind in _COUNTER_OF_KIND:
                counters[_COUNTER_OF_KIND[c.kind]] += rows - nulls


@nb.njit(nogil=True, cache=True)
def round_on_host(buf: np.ndarray, listed: np.ndarray, f64: np.ndarray, decimal_point: np.uint8) -> bool:
    """Rounds the floats the GPU listed as ``(slot, row, start, end)`` with the
    host's own parser into ``f64``; False when one is not a float after all.

    >>> text = np.frombuffer(b"0.30000000000000004", dtype=np.uint8)
    >>> values = np.zeros((1, 1))
    >>> round_on_host(text, np.array([[0, 0, 0, 19]]), values, np.uint8(46)), float(values[0, 0]) == 0.30000000000000004
    (True, True)
    """
    for k in range(listed.shape[0]):
        ok, value = parse_float64(buf, listed[k, 2], listed[k, 3], decimal_point)
        if not ok:
            return False
        f64[listed[k, 0], listed[k, 1]] = value
    return True


def _scan_chunk_states(lane: "_Lane", state: Any, level: int = 0) -> Any:
    """Scans the chunks' states (``state``, 4 x chunks, on the GPU) in place into
    each chunk's exclusive prefix, block by block and then the blocks' totals;
    returns the whole span's state (4 x 1, on the GPU)."""
    from cuda_p2p.kernels import records

    n = state.shape[1]
    blocks, width = runtime.launch_shape(n)
    totals = lane.work.arrays(f"chunk totals {level}", totals=(np.int64, (4, blocks)))["totals"]
    lane.launch(records.scan_block_states, n, state, totals)
    if blocks == 1:
        return totals
    whole = _scan_chunk_states(lane, totals, level + 1)
    lane.launch(records.add_block_prefixes, n, state, totals, width)
    return whole


class _Lane:
    """What one span at a time needs on the GPU: reusable buffers, a CUDA
    stream everything of the span runs on, in order, and a pinned ring (half
    the delivery's) its text goes in through and its outputs come back through."""

    def __init__(self) -> None:
        self.work = _Workspace()
        self.stager = PinnedStager(DEFAULT_STAGING // 2)
        self.stream = self.stager.stream
        self.fetched = 0  # bytes copied back by to_host (take's are the stager's copied_back)

    @property
    def bytes_back(self) -> int:
        """Bytes this lane copied from the GPU to the host: its spans' outputs."""
        return self.fetched + self.stager.copied_back

    def text_on_gpu(self, buf: np.ndarray) -> Any:
        """The span's text in the lane's GPU buffer (its copy done)."""
        text = self.work.device("text", len(buf))[:len(buf)]
        self.stager.put_bytes(text, buf)
        self.stager.finish()
        return text

    def launch(self, kernel: Any, n: int, *args: Any) -> None:
        """``kernel`` over ``n`` threads on the lane's stream."""
        blocks, threads = runtime.launch_shape(n)
        with runtime.KERNEL_TURN:
            kernel[blocks, threads, self.stream](*args)

    def to_host(self, device: Any, host: Optional[np.ndarray] = None, wait: bool = True) -> np.ndarray:
        """``device`` copied into ``host`` (a new array if None) after the lane's
        work before; ``wait``: return once it is there (else call :meth:`wait`)."""
        host = device.copy_to_host(host, stream=self.stream)
        self.fetched += host.nbytes
        if wait:
            self.wait()
        return host

    def take(self, device: Any, host: np.ndarray) -> None:
        """A large ``device`` byte array copied into ``host`` through the lane's
        pinned ring, after the lane's work before; returns once it is there."""
        self.stager.take(device, host)

    def wait(self) -> None:
        """Returns once the lane's work is done."""
        self.stream.synchronize()


class LanePool:
    """The lanes of one reader's GPU spans: one per span running at once, made
    when all are taken and reused span after span; ``close`` frees them (their
    GPU buffers grow to the largest span's needs, so a pool lives as long as
    its read)."""

    def __init__(self) -> None:
        self._free: list[_Lane] = []
        self._lock = threading.Lock()
        self.made = 0
        self.bytes_back_of_closed = 0

    @property
    def bytes_back(self) -> int:
        """Bytes its lanes copied from the GPU to the host, closed ones included."""
        with self._lock:
            return self.bytes_back_of_closed + sum(lane.bytes_back for lane in self._free)

    @contextmanager
    def lane(self) -> Iterator[_Lane]:
        """A lane no other span uses meanwhile; back in the pool afterwards, an exception or not."""
        with self._lock:
            lane = self._free.pop() if self._free else None
        if lane is None:
            lane = _Lane()
            with self._lock:
                self.made += 1
        try:
            yield lane
        finally:
            with self._lock:
                self._free.append(lane)

    def close(self) -> None:
        """Frees the lanes (callers' spans are done)."""
        with self._lock:
            self.bytes_back_of_closed += sum(lane.bytes_back for lane in self._free)
            self._free.clear()


class _Workspace:
    """GPU byte buffers a lane reuses span after span, by name, each grown
    when a span needs more: a span's CUDA calls are then copies and launches,
    not allocations (each call from Python costs tens of microseconds). Safe
    because a lane's spans run one at a time and each ends with a
    synchronous copy back."""

    def __init__(self) -> None:
        self._buffers: dict[str, Any] = {}

    def device(self, name: str, nbytes: int) -> Any:
        """Buffer ``name``, at least ``nbytes`` long (a multiple of 8 bytes)."""
        nbytes = max(nbytes + (-nbytes) % 8, 8)
        if name not in self._buffers or self._buffers[name].shape[0] < nbytes:
            self._buffers.pop(name, None)
            self._buffers[name] = runtime.cuda().device_array(nbytes + nbytes // 4, dtype=np.uint8)
        return self._buffers[name]

    def give_up(self, name: str) -> None:
        """Forgets buffer ``name`` (someone else keeps it): the next span allocates a new one."""
        self._buffers.pop(name, None)

    def arrays(self, name: str, **specs: tuple[Any, tuple[int, ...]]) -> dict[str, Any]:
        """Arrays ``{field: (dtype, shape)}`` laid out in buffer ``name`` (:class:`_Layout`)."""
        layout = _Layout(specs)
        return layout.views(self.device(name, layout.nbytes))


class _Layout:
    """Named arrays one after another in one byte buffer (host or GPU), each
    from an 8-byte boundary, so neighbours are copied or zeroed in one call.

    >>> layout = _Layout({"a": (np.int32, (3,)), "b": (np.uint8, (2, 4))})
    >>> views = layout.views(np.zeros(layout.nbytes, dtype=np.uint8))
    >>> views["a"].shape, views["b"].shape, layout.nbytes
    ((3,), (2, 4), 24)
    """

    def __init__(self, specs: dict[str, tuple[Any, tuple[int, ...]]]):
        self.fields: dict[str, tuple[int, int, np.dtype, tuple[int, ...]]] = {}
        at = 0
        for name, (dtype, shape) in specs.items():
            dtype = np.dtype(dtype)
            nbytes = int(np.prod(shape)) * dtype.itemsize
            self.fields[name] = (at, nbytes, dtype, shape)
            at += nbytes + (-nbytes) % 8
        self.nbytes = max(at, 8)

    def views(self, buf: Any, first: Optional[str] = None, last: Optional[str] = None, region_only: bool = False
              ) -> dict[str, Any]:
        """Each field (``first`` to ``last`` only, when given) as a view of ``buf``;
        a field of no bytes as its own empty array. ``region_only``: ``buf``
        holds fields ``first`` to ``last`` only (a copy of that region)."""
        names = list(self.fields)
        names = names[names.index(first):names.index(last) + 1] if first else names
        shift = self.fields[names[0]][0] if region_only else 0
        views = {}
        for name in names:
            at, nbytes, dtype, shape = self.fields[name]
            at -= shift
            if nbytes == 0:
                views[name] = np.empty(shape, dtype) if isinstance(buf, np.ndarray) else \
                    runtime.cuda().device_array(shape, dtype)
            else:
                views[name] = buf[at:at + nbytes].view(dtype).reshape(shape)
        views["_buffer"] = buf
        return views

    def end(self, name: str) -> int:
        """Where field ``name`` ends (its padding included)."""
        at, nbytes = self.fields[name][:2]
        return at + nbytes + (-nbytes) % 8

    def region(self, views: dict[str, Any], first: str, last: str) -> Any:
        """Fields ``first`` to ``last`` as one byte array of the buffer ``views`` came from."""
        return views["_buffer"][self.fields[first][0]:self.end(last)]


def _kept_outputs(lane: _Lane, layout: _Layout, out: dict[str, Any]) -> dict[str, Any]:
    """The span's Arrow outputs (values, bitmaps) copied on the GPU into a
    buffer of their own (the lane reuses ``out`` for its next span)."""
    region = layout.region(out, "i64", "validity")
    own = runtime.cuda().device_array(region.shape[0], dtype=np.uint8)
    own.copy_to_device(region, stream=lane.stream)
    return layout.views(own, "i64", "validity", region_only=True)


def _gpu_column(b: ColumnBuffers, rows: int) -> GpuColumn:
    """A span's column from its outputs on the GPU, as :class:`GpuColumn` holds one."""
    validity = b.validity if b.nulls else None
    if b.data is not None:
        return GpuColumn(b.column.type, rows, b.nulls, validity, offsets=b.values, data=b.data)
    values = b.values if pa.types.is_boolean(b.column.type) else b.values.view(np.uint8)
    return GpuColumn(b.column.type, rows, b.nulls, validity, values=values)


def _output_layout(plan: FastPlan, rows: int, cap: int) -> _Layout:
    """Where a span's outputs lie in the parser's ``out`` buffer: fields the
    kernel only sets or adds to (zeroed first), then the outputs the span's
    Arrow arrays keep (copied back together), then the rest."""
    n_i64, n_i32, n_f64, n_bits, n_str = plan.counts
    return _Layout({
        "status": (np.int32, (1,)), "host_floats_used": (np.int64, (1,)), "null_counts": (np.int64, (plan.ncols,)),
        "flags": (np.uint8, (n_bits, cap)), "valid": (np.uint8, (plan.ncols, cap)),
        "i64": (np.int64, (n_i64, cap)), "i32": (np.int32, (n_i32, cap)), "f64": (np.float64, (n_f64, cap)),
        "bits": (np.uint8, (n_bits, cap // 8)), "validity": (np.uint8, (plan.ncols, cap // 8)),
        "str_len": (np.int64, (n_str, cap)), "str_start": (np.int64, (n_str, cap)),
        "host_floats": (np.int64, (max(rows * n_f64, 1), 4)),
    })
