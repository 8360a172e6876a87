"""How a read names its columns where the header leaves a name empty or repeats one.

pyarrow keeps a header's fields as they are (``""`` and repeats included);
pandas names an empty field ``Unnamed: {position}`` and makes repeats
unique (``a``, ``a.1``, ...). Under ``semantics="pandas"`` the reader names
columns as pandas does, so ``usecols``, ``dtype``, ``index_col`` and the
other per-column keywords can use the names the DataFrame will have.
"""
from __future__ import annotations

import re
from typing import Any, Sequence

#: The names pandas makes up for empty header fields (with a repeat's suffix).
_UNNAMED = re.compile(r"Unnamed: \d+(?:\.\d+)*")
#: pyarrow's names for index levels without a name (a Table's pandas metadata lists them).
_INDEX_LEVEL = re.compile(r"__index_level_\d+__")
_TRAILING = re.compile(r"__trailing_\d+__")


def deduplicated(names: Sequence[str], unnamed: Sequence[int] = ()) -> list[str]:
    """Column names made unique as pandas makes a header's: a repeated ``a``
    becomes ``a.1``, then ``a.2``, skipping names the header already has;
    the columns at the positions in ``unnamed`` are renamed last, so named
    columns keep their names (pandas' ``mangle_dupe_names``).

    >>> deduplicated(["a", "a", "b", "a", "a.1"])
    ['a', 'a.2', 'b', 'a.3', 'a.1']
    >>> deduplicated(["Unnamed: 0", "Unnamed: 0"], unnamed=[0])
    ['Unnamed: 0.1', 'Unnamed: 0']
    """
    taken = set(names)
    out = list(names)
    counts: dict[str, int] = {}
    for i in [i for i in range(len(names)) if i not in set(unnamed)] + list(unnamed):
        name = names[i]
        count = counts.get(name, 0)
        counts[name] = count + 1
        if count:
            while f"{name}.{count}" in taken:
                count += 1
            counts[name] = count + 1
            out[i] = f"{name}.{count}"
            taken.add(out[i])
    return out


def pandas_header(fields: Sequence[str]) -> list[str]:
    """The names ``pandas.read_csv`` gives a header row's ``fields``: an empty
    field at position ``i`` is ``Unnamed: i``, then repeats are made unique
    (:func:`deduplicated`).

    >>> pandas_header(["", "a", "a", ""])
    ['Unnamed: 0', 'a', 'a.1', 'Unnamed: 3']
    """
    unnamed = [i for i, field in enumerate(fields) if field == ""]
    return deduplicated([f"Unnamed: {i}" if field == "" else field for i, field in enumerate(fields)], unnamed)


def is_unnamed(name: Any) -> bool:
    """Whether ``name`` is one pandas makes up for an empty header field: an
    index column of that name has no name (``None``) in pandas.

    >>> is_unnamed("Unnamed: 0"), is_unnamed("Unnamed: 2.1"), is_unnamed("id")
    (True, True, False)
    """
    return isinstance(name, str) and _UNNAMED.fullmatch(name) is not None


def is_index_level(name: Any) -> bool:
    """Whether ``name`` is an index level's column, named as pyarrow names an
    unnamed level (``__index_level_0__``, ...): the columns pandas' implicit
    index takes (:func:`implicit_index`).

    >>> is_index_level("__index_level_1__"), is_index_level("a")
    (True, False)
    """
    return isinstance(name, str) and _INDEX_LEVEL.fullmatch(name) is not None


def index_levels(names: Sequence[Any]) -> list[str]:
    """The index levels' columns among ``names`` (:func:`is_index_level`), in level order.

    >>> index_levels(["__index_level_10__", "a", "__index_level_2__"])
    ['__index_level_2__', '__index_level_10__']
    """
    return sorted((name for name in names if is_index_level(name)), key=lambda name: int(name[14:-2]))


def is_trailing(name: Any) -> bool:
    """Whether ``name`` is a field past the names that ``index_col=False`` reads (:func:`implicit_index`).

    >>> is_trailing("__trailing_2__"), is_trailing("a")
    (True, False)
    """
    return isinstance(name, str) and _TRAILING.fullmatch(name) is not None


def implicit_index(names: Sequence[str], fields: int, rule: Any) -> list[str]:
    """The file's column names where its first record has ``fields`` fields
    and ``names`` (the header's, or ``names=``) fewer, as ``pandas.read_csv``
    takes them. ``rule`` is how ``index_col`` says to read the extra fields:
    ``"leading"`` (``index_col=None``): the first ones are the index, levels
    named as :func:`is_index_level` knows them; ``"trailing"``
    (``index_col=False``): the last ones, which the frame leaves out
    (:func:`is_trailing`); positions (``index_col=[2, 0]``): those fields
    are the index, in that order, and the names go to the others.

    >>> implicit_index(["a", "b"], 3, "leading")
    ['__index_level_0__', 'a', 'b']
    >>> implicit_index(["a", "b"], 4, (2, 0))
    ['__index_level_1__', 'a', '__index_level_0__', 'b']
    >>> implicit_index(["a", "b"], 3, "trailing")
    ['a', 'b', '__trailing_2__']
    """
    extra = fields - len(names)
    if rule == "trailing":
        return [*names, *(f"__trailing_{position}__" for position in range(len(names), fields))]
    positions = range(extra) if rule == "leading" else rule
    if len(positions) != extra:  # pandas' words
        raise ValueError(f"Could not construct index. Requested to use {len(positions)} number of columns, "
                         f"but {extra} left to parse.")
    for position in positions:
        if not 0 <= position < fields:
            raise KeyError(position)  # as pandas: index_col names no field
    level = {position: i for i, position in enumerate(positions)}
    rest = iter(names)
    return [f"__index_level_{level[j]}__" if j in level else next(rest) for j in range(fields)]
