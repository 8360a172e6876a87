"""Compiled SSDlets kept on disk, so that a new process loads a program instead of compiling it.

Compiling an SSDlet puts its metered body, the StorageApp around it and every
kernel it calls through LLVM together: seconds for a small program, tens of
seconds for the reader's parse of a wide CSV file. A restarted notebook, a
test run or a benchmark would pay that again in every process. So the
StorageApp is compiled from a source file of its own, named by a fingerprint
of everything its machine code depends on, with Numba's own cache beside it
(``cfunc(cache=True)``): a second process with the same program finds the
file and loads the code Numba saved.

The fingerprint (:func:`fingerprint`) covers the generated source, and every
value the code refers to, followed through what those refer to: numbers,
strings and arrays by value, dtypes and Numba types by name, modules by name,
version and file, and functions (plain, Numba's, intrinsics) by the text of
their source file, their closure and, in turn, the globals they load. A value
of another kind may say what it stands for with a ``__fingerprint__()``
method. It ends
with Python's, NumPy's and Numba's versions; Numba's own index adds the CPU.
A value it does not know (a DataFrame a program's module holds, say) makes
the fingerprint ``None``: the program is compiled in the process, as it would
be without a cache, and never loaded stale.

Like Numba's ``cache=True``, the fingerprint sees a function's own file, not
the source of a compiled extension it calls.

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
import functools
import hashlib
import linecache
import os
import sys
import tempfile
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
        key = _Keys().of_names(source_text_names(source_text), namespace)
    except _Unknown as unknown:
        return None, str(unknown)
    import numba

    versions = (sys.version, np.__version__, numba.__version__)
    return hashlib.sha256(repr((source_text, key, versions)).encode()).hexdigest(), ""


def source_text_names(source_text: str) -> list[str]:
    """The global names the code of ``source_text`` loads (at any depth)."""
    return sorted(_loaded_globals(compile(source_text, "<fingerprint>", "exec")))


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
    app = compile_app(namespace[name], cache=True)  # a cfunc compiles, or loads, as it is made
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
    prune(folder)
    return app, "compiled"


def _in_process(source_text: str, name: str, namespace: dict[str, Any], compile_app: Callable[..., Any],
                why: str) -> tuple[Any, str]:
    exec(compile(source_text, f"<ssdlet {name}>", "exec"), namespace)  # our template, filled with checked names
    return compile_app(namespace[name], cache=False), f"compiled in this process ({why})"


def prune(folder: Path, limit_bytes: Optional[int] = None) -> int:
    """Deletes the programs used longest ago until the folder holds at most three
    quarters of ``limit_bytes`` (default ``$NDP_SSDLET_CACHE_MB``, 1024 MB), once it holds
    more; returns how many it deleted. A deleted program is compiled again when next used.

    >>> import tempfile
    >>> prune(Path(tempfile.mkdtemp()), limit_bytes=1)
    0
    """
    if limit_bytes is None:
        limit_bytes = int(float(os.environ.get("NDP_SSDLET_CACHE_MB", 1024)) * 2**20)
    programs: dict[str, list[os.DirEntry]] = {}
    for entry in [*_entries(folder), *_entries(folder / "__pycache__")]:
        programs.setdefault(entry.name.split(".")[0], []).append(entry)
    sizes = {stem: sum(e.stat().st_size for e in entries) for stem, entries in programs.items()}
    total = sum(sizes.values())
    if total <= limit_bytes:
        return 0
    last_used = {stem: max(e.stat().st_mtime for e in entries) for stem, entries in programs.items()}
    deleted = 0
    for stem in sorted(programs, key=last_used.__getitem__):
        if total <= limit_bytes * 3 // 4:
            break
        for entry in programs[stem]:
            with contextlib.suppress(FileNotFoundError):  # another process pruned it first
                os.unlink(entry.path)
        total -= sizes[stem]
        deleted += 1
    return deleted


def _entries(folder: Path) -> list[os.DirEntry]:
    try:
        return [entry for entry in os.scandir(folder) if entry.name.startswith("ssdlet_") and entry.is_file()]
    except FileNotFoundError:
        return []


def _source_file(folder: Path, digest: str, source_text: str) -> Path:
    """The file holding ``source_text``, written once: Numba's index stamps the file's
    time and size, so a file rewritten would throw its saved code away."""
    path = folder / f"ssdlet_{digest[:40]}.py"
    if path.exists():
        return path
    folder.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=folder, suffix=".tmp")
    with os.fdopen(handle, "w") as out:
        out.write(source_text)
    try:
        os.link(temporary, path)  # only the first writer's file stands; a later one finds it
    except FileExistsError:
        pass
    finally:
        os.unlink(temporary)
    return path


def _loaded_globals(code: types.CodeType) -> set[str]:
    names = {ins.argval for ins in dis.get_instructions(code) if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME")}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _loaded_globals(const)
    return names


@functools.lru_cache(maxsize=None)
def _file_digest(path: str, stamp: tuple) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _source_digest(code: types.CodeType) -> str:
    """The text of the file ``code`` came from (a generated one: its lines in ``linecache``)."""
    path = code.co_filename
    if os.path.isfile(path):
        stat = os.stat(path)
        return _file_digest(path, (stat.st_mtime_ns, stat.st_size))
    lines = linecache.getlines(path)
    if not lines:
        raise _Unknown(f"{code.co_name}, whose source ({path}) is not at hand")
    return hashlib.sha256("".join(lines).encode()).hexdigest()


class _Keys:
    """Fingerprints of values; a function seen before is named, not followed again
    (the order is fixed, so the same program gives the same fingerprint)."""

    def __init__(self) -> None:
        self.seen: set[int] = set()

    def of_names(self, names: list[str], namespace: Mapping[str, Any]) -> tuple:
        return tuple((name, self.of(namespace[name])) for name in names if name in namespace)

    def of(self, value: Any) -> Any:  # noqa: C901 - one case a kind, in the order they are met
        if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
            return (type(value).__name__, repr(value))
        if isinstance(value, enum.Enum):
            return ("enum", type(value).__qualname__, repr(value.value))
        if isinstance(value, np.ndarray):
            return ("array", value.dtype.str, value.shape, hashlib.sha256(np.ascontiguousarray(value)).hexdigest())
        if isinstance(value, np.generic):
            return ("scalar", value.dtype.str, repr(value.item()))
        if isinstance(value, np.dtype):
            return ("dtype", value.str, repr(value.descr))
        if isinstance(value, (tuple, list, frozenset)):
            items = sorted(value, key=repr) if isinstance(value, frozenset) else value
            return (type(value).__name__, tuple(self.of(item) for item in items))
        if isinstance(value, types.ModuleType):
            file = getattr(value, "__file__", None)
            digest = _file_digest(file, ()) if file and os.path.isfile(file) else None
            return ("module", value.__name__, getattr(value, "__version__", None), digest)
        if isinstance(value, type):
            return self._class(value)
        stands_for = getattr(type(value), "__fingerprint__", None)
        if stands_for is not None:  # a value that says what it stands for (a module imported lazily, say)
            return ("stands for", self.of(stands_for(value)))
        if _numba_type(value):
            return ("numba type", str(value))
        if isinstance(value, types.FunctionType):
            return self._function(value)
        py_func = vars(value).get("py_func") if hasattr(value, "__dict__") else None
        if isinstance(py_func, types.FunctionType):  # a Numba dispatcher, or the reader's lazy Kernel
            options = vars(value).get("options", vars(value).get("targetoptions", {}))
            return ("jitted", self._function(py_func), repr(sorted(options.items())))
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
        code = func.__code__
        if id(func) in self.seen:
            return ("function seen", func.__qualname__)
        self.seen.add(id(func))
        cells = tuple((name, self.of(cell.cell_contents))
                      for name, cell in zip(code.co_freevars, func.__closure__ or ()))
        return ("function", func.__qualname__, code.co_firstlineno, _source_digest(code),
                self.of(func.__defaults__), cells,
                self.of_names(sorted(_loaded_globals(code)), func.__globals__))


def _numba_type(value: Any) -> bool:
    numba_types = sys.modules.get("numba.core.types")
    return numba_types is not None and isinstance(value, numba_types.Type)


__test__ = {"source_text_names": """
>>> source_text_names("def f(x):\\n    return np.sum(x) + LIMIT\\n")
['LIMIT', 'np']
"""}
