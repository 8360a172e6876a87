"""ndp_core.report.timeline: kinds and colours by side, lanes and bands, the legend, per-worker rows
of a Dask job, dense timelines drawn quickly, an empty timeline."""
from __future__ import annotations

import subprocess
import sys

import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.colors as mcolors  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

import device_emulator  # noqa: E402
from device_emulator import load_profile  # noqa: E402
from ndp_core.report import Report  # noqa: E402
from ndp_core.report.timeline import KINDS, timeline_layout, timeline_rows, use_kind  # noqa: E402

COUNTERS = {"bytes_scanned": 64 << 10, "fields": 8000, "ints": 8000}  # per 64 KiB task


def simulated(n_tasks: int, profile: str = "summarizer-board", split: str = "dynamic", **kw) -> Report:
    """The Report of ``n_tasks`` 64 KiB tasks on ``profile``."""
    p = load_profile(profile)
    tasks = device_emulator.uniform_tasks(n_tasks * (64 << 10), {k: v * n_tasks for k, v in COUNTERS.items()},
                                          page_size=p.page_size, task_bytes=64 << 10,
                                          object_bytes=n_tasks * 40_000, split=split)
    return device_emulator.simulate(p, tasks, split, **kw).report


def hand_built() -> Report:
    """One task per side, and a device task whose work was discarded."""
    return Report(device="hand", split="dynamic", tasks=4, makespan_s=4.0, timeline=[
        ("flash", 0, 0.0, 0.5, "device"), ("device_cores", 0, 0.5, 1.5, "device"), ("link", 0, 1.5, 1.7, "device"),
        ("flash", 1, 0.5, 1.0, "raw"), ("link", 1, 1.0, 1.4, "raw"), ("host_cpu", 1, 1.4, 2.4, "raw"),
        ("flash", 2, 1.0, 1.5, "host"), ("link", 2, 1.7, 2.1, "host"), ("host_cpu", 2, 2.1, 3.1, "host"),
        ("pipeline", 3, 1.5, 1.8, "raw"), ("link", 3, 2.1, 2.5, "raw"), ("host_cpu", 3, 2.5, 4.0, "raw"),
    ])


def legend_texts(ax) -> list[str]:
    legend = ax.get_legend()
    return [t.get_text() for t in legend.get_texts()] if legend else []


def drawn_colors(ax) -> set[str]:
    """Hex colours of every filled shape on ``ax`` (bars and bands)."""
    out = set()
    for artist in list(ax.collections) + list(ax.patches):
        for fc in artist.get_facecolor() if artist.get_facecolor().ndim == 2 else [artist.get_facecolor()]:
            if fc[3] > 0:
                out.add(mcolors.to_hex(fc))
    return out


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_kinds_by_resource_and_side():
    assert [use_kind("flash", s) for s in ("device", "host", "raw", None)] == ["flash"] * 4
    assert use_kind("device_cores", "device") == use_kind("pipeline", "device") == "device_parse"
    assert use_kind("device_cores", "raw") == "device_discarded"
    assert [use_kind("link", s) for s in ("device", "host", "raw", None)] == \
        ["link_objects", "link_text", "raw_link", "link"]
    assert [use_kind("1:host_cpu", s) for s in ("host", "raw", None)] == ["host_parse", "raw_parse", "host_cpu"]
    assert use_kind("p2p", "device") == "p2p" and use_kind("h2d", "host") == "h2d" and use_kind("gpu", "x") == "other"
    colors = [k.color for k in KINDS.values()]
    assert len(set(colors)) == len(colors)  # every kind its own colour


def test_hand_built_colours_differ_by_side_and_kind():
    r = hand_built()
    rows = timeline_layout(r)
    by_label = {row.label: row for row in rows}
    assert list(by_label) == ["flash", "device_cores", "pipeline", "link", "host_cpu[0]", "host_cpu[1]"]
    assert by_label["link"].bars == {"link_objects": [(1.5, pytest.approx(0.2))],
                                     "raw_link": [(1.0, pytest.approx(0.4)), (2.1, pytest.approx(0.4))],
                                     "link_text": [(1.7, pytest.approx(0.4))]}
    assert set(by_label["host_cpu[0]"].bars) | set(by_label["host_cpu[1]"].bars) == {"raw_parse", "host_parse"}
    ax = r.plot_timeline()
    kinds = ["flash", "device_parse", "link_objects", "device_discarded", "raw_link", "raw_parse", "link_text",
             "host_parse"]
    assert legend_texts(ax) == [KINDS[k].label for k in kinds]  # one entry per kind present, in KINDS order
    assert {KINDS[k].color for k in kinds} <= drawn_colors(ax)
    assert ax.get_title().startswith("hand · split dynamic · makespan 4.000 s")
    assert [t.get_text() for t in ax.get_yticklabels()] == [row.label for row in rows]


def test_real_report_legend_has_the_kinds_present():
    r = simulated(200)  # summarizer-board, dynamic: the task queue fills, most tasks come back raw
    assert r.pages["device"] > 0 and r.pages["raw"] > 0
    assert all(len(entry) == 5 for entry in r.timeline)
    rows = timeline_layout(r)
    present = set().union(*(row.kinds for row in rows))
    assert {"flash", "device_parse", "link_objects", "raw_link", "raw_parse"} <= present
    assert "host_parse" not in present and "link_text" not in present  # no task was sent as text
    ax = r.plot_timeline()
    assert legend_texts(ax) == [KINDS[k].label for k in KINDS if k in present]
    assert {KINDS[k].color for k in present} <= drawn_colors(ax)
    assert "summarizer-board · split dynamic" in ax.get_title() and "200 tasks" in ax.get_title()
    assert ax.get_xlabel() == "modeled time (ms)"  # a 0.16 s run is labelled in ms
    assert r.plot_timeline(legend=False).get_legend() is None


def test_static_split_host_tasks_and_gpu_copies():
    r = simulated(60, "modern-gen4", "static:0.5", destination="gpu")
    present = set().union(*(row.kinds for row in timeline_layout(r)))
    assert {"host_parse", "link_text", "device_parse", "p2p", "h2d"} <= present
    assert "raw_parse" not in present


def test_dask_job_has_per_worker_rows():
    job = Report.combine([Report.combine([simulated(40), simulated(30)]), simulated(50)], parallel=True)
    rows = timeline_layout(job)
    workers = [row.worker for row in rows]
    assert workers == sorted(workers) and set(workers) == {0, 1}  # each worker's rows together
    assert all(row.label.startswith(f"worker {row.worker} · ") for row in rows)
    assert [row.label for row in rows if row.worker == 0][:3] == \
        ["worker 0 · flash[0]", "worker 0 · flash[1]", "worker 0 · device_cores"]
    assert [row.key for row in rows][:2] == ["0:flash[0]", "0:flash[1]"]
    ax = job.plot_timeline()
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert "worker 1 · host_cpu" in labels and "worker 0 · link" in labels
    # worker order is numeric, not by string: worker 10 after worker 2
    many = Report.combine([Report(timeline=[("flash", 0, 0.0, 1.0, "host")], makespan_s=1.0)] * 11, parallel=True)
    assert [row.worker for row in timeline_layout(many)] == list(range(11))


def test_dense_timeline_draws_few_artists():
    # What keeps a dense timeline quick to draw is its artist count, not a time limit (none in unit tests)
    r = simulated(11_000)
    assert len(r.timeline) > 40_000
    ax = r.plot_timeline()
    ax.figure.canvas.draw()
    rows = timeline_layout(r)
    assert len(rows) <= 6 and any(row.band for row in rows)
    assert len(ax.collections) + len(ax.patches) < 60  # not one artist (or bar) per use
    assert sum(len(bars) for row in rows for bars in row.bars.values()) < 1_000
    link = next(row for row in rows if row.resource == "link")
    assert link.band and {"raw_link", "link_objects"} <= set(link.levels)
    assert legend_texts(ax)  # the legend still names the kinds


def test_many_lanes_become_a_band_with_exact_occupancy():
    # 12 overlapping uses (at most 10 at once) of a 16-core host: more lanes than max_lanes
    uses = [("host_cpu", i, 0.1 * i, 0.1 * i + 1.0, "host" if i % 2 else "raw") for i in range(12)]
    r = Report(timeline=uses, units={"host_cpu": 16}, makespan_s=2.1)
    (row,) = timeline_layout(r, resolution=21)
    assert row.band and row.units == 16 and row.label == "host_cpu ×16"
    widths = [b - a for a, b in zip(row.edges, row.edges[1:])]
    for kind, side in (("host_parse", "host"), ("raw_parse", "raw")):
        busy = sum(level * w * row.units for level, w in zip(row.levels[kind], widths))
        assert busy == pytest.approx(sum(e - s for _, _, s, e, sd in uses if sd == side))
    assert all(sum(levels) <= 1.0 + 1e-9 for levels in zip(*row.levels.values()))
    assert row.utilization == pytest.approx(12.0 / (16 * 2.1))
    lanes = timeline_layout(r, max_lanes=16)
    assert len(lanes) == 10 and not any(x.band for x in lanes)
    assert all(x.band for x in timeline_layout(hand_built(), aggregate=True))


def test_sparse_lanes_keep_each_use_dense_lanes_merge():
    back_to_back = [("device_cores", i, float(i), float(i + 1), "device") for i in range(50)]
    (sparse,) = timeline_layout(Report(timeline=back_to_back, makespan_s=50.0))
    assert len(sparse.bars["device_parse"]) == 50 and not sparse.merged
    many = [("flash", i, i * 1e-3, (i + 1) * 1e-3, "device") for i in range(5000)]
    (dense,) = timeline_layout(Report(timeline=many, makespan_s=5.0))
    assert dense.merged and dense.bars == {"flash": [(0.0, pytest.approx(5.0))]}
    (exact,) = timeline_layout(Report(timeline=many, makespan_s=5.0), aggregate=False)
    assert len(exact.bars["flash"]) == 5000


def test_old_four_tuples_have_unknown_side():
    r = Report(timeline=[("flash", 0, 0.0, 1.0), ("link", 0, 1.0, 2.0), ("host_cpu", 0, 2.0, 3.0)], makespan_s=3.0)
    assert [sorted(row.kinds) for row in timeline_layout(r)] == [["flash"], ["link"], ["host_cpu"]]
    assert legend_texts(r.plot_timeline()) == ["flash read", "link (side unknown)", "host CPU (side unknown)"]


def test_max_tasks_and_timeline_rows():
    r = hand_built()
    assert [row.label for row in timeline_layout(r, max_tasks=1)] == ["flash", "device_cores", "link"]
    assert timeline_rows(r, max_tasks=1)[0] == ("flash", [(0.0, 0.5, 0)])


def test_empty_timeline_says_so():
    for r in (Report(), Report(timeline=[("flash", 5, 0.0, 1.0, "device")], makespan_s=1.0)):
        ax = r.plot_timeline(max_tasks=2)
        assert [t.get_text() for t in ax.texts] == ["no timeline recorded"]
        assert ax.get_legend() is None and timeline_layout(r, max_tasks=2) == []


def test_draws_on_a_given_axes():
    fig, ax = plt.subplots()
    assert hand_built().plot_timeline(ax=ax) is ax


def test_layout_does_not_import_matplotlib():
    code = ("import sys; from ndp_core.report import Report; from ndp_core.report.timeline import timeline_layout;"
            "timeline_layout(Report(timeline=[('link', 0, 0.0, 1.0, 'raw')] * 300, makespan_s=1.0));"
            "print('matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
