"""Reader options: pandas-style keywords and pyarrow option objects, normalized.

Users come with either vocabulary, so :func:`resolve_options` accepts both:
pyarrow's ``ReadOptions``/``ParseOptions``/``ConvertOptions`` are applied
first, then pandas-style keywords (``sep``, ``header``, ``names``, ...) on top.
Everything downstream sees one frozen :class:`CsvOptions`.
"""
from __future__ import annotations

import csv
import itertools
import numbers
import os
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import pyarrow as pa
import pyarrow.csv as pacsv

from arrow_bridge.column_names import ImplicitColumns
from arrow_bridge.errors import warn_at_caller

from arrow_bridge.transcoding import check_error_handler, normalize_encoding

if TYPE_CHECKING:
    from arrow_bridge.aggregates import GroupedQuery
    from arrow_bridge.filters import RowFilter

_DEFAULT_CONVERT = pacsv.ConvertOptions()
ISO8601 = pacsv.ISO8601  # the marker pyarrow puts in timestamp_parsers for its ISO 8601 parser
DEFAULT_NULL_VALUES = tuple(_DEFAULT_CONVERT.null_values)
DEFAULT_TRUE_VALUES = tuple(_DEFAULT_CONVERT.true_values)
DEFAULT_FALSE_VALUES = tuple(_DEFAULT_CONVERT.false_values)
#: pandas' booleans: ``true`` and ``false`` in any case (its C parser compares them
#: case-blind), not ``1``/``0``.
PANDAS_TRUE_VALUES = tuple("".join(letters) for letters in itertools.product(*zip("true", "TRUE")))
PANDAS_FALSE_VALUES = tuple("".join(letters) for letters in itertools.product(*zip("false", "FALSE")))
#: pandas' default NA spellings (``pandas._libs.parsers.STR_NA_VALUES``): pyarrow's and two more.
PANDAS_NULL_VALUES = (*DEFAULT_NULL_VALUES, "<NA>", "None")
#: How values read when no type is given: as ``pyarrow.csv`` reads them, or as ``pandas.read_csv`` does.
SEMANTICS = ("pyarrow", "pandas")
DEFAULT_BLOCK_SIZE = 2 << 20
#: pyarrow's: without a block_size, its stream's first block, whose rows give the types, is this long.
PYARROW_BLOCK_SIZE = 1 << 20
MAX_BLOCK_SIZE = 1 << 30
ON_BAD_LINES = ("error", "skip", "warn")


def is_iso8601(parser: Any) -> bool:
    """Whether a ``timestamp_parsers`` entry is pyarrow's ISO 8601 marker (a copy too: pickling makes one).

    >>> is_iso8601(ISO8601), is_iso8601("%Y")
    (True, False)
    """
    return isinstance(parser, type(ISO8601))


#: ``columns_keyword`` of ``usecols`` given as a callable (``read_pandas`` passes the names it took):
#: pandas' implicit index is kept as without ``usecols`` (arrow_bridge.preamble).
CALLABLE_USECOLS = "usecols (a callable)"


@dataclass(frozen=True)
class CsvOptions:
    """Everything the reader needs to know, in one place (pyarrow's semantics)."""

    delimiter: str = ","
    quote_char: str | None = '"'
    double_quote: bool = True
    escape_char: str | None = None
    skip_rows: int = 0
    skip_rows_after_names: int = 0
    newlines_in_values: bool = False  # pyarrow's: then skip_rows_after_names counts records, not lines
    column_names: tuple[str, ...] | None = None  # given names; None: read or generate
    header: bool = True  # a header row holds the names (skipped when names are given)
    null_values: tuple[str, ...] = DEFAULT_NULL_VALUES
    true_values: tuple[str, ...] = DEFAULT_TRUE_VALUES
    false_values: tuple[str, ...] = DEFAULT_FALSE_VALUES
    strings_can_be_null: bool = False
    quoted_strings_can_be_null: bool = True
    column_types: Mapping[str | int, pa.DataType] = field(default_factory=dict)  # by name; by position (pandas)
    default_type: pa.DataType | None = None  # dtype=<one type>, default_column_type: every column not in column_types
    column_null_values: Mapping[str | int, tuple[str, ...]] = field(default_factory=dict)  # pandas' na_values dict
    auto_dict_encode: bool = False
    auto_dict_max_cardinality: int = 50
    timestamp_parsers: tuple[Any, ...] = ()  # strptime formats and/or ISO8601; () is ISO 8601 alone
    ignore_empty_lines: bool = True
    include_columns: tuple[str | int, ...] | None = None
    include_missing_columns: bool = False
    columns_keyword: str = "include_columns"  # how the caller chose columns ("usecols"), for errors
    decimal_point: str = "."
    check_utf8: bool = True
    encoding: str = "utf-8"  # any Python text codec (normalized name); others are transcoded to UTF-8
    encoding_errors: str = "strict"  # a codecs error handler: "strict", "replace", "ignore", ...
    block_size: int | None = None  # None: a device's task size (Device.task_bytes), else DEFAULT_BLOCK_SIZE
    n_threads: int = 0  # 0: all cores
    nrows: int | None = None
    on_bad_lines: str | Callable = "error"
    row_filter: RowFilter | None = None  # filters=: the rows kept (arrow_bridge.filters)
    grouped_query: GroupedQuery | None = None  # aggregate_csv's: each span reduced to a partial aggregate
    # "pandas": no date/time/timestamp inference, pandas' NA spellings, text columns take nulls (pandas_semantics)
    semantics: str = "pyarrow"
    # pandas' implicit index (read_pandas sets it from index_col): how a first record with more fields than
    # names is read (arrow_bridge.column_names.implicit_index); None: an error, as in pyarrow
    implicit_index: str | tuple[int, ...] | None = None
    made_up_columns: ImplicitColumns = ImplicitColumns()  # the names the implicit index made up (the preamble's)
    # read_pandas' chunks (None: any other read): a stream typing each chunk by its values as far as it can
    # (CsvReader.stream), these inferred columns read as text (a later value broke their first-block type)
    chunk_typed_columns: tuple[str, ...] | None = None
    # read_pandas' dtype dict: its names that also type a repeated header field's repeats (a.1 for a), as in pandas
    repeats_typed: tuple[str, ...] = ()
    # False with pandas' quoting=csv.QUOTE_NONNUMERIC: its parser then infers no integer column (floats)
    infer_integers: bool = True

    def __post_init__(self) -> None:
        for name in ("delimiter", "decimal_point"):
            _check_single_byte(name, getattr(self, name))
        for name in ("quote_char", "escape_char"):
            if getattr(self, name) is not None:
                _check_single_byte(name, getattr(self, name))
        if self.block_size is not None and not 1 <= self.block_size <= MAX_BLOCK_SIZE:
            raise ValueError(f"block_size must be in [1, {MAX_BLOCK_SIZE}], got {self.block_size}")
        if self.on_bad_lines not in ON_BAD_LINES and not callable(self.on_bad_lines):
            raise ValueError(f"on_bad_lines must be one of {ON_BAD_LINES} or a callable")
        if self.semantics not in SEMANTICS:
            raise ValueError(f"semantics must be one of {SEMANTICS}, got {self.semantics!r}")
        if self.semantics == "pandas" and self.timestamp_parsers:
            raise ValueError("timestamp_parsers infer timestamps and semantics='pandas' infers none: "
                             "give those columns a timestamp dtype instead")
        if self.implicit_index not in (None, "leading", "trailing") and not (
                isinstance(self.implicit_index, tuple) and all(isinstance(p, int) for p in self.implicit_index)):
            raise ValueError(f"implicit_index must be None, 'leading', 'trailing' or a tuple of positions, "
                             f"got {self.implicit_index!r}")
        if self.nrows is not None and self.nrows < 0:
            raise ValueError("nrows must be >= 0")
        for parser in self.timestamp_parsers:
            if not (is_iso8601(parser) or isinstance(parser, str)):
                raise TypeError(f"timestamp_parsers takes strptime formats and pyarrow.csv.ISO8601, got {parser!r}")
        # LookupError for an unknown codec or handler, as pandas raises.
        object.__setattr__(self, "encoding", normalize_encoding(self.encoding))
        object.__setattr__(self, "encoding_errors", check_error_handler(self.encoding_errors))

    @property
    def columns_by_usecols(self) -> bool:
        """Whether pandas' ``usecols`` (a list or a callable) chose the columns.

        >>> CsvOptions(include_columns=("a",), columns_keyword="usecols").columns_by_usecols
        True
        """
        return self.include_columns is not None and self.columns_keyword in ("usecols", CALLABLE_USECOLS)

    @property
    def span_bytes(self) -> int:
        """The bytes of text per span: ``block_size``, or :data:`DEFAULT_BLOCK_SIZE` when unset.

        >>> CsvOptions().span_bytes, CsvOptions(block_size=4096).span_bytes
        (2097152, 4096)
        """
        return self.block_size or DEFAULT_BLOCK_SIZE

    @property
    def custom_timestamps(self) -> bool:
        """Whether ``timestamp_parsers`` name anything but ISO 8601 (the kernels' own parser).

        >>> CsvOptions().custom_timestamps, CsvOptions(timestamp_parsers=(ISO8601,)).custom_timestamps
        (False, False)
        >>> CsvOptions(timestamp_parsers=("%d/%m/%Y",)).custom_timestamps
        True
        """
        return any(not is_iso8601(parser) for parser in self.timestamp_parsers)

    @property
    def threads(self) -> int:
        """The thread count to use (``n_threads``, or all cores when 0)."""
        return self.n_threads or os.cpu_count() or 1


def _check_single_byte(name: str, value: str) -> None:
    if not isinstance(value, str) or len(value.encode()) != 1:
        raise ValueError(f"{name} must be a single one-byte character, got {value!r}")


def resolve_options(
    read_options: pacsv.ReadOptions | None = None,
    parse_options: pacsv.ParseOptions | None = None,
    convert_options: pacsv.ConvertOptions | None = None,
    **keywords: Any,
) -> CsvOptions:
    """Builds :class:`CsvOptions` from pyarrow option objects and pandas keywords.

    >>> resolve_options(sep=";", usecols=["a"]).include_columns
    ('a',)
    """
    opts = CsvOptions()
    if read_options is not None:
        opts = _apply_read_options(opts, read_options)
    if parse_options is not None:
        opts = _apply_parse_options(opts, parse_options)
    if convert_options is not None:
        opts = _apply_convert_options(opts, convert_options)
    return _apply_pandas_keywords(opts, keywords)


def _apply_read_options(opts: CsvOptions, ro: pacsv.ReadOptions) -> CsvOptions:
    names = tuple(ro.column_names) or None
    if names is not None and ro.autogenerate_column_names:  # pyarrow's own check, its error
        raise pa.ArrowInvalid("ReadOptions: autogenerate_column_names cannot be true when column_names are provided")
    return replace(
        opts,
        encoding=ro.encoding,  # pyarrow has no error handler: undecodable bytes raise, as there
        block_size=ro.block_size,
        n_threads=opts.n_threads if ro.use_threads else 1,
        skip_rows=ro.skip_rows,
        skip_rows_after_names=ro.skip_rows_after_names,
        column_names=names,
        header=names is None and not ro.autogenerate_column_names,
    )


def _apply_parse_options(opts: CsvOptions, po: pacsv.ParseOptions) -> CsvOptions:
    # quoted line breaks are always read exactly, across blocks too: newlines_in_values only says how
    # skip_rows_after_names counts (arrow_bridge.preamble)
    handler = po.invalid_row_handler
    return replace(
        opts,
        newlines_in_values=po.newlines_in_values,
        ignore_empty_lines=po.ignore_empty_lines,
        delimiter=po.delimiter,
        quote_char=po.quote_char or None,
        double_quote=po.double_quote,
        escape_char=po.escape_char or None,
        on_bad_lines=handler if handler is not None else opts.on_bad_lines,
    )


def _apply_convert_options(opts: CsvOptions, co: pacsv.ConvertOptions) -> CsvOptions:
    return replace(
        opts,
        default_type=co.default_column_type if co.default_column_type is not None else opts.default_type,
        auto_dict_encode=co.auto_dict_encode,
        auto_dict_max_cardinality=co.auto_dict_max_cardinality,
        timestamp_parsers=tuple(co.timestamp_parsers),
        column_types={name: co.column_types.field(name).type for name in co.column_types.names}
        if isinstance(co.column_types, pa.Schema)
        else dict(co.column_types),
        null_values=tuple(co.null_values),
        true_values=tuple(co.true_values),
        false_values=tuple(co.false_values),
        strings_can_be_null=co.strings_can_be_null,
        quoted_strings_can_be_null=co.quoted_strings_can_be_null,
        include_columns=tuple(co.include_columns) or None,
        include_missing_columns=co.include_missing_columns,
        decimal_point=co.decimal_point,
        check_utf8=co.check_utf8,
    )


_PANDAS_KEYWORDS = {
    "sep", "delimiter", "header", "names", "usecols", "dtype", "na_values", "keep_default_na",
    "true_values", "false_values", "skiprows", "nrows", "on_bad_lines", "quotechar",
    "escapechar", "doublequote", "quoting", "decimal", "encoding", "encoding_errors", "n_threads", "block_size",
    "filters", "semantics", "na_filter", "skip_blank_lines", "raw_text_columns", "implicit_index",
    "chunk_typed_columns", "columns_keyword", "repeats_typed",
}
#: pandas keywords that choose how pandas parses, not what: accepted with a warning.
IGNORED_PANDAS_KEYWORDS = {
    "engine": "arrow_bridge has one parser",
    "low_memory": "types are inferred per block and settled over the whole file, never mixed",
    "memory_map": "local files are read in blocks by the C++ engine",
    "float_precision": "floats are always correctly rounded (round trip)",
    "cache_dates": "parse_dates columns go through pandas.to_datetime, which caches repeated values",
}


def _apply_pandas_keywords(opts: CsvOptions, kw: dict[str, Any]) -> CsvOptions:
    for key in sorted(set(kw) & set(IGNORED_PANDAS_KEYWORDS)):
        warn_at_caller(f"read_csv({key}={kw.pop(key)!r}) is ignored: {IGNORED_PANDAS_KEYWORDS[key]}")
    unknown = set(kw) - _PANDAS_KEYWORDS
    if unknown:
        raise TypeError(f"read_csv() got unexpected keyword argument(s): {', '.join(sorted(unknown))}")
    if kw.get("semantics") is not None:  # first: na_values add to pandas' spellings
        opts = pandas_semantics(opts) if kw["semantics"] == "pandas" else replace(opts, semantics=kw["semantics"])
    changes: dict[str, Any] = {}
    if kw.get("sep") is not None and kw.get("delimiter") is not None:
        raise ValueError("Specified a sep and a delimiter; you can only specify one.")  # pandas' words
    sep = kw.get("sep", kw.get("delimiter"))
    if sep is not None:
        changes["delimiter"] = sep
    if "quotechar" in kw:
        changes["quote_char"] = kw["quotechar"]
    if kw.get("quoting") == csv.QUOTE_NONE:
        changes["quote_char"] = None
    if kw.get("quoting") == csv.QUOTE_NONNUMERIC:  # pandas: unquoted fields are numbers, floats
        changes["infer_integers"] = False
    if "escapechar" in kw:
        changes["escape_char"] = kw["escapechar"]
    if "doublequote" in kw:
        changes["double_quote"] = bool(kw["doublequote"])
    if kw.get("skip_blank_lines") is False:  # pandas' spelling of pyarrow's ignore_empty_lines
        changes["ignore_empty_lines"] = False
    if "decimal" in kw:
        changes["decimal_point"] = kw["decimal"]
    for key in ("encoding", "encoding_errors"):
        if kw.get(key) is not None:
            changes[key] = kw[key]
    changes.update(_header_changes(opts, kw))
    changes.update(_value_changes(opts, kw))
    for key in ("nrows", "on_bad_lines", "n_threads", "block_size", "implicit_index"):
        if kw.get(key) is not None:
            changes[key] = kw[key]
    for key in ("chunk_typed_columns", "repeats_typed"):
        if kw.get(key) is not None:
            changes[key] = tuple(kw[key])
    if kw.get("usecols") is not None:
        changes["include_columns"] = _usecols(kw["usecols"])
        changes["columns_keyword"] = kw.get("columns_keyword") or "usecols"
    if kw.get("dtype") is not None:
        changes.update(_dtype_changes(kw["dtype"]))
    if kw.get("filters") is not None:
        from arrow_bridge.filters import RowFilter  # here: pyarrow.compute costs start-up time

        changes["row_filter"] = RowFilter(kw["filters"])
        if opts.semantics == "pandas":
            changes.update(_filtered_dates(changes["row_filter"], changes.get("column_types", opts.column_types),
                                           changes.get("default_type", opts.default_type)))
    return replace(opts, **changes)


def _filtered_dates(row_filter: RowFilter, column_types: Mapping[str | int, pa.DataType],
                    default_type: pa.DataType | None) -> dict[str, Any]:
    """Under pandas' semantics, columns a filter compares with dates are read as dates (not inferred)."""
    dated = {name: type_ for name, type_ in row_filter.temporal_columns().items() if name not in column_types}
    if not dated or default_type is not None:
        return {}
    return {"column_types": {**column_types, **dated}}


def pandas_semantics(opts: CsvOptions) -> CsvOptions:
    """``opts`` reading values as ``pandas.read_csv`` does: pandas' NA
    spellings (pyarrow's plus ``<NA>`` and ``None``) null in every column,
    text and quoted ones included; pandas' booleans, words only (``1`` and ``0``
    are ints; a column asked to be bool takes them too); and no column
    inferred as a date, time or timestamp (pandas leaves them text unless
    ``parse_dates``).

    >>> opts = pandas_semantics(CsvOptions())
    >>> opts.strings_can_be_null, opts.null_values[-2:], opts.semantics
    (True, ('<NA>', 'None'), 'pandas')
    """
    nulls = PANDAS_NULL_VALUES if opts.null_values == DEFAULT_NULL_VALUES else opts.null_values
    trues = PANDAS_TRUE_VALUES if opts.true_values == DEFAULT_TRUE_VALUES else opts.true_values
    falses = PANDAS_FALSE_VALUES if opts.false_values == DEFAULT_FALSE_VALUES else opts.false_values
    return replace(opts, semantics="pandas", null_values=nulls, true_values=trues, false_values=falses,
                   strings_can_be_null=True, quoted_strings_can_be_null=True)


def _header_changes(opts: CsvOptions, kw: dict[str, Any]) -> dict[str, Any]:
    """pandas' header/names/skiprows: header=None means no header row;
    header=N skips N rows first; names with header=0 replace the header row."""
    changes: dict[str, Any] = {}
    skip = kw.get("skiprows")
    if skip is not None:
        if not isinstance(skip, int) or isinstance(skip, bool):
            raise NotImplementedError("skiprows must be an int (rows skipped at the start)")
        changes["skip_rows"] = skip
    names = kw.get("names")
    header = kw.get("header", "infer")
    if names is not None:
        names = list(names)
        if len(set(names)) != len(names):
            raise ValueError("Duplicate names are not allowed.")  # pandas' words
        changes["column_names"] = tuple(str(n) for n in names)
        changes["header"] = header not in ("infer", None)
    elif header is None:
        changes.update(column_names=None, header=False)
    if isinstance(header, int) and not isinstance(header, bool):
        changes["skip_rows"] = changes.get("skip_rows", opts.skip_rows) + header
        changes["header"] = True
    elif header not in ("infer", None):
        raise NotImplementedError(f"header={header!r}: use an int, None or 'infer'")
    return changes


def _value_changes(opts: CsvOptions, kw: dict[str, Any]) -> dict[str, Any]:
    """pandas adds na/true/false spellings to the defaults (unless told not to);
    ``na_filter=False`` makes no value missing, whatever ``na_values`` say.
    ``raw_text_columns`` (names or positions) get no null spelling at all:
    their text as it is (``read_pandas``' converters take it so)."""
    changes: dict[str, Any] = {}
    if not kw.get("na_filter", True):
        kw = {key: value for key, value in kw.items() if key != "na_values"}
    base_nulls = opts.null_values if kw.get("keep_default_na", True) else ()
    spellings = _pandas_spellings if opts.semantics == "pandas" else _spellings
    if isinstance(kw.get("na_values"), Mapping):
        # pandas: each named column's own spellings (added to the defaults unless keep_default_na=False);
        # the other columns keep the defaults. Names the file lacks are ignored, as pandas ignores them.
        changes["column_null_values"] = {
            _column_key(key): tuple(dict.fromkeys([*base_nulls, *spellings(extra)]))
            for key, extra in kw["na_values"].items()}
        changes["null_values"] = base_nulls
    elif kw.get("na_values") is not None:
        changes["null_values"] = tuple(dict.fromkeys([*base_nulls, *spellings(kw["na_values"])]))
    elif not kw.get("keep_default_na", True) or not kw.get("na_filter", True):
        changes["null_values"] = ()
    if kw.get("raw_text_columns"):
        raw = {_column_key(key): () for key in kw["raw_text_columns"]}
        changes["column_null_values"] = {**changes.get("column_null_values", opts.column_null_values), **raw}
    for key, current in (("true_values", opts.true_values), ("false_values", opts.false_values)):
        if kw.get(key) is not None:
            changes[key] = tuple(dict.fromkeys([*current, *map(str, kw[key])]))
    return changes


def _spellings(values: Any) -> list[str]:
    """One spelling or several, as text (pandas takes ``na_values="-"`` or ``[-1, "n/a"]``)."""
    if isinstance(values, str) or not hasattr(values, "__iter__"):
        return [str(values)]
    return [str(v) for v in values]


def _pandas_spellings(values: Any) -> list[str]:
    """``na_values`` as pandas reads them: each one's text, and for one that reads as a
    whole number ``n``, also ``"n"`` and ``"n.0"`` (``-999.0`` makes ``-999`` missing too).

    >>> _pandas_spellings([-999.0, "1.5", "n/a", 7])
    ['-999.0', '-999', '1.5', 'n/a', '7', '7.0']
    """
    out: list[str] = []
    for value in _spellings(values):
        out.append(value)
        try:
            number = float(value)
            if number == int(number):
                out += [str(int(number)), f"{int(number)}.0"]
        except (ValueError, OverflowError):  # a word, or an infinity
            pass
    return list(dict.fromkeys(out))


def _column_key(key: Any) -> str | int:
    """A dict keyword's column key as pandas reads it: an int is a file position, anything else a name."""
    if isinstance(key, int) and not isinstance(key, bool):
        return key
    return str(key)


def _usecols(usecols: Sequence[str | int]) -> tuple[str | int, ...]:
    if callable(usecols):
        raise NotImplementedError("usecols as a callable: read_pandas takes it (it reads the header first)")
    keys = tuple(usecols) if not isinstance(usecols, str) else ()
    if isinstance(usecols, str) or not (all(isinstance(k, str) for k in keys) or
                                        all(isinstance(k, numbers.Integral) and not isinstance(k, bool) for k in keys)):
        raise ValueError("'usecols' must either be list-like of all strings, all unicode, all integers or a "
                         "callable.")  # pandas' words
    return tuple(k if isinstance(k, str) else int(k) for k in keys)


def _dtype_changes(dtype: Any) -> dict[str, Any]:
    """``column_types`` and ``default_type`` of a ``dtype`` keyword: one type for every
    column, or one per column (the key ``None``: every column the others do not name;
    the value ``None``: inferred, as without a type)."""
    if not isinstance(dtype, Mapping):
        return {"default_type": to_arrow_type(dtype)}
    changes = {"column_types": {_column_key(k): None if v is None else to_arrow_type(v)  # (None: inferred)
                                for k, v in dtype.items() if k is not None}}
    return {**changes, "default_type": to_arrow_type(dtype[None])} if None in dtype else changes


_TYPE_ALIASES = {
    "str": pa.string(), "string": pa.string(), "object": pa.string(), "bool": pa.bool_(),
    "boolean": pa.bool_(), "date": pa.date32(), "datetime64[ns]": pa.timestamp("ns"),
    "float": pa.float64(), "int": pa.int64(),
}


def to_arrow_type(dtype: Any) -> pa.DataType:
    """An Arrow type from a pyarrow type, a NumPy/pandas dtype or a type name.

    >>> to_arrow_type("int32"), to_arrow_type("timestamp[ms]")
    (DataType(int32), TimestampType(timestamp[ms]))
    """
    if isinstance(dtype, pa.DataType):
        return dtype
    pyarrow_dtype = getattr(dtype, "pyarrow_dtype", None)  # pandas.ArrowDtype
    if pyarrow_dtype is not None:
        return pyarrow_dtype
    if dtype in (str, object):
        return pa.string()
    if dtype in (int, float, bool):
        return {int: pa.int64(), float: pa.float64(), bool: pa.bool_()}[dtype]
    name = str(dtype).lower()
    if name.endswith("[pyarrow]"):
        name = name[: -len("[pyarrow]")]
    if name in _TYPE_ALIASES:
        return _TYPE_ALIASES[name]
    try:
        return pa.type_for_alias(name)
    except ValueError:
        pass
    import numpy as np

    try:
        return pa.from_numpy_dtype(np.dtype(dtype))
    except TypeError as exc:
        raise TypeError(f"cannot use dtype {dtype!r} as an Arrow type") from exc
