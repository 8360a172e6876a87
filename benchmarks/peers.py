"""Time arrow_bridge.read_csv ("ndp") against pyarrow, polars, duckdb and pandas.

Usage::

    python -m benchmarks.peers [--threads 2] [--repeat 3] [--datasets lineitem,edges,floats]
                               [--scale-factor 1] [--readers ndp,pyarrow,...] [--quick]

Every measurement is a fresh ``python -m benchmarks.readers`` child (see that module):
peak RSS is per reader and imports/JIT warm-up are outside the timed region. Readers
are interleaved round-robin within each repeat, and the best time of the repeats is
reported. Raw results go to ``benchmarks/results/peers-<dataset>-<threads>t.json``.
Besides the full-file reads it measures start-up (a whole ``python -c`` process reading
a ~100-row CSV) and ndp's single-thread in-memory integer parsing speed. ``--sizes 1,10,25,100,1000``
reads lineitem slices of those many MB instead (header and whole records), warm (three reads
per child: the best of all, and of the first reads), to show where per-read fixed costs stop
mattering (``peers-sizes-<threads>t.json``).
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from tqdm import tqdm

from benchmarks import datasets
from benchmarks import STARTUP_LIBRARY_SWITCH, STARTUP_LIBRARY_TURNED_OFF
from benchmarks.common import (MB, REPO_ROOT, host_info, mb_per_s, package_versions, warm_page_cache,
                               write_head, write_result)
from benchmarks.readers import READERS, READERS_BY_NAME, RESULT_PREFIX, THREAD_ENV_VARS, Reader

#: Sizes that keep a ``--quick`` run (all three datasets) around two minutes.
QUICK_SIZES = {"scale_factor": 0.05, "edges": 2_000_000, "floats": 500_000}
FULL_SIZES = {"scale_factor": datasets.DEFAULT_SCALE_FACTOR, "edges": datasets.DEFAULT_EDGE_ROWS,
              "floats": datasets.DEFAULT_FLOAT_ROWS}
#: ndp's peak-RSS budget reading lineitem: RSS <= RSS_FACTOR * table.nbytes + RSS_SLACK.
RSS_FACTOR, RSS_SLACK = 1.25, 100 * MB
#: Speed targets at 2 threads (issue 2): ndp / the named peer (None: the fastest peer).
SPEED_TARGETS = {"lineitem": ("pyarrow", 1.2), "edges": (None, 1.5), "floats": (None, 1.5)}
#: Warm reads of lineitem slices (``--sizes``): ndp / pyarrow at least this from 10 MB up, 1.0 below (issue 15).
SIZE_TARGETS = ((10, 1.2), (0, 1.0))
#: Timed reads per child in the sizes row: past the first, a read finds its output's pages mapped.
SIZE_READS_PER_PROCESS = 3
#: lineitem's bytes per unit of scale factor, rounded down from the 766 MB of SF 1 so that the file
#: made for ``--sizes`` is surely as large as its largest slice.
LINEITEM_MB_PER_SF = 700
#: Long-range single-core integer parsing goal (HODS wire speed), MB/s.
INT_PARSE_GOAL = 1000.0
CHILD_TIMEOUT_S = 900
#: Rows of the file each child reads before its timed reads: past ndp's small first span
#: (16 KiB, the general path) so that the fused path is loaded too, as in a process that read before.
WARMUP_ROWS = 2000
#: Rows of the start-up row's second file: a few MB (lineitem: about 8 MB).
STARTUP_MID_ROWS = 60_000


# --- running children --------------------------------------------------------------------------

def child_env(threads: int) -> dict[str, str]:
    """Environment for every child: the same thread caps for all readers."""
    env = dict(os.environ)
    env.update({name: str(threads) for name in THREAD_ENV_VARS})
    # The children import ``benchmarks`` (and an in-tree ``arrow_bridge``) from the repo.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    return env


def run_child(reader: Reader, path: Path, warmup: Path, threads: int,
              extra: Sequence[str] = ()) -> dict[str, Any]:
    """Run one measurement child; return its result dict, or one with an ``error``."""
    cmd = [sys.executable, "-m", "benchmarks.readers", reader.name, str(path), "--warmup", str(warmup),
           "--threads", str(threads), *extra]
    try:
        proc = subprocess.run(cmd, cwd=REPO_ROOT, env=child_env(threads), capture_output=True, text=True,
                              timeout=CHILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"reader": reader.name, "error": f"timed out after {CHILD_TIMEOUT_S} s"}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(RESULT_PREFIX):
            return json.loads(line[len(RESULT_PREFIX):])
    tail = (proc.stderr.strip().splitlines() or [""])[-1]
    return {"reader": reader.name, "error": f"exit {proc.returncode}: {tail}"}


def run_rounds(readers: Sequence[Reader], path: Path, warmup: Path, threads: int, repeat: int,
               extra: Sequence[str] = (), desc: str = "") -> list[dict[str, Any]]:
    """``repeat`` rounds, each running every reader once; the order rotates between rounds
    so that no reader always runs right after the same neighbour (cache, turbo, noise)."""
    runs = []
    with tqdm(total=repeat * len(readers), desc=desc, unit="run", disable=None) as bar:
        for rep in range(repeat):
            shift = rep % len(readers)
            for reader in [*readers[shift:], *readers[:shift]]:
                bar.set_postfix_str(reader.name)
                runs.append({"repeat": rep, **run_child(reader, path, warmup, threads, extra)})
                bar.update()
    return runs


# --- availability ------------------------------------------------------------------------------

def _ndp_missing_reason() -> str | None:
    """Why arrow_bridge.read_csv cannot be used (None if it can); probed in a child so the
    parent never imports arrow_bridge (its imports would not matter, but its failures might)."""
    probe = "import arrow_bridge; arrow_bridge.read_csv"
    proc = subprocess.run([sys.executable, "-c", probe], cwd=REPO_ROOT, env=child_env(1),
                          capture_output=True, text=True)
    if proc.returncode == 0:
        return None
    return (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]


def available_readers(names: Iterable[str]) -> list[Reader]:
    """The requested readers that can run here; prints why any other is skipped."""
    chosen = []
    for name in names:
        reader = READERS_BY_NAME[name]
        if importlib.util.find_spec(reader.module) is None:
            reason = f"module {reader.module!r} not installed"
        elif name == "ndp":
            reason = _ndp_missing_reason()
        else:
            reason = None
        if reason:
            print(f"[skip] {name}: {reason}")
        else:
            chosen.append(reader)
    return chosen


# --- summarising -------------------------------------------------------------------------------

def summarize(runs: list[dict[str, Any]], source_bytes: int) -> dict[str, dict[str, Any]]:
    """Per reader: best wall time, MB/s, CPU/wall of the best run, worst peak RSS, output size."""
    summary: dict[str, dict[str, Any]] = {}
    for name in dict.fromkeys(run["reader"] for run in runs):
        ok = [run for run in runs if run["reader"] == name and "error" not in run]
        if not ok:
            errors = [run["error"] for run in runs if run["reader"] == name]
            summary[name] = {"error": errors[-1]}
            continue
        best_run, best_i = min(((run, i) for run in ok for i in range(len(run["seconds"]))),
                               key=lambda pair: pair[0]["seconds"][pair[1]])
        best = best_run["seconds"][best_i]
        summary[name] = {
            "best_s": best,
            "first_read_best_s": min(run["seconds"][0] for run in ok),  # each child's first timed read
            "mb_per_s": mb_per_s(best_run["source_bytes"] or source_bytes, best),
            "cpu_per_wall": best_run["cpu_seconds"][best_i] / best,
            # Peak RSS is an upper bound to meet, so report the worst run's.
            "peak_rss": max(run["maxrss"] for run in ok),
            "rss_before_read": max(run["maxrss_before_read"] for run in ok),
            "nbytes": best_run["nbytes"],
            "rows": best_run["rows"],
            "failed_runs": len([run for run in runs if run["reader"] == name]) - len(ok),
        }
    return summary


def fastest_peer(summary: dict[str, dict[str, Any]]) -> str | None:
    """The fastest successful reader other than ndp."""
    peers = {name: s for name, s in summary.items() if name != "ndp" and "error" not in s}
    return min(peers, key=lambda name: peers[name]["best_s"]) if peers else None


def _fmt_ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def summary_lines(summary: dict[str, dict[str, Any]], kind: str | None = None) -> list[str]:
    """The per-reader table, then ndp against dataset ``kind``'s targets. Ratios are speed
    ratios (>1: the first-named is faster); ``base MB`` is the child's peak RSS after
    imports and warm-up, before the timed read."""
    ndp = summary.get("ndp")
    ndp = ndp if ndp and "error" not in ndp else None
    fastest = fastest_peer(summary)
    fast_s = summary[fastest]["best_s"] if fastest else None
    head = (f"{'reader':<15}{'best s':>8}{'MB/s':>9}{'cpu/wall':>9}{'/fastest':>9}{'ndp/this':>9}"
            f"{'base MB':>8}{'peak RSS':>9}{'out MB':>8}{'RSS/out':>8}{'rows':>10}")
    lines = [head, "-" * len(head)]
    for name, s in summary.items():
        if "error" in s:
            lines.append(f"{name:<15}  failed: {s['error']}")
            continue
        vs_fastest = fast_s / s["best_s"] if fast_s else None
        ndp_ratio = s["best_s"] / ndp["best_s"] if ndp and name != "ndp" else None
        out_mb = f"{s['nbytes'] / MB:.0f}" if s["nbytes"] else "-"
        rss_ratio = f"{s['peak_rss'] / s['nbytes']:.2f}" if s["nbytes"] else "-"
        lines.append(f"{name:<15}{s['best_s']:>8.3f}{s['mb_per_s']:>9.1f}{s['cpu_per_wall']:>9.2f}"
                     f"{_fmt_ratio(vs_fastest):>9}{_fmt_ratio(ndp_ratio):>9}{s['rss_before_read'] / MB:>8.0f}"
                     f"{s['peak_rss'] / MB:>9.0f}{out_mb:>8}{rss_ratio:>8}{s['rows']:>10}")
    lines += _footer_lines(summary, fastest, kind)
    return lines


def _footer_lines(summary: dict[str, dict[str, Any]], fastest: str | None, kind: str | None) -> list[str]:
    lines = []
    rows = {s["rows"] for s in summary.values() if "error" not in s}
    if len(rows) > 1:
        lines.append(f"WARNING: readers disagree on the row count: {sorted(rows)}")
    if fastest:
        lines.append(f"fastest peer: {fastest} ({summary[fastest]['mb_per_s']:.1f} MB/s)")
    ndp = summary.get("ndp", {})
    if "best_s" not in ndp:
        return lines
    if fastest:
        lines.append(f"ndp vs fastest peer: {summary[fastest]['best_s'] / ndp['best_s']:.2f}x speed")
    named, factor = SPEED_TARGETS.get(kind, (None, None))
    peer = named or fastest
    if factor and "best_s" in summary.get(peer, {}):
        ratio = summary[peer]["best_s"] / ndp["best_s"]
        lines.append(f"ndp speed target {'met' if ratio >= factor else 'MISSED'}: {ratio:.2f}x {peer} "
                     f"(target {factor}x {named or 'the fastest peer'})")
    if ndp["nbytes"]:
        budget = RSS_FACTOR * ndp["nbytes"] + RSS_SLACK
        verdict = ("target " + ("met" if ndp["peak_rss"] <= budget else "MISSED")) if kind == "lineitem" else \
            "(the target is lineitem's; for reference)"
        lines.append(f"ndp RSS {verdict}: peak {ndp['peak_rss'] / MB:.0f} MB vs "
                     f"{RSS_FACTOR} x {ndp['nbytes'] / MB:.0f} MB + {RSS_SLACK / MB:.0f} MB = {budget / MB:.0f} MB "
                     f"({ndp['rss_before_read'] / MB:.0f} MB already before the read)")
    return lines


# --- the three benchmarks ----------------------------------------------------------------------

def bench_dataset(kind: str, path: Path, readers: Sequence[Reader], args: argparse.Namespace,
                  scratch: Path) -> dict[str, Any]:
    """Full-file reads of one dataset by every reader; prints and returns the results."""
    size = path.stat().st_size
    warmup = write_head(path, scratch / f"{kind}-warmup.csv", rows=WARMUP_ROWS)
    warm_page_cache(path)  # every reader then reads from the page cache, the first included
    load_before = os.getloadavg()
    extra = ["--repeat", str(args.reads_per_process)]
    runs = run_rounds(readers, path, warmup, args.threads, args.repeat, extra, desc=kind)
    summary = summarize(runs, size)
    print(f"\n== {kind}: {path.name}, {size / MB:.1f} MB, {args.threads} threads, best of {args.repeat} ==")
    print("\n".join(summary_lines(summary, kind)))
    return {"dataset": kind, "path": str(path), "bytes": size, "loadavg_before": load_before,
            "loadavg_after": os.getloadavg(), "summary": summary, "runs": runs}


def _note_missing_ndp(names: Iterable[str]) -> None:
    if "ndp" not in names:
        print(f"{'ndp':<15}  skipped (arrow_bridge.read_csv not available)")


def bench_startup(readers: Sequence[Reader], small: Path, repeat: int = 5) -> dict[str, Any]:
    """Wall time of a whole ``python -c '<import; read small.csv>'`` process, best of ``repeat``."""
    probes = [(reader.name, reader, {}) for reader in readers if reader.oneliner]
    if any(reader.name == "ndp" for _, reader, _ in probes):  # what a first read costs that loads Numba
        ndp = next(reader for _, reader, _ in probes if reader.name == "ndp")
        probes.append(("ndp, no startup library", ndp, {STARTUP_LIBRARY_SWITCH: "0"}))
    times: dict[str, list[float | None]] = {name: [] for name, _, _ in probes}
    # Users' processes load .pyc files written once: a PYTHONDONTWRITEBYTECODE in this shell would
    # make every start compile every module's source again (about 0.1 s more for ndp).
    env = {key: value for key, value in child_env(1).items() if key != "PYTHONDONTWRITEBYTECODE"}
    if STARTUP_LIBRARY_TURNED_OFF:  # the benchmarks' own switch: a user's process has the library
        env.pop(STARTUP_LIBRARY_SWITCH, None)
    for _ in range(repeat):
        for name, reader, extra_env in probes:  # interleaved, like the main benchmark
            cmd = [sys.executable, "-c", reader.oneliner.format(path=str(small))]
            start = time.perf_counter()
            proc = subprocess.run(cmd, cwd=REPO_ROOT, env=env | extra_env, capture_output=True, text=True)
            elapsed = time.perf_counter() - start
            times[name].append(elapsed if proc.returncode == 0 else None)  # None: failed
    print(f"\n== start-up: fresh `python -c` reading {small.name} ({small.stat().st_size} bytes), "
          f"best of {repeat} ==")
    for name, values in times.items():
        ok = [t for t in values if t is not None]
        print(f"{name:<25}{min(ok):>8.3f} s" if ok else f"{name:<25}  failed")
    _note_missing_ndp(times)
    return {"small_csv": str(small), "repeat": repeat, "seconds": times}


def bench_inmem_ints(readers: Sequence[Reader], path: Path, limit: int, repeat: int,
                     scratch: Path) -> dict[str, Any]:
    """Single-thread parsing of the edge list's first ``limit`` bytes, already in memory.

    The goal concerns ndp; pyarrow runs too, as a reference point for the same bytes.
    """
    probes = [reader for reader in readers if reader.in_memory]
    warmup = write_head(path, scratch / "edges-inmem-warmup.csv")
    extra = ["--memory", "--limit-bytes", str(limit)]
    runs = run_rounds(probes, path, warmup, 1, repeat, extra, desc="in-memory ints")
    summary = summarize(runs, min(limit, path.stat().st_size))
    print(f"\n== single-thread in-memory integer parsing: {path.name}, first "
          f"{min(limit, path.stat().st_size) / MB:.0f} MB, best of {repeat} ==")
    for name, s in summary.items():
        if "error" in s:
            print(f"{name:<15}  failed: {s['error']}")
            continue
        goal = f" ({s['mb_per_s'] / INT_PARSE_GOAL:.0%} of the {INT_PARSE_GOAL:.0f} MB/s/core goal)"
        note = goal if name == "ndp" else " (reference)"
        print(f"{name:<15}{s['mb_per_s']:>8.1f} MB/s per core, cpu/wall {s['cpu_per_wall']:.2f}{note}")
    _note_missing_ndp(summary)
    return {"path": str(path), "limit_bytes": limit, "summary": summary, "runs": runs}


def write_prefix(src: Path, dst: Path, nbytes: int) -> Path:
    """The first ``nbytes`` of ``src`` (whole lines: cut after the last line break) to ``dst``.
    Generated datasets hold no quoted line breaks, so whole lines are whole records."""
    with open(src, "rb") as fin, open(dst, "wb") as fout:
        data = fin.read(nbytes)
        fout.write(data[:data.rfind(b"\n") + 1] if len(data) == nbytes else data)
    return dst


def bench_sizes(readers: Sequence[Reader], source: Path, sizes_mb: Sequence[float], args: argparse.Namespace,
                scratch: Path) -> dict[str, Any]:
    """Warm full reads of lineitem slices of ``sizes_mb``: each reader's best time, and ndp/pyarrow.

    Each child reads :data:`SIZE_READS_PER_PROCESS` times after its warm-up. The target is
    judged on the best of all reads (warm: a process that has read a file of this size
    before); the first read's ratio is printed beside it, as it also pays the page faults of
    the first output larger than the warm-up's."""
    rows = []
    args = argparse.Namespace(**{**vars(args), "reads_per_process": max(args.reads_per_process,
                                                                         SIZE_READS_PER_PROCESS)})
    for size_mb in sizes_mb:
        path = write_prefix(source, scratch / f"lineitem-{size_mb:g}MB.csv", int(size_mb * MB))
        result = bench_dataset(f"lineitem-{size_mb:g}MB", path, readers, args, scratch)
        path.unlink()
        times = {name: s.get("best_s") for name, s in result["summary"].items()}
        firsts = {name: s.get("first_read_best_s") for name, s in result["summary"].items()}
        rows.append({"mb": size_mb, "bytes": result["bytes"], "best_s": times, "first_read_best_s": firsts,
                     "summary": result["summary"], "ndp_vs_pyarrow": _ratio(times.get("pyarrow"), times.get("ndp")),
                     "first_read_ndp_vs_pyarrow": _ratio(firsts.get("pyarrow"), firsts.get("ndp"))})
    print(f"\n== lineitem slices, warm, {args.threads} threads, best of {args.repeat} children x "
          f"{args.reads_per_process} reads: pyarrow time / ndp time ==")
    for row in rows:
        target = next(ratio for floor, ratio in SIZE_TARGETS if row["mb"] >= floor)
        ratio = row["ndp_vs_pyarrow"]
        verdict = "" if ratio is None else ("meets" if ratio >= target else "misses") + f" the {target:.1f}x target"
        print(f"{row['mb']:>7g} MB  " + "  ".join(f"{name} {t:.4f} s" for name, t in row["best_s"].items()
                                                   if t is not None) + f"  ratio {_fmt_ratio(ratio)}  {verdict}"
              f"  (first reads: {_fmt_ratio(row['first_read_ndp_vs_pyarrow'])})")
    return {"dataset": "lineitem slices", "source": str(source), "targets": SIZE_TARGETS,
            "reads_per_process": args.reads_per_process, "rows": rows}


def _ratio(theirs: float | None, ours: float | None) -> float | None:
    return theirs / ours if theirs and ours else None


# --- driver ------------------------------------------------------------------------------------

def dataset_path(kind: str, args: argparse.Namespace) -> Path:
    """Generate (or reuse) dataset ``kind`` at the sizes the arguments ask for."""
    rows = {"edges": args.edge_rows, "floats": args.float_rows}.get(kind)
    path = datasets.default_path(kind, scale_factor=args.scale_factor, rows=rows)
    if datasets.is_current(path, datasets.dataset_params(kind, scale_factor=args.scale_factor, rows=rows)):
        return path
    start = time.perf_counter()
    datasets.make(kind, path, scale_factor=args.scale_factor, rows=rows)
    print(f"generated {path} ({path.stat().st_size / MB:.0f} MB) in {time.perf_counter() - start:.1f} s")
    return path


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.peers", description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3, help="rounds; the best is reported")
    parser.add_argument("--datasets", default="lineitem,edges,floats")
    parser.add_argument("--readers", default=",".join(reader.name for reader in READERS))
    parser.add_argument("--scale-factor", type=float, default=None, help="lineitem SF (default 1)")
    parser.add_argument("--edge-rows", type=int, default=None, help="default 40M")
    parser.add_argument("--float-rows", type=int, default=None, help="default 8M")
    parser.add_argument("--reads-per-process", type=int, default=1,
                        help="timed reads per child; >1 also shows steady state after first-touch page faults")
    parser.add_argument("--inmem-mb", type=float, default=200, help="bytes of the edge list parsed in memory")
    parser.add_argument("--skip", default="", help="comma list of: startup,inmem")
    parser.add_argument("--quick", action="store_true", help="small sizes: whole run in ~2 minutes")
    parser.add_argument("--startup-only", action="store_true",
                        help="only the start-up row: fresh processes reading lineitem's first 100 rows")
    parser.add_argument("--sizes", default="",
                        help="comma list of MB (e.g. 1,10,25,100,1000): warm reads of lineitem slices of those "
                             "sizes, in place of the datasets, start-up and in-memory runs")
    args = parser.parse_args(argv)
    sizes = QUICK_SIZES if args.quick else FULL_SIZES
    args.scale_factor = args.scale_factor or sizes["scale_factor"]
    args.edge_rows = args.edge_rows or sizes["edges"]
    args.float_rows = args.float_rows or sizes["floats"]
    args.datasets = [kind for kind in args.datasets.split(",") if kind]
    args.readers = [name for name in args.readers.split(",") if name]
    args.skip = set(filter(None, args.skip.split(",")))
    args.sizes = [float(mb) for mb in args.sizes.split(",") if mb]
    if args.startup_only:
        args.datasets = args.datasets[:1]
    if args.sizes:  # a lineitem file at least as large as the largest slice
        args.scale_factor = max(args.scale_factor, round(max(args.sizes) / LINEITEM_MB_PER_SF + 0.05, 1))
        args.datasets = ["lineitem"]
    for kind in args.datasets:
        if kind not in datasets.KINDS:
            parser.error(f"unknown dataset {kind!r}; choose from {datasets.KINDS}")
    for name in args.readers:
        if name not in READERS_BY_NAME:
            parser.error(f"unknown reader {name!r}; choose from {sorted(READERS_BY_NAME)}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # Quick runs get their own files so that they never overwrite a full run's results.
    suffix = f"{args.threads}t" + ("-quick" if args.quick else "")
    args_record = vars(args) | {"skip": sorted(args.skip)}  # a set is not JSON
    common = {"host": host_info(), "versions": package_versions(), "args": args_record}
    readers = available_readers(args.readers)
    if not readers:
        print("no reader available")
        return 1
    paths = {kind: dataset_path(kind, args) for kind in args.datasets}
    with tempfile.TemporaryDirectory(prefix="ndp-bench-") as tmp:
        scratch = Path(tmp)
        if args.sizes:
            result = bench_sizes(readers, paths["lineitem"], args.sizes, args, scratch)
            print(f"-> {write_result(f'peers-sizes-{suffix}.json', common | result)}")
            return 0
        for kind, path in paths.items():
            if not args.startup_only:
                result = bench_dataset(kind, path, readers, args, scratch)
                print(f"-> {write_result(f'peers-{kind}-{suffix}.json', common | result)}")
        if "startup" not in args.skip or args.startup_only:
            small = write_head(paths[args.datasets[0]], scratch / "small.csv", rows=100)
            result = bench_startup(readers, small)
            # a first read of a few MB: within the startup library's bytes (arrow_bridge.startup)
            mid = write_head(paths[args.datasets[0]], scratch / "mid.csv", rows=STARTUP_MID_ROWS)
            result["mid"] = bench_startup(readers, mid)
            print(f"-> {write_result(f'peers-startup-{suffix}.json', common | result)}")
        if "inmem" not in args.skip and "edges" in paths and not args.startup_only:
            result = bench_inmem_ints(readers, paths["edges"], int(args.inmem_mb * MB), args.repeat, scratch)
            print(f"-> {write_result(f'peers-inmem-ints-{suffix}.json', common | result)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
