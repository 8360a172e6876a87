"""ndp_core: the runtime both the host and the (emulated) device speak.

* ``BlockReader`` — positional page I/O used by the reader's host path.
* ``Engine`` — the device's command engine: an NVMe-style queue pair, streams,
  StorageApp instances (MINIT/MREAD/MWRITE/MDEINIT, Summarizer *_TSK) run on
  worker threads with the GIL released; commands carry app parameters and
  injected faults. Functional: modeled time is device_emulator's.
* ``ndp_core.device`` — the ``Device`` protocol, ``SplitPolicy``, ``TaskWork``
  and ``HostOnly``; ``ndp_core.report`` — ``Report`` and ``collect()``.
* ``ndp_core.engine`` — ``Status``/``Opcode`` enums and the Numba-side
  StorageApp ABI helpers (``storage_app``, ``app_input``, ...).
* ``ndp_core.counters`` — ``WorkCounters``: the work counters an app declares.
* ``ndp_core.layout`` — ``word_layout``: an app's binary layouts (plan, args,
  result header), defined once for the app and its host driver.

It knows nothing of CSV: apps bring their own layouts and counters.
"""
from ndp_core._core import (
    MAX_PAGES_PER_COMMAND,
    BlockReader,
    Completion,
    Engine,
    split_request,
)
from ndp_core.engine import Opcode, Status

__all__ = [
    "MAX_PAGES_PER_COMMAND",
    "BlockReader",
    "Completion",
    "Engine",
    "Opcode",
    "Status",
    "split_request",
]
