"""Compiled SSDlets kept on disk, so that a new process loads a program instead of compiling it.

Compiling an SSDlet puts its metered body, the StorageApp around it and every
kernel it calls through LLVM together: seconds for a small program, tens of
seconds for the reader's parse of a wide CSV file. A restarted notebook, a
test run or a benchmark would pay that again in every process. So the
StorageApp is compiled from a source file of its own, named by a fingerprint
of everything its machine code depends on, with Numba's own cache beside it
(``cfunc(cache=True)``): a second process with the same program finds the
file and loads the code Numba saved.

The fingerprint (:func:`fingerprint`) covers the generated source and every
value the code loads, followed through what those load in turn: numbers,
strings and arrays by value, dtypes and Numba types by name, and functions
(plain, Numba's, intrinsics) by their code object as it is in memory (bytecode,
constants, names: a file edited but not reloaded is not what runs), their
closure and the globals they load. An attribute read off a module
(``helpers.step``) is followed to what it is, unless the module is pinned by a
version: the standard library and installed packages (NumPy, Numba), which
the fingerprint names with Python's, NumPy's, Numba's and llvmlite's
versions and the Numba settings that change the code it makes
(``NUMBA_BOUNDSCHECK``, ``NUMBA_OPT``...); Numba's own index adds the CPU. A
value of another kind may say what it stands for with a ``__fingerprint__()``
method. A value it does not know (a DataFrame a program's module holds, say)
makes the fingerprint ``None``: the program is compiled in the process, as it
would be without a cache, and never loaded stale.

What it cannot see: a change inside a compiled extension, or inside an
installed package that keeps its version.

The folder is ``$NDP_SSDLET_CACHE``, else ``$XDG_CACHE_HOME/ndp/ssdlets`` (or
``~/.cache/ndp/ssdlets``); ``NDP_SSDLET_CACHE=off`` turns the cache off. It
holds one source file a program and Numba's files for it (about 0.1-0.5 MB a
program); past ``$NDP_SSDLET_CACHE_MB`` (1024) the programs used longest ago
are deleted (:func:`prune`). Deleting the folder is always safe.

>>> text = "def app(call):\\n    return LIMIT\\n"
>>> fingerprint(text, {"LIMIT": 3}) == fingerprint(text, {"LIMIT": 3})
True
>>> fingerprint(text, {"LIMIT": 3}) == fingerprint(text, {"LIMIT": 4})
False
>>> fingerprint(text, {"LIMIT": object()}) is None
True
>>> fingerprint(text, {"LIMIT": 3, "frame": object()}) is None  # not a name the code loads
False
"""
from __future__ import annotations

import contextlib
import dis
import enum
import hashlib
import os
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any, Callable, Mapping, Optional

import numpy as np

__all__ = ["cache_folder", "fingerprint", "compiled_app", "prune"]


def cache_folder() -> Optional[Path]:
    """Where compiled SSDlets are kept (None: the cache is off)."""
    chosen = os.environ.get("NDP_SSDLET_CACHE")
    if chosen is not None:
        return None if chosen.strip().lower() in ("", "off", "0", "no") else Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ndp" / "ssdlets"


class _Unknown(Exception):
    """A value the fingerprint cannot take (its message says which)."""


def fingerprint(source_text: str, namespace: Mapping[str, Any]) -> Optional[str]:
    """A hex digest of ``source_text`` compiled over ``namespace``: everything the
    code it makes depends on (module doc), or None where a value cannot be fingerprinted."""
    return _fingerprint(source_text, namespace)[0]


def _fingerprint(source_text: str, namespace: Mapping[str, Any]) -> tuple[Optional[str], str]:
    """The fingerprint, or None and what stopped it."""
    try:
        key = _Keys().of_chains(_loaded_chains(compile(source_text, "<fingerprint>", "exec")), namespace)
    except _Unknown as unknown:
        return None, str(unknown)
    return hashlib.sha256(repr((source_text, key, _toolchain())).encode()).hexdigest(), ""


def compiled_app(source_text: str, name: str, namespace: dict[str, Any], compile_app: Callable[..., Any]) \
        -> tuple[Any, str]:
    """``compile_app(function, cache=...)`` (a Numba ``cfunc``) of the function
    ``name`` that ``source_text`` defines over ``namespace``, from a file under
    :func:`cache_folder` named by its fingerprint; and how it went: ``"loaded"``
    (Numba's cache had it), ``"compiled"`` (and saved), or why it was compiled
    in this process only."""
    folder = cache_folder()
    if folder is None:
        return _in_process(source_text, name, namespace, compile_app, "the cache is off")
    digest, unknown = _fingerprint(source_text, namespace)
    if digest is None:
        return _in_process(source_text, name, namespace, compile_app, f"no fingerprint for {unknown}")
    try:
        path = _source_file(folder, digest, source_text)
    except OSError as error:  # a folder it cannot write (a read-only home, say): as without the cache
        return _in_process(source_text, name, namespace, compile_app, f"{folder} cannot be written: {error.strerror}")
    # Numba rebuilds a loaded function's environment from its module, by name: an importable one
    namespace.setdefault("__name__", __name__)
    exec(compile(source_text, str(path), "exec"), namespace)  # the same text, from its file
    try:
        app = compile_app(namespace[name], cache=True)  # a cfunc compiles, or loads, as it is made
    except (OSError, RuntimeError) as error:  # its file pruned by another process meanwhile, say
        return _in_process(source_text, name, namespace, compile_app, f"the cache failed: {error}")
    # Numba's files: in __pycache__ beside the source, or under $NUMBA_CACHE_DIR where that is set
    numba_folder = Path(getattr(getattr(app, "_cache", None), "_cache_path", folder / "__pycache__"))
    indexes = list(numba_folder.glob(f"{path.stem}.*.nbi"))
    if app.cache_hits:
        for index in indexes:
            with contextlib.suppress(OSError):  # used now (prune's order); the source keeps the time Numba stamped
                os.utime(index)
        return app, "loaded"
    if not indexes:  # Numba declined to save it (it says why in a NumbaWarning)
        return app, "compiled in this process (Numba did not save it)"
    prune(folder, numba_folder=numba_folder)
    return app, "compiled"


def _in_process(source_text: str, name: str, namespace: dict[str, Any], compile_app: Callable[..., Any],
                why: str) -> tuple[Any, str]:
    exec(compile(source_text, f"<ssdlet {name}>", "exec"), namespace)  # our template, filled with checked names
    return compile_app(namespace[name], cache=False), f"compiled in this process ({why})"


def prune(folder: Path, limit_bytes: Optional[int] = None, *, numba_folder: Optional[Path] = None) -> int:
    """Deletes the programs used longest ago until the folder holds at most three
    quarters of ``limit_bytes`` (default ``$NDP_SSDLET_CACHE_MB``, 1024 MB), once it holds
    more; returns how many it deleted. A program used in the last ten minutes stays
    (another process may be loading it); a deleted one is compiled again when next used.
    Numba's files are in ``numba_folder`` (default: ``__pycache__`` in the folder).

    >>> import tempfile
    >>> prune(Path(tempfile.mkdtemp()), limit_bytes=1)
    0
    """
    if limit_bytes is None:
        limit_bytes = int(float(os.environ.get("NDP_SSDLET_CACHE_MB", 1024)) * 2**20)
    programs: dict[str, list[tuple[str, os.stat_result]]] = {}
    for path, stat in [*_files(folder), *_files(numba_folder or folder / "__pycache__")]:
        programs.setdefault(Path(path).name.split(".")[0], []).append((path, stat))
    sizes = {stem: sum(stat.st_size for _, stat in files) for stem, files in programs.items()}
    total = sum(sizes.values())
    if total <= limit_bytes:
        return 0
    last_used = {stem: max(stat.st_mtime for _, stat in files) for stem, files in programs.items()}
    deleted = 0
    for stem in sorted(programs, key=last_used.__getitem__):
        if total <= limit_bytes * 3 // 4 or last_used[stem] > time.time() - _IN_USE_S:
            break
        for path, _ in programs[stem]:
            with contextlib.suppress(FileNotFoundError):  # another process pruned it first
                os.unlink(path)
        total -= sizes[stem]
        deleted += 1
    return deleted


#: Seconds a program is taken to be in use after it was last saved or loaded.
_IN_USE_S = 600


def _files(folder: Path) -> list[tuple[str, os.stat_result]]:
    """The programs' files in ``folder`` with their sizes and times (a file another process
    removes meanwhile, such as Numba's temporary ones, is left out)."""
    found = []
    with contextlib.suppress(FileNotFoundError):
        for entry in os.scandir(folder):
            if entry.name.startswith("ssdlet_"):
                with contextlib.suppress(FileNotFoundError):
                    found.append((entry.path, entry.stat()))
    return found


def _source_file(folder: Path, digest: str, source_text: str) -> Path:
    """The file holding ``source_text``, written once: Numba's index stamps the file's
    time and size, so a file rewritten would throw its saved code away."""
    path = folder / f"ssdlet_{digest[:40]}.py"
    if path.exists():
        return path
    folder.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=f"{path.stem}.", suffix=".tmp")
    with os.fdopen(handle, "w") as out:
        out.write(source_text)
    os.chmod(temporary, 0o644)  # a shared folder: readable as any file written there
    try:
        os.link(temporary, path)  # only the first writer's file stands; a later one finds it
    except FileExistsError:
        pass
    except OSError:  # a file system without hard links
        if not path.exists():
            os.replace(temporary, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
    return path


#: (name, attribute, ...) a code object loads: a global, and the attributes read off it.
Chain = tuple[str, ...]


def _loaded_chains(code: types.CodeType) -> set[Chain]:
    """The globals ``code`` loads (at any depth), each with the attributes read off
    it in a row (``helpers.step`` is ``("helpers", "step")``)."""
    chains: set[Chain] = set()
    chain: Optional[Chain] = None
    for ins in dis.get_instructions(code):
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
            if chain:
                chains.add(chain)
            chain = (ins.argval,)
        elif ins.opname in ("LOAD_ATTR", "LOAD_METHOD") and chain:
            chain = (*chain, ins.argval)
        elif chain:
            chains.add(chain)
            chain = None
    if chain:
        chains.add(chain)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            chains |= _loaded_chains(const)
    return chains


def _code_key(code: types.CodeType) -> tuple:
    """What Numba compiles of a function: its bytecode, names and constants (line
    numbers too, for its messages); not its file name, which a generated one numbers."""
    consts = tuple(_code_key(c) if isinstance(c, types.CodeType) else
                   ("frozenset", tuple(sorted(map(repr, c)))) if isinstance(c, frozenset) else
                   (type(c).__name__, repr(c)) for c in code.co_consts)
    return (code.co_name, code.co_code, consts, code.co_names, code.co_varnames, code.co_freevars,
            code.co_cellvars, code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount, code.co_flags,
            code.co_firstlineno)


def _pinned(module: types.ModuleType) -> bool:
    """Whether a module is fixed by the versions in the fingerprint (the standard library,
    installed packages): its attributes are then not followed."""
    top = module.__name__.split(".")[0]
    if top in sys.stdlib_module_names or top in sys.builtin_module_names:
        return True
    file = getattr(sys.modules.get(top), "__file__", None) or ""
    return any(part in ("site-packages", "dist-packages") for part in Path(file).parts)


#: Numba's settings that change the code it makes (NUMBA_BOUNDSCHECK=0 would drop a
#: program's bounds checks), in the fingerprint beside the versions.
_NUMBA_SETTINGS = ("BOUNDSCHECK", "OPT", "DEBUGINFO_DEFAULT", "CPU_NAME", "CPU_FEATURES", "DISABLE_JIT",
                   "ENABLE_AVX", "LOOP_VECTORIZE", "SLP_VECTORIZE", "FASTMATH")


def _toolchain() -> tuple:
    import llvmlite
    import numba
    from numba.core import config

    settings = tuple((name, repr(getattr(config, name, None))) for name in _NUMBA_SETTINGS)
    return sys.version, np.__version__, numba.__version__, llvmlite.__version__, settings


class _Keys:
    """Fingerprints of values; a function seen before is named, not followed again
    (the order is fixed, so the same program gives the same fingerprint)."""

    def __init__(self) -> None:
        self.seen: dict[int, Any] = {}  # the functions themselves too: an id is not reused while held

    def of_chains(self, chains: set[Chain], namespace: Mapping[str, Any]) -> tuple:
        """The values ``chains`` start from in ``namespace`` (a name it lacks is a builtin),
        and what their attributes lead to, past a pinned module's."""
        keys = []
        for chain in sorted(chains):
            if chain[0] not in namespace:
                continue
            value = namespace[chain[0]]
            keys.append((chain[0], self.of(value)))
            for depth, attribute in enumerate(chain[1:], 1):
                if not isinstance(value, types.ModuleType) or _pinned(value):
                    break  # an attribute of a value is in the value's key
                value = getattr(value, attribute, _MISSING)
                keys.append((chain[:depth + 1], self.of(value)))
        return tuple(keys)

    def of(self, value: Any) -> Any:  # noqa: C901 - one case a kind, in the order they are met
        if value is None or value is _MISSING or isinstance(value, (bool, int, float, complex, str, bytes)):
            return (type(value).__name__, repr(value))
        if isinstance(value, enum.Enum):
            return ("enum", type(value).__module__, type(value).__qualname__, value.name)
        if isinstance(value, np.ndarray):
            return ("array", value.dtype.str, value.shape, hashlib.sha256(np.ascontiguousarray(value)).hexdigest())
        if isinstance(value, np.generic):
            return ("scalar", value.dtype.str, repr(value.item()))
        if isinstance(value, np.dtype):
            return ("dtype", value.str, repr(value.descr))
        if isinstance(value, (frozenset, set)):
            return (type(value).__name__, tuple(sorted(repr(self.of(item)) for item in value)))
        if isinstance(value, (tuple, list)):
            kind = type(value).__name__ if type(value) in (tuple, list) else self._class(type(value))
            return (kind, tuple(self.of(item) for item in value))
        if isinstance(value, types.ModuleType):
            return ("module", value.__name__, getattr(value, "__version__", None))
        if isinstance(value, type):
            return self._class(value)
        stands_for = getattr(type(value), "__fingerprint__", None)
        if stands_for is not None:  # a value that says what it stands for (a module imported lazily, say)
            return ("stands for", self.of(stands_for(value)))
        if _numba_type(value):
            text = str(value)
            if "0x" in text:  # a type that names an object by its address: no two processes agree
                raise _Unknown(f"the Numba type {text}")
            return ("numba type", text)
        if isinstance(value, types.FunctionType):
            return self._function(value)
        py_func = vars(value).get("py_func") if hasattr(value, "__dict__") else None
        if isinstance(py_func, types.FunctionType):  # a Numba dispatcher, or the reader's lazy Kernel
            options = vars(value).get("options", vars(value).get("targetoptions", {}))
            return ("jitted", self._function(py_func), self.of(tuple(sorted(options.items()))))
        definition = getattr(value, "_defn", None)
        if isinstance(definition, types.FunctionType):  # a Numba intrinsic
            return ("intrinsic", self._function(definition))
        raise _Unknown(f"a {type(value).__module__}.{type(value).__qualname__} value")

    def _class(self, cls: type) -> tuple:
        if issubclass(cls, tuple) and hasattr(cls, "_fields"):  # a namedtuple: its name and fields
            return ("namedtuple", cls.__qualname__, cls._fields)
        if cls.__module__ in ("builtins", "numpy"):
            return ("class", cls.__module__, cls.__qualname__)
        raise _Unknown(f"the class {cls.__module__}.{cls.__qualname__}")

    def _function(self, func: types.FunctionType) -> tuple:
        if id(func) in self.seen:
            return ("function seen", func.__qualname__)
        self.seen[id(func)] = func
        code = func.__code__
        cells = tuple((name, self.of(cell.cell_contents))
                      for name, cell in zip(code.co_freevars, func.__closure__ or ()))
        return ("function", func.__qualname__, _code_key(code), self.of(func.__defaults__), cells,
                self.of_chains(_loaded_chains(code), func.__globals__))


#: An attribute a module lacks (the code would fail to compile; it has a key all the same).
_MISSING = type("_Missing", (), {"__repr__": lambda self: "<missing>"})()


def _numba_type(value: Any) -> bool:
    numba_types = sys.modules.get("numba.core.types")
    return numba_types is not None and isinstance(value, numba_types.Type)


__test__ = {"_loaded_chains": """
>>> sorted(_loaded_chains(compile("def f(x):\\n    return np.sum(x) + helpers.step(LIMIT)\\n", "", "exec")))
[('LIMIT',), ('helpers', 'step'), ('np', 'sum')]
"""}
