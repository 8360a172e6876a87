"""Numba kernels that cost nothing until they run, and a first read without Numba.

Importing Numba and loading its cached machine code takes longer than
pyarrow's whole read of a small file (about 0.3 s to import it, 0.3 s more for
the first cached kernels). So the reader's kernels are declared with
:func:`njit` and :func:`intrinsic` from here instead of Numba's own: declaring
one imports nothing, and Numba is imported the first time a kernel runs.

Before that, a call may not need Numba at all: ``make install`` compiles the
kernels a small read calls, at the argument types such a read passes them,
ahead of time into one extension module (:mod:`arrow_bridge.startup`, with
``numba.pycc``), which loads in milliseconds without Numba. A :class:`Kernel`
call goes to that library while Numba is not needed yet and the library has
the call's argument types; else to Numba. Both compile the same Python source
with the same compiler and the kernel's error model; the library is built for
a generic x86-64 CPU (a digit-parsing step takes its non-AVX2 form, which
computes the same values). Once any kernel needs Numba (a big read, another
type, a device read), every kernel goes to Numba, whose functions release
the GIL.

>>> @njit(nogil=True, cache=False)
... def add(a, b):
...     return a + b
>>> add(2, 3), add.py_func(2, 3)
(5, 5)
"""
from __future__ import annotations

import functools
import importlib
import sys
import threading
from typing import Any, Callable

from arrow_bridge import startup

_LOCK = threading.RLock()
_PLACEHOLDERS: list["_IntrinsicPlaceholder"] = []
_numba_loaded = False


def njit(func: Callable | None = None, **options: Any):
    """``numba.njit``, compiled when first called (or typed inside another kernel).

    >>> @njit(cache=False)
    ... def twice(x):
    ...     return 2 * x
    >>> twice(21)
    42
    """
    if func is None:
        return lambda f: Kernel(f, options)
    return Kernel(func, options)


def intrinsic(definition: Callable):
    """``numba.extending.intrinsic``, built when Numba is first loaded.

    Until then the name holds a placeholder; :func:`load_numba` swaps every
    module's reference to it for the real intrinsic, so kernels typed
    afterwards see Numba's object.
    """
    with _LOCK:
        if not _numba_loaded:
            placeholder = _IntrinsicPlaceholder(definition)
            _PLACEHOLDERS.append(placeholder)
            return placeholder
    from numba.extending import intrinsic as numba_intrinsic

    return numba_intrinsic(definition)


def load_numba() -> None:
    """Imports Numba once: teaches it the kernels declared here and builds the intrinsics.

    Modules that compile kernels of their own with Numba (the CUDA ones)
    call it before they do.
    """
    global _numba_loaded
    if _numba_loaded:
        return
    from numba.core.compiler_lock import global_compiler_lock

    with global_compiler_lock, _LOCK:  # Numba's lock first, always: a compile under way holds it
        if _numba_loaded:
            return
        from numba.core import types
        from numba.core.registry import cpu_target
        from numba.core.typing.typeof import typeof_impl
        from numba.extending import intrinsic as numba_intrinsic

        @typeof_impl.register(Kernel)
        def _typeof_kernel(kernel, context):
            return types.Dispatcher(kernel.dispatcher)

        real = {id(p): numba_intrinsic(p.definition) for p in _PLACEHOLDERS}
        _swap_placeholders(real)
        _PLACEHOLDERS.clear()
        cpu_target.typing_context.refresh()  # a compile under way types the new intrinsics too
        lock_cache_saves()
        _numba_loaded = True


def lock_cache_saves() -> None:
    """Makes Numba's cache saves in this process exclusive across processes
    (:func:`load_numba` calls it).

    Numba saves an entry by reading the function's index, picking the next free
    data file name and writing both back, unlocked: two processes compiling one
    function at new signatures at once (Dask's worker processes on their first
    partition, the warm-up's, ``make test``'s) could lose an entry, or give two
    signatures one data file, and a later load would run the other signature's
    code. Each save takes a file lock. A second call does nothing.

    >>> from numba.core import caching
    >>> lock_cache_saves()
    >>> caching.IndexDataCacheFile.save.locked
    True
    """
    import fcntl
    import os
    import tempfile

    from numba.core import caching

    save = caching.IndexDataCacheFile.save
    if getattr(save, "locked", False):
        return
    lock_path = os.path.join(tempfile.gettempdir(), f"arrow_bridge-numba-cache-{os.getuid()}.lock")

    def locked_save(self, key, data):
        with open(lock_path, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
            save(self, key, data)

    locked_save.locked = True
    caching.IndexDataCacheFile.save = locked_save


def _swap_placeholders(real: dict) -> None:
    """Points every loaded module's name for a placeholder at its built intrinsic."""
    if not real:
        return
    for module in list(sys.modules.values()):
        try:  # the raw namespace: a lazily loaded module stays unloaded
            namespace = object.__getattribute__(module, "__dict__")
        except AttributeError:
            continue
        if not isinstance(namespace, dict):
            continue
        for name, value in list(namespace.items()):
            if type(value) is _IntrinsicPlaceholder:
                namespace[name] = real[id(value)]


class _LazyModule:
    """A Numba module imported on first attribute access (for intrinsics' typing code)."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attribute: str):
        if attribute.startswith("_"):  # its own (copy and pickle probe them before __init__ ran)
            raise AttributeError(attribute)
        return getattr(importlib.import_module(self._name), attribute)

    def __reduce__(self):
        return _LazyModule, (self._name,)

    def __fingerprint__(self):
        """What a compiled SSDlet's fingerprint takes it as (:mod:`ndp_core.ssdlets.disk_cache`): the module."""
        return importlib.import_module(self._name)


#: ``numba.core.types`` and ``numba.core.cgutils``, for the typing and code
#: generation functions of intrinsics, which run only when a kernel compiles.
numba_types = _LazyModule("numba.core.types")
cgutils = _LazyModule("numba.core.cgutils")


class _IntrinsicPlaceholder:
    """Stands for an intrinsic until :func:`load_numba` builds it."""

    def __init__(self, definition: Callable):
        self.definition = definition
        functools.update_wrapper(self, definition)

    def __call__(self, *args, **kwargs):
        raise NotImplementedError(f"{self.__name__} is a Numba intrinsic: usable inside kernels only")

    def __repr__(self) -> str:
        return f"<intrinsic {self.__module__}.{self.__qualname__} (not built yet)>"


class Kernel:
    """A ``numba.njit`` function made on first use; its own Python function is ``py_func``.

    Anything else a Numba dispatcher has (``signatures``, ``inspect_llvm``,
    ``targetoptions``...) is the dispatcher's, which makes the dispatcher.
    """

    #: Whether the startup library (:mod:`arrow_bridge.startup`) may hold it.
    startup_library = True

    def __init__(self, py_func: Callable, options: dict):
        self.py_func = py_func
        self.options = options
        self._dispatcher = None
        functools.update_wrapper(self, py_func)

    @property
    def dispatcher(self):
        """The Numba dispatcher (made, and Numba imported, on first access)."""
        if self._dispatcher is None:
            load_numba()
            import numba
            from numba.core.compiler_lock import global_compiler_lock

            with global_compiler_lock, _LOCK:
                if self._dispatcher is None:
                    self._dispatcher = numba.njit(**self.options)(self.py_func)
            startup.retire()  # outside the locks: it loads what the library ran, through Numba
        return self._dispatcher

    def __call__(self, *args, **kwargs):
        dispatcher = self._dispatcher
        if dispatcher is None:
            compiled = None if kwargs else startup.function_for(self, args)
            if compiled is not None:
                return compiled(*args)
            dispatcher = self.dispatcher
        return dispatcher(*args, **kwargs)

    def __getattr__(self, name: str):
        if name.startswith("__") or name in ("_dispatcher", "py_func", "options"):
            raise AttributeError(name)
        return getattr(self.dispatcher, name)

    def __reduce__(self):
        if "<locals>" in self.__qualname__:  # made inside a function: by value, as Numba pickles its own
            return Kernel, (self.py_func, self.options)
        return _kernel_named, (self.__module__, self.__qualname__)

    def __repr__(self) -> str:
        return f"<kernel {self.__module__}.{self.__qualname__}>"


def _kernel_named(module: str, qualname: str) -> Kernel:
    found = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    return found
