"""CUDA kernels (Numba): bitmaps, scans, record boundaries and span parsing.

These modules compile with ``numba.cuda`` when imported, so import them only
after :func:`cuda_p2p.runtime.cuda` said a GPU (or the simulator) is there.
"""
