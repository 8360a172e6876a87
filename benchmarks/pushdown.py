"""TPC-H Q1, Q6 and Q14 on CSV: arrow_bridge's filter and aggregate pushdown beside DuckDB and polars.

Usage::

    python -m benchmarks.pushdown [--threads 2] [--repeat 3] [--scale-factor 1]
                                  [--queries q1,q6,q14] [--systems duckdb,polars,ndp-usecols,ndp-pushdown]

Four systems answer each query from the CSV files, with the same thread count N:

* ``duckdb``: the query's SQL over ``read_csv('<file>')``, after ``SET threads=N``;
* ``polars``: a lazy query over ``pl.scan_csv(<file>, try_parse_dates=True)``, collected;
  ``POLARS_MAX_THREADS=N`` is in the child's environment (polars reads it at import);
* ``ndp-usecols``: ``arrow_bridge.read_csv(usecols=...)`` of the columns the query
  reads, then pyarrow (filter and derived columns in one Acero pass,
  ``Table.group_by().aggregate()``): the baseline without pushdown;
* ``ndp-pushdown``: Q1 and Q6 are one ``arrow_bridge.aggregate_csv`` call (filter,
  derived columns and aggregates run on each span as it is parsed); Q14 joins
  lineitem with part, which ``aggregate_csv`` does not do, so it is
  ``read_csv(lineitem, filters=..., usecols=...)`` (the shipdate filter pushed down),
  ``read_csv(part, usecols=["p_partkey", "p_type"])``, ``Table.join`` and
  ``pyarrow.compute``.

Both ndp systems set ``pyarrow.set_cpu_count(N)`` and ``n_threads=N``.

Every measurement is a fresh child process (``python -m benchmarks.pushdown child
SYSTEM QUERY ...``), as in ``benchmarks.peers``: it imports its system, runs the
query once on a 2,000-row head of the same files (imports, JIT compilation and
thread pools stay out of the timed region), then times the query once on the full
files and prints its answer. Rounds run every (query, system) pair once, the
order of the systems rotating between rounds; the best wall time of the rounds
is reported. The files are read once beforehand, so every run hits the page cache.

Every answer is checked against DuckDB's: counts, integers and strings exactly,
floats to a relative difference of ``REL_TOL`` (float sums depend on the order
of the additions; ``aggregate_csv`` rounds its sums correctly).

Data: lineitem from ``benchmarks.datasets``; part made here by the same
``tpchgen-cli`` (``data/part-sf<SF>.csv``, with a marker like the datasets').
Results: ``benchmarks/results/pushdown.json`` and ``pushdown.md``; trial runs
(``--scale-factor 0.1 --no-save``) print only.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from benchmarks import datasets
from benchmarks.common import (DATA_DIR, MB, REPO_ROOT, RESULTS_DIR, host_info, package_versions,
                               warm_page_cache, write_head, write_result)
from benchmarks.peers import child_env
from benchmarks.readers import RESULT_PREFIX

#: Largest relative difference allowed between a float in an answer and DuckDB's.
REL_TOL = 1e-9
#: Issue target: ndp-pushdown's speed over the faster of DuckDB and polars (reported, not tuned to).
SPEED_TARGETS = {"q6": 2.5, "q14": 2.5}
#: Rows of the warm-up heads: enough that every query's filter keeps some.
WARMUP_ROWS = 2_000
CHILD_TIMEOUT_S = 900
PEERS = ("duckdb", "polars")

Answer = dict[str, list[Any]]


# --- data --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Paths:
    """The two tables' CSV files."""

    lineitem: str
    part: str


def table_paths(scale_factor: float, data_dir: Path = DATA_DIR) -> Paths:
    """lineitem and part at ``scale_factor`` under ``data_dir``, generated when missing or stale."""
    lineitem = datasets.make("lineitem", scale_factor=scale_factor, data_dir=data_dir)
    part = datasets.make_part(data_dir / f"part-sf{scale_factor:g}.csv", scale_factor)
    return Paths(str(lineitem), str(part))


# --- the queries ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Aggregate:
    """A grouped aggregate as pyarrow spells it, and the TPC-H names of its output columns."""

    derived: dict[str, pc.Expression]
    group_by: tuple[str, ...]
    aggregations: tuple[tuple[str, str], ...]
    names: dict[str, str]  # pyarrow's output name -> the TPC-H column name, in TPC-H's order

    def finish(self, table: pa.Table) -> pa.Table:
        """pyarrow's output renamed and ordered as TPC-H's answer.

        >>> agg = Aggregate({}, ("k",), (("v", "sum"),), {"k": "k", "v_sum": "total"})
        >>> agg.finish(pa.table({"v_sum": [1, 2], "k": ["b", "a"]})).to_pydict()
        {'k': ['a', 'b'], 'total': [2, 1]}
        """
        table = table.select(list(self.names)).rename_columns(list(self.names.values()))
        return table.sort_by([(key, "ascending") for key in self.group_by]) if self.group_by else table


@dataclass(frozen=True)
class Query:
    """One TPC-H query: its SQL, its polars plan, and what the ndp systems need."""

    name: str
    title: str
    sql: str  # DuckDB, with {lineitem} and {part} as SQL string literals
    polars: Callable[[Any, Paths], Any]  # (polars module, paths) -> LazyFrame
    filters: list[tuple[str, str, Any]]  # on lineitem, as a DNF AND-group
    columns: tuple[str, ...]  # lineitem columns the answer needs, besides the filter's
    aggregate: Aggregate | None = None  # None: a join (Q14)
    note: str = ""

    @property
    def read_columns(self) -> list[str]:
        """Every lineitem column the query reads (the baseline's usecols)."""
        return list(dict.fromkeys([*self.columns, *(column for column, _, _ in self.filters)]))


def _revenue() -> pc.Expression:
    """``l_extendedprice * (1 - l_discount)``, in SQL's order of operations."""
    return pc.field("l_extendedprice") * (pc.scalar(1.0) - pc.field("l_discount"))


# TPC-H's validation parameters: Q1 DELTA=90 (1998-12-01 - 90 days), Q6 DATE=1994-01-01,
# DISCOUNT=0.06, QUANTITY=24, Q14 DATE=1995-09-01.
Q1_SQL = """
SELECT l_returnflag, l_linestatus,
       sum(l_quantity) AS sum_qty,
       sum(l_extendedprice) AS sum_base_price,
       sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price,
       sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge,
       avg(l_quantity) AS avg_qty,
       avg(l_extendedprice) AS avg_price,
       avg(l_discount) AS avg_disc,
       count(*) AS count_order
FROM read_csv({lineitem})
WHERE l_shipdate <= DATE '1998-12-01' - INTERVAL 90 DAY
GROUP BY l_returnflag, l_linestatus
ORDER BY l_returnflag, l_linestatus
"""

Q6_SQL = """
SELECT sum(l_extendedprice * l_discount) AS revenue
FROM read_csv({lineitem})
WHERE l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1994-01-01' + INTERVAL 1 YEAR
  AND l_discount BETWEEN 0.06 - 0.01 AND 0.06 + 0.01 AND l_quantity < 24
"""

Q14_SQL = """
SELECT 100.00 * sum(CASE WHEN p_type LIKE 'PROMO%' THEN l_extendedprice * (1 - l_discount) ELSE 0 END)
       / sum(l_extendedprice * (1 - l_discount)) AS promo_revenue
FROM read_csv({lineitem}), read_csv({part})
WHERE l_partkey = p_partkey
  AND l_shipdate >= DATE '1995-09-01' AND l_shipdate < DATE '1995-09-01' + INTERVAL 1 MONTH
"""


def _polars_q1(pl: Any, paths: Paths) -> Any:
    disc_price = pl.col("l_extendedprice") * (1 - pl.col("l_discount"))
    return (pl.scan_csv(paths.lineitem, try_parse_dates=True)
            .filter(pl.col("l_shipdate") <= date(1998, 9, 2))
            .group_by("l_returnflag", "l_linestatus")
            .agg(pl.col("l_quantity").sum().alias("sum_qty"),
                 pl.col("l_extendedprice").sum().alias("sum_base_price"),
                 disc_price.sum().alias("sum_disc_price"),
                 (disc_price * (1 + pl.col("l_tax"))).sum().alias("sum_charge"),
                 pl.col("l_quantity").mean().alias("avg_qty"),
                 pl.col("l_extendedprice").mean().alias("avg_price"),
                 pl.col("l_discount").mean().alias("avg_disc"),
                 pl.len().alias("count_order"))
            .sort("l_returnflag", "l_linestatus"))


def _polars_q6(pl: Any, paths: Paths) -> Any:
    return (pl.scan_csv(paths.lineitem, try_parse_dates=True)
            .filter((pl.col("l_shipdate") >= date(1994, 1, 1)) & (pl.col("l_shipdate") < date(1995, 1, 1))
                    & pl.col("l_discount").is_between(0.05, 0.07) & (pl.col("l_quantity") < 24))
            .select((pl.col("l_extendedprice") * pl.col("l_discount")).sum().alias("revenue")))


def _polars_q14(pl: Any, paths: Paths) -> Any:
    revenue = pl.col("l_extendedprice") * (1 - pl.col("l_discount"))
    promo = pl.when(pl.col("p_type").str.starts_with("PROMO")).then(revenue).otherwise(0.0)
    lineitem = (pl.scan_csv(paths.lineitem, try_parse_dates=True)
                .filter((pl.col("l_shipdate") >= date(1995, 9, 1)) & (pl.col("l_shipdate") < date(1995, 10, 1))))
    return (lineitem.join(pl.scan_csv(paths.part), left_on="l_partkey", right_on="p_partkey")
            .select((100.0 * promo.sum() / revenue.sum()).alias("promo_revenue")))


QUERIES: dict[str, Query] = {query.name: query for query in (
    Query("q1", "pricing summary report", Q1_SQL, _polars_q1,
          filters=[("l_shipdate", "<=", date(1998, 9, 2))],
          columns=("l_returnflag", "l_linestatus", "l_quantity", "l_extendedprice", "l_discount", "l_tax"),
          aggregate=Aggregate(
              derived={"disc_price": _revenue(), "charge": _revenue() * (pc.scalar(1.0) + pc.field("l_tax"))},
              group_by=("l_returnflag", "l_linestatus"),
              # SQL's count(*) is l_quantity's count: lineitem has no nulls.
              aggregations=(("l_quantity", "sum"), ("l_extendedprice", "sum"), ("disc_price", "sum"),
                            ("charge", "sum"), ("l_quantity", "mean"), ("l_extendedprice", "mean"),
                            ("l_discount", "mean"), ("l_quantity", "count")),
              names={"l_returnflag": "l_returnflag", "l_linestatus": "l_linestatus", "l_quantity_sum": "sum_qty",
                     "l_extendedprice_sum": "sum_base_price", "disc_price_sum": "sum_disc_price",
                     "charge_sum": "sum_charge", "l_quantity_mean": "avg_qty", "l_extendedprice_mean": "avg_price",
                     "l_discount_mean": "avg_disc", "l_quantity_count": "count_order"})),
    Query("q6", "forecasting revenue change", Q6_SQL, _polars_q6,
          filters=[("l_shipdate", ">=", date(1994, 1, 1)), ("l_shipdate", "<", date(1995, 1, 1)),
                   ("l_discount", ">=", 0.05), ("l_discount", "<=", 0.07), ("l_quantity", "<", 24)],
          columns=("l_extendedprice", "l_discount"),
          aggregate=Aggregate(derived={"revenue": pc.field("l_extendedprice") * pc.field("l_discount")},
                              group_by=(), aggregations=(("revenue", "sum"),), names={"revenue_sum": "revenue"})),
    Query("q14", "promotion effect", Q14_SQL, _polars_q14,
          filters=[("l_shipdate", ">=", date(1995, 9, 1)), ("l_shipdate", "<", date(1995, 10, 1))],
          columns=("l_partkey", "l_extendedprice", "l_discount"),
          note="ndp-pushdown: read_csv(lineitem, filters, usecols) + read_csv(part, usecols) + Table.join + "
               "pyarrow.compute (aggregate_csv does not join)"),
)}


# --- the systems (each runs in a child; imports stay in the setup functions) ---------------------

#: ``setup(threads)`` returns ``run(query, paths)``, which answers the query (the timed call).
Runner = Callable[[Query, Paths], Any]


def _sql_literal(path: str) -> str:
    return "'" + path.replace("'", "''") + "'"


def setup_duckdb(threads: int) -> Runner:
    """DuckDB: the query's SQL on a fresh connection with ``threads`` threads."""
    import duckdb

    con = duckdb.connect()
    con.execute(f"SET threads={threads}")
    return lambda query, paths: con.sql(query.sql.format(lineitem=_sql_literal(paths.lineitem),
                                                         part=_sql_literal(paths.part))).to_arrow_table()


def setup_polars(threads: int) -> Runner:
    """polars: the lazy plan, collected (POLARS_MAX_THREADS must be set before import)."""
    import polars as pl

    if pl.thread_pool_size() != threads:
        raise RuntimeError(f"polars thread pool has {pl.thread_pool_size()} threads, wanted {threads}: "
                           "set POLARS_MAX_THREADS before polars is imported")
    return lambda query, paths: query.polars(pl, paths).collect()


def promo_revenue(lineitem: pa.Table, part: pa.Table) -> pa.Table:
    """Q14's answer from lineitem's rows in the month (l_partkey, l_extendedprice,
    l_discount) and part's (p_partkey, p_type); null, as SQL's, when no row joins
    (the warm-up's heads of the files at SF1).

    >>> lineitem = pa.table({"l_partkey": [1, 2], "l_extendedprice": [10.0, 30.0], "l_discount": [0.0, 0.5]})
    >>> part = pa.table({"p_partkey": [1, 2], "p_type": ["PROMO X", "SMALL Y"]})
    >>> promo_revenue(lineitem, part).to_pydict()
    {'promo_revenue': [40.0]}
    >>> promo_revenue(lineitem, part.slice(2)).to_pydict()
    {'promo_revenue': [None]}
    """
    joined = lineitem.join(part, keys="l_partkey", right_keys="p_partkey", join_type="inner")
    revenue = pc.multiply(joined["l_extendedprice"], pc.subtract(1.0, joined["l_discount"]))
    promo = pc.if_else(pc.starts_with(joined["p_type"], "PROMO"), revenue, 0.0)
    promo_sum, total = pc.sum(promo).as_py(), pc.sum(revenue).as_py()  # None when nothing joined
    return pa.table({"promo_revenue": pa.array([None if total is None else 100.0 * promo_sum / total], pa.float64())})


def setup_ndp(pushdown: bool) -> Callable[[int], Runner]:
    """ndp with (``aggregate_csv``/``read_csv(filters=...)``) or without pushdown
    (``read_csv(usecols=...)``, then pyarrow)."""

    def setup(threads: int) -> Runner:
        import arrow_bridge
        import pyarrow.dataset as ds
        from pyarrow.parquet import filters_to_expression

        pa.set_cpu_count(threads)  # pyarrow's compute, Acero and joins

        def lineitem_rows(query: Query, paths: Paths) -> pa.Table:
            if pushdown:
                return arrow_bridge.read_csv(paths.lineitem, usecols=list(query.columns), filters=query.filters,
                                             n_threads=threads)
            table = arrow_bridge.read_csv(paths.lineitem, usecols=query.read_columns, n_threads=threads)
            return table.filter(filters_to_expression(query.filters)).select(list(query.columns))

        def aggregate(query: Query, agg: Aggregate, paths: Paths) -> pa.Table:
            if pushdown:
                # No usecols: aggregate_csv reads the columns its query names.
                return arrow_bridge.aggregate_csv(paths.lineitem, list(agg.aggregations), group_by=list(agg.group_by),
                                                  derived=agg.derived, filters=query.filters, n_threads=threads)
            table = arrow_bridge.read_csv(paths.lineitem, usecols=query.read_columns, n_threads=threads)
            # One Acero pass filters and adds the derived columns.
            projection = {**{name: pc.field(name) for name in query.columns}, **agg.derived}
            table = ds.dataset(table).to_table(columns=projection, filter=filters_to_expression(query.filters))
            return table.group_by(list(agg.group_by)).aggregate(list(agg.aggregations))

        def run(query: Query, paths: Paths) -> pa.Table:
            if query.aggregate is not None:
                return query.aggregate.finish(aggregate(query, query.aggregate, paths))
            part = arrow_bridge.read_csv(paths.part, usecols=["p_partkey", "p_type"], n_threads=threads)
            return promo_revenue(lineitem_rows(query, paths), part)

        return run

    return setup


SYSTEMS: dict[str, Callable[[int], Runner]] = {
    "duckdb": setup_duckdb,
    "polars": setup_polars,
    "ndp-usecols": setup_ndp(pushdown=False),
    "ndp-pushdown": setup_ndp(pushdown=True),
}


# --- answers -----------------------------------------------------------------------------------

def _plain(value: Any) -> Any:
    # DuckDB sums BIGINTs into HUGEINT, which reaches Arrow as decimal128(38, 0).
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value


def canonical(result: Any) -> Answer:
    """A system's result (pyarrow Table or polars DataFrame) as ``{column: [values]}``.

    >>> canonical(pa.table({"sum_qty": pa.array([Decimal(7)], pa.decimal128(38, 0)), "x": [0.5]}))
    {'sum_qty': [7], 'x': [0.5]}
    """
    table = result if isinstance(result, pa.Table) else result.to_arrow()
    return {name: [_plain(value) for value in values] for name, values in table.to_pydict().items()}


def answer(system: str, query: str, paths: Paths, threads: int) -> Answer:
    """Set ``system`` up and answer ``query`` (untimed: for checks)."""
    return canonical(SYSTEMS[system](threads)(QUERIES[query], paths))


def compare(got: Answer, want: Answer, rel_tol: float = REL_TOL) -> tuple[float, list[str]]:
    """The largest relative difference between ``got``'s floats and ``want``'s,
    and every difference that breaks the rules: floats beyond ``rel_tol``, any
    other value (or its type) not equal.

    >>> compare({"n": [3], "x": [1.0 + 1e-12]}, {"n": [3], "x": [1.0]})[1]
    []
    >>> compare({"n": [3.0], "x": [1.1]}, {"n": [3], "x": [1.0]})[1]
    ['n[0]: 3.0 != 3', 'x[0]: 1.1 != 1.0 (relative difference 0.1)']
    """
    if list(got) != list(want):
        return 0.0, [f"columns {list(got)} != {list(want)}"]
    worst, problems = 0.0, []
    for name, wanted in want.items():
        if len(got[name]) != len(wanted):
            problems.append(f"{name}: {len(got[name])} rows != {len(wanted)}")
            continue
        for row, (g, w) in enumerate(zip(got[name], wanted)):
            if isinstance(g, float) and isinstance(w, float):
                rel = abs(g - w) / abs(w) if w else abs(g)
                worst = max(worst, rel)
                if not rel <= rel_tol:  # NaN fails too
                    problems.append(f"{name}[{row}]: {g!r} != {w!r} (relative difference {rel:.3g})")
            elif type(g) is not type(w) or g != w:
                problems.append(f"{name}[{row}]: {g!r} != {w!r}")
    return worst, problems


# --- the child: one timed query ------------------------------------------------------------------

def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure(system: str, query: str, paths: Paths, warmup: Paths, threads: int) -> dict[str, Any]:
    """Warm ``system`` up on the heads, then time ``query`` once on the full files."""
    run = SYSTEMS[system](threads)
    run(QUERIES[query], warmup)
    gc.collect()
    cpu0, t0 = _cpu_seconds(), time.perf_counter()
    result = run(QUERIES[query], paths)
    seconds, cpu = time.perf_counter() - t0, _cpu_seconds() - cpu0
    return {"system": system, "query": query, "seconds": seconds, "cpu_seconds": cpu, "answer": canonical(result)}


def child_main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.pushdown child",
                                     description="Child process: time one system on one query.")
    parser.add_argument("system", choices=sorted(SYSTEMS))
    parser.add_argument("query", choices=sorted(QUERIES))
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--paths", nargs=2, required=True, metavar=("LINEITEM", "PART"))
    parser.add_argument("--warmup", nargs=2, required=True, metavar=("LINEITEM", "PART"))
    args = parser.parse_args(argv)
    result = measure(args.system, args.query, Paths(*args.paths), Paths(*args.warmup), args.threads)
    print(RESULT_PREFIX + json.dumps(result), flush=True)
    return 0


# --- the parent: rounds, checks, tables ------------------------------------------------------------

def run_child(system: str, query: str, paths: Paths, warmup: Paths, threads: int) -> dict[str, Any]:
    """One measurement in a fresh process; its result, or a dict with an ``error``."""
    cmd = [sys.executable, "-m", "benchmarks.pushdown", "child", system, query, "--threads", str(threads),
           "--paths", paths.lineitem, paths.part, "--warmup", warmup.lineitem, warmup.part]
    try:
        proc = subprocess.run(cmd, cwd=REPO_ROOT, env=child_env(threads), capture_output=True, text=True,
                              timeout=CHILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"system": system, "query": query, "error": f"timed out after {CHILD_TIMEOUT_S} s"}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(RESULT_PREFIX):
            return json.loads(line[len(RESULT_PREFIX):])
    tail = (proc.stderr.strip().splitlines() or [""])[-1]
    return {"system": system, "query": query, "error": f"exit {proc.returncode}: {tail}"}


def run_rounds(queries: Sequence[str], systems: Sequence[str], paths: Paths, warmup: Paths, threads: int,
               repeat: int) -> list[dict[str, Any]]:
    """``repeat`` rounds of every (query, system) pair; the systems' order rotates between rounds."""
    runs = []
    for rep in range(repeat):
        shift = rep % len(systems)
        for query in queries:
            for system in [*systems[shift:], *systems[:shift]]:
                run = {"repeat": rep, **run_child(system, query, paths, warmup, threads)}
                status = run.get("error") or f"{run['seconds']:.3f} s"
                print(f"  round {rep + 1}/{repeat} {query:<4} {system:<13} {status}", flush=True)
                runs.append(run)
    return runs


@dataclass
class Outcome:
    """One system on one query: best time, and its answers against DuckDB's."""

    best_s: float | None = None
    best_cpu_s: float | None = None
    failed_runs: int = 0
    error: str | None = None
    max_rel_diff: float | None = None
    mismatches: list[str] = field(default_factory=list)
    answer: Answer | None = None


def summarize(runs: list[dict[str, Any]], query: str, systems: Sequence[str]) -> dict[str, Outcome]:
    """Per system: the best run of ``query`` and every run's answer checked against DuckDB's."""
    mine = [run for run in runs if run["query"] == query]
    ok = {system: [run for run in mine if run["system"] == system and "error" not in run] for system in systems}
    reference = ok["duckdb"][0]["answer"] if ok.get("duckdb") else None
    outcomes = {}
    for system in systems:
        runs_of = [run for run in mine if run["system"] == system]
        outcome = Outcome(failed_runs=len(runs_of) - len(ok[system]))
        if not ok[system]:
            outcome.error = runs_of[-1]["error"] if runs_of else "not run"
        else:
            best = min(ok[system], key=lambda run: run["seconds"])
            outcome.best_s, outcome.best_cpu_s, outcome.answer = best["seconds"], best["cpu_seconds"], best["answer"]
        if reference is not None and ok[system]:
            checks = [compare(run["answer"], reference) for run in ok[system]]
            outcome.max_rel_diff = max(worst for worst, _ in checks)
            outcome.mismatches = list(dict.fromkeys(problem for _, problems in checks for problem in problems))
        outcomes[system] = outcome
    return outcomes


def ratios(outcomes: dict[str, Outcome]) -> dict[str, Any]:
    """ndp-pushdown's speed over the faster peer and over ndp-usecols (>1: pushdown is faster)."""
    ours = outcomes.get("ndp-pushdown")
    peers = {name: outcomes[name].best_s for name in PEERS if name in outcomes and outcomes[name].best_s}
    fastest = min(peers, key=peers.get) if peers else None
    usecols = outcomes.get("ndp-usecols")
    have_ours = ours is not None and ours.best_s
    return {
        "fastest_peer": fastest,
        "vs_fastest_peer": peers[fastest] / ours.best_s if have_ours and fastest else None,
        "vs_usecols": usecols.best_s / ours.best_s if have_ours and usecols and usecols.best_s else None,
    }


def _seconds(outcome: Outcome | None) -> str:
    if outcome is None:
        return "-"
    return "failed" if outcome.best_s is None else f"{outcome.best_s:.3f}"


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def _diff(outcome: Outcome) -> str:
    if outcome.max_rel_diff is None:
        return "-"
    return ("ok " if not outcome.mismatches else "DIFFERS ") + f"{outcome.max_rel_diff:.1e}"


def table_rows(results: dict[str, dict[str, Any]], systems: Sequence[str]) -> tuple[list[str], list[list[str]]]:
    """The summary as a header and rows of cells: seconds per system, ratios, checks."""
    header = ["query", *(f"{system} s" for system in systems), "pushdown vs faster peer",
              "pushdown vs usecols", *(f"{system} check" for system in systems if system != "duckdb")]
    rows = []
    for query, result in results.items():
        outcomes = result["outcomes"]
        rows.append([query, *(_seconds(outcomes.get(system)) for system in systems),
                     _ratio(result["ratios"]["vs_fastest_peer"]), _ratio(result["ratios"]["vs_usecols"]),
                     *(_diff(outcomes[system]) for system in systems if system != "duckdb")])
    return header, rows


def text_table(header: list[str], rows: list[list[str]]) -> str:
    """Aligned columns for the terminal.

    >>> print(text_table(["query", "s"], [["q6", "0.5"]]))
    query    s
    ----------
       q6  0.5
    """
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows)]
    lines = ["  ".join(cell.rjust(width) for cell, width in zip(line, widths)) for line in [header, *rows]]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


def notes(results: dict[str, dict[str, Any]]) -> list[str]:
    """Targets, failures and mismatches, one line each."""
    lines = []
    for query, result in results.items():
        target, vs = SPEED_TARGETS.get(query), result["ratios"]["vs_fastest_peer"]
        if target and vs is not None:
            lines.append(f"{query}: pushdown {vs:.2f}x {result['ratios']['fastest_peer']} "
                         f"(issue target {target}x the faster peer: {'met' if vs >= target else 'MISSED'})")
        for system, outcome in result["outcomes"].items():
            if outcome.error:
                lines.append(f"{query} {system}: failed: {outcome.error}")
            for problem in outcome.mismatches:
                lines.append(f"{query} {system}: answer differs from duckdb's: {problem}")
    return lines


def markdown(payload: dict[str, Any], header: list[str], rows: list[list[str]]) -> str:
    """The short results page (benchmarks/results/pushdown.md)."""
    host, args = payload["host"], payload["args"]
    versions = ", ".join(f"{name} {payload['versions'].get(name)}" for name in ("duckdb", "polars", "pyarrow"))
    lines = [f"# TPC-H Q1, Q6, Q14 on CSV at SF{args['scale_factor']:g}: pushdown beside DuckDB and polars", "",
             f"`{payload['command']}` on {host['cpu_model']} ({host['cpu_count']} cores, load average "
             f"{payload['loadavg_before'][0]:.2f} at the start), commit {host['git_commit']}; {versions}. "
             f"{args['threads']} threads for every system, wall seconds, best of {args['repeat']} interleaved "
             "rounds, each a fresh process after a warm-up on the files' first rows, page cache warm. "
             f"lineitem {payload['bytes']['lineitem'] / MB:,.0f} MB, part {payload['bytes']['part'] / MB:,.0f} MB. "
             "Ratios are speeds (>1: pushdown is faster). The check columns compare each answer with DuckDB's "
             f"(integers and strings exact, floats to {REL_TOL:g} relative) and give the largest relative "
             "difference seen among the floats.", "",
             "| " + " | ".join(header) + " |", "|" + " --- |" + " ---: |" * (len(header) - 1)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    lines += cpu_table(payload)
    lines += ["", "* **ndp-usecols**: `arrow_bridge.read_csv(usecols=...)`, then pyarrow (Acero filter and "
              "derived columns, `Table.group_by().aggregate()`).",
              "* **ndp-pushdown**: Q1, Q6: `arrow_bridge.aggregate_csv(filters=..., derived=..., group_by=...)`; "
              "Q14: `read_csv(lineitem, filters=..., usecols=...)` + `read_csv(part, usecols=...)` + "
              "`Table.join` + `pyarrow.compute`.",
              "* **duckdb**: the TPC-H SQL over `read_csv('...')`; **polars**: `pl.scan_csv(...)` lazy query.", ""]
    lines += [f"* {line}" for line in payload["notes"]]
    return "\n".join(lines) + "\n"


def cpu_table(payload: dict[str, Any]) -> list[str]:
    """Markdown lines: the CPU seconds of each best run, the steadier figure on a shared machine."""
    systems = payload["args"]["systems"]
    lines = ["", f"CPU seconds (user + sys, all threads) of the same runs; load average "
                 f"{payload['loadavg_before'][0]:.2f} at the start, {payload['loadavg_after'][0]:.2f} at the end "
                 "(waiting for a core counts in wall time only):", "",
             "| query | " + " | ".join(f"{system} CPU s" for system in systems) + " |",
             "| --- |" + " ---: |" * len(systems)]
    for query, result in payload["queries"].items():
        cpu = [result["outcomes"][system]["best_cpu_s"] for system in systems]
        lines.append(f"| {query} | " + " | ".join("-" if c is None else f"{c:.2f}" for c in cpu) + " |")
    return lines


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.pushdown", description=__doc__.split("\n\n")[0],
                                     epilog="Systems: " + ", ".join(SYSTEMS) + ". See the module docstring.")
    parser.add_argument("--threads", type=int, default=2, help="threads for every system (default 2)")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved rounds; the best is reported (default 3)")
    parser.add_argument("--scale-factor", type=float, default=datasets.DEFAULT_SCALE_FACTOR,
                        help="TPC-H scale factor (default 1)")
    parser.add_argument("--queries", default=",".join(QUERIES), help=f"of {', '.join(QUERIES)}")
    parser.add_argument("--systems", default=",".join(SYSTEMS), help=f"of {', '.join(SYSTEMS)}")
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR, help="where the CSV files are (made)")
    parser.add_argument("--no-save", action="store_true",
                        help="print only: leave results/pushdown.{json,md} (the cited run) as they are")
    args = parser.parse_args(argv)
    args.queries = [name for name in args.queries.split(",") if name]
    args.systems = [name for name in args.systems.split(",") if name]
    for name, known in [*((q, QUERIES) for q in args.queries), *((s, SYSTEMS) for s in args.systems)]:
        if name not in known:
            parser.error(f"unknown name {name!r}; choose from {', '.join(known)}")
    if "duckdb" not in args.systems:
        parser.error("duckdb must be among the systems: every answer is checked against its")
    return args


def measure_all(args: argparse.Namespace, paths: Paths, command: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Every round's runs, and the facts that go with them (host, versions, files, load)."""
    payload: dict[str, Any] = {
        "command": command, "host": host_info(), "versions": package_versions(),
        "args": vars(args) | {"data_dir": str(args.data_dir)}, "rel_tol": REL_TOL,
        "paths": vars(paths), "bytes": {name: Path(path).stat().st_size for name, path in vars(paths).items()},
    }
    for path in vars(paths).values():
        warm_page_cache(Path(path))
    with tempfile.TemporaryDirectory(prefix="ndp-pushdown-") as tmp:
        warmup = Paths(*(str(write_head(Path(path), Path(tmp) / Path(path).name, rows=WARMUP_ROWS))
                         for path in (paths.lineitem, paths.part)))
        payload["loadavg_before"] = os.getloadavg()
        runs = run_rounds(args.queries, args.systems, paths, warmup, args.threads, args.repeat)
        payload["loadavg_after"] = os.getloadavg()
    return payload, runs


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["child"]:
        return child_main(argv[1:])
    args = parse_args(argv)
    paths = table_paths(args.scale_factor, args.data_dir)
    payload, runs = measure_all(args, paths, " ".join(["python -m benchmarks.pushdown", *argv]))
    results = {}
    for query in args.queries:
        outcomes = summarize(runs, query, args.systems)
        results[query] = {"title": QUERIES[query].title, "outcomes": outcomes, "ratios": ratios(outcomes)}
    header, rows = table_rows(results, args.systems)
    payload["notes"] = notes(results)
    print(f"\n== TPC-H on CSV, SF{args.scale_factor:g}, {args.threads} threads, best of {args.repeat} "
          f"(seconds; ratios are speeds, >1: pushdown faster; checks vs duckdb, rel tol {REL_TOL:g}) ==")
    print(text_table(header, rows))
    print("\n".join([*payload["notes"], *(f"{q}: {QUERIES[q].note}" for q in args.queries if QUERIES[q].note)]))
    if args.no_save:
        return 0
    payload["queries"] = {query: result | {"outcomes": {name: asdict(outcome) for name, outcome
                                                        in result["outcomes"].items()}}
                          for query, result in results.items()}
    print(f"-> {write_result('pushdown.json', payload | {'runs': runs})}")
    md = RESULTS_DIR / "pushdown.md"
    md.write_text(markdown(payload, header, rows))
    print(f"-> {md}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
