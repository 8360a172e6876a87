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

from dataclasses import dataclass, field
from typing import Optional, Sequence

import pyarrow as pa

from arrow_bridge.converters import Converter, ValueRules, converter_for
from arrow_bridge.dialect import Dialect
from arrow_bridge.errors import MissingColumnsError
from arrow_bridge.inference import InferringConverter
from arrow_bridge.options import CsvOptions
from arrow_bridge.source import ByteSource


@dataclass(frozen=True)
class ColumnPlan:
    """One output column: its position in the file and how it is converted."""

    name: str
    index: int  # file column, or -1 when missing (include_missing_columns)
    type: Optional[pa.DataType]  # explicit type, or None to infer

    @property
    def inferred(self) -> bool:
        """Whether the column's type is inferred from the file (it is in the file, with no type given)."""
        return self.type is None and self.index >= 0


def plan_columns(names: Sequence[str], opts: CsvOptions) -> list[ColumnPlan]:
    """The output columns of a file with header ``names`` (``include_columns``
    order, explicit types from ``column_types``/``default_type``)."""
    wanted = opts.include_columns if opts.include_columns is not None else range(len(names))
    missing = [key for key in wanted if isinstance(key, str) and key not in names]
    if missing and not opts.include_missing_columns:
        raise MissingColumnsError(missing, opts.columns_keyword)
    plans = []
    for key in wanted:
        if isinstance(key, int):
            if not -len(names) <= key < len(names):
                raise IndexError(f"usecols position {key} is out of range for {len(names)} columns")
            index, name = key % len(names), names[key]
        elif key in names:
            index, name = list(names).index(key), key
        else:  # include_missing_columns: a column of nulls
            index, name = -1, key
        plans.append(ColumnPlan(name, index, opts.column_types.get(name, opts.default_type)))
    return plans


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

    @classmethod
    def build(cls, source: ByteSource, opts: CsvOptions, names: Sequence[str]) -> "ReadPlan":
        """The plan for reading ``source`` whose header gave ``names``."""
        rules = ValueRules.from_options(opts)
        columns = plan_columns(names, opts)
        return cls(source, opts, list(names), columns, rules, Dialect.from_options(opts),
                   [converter_for(c.type, rules) if c.type is not None else None for c in columns],
                   InferringConverter(rules))

    @property
    def ncols(self) -> int:
        """Fields per record in the file."""
        return len(self.names)

    @property
    def types_known(self) -> bool:
        """Whether every output column has an explicit type (nothing to infer)."""
        return all(c.type is not None for c in self.columns)

    def planned_columns(self, arrays: dict[int, pa.Array]) -> list[Optional[pa.Array]]:
        """Each output column's array from ``{file column: array}`` (None for a
        column missing from the file)."""
        return [arrays[c.index] if c.index >= 0 else None for c in self.columns]
