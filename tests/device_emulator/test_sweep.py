"""``device_emulator.sweep``: one read of a real CSV file, a grid of modeled runs.

The key check: a point of the sweep models exactly what a real device read
(``read_csv(path, device=ComputationalSSD(profile, **overrides), split=...)``)
reports, without the read.
"""
from __future__ import annotations

import datetime
import io
import math
import random

import pytest

import arrow_bridge
from device_emulator import ComputationalSSD, ProfileError, Sweep, load_profile, sweep
from device_emulator.sweep import SCALED, scaled_overrides
from ndp_core.report import collect

BLOCK = 8 << 10


@pytest.fixture(scope="module")
def csv_path(tmp_path_factory):
    """~350 KB: ints, floats, strings (some quoted with commas), dates, a few empty fields."""
    rng = random.Random(18)
    day0 = datetime.date(2020, 1, 1)
    lines = ["id,qty,price,name,day,note"]
    for i in range(9000):
        name = "".join(rng.choice("abcdefghij") for _ in range(rng.randint(3, 18)))
        note = '"a, b"' if i % 97 == 0 else ("" if i % 13 == 0 else f"n{rng.randint(0, 99)}")
        lines.append(f"{i},{rng.randint(1, 50)},{rng.random() * 1000:.2f},{name},"
                     f"{day0 + datetime.timedelta(days=rng.randint(0, 900))},{note}")
    path = tmp_path_factory.mktemp("sweep") / "orders.csv"
    path.write_text("\n".join(lines) + "\n")
    assert 200_000 < path.stat().st_size < 500_000
    return path


def _real_report(path, profile, split, block_size=None, **overrides):
    with collect() as c:
        arrow_bridge.read_csv(path, device=ComputationalSSD(profile, **overrides), split=split,
                              block_size=block_size)
    (report,) = c.reports
    return report


@pytest.fixture(scope="module")
def grid(csv_path):
    return sweep(csv_path, reader=arrow_bridge.read_csv, profiles=("summarizer-board", "modern-gen4"),
                 splits=("static:0.25", "dynamic", "device"), block_size=BLOCK,
                 overrides={"cores.count": [1, 4, 16], "cores.speed*": [1, 8]})


def test_grid_shape_and_columns(grid):
    frame = grid.frame
    assert isinstance(grid, Sweep) and len(grid) == len(frame) == 2 * 3 * 3 * 2 == len(grid.reports)
    assert grid.parameters == ("cores.count", "cores.speed*")
    for column in ("profile", "split", "cores.count", "cores.speed*", "task_bytes", "tasks", "makespan_s",
                   "speedup", "offload_share", "host_cpu_s", "energy_j", "link_bytes", "device_cores_util",
                   "flash_util", "link_util"):
        assert column in frame.columns
    assert list(dict.fromkeys(frame["profile"])) == ["summarizer-board", "modern-gen4"]
    assert list(dict.fromkeys(frame["split"])) == ["static:0.25", "dynamic", "device"]
    assert (frame["task_bytes"] == BLOCK).all() and frame["tasks"].nunique() == 1
    assert ((frame["offload_share"] >= 0) & (frame["offload_share"] <= 1)).all()
    assert (frame.loc[frame.split == "device", "offload_share"] == 1).all()


@pytest.mark.parametrize("split", ["host", "static:0.25", "dynamic", "device"])
def test_a_point_is_the_real_run(csv_path, split):
    """Makespan, pages, bytes, host CPU and energy of a point = those of the real device read."""
    s = sweep(csv_path, reader=arrow_bridge.read_csv, profiles="summarizer-board", splits=split,
              overrides={"cores.speed*": 4, "link.lanes": [2]}, block_size=BLOCK)
    real = _real_report(csv_path, "summarizer-board", split, BLOCK, **{"cores.clock_MHz": 800.0, "link.lanes": 2})
    (model,) = s.reports
    assert model.makespan_s == real.makespan_s and s.frame["makespan_s"][0] == real.makespan_s
    assert model.pages == real.pages and model.bytes == real.bytes and model.tasks == real.tasks
    assert model.host_cpu_s == real.host_cpu_s and model.energy_total_j == real.energy_total_j
    assert model.device == real.device == "summarizer-board*"
    assert (real.pages["device"] > 0) == (split != "host") and real.tasks > 32  # the device really took part
    assert (real.pages["raw"] > 0) == (split == "dynamic")  # a full task queue returned some raw


def test_default_task_size_is_the_devices(csv_path):
    """block_size=None: each device's own task size, as a device read without block_size; sweeping
    the task size reads the file once per size."""
    calls = []

    def reader(source, **kw):
        calls.append(kw["block_size"])
        return arrow_bridge.read_csv(source, **kw)

    s = sweep(csv_path, reader=reader, profiles="modern-gen4", splits="dynamic",
              overrides={"task_queue.task_bytes": [32 << 10, 64 << 10], "cores": [1, 2]})
    assert sorted(calls) == [32 << 10, 64 << 10]
    assert s.frame["task_bytes"].tolist() == [32 << 10, 32 << 10, 64 << 10, 64 << 10]
    real = _real_report(csv_path, "modern-gen4", "dynamic", **{"task_queue.task_bytes": 64 << 10, "cores": 2})
    assert s.frame["makespan_s"].iloc[-1] == real.makespan_s and s.frame["tasks"].iloc[-1] == real.tasks


def test_speedup_is_against_the_same_devices_host_split(grid, csv_path):
    frame = grid.frame
    for profile in ("summarizer-board", "modern-gen4"):
        host = _real_report(csv_path, profile, "host", BLOCK).makespan_s
        rows = frame[frame.profile == profile]
        assert rows["speedup"].to_numpy() == pytest.approx(host / rows["makespan_s"].to_numpy(), rel=1e-12)
    with_host = sweep(csv_path, reader=arrow_bridge.read_csv, splits=("host", "dynamic"), block_size=BLOCK)
    assert with_host.frame["speedup"].iloc[0] == 1.0
    dynamic = frame[(frame.profile == "summarizer-board") & (frame.split == "dynamic") & (frame["cores.count"] == 1)
                    & (frame["cores.speed*"] == 1)]
    assert with_host.frame["speedup"].iloc[1] == dynamic["speedup"].iloc[0]


def test_more_device_cores_are_never_slower(grid):
    frame = grid.frame
    device = frame[frame.split == "device"]
    for (_, _), rows in device.groupby(["profile", "cores.speed*"]):
        makespans = rows.sort_values("cores.count")["makespan_s"].tolist()
        # once the cores no longer bind (modern-gen4 at 8x), more of them give the same makespan up to rounding
        assert all(later <= earlier * (1 + 1e-12) for earlier, later in zip(makespans, makespans[1:]))
        assert makespans[-1] < makespans[0]
    faster = frame[frame.split == "device"].pivot_table("makespan_s", ["profile", "cores.count"], "cores.speed*")
    assert (faster[8] <= faster[1]).all()


def _no_read(*args, **kwargs):
    raise AssertionError("the file was read")


@pytest.mark.parametrize("overrides, message", [
    ({"cores.count": [1], "flash.channelz": [2]}, "unknown profile parameter 'flash.channelz'"),
    ({"flash.internal_bandwidth": [1, 2]}, "sweep a factor with 'flash.internal_bandwidth\\*'"),
    ({"cores.count": ["many"]}, "cores.count must be an integer"),
    ({"cores.speed*": [0]}, "scale factor"),
    ({"cores.fpu*": [2]}, "not a number"),
    ({"cores.speed*": [2], "cores.clock_MHz": [100]}, "both set cores.clock_MHz"),
])
def test_bad_override_keys_raise_before_reading(csv_path, overrides, message):
    with pytest.raises(ProfileError, match=message):
        sweep(csv_path, reader=_no_read, overrides=overrides)


def test_bad_arguments(csv_path):
    with pytest.raises(TypeError, match="reader="):
        sweep(csv_path)
    with pytest.raises(ValueError, match="split must be"):
        sweep(csv_path, reader=_no_read, splits=("dynamic", "half"))
    with pytest.raises(ProfileError, match="unknown profile"):
        sweep(csv_path, reader=_no_read, profiles=("no-such-board",))
    with pytest.raises(TypeError, match="split"):
        sweep(csv_path, reader=_no_read, split="dynamic")


@pytest.mark.parametrize("name", sorted(SCALED))
def test_scaled_quantities_change_by_the_factor(name):
    profile = load_profile("hods-fpga" if name == "pipeline.rate" else "morpheus-isca16")
    measure = {"flash.internal_bandwidth": lambda p: p.internal_bandwidth,
               "link.bandwidth": lambda p: p.link_bandwidth,
               "cores.speed": lambda p: p["cores.clock_MHz"],
               "pipeline.rate": lambda p: p.pipeline_rate,
               "host.speed": lambda p: p["host.clock_MHz"]}[name]
    for factor in (0.5, 3):
        scaled = profile.with_overrides(**scaled_overrides(profile, name + "*", factor))
        assert measure(scaled) == pytest.approx(factor * measure(profile), rel=1e-12)


def test_the_read_is_not_collected_and_file_objects_are_rewound(csv_path):
    data = csv_path.read_bytes()
    source = io.BytesIO(data)
    source.seek(0)
    with collect() as c:
        s = sweep(source, reader=arrow_bridge.read_csv, splits="dynamic",
                  overrides={"task_queue.task_bytes": [16 << 10, 32 << 10]})
    assert len(c) == 0 and source.tell() == 0
    assert s.frame["tasks"].iloc[0] > s.frame["tasks"].iloc[1] > 1


def test_progress_bar(csv_path, capsys):
    sweep(csv_path, reader=arrow_bridge.read_csv, splits="dynamic", block_size=BLOCK, progress=True)
    assert "sweep" in capsys.readouterr().err
    sweep(csv_path, reader=arrow_bridge.read_csv, splits="dynamic", block_size=BLOCK)  # short: no bar
    assert capsys.readouterr().err == ""


def _series(axis):
    return [line.get_label() for line in axis.get_lines() if not line.get_label().startswith("_")]


def test_plot_one_line_per_series(grid):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    axes = grid.plot()  # x: cores.count, one panel per cores.speed* value
    assert isinstance(axes, list) and len(axes) == 2
    for axis in axes:
        labels = _series(axis)
        assert len(labels) == len(set(labels)) == 2 * 3  # (profile, split)
        assert all(len(line.get_xdata()) == 3 for line in axis.get_lines() if not line.get_label().startswith("_"))
    assert axes[0].get_xscale() == "log" and "cores.speed" in axes[1].get_title()

    axis = grid.plot("makespan_s", x="cores.speed*", facet="cores.count")[0]
    assert len(_series(axis)) == 6 and axis.get_ylabel() == "makespan_s"
    plt.close("all")

    one = sweep(io.BytesIO(b"a,b\n" + b"1,2.5\n" * 3000), reader=arrow_bridge.read_csv, block_size=4096,
                splits=("host", "static:0.5", "dynamic"), overrides={"cores": [1, 2, 4]})
    axis = one.plot()
    assert _series(axis) == ["host", "static:0.5", "dynamic"]
    assert not math.isnan(one.best()["speedup"])
    _, empty = plt.subplots()
    assert one.plot(ax=empty) is empty
    bars = sweep(io.BytesIO(b"a\n" + b"1\n" * 3000), reader=arrow_bridge.read_csv, block_size=4096).plot()
    assert [tick.get_text() for tick in bars.get_xticklabels()] == ["host", "dynamic"]
    plt.close("all")
