"""The startup library: the kernels a first read calls, compiled ahead of time.

A fresh process that reads a small file would spend most of its time
importing Numba and loading cached kernels (about 0.6 s against pyarrow's
whole read of 0.1 s). The warm-up (``python -m arrow_bridge.warmup``, run by
``make install``; :func:`arrow_bridge.warmup.build_startup_library`) reads a
few small samples with Numba (one of them in several spans, as a larger file
is read), records which kernels the reader called from
Python and at which argument types, and compiles exactly those with
``numba.pycc`` into one extension module in ``_startup_kernels/`` beside
this file, with a manifest. That module needs NumPy only.

:class:`arrow_bridge.jit.Kernel` asks :func:`function_for` first: it answers
while nothing has needed Numba yet in this process, the manifest matches the
sources it was built from (a fingerprint of :data:`KERNEL_SOURCES` and the
compiler's versions), and the library has the call's exact argument types;
otherwise ``None``, and Numba runs the kernel. ``ARROW_BRIDGE_STARTUP_LIBRARY=0``
turns the library off, as do Numba's debug settings (``NUMBA_DISABLE_JIT``...).

Its functions hold the GIL (pycc has no ``nogil``) and the fused loop is not
among them (pycc cannot compile it), so they parse far slower than Numba's:
the first kernel that needs Numba retires the library for the rest of the
process, and so do :data:`LIBRARY_BYTES` of text parsed through it (a read
known to be larger goes to Numba from its start, :func:`read_starts`) or
:data:`RETIRE_AFTER_CALLS` calls: by then the library has cost as much as
loading Numba.
"""
from __future__ import annotations

import ast
import hashlib
import importlib.util
import json
import os
import sys
import threading
import warnings
from pathlib import Path
from typing import Any, Callable

import numpy as np

LIBRARY = "_startup_kernels"
_HERE = Path(__file__).resolve().parent
LIBRARY_FOLDER = _HERE / LIBRARY
#: What the compiled kernels are made of: every module with kernels, and the
#: constants they take from ``ndp_core`` (its Python and, for the engine's
#: status numbers, its C++ headers); the Makefile's KERNEL_SOURCES, which
#: rebuild the library when they change, lists the same.
KERNEL_SOURCES = ("arrow_bridge/*/*.py", "ndp_core/*.py", "ndp_core/src/*", "arrow_bridge/transcoding.py",
                  "arrow_bridge/line_filters.py", "arrow_bridge/column_finish.py", "arrow_bridge/preamble.py",
                  "arrow_bridge/jit.py", "arrow_bridge/startup.py")

_lock = threading.Lock()
#: Numba settings the library cannot follow (it was compiled without them): Numba runs everything.
_NUMBA_DEBUG_SETTINGS = ("NUMBA_DISABLE_JIT", "NUMBA_BOUNDSCHECK", "NUMBA_DEBUGINFO", "NUMBA_OPT")
_state: dict[str, Any] = {
    "retired": os.environ.get("ARROW_BRIDGE_STARTUP_LIBRARY", "1") == "0"
    or any(os.environ.get(name) for name in _NUMBA_DEBUG_SETTINGS),
    "table": None,
    "calls": 0,
    "bytes": 0,  # text parsed through the library
}
#: Calls the library serves before Numba takes over anyway. A call costs ~10 us
#: more here than through Numba's dispatcher (working out the argument types in
#: Python), and loading Numba ~0.5 s: past this many calls (a few hundred small
#: reads) a process has paid for Numba in overhead, so it loads it (ski rental:
#: never more than twice the better choice made in hindsight).
RETIRE_AFTER_CALLS = 50_000
#: Bytes of text the library parses before Numba takes over (ski rental again).
#: On the 2-core machine its kernels (serial under the GIL, no fused loop) read
#: lineitem at about 90 MB/s, Numba's at 860 MB/s, and loading Numba costs about
#: 0.35 s: past about 32 MB the library has cost as much. A 6 MB file's first read
#: took 0.08 s through it, 0.37-0.41 s loading Numba (README, "Start-up").
LIBRARY_BYTES = 32 << 20
_served: set = set()  # (kernel, argument types) the library ran: Numba loads them when it takes over


_C_CONTIGUOUS, _F_CONTIGUOUS, _ALIGNED, _WRITEABLE = 0x1, 0x2, 0x100, 0x400  # NumPy's array flag bits


class NoTypeKey(Exception):
    """An argument whose Numba type :func:`type_key` does not tell (Numba runs the kernel)."""


def type_key(value: Any) -> Any:
    """A value's argument type, as finely as Numba tells types apart (raises ``NoTypeKey`` for others).

    >>> type_key((np.zeros(3, np.uint8), 1, True))
    ('t', ('a', '|u1', 1, 'C', False, True), 'i8', 'b')
    """
    kind = type(value)
    if kind is np.ndarray:
        bits = value.flags.num  # one read for all the flags: this runs for every argument of every call
        dtype = value.dtype
        return ("a", dtype.str if dtype.fields is None else str(dtype.descr), value.ndim,
                "C" if bits & _C_CONTIGUOUS else "F" if bits & _F_CONTIGUOUS else "A", not bits & _WRITEABLE,
                bool(bits & _ALIGNED))
    if kind is tuple:
        return ("t", *map(type_key, value))
    if kind is bool or kind is np.bool_:
        return "b"
    if kind is int:
        if -(1 << 63) <= value < 1 << 63:
            return "i8"
        if 0 <= value < 1 << 64:
            return "u8"
        raise NoTypeKey
    if kind is float:
        return "f8"
    if isinstance(value, np.generic) and value.dtype.kind in "iuf":
        return ("s", value.dtype.str)
    raise NoTypeKey


def function_for(kernel, args: tuple) -> Callable | None:
    """The library's compiled ``kernel`` for these arguments, or ``None`` (then Numba runs it)."""
    table = _table()
    if table is None:
        return None
    entries = table.get(kernel_id(kernel))
    if entries is None:
        return None
    try:
        key = type_key(args)
    except NoTypeKey:
        return None
    compiled = entries.get(key)
    if compiled is not None:
        _served.add((kernel, key))
        _state["calls"] += 1
        if _state["calls"] > RETIRE_AFTER_CALLS:  # Numba takes over: the caller makes its dispatcher
            return None
    return compiled


def read_starts(size: int | None) -> None:
    """A read of ``size`` bytes of text (None: not known) begins: one that
    would take the library past :data:`LIBRARY_BYTES` runs in Numba from its start.

    >>> read_starts(None)
    """
    if size is not None and not _state["retired"] and _state["bytes"] + size > LIBRARY_BYTES:
        retire()


def parsed(size: int) -> None:
    """The library parsed ``size`` more bytes of text: past :data:`LIBRARY_BYTES` in all, Numba takes over."""
    with _lock:
        if _state["retired"]:
            return
        _state["bytes"] += size
        over = _state["bytes"] > LIBRARY_BYTES
    if over:
        retire()


def retire() -> None:
    """From now on every kernel runs in Numba (its functions release the GIL).

    Numba loads, from its cache, what the library ran so far, so that the
    process is as warm afterwards as if Numba had run it all along: the read
    that retires the library pays for it, not the next one.
    """
    with _lock:
        if _state["retired"]:
            return
        _state["retired"] = True
        served = list(_served)
        _served.clear()
    for kernel, key in served:  # outside the lock: this compiles (from the cache, as a rule)
        kernel.dispatcher.compile(numba_types(key))


def numba_types(key: Any):
    """The Numba types of the arguments :func:`type_key` gave ``key`` for (imports Numba).

    >>> numba_types(type_key((np.zeros(3, np.uint8), 1)))
    (Array(uint8, 1, 'C', False, aligned=True), int64)
    """
    import numba
    from numba.core import types

    def one(part):
        if part in _SCALARS:
            return getattr(types, _SCALARS[part])
        if part[0] == "a":
            _, dtype, ndim, layout, readonly, aligned = part
            return types.Array(numba.from_dtype(np.dtype(dtype)), ndim, layout, readonly=readonly, aligned=aligned)
        if part[0] == "s":
            return numba.from_dtype(np.dtype(part[1]))
        return types.BaseTuple.from_types([one(item) for item in part[1:]])

    return tuple(one(part) for part in key[1:])


_SCALARS = {"i8": "int64", "u8": "uint64", "b": "boolean", "f8": "float64"}


def in_use() -> bool:
    """Whether calls may still go to the library in this process.

    >>> isinstance(in_use(), bool)
    True
    """
    return not _state["retired"] and _table() is not None


def _table() -> dict | None:
    if _state["retired"]:
        return None
    table = _state["table"]
    if table is None:
        with _lock:
            if _state["table"] is None:
                _state["table"] = _load() or {}
            table = _state["table"]
    return table or None


def _load() -> dict | None:
    """``{kernel id: {argument types: function}}`` from the built library, if it matches the sources."""
    folder = LIBRARY_FOLDER
    manifest = _current_manifest(folder)
    if manifest is None:
        return None
    found = sorted(folder.glob("kernels.*.so"))
    try:
        spec = importlib.util.spec_from_file_location(f"arrow_bridge.{LIBRARY}.kernels", found[0])
        library = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(library)
        return {kernel: {ast.literal_eval(key): getattr(library, name) for key, name in entries.items()}
                for kernel, entries in manifest["kernels"].items()}
    except Exception as error:  # noqa: BLE001 - a broken library must not break reads: Numba runs them
        warnings.warn(f"arrow_bridge: startup library {folder} not usable ({type(error).__name__}: {error}); "
                      "kernels run in Numba (`python -m arrow_bridge.warmup` rebuilds it)", RuntimeWarning,
                      stacklevel=2)
        return None


def fingerprint() -> str:
    """What the library was compiled from: the sources and the compiler's versions.

    >>> len(fingerprint())
    64
    """
    digest = hashlib.sha256()
    root = _HERE.parent
    for path in sorted({path for pattern in KERNEL_SOURCES for path in root.glob(pattern) if path.is_file()}):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    for package in ("numba", "llvmlite"):  # their version files, read without importing them
        spec = importlib.util.find_spec(package)
        version = Path(spec.origin).parent / "_version.py" if spec and spec.origin else None
        digest.update(version.read_bytes() if version and version.exists() else b"?")
    digest.update(f"numpy={np.__version__} {sys.version}".encode())
    return digest.hexdigest()


def kernel_id(kernel) -> str:
    """How the manifest names a kernel: ``module:qualname``."""
    return f"{kernel.__module__}:{kernel.__qualname__}"


def built_from_these_sources(folder: Path) -> bool:
    """Whether ``folder`` holds a library built from the sources and compiler at hand.

    >>> built_from_these_sources(Path("/nonexistent"))
    False
    """
    return _current_manifest(folder) is not None


def _current_manifest(folder: Path) -> dict | None:
    """``folder``'s manifest, if its library was built from the sources and compiler at hand."""
    try:
        manifest = json.loads((folder / "manifest.json").read_text())
    except (OSError, ValueError):
        return None
    current = manifest.get("fingerprint") == fingerprint() and any(folder.glob("kernels.*.so"))
    return manifest if current else None
