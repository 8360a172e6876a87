"""CUDA kernels (Numba): bitmaps, scans, record boundaries and span parsing.

These modules compile with ``numba.cuda`` when imported, so import them only
after :func:`cuda_p2p.runtime.cuda` said a GPU (or the simulator) is there.
"""
from arrow_bridge.jit import load_numba
from cuda_p2p.runtime import kernels_as_device_functions

load_numba()  # the host kernels these call are typed by Numba from here on
kernels_as_device_functions()
