"""Row filters (``read_csv(filters=...)``): which rows a read keeps, decided span by span.

A filter is what ``pyarrow.parquet``/``pyarrow.dataset`` users already write:
a DNF list (``[("l_shipdate", "<=", date(1998, 9, 2))]`` is one AND-group,
``[[...], [...]]`` ORs groups) or a ``pyarrow.compute.Expression``. The
reader evaluates it on each span's columns as soon as the span is checked and
keeps the matching rows only, so rejected rows are not held, not assembled and
(on a device) not sent over the link. A row is kept where the filter is true:
false and null drop it, as ``Table.filter`` does, so the result equals reading
everything and filtering with ``pyarrow.compute``.

DNF operators: ``=``/``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=``, ``in``,
``not in`` (pyarrow's, with its meaning: ``not in`` keeps nulls), plus
``is null``, ``is not null`` (no value, or None), and for strings
``starts with``, ``ends with``, ``contains``.

>>> from datetime import date
>>> f = RowFilter([("d", "<=", date(1998, 9, 2)), ("flag", "in", ["A", "R"])])
>>> f.columns
('d', 'flag')
>>> print(f.expression)
((d <= 1998-09-02) and is_in(flag, {value_set=string:[
  "A",
  "R"
], null_matching_behavior=MATCH}))
"""
from __future__ import annotations

import datetime
import math
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence, Union

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

Filters = Union[pc.Expression, Sequence[Any]]

_COMPARISONS = {"=": "equal", "==": "equal", "!=": "not_equal", "<": "less", "<=": "less_equal",
                ">": "greater", ">=": "greater_equal"}
_STRING_TESTS = {"starts with": "starts_with", "ends with": "ends_with", "contains": "match_substring"}
_SET_TESTS = ("in", "not in")
_NULL_TESTS = ("is null", "is not null")
OPERATORS = (*_COMPARISONS, *_SET_TESTS, *_NULL_TESTS, *_STRING_TESTS)


class FilterError(pa.ArrowInvalid):
    """A filter that cannot be applied: a malformed DNF term, an unknown column, a
    value the column cannot be compared with. A ``pyarrow.ArrowInvalid`` (so a
    ``ValueError``), as pyarrow's own error filtering the Table would be."""


@dataclass(frozen=True)
class Predicate:
    """One DNF term: ``(column, op, value)``."""

    column: str
    op: str
    value: Any = None

    @classmethod
    def parse(cls, term: Any) -> "Predicate":
        """A term as written: ``(column, op, value)`` or ``(column, "is null")``.

        >>> Predicate.parse(("x", "is not null"))
        Predicate(column='x', op='is not null', value=None)
        >>> Predicate.parse(("x", "~", 1))
        Traceback (most recent call last):
        ...
        arrow_bridge.filters.FilterError: filters: unknown operator '~' in ('x', '~', 1); use one of =, ==, !=, <, \
<=, >, >=, in, not in, is null, is not null, starts with, ends with, contains
        """
        if not isinstance(term, (tuple, list)) or len(term) not in (2, 3) or not isinstance(term[0], str):
            raise FilterError(f"filters: each term is (column, op, value) or (column, 'is null'), got {term!r}")
        column, op, value = term[0], str(term[1]).lower(), term[2] if len(term) == 3 else None
        if op not in OPERATORS:
            raise FilterError(f"filters: unknown operator {term[1]!r} in {tuple(term)!r}; use one of "
                              f"{', '.join(OPERATORS)}")
        if op in _NULL_TESTS and value is not None:
            raise FilterError(f"filters: {tuple(term)!r}: {op!r} takes no value")
        if op not in _NULL_TESTS and len(term) == 2:
            raise FilterError(f"filters: {tuple(term)!r}: {op!r} needs a value")
        if op in _SET_TESTS and (isinstance(value, (str, bytes)) or not hasattr(value, "__iter__")):
            raise FilterError(f"filters: {op!r} needs a collection of values, got {value!r}")
        if op in _STRING_TESTS and not isinstance(value, str):
            raise FilterError(f"filters: {op!r} needs a str pattern, got {value!r}")
        return cls(column, op, list(value) if op in _SET_TESTS else value)

    def expression(self) -> pc.Expression:
        """The term as a ``pyarrow.compute.Expression`` (pyarrow's reading of the same DNF term).

        >>> print(Predicate("id", ">", 2**63).expression())
        (id > 9223372036854775808)
        """
        return self._applied(pc.field(self.column), pc.Expression._call, lambda value: pc.scalar(_literal(value)))

    def mask(self, array: pa.Array) -> pa.Array:
        """The term on one column's values (null where the comparison is): the same
        compute functions as :meth:`expression`, called directly (no Acero plan per span);
        an integer column against a float compares exactly (:func:`integer_test`).

        >>> Predicate("x", ">", 0.5).mask(pa.array([2**53 + 1, 0, None])).to_pylist()
        [True, False, None]
        """
        if self.op in _COMPARISONS and isinstance(self.value, (int, float)) and not isinstance(self.value, bool) \
                and pa.types.is_integer(array.type):
            test = integer_test(self.op, self.value, array.type)
            if isinstance(test, bool):  # the same answer for every value: null only where the value is
                return pc.if_else(pc.is_valid(array), test, pa.scalar(None, pa.bool_()))
            return pc.call_function(_COMPARISONS[test[0]], [array, pa.scalar(test[1], array.type)])
        if self.op in _SET_TESTS and pa.types.is_integer(array.type) and _numbers(self.value):
            members = pa.array(integer_members(self.value, array.type), array.type)
            test = pc.call_function("is_in", [array], pc.SetLookupOptions(members))
            return test if self.op == "in" else pc.invert(test)
        return self._applied(array, pc.call_function, _literal)

    def _applied(self, operand: Any, call: Any, literal: Any) -> Any:
        """The term's compute functions on ``operand`` (a field or an array), through
        ``call(name, args, options)``, with values made by ``literal``."""
        if self.op in _COMPARISONS:
            return call(_COMPARISONS[self.op], [operand, literal(self.value)], None)
        if self.op in _SET_TESTS:
            test = call("is_in", [operand], pc.SetLookupOptions(_members(self.value)))
            return test if self.op == "in" else call("invert", [test], None)
        if self.op in _NULL_TESTS:
            return call("is_null" if self.op == "is null" else "is_valid", [operand], None)
        return call(_STRING_TESTS[self.op], [operand], pc.MatchSubstringOptions(self.value))


def integer_test(op: str, value: Union[int, float], type_: pa.DataType) -> Union[bool, tuple[str, int]]:
    """``x <op> value`` for every integer ``x`` of ``type_``, exactly: as ``x > k``,
    ``x < k`` or ``x == k`` (``x != k``) with an integer ``k`` the type holds, or as
    the answer every ``x`` gets. pyarrow would cast each ``x`` to float64 instead,
    refusing those past 2**53 (and its ``Expression`` those past 2**24), so the
    answer or the error would depend on the values; this way the read's answer
    is the exact comparison, whatever rows a block or the filter's bounds hold.
    An int ``value`` is taken as it is (pyarrow would cast a uint64 column to
    int64 to meet it, refusing values past 2**63).

    >>> integer_test(">", 2.5, pa.int64()), integer_test(">=", 3.0, pa.int64()), integer_test("<=", -0.5, pa.int8())
    (('>', 2), ('>', 2), ('<', 0))
    >>> integer_test("==", 2.5, pa.int64()), integer_test("<", 1e300, pa.int64()), integer_test("!=", math.nan, pa.int64())
    (False, True, True)
    >>> integer_test(">", 2**53, pa.uint64()), integer_test("<", 300, pa.int8()), integer_test("==", -1, pa.uint8())
    (('>', 9007199254740992), True, False)
    """
    if isinstance(value, float) and math.isnan(value):
        return op == "!="
    info = np.iinfo(type_.to_pandas_dtype())
    if isinstance(value, float):
        value = max(min(value, 2.0 ** 64), -2.0 ** 64)  # an infinity as a bound past every int64/uint64
    floor = math.floor(value)  # an int stays itself, exactly
    whole = floor == value
    if op in ("=", "==", "!="):
        return (op, floor) if whole and info.min <= floor <= info.max else op == "!="
    if op in (">", ">="):  # x > v <=> x > floor(v); x >= v <=> x > ceil(v) - 1
        k = floor - 1 if op == ">=" and whole else floor
        return True if k < info.min else False if k >= info.max else (">", k)
    k = floor if op == "<" and whole else floor + 1  # x < v <=> x < ceil(v); x <= v <=> x < floor(v) + 1
    return True if k > info.max else False if k <= info.min else ("<", k)


def _literal(value: Any) -> pa.Scalar:
    """``value`` as a pyarrow scalar; an int past int64 that uint64 holds is a uint64
    (pyarrow's own inference stops at int64, so an id column's top half could not be named)."""
    if isinstance(value, int) and not isinstance(value, bool) and _INT64_MAX < value <= _UINT64_MAX:
        return pa.scalar(value, pa.uint64())
    return pa.scalar(value)


def _members(values: Sequence[Any]) -> pa.Array:
    """A set's values as one pyarrow array; ints that only uint64 holds make it uint64 (:func:`_literal`)."""
    past_int64 = _numbers(values) and any(v is not None and v > _INT64_MAX for v in values)
    if past_int64 and all(v is None or isinstance(v, int) and 0 <= v <= _UINT64_MAX for v in values):
        return pa.array(values, pa.uint64())
    return pa.array(values)


def _numbers(values: Sequence[Any]) -> bool:
    """Whether a set holds numbers only (and None): bools and other values are pyarrow's to match."""
    return all(v is None or isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def integer_members(values: Sequence[Any], type_: pa.DataType) -> list[Any]:
    """The values of ``type_``, an integer type, that a set of numbers (and None)
    holds, exactly: a float is an integer's only where it is a whole number in
    the type's range (as :func:`integer_test` compares, and not by casting
    every value of the column to float64 as pyarrow's ``is_in`` would).

    >>> integer_members([1.5, 2.0, None, 2**70, float("nan"), 3], pa.int64())
    [2, None, 3]
    """
    info = np.iinfo(type_.to_pandas_dtype())
    return [v if v is None else int(v) for v in values
            if v is None or (math.isfinite(v) and v == math.floor(v) and info.min <= v <= info.max)]


class RowFilter:
    """A read's filter, as given (DNF or Expression), ready to select a span's rows."""

    def __init__(self, spec: Filters):
        if isinstance(spec, pc.Expression):
            self.groups: Optional[list[list[Predicate]]] = None
            self.expression = spec
            self._columns: tuple[str, ...] = ()
            return
        if isinstance(spec, (str, bytes)) or not isinstance(spec, Sequence) or not spec:
            raise FilterError(f"filters must be a non-empty DNF list or a pyarrow.compute.Expression, got {spec!r}")
        groups = spec if all(isinstance(g, list) for g in spec) else [spec]
        self.groups = [[Predicate.parse(term) for term in group] for group in groups]
        if not all(self.groups):
            raise FilterError("filters: an OR of AND-groups must not hold an empty group")
        try:
            self.expression = _any_of([_all_of([p.expression() for p in group]) for group in self.groups])
        except (pa.ArrowException, OverflowError) as error:  # a value pyarrow cannot hold (a mixed set past int64)
            raise FilterError(f"filters: {spec!r}: pyarrow cannot take a value of it: {error}") from None
        self._columns = tuple(dict.fromkeys(p.column for group in self.groups for p in group))

    def temporal_columns(self) -> dict[str, pa.DataType]:
        """The columns a DNF filter compares with dates or datetimes, and the
        values' type: pandas' semantics infers no dates, so those columns are
        read as that type (as ``parse_dates`` would) for the filter to apply.

        >>> import datetime
        >>> RowFilter([("d", "<", datetime.date(2000, 1, 1)), ("n", ">", 1)]).temporal_columns()
        {'d': DataType(date32[day])}
        """
        found: dict[str, pa.DataType] = {}
        for predicate in (p for group in self.groups or [] for p in group):
            values = predicate.value if predicate.op in _SET_TESTS else [predicate.value]
            for value in values:
                if isinstance(value, (datetime.date, datetime.datetime)):
                    found.setdefault(predicate.column, pa.scalar(value).type)
        return found

    @property
    def columns(self) -> tuple[str, ...]:
        """The columns a DNF filter reads (an Expression's need the file's names: :meth:`columns_of`)."""
        return self._columns

    def columns_of(self, names: Sequence[str]) -> tuple[str, ...]:
        """The columns of a file with header ``names`` the filter reads; a
        FilterError names those it asks for that the file lacks. An
        Expression's are those it references (:func:`referenced_columns`).

        >>> import pyarrow.compute as pc
        >>> RowFilter(pc.field("b") > 1).columns_of(["a", "b"])
        ('b',)
        >>> RowFilter([("c", "=", 1)]).columns_of(["a", "b"])
        Traceback (most recent call last):
        ...
        arrow_bridge.filters.FilterError: filters name column(s) the file does not have: ['c'] (its columns: \
['a', 'b'])
        """
        if self.groups is None:
            try:  # names it asks for that the file lacks: binding to the header's names says
                pa.table({name: pa.nulls(0) for name in dict.fromkeys(names)}).filter(self.expression)
            except pa.ArrowInvalid as error:
                if "No match for FieldRef" in str(error):
                    raise FilterError(f"filters: {error} (the file's columns: {list(names)})") from None
            except pa.ArrowException:  # a type question, answered by the real values later
                pass
            return self._used(names)
        missing = [name for name in self._columns if name not in names]
        if missing:
            raise FilterError(f"filters name column(s) the file does not have: {missing} (its columns: {list(names)})")
        return self._columns

    def selection(self, columns: dict[str, Any], nrows: int) -> Optional[pa.Array]:
        """Indices of the rows of one span (``columns`` by name, arrays
        ``nrows`` long) that the filter keeps; None when it keeps them all.

        >>> f = RowFilter([("x", ">", 1)])
        >>> f.selection({"x": pa.array([1, 2, None, 3])}, 4).to_pylist()
        [1, 3]
        """
        try:
            kept = self._kept(columns, nrows)
        except (pa.ArrowNotImplementedError, pa.ArrowTypeError, pa.ArrowInvalid) as error:
            types = ", ".join(f"{name}: {array.type}" for name, array in columns.items())
            raise FilterError(f"filters {self.describe()} cannot be evaluated on columns ({types}): {error}") from None
        return None if len(kept) == nrows else kept

    def bounds(self, types: Mapping[str, pa.DataType]) -> dict[str, tuple[Any, Any]]:
        """``{column: (low, high)}``: the closed interval a kept row's value of
        ``column`` (of type ``types[column]``) lies in, from the terms of a
        single AND-group that compare a column with a constant. The fused
        kernel rejects rows outside it as it parses them (late
        materialization); the filter still decides every row it keeps. Only
        what is exact makes a bound: signed ints (int constants), float64
        (finite int or float constants; strict comparisons move to the next
        float), date32 (dates, as days since the epoch).

        >>> from datetime import date
        >>> f = RowFilter([("q", "<", 24), ("d", ">=", date(1994, 1, 1)), ("p", ">", 0.5), ("s", "=", "x")])
        >>> f.bounds({"q": pa.int64(), "d": pa.date32(), "p": pa.float64(), "s": pa.string()})
        {'q': (-9223372036854775808, 23), 'd': (8766, 9223372036854775807), 'p': (0.5000000000000001, inf)}
        """
        if self.groups is None or len(self.groups) != 1:
            return {}
        found: dict[str, tuple[Any, Any]] = {}
        for term in self.groups[0]:
            type_ = types.get(term.column)
            interval = _interval(term, type_) if type_ is not None else None
            if interval is not None:
                low, high = found.get(term.column, interval)
                found[term.column] = (max(low, interval[0]), min(high, interval[1]))
        return found

    def tests_per_row(self, columns_read: int) -> int:
        """Comparisons the filter makes per row (the ``filter_tests`` work
        counter): one per DNF term, as every term is evaluated on every row
        (whole columns at a time, no short-circuit); for an Expression, whose
        terms pyarrow does not list, one per column it reads (``columns_read``).

        >>> RowFilter([[("a", ">", 1), ("b", "=", 2)], [("a", "<", 0)]]).tests_per_row(2)
        3
        """
        return columns_read if self.groups is None else sum(len(group) for group in self.groups)

    def filter_table(self, table: pa.Table) -> pa.Table:
        """``table``'s rows the filter keeps (a whole Table at once, columns by name)."""
        kept = self.selection({name: table.column(name) for name in self._used(table.column_names, table.schema)},
                              table.num_rows)
        return table if kept is None else table.take(kept)

    def describe(self) -> str:
        """The filter as pyarrow prints it."""
        return str(self.expression)

    def _kept(self, columns: dict[str, Any], nrows: int) -> pa.Array:
        if self.groups is None:  # an Expression: pyarrow's own evaluator (Acero), on a zero-copy table
            row = _unused_name(columns)
            table = pa.table({**columns, row: pa.array(np.arange(nrows, dtype=np.int64))})
            return table.filter(self.expression).column(row).combine_chunks()
        groups = [_reduce(pc.and_kleene, [p.mask(columns[p.column]) for p in group]) for group in self.groups]
        mask = _reduce(pc.or_kleene, groups)
        return pc.indices_nonzero(mask.fill_null(False) if mask.null_count else mask)

    def _used(self, names: Sequence[str], schema: Optional[pa.Schema] = None) -> tuple[str, ...]:
        """The names among ``names`` the filter reads (an Expression's: :func:`referenced_columns`)."""
        return self._columns if self.groups is not None else referenced_columns(self.expression, names, schema)


def referenced_columns(expression: pc.Expression, names: Sequence[str],
                       schema: Optional[pa.Schema] = None) -> tuple[str, ...]:
    """The names among ``names`` that ``expression`` reads. pyarrow lists no field
    references, but prints each: of the names the text mentions (``b`` is in ``ab``),
    those it cannot be bound without, on empty columns (of ``schema``'s types, else
    all null, else all text). Where it cannot be bound on any of them (a mix of number
    and text functions), every name mentioned: an extra column read costs time.

    >>> referenced_columns((pc.field("ab") == 1) | (pc.field("a") > 2), ["a", "b", "ab"])
    ('a', 'ab')
    >>> referenced_columns(pc.starts_with(pc.field("st"), "x"), ["s", "t", "st"])
    ('st',)
    """
    text = str(expression)
    mentioned = [name for name in dict.fromkeys(names) if name in text]
    typings = [lambda name: schema.field(schema.names.index(name)).type] if schema is not None else []
    for type_of in [*typings, lambda name: pa.null(), lambda name: pa.string()]:
        empty = pa.table({name: pa.array([], type_of(name)) for name in mentioned})
        if _binds(expression, empty):
            return tuple(name for name in mentioned if not _binds(expression, empty.drop_columns([name])))
    return tuple(mentioned)


def _binds(expression: pc.Expression, table: pa.Table) -> bool:
    """Whether ``expression`` (of any type: a derived column's too) can be evaluated on ``table``."""
    try:
        table.filter(pc.is_valid(expression))
    except pa.ArrowException:
        return False
    return True


def and_filters(first: Optional[Filters], second: list) -> Filters:
    """The rows ``first`` (a read's ``filters=``, or None) and ``second`` (a
    DNF list of AND-groups) both keep, as one ``filters=``.

    >>> and_filters([("a", ">", 1)], [[("b", "==", "x")], [("b", "==", "y")]])
    [[('a', '>', 1), ('b', '==', 'x')], [('a', '>', 1), ('b', '==', 'y')]]
    """
    if first is None:
        return second
    row_filter = RowFilter(first)
    if row_filter.groups is None:  # an Expression
        return row_filter.expression & RowFilter(second).expression
    groups = [[(p.column, p.op, p.value) for p in group] for group in row_filter.groups]
    return [a + b for a in groups for b in second]


_INT64_MIN, _INT64_MAX, _UINT64_MAX = -(1 << 63), (1 << 63) - 1, (1 << 64) - 1
_EXACT_FLOAT_INT = 1 << 53  # ints up to this magnitude convert to float64 exactly
_EPOCH = datetime.date(1970, 1, 1)


def _interval(term: Predicate, type_: pa.DataType) -> Optional[tuple[Any, Any]]:
    """The closed interval ``term`` keeps of a column of ``type_``, or None
    where it makes no exact bound there."""
    if term.op not in _COMPARISONS or term.op == "!=":
        return None
    value = term.value
    if isinstance(value, (bool, np.bool_)):
        return None
    if pa.types.is_signed_integer(type_) and isinstance(value, (int, np.integer)):
        value = int(value)
        if not _INT64_MIN < value < _INT64_MAX:
            return None
        return _closed(term.op, value, value - 1, value + 1, _INT64_MIN, _INT64_MAX)
    if pa.types.is_float64(type_) and isinstance(value, (int, float, np.integer, np.floating)):
        if isinstance(value, (int, np.integer)) and abs(int(value)) > _EXACT_FLOAT_INT:
            return None
        value = float(value)
        if not math.isfinite(value):
            return None
        return _closed(term.op, value, math.nextafter(value, -math.inf), math.nextafter(value, math.inf),
                       -math.inf, math.inf)
    if pa.types.is_date32(type_) and isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
        days = (value - _EPOCH).days
        return _closed(term.op, days, days - 1, days + 1, _INT64_MIN, _INT64_MAX)
    return None


def _closed(op: str, value: Any, below: Any, above: Any, lowest: Any, highest: Any) -> tuple[Any, Any]:
    """``op value`` as a closed interval, given the values just ``below`` and ``above`` it."""
    return {"<": (lowest, below), "<=": (lowest, value), ">": (above, highest), ">=": (value, highest)
            }.get(op, (value, value))


def _reduce(combine: Any, masks: list[pa.Array]) -> pa.Array:
    result = masks[0]
    for mask in masks[1:]:
        result = combine(result, mask)
    return result


def _all_of(terms: list[pc.Expression]) -> pc.Expression:
    return _reduce(lambda a, b: a & b, terms)


def _any_of(terms: list[pc.Expression]) -> pc.Expression:
    return _reduce(lambda a, b: a | b, terms)


def _unused_name(columns: dict[str, Any]) -> str:
    name = "__row"
    while name in columns:
        name += "_"
    return name
