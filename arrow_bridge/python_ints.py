"""Integers past int64, as pandas' C parser reads them.

pandas infers a column by trying int64, then uint64, then Python ints, then
float64, in an order its values decide (:func:`pandas_outcome`): each try
stops at the first value it cannot take, and what stopped it (an integer
past the type's range, or text that is no integer) picks the next try.
``18446744073709551616`` alone is a Python ``int`` in an ``object``
column; after ``1.5`` it is a float64 (the int64 try stopped at ``1.5``);
before ``1.5`` the column is text as written, ``NA`` spellings too (the
Python-int try stopped there, and pandas keeps the text unfiltered).

The kernels infer no type for such a column: the float rung refuses an
integer past int64 while inferring. The reader keeps the text, then settles
it as pandas would (``column_finish.settle_past_int64``): floats, or text
named in the Table's schema metadata as Python ints (:func:`marked`), which
``read_pandas`` with NumPy dtypes makes (:func:`as_python_ints`; its
nullable dtypes hold their text, its pyarrow backend raises on them, ours
keeps the text). A column pandas keeps as written is named in the metadata
too (:data:`AS_WRITTEN_KEY`); ``read_pandas`` reads it again without NA
spellings.

>>> column = pa.chunked_array([["1", None, "-9223372036854775809"]])
>>> pandas_outcome(column)
'python ints'
>>> pandas_outcome(pa.chunked_array([["1.5", "18446744073709551616"]]))
'floats'
>>> pandas_outcome(pa.chunked_array([["18446744073709551616", "1.5", None]]))
'text as written'
"""
from __future__ import annotations

import json
import re
from typing import Iterable, Literal, Optional, Sequence

import pyarrow as pa  # pyarrow.compute is imported where it is used: ~50 ms of every start-up

#: The schema metadata key listing the columns to read as Python ints (a JSON list of names).
PYTHON_INTS_KEY = b"arrow_bridge.python_ints"

#: The schema metadata key listing the columns whose missing values pandas keeps as their text.
AS_WRITTEN_KEY = b"arrow_bridge.text_as_written"

Outcome = Literal["python ints", "floats", "uint64", "text as written"]

#: C's ``isspace``: the blanks pandas' number parsers skip around a value.
C_SPACES = " \t\n\v\f\r"

_INT64 = range(-2**63, 2**63)
_UINT64_MAX = 2**64 - 1
_LOOKED_AT_FIRST = 64  # values looked through for the first one before the whole column
# pandas' integer parsers: spaces (C's isspace) around an optional sign and digits. Past the
# type's range, anything after the digits, spaces too, makes the value "not an integer" instead.
_INTEGER = re.compile(r"[ \t\n\v\f\r]*([+-]?[0-9]+)([ \t\n\v\f\r]*)\Z")
# Wider than pandas' numbers (a decimal comma, digit separators), never narrower: a first value
# that does not match is no number to pandas.
_NUMBER_LIKE = re.compile(r"\s*[+-]?([0-9.,_]*[0-9][0-9.,_]*([eE][+-]?[0-9]+)?|inf|infinity|nan)\s*\Z", re.IGNORECASE)
_PAST_INT64_LIKE = r"^[ \t\n\v\f\r]*[+-]?[0-9]{19,}$"  # an integer int64 may not hold


def pandas_outcome(column: pa.ChunkedArray) -> Optional[Outcome]:
    """What pandas' C parser makes of ``column``, the text of a column whose type its
    values decide and the kernels left text: ``"python ints"``, ``"floats"`` (where
    the float parser takes every value: the caller tries), ``"uint64"`` (the kernels
    refuse a value past int64 with a blank after it, which pandas' uint64 try takes
    once its int64 try stopped at an earlier one), ``"text as written"``
    (pandas gave up on numbers there and keeps every value's text, NA spellings and
    empty fields too) or None (text).

    >>> pandas_outcome(pa.chunked_array([["9223372036854775808", "-1"]]))  # signs conflict
    'text as written'
    >>> pandas_outcome(pa.chunked_array([["9223372036854775808", "-1.5"]]))  # '-': signed, unparsed
    'text as written'
    """
    import pyarrow.compute as pc

    if not pa.types.is_string(column.type) or column.null_count == len(column):
        return None
    # Where the column holds no integer past int64, or its first value is no number (pandas'
    # int and float tries stop there), pandas' inference is the kernels'.
    first = (column.slice(0, _LOOKED_AT_FIRST).drop_null() or column.drop_null())[0].as_py()
    if _NUMBER_LIKE.match(first) is None or pc.max(pc.binary_length(column)).as_py() < 19 \
            or not pc.any(pc.match_substring_regex(column, _PAST_INT64_LIKE)).as_py():
        return None
    texts = column.to_pylist()
    stopped = _int64_try(texts)
    if stopped == "overflow":
        stopped = _uint64_try(texts)
        if stopped is None:
            return "uint64"
    if stopped == "not an integer":
        return "floats"
    if stopped == "overflow" and _all_python_ints(texts):
        return "python ints"
    return "text as written" if stopped in ("overflow", "conflict") else None


def _int64_try(texts: Iterable[Optional[str]]) -> Optional[str]:
    """What stops pandas' int64 try, in file order: "overflow", "not an integer", or None."""
    for text in texts:
        if text is not None and (stop := _integer_stop(text, _INT64)) is not None:
            return stop
    return None


def _uint64_try(texts: Sequence[Optional[str]]) -> Optional[str]:
    """What stops pandas' uint64 try: "not an integer", "overflow" (also where a negative
    value alone marks the column signed: pandas makes Python ints), "conflict" (a value
    past int64 beside a negative or a missing one: pandas keeps the text), or None."""
    negative = missing = past_int64 = False
    for text in texts:
        if text is None:
            missing = True
        elif text.lstrip(" \t\n\v\f\r").startswith("-"):
            negative = True  # pandas' uint64 parser reads no further than the sign
        elif (stop := _integer_stop(text, range(_UINT64_MAX + 1))) is not None:
            return stop
        else:
            past_int64 |= int(text) >= 2**63
    if past_int64 and (negative or missing):
        return "conflict"
    return "overflow" if negative else None


def _integer_stop(text: str, fits: range) -> Optional[str]:
    """Why pandas' integer parser for ``fits`` refuses ``text``, or None where it takes it."""
    match = _INTEGER.match(text)
    if match is None:
        return "not an integer"
    if int(match[1]) in fits:
        return None
    return "not an integer" if match[2] else "overflow"


def _all_python_ints(texts: Iterable[Optional[str]]) -> bool:
    """Whether Python's ``int`` takes every value, as pandas' Python-int try does."""
    try:
        for text in texts:
            if text is not None:
                int(text)
    except ValueError:
        return False
    return True


def marked(schema: pa.Schema, names: Sequence[str], key: bytes = PYTHON_INTS_KEY) -> pa.Schema:
    """``schema`` naming ``names`` in its metadata as columns of Python ints, or under
    ``key`` (itself without any).

    >>> marked(pa.schema([("a", pa.string())]), ["a"]).metadata
    {b'arrow_bridge.python_ints': b'["a"]'}
    """
    if not names:
        return schema
    return schema.with_metadata({**(schema.metadata or {}), key: json.dumps(list(names)).encode()})


def named(schema: pa.Schema, key: bytes = PYTHON_INTS_KEY) -> list[str]:
    """The columns ``schema``'s metadata names as Python ints (:func:`marked`), or under ``key``."""
    found = (schema.metadata or {}).get(key)
    return json.loads(found) if found is not None else []


def uint64_conflict(column: pa.ChunkedArray) -> bool:
    """Whether pandas keeps ``column`` (uint64, its type decided by its values) as text
    as written: a missing value beside one past int64 (pandas' "uint64 conflict").

    >>> uint64_conflict(pa.chunked_array([[2**63, None]], pa.uint64()))
    True
    """
    import pyarrow.compute as pc

    return column.type == pa.uint64() and column.null_count > 0 and (pc.max(column).as_py() or 0) >= 2**63


def as_python_ints(values: Sequence[str | None]) -> list:
    """The texts as Python ints, a missing one NaN (pandas' missing value in an object column).

    >>> as_python_ints(["+7", None, "18446744073709551616"])
    [7, nan, 18446744073709551616]
    """
    return [float("nan") if text is None else int(text) for text in values]
