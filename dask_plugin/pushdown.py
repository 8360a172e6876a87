"""Predicate pushdown: a Dask filter on a CSV collection becomes the reader's ``filters=``.

``ddf[(ddf.l_shipdate >= "1994-01-01") & (ddf.l_quantity < 24)]`` on a
``dask_plugin.read_csv`` collection is, after Dask's optimizer, one read per
partition with ``filters=[("l_shipdate", ">=", "1994-01-01"), ("l_quantity",
"<", 24)]``: rejected rows are dropped as each span is parsed, never built
into a pandas partition (and in the fused kernel, where they can be, never
stored: ``docs/pushdown.md``). The collection's expression is a
``FromMapProjectable`` (Dask's column projection, as ``dd.from_map`` gives)
that also absorbs a ``Filter`` above it, as Dask's parquet reader does.

A filter is pushed only where it gives the same rows: a comparison (``==``,
``<``, ``<=``, ``>``, ``>=``; ``&`` and ``|`` of those) of a column with a
number (an int or float64 column), a str (a string column) or a
``datetime.date`` (a date32 column). Not ``!=``: a missing value is NaN in a
NumPy column, where ``!=`` keeps it and Arrow's comparison drops it. Not a
date against text (``semantics="pandas"`` reads dates as text): the reader
would read the column as dates, a dtype the partitions do not have. Anything
else stays Dask's ``Filter``.
Values are the same; the index is not: like ``dd.read_parquet(filters=...)``,
each partition numbers its kept rows from 0.

>>> import dask_plugin, os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "t.csv")
>>> with open(path, "w") as f:
...     _ = f.write("a,b\\n" + "".join(f"{i},{'xy'[i % 2]}\\n" for i in range(100)))
>>> ddf = dask_plugin.read_csv(path)
>>> filtered = ddf[(ddf.a >= 90) & (ddf.b == "x")]
>>> pushed_filters(filtered)
[[('a', '>=', 90), ('b', '==', 'x')]]
>>> filtered.a.compute().tolist()
[90, 92, 94, 96, 98]
"""
from __future__ import annotations

import datetime
import math
from numbers import Integral, Real
from typing import Any, Optional

import pyarrow as pa


try:  # dask-expr inside dask (dask.dataframe.dask_expr): the expressions the optimizer rewrites
    from dask.dataframe.dask_expr._expr import EQ, GE, GT, LE, LT, And, Filter, Or, Projection
    from dask.dataframe.dask_expr.io import FromMapProjectable
except ImportError:  # an older dask: no pushdown, dd.from_map as before
    FromMapProjectable = None

DNF = list  # [[(column, op, value), ...], ...]: an OR of AND-groups


def csv_collection(func: Any, parts: list, meta: Any, label: str) -> Any:
    """The Dask DataFrame of ``func`` over ``parts`` (``dd.from_map``'s), whose
    ``Filter`` s Dask's optimizer pushes into ``func`` where it can."""
    import dask.dataframe as dd

    if FromMapProjectable is None:
        return dd.from_map(func, parts, meta=meta, divisions=None, label=label, enforce_metadata=False)
    from dask.dataframe.dask_expr import new_collection
    from dask.dataframe.dask_expr._expr import ArrowStringConversion
    from dask.dataframe.utils import pyarrow_strings_enabled

    result = new_collection(ReadCsv(func, [parts], None, [], {}, False, meta, False, None, label))
    return new_collection(ArrowStringConversion(result)) if pyarrow_strings_enabled() else result


def pushed_filters(collection: Any) -> Optional[DNF]:
    """The filters Dask's optimizer pushed into the reads of ``collection``
    (None: none), as the reader takes them."""
    found = [expr.func.filters for expr in collection.optimize(fuse=False).expr.walk() if isinstance(expr, ReadCsv)]
    return next((f for f in found if f is not None), None)


if FromMapProjectable is not None:
    _OPERATORS = {EQ: "==", LT: "<", LE: "<=", GT: ">", GE: ">="}

    class ReadCsv(FromMapProjectable):
        """``dd.from_map``'s projectable read, taking a ``Filter`` above it into
        its reader's ``filters=`` (:func:`filter_terms`)."""

        _filter_passthrough = True

        def _simplify_up(self, parent: Any, dependents: Any) -> Any:
            if isinstance(parent, Filter) and self._filter_passthrough_available(parent, dependents):
                terms = filter_terms(self, parent.predicate)
                if terms is not None:
                    return self.substitute_parameters({"func": self.func.with_filters(terms)})
            return super()._simplify_up(parent, dependents)

    def _exact_number(value: Any, floats: bool) -> bool:
        """Whether NumPy and Arrow compare ``value`` with a column's numbers alike:
        ints below 2**53 in magnitude (exact as float64 too, also where a NumPy
        partition holds an int column as float64 for its missing values, and
        never equal to a rounded larger value), and finite floats for a float64
        column (Arrow would cast an int column to float64 and refuse values past 2**53)."""
        if isinstance(value, Integral):
            return abs(int(value)) < 2 ** 53
        return floats and isinstance(value, Real) and math.isfinite(float(value))

    def filter_terms(read: "ReadCsv", predicate: Any) -> Optional[DNF]:
        """``predicate`` (a dask-expr expression) as the reader's DNF, or None
        where any part of it cannot be pushed exactly."""
        if isinstance(predicate, (And, Or)):
            left, right = filter_terms(read, predicate.left), filter_terms(read, predicate.right)
            if left is None or right is None:
                return None
            if isinstance(predicate, Or):
                return left + right
            return [a + b for a in left for b in right]
        op = _OPERATORS.get(type(predicate))
        if op is None:
            return None
        column, value = predicate.left, predicate.right
        if not (isinstance(column, Projection) and column.frame._name == read._name) or hasattr(value, "_name"):
            return None
        name = column.operand("columns")
        if not isinstance(name, str) or not _comparable(read, name, value):
            return None
        return [[(name, op, value.item() if hasattr(value, "item") else value)]]

    def _comparable(read: "ReadCsv", name: str, value: Any) -> bool:
        """Whether Arrow compares column ``name`` with ``value`` as pandas does
        on the partitions."""
        schema = read.func.schema
        if name not in schema.names or isinstance(value, bool):
            return False
        type_ = schema.field(name).type
        # Not float32: NumPy compares it with a Python float in float32, Arrow in float64.
        if pa.types.is_signed_integer(type_) or pa.types.is_float64(type_):
            return _exact_number(value, floats=pa.types.is_float64(type_))
        if pa.types.is_string(type_) or pa.types.is_large_string(type_):
            return isinstance(value, str)
        if pa.types.is_date32(type_):  # a date32[pyarrow] column and a date: the type the read already gives
            return isinstance(value, datetime.date) and not isinstance(value, datetime.datetime)
        return False
else:
    class ReadCsv:  # type: ignore[no-redef]
        """Not available without dask-expr in dask: nothing is ever one."""
