"""Faults under Dask: device fault plans and a worker killed mid-job, and still the same DataFrame.

Usage::

    python -m benchmarks.dask_faults [--scale-factor 1.3] [--workers 2] [--blocksize 64MiB]
                                     [--block-size 64KiB] [--rates 0.001,0.01,0.1] [--kill-after 3]
                                     [--profile modern-gen4] [--quick]

TPC-H lineitem at ``--scale-factor`` 1.3 (about 1 GB; generated under
``data/`` by ``benchmarks.datasets`` when missing) is read by
``dask_plugin.read_csv`` on a ``LocalCluster`` of ``--workers`` processes
(one thread each), one emulated SSD per worker, ``split="dynamic"``, device
tasks of ``--block-size``. First the fault-free result: the host path, no
device. Then for each fault rate, two jobs:

* **faults**: the devices inject faults at that rate (:func:`fault_plan`);
* **faults + kill**: the same, and one worker is killed mid-job
  (:class:`KillSwitchSSD`: the first worker to start its
  ``--kill-after + 1``-th partition read SIGKILLs itself, as the OOM killer
  would; its nanny starts a new one, and ``distributed`` reruns the lost
  partitions by itself).

Each job's DataFrame must equal the fault-free one, and the killed job's
Report totals (pages, tasks, bytes, faults) must equal those of the job
without the kill: a retried partition counts once, and fault plans inject
the same faults into every attempt of a task. Results go to
``benchmarks/results/dask_faults.json`` and ``.md`` (``-quick`` suffixed
with ``--quick``: lineitem SF 0.05).
"""
from __future__ import annotations

import argparse
import gc
import os
import signal
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Optional, Sequence

import dask

from device_emulator import ComputationalSSD, FaultPlan

from benchmarks import datasets
from benchmarks.common import (MB, RESULTS_DIR, host_info, local_cluster, package_versions,
                               warm_page_cache, write_head, write_result)

RATES = (0.001, 0.01, 0.1)
FAULT_KINDS = ("media_error", "app_failure", "link_timeout")
SEED = 20240601
#: Report fields that depend only on what was read, not on which worker read it or when.
ACCOUNTING = ("runs", "tasks", "pages", "file_pages", "bytes", "text_bytes", "object_bytes", "faults")


# ---- what the jobs inject -------------------------------------------------------------------------------
def fault_plan(rate: float, seed: int = SEED) -> FaultPlan:
    """Device commands fail with probability ``rate``, split evenly over
    media errors, StorageApp failures and link timeouts.

    >>> fault_plan(0.03).rates
    {'media_error': 0.01, 'app_failure': 0.01, 'link_timeout': 0.01, 'tq_overflow': 0.0}
    """
    share = rate / len(FAULT_KINDS)
    return FaultPlan(**{kind: share for kind in FAULT_KINDS}, seed=seed)


class KillSwitchSSD(ComputationalSSD):
    """An emulated SSD whose worker process kills itself once, mid-job.

    Each worker builds its own device (``dask_plugin.install_devices``) and
    the device counts the partition reads it models. The first device to
    start modeling its ``kill_after + 1``-th read creates ``kill_flag``
    (``O_EXCL``: exactly one process wins, across workers and restarts) and
    sends its own process SIGKILL: no cleanup, like the OOM killer. That read
    dies unfinished, and the ``kill_after`` partitions this worker finished
    die with it unless already moved. With W workers and more than
    ``W * kill_after`` partitions some worker reaches that read, so the kill
    always happens, mid-job; ``kill_after=None`` never kills.
    """

    def __init__(self, profile: str = "modern-gen4", *, kill_after: Optional[int] = None,
                 kill_flag: Optional[str] = None, **options: Any):
        super().__init__(profile, **options)
        self.kill_after, self.kill_flag, self.reads = kill_after, kill_flag, 0

    def schedule(self, tasks, split, wall_s, **kwargs):
        self.reads += 1
        if self.kill_after is not None and self.reads > self.kill_after and _claim(self.kill_flag):
            os.kill(os.getpid(), signal.SIGKILL)
        return super().schedule(tasks, split, wall_s, **kwargs)


def _claim(path: Optional[str]) -> bool:
    """Creates ``path`` if nobody has: True for exactly one caller."""
    if path is None:
        return False
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


# ---- one job ---------------------------------------------------------------------------------------------
def faulty_job(client: Any, path: str, *, rate: float, name: str, kill_after: Optional[int] = None,
               kill_flag: Optional[str] = None, profile: str = "modern-gen4", blocksize: Any = "64MiB",
               block_size: int = 64 << 10) -> dict[str, Any]:
    """Reads ``path`` on ``client``'s cluster through one :class:`KillSwitchSSD`
    per worker injecting faults at ``rate`` (killing a worker if
    ``kill_after`` is set); waits for the cluster to be whole again.
    Returns the DataFrame, the ``JobReport``, the partition count and the
    wall seconds of ``read_csv(...).compute()``."""
    import dask_plugin

    workers = len(client.scheduler_info()["workers"])
    key = dask_plugin.install_devices(client, KillSwitchSSD, name=name, profile=profile, faults=fault_plan(rate),
                                      kill_after=kill_after, kill_flag=kill_flag)
    with _keep_restarting_workers():
        try:
            gc.collect()
            start = time.perf_counter()
            with dask_plugin.job_report(client) as job:
                ddf = dask_plugin.read_csv(path, blocksize=blocksize, block_size=block_size, device=key,
                                           split="dynamic", page_size=ComputationalSSD(profile).page_size)
                frame = ddf.compute()
            seconds = time.perf_counter() - start
        finally:
            client.wait_for_workers(workers, timeout=300)
            client.unregister_worker_plugin(dask_plugin.DeviceSpec(key).plugin_name)
    return {"frame": frame, "job": job, "partitions": ddf.npartitions, "seconds": seconds}


@contextmanager
def _keep_restarting_workers(seconds: int = 600) -> Iterator[None]:
    """Lets a killed worker's nanny take up to ``seconds`` to bring it back.

    A ``LocalCluster`` closes the nanny of a worker that is not back under its
    name within ``distributed.deploy.lost-worker-timeout`` (15 s), and the
    cluster stays one worker short. A fresh worker process on a busy 2-core
    machine (imports, the device plugin) can take longer than that.
    """
    with dask.config.set({"distributed.deploy.lost-worker-timeout": f"{seconds}s"}):
        yield


def accounting(report: Any) -> dict[str, Any]:
    """The Report fields that depend only on what was read (:data:`ACCOUNTING`)."""
    return {name: getattr(report, name) for name in ACCOUNTING}


def same_frame(got: Any, expected: Any) -> bool:
    """Same columns, dtypes and values (floats bit for bit), in the same row order; the index is ignored."""
    import pyarrow as pa

    if list(got.columns) != list(expected.columns) or list(got.dtypes) != list(expected.dtypes):
        return False
    as_table = lambda df: pa.Table.from_pandas(df.reset_index(drop=True), preserve_index=False)  # noqa: E731
    return as_table(got).equals(as_table(expected))


# ---- the benchmark -----------------------------------------------------------------------------------


def rate_runs(client: Any, path: str, rate: float, expected: Any, args: argparse.Namespace,
              scratch: Path) -> dict[str, Any]:
    """The two jobs at one rate: faults only, then faults and a killed worker."""
    common = dict(rate=rate, profile=args.profile, blocksize=args.blocksize, block_size=args.block_size)
    calm = faulty_job(client, path, name=f"faults-{rate:g}", **common)
    calm_ok = same_frame(calm.pop("frame"), expected)
    flag = scratch / f"killed-{rate:g}"
    hit = faulty_job(client, path, name=f"kill-{rate:g}", kill_after=args.kill_after, kill_flag=str(flag), **common)
    hit_ok = same_frame(hit.pop("frame"), expected)
    calm_report, hit_report = calm["job"].report, hit["job"].report
    row = {"rate": rate, "plan": repr(fault_plan(rate)), "partitions": hit["partitions"],
           "faults": hit_report.faults, "faults_total": sum(hit_report.faults.values()),
           "device_tasks": hit_report.tasks, "worker_killed": flag.exists(),
           **{k: v for k, v in hit["job"].summary().items() if k != "workers"},
           "wall_s": hit["seconds"], "wall_s_without_kill": calm["seconds"],
           "identical": hit_ok, "identical_without_kill": calm_ok,
           "totals_equal_without_kill": accounting(hit_report) == accounting(calm_report),
           "report": hit_report.to_dict(timeline=False)}
    print(f"\n-- rate {rate:g}: {hit['seconds']:.1f} s with a worker killed ({calm['seconds']:.1f} s without); "
          f"identical: {hit_ok}; totals as without the kill: {row['totals_equal_without_kill']}\n{hit['job']}",
          flush=True)
    return row


def run(path: Path, args: argparse.Namespace) -> dict[str, Any]:
    import dask_plugin

    scratch = Path(tempfile.mkdtemp(prefix="dask-faults-"))
    head = write_head(path, scratch / "head.csv", rows=2000)
    lc, client = local_cluster(args.workers)
    try:
        warm = dask_plugin.install_devices(client, "modern-gen4", name="warm-up")
        dask_plugin.read_csv(str(head), device=warm, split="dynamic").compute()  # imports, kernels on every worker
        start = time.perf_counter()
        expected = dask_plugin.read_csv(str(path), blocksize=args.blocksize).compute()
        fault_free_s = time.perf_counter() - start
        print(f"fault-free (host path): {fault_free_s:.1f} s, {len(expected):,} rows", flush=True)
        rows = [rate_runs(client, str(path), rate, expected, args, scratch) for rate in args.rates]
    finally:
        client.close()
        lc.close()
    return {"fault_free_s": fault_free_s, "rows_read": len(expected), "runs": rows}


def markdown(payload: dict[str, Any]) -> str:
    """The results as a Markdown table (``benchmarks/results/dask_faults.md``)."""
    args = payload["args"]
    lines = [f"# Faults under Dask: {Path(payload['path']).name} ({payload['bytes'] / MB:.0f} MB)", "",
             f"`python -m benchmarks.dask_faults` on a LocalCluster of {args['workers']} worker processes x 1 "
             f"thread, `blocksize={args['blocksize']}`, one `{args['profile']}` emulated SSD per worker, "
             f"`split=\"dynamic\"`, device tasks of {args['block_size'] // 1024} KiB; fault rate = probability that a "
             f"device command fails, split evenly over media errors, app failures and link timeouts. In every "
             f"job with a kill, the first worker to start its partition read #{args['kill_after'] + 1} SIGKILLs "
             f"itself. Fault-free read (host path): {payload['fault_free_s']:.1f} s, {payload['rows_read']:,} rows.",
             "", "| fault rate | faults counted (media / app / timeout) | device tasks | partitions | retried "
             "partitions | sent to workers | workers lost | wall s (kill) | wall s (no kill) | identical | totals "
             "as without kill |", "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |"]
    for r in payload["runs"]:
        f = r["faults"]
        lines.append(f"| {100 * r['rate']:g}% | {r['faults_total']} ({f['media_error']} / {f['app_failure']} / "
                     f"{f['link_timeout']}) | {r['device_tasks']:,} | {r['partitions']} | "
                     f"{r['retried_partitions']} | {r['attempts']} | {len(r['workers_lost'])} | {r['wall_s']:.1f} | "
                     f"{r['wall_s_without_kill']:.1f} | {'yes' if r['identical'] and r['identical_without_kill'] else 'NO'} | "
                     f"{'yes' if r['totals_equal_without_kill'] else 'NO'} |")
    load = lambda key: " / ".join(f"{x:.2f}" for x in payload[key])  # noqa: E731
    lines += ["", "*Retried partitions*: sent to a worker more than once (the read under way when the worker died, "
              "and those whose results died with it); *sent to workers*: partitions plus retries. *Identical*: the "
              "DataFrames of the jobs with and without the kill equal the fault-free one. *Totals as without "
              "kill*: the killed job's Report has the same pages, tasks, bytes and fault counts as the job without "
              "the kill (each partition counted once: the attempt whose result the job used).", "",
              f"Machine: {payload['host']['cpu_count']} CPUs ({payload['host']['cpu_model']}), load average "
              f"{load('loadavg_before')} (1, 5, 15 min) before the run, {load('loadavg_after')} after: wall times "
              "include other users' load.", ""]
    return "\n".join(lines)


def parse_args(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    from dask.utils import parse_bytes

    parser = argparse.ArgumentParser(prog="python -m benchmarks.dask_faults", description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale-factor", type=float, default=None, help="lineitem SF (default 1.3: about 1 GB)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--blocksize", default=None, help="bytes per Dask partition (default 64MiB, 4MiB with --quick)")
    parser.add_argument("--block-size", default="64KiB", help="bytes per device task")
    parser.add_argument("--rates", default=",".join(map(str, RATES)), help="fault rates, comma-separated")
    parser.add_argument("--kill-after", type=int, default=3, help="partition reads a worker finishes before dying")
    parser.add_argument("--profile", default="modern-gen4")
    parser.add_argument("--quick", action="store_true", help="lineitem SF 0.05")
    args = parser.parse_args(argv)
    args.scale_factor = args.scale_factor or (0.05 if args.quick else 1.3)
    args.blocksize = args.blocksize or ("4MiB" if args.quick else "64MiB")
    args.block_size = parse_bytes(args.block_size)
    args.rates = [float(r) for r in args.rates.split(",") if r]
    return args


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    path = datasets.make("lineitem", scale_factor=args.scale_factor)
    warm_page_cache(path)
    payload: dict[str, Any] = {"host": host_info(), "versions": package_versions(), "args": vars(args),
                               "path": str(path), "bytes": path.stat().st_size, "loadavg_before": os.getloadavg()}
    payload.update(run(path, args))
    payload["loadavg_after"] = os.getloadavg()
    name = "dask_faults" + ("-quick" if args.quick else "")
    out = write_result(f"{name}.json", payload)
    (RESULTS_DIR / f"{name}.md").write_text(markdown(payload))
    print(f"\nwrote {out} and {name}.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
