"""Which task size lets the dynamic split show its effect: the study behind ``task_queue.task_bytes``.

``python -m benchmarks.task_size`` (from the repository root) reads TPC-H
lineitem slices (25 MB and 200 MB, heads of ``data/lineitem-sf1.csv``) once
per task size with ``device_emulator.sweep`` and models every shipped profile
with ``split="host"`` and ``"dynamic"`` at tasks of 64 KiB to 2 MiB. Writes
``benchmarks/results/task-size.csv`` (one row per file, profile, split and
task size) and prints the dynamic split's speedup over the host per profile.
Modeled figures are deterministic; nothing here is timed.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import RESULTS_DIR, lineitem_slice

TASK_SIZES = [64 << 10, 128 << 10, 256 << 10, 512 << 10, 1 << 20, 2 << 20]


def study(path: Path):
    """The sweep's frame for one file: every profile, host and dynamic, every task size."""
    import arrow_bridge
    import device_emulator

    sweep = device_emulator.sweep(path, reader=arrow_bridge.read_csv, profiles=device_emulator.list_profiles(),
                                  splits=["host", "dynamic"], overrides={"task_queue.task_bytes": TASK_SIZES})
    frame = sweep.frame
    frame.insert(0, "file", path.name)
    return frame


def main(argv: list[str] | None = None) -> int:
    import pandas as pd

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", default="25,200", help="lineitem slice sizes in decimal MB (default 25,200)")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "task-size.csv")
    args = parser.parse_args(argv)
    frame = pd.concat([study(lineitem_slice(float(mb))) for mb in args.mb.split(",")], ignore_index=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(args.out, index=False, float_format="%.6g")
    dynamic = frame[frame.split == "dynamic"].copy()
    dynamic["KiB"] = dynamic["task_queue.task_bytes"] // 1024
    print("dynamic split, speedup over split='host' at the same task size (rows: file, task KiB):")
    print(dynamic.pivot(index=["file", "KiB"], columns="profile", values="speedup").round(2).to_string())
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
