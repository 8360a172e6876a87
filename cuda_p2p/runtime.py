"""The CUDA runtime as this package uses it: Numba's ``cuda`` module, CuPy when installed.

Everything on the GPU goes through Numba's CUDA API (device arrays, pinned
host arrays, streams, events, kernels), so the same code runs on a real GPU
(numba-cuda) and under Numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``),
where kernels run as Python threads on host memory: the tests run every
kernel there on machines without a GPU. CuPy is optional: it backs
``to_cupy()`` and ``__dlpack__``.

>>> from cuda_p2p.runtime import describe
>>> isinstance(describe(), str)
True
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
import glob
import os
import sys
import threading
from types import ModuleType
from typing import Any, Callable, Optional

import numpy as np


def _numpy_compat() -> None:
    """Give NumPy back ``row_stack`` (removed in NumPy 2.5; an alias of ``vstack``
    since 2.0): numba-cuda 0.30 registers a kernel overload of it when it compiles
    its first kernel, so without it no kernel compiles on a NumPy 2.5 machine (the
    GPU machine's image: numba-cuda 0.30.4, NumPy 2.5.2)."""
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack


_numpy_compat()


def kernels_as_device_functions() -> None:
    """Let CUDA kernels call the host's kernels (:class:`arrow_bridge.jit.Kernel`)
    as numba-cuda lets them call Numba's CPU functions.

    numba-cuda compiles a CPU ``Dispatcher`` met in a kernel's globals into a
    device function, but checks for that class by ``isinstance`` before it
    types the global; a ``Kernel`` (which makes its dispatcher on demand)
    fails that check. This hands numba-cuda the dispatcher instead, once.
    Nothing to do on the simulator, which runs kernels as Python.
    """
    if simulator_requested():
        return
    from numba.cuda.target import CUDATypingContext

    from arrow_bridge.jit import Kernel

    resolve = CUDATypingContext.resolve_value_type
    if getattr(resolve, "takes_kernels", False):
        return

    def resolve_value_type(self, val):
        return resolve(self, val.dispatcher if isinstance(val, Kernel) else val)

    resolve_value_type.takes_kernels = True
    CUDATypingContext.resolve_value_type = resolve_value_type

#: Held while a kernel is launched (not while it runs on a GPU): Numba's
#: simulator runs no two kernels at once.
KERNEL_TURN = threading.Lock()


class GpuUnavailable(RuntimeError):
    """No CUDA GPU (and no simulator) is available to this process."""


def simulator_requested() -> bool:
    """Whether this process runs CUDA kernels on Numba's simulator.

    >>> simulator_requested() in (True, False)
    True
    """
    import numba

    return bool(numba.config.ENABLE_CUDASIM)


def driver_present() -> bool:
    """Whether the machine has a CUDA driver library (a GPU may be usable)."""
    return ctypes.util.find_library("cuda") is not None or os.path.exists("/dev/nvidiactl")


@functools.lru_cache(maxsize=None)
def cuda() -> ModuleType:
    """``numba.cuda``, checked usable: a GPU, or the simulator.

    Raises :class:`GpuUnavailable` naming both ways out otherwise.
    """
    if not simulator_requested() and not driver_present():
        raise GpuUnavailable("no CUDA driver on this machine: run on a machine with an NVIDIA GPU, or set "
                             "NUMBA_ENABLE_CUDASIM=1 before importing numba to run the kernels on Numba's "
                             "CUDA simulator (slow; for tests)")
    from numba import cuda as numba_cuda

    if not numba_cuda.is_available():
        raise GpuUnavailable("numba.cuda finds no usable GPU (is numba-cuda installed and the driver loaded?)")
    return numba_cuda


def available() -> bool:
    """Whether :func:`cuda` works here (a GPU or the simulator).

    >>> available() in (True, False)
    True
    """
    try:
        cuda()
    except GpuUnavailable:
        return False
    return True


def cupy() -> Optional[ModuleType]:
    """CuPy, or None when it is not installed (or cannot run: under the simulator)."""
    if simulator_requested():
        return None
    try:
        import cupy as cupy_module
    except ImportError:
        return None
    return cupy_module


def describe() -> str:
    """One line on what runs kernels here: a GPU's name, the simulator, or nothing."""
    if not available():
        return "no GPU"
    if simulator_requested():
        return "Numba CUDA simulator (kernels run as Python threads on host memory)"
    device = cuda().get_current_device()
    name = device.name.decode() if isinstance(device.name, bytes) else device.name
    return f"{name} (compute capability {device.compute_capability[0]}.{device.compute_capability[1]})"


def thread_on_this_gpu() -> Callable[[], None]:
    """A function that makes the caller's current GPU current on the thread that
    calls it (a new thread starts on GPU 0): a ``ThreadPoolExecutor`` initializer
    for threads that work on this thread's device memory and streams.

    >>> thread_on_this_gpu()() if available() else None
    """
    if simulator_requested():
        return lambda: None  # one simulated GPU
    device_id = cuda().get_current_device().id

    def select() -> None:
        cuda().select_device(device_id)
    return select


def host_view(device_array: Any) -> Optional[np.ndarray]:
    """The host memory a simulator device array lives in (None on a real GPU)."""
    return getattr(device_array, "_ary", None) if simulator_requested() else None


def array_interface(device_array: Any) -> dict:
    """``__cuda_array_interface__`` (version 3) of a Numba device array; under
    the simulator, one describing the host memory it lives in (what the
    simulator's kernels read), so consumers see the same dictionary shape."""
    ary = host_view(device_array)
    if ary is None:
        return dict(device_array.__cuda_array_interface__)
    return {"shape": ary.shape, "strides": None if ary.flags.c_contiguous else ary.strides,
            "typestr": ary.dtype.str, "data": (ary.ctypes.data, False), "version": 3, "stream": None}


def launch_shape(n: int, threads: int = 256) -> tuple[int, int]:
    """``(blocks, threads per block)`` covering ``n`` items, one thread each
    (fewer threads per block under the simulator, where each is a Python thread).

    >>> blocks, threads = launch_shape(1000, 256)
    >>> blocks * threads >= 1000
    True
    """
    if simulator_requested():
        threads = min(threads, 32)
    return max(1, (n + threads - 1) // threads), threads


def cufile_status() -> str:
    """Whether cuFile (GPUDirect Storage) could run here: its library found and
    its driver opened, or why not. This package reads through pinned bounce
    buffers either way; the answer goes into the GPU benchmark's results.

    >>> cufile_status().split(":")[0] in ("no libcufile", "libcufile found", "cuFileDriverOpen")
    True
    """
    candidates = [ctypes.util.find_library("cufile")] + sorted(
        glob.glob(f"{sys.prefix}/lib/python3*/site-packages/nvidia/**/libcufile.so*", recursive=True))
    library = next((c for c in candidates if c), None)
    if library is None:
        return "no libcufile: neither on the loader's path nor in nvidia-cufile's wheel"

    class _Error(ctypes.Structure):
        _fields_ = [("err", ctypes.c_int), ("cu_err", ctypes.c_int)]

    try:
        lib = ctypes.CDLL(library)
        lib.cuFileDriverOpen.restype = _Error
        opened = lib.cuFileDriverOpen()
    except (OSError, AttributeError) as e:
        return f"libcufile found: {library}, but not usable: {e}"
    if opened.err == 0:
        lib.cuFileDriverClose()
        return f"cuFileDriverOpen: ok ({library})"
    return f"cuFileDriverOpen: error {opened.err} (CUDA {opened.cu_err}; {library})"
