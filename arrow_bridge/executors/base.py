"""The executor seam: one span in, Arrow buffers (or a located error) out, wherever it runs.

The reader's driver cuts spans and hands each to the first executor that
:meth:`~SpanExecutor.takes` it (the host executor takes every span, so it comes
last). Each executor parses against the read's :class:`ReadPlan` and the
:class:`SpanPlan` the driver snapshots for that span (the types settled so
far), and returns a :class:`SpanResult`; the driver never asks where a span
ran. A device executor that fails falls back to the host executor it was
given.

>>> from arrow_bridge.executors.base import SpanPlan
>>> SpanPlan(rungs=(0, 3)).fast is None
True
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional, Protocol, Sequence, runtime_checkable

import numpy as np

from arrow_bridge.kernels.status import OK, empty_counters
from arrow_bridge.spans import Span
from ndp_core.device import HOST

if TYPE_CHECKING:
    from arrow_bridge.fast_path import FastPlan
    from arrow_bridge.read_plan import ReadPlan
    from ndp_core.report import Report


@dataclass(frozen=True)
class SpanPlan:
    """How to parse one span, as the driver knew it when it handed the span
    out: the inference rung each output column starts at, and the fused
    kernel's plan for those types (None: a type is still unknown, or the fused
    kernel cannot answer exactly; the span takes the general path)."""

    rungs: tuple[int, ...]
    fast: Optional["FastPlan"] = None
    rows_per_byte: float = 0.0  # the densest span so far (0: none yet), to size outputs


@dataclass
class SpanResult:
    """What an executor produced for one span."""

    span: Span
    status: int = OK
    parsed: int = 0  # bytes of complete, good records (all, unless NEEDS_MORE or an error)
    nrows: int = 0
    line_breaks: int = 0
    columns: list = field(default_factory=list)  # pa.Array per output column (None: missing column)
    rungs: list = field(default_factory=list)  # inference rung per output column (-1: explicit)
    bad_rows: Optional[np.ndarray] = None  # [(offset in span, field count)]
    error_at: int = 0  # offset in span of a tokenizer error
    bad_value: Optional[tuple] = None  # (row, output column, offset in span) of a conversion error
    counters: np.ndarray = field(default_factory=empty_counters)
    side: str = HOST  # who parsed it: "host", "device", or "raw" (the host, after a device fault)
    faults: dict = field(default_factory=dict)  # device faults met, by name
    object_bytes: int = 0
    seconds: float = 0.0  # wall time of the parse
    staged: bool = False  # the read's span stages ran: rows filtered, or the rows replaced by a partial aggregate
    partial: Any = None  # the span's partial aggregate (arrow_bridge.aggregates), once staged
    rows_read: int = 0  # rows parsed before the filter's bounds or the span stages dropped any (0: unknown)
    stage_deferred: bool = False  # a stage could not take its provisional types: staged once they settle
    #: per output column, ``(array, copy)`` where the executor keeps a copy of ``array`` in
    #: memory of its own (a GPU-parsed span's columns, still on the GPU), else None; a sink
    #: that uses one checks that ``array`` is still the column (stages replace columns)
    kept_copies: list = field(default_factory=list)

    def take(self, other: "SpanResult") -> None:
        """Becomes ``other``'s parse (same span; a re-parse elsewhere)."""
        for name in ("status", "parsed", "nrows", "line_breaks", "columns", "rungs", "bad_rows", "error_at",
                     "bad_value", "counters", "staged", "partial", "rows_read", "stage_deferred", "kept_copies"):
            setattr(self, name, getattr(other, name))


@runtime_checkable
class SpanExecutor(Protocol):
    """A place to parse spans: the host's threads, an emulated SSD, a GPU."""

    def start(self, read: "ReadPlan") -> None:
        """Prepares for a read (e.g. installs the StorageApp with the read's plan)."""
        ...

    def takes(self, offset: int, length: int) -> bool:
        """Whether this executor parses the span of ``length`` bytes at
        ``offset`` of the source (its split policy's choice)."""
        ...

    def leaves_unread(self, offset: int) -> bool:
        """Whether a span planned at ``offset`` need not be read by the host
        (the executor reads its bytes itself)."""
        ...

    def parse(self, span: Span, plan: SpanPlan) -> SpanResult:
        """Parses one span (from any thread)."""
        ...

    def finish(self, results: Sequence[SpanResult], plan: SpanPlan) -> Optional["Report"]:
        """After the last span, with every result in file order and ``plan`` as
        of the last one: settles what only the whole run decides (e.g. spans a
        device returns raw are parsed again) and returns the run's Report, or None."""
        ...

    def close(self) -> None:
        """Releases what :meth:`start` took; safe to call twice or after a failed start."""
        ...


@runtime_checkable
class SpanSink(Protocol):
    """Receives each span's result as the reader checks it, in file order, while
    later spans are still being parsed (e.g. ``cuda_p2p`` starting the span's
    copy to GPU memory). A result may still change after it was handed over
    (types settled at the end of the read re-parse a span): a sink compares
    with the finished Table before it trusts what it kept."""

    def checked(self, result: SpanResult) -> None:
        """Called on the reader's driver thread; should not block for long."""
        ...
