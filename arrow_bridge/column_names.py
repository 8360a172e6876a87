"""How a read names its columns where the header leaves a name empty or repeats one.

pyarrow keeps a header's fields as they are (``""`` and repeats included);
pandas names an empty field ``Unnamed: {position}`` and makes repeats
unique (``a``, ``a.1``, ...). Under ``semantics="pandas"`` the reader names
columns as pandas does, so ``usecols``, ``dtype``, ``index_col`` and the
other per-column keywords can use the names the DataFrame will have.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Collection, Mapping, Sequence

import pyarrow as pa

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


def renamed_fields(fields: Sequence[str], names: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """``(name, field)`` for each header field :func:`pandas_header` renamed
    because it came before (empty fields are ``Unnamed`` instead).

    >>> renamed_fields(["a", "a", ""], pandas_header(["a", "a", ""]))
    (('a.1', 'a'),)
    """
    return tuple((name, field) for name, field in zip(names, fields) if field and name != field)


def unnamed_fields(fields: Sequence[str], names: Sequence[str]) -> tuple[str, ...]:
    """The names :func:`pandas_header` made up for empty header fields: an
    index column of such a name has no name (``None``) in pandas, while a
    header that spells ``Unnamed: 0`` itself keeps it.

    >>> unnamed_fields(["", "Unnamed: 1", ""], pandas_header(["", "Unnamed: 1", ""]))
    ('Unnamed: 0', 'Unnamed: 2')
    """
    return tuple(name for name, field in zip(names, fields) if field == "")


#: The schema metadata key naming the columns pandas' implicit index made up
#: (:func:`implicit_index`) and the header names it renamed: ``{"index": [levels,
#: in order], "trailing": [...], "renamed": [[name, field], ...]}``.
IMPLICIT_COLUMNS_KEY = b"arrow_bridge.implicit_columns"


@dataclass(frozen=True)
class ImplicitColumns:
    """The columns a read made up for fields past the names (:func:`implicit_index`):
    ``index``, the index levels in level order; ``trailing``, the fields
    ``index_col=False`` leaves out; and ``renamed``, the names pandas made up for a
    header field seen before (``("a.1", "a")``: :func:`renamed_fields`), which a
    ``dtype`` for that field also types; ``unnamed``, those it made up for empty
    header fields (:func:`unnamed_fields`). Kept in a Table's schema metadata, so
    that a header field spelled like one of them stays a column.

    >>> made = ImplicitColumns(index=("__index_level_0__",))
    >>> ImplicitColumns.of(pa.schema([("a", pa.int64())], metadata=made.metadata())) == made
    True
    """

    index: tuple[str, ...] = ()
    trailing: tuple[str, ...] = ()
    renamed: tuple[tuple[str, str], ...] = ()
    unnamed: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.index or self.trailing or self.renamed or self.unnamed)

    def metadata(self) -> dict[bytes, bytes]:
        made = {"index": self.index, "trailing": self.trailing, "renamed": self.renamed, "unnamed": self.unnamed}
        return {IMPLICIT_COLUMNS_KEY: json.dumps(made).encode()}

    @classmethod
    def of(cls, schema: pa.Schema) -> "ImplicitColumns":
        """Those named in ``schema``'s metadata (none without it)."""
        found = (schema.metadata or {}).get(IMPLICIT_COLUMNS_KEY)
        if found is None:
            return cls()
        made = json.loads(found)
        return cls(tuple(made["index"]), tuple(made["trailing"]), tuple(map(tuple, made.get("renamed", ()))),
                   tuple(made.get("unnamed", ())))

    def repeats_of(self, keyed: Mapping[Any, Any], own: Collection[Any]) -> dict[Any, Any]:
        """The entries ``keyed`` (a ``dtype`` dict) gives the names pandas made up for
        a repeated header field's repeats: the field's, where the repeat has no
        entry of its own (``own``: the names the user's dict gives one), as pandas types them.

        >>> ImplicitColumns(renamed=(("a.1", "a"), ("b.1", "b"))).repeats_of({"a": "Int8", "b": "str"}, ["b.1"])
        {'a.1': 'Int8'}
        """
        return {name: keyed[field] for name, field in self.renamed if field in keyed and name not in own}


def implicit_index(names: Sequence[str], fields: int, rule: Any) -> tuple[list[str], ImplicitColumns]:
    """The file's column names where its first record has ``fields`` fields
    and ``names`` (the header's, or ``names=``) fewer, as ``pandas.read_csv``
    takes them, and the ones made up. ``rule`` is how ``index_col`` says to
    read the extra fields: ``"leading"`` (``index_col=None``): the first ones
    are the index, levels named as pyarrow names unnamed ones; ``"trailing"``
    (``index_col=False``, or ``usecols`` naming as many columns as there are
    names): the last ones, which the frame leaves out; positions
    (``index_col=[2, 0]``): those fields are the index, in that order, and
    the names go to the others. A made-up name the header has gets ``_``
    appended until it is new.

    >>> names, made_up = implicit_index(["a", "b"], 3, "leading")
    >>> names, made_up.index
    (['__index_level_0__', 'a', 'b'], ('__index_level_0__',))
    >>> implicit_index(["a", "b"], 4, (2, 0))[0]
    ['__index_level_1__', 'a', '__index_level_0__', 'b']
    >>> implicit_index(["a", "__trailing_2__"], 3, "trailing")[0]
    ['a', '__trailing_2__', '__trailing_2___']
    """
    taken = set(names)

    def new(name: str) -> str:
        while name in taken:
            name += "_"
        taken.add(name)
        return name

    extra = fields - len(names)
    if rule == "trailing":
        trailing = tuple(new(f"__trailing_{position}__") for position in range(len(names), fields))
        return [*names, *trailing], ImplicitColumns(trailing=trailing)
    positions = range(extra) if rule == "leading" else rule
    if len(positions) != extra:  # pandas' words
        raise ValueError(f"Could not construct index. Requested to use {len(positions)} number of columns, "
                         f"but {extra} left to parse.")
    for position in positions:
        if not 0 <= position < fields:
            raise KeyError(position)  # as pandas: index_col names no field
    levels = tuple(new(f"__index_level_{i}__") for i in range(extra))
    level = {position: i for i, position in enumerate(positions)}
    rest = iter(names)
    return [levels[level[j]] if j in level else next(rest) for j in range(fields)], ImplicitColumns(index=levels)
