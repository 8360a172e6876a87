"""pandas' second try at a ``dtype`` its parser could not apply.

Where a value does not parse as the numeric or boolean dtype asked for,
pandas' C parser does not raise at once: it infers the column and casts the
result to that dtype where the cast is exact (``"1.0"`` as ``int64`` is 1,
``"True"`` as ``float64`` is 1.0, ``"1"`` as ``bool`` is True), and raises
"cannot safely convert passed user dtype of ..." where it is not. An
extension dtype (``Int64``, ``Float64``, ``boolean``) gets the column's text
(``Int64`` takes ``"1.0"`` as 1). ``read_pandas`` does the same after the
reader refused a value (:func:`read_again`): the column is read again,
inferred or as text, and the frame casts it (:func:`cast_as_pandas`).

>>> import numpy as np
>>> cast_as_pandas(pa.chunked_array([[1.0, 2.0]]), np.dtype("int64"), 0).tolist()
[1, 2]
"""
from __future__ import annotations

from typing import Any, Mapping, NamedTuple, Sequence

import numpy as np
import pyarrow as pa

from arrow_bridge.errors import CsvParseError


class Fallback(NamedTuple):
    """A column read again: the dtype asked, its position in the file, the reader's error."""

    wanted: Any
    position: int
    error: CsvParseError

    def apply(self, column: pa.ChunkedArray) -> Any:
        """The column cast as pandas casts it; where pandas' cast would fail too, the reader's
        error, or pandas' own where the value it fails on is another (a later chunk's)."""
        cast = cast_as_pandas(column, self.wanted, self.position)
        if cast is None:
            raise self._refusal(column)
        return cast

    def _refusal(self, column: pa.ChunkedArray) -> Exception:
        """pandas' error for text it cannot cast to an int or float dtype: the first value
        Python's ``int``/``float`` refuses; the reader's error (located) where it names that value."""
        convert = int if self.wanted.kind in "iu" else float if self.wanted.kind == "f" else None
        for value in column.to_pylist() if convert is not None else ():
            try:
                value is None or convert(value)
            except ValueError as refused:
                return self.error if repr(value) in (self.error.reason or "") else refused
        return self.error


def dtype_asked(dtype: Any, column: str) -> Any:
    """The pandas dtype ``dtype`` (the keyword, its positions already named) asks of ``column``:
    a numeric or boolean one the parser may fall back from, else None.

    >>> dtype_asked({"a": "Int64", "b": "string"}, "a"), dtype_asked("int8", "b"), dtype_asked({"b": "str"}, "b")
    (Int64Dtype(), dtype('int8'), None)
    """
    spec = dtype.get(column, dtype.get(None)) if isinstance(dtype, Mapping) else dtype
    if spec is None or isinstance(spec, pa.DataType):
        return None
    from pandas.api.types import pandas_dtype

    try:
        wanted = pandas_dtype(spec)
    except TypeError:  # a name only the reader knows ("timestamp[ms]")
        return None
    return wanted if getattr(wanted, "kind", None) in ("i", "u", "f", "b") else None


def read_again(options: dict[str, Any], column: str, wanted: Any, names: Sequence[str],
               as_text: bool = False) -> dict[str, Any]:
    """``options`` reading ``column`` again for a fallback to ``wanted`` (its :func:`dtype_asked`):
    inferred, or as text for an extension dtype or where ``as_text`` (:func:`falls_back_to_text`).
    ``names``: the file's columns (a single ``dtype`` for all of them becomes one per column).

    >>> read_again({"dtype": "int8"}, "a", np.dtype("int8"), ["a", "b"])
    {'dtype': {'b': 'int8'}}
    """
    dtype = options["dtype"]
    every = dtype.get(None) if isinstance(dtype, Mapping) else dtype  # (key None: every column not named)
    named = {key: kind for key, kind in dtype.items() if key is not None} if isinstance(dtype, Mapping) else {}
    per_column = {**({name: every for name in names} if every is not None else {}), **named}
    if as_text or _is_extension(wanted):
        per_column[column] = "string"  # pandas hands an extension dtype the text
    else:
        del per_column[column]  # inferred, then cast
    return {**options, "dtype": per_column}


def falls_back_to_text(wanted: Any, column: str, parse_dates: Any) -> bool:
    """Whether pandas' parser keeps the text of ``column`` where a value does not parse
    as ``wanted``: a NumPy dtype asked of a ``parse_dates`` column (pandas' "noconvert"
    columns), whose text the date parsing then reads. An extension dtype raises there.

    >>> falls_back_to_text(np.dtype("int64"), "d", ["d"]), falls_back_to_text(np.dtype("int64"), "d", True)
    (True, False)
    """
    return isinstance(parse_dates, (list, tuple)) and column in parse_dates and not _is_extension(wanted)


def cast_as_pandas(column: pa.ChunkedArray, wanted: Any, position: int) -> Any:
    """``column`` (the read again) as pandas casts it to ``wanted``: text through the
    extension dtype's own parser; inferred values only where the cast is exact.
    ``position``: the column's in the file, for pandas' message."""
    if _is_extension(wanted):
        texts = column.to_numpy(zero_copy_only=False)
        return wanted.construct_array_type()._from_sequence_of_strings(texts, dtype=wanted)
    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        return None  # not numbers: the reader's error stands, as pandas' cast of the text would raise
    if pa.types.is_null(column.type):  # a chunk without a value: as pandas reads it with the dtype itself
        if wanted.kind == "f":
            return np.full(len(column), np.nan, dtype=wanted)
        kind = "Bool" if wanted.kind == "b" else "Integer"
        raise ValueError(f"{kind} column has NA values in column {position}")  # pandas' words
    values = column.to_numpy(zero_copy_only=False)
    if pa.types.is_boolean(column.type):
        missing = column.is_null().to_numpy(zero_copy_only=False)
        if wanted.kind in "iu" and missing.any():
            raise ValueError(f"cannot safely convert passed user dtype of {wanted} for {np.bool_} dtyped data in "
                             f"column {position} due to NA values")  # pandas' words
        values = np.where(missing, np.nan, values).astype(np.float64) if missing.any() else values.astype(bool)
        if wanted.kind == "f":
            return values.astype(wanted)
    try:
        return values.astype(wanted, casting="safe")
    except TypeError:
        with np.errstate(invalid="ignore"):  # NaN or inf to int: the comparison below says so
            cast = values.astype(wanted)
        if (cast != values).any():
            raise ValueError(f"cannot safely convert passed user dtype of {wanted} for {values.dtype} dtyped data in "
                             f"column {position}") from None  # pandas' words
        return cast


def _is_extension(wanted: Any) -> bool:
    return not isinstance(wanted, np.dtype)
