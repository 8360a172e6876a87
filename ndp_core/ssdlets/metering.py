"""A work budget for SSDlet code: every loop iteration spends one unit of fuel.

A device program that loops forever must be stopped, not wait out the host.
Native code cannot be interrupted safely from outside, so the program meters
itself, the way WebAssembly runtimes meter "fuel": before compiling, each
``for``/``while`` body of the SSDlet's function gets a decrement of a fuel
counter the runtime refills on every call, and a raise when it runs out. The
check is one subtraction and one compare per iteration. Functions the SSDlet
calls are not rewritten: their loops run unmetered (docs/ssdlets.md).

>>> def count_up(p):
...     n = 0
...     while True:
...         n += 1
>>> print(metered_source(count_up).strip())
def count_up(p, _ndp_fuel):
    n = 0
    while True:
        _ndp_fuel[0] -= 1
        if _ndp_fuel[0] < 0:
            raise RuntimeError('SSDlet work budget used up')
        n += 1
"""
from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Callable

__all__ = ["FUEL", "metered_source", "metered_function"]

#: The name of the fuel argument the rewrite adds (a one-element int64 array).
FUEL = "_ndp_fuel"

_SPEND = ast.parse(f"""
{FUEL}[0] -= 1
if {FUEL}[0] < 0:
    raise RuntimeError('SSDlet work budget used up')
""").body


class _Meter(ast.NodeTransformer):
    """Prepends the fuel check to every loop body of the function ``root``."""

    def __init__(self, root: ast.FunctionDef) -> None:
        self.root = root

    def visit_loop(self, node: ast.AST) -> ast.AST:
        self.generic_visit(node)
        node.body = [*_SPEND, *node.body]
        return node

    visit_For = visit_While = visit_loop

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        if node is not self.root:
            raise TypeError(f"SSDlet {self.root.name!r}: define helper functions outside the SSDlet "
                            f"(found def {node.name} inside it)")
        self.generic_visit(node)
        return node


def _function_tree(func: Callable) -> ast.FunctionDef:
    try:
        source = textwrap.dedent(inspect.getsource(func))
    except (OSError, TypeError) as e:
        raise TypeError(f"SSDlet {func.__name__!r}: its source is needed to meter its loops ({e})") from None
    tree = ast.parse(source).body[0]
    ast.increment_lineno(tree, func.__code__.co_firstlineno - 1)  # errors point at the user's lines
    if not isinstance(tree, ast.FunctionDef):
        raise TypeError(f"SSDlet {func.__name__!r} must be a plain def function")
    if len(tree.args.args) != 1 or tree.args.vararg or tree.args.kwarg or tree.args.kwonlyargs:
        raise TypeError(f"SSDlet {func.__name__!r} takes one argument (its ports, args and state), "
                        f"not ({ast.unparse(tree.args)})")
    return tree


def metered_tree(func: Callable) -> ast.FunctionDef:
    """``func``'s definition with metered loops, no decorators, and the fuel argument."""
    tree = _function_tree(func)
    tree = _Meter(tree).visit(tree)
    tree.decorator_list = []
    tree.args.args.append(ast.arg(arg=FUEL))
    return ast.fix_missing_locations(tree)


def metered_source(func: Callable) -> str:
    """The metered rewrite of ``func`` as source text (for reading; see module doc)."""
    return ast.unparse(metered_tree(func)) + "\n"


def metered_function(func: Callable) -> Callable:
    """The metered rewrite of ``func`` as a Python function over the same
    globals and closure values (Numba compiles it next)."""
    tree = metered_tree(func)
    namespace = dict(func.__globals__)
    namespace.update(inspect.getclosurevars(func).nonlocals)
    code = compile(ast.Module(body=[tree], type_ignores=[]), inspect.getsourcefile(func) or "<ssdlet>", "exec")
    exec(code, namespace)  # our own rewrite of the caller's function, not loaded text
    return namespace[tree.name]
