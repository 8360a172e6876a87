"""``cuda_p2p.read_csv``: CSV into GPU memory, by one of three paths.

* host (default): the host's threads parse; checked spans go to the GPU in
  batches while later spans parse, through pinned staging buffers and
  asynchronous copies (:mod:`cuda_p2p.delivery`);
* P2P (``device=``): an emulated computational SSD parses; its task arenas
  go to the GPU the same way, in batches, and the device's Report models the
  P2P path (its ``bytes["p2p"]``);
* GPU (``gpu_share=``): that share of the spans is parsed on the GPU by
  CUDA kernels (:mod:`cuda_p2p.gpu_parse`), the rest where it would be.

Every path gives the Table ``arrow_bridge.read_csv`` gives, bit for bit
(``GpuTable.to_arrow()`` equals it).
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

import arrow_bridge
from arrow_bridge.executors.host import HostExecutor
from arrow_bridge.source import bytes_to_parse
from cuda_p2p import runtime
from cuda_p2p.columns import GpuTable, TransferStats
from cuda_p2p.executor import GpuExecutor
from cuda_p2p.delivery import DEFAULT_BATCH, SpanDelivery
from cuda_p2p.transfer import DEFAULT_STAGING
from ndp_core.report import collect

def read_csv(source: Any, *, device: Any = None, split: str = "host", gpu_share: float = 0.0,
             staging_bytes: int = DEFAULT_STAGING, batch_bytes: int = DEFAULT_BATCH, **options: Any) -> GpuTable:
    """Reads CSV into GPU memory: a :class:`~cuda_p2p.columns.GpuTable` with
    ``arrow_bridge.read_csv``'s schema and values, every column in Arrow
    layout in GPU memory.

    ``source`` and ``options`` are :func:`arrow_bridge.read_csv`'s (pyarrow
    option objects, pandas keywords). ``device``/``split`` run the parse in
    an emulated computational SSD (a ``ComputationalSSD`` or a profile name),
    its output delivered as by NVMe P2P: the device is modeled with a GPU
    destination, so ``table.report`` shows the P2P bytes and time.
    ``gpu_share`` (0 to 1) is the share of spans parsed on the GPU itself.
    Spans are copied in batches of about ``batch_bytes`` of Arrow data, through
    two pinned buffers of ``staging_bytes``.
    Needs a CUDA GPU (or ``NUMBA_ENABLE_CUDASIM=1``, Numba's simulator).

    >>> import io
    >>> from cuda_p2p import read_csv, runtime
    >>> if runtime.available():
    ...     table = read_csv(io.BytesIO(b"a,b\\n1,x\\n2,\\n"), gpu_share=1.0)
    ...     print(table.to_arrow().to_pydict())
    ... else:
    ...     print({'a': [1, 2], 'b': ['x', '']})
    {'a': [1, 2], 'b': ['x', '']}
    """
    runtime.cuda()  # a clear error before any parsing when there is no GPU
    offload = [GpuExecutor(HostExecutor(), gpu_share, keep_on_gpu=True)] if gpu_share > 0 else []
    delivery = SpanDelivery(bytes_to_parse(source, options.get("byte_range")), staging_bytes, batch_bytes)
    stats = TransferStats(path="p2p" if device is not None else ("gpu" if gpu_share > 0 else "host"))
    try:
        with collect() as reports, _gpu_destination(device) as gpu_device:
            table = arrow_bridge.read_csv(source, device=gpu_device, split=split, offload=offload,
                                          sinks=[delivery], **options)
        gpu_table = delivery.finish(table, stats)  # copies too: a read under one batch copies only here
    except BaseException:
        delivery.close()
        raise
    if offload:
        stats.spans_parsed_on_gpu = offload[0].parsed_on_gpu
        stats.spans_parsed_elsewhere = offload[0].spans_seen - offload[0].parsed_on_gpu
        spent = offload[0].time
        stats.gpu_parsed_bytes, stats.gpu_parse_seconds, stats.gpu_text_seconds, stats.gpu_busy_seconds = \
            spent.bytes, spent.seconds, spent.text_seconds, spent.busy_seconds
        stats.gpu_parse_steps = dict(spent.steps)
        stats.d2h_bytes = offload[0].lanes.bytes_back
    gpu_table.report = reports.reports[-1] if device is not None and reports.reports else None
    return gpu_table



@contextmanager
def _gpu_destination(device: Any) -> Iterator[Any]:
    """The device, modeled with its output going to GPU memory (a profile name
    becomes a ``ComputationalSSD`` made so, closed after the read)."""
    if isinstance(device, str):
        from device_emulator import ComputationalSSD

        ssd = ComputationalSSD(device, destination="gpu")
        try:
            yield ssd
        finally:
            ssd.close()
    elif hasattr(device, "with_destination"):
        yield device.with_destination("gpu")
    else:
        yield device  # None, or a device without a destination to model (HostOnly)
