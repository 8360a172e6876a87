"""ndp_core: the runtime both the host and the (emulated) device speak.

Today it provides the compiled page-I/O engine used by the reader; the command
set, queues and StorageApp runner arrive with the emulated SSD.
"""
from ndp_core._core import BlockReader

__all__ = ["BlockReader"]
