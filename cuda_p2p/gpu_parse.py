"""A span parsed on the GPU: text in, the host fused kernel's outputs back.

Steps, each a kernel over the whole span, after the text went to the GPU
through pinned bounce buffers (GPUDirect Storage / cuFile is not used yet):
record ends by a parallel scan of
quote parity (:mod:`cuda_p2p.kernels.records`), then one thread per record
converting its fields (:mod:`cuda_p2p.kernels.fields`), then the string
bytes copied to their offsets and the validity and boolean flags packed
into Arrow bitmaps (:mod:`cuda_p2p.kernels.bits`). The outputs come back as
:class:`arrow_bridge.fast_path.FusedBuffers`, wrapped into Arrow arrays by
the span's :class:`~arrow_bridge.fast_path.FastPlan` exactly as the host's
are. A span the kernels decline (see :mod:`cuda_p2p.kernels.fields`)
returns None and the host parses it.

>>> from cuda_p2p.gpu_parse import gpu_kinds
>>> sorted(gpu_kinds())[:3]
[0, 1, 3]
"""
from __future__ import annotations

from typing import Any, Optional

import numba as nb
import numpy as np
import pyarrow as pa

from arrow_bridge.fast_path import FastPlan, FusedBuffers, fused_capacity
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
from cuda_p2p.transfer import PinnedStager, device_zeros

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


class GpuSpanParser:
    """Parses spans at one :class:`FastPlan`'s types on the GPU (one span at a
    time, whichever the plan: callers on several threads take turns)."""

    def __init__(self, plan: FastPlan):
        self.plan = plan
        self._device_plan: Optional[dict[str, Any]] = None

    def parse(self, buf: np.ndarray, counters: np.ndarray) -> Optional[tuple[int, int, dict[int, pa.Array]]]:
        """``(rows, line_breaks, {file column: array})``, or None when the host must parse the span."""
        if len(buf) == 0 or buf[-1] != _LF:
            return None
        with runtime.KERNEL_TURN:
            parsed = self._parse(buf)
        if parsed is None:
            return None
        rows, lines, out = parsed
        self._count(counters, len(buf), rows, out)
        return rows, lines, self.plan.wrap(rows, out)

    # ---- steps --------------------------------------------------------------------------------
    def _parse(self, buf: np.ndarray) -> Optional[tuple[int, int, FusedBuffers]]:
        from cuda_p2p.kernels import fields

        cuda = runtime.cuda()
        text = cuda.device_array(len(buf), dtype=np.uint8)
        stager = _text_stager()
        stager.put_bytes(text, buf)
        stager.finish()
        bounds = self._record_ends(cuda, text, len(buf))
        if bounds is None:
            return None
        ends, lines = bounds
        rows = ends.shape[0]
        plan, d = self.plan, self._constants(cuda)
        cap = fused_capacity(rows)
        n_i64, n_i32, n_f64, n_bits, n_str = plan.counts
        # The kernel writes every value slot of its rows (a null's as 0, as the host does);
        # bits, flags and counts are only ever set or added to, so they start at zero.
        written = dict(i64=(np.int64, (n_i64, cap)), i32=(np.int32, (n_i32, cap)), f64=(np.float64, (n_f64, cap)),
                       str_start=(np.int64, (n_str, cap)), str_len=(np.int64, (n_str, cap)),
                       host_floats=(np.int64, (max(rows * n_f64, 1), 4)))
        added = dict(flags=(np.uint8, (n_bits, cap)), valid=(np.uint8, (plan.ncols, cap)),
                     null_counts=(np.int64, (plan.ncols,)), host_floats_used=(np.int64, (1,)),
                     status=(np.int32, (1,)))
        out = {name: cuda.device_array(shape, dtype) for name, (dtype, shape) in written.items()}
        out.update({name: device_zeros(shape, dtype) for name, (dtype, shape) in added.items()})
        rules, dialect = plan.rules, plan.dialect
        blocks, threads = runtime.launch_shape(rows)
        fields.parse_records[blocks, threads](
            text, ends, plan.ncols, dialect.delimiter, dialect.quote, d["kinds"], d["slots"], d["params"],
            rules.quoted_nulls, *d["nulls"], *d["trues"], *d["falses"], out["i64"], out["i32"], out["f64"],
            out["flags"], out["valid"], out["str_start"], out["str_len"], out["null_counts"], out["host_floats"],
            out["host_floats_used"], out["status"])
        if out["status"].copy_to_host()[0]:
            return None
        f64 = out["f64"].copy_to_host()
        listed = int(out["host_floats_used"].copy_to_host()[0])
        if listed and not round_on_host(buf, out["host_floats"][:listed].copy_to_host(), f64, rules.decimal_point):
            return None
        offsets, data, stride, used = self._strings(cuda, text, out, rows, cap)
        return rows, lines, FusedBuffers(
            out["i64"].copy_to_host(), out["i32"].copy_to_host(), f64,
            _packed(cuda, out["flags"], cap), offsets, data, stride, used, _packed(cuda, out["valid"], cap),
            out["null_counts"].copy_to_host())

    def _record_ends(self, cuda: Any, text: Any, n: int) -> Optional[tuple[Any, int]]:
        """Every record's end (its LF) as a device array, and the span's line breaks."""
        from cuda_p2p.kernels import records

        chunks = (n + CHUNK - 1) // CHUNK
        counts = [cuda.device_array(chunks, dtype=np.int64) for _ in range(4)]
        blocks, threads = runtime.launch_shape(chunks)
        records.chunk_counts[blocks, threads](text, CHUNK, self.plan.dialect.quote, *counts)
        quotes, outside, inside, breaks = (c.copy_to_host() for c in counts)
        starts_inside, first_record, total, open_quote = records.scan_chunks(quotes, outside, inside)
        if open_quote or total == 0:
            return None
        ends = cuda.device_array(total, dtype=np.int64)
        records.record_ends[blocks, threads](text, CHUNK, self.plan.dialect.quote, cuda.to_device(starts_inside),
                                             cuda.to_device(first_record), ends)
        return ends, int(breaks.sum())

    def _strings(self, cuda: Any, text: Any, out: dict, rows: int, cap: int
                 ) -> tuple[np.ndarray, np.ndarray, int, np.ndarray]:
        """Offsets (a scan of the lengths, on the host: one number per value)
        and the bytes, copied on the GPU."""
        from cuda_p2p.kernels import fields

        lengths = out["str_len"].copy_to_host()
        offsets = np.zeros((lengths.shape[0], cap + 1), dtype=np.int32)
        np.cumsum(lengths, axis=1, out=offsets[:, 1:])
        used = offsets[:, rows].astype(np.int64)
        stride = int(used.max(initial=0)) + 8
        data = cuda.device_array((lengths.shape[0], stride), dtype=np.uint8)
        if lengths.shape[0]:
            blocks, threads = runtime.launch_shape(rows)
            fields.copy_strings[blocks, threads](text, self.plan.dialect.quote, out["str_start"][:, :rows], out["str_len"],
                                                 cuda.to_device(offsets), data)
        return offsets, data.copy_to_host().reshape(-1), stride, used

    def _constants(self, cuda: Any) -> dict[str, Any]:
        """The plan's arrays on the GPU, copied once."""
        if self._device_plan is None:
            plan, rules = self.plan, self.plan.rules
            spelled = {name: (*(cuda.to_device(a) for a in spellings[:3]), bool(spellings[3]))
                       for name, spellings in dict(nulls=rules.nulls, trues=rules.trues, falses=rules.falses).items()}
            self._device_plan = dict(kinds=cuda.to_device(plan.kinds), slots=cuda.to_device(plan.slots),
                                     params=cuda.to_device(plan.params), **spelled)
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


_stager: Optional[PinnedStager] = None


def _text_stager() -> PinnedStager:
    """The pinned bounce buffers span text goes to the GPU through (used under ``runtime.KERNEL_TURN``)."""
    global _stager
    if _stager is None:
        _stager = PinnedStager()
    return _stager


def _packed(cuda: Any, flags: Any, cap: int) -> np.ndarray:
    """Byte flags ``(k, cap)`` packed into Arrow bitmaps ``(k, cap / 8)`` on the GPU."""
    from cuda_p2p.kernels import bits

    packed = cuda.device_array((flags.shape[0], cap // 8), dtype=np.uint8)
    for k in range(flags.shape[0]):
        blocks, threads = runtime.launch_shape(max(cap // 8, 1))
        bits.pack_bits[blocks, threads](flags[k], packed[k])
    return packed.copy_to_host()
