"""calibrate(): non-negative fit of host cycles per work unit."""
from __future__ import annotations

import numpy as np
import pytest

from device_emulator import calibrate, host_clock_MHz, load_profile, task_costs
from device_emulator.calibrate import nnls
from ndp_core.device import TaskWork


def _samples(costs, clock_hz, n=40, noise=0.0, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        text = int(rng.integers(10_000, 2_000_000))
        c = {"bytes_scanned": text, "rows": text // int(rng.integers(20, 80)),
             "fields": text // int(rng.integers(5, 12)), "ints": int(rng.integers(0, text // 8)),
             "floats": int(rng.integers(0, text // 10)), "string_bytes": int(rng.integers(0, text // 3)),
             "bools": 0, "temporals": 0, "nulls": 0}  # as the reader's tasks: every counter, some never counted
        cyc = costs.get("tasks", 0) + sum(c[k] * v for k, v in costs.items() if k != "tasks")
        s = cyc / clock_hz * (1 + noise * rng.standard_normal())
        out.append(TaskWork(i, 0, 1, text, 0, c, measured_s=s))
    return out


def test_recovers_known_costs():
    truth = {"bytes_scanned": 4.0, "rows": 10.0, "fields": 15.0, "ints": 50.0, "floats": 120.0,
             "string_bytes": 1.0, "tasks": 100_000.0}
    hc = calibrate(_samples(truth, 3e9), clock_MHz=3000)
    for k, v in truth.items():
        assert hc.cycles[k] == pytest.approx(v, rel=1e-6), k
    assert hc.r2 == pytest.approx(1.0) and hc.rel_rmse < 1e-9
    assert set(hc.unfitted) == {"bools", "temporals", "nulls"}  # carried but never counted
    assert hc.n_samples == 40 and "HostCosts" in str(hc)


def test_fits_the_counters_the_tasks_carry():
    # no built-in names: whatever an app counts is fitted, in the tasks' order, then "tasks"
    samples = [TaskWork(i, 0, 1, 100, 0, {"matches": m, "probes": p}, measured_s=(3 * m + 5 * p + 7) / 1e9)
               for i, (m, p) in enumerate([(10, 1), (20, 7), (5, 30), (40, 2), (8, 8)])]
    hc = calibrate(samples, clock_MHz=1000, relative=False)
    assert list(hc.cycles) == ["matches", "probes", "tasks"]
    assert [round(hc.cycles[k], 6) for k in hc.cycles] == [3.0, 5.0, 7.0]
    assert list(calibrate(samples, clock_MHz=1000, units=["matches"]).cycles) == ["matches"]


def test_noisy_fit_is_non_negative_and_close():
    truth = {"bytes_scanned": 4.0, "fields": 15.0, "ints": 50.0, "floats": 120.0, "tasks": 50_000.0}
    samples = _samples(truth, 2.5e9, n=200, noise=0.03, seed=1)
    hc = calibrate(samples, clock_MHz=2500)
    preds = np.array([hc.predict_s(t) for t in samples])
    meas = np.array([t.measured_s for t in samples])
    assert np.median(np.abs(preds / meas - 1)) < 0.05
    # rows/string_bytes cost nothing in truth: the fit keeps them small
    assert hc.cycles["rows"] < 5 and hc.cycles["string_bytes"] < 1


def test_model_host_times_match_after_calibration():
    truth = {"bytes_scanned": 6.0, "fields": 20.0, "ints": 40.0, "floats": 90.0, "rows": 12.0,
             "string_bytes": 2.0, "tasks": 30_000.0}
    samples = _samples(truth, 2.0e9)
    hc = calibrate(samples, clock_MHz=2000, cores=4)
    p = load_profile("morpheus-isca16", host=hc)
    assert p["host.cores"] == 4
    for t in samples[:10]:
        assert task_costs(p, t).host == pytest.approx(t.measured_s, rel=1e-6)
    q = load_profile("morpheus-isca16", **hc.to_overrides())
    assert q.flat() == p.flat()


def test_errors_and_helpers():
    with pytest.raises(ValueError):
        calibrate([TaskWork(0, 0, 1, 10, 0, {"bytes_scanned": 10})])  # nothing measured
    with pytest.raises(ValueError):
        calibrate([TaskWork(0, 0, 1, 10, 0, {"bytes_scanned": 10, "ints": 1}, measured_s=1e-6)])
    assert host_clock_MHz() > 0
    A = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 7.0]])
    x = nnls(A, A @ np.array([0.5, 2.0]))
    assert x == pytest.approx([0.5, 2.0])
    assert (nnls(A, -A @ np.array([1.0, 1.0])) == 0).all()
