"""A ``filters=`` DNF list as an SSDlet over the parse's column ports."""
from __future__ import annotations

import datetime
import math
from typing import Any

import numpy as np
import pyarrow as pa

from arrow_bridge.csv_ssdlets.programs import (CsvProgram, check_column_type, compiled_function, compiled_once,
                                               is_string, kernel_namespace, port_names, stage_prices)
from arrow_bridge.filters import Filters, FilterError, Predicate, RowFilter, integer_members, integer_test
from ndp_core.ssdlets import Nullable

def row_filter(filters: Filters, schema: pa.Schema, *, device: Any = None) -> CsvProgram:
    """A ``filters=`` DNF list as an SSDlet: one ``Nullable`` input per column of
    ``schema`` (named as :func:`csv_parser` names its outputs), one output per
    column (``kept_<port>``) holding the rows the filter keeps, with
    ``read_csv(filters=...)``'s meaning (a row is kept where the filter is true;
    null and false drop it; ``not in`` keeps nulls, as pyarrow's does).

    Comparisons take a value of the column's kind: a number for a number
    column (an int column against a float compares exactly, as
    ``read_csv(filters=...)`` does: :func:`~arrow_bridge.filters.integer_test`), a ``datetime.date`` for a date
    column, a naive ``datetime.datetime`` for a timestamp column (compared in
    the finer of its unit and microseconds, as pyarrow compares), a ``str`` for a string column (also ``starts
    with``, ``ends with``, ``contains``). A ``pyarrow.compute.Expression``, or
    a value of another kind, raises :class:`~arrow_bridge.filters.FilterError`.
    ``device``'s profile prices its ``filter_tests`` and ``values_kept``.

    >>> import pyarrow as pa
    >>> keep = row_filter([("n", ">", 1)], pa.schema({"n": pa.int64(), "s": pa.string()}))  # or parse.schema
    >>> keep.inputs_by_column, keep.columns
    ({'n': 'n', 's': 's'}, {'kept_n': 'n', 'kept_s': 's'})
    """
    parsed = RowFilter(filters)
    if parsed.groups is None:
        raise FilterError("row_filter takes a DNF list of (column, op, value) terms, not an Expression")
    parsed.columns_of(schema.names)
    source = _FilterSource(parsed, schema)
    program = compiled_once(("filter", source.key, schema), lambda: _filter_program(source, schema),
                            stage_prices(device))
    program.inputs_by_column = source.ports
    program.arg_values = source.values
    return program


class _FilterSource:
    """A filter's program text, with what its code depends on apart from its values.

    A comparison's value is an argument of the program (``value_0``, ...), not a
    constant compiled into it, so a filter of the same shape over other values (Q6
    for another year) is the same program: compiled once, then loaded (the disk cache
    keys a program by its code). Sets (``in``) and strings stay in the code, as arrays.
    An argument holds the value as the program compares it: an integer column's bound
    (``>= 1994`` is ``> 1993``), a date's days, a timestamp's units.
    """

    def __init__(self, parsed: RowFilter, schema: pa.Schema) -> None:
        for field in schema:
            check_column_type(field)
        self.ports = ports = dict(zip(schema.names, port_names(schema.names)))
        self.namespace = kernel_namespace(None, None)
        self.namespace.update(TESTS_PER_ROW=sum(map(len, parsed.groups)), COLUMNS=len(ports))
        self.args: dict[str, pa.DataType] = {}
        self.values: dict[str, Any] = {}
        self.arrays: dict[str, np.ndarray] = {}
        test = " or ".join("(" + " and ".join(_test(predicate, schema.field(predicate.column).type,
                                                    ports[predicate.column], self) for predicate in group) + ")"
                           for group in parsed.groups)
        self.outputs = {f"kept_{port}": port for port in ports.values()}
        copies = "".join(_copy_lines(port, out, schema.field(name).type)
                         for (name, port), out in zip(ports.items(), self.outputs))
        first = next(iter(ports.values()))
        rows = f"p.{first}.offsets.size - 1" if is_string(schema.field(0).type) else f"p.{first}.valid.size"
        counts = ", ".join("n" for _ in self.outputs)
        self.text = _FILTER_TEMPLATE.format(rows=rows, test=test, copies=copies, counts=counts)
        self.key = (self.text, tuple((name, a.dtype.str, a.tobytes()) for name, a in self.arrays.items()),
                    tuple(self.args.items()))

    def value(self, value: Any, type_: pa.DataType, column_type: pa.DataType) -> str:
        """``value`` as an argument of ``type_``, compared with a column of ``column_type``
        (a :class:`FilterError` where it does not fit)."""
        if pa.types.is_integer(type_):
            limits = np.iinfo(type_.to_pandas_dtype())
            if not limits.min <= value <= limits.max:
                raise FilterError(f"row_filter: a value is past what a {column_type} column holds")
        name = f"value_{len(self.args)}"
        while name in self.ports.values():  # (a column named so keeps its port)
            name += "_"
        self.args[name], self.values[name] = type_, value
        return f"p.{name}"

    def array(self, values: np.ndarray) -> str:
        """``values`` compiled into the program (a set, or a string's bytes)."""
        name = f"L{len(self.arrays)}"
        self.arrays[name] = self.namespace[name] = values
        return name


def _filter_program(source: _FilterSource, schema: pa.Schema) -> CsvProgram:
    func = compiled_function("row_filter", source.text, source.namespace)
    program = CsvProgram(func, inputs={port: Nullable(schema.field(name).type) for name, port in source.ports.items()},
                         outputs={out: Nullable(schema.field(name).type) for name, out in
                                  zip(schema.names, source.outputs)},
                         args=source.args, state={}, work=stage_prices(None, ("filter_tests", "values_kept")),
                         budget=1 << 40)
    program.columns = {out: name for name, out in zip(schema.names, source.outputs)}
    return program


_FILTER_TEMPLATE = '''
def row_filter(p):
    n = 0
    rows = {rows}
    for i in range(rows):
        if {test}:
{copies}            n += 1
    p.filter_tests[0] += rows * TESTS_PER_ROW
    p.values_kept[0] += n * COLUMNS
    return ({counts})
'''


def _copy_lines(port: str, out: str, type_: pa.DataType) -> str:
    if is_string(type_):
        return (f"            a, b, at = p.{port}.offsets[i], p.{port}.offsets[i + 1], p.{out}.offsets[n]\n"
                f"            p.{out}.data[at:at + b - a] = p.{port}.data[a:b]\n"
                f"            p.{out}.offsets[n + 1] = at + b - a\n"
                f"            p.{out}.valid[n] = p.{port}.valid[i]\n")
    return (f"            p.{out}.values[n] = p.{port}.values[i]\n"
            f"            p.{out}.valid[n] = p.{port}.valid[i]\n")


_SYMBOLS = {"=": "==", "==": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
_STRING_TESTS = {"starts with": "starts_with", "ends with": "ends_with", "contains": "contains"}


def _test(predicate: Predicate, type_: pa.DataType, port: str, source: _FilterSource) -> str:
    """The predicate as a Python expression over row ``i`` of the program's ports."""
    valid = f"p.{port}.valid[i] == 1"
    field = f"p.{port}.data, p.{port}.offsets[i], p.{port}.offsets[i + 1]"
    op, string = predicate.op, is_string(type_)
    if op in ("is null", "is not null"):
        return f"p.{port}.valid[i] == {0 if op == 'is null' else 1}"
    column = _column_value(port, type_)
    if op in _SYMBOLS and pa.types.is_integer(type_) and isinstance(predicate.value, (int, float)) and \
            not isinstance(predicate.value, bool):
        test = integer_test(op, predicate.value, type_)  # exactly, as read_csv(filters=) compares
        if isinstance(test, bool):
            return f"({valid} and {test})"
        bound = source.value(test[1], type_, type_)  # the column's type: uint64 must not meet int64
        return f"({valid} and {column} {_SYMBOLS[test[0]]} {bound})"
    if op in _SYMBOLS:
        literal = _literal(predicate, type_)
        if string:
            return f"({valid} and compare_bytes({field}, {source.array(literal)}) {_SYMBOLS[op]} 0)"
        return f"({valid} and {column} {_SYMBOLS[op]} {source.value(literal, _argument_type(type_), type_)})"
    if op in _STRING_TESTS:
        if not string:
            raise FilterError(f"row_filter: {predicate.op!r} is for string columns; {predicate.column!r} is {type_}")
        return f"({valid} and {_STRING_TESTS[op]}({field}, {source.array(_literal(predicate, type_))}))"
    values = [v for v in predicate.value if v is not None]
    nulls_in = any(v is None for v in predicate.value)
    if string:
        encoded = [_literal(Predicate(predicate.column, "=", v), type_) for v in values]
        offsets = np.cumsum([0] + [len(e) for e in encoded]).astype(np.int64)
        data = np.concatenate(encoded) if encoded else np.zeros(0, np.uint8)
        member = f"any_equal({field}, {source.array(data)}, {source.array(offsets)})"
    else:
        kept = [_literal(Predicate(predicate.column, "=", v), type_) for v in values]
        if pa.types.is_integer(type_):  # the whole numbers the column can hold, as read_csv(filters=) takes them
            kept = integer_members(kept, type_)
        elif any(isinstance(v, float) and math.isnan(v) for v in kept):
            raise FilterError(f"row_filter: NaN in the set of {predicate!r}")
        kept = sorted(kept)  # no NaN left: sorted() of a list holding one need not be in order
        dtype = np.float64 if pa.types.is_floating(type_) else \
            type_.to_pandas_dtype() if pa.types.is_integer(type_) else np.int64  # dates, times: their int64 units
        try:
            array = np.array(kept, dtype=dtype)
        except OverflowError:
            raise FilterError(f"row_filter: a value of {predicate!r} is past {type_}") from None
        member = f"in_sorted({column}, {source.array(array)})"
    found = f"(({valid} and {member}) or (p.{port}.valid[i] == 0 and {nulls_in}))"
    return found if op == "in" else f"(not {found})"


#: Timestamps compare in the finer of the column's unit and a datetime's (us), as pyarrow
#: compares a column with a finer scalar: (factor on the column's values, on the literal's us).
_TIMESTAMP_SCALES = {"s": (1_000_000, 1), "ms": (1_000, 1), "us": (1, 1), "ns": (1, 1_000)}


def _argument_type(type_: pa.DataType) -> pa.DataType:
    """The type a value compared with a (non-integer) column of ``type_`` is passed in:
    float64 for floats, int64 for the days of a date and the units of a timestamp."""
    return pa.float64() if pa.types.is_floating(type_) else pa.int64()


def _column_value(port: str, type_: pa.DataType) -> str:
    """Row ``i``'s value of a fixed-width port, in the unit its literals take."""
    if pa.types.is_timestamp(type_) and _TIMESTAMP_SCALES[type_.unit][0] > 1:
        return f"(np.int64(p.{port}.values[i]) * {_TIMESTAMP_SCALES[type_.unit][0]})"
    return f"p.{port}.values[i]"


def _literal(predicate: Predicate, type_: pa.DataType) -> Any:
    """``predicate.value`` as the values of a column of ``type_`` are held in a port."""
    value = predicate.value
    if pa.types.is_integer(type_) and isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    if pa.types.is_floating(type_) and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if type_ == pa.date32() and isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
        return (value - datetime.date(1970, 1, 1)).days
    if pa.types.is_timestamp(type_) and isinstance(value, datetime.datetime) and value.tzinfo is None:
        return pa.scalar(value, type=pa.timestamp("us")).value * _TIMESTAMP_SCALES[type_.unit][1]
    if is_string(type_) and isinstance(value, str):
        return np.frombuffer(value.encode(), np.uint8).copy()
    raise FilterError(f"row_filter: {predicate.column!r} is {type_}; compare it with a value of that kind, "
                      f"not {value!r}")

