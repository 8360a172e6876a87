"""SSDlets: a three-node pipeline (parse numbers -> keep the large ones -> sum)
on an emulated device and on the host, beside pyarrow doing the same on the host.

    python -m benchmarks.ssdlets [--numbers 10000000] [--repeat 3]

Prints, per placement: wall seconds (best of ``--repeat``; the emulator runs
the real kernels on this machine), bytes that crossed the link, and modeled
milliseconds on ``biscuit-pm`` and ``modern-gen4``; the first run's compile
time; pyarrow's ``read_csv`` + ``filter`` + ``sum`` in the same process as the
peer (ratio = pyarrow seconds / ours). Writes ``benchmarks/results/ssdlets.json``.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from benchmarks.common import DATA_DIR, host_info, write_result

PLACEMENTS = {"all on the device": ("device", "device", "device"), "parse on the device": ("device", "host", "host"),
              "all on the host": ("host", "host", "host")}
PROFILES = ("biscuit-pm", "modern-gen4")


def make_numbers(path: Path, count: int) -> Path:
    """``count`` numbers below 10^9, one per line (seeded)."""
    import numpy as np

    if not path.exists():
        values = np.random.default_rng(0).integers(0, 10**9, count)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(("\n".join(map(str, values.tolist())) + "\n").encode())
    return path


def run_pipeline(ssd, path: Path, sides: tuple[str, str, str], floor: int, progs) -> tuple[float, object]:
    from ndp_core.ssdlets import Application

    parse_lines, keep_above, total = progs
    app = Application(ssd, pages_per_packet=256)
    parse, keep, add = (app.add(parse_lines, on=sides[0]), app.add(keep_above, on=sides[1], floor=floor),
                        app.add(total, on=sides[2]))
    app.scan(parse.pages, path)
    app.connect(parse.numbers, keep.x)
    app.connect(keep.y, add.x)
    app.collect(add.total)
    app.collect(add.count)
    started = time.perf_counter()
    result = app.run()
    return time.perf_counter() - started, result


def pyarrow_peer(path: Path, floor: int) -> tuple[float, int]:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pv

    started = time.perf_counter()
    column = pv.read_csv(path, read_options=pv.ReadOptions(column_names=["v"]),
                         convert_options=pv.ConvertOptions(column_types={"v": pa.int64()}))["v"]
    answer = pc.sum(column.filter(pc.greater(column, floor))).as_py()
    return time.perf_counter() - started, answer


def measure(path: Path, repeat: int, floor: int) -> dict:
    from device_emulator import ComputationalSSD

    from ndp_core.ssdlets.examples import keep_above, parse_lines, total

    progs = parse_lines, keep_above, total
    out: dict = {"host": host_info(), "file_bytes": path.stat().st_size, "placements": {}}
    started = time.perf_counter()
    with ComputationalSSD(PROFILES[0]) as ssd:
        run_pipeline(ssd, path, PLACEMENTS["all on the host"], floor, progs)
    out["first_run_with_compile_s"] = round(time.perf_counter() - started, 3)
    out["programs_came"] = [program.compiled_how for program in progs]  # compiled, or loaded (disk cache)
    peer = min(pyarrow_peer(path, floor) for _ in range(repeat))
    out["pyarrow_s"], answer = round(peer[0], 4), peer[1]
    for label, sides in PLACEMENTS.items():
        row: dict = {}
        for profile in PROFILES:
            with ComputationalSSD(profile) as ssd:
                runs = [run_pipeline(ssd, path, sides, floor, progs) for _ in range(repeat)]
            wall, result = min(runs, key=lambda r: r[0])
            assert result["total.total"].to_pylist() == [answer], "SSDlets and pyarrow disagree"
            row.setdefault("wall_s", round(wall, 4))
            row["link_bytes"] = sum(w.link_bytes for w in result.work)
            row[f"modeled_ms_{profile}"] = round(result.model.makespan_s * 1e3, 3)
            row[f"bottleneck_{profile}"] = result.model.bottleneck
        row["pyarrow_over_ours"] = round(out["pyarrow_s"] / row["wall_s"], 2)
        out["placements"][label] = row
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--numbers", type=int, default=10_000_000, help="numbers in the generated file")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (best is kept)")
    args = parser.parse_args(argv)
    path = make_numbers(DATA_DIR / f"numbers-{args.numbers}.txt", args.numbers)
    results = measure(path, args.repeat, floor=990_000_000)
    print(f"{path.name}: {results['file_bytes'] / 1e6:.1f} MB; first run incl. making 3 SSDlets "
          f"({', '.join(sorted(set(results['programs_came'])))}) {results['first_run_with_compile_s']} s; "
          f"pyarrow read+filter+sum {results['pyarrow_s']} s")
    for label, row in results["placements"].items():
        print(f"  {label:<20} wall {row['wall_s']:.3f} s (pyarrow/ours {row['pyarrow_over_ours']}x), "
              f"link {row['link_bytes']:>11,} B, modeled " +
              ", ".join(f"{p} {row[f'modeled_ms_{p}']:.1f} ms ({row[f'bottleneck_{p}']})" for p in PROFILES))
    print(f"wrote {write_result('ssdlets.json', results)}")


if __name__ == "__main__":
    main()
