"""calibrate(): non-negative fit of host cycles per work unit, and the reasons to doubt one.

Synthetic tasks (known costs, chosen noise and shapes) check the fit and each
warning exactly; the reader's own calibration (``arrow_bridge.calibrate``) is
checked on real files only loosely, as its timings come from a shared machine.
"""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import arrow_bridge
from device_emulator import calibrate, host_clock_MHz, load_profile, task_costs
from device_emulator.calibrate import CalibrationWarning, nnls
from ndp_core.device import TaskWork

ALL_COUNTED = {"bools", "temporals", "nulls"}


def _samples(costs, clock_hz, n=40, noise=0.0, seed=0, counted=()):
    """Tasks of independent random shapes whose times follow ``costs``; ``bools``,
    ``temporals`` and ``nulls`` stay 0 unless ``counted`` names them."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        text = int(rng.integers(10_000, 2_000_000))
        c = {"bytes_scanned": text, "rows": text // int(rng.integers(20, 80)),
             "fields": text // int(rng.integers(5, 12)), "ints": int(rng.integers(0, text // 8)),
             "floats": int(rng.integers(0, text // 10)), "string_bytes": int(rng.integers(0, text // 3)),
             "bools": 0, "temporals": 0, "nulls": 0}  # as the reader's tasks: every counter, some never counted
        for name in counted:
            c[name] = int(rng.integers(0, text // 20))
        cyc = costs.get("tasks", 0) + sum(c[k] * v for k, v in costs.items() if k != "tasks")
        s = cyc / clock_hz * (1 + noise * rng.standard_normal())
        out.append(TaskWork(i, 0, 1, text, 0, c, measured_s=s))
    return out


def _fit_quietly(samples, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CalibrationWarning)
        return calibrate(samples, **kw)


def _no_warnings(samples, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("error", CalibrationWarning)
        return calibrate(samples, **kw)


TRUTH = {"bytes_scanned": 4.0, "rows": 10.0, "fields": 15.0, "ints": 50.0, "floats": 120.0,
         "string_bytes": 1.0, "bools": 30.0, "temporals": 90.0, "nulls": 5.0, "tasks": 100_000.0}


# ---- the fit ----------------------------------------------------------------------------------------
def test_recovers_known_costs():
    truth = {k: v for k, v in TRUTH.items() if k not in ALL_COUNTED}
    with pytest.warns(CalibrationWarning, match=r"^bools, temporals, nulls: no task exercised them; "
                                                r"they keep the profile's price$"):
        hc = calibrate(_samples(truth, 3e9), clock_MHz=3000)
    for k, v in truth.items():
        assert hc.cycles[k] == pytest.approx(v, rel=1e-6), k
    assert hc.r2 == pytest.approx(1.0) and hc.rel_rmse < 1e-9
    assert set(hc.unfitted) == ALL_COUNTED  # carried but never counted
    assert hc.n_samples == 40 and hc.n_dropped == 0 and "HostCosts" in str(hc)


def test_a_clean_fit_of_varied_tasks_warns_nothing():
    hc = _no_warnings(_samples(TRUTH, 3e9, counted=ALL_COUNTED), clock_MHz=3000)
    assert hc.cycles == pytest.approx(TRUTH, rel=1e-6)
    assert (hc.unfitted, hc.confounded, hc.warnings, hc.n_dropped) == ((), (), (), 0)


def test_fits_the_counters_the_tasks_carry():
    # no built-in names: whatever an app counts is fitted, in the tasks' order, then "tasks"
    samples = [TaskWork(i, 0, 1, 100, 0, {"matches": m, "probes": p}, measured_s=(3 * m + 5 * p + 7) / 1e9)
               for i, (m, p) in enumerate([(10, 1), (20, 7), (5, 30), (40, 2), (8, 8)])]
    hc = _no_warnings(samples, clock_MHz=1000, relative=False)
    assert list(hc.cycles) == ["matches", "probes", "tasks"]
    assert [round(hc.cycles[k], 6) for k in hc.cycles] == [3.0, 5.0, 7.0]
    with pytest.warns(CalibrationWarning, match="poor fit"):  # "matches" alone cannot explain the times
        assert list(calibrate(samples, clock_MHz=1000, units=["matches"]).cycles) == ["matches"]


def test_noisy_fit_is_non_negative_and_close():
    truth = {"bytes_scanned": 4.0, "fields": 15.0, "ints": 50.0, "floats": 120.0, "tasks": 50_000.0}
    samples = _samples(truth, 2.5e9, n=200, noise=0.03, seed=1, counted=ALL_COUNTED)
    hc = _no_warnings(samples, clock_MHz=2500)
    preds = np.array([hc.predict_s(t) for t in samples])
    meas = np.array([t.measured_s for t in samples])
    assert np.median(np.abs(preds / meas - 1)) < 0.05
    # rows/string_bytes cost nothing in truth: the fit keeps them small
    assert hc.cycles["rows"] < 5 and hc.cycles["string_bytes"] < 1


def test_model_host_times_match_after_calibration():
    truth = {"bytes_scanned": 6.0, "fields": 20.0, "ints": 40.0, "floats": 90.0, "rows": 12.0,
             "string_bytes": 2.0, "tasks": 30_000.0}
    samples = _samples(truth, 2.0e9)
    hc = _fit_quietly(samples, clock_MHz=2000, cores=4)
    p = load_profile("morpheus-isca16", host=hc)
    assert p["host.cores"] == 4
    for t in samples[:10]:
        assert task_costs(p, t).host == pytest.approx(t.measured_s, rel=1e-6)
    q = load_profile("morpheus-isca16", **hc.to_overrides())
    assert q.flat() == p.flat()


# ---- outliers ---------------------------------------------------------------------------------------
def _slowed(samples, every: int, factor: float):
    for t in samples[::every]:
        t.measured_s *= factor
    return samples


def test_outliers_are_dropped_and_the_fit_is_exact_again():
    samples = _slowed(_samples(TRUTH, 3e9, n=200, counted=ALL_COUNTED), every=25, factor=5.0)  # 8 preempted tasks
    hc = _no_warnings(samples, clock_MHz=3000)
    assert hc.n_dropped == 8 and hc.n_samples == 192
    assert hc.cycles == pytest.approx(TRUTH, rel=1e-6) and hc.r2 == pytest.approx(1.0)
    assert "8 dropped as outliers" in str(hc)
    raw = _fit_quietly(samples, clock_MHz=3000, robust=False)
    assert raw.n_dropped == 0 and raw.rel_rmse > 0.1


def test_a_misfit_is_kept_not_dropped_and_said():
    samples = _slowed(_samples(TRUTH, 3e9, n=200, counted=ALL_COUNTED), every=3, factor=2.0)  # a third of them
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        hc = calibrate(samples, clock_MHz=3000)
    messages = [str(w.message) for w in caught if issubclass(w.category, CalibrationWarning)]
    assert hc.n_dropped == 0 and messages == list(hc.warnings)
    assert any(m.startswith("poor fit: R^2") for m in messages)
    assert any("tasks lie far off the fit, more than 10%: kept" in m for m in messages)


# ---- poor fits --------------------------------------------------------------------------------------
def test_warns_on_a_poor_fit_with_its_figures():
    rng = np.random.default_rng(3)
    samples = _samples(TRUTH, 3e9, n=300, counted=ALL_COUNTED)
    for t in samples:
        t.measured_s *= float(np.exp(0.6 * rng.standard_normal()))  # timing noise of +-60%
    with pytest.warns(CalibrationWarning, match=r"poor fit: R\^2 -?\d\.\d\d \(warns under 0\.9\), relative RMSE "
                                                r"\d+% \(warns over 25%\) over \d+ tasks; the counters do not "
                                                r"explain the times") as caught:
        hc = calibrate(samples, clock_MHz=3000)
    assert hc.rel_rmse > 0.25 and any(str(w.message) in hc.warnings for w in caught)


def test_a_low_r2_on_tasks_of_one_size_says_why():
    same = [TaskWork(i, 0, 1, 100_000, 0, {"bytes_scanned": 100_000 + 7 * i, "ints": 5_000 + (i * 37) % 1000},
                     measured_s=(4 * (100_000 + 7 * i) + 40 * (5_000 + (i * 37) % 1000)) / 3e9
                     * (1.1 if i % 2 else 0.9)) for i in range(60)]
    with pytest.warns(CalibrationWarning) as caught:
        hc = calibrate(same, clock_MHz=3000, units=["bytes_scanned", "ints"])
    assert hc.r2 < 0.9 and hc.rel_rmse < 0.25
    assert any("the tasks' times vary little" in str(w.message) and "several sizes" in str(w.message)
               for w in caught)


# ---- units the tasks cannot tell apart --------------------------------------------------------------
def _one_shape(sizes, noise=0.0, seed=0):
    """Tasks cut from one file: every counter a fixed multiple of the rows."""
    rng = np.random.default_rng(seed)
    out = []
    for i, rows in enumerate(sizes):
        c = {"bytes_scanned": 130 * rows + int(rng.integers(0, 5)), "rows": rows, "fields": 16 * rows,
             "ints": 5 * rows, "string_bytes": 40 * rows}
        cycles = 2 * c["bytes_scanned"] + 10 * c["fields"] + 30 * c["ints"] + c["string_bytes"] + 50_000
        out.append(TaskWork(i, 0, 1, c["bytes_scanned"], 0, c,
                            measured_s=cycles / 3e9 * (1 + noise * rng.standard_normal())))
    return out


def test_one_files_counters_cannot_be_told_apart():
    sizes = [int(s) for s in np.random.default_rng(0).integers(500, 16_000, size=80)]
    with pytest.warns(CalibrationWarning, match="cannot be told apart") as caught:
        hc = calibrate(_one_shape(sizes, noise=0.02), clock_MHz=3000)
    (group,) = hc.confounded
    assert {"rows", "fields", "ints", "string_bytes"} <= set(group) and "tasks" not in group
    (message,) = [str(w.message) for w in caught]
    assert message.startswith(", ".join(group) + " cannot be told apart")
    assert "give files of different shapes" in message
    # what the fit does know: the time of tasks shaped like these
    preds = np.array([hc.predict_s(t) for t in _one_shape([3000, 9000])])
    assert preds == pytest.approx([t.measured_s for t in _one_shape([3000, 9000])], rel=0.05)


def test_one_task_size_cannot_tell_the_per_task_cost_from_the_rest():
    with pytest.warns(CalibrationWarning, match="measure spans of several sizes"):
        hc = calibrate(_one_shape([8000 + (i % 3) for i in range(30)]), clock_MHz=3000)
    assert any("tasks" in group for group in hc.confounded)


# ---- sources and tasks left out ---------------------------------------------------------------------
def test_fit_quality_per_source_and_a_source_that_does_not_fit():
    fits = _samples(TRUTH, 3e9, n=60, counted=ALL_COUNTED, seed=4)
    slower = _samples(TRUTH, 3e9, n=30, counted=ALL_COUNTED, seed=5)
    for t in slower:
        t.measured_s *= 1.6  # another machine's file, or a code path the counters do not see
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        hc = calibrate(fits + slower, clock_MHz=3000, sources=["a.csv"] * 60 + ["b.csv"] * 30)
    assert [str(w.message) for w in caught] == list(hc.warnings)  # a poor fit, a misfit, and why: b.csv
    assert any(re.match(r"b\.csv: modeled 0\.\d\dx its measured time \(relative RMSE \d+%\); one price per unit "
                        r"does not fit this source together with the others", w) for w in hc.warnings)
    assert list(hc.per_source) == ["a.csv", "b.csv"]
    assert hc.per_source["a.csv"].n_samples + hc.per_source["b.csv"].n_samples == hc.n_samples
    assert hc.per_source["b.csv"].ratio < 0.8 < hc.per_source["a.csv"].ratio
    assert "b.csv:" in str(hc)
    with pytest.raises(ValueError, match="one label per sample"):
        calibrate(fits, sources=["a.csv"])


def test_tasks_left_out_are_predicted_not_fitted():
    samples = _samples(TRUTH, 3e9, n=40, counted=ALL_COUNTED)
    aside = _slowed(_samples(TRUTH, 3e9, n=5, counted=ALL_COUNTED, seed=9), every=1, factor=5.0)
    hc = _no_warnings(samples, clock_MHz=3000, left_out=aside)
    assert hc.cycles == pytest.approx(TRUTH, rel=1e-6) and hc.n_samples == 40
    assert hc.left_out.n_samples == 5 and hc.left_out.ratio == pytest.approx(0.2)
    assert "left out of the fit: 5 tasks" in str(hc)


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


# ---- the reader's calibration on real files ---------------------------------------------------------
def _shapes(rng) -> dict[str, bytes]:
    """Four small files of different shapes, each region of rows with its own null rates
    and value lengths, so that every counter varies apart from the others: one nullable
    int column; two int columns; twelve short strings; eight columns of ints, floats,
    bools, dates and timestamps. (Three shapes leave rows, fields and ints confounded:
    a file's fields are its rows times its columns, and its values plus nulls its fields.)"""

    def lines(header, rows, region, row):
        out = [header]
        for start in range(0, rows, region):
            make = row()
            out += [make(i) for i in range(start, min(start + region, rows))]
        return b"\n".join(out) + b"\n"

    def ints():
        digits, p = int(rng.integers(1, 16)), rng.choice([0.0, 0.2, 0.5, 0.9])
        return lambda i: b"" if rng.random() < p else b"%d" % rng.integers(0, 10 ** digits)

    def pairs():
        digits = int(rng.integers(1, 16))
        return lambda i: b"%d,%d" % (rng.integers(0, 10 ** digits), rng.integers(0, 10 ** digits))

    def text():
        width = int(rng.integers(1, 6))
        return lambda i: b",".join(b"w" * int(rng.integers(1, width + 1)) for _ in range(12))

    def mixed():
        p = rng.choice([0.0, 0.1, 0.3, 0.6], size=8)

        def row(i):
            cells = [b"%d" % i] + [b"%.*f" % (int(rng.integers(1, 9)), rng.random() * 1000) for _ in range(4)] + [
                b"true" if rng.random() < 0.5 else b"false",
                b"20%02d-%02d-%02d" % (rng.integers(0, 30), rng.integers(1, 13), rng.integers(1, 29)),
                b"2021-03-%02dT%02d:%02d:%02d" % (rng.integers(1, 29), rng.integers(0, 24), rng.integers(0, 60),
                                                 rng.integers(0, 60))]
            return b",".join(b"" if rng.random() < p[j] else c for j, c in enumerate(cells))
        return row

    return {"ints.csv": lines(b"a", 100_000, 1000, ints), "pairs.csv": lines(b"src,dst", 60_000, 2000, pairs),
            "text.csv": lines(b",".join(b"s%d" % j for j in range(12)), 30_000, 300, text),
            "mixed.csv": lines(b"id,w,x,y,z,ok,day,at", 12_000, 300, mixed)}


def test_reader_calibration_on_files_of_four_shapes(tmp_path):
    paths = []
    for name, data in _shapes(np.random.default_rng(7)).items():
        (tmp_path / name).write_bytes(data)
        paths.append(str(tmp_path / name))
    block_sizes = (1 << 14, 1 << 16, 1 << 18)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", CalibrationWarning)
        costs = arrow_bridge.calibrate(paths, block_sizes, repeat=5)  # each span keeps its fastest time
    # R^2 measured 0.89-0.95 run to run on the 2-core machine: the hints that depend on timing noise
    # ("poor fit" under 0.9, a source modeled off its measured time) may fire on a busy machine; a fit
    # that explains most of the time is this test's bar. The hints that do not depend on timing must not.
    deterministic = ("no task exercised", "cannot be told apart")
    assert not any(hint in str(w.message) for w in caught for hint in deterministic), [str(w.message) for w in caught]
    assert costs.r2 > 0.8 and not costs.unfitted and not costs.confounded
    assert list(costs.per_source) == ["ints.csv", "pairs.csv", "text.csv", "mixed.csv"]
    # every read's first span: left out of the fit (the general path), reported
    assert costs.left_out.n_samples == len(paths) * len(block_sizes) and costs.left_out.ratio < 1
    assert costs.n_samples + costs.n_dropped > 150


def test_reader_calibration_needs_more_than_one_span(tmp_path):
    small = tmp_path / "small.csv"
    small.write_bytes(b"a,b\n" + b"1,2\n" * 100)
    with pytest.raises(ValueError, match="no spans to measure"):
        arrow_bridge.calibrate([str(small)], (1 << 16,))
