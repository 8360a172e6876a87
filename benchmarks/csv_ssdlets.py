"""The reader's CSV app as SSDlets: TPC-H Q6's filter on lineitem as a graph (parse -> filter).

    python -m benchmarks.csv_ssdlets [--scale-factor 0.05] [--repeat 3]

Runs ``arrow_bridge.csv_ssdlets``' parse and row filter with each placement
(both on the device, parse on the device and filter on the host, both on the
host) and prints wall seconds (best of ``--repeat``; the emulator runs the real
kernels here), the bytes that crossed the link and the modeled milliseconds on
``modern-gen4`` and ``summarizer-board``; beside it, in the same process,
``arrow_bridge.read_csv(filters=...)`` (the reader's built-in filter stage) and
pyarrow's ``read_csv`` + ``Table.filter``. Every graph's Table must equal the
reader's (checked). Writes ``benchmarks/results/csv-ssdlets.json``.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from benchmarks.common import host_info, warm_page_cache, write_result
from benchmarks.pushdown import QUERIES

PLACEMENTS = {"both on the device": ("device", "device"), "parse on the device": ("device", "host"),
              "both on the host": ("host", "host")}
PROFILES = ("modern-gen4", "summarizer-board")


def run_graph(ssd, path: Path, sides: tuple[str, str], parse, keep):
    """One run of parse -> filter; returns (wall seconds, Table, RunResult)."""
    from arrow_bridge.csv_ssdlets import connect_columns
    from ndp_core.ssdlets import Application

    app = Application(ssd, pages_per_packet=64)
    scan, kept = app.add(parse, on=sides[0]), app.add(keep, on=sides[1])
    app.scan(scan.pages, path)
    connect_columns(app, scan, kept)
    for port in keep.columns:
        app.collect(kept.port(port))
    started = time.perf_counter()
    result = app.run()
    return time.perf_counter() - started, keep.table(result, kept), result


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
    from arrow_bridge.csv_ssdlets import csv_parser, parse_prices, row_filter
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
        run_graph(ssd, path, ("host", "host"), parse, keep)  # compiles both programs
        compile_s = time.perf_counter() - started
        for label, sides in PLACEMENTS.items():
            wall, table, result = best(lambda: run_graph(ssd, path, sides, parse, keep), args.repeat)
            if not table.equals(expected):
                raise SystemExit(f"{label}: the graph's Table differs from read_csv(filters=...)")
            rows[label] = {"wall_s": round(wall, 4), "link_bytes": sum(w.link_bytes for w in result.work)}
            for profile in PROFILES:
                with ComputationalSSD(profile) as device:
                    for work in result.work:  # the parse counters at this profile's prices
                        work.prices = parse_prices(device) if work.program == parse.name else work.prices
                    model = device.model_ssdlets(result.work)
                rows[label][f"modeled_ms_{profile}"] = round(model.makespan_s * 1e3, 3)
                rows[label][f"bottleneck_{profile}"] = model.bottleneck
    reader = best(lambda: _timed(lambda: arrow_bridge.read_csv(path, filters=filters)), args.repeat)[0]
    expression = RowFilter(filters).expression
    peer = best(lambda: _timed(lambda: pacsv.read_csv(path).filter(expression)), args.repeat)[0]
    print(f"lineitem SF{args.scale_factor:g} ({path.stat().st_size / 1e6:.0f} MB), Q6's filter, "
          f"{expected.num_rows} rows kept; programs compiled and first run in {compile_s:.1f} s")
    print(f"{'':<22}{'wall s':>9}{'link MB':>10}" + "".join(f"{p + ' ms':>22}" for p in PROFILES))
    for label, row in rows.items():
        print(f"{label:<22}{row['wall_s']:>9.3f}{row['link_bytes'] / 1e6:>10.1f}"
              + "".join(f"{row[f'modeled_ms_{p}']:>22.1f}" for p in PROFILES))
    print(f"{'read_csv(filters=)':<22}{reader:>9.3f}   (the reader's built-in filter stage, host)")
    print(f"{'pyarrow + filter':<22}{peer:>9.3f}")
    write_result("csv-ssdlets.json", {"host": host_info(), "file": str(path), "file_bytes": path.stat().st_size,
                                 "rows_kept": expected.num_rows, "compile_and_first_run_s": round(compile_s, 2),
                                 "placements": rows, "read_csv_filters_s": round(reader, 4),
                                 "pyarrow_read_filter_s": round(peer, 4)})
    return 0


def _timed(function):
    started = time.perf_counter()
    function()
    return (time.perf_counter() - started,)


if __name__ == "__main__":
    raise SystemExit(main())
