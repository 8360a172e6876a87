"""Numba kernels: the StorageApps of the reader.

Every kernel here is ``nopython`` and ``nogil``, works on caller-provided NumPy
buffers, allocates nothing per value, never raises, and reports problems as a
status code. That is what lets the same compiled code run on the host (called
from a thread pool) or, later, inside the emulated device (called through a C
function pointer).
"""
