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

import copy
import datetime
import itertools
import keyword
import linecache
import math
import os
import tempfile
from dataclasses import dataclass
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
from ndp_core.ssdlets.examples import QUOTED, next_field_state
from ndp_core.ssdlets.graph import Node

__all__ = ["CsvProgram", "csv_parser", "row_filter", "connect_columns", "records_containing", "prefilter_keys",
           "scan_filter", "ScanDecision", "parse_prices", "MAX_RECORD_BYTES"]

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

    def table(self, result: RunResult, node: Union[Node, str]) -> pa.Table:
        """The columns ``node`` (an instance of this program, or its name) sent to the host, named as in the file."""
        name = node if isinstance(node, str) else node.name
        return pa.table({column: result[f"{name}.{port}"] for port, column in self.columns.items()})


def csv_parser(source: Union[str, Any, pa.Schema], *, device: Any = None, records: bool = False,
               **options: Any) -> CsvProgram:
    """The reader's parse as an SSDlet: ``pages`` in, one ``Nullable`` port per column out.

    ``source`` is a file (its first block gives the types, as :func:`arrow_bridge.open_csv`
    infers them) or a ``pyarrow.Schema`` (the file's columns, in order). ``options`` are
    ``read_csv``'s dialect and value options (``sep``, ``quotechar``, ``escapechar``,
    ``na_values``, ``true_values``, ``dtype``, ``decimal``, ``semantics``, ...); options
    that choose rows or columns (``usecols``, ``skiprows``, ``nrows``, ``on_bad_lines``)
    are refused: a graph chooses with further SSDlets. ``device``'s profile prices the work
    counters (default: the profiles' reader table). ``records=True`` makes the input a
    ``records`` port of whole records with their line ends and no header, as
    :func:`records_containing` sends them, instead of file pages.

    A record longer than :data:`MAX_RECORD_BYTES` that a packet boundary cuts, a record
    with another field count, an unterminated quote or a value its port's type does not
    take stops the run with an ``SSDletError``.

    >>> import pyarrow as pa
    >>> csv_parser(pa.schema({"id": pa.int64(), "name": pa.string()})).columns
    {'id': 'id', 'name': 'name'}
    """
    opts = _parse_options(options)
    schema = source if isinstance(source, pa.Schema) else _first_block_schema(source, options)
    key = ("parse", schema, _settings(options), records)
    return _compiled_once(key, lambda: _parse_program(schema, opts, records), parse_prices(device))


def _parse_program(schema: pa.Schema, opts: CsvOptions, records: bool) -> CsvProgram:
    ports = _port_names(schema.names)
    for port, field in zip(ports, schema):
        _check_column_type(field)
    rules, dialect = ValueRules.from_options(opts), Dialect.from_options(opts)
    namespace = _kernel_namespace(rules, dialect)
    namespace["HEADER"] = 1 if opts.header and opts.column_names is None and not records else 0
    body = "".join(_convert_lines(k, port, field.type, rules) for k, (port, field) in enumerate(zip(ports, schema)))
    work = "".join(f"    p.csv_{name}[0] += counters[{READER_COUNTERS.slot(name)}]\n" for name in READER_COUNTERS.modeled)
    text = "p.records.data[:p.records.offsets[p.records.offsets.size - 1]]" if records else "p.pages"
    source_text = _PARSE_TEMPLATE.format(ncols=len(schema), text=text, convert=body, work=work,
                                         returns=", ".join(["rows"] * len(ports)))
    func = _compiled_function("csv_parser", source_text, namespace)
    # Rows a call may send: one per input byte (pages) or record, plus what the carry holds.
    carried = 1 if records else MAX_RECORD_BYTES
    program = CsvProgram(func, inputs={"records": pa.binary()} if records else {"pages": PAGES},
                         outputs={p: Out(Nullable(f.type), extra_rows=carried,
                                         **({"extra_bytes": MAX_RECORD_BYTES} if _is_string(f.type) else {}))
                                  for p, f in zip(ports, schema)},
                         args={}, state={"carry": _CARRY, "headers_skipped": pa.int64()},
                         work=parse_prices(None), budget=1 << 40)
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
    program = _compiled_once(("filter", repr(parsed.groups), schema), lambda: _filter_program(parsed, schema),
                             _FILTER_PRICES)
    program.inputs_by_column = dict(zip(schema.names, _port_names(schema.names)))
    return program


def _filter_program(parsed: RowFilter, schema: pa.Schema) -> CsvProgram:
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
                         args={}, state={}, work=_FILTER_PRICES, budget=1 << 40)
    program.columns = {out: name for name, out in zip(ports, outputs)}
    return program


#: Cycles per value tested and per value kept, (device core, host): as the reader's span stages' prices.
_FILTER_PRICES = {"filter_tests": (3.0, 1.5), "values_kept": (4.0, 2.0)}


def records_containing(keys: Sequence[str], *, device: Any = None, header: bool = True, **options: Any) -> SSDlet:
    """Biscuit's pattern matcher as an SSDlet: file pages in, the records holding
    one of ``keys`` out (``records``, one value per record, line end kept), for
    :func:`csv_parser` with ``records=True``.

    Record ends follow the dialect's quoting (a line feed in a quoted field stays
    in its record); the first record is dropped when ``header``. Its work counts
    ``bytes_searched`` (a profile with a scan pipeline, ``biscuit-pm``'s
    per-channel matcher, charges it there), ``lines_matched`` and
    ``bytes_emitted``, at ``device``'s profile's prices (default ``biscuit-pm``'s).
    Pair it with :func:`prefilter_keys`, which says which keys a filter allows.

    >>> records_containing(["1995-01-17"])
    SSDlet records_containing(pages: pages) -> (records: binary); state carry: ...; work bytes_searched, ...
    """
    opts = _parse_options(options)
    if opts.escape_char is not None:
        raise ValueError("records_containing follows quotes, not an escape character")
    encoded = [key.encode() for key in keys]
    if not encoded or not all(encoded):
        raise ValueError("records_containing needs at least one key, none of them empty")
    return _compiled_once(("match", tuple(encoded), header, _settings(options)),
                          lambda: _match_program(encoded, header, opts), _match_prices(device))


def _match_program(encoded: list[bytes], header: bool, opts: CsvOptions) -> SSDlet:
    namespace = _kernel_namespace(None, None)
    namespace.update(KEY_DATA=np.frombuffer(b"".join(encoded), np.uint8).copy(),
                     KEY_OFFSETS=np.cumsum([0] + [len(k) for k in encoded]).astype(np.int64),
                     HEADER=int(header), DELIMITER=ord(opts.delimiter),
                     QUOTE=ord(opts.quote_char) if opts.quote_char else -1,
                     next_field_state=next_field_state, QUOTED=QUOTED)
    func = _compiled_function("records_containing", _MATCH_TEMPLATE, namespace)
    return SSDlet(func, inputs={"pages": PAGES},
                  outputs={"records": Out(pa.binary(), extra_rows=1, extra_bytes=MAX_RECORD_BYTES)},
                  args={}, state={"carry": _MATCH_CARRY}, work=_match_prices(None), budget=1 << 40)


def _match_prices(device: Any) -> dict[str, tuple[float, float]]:
    """The matcher's counters at ``device``'s profile's prices (default ``biscuit-pm``'s)."""
    profile = getattr(device, "profile", None)
    if profile is None:
        from device_emulator import load_profile

        profile = load_profile("biscuit-pm")
    return {name: _profile_price(profile, name) for name in ("bytes_searched", "lines_matched", "bytes_emitted")}


def prefilter_keys(filters: Filters, schema: pa.Schema, *, quote_char: Optional[str] = '"',
                   escape_char: Optional[str] = None) -> Optional[list[str]]:
    """The texts a record must hold for ``filters`` to keep it, or None when there are none.

    Each AND-group needs an equality (``=``, ``in``) on a date32 column (its values
    are written ``YYYY-MM-DD``, the only spelling the reader reads as a date) or
    a string column (a value without the quote or escape character is written as
    it is, quoted or not); the keys are those values. A group without one, or
    with a null in its ``in``, could keep a record holding no key: then None, and
    the whole file must be parsed.

    >>> import datetime
    >>> schema = pa.schema({"d": pa.date32(), "n": pa.int64()})
    >>> prefilter_keys([("d", "=", datetime.date(1995, 1, 17)), ("n", ">", 3)], schema)
    ['1995-01-17']
    >>> prefilter_keys([[("d", "=", datetime.date(1995, 1, 17))], [("n", "=", 3)]], schema) is None
    True
    """
    parsed = RowFilter(filters)
    if parsed.groups is None:
        return None
    keys: list[str] = []
    for group in parsed.groups:
        found = next((texts for texts in (_key_texts(p, schema, quote_char, escape_char) for p in group)
                      if texts is not None), None)
        if found is None:
            return None
        keys += [k for k in found if k not in keys]
    return keys


def _key_texts(predicate: Predicate, schema: pa.Schema, quote: Optional[str], escape: Optional[str]) -> Optional[list]:
    if predicate.op not in ("=", "==", "in") or predicate.column not in schema.names:
        return None
    values = predicate.value if predicate.op == "in" else [predicate.value]
    type_ = schema.field(predicate.column).type
    if type_ == pa.date32() and all(isinstance(v, datetime.date) and not isinstance(v, datetime.datetime)
                                    for v in values):
        return [v.isoformat() for v in values]
    special = {c for c in (quote, escape) if c}
    if _is_string(type_) and all(isinstance(v, str) and v and not special & set(v) for v in values):
        return list(values)
    return None


_MATCH_CARRY = np.dtype([("bytes", np.uint8, (MAX_RECORD_BYTES,)), ("n", np.int64), ("state", np.int64),
                         ("seen", np.int64)])

_MATCH_TEMPLATE = '''
def records_containing(p):
    c = p.carry[0]
    n = 0
    for i in range(p.pages.size + 1):
        if i < p.pages.size:
            b = p.pages[i]
            c["bytes"][c["n"]] = b
            c["n"] += 1
            ends = b == 10 and c["state"] != QUOTED
            c["state"] = next_field_state(c["state"], b, DELIMITER, QUOTE)
        else:
            ends = p.at_end and c["n"] > 0
        if ends:
            c["seen"] += 1
            if c["seen"] > HEADER and any_key(c["bytes"], 0, c["n"], KEY_DATA, KEY_OFFSETS):
                at = p.records.offsets[n]
                p.records.data[at:at + c["n"]] = c["bytes"][:c["n"]]
                p.records.offsets[n + 1] = at + c["n"]
                n += 1
                p.bytes_emitted[0] += c["n"]
            c["n"] = 0
    p.bytes_searched[0] += p.pages.size
    p.lines_matched[0] += n
    return n
'''


@njit(nogil=True, cache=True)
def any_key(data, a, b, keys, offsets):
    """Whether ``data[a:b]`` holds one of the strings ``keys[offsets[k]:offsets[k + 1]]``."""
    for k in range(offsets.size - 1):
        if contains(data, a, b, keys[offsets[k]:offsets[k + 1]]):
            return True
    return False


@dataclass(frozen=True)
class ScanDecision:
    """How :func:`scan_filter` ran a query: whether the matcher prefiltered the
    records, and the sampled estimate it chose by (modeled seconds of both graphs
    on the same sample of the file)."""

    keys: Optional[tuple[str, ...]]  # what records_containing looks for; None: the filter allows no prefilter
    sample_bytes: int
    selectivity: float  # of the sampled records, the fraction the matcher sends on
    parse_all_s: float  # modeled seconds on the sample: the host parses every record
    prefilter_s: float  # ... the device's matcher sends the records holding a key (inf without keys)

    @property
    def prefilter(self) -> bool:
        return self.prefilter_s < self.parse_all_s


def scan_filter(path: Union[str, Any], filters: Filters, device: Any, *, samples: int = 8, plan: str = "sampled",
                **options: Any) -> tuple[pa.Table, RunResult, ScanDecision]:
    """Biscuit's filtered scan: ``read_csv(path, filters=...)``'s Table, from an SSDlet graph on ``device``.

    When :func:`prefilter_keys` finds keys, both plans run on a sample of the
    file (``samples`` record ranges spread over it; real kernels, modeled
    time): the host parsing every record, and the device's
    :func:`records_containing` sending only records holding a key to the host
    parse. The faster, in modeled time, then reads the whole file: Biscuit
    samples pages to estimate selectivity and offloads a filter only where it
    pays. Parse and filter run on the host (as MariaDB's did on Biscuit's).
    ``plan="prefilter"`` or ``"parse_all"`` runs that plan whatever the sample says.
    Returns the Table, the run's :class:`~ndp_core.ssdlets.RunResult` (work
    and modeled time) and the :class:`ScanDecision`.
    """
    if plan not in ("sampled", "prefilter", "parse_all"):
        raise ValueError(f"plan must be 'sampled', 'prefilter' or 'parse_all', got {plan!r}")
    opts = _parse_options(options)
    parse = csv_parser(path, device=device, **options)
    keep = row_filter(filters, parse.schema)
    keys = prefilter_keys(filters, parse.schema, quote_char=opts.quote_char, escape_char=opts.escape_char)
    matcher = parse_records = None
    if keys is not None and opts.escape_char is None:
        header = opts.header and opts.column_names is None
        matcher = records_containing(keys, device=device, header=header, **options)
        parse_records = csv_parser(parse.schema, device=device, records=True, **options)
    elif plan == "prefilter":
        raise ValueError(f"filters {filters!r} name no key a record must hold (see prefilter_keys)")
    with tempfile.TemporaryDirectory() as folder:
        sample = _sample_file(path, os.path.join(folder, "sample.csv"), samples, opts)
        everything = _filter_graph(device, sample, parse, keep)
        timings = {"parse_all_s": everything.model.makespan_s, "prefilter_s": math.inf, "selectivity": 1.0}
        if matcher is not None:
            matched = _filter_graph(device, sample, parse_records, keep, matcher)
            sent, read = matched.work[0].counters["lines_matched"], everything.work[0].counters["csv_rows"]
            timings.update(prefilter_s=matched.model.makespan_s, selectivity=sent / max(read, 1))
        decision = ScanDecision(tuple(keys) if keys is not None else None, os.path.getsize(sample), **timings)
    prefilter = decision.prefilter if plan == "sampled" else plan == "prefilter"
    result = _filter_graph(device, path, parse_records, keep, matcher) if prefilter else \
        _filter_graph(device, path, parse, keep)
    return keep.table(result, "row_filter"), result, decision


#: Programs compiled in this process, by what they were made from: compiling one takes
#: seconds (about 3 s, and 0.5 s a column, here), so each schema, filter and key set
#: compiles once; prices are the model's, not the code's, so each caller gets its own copy.
_PROGRAMS: dict[tuple, SSDlet] = {}


def _compiled_once(key: tuple, build: Any, prices: dict[str, tuple[float, float]]) -> Any:
    """The program ``build()`` makes, compiled once for ``key``; a copy at ``prices``."""
    if key not in _PROGRAMS:
        program = build()
        program.app  # noqa: B018 - compiled now: the copies share the compiled app
        _PROGRAMS[key] = program
    priced = copy.copy(_PROGRAMS[key])
    priced.work = {name: prices[name] for name in priced.work}
    return priced


def _filter_graph(device: Any, path: Any, parse: CsvProgram, keep: CsvProgram,
                  matcher: Optional[SSDlet] = None) -> RunResult:
    """scan -> [records_containing on the device ->] parse -> filter on the host, run."""
    from ndp_core.ssdlets import Application

    app = Application(device, pages_per_packet=64)
    if matcher is None:
        first = parsed = app.add(parse, on="host")
    else:
        first, parsed = app.add(matcher, on="device"), app.add(parse, on="host")
        app.connect(first.records, parsed.records)
    app.scan(first.pages, path)
    kept = app.add(keep, on="host", name="row_filter")
    connect_columns(app, parsed, kept)
    for port in keep.columns:
        app.collect(kept.port(port))
    return app.run()


def _sample_file(path: Any, sample: str, samples: int, opts: CsvOptions) -> str:
    """A file of ``path``'s header and ``samples`` record ranges spread over its data."""
    from arrow_bridge.preamble import read_preamble
    from arrow_bridge.ranges import record_ranges
    from arrow_bridge.source import open_source

    size = os.path.getsize(path)
    with open_source(os.fspath(path)) as source:
        start = read_preamble(source, opts).data_offset
    parts = max(4 * samples, (size - start) // (1 << 19))  # ranges of about 512 KiB
    ranges = [r for r in record_ranges(path, start, size, max(1, (size - start) // parts), opts) if r[1] > r[0]]
    chosen = ranges[::max(1, len(ranges) // samples)][:samples]
    with open(path, "rb") as src, open(sample, "wb") as out:
        out.write(src.read(start))
        for a, b in chosen:
            src.seek(a)
            out.write(src.read(b - a))
    return sample


def connect_columns(app: Any, upstream: Node, downstream: Node) -> None:
    """Connects each column ``upstream`` sends (a :class:`CsvProgram`'s node) to
    ``downstream``'s input for the same column (a :func:`row_filter`'s node)."""
    wanted = downstream.program.inputs_by_column
    for port, name in upstream.program.columns.items():
        app.connect(upstream.port(port), downstream.port(wanted[name]))


# ---- the parse ----------------------------------------------------------------------------------
_PARSE_TEMPLATE = '''
def csv_parser(p):
    text = {text}
    c = p.carry[0]
    kept = c["n"]
    size = kept + text.size
    buf = np.empty(max(size, 1), np.uint8)
    for i in range(kept):
        buf[i] = c["bytes"][i]
    buf[kept:size] = text
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


def _settings(options: Mapping[str, Any]) -> str:
    """Options as a key for :data:`_PROGRAMS` (their values are plain data and Arrow types)."""
    return repr(sorted(options.items(), key=lambda item: item[0]))


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
    reserved = {"pages", "records", "carry", "headers_skipped", "at_end"}
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
            prices[f"csv_{name}"] = _profile_price(profile, name)
        else:
            prices[f"csv_{name}"] = (2 * _READER_TABLE[name], _READER_TABLE[name])
    return prices


def _profile_price(profile: Any, counter: str) -> tuple[float, float]:
    return float(profile[f"cores.cycles.{counter}"]), float(profile[f"host.cycles.{counter}"])


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
        ends_with=ends_with, contains=contains, any_key=any_key)
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
