"""What the CSV SSDlets share: generating and compiling a program once, its ports' names,
the options it follows, its prices, and the byte helpers generated bodies call.

A program's body is Python source generated for one schema, filter shape or key set
(:func:`compiled_function`; a filter's values are its arguments), compiled by Numba when
first needed (or loaded, where an earlier process compiled it:
:mod:`ndp_core.ssdlets.disk_cache`); :func:`compiled_once` keeps it for the process, so
each caller gets a copy at its own device's prices.
"""
from __future__ import annotations

import copy
import itertools
import keyword
import linecache
from typing import Any, Mapping, Optional, Sequence, Union

import numpy as np
import pyarrow as pa

from arrow_bridge.converters import ValueRules
from arrow_bridge.dialect import Dialect
from arrow_bridge.jit import load_numba, njit
from arrow_bridge.kernels import columns as column_kernels
from arrow_bridge.kernels.status import N_COUNTERS, NEEDS_MORE, OK, OUT_OF_SPACE, READER_COUNTERS
from arrow_bridge.kernels.tokenizer import tokenize
from arrow_bridge.options import CsvOptions, resolve_options
from arrow_bridge.span_stages import STAGE_COUNTERS
from ndp_core.ssdlets import SSDlet
from ndp_core.ssdlets.application import RunResult
from ndp_core.ssdlets.graph import Node

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
    #: Arguments bound when the program was made (a filter's values); an instance takes
    #: them unless :meth:`Application.add <ndp_core.ssdlets.Application.add>` is given others.
    arg_values: Mapping[str, Any] = {}

    def arg_words(self, values: Mapping[str, Any]) -> list[int]:
        """The arguments' words: :attr:`arg_values`, with ``values`` given in their place."""
        return super().arg_words({**self.arg_values, **values})

    @property
    def schema(self) -> pa.Schema:
        """The columns it sends, named as in the file (what :func:`row_filter` takes)."""
        return pa.schema([(name, self.outputs[port].type.arrow) for port, name in self.columns.items()])

    def table(self, result: RunResult, node: Union[Node, str]) -> pa.Table:
        """The columns ``node`` (an instance of this program, or its name) sent to the host, named as in the file."""
        name = node if isinstance(node, str) else node.name
        return pa.table({column: result[f"{name}.{port}"] for port, column in self.columns.items()})


def connect_columns(app: Any, upstream: Union[Node, Sequence[Node]], downstream: Node) -> None:
    """Connects each column ``upstream`` sends (a :class:`CsvProgram`'s node, or
    several, which ``downstream`` then takes in turn) to ``downstream``'s input
    for the same column (a :func:`row_filter`'s node)."""
    wanted = downstream.program.inputs_by_column
    for node in [upstream] if isinstance(upstream, Node) else upstream:
        for port, name in node.program.columns.items():
            app.connect(node.port(port), downstream.port(wanted[name]))





#: Programs made in this process, by what they were made from: compiling one takes
#: seconds (about 3 s, and 0.5 s a column, here; loading it from the disk cache, tenths),
#: so each schema, filter shape and key set is made once; prices are the model's, not the
#: code's, so each caller gets its own copy.
_PROGRAMS: dict[tuple, SSDlet] = {}


def compiled_once(key: tuple, build: Any, prices: dict[str, tuple[float, float]]) -> Any:
    """The program ``build()`` makes, compiled once for ``key``; a copy at ``prices``."""
    if key not in _PROGRAMS:
        program = build()
        program.app  # noqa: B018 - compiled now: the copies share the compiled app
        _PROGRAMS[key] = program
    priced = copy.copy(_PROGRAMS[key])
    priced.work = {name: prices[name] for name in priced.work}
    return priced


def kernel_namespace(rules: Optional[ValueRules], dialect: Optional[Dialect]) -> dict[str, Any]:
    """What a generated program's body refers to: the reader's kernels, and the read's constants."""
    load_numba()  # the Kernel objects the body calls must be typable when Numba compiles it
    namespace: dict[str, Any] = dict(
        __name__=__name__, np=np, tokenize=tokenize, convert_fixed=column_kernels.convert_fixed,
        convert_strings=column_kernels.convert_strings, N_COUNTERS=N_COUNTERS, OK=OK,
        NEEDS_MORE=NEEDS_MORE, OUT_OF_SPACE=OUT_OF_SPACE, compare_bytes=compare_bytes, any_equal=any_equal,
        in_sorted=in_sorted, starts_with=starts_with, ends_with=ends_with, contains=contains)
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


def compiled_function(name: str, source_text: str, namespace: dict[str, Any]) -> Any:
    """The function ``name`` that ``source_text`` defines, over ``namespace``; its text is
    registered with ``linecache`` as a file of its own, so that the SSDlet's metering (which
    reads a program's source) and tracebacks see it."""
    filename = f"<arrow_bridge.csv_ssdlets {name} #{next(_generated)}>"
    linecache.cache[filename] = (len(source_text), None, source_text.splitlines(True), filename)
    exec(compile(source_text, filename, "exec"), namespace)  # our own template, filled with checked names
    return namespace[name]



def parse_options(options: Mapping[str, Any]) -> CsvOptions:
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


# Resolved options a program's code depends on (the schema, also part of its key, holds the
# names and types): two spellings of one dialect (``sep=","`` or none) share a program.
_OPTIONS_COMPILED = ("delimiter", "quote_char", "double_quote", "escape_char", "header", "null_values", "true_values",
                     "false_values", "strings_can_be_null", "quoted_strings_can_be_null", "decimal_point",
                     "check_utf8", "semantics")


def settings_key(opts: CsvOptions) -> str:
    """Resolved options as a key for :data:`_PROGRAMS`: only those a program's code depends on.

    >>> settings_key(parse_options({"sep": ","})) == settings_key(parse_options({"header": 0}))
    True
    """
    return repr([(name, getattr(opts, name)) for name in _OPTIONS_COMPILED])


def check_column_type(field: pa.Field) -> None:
    t = field.type
    ok = (pa.types.is_integer(t) or t in (pa.float32(), pa.float64()) or t == pa.date32() or t == pa.string()
          or (pa.types.is_timestamp(t) and t.tz is None))
    if not ok:
        raise TypeError(f"column {field.name!r} is {t}: a CSV SSDlet's ports carry integers, float32/64, date32, "
                        "timestamps without a time zone and strings; give it one of those with dtype=")


def is_string(type_: pa.DataType) -> bool:
    return type_ == pa.string()


def port_names(names: Sequence[str]) -> list[str]:
    """Each column's port: its name where that is a plain identifier, else ``column_<k>``.

    >>> port_names(["a", "my col", "at_end", "csv_rows"])
    ['a', 'column_1', 'column_2', 'column_3']
    """
    # The programs' own fields, and the prefixes of the aggregate's and filter's outputs.
    reserved = {"pages", "records", "carry", "headers_skipped", "started", "consumed", "at_end", "error_at",
                "filter_tests", "values_kept", "aggregate_updates"}
    ports: list[str] = []
    for k, name in enumerate(names):
        plain = name.isidentifier() and not keyword.iskeyword(name) and \
            not name.startswith(("_", "csv_", "kept_", "key_", "count_", "isum_", "fsum_", "min_", "max_"))
        candidate = name if plain and name not in reserved else f"column_{k}"
        while candidate in ports or candidate in reserved:
            candidate += "_"
        ports.append(candidate)
    return ports


def parse_prices(device: Any) -> dict[str, tuple[float, float]]:
    """Cycles per unit of each parse counter, ``(device core, host)``: the reader's
    counters at ``device``'s profile's prices (default ``modern-gen4``'s, whose host
    prices are the reader table measured on this reader).

    >>> parse_prices(None)["csv_floats"]
    (59.8, 29.9)
    """
    prices = counter_prices(device, READER_COUNTERS.modeled)
    return {f"csv_{name}": price for name, price in prices.items()}


def stage_prices(device: Any, names: Sequence[str] = STAGE_COUNTERS.names) -> dict[str, tuple[float, float]]:
    """Cycles per unit of the span stages' counters (``filter_tests``, ``values_kept``,
    ``aggregate_updates``), ``(device core, host)``, as :func:`counter_prices` finds them.

    >>> stage_prices(None, ["filter_tests"])
    {'filter_tests': (4.0, 2.0)}
    """
    return counter_prices(device, names)


def counter_prices(device: Any, names: Sequence[str], default: str = "modern-gen4") -> dict[str, tuple[float, float]]:
    """``(device core, host)`` cycles per unit of each counter in ``names``: ``[cores.cycles]``
    and ``[host.cycles]`` of ``device``'s profile, or of the ``default`` profile without one."""
    profile = getattr(device, "profile", None)
    if profile is None:
        from device_emulator import load_profile

        profile = load_profile(default)
    return {name: (float(profile[f"cores.cycles.{name}"]), float(profile[f"host.cycles.{name}"])) for name in names}



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
