"""A worker killed mid-job while the devices inject faults, on a real
``LocalCluster`` (2 worker processes under nannies, 1 thread each).

``distributed`` reruns the partitions of the dead worker by itself (the
one it was reading, and those whose results died with it); the DataFrame
must be the one pyarrow reads from the file, and the job Report must count
the device faults and the retried partitions, each partition's work once.

The kill is the benchmark's (``benchmarks/dask_faults.py``,
``KillSwitchSSD``): each worker's emulated SSD counts its partition reads,
and the first worker to start its third one SIGKILLs its own process, mid-read.
With 2 workers and more than 4 partitions some worker always gets there,
so the kill needs no timing: the job is always mid-way, the read under way
is always lost.
"""
from __future__ import annotations

import pandas as pd
import pyarrow.csv as pacsv
import pytest

from benchmarks.dask_faults import accounting, faulty_job
from dask_plugin.attempts import Attempt, LedgerSnapshot, TaskRuns
from dask_plugin.reports import Entry, JobReport
from ndp_core.report import Report

RATES = [0.001, 0.01, 0.1]
#: 4 MB in 256 KiB partitions (17) of 1 KiB device tasks (about 4 200): a few faults even at 0.1%.
JOB = dict(blocksize="256KiB", block_size=1024)


@pytest.fixture(scope="module")
def big_awkward(tmp_path_factory, awkward_csv):
    """About 4 MB of the awkward CSV (quoted line breaks across partition and task cuts)."""
    return awkward_csv(tmp_path_factory.mktemp("worker_loss") / "awkward.csv", 20_000, seed=11)


@pytest.fixture(scope="module")
def pyarrow_frame(big_awkward):
    """The file as pyarrow reads it, whole, with ``pd.ArrowDtype`` columns."""
    options = pacsv.ParseOptions(newlines_in_values=True)
    return pacsv.read_csv(big_awkward, parse_options=options).to_pandas(types_mapper=pd.ArrowDtype)


@pytest.mark.slow
@pytest.mark.parametrize("rate", RATES, ids=[f"{100 * r:g}%" for r in RATES])
def test_a_worker_killed_mid_job_gives_the_same_frame_and_a_report_of_faults_and_retries(
        client, big_awkward, pyarrow_frame, rate, tmp_path, assert_same):
    calm = faulty_job(client, str(big_awkward), rate=rate, name=f"calm-{rate:g}", **JOB)
    flag = tmp_path / "killed"
    hit = faulty_job(client, str(big_awkward), rate=rate, name=f"hit-{rate:g}", kill_after=2, kill_flag=str(flag),
                     **JOB)
    assert flag.exists() and len(hit["job"].workers_lost) == 1  # one worker died...
    assert_same(hit["frame"], pyarrow_frame)  # ...and the frame is whole and exact
    assert_same(calm["frame"], pyarrow_frame)

    job, partitions = hit["job"], hit["partitions"]
    assert job.retried_partitions >= 1 and job.attempts > partitions == job.partitions
    assert calm["job"].retried_partitions == 0 and calm["job"].attempts == partitions
    # the dead worker's Reports died with it; every partition still counts once: the attempt the job used
    assert job.workers_lost[0] not in job.workers
    assert len(job.counted) == partitions and not job.superseded
    report = job.report
    assert sum(report.faults.values()) > 0
    assert accounting(report) == accounting(calm["job"].report)
    assert report.meta["dask"]["retried_partitions"] == job.retried_partitions
    text = str(job)
    assert f"retried partitions  {job.retried_partitions} (sent to workers {job.attempts} times" in text
    assert "faults              " + ", ".join(f"{k} {v}" for k, v in report.faults.items() if v) in text


def test_the_report_of_an_attempt_whose_result_was_not_used_is_left_out():
    """A partition read twice whose first Report still arrived (its worker
    was only presumed dead) counts once in the totals: the attempt whose
    result the scheduler accepted last."""
    ledger = LedgerSnapshot(retried=(TaskRuns(("read", 1), (Attempt(7, "tcp://a", True),
                                                            Attempt(9, "tcp://b", True))),),
                            workers_lost=("tcp://a",))
    entries = [Entry("p1", 1, "tcp://a", "r", 1, Report(tasks=5, faults={"media_error": 1}), ("read", 1), 7),
               Entry("p2", 1, "tcp://b", "r", 1, Report(tasks=5, faults={"media_error": 1}), ("read", 1), 9),
               Entry("p2", 2, "tcp://b", "r", 0, Report(tasks=3), ("read", 0), 4)]
    job = JobReport(entries=entries, ledger=ledger)
    assert [e.run_id for e in job.counted] == [9, 4]
    assert [e.run_id for e in job.superseded] == [7]
    assert (job.partitions, job.retried_partitions, job.attempts) == (2, 1, 3)
    assert job.report.tasks == 8 and job.report.faults["media_error"] == 1
    assert "1 Reports of earlier attempts left out" in "\n".join(job.describe())
