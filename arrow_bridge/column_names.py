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
