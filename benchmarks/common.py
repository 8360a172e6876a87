"""Small helpers shared by the benchmark scripts.

Only the standard library is imported at module level: the per-measurement child
processes import this module, and anything imported here would count towards
every reader's start-up and peak RSS.
"""
from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import distributed

REPO_ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = REPO_ROOT / "data"
RESULTS_DIR = Path(__file__).resolve().parent / "results"

MB = 1_000_000  # decimal megabytes everywhere (throughput and RSS alike)

#: Distributions whose versions go into every results file.
VERSIONED_PACKAGES = ("ndp", "pyarrow", "polars", "duckdb", "pandas", "numpy", "numba", "tpchgen-cli")


def mb_per_s(nbytes: int, seconds: float) -> float:
    """Throughput in decimal MB per second."""
    return nbytes / MB / seconds


def write_head(src: Path, dst: Path, rows: int = 100) -> Path:
    """Copy the header plus the first ``rows`` records of ``src`` to ``dst``.

    Used for warm-up reads and the start-up probe: a slice of the real file keeps
    the schema (and so any type-specialised JIT code paths) identical to the full
    read. Assumes no quoted field spans a line, true for all generated datasets.
    """
    dst.parent.mkdir(parents=True, exist_ok=True)
    with open(src, "rb") as fin, open(dst, "wb") as fout:
        for _, line in zip(range(rows + 1), fin):
            fout.write(line)
    return dst


def local_cluster(workers: int) -> tuple["distributed.LocalCluster", "distributed.Client"]:
    """A ``LocalCluster`` of ``workers`` processes of one thread each, and its Client:
    ``cluster, client = local_cluster(2)``, then ``client.close(); cluster.close()``.

    ``dashboard_address=":0"``: the scheduler's HTTP server (it runs even without a
    dashboard) on a free port, so that two clusters at once do not both ask for 8787.
    """
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                           worker_dashboard_address=None)
    return cluster, Client(cluster)


def warm_page_cache(path: Path, chunk: int = 8 << 20) -> None:
    """Read ``path`` once so that no reader pays for the disk while others hit the cache."""
    with open(path, "rb", buffering=0) as f:
        while f.read(chunk):
            pass


def package_versions() -> dict[str, str | None]:
    """Installed versions, looked up without importing the packages."""
    versions: dict[str, str | None] = {}
    for name in VERSIONED_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def _mem_total_bytes() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _git_commit() -> str | None:
    """The checked-out commit, with ``-dirty`` when tracked files other than
    results differ from it (a result measured on uncommitted code must not
    name a commit it did not run; earlier results files do not count)."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True)
        changed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".",
                                  f":!{RESULTS_DIR.relative_to(REPO_ROOT)}"], cwd=REPO_ROOT, capture_output=True,
                                 text=True)
    except OSError:
        return None
    if head.returncode != 0:
        return None
    return head.stdout.strip() + ("-dirty" if changed.returncode == 0 and changed.stdout.strip() else "")


def write_result(name: str, payload: dict, out_dir: Path = RESULTS_DIR) -> Path:
    """Write one JSON results file under ``out_dir`` (benchmarks/results/ by default)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / name
    out.write_text(json.dumps(payload, indent=2, default=str) + "\n")
    return out


def host_info() -> dict[str, object]:
    """Facts about the machine that explain (or excuse) a timing."""
    return {
        "hostname": platform.node(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "cpu_model": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpu_affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "mem_total_bytes": _mem_total_bytes(),
        # The benchmark machines are shared: a high load average flags a noisy run.
        "loadavg": os.getloadavg(),
        "git_commit": _git_commit(),
    }


def lineitem_slice(mb: float, small_scale_factor: float = 0.033) -> Path:
    """A headed TPC-H lineitem CSV of about ``mb`` decimal MB (whole records):
    the head of ``data/lineitem-sf1.csv``, made once under ``data/``; without
    that file, lineitem generated at ``small_scale_factor`` (~25 MB at 0.033)."""
    source = DATA_DIR / "lineitem-sf1.csv"
    out = DATA_DIR / f"lineitem-{mb:g}MB.csv"
    target = int(mb * MB)
    if out.exists() and abs(out.stat().st_size - target) < 1 << 20:
        return out
    if not source.exists():
        from benchmarks import datasets

        return datasets.make_lineitem(DATA_DIR / f"lineitem-sf{small_scale_factor:g}.csv", small_scale_factor)
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    with open(source, "rb") as fin, open(tmp, "wb") as fout:
        fout.write(fin.read(target))
        fout.write(fin.readline())  # finish the record
    tmp.replace(out)
    return out
