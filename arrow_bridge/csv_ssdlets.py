"""The reader's CSV app as SSDlets: file pages to typed columns, then a row filter, in a graph.

Biscuit (*Biscuit: A Framework for Near-Data Processing of Big Data
Workloads*, ISCA 2016) builds its queries from SSDlets: a scanner, a parser,
a filter, connected by typed ports. :func:`csv_parser` is the reader's own
parse written that way: an SSDlet whose input is file pages and whose
outputs are one nullable port per column, typed as the reader types them.
Its body calls the reader's kernels (:func:`~arrow_bridge.kernels.tokenizer.tokenize`,
``convert_fixed``, ``convert_strings``) with the reader's dialect and value
rules, so its columns are ``read_csv``'s, bit for bit, on the device or the
host. :func:`row_filter` turns a ``filters=`` DNF into an SSDlet over those
ports, with ``read_csv(filters=...)``'s meaning.

Ports are typed before a graph runs (Biscuit's rule), so the column types
come from the reader's first block (as :func:`arrow_bridge.open_csv` infers
them) or from ``dtype=``/``column_types``; a later value that does not fit
its port's type stops the run with an error naming the column, where
``read_csv`` would have widened the column.

A graph that parses a file in the device and filters on the host:

>>> import os, tempfile
>>> from ndp_core.ssdlets import Application
>>> from device_emulator import ComputationalSSD
>>> path = os.path.join(tempfile.mkdtemp(), "prices.csv")
>>> with open(path, "w") as f:
...     _ = f.write("id,price\\n1,9.5\\n2,\\n3,12.25\\n")
>>> parse = csv_parser(path)
>>> parse
SSDlet csv_parser(pages: pages) -> (id: int64?, price: double?); state carry: ..., headers_skipped: int64; work ...
>>> keep = row_filter([("price", ">", 10)], parse.schema)
>>> app = Application(ComputationalSSD("modern-gen4"))
>>> scan, cheap = app.add(parse, on="device"), app.add(keep, on="host")
>>> app.scan(scan.pages, path)
>>> connect_columns(app, scan, cheap)
>>> for port in keep.columns:
...     app.collect(cheap.port(port))
>>> keep.table(app.run(), cheap).to_pydict()
{'id': [3], 'price': [12.25]}
"""
from __future__ import annotations

import datetime
import itertools
import keyword
import linecache
import math
from typing import Any, Mapping, Optional, Sequence, Union

import numpy as np
import pyarrow as pa

from arrow_bridge.converters import ValueRules, conversion_spec, STRINGS
from arrow_bridge.dialect import Dialect
from arrow_bridge.filters import Filters, FilterError, Predicate, RowFilter
from arrow_bridge.kernels import columns as column_kernels
from arrow_bridge.jit import load_numba, njit
from arrow_bridge.kernels.status import N_COUNTERS, NEEDS_MORE, OK, OUT_OF_SPACE, READER_COUNTERS
from arrow_bridge.kernels.tokenizer import tokenize
from arrow_bridge.options import CsvOptions, resolve_options
from ndp_core.ssdlets import Nullable, Out, SSDlet, PAGES
from ndp_core.ssdlets.application import RunResult
from ndp_core.ssdlets.graph import Node

__all__ = ["CsvProgram", "csv_parser", "row_filter", "connect_columns", "parse_prices", "MAX_RECORD_BYTES"]

#: The longest record :func:`csv_parser` carries from one packet to the next.
MAX_RECORD_BYTES = 1 << 16
_CARRY = np.dtype([("bytes", np.uint8, (MAX_RECORD_BYTES,)), ("n", np.int64)])

#: The reader's work counters a parse declares (prefixed: ports take the column names).
PARSE_WORK = tuple(f"csv_{name}" for name in READER_COUNTERS.modeled)
#: Cycles per unit on the host (the reader table of the device profiles) and, for a
#: device core, twice that (the profiles' assumption); a ``device=`` gives its own.
_READER_TABLE = {"bytes_scanned": 4.0, "rows": 10.0, "fields": 15.0, "ints": 52.0, "floats": 119.0,
                 "bools": 8.0, "temporals": 60.0, "string_bytes": 1.0, "nulls": 4.0}

# Options the parse program follows; any other option a read takes is refused by name.
_OPTIONS_KEPT = {"delimiter", "quote_char", "double_quote", "escape_char", "column_names", "header", "null_values",
                 "true_values", "false_values", "strings_can_be_null", "quoted_strings_can_be_null",
                 "column_types", "default_type", "decimal_point", "check_utf8", "block_size", "n_threads",
                 "semantics", "columns_keyword"}


class CsvProgram(SSDlet):
    """An SSDlet made from a CSV read's plan; ``columns`` maps each port to its column's name.

    :meth:`table` puts a node's collected ports back together as a ``pyarrow.Table``.
    """

    columns: dict[str, str]

    @property
    def schema(self) -> pa.Schema:
        """The columns it sends, named as in the file (what :func:`row_filter` takes)."""
        return pa.schema([(name, self.outputs[port].type.arrow) for port, name in self.columns.items()])

    def table(self, result: RunResult, node: Node) -> pa.Table:
        """The columns ``node`` (an instance of this program) sent to the host, named as in the file."""
        return pa.table({name: result[f"{node.name}.{port}"] for port, name in self.columns.items()})


def csv_parser(source: Union[str, Any, pa.Schema], *, device: Any = None, **options: Any) -> CsvProgram:
    """The reader's parse as an SSDlet: ``pages`` in, one ``Nullable`` port per column out.

    ``source`` is a file (its first block gives the types, as :func:`arrow_bridge.open_csv`
    infers them) or a ``pyarrow.Schema`` (the file's columns, in order). ``options`` are
    ``read_csv``'s dialect and value options (``sep``, ``quotechar``, ``escapechar``,
    ``na_values``, ``true_values``, ``dtype``, ``decimal``, ``semantics``, ...); options
    that choose rows or columns (``usecols``, ``skiprows``, ``nrows``, ``on_bad_lines``)
    are refused: a graph chooses with further SSDlets. ``device``'s profile prices the work
    counters (default: the profiles' reader table).

    A record longer than :data:`MAX_RECORD_BYTES` that a packet boundary cuts, a record
    with another field count, an unterminated quote or a value its port's type does not
    take stops the run with an ``SSDletError``.

    >>> import pyarrow as pa
    >>> csv_parser(pa.schema({"id": pa.int64(), "name": pa.string()})).columns
    {'id': 'id', 'name': 'name'}
    """
    opts = _parse_options(options)
    schema = source if isinstance(source, pa.Schema) else _first_block_schema(source, options)
    ports = _port_names(schema.names)
    for port, field in zip(ports, schema):
        _check_column_type(field)
    rules, dialect = ValueRules.from_options(opts), Dialect.from_options(opts)
    namespace = _kernel_namespace(rules, dialect)
    namespace["HEADER"] = 1 if opts.header and opts.column_names is None else 0
    body = "".join(_convert_lines(k, port, field.type, rules) for k, (port, field) in enumerate(zip(ports, schema)))
    work = "".join(f"    p.csv_{name}[0] += counters[{READER_COUNTERS.slot(name)}]\n" for name in READER_COUNTERS.modeled)
    source_text = _PARSE_TEMPLATE.format(ncols=len(schema), convert=body, work=work, returns=", ".join(["rows"] * len(ports)))
    func = _compiled_function("csv_parser", source_text, namespace)
    program = CsvProgram(func, inputs={"pages": PAGES},
                         outputs={p: Out(Nullable(f.type), extra_rows=MAX_RECORD_BYTES,
                                         **({"extra_bytes": MAX_RECORD_BYTES} if _is_string(f.type) else {}))
                                  for p, f in zip(ports, schema)},
                         args={}, state={"carry": _CARRY, "headers_skipped": pa.int64()},
                         work=parse_prices(device), budget=1 << 40)
    program.columns = dict(zip(ports, schema.names))
    return program


def row_filter(filters: Filters, schema: pa.Schema) -> CsvProgram:
    """A ``filters=`` DNF list as an SSDlet: one ``Nullable`` input per column of
    ``schema`` (named as :func:`csv_parser` names its outputs), one output per
    column (``kept_<port>``) holding the rows the filter keeps, with
    ``read_csv(filters=...)``'s meaning (a row is kept where the filter is true;
    null and false drop it; ``not in`` keeps nulls, as pyarrow's does).

    Comparisons take a value of the column's kind: a number for a number
    column (an int column against a float compares as floats, as pyarrow
    does), a ``datetime.date`` for a date column, a naive ``datetime.datetime``
    for a timestamp column, a ``str`` for a string column (also ``starts
    with``, ``ends with``, ``contains``). A ``pyarrow.compute.Expression``, or
    a value of another kind, raises :class:`~arrow_bridge.filters.FilterError`.

    >>> import pyarrow as pa
    >>> keep = row_filter([("n", ">", 1)], pa.schema({"n": pa.int64(), "s": pa.string()}))  # or parse.schema
    >>> keep.inputs_by_column, keep.columns
    ({'n': 'n', 's': 's'}, {'kept_n': 'n', 'kept_s': 's'})
    """
    parsed = RowFilter(filters)
    if parsed.groups is None:
        raise FilterError("row_filter takes a DNF list of (column, op, value) terms, not an Expression")
    parsed.columns_of(schema.names)
    ports = dict(zip(schema.names, _port_names(schema.names)))
    for field in schema:
        _check_column_type(field)
    namespace = _kernel_namespace(None, None)
    namespace.update(TESTS_PER_ROW=sum(map(len, parsed.groups)), COLUMNS=len(ports))
    literals = _Literals(namespace)
    test = " or ".join("(" + " and ".join(_test(predicate, schema.field(predicate.column).type, ports[predicate.column],
                                                literals) for predicate in group) + ")" for group in parsed.groups)
    outputs = {f"kept_{port}": port for port in ports.values()}
    copies = "".join(_copy_lines(port, out, schema.field(name).type)
                     for (name, port), out in zip(ports.items(), outputs))
    first = next(iter(ports.values()))
    rows = f"p.{first}.offsets.size - 1" if _is_string(schema.field(0).type) else f"p.{first}.valid.size"
    counts = ", ".join("n" for _ in outputs)
    source_text = _FILTER_TEMPLATE.format(rows=rows, test=test, copies=copies, counts=counts)
    func = _compiled_function("row_filter", source_text, namespace)
    program = CsvProgram(func, inputs={port: Nullable(schema.field(name).type) for name, port in ports.items()},
                         outputs={out: Nullable(schema.field(name).type) for (name, _), out in zip(ports.items(), outputs)},
                         args={}, state={}, work={"filter_tests": (3.0, 1.5), "values_kept": (4.0, 2.0)},
                         budget=1 << 40)
    program.columns = {out: name for name, out in zip(ports, outputs)}
    program.inputs_by_column = dict(ports)
    return program


def connect_columns(app: Any, upstream: Node, downstream: Node) -> None:
    """Connects each column ``upstream`` sends (a :class:`CsvProgram`'s node) to
    ``downstream``'s input for the same column (a :func:`row_filter`'s node)."""
    wanted = downstream.program.inputs_by_column
    for port, name in upstream.program.columns.items():
        app.connect(upstream.port(port), downstream.port(wanted[name]))


# ---- the parse ----------------------------------------------------------------------------------
_PARSE_TEMPLATE = '''
def csv_parser(p):
    c = p.carry[0]
    kept = c["n"]
    size = kept + p.pages.size
    buf = np.empty(max(size, 1), np.uint8)
    for i in range(kept):
        buf[i] = c["bytes"][i]
    buf[kept:size] = p.pages
    counters = np.zeros(N_COUNTERS, np.int64)
    start = 0
    if p.headers_skipped[0] < HEADER:
        one = np.empty(1, np.int32)
        status, rows, pos, lines = tokenize(buf, 0, size, p.at_end, {ncols}, DELIMITER, SPECIAL.copy(), QUOTE,
                                            ESCAPE, DOUBLE_QUOTE, False, one, np.empty({ncols}, np.int32),
                                            np.zeros({ncols}, np.uint8), np.zeros((1, 2), np.int64), counters)
        if status != OK and status != NEEDS_MORE and status != OUT_OF_SPACE:
            raise ValueError("the header is not a record of the schema's fields")
        if rows == 1:
            p.headers_skipped[0] = 1
            start = pos
        else:
            start = size
    capacity = 1 + np.count_nonzero(buf[start:size] == 10) + np.count_nonzero(buf[start:size] == 13)
    row_starts = np.empty(capacity, np.int32)
    ends = np.empty(capacity * {ncols}, np.int32)
    flags = np.zeros(capacity * {ncols}, np.uint8)
    rows = 0
    pos = size
    if p.headers_skipped[0] >= HEADER:
        status, rows, pos, lines = tokenize(buf, start, size, p.at_end, {ncols}, DELIMITER, SPECIAL.copy(), QUOTE,
                                            ESCAPE, DOUBLE_QUOTE, False, row_starts, ends, flags, np.zeros((1, 2), np.int64),
                                            counters)
        if status != OK and status != NEEDS_MORE:
            raise ValueError("a record the tokenizer refuses (field count, unterminated quote)")
    elif not p.at_end:
        pos = 0
    if size - pos > MAX_RECORD_BYTES:
        raise ValueError("a record longer than MAX_RECORD_BYTES crosses a packet boundary")
    for i in range(pos, size):
        c["bytes"][i - pos] = buf[i]
    c["n"] = size - pos
    span = (buf, row_starts, ends, flags, rows, capacity, (QUOTE, ESCAPE, DOUBLE_QUOTE),
            np.empty(max(size - start, 1), np.uint8))
    nulls = (NULL_DATA.copy(), NULL_OFFSETS.copy(), NULL_FIRST.copy(), NULL_EMPTY)
    trues = (TRUE_DATA.copy(), TRUE_OFFSETS.copy(), TRUE_FIRST.copy(), TRUE_EMPTY)
    falses = (FALSE_DATA.copy(), FALSE_OFFSETS.copy(), FALSE_FIRST.copy(), FALSE_EMPTY)
{convert}{work}    return ({returns})
'''

_FIXED_CONVERT = '''    validity = np.zeros((rows + 7) // 8, np.uint8)
    status, bad, null_count = convert_fixed(span, {col}, nulls, QUOTED_NULLS, {kind}, ({p0}, {p1}, {p2}), trues,
                                            falses, p.{port}.values[:rows], np.empty(0, np.uint8), validity, counters)
    if status != OK:
        raise ValueError("a value of column {col} that its port's type does not take")
    valid_bytes(validity, null_count, p.{port}.valid, rows)
'''

_STRING_CONVERT = '''    validity = np.zeros((rows + 7) // 8, np.uint8)
    status, bad, null_count = convert_strings(span, {col}, nulls, STRINGS_CAN_BE_NULL, QUOTED_NULLS, {check},
                                              p.{port}.offsets[:rows + 1], p.{port}.data, validity, counters)
    if status != OK:
        raise ValueError("a value of column {col} that is not UTF-8")
    valid_bytes(validity, null_count, p.{port}.valid, rows)
'''


def _convert_lines(col: int, port: str, type_: pa.DataType, rules: ValueRules) -> str:
    spec = conversion_spec(type_, rules)
    if spec.kind == STRINGS:
        return _STRING_CONVERT.format(col=col, port=port, check=bool(spec.check_utf8))
    p0, p1, p2 = (int(v) for v in spec.params)
    return _FIXED_CONVERT.format(col=col, port=port, kind=spec.kind, p0=p0, p1=p1, p2=p2)


def _parse_options(options: Mapping[str, Any]) -> CsvOptions:
    opts = resolve_options(**options)
    defaults = CsvOptions()
    refused = [name for name in CsvOptions.__dataclass_fields__
               if name not in _OPTIONS_KEPT and getattr(opts, name) != getattr(defaults, name)]
    if refused:
        raise ValueError(f"csv_parser does not take the option(s) {refused}: a graph parses every record "
                         "(choose rows and columns with further SSDlets); read_csv takes them")
    if opts.column_null_values:
        raise ValueError("csv_parser takes one set of null spellings (na_values as a list), not one per column")
    return opts


def _first_block_schema(source: Any, options: Mapping[str, Any]) -> pa.Schema:
    from arrow_bridge.api import open_csv

    with open_csv(source, **options) as reader:
        return reader.schema


def _check_column_type(field: pa.Field) -> None:
    t = field.type
    ok = (pa.types.is_integer(t) or t in (pa.float32(), pa.float64()) or t == pa.date32() or t == pa.string()
          or (pa.types.is_timestamp(t) and t.tz is None))
    if not ok:
        raise TypeError(f"column {field.name!r} is {t}: a CSV SSDlet's ports carry integers, float32/64, date32, "
                        "timestamps without a time zone and strings; give it one of those with dtype=")


def _is_string(type_: pa.DataType) -> bool:
    return type_ == pa.string()


def _port_names(names: Sequence[str]) -> list[str]:
    """Each column's port: its name where that is a plain identifier, else ``column_<k>``.

    >>> _port_names(["a", "my col", "at_end", "csv_rows"])
    ['a', 'column_1', 'column_2', 'column_3']
    """
    reserved = {"pages", "carry", "headers_skipped", "at_end"}
    ports: list[str] = []
    for k, name in enumerate(names):
        plain = name.isidentifier() and not keyword.iskeyword(name) and not name.startswith(("_", "csv_", "kept_"))
        candidate = name if plain and name not in reserved else f"column_{k}"
        while candidate in ports or candidate in reserved:
            candidate += "_"
        ports.append(candidate)
    return ports


def parse_prices(device: Any) -> dict[str, tuple[float, float]]:
    """Cycles per unit of each parse counter, ``(device core, host)``: ``device``'s profile's
    ``[cores.cycles]`` and ``[host.cycles]`` prices of the reader's counters, or, without a
    device, the profiles' reader table (twice it on a device core).

    >>> parse_prices(None)["csv_floats"]
    (238.0, 119.0)
    """
    profile = getattr(device, "profile", None)
    prices = {}
    for name in READER_COUNTERS.modeled:
        if profile is not None:
            prices[f"csv_{name}"] = (float(profile[f"cores.cycles.{name}"]), float(profile[f"host.cycles.{name}"]))
        else:
            prices[f"csv_{name}"] = (2 * _READER_TABLE[name], _READER_TABLE[name])
    return prices


@njit(nogil=True, cache=True)
def valid_bytes(bitmap, null_count, valid, rows):
    """An Arrow validity bitmap as a byte per value (a kernel leaves its bitmap
    unset while a column has no null)."""
    if null_count == 0:
        valid[:rows] = 1
        return
    for r in range(rows):
        valid[r] = (bitmap[r >> 3] >> (r & 7)) & 1


def _kernel_namespace(rules: Optional[ValueRules], dialect: Optional[Dialect]) -> dict[str, Any]:
    """What a generated program's body refers to: the reader's kernels, and the read's constants."""
    load_numba()  # the Kernel objects the body calls must be typable when Numba compiles it
    namespace: dict[str, Any] = dict(
        __name__=__name__, np=np, tokenize=tokenize, convert_fixed=column_kernels.convert_fixed,
        convert_strings=column_kernels.convert_strings, valid_bytes=valid_bytes, N_COUNTERS=N_COUNTERS, OK=OK,
        NEEDS_MORE=NEEDS_MORE, OUT_OF_SPACE=OUT_OF_SPACE, MAX_RECORD_BYTES=MAX_RECORD_BYTES,
        compare_bytes=compare_bytes, any_equal=any_equal, in_sorted=in_sorted, starts_with=starts_with,
        ends_with=ends_with, contains=contains)
    if dialect is not None:
        namespace.update(DELIMITER=np.int64(dialect.delimiter), SPECIAL=dialect.special, QUOTE=np.int64(dialect.quote),
                         ESCAPE=np.int64(dialect.escape), DOUBLE_QUOTE=bool(dialect.double_quote))
    if rules is not None:
        for label, spellings in (("NULL", rules.nulls), ("TRUE", rules.trues), ("FALSE", rules.falses)):
            data, offsets, first, empty = spellings
            namespace.update({f"{label}_DATA": data, f"{label}_OFFSETS": offsets, f"{label}_FIRST": first,
                              f"{label}_EMPTY": bool(empty)})
        namespace.update(QUOTED_NULLS=bool(rules.quoted_nulls), STRINGS_CAN_BE_NULL=bool(rules.strings_can_be_null))
    return namespace


_generated = itertools.count(1)


def _compiled_function(name: str, source_text: str, namespace: dict[str, Any]) -> Any:
    """The function ``name`` that ``source_text`` defines, over ``namespace``; its text is
    registered with ``linecache`` as a file of its own, so that the SSDlet's metering (which
    reads a program's source) and tracebacks see it."""
    filename = f"<arrow_bridge.csv_ssdlets {name} #{next(_generated)}>"
    linecache.cache[filename] = (len(source_text), None, source_text.splitlines(True), filename)
    exec(compile(source_text, filename, "exec"), namespace)  # our own template, filled with checked names
    return namespace[name]


# ---- the filter ---------------------------------------------------------------------------------
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
    if _is_string(type_):
        return (f"            a, b, at = p.{port}.offsets[i], p.{port}.offsets[i + 1], p.{out}.offsets[n]\n"
                f"            p.{out}.data[at:at + b - a] = p.{port}.data[a:b]\n"
                f"            p.{out}.offsets[n + 1] = at + b - a\n"
                f"            p.{out}.valid[n] = p.{port}.valid[i]\n")
    return (f"            p.{out}.values[n] = p.{port}.values[i]\n"
            f"            p.{out}.valid[n] = p.{port}.valid[i]\n")


class _Literals:
    """Names for a filter's values in the generated program's namespace."""

    def __init__(self, namespace: dict[str, Any]) -> None:
        self.namespace = namespace

    def add(self, value: Any) -> str:
        name = f"L{len(self.namespace)}"
        self.namespace[name] = value
        return name


_SYMBOLS = {"=": "==", "==": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
_STRING_TESTS = {"starts with": "starts_with", "ends with": "ends_with", "contains": "contains"}


def _test(predicate: Predicate, type_: pa.DataType, port: str, literals: _Literals) -> str:
    """The predicate as a Python expression over row ``i`` of the program's ports."""
    valid = f"p.{port}.valid[i] == 1"
    field = f"p.{port}.data, p.{port}.offsets[i], p.{port}.offsets[i + 1]"
    op, string = predicate.op, _is_string(type_)
    if op in ("is null", "is not null"):
        return f"p.{port}.valid[i] == {0 if op == 'is null' else 1}"
    if op in _SYMBOLS:
        value = literals.add(_literal(predicate, type_))
        if string:
            return f"({valid} and compare_bytes({field}, {value}) {_SYMBOLS[op]} 0)"
        return f"({valid} and p.{port}.values[i] {_SYMBOLS[op]} {value})"
    if op in _STRING_TESTS:
        if not string:
            raise FilterError(f"row_filter: {predicate.op!r} is for string columns; {predicate.column!r} is {type_}")
        return f"({valid} and {_STRING_TESTS[op]}({field}, {literals.add(_literal(predicate, type_))}))"
    values = [v for v in predicate.value if v is not None]
    nulls_in = any(v is None for v in predicate.value)
    if string:
        encoded = [_literal(Predicate(predicate.column, "=", v), type_) for v in values]
        offsets = np.cumsum([0] + [len(e) for e in encoded]).astype(np.int64)
        data = np.concatenate(encoded) if encoded else np.zeros(0, np.uint8)
        member = f"any_equal({field}, {literals.add(data)}, {literals.add(offsets)})"
    else:
        kept = sorted(_literal(Predicate(predicate.column, "=", v), type_) for v in values)
        if any(isinstance(v, float) and math.isnan(v) for v in kept):
            raise FilterError(f"row_filter: NaN in the set of {predicate!r}")
        member = f"in_sorted(p.{port}.values[i], {literals.add(np.array(kept, dtype=type_.to_pandas_dtype() if not pa.types.is_temporal(type_) else np.int64))})"
    found = f"(({valid} and {member}) or (p.{port}.valid[i] == 0 and {nulls_in}))"
    return found if op == "in" else f"(not {found})"


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
        return pa.scalar(value, type=type_).value
    if _is_string(type_) and isinstance(value, str):
        return np.frombuffer(value.encode(), np.uint8).copy()
    raise FilterError(f"row_filter: {predicate.column!r} is {type_}; compare it with a value of that kind, "
                      f"not {value!r}")


@njit(nogil=True, cache=True)
def compare_bytes(data, a, b, literal):
    """-1, 0 or 1 as ``data[a:b]`` sorts before, equal to or after ``literal`` (bytewise, as Arrow compares strings)."""
    n = min(b - a, literal.size)
    for k in range(n):
        if data[a + k] != literal[k]:
            return -1 if data[a + k] < literal[k] else 1
    return 0 if b - a == literal.size else (-1 if b - a < literal.size else 1)


@njit(nogil=True, cache=True)
def any_equal(data, a, b, literals, offsets):
    """Whether ``data[a:b]`` is one of the strings ``literals[offsets[k]:offsets[k + 1]]``."""
    for k in range(offsets.size - 1):
        if compare_bytes(data, a, b, literals[offsets[k]:offsets[k + 1]]) == 0:
            return True
    return False


@njit(nogil=True, cache=True)
def in_sorted(value, values):
    """Whether ``value`` is in the sorted array ``values``."""
    k = np.searchsorted(values, value)
    return k < values.size and values[k] == value


@njit(nogil=True, cache=True)
def starts_with(data, a, b, literal):
    return b - a >= literal.size and compare_bytes(data, a, a + literal.size, literal) == 0


@njit(nogil=True, cache=True)
def ends_with(data, a, b, literal):
    return b - a >= literal.size and compare_bytes(data, b - literal.size, b, literal) == 0


@njit(nogil=True, cache=True)
def contains(data, a, b, literal):
    for s in range(a, b - literal.size + 1):
        if compare_bytes(data, s, s + literal.size, literal) == 0:
            return True
    return False
