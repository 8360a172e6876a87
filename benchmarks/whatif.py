"""A Summarizer-style design-space study in one call: ``device_emulator.sweep``.

``python -m benchmarks.whatif`` from the repository root, or
``python path/to/benchmarks/whatif.py`` from any directory (paths are relative
to this package): TPC-H lineitem, the first 25 MB of ``data/lineitem-sf1.csv``
(to the end of that record; without the file, lineitem generated at scale
factor 0.033, ~25 MB, into ``data/``), on ``summarizer-board``
with its own task size (``task_queue.task_bytes``), splits host / static:0.25 / static:0.5 / dynamic,
and the embedded core's compute speed x1, 2, 4, 8, 16 (``"cores.speed*"``:
``cores.clock_MHz`` x f). Summarizer (MICRO'17, Sec. 6.5, Fig. 7) reports
+94.5% on average (up to +120%, TPC-H Q1) in dynamic mode with 16x the
device's compute, which the paper built as 2 cores at 8x (1.6 GHz); the study
also models that configuration.

Writes ``benchmarks/results/whatif-summarizer.csv`` (the sweep's frame) and
``.png`` (speedup and offload share against compute speed). Modeled figures
are deterministic; the timings printed (one read, then the simulations) are
this machine's.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import RESULTS_DIR, lineitem_slice

SLICE_BYTES = 25_000_000
PROFILE = "summarizer-board"
SPLITS = ("host", "static:0.25", "static:0.5", "dynamic")
SPEEDS = [1, 2, 4, 8, 16]
PAPER = 1.945  # Summarizer Fig. 7: +94.5% average, dynamic mode, 16x in-SSD compute


def study(path: Path) -> tuple:
    """The sweep, and the paper's 16x (two cores at 8x) as a second one."""
    import arrow_bridge
    import device_emulator

    sweep = device_emulator.sweep(path, reader=arrow_bridge.read_csv, profiles=PROFILE, splits=SPLITS,
                                  overrides={"cores.speed*": SPEEDS})
    paper = device_emulator.sweep(path, reader=arrow_bridge.read_csv, profiles=PROFILE, splits="dynamic",
                                  overrides={"cores.count": 2, "cores.speed*": 8})
    return sweep, paper


def plot(sweep, paper_point: float, out: Path) -> None:
    import matplotlib

    from device_emulator import load_profile

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.3), layout="constrained")
    sweep.plot("speedup", ax=left)
    left.plot([16], [PAPER], marker="*", ms=13, ls="none", color="black",
              label="Summarizer Fig. 7: +94.5% (avg., dynamic, 16x)")
    left.plot([16], [paper_point], marker="X", ms=9, ls="none", color="C3", mfc="white",
              label="model: dynamic, 2 cores at 8x (the paper's 16x)")
    left.set_title("speedup over host-only parsing", fontsize="medium")
    left.legend(fontsize="small", frameon=False, loc="upper left")
    sweep.plot("offload_share", ax=right)
    right.set_ylabel("pages parsed on the device / all pages")
    right.set_ylim(-0.02, 1.02)
    right.set_title("offload share", fontsize="medium")
    right.get_legend().remove()
    report = sweep.reports[0]
    link = load_profile(PROFILE).link_bandwidth
    left.text(0.98, 0.04, f"link capped at {link / 1e6:.0f} MB/s; device output (Arrow buffers,\n"
              f"{report.object_bytes / report.text_bytes:.2f}x the text) crosses it as the text would",
              transform=left.transAxes, ha="right", va="bottom", fontsize="small", color="0.3")
    for axis in (left, right):
        axis.set_xlabel(f"embedded core speed, x {load_profile(PROFILE)['cores.clock_MHz']:g} MHz "
                        f"(\"cores.speed*\")")
    fig.suptitle(f"What-if: {PROFILE}, lineitem {report.text_bytes / 1e6:.0f} MB in {report.tasks} tasks of "
                 f"{sweep.frame['task_bytes'].iloc[0] >> 10} KiB - a faster embedded core", fontsize="medium")
    fig.savefig(out, dpi=130)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "whatif-summarizer.csv",
                        help="the CSV to write (the PNG goes beside it)")
    args = parser.parse_args()
    path = lineitem_slice(SLICE_BYTES / 1e6)
    size = path.stat().st_size
    started = time.perf_counter()
    sweep, paper = study(path)
    total = time.perf_counter() - started
    frame = sweep.frame
    args.out.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(args.out, index=False, float_format="%.6g")
    paper_point = float(paper.frame["speedup"].iloc[0])
    plot(sweep, paper_point, args.out.with_suffix(".png"))

    print(f"lineitem slice: {size / 1e6:.2f} MB, {frame['tasks'].iloc[0]} tasks of "
          f"{frame['task_bytes'].iloc[0] >> 10} KiB on {PROFILE}")
    t = sweep.timings
    print(f"sweep: {len(frame)} points ({frame['split'].nunique()} splits x {len(SPEEDS)} speeds) in "
          f"{t['read_s'] + t['simulate_s']:.2f} s: {t['reads']} read {t['read_s']:.2f} s, simulations "
          f"{t['simulate_s']:.3f} s ({t['simulate_s'] / len(frame) * 1e3:.1f} ms a point, host baselines "
          f"included); both sweeps {total:.2f} s")
    host = frame.loc[frame.split == "host", "makespan_s"].iloc[0]
    print(f"host-only makespan {host:.3f} s\n")
    table = frame.pivot(index="cores.speed*", columns="split", values="speedup")[list(SPLITS)]
    share = frame.pivot(index="cores.speed*", columns="split", values="offload_share")[list(SPLITS[1:])]
    print("speedup vs host-only (rows: compute speed x f):")
    print(table.round(3).to_string())
    print("\noffload share (pages parsed on the device):")
    print(share.round(3).to_string())
    energy = frame.pivot(index="cores.speed*", columns="split", values="energy_j")[list(SPLITS)]
    print("\nenergy (J):")
    print(energy.round(2).to_string())
    dyn16 = table.loc[16, "dynamic"]
    print(f"\ndynamic at 16x: {dyn16:.3f}x ({(dyn16 - 1) * 100:+.1f}%); as the paper built 16x "
          f"(2 cores at 8x): {paper_point:.3f}x ({(paper_point - 1) * 100:+.1f}%); "
          f"Summarizer Fig. 7: +94.5% average")
    print(f"wrote {args.out} and {args.out.with_suffix('.png')}")


if __name__ == "__main__":
    main()
