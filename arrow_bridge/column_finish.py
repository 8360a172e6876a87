"""Column finishing: the Arrow types and options the kernels do not produce, made after the parse.

The kernels turn CSV fields into nulls, integers, floats, booleans, dates,
times, ISO 8601 timestamps and strings. pyarrow reads more, and each of the
rest is one of those plus an exact step on the assembled column:

* ``date64``: read as ``date32``, cast (days x 86 400 000 ms);
* ``duration``: read as ``int64`` (pyarrow parses both with one integer
  parser), viewed as the duration;
* ``decimal128(p, s)`` and ``fixed_size_binary(n)``: read as text, then
  parsed here by pyarrow's rules (:func:`decimal_array`; the byte width);
* timestamps with ``timestamp_parsers`` that name strptime formats: read as
  text, each value tried with the parsers in order (:func:`timestamp_array`);
* ``dictionary<int32, V>``: ``V`` read as above, then dictionary-encoded over
  the whole column (one dictionary, first appearance order);
* ``auto_dict_encode``: a text column whose distinct values stay within
  ``auto_dict_max_cardinality`` becomes ``dictionary<int32, string>``
  (:func:`dictionary_fits`, pyarrow's rule); with custom ``timestamp_parsers``
  an inferred text column whose every value parses becomes a timestamp;
* pandas' ``na_values={column: [...]}``: the column is read as text and its
  own null spellings and type found after (:class:`ColumnNulls`);
* pandas' null spellings that read as numbers: in a float column, every value
  equal to one is null (:class:`NumericNulls`).

:func:`plan_column` decides, per output column, the type the kernels produce
(its *kernel type*) and the :class:`ColumnFinish` to apply;
:func:`finish_table` applies them to a Table the reader assembled. A read
that uses none of these options plans no finish, and ``finish_table`` then
returns the Table as it is.

Text read for a non-string type comes with that type's null rules applied:
the kernels read it with ``strings_can_be_null`` on
(:meth:`~arrow_bridge.read_plan.ColumnPlan.kernel_rules`), so a quoted null
spelling is null as ``quoted_strings_can_be_null`` says.

>>> import io, arrow_bridge, pyarrow as pa, pyarrow.csv as pacsv
>>> co = pacsv.ConvertOptions(column_types={"p": pa.decimal128(7, 2), "d": pa.date64()})
>>> arrow_bridge.read_csv(io.BytesIO(b"p,d\\n1.5,2020-01-02\\n,\\n"), convert_options=co).to_pydict()
{'p': [Decimal('1.50'), None], 'd': [datetime.date(2020, 1, 2), None]}
"""
from __future__ import annotations

import dataclasses
import functools
import re
from typing import Any, Callable, Optional, Protocol, Sequence

import numpy as np
import pyarrow as pa  # pyarrow.compute is imported in the functions that use it: ~50 ms of every start-up

from arrow_bridge.converters import TokenizedSpan, ValueRules, conversion_spec, converter_for
from arrow_bridge.dialect import Dialect
from arrow_bridge.errors import CsvParseError
from arrow_bridge.inference import INFERENCE_LADDER, SAMPLE_ROWS, InferringConverter
from arrow_bridge.jit import njit
from arrow_bridge.kernels.status import empty_counters
from arrow_bridge.numbers.parse_dates import parse_timestamp, to_unit
from arrow_bridge.options import CsvOptions, is_iso8601
from arrow_bridge.python_ints import AS_WRITTEN_KEY, C_SPACES, marked, named, pandas_outcome, uint64_conflict


class PlannedColumn(Protocol):
    """What a finish knows of its column (an ``arrow_bridge.read_plan.ColumnPlan``)."""

    name: str
    index: int  # the file column (pyarrow's errors name it: "In CSV column #index")
    finish: Optional["ColumnFinish"]


#: The inference ladder's timestamp rungs, in order; custom ``timestamp_parsers`` are tried at these.
TIMESTAMP_RUNGS = tuple(k for k, t in enumerate(INFERENCE_LADDER) if pa.types.is_timestamp(t))
_TEXT_RUNGS = {pa.string(), pa.binary()}
#: Value types pyarrow dictionary-encodes in column_types (its DictionaryConverter's list).
_DICTIONARY_VALUES = {pa.int32(), pa.int64(), pa.uint32(), pa.uint64(), pa.float32(), pa.float64(),
                      pa.binary(), pa.large_binary(), pa.string(), pa.large_string()}
_UNITS = {"s": (0, 1), "ms": (3, 1_000), "us": (6, 1_000_000), "ns": (9, 1_000_000_000)}


# ==============================================================================================
# Planning: the kernel type and the finish of one output column.
# ==============================================================================================
def plan_column(requested: Optional[pa.DataType], present: bool, opts: CsvOptions, rules: Optional[ValueRules],
                null_values: Optional[Sequence[str]] = None) -> tuple[Optional[pa.DataType], Optional["ColumnFinish"]]:
    """``(kernel type, finish)`` of an output column asked to be ``requested``
    (None: inferred); ``present``: the file has it; ``null_values``: the
    column's own null spellings (pandas' ``na_values`` dict), if any;
    ``rules``: the read's value rules (needed unless the column is inferred).

    >>> from arrow_bridge.options import CsvOptions
    >>> opts = CsvOptions()
    >>> rules = ValueRules.from_options(opts)
    >>> plan_column(pa.int32(), True, opts, rules)
    (DataType(int32), None)
    >>> kernel, finish = plan_column(pa.date64(), True, opts, rules)
    >>> kernel, finish.type
    (DataType(date32[day]), DataType(date64[ms]))
    """
    if requested is None and null_values is None:  # the common case first: an inferred column
        return None, _inferred(opts, _text_nulls(opts)) if present else None
    if not present:
        return (requested, None) if _kernel_makes(requested, rules) else (pa.null(), NullColumn(requested))
    if null_values is not None:
        column_rules = dataclasses.replace(ValueRules.from_options(opts, null_values), strings_can_be_null=True,
                                           quoted_nulls=True)
        then = None
        if requested is not None and not _kernel_makes(requested, rules):
            kernel, convert = conversion_of(requested, opts, rules)
            then = Converted(requested, convert)
            requested = kernel
        elif requested is None:
            then = _inferred(opts, text_nulls=None)
        return pa.binary(), ColumnNulls(column_rules, requested, then)
    if _kernel_makes(requested, rules):
        return requested, None
    kernel, convert = conversion_of(requested, opts, rules)
    return kernel, Converted(requested, convert, reads_text=_reads_text(requested, kernel))


def with_numeric_nulls(finish: Optional["ColumnFinish"], opts: CsvOptions, null_values: Optional[Sequence[str]],
                       requested: Optional[pa.DataType] = None) -> Optional["ColumnFinish"]:
    """``finish`` followed by pandas' numeric null rule where it applies: under
    ``semantics="pandas"``, a float equal to a null spelling that reads as a number
    is null too (``na_values=[-999]``: ``-999.00``, ``-9.99e2``; :class:`NumericNulls`), in a
    column that can be of floats: inferred (``requested`` None) or asked to be.

    >>> from arrow_bridge.options import resolve_options
    >>> with_numeric_nulls(None, resolve_options(semantics="pandas", na_values=["-999", "n/a"]), None)
    NumericNulls(values=(-999.0,), then=None)
    >>> with_numeric_nulls(None, resolve_options(na_values=["-999"]), None) is None  # pyarrow's semantics
    True
    """
    if opts.semantics != "pandas" or not (requested is None or pa.types.is_floating(requested)):
        return finish
    values = numeric_null_values(opts.null_values if null_values is None else null_values)
    return NumericNulls(values, finish) if values else finish


def numeric_null_values(spellings: Sequence[str]) -> tuple[float, ...]:
    """The numbers null spellings read as (pandas' ``na_fvalues``).

    >>> numeric_null_values(["-999", "NA", "1e3", "nan"])
    (-999.0, 1000.0)
    """
    return tuple(sorted({number for number in map(_number, spellings) if number is not None}))


def _number(spelling: str) -> Optional[float]:
    """The number a null spelling reads as (pandas takes ``float()``'s), NaN and words left out."""
    try:
        number = float(spelling)
    except ValueError:
        return None
    return None if number != number else number


def _kernel_makes(type_: pa.DataType, rules: ValueRules) -> bool:
    """Whether the kernels produce ``type_`` themselves (timestamps: only with ISO 8601 alone)."""
    if pa.types.is_timestamp(type_) and not rules.iso_timestamps:
        return False
    try:
        conversion_spec(type_, rules)
    except NotImplementedError:
        return False
    return True


def _reads_text(target: pa.DataType, kernel: pa.DataType) -> bool:
    """Whether a column of a non-text ``target`` type is read as text (the kernels then apply
    ``target``'s null rules: :meth:`~arrow_bridge.read_plan.ColumnPlan.kernel_rules`)."""
    value = target.value_type if pa.types.is_dictionary(target) else target
    return kernel in _TEXT_RUNGS and not (pa.types.is_string(value) or pa.types.is_large_string(value)
                                          or pa.types.is_binary(value) or pa.types.is_large_binary(value))


def _text_nulls(opts: CsvOptions) -> Optional[tuple[str, ...]]:
    """The spellings an inferred text column tried as timestamps must turn into nulls. None
    where the kernels did (``strings_can_be_null``), or where a quoted one is no null
    (``quoted_strings_can_be_null=False``): the text no longer says which were quoted, so
    type settling reads such a column again (:func:`arrow_bridge.type_settling.settle_timestamps`)."""
    return None if opts.strings_can_be_null or not opts.quoted_strings_can_be_null else opts.null_values


def _inferred(opts: CsvOptions, text_nulls: Optional[tuple[str, ...]]) -> Optional["Inferred"]:
    custom = opts.custom_timestamps
    if not (opts.auto_dict_encode or custom):
        return None
    return Inferred(opts.auto_dict_max_cardinality if opts.auto_dict_encode else None,
                    opts.timestamp_parsers if custom else (), text_nulls)


Convert = Callable[[pa.Array, PlannedColumn], pa.Array]


def conversion_of(target: pa.DataType, opts: CsvOptions, rules: ValueRules) -> tuple[pa.DataType, Convert]:
    """``(kernel type, convert)`` for a type the kernels do not produce: the kernels
    read the column as the kernel type, ``convert`` makes each chunk ``target``.
    Raises ``pyarrow.ArrowNotImplementedError`` where pyarrow cannot read ``target``.

    >>> from arrow_bridge.options import CsvOptions
    >>> opts = CsvOptions()
    >>> conversion_of(pa.duration("ms"), opts, ValueRules.from_options(opts))[0]
    DataType(int64)
    """
    if pa.types.is_dictionary(target):
        return _dictionary_conversion(target, opts, rules)
    if _kernel_makes(target, rules):
        return target, lambda array, column: array
    if pa.types.is_date64(target):
        return pa.date32(), lambda array, column: array.cast(pa.date64())
    if pa.types.is_duration(target):
        return pa.int64(), lambda array, column: array.view(target)
    if pa.types.is_fixed_size_binary(target):
        return pa.binary(), lambda array, column: fixed_size_binary_array(array, target, column)
    if pa.types.is_decimal128(target):
        point = opts.decimal_point
        return pa.string(), lambda array, column: decimal_array(array, target, column, point)
    if pa.types.is_timestamp(target):
        parsers = opts.timestamp_parsers
        return pa.string(), lambda array, column: _checked_timestamps(array, target, parsers, column)
    raise pa.ArrowNotImplementedError(f"CSV conversion to {target} is not supported")


def _dictionary_conversion(target: pa.DictionaryType, opts: CsvOptions, rules: ValueRules
                           ) -> tuple[pa.DataType, Convert]:
    if target.index_type != pa.int32():
        raise pa.ArrowNotImplementedError(f"CSV conversion to dictionary only supported for int32 indices, "
                                          f"got {target}")
    value = target.value_type
    if not (value in _DICTIONARY_VALUES or pa.types.is_duration(value) or pa.types.is_decimal128(value)
            or pa.types.is_fixed_size_binary(value)):
        raise pa.ArrowNotImplementedError(f"CSV dictionary conversion to {value} is not supported")
    return conversion_of(value, opts, rules)  # the encoding itself spans the column: Converted.apply


# ==============================================================================================
# Applying: a Table the reader assembled → the Table with every finish applied.
# ==============================================================================================
def finish_table(table: pa.Table, columns: Sequence[PlannedColumn]) -> pa.Table:
    """``table`` (the reader's, one column per plan in ``columns``) with each
    column's finish applied; ``table`` itself when no column has one.

    >>> import pyarrow as pa
    >>> from arrow_bridge.read_plan import ColumnPlan
    >>> finish_table(pa.table({"a": [1]}), [ColumnPlan("a", 0, pa.int64())]).num_rows
    1
    """
    if all(column.finish is None for column in columns):
        return table
    arrays = [column.finish.apply(table.column(j), column) if column.finish is not None else table.column(j)
              for j, column in enumerate(columns)]
    return pa.Table.from_arrays(arrays, names=table.column_names)


def finish_chunk(chunk: pa.Table, columns: Sequence[PlannedColumn], inferring: InferringConverter) -> pa.Table:
    """A chunk of ``read_pandas``' (a Table of unfinished stream batches, one
    column per plan in ``columns``) typed by its own values as far as its
    text allows, as pandas types a chunk: each finish applied to the chunk
    (a column read as text infers its type from the chunk's values, not the
    first block's), a column the first block inferred as strings whose
    values here read as numbers or booleans takes that type, one of uint64
    whose values here fit int64 takes int64, and one without a value here
    is of nulls. A column read as raw text whose values pandas keeps as written
    (:func:`settle_past_int64`) is that text, NA spellings and empty fields
    too. ``inferring``: the read's (:attr:`ReadPlan.inferring`).

    >>> from arrow_bridge.read_plan import ColumnPlan
    >>> plan = ColumnPlan("a", 0, pa.string(), first_block=True)
    >>> inferring = InferringConverter(ValueRules.from_options(CsvOptions()))
    >>> finish_chunk(pa.table({"a": ["1", None]}), [plan], inferring).column("a").type
    DataType(int64)
    """
    arrays, raw = [], {}
    for j, plan in enumerate(columns):
        column = chunk.column(j)
        if plan.raw_text and plan.typed_by_values:
            raw[chunk.column_names[j]] = column
        if plan.first_block and len(column) and column.null_count == len(column):
            column = pa.chunked_array([pa.nulls(len(column))])
        elif plan.first_block and column.type == pa.string():
            column = _retyped_text(column, inferring)
        elif plan.first_block and column.type == pa.uint64():
            column = _narrowed(column)
        elif plan.finish is not None and plan.finish.decides_type:
            column = _one_chunk(column)  # text whose type the finish infers: one pass
        arrays.append(plan.finish.apply(column, plan) if plan.finish is not None else column)
    table = settle_past_int64(pa.Table.from_arrays(arrays, names=chunk.column_names, metadata=chunk.schema.metadata),
                              columns, inferring)
    for name in named(table.schema, AS_WRITTEN_KEY):
        if name in raw:
            j = table.column_names.index(name)
            table = table.set_column(j, name, _decoded(raw[name]))
    return table


def _decoded(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """Raw text (binary) as strings; as it is where it is not UTF-8 (``read_pandas`` raises pandas' error)."""
    try:
        return column.cast(pa.string())
    except pa.ArrowInvalid:
        return column


def settle_past_int64(table: pa.Table, columns: Sequence[PlannedColumn], inferring: InferringConverter) -> pa.Table:
    """``table`` (a read's under pandas' semantics, one column per shown plan in ``columns``)
    with each column of text whose type its values decide settled as pandas' C parser
    settles an integer past int64 there (:mod:`~arrow_bridge.python_ints`): floats, or
    text named in the schema metadata as Python ints. Where pandas keeps the text as
    written, NA spellings and empty fields too, the metadata names the column
    (``read_pandas`` reads it again so). ``table`` itself where none is.

    >>> from arrow_bridge.read_plan import ColumnPlan
    >>> inferring = InferringConverter(ValueRules.from_options(CsvOptions(semantics="pandas")))
    >>> plan = ColumnPlan("a", 0, None)
    >>> settle_past_int64(pa.table({"a": ["1.5", "18446744073709551616"]}), [plan], inferring).column("a").to_pylist()
    [1.5, 1.8446744073709552e+19]
    """
    shown = [plan for plan in columns if not plan.hidden]
    python_ints, as_written = [], []
    for j, (plan, column) in enumerate(zip(shown, table.columns)):
        if not plan.typed_by_values:
            continue
        outcome, settled = settled_text(column, inferring)
        if settled is not column:
            table = table.set_column(j, table.field(j).with_type(settled.type), settled)
        python_ints += [table.column_names[j]] if outcome == "python ints" else []
        if (outcome == "text as written" and column.null_count) or uint64_conflict(column):
            as_written.append(table.column_names[j])
    if not python_ints and not as_written:
        return table
    return table.replace_schema_metadata(marked(marked(table.schema, python_ints), as_written, AS_WRITTEN_KEY).metadata)


def settled_text(column: pa.ChunkedArray, inferring: InferringConverter
                 ) -> tuple[Optional[str], pa.ChunkedArray]:
    """``(outcome, column)``: what pandas makes of ``column`` (text whose type its values
    decide: :func:`~arrow_bridge.python_ints.pandas_outcome`), and the column as floats
    where that is floats and every value reads as one, as uint64 where that is uint64,
    else ``column`` itself."""
    import pyarrow.compute as pc

    outcome = pandas_outcome(column) if inferring.rules.infer_integers else None
    if outcome == "uint64":
        digits = pc.replace_substring_regex(pc.utf8_trim(column, C_SPACES), "^\\+", "")
        return outcome, digits.cast(pa.uint64())
    if outcome != "floats":
        return outcome, column
    text = _one_chunk(column).chunk(0)
    values = inferring.floats(_text_span(text.drop_null()))
    if values is None:
        return None, column
    if text.null_count:
        values = pc.replace_with_mask(pa.nulls(len(text), pa.float64()), text.is_valid(), values)
    return outcome, pa.chunked_array([values])


def _narrowed(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """A uint64 column as int64 where every value fits (pandas infers uint64 only past int64)."""
    import pyarrow.compute as pc
    most = pc.max(column).as_py()
    return column.cast(pa.int64()) if most is not None and most <= np.iinfo(np.int64).max else column


def _one_chunk(column: pa.ChunkedArray) -> pa.ChunkedArray:
    return pa.chunked_array([pa.concat_arrays(column.chunks)], type=column.type) if column.num_chunks > 1 else column


def _retyped_text(column: pa.ChunkedArray, inferring: InferringConverter) -> pa.ChunkedArray:
    """``column`` (text) at the first rung of the inference ladder that takes all its
    values; itself where that is text (as a rule its first values say so: only they
    are looked at then, nothing copied or converted)."""
    first = next((chunk for chunk in column.chunks if len(chunk)), None)
    if first is None or inferring.sampled_rung(_text_span(first.slice(0, SAMPLE_ROWS)), 0, 0) \
            >= INFERENCE_LADDER.index(pa.string()):
        return column
    rung, converted = inferring.convert_from(_text_span(_one_chunk(column).chunk(0)), 0, 0)
    return column if INFERENCE_LADDER[rung] == pa.string() else pa.chunked_array([converted])


class ColumnFinish:
    """What turns one assembled column into the column the caller asked for."""

    #: The finish decides the column's type from its values (streaming: from the first block).
    decides_type = False
    #: A stream's finish still waiting for the first block to decide its type (:meth:`decide`).
    awaiting_first_block = False

    def apply(self, column: pa.ChunkedArray, plan: PlannedColumn) -> pa.ChunkedArray:
        """The finished column."""
        raise NotImplementedError

    def for_stream(self) -> "ColumnFinish":
        """This finish for a stream: a type decided from the first block's values
        (:meth:`decide`) holds for every later batch."""
        return self

    def decide(self, first: pa.Array, plan: PlannedColumn) -> None:
        """Fixes the type from a stream's first block (finishes that decide one)."""


@dataclasses.dataclass(frozen=True)
class NullColumn(ColumnFinish):
    """A column the file lacks (``include_missing_columns``), of a type the kernels do not produce."""

    type: pa.DataType

    def apply(self, column: pa.ChunkedArray, plan: PlannedColumn) -> pa.ChunkedArray:
        return pa.chunked_array([pa.nulls(len(column), self.type)], type=self.type)


@dataclasses.dataclass(frozen=True)
class Converted(ColumnFinish):
    """An explicit type made from the kernel type chunk by chunk (``convert``);
    a dictionary type is then encoded over the whole column."""

    type: pa.DataType
    convert: Convert
    reads_text: bool = False  # the kernels read its text, with the type's null rules (ColumnPlan.kernel_rules)

    def apply(self, column: pa.ChunkedArray, plan: PlannedColumn) -> pa.ChunkedArray:
        import pyarrow.compute as pc
        value_type = self.type.value_type if pa.types.is_dictionary(self.type) else self.type
        chunks = [self.convert(chunk, plan) for chunk in column.chunks]
        values = pa.chunked_array(chunks, type=value_type)
        if not pa.types.is_dictionary(self.type):
            return values
        return pc.dictionary_encode(values) if len(values) else pa.chunked_array([], type=self.type)


@dataclasses.dataclass(eq=False)
class Inferred(ColumnFinish):
    """An inferred column: a text column tried with custom ``timestamp_parsers``
    (pyarrow's timestamp rungs), then dictionary-encoded when its cardinality
    allows (``auto_dict_encode``). Other inferred types pass through."""

    auto_dict_max: Optional[int]
    parsers: tuple
    text_nulls: Optional[tuple[str, ...]]
    awaiting_first_block: bool = False
    decided: Optional[pa.DataType] = None  # a stream's type, from its first block

    @property
    def decides_type(self) -> bool:
        return True

    def for_stream(self) -> "Inferred":
        return dataclasses.replace(self, awaiting_first_block=True, decided=None)

    def decide(self, first: pa.Array, plan: PlannedColumn) -> None:
        self.decided = self._finished(pa.chunked_array([first]), plan).type
        self.awaiting_first_block = False

    def apply(self, column: pa.ChunkedArray, plan: PlannedColumn) -> pa.ChunkedArray:
        if self.decided is None:
            return self._finished(column, plan)
        return self._enforced(column, plan)

    def _finished(self, column: pa.ChunkedArray, plan: PlannedColumn) -> pa.ChunkedArray:
        import pyarrow.compute as pc
        if column.type not in _TEXT_RUNGS:
            return column
        if self.parsers and column.type == pa.string():
            read = first_timestamp_rung(column, self.parsers, self.text_nulls)
            if read is not None:
                return read[1]
        if self.auto_dict_max is not None and len(column) and dictionary_fits(column, self.auto_dict_max):
            return pc.dictionary_encode(column)
        return column

    def _enforced(self, column: pa.ChunkedArray, plan: PlannedColumn) -> pa.ChunkedArray:
        """A later batch of a stream at the type its first block decided, or pyarrow's error."""
        import pyarrow.compute as pc
        target = self.decided
        if column.type == target:
            return column
        if pa.types.is_timestamp(target):
            return pa.chunked_array([_checked_timestamps(with_nulls(chunk, self.text_nulls), target, self.parsers,
                                                         plan) for chunk in column.chunks], type=target)
        if pa.types.is_dictionary(target):
            if len(column) and not dictionary_fits(column, self.auto_dict_max):
                raise pa.ArrowIndexError(f"In CSV column #{plan.index}: Dictionary length exceeded max cardinality")
            return pc.dictionary_encode(column) if len(column) else pa.chunked_array([], type=target)
        return column


@dataclasses.dataclass(eq=False)
class ColumnNulls(ColumnFinish):
    """A column with its own null spellings (pandas' ``na_values`` dict): read as
    raw text, its values are converted here by the kernels' own converters
    with the column's rules (``rules``: its spellings; a quoted value is
    null too and strings can be null, as pandas reads) — at ``type``, or
    climbing the inference ladder — then given to ``then`` (an explicit type
    the kernels do not produce, or an inferred column's finish)."""

    rules: ValueRules
    type: Optional[pa.DataType]  # a type the kernels produce, or None: inferred
    then: Optional[ColumnFinish] = None
    awaiting_first_block: bool = False
    decided: Optional[int] = None  # a stream's inference rung, from its first block

    @property
    def decides_type(self) -> bool:
        return self.type is None or (self.then is not None and self.then.decides_type)

    @functools.cached_property
    def _inferring(self) -> InferringConverter:
        # made once: building the ladder's converters costs about 0.2 ms, and a chunked read types every chunk
        return InferringConverter(self.rules)

    def for_stream(self) -> "ColumnNulls":
        then = self.then.for_stream() if self.then is not None else None
        return dataclasses.replace(self, then=then, awaiting_first_block=self.decides_type, decided=None)

    def decide(self, first: pa.Array, plan: PlannedColumn) -> None:
        if self.type is None:
            self.decided = _inferred_rung([_text_span(first)], self._inferring)
        if self.then is not None and self.then.awaiting_first_block:
            self.then.decide(self._converted(pa.chunked_array([first]), plan).chunk(0), plan)
        self.awaiting_first_block = False

    def apply(self, column: pa.ChunkedArray, plan: PlannedColumn) -> pa.ChunkedArray:
        converted = self._converted(column, plan)
        return self.then.apply(converted, plan) if self.then is not None else converted

    def _converted(self, column: pa.ChunkedArray, plan: PlannedColumn) -> pa.ChunkedArray:
        if self.type is None and self.decided is None and column.num_chunks == 1:  # one pass: a chunk of a stream
            rung, array = self._inferring.convert_from(_text_span(column.chunk(0)), 0, 0)
            return pa.chunked_array([array], type=INFERENCE_LADDER[rung])
        spans = [_text_span(chunk) for chunk in column.chunks]
        if self.type is not None:
            return pa.chunked_array([_converted_exactly(span, self.type, self.rules, plan) for span in spans],
                                    type=self.type)
        rung = self.decided if self.decided is not None else _inferred_rung(spans, self._inferring)
        return pa.chunked_array([_converted_exactly(span, INFERENCE_LADDER[rung], self.rules, plan, inferring=True)
                                 for span in spans], type=INFERENCE_LADDER[rung])


@dataclasses.dataclass(eq=False)
class NumericNulls(ColumnFinish):
    """pandas' numeric null rule, after the column's other finish (``then``): in a
    column of floats, a value equal to one of ``values`` (the null spellings that read
    as numbers) is null, as ``pandas.read_csv`` makes it NaN (``1e3`` for
    ``na_values=["1000"]``, ``-0.0`` for ``"0"``). Other columns match spellings as
    text (pandas' spellings of whole numbers, ``-999`` and ``-999.0``, are both there)."""

    values: tuple[float, ...]
    then: Optional[ColumnFinish] = None

    @property
    def decides_type(self) -> bool:
        return self.then is not None and self.then.decides_type

    @property
    def awaiting_first_block(self) -> bool:
        return self.then is not None and self.then.awaiting_first_block

    def for_stream(self) -> "NumericNulls":
        return dataclasses.replace(self, then=self.then.for_stream() if self.then is not None else None)

    def decide(self, first: pa.Array, plan: PlannedColumn) -> None:
        if self.then is not None:
            self.then.decide(first, plan)

    def apply(self, column: pa.ChunkedArray, plan: PlannedColumn) -> pa.ChunkedArray:
        if self.then is not None:
            column = self.then.apply(column, plan)
        if not pa.types.is_floating(column.type):
            return column
        return pa.chunked_array([self._nulled(chunk) for chunk in column.chunks], type=column.type)

    def _nulled(self, array: pa.Array) -> pa.Array:
        import pyarrow.compute as pc
        hits = None
        for value in self.values:  # ==, not a hash lookup: -0.0 is 0.0, as in pandas
            equal = pc.equal(array, pa.scalar(value, array.type))
            hits = equal if hits is None else pc.or_(hits, equal)
        hits = pc.fill_null(hits, False)
        return pc.if_else(hits, pa.scalar(None, array.type), array) if pc.any(hits).as_py() else array


def with_nulls(array: pa.Array, spellings: Optional[Sequence[str]]) -> pa.Array:
    """``array`` (text) with every value equal to one of ``spellings`` made null.

    >>> with_nulls(pa.array(["1", "NA", None]), ("NA",)).to_pylist()
    ['1', None, None]
    """
    import pyarrow.compute as pc
    if not spellings or not len(array):
        return array
    hits = pc.is_in(array, value_set=pa.array(list(spellings), array.type))
    if not pc.any(hits).as_py():
        return array
    return pc.if_else(hits, pa.scalar(None, array.type), array)


def _error(plan: PlannedColumn, message: str) -> CsvParseError:
    """A conversion error as pyarrow words it (a ``CsvParseError``, so a ``pyarrow.ArrowInvalid``),
    naming its column (``read_pandas`` reads a column again where its dtype refused a value).

    >>> from arrow_bridge.read_plan import ColumnPlan
    >>> _error(ColumnPlan("a", 0, pa.float64()), "invalid value 'x'").column
    'a'
    """
    error = CsvParseError(f"In CSV column #{plan.index} ({plan.name!r}): {message}")
    error.column = plan.name
    return error


# ==============================================================================================
# Text → values: the kernels' converters on a column of text (ColumnNulls).
# ==============================================================================================
def _text_span(array: pa.Array) -> TokenizedSpan:
    """One column of text laid out as a tokenized span of unquoted fields, so that
    the kernels' converters read it (null entries read as empty fields)."""
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int32)[array.offset: array.offset + len(array) + 1]
    data_buffer = array.buffers()[2]
    first, last = (int(offsets[0]), int(offsets[-1])) if len(offsets) else (0, 0)
    data = np.frombuffer(data_buffer, dtype=np.uint8)[first:last].copy() if data_buffer is not None and last > first \
        else np.zeros(1, dtype=np.uint8)
    starts = (offsets[:-1] - first).astype(np.int32)
    ends = (offsets[1:] - first).astype(np.int32)
    nrows = len(array)
    dialect = Dialect.from_options(CsvOptions()).unescape_args  # never used: no field is quoted or escaped
    return TokenizedSpan(data, starts, ends, np.zeros(max(nrows, 1), dtype=np.uint8), nrows, max(nrows, 1),
                         dialect, np.zeros(1, dtype=np.uint8), empty_counters())


def _inferred_rung(spans: Sequence[TokenizedSpan], inferring: InferringConverter) -> int:
    """The first rung of the inference ladder that every span accepts (the column's type)."""
    rung = 0
    while True:  # a span accepting rung k may refuse a higher one a later span needs: climb until all agree
        needed = max((inferring.convert_from(span, 0, rung)[0] for span in spans), default=rung)
        if needed == rung:
            return rung
        rung = needed


def _converted_exactly(span: TokenizedSpan, type_: pa.DataType, rules: ValueRules,
                       plan: PlannedColumn, inferring: bool = False) -> pa.Array:
    if not span.nrows:
        return pa.array([], type=type_)
    array, bad_row = converter_for(type_, rules, inferring=inferring)(span, 0)
    if array is None:
        start, end = int(span.row_starts[bad_row]), int(span.ends[bad_row])
        value = bytes(span.buf[start:end]).decode("utf-8", "replace")
        raise _error(plan, f"CSV conversion error to {type_}: invalid value '{value}'")
    return array


# ==============================================================================================
# Dictionaries: pyarrow's cardinality rule.
# ==============================================================================================
def dictionary_fits(column: pa.ChunkedArray, max_cardinality: int) -> bool:
    """Whether pyarrow's dictionary converter keeps ``column`` dictionary-encoded.

    It refuses a value once the dictionary holds more than ``max_cardinality``
    entries (checked before each non-null value is added), so ``max + 1``
    distinct values fit when the last of them comes last.

    >>> fits = [dictionary_fits(pa.chunked_array([values]), 2) for values in (["x", "y", "z"], ["x", "y", "z", "x"])]
    >>> fits
    [True, False]
    """
    import pyarrow.compute as pc
    encoded = pc.dictionary_encode(column)
    distinct = len(encoded.chunk(0).dictionary) if encoded.num_chunks else 0
    if distinct <= max_cardinality:
        return True
    if distinct > max_cardinality + 1:
        return False
    indices = pa.chunked_array([chunk.indices for chunk in encoded.chunks]).combine_chunks()
    last_entry = pc.index(indices, pa.scalar(max_cardinality, pa.int32())).as_py()
    valid = np.flatnonzero(indices.is_valid().to_numpy(zero_copy_only=False))
    return int(valid[-1]) == last_entry


# ==============================================================================================
# Fixed-size binary and decimals: pyarrow's value rules.
# ==============================================================================================
def fixed_size_binary_array(array: pa.Array, target: pa.FixedSizeBinaryType, plan: PlannedColumn) -> pa.Array:
    """Binary values of exactly ``target.byte_width`` bytes as ``target``, or pyarrow's error."""
    import pyarrow.compute as pc
    lengths = pc.binary_length(array)
    wrong = pc.fill_null(pc.not_equal(lengths, target.byte_width), False)
    if pc.any(wrong).as_py():
        row = pc.index(wrong, True).as_py()
        raise _error(plan, f"CSV conversion error to {target}: got a {lengths[row].as_py()}-byte long string")
    return array.cast(target)


_DECIMAL = re.compile(r"([+-]?)([0-9]*)(?:(\.)([0-9]*))?(?:[eE]\+?(.*))?", re.DOTALL)
_INT128 = 1 << 127


class _BadDecimal(ValueError):
    """A value pyarrow's decimal parser rejects (the message is pyarrow's)."""


def decimal_array(array: pa.Array, target: pa.Decimal128Type, plan: PlannedColumn,
                  decimal_point: str = ".") -> pa.Array:
    """Text as ``target``, each value parsed as pyarrow's CSV reader parses it:
    blanks trimmed, the literal's own precision (significant digits) at most
    the type's, then rescaled to the type's scale without losing a digit.

    >>> from arrow_bridge.read_plan import ColumnPlan
    >>> decimal_array(pa.array(["1.5", " -2 ", None, "1e2"]), pa.decimal128(5, 1), ColumnPlan("x", 0, None)).to_pylist()
    [Decimal('1.5'), Decimal('-2.0'), None, Decimal('100.0')]
    """
    if not len(array):
        return pa.array([], type=target)
    encoded = array.dictionary_encode()  # each distinct text is parsed once
    unscaled = np.zeros((len(encoded.dictionary) + 1, 16), dtype=np.uint8)  # the last row: null slots
    for k, raw in enumerate(encoded.dictionary.cast(pa.binary()).to_pylist()):  # (check_utf8=False: any bytes)
        try:
            value = _decimal_unscaled(raw.decode("utf-8", "replace"), target.precision, target.scale, decimal_point)
        except _BadDecimal as exc:
            raise _error(plan, str(exc)) from None
        unscaled[k] = np.frombuffer(value.to_bytes(16, "little", signed=True), dtype=np.uint8)
    indices = encoded.indices.fill_null(len(encoded.dictionary)).to_numpy()
    values = unscaled[indices]
    null_count = array.null_count
    bitmap = array.is_valid().buffers()[1] if null_count else None
    return pa.Array.from_buffers(target, len(array), [bitmap, pa.py_buffer(values.tobytes())], null_count=null_count)


def _decimal_unscaled(text: str, precision: int, scale: int, decimal_point: str) -> int:
    """The unscaled integer of ``text`` at ``scale`` (pyarrow's Decimal128::FromString,
    its precision check and Rescale), or :class:`_BadDecimal`."""
    trimmed = text.strip(" \t")
    if decimal_point != ".":  # pyarrow swaps the two, so that '.' itself is refused
        swapped = trimmed.translate({ord(decimal_point): ".", ord("."): decimal_point})
        try:
            return _decimal_unscaled(swapped, precision, scale, ".")
        except _BadDecimal:
            raise _BadDecimal(f"CSV conversion error to decimal128({precision}, {scale}): "
                              f"invalid value '{text}'") from None
    if not trimmed:
        raise _BadDecimal("Empty string cannot be converted to decimal128")
    match = _DECIMAL.fullmatch(trimmed)
    exponent = _arrow_int32(match.group(5)) if match and match.group(5) is not None else 0
    if match is None or not (match.group(2) or match.group(4)) or exponent is None:
        raise _BadDecimal(f"The string '{trimmed}' is not a valid decimal128 number")
    sign, whole, fraction = match.group(1), match.group(2), match.group(4) or ""
    digits = len(fraction) + len(whole.lstrip("0"))
    parsed_scale = len(fraction) - exponent
    value = _signed128(int(whole + fraction or "0"))  # pyarrow accumulates the digits in 128 bits
    if sign == "-":
        value = _signed128(-value)
    if parsed_scale < 0:
        if -parsed_scale > 38:
            raise _BadDecimal(f"The string '{trimmed}' cannot be represented as decimal128")
        value = _times128(value, 10 ** -parsed_scale)
        digits -= parsed_scale
        parsed_scale = 0
    if digits > precision:
        raise _BadDecimal(f"Error converting '{trimmed}' to decimal128({precision}, {scale}): "
                          "precision not supported by type.")
    delta = scale - parsed_scale
    if delta >= 0:  # pyarrow's check: the product wrapped around past the value
        rescaled = _times128(value, 10 ** delta)
        if rescaled > value if value < 0 else rescaled < value:
            raise _BadDecimal("Rescaling Decimal value would cause data loss")
        return rescaled
    quotient, remainder = divmod(abs(value), 10 ** -delta)
    if remainder:
        raise _BadDecimal("Rescaling Decimal value would cause data loss")
    return quotient if value >= 0 else -quotient


def _signed128(value: int) -> int:
    """``value`` wrapped to a signed 128-bit integer (two's complement)."""
    value %= 1 << 128
    return value - (1 << 128) if value >= _INT128 else value


def _times128(value: int, multiplier: int) -> int:
    """Arrow's 128-bit decimal product: the magnitudes multiplied modulo 2**128, then the sign."""
    product = _signed128(abs(value) * multiplier)
    return _signed128(-product) if value < 0 else product


def _arrow_int32(text: str) -> Optional[int]:
    """``text`` as pyarrow's int32 parser reads it (an exponent), or None."""
    if len(text) > 2 and text[0] == "0" and text[1] in "xX":
        digits = text[2:]
        if not 0 < len(digits) <= 8 or any(c not in "0123456789abcdefABCDEF" for c in digits):
            return None
        value = int(digits, 16)
        return value - (1 << 32) if value >= 1 << 31 else value
    negative = text.startswith("-")
    digits = text[1:] if negative else text
    if not digits or any(c not in "0123456789" for c in digits):
        return None
    value = -int(digits) if negative else int(digits)
    return value if -(1 << 31) <= value < 1 << 31 else None


# ==============================================================================================
# Timestamps: timestamp_parsers, each value tried with every parser in order.
# ==============================================================================================
def timestamp_array(array: pa.Array, target: pa.TimestampType, parsers: Sequence[Any]) -> tuple[pa.Array, int]:
    """``(timestamps, first row no parser read)`` of text ``array``: each value
    takes the first parser in ``parsers`` (strptime formats, ``ISO8601``) that
    reads it with a zone offset exactly when ``target`` has a time zone
    (pyarrow's rule); ``-1`` when every non-null value was read (else the
    timestamps are not all there: where the first value is not read, none are).

    >>> timestamp_array(pa.array(["02/01/2020", None]), pa.timestamp("s"), ["%d/%m/%Y"])[0].to_pylist()
    [datetime.datetime(2020, 1, 2, 0, 0), None]
    >>> timestamp_array(pa.array([None, "x", "02/01/2020"]), pa.timestamp("s"), ["%d/%m/%Y"])[1]
    1
    """
    import pyarrow.compute as pc
    n = len(array)
    values = np.zeros(n, dtype=np.int64)
    pending = array.is_valid().to_numpy(zero_copy_only=False).copy() if n else np.zeros(0, dtype=bool)
    first = int(np.argmax(pending)) if pending.any() else -1
    # inference tries every text column at every timestamp rung: most fail at their first value
    if first >= 0 and n > 1 and timestamp_array(array.slice(first, 1), target, parsers)[1] >= 0:
        return pa.nulls(n, target), first
    zoned = target.tz is not None
    for parser in parsers:
        if not pending.any():
            break
        if is_iso8601(parser):
            read, parsed, with_zone = _iso_timestamps(array, target.unit)
            accepted = pending & read & (with_zone == zoned)
        else:
            if _has_zone(parser) != zoned:
                continue
            out = pc.strptime(array, format=parser, unit=target.unit, error_is_null=True)
            accepted = pending & out.is_valid().to_numpy(zero_copy_only=False)
            parsed = out.cast(pa.int64()).fill_null(0).to_numpy()
        values[accepted] = parsed[accepted]
        pending &= ~accepted
    bad_row = int(np.argmax(pending)) if pending.any() else -1
    null_count = array.null_count
    bitmap = array.is_valid().buffers()[1] if null_count else None
    return pa.Array.from_buffers(target, n, [bitmap, pa.py_buffer(values)], null_count=null_count), bad_row


def _checked_timestamps(array: pa.Array, target: pa.TimestampType, parsers: Sequence[Any], plan: PlannedColumn
                        ) -> pa.Array:
    """:func:`timestamp_array`, or pyarrow's error for the first value no parser reads."""
    parsed, bad_row = timestamp_array(array, target, parsers)
    if bad_row >= 0:
        raise _error(plan, f"CSV conversion error to {target}: invalid value '{array[bad_row].as_py()}'")
    return parsed


def first_timestamp_rung(column: pa.ChunkedArray, parsers: Sequence[Any], text_nulls: Optional[Sequence[str]] = None
                         ) -> Optional[tuple[int, pa.ChunkedArray]]:
    """``(rung, timestamps)``: text ``column`` (its ``text_nulls`` made null) at the first
    timestamp rung of the inference ladder whose parsers read every value, chunk for
    chunk; None where none does.

    >>> first_timestamp_rung(pa.chunked_array([["02/01/2020"], []]), ["%d/%m/%Y"])[1].num_chunks
    2
    """
    for rung in TIMESTAMP_RUNGS:
        target, chunks = INFERENCE_LADDER[rung], []
        for chunk in column.chunks:
            parsed, bad_row = timestamp_array(with_nulls(chunk, text_nulls), target, parsers)
            if bad_row >= 0:
                break  # this rung fails: the other chunks need not be parsed
            chunks.append(parsed)
        else:
            return rung, pa.chunked_array(chunks, type=target)
    return None


def _has_zone(fmt: str) -> bool:
    """Whether a strptime format reads a zone offset (``%z``), as pyarrow decides it."""
    at = 0
    while at < len(fmt):
        if fmt[at] == "%":
            if fmt[at + 1: at + 2] == "z":
                return True
            at += 1
        at += 1
    return False


def float_like_format(fmt: str) -> bool:
    """Whether a strptime format can read a value that also reads as a float
    (``"%H.%M"``: ``"10.30"``): its literal characters are all ones a float has.

    >>> float_like_format("%H.%M"), float_like_format("%d/%m/%Y"), float_like_format("%d.%m.%Y")
    (True, False, True)
    """
    literal = re.sub(r"%.", "", fmt)
    return all(c in "0123456789.+-eE" for c in literal)


def _iso_timestamps(array: pa.Array, unit: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(read, values, with_zone)`` per value of text ``array`` by the kernels'
    ISO 8601 parser (pyarrow's), at ``unit``."""
    n = len(array)
    read, values, with_zone = np.zeros(n, dtype=np.bool_), np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.bool_)
    if not n:
        return read, values, with_zone
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int32)[array.offset: array.offset + n + 1].astype(np.int64)
    data_buffer = array.buffers()[2]
    data = np.frombuffer(data_buffer, dtype=np.uint8).copy() if data_buffer is not None else np.zeros(1, np.uint8)
    digits, per_second = _UNITS[unit]
    _iso_kernel(data, offsets, np.int64(digits), np.int64(per_second), read, values, with_zone)
    return read, values, with_zone


@njit(nogil=True, cache=True)
def _iso_kernel(data, offsets, max_digits, per_second, read, values, with_zone):
    for i in range(offsets.shape[0] - 1):
        ok, secs, nanos, ndigits, has_zone = parse_timestamp(data, offsets[i], offsets[i + 1])
        if ok and ndigits <= max_digits:
            ok, value = to_unit(secs, nanos, per_second)
            values[i] = value
            read[i] = ok
            with_zone[i] = has_zone
