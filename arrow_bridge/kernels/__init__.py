"""Numba kernels: the StorageApps of the reader and the writer.

Every kernel here is ``nopython`` and ``nogil``, works on caller-provided NumPy
buffers, allocates nothing per value, never raises, and reports problems as a
status code. That is what lets the same compiled code run on the host (called
from a thread pool) or inside the emulated device (called through a C
function pointer). The per-value work, numbers and dates to and from text,
is :mod:`arrow_bridge.numbers`.
"""
