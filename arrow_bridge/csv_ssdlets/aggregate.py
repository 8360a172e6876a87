"""Aggregates as an SSDlet: each packet reduced to partial states per group where it runs
(Summarizer's READ_FILT_TSK), merged on the host by ``aggregate_csv``'s own merge (FINAL_TSK).

The program groups a packet's rows by their keys (first appearance order, an open-addressed
table over the key values) and sends one row per group: the keys, and per aggregated
column its count of values, its sum as exact parts (integers as two 32-bit halves' sums;
floats as Shewchuk's non-overlapping partials, whose exact sum is the group's, plus counts
of NaN and infinities) and its minimum and maximum. :meth:`AggregateProgram.table` turns
what the host collected into :class:`~arrow_bridge.aggregates.PartialState` and merges it
as ``aggregate_csv`` merges its spans' states, so the answer is ``aggregate_csv``'s: the
same exact sums, rounded once, the same names, types and group order.
"""
from __future__ import annotations

import math
from typing import Any, Sequence, Union

import numpy as np
import pyarrow as pa

from arrow_bridge.aggregates import Aggregation, GroupedQuery, PartialState, exact_units, query_schema
from arrow_bridge.csv_ssdlets.programs import (compiled_function, compiled_once, is_string, kernel_namespace,
                                               port_names, stage_prices)
from arrow_bridge.jit import njit
from ndp_core.ssdlets import Nullable, SSDlet
from ndp_core.ssdlets.application import RunResult
from ndp_core.ssdlets.graph import Node

#: Partials one group's float sum may need in one packet (a double's exponent range over
#: its 53 bits needs about 40; more stops the run).
PARTS = 48
FLOAT_SUM = np.dtype([("parts", np.float64, (PARTS,)), ("n", np.int64), ("nan", np.int64), ("pos", np.int64),
                      ("neg", np.int64)])
INT_SUM = np.dtype([("low", np.int64), ("high", np.int64)])


class AggregateProgram(SSDlet):
    """A :func:`group_aggregate` program; :meth:`table` is the host's merge of what it sent."""

    query: GroupedQuery
    types: dict[str, pa.DataType]  # the input columns', by name
    ports: dict[str, str]  # column -> input port
    inputs_by_column: dict[str, str]

    def table(self, result: RunResult, node: Union[Node, str]) -> pa.Table:
        """The answer (``aggregate_csv``'s) from the partial states ``node`` sent to the host."""
        name = node if isinstance(node, str) else node.name

        def sent(port: str) -> Any:
            return result[f"{name}.{port}"]

        columns = dict.fromkeys(a.column for a in self.query.aggregations)
        ngroups = len(sent(f"count_{self.ports[next(iter(columns))]}"))
        keys = list(zip(*(sent(f"key_{self.ports[k]}").to_pylist() for k in self.query.group_by))) \
            if self.query.group_by else [()] * ngroups
        states = {column: self._column_state(column, sent, ngroups) for column in columns}
        return self.query.merge([PartialState(keys, states)], query_schema(self.query, self.types))

    def _column_state(self, column: str, sent: Any, ngroups: int) -> dict[str, Any]:
        port, funcs = self.ports[column], {a.func for a in self.query.aggregations if a.column == column}
        state: dict[str, Any] = {"count": np.asarray(sent(f"count_{port}").to_numpy(zero_copy_only=False))}
        if funcs & {"sum", "mean"}:
            if pa.types.is_integer(self.types[column]):
                halves = sent(f"isum_{port}")
                state["sum"] = [int(lo) + (int(hi) << 32) for lo, hi in zip(halves["low"], halves["high"])]
            else:
                sums = sent(f"fsum_{port}")
                scaled = [sum(map(exact_units, parts[:n].tolist())) for parts, n in zip(sums["parts"], sums["n"])]
                state["sum"] = (scaled, np.stack([sums["nan"], sums["pos"], sums["neg"]], axis=1).astype(np.int64))
        for func in funcs & {"min", "max"}:
            state[func] = (np.arange(ngroups), sent(f"{func}_{port}"))
        return state


def group_aggregate(aggregations: Sequence[tuple[str, str]], schema: pa.Schema, *, group_by: Sequence[str] = (),
                    device: Any = None) -> AggregateProgram:
    """``aggregate_csv``'s aggregations (``sum``, ``count``, ``min``, ``max``, ``mean``
    of columns, grouped by ``group_by``) as an SSDlet over the columns of ``schema``
    (one ``Nullable`` input per column, named as :func:`csv_parser` names its outputs,
    so :func:`connect_columns` wires a parse or a :func:`row_filter` to it).

    Keys may be integer, date, timestamp or string columns; sums and means take
    integer (not uint64) and float columns, minima and maxima also dates and
    timestamps, counts any column. Derived columns are not taken: compute one with a
    program of your own. ``device``'s profile prices its ``aggregate_updates``.

    >>> import pyarrow as pa
    >>> group_aggregate([("x", "sum"), ("x", "max")], pa.schema({"k": pa.string(), "x": pa.float64()}),
    ...                 group_by=["k"]).query.group_by
    ['k']
    """
    query = GroupedQuery([Aggregation.parse(item) for item in aggregations], list(group_by))
    ports = dict(zip(schema.names, port_names(schema.names)))
    for name in query.inputs:
        _check_use(name, query, schema)
    types = {name: schema.field(name).type for name in query.inputs}
    key = ("aggregate", tuple((a.column, a.func) for a in query.aggregations), tuple(query.group_by), schema)
    program = compiled_once(key, lambda: _aggregate_program(query, schema, ports), stage_prices(device))
    program.query, program.types, program.ports, program.inputs_by_column = query, types, ports, ports
    return program


def _check_use(name: str, query: GroupedQuery, schema: pa.Schema) -> None:
    if name not in schema.names:
        raise KeyError(f"group_aggregate: no column {name!r} in {schema.names}")
    t = schema.field(name).type
    funcs = {a.func for a in query.aggregations if a.column == name}
    numeric = (pa.types.is_integer(t) and t != pa.uint64()) or pa.types.is_floating(t)
    ordered = numeric or pa.types.is_temporal(t)
    if name in query.group_by and not (pa.types.is_integer(t) or pa.types.is_temporal(t) or is_string(t)):
        raise TypeError(f"group_aggregate: key {name!r} is {t}; keys are integers, dates, timestamps or strings")
    if funcs & {"sum", "mean"} and not numeric:
        raise TypeError(f"group_aggregate: cannot sum {name!r} ({t}); sums take integers (not uint64) and floats")
    if funcs & {"min", "max"} and not ordered:
        raise TypeError(f"group_aggregate: min/max of {name!r} ({t}) are not built; they take numbers and dates")


def _aggregate_program(query: GroupedQuery, schema: pa.Schema, ports: dict[str, str]) -> AggregateProgram:
    namespace = kernel_namespace(None, None)
    namespace.update(mix=mix, mix_bytes=mix_bytes, same_bytes=same_bytes, add_exactly=add_exactly,
                     UPDATES=query.updates_per_row)
    outputs: dict[str, Any] = {}
    keys = [_key_code(ports[k], schema.field(k).type, outputs) for k in query.group_by]
    updates = [_update_code(column, ports[column], schema.field(column).type, query, outputs)
               for column in dict.fromkeys(a.column for a in query.aggregations)]
    first = schema.field(0)
    rows = f"p.{ports[first.name]}.offsets.size - 1" if is_string(first.type) else f"p.{ports[first.name]}.valid.size"
    source_text = _TEMPLATE.format(
        rows=rows, hash="".join(k[0] for k in keys), same=" and ".join(k[1] for k in keys) or "True",
        keys="".join(k[2] for k in keys), updates="".join(updates), counts=", ".join("groups" for _ in outputs))
    func = compiled_function("group_aggregate", source_text, namespace)
    return AggregateProgram(func, inputs={ports[f.name]: Nullable(f.type) for f in schema}, outputs=outputs,
                            args={}, state={}, work=stage_prices(None, ("aggregate_updates",)), budget=1 << 40)


def _key_code(port: str, type_: pa.DataType, outputs: dict[str, Any]) -> tuple[str, str, str]:
    """(hash line, equality with the group's first row ``j``, copy to the group's key) of one key column."""
    outputs[f"key_{port}"] = Nullable(type_)
    out, pad = f"p.key_{port}", " " * 8
    if is_string(type_):
        bounds = f"p.{port}.data, p.{port}.offsets[i], p.{port}.offsets[i + 1]"
        return (f"{pad}h = mix_bytes(h, p.{port}.valid[i], {bounds})\n",
                f"(p.{port}.valid[i] == p.{port}.valid[j] and same_bytes({bounds}, p.{port}.offsets[j], "
                f"p.{port}.offsets[j + 1]))",
                f"{pad}a, b, at = p.{port}.offsets[j], p.{port}.offsets[j + 1], {out}.offsets[g]\n"
                f"{pad}{out}.data[at:at + b - a] = p.{port}.data[a:b]\n"
                f"{pad}{out}.offsets[g + 1] = at + b - a\n{pad}{out}.valid[g] = p.{port}.valid[j]\n")
    return (f"{pad}h = mix(h, p.{port}.valid[i], np.int64(p.{port}.values[i]))\n",
            f"(p.{port}.valid[i] == p.{port}.valid[j] and p.{port}.values[i] == p.{port}.values[j])",
            f"{pad}{out}.values[g] = p.{port}.values[j]\n{pad}{out}.valid[g] = p.{port}.valid[j]\n")


def _update_code(column: str, port: str, type_: pa.DataType, query: GroupedQuery, outputs: dict[str, Any]) -> str:
    """The lines that add row ``i`` to group ``g``'s states of one aggregated column."""
    funcs = {a.func for a in query.aggregations if a.column == column}
    outputs[f"count_{port}"] = pa.int64()
    pad = " " * 12
    lines = [f"        if p.{port}.valid[i] == 1:\n", f"{pad}p.count_{port}[g] += 1\n"]
    if funcs & {"sum", "mean"} and pa.types.is_integer(type_):
        outputs[f"isum_{port}"] = INT_SUM
        lines += [f"{pad}v = np.int64(p.{port}.values[i])\n", f"{pad}r = p.isum_{port}[g]\n",
                  f'{pad}r["low"] += v & 0xFFFFFFFF\n', f'{pad}r["high"] += v >> 32\n']
    elif funcs & {"sum", "mean"}:
        outputs[f"fsum_{port}"] = FLOAT_SUM
        lines.append(f"{pad}add_exactly(p.fsum_{port}[g:g + 1], np.float64(p.{port}.values[i]))\n")
    nan_aware = pa.types.is_floating(type_)
    for func, order in (("min", "<"), ("max", ">")):
        if func in funcs:
            outputs[f"{func}_{port}"] = Nullable(type_)
            out = f"p.{func}_{port}"
            # A NaN is kept only until a number comes (pyarrow's min and max skip NaN); ties keep the first.
            takes = f"{out}.valid[g] == 0 or p.{port}.values[i] {order} {out}.values[g]" + \
                (f" or ({out}.values[g] != {out}.values[g] and p.{port}.values[i] == p.{port}.values[i])"
                 if nan_aware else "")
            lines += [f"{pad}if {takes}:\n", f"{pad}    {out}.values[g] = p.{port}.values[i]\n",
                      f"{pad}    {out}.valid[g] = 1\n"]
    return "".join(lines)


_TEMPLATE = '''
def group_aggregate(p):
    n = {rows}
    size = 2
    while size < 2 * n:
        size *= 2
    slots = np.full(size, -1, np.int64)
    first = np.empty(max(n, 1), np.int64)
    gid = np.empty(max(n, 1), np.int64)
    groups = 0
    for i in range(n):
        h = np.uint64(14695981039346656037)
{hash}        s = np.int64(h & np.uint64(size - 1))
        while True:
            g = slots[s]
            if g < 0:
                g = groups
                slots[s] = g
                first[g] = i
                groups += 1
                break
            j = first[g]
            if {same}:
                break
            s = (s + 1) & (size - 1)
        gid[i] = g
    for g in range(groups):
        j = first[g]
{keys}    for i in range(n):
        g = gid[i]
{updates}    p.aggregate_updates[0] += n * UPDATES
    return ({counts})
'''


@njit(nogil=True, cache=True)
def mix(h, valid, value):
    """FNV-1a steps over a key value and its validity."""
    h = (h ^ np.uint64(valid)) * np.uint64(1099511628211)
    return (h ^ np.uint64(value)) * np.uint64(1099511628211)


@njit(nogil=True, cache=True)
def mix_bytes(h, valid, data, a, b):
    h = (h ^ np.uint64(valid)) * np.uint64(1099511628211)
    for k in range(a, b):
        h = (h ^ np.uint64(data[k])) * np.uint64(1099511628211)
    return (h ^ np.uint64(b - a)) * np.uint64(1099511628211)


@njit(nogil=True, cache=True)
def same_bytes(data, a, b, c, d):
    if b - a != d - c:
        return False
    for k in range(b - a):
        if data[a + k] != data[c + k]:
            return False
    return True


@njit(nogil=True, cache=True)
def add_exactly(state, x):
    """Adds ``x`` to a :data:`FLOAT_SUM` record (``state[0]``): its partials stay
    non-overlapping and sum exactly to the values added (Shewchuk's grow-expansion,
    as Python's ``math.fsum``); NaN and infinities are counted apart."""
    r = state[0]
    if x != x:
        r["nan"] += 1
        return
    if x == np.inf:
        r["pos"] += 1
        return
    if x == -np.inf:
        r["neg"] += 1
        return
    parts = r["parts"]
    kept = 0
    for k in range(r["n"]):
        y = parts[k]
        if abs(x) < abs(y):
            x, y = y, x
        high = x + y
        low = y - (high - x)
        if low != 0.0:
            parts[kept] = low
            kept += 1
        x = high
    if not math.isfinite(x):
        raise OverflowError("a float sum's partial overflowed")
    if kept >= parts.size:
        raise IndexError("more partials than PARTS")
    parts[kept] = x
    r["n"] = kept + 1
