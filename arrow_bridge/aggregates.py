"""Aggregate pushdown: per-span partial states, merged in file order (Summarizer's FINAL_TSK).

``aggregate_csv`` answers ``read_csv(...).filter(...).group_by(keys).aggregate(...)``
without building the Table: each checked span (filtered first) is reduced to
a small partial state per group where the span ran (the host or the device,
which then sends the state instead of columns), and the driver merges the
states. Groups come out in the order they first appear in the file (as
pyarrow's ``group_by(..., use_threads=False)``); names and types are pyarrow's.

Sums are exact: integers in Python integers, floats as the correctly rounded
value of their exact sum (each double split into an integer mantissa and an
exponent, mantissas summed exactly per exponent). The answer therefore does
not depend on block size, split, threads or the order spans finish, which a
running float sum would; it can differ from pyarrow's own float sum in the
last bits (pyarrow adds in its own order). A NaN makes the sum NaN, +inf and
-inf make it NaN, one infinity makes it that infinity, as IEEE addition does.

>>> import io
>>> from arrow_bridge import aggregate_csv
>>> data = io.BytesIO(b"k,x\\na,1\\nb,2\\na,3\\n")
>>> aggregate_csv(data, [("x", "sum"), ("x", "mean")], group_by=["k"]).to_pydict()
{'k': ['a', 'b'], 'x_sum': [4, 2], 'x_mean': [2.0, 2.0]}
"""
from __future__ import annotations

import decimal
import struct
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from arrow_bridge.filters import referenced_columns
from arrow_bridge.kernels.group_sums import (EXPONENT_BIAS, LOW_BITS, exponent_range, first_appearance_ids,
                                              float_sum_bins, int_sum_halves, short_string_codes)

FUNCTIONS = ("sum", "count", "min", "max", "mean")
#: The most memory one pass of exact float sums takes for its bins.
_FLOAT_BINS_BYTES = 32 << 20
_SCALE = 1126  # 2**-1126 divides every double's mantissa unit (the subnormals': 2**-1074)


@dataclass(frozen=True)
class Aggregation:
    """What to compute: ``func`` of ``column`` (named ``<column>_<func>``, as pyarrow names it)."""

    column: str
    func: str

    @classmethod
    def parse(cls, item: Any) -> "Aggregation":
        """``(column, func)`` as pyarrow's ``TableGroupBy.aggregate`` takes it.

        >>> Aggregation.parse(("x", "median"))
        Traceback (most recent call last):
        ...
        ValueError: aggregations: unknown function 'median' in ('x', 'median'); use one of sum, count, min, max, mean
        """
        if not isinstance(item, (tuple, list)) or len(item) != 2 or not all(isinstance(p, str) for p in item):
            raise ValueError(f"aggregations: each item is (column, function), got {item!r}")
        if item[1] not in FUNCTIONS:
            raise ValueError(f"aggregations: unknown function {item[1]!r} in {tuple(item)!r}; use one of "
                             f"{', '.join(FUNCTIONS)}")
        return cls(item[0], item[1])


@dataclass
class GroupedQuery:
    """One aggregate read: keys, aggregations and derived (computed) columns."""

    aggregations: list[Aggregation]
    group_by: list[str]
    derived: dict[str, pc.Expression] = field(default_factory=dict)

    @property
    def inputs(self) -> list[str]:
        """The columns a span must provide (keys, aggregated columns), derived ones included."""
        return list(dict.fromkeys([*self.group_by, *(a.column for a in self.aggregations)]))

    @property
    def updates_per_row(self) -> int:
        """State updates one kept row costs (the ``aggregate_updates`` work
        counter): a value per derived column computed and per group key, and
        per aggregated column its count, plus its sum (for ``sum``/``mean``),
        minimum and maximum as asked (:meth:`partial` keeps one state per
        column whatever functions share it).

        >>> GroupedQuery([Aggregation("x", "sum"), Aggregation("x", "mean"), Aggregation("y", "max")], ["k"],
        ...              {"y": pc.field("x") * 2}).updates_per_row
        6
        """
        funcs: dict[str, set[str]] = {}
        for a in self.aggregations:
            funcs.setdefault(a.column, set()).add("sum" if a.func == "mean" else a.func)
        states = sum(1 + len(f & {"sum", "min", "max"}) for f in funcs.values())
        return states + len(self.group_by) + sum(name in self.inputs for name in self.derived)

    def columns_of(self, names: Sequence[str]) -> tuple[str, ...]:
        """The columns of a file with header ``names`` the query reads (a derived
        column's: those its expression references, :func:`~arrow_bridge.filters.referenced_columns`);
        a KeyError names those it needs that neither the file nor ``derived`` has.

        >>> q = GroupedQuery([Aggregation("rev", "sum")], ["k"], {"rev": pc.field("p") * pc.field("d")})
        >>> q.columns_of(["k", "p", "d", "other"])
        ('k', 'p', 'd')
        """
        missing = [name for name in self.inputs if name not in names and name not in self.derived]
        if missing:
            raise KeyError(f"aggregate_csv: column(s) {missing} are neither in the file ({list(names)}) nor derived")
        derived = {name for expression in self.derived.values() for name in referenced_columns(expression, names)}
        return tuple(name for name in dict.fromkeys(names) if name in self.inputs or name in derived)

    def partial(self, table: pa.Table) -> "PartialState":
        """The partial state of one span's (filtered) rows: a span's READ_FILT_TSK answer."""
        table = _with_derived(table, self.derived, self.inputs)
        groups, keys = _group_ids(table, self.group_by)
        state = PartialState(keys, {})
        rows_per_group = np.bincount(groups, minlength=len(keys))
        for column in dict.fromkeys(a.column for a in self.aggregations):
            funcs = {a.func for a in self.aggregations if a.column == column}
            state.columns[column] = _column_state(table.column(column), groups, len(keys), funcs, rows_per_group)
        return state

    def merge(self, partials: Sequence["PartialState"], schema: pa.Schema) -> pa.Table:
        """The answer from every span's state, in file order (FINAL_TSK); ``schema`` is pyarrow's."""
        index: dict[tuple, int] = {}
        keys: list[tuple] = []
        placed = []
        for state in partials:
            ids = np.empty(len(state.keys), dtype=np.int64)
            for i, key in enumerate(state.keys):
                ids[i] = index.setdefault(tuple(map(_key_identity, key)), len(keys))
                if ids[i] == len(keys):
                    keys.append(key)
            placed.append(ids)
        if not self.group_by and not keys:  # no rows at all: one row of empty aggregates, as pyarrow
            keys, placed = [()], [np.zeros(0, np.int64) for _ in partials]
        arrays = [pa.array([key[j] for key in keys], type=schema.field(j).type) for j in range(len(self.group_by))]
        for position, a in enumerate(self.aggregations, start=len(self.group_by)):
            target = schema.field(position).type  # by position: pyarrow answers a repeated (column, func) twice
            states = [(ids, state.columns[a.column]) for ids, state in zip(placed, partials)]
            try:
                arrays.append(_final(a.func, states, len(keys), target))
            except OverflowError:  # pyarrow's own sum would wrap around silently
                raise OverflowError(f"aggregate_csv: {a.column}_{a.func} does not fit its type {target}") from None
        return pa.Table.from_arrays(arrays, schema=schema)


def _key_identity(value: Any) -> Any:
    """A group key value as pyarrow's hash grouping tells keys apart, for a Python
    dict: a float by its bits (each span's NaN is a float object of its own, and
    NaN != NaN; -0.0 == 0.0 in Python; pyarrow keeps -NaN, the 0/0 of a derived
    column, apart from a parsed NaN).

    >>> _key_identity(float("nan")) == _key_identity(float("nan")), _key_identity(-0.0) == _key_identity(0.0)
    (True, False)
    """
    return ("float", struct.pack("<d", value)) if isinstance(value, float) else value


@dataclass
class PartialState:
    """One span's groups (key tuples, first-appearance order) and per-column states."""

    keys: list[tuple]
    columns: dict[str, dict[str, Any]]

    @property
    def nbytes(self) -> int:
        """About what the state takes on the link (for the timing model)."""
        return 16 * len(self.keys) * (1 + sum(len(s) for s in self.columns.values()))


def query_schema(query: GroupedQuery, types: Mapping[str, pa.DataType]) -> pa.Schema:
    """pyarrow's answer schema (names, order, types) for input columns of ``types``."""
    empty = pa.table({name: pa.array([], type=types[name]) for name in types})
    empty = _with_derived(empty, query.derived, query.inputs)
    return empty.group_by(query.group_by, use_threads=False).aggregate(
        [(a.column, a.func) for a in query.aggregations]).schema


# ---- one span ---------------------------------------------------------------------------------------
def _with_derived(table: pa.Table, derived: Mapping[str, pc.Expression], inputs: Sequence[str]) -> pa.Table:
    """``table`` with the derived columns the query uses computed (pyarrow's evaluator)."""
    wanted = [name for name in derived if name in inputs]
    if not wanted:
        return table
    import pyarrow.acero as acero

    plan = acero.Declaration.from_sequence([
        acero.Declaration("table_source", acero.TableSourceNodeOptions(table)),
        acero.Declaration("project", acero.ProjectNodeOptions(
            [pc.field(n) for n in table.column_names] + [derived[n] for n in wanted],
            table.column_names + wanted)),
    ])
    return plan.to_table(use_threads=False)


def _group_ids(table: pa.Table, group_by: Sequence[str]) -> tuple[np.ndarray, list[tuple]]:
    """Each row's group (numbered by first appearance) and each group's key tuple."""
    if not group_by:
        return np.zeros(table.num_rows, dtype=np.int64), [()] if table.num_rows else []
    codes, size = np.zeros(table.num_rows, dtype=np.int64), 1
    for name in group_by:
        column_codes, width = _key_codes(table.column(name).combine_chunks())
        codes, size = codes * width + column_codes, size * width
        if size > 4 * table.num_rows + 4096:  # keys of several wide columns: renumber them densely
            codes = np.unique(codes, return_inverse=True)[1].reshape(-1)
            size = int(codes.max()) + 1
    ids, firsts = first_appearance_ids(codes, size)
    keys = list(zip(*(table.column(name).take(pa.array(firsts)).to_pylist() for name in group_by)))
    return ids, keys


def _key_codes(array: pa.Array) -> tuple[np.ndarray, int]:
    """Each value's number among the column's distinct values (nulls one of
    them), and a bound on the numbers. Short strings (flags, codes) are read
    as words by a kernel, 4 times faster than Arrow's hashing here.

    >>> codes, width = _key_codes(pa.array(["R", "A", None, "R"]))
    >>> codes.tolist(), width
    ([0, 1, 2, 0], 4)
    """
    if pa.types.is_string(array.type) and not array.null_count:
        offsets = np.frombuffer(array.buffers()[1], np.int32, len(array) + 1, array.offset * 4)
        data = np.frombuffer(array.buffers()[2], np.uint8) if array.buffers()[2] else np.zeros(0, np.uint8)
        codes, distinct = short_string_codes(offsets, data)
        if distinct >= 0:
            return codes, distinct + 1
    encoded = pc.dictionary_encode(array, null_encoding="encode")
    return encoded.indices.to_numpy(zero_copy_only=False), len(encoded.dictionary) + 1


def _column_state(column: pa.ChunkedArray, groups: np.ndarray, ngroups: int, funcs: set[str],
                  rows_per_group: np.ndarray) -> dict[str, Any]:
    """One column's counts, sums, minima and maxima per group (``rows_per_group``:
    its counts when it has no nulls, the common case, which then copies nothing)."""
    array = column.combine_chunks()
    valid = ~np.asarray(array.is_null().to_numpy(zero_copy_only=False), dtype=bool) if array.null_count else None
    state: dict[str, Any] = {"count": rows_per_group if valid is None else
                             np.bincount(groups[valid], minlength=ngroups)}
    if funcs & {"sum", "mean"}:
        state["sum"] = _sums(array, groups, valid, ngroups)
    for func in funcs & {"min", "max"}:
        state[func] = _by_group(groups, array, func)
    return state


def _by_group(groups: np.ndarray, values: Any, func: str) -> tuple[np.ndarray, pa.Array]:
    """pyarrow's ``func`` of ``values`` per group id: ``(ids present, one value each)``."""
    out = pa.table({"g": groups, "v": values}).group_by("g", use_threads=False).aggregate([("v", func)])
    return out.column("g").to_numpy(), out.column(f"v_{func}").combine_chunks()


def _sums(array: pa.Array, groups: np.ndarray, valid: np.ndarray | None, ngroups: int) -> Any:
    """Per group: exact sums as Python ints (ints), ``(scaled ints, specials)`` (floats), or
    pyarrow's own sums (decimals, booleans: exact there); None for a column of nulls
    (nothing to add). ``valid``: the rows that are not null (None: all)."""
    t = array.type
    if pa.types.is_null(t):
        return None
    if pa.types.is_integer(t) or pa.types.is_floating(t):
        if valid is not None:  # dropped in Arrow: NumPy would turn an int column with nulls into floats
            array, groups = array.drop_null(), groups[valid]
        values = array.to_numpy(zero_copy_only=False)
        if pa.types.is_integer(t):
            return _exact_int_sums(values, groups, ngroups)
        return _exact_float_sums(values, groups, ngroups)
    if pa.types.is_decimal(t) or pa.types.is_boolean(t):
        return _by_group(groups, array, "sum")
    raise TypeError(f"aggregations: cannot sum a {t} column")


def _exact_int_sums(values: np.ndarray, groups: np.ndarray, ngroups: int) -> list[int]:
    """Exact per-group sums of integer ``values`` as Python ints.

    >>> _exact_int_sums(np.array([2**62, 2**62, -1]), np.array([0, 0, 1]), 2)
    [9223372036854775808, -1]
    """
    if values.dtype == np.uint64:  # past int64: its two 32-bit halves, each exact in int64
        high = _exact_int_sums((values >> np.uint64(32)).astype(np.int64), groups, ngroups)
        low = _exact_int_sums((values & np.uint64(0xFFFFFFFF)).astype(np.int64), groups, ngroups)
        return [(h << 32) + lo for h, lo in zip(high, low)]
    low, high = int_sum_halves(np.ascontiguousarray(values, dtype=np.int64),
                               np.ascontiguousarray(groups, dtype=np.int64), ngroups)
    return [int(lo) + (int(hi) << 32) for lo, hi in zip(low.tolist(), high.tolist())]


def _exact_float_sums(values: np.ndarray, groups: np.ndarray, ngroups: int) -> tuple[list[int], np.ndarray]:
    """Per group: the exact sum of the finite ``values`` in units of 2**-1126 (a Python int),
    and counts of ``[nan, +inf, -inf]`` (shape ``(ngroups, 3)``).

    >>> sums, specials = _exact_float_sums(np.array([0.1, 0.2, -0.3, np.nan]), np.array([0, 0, 0, 1]), 2)
    >>> sums[0] / 2**_SCALE, 0.1 + 0.2 - 0.3  # exact, then rounded once; float additions round twice
    (2.7755575615628914e-17, 5.551115123125783e-17)
    >>> sums[1], specials.tolist()
    (0, [[0, 0, 0], [1, 0, 0]])
    """
    values, groups = np.ascontiguousarray(values, dtype=np.float64), np.ascontiguousarray(groups, dtype=np.int64)
    lowest, highest = exponent_range(values)
    width = int(highest - lowest + 1)
    per_slice = max(1, _FLOAT_BINS_BYTES // (width * 16))  # many groups (an order key) take several passes
    sums, specials = [0] * ngroups, np.zeros((ngroups, 3), dtype=np.int64)
    for first in range(0, ngroups, per_slice):
        count = min(per_slice, ngroups - first)
        bins, specials[first:first + count] = float_sum_bins(values, groups, first, count, lowest, width)
        held = np.nonzero(bins[:, :, 0] | bins[:, :, 1])
        for g, k in zip(*(axis.tolist() for axis in held)):
            low, high = int(bins[g, k, 0]), int(bins[g, k, 1])
            sums[first + g] += (low + (high << LOW_BITS)) << (int(lowest) + k - EXPONENT_BIAS + _SCALE)
    return sums, specials


def exact_units(value: float) -> int:
    """A finite double as an exact count of the units exact float sums take (2**-1126).

    >>> exact_units(0.5) == 1 << (_SCALE - 1)
    True
    """
    numerator, denominator = value.as_integer_ratio()  # the denominator is a power of two <= 2**1074
    return numerator * ((1 << _SCALE) // denominator)


# ---- the merge --------------------------------------------------------------------------------------
def _final(func: str, states: Sequence[tuple[np.ndarray, dict]], ngroups: int, target: pa.DataType) -> pa.Array:
    """One aggregation's answer column from the spans' states (``(global ids, state)`` each)."""
    counts = np.zeros(ngroups, dtype=np.int64)
    for ids, state in states:
        np.add.at(counts, ids, state["count"])
    if func == "count":
        return pa.array(counts, type=target)
    if func in ("min", "max"):
        return pa.array(_merged_by_group(states, func, func, ngroups), type=target)
    sums = _merged_sums(states, ngroups)
    if func == "sum":
        return pa.array([_sum_value(s) if c else None for s, c in zip(sums, counts)], type=target)
    return pa.array([_mean(s, int(c)) if c else None for s, c in zip(sums, counts)], type=target)


def _merged_sums(states: Sequence[tuple[np.ndarray, dict]], ngroups: int) -> list:
    states = [(ids, state) for ids, state in states if state["sum"] is not None]  # spans of nulls add nothing
    first = next((state["sum"] for _, state in states), None)
    if isinstance(first, list):  # exact integers
        sums = [0] * ngroups
        for ids, state in states:
            for g, v in zip(ids.tolist(), state["sum"]):
                sums[g] += v
        return sums
    if isinstance(first, tuple) and isinstance(first[0], list):  # exact floats
        scaled, specials = [0] * ngroups, np.zeros((ngroups, 3), dtype=np.int64)
        for ids, state in states:
            for g, v in zip(ids.tolist(), state["sum"][0]):
                scaled[g] += v
            np.add.at(specials, ids, state["sum"][1])
        return [ExactFloatSum(v, sp) for v, sp in zip(scaled, specials)]
    return _merged_by_group(states, "sum", "sum", ngroups)  # pyarrow's exact sums (decimals, booleans)


def _merged_by_group(states: Sequence[tuple[np.ndarray, dict]], key: str, func: str, ngroups: int) -> list:
    """Per group of the answer: pyarrow's ``func`` over the spans' ``state[key]`` (:func:`_by_group`'s)."""
    out: list = [None] * ngroups
    if states:
        ids = np.concatenate([ids[state[key][0]] for ids, state in states])
        groups, values = _by_group(ids, pa.concat_arrays([state[key][1] for _, state in states]), func)
        for g, v in zip(groups.tolist(), values.to_pylist()):
            out[g] = v
    return out


@dataclass(frozen=True)
class ExactFloatSum:
    """A float column's exact sum: ``scaled * 2**-1126`` over the finite values, and
    counts of ``[nan, +inf, -inf]``."""

    scaled: int
    specials: np.ndarray

    def divided_by(self, count: int = 1) -> float:
        """The correctly rounded double of the sum over ``count`` (IEEE's answer
        where NaNs or infinities were summed).

        >>> ExactFloatSum(3 << 1126, np.zeros(3, np.int64)).divided_by(2)
        1.5
        """
        nan, pos, neg = (int(x) for x in self.specials)
        if nan or (pos and neg):
            return float("nan")
        if pos or neg:
            return float("inf") if pos else float("-inf")
        try:
            return self.scaled / (count << _SCALE)  # int / int: correctly rounded
        except OverflowError:
            return float("inf") if self.scaled > 0 else float("-inf")


def _sum_value(total: Any) -> Any:
    return total.divided_by() if isinstance(total, ExactFloatSum) else total


def _mean(total: Any, count: int) -> Any:
    if isinstance(total, ExactFloatSum):
        return total.divided_by(count)
    if isinstance(total, int):  # integers, and booleans' true counts
        return total / count  # int / int: correctly rounded
    if isinstance(total, decimal.Decimal):
        return _decimal_mean(total, count)
    raise TypeError(f"aggregations: cannot take the mean of {type(total).__name__} sums")


def _decimal_mean(total: decimal.Decimal, count: int) -> decimal.Decimal:
    """pyarrow's mean of a decimal column: the exact sum over the count at the
    column's scale, a half rounded away from zero (integers throughout: no
    context precision).

    >>> _decimal_mean(decimal.Decimal("3.01"), 2), _decimal_mean(decimal.Decimal("-0.05"), 2)
    (Decimal('1.51'), Decimal('-0.03'))
    """
    sign, digits, exponent = total.as_tuple()
    scaled = int("".join(map(str, digits)))
    quotient = (2 * scaled + count) // (2 * count)
    return decimal.Decimal((sign if quotient else 0, tuple(int(d) for d in str(quotient)), exponent))
