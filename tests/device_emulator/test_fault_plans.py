"""Fault plans: deterministic, rates respected, retry rules, accounting in reports."""
from __future__ import annotations

import os
import pickle
import subprocess
import sys

import pytest

from device_emulator import ComputationalSSD, FaultPlan, simulate
from ndp_core.device import (FAULT_APP, FAULT_MEDIA, FAULT_NAMES, FAULT_NONE, FAULT_TIMEOUT,
                             FAULT_TQ_OVERFLOW, RAW)


def test_rates_are_respected():
    plan = FaultPlan(media_error=0.05, app_failure=0.1, link_timeout=0.15, tq_overflow=0.2, seed=11)
    codes = [plan.fault_code(t, 0) for t in range(20000)]
    for code, rate in ((FAULT_MEDIA, 0.05), (FAULT_APP, 0.1), (FAULT_TIMEOUT, 0.15), (FAULT_TQ_OVERFLOW, 0.2)):
        assert abs(codes.count(code) / len(codes) - rate) < 0.012
    assert FaultPlan().fault_code(5, 0) == FAULT_NONE and not FaultPlan()
    assert all(FaultPlan(media_error=1.0).fault_code(t, 0) == FAULT_MEDIA for t in range(100))


def test_seed_changes_the_draw_and_is_reproducible():
    a = [FaultPlan(media_error=0.3, seed=1).fault_code(t, 0) for t in range(200)]
    b = [FaultPlan(media_error=0.3, seed=2).fault_code(t, 0) for t in range(200)]
    assert a != b
    assert a == [FaultPlan(media_error=0.3, seed=1).fault_code(t, 0) for t in range(200)]


def test_not_pythons_randomized_hash():
    code = ("from device_emulator import FaultPlan; p = FaultPlan(media_error=0.2, link_timeout=0.2, seed=5); "
            "print([p.fault_code(t, a) for t in range(64) for a in range(3)])")
    outs = set()
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        outs.add(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                check=True).stdout)
    assert len(outs) == 1
    plan = FaultPlan(media_error=0.2, link_timeout=0.2, seed=5)
    assert outs.pop().strip() == str([plan.fault_code(t, a) for t in range(64) for a in range(3)])


def test_retry_rules():
    plan = FaultPlan(link_timeout=1.0)
    assert [plan.fault_code(0, a) for a in range(4)] == [FAULT_TIMEOUT, FAULT_NONE, FAULT_NONE, FAULT_NONE]
    plan = FaultPlan(media_error=1.0)
    assert [plan.fault_code(0, a) for a in range(3)] == [FAULT_MEDIA, FAULT_MEDIA, FAULT_NONE]
    mixed = FaultPlan(media_error=0.3, link_timeout=0.3, seed=3)
    for t in range(500):
        if mixed.fault_code(t, 0) == FAULT_TIMEOUT:
            assert mixed.fault_code(t, 1) == FAULT_NONE
        assert mixed.fault_code(t, 2) == FAULT_NONE and mixed.fault_code(t, -1) == FAULT_NONE
    assert FaultPlan(link_timeout=1.0).faults_for(0) == {"link_timeout": 1}
    assert FaultPlan(app_failure=1.0).faults_for(0) == {"app_failure": 1}
    assert FaultPlan().faults_for(0) == {}


def test_explicit_tasks():
    plan = FaultPlan(tasks={2: "media_error", 5: FAULT_TQ_OVERFLOW}, media_error=1.0)
    assert plan.fault_code(2, 0) == FAULT_MEDIA and plan.fault_code(2, 1) == FAULT_NONE
    assert plan.fault_code(5, 0) == FAULT_TQ_OVERFLOW
    assert plan.fault_code(3, 0) == FAULT_MEDIA  # others still draw
    assert plan.explicit == {2: FAULT_MEDIA, 5: FAULT_TQ_OVERFLOW}
    assert hash(plan) == hash(FaultPlan(tasks={5: "tq_overflow", 2: "media_error"}, media_error=1.0))


@pytest.mark.parametrize("bad", [dict(media_error=-0.1), dict(app_failure=1.5), dict(media_error=0.6, tq_overflow=0.6),
                                 dict(tasks={1: "gremlins"}), dict(tasks={1: 99})])
def test_invalid_plans(bad):
    with pytest.raises(ValueError):
        FaultPlan(**bad)


def test_plan_pickles_and_coerces():
    plan = FaultPlan(app_failure=0.25, seed=9, tasks={1: "link_timeout"})
    assert pickle.loads(pickle.dumps(plan)) == plan
    assert FaultPlan.coerce({"media_error": 0.5}) == FaultPlan(media_error=0.5)
    assert FaultPlan.coerce(None) is None
    with pytest.raises(TypeError):
        FaultPlan.coerce(0.5)


def test_device_fault_for_and_report_accounting(simple_profile, task):
    plan = FaultPlan(media_error=0.2, app_failure=0.2, link_timeout=0.2, tq_overflow=0.2, seed=4)
    ssd = ComputationalSSD(simple_profile(), faults=plan)
    assert ssd.fault_for(7, 0) == plan.fault_code(7, 0)
    assert ComputationalSSD(simple_profile()).fault_for(7, 0) == FAULT_NONE
    tasks = [task(i, faults=plan.faults_for(i)) for i in range(60)]
    s = ssd.schedule(tasks, "dynamic", wall_s=0.0)
    expected = {name: sum(plan.faults_for(i).get(name, 0) for i in range(60)) for name in FAULT_NAMES.values()}
    assert s.report.faults == expected
    assert sum(expected.values()) > 10
    for i, side in enumerate(s.sides):
        kinds = plan.faults_for(i)
        if {"media_error", "app_failure", "tq_overflow"} & set(kinds):
            assert side == RAW
    # uniform_tasks fills faults the same way
    from device_emulator import uniform_tasks

    ts = uniform_tasks(60 * 100, {"bytes_scanned": 6000}, page_size=1000, task_bytes=100, faults=plan)
    assert [t.faults for t in ts] == [plan.faults_for(i) for i in range(60)]
    # a timeout costs the profile's timeout_s
    t0 = simulate(simple_profile(), [task(0)], "device").report.makespan_s
    t1 = simulate(simple_profile(timeout_s=0.5), [task(0, faults={"link_timeout": 1})], "device").report.makespan_s
    assert t1 == pytest.approx(2 * t0 + 0.5)
