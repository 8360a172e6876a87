"""The GPU as a third place to parse spans: a :class:`~arrow_bridge.executors.base.SpanExecutor`.

Passed to the reader with ``offload=`` (as :func:`cuda_p2p.read_csv` does), it
takes a share of the spans, in file order, and parses each on the GPU
(:mod:`cuda_p2p.gpu_parse`) once the read's types are settled (the span plan
carries a fused plan). Before that, and for any span the GPU kernels
decline, the host executor it was given parses the span: the Table is the
host's whatever the share, since the GPU only answers what it answers
exactly as the host would.

>>> from arrow_bridge.executors.host import HostExecutor
>>> from cuda_p2p.executor import GpuExecutor
>>> gpu = GpuExecutor(HostExecutor(), share=0.5)
>>> [gpu.takes(offset, 10) for offset in range(0, 40, 10)]
[False, True, False, True]
"""
from __future__ import annotations

import math
import threading
import time
from typing import Any, Optional, Sequence

from arrow_bridge.executors.base import SpanPlan, SpanResult
from arrow_bridge.executors.host import HostExecutor
from arrow_bridge.read_plan import ReadPlan
from arrow_bridge.spans import Span
from cuda_p2p.gpu_parse import GpuParseTime, GpuSpanParser, LanePool, supports

GPU = "gpu"  # SpanResult.side of a span the GPU parsed


class GpuExecutor:
    """Parses ``share`` of the spans (0..1, spread evenly in file order) on the GPU.

    ``keep_on_gpu``: a span's columns stay on the GPU too, in buffers of their
    own, handed to the reader's sinks as the result's ``kept_copies`` (the
    delivery of :func:`cuda_p2p.read_csv` places them GPU to GPU).
    """

    def __init__(self, host: HostExecutor, share: float = 1.0, keep_on_gpu: bool = False):
        if not 0.0 <= share <= 1.0:
            raise ValueError(f"share={share!r}: the fraction of spans parsed on the GPU, from 0 to 1")
        self.host = host
        self.share = share
        self.keep_on_gpu = keep_on_gpu
        self.read: Optional[ReadPlan] = None
        self.spans_seen = 0
        self.parsed_on_gpu = 0
        self.declined = 0
        self._parsers: dict[Any, GpuSpanParser] = {}  # by FastPlan (one per assignment of types)
        self.time = GpuParseTime()  # of the spans its parsers parsed, across the reader's restarts
        self.lanes = LanePool()  # its parsers' GPU buffers and streams, freed by close()
        self._lock = threading.Lock()

    def start(self, read: ReadPlan) -> None:
        self.read = read
        self.host.start(read)

    def takes(self, offset: int, length: int) -> bool:
        k = self.spans_seen
        self.spans_seen += 1
        return math.floor((k + 1) * self.share) > math.floor(k * self.share)

    def leaves_unread(self, offset: int) -> bool:
        return False

    def parse(self, span: Span, plan: SpanPlan) -> SpanResult:
        started = time.perf_counter()
        parser = self._parser(plan)
        parsed = parser.parse(span.buf, (result := SpanResult(span)).counters) if parser is not None else None
        if parsed is None:
            with self._lock:
                self.declined += 1
            return self.host.parse(span, plan)
        result.nrows, result.line_breaks, arrays, on_gpu = parsed
        result.parsed = len(span.buf)
        result.columns = self.read.planned_columns(arrays)
        if on_gpu:
            result.kept_copies = [(array, on_gpu[c.index]) if c.index in on_gpu else None
                                  for array, c in zip(result.columns, self.read.columns)]
        result.rungs = [plan.rungs[j] if c.inferred else -1 for j, c in enumerate(self.read.columns)]
        result.side = GPU
        result.seconds = time.perf_counter() - started
        with self._lock:
            self.parsed_on_gpu += 1
        return result

    def finish(self, results: Sequence[SpanResult], plan: SpanPlan) -> None:
        return None

    def close(self) -> None:
        self.read = None
        self.host.close()
        self._parsers.clear()
        self.lanes.close()

    def _parser(self, plan: SpanPlan) -> Optional[GpuSpanParser]:
        """The GPU parser for the plan's types (None: types not settled, or not the GPU's)."""
        fast = plan.fast
        if fast is None or not supports(fast):
            return None
        with self._lock:
            if fast not in self._parsers:
                self._parsers[fast] = GpuSpanParser(fast, self.time, self.lanes, self.keep_on_gpu)
            return self._parsers[fast]
