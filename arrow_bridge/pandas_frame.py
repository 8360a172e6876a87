"""pandas' keywords for ``read_pandas`` that the reader has no option for.

The reader parses into Arrow; these keywords change the DataFrame made of it
the way ``pandas.read_csv`` does (``index_col``, ``parse_dates`` with
``date_format``, ``converters``, ``skipfooter``, ``dtype="category"``,
``usecols`` as a callable, ``thousands``, ``header`` as a list: MultiIndex
columns). :func:`split_keywords` takes them out of the reader's options
(asking the reader for text where pandas would hand a function or a
categorical the raw values); :func:`shape` applies them. Keywords that change
the text itself (``skiprows`` as pandas counts rows, ``comment``,
``skipinitialspace``, ``lineterminator``, ``header=N``, ``compression``) go
to the source instead (:mod:`arrow_bridge.line_filters`,
:func:`arrow_bridge.source.open_source`), through ``storage_options``.

>>> import io, arrow_bridge
>>> frame = arrow_bridge.read_pandas(io.BytesIO(b"k,v\\nx,1\\ny,2\\n"), index_col="k", dtype={"v": "category"})
>>> frame.index.tolist(), str(frame.v.dtype)
(['x', 'y'], 'category')
"""
from __future__ import annotations

import csv
import dataclasses
import re
from dataclasses import dataclass, field
from numbers import Integral, Number
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Optional, Sequence, Union

import numpy as np
import pyarrow as pa  # pyarrow.compute is imported in the functions that use it: ~50 ms of every start-up

from arrow_bridge import python_ints
from arrow_bridge.column_finish import NumericNulls, numeric_null_values
from arrow_bridge.column_names import ImplicitColumns
from arrow_bridge.errors import warn_at_caller
from arrow_bridge.line_filters import LINE_KEYWORDS, LineRules, header_fields
from arrow_bridge.options import resolve_options, to_arrow_type
from arrow_bridge.source import OpeningOptions

if TYPE_CHECKING:
    import pandas as pd

    from arrow_bridge.dtype_fallback import Fallback

#: The keywords :func:`split_keywords` takes out of the reader's options into :class:`FrameSteps`.
FRAME_KEYWORDS = ("index_col", "parse_dates", "date_format", "dayfirst", "converters", "thousands")

Columns = Union[int, str, Sequence[Union[int, str]], None]


@dataclass
class FrameSteps:
    """What to do to the frame after the parse, in pandas' order."""

    index_col: Columns = None
    parse_dates: Union[bool, Sequence[Union[int, str]], None] = None
    date_format: Optional[str] = None
    dayfirst: bool = False
    converters: Mapping[Union[int, str], Callable[[str], Any]] = field(default_factory=dict)
    skipfooter: int = 0  # only where the text cannot be filtered (sep=None...): rows dropped after the read
    thousands: Optional[str] = None
    categories: Union[bool, Sequence[str]] = ()  # True: every column
    category_words: "CategoryWords" = None  # how pandas reads their categories (set with them)
    # their dtypes as given: "category" or a pandas CategoricalDtype (key None: every column)
    category_dtypes: Mapping[Union[str, None], Any] = field(default_factory=dict)
    numbers: Optional["Thousands"] = None  # how ``thousands`` reads the text columns
    # per converter: the spellings pandas makes missing in what it returns (its column's na_values)
    converter_nulls: Mapping[Union[int, str], frozenset[str]] = field(default_factory=dict)
    header_rows: Optional[LineRules] = None  # header=[...]: the rules that capture the rows
    # dtype entries naming pandas dtypes (extension dtypes, object) the frame takes as given; key None: every column
    pandas_dtypes: Mapping[Union[int, str, None], Any] = field(default_factory=dict)
    # columns read again where a value did not parse as their dtype: cast as pandas casts (dtype_fallback)
    dtype_fallbacks: dict[str, "Fallback"] = field(default_factory=dict)
    # the columns the dtype keyword makes ``object`` (key None: every column), converters' too: objects at the end
    object_columns: tuple[Union[int, str, None], ...] = ()
    # object asked by position (not a name): read so, then typed by its values at the end (str where text)
    objects_by_position: tuple[str, ...] = ()
    # the names a dtype dict gives an entry (less converters' columns), which type their repeats (a.1 for a)
    dtype_names: tuple[str, ...] = ()
    typed_by_position: tuple[str, ...] = ()  # of those, the ones a position gave (their repeats untyped)
    # one dtype of object for every column: the index columns it leaves out (pandas infers an index)
    index_inferred: tuple[Union[int, str], ...] = ()
    # the dtype given to a converter's column: pandas' type for it where there are no rows to convert
    converted_dtypes: Mapping[Union[int, str], Any] = field(default_factory=dict)


def split_keywords(options: dict[str, Any]) -> tuple[dict[str, Any], FrameSteps]:
    """The reader's options and the frame's steps. Columns that get a
    converter or become categorical are read as text, as pandas hands them;
    so are columns with an explicit numeric dtype under ``thousands``.
    Keywords that change the text go to the source through
    ``storage_options`` (:func:`text_keywords`). Applying it to what it
    returned changes nothing.

    >>> split_keywords({"sep": ";", "index_col": "b", "dtype": {"a": "category", "b": "int32"}})[0]
    {'sep': ';', 'dtype': {'a': 'string', 'b': 'int32'}, 'implicit_index': 'leading', 'repeats_typed': ('a', 'b')}
    >>> split_keywords({"comment": "#", "skiprows": [1]})[0]["storage_options"].line_rules.keywords
    ('skiprows', 'comment')
    """
    options = with_csv_dialect(options)  # (its quoting decides what thousands infers)
    steps = FrameSteps(**{key: options.pop(key) for key in FRAME_KEYWORDS if options.get(key) is not None})
    if steps.parse_dates is None and steps.date_format is not None:  # pandas: date_format alone parses the index
        steps.parse_dates = True
    if steps.index_col is True:
        raise ValueError("The value of index_col couldn't be 'True'")  # pandas' words
    options.setdefault("implicit_index", _implicit_index_rule(steps.index_col))
    if options.get("skipfooter") and _reader_parses_raw_bytes(options):
        if options.get("nrows"):  # (nrows=0 reads no row: pandas allows it)
            raise ValueError("'skipfooter' not supported with 'nrows'")  # pandas' words
        steps.skipfooter = LineRules(skipfooter=options.pop("skipfooter")).skipfooter  # checked as pandas does
    text = _typed_columns(options, steps)
    if steps.thousands is not None:
        categories = steps.categories if steps.categories is not True else ()
        untouched = [key for key in text if key in steps.converters or not _number_given(options.get("dtype"), key)]
        options, steps.numbers = Thousands.split(options, steps.thousands, [*untouched, *categories])
    options, steps.header_rows = text_keywords(options)
    indexed = steps.index_col is not None and steps.index_col is not False  # index_col=0 is one
    if steps.header_rows is not None and (indexed or steps.parse_dates or
                                          steps.converters or isinstance(options.get("dtype"), Mapping)):
        raise NotImplementedError("header as a list (MultiIndex columns) with index_col, parse_dates, converters "
                                  "or a dtype per column is not supported: read with header=[...] alone and "
                                  "set them on the frame afterwards")
    return options, steps


def _number_given(dtype: Any, key: str) -> bool:
    """Whether ``dtype`` (a dict, or one for every column) gives column ``key`` a number
    dtype: a ``parse_dates`` column so given is read as numbers first (``thousands`` too),
    as pandas reads it."""
    if isinstance(dtype, Mapping):
        dtype = dtype.get(key)
    return dtype is not None and _numeric(to_arrow_type(dtype))


def _typed_columns(options: dict[str, Any], steps: FrameSteps) -> list[str]:
    """Sets ``options``' ``dtype`` as the reader reads it and ``steps``' part of it
    (pandas dtypes, categories, what one dtype leaves out): a converter's and a
    ``parse_dates`` column are read as text (a dtype for the latter wins), a
    category as text; one dtype for every column leaves out a converter's column
    and, for ``object``, the index. Returns the converters' and ``parse_dates``
    columns, which ``thousands`` leaves alone.

    >>> options, steps = {"dtype": "object"}, FrameSteps(index_col="b", parse_dates=["c"])
    >>> _typed_columns(options, steps), options["dtype"]  # (key None: every other column; value None: inferred)
    (['c'], {None: 'object', 'b': None})
    """
    if options.get("dtype") is not None:
        steps.object_columns = tuple(key for key, kind in _pandas_dtypes(options["dtype"]).items() if kind == object)
        steps.converted_dtypes = _converted_dtypes(options["dtype"], steps.converters)
        options["dtype"] = _without_converted(options["dtype"], steps.converters)
    dtype = options.get("dtype")
    steps.pandas_dtypes = _pandas_dtypes(dtype)
    one_dtype = dtype is not None and not isinstance(dtype, Mapping)
    if isinstance(dtype, Mapping):  # pandas: an entry for a repeated header field types its repeats too
        options["repeats_typed"] = steps.dtype_names = tuple(key for key in dtype if isinstance(key, str))
    if one_dtype:  # not for a converter's column (its text) nor, for object, the index's: pandas infers it
        index = _index_keys(steps.index_col, options.get("usecols")) if steps.pandas_dtypes.get(None) == object else ()
        steps.index_inferred = index
        steps.pandas_dtypes = {**steps.pandas_dtypes, **dict.fromkeys([*index, *steps.converters])}
    if _is_category(dtype):
        steps.categories, steps.category_dtypes, options["dtype"] = True, {None: dtype}, "string"
    elif isinstance(dtype, Mapping):
        steps.category_dtypes = {name: kind for name, kind in dtype.items() if _is_category(kind)}
        steps.categories = tuple(steps.category_dtypes)
        options["dtype"] = {name: "string" if name in steps.categories else kind for name, kind in dtype.items()}
    if steps.categories:
        steps.category_words = CategoryWords.of({**options, "thousands": steps.thousands})  # (a frame keyword)
    index_dates = _index_keys(steps.index_col, options.get("usecols")) if steps.parse_dates is True else ()
    dates = steps.parse_dates if isinstance(steps.parse_dates, (list, tuple)) else index_dates
    text = {key: "string" for key in [*steps.converters, *dates] if isinstance(key, str) or key in index_dates}
    if steps.converters:  # they get each value's text, NA spellings and empty text too
        steps.converter_nulls = _spellings_of(options, list(steps.converters))
        options["raw_text_columns"] = list(steps.converters)
    if text and not one_dtype:
        options["dtype"] = {**text, **(options.get("dtype") or {})}
    elif one_dtype and (steps.index_inferred or steps.converters):  # for every other column, dates' too
        apart = {**dict.fromkeys(steps.index_inferred), **{key: "string" for key in steps.converters}}  # None: inferred
        options["dtype"] = {None: options["dtype"], **apart}
    return list(text)


def _converted_dtypes(dtype: Any, converters: Mapping[Union[int, str], Any]) -> dict[Union[int, str], Any]:
    """The dtype ``dtype`` gives each converter's column (pandas casts an empty one to it).

    >>> _converted_dtypes({"a": "Int64", "b": "float32"}, {"a": str}), _converted_dtypes("int8", {"a": str})
    ({'a': 'Int64'}, {'a': 'int8'})
    """
    every = dtype.get(None) if isinstance(dtype, Mapping) else dtype
    given = {key: dtype.get(key, every) if isinstance(dtype, Mapping) else every for key in converters}
    return {key: kind for key, kind in given.items() if kind is not None}


def _without_converted(dtype: Any, converters: Mapping[Union[int, str], Any]) -> Any:
    """``dtype`` less the columns a converter reads: pandas uses only the converter
    there, with its ``ParserWarning`` (one dtype for every column: warned, kept, and the
    converter's column read apart: :func:`_typed_columns`).

    >>> import warnings
    >>> with warnings.catch_warnings(record=True):
    ...     _without_converted({"a": "Int64", "b": "float32"}, {"a": str})
    {'b': 'float32'}
    """
    if dtype is None or not converters:
        return dtype
    import pandas as pd

    for key in converters:
        if not isinstance(dtype, Mapping) or key in dtype:
            warn_at_caller(f"Both a converter and dtype were specified for column {key} - only the converter "
                           "will be used.", pd.errors.ParserWarning)  # pandas' words
    return {key: kind for key, kind in dtype.items() if key not in converters} if isinstance(dtype, Mapping) \
        else dtype


def text_keywords(options: dict[str, Any]) -> tuple[dict[str, Any], Optional[LineRules]]:
    """The reader's options with the keywords that change the text moved to
    ``storage_options`` (an :class:`~arrow_bridge.source.OpeningOptions`):
    ``compression``, and :class:`~arrow_bridge.line_filters.LineRules` for
    ``skiprows``, ``comment``, ``skipinitialspace``, ``lineterminator``,
    ``skipfooter`` and ``header`` past row 0 (the reader then reads ``header=0``). Also the
    rules when ``header`` is a list (their captured rows become the frame's
    MultiIndex columns), else None.

    Where the reader parses the file's bytes as they are (``sep=None``,
    ``byte_range``, a device ``split``) an int ``skiprows`` and ``header``
    stay the reader's (physical lines) and the others raise.

    >>> options, _ = text_keywords({"skiprows": 2, "header": 1, "sep": ";"})
    >>> options["header"], options["storage_options"].line_rules
    (0, LineRules(skiprows=2, comment=None, skipinitialspace=False, lineterminator=None, header_records=1, \
header_rows=(), skipfooter=0, delimiter=';', quotechar='"', escapechar=None, doublequote=True))
    """
    options = with_csv_dialect(options)
    compression = options.pop("compression", "infer")
    given = {key: options.pop(key) for key in LINE_KEYWORDS if key in options}
    given = {key: value for key, value in given.items()
             if value is not None and value is not False and (key != "skipfooter" or value != 0)}
    if "skipfooter" in given and options.get("nrows"):  # (nrows=0 reads no row: pandas allows it)
        raise ValueError("'skipfooter' not supported with 'nrows'")  # pandas' words
    header = _header_keyword(options)
    stays = _reader_parses_raw_bytes(options)
    if stays:
        if isinstance(given.get("skiprows"), int):
            options["skiprows"] = given.pop("skiprows")
        if given or isinstance(header, list):
            raise NotImplementedError(
                f"{', '.join([*given, *(['header'] if isinstance(header, list) else [])])} with {stays}: the reader "
                "parses the file's bytes as they are there; give sep (not None), read on the host, or read the "
                "whole file")
        header = options.get("header", "infer")
    rules = None if stays else LineRules(**given, **_header_rules(header), **_dialect(options))
    if rules is not None and (isinstance(header, list) or isinstance(header, int) and header > 0):
        options["header"] = 0  # the records before it are the filter's to drop
    if rules is not None and not rules.active:
        rules = None
    dropping = [k for k in (rules.keywords if rules is not None else ()) if k in ("skiprows", "comment", "header")]
    keeps_blank_lines = options.get("skip_blank_lines") is False or \
        getattr(options.get("parse_options"), "ignore_empty_lines", True) is False  # pyarrow's spelling
    if dropping and keeps_blank_lines:
        # The filter leaves a dropped line's break behind (errors name the file's own lines), which
        # the reader could not tell from a blank line: it would read each as a row of nulls.
        raise NotImplementedError(
            f"{', '.join(dropping)} with skip_blank_lines=False: the lines {'they drop' if len(dropping) > 1 else 'it drops'} "
            "would read as blank rows (not supported yet); read with skip_blank_lines=True, the default")
    if rules is not None or compression != "infer":
        storage = options.get("storage_options")
        if isinstance(storage, OpeningOptions):
            raise TypeError("storage_options is an OpeningOptions already: pass the text keywords once")
        options["storage_options"] = OpeningOptions(storage, compression=compression, line_rules=rules)
    return options, (rules if isinstance(header, list) else None)


def with_csv_dialect(options: Mapping[str, Any]) -> dict[str, Any]:
    """pandas' ``dialect`` (a ``csv.Dialect`` or a name ``csv.get_dialect``
    knows) spelled as the keywords it overrides, as pandas does: ``sep``,
    ``quotechar``, ``doublequote``, ``escapechar``, ``skipinitialspace``,
    ``quoting`` (not ``lineterminator``).

    >>> sorted(with_csv_dialect({"dialect": "excel-tab"}).items())[:3]
    [('doublequote', True), ('escapechar', None), ('quotechar', '"')]
    """
    options = dict(options)
    dialect = options.pop("dialect", None)
    if dialect is None:
        return options
    if isinstance(dialect, str):
        dialect = csv.get_dialect(dialect)
    for key, value in (("sep", dialect.delimiter), ("quotechar", dialect.quotechar),
                       ("doublequote", dialect.doublequote), ("escapechar", dialect.escapechar),
                       ("skipinitialspace", dialect.skipinitialspace), ("quoting", dialect.quoting)):
        options.pop("delimiter" if key == "sep" else key, None)
        options[key] = value
    return options


def arrow_keywords(options: dict[str, Any], storage_options: Optional[dict[str, Any]] = None, *,
                   split: str = "host", byte_range: Optional[tuple[int, int]] = None
                   ) -> tuple[dict[str, Any], Optional[dict[str, Any]], Optional["Thousands"]]:
    """``read_csv``'s share of these keywords (an Arrow Table has no index or
    MultiIndex columns): the reader's options, the ``storage_options`` that
    carry the text keywords to the source (:func:`text_keywords`), and the
    ``thousands`` step to apply to the Table (:meth:`Thousands.apply`), or None.
    Applying it to what it returned changes nothing.

    >>> import io, arrow_bridge
    >>> options, storage, numbers = arrow_keywords({"comment": "#", "thousands": ",", "sep": ";"})
    >>> table = arrow_bridge.read_csv(io.BytesIO(b"n;t\\n1,234;x # c\\n5;y\\n"), storage_options=storage, **options)
    >>> numbers.apply(table).to_pydict()
    {'n': [1234, 5], 't': ['x ', 'y']}
    """
    options, numbers = with_csv_dialect(options), None
    if options.get("thousands") is not None:
        options, numbers = Thousands.split(options, options.pop("thousands"))
    options.pop("thousands", None)
    if storage_options is not None:
        options["storage_options"] = storage_options
    skip = options.pop("skiprows") if _reader_skips(options) else None
    options, header_rows = text_keywords({**options, "split": split, "byte_range": byte_range})
    if skip is not None:
        options["skiprows"] = skip
    if header_rows is not None:
        raise NotImplementedError("header as a list makes MultiIndex columns, which a pyarrow Table has not: "
                                  "use read_pandas")
    for key in ("split", "byte_range"):
        options.pop(key)
    return options, options.pop("storage_options", None), numbers


def _reader_skips(options: Mapping[str, Any]) -> bool:
    """An int ``skiprows`` alone stays ``read_csv``'s own (pyarrow's ``skip_rows``:
    rows at the start, errors at their place in the file); ``read_pandas``
    filters lines as pandas' tokenizer does."""
    skip, others = options.get("skiprows"), [key for key in LINE_KEYWORDS if key != "skiprows"]
    return (isinstance(skip, Integral) and not isinstance(skip, bool)
            and not any(options.get(key) not in (None, False) for key in others)
            and options.get("header", "infer") in ("infer", 0, None))


def _header_keyword(options: dict[str, Any]) -> Any:
    """pandas' ``header`` checked as pandas checks it: ``"infer"``, None, an
    int >= 0, or a list of them (one element: that int)."""
    header = options.get("header", "infer")
    if isinstance(header, (list, tuple)):
        if not header or not all(isinstance(h, int) and not isinstance(h, bool) and h >= 0 for h in header):
            raise ValueError("header must be integer or list of integers")
        header = sorted(set(header))
        if len(header) == 1:
            return header[0]
        for key, word in (("names", "names"), ("usecols", "usecols")):
            if options.get(key) is not None:
                raise ValueError(f"cannot specify {word} when specifying a multi-index header")  # pandas' words
        return header
    if isinstance(header, bool) or isinstance(header, int) and header < 0:
        raise ValueError("Passing negative integer to header is invalid. For no header, use header=None instead"
                         if not isinstance(header, bool) else "header must be integer or list of integers")
    return header


def _header_rules(header: Any) -> dict[str, Any]:
    """``header=N``: the N records before it dropped; a list: all before its last, and the listed ones captured."""
    if isinstance(header, list):
        return {"header_records": header[-1], "header_rows": tuple(header)}
    if isinstance(header, int) and header > 0:
        return {"header_records": header}
    return {}


def _reader_parses_raw_bytes(options: Mapping[str, Any]) -> Optional[str]:
    """Why the text cannot be filtered before the reader, or None."""
    if "sep" in options and options["sep"] is None or "delimiter" in options and options["delimiter"] is None:
        return "sep=None (the dialect is sniffed from the file's bytes)"
    if options.get("byte_range") is not None:
        return "byte_range (offsets in the file)"
    if options.get("split", "host") != "host":
        return f"split={options['split']!r} (a device parses the file's pages)"
    return None


def _dialect(options: Mapping[str, Any]) -> dict[str, Any]:
    """The delimiter, quote and escape characters the line filter reads the text with: the reader's."""
    keys = ("sep", "delimiter", "quotechar", "quoting", "escapechar", "doublequote", "parse_options")
    opts = resolve_options(**{key: options[key] for key in keys if key in options})
    return {"delimiter": opts.delimiter, "quotechar": opts.quote_char, "escapechar": opts.escape_char,
            "doublequote": opts.double_quote}


def shape(table: pa.Table, steps: FrameSteps, to_frame: Callable[[pa.Table], "pd.DataFrame"]) -> "pd.DataFrame":
    """The DataFrame of ``table`` with ``steps`` applied (numbers with
    thousands separators, footer rows dropped, converters, categories,
    dates, the index, then MultiIndex columns).

    >>> import pandas as pd
    >>> shape(pa.table({"d": ["2020-01-02", "x"]}), FrameSteps(skipfooter=1, parse_dates=["d"]),
    ...       lambda t: t.to_pandas()).d.dt.day.tolist()
    [2]
    """
    import pandas as pd

    made_up = ImplicitColumns.of(table.schema)
    if made_up.renamed:
        _type_repeats(steps, made_up)
    trailing = [name for name in made_up.trailing if name in table.column_names]
    if trailing:  # index_col=False: the fields past the names are left out
        if len(trailing) > 1 or table.column(trailing[0]).null_count < table.num_rows:  # one empty: no loss
            warn_at_caller("Length of header or names does not match length of data. This leads to a loss of "
                           "data with index_col=False.", pd.errors.ParserWarning)  # pandas' words
        table = table.drop_columns(trailing)
    if steps.numbers is not None:
        table = steps.numbers.apply(table)
    if steps.skipfooter:
        table = table.slice(0, max(table.num_rows - steps.skipfooter, 0))
    frame = to_frame(table)
    for name, fallback in steps.dtype_fallbacks.items():
        frame[name] = fallback.apply(table.column(name))
    for key, convert in steps.converters.items():  # pandas infers the dtype of what they return
        if not _has_column(frame, key):
            continue  # pandas ignores a converter for a column the file lacks
        name, nulls = _name(frame, key), steps.converter_nulls.get(key, frozenset())
        if not len(frame) and key in steps.converted_dtypes:  # nothing converted: pandas takes the dtype
            frame[name] = frame[name].astype(object).astype(steps.converted_dtypes[key])
            continue
        missing = _ConverterNulls(nulls)
        frame[name] = pd.Series([float("nan") if missing(value) else value for value in map(convert, frame[name])],
                                index=frame.index, name=name)
    categorical = list(steps.categories) if steps.categories is not True else _all_but(frame, steps.converters)
    for key in categorical:  # named before the read (name_positions); pandas ignores a column the file lacks
        if not _has_column(frame, key):
            continue
        dtype = steps.category_dtypes.get(key, steps.category_dtypes.get(None, "category"))
        name = _name(frame, key)
        frame[name] = steps.category_words.categorical(frame[name], dtype)
    dates = steps.parse_dates
    dated_names = [] if dates in (None, False, True) else [_name(frame, key) for key in dates if _has_column(frame, key)]
    if dates and dates is not True:
        missing = [str(key) for key in dates if not _has_column(frame, key)]
        if missing:
            raise ValueError(f"Missing column provided to 'parse_dates': '{', '.join(missing)}'")  # pandas' words
        for key in dates:  # from the text (read as such, unless a dtype is given), as pandas parses it
            name = _name(frame, key)
            frame[name] = _dates_or_text(frame[name], steps, _dtype_given(steps, name))
    indexed = {_name(frame, key) for key in _index_col_keys(steps.index_col) if _has_column(frame, key)}
    for name in steps.objects_by_position:  # pandas' last step looks dtypes up by name: these it infers
        if name in frame.columns and name not in indexed:  # (an index level keeps its objects)
            frame[name] = pd.Series(frame[name].to_numpy(dtype=object), index=frame.index, name=name)
    for key in _all_but(frame, steps.index_inferred) if None in steps.object_columns else steps.object_columns:
        if _has_column(frame, key):  # pandas' last step: whatever a converter or the dates made, objects
            frame[_name(frame, key)] = frame[_name(frame, key)].astype(object)
    levels = [name for name in made_up.index if name in frame.columns]
    if levels or steps.index_col is not None and steps.index_col is not False:
        keys = _index_col_keys(steps.index_col)
        for key in keys:
            if isinstance(key, str) and (levels or key not in frame.columns):  # pandas' errors
                raise KeyError(key) if levels else ValueError(f"Index {key} invalid")
        index = levels if levels else [_name(frame, key) for key in keys]
        for name in set(index) - set(levels):  # (pandas' implicit index keeps its objects)
            frame[name] = _index_level(frame[name], name in python_ints.named(table.schema))
        frame = _with_index(frame, index, from_arrays=bool(levels))
        frame.index.names = [None if name in made_up.unnamed or name in made_up.index else name
                             for name in frame.index.names]
        if frame.columns.empty:  # pandas: the index took every column, and an empty Index is of objects
            frame.columns = pd.Index([], dtype=object)
        if dates:  # pandas parses the text of the index levels it names (every one: True), typed where that fails
            dated = [k for k, name in enumerate(index)
                     if (dates is True or name in dated_names) and _dtype_given(steps, name) is None]
            parts = [frame.index.get_level_values(k) for k in range(frame.index.nlevels)]
            parts = [_dated_level(part, steps, dates is True, index[k] in made_up.index) if k in dated else part
                     for k, part in enumerate(parts)]
            frame.index = pd.MultiIndex.from_arrays(parts, names=frame.index.names) \
                if isinstance(frame.index, pd.MultiIndex) else parts[0]
    if steps.header_rows is not None:
        frame.columns = multi_header(steps.header_rows, len(frame.columns))
    return frame


def _index_col_keys(index_col: Any) -> list[Union[int, str]]:
    """The columns ``index_col`` names, as given (none for ``None`` or ``False``).

    >>> _index_col_keys("a"), _index_col_keys([0, "b"]), _index_col_keys(False), _index_col_keys(0)
    (['a'], [0, 'b'], [], [0])
    """
    if isinstance(index_col, (list, tuple)):
        return list(index_col)
    return [] if index_col is None or index_col is False else [index_col]  # (not ``in``: 0 == False)


def _index_keys(index_col: Any, usecols: Any) -> tuple[Union[int, str], ...]:
    """The columns ``index_col`` names, as the reader keys them: names, and
    positions in the file (not where ``usecols`` makes them positions among its columns).

    >>> _index_keys(["b", 0], None), _index_keys(0, ["a", "b"]), _index_keys(False, None), _index_keys(0, None)
    (('b', 0), (), (), (0,))
    """
    return tuple(key for key in _index_col_keys(index_col) if isinstance(key, str) or usecols is None)


def _all_but(frame: "pd.DataFrame", keys: Iterable[Union[int, str]]) -> list[Any]:
    """The frame's columns but those ``keys`` name."""
    left_out = {_name(frame, key) for key in keys if _has_column(frame, key)}
    return [name for name in frame.columns if name not in left_out]


def _type_repeats(steps: FrameSteps, made_up: ImplicitColumns) -> None:
    """``steps`` giving the names pandas made up for a repeated header field (``a.1``)
    the field's dtype or category, as the reader gave them its type
    (:attr:`~arrow_bridge.options.CsvOptions.repeats_typed`), unless the ``dtype``
    dict has an entry of their own; pandas' last step, ``object``, is the field's alone."""
    typed = {key: kind for key, kind in steps.pandas_dtypes.items()  # (object: text, as read; None: inferred)
             if kind is not None and kind != object and key not in steps.typed_by_position}
    steps.pandas_dtypes = {**steps.pandas_dtypes, **made_up.repeats_of(typed, steps.dtype_names)}
    if steps.categories is not True:
        categories = made_up.repeats_of({key: kind for key, kind in steps.category_dtypes.items()
                                         if key not in steps.typed_by_position}, steps.dtype_names)
        steps.category_dtypes = {**steps.category_dtypes, **categories}
        steps.categories = (*steps.categories, *categories)
    if steps.numbers is not None:  # a repeat of a field given a text dtype keeps its separators too
        texts = {key: kind for key, kind in {**steps.pandas_dtypes, **steps.category_dtypes}.items()
                 if kind is not None and getattr(kind, "kind", "O") in "OUS" and key not in steps.typed_by_position}
        repeats = [name for name in made_up.repeats_of(texts, steps.dtype_names) if name not in steps.numbers.untouched]
        steps.numbers = dataclasses.replace(steps.numbers, untouched=(*steps.numbers.untouched, *repeats))


def _with_index(frame: "pd.DataFrame", names: Sequence[str], *, from_arrays: bool = False) -> "pd.DataFrame":
    """``frame.set_index(names)``, built at once: ``set_index`` deletes the columns one at a
    time, quadratic in their number (a 1,000-field implicit index took 20 s). ``from_arrays``:
    as pandas builds its implicit index, from each level's array, so a level of objects that
    are all text (missing ones aside) is of ``str``; other objects stay objects.

    >>> import pandas as pd
    >>> _with_index(pd.DataFrame({"a": [1], "b": ["x"], "c": [2.5]}), ["b", "a"]).index.tolist()
    [('x', 1)]
    >>> _with_index(pd.DataFrame({"a": pd.Series(["x", None], dtype=object)}), ["a"], from_arrays=True).index.dtype
    <StringDtype(na_value=nan)>
    """
    import pandas as pd

    levels = [pd.Index(frame[name].to_numpy(), name=name) if from_arrays and frame[name].dtype == object
              else frame[name] for name in names]
    index = pd.MultiIndex.from_arrays(levels, names=list(names)) if len(names) > 1 \
        else pd.Index(levels[0], name=names[0])
    kept = set(names)
    frame = frame[[name for name in frame.columns if name not in kept]]
    frame.index = index
    return frame


def _dated_level(level: "pd.Index", steps: FrameSteps, every: bool, implicit: bool) -> "pd.Index":
    """An index level ``parse_dates`` names: with ``True`` (``every``), parsed from its text and
    typed where that fails (:func:`_text_dates`), or, for pandas' ``implicit`` index, typed first
    and parsed from its values' text, kept where that fails; a level a list named was parsed as
    a column before it became the index, and is only typed here (:func:`_typed_index_text`).

    >>> import pandas as pd
    >>> _dated_level(pd.Index([1, 2]), FrameSteps(date_format="%Y-%m-%d"), True, True).tolist()
    ['1', '2']
    """
    if not every:
        return _typed_index_text(level)
    return _dates_or_text(level, steps, "its values") if implicit else _text_dates(level, steps)


def _index_level(values: "pd.Series", python_ints: bool) -> "pd.Series":
    """A column about to be an index level, as pandas infers an index: booleans or
    Python ints (:mod:`~arrow_bridge.python_ints`) with a missing value are floats
    (``True`` is 1.0), where a column keeps them as objects.

    >>> import pandas as pd
    >>> _index_level(pd.Series([True, None], dtype=object), False).tolist()
    [1.0, nan]
    """
    if values.dtype != object or not values.isna().any():
        return values
    if python_ints or values.dropna().map(type).eq(bool).all():
        return values.astype("float64")
    return values


@dataclass(frozen=True)
class CategoryWords:
    """How pandas' ``read_csv`` makes a ``"category"`` column of text: its
    distinct values sorted, as numbers or booleans where every one reads as
    such (pandas >= 3.1, ``Categorical._maybe_convert_categories``; numbers
    only without ``thousands`` and with ``decimal="."``), else as text."""

    true_values: tuple[str, ...] = ()
    false_values: tuple[str, ...] = ()
    numbers: bool = True

    @classmethod
    def of(cls, options: Mapping[str, Any]) -> "CategoryWords":
        return cls(tuple(options.get("true_values") or ()), tuple(options.get("false_values") or ()),
                   options.get("thousands") is None and options.get("decimal", ".") == ".")

    def categorical(self, column: "pd.Series", dtype: Any = "category") -> "pd.Series":
        """``column`` (text, missing values as such) as pandas' categorical of
        ``dtype``: ``"category"`` or a ``pd.CategoricalDtype`` (its categories,
        if it has them, converted to their type as pandas converts them).

        >>> import pandas as pd
        >>> CategoryWords().categorical(pd.Series(["2", "10", None, "2"])).cat.categories.tolist()
        [2, 10]
        >>> CategoryWords().categorical(pd.Series(["2", "1"]), pd.CategoricalDtype([2, 1])).cat.codes.tolist()
        [0, 1]
        """
        import pandas as pd

        values = column.to_numpy(dtype=object, na_value=np.nan)
        categories = pd.Index(values).unique().dropna()
        codes = categories.get_indexer(values)
        if isinstance(dtype, pd.CategoricalDtype) and dtype.categories is not None:
            made = pd.Categorical._from_inferred_categories(categories, codes, dtype,
                                                            true_values=list(self.true_values) or None)
            return pd.Series(made, index=column.index, name=column.name)
        ordered = bool(getattr(dtype, "ordered", False))
        convert = getattr(pd.Categorical, "_maybe_convert_categories", None)
        if convert is None:  # pandas before 3.1 keeps text categories
            return pd.Series(pd.Categorical(values, ordered=ordered), index=column.index, name=column.name)
        converted = convert(categories, true_values=list(self.true_values) or None,
                            false_values=list(self.false_values) or None, convert_numeric=self.numbers,
                            convert_bool=True, bool_case_insensitive=True)  # as its C parser reads
        made = pd.Categorical._from_converted_categories(categories if converted is None else converted, codes,
                                                         ordered=ordered)
        return pd.Series(made, index=column.index, name=column.name)


def _implicit_index_rule(index_col: Columns) -> Union[str, tuple[int, ...]]:
    """How the reader takes a first record with more fields than names, for
    ``index_col`` (:func:`~arrow_bridge.column_names.implicit_index`).

    >>> _implicit_index_rule(None), _implicit_index_rule(False), _implicit_index_rule([2, 0])
    ('leading', 'trailing', (2, 0))
    """
    if index_col is False:
        return "trailing"
    keys = index_col if isinstance(index_col, (list, tuple)) else [] if index_col is None else [index_col]
    if keys and all(isinstance(key, Integral) and not isinstance(key, bool) for key in keys):
        return tuple(int(key) for key in keys)
    return "leading"


def _is_category(kind: Any) -> bool:
    """``"category"`` or a pandas ``CategoricalDtype``."""
    from pandas.api.types import CategoricalDtype

    return isinstance(kind, CategoricalDtype) or isinstance(kind, str) and kind == "category"


class _ConverterNulls:
    """Whether pandas makes a converter's result missing: text that is one of the
    column's null spellings, or a number (bools too) equal to one that reads as a
    number (``na_values=["0"]`` takes ``0``, ``0.0`` and ``False``).

    >>> missing = _ConverterNulls(frozenset({"NA", "5.0"}))
    >>> [missing(value) for value in ("NA", 5, 5.0, True, " 5", [5], b"5", np.int64(5), np.timedelta64(5, "s"))]
    [True, True, True, False, False, False, False, True, False]
    """

    def __init__(self, spellings: frozenset[str]):
        self.spellings, self.numbers = spellings, frozenset(numeric_null_values(sorted(spellings)))

    def __call__(self, value: Any) -> bool:
        if isinstance(value, str):
            return value in self.spellings
        if isinstance(value, np.generic):  # NumPy's scalars compare with floats as floats: Python's exactly
            value = value.item()
        if self.numbers and isinstance(value, Number):  # (Decimal too; a NumPy timedelta is a timedelta now)
            try:
                return value in self.numbers  # exact: 2**63 - 2 equals no float
            except TypeError:  # unhashable
                return False
        return False


def _spellings_of(options: Mapping[str, Any], keys: Sequence[Union[int, str]]
                  ) -> dict[Union[int, str], frozenset[str]]:
    """The null spellings of the columns ``keys`` under ``options`` (``na_values``,
    ``keep_default_na``, ``na_filter``): pandas makes missing what a converter returns in them.

    >>> _spellings_of({"semantics": "pandas", "na_values": {"a": ["-"]}, "keep_default_na": False}, ["a", "b"])
    {'a': frozenset({'-'}), 'b': frozenset()}
    """
    keys_read = ("semantics", "na_values", "keep_default_na", "na_filter")
    opts = resolve_options(**{key: options[key] for key in keys_read if key in options})
    return {key: frozenset(opts.column_null_values.get(key, opts.null_values)) for key in keys}


def _pandas_dtypes(dtype: Any) -> dict[Union[int, str, None], Any]:
    """The entries of a ``dtype`` keyword that are pandas or NumPy dtypes: the
    frame's column has that dtype whatever the ``dtype_backend``, as in pandas
    (``"Int64"``, ``pd.Float32Dtype()``, ``"string"``, ``"int64[pyarrow]"``,
    ``object``, ``"float32"``...). The reader reads their Arrow type;
    categories are made apart.

    >>> _pandas_dtypes({"a": "Int64", "b": "int32", "c": "category"})
    {'a': Int64Dtype(), 'b': dtype('int32')}
    """
    if dtype is None:
        return {}
    from pandas.api.types import CategoricalDtype, pandas_dtype

    found: dict[Union[int, str, None], Any] = {}
    for key, spec in (dtype.items() if isinstance(dtype, Mapping) else [(None, dtype)]):
        if isinstance(spec, pa.DataType):
            continue
        try:
            wanted = pandas_dtype(spec)
        except TypeError:  # a name only the reader knows ("timestamp[ms]")
            continue
        if not isinstance(wanted, CategoricalDtype):
            found[key] = wanted
    return found


def with_pandas_dtypes(frame: "pd.DataFrame", table: pa.Table, dtypes: Mapping[Union[int, str, None], Any]
                       ) -> "pd.DataFrame":
    """``frame`` (of ``table``, column for column) with the dtypes asked for
    (:attr:`FrameSteps.pandas_dtypes`): an extension dtype made from the Arrow
    column (exact, nulls kept), a NumPy one from the column's NumPy-backed
    values (missing as NaN, as pandas gives ``object``). Names the file lacks
    are ignored, as pandas does.

    >>> import pandas as pd
    >>> table = pa.table({"a": [1, None]})
    >>> with_pandas_dtypes(table.to_pandas(), table, {"a": pd.Int64Dtype()}).a.tolist()
    [1, <NA>]
    """
    if not any(wanted is not None for wanted in dtypes.values()):
        return frame
    names, current = table.column_names, list(frame.dtypes)  # (each call builds them anew: once, not per column)
    for j in range(len(frame.columns)):
        wanted = dtypes.get(names[j], dtypes.get(j, dtypes.get(None)))
        if wanted is None or current[j] == wanted:
            continue
        try:
            values = wanted.__from_arrow__(table.column(j)) if hasattr(wanted, "__from_arrow__") else None
        except (TypeError, pa.ArrowException):
            values = None
        if values is None:
            check_no_missing(table.column(j), wanted, j)
            values = table.column(j).to_pandas().astype(wanted).set_axis(frame.index)
        frame.isetitem(j, values)
    return frame


def check_no_missing(column: pa.ChunkedArray, wanted: Any, position: Union[int, str]) -> None:
    """A NumPy bool or integer dtype holds no missing value: pandas raises where one is
    (``astype`` would make a missing bool ``False``)."""
    kind = getattr(wanted, "kind", None)
    if column.null_count and kind in ("b", "i", "u"):
        what = "Bool" if kind == "b" else "Integer"
        raise ValueError(f"{what} column has NA values in column {position}")  # pandas' words


def multi_header(rules: LineRules, ncols: int) -> "pd.MultiIndex":
    """pandas' MultiIndex columns from the header rows a read captured: an
    empty name is ``Unnamed: {column}_level_{level}``, repeated columns get
    ``.1``, ``.2`` on their last level.

    >>> rules = LineRules(header_rows=(0, 1))
    >>> rules.captured = [b"a,a,", b"x,x,z"]
    >>> multi_header(rules, 3).tolist()
    [('a', 'x'), ('a', 'x.1'), ('Unnamed: 2_level_0', 'z')]
    """
    import pandas as pd

    rows = header_fields(rules.captured or [], rules)
    if len(rows) != len(rules.header_rows) or any(len(row) != ncols for row in rows):
        raise ValueError(f"Header rows must have an equal number of columns: {ncols} columns, header rows of "
                         f"{[len(row) for row in rows]} fields")
    levels = [[name if name != "" else f"Unnamed: {i}_level_{level}" for i, name in enumerate(row)]
              for level, row in enumerate(rows)]
    return pd.MultiIndex.from_tuples(_deduplicated_tuples(list(zip(*levels))))


def _deduplicated_tuples(names: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """pandas' ``dedup_names`` for a MultiIndex: a repeat gets ``.k`` on its last level."""
    counts: dict[tuple[str, ...], int] = {}
    out = []
    for name in names:
        count = counts.get(name, 0)
        while count > 0:
            counts[name] = count + 1
            name = (*name[:-1], f"{name[-1]}.{count}")
            count = counts.get(name, 0)
        out.append(name)
        counts[name] = count + 1
    return out


_SPACE = "[ \\t\\n\\x0b\\f\\r]*"  # pandas' isspace_ascii, around a number
_INFINITY = "[+-]?(?i:inf(?:inity)?)"


#: The words pandas casts to booleans after its parse (an index, numbers with ``thousands``).
_BOOLEAN_WORDS = {"True": True, "TRUE": True, "true": True, "False": False, "FALSE": False, "false": False}

#: The decimal point where ``thousands`` is ``decimal`` too: a byte no CSV number holds.
_NO_DECIMAL_POINT = "\x00"


@dataclass
class Thousands:
    """``thousands=``: text columns whose every value is a number with that
    separator become numbers, as pandas' C parser reads them (an int with
    separators anywhere after its first digit, else a float whose integer
    part may have one after each digit); others stay text. Columns with an
    explicit numeric dtype are read as text and must convert.

    >>> numbers = Thousands(",", ".", ("", "NA"), {}, None, ())
    >>> numbers.apply(pa.table({"n": ["1,234", "NA", "5"], "f": ["1,234.5", "2", "x"]})).to_pydict()
    {'n': [1234, None, 5], 'f': ['1,234.5', '2', 'x']}
    """

    separator: str
    decimal: str  # (:data:`_NO_DECIMAL_POINT` where it is the separator)
    null_values: tuple[str, ...]
    types: Mapping[str, pa.DataType]  # explicit numeric dtypes, read as text
    every_column: Optional[pa.DataType]  # one explicit numeric dtype for all
    untouched: tuple[str, ...]  # text pandas hands on as it is (converters, dates, categories, str dtypes)
    integers: bool = True  # False under QUOTE_NONNUMERIC, where pandas' numbers are floats
    column_nulls: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # na_values={name: ...}
    nullable: tuple[str, ...] = ()  # columns given pandas' nullable dtypes (Int64, Float64: no bool words); "*": all

    @classmethod
    def split(cls, options: dict[str, Any], separator: Any, untouched: Sequence[str] = ()
              ) -> tuple[dict[str, Any], "Thousands"]:
        """The reader's options (explicit numeric dtypes read as text) and the
        step; ``untouched`` columns are handed on as text whatever they hold."""
        decimal = options.get("decimal") or "."
        if not isinstance(separator, str) or len(separator) != 1:
            raise ValueError("Only length-1 thousands markers supported")  # pandas' words
        if len(separator.encode()) != 1:
            raise ValueError(f"thousands must be a one-byte character, got {separator!r}")
        options = dict(options)
        if separator == decimal:  # pandas: the separator wins, no number has a decimal point ("1.5" is 15)
            decimal = options["decimal"] = _NO_DECIMAL_POINT
        dtype, types, every = options.get("dtype"), {}, None
        given = dtype if isinstance(dtype, Mapping) else {None: dtype}
        nullable = tuple("*" if key is None else str(key) for key, kind in given.items() if _nullable(kind))
        if isinstance(dtype, Mapping):
            kinds = {name: to_arrow_type(kind) for name, kind in dtype.items()}
            every = kinds.pop(None, None)  # (the dtype of every column not named)
            types = {str(name): kind for name, kind in kinds.items() if _numeric(kind)}
            options["dtype"] = {name: "string" if name is None and _numeric(every) or str(name) in types else kind
                                for name, kind in dtype.items()}
            untouched = [*untouched, *(str(name) for name, kind in kinds.items() if not _numeric(kind)),
                         *(("*",) if every is not None and not _numeric(every) else ())]
            every = every if every is not None and _numeric(every) else None
        elif dtype is not None and _numeric(to_arrow_type(dtype)):
            every, options["dtype"] = to_arrow_type(dtype), "string"
        elif dtype is not None:
            return options, cls(separator, decimal, (), {}, None, ("*",))
        resolved = resolve_options(semantics="pandas", **{key: options[key] for key in
                                                          ("na_values", "keep_default_na", "na_filter",
                                                           "convert_options") if key in options})
        by_name = {key: tuple(nulls) for key, nulls in (resolved.column_null_values or {}).items()
                   if isinstance(key, str)}
        return options, cls(separator, decimal, tuple(resolved.null_values), types, every, tuple(map(str, untouched)),
                            options.get("quoting") != csv.QUOTE_NONNUMERIC, by_name, nullable)

    def apply(self, table: pa.Table) -> pa.Table:
        """``table`` with its text columns read as numbers where they all are."""
        if "*" in self.untouched and not self.types:  # one text dtype for every column
            return table
        untouched = {*self.untouched, *python_ints.named(table.schema, python_ints.AS_WRITTEN_KEY)}
        for j, name in enumerate(table.column_names):
            column = table.column(j)
            every_untouched = "*" in untouched and name not in self.types  # a column the text dtype covers
            if name in untouched or every_untouched or not (pa.types.is_string(column.type) or
                                              pa.types.is_large_string(column.type)):
                continue
            target = self.types.get(name, self.every_column)
            converted = self._strict(column, name, target) if target is not None else self._inferred(column)
            if converted is not None:
                numbers = numeric_null_values(self.column_nulls.get(name, self.null_values))  # pandas' rule
                if numbers and pa.types.is_floating(converted.type):
                    converted = NumericNulls(numbers).apply(converted, None)
                table = table.set_column(j, name, converted)
        return table

    @property
    def _sep(self) -> str:
        """The separator as a regular expression matches it."""
        return f"\\x{ord(self.separator):02x}"

    def _patterns(self) -> tuple[str, str]:
        sep = self._sep
        dot = sep if self.decimal == _NO_DECIMAL_POINT else f"\\x{ord(self.decimal):02x}"
        integer = f"^{_SPACE}[+-]?[0-9][0-9{sep}]*{_SPACE}$"
        mantissa = f"(?:(?:[0-9]{sep}?)+(?:{dot}[0-9]*)?|{dot}[0-9]+)"
        floating = f"^(?:{_SPACE}[+-]?{mantissa}(?:[eE][+-]?[0-9]+)?{_SPACE}|{_INFINITY})$"
        return integer, floating

    def _values(self, column: pa.ChunkedArray) -> pa.ChunkedArray:
        """The column with pandas' null spellings as nulls."""
        import pyarrow.compute as pc
        is_null = pc.is_in(column, value_set=pa.array(self.null_values, pa.string()))
        return pc.if_else(is_null, pa.scalar(None, column.type), column)

    def _digits(self, values: pa.ChunkedArray, floating: bool) -> pa.ChunkedArray:
        """The text Arrow's cast reads: no spaces, separators or plus sign, a dot for the decimal."""
        import pyarrow.compute as pc
        text = pc.utf8_trim(values, python_ints.C_SPACES)
        if floating and self.decimal == _NO_DECIMAL_POINT:
            return self._point_after_separator(text)
        text = pc.replace_substring(text, self.separator, "")
        if floating:
            return pc.replace_substring(text, self.decimal, ".")
        return pc.replace_substring_regex(text, "^\\+", "")

    def _point_after_separator(self, text: pa.ChunkedArray) -> pa.ChunkedArray:
        """Floats where the separator is the decimal point too, as pandas' float parser reads
        them: one separator may follow each digit of the whole part; one more, or one before
        any digit, is the decimal point (``1.5`` is 15, ``1..5`` and ``.5e1`` are 1.5 and 5)."""
        import pyarrow.compute as pc
        sep = self._sep
        parts = pc.extract_regex(text, f"^(?P<sign>[+-]?)(?P<whole>(?:[0-9]{sep}?)*)(?:{sep}(?P<fraction>[0-9]*))?"
                                       f"(?P<exponent>(?:[eE][+-]?[0-9]+)?)$")
        whole = pc.replace_substring(pc.struct_field(parts, "whole"), self.separator, "")
        number = pc.binary_join_element_wise(pc.struct_field(parts, "sign"), whole, ".",
                                             pc.struct_field(parts, "fraction"), pc.struct_field(parts, "exponent"), "")
        return pc.if_else(pc.is_valid(parts), number, text)  # (infinities: as written)

    def _inferred(self, column: pa.ChunkedArray) -> Optional[pa.ChunkedArray]:
        """int64 (uint64 past it), else float64, as pandas infers; None: stays text."""
        import pyarrow.compute as pc
        integer, floating = self._patterns()
        first = _first_value(column, self.null_values)
        if first is None or not (re.fullmatch(integer, first) or re.fullmatch(floating, first)):
            return None  # all null, or text from its first value on (most text columns: no pass over them)
        values = self._values(column)
        if self.integers and pc.all(pc.match_substring_regex(values, integer)).as_py():
            digits = self._digits(values, False)
            for kind in (pa.int64(), pa.uint64()):
                try:
                    return pc.cast(digits, kind)
                except (pa.ArrowInvalid, OverflowError):
                    continue
            return None  # past uint64, or negative past int64: pandas keeps the text
        if pc.all(pc.match_substring_regex(values, floating)).as_py():
            return pc.cast(self._digits(values, True), pa.float64())
        return None

    def _booleans(self, column: pa.ChunkedArray) -> Optional[pa.ChunkedArray]:
        """The column as booleans where every value is one of pandas' words for them; None else."""
        import pyarrow.compute as pc
        values = self._values(column)
        trues = pc.is_in(values, value_set=pa.array([word for word, truth in _BOOLEAN_WORDS.items() if truth]))
        missing = pc.is_null(values)
        words = pc.or_(pc.or_(trues, missing), pc.is_in(values, value_set=pa.array(list(_BOOLEAN_WORDS))))
        return pc.if_else(missing, None, trues) if pc.all(words).as_py() else None

    def _strict(self, column: pa.ChunkedArray, name: str, target: pa.DataType) -> pa.ChunkedArray:
        """The column as the dtype asked for: read as pandas infers it, then
        cast where no value changes (pandas' "safely"); ``ValueError`` else."""
        import pyarrow.compute as pc
        if column.null_count == len(column):  # no rows, or no values: nothing to read
            return pa.chunked_array([pa.nulls(len(column), target)])
        converted = self._inferred(column)
        nullable = name in self.nullable or "*" in self.nullable and name not in self.types
        if converted is None and not nullable:  # (pandas' nullable dtypes refuse them)
            converted = self._booleans(column)  # pandas' words, which a numeric dtype then takes as 1 and 0
            if converted is not None and converted.null_count and not pa.types.is_floating(target):
                raise ValueError(f"cannot safely convert passed user dtype of {target} for bool dtyped data in "
                                 f"column {name!r} due to NA values")  # pandas' words
        if converted is None:
            integer, floating = self._patterns()
            values = self._values(column)
            ok = pc.or_(pc.match_substring_regex(values, integer), pc.match_substring_regex(values, floating))
            bad = values.filter(pc.invert(pc.fill_null(ok, True)))
            if not len(bad) and pa.types.is_floating(target):  # integers past uint64: floats asked, floats
                return _as_float(self._digits(values, True), target)
            shown = bad[0].as_py() if len(bad) else values.drop_null()[0].as_py()
            raise ValueError(f"column {name!r}: cannot read {shown!r} as {target} with thousands={self.separator!r}")
        try:
            if pa.types.is_floating(target) and pa.types.is_integer(converted.type):  # floats asked: read as floats
                return _as_float(converted, target)
            return pc.cast(converted, target)
        except (pa.ArrowInvalid, OverflowError) as exc:
            raise ValueError(f"column {name!r}: cannot safely convert {converted.type} to {target}: {exc}") from None


def _nullable(kind: Any) -> bool:
    """Whether a ``dtype`` entry is one of pandas' extension dtypes (``Int64``, ``Float64``...).

    >>> _nullable("Int64"), _nullable("int64"), _nullable(pa.int64())
    (True, False, False)
    """
    import pandas as pd
    try:
        return isinstance(pd.api.types.pandas_dtype(kind), pd.api.extensions.ExtensionDtype)
    except TypeError:
        return False


def _as_float(numbers: pa.ChunkedArray, target: pa.DataType) -> pa.ChunkedArray:
    """Integers, or their digits as text, as a float dtype: rounded to float64 as pandas' float
    parser reads them, then to ``target`` as ``astype`` casts."""
    import pyarrow.compute as pc
    return pc.cast(pc.cast(numbers, pa.float64(), safe=False), target, safe=False)


def _first_value(column: pa.ChunkedArray, null_values: Sequence[str]) -> Optional[str]:
    """The column's first value that is neither null nor a null spelling, or None."""
    nulls = set(null_values)
    for chunk in column.chunks:
        for value in chunk:
            text = value.as_py()
            if text is not None and text not in nulls:
                return text
    return None


def _numeric(kind: pa.DataType) -> bool:
    return pa.types.is_integer(kind) or pa.types.is_floating(kind)


def selected_names(usecols: Callable[[Any], bool], names: Sequence[str], numbered: bool = False) -> list[str]:
    """``usecols`` given as a callable: the header names it accepts, in file order;
    ``numbered`` (``header=None``): it is asked with pandas' labels there, the columns' numbers.

    >>> selected_names(lambda name: name.startswith("l_"), ["l_a", "x", "l_b"])
    ['l_a', 'l_b']
    >>> selected_names(lambda label: label != 1, ["f0", "f1", "f2"], numbered=True)
    ['f0', 'f2']
    """
    return [name for name in names if usecols(column_number(name) if numbered else name)]


def positions_named(options: Mapping[str, Any]) -> bool:
    """Whether ``parse_dates``, ``converters`` or ``dtype`` name a column by
    position (the frame applies some of them: the frame's positions are not
    the file's where ``usecols`` or an index leave columns out).

    >>> positions_named({"parse_dates": [2]}), positions_named({"converters": {"a": str}})
    (True, False)
    """
    dates = options.get("parse_dates")
    dtype = options.get("dtype")
    keys = [*(dates if isinstance(dates, (list, tuple)) else ()), *(options.get("converters") or {}),
            *(dtype if isinstance(dtype, Mapping) else ()), *_na_values_by_name(options)]
    return any(isinstance(key, int) for key in keys)


def _na_values_by_name(options: Mapping[str, Any]) -> Mapping[Any, Any]:
    """The ``na_values`` dict where a step after the read looks a column's spellings up by
    its name (converters; ``thousands``, whose floats take the numeric ones), else {}."""
    na_values = options.get("na_values")
    by_name = options.get("converters") or options.get("thousands") is not None
    return na_values if by_name and isinstance(na_values, Mapping) else {}


def objects_by_position(dtype: Any, names: Sequence[str]) -> tuple[str, ...]:
    """The columns a ``dtype`` dict makes ``object`` by position only: pandas reads
    them so, but its last step, which looks dtypes up by name, then types them by
    their values (``str`` for text).

    >>> objects_by_position({1: object, 0: "int64"}, ["a", "b"]), objects_by_position({1: object, "b": object}, ["a", "b"])
    (('b',), ())
    """
    if not isinstance(dtype, Mapping):
        return ()
    kinds = _pandas_dtypes(dtype)
    return tuple(names[key] for key, kind in kinds.items() if isinstance(key, int) and 0 <= key < len(names)
                 and kind == object and names[key] not in dtype)


def positions_only(dtype: Any, names: Sequence[str]) -> tuple[str, ...]:
    """The columns a ``dtype`` dict types by position and not by name.

    >>> positions_only({0: "str", 1: "int64", "b": "float64"}, ["a", "b"]), positions_only("str", ["a"])
    (('a',), ())
    """
    if not isinstance(dtype, Mapping):
        return ()
    return tuple(names[key] for key in dtype if isinstance(key, int) and 0 <= key < len(names)
                 and names[key] not in dtype)


def name_positions(options: dict[str, Any], names: Sequence[str],
                   made_up: ImplicitColumns = ImplicitColumns()) -> dict[str, Any]:
    """``parse_dates``, ``converters`` and ``dtype`` with positions
    replaced by the header's names (with ``header=None``, the reader's ``f0, f1,
    ...``: pandas' labels there are the columns' numbers in the file). As in
    pandas, converters and dtypes count an implicit index's fields, ``parse_dates``
    only the names (``made_up``: the columns the implicit index made up), and of
    those only the ones a ``usecols`` list keeps.

    >>> name_positions({"parse_dates": [1], "converters": {0: str}, "dtype": {1: "category"}}, ["a", "b"])
    {'parse_dates': ['b'], 'converters': {'a': <class 'str'>}, 'dtype': {'b': 'category'}}
    """
    def named(key: Union[int, str], among: Sequence[str] = names) -> Union[int, str]:
        return among[key] if isinstance(key, int) and -len(among) <= key < len(among) else key

    options = dict(options)
    dtype = options.get("dtype")
    if isinstance(dtype, Mapping):  # pandas takes a column's name first, and ignores a position the file lacks
        options["dtype"] = {named(key): kind for key, kind in dtype.items() if not isinstance(key, int) or (
            0 <= key < len(names) and names[key] not in dtype)}
    if isinstance(options.get("parse_dates"), (list, tuple)):
        header = [name for name in names if name not in made_up.index]
        kept = options.get("usecols")
        if isinstance(kept, (list, tuple)):  # pandas counts parse_dates positions among the columns kept
            header = [name for i, name in enumerate(names) if name in header and (name in kept or i in kept)]
        options["parse_dates"] = [*(named(key, header) for key in options["parse_dates"]),
                                  # pandas: a position is also the index level read from that field
                                  *(names[key] for key in options["parse_dates"]
                                    if isinstance(key, int) and 0 <= key < len(names) and names[key] in made_up.index)]
    if options.get("converters"):  # pandas ignores a converter for a position the file lacks, or a negative one,
        converters = options["converters"]  # and takes a column's name first, as for dtypes
        options["converters"] = {named(key): convert for key, convert in converters.items()
                                 if not isinstance(key, int) or 0 <= key < len(names) and names[key] not in converters}
    na_values = _na_values_by_name(options)
    if na_values:  # a column's name first, as pandas looks its spellings up
        position = {key: names[key] for key in na_values if isinstance(key, int) and 0 <= key < len(names)}
        options["na_values"] = {position.get(key, key): spellings for key, spellings in na_values.items()
                                if position.get(key, key) == key or position[key] not in na_values}
    return options


def _name(frame: "pd.DataFrame", key: Union[int, str]) -> str:
    """A column's name from its name or, for an int that is not one (``header=None``
    names columns by their numbers in the file), its position.

    >>> import pandas as pd
    >>> frame = pd.DataFrame({1: ["x"], 2: ["y"]})
    >>> _name(frame, 2), _name(frame, 0), _name(pd.DataFrame({"a": [1]}), 0)
    (2, 1, 'a')
    """
    return key if key in frame.columns or not isinstance(key, int) else frame.columns[key]


def _has_column(frame: "pd.DataFrame", key: Union[int, str]) -> bool:
    return key in frame.columns or isinstance(key, int) and -len(frame.columns) <= key < len(frame.columns)


def _dates_or_text(values: Any, steps: FrameSteps, given: Any = None) -> Any:
    """``parse_dates``' column (or index) as ``pandas.to_datetime`` parses it,
    or its text as it is where that cannot parse every value, as
    ``pandas.read_csv`` leaves such a column. A column of another ``dtype``
    given (numbers, booleans, categories) is parsed from the text of its
    values, as pandas does (``20200102`` read as ``int64`` is a date, ``1``
    as ``float64`` the text ``'1.0'``).

    >>> import pandas as pd
    >>> _dates_or_text(pd.Series(["2020-01-02", "zz"]), FrameSteps()).tolist()
    ['2020-01-02', 'zz']
    >>> _dates_or_text(pd.Series([20200102, 20200103]), FrameSteps(), "int64").dt.day.tolist()
    [2, 3]
    >>> _dates_or_text(pd.Series([1.0, None]), FrameSteps(), "float64").tolist()
    ['1.0', nan]
    """
    import pandas as pd

    if values.dtype.kind in "Mm":  # read as a datetime64 dtype: pandas leaves it
        return values
    if not len(values):  # no rows: pandas leaves the column unparsed, of objects or the dtype given
        return values.astype(object) if given is None else values
    texts = values if _is_text(values.dtype) else _as_text(values)
    try:
        return pd.to_datetime(texts, format=steps.date_format, dayfirst=steps.dayfirst)
    except (ValueError, TypeError, OverflowError):  # pandas' parse errors are ValueErrors
        return texts if given is None else texts.astype("str")  # given a dtype: pandas' str


def _is_text(dtype: Any) -> bool:
    import pandas as pd

    return pd.api.types.is_string_dtype(dtype) and not isinstance(dtype, pd.CategoricalDtype)


def _as_text(values: Union["pd.Series", "pd.Index"]) -> Union["pd.Series", "pd.Index"]:
    """Each value's ``str``, missing ones NaN: what pandas' date parsing reads of a column
    (or an index level) that is not text (``ensure_string_array``)."""
    import pandas as pd

    objects = np.asarray(values)  # as pandas sees them: Int64 with a missing value is floats
    texts = np.array([str(value) for value in objects], dtype=object)
    texts[pd.isna(objects)] = np.nan
    if isinstance(values, pd.Index):
        return pd.Index(texts, dtype=object, name=values.name)
    return pd.Series(texts, index=values.index, name=values.name)


def _dtype_given(steps: FrameSteps, name: str) -> Any:
    """The ``dtype`` keyword's entry for column ``name`` (or for every column), or None."""
    for given in (steps.pandas_dtypes, steps.category_dtypes):
        if name in given or None in given:
            return given.get(name, given.get(None))
    return None


def _text_dates(values: Any, steps: FrameSteps) -> Any:
    """An index (level) ``parse_dates=True`` parses: text, as pandas parses it, typed by its values
    where that fails (:func:`_typed_index_text`); numbers (a dtype given) stay numbers. (pandas'
    implicit index is typed first, then parsed from its values' text: :func:`_dates_or_text`.)

    >>> import pandas as pd
    >>> _text_dates(pd.Index([1, 2]), FrameSteps()).tolist(), str(_text_dates(pd.Index(["2020-01-02"]), FrameSteps())[0])
    ([1, 2], '2020-01-02 00:00:00')
    """
    import pandas as pd

    return _typed_index_text(_dates_or_text(values, steps)) if pd.api.types.is_string_dtype(values.dtype) else values


def _typed_index_text(values: Any) -> Any:
    """An index level's text that did not parse as dates, typed as pandas types an index:
    numbers where every value is one, booleans where every value is a boolean word, else text
    (pandas reads a ``parse_dates`` index as text, then infers it where the dates fail).

    >>> import pandas as pd
    >>> _typed_index_text(pd.Series(["007", "2"])).tolist(), _typed_index_text(pd.Series(["True", "false"])).tolist()
    ([7, 2], [True, False])
    """
    import pandas as pd

    if not _is_text(values.dtype) or not len(values):  # (no values: pandas' empty Index is of objects)
        return values
    try:
        return pd.to_numeric(values)
    except (ValueError, TypeError):
        pass
    present = values.dropna()
    if len(present) and present.isin(list(_BOOLEAN_WORDS)).all():
        words = values.map(_BOOLEAN_WORDS)
        return words if len(present) == len(values) else words.astype(object)
    return values


def numbered_columns(frame: "pd.DataFrame") -> "pd.DataFrame":
    """A frame read with ``header=None`` and no ``names``, labelled as pandas
    labels it: columns (and index levels) by their position in the file,
    ``0, 1, ...``, where the reader names them ``f0, f1, ...``.

    >>> import pandas as pd
    >>> frame = numbered_columns(pd.DataFrame({"f1": [2]}, index=pd.Index([1], name="f0")))
    >>> frame.columns.tolist(), list(frame.index.names)
    ([1], [0])
    """
    frame.columns = [column_number(name) for name in frame.columns]
    frame.index.names = [column_number(name) for name in frame.index.names]
    return frame


def column_number(name: Any) -> Any:
    """pandas' label of a column the reader named ``f{n}`` (``header=None``): ``n``.

    >>> column_number("f12"), column_number("x")
    (12, 'x')
    """
    return int(name[1:]) if isinstance(name, str) and re.fullmatch(r"f[0-9]+", name) else name
