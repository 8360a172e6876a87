"""Timeline figures of real device reads: one per shipped profile, one of a 2-worker Dask job.

Usage::

    python -m benchmarks.timelines [--mb 25] [--block-size BYTES] [--profiles summarizer-board,...]
                                   [--skip-dask] [--dpi 100]

A ~25 MB slice of TPC-H lineitem (the first records of ``data/lineitem-sf1.csv``,
or ``benchmarks.datasets.make_lineitem`` at a small scale factor when that file
is missing) is read with ``arrow_bridge.read_csv(path,
device=ComputationalSSD(profile), split="dynamic")`` (tasks of the profile's
``task_queue.task_bytes`` unless ``--block-size`` is given) for each profile of ``device_emulator.list_profiles()``, and the run's Report is
drawn with ``Report.plot_timeline()`` into
``benchmarks/results/timeline-<profile>.png``. Then the same file is read by
``dask_plugin.read_csv(..., device=key, split="dynamic")`` on a
``LocalCluster(n_workers=2, threads_per_worker=1)`` with
``install_devices(client, "summarizer-board")``; the job's Report
(``dask_plugin.job_report``) goes to
``benchmarks/results/timeline-dask-2workers.png``. What each figure shows (makespan,
pages by side, rows drawn, seconds to draw) goes to
``benchmarks/results/timeline-summary.json``.

Paths are relative to this package, so the script runs from any directory.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, Optional

if __package__ in (None, ""):  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import MB, RESULTS_DIR, host_info, lineitem_slice, package_versions, write_result

DASK_PROFILE = "summarizer-board"
DASK_WORKERS = 2


def save(report: Any, name: str, dpi: int) -> dict[str, Any]:
    """Draw ``report``'s timeline into ``results/timeline-<name>.png``; what was drawn."""
    import matplotlib.pyplot as plt

    from ndp_core.report.timeline import timeline_layout

    start = time.perf_counter()
    ax = report.plot_timeline()
    drawn = time.perf_counter() - start
    path = RESULTS_DIR / f"timeline-{name}.png"
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    ax.figure.savefig(path, dpi=dpi, bbox_inches="tight")
    plt.close(ax.figure)
    rows = timeline_layout(report)
    print(f"{path.relative_to(RESULTS_DIR.parent.parent)}: {report.device} [{report.split}] "
          f"makespan {report.makespan_s:.4f} s, {report.tasks} tasks, pages {report.pages}, "
          f"{len(rows)} rows ({sum(r.band for r in rows)} bands), drawn in {drawn:.2f} s, "
          f"{path.stat().st_size // 1024} KiB")
    return {"png": path.name, "device": report.device, "split": report.split, "tasks": report.tasks,
            "makespan_s": report.makespan_s, "pages": dict(report.pages), "timeline_entries": len(report.timeline),
            "rows": [row.label for row in rows], "bands": [row.label for row in rows if row.band],
            "plot_s": round(drawn, 3), "png_bytes": path.stat().st_size}


def profile_runs(path: Path, profiles: list[str], block_size: Optional[int], dpi: int) -> list[dict[str, Any]]:
    """One dynamic-split read per profile, each drawn to its own PNG."""
    import arrow_bridge
    import ndp_core.report
    from device_emulator import ComputationalSSD

    out = []
    for profile in profiles:
        with ndp_core.report.collect() as runs:
            ssd = ComputationalSSD(profile)
            table = arrow_bridge.read_csv(path, device=ssd, split="dynamic", block_size=block_size)
        entry = save(runs.total, profile, dpi)
        entry.update(profile=profile, rows_read=table.num_rows, block_size=block_size or ssd.task_bytes)
        out.append(entry)
    return out


def dask_run(path: Path, block_size: Optional[int], dpi: int) -> dict[str, Any]:
    """The file read by a 2-worker LocalCluster, an emulated SSD per worker, dynamic split."""
    import dask_plugin
    from distributed import Client, LocalCluster

    blocksize = max(path.stat().st_size // (4 * DASK_WORKERS), 1 << 20)  # ~4 partitions per worker
    with LocalCluster(n_workers=DASK_WORKERS, threads_per_worker=1, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        key = dask_plugin.install_devices(client, DASK_PROFILE)
        with dask_plugin.job_report(client) as job:
            frame = dask_plugin.read_csv(str(path), device=key, split="dynamic", blocksize=blocksize,
                                         block_size=block_size).compute()
    entry = save(job.report, f"dask-{DASK_WORKERS}workers", dpi)
    entry.update(profile=DASK_PROFILE, workers=len(job.workers), partitions=job.partitions,
                 rows_read=len(frame), blocksize=blocksize, block_size=block_size)
    return entry


def main(argv: Optional[list[str]] = None) -> int:
    import matplotlib

    matplotlib.use("Agg")
    from device_emulator import list_profiles

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=25.0, help="size of the lineitem slice (decimal MB)")
    parser.add_argument("--block-size", type=int, default=None,
                        help="bytes per device task (default: each profile's task_queue.task_bytes)")
    parser.add_argument("--profiles", default=",".join(list_profiles()))
    parser.add_argument("--skip-dask", action="store_true")
    parser.add_argument("--dpi", type=int, default=100)
    args = parser.parse_args(argv)

    path = lineitem_slice(args.mb)
    print(f"data: {path} ({path.stat().st_size / MB:.1f} MB)")
    figures = profile_runs(path, [p for p in args.profiles.split(",") if p], args.block_size, args.dpi)
    if not args.skip_dask:
        figures.append(dask_run(path, args.block_size, args.dpi))
    write_result("timeline-summary.json", {
        "benchmark": "timelines", "data": path.name, "data_bytes": path.stat().st_size,
        "figures": figures, "host": host_info(), "versions": package_versions(),
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
