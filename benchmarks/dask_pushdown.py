"""TPC-H Q6 written the Dask way on CSV: the filter pushed into the reads, or not, beside Dask's own reader.

Usage::

    python -m benchmarks.dask_pushdown [--scale-factor 1] [--workers 2] [--blocksize 64MiB] [--repeat 3]

``ddf[(ddf.l_shipdate >= start) & (ddf.l_shipdate < end) &
(ddf.l_discount >= 0.05) & (ddf.l_discount <= 0.07) & (ddf.l_quantity < 24)]``,
then ``(l_extendedprice * l_discount).sum()``, on a ``LocalCluster`` of
``--workers`` processes with one thread each. ``dask_plugin.read_csv`` reads the
dates as date32 (compared with ``datetime.date``), pandas as text (compared
with ISO strings). Three ways, interleaved, best of ``--repeat``:

* ``ndp-pushed``: ``dask_plugin.read_csv``; Dask's optimizer moves the filter
  into each partition's read (``dask_plugin.pushdown``);
* ``ndp-after``: the same reads of Q6's four columns behind an identity
  ``map_partitions``, which no filter passes: every row becomes a pandas
  row, then Dask filters;
* ``dask-pandas``: ``dask.dataframe.read_csv`` (pandas' C engine), filtered by Dask.

Every answer is checked against ``ndp-after``'s (relative difference 1e-9:
float sums depend on the order of the additions). Results:
``benchmarks/results/dask-pushdown-<dataset>-<workers>w.json``.
"""
from __future__ import annotations

import argparse
import gc
import os
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

from benchmarks import datasets
from benchmarks.common import host_info, local_cluster, package_versions, warm_page_cache, write_head, write_result

WAYS = ("ndp-pushed", "ndp-after", "dask-pandas")
Q6_COLUMNS = ("l_quantity", "l_extendedprice", "l_discount", "l_shipdate")
REL_TOL = 1e-9


def q6_revenue(ddf: Any, dates_as_text: bool) -> Any:
    """TPC-H Q6 on a Dask DataFrame of lineitem, its dates read as date32 or as text."""
    start, end = (("1994-01-01", "1995-01-01") if dates_as_text else (date(1994, 1, 1), date(1995, 1, 1)))
    kept = ddf[(ddf.l_shipdate >= start) & (ddf.l_shipdate < end) & (ddf.l_discount >= 0.05)
               & (ddf.l_discount <= 0.07) & (ddf.l_quantity < 24)]
    return (kept.l_extendedprice * kept.l_discount).sum()


def collection(way: str, path: Path, blocksize: str) -> Any:
    """The lineitem collection ``way`` reads (nothing computed yet)."""
    if way == "dask-pandas":
        import dask.dataframe as dd

        return dd.read_csv(str(path), blocksize=blocksize)
    import dask_plugin

    ddf = dask_plugin.read_csv(str(path), blocksize=blocksize)
    if way == "ndp-pushed":
        return ddf
    ddf = ddf[list(Q6_COLUMNS)]  # the projection still reaches the read; the filter does not
    return ddf.map_partitions(lambda part: part, meta=ddf._meta)


def timed(way: str, path: Path, blocksize: str) -> tuple[float, float, Any]:
    """Seconds (graph building included), the revenue, and the filters pushed."""
    import dask_plugin

    gc.collect()
    start = time.perf_counter()
    query = q6_revenue(collection(way, path, blocksize), dates_as_text=way == "dask-pandas")
    revenue = float(query.compute())
    seconds = time.perf_counter() - start
    pushed = dask_plugin.pushed_filters(query) if way != "dask-pandas" else None
    return seconds, revenue, pushed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.dask_pushdown", description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale-factor", type=float, default=datasets.DEFAULT_SCALE_FACTOR)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--blocksize", default="64MiB")
    parser.add_argument("--repeat", type=int, default=3, help="rounds; the best is reported")
    args = parser.parse_args(argv)
    path = datasets.make("lineitem", scale_factor=args.scale_factor)
    scratch = tempfile.TemporaryDirectory(prefix="dask-pushdown-")
    head = write_head(path, Path(scratch.name) / f"{path.stem}-head.csv", rows=2000)
    warm_page_cache(path)
    payload: dict[str, Any] = {"host": host_info(), "versions": package_versions(), "args": vars(args),
                               "path": str(path), "bytes": path.stat().st_size, "loadavg_before": os.getloadavg()}
    lc, client = local_cluster(args.workers)
    runs: list[dict[str, Any]] = []
    try:
        for way in WAYS:  # imports and JIT caches loaded on every worker first
            timed(way, head, args.blocksize)
        for rep in range(args.repeat):
            for way in WAYS[rep % len(WAYS):] + WAYS[:rep % len(WAYS)]:
                seconds, revenue, pushed = timed(way, path, args.blocksize)
                runs.append({"repeat": rep, "way": way, "seconds": seconds, "revenue": revenue, "pushed": pushed})
                print(f"  round {rep}: {way:<12} {seconds:.3f} s", flush=True)
    finally:
        client.close()
        lc.close()
    best = {way: min((r for r in runs if r["way"] == way), key=lambda r: r["seconds"]) for way in WAYS}
    reference = best["ndp-after"]["revenue"]
    print(f"\n== Q6 written the Dask way, {path.name}, {args.workers} workers x 1 thread, blocksize "
          f"{args.blocksize}, best of {args.repeat} ==")
    print(f"{'way':<13}{'best s':>8}{'ndp-pushed speed-up':>21}  answer")
    summary = {}
    for way, run in best.items():
        same = abs(run["revenue"] - reference) <= REL_TOL * abs(reference)
        ratio = run["seconds"] / best["ndp-pushed"]["seconds"]
        summary[way] = {"best_s": run["seconds"], "pushed_speedup": ratio, "revenue": run["revenue"], "same": same}
        print(f"{way:<13}{run['seconds']:>8.3f}{ratio:>20.2f}x  {'ok' if same else 'DIFFERS'} {run['revenue']:.4f}")
    print(f"filters pushed: {best['ndp-pushed']['pushed']}")
    payload.update(runs=runs, summary=summary, pushed=best["ndp-pushed"]["pushed"], loadavg_after=os.getloadavg())
    out = write_result(f"dask-pushdown-{path.stem}-{args.workers}w.json", payload)
    print(f"\nwrote {out}")
    scratch.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
