"""Places a span can be parsed: every one implements :class:`SpanExecutor`.

* :class:`HostExecutor` — the host's CPU (fused kernel, else tokenize + convert);
* :class:`DeviceExecutor` — a computational storage device's StorageApp, falling
  back to the host executor it is given on faults.

A new executor (the GPU, say) implements the same protocol and is registered
with the reader (``CsvReader(..., offload=[...])``, or ``read_csv(...,
offload=[...])``); the driver does not change.
"""
from arrow_bridge.executors.base import SpanExecutor, SpanPlan, SpanResult, SpanSink
from arrow_bridge.executors.device import DeviceExecutor, TaskRecorder
from arrow_bridge.executors.host import HostExecutor

__all__ = ["DeviceExecutor", "HostExecutor", "SpanExecutor", "SpanPlan", "SpanResult", "SpanSink", "TaskRecorder"]
