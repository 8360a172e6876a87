"""Summarizer's and Biscuit's pushdown results, modeled from real reads, and when pushdown pays today.

Usage::

    python -m benchmarks.pushdown_model [--scale-factor 1] [--slice-mb 100] [--no-save]

Every modeled figure is the timing model (``device_emulator``) run on the work
counters of real reads of real TPC-H files: :func:`device_emulator.sweep`
reads a file once with the query's filters and aggregates (``read_csv`` /
``aggregate_csv``), keeps each span's counters - the parse's and the span
stages' (``filter_tests``, ``values_kept``, ``aggregate_updates``) - its text
and what it sends, and models every split and profile point from them. The
sampled decisions are real ``split="sampled"`` reads on an emulated device.
Modeled times are deterministic; no wall time is reported.

1. **Summarizer** (MICRO'17 Sec. 6.3, Fig. 5; Sec. 6.5, Fig. 7): TPC-H Q1, Q6
   and Q14 (``benchmarks.pushdown``'s queries; Q14's lineitem scan: the join
   with part stays on the host in both runs) on lineitem at ``--scale-factor``
   (SF1 by default: the dynamic split's queue leaves the slow core a tail of
   2 MiB, which a short run feels) under ``summarizer-board``: static shares
   and the dynamic split, gains over host-only; then 16x the device's compute
   as the paper built it (two cores at 8x, 1.6 GHz), the board's internal
   bandwidth being twice its link's.
2. **Biscuit** (ISCA'16 Sec. V.C, Fig. 8): its two ``l_shipdate`` queries
   (``SELECT l_orderkey, l_shipdate, l_linenumber``) and a low-selectivity one
   on a ``--slice-mb`` head of lineitem under ``biscuit-pm``: speed-up of the
   device over the host (its 12 Xeon cores, and one thread as Biscuit's
   ``Conv``, a MariaDB query); the sampled decision (``split="sampled"``); and
   a what-if of the mechanism behind the paper's figure that the reader does
   not have: the per-channel matcher dropping the pages that hold none of the
   filter's keys before the cores see them.
3. **modern-gen4**: speed-up of pushing a filter (``SELECT *``) into the
   device against the host path, over selectivities 0.001-1.

Also measured here: the reader table's prices of the span stages' counters
(``modern-gen4.toml``'s ``[host.cycles]``).

Results: ``benchmarks/results/pushdown-model.json``, ``.md`` and ``.png``.
"""
from __future__ import annotations

import argparse
import functools
import math
import time
from datetime import date
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import numpy as np
import pyarrow as pa

from benchmarks.common import DATA_DIR, RESULTS_DIR, host_info, lineitem_slice, write_result

# ---- what the papers report -----------------------------------------------------------------------
#: Summarizer Sec. 6.3: dynamic-split gains over host-only, in percent.
SUMMARIZER_GAINS = {"q1": 10.3, "q6": 16.4, "q14": 20.3}
#: Summarizer Sec. 6.5, Fig. 7: dynamic split with 16x the device's compute, average gain in percent.
SUMMARIZER_16X = 94.5
#: Our tolerances (percentage points): the spread of the paper's own three gains (10.3-20.3%) for one
#: query's gain; a quarter of the gain itself for the 16x average (Fig. 7 ranges up to +120% for Q1).
GAIN_TOLERANCE_PP, GAIN_16X_TOLERANCE_PP = 10.0, 25.0
#: Biscuit Fig. 8: speed-ups of its Query 1 and Query 2 over Conv.
BISCUIT_SPEEDUPS = {"query1": 11.0, "query2": 10.0}

SUMMARIZER_SPLITS = ("host", "static:0.05", "static:0.1", "static:0.15", "static:0.2", "static:0.3",
                     "static:0.5", "static:1", "dynamic")
#: The board's core as shipped, and the paper's 16x (two cores, each 8x faster: [S] Sec. 6.5).
SUMMARIZER_COMPUTE = {"cores.count": [1, 2], "cores.speed*": [1, 8]}

BISCUIT_COLUMNS = ["l_orderkey", "l_shipdate", "l_linenumber"]
BISCUIT_QUERIES = {
    "query1": [("l_shipdate", "=", date(1995, 1, 17))],
    "query2": [("l_shipdate", "in", [date(1995, 1, 17), date(1995, 1, 18)]), ("l_linenumber", "in", [1, 2])],
    "unselective": [("l_shipdate", ">=", date(1992, 3, 1))],  # most rows: what a planner should not offload
}
#: Host cores: biscuit-pm's twelve, and one thread as Biscuit's Conv (MariaDB runs a query on one).
BISCUIT_HOSTS = {"12 host cores": 12, "one host thread (Conv)": 1}
MATCHER_KEYS = 3  # [B] Table I: the pattern matcher takes up to three keys
#: Work the matcher what-if leaves whole: the matcher's scan, and what the rows kept cost.
MATCHER_KEEPS = ("bytes_scanned", "values_kept", "aggregate_updates")

MODERN_SELECTIVITIES = (0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0)
MODERN_SPLITS = ("host", "device", "dynamic")
MODERN_HOSTS = {"host.cores": [8, 1]}


# ---- the span stages' prices on this machine -------------------------------------------------------
def stage_prices(rows: int = 100_000, repeat: int = 5, clock_MHz: Optional[float] = None) -> dict[str, float]:
    """Cycles per unit of each span-stage counter on this host (``clock_MHz``:
    default this CPU's): a filter term on a value (TPC-H Q6's five terms), a
    value the selection copies, a partial-aggregate state update (Q1's shape:
    two keys, five columns of sums, means and a count). Best of ``repeat``.

    >>> prices = stage_prices(rows=2000, repeat=1, clock_MHz=1000.0)
    >>> sorted(prices), all(price > 0 for price in prices.values())
    (['aggregate_updates', 'filter_tests', 'values_kept'], True)
    """
    from benchmarks.pushdown import QUERIES
    from arrow_bridge.filters import RowFilter

    table = _lineitem_columns(rows)
    q6 = RowFilter(QUERIES["q6"].filters)
    columns = {name: table.column(name) for name in q6.columns}
    kept = pa.array(np.arange(0, rows, 2))
    q1 = _grouped(QUERIES["q1"])
    seconds = {
        "filter_tests": _best(lambda: q6.selection(columns, rows), repeat) / (rows * q6.tests_per_row(0)),
        "values_kept": _best(lambda: [table.column(j).take(kept) for j in range(table.num_columns)], repeat)
        / (len(kept) * table.num_columns),
        "aggregate_updates": _best(lambda: q1.partial(table), repeat) / (rows * q1.updates_per_row),
    }
    hertz = (clock_MHz or _clock_MHz()) * 1e6
    return {name: s * hertz for name, s in seconds.items()}


def _lineitem_columns(rows: int) -> pa.Table:
    """The lineitem columns Q1 and Q6 read, with TPC-H's value ranges."""
    rng = np.random.default_rng(1)
    return pa.table({
        "l_quantity": pa.array(rng.integers(1, 51, rows).astype(np.float64)),
        "l_extendedprice": pa.array(np.round(rng.uniform(900, 105_000, rows), 2)),
        "l_discount": pa.array(rng.integers(0, 11, rows) / 100),
        "l_tax": pa.array(rng.integers(0, 9, rows) / 100),
        "l_returnflag": pa.array(rng.choice(["A", "N", "R"], rows)),
        "l_linestatus": pa.array(rng.choice(["F", "O"], rows)),
        "l_shipdate": pa.array(rng.integers(8035, 10561, rows).astype(np.int32)).cast(pa.date32()),
    })


def _best(run: Callable[[], Any], repeat: int) -> float:
    best = math.inf
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best


def _clock_MHz() -> float:
    """This CPU's clock (``/proc/cpuinfo``), else 2600 (the reader table's machine)."""
    try:
        with open("/proc/cpuinfo") as info:
            return next(float(line.split(":")[1]) for line in info if line.startswith("cpu MHz"))
    except (OSError, StopIteration, ValueError):
        return 2600.0


# ---- 1. Summarizer -----------------------------------------------------------------------------------
def query_reader(query: Any, usecols: Optional[Sequence[str]] = None) -> Callable[..., Any]:
    """The read a ``benchmarks.pushdown`` query pushes down: ``aggregate_csv`` for
    Q1/Q6, ``read_csv(filters=, usecols=)`` of lineitem for Q14 (its join is the host's)."""
    import arrow_bridge

    if query.aggregate is None:
        return functools.partial(arrow_bridge.read_csv, usecols=list(usecols or query.columns),
                                 filters=query.filters)
    agg = query.aggregate
    return functools.partial(arrow_bridge.aggregate_csv, aggregations=list(agg.aggregations),
                             group_by=list(agg.group_by), derived=agg.derived, filters=query.filters)


def summarizer(path: Path, queries: Sequence[str] = ("q1", "q6", "q14"),
               splits: Sequence[str] = SUMMARIZER_SPLITS) -> dict:
    """Each query under ``summarizer-board``: modeled gain (%) of every split over
    host-only with the board's core, and of the dynamic split with the paper's 16x.

    >>> import io
    >>> csv = io.BytesIO(b"l_shipdate,l_quantity\\n" + b"1994-06-01,3\\n" * 2000)
    >>> out = summarizer(csv, queries=(), splits=("host", "dynamic"))
    >>> out["internal_over_link"], out["queries"]
    (2.0, {})
    """
    import device_emulator
    from benchmarks.pushdown import QUERIES

    from arrow_bridge.filters import RowFilter

    profile = device_emulator.load_profile("summarizer-board")
    out = {"profile": profile.name, "internal_over_link": profile.internal_bandwidth / profile.link_bandwidth,
           "task_bytes": profile["task_queue.task_bytes"], "slots": profile["task_queue.slots"],
           "core_MHz": profile["cores.clock_MHz"], "update_cycles": profile["cores.cycles.aggregate_updates"],
           "queries": {}}
    for name in queries:
        query = QUERIES[name]
        sweep = device_emulator.sweep(path, reader=query_reader(query), profiles=profile.name,
                                      splits=splits, overrides=SUMMARIZER_COMPUTE)
        out["queries"][name] = {**_summarizer_query(sweep.frame),
                                "filter_terms": RowFilter(query.filters).tests_per_row(0),
                                "updates_per_row": _grouped(query).updates_per_row if query.aggregate else 0}
    return out


def _grouped(query: Any) -> Any:
    """A ``benchmarks.pushdown`` query's aggregate as ``aggregate_csv`` runs it (a ``GroupedQuery``)."""
    from arrow_bridge.aggregates import Aggregation, GroupedQuery

    agg = query.aggregate
    return GroupedQuery([Aggregation.parse(a) for a in agg.aggregations], list(agg.group_by), dict(agg.derived))


def _summarizer_query(frame: Any) -> dict:
    """One query's gains (%) from its sweep frame."""
    def gain(split: str, count: int = 1, speed: int = 1) -> float:
        rows = frame[(frame["split"] == split) & (frame["cores.count"] == count) & (frame["cores.speed*"] == speed)]
        return 100 * (float(rows["speedup"].iloc[0]) - 1)

    def share(split: str, count: int = 1, speed: int = 1) -> float:
        rows = frame[(frame["split"] == split) & (frame["cores.count"] == count) & (frame["cores.speed*"] == speed)]
        return float(rows["offload_share"].iloc[0])

    static = {split: gain(split) for split in dict.fromkeys(frame["split"]) if split.startswith("static:")}
    base = frame[(frame["split"] == "host") & (frame["cores.count"] == 1) & (frame["cores.speed*"] == 1)]
    best = max(static, key=static.get) if static else None
    return {"host_s": float(base["makespan_s"].iloc[0]), "tasks": int(base["tasks"].iloc[0]), "static": static,
            "best_static": best, "dynamic": gain("dynamic"), "dynamic_share": share("dynamic"),
            "dynamic_16x": gain("dynamic", 2, 8), "dynamic_16x_share": share("dynamic", 2, 8)}


# ---- 2. Biscuit --------------------------------------------------------------------------------------
def biscuit(path: Path, queries: Optional[dict] = None) -> dict:
    """Biscuit's queries under ``biscuit-pm``: selectivities, modeled speed-ups
    over each host of :data:`BISCUIT_HOSTS`, the sampled decision against each,
    and the page-filter what-if."""
    queries = BISCUIT_QUERIES if queries is None else queries
    return {name: {"filters": describe(filters), **_biscuit_query(path, filters)} for name, filters in queries.items()}


def describe(filters: list) -> str:
    """An AND-group of DNF terms as text.

    >>> describe(BISCUIT_QUERIES["query2"])
    'l_shipdate in (1995-01-17, 1995-01-18) and l_linenumber in (1, 2)'
    """
    def value(v: Any) -> str:
        return f"({', '.join(map(str, v))})" if isinstance(v, (list, tuple)) else str(v)

    return " and ".join(f"{column} {op} {value(v)}" for column, op, v in filters)


def _biscuit_query(path: Path, filters: list) -> dict:
    import arrow_bridge
    from device_emulator import load_profile

    profile = load_profile("biscuit-pm")
    page = profile.page_size
    read = functools.partial(arrow_bridge.read_csv, usecols=BISCUIT_COLUMNS, filters=filters)
    tasks = _recorded_tasks(path, read, profile["task_queue.task_bytes"], page)
    pages = _recorded_tasks(path, read, page, page)
    expected = read(path)
    return {"row_selectivity": expected.num_rows / sum(task.counters["rows"] for task in tasks),
            "page_selectivity": sum(task.object_bytes > 0 for task in pages) / len(pages),
            "speedup": _speedups(tasks), "sampled": _sampled_decisions(path, filters, expected),
            "what_if_matcher": _matcher_what_if(path, tasks, filters, page)}


def _speedups(tasks: list) -> dict[str, float]:
    """Modeled makespan on the host over the device's, for each host of :data:`BISCUIT_HOSTS`."""
    import device_emulator
    from ndp_core.device import DEVICE, HOST

    out = {}
    for label, cores in BISCUIT_HOSTS.items():
        profile = device_emulator.load_profile("biscuit-pm", **{"host.cores": cores})
        host, device = (device_emulator.simulate(profile, tasks, side, timeline=False).report.makespan_s
                        for side in (HOST, DEVICE))
        out[label] = host / device
    return out


def _sampled_decisions(path: Path, filters: list, expected: pa.Table) -> dict:
    """``split="sampled"`` reads against each host: the decision, and whether the Table is ``expected``."""
    import arrow_bridge
    from device_emulator import ComputationalSSD
    from ndp_core.report import collect

    out = {}
    for label, cores in BISCUIT_HOSTS.items():
        with collect() as runs:
            table = arrow_bridge.read_csv(path, usecols=BISCUIT_COLUMNS, filters=filters,
                                          device=ComputationalSSD("biscuit-pm", **{"host.cores": cores}),
                                          split="sampled")
        decision = runs.reports[0].decisions[0]
        out[label] = {"choice": decision.choice, "selectivity": decision.selectivity,
                      "sampled_rows": decision.sampled_rows, "host_s": decision.host_s,
                      "device_s": decision.device_s, "same_table": table.equals(expected)}
    return out


def _recorded_tasks(path: Path, read: Callable[..., Any], task_bytes: int, page_size: int) -> list:
    """The read's tasks, cut at ``task_bytes``, their pages numbered in ``page_size`` as a device's."""
    from arrow_bridge.executors import TaskRecorder

    recorder = TaskRecorder(page_size=page_size)
    read(str(path), device=recorder, block_size=task_bytes)
    return recorder.tasks


def matcher_keys(filters: list) -> list[bytes]:
    """The keys Biscuit's matcher would look for in an AND-group of terms: the
    text of the values of the ``=``/``in`` term with the longest (at most
    :data:`MATCHER_KEYS`) values; none when no term has such values (the
    matcher cannot help).

    >>> matcher_keys(BISCUIT_QUERIES["query2"]), matcher_keys(BISCUIT_QUERIES["unselective"])
    ([b'1995-01-17', b'1995-01-18'], [])
    """
    candidates = []
    for column, op, *value in filters:
        values = value[0] if op == "in" else value if op in ("=", "==") else []
        if 0 < len(values) <= MATCHER_KEYS:
            candidates.append([str(v).encode() for v in values])
    return max(candidates, key=lambda keys: min(map(len, keys)), default=[])


def _matcher_what_if(path: Path, tasks: list, filters: list, page_size: int) -> dict:
    """What-if (not built): the matcher drops the pages that hold none of
    :func:`matcher_keys` before the cores parse them. Each task's parse work
    (and filter tests) shrinks to the share of its pages holding a key; what
    the matcher scans, the rows kept and what crosses the link stay. Modeled
    speed-up of the device over each host, and the share of pages the cores see."""
    from ndp_core.device import TaskWork

    keys = matcher_keys(filters)
    text = path.read_bytes()
    offset = text.index(b"\n") + 1  # the header
    scaled, pages, passing = [], 0, 0
    for task in tasks:
        body = text[offset: offset + task.text_bytes]
        offset += task.text_bytes
        held = [not keys or any(key in body[i: i + page_size] for key in keys)
                for i in range(0, max(1, len(body)), page_size)]
        pages, passing = pages + len(held), passing + sum(held)
        share = sum(held) / len(held)
        counters = {name: count if name in MATCHER_KEEPS else round(count * share)
                    for name, count in task.counters.items()}
        scaled.append(TaskWork(task.index, task.first_page, task.n_pages, task.text_bytes, task.object_bytes,
                               counters, task.side))
    return {"keys": [key.decode() for key in keys], "pages_to_cores": passing / pages, **_speedups(scaled)}


# ---- 3. modern-gen4 ------------------------------------------------------------------------------------
def modern(path: Path, selectivities: Sequence[float] = MODERN_SELECTIVITIES) -> list[dict]:
    """``SELECT * WHERE l_shipdate < d`` with ``d`` at each selectivity's
    quantile of the file's ship dates, under ``modern-gen4``: modeled speed-up
    of ``device`` and ``dynamic`` over the host path, with its 8 cores and with one."""
    import arrow_bridge
    import device_emulator

    days = np.sort(arrow_bridge.read_csv(path, usecols=["l_shipdate"]).column(0).to_numpy().astype("datetime64[D]"))
    rows = []
    for target in selectivities:
        cutoff = days[min(len(days) - 1, int(target * len(days)))] + np.timedelta64(int(target >= 1), "D")
        filters = [("l_shipdate", "<", cutoff.item())]
        sweep = device_emulator.sweep(path, reader=functools.partial(arrow_bridge.read_csv, filters=filters),
                                      profiles="modern-gen4", splits=MODERN_SPLITS, overrides=MODERN_HOSTS)
        frame = sweep.frame
        row = {"target": target, "selectivity": float(np.searchsorted(days, cutoff) / len(days)),
               "cutoff": str(cutoff)}
        for split in MODERN_SPLITS[1:]:
            for cores in MODERN_HOSTS["host.cores"]:
                point = frame[(frame["split"] == split) & (frame["host.cores"] == cores)]
                row[f"{split}, {cores} host core{'s' if cores > 1 else ''}"] = float(point["speedup"].iloc[0])
        host = frame[(frame["split"] == MODERN_SPLITS[0]) & (frame["host.cores"] == max(MODERN_HOSTS["host.cores"]))]
        row["host path busy"] = {"host_cpu": float(host["host_cpu_util"].iloc[0]), "link": float(host["link_util"].iloc[0])}
        rows.append(row)
    return rows


def plot_modern(rows: list[dict], out: Path) -> None:
    """Speed-up against selectivity, one line per (split, host)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, ax = plt.subplots(figsize=(7, 4.2), layout="constrained")
    x = [row["selectivity"] for row in rows]
    for i, key in enumerate(k for k in rows[0] if "host core" in k):
        ax.plot(x, [row[key] for row in rows], marker="o", color=f"C{i}", ls="-" if "8 host" in key else "--",
                label=key.replace("device,", "pushdown (split=device),").replace("dynamic,", "split=dynamic,"))
    ax.axhline(1.0, color="0.4", lw=0.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}x"))
    ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xlabel("selectivity (fraction of lineitem rows kept)")
    ax.set_ylabel("modeled speed-up over the host path")
    ax.set_title("modern-gen4: SELECT * FROM lineitem WHERE l_shipdate < d", fontsize="medium")
    ax.legend(fontsize="small", frameon=False)
    fig.savefig(out, dpi=130)
    plt.close(fig)


# ---- the report ------------------------------------------------------------------------------------
def markdown(results: dict) -> str:
    """The results as the Markdown report (``pushdown-model.md``), with why each figure differs from the paper's."""
    lines = ["# Pushdown, modeled: Summarizer, Biscuit and modern-gen4", "",
             "`python -m benchmarks.pushdown_model`: the timing model on the work counters of real reads "
             "(the parse's and the span stages') of TPC-H lineitem. Modeled figures are deterministic.", ""]
    lines += _summarizer_md(results["summarizer"], results["files"]["summarizer"])
    lines += _biscuit_md(results["biscuit"], results["files"]["biscuit"])
    lines += _modern_md(results["modern"], results["files"]["modern"])
    from device_emulator import load_profile

    table = load_profile("modern-gen4").data["host"]["cycles"]
    lines += ["## Span-stage prices on this host", "",
              "Cycles per unit at this CPU's clock (`stage_prices`), this run, beside the measurement "
              "`modern-gen4.toml`'s `[host.cycles]` holds (the other profiles' tables derive from it).", "",
              "| counter | this run | modern-gen4 host |", "| --- | ---: | ---: |"]
    lines += [f"| `{name}` | {price:.1f} | {table[name]:.1f} |" for name, price in results["stage_prices"].items()]
    return "\n".join(lines) + "\n"


def _summarizer_md(s: dict, file: str) -> list[str]:
    queries = s["queries"]
    out = [f"## Summarizer (`{s['profile']}`, {file})", "",
           f"Tasks of {s['task_bytes'] >> 10} KiB; the board's internal bandwidth is "
           f"{s['internal_over_link']:.1f}x its link's. Gains over host-only (modeled makespan); tolerance "
           f"±{GAIN_TOLERANCE_PP:g} points per query, ±{GAIN_16X_TOLERANCE_PP:g} on the 16x average.", "",
           "| query | host-only | static shares: gain | best static | dynamic (paper) | within | "
           "dynamic, 16x compute |", "| --- | ---: | --- | ---: | ---: | --- | ---: |"]
    for name, q in queries.items():
        paper = SUMMARIZER_GAINS[name]
        best = q["best_static"]
        static = ", ".join(f"{split[7:]}: {gain:+.1f}%" for split, gain in q["static"].items())
        out.append(f"| {name.upper()} | {q['host_s']:.3f} s | {static} | {best} {q['static'][best]:+.1f}% | "
                   f"{q['dynamic']:+.1f}% ({paper:+.1f}%) | {_within(q['dynamic'], paper, GAIN_TOLERANCE_PP)} | "
                   f"{q['dynamic_16x']:+.1f}% |")
    if not queries:
        return out + [""]
    mean = sum(q["dynamic_16x"] for q in queries.values()) / len(queries)
    out += ["", f"16x compute (two cores at 8x), dynamic, average: **{mean:+.1f}%** (paper {SUMMARIZER_16X:+.1f}%,"
            f" {_within(mean, SUMMARIZER_16X, GAIN_16X_TOLERANCE_PP)}).", "", "Why the figures differ:", ""]
    q1 = queries.get("q1")
    if q1:
        out.append(f"* **Q1 gains least, as in the paper**, for the paper's reason: most rows pass its filter and "
                   f"each kept row costs {q1['updates_per_row']} partial-aggregate updates, "
                   f"{q1['updates_per_row'] * s['update_cycles']:,.0f} cycles on the {s['core_MHz']:g} MHz core "
                   f"(`aggregate_updates` at {s['update_cycles']:g}: twice the reader's measured price), more than "
                   "parsing the row; its host-only run is the only one bound by the host rather than the link.")
    out += [f"* **Every 1x gain is a few points under the paper's.** The dynamic split's task queue "
            f"({s['slots']} slots of {s['task_bytes'] >> 10} KiB) still holds up to "
            f"{s['slots'] * s['task_bytes'] >> 20} MiB when the host runs out of pages, which the slow core "
            "finishes alone; Summarizer's queue holds 8 KB pages. And our host-only run overlaps the link and "
            "the host's work (its makespan is the larger of the two), where Summarizer's Fig. 5 stacks host and "
            "SSD time: offloading a page removes less time here.",
            "* **Q6 and Q14 come out alike**: both read four columns, keep few rows and are link-bound on the host; "
            "Q14's join with part runs on the host in both runs and is not modeled (the paper's Q14 gains most, "
            "its host's join work per page being what the device saves).",
            f"* **16x compute.** The dynamic split then parses (nearly) every page on the device and the read is "
            f"bound by the flash, {s['internal_over_link']:g}x the link: a link-bound query gains at most "
            f"{100 * (s['internal_over_link'] - 1):.0f}%, less the pages read twice at task boundaries (one in 17 "
            "at 128 KiB tasks of 8 KB pages) and the run's start and end; a host-bound one (Q1) can gain more, as "
            "the paper's Q1 (+120%) does. The paper's average (+94.5%) sits near that bound too.", ""]
    return out


def _within(got: float, paper: float, tolerance: float) -> str:
    return "yes" if abs(got - paper) <= tolerance else f"no ({got - paper:+.1f} points)"


def _biscuit_md(b: dict, file: str) -> list[str]:
    hosts = list(BISCUIT_HOSTS)
    out = [f"## Biscuit (`biscuit-pm`, {file})", "",
           "`SELECT l_orderkey, l_shipdate, l_linenumber` with each filter. Selectivity: rows kept, and pages "
           "(16 KiB spans) holding a kept row (Biscuit's definition). Speed-up: modeled host makespan over the "
           "device's (`split=\"device\"`), against biscuit-pm's 12 Xeon cores and against one thread. The sampled "
           "decision is a real `split=\"sampled\"` read (same Table as the host path's: "
           f"{'yes' if all(d['same_table'] for q in b.values() for d in q['sampled'].values()) else 'NO'}).", "",
           "| query | filter | rows kept | pages | device vs " + " | vs ".join(hosts) + " | paper | sampled decision "
           "vs " + " / ".join(hosts) + " |", "| --- | --- " + "| ---: " * (3 + len(hosts)) + "| --- |"]
    for name, q in b.items():
        paper = BISCUIT_SPEEDUPS.get(name)
        out.append(f"| {name} | `{q['filters']}` | {q['row_selectivity']:.5f} | {q['page_selectivity']:.3f} | "
                   + " | ".join(f"{q['speedup'][h]:.2f}x" for h in hosts)
                   + f" | {f'~{paper:g}x' if paper else '-'} | " + " / ".join(q["sampled"][h]["choice"] for h in hosts)
                   + " |")
    out += ["", "What-if, not built: Biscuit's matcher drops the pages holding none of the filter's keys before "
            "the cores (each task's parse work shrinks to its pages that hold one; the scan, kept rows and link "
            "stay):", "", "| query | keys | pages to the cores | device vs " + " | vs ".join(hosts) + " |",
            "| --- | --- | ---: " + "| ---: " * len(hosts) + "|"]
    for name, q in b.items():
        w = q["what_if_matcher"]
        out.append(f"| {name} | {', '.join(w['keys']) or '(none)'} | {w['pages_to_cores']:.3f} | "
                   + " | ".join(f"{w[h]:.2f}x" for h in hosts) + " |")
    out += ["", "Why the figures differ:", "",
            "* **Our device parses every record.** The CSV app runs on biscuit-pm's two 750 MHz cores, the matcher "
            "finding only the delimiters: every field of every row is tokenized and the three columns converted "
            "before the filter drops a row. That is several times slower than the 12 host cores, and about twice "
            "one host thread's speed, whatever the selectivity.",
            "* **Selectivity moves only the link's bytes here**, and biscuit-pm's link (3.4 GB/s) never bounds "
            "either path: the sampled decision therefore declines the low-selectivity query, as Biscuit's "
            "planner does, but declines the selective ones too against 12 cores, and takes all three against one "
            "thread. It flips with selectivity where the link is what the device saves (`summarizer-board` at 16x "
            "with its host's four cores: `tests/arrow_bridge/test_filters.py`).",
            "* **Biscuit's ~11x and ~10x** come from its per-channel matcher dropping the pages without the key "
            "at flash speed, so the cores and the host see a few percent of the table, and from a slow `Conv` "
            "(MariaDB evaluating InnoDB rows on one thread). The what-if gives the first part: the key also "
            "occurs in `l_commitdate` and `l_receiptdate`, so more pages reach the cores than hold a kept row, "
            "and those still pay the parse and 117 us per task; our host is priced as HODS's deserializer "
            "(the Xeon table), not as MariaDB.",
            "* **Pages:** Biscuit reports 0.02 and 0.04 (InnoDB pages of a SF100 table); our 16 KiB spans of "
            "CSV hold ~130 rows each, so a day's rows touch a larger share of them.", ""]
    return out


def _modern_md(rows: list[dict], file: str) -> list[str]:
    keys = [k for k in rows[0] if "host core" in k]
    busy = rows[0]["host path busy"]
    out = [f"## modern-gen4 ({file}): speed-up over the host path by selectivity", "",
           "`SELECT * WHERE l_shipdate < d`; plot: `pushdown-model.png`.", "",
           "| selectivity | " + " | ".join(keys) + " |", "| ---: " * (1 + len(keys)) + "|"]
    out += [f"| {row['selectivity']:.4f} | " + " | ".join(f"{row[k]:.3f}x" for k in keys) + " |" for row in rows]
    out += ["", "The answer: against this reader on 8 host cores, pushing a filter into a contemporary SSD does not "
            "pay at any selectivity. Its four Arm cores (at twice the reader's cycles) parse every row before the "
            "filter, several times slower than the host. The host path keeps its eight cores and the link (7 GB/s) "
            f"busy {busy['host_cpu']:.0%} and {busy['link']:.0%} of the read at selectivity {rows[0]['selectivity']:.4f}"
            "; pushed down, the read is bound by the device's cores at every selectivity, so the link bytes a selective filter saves buy nothing. The device helps as extra cores beside a host with few free ones "
            "(one host core: the dynamic split), and would pay where the link is slow or shared, or where the "
            "device drops data before parsing it. Beside 8 host cores the dynamic split loses a little: its "
            "queue (32 tasks of 128 KiB) is still full when the host runs out of pages, and the device's cores "
            "finish it alone.", ""]
    return out


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.pushdown_model",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale-factor", type=float, default=1.0, help="lineitem for Summarizer's queries")
    parser.add_argument("--slice-mb", type=float, default=100.0, help="lineitem head for Biscuit and modern-gen4")
    parser.add_argument("--no-save", action="store_true", help="print only")
    args = parser.parse_args(argv)
    from benchmarks import datasets

    full = datasets.make("lineitem", scale_factor=args.scale_factor, data_dir=DATA_DIR)
    head = lineitem_slice(args.slice_mb)
    results = {"host": host_info(), "files": {"summarizer": full.name, "biscuit": head.name, "modern": head.name},
               "stage_prices": stage_prices()}
    results["summarizer"] = summarizer(full)
    results["biscuit"] = biscuit(head)
    results["modern"] = modern(head)
    text = markdown(results)
    print(text)
    if not args.no_save:
        write_result("pushdown-model.json", results)
        (RESULTS_DIR / "pushdown-model.md").write_text(text)
        plot_modern(results["modern"], RESULTS_DIR / "pushdown-model.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
