"""What one read parses, settled before the first span: source, options, columns, dialect, value rules.

Every executor is started with the same :class:`ReadPlan`, so the host, the
device and any later executor parse a span against identical columns, types
and spellings.

>>> import pyarrow as pa
>>> from arrow_bridge.options import CsvOptions
>>> from arrow_bridge.read_plan import plan_columns
>>> [(c.name, c.index, c.type) for c in plan_columns(["a", "b"], CsvOptions(column_types={"b": pa.int32()}))]
[('a', 0, None), ('b', 1, DataType(int32))]
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Optional, Sequence

import pyarrow as pa

from arrow_bridge.column_finish import (ColumnFinish, ColumnNulls, Converted, NumericNulls, plan_column,
                                       with_numeric_nulls)
from arrow_bridge.converters import Converter, ValueRules, converter_for
from arrow_bridge.dialect import Dialect
from arrow_bridge.errors import MissingColumnsError
from arrow_bridge.inference import InferringConverter
from arrow_bridge.kernels.tokenizer import BLANK_WHITESPACE_LINES, CUT_LONG_ROWS, PAD_SHORT_ROWS, SKIP_BAD_ROWS
from arrow_bridge.options import CsvOptions
from arrow_bridge.source import ByteSource


def row_rules(opts: CsvOptions) -> int:
    """What the tokenizer does with a record of another field count under
    ``opts``: :data:`~arrow_bridge.kernels.tokenizer.SKIP_BAD_ROWS`,
    :data:`~arrow_bridge.kernels.tokenizer.PAD_SHORT_ROWS`,
    :data:`~arrow_bridge.kernels.tokenizer.BLANK_WHITESPACE_LINES` and
    :data:`~arrow_bridge.kernels.tokenizer.CUT_LONG_ROWS` bits. pandas
    reads a short record as if its missing fields were empty, and skips a line
    of spaces and tabs as it skips an empty line, with one column too (where
    the fused kernel leaves that line to the tokenizer).
    Given ``usecols``, pandas' tokenizer stops counting fields: a longer record
    is read up to the header's count, not a bad line.

    >>> row_rules(CsvOptions()), row_rules(CsvOptions(semantics="pandas", on_bad_lines="skip"))
    (0, 7)
    >>> row_rules(CsvOptions(semantics="pandas"))
    6
    >>> row_rules(CsvOptions(semantics="pandas", include_columns=("a",), columns_keyword="usecols"))
    14
    """
    pandas = opts.semantics == "pandas"
    return (SKIP_BAD_ROWS if opts.on_bad_lines != "error" else 0) | (PAD_SHORT_ROWS if pandas else 0) | \
        (BLANK_WHITESPACE_LINES if pandas and opts.ignore_empty_lines else 0) | \
        (CUT_LONG_ROWS if pandas and opts.columns_by_usecols else 0)


@dataclass(frozen=True)
class ColumnPlan:
    """One output column: its position in the file and how it is converted."""

    name: str
    index: int  # file column, or -1 when missing (include_missing_columns)
    type: Optional[pa.DataType]  # the type the kernels produce, or None to infer
    finish: Optional[ColumnFinish] = None  # made after the parse (a type or option the kernels lack)
    hidden: bool = False  # read for a span stage only (filters=, an aggregate query): dropped from the Table
    first_block: bool = False  # ``type`` is what a stream's first block inferred (first_block.fix_types)

    @property
    def inferred(self) -> bool:
        """Whether the column's type is inferred from the file (it is in the file, with no type given)."""
        return self.type is None and self.index >= 0

    @property
    def typed_by_values(self) -> bool:
        """Whether the values decide its type: inferred, from a stream's first block, or by its finish."""
        return self.inferred or self.first_block or (self.finish is not None and self.finish.decides_type)

    @property
    def converted_as_inferred(self) -> bool:
        """Whether the kernels convert it as inference does (:func:`conversion_spec`): inferred,
        or typed by a stream's first block. Not a float or uint64 typed so: pandas' float or
        uint64 try was reached in the first block, and takes a later integer past int64, one
        with a blank after its digits too (:mod:`arrow_bridge.python_ints`)."""
        return self.inferred or (self.first_block and not pa.types.is_floating(self.type)
                                 and self.type != pa.uint64())

    @property
    def raw_text(self) -> bool:
        """Whether the kernels hand over its text as it is, no value made null: a column with null
        spellings of its own (pandas' ``na_values`` dict), which its finish applies."""
        return isinstance(self._own_finish, ColumnNulls)

    @property
    def _own_finish(self) -> Optional[ColumnFinish]:
        """Its finish, but for pandas' numeric null rule that may follow it."""
        return self.finish.then if isinstance(self.finish, NumericNulls) else self.finish

    def kernel_rules(self, rules: ValueRules) -> ValueRules:
        """The value rules the kernels convert this column with: the read's ``rules``; for raw
        text, no null spelling; for text read for another type (a decimal, a strptime
        timestamp), that type's: a null spelling is null, a quoted one as
        ``quoted_strings_can_be_null`` says, whatever ``strings_can_be_null`` says.

        >>> from arrow_bridge.options import CsvOptions
        >>> rules = ValueRules.from_options(CsvOptions(strings_can_be_null=True))
        >>> ColumnPlan("a", 0, pa.binary()).kernel_rules(rules) is rules
        True
        """
        finish = self._own_finish
        if isinstance(finish, ColumnNulls):  # raw text
            return dataclasses.replace(rules, strings_can_be_null=False)
        if isinstance(finish, Converted) and finish.reads_text and not rules.strings_can_be_null:
            return dataclasses.replace(rules, strings_can_be_null=True)
        return rules


def plan_columns(names: Sequence[str], opts: CsvOptions, rules: Optional[ValueRules] = None) -> list[ColumnPlan]:
    """The output columns of a file with header ``names`` (``include_columns``
    order, explicit types from ``column_types``/``default_type``; a type or
    option the kernels lack as a :mod:`~arrow_bridge.column_finish` finish)."""
    wanted = opts.include_columns if opts.include_columns is not None else range(len(names))
    if opts.include_columns is not None and opts.semantics == "pandas" and opts.columns_keyword == "usecols":
        wanted = _in_file_order(wanted, names)
    shown = len(wanted)
    if opts.include_columns is not None:  # the columns only the span stages read, hidden
        chosen = {key if (position := _position(key, names)) is None else names[position] for key in wanted}
        wanted = [*wanted, *(name for name in stage_columns(opts, names) if name not in chosen)]
    missing = [key for key in wanted if _position(key, names) is None]
    if missing and not opts.include_missing_columns:
        raise MissingColumnsError(missing, opts.columns_keyword)
    plans = []
    for key in wanted:
        position = _position(key, names)
        if position is not None:
            index, name = position, names[position]
        elif isinstance(key, int):
            raise IndexError(f"usecols position {key} is out of range for {len(names)} columns")
        else:  # include_missing_columns: a column of nulls
            index, name = -1, key
        requested, own_nulls = _requested_type(opts, name, index), _own_nulls(opts, name, index)
        if name in (opts.chunk_typed_columns or ()) and requested is None and index >= 0 and own_nulls is None:
            own_nulls = opts.null_values  # read as text: a chunk's finish infers its type (ColumnNulls)
        if rules is None and (requested is not None or own_nulls is not None):
            rules = ValueRules.from_options(opts)  # only then: an inferred column's plan needs none
        kernel_type, finish = plan_column(requested, index >= 0, opts, rules, own_nulls)
        if index >= 0:
            finish = with_numeric_nulls(finish, opts, own_nulls, requested)
        plans.append(ColumnPlan(name, index, kernel_type, finish, hidden=len(plans) >= shown))
    return plans


def _position(key: str | int, names: Sequence[str]) -> Optional[int]:
    """The file position of a column given by name or (pandas) position; None if the file lacks it."""
    if isinstance(key, int):
        return key % len(names) if -len(names) <= key < len(names) else None
    return names.index(key) if key in names else None


def _in_file_order(keys: Sequence[str | int], names: Sequence[str]) -> list[str | int]:
    """pandas' ``usecols``: a set of columns, given in the file's order, each once
    (a key that is not a column comes after them, for the error)."""
    first: dict = {}
    for key in keys:
        position = _position(key, names)
        first.setdefault(key if position is None else position, (len(names) if position is None else position, key))
    return [key for _, key in sorted(first.values(), key=lambda item: item[0])]


def stage_columns(opts: CsvOptions, names: Sequence[str]) -> list[str]:
    """The file's columns the span stages (``filters=``, an aggregate query) read."""
    used: list[str] = []
    for stage in (opts.row_filter, opts.grouped_query):
        if stage is not None:
            used += stage.columns_of(_with_missing(opts, names))
    return list(dict.fromkeys(used))


def _with_missing(opts: CsvOptions, names: Sequence[str]) -> list[str]:
    """The file's columns and those ``include_missing_columns`` adds (columns of nulls, which
    a filter may read as pyarrow's does)."""
    if not opts.include_missing_columns or opts.include_columns is None:
        return list(names)
    return [*names, *(key for key in opts.include_columns if isinstance(key, str) and key not in names)]


def _requested_type(opts: CsvOptions, name: str, index: int) -> Optional[pa.DataType]:
    """The type asked for a column: by name, by file position (pandas' ``dtype={1: ...}``),
    else ``default_type`` (which a missing column does not take, as in pyarrow)."""
    types = opts.column_types
    if name in types:
        return types[name]
    if index >= 0 and index in types:
        return types[index]
    return opts.default_type if index >= 0 else None


def _own_nulls(opts: CsvOptions, name: str, index: int) -> Optional[tuple[str, ...]]:
    """A column's own null spellings (pandas' ``na_values={name or position: ...}``), or None."""
    spellings = opts.column_null_values
    if not spellings or index < 0:
        return None
    if spellings.get(name) == () or spellings.get(index) == ():  # raw text (a converter's): none, by either key
        return ()
    own = [*spellings.get(name, ()), *spellings.get(index, ())]
    return tuple(dict.fromkeys(own)) if name in spellings or index in spellings else None


@dataclass
class ReadPlan:
    """One read's fixed parameters: built once from the header, shared by every executor."""

    source: ByteSource
    opts: CsvOptions
    names: list[str]  # the file's columns
    columns: list[ColumnPlan]  # the output columns
    rules: ValueRules
    dialect: Dialect
    converters: list[Optional[Converter]] = field(default_factory=list)  # per output column (explicit types)
    inferring: Optional[InferringConverter] = None
    filter_columns: tuple[int, ...] = ()  # the output columns (hidden ones too) the row filter reads

    @classmethod
    def build(cls, source: ByteSource, opts: CsvOptions, names: Sequence[str]) -> "ReadPlan":
        """The plan for reading ``source`` whose header gave ``names``."""
        rules = ValueRules.from_options(opts)
        columns = plan_columns(names, opts, rules)
        used = set(opts.row_filter.columns_of(_with_missing(opts, names))) if opts.row_filter is not None else set()
        return cls(source, opts, list(names), columns, rules, Dialect.from_options(opts),
                   [converter_for(c.type, c.kernel_rules(rules)) if c.type is not None and c.index >= 0 else None
                    for c in columns],
                   InferringConverter(rules), tuple(j for j, c in enumerate(columns) if c.name in used))

    @property
    def stages_spans(self) -> bool:
        """Whether the span stages (row filter, partial aggregate) run on each checked span;
        else on the finished Table (a column finish or written-out empty lines rewrite
        spans' columns after the check)."""
        return (self.opts.row_filter is not None or self.opts.grouped_query is not None) and \
            self.opts.ignore_empty_lines and all(c.finish is None for c in self.columns)

    @property
    def ncols(self) -> int:
        """Fields per record in the file."""
        return len(self.names)

    @property
    def row_rules(self) -> int:
        """What the tokenizer does with a record of another field count (:func:`row_rules`)."""
        return row_rules(self.opts)

    @property
    def types_known(self) -> bool:
        """Whether every output column has an explicit type (nothing to infer, here or
        in a finish that decides its column's type from the values)."""
        return all(c.type is not None and not (c.finish is not None and c.finish.decides_type)
                   for c in self.columns)

    def planned_columns(self, arrays: dict[int, pa.Array]) -> list[Optional[pa.Array]]:
        """Each output column's array from ``{file column: array}`` (None for a
        column missing from the file)."""
        return [arrays[c.index] if c.index >= 0 else None for c in self.columns]
