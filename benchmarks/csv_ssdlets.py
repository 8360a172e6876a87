"""The reader's CSV app as SSDlets: TPC-H Q6's filter on lineitem as a graph (parse -> filter),
Q1's aggregates (parse -> filter -> aggregate), and Biscuit's two ``l_shipdate`` queries with
its pattern matcher in front.

    python -m benchmarks.csv_ssdlets [--scale-factor 0.05] [--repeat 3]

Runs ``arrow_bridge.csv_ssdlets``' parse and row filter with each placement
(both on the device, parse on the device and filter on the host, both on the
host; and the parse spread over four device or two host instances, whole
records dealt to them in turn) and prints wall seconds (best of ``--repeat``; the emulator runs the real
kernels here), the bytes that crossed the link and the modeled milliseconds on
``modern-gen4`` and ``summarizer-board``; beside it, in the same process,
``arrow_bridge.read_csv(filters=...)`` (the reader's built-in filter stage) and
pyarrow's ``read_csv`` + ``Table.filter``. Every graph's Table must equal the
reader's (checked). Q1's filter and its aggregates that need no derived column, on
``summarizer-board`` with the aggregate on the device or the host, beside
``arrow_bridge.aggregate_csv`` (each answer checked equal to it).

Biscuit (*Biscuit: A Framework for Near-Data Processing of Big Data
Workloads*, ISCA 2016, Sec. V-C): ``l_shipdate = '1995-1-17'``, and
``l_shipdate`` on the 17th or 18th with ``l_linenumber`` 1 or 2, run by ``arrow_bridge.csv_ssdlets.scan_filter``
on ``biscuit-pm`` both ways (the host parsing every record, as the paper's
Conv scanned every row on one MariaDB thread; the device's matcher sending
only the records holding a key), plus a query whose every record holds a key
(all seven ship modes), which the sampled decision should decline. Prints the
modeled times, their ratio (the paper: about 11x and 10x), the fraction of the
device's pages holding a key (the paper's "selectivity", 0.02 and 0.04) and
the decision. Last, the span stage question: Q6's filter on each span's columns
(spans of about 1 MiB of text) as ``row_filter``'s compiled body called directly (no
graph, no packets; with and without the runtime's bounds checks and fuel) beside
the span stage's ``pyarrow.compute`` selection and ``take``, with the seconds the
body takes to compile. Writes ``benchmarks/results/csv-ssdlets.json``.
"""
from __future__ import annotations

import argparse
import time
from datetime import date
from pathlib import Path

from benchmarks.common import host_info, warm_page_cache, write_result
from benchmarks.pushdown import QUERIES

#: (parse's side, filter's side, parse instances): more than one is a split into whole
#: records dealt to the parsers in turn (csv_ssdlets.parse_in_parallel), all on one side
PLACEMENTS = {"both on the device": ("device", "device", 1), "parse on the device": ("device", "host", 1),
              "both on the host": ("host", "host", 1), "device, 4 parsers": ("device", "device", 4),
              "host, 2 parsers": ("host", "host", 2)}
PROFILES = ("modern-gen4", "summarizer-board")
#: TPC-H Q1 without its derived columns (an SSDlet aggregate takes columns as they are).
Q1_AGGREGATES = [("l_quantity", "sum"), ("l_extendedprice", "sum"), ("l_quantity", "mean"),
                 ("l_extendedprice", "mean"), ("l_discount", "mean"), ("l_quantity", "count")]
Q1_GROUPS = ["l_returnflag", "l_linestatus"]
AGGREGATE_PLACEMENTS = {"all on the device": ("device", "device", "device"),
                        "aggregate on the host": ("device", "device", "host"), "all on the host": ("host", "host", "host")}
BISCUIT_QUERIES = {
    "query1": [("l_shipdate", "=", date(1995, 1, 17))],
    "query2": [("l_shipdate", "in", [date(1995, 1, 17), date(1995, 1, 18)]), ("l_linenumber", "in", [1, 2])],
    "every mode": [("l_shipmode", "in", ["AIR", "FOB", "MAIL", "RAIL", "REG AIR", "SHIP", "TRUCK"])],
}


def run_graph(ssd, path: Path, placement: tuple[str, str, int], parse, keep):
    """One run of parse -> filter; returns (wall seconds, Table, RunResult)."""
    from arrow_bridge.csv_ssdlets import connect_columns, parse_in_parallel
    from ndp_core.ssdlets import Application

    parse_side, filter_side, instances = placement
    app = Application(ssd, pages_per_packet=64)
    kept = app.add(keep, on=filter_side)
    if instances == 1:
        scan = app.add(parse, on=parse_side)
        app.scan(scan.pages, path)
        connect_columns(app, scan, kept)
    else:
        connect_columns(app, parse_in_parallel(app, path, instances, on=parse_side, schema=parse.schema).parsers, kept)
    for port in keep.columns:
        app.collect(kept.port(port))
    started = time.perf_counter()
    result = app.run()
    return time.perf_counter() - started, keep.table(result, kept), result


def _prices(work, device, parse_name: str) -> dict:
    """The prices of a node's counters on ``device``'s profile."""
    from arrow_bridge.csv_ssdlets import parse_prices, split_records
    from arrow_bridge.csv_ssdlets.programs import stage_prices

    if work.program == parse_name:
        return parse_prices(device)
    if work.program == "split_records":
        return dict(split_records(device=device).work)
    return {name: price for name, price in stage_prices(device).items() if name in work.prices}


def best(function, repeat: int):
    runs = [function() for _ in range(repeat)]
    return min(runs, key=lambda run: run[0])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale-factor", type=float, default=0.05, help="lineitem's TPC-H scale factor (default 0.05)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per row; the best is kept (default 3)")
    args = parser.parse_args(argv)

    import pyarrow.csv as pacsv

    import arrow_bridge
    from arrow_bridge.csv_ssdlets import csv_parser, row_filter
    from arrow_bridge.filters import RowFilter
    from benchmarks.datasets import make
    from device_emulator import ComputationalSSD

    path = make("lineitem", scale_factor=args.scale_factor)
    warm_page_cache(path)
    filters = QUERIES["q6"].filters
    started = time.perf_counter()
    parse = csv_parser(path)
    keep = row_filter(filters, parse.schema)
    expected = arrow_bridge.read_csv(path, filters=filters)
    rows: dict[str, dict] = {}
    with ComputationalSSD(PROFILES[0]) as ssd:
        run_graph(ssd, path, ("host", "host", 1), parse, keep)  # compiles both programs
        compile_s = time.perf_counter() - started
        run_graph(ssd, path, ("host", "host", 2), parse, keep)  # and the splitter and the parse of records
        for label, placement in PLACEMENTS.items():
            wall, table, result = best(lambda: run_graph(ssd, path, placement, parse, keep), args.repeat)
            if not table.equals(expected):
                raise SystemExit(f"{label}: the graph's Table differs from read_csv(filters=...)")
            rows[label] = {"wall_s": round(wall, 4), "link_bytes": sum(w.link_bytes for w in result.work)}
            for profile in PROFILES:
                with ComputationalSSD(profile) as device:
                    for work in result.work:  # the counters at this profile's prices
                        work.prices = _prices(work, device, parse.name)
                    model = device.model_ssdlets(result.work)
                rows[label][f"modeled_ms_{profile}"] = round(model.makespan_s * 1e3, 3)
                rows[label][f"bottleneck_{profile}"] = model.bottleneck
    reader = best(lambda: _timed(lambda: arrow_bridge.read_csv(path, filters=filters)), args.repeat)[0]
    expression = RowFilter(filters).expression
    peer = best(lambda: _timed(lambda: pacsv.read_csv(path).filter(expression)), args.repeat)[0]
    print(f"lineitem SF{args.scale_factor:g} ({path.stat().st_size / 1e6:.0f} MB), Q6's filter, "
          f"{expected.num_rows} rows kept; programs made ({parse.compiled_how}, {keep.compiled_how}) "
          f"and first run in {compile_s:.1f} s")
    print(f"{'':<22}{'wall s':>9}{'link MB':>10}" + "".join(f"{p + ' ms':>22}" for p in PROFILES)
          + f"{'bound on ' + PROFILES[0]:>22}")
    for label, row in rows.items():
        print(f"{label:<22}{row['wall_s']:>9.3f}{row['link_bytes'] / 1e6:>10.1f}"
              + "".join(f"{row[f'modeled_ms_{p}']:>22.1f}" for p in PROFILES)
              + f"{row[f'bottleneck_{PROFILES[0]}']:>22}")
    print(f"{'read_csv(filters=)':<22}{reader:>9.3f}   (the reader's built-in filter stage, host)")
    print(f"{'pyarrow + filter':<22}{peer:>9.3f}")
    aggregates = q1_aggregates(path, args.repeat)
    biscuit = biscuit_queries(path)
    stage = span_stage(path, filters, args.repeat)
    write_result("csv-ssdlets.json", {"host": host_info(), "file": str(path), "file_bytes": path.stat().st_size,
                                      "rows_kept": expected.num_rows, "compile_and_first_run_s": round(compile_s, 2),
                                      "programs_came": [parse.compiled_how, keep.compiled_how],
                                      "placements": rows, "read_csv_filters_s": round(reader, 4),
                                      "pyarrow_read_filter_s": round(peer, 4), "q1_aggregates": aggregates,
                                      "biscuit": biscuit, "span_stage": stage})
    return 0


def q1_aggregates(path: Path, repeat: int) -> dict[str, dict]:
    """Q1's filter and aggregates (no derived columns) as parse -> filter -> aggregate on
    summarizer-board, beside aggregate_csv; every placement's answer checked against it."""
    import arrow_bridge
    from arrow_bridge.csv_ssdlets import connect_columns, csv_parser, group_aggregate, row_filter
    from device_emulator import ComputationalSSD
    from ndp_core.ssdlets import Application

    filters = QUERIES["q1"].filters
    expected = arrow_bridge.aggregate_csv(path, Q1_AGGREGATES, group_by=Q1_GROUPS, filters=filters)
    rows: dict[str, dict] = {}
    with ComputationalSSD("summarizer-board") as ssd:
        parse = csv_parser(path, device=ssd)
        keep = row_filter(filters, parse.schema, device=ssd)
        add = group_aggregate(Q1_AGGREGATES, parse.schema, group_by=Q1_GROUPS, device=ssd)

        def run(sides):
            app = Application(ssd, pages_per_packet=64)
            nodes = [app.add(program, on=side) for program, side in zip((parse, keep, add), sides)]
            app.scan(nodes[0].pages, path)
            connect_columns(app, nodes[0], nodes[1])
            connect_columns(app, nodes[1], nodes[2])
            for port in add.outputs:
                app.collect(nodes[2].port(port))
            started = time.perf_counter()
            result = app.run()
            return time.perf_counter() - started, add.table(result, nodes[2]), result

        for label, sides in AGGREGATE_PLACEMENTS.items():
            wall, table, result = best(lambda: run(sides), repeat)
            if not table.equals(expected):
                raise SystemExit(f"Q1 aggregates, {label}: the graph's answer differs from aggregate_csv's")
            rows[label] = {"wall_s": round(wall, 4), "link_bytes": sum(w.link_bytes for w in result.work),
                           "modeled_ms": round(result.model.makespan_s * 1e3, 3),
                           "bound_by": result.model.bottleneck}
    reader = best(lambda: _timed(lambda: arrow_bridge.aggregate_csv(path, Q1_AGGREGATES, group_by=Q1_GROUPS,
                                                                      filters=filters)), repeat)[0]
    rows["aggregate_csv (host, span stages)"] = {"wall_s": round(reader, 4)}
    print("\nQ1's filter and aggregates (no derived columns) on summarizer-board")
    print(f"{'':<36}{'wall s':>9}{'link KB':>10}{'modeled ms':>12}")
    for label, row in rows.items():
        print(f"{label:<36}{row['wall_s']:>9.3f}" + (f"{row['link_bytes'] / 1e3:>10.1f}{row['modeled_ms']:>12.1f}"
                                                    f"  ({row['bound_by']})" if "modeled_ms" in row else ""))
    return rows


def biscuit_queries(path: Path) -> dict[str, dict]:
    """Biscuit's queries through scan_filter on biscuit-pm, both plans and the sampled choice."""
    import arrow_bridge
    from arrow_bridge.csv_ssdlets import scan_filter
    from device_emulator import ComputationalSSD

    rows = {}
    with ComputationalSSD("biscuit-pm") as ssd:
        for name, filters in BISCUIT_QUERIES.items():
            expected = arrow_bridge.read_csv(path, filters=filters)
            modeled, decisions = {}, {}
            for plan in ("sampled", "parse_all", "prefilter"):
                table, result, decisions[plan] = scan_filter(path, filters, ssd, plan=plan)
                if not table.equals(expected):
                    raise SystemExit(f"{name} ({plan}): the graph's Table differs from read_csv(filters=...)")
                modeled[plan] = result.model
            decision = decisions["sampled"]
            rows[name] = {"rows_kept": expected.num_rows, "keys": list(decision.keys),
                          "pages_with_a_key": round(pages_holding(path, decision.keys, ssd.page_size), 4),
                          "sampled_selectivity": round(decision.selectivity, 5),
                          "sampled_parse_all_ms": round(decision.parse_all_s * 1e3, 3),
                          "sampled_prefilter_ms": round(decision.prefilter_s * 1e3, 3),
                          "decision": "prefilter" if decision.prefilter else "parse all",
                          "parse_all_ms": round(modeled["parse_all"].makespan_s * 1e3, 3),
                          "parse_all_bound_by": modeled["parse_all"].bottleneck,
                          "prefilter_ms": round(modeled["prefilter"].makespan_s * 1e3, 3),
                          "prefilter_bound_by": modeled["prefilter"].bottleneck,
                          "speedup": round(modeled["parse_all"].makespan_s / modeled["prefilter"].makespan_s, 2)}
    print("\nBiscuit's queries on biscuit-pm (modeled ms; Conv = the host parses every record on one thread)")
    print(f"{'':<12}{'rows':>8}{'pages w/ key':>14}{'Conv':>10}{'matcher':>10}{'speed-up':>10}  sampled decision")
    for name, row in rows.items():
        print(f"{name:<12}{row['rows_kept']:>8}{row['pages_with_a_key']:>14.4f}{row['parse_all_ms']:>10.1f}"
              f"{row['prefilter_ms']:>10.1f}{row['speedup']:>9.2f}x  {row['decision']} "
              f"(sample: {row['sampled_selectivity']:.4f} of records sent)")
    return rows


#: Rows of lineitem in about 1 MiB of its text: the reader's span on this file.
SPAN_ROWS = 8192


def span_stage(path: Path, filters, repeat: int) -> dict[str, float]:
    """Seconds to filter every span's columns: ``row_filter``'s body, compiled by Numba
    and called on the span's arrays, beside the span stage's pyarrow.compute; and the
    seconds each body took to compile (once per filter and process)."""
    import numba
    import numpy as np

    import arrow_bridge
    from arrow_bridge.csv_ssdlets import row_filter
    from arrow_bridge.filters import RowFilter
    from ndp_core.ssdlets.metering import metered_function

    columns = sorted({column for group in RowFilter(filters).groups for column in (p.column for p in group)})
    table = arrow_bridge.read_csv(path, usecols=columns)
    started = time.perf_counter()
    keep = row_filter(filters, table.schema)  # generated, and compiled as a graph's StorageApp
    graph_compile_s = time.perf_counter() - started
    spans = [table.slice(k, SPAN_ROWS) for k in range(0, table.num_rows, SPAN_ROWS)]
    ports = [_span_ports(keep, span) for span in spans]
    fuel = np.full(1, 1 << 40, np.int64)
    bodies = {"program body": (numba.njit(keep.func), ()),
              "program body, checked and metered": (numba.njit(boundscheck=True)(metered_function(keep.func)), (fuel,))}
    row: dict[str, float] = {"spans": len(spans), "row_filter as a StorageApp compile_s": round(graph_compile_s, 3)}
    for label, (body, extra) in bodies.items():
        row[f"{label} compile_s"] = round(_timed(lambda: body(ports[0], *extra))[0], 3)
        row[f"{label} s"] = round(best(lambda: _timed(lambda: [body(p, *extra) for p in ports]), repeat)[0], 5)
    selection = RowFilter(filters)

    def pyarrow_stage():
        for span in spans:
            kept = selection.selection({name: span.column(name) for name in columns}, span.num_rows)
            _ = span.columns if kept is None else [column.take(kept) for column in span.columns]

    row["pyarrow.compute stage s"] = round(best(lambda: _timed(pyarrow_stage), repeat)[0], 5)
    print(f"\nQ6's filter on {len(spans)} spans of {SPAN_ROWS} rows (the span stage's work alone); "
          f"row_filter made its StorageApp in {graph_compile_s:.2f} s")
    for label in (*bodies, "pyarrow.compute stage"):
        compiled = f"   compiled in {row[f'{label} compile_s']:.2f} s" if f"{label} compile_s" in row else ""
        print(f"{label:<36}{row[f'{label} s'] * 1e3:>9.2f} ms{compiled}")
    return row


def _span_ports(keep, span):
    """``p`` for ``keep``'s body over one span: its columns in, room for all of them out."""
    import numpy as np
    import pyarrow as pa

    from ndp_core.ssdlets.program import NullableView

    def view(column, empty):
        column = column.combine_chunks()
        values = (column.cast(pa.int32()) if column.type == pa.date32() else column).to_numpy()
        valid = np.asarray(column.is_valid(), np.uint8) if column.null_count else np.ones(len(column), np.uint8)
        return NullableView(np.zeros_like(values) if empty else values, np.zeros_like(valid) if empty else valid)

    ins = [view(column, False) for column in span.columns]
    outs = [view(column, True) for column in span.columns]
    values = [keep.args[name].dtype.type(value) for name, value in keep.arg_values.items()]  # the filter's values
    counters = [np.zeros(1, np.int64) for _ in keep.work]
    return keep.ports_tuple(*ins, *outs, *values, *counters, np.full(1, -1, np.int64), False)


def pages_holding(path: Path, keys, page_size: int) -> float:
    """The fraction of the file's ``page_size`` pages that hold one of ``keys`` (Biscuit's selectivity)."""
    data = path.read_bytes()
    pages = set()
    for key in keys:
        needle, at = key.encode(), data.find(key.encode())
        while at >= 0:
            pages.add(at // page_size)
            at = data.find(needle, at + 1)
    return len(pages) / max(1, -(-len(data) // page_size))


def _timed(function):
    started = time.perf_counter()
    function()
    return (time.perf_counter() - started,)


if __name__ == "__main__":
    raise SystemExit(main())
