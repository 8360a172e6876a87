"""Integers past 64 bits, as pandas reads them: Python ints in an object column.

pandas' C parser tries int64, then uint64, for a column it infers; where both
overflow it makes Python ints of the text (``18446744073709551616`` is an
``int`` in an ``object`` column, with NumPy dtypes). Arrow has no type for
them: the reader keeps such a column as text and names it in the Table's
schema metadata (:func:`marked`), and ``read_pandas`` with NumPy dtypes makes
the Python ints (:func:`as_python_ints`). pandas' other backends keep text
(its pyarrow backend raises on them), as do we.

Which columns: those whose type the values decide, every value an integer
(``[+-]?digits``), where pandas' uint64 attempt overflows (a value past
2**64 - 1) or meets a negative one without a value past 2**63 - 1 beside it
(both: pandas keeps the text, "cannot convert to numerical dtype").

>>> column = pa.chunked_array([["1", None, "-9223372036854775809"]])
>>> reads_as_python_ints(column)
True
>>> reads_as_python_ints(pa.chunked_array([["-1", "18446744073709551615"]]))
False
"""
from __future__ import annotations

import json
from typing import Sequence

import pyarrow as pa  # pyarrow.compute is imported where it is used: ~50 ms of every start-up

#: The schema metadata key listing the columns to read as Python ints (a JSON list of names).
PYTHON_INTS_KEY = b"arrow_bridge.python_ints"

_INTEGER = r"^[+-]?[0-9]+$"
_INT64_MAX = 2**63 - 1
_UINT64_MAX = 2**64 - 1
_LOOKED_AT_FIRST = 64  # values checked before the whole column: text columns as a rule fail here


def reads_as_python_ints(column: pa.ChunkedArray) -> bool:
    """Whether pandas' C parser makes Python ints of ``column`` (text whose type its values decide)."""
    import pyarrow.compute as pc

    if not pa.types.is_string(column.type) or column.null_count == len(column):
        return False
    head = pc.all(pc.match_substring_regex(column.slice(0, _LOOKED_AT_FIRST), _INTEGER)).as_py()
    if head is False or not pc.all(pc.match_substring_regex(column, _INTEGER)).as_py():
        return False
    negative = above_int64 = False
    for text in column.drop_null().to_pylist():  # pandas' uint64 pass, in file order
        if text.startswith("-"):
            negative = True  # not parsed there: a negative value only marks the column signed
            continue
        value = int(text)
        if value > _UINT64_MAX:
            return True  # overflow: pandas stops and makes Python ints
        above_int64 |= value > _INT64_MAX
    return negative and not above_int64


def marked(schema: pa.Schema, names: Sequence[str]) -> pa.Schema:
    """``schema`` naming ``names`` in its metadata as columns of Python ints (itself without any).

    >>> marked(pa.schema([("a", pa.string())]), ["a"]).metadata
    {b'arrow_bridge.python_ints': b'["a"]'}
    """
    if not names:
        return schema
    return schema.with_metadata({**(schema.metadata or {}), PYTHON_INTS_KEY: json.dumps(list(names)).encode()})


def named(schema: pa.Schema) -> list[str]:
    """The columns ``schema``'s metadata names as Python ints (:func:`marked`)."""
    found = (schema.metadata or {}).get(PYTHON_INTS_KEY)
    return json.loads(found) if found is not None else []


def as_python_ints(values: Sequence[str | None]) -> list:
    """The texts as Python ints, a missing one NaN (pandas' missing value in an object column).

    >>> as_python_ints(["+7", None, "18446744073709551616"])
    [7, nan, 18446744073709551616]
    """
    return [float("nan") if text is None else int(text) for text in values]


def python_int_columns(table: pa.Table, columns: Sequence) -> list[str]:
    """The columns of ``table`` (one per plan in ``columns``, hidden ones left out)
    that pandas reads as Python ints: text whose type its values decided."""
    shown = [plan for plan in columns if not plan.hidden]
    return [name for name, plan, column in zip(table.column_names, shown, table.columns)
            if plan.typed_by_values and reads_as_python_ints(column)]
