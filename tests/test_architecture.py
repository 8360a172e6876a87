"""The packages' import structure, checked from the source with ``ast`` so it stays as documented.

* No import cycles between the modules of the five packages.
* Layers point down only: ``ndp_core <- device_emulator <- arrow_bridge <- cuda_p2p <- dask_plugin``.
  A package imports its own modules and those of lower layers, never a higher
  or a same-layer one. ``dask_plugin`` sits above ``cuda_p2p``: its partitions can live in GPU memory.
* No single-letter import aliases (``import x.y as K``), in packages, tests and benchmarks.
* No private name (``_name``, not ``__dunder__``) taken from another module of the
  packages, by import or by attribute (``module._name``); shared helpers belong in an
  explicitly internal module with public names. A private *module* (``pkg._core``)
  may be imported inside the package that holds it.
* Every package folder is listed in ``pyproject.toml`` (an editable install hides
  a missing one) and is a pytest test path (``--doctest-modules`` runs its
  docstring examples); no example is hidden behind ``# doctest: +SKIP``.

Every import counts, wherever it stands: function bodies, ``try`` blocks, and
``if TYPE_CHECKING:`` blocks too. A type-only import never runs, but it is a
dependency all the same (the module is written against the other's types), and
putting one half of a cycle under ``TYPE_CHECKING`` or in a function body hides the
cycle from the interpreter, not from the reader of the code; messages mark such
imports ``[TYPE_CHECKING]``. ``from x import y`` where ``y`` is a module imports
``x.y``. Only static imports are seen (``importlib.import_module`` is not).

The checker is tested on small packages written to a temporary directory
(``test_checker_*``), so a clean run on the real packages means something.
"""
from __future__ import annotations

import ast
import re
import sys
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]

# Layer of each top-level package: a package may import only packages of a lower layer.
LAYERS = {"ndp_core": 0, "device_emulator": 1, "arrow_bridge": 2, "cuda_p2p": 3, "dask_plugin": 4}
PACKAGES = tuple(LAYERS)
# Trees whose imports are checked for single-letter aliases besides the packages.
OTHER_CODE = ("tests", "benchmarks")


@dataclass(frozen=True)
class Import:
    """One name an import statement binds, resolved against the packages' modules."""

    importer: str  # the module holding the statement
    file: str  # its file, relative to the repository
    line: int
    statement: str  # the statement as written (normalized by ast.unparse)
    target: str  # the module imported, or the module the name is taken from
    name: str | None  # the name taken from ``target`` when it is not a module
    alias: str  # the name the statement binds (``as`` name, or the imported one)
    bound_module: str | None  # the module ``alias`` names, when it names one (``import a.b`` binds ``a``)
    type_only: bool  # under ``if TYPE_CHECKING:``

    def where(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class PrivateAccess:
    """``module._name`` in code: a private name reached through an imported module."""

    importer: str
    file: str
    line: int
    expression: str
    module: str
    name: str


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def module_names(root: Path, packages: tuple[str, ...]) -> dict[str, Path]:
    """Every module of ``packages`` under ``root`` (``.py`` files and compiled extensions) -> its file."""
    modules: dict[str, Path] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*")):
            if path.suffix == ".py":
                parts = path.relative_to(root).with_suffix("").parts
                if parts[-1] == "__init__":
                    parts = parts[:-1]
            elif path.suffix in (".so", ".pyd"):  # pkg/_core.cpython-311-x86_64-linux-gnu.so -> pkg._core
                parts = (*path.relative_to(root).parent.parts, path.name.split(".")[0])
            else:
                continue
            if "__pycache__" not in parts:
                modules[".".join(parts)] = path
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


class _ImportCollector(ast.NodeVisitor):
    def __init__(self, module: str, file: str, is_package: bool, modules: dict[str, Path]):
        self.module, self.file, self.modules = module, file, modules
        self.package = module if is_package else module.rpartition(".")[0]
        self.imports: list[Import] = []
        self._type_only = 0

    def visit_If(self, node: ast.If) -> None:
        if not _is_type_checking(node.test):
            self.generic_visit(node)
            return
        self._type_only += 1
        for statement in node.body:
            self.visit(statement)
        self._type_only -= 1
        for statement in node.orelse:
            self.visit(statement)

    def _add(self, node: ast.stmt, target: str, name: str | None, alias: str, bound_module: str | None) -> None:
        self.imports.append(Import(self.module, self.file, node.lineno, ast.unparse(node), target, name, alias,
                                   bound_module, self._type_only > 0))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.asname:
                self._add(node, alias.name, None, alias.asname, alias.name)
            else:
                top = alias.name.split(".")[0]
                self._add(node, alias.name, None, top, top)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            base_parts = self.package.split(".")[: len(self.package.split(".")) - (node.level - 1)]
            base = ".".join(base_parts + ([node.module] if node.module else []))
        else:
            base = node.module or ""
        for alias in node.names:
            submodule = f"{base}.{alias.name}"
            if submodule in self.modules:
                self._add(node, submodule, None, alias.asname or alias.name, submodule)
            else:
                self._add(node, base, alias.name, alias.asname or alias.name, None)


def _attribute_chain(node: ast.Attribute) -> list[str] | None:
    """``a.b.c`` -> ["a", "b", "c"]; None when the chain does not start at a plain name."""
    chain = []
    current: ast.expr = node
    while isinstance(current, ast.Attribute):
        chain.append(current.attr)
        current = current.value
    if not isinstance(current, ast.Name):
        return None
    chain.append(current.id)
    return chain[::-1]


@dataclass
class Codebase:
    """The import facts of a set of packages, read from their source."""

    modules: dict[str, Path]
    imports: list[Import]
    private_accesses: list[PrivateAccess]

    @classmethod
    def scan(cls, root: Path, packages: tuple[str, ...]) -> "Codebase":
        modules = module_names(root, packages)
        imports: list[Import] = []
        accesses: list[PrivateAccess] = []
        for module, path in modules.items():
            if path.suffix != ".py":
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            file = path.relative_to(root).as_posix()
            collector = _ImportCollector(module, file, path.name == "__init__.py", modules)
            collector.visit(tree)
            imports += collector.imports
            accesses += _private_accesses(module, file, tree, collector.imports, modules)
        return cls(modules, imports, accesses)

    def resolve(self, dotted: str) -> str | None:
        """The packages' module ``dotted`` names, or the longest known prefix of it; None if outside."""
        parts = dotted.split(".")
        for end in range(len(parts), 0, -1):
            if ".".join(parts[:end]) in self.modules:
                return ".".join(parts[:end])
        return None

    def internal_imports(self) -> list[Import]:
        """Imports whose target is one of the packages' modules."""
        return [imp for imp in self.imports if self.resolve(imp.target) is not None]


def _private_accesses(module: str, file: str, tree: ast.AST, imports: list[Import],
                      modules: dict[str, Path]) -> list[PrivateAccess]:
    # Names bound to one of the packages' modules, wherever in the file the import stands.
    bound = {imp.alias: imp.bound_module for imp in imports if imp.bound_module in modules}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        chain = _attribute_chain(node)
        if not chain or chain[0] not in bound:
            continue
        current = bound[chain[0]]
        for attr in chain[1:]:
            if f"{current}.{attr}" in modules:
                current = f"{current}.{attr}"
                continue
            if is_private(attr) and current != module:
                found.append(PrivateAccess(module, file, node.lineno, ast.unparse(node), current, attr))
            break
    # `a._b.c` is found from both `a._b.c` and `a._b`: keep one per place.
    return list({(a.line, a.module, a.name): a for a in found}.values())


# ----------------------------------------------------------------------------- checks


def import_cycles(codebase: Codebase) -> list[list[Import]]:
    """One cycle (as the imports that make it) per strongly connected group of modules."""
    edges: dict[str, dict[str, Import]] = {module: {} for module in codebase.modules}
    for imp in codebase.internal_imports():
        target = codebase.resolve(imp.target)
        if target == imp.importer:
            continue
        edges[imp.importer].setdefault(target, imp)  # the first statement that makes the edge

    cycles = []
    for group in _strongly_connected(edges):
        if len(group) < 2:
            continue
        start = min(group)
        cycles.append(_shortest_cycle(start, edges, set(group)))
    return cycles


def _strongly_connected(edges: dict[str, dict[str, Import]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative (no recursion limit to worry about)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                groups.append(sorted(group))
    return groups


def _shortest_cycle(start: str, edges: dict[str, dict[str, Import]], group: set[str]) -> list[Import]:
    previous: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for child in sorted(edges[node]):
            if child not in group:
                continue
            if child == start:
                path = [edges[node][start]]
                while node != start:
                    path.append(edges[previous[node]][node])
                    node = previous[node]
                return path[::-1]
            if child not in previous:
                previous[child] = node
                queue.append(child)
    raise AssertionError(f"{start} is in a strongly connected group but on no cycle")


def layer_violations(codebase: Codebase, layers: dict[str, int]) -> list[str]:
    problems = []
    for imp in codebase.internal_imports():
        own, other = imp.importer.split(".")[0], imp.target.split(".")[0]
        if own == other or layers[other] < layers[own]:
            continue
        allowed = sorted(p for p in layers if layers[p] < layers[own]) or ["none of the other packages"]
        problems.append(f"{imp.where()}: {imp.importer} imports {imp.target} (`{imp.statement}`)"
                        f"{' [TYPE_CHECKING]' if imp.type_only else ''}; {own} may import only "
                        f"{', '.join(allowed)}")
    return problems


def _private_owner(module: str) -> str | None:
    """The package a private module belongs to (``pkg`` for ``pkg._core.x``); None if nothing in it is private."""
    parts = module.split(".")
    for depth, part in enumerate(parts):
        if is_private(part):
            return ".".join(parts[:depth]) or part
    return None


def private_name_violations(codebase: Codebase) -> list[str]:
    problems = []
    for imp in codebase.internal_imports():
        owner = _private_owner(imp.target)
        if owner is not None and imp.importer != owner and not imp.importer.startswith(owner + "."):
            problems.append(f"{imp.where()}: {imp.importer} imports {imp.target}, private to {owner} "
                            f"(`{imp.statement}`)")
        elif imp.name is not None and is_private(imp.name) and imp.target != imp.importer:
            problems.append(f"{imp.where()}: {imp.importer} imports private {imp.name} from {imp.target} "
                            f"(`{imp.statement}`)")
    for access in codebase.private_accesses:
        problems.append(f"{access.file}:{access.line}: {access.importer} uses private {access.name} of "
                        f"{access.module} (`{access.expression}`)")
    return problems


def single_letter_aliases(root: Path, trees: tuple[str, ...]) -> list[str]:
    problems = []
    for tree_name in trees:
        for path in sorted((root / tree_name).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    for alias in node.names:
                        if alias.asname is not None and len(alias.asname) == 1:
                            problems.append(f"{path.relative_to(root).as_posix()}:{node.lineno}: "
                                            f"one-letter alias {alias.asname} (`{ast.unparse(node)}`)")
    return problems


def _format_cycle(cycle: list[Import]) -> str:
    modules = " -> ".join([imp.importer for imp in cycle] + [cycle[0].importer])
    steps = "\n".join(f"    {imp.where()}: {imp.importer}: `{imp.statement}`"
                      f"{' [TYPE_CHECKING]' if imp.type_only else ''}" for imp in cycle)
    return f"  {modules}\n{steps}"


# ----------------------------------------------------------------------------- the real packages


@pytest.fixture(scope="module")
def codebase() -> Codebase:
    return Codebase.scan(ROOT, PACKAGES)


def test_no_import_cycles(codebase):
    cycles = import_cycles(codebase)
    if cycles:
        pytest.fail("import cycles (then, per step, file:line: module: the import that makes it):\n"
                    + "\n".join(_format_cycle(cycle) for cycle in cycles), pytrace=False)


def test_layers_point_down(codebase):
    problems = layer_violations(codebase, LAYERS)
    if problems:
        pytest.fail("imports against the layers (ndp_core <- device_emulator <- arrow_bridge <- cuda_p2p <- "
                    "dask_plugin):\n" + "\n".join(problems), pytrace=False)


def test_no_private_names_across_modules(codebase):
    problems = private_name_violations(codebase)
    if problems:
        pytest.fail("private names used outside their module:\n" + "\n".join(problems), pytrace=False)


def test_no_single_letter_aliases():
    problems = single_letter_aliases(ROOT, PACKAGES + OTHER_CODE)
    if problems:
        pytest.fail("single-letter aliases:\n" + "\n".join(problems), pytrace=False)


def test_every_package_has_a_layer_is_installed_and_runs_its_doctests(codebase):
    """A new top-level package must get a layer here, every package folder must
    be installed (an editable install hides a missing one), and the doctests of
    every package must be collected by ``pytest``."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    installed = set(config["tool"]["setuptools"]["packages"])
    assert {name.split(".")[0] for name in installed} == set(LAYERS)
    folders = {module for module, path in codebase.modules.items() if path.name == "__init__.py"}
    assert folders == installed, (f"[tool.setuptools] packages misses {sorted(folders - installed)}, "
                                  f"lists no package {sorted(installed - folders)}")
    pytest_options = config["tool"]["pytest"]["ini_options"]
    assert set(PACKAGES) <= set(pytest_options["testpaths"])
    assert "--doctest-modules" in pytest_options["addopts"].split()


def test_no_docstring_example_is_skipped(codebase):
    """``# doctest: +SKIP`` hides an example that may no longer run; every example runs instead."""
    skip = re.compile(r"#\s*doctest:.*\+SKIP")
    problems = [f"{path.relative_to(ROOT).as_posix()}:{number}: {line.strip()}"
                for path in codebase.modules.values() if path.suffix == ".py"
                for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                if skip.search(line)]
    if problems:
        pytest.fail("skipped docstring examples:\n" + "\n".join(problems), pytrace=False)


def test_the_scan_sees_the_packages(codebase):
    """Guards against a vacuous pass: every package has modules and the known downward imports are seen."""
    for package in PACKAGES:
        assert package in codebase.modules
    edges = {(imp.importer.split(".")[0], imp.target.split(".")[0]) for imp in codebase.internal_imports()}
    assert {("device_emulator", "ndp_core"), ("arrow_bridge", "ndp_core"), ("dask_plugin", "arrow_bridge")} <= edges


# ----------------------------------------------------------------------------- the checker itself


def _write_packages(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_checker_finds_cycles_through_function_level_and_submodule_imports(tmp_path):
    _write_packages(tmp_path, {
        "low/__init__.py": "",
        "low/a.py": "def f():\n    from low import b\n",  # `from package import submodule` imports low.b
        "low/b.py": "import low.c\n",
        "low/c.py": "from .a import f\n",  # relative import of low.a
        "low/d.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from low.e import g\n",
        "low/e.py": "from low.d import h\n",  # d -> e is type-only: a cycle all the same
        "low/f.py": "import low.a\nimport numpy\n",  # into a cycle, not on one
    })
    cycles = import_cycles(Codebase.scan(tmp_path, ("low",)))
    assert [[imp.importer for imp in cycle] for cycle in cycles] == [["low.a", "low.b", "low.c"], ["low.d", "low.e"]]
    assert [imp.line for imp in cycles[0]] == [2, 1, 1]
    assert "low/a.py:2: low.a: `from low import b`" in _format_cycle(cycles[0])
    assert "low/d.py:3: low.d: `from low.e import g` [TYPE_CHECKING]" in _format_cycle(cycles[1])


def test_checker_finds_upward_and_same_layer_imports(tmp_path):
    _write_packages(tmp_path, {
        "low/__init__.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import high.x\n",
        "mid/__init__.py": "import low\n",
        "high/__init__.py": "",
        "high/x.py": "from low import thing\nfrom mid import other\n",
        "side/__init__.py": "def f():\n    import high.x as hx\n",
    })
    problems = layer_violations(Codebase.scan(tmp_path, ("low", "mid", "high", "side")),
                                {"low": 0, "mid": 1, "high": 2, "side": 2})
    assert len(problems) == 2
    assert problems[0].startswith("low/__init__.py:3: low imports high.x (`import high.x`) [TYPE_CHECKING]")
    assert problems[1].startswith("side/__init__.py:2: side imports high.x (`import high.x as hx`)")
    assert problems[1].endswith("side may import only low, mid")


def test_checker_finds_private_names_and_aliases(tmp_path):
    _write_packages(tmp_path, {
        "pkg/__init__.py": "from pkg._internal import helper\n",  # a private module inside its package: fine
        "pkg/_internal.py": "def helper(): pass\ndef _secret(): pass\n__version__ = '1'\n",
        "pkg/a.py": "from pkg._internal import _secret, __version__\n",
        "pkg/b.py": "import pkg._internal\nfrom pkg import _internal as I\n"
                    "x = pkg._internal._secret\ny = I._secret()\nz = I.__doc__\n",
        "other/__init__.py": "from pkg import _internal\n",
    })
    problems = private_name_violations(Codebase.scan(tmp_path, ("pkg", "other")))
    assert sorted(p.split(" (")[0] for p in problems) == [
        "other/__init__.py:1: other imports pkg._internal, private to pkg",
        "pkg/a.py:1: pkg.a imports private _secret from pkg._internal",
        "pkg/b.py:3: pkg.b uses private _secret of pkg._internal",
        "pkg/b.py:4: pkg.b uses private _secret of pkg._internal",
    ]
    assert single_letter_aliases(tmp_path, ("pkg",)) == [
        "pkg/b.py:2: one-letter alias I (`from pkg import _internal as I`)"]
