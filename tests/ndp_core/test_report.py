"""ndp_core.report: Report arithmetic and exports (data), text/HTML (render), the plot (timeline),
the collector (collecting), and the data module's independence from presentation."""
from __future__ import annotations

import ast
import contextvars
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

import ndp_core.report
from ndp_core.report import RESOURCES, Collector, Report, collect, record
from ndp_core.report import render
from ndp_core.report.data import ReportData
from ndp_core.report.timeline import timeline_rows


def sample_report(**changes) -> Report:
    """A Report with every field set (``changes`` override some)."""
    base = dict(device="d", split="dynamic", tasks=2, pages={"device": 3, "host": 1, "raw": 1},
                bytes={"internal": 100, "host_link": 40, "p2p": 0}, text_bytes=80, object_bytes=30,
                busy_s={"flash": 0.5, "device_cores": 1.0, "link": 0.25, "host_cpu": 0.1},
                units={"flash": 1, "device_cores": 2, "link": 1, "host_cpu": 4, "pipeline": 0, "p2p": 0},
                makespan_s=1.0, host_cpu_s=0.1, host_cpu_saved_s=0.3,
                energy_j={"flash": 1.0, "host_cpu": 2.0, "platform": 5.0, "total": 8.0},
                faults={"media_error": 1}, wall_s=0.05,
                timeline=[("flash", 0, 0.0, 0.25), ("flash", 1, 0.25, 0.5), ("device_cores", 0, 0.3, 0.8),
                          ("device_cores", 1, 0.4, 0.9), ("link", 0, 0.8, 1.0), ("host_cpu", 1, 0.6, 0.7)],
                meta={"profile": "p"})
    base.update(changes)
    return Report(**base)


def test_defaults_have_every_key():
    r = Report()
    assert set(r.pages) == {"device", "host", "raw"} and set(r.bytes) == {"internal", "host_link", "p2p"}
    assert set(RESOURCES) <= set(r.busy_s)
    assert set(r.faults) == {"media_error", "app_failure", "link_timeout", "tq_overflow"}
    assert r.utilization["flash"] == 0.0 and r.energy_total_j == 0 and r.offload_fraction == 0.0


def test_utilization_and_derived():
    r = sample_report()
    assert r.utilization["device_cores"] == pytest.approx(0.5)  # 1.0 / (1.0 x 2)
    assert r.utilization["host_cpu"] == pytest.approx(0.025)
    assert r.utilization["pipeline"] == 0.0
    assert r.total_pages == 5 and r.offload_fraction == pytest.approx(0.6)
    assert r.energy_total_j == 8.0


def test_add_is_sequential_combine():
    a, b = sample_report(), sample_report(makespan_s=3.0, split="static:0.5", device="e")
    s = a + b
    assert s.runs == 2 and s.tasks == 4 and s.makespan_s == 4.0
    assert s.pages == {"device": 6, "host": 2, "raw": 2}
    assert s.bytes["host_link"] == 80 and s.busy_s["flash"] == 1.0 and s.energy_j["total"] == 16.0
    assert s.faults["media_error"] == 2 and s.wall_s == pytest.approx(0.1)
    assert s.split == "mixed" and s.device == "d + e"
    assert s.units["device_cores"] == 2  # same device run twice
    # timelines follow each other
    assert s.timeline[6] == ("flash", 0, 1.0, 1.25)
    assert sum([a, b]).to_dict() == s.to_dict()  # sum() starts from 0
    assert (a + a + a).runs == 3


def test_parallel_combine():
    a, b = sample_report(), sample_report(makespan_s=3.0)
    p = Report.combine([a, b], parallel=True)
    assert p.makespan_s == 3.0 and p.units["device_cores"] == 4
    assert p.utilization["device_cores"] == pytest.approx(2.0 / (3.0 * 4))
    assert p.timeline[0] == ("0:flash", 0, 0.0, 0.25) and p.timeline[6][0] == "1:flash"
    assert p.meta["profile"] == "p" and p.meta["combined"] == "parallel"
    assert Report.combine([]).tasks == 0
    one = Report.combine([a])
    assert one.to_dict() == a.to_dict() and one.pages is not a.pages


def test_host_only():
    r = Report.host_only(pages=8, text_bytes=32768, wall_s=0.5, device="host-only", tasks=3)
    assert r.pages == {"device": 0, "host": 8, "raw": 0}
    assert r.bytes["host_link"] == 32768 and r.text_bytes == 32768
    assert r.makespan_s == r.wall_s == r.host_cpu_s == 0.5 and r.host_cpu_saved_s == 0.0
    assert r.split == "host" and r.tasks == 3 and r.utilization["host_cpu"] == 1.0


def test_to_dict_and_pickle():
    r = sample_report()
    d = r.to_dict()
    assert d["makespan_s"] == 1.0 and d["utilization"]["device_cores"] == pytest.approx(0.5)
    assert d["timeline"][0] == ("flash", 0, 0.0, 0.25)
    assert "timeline" not in r.to_dict(timeline=False)
    d["pages"]["device"] = 99
    assert r.pages["device"] == 3  # a copy
    assert pickle.loads(pickle.dumps(r)).to_dict() == r.to_dict()


def test_to_frame():
    r = sample_report()
    f = r.to_frame()
    assert list(f.columns) == ["group", "metric", "value", "unit"]
    row = f[(f.group == "utilization") & (f.metric == "device_cores")]
    assert float(row.value.iloc[0]) == pytest.approx(0.5)
    assert float(f[f.metric == "makespan_s"].value.iloc[0]) == 1.0
    res = r.to_frame("resources")
    assert list(res.index) == list(RESOURCES)
    assert res.loc["device_cores", "units"] == 2 and res.loc["flash", "energy_j"] == 1.0
    with pytest.raises(ValueError):
        r.to_frame("nope")


def test_str_and_html():
    r = sample_report()
    s = str(r)
    lines = s.splitlines()
    assert lines[0] == "Report: d [dynamic]"
    assert any("makespan (modeled)" in l and "1.000 s" in l for l in lines)
    assert any(l.lstrip().startswith("device_cores") and "50.0%" in l for l in lines)
    assert "media_error 1" in s
    # the summary block is aligned: values start in one column
    import re

    summary = lines[1:lines.index("")]
    cols = {re.match(r"^  (.+?)\s{2,}(\S.*)$", l).start(2) for l in summary}
    assert len(summary) >= 10 and len(cols) == 1
    h = r._repr_html_()
    assert h.startswith("<div>") and "<table>" in h and "device_cores" in h
    assert "<" not in sample_report(device="<x>")._repr_html_().split("</b>: ")[1].split(" [")[0]
    assert "Report(" in repr(r)
    assert "faults" in str(Report()) and "none" in str(Report())


def test_plot_timeline():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    r = sample_report()
    ax = r.plot_timeline()
    labels = [t.get_text() for t in ax.get_yticklabels()]
    # two overlapping core uses -> two lanes
    assert "device_cores[0]" in labels and "device_cores[1]" in labels and "flash" in labels
    assert ax.get_xlabel() == "modeled time (s)"
    fig, ax2 = plt.subplots()
    assert r.plot_timeline(ax=ax2, max_tasks=1) is ax2
    Report().plot_timeline(ax=ax2)
    Report.combine([r, r], parallel=True).plot_timeline()
    plt.close("all")


def test_collector():
    r = sample_report()
    record(r)  # outside any block: nothing happens
    with collect() as outer:
        record(r)
        with collect() as inner:
            record(r)
        record(r)
    assert len(inner.reports) == 1 and len(outer.reports) == 3
    assert outer.total.runs == 3 and outer.total.makespan_s == 3.0
    assert isinstance(outer, Collector) and len(list(outer)) == 3 and "3 reports" in repr(outer)
    with collect(parallel=True) as par:
        record(r)
        record(r)
    assert par.total.makespan_s == 1.0
    with collect() as empty:
        pass
    assert empty.total.runs == 0 and empty.total.empty and str(empty.total).startswith("Report: empty")
    record(r)
    assert len(outer.reports) == 3  # closed blocks collect nothing more


def test_collector_is_context_local():
    with collect() as c:
        ctx = contextvars.copy_context()
        ctx.run(record, sample_report())  # a copied context sees the collector
        contextvars.Context().run(record, sample_report())  # a fresh one does not
    assert len(c.reports) == 1


def test_parallel_timeline_rows_group_by_worker():
    rows = timeline_rows(Report.combine([sample_report(), sample_report()], parallel=True))
    labels = [label for label, _ in rows]
    assert labels[:4] == ["0:flash", "0:device_cores[0]", "0:device_cores[1]", "0:link"]
    assert labels[5] == "1:flash" and len(labels) == 10
    assert [label for label, _ in timeline_rows(sample_report(), max_tasks=1)] == ["flash", "device_cores", "link"]


def imported_modules(path: Path) -> set[str]:
    """Every module a source file imports, wherever the statement stands."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            names.add(node.module or "")
    return names


def test_data_does_not_import_presentation():
    package = Path(ndp_core.report.__file__).parent
    data_imports = imported_modules(package / "data.py")
    assert not {"html", "matplotlib", "matplotlib.pyplot"} & data_imports
    assert not any(name.startswith("ndp_core.report.") for name in data_imports)
    for presentation in ("render.py", "timeline.py", "views.py"):
        assert "ndp_core.report.data" in imported_modules(package / presentation)
    assert type(sample_report()) is Report and issubclass(Report, ReportData)
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, ndp_core.report; print('matplotlib' in sys.modules)"],
        capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "False"  # matplotlib is imported when drawing, not before


def test_energy_rows_add_up_to_the_total_and_folded_power_is_marked():
    r = sample_report(meta={"unpowered": ["link"]})
    rows = render.resource_rows(r)
    energies = {name: cell for name, *_, cell in rows}
    assert energies["platform (idle)"] == "5 J" and energies["total"] == "8 J"
    parts = [r.energy_j.get(name, 0.0) for name in RESOURCES] + [r.energy_j["platform"]]
    assert sum(parts) == pytest.approx(r.energy_total_j)  # every joule sits in a row
    assert energies["link"].endswith("*") and "link: no power of its own" in str(r)
    assert "8 J = 3 J resources + 5 J platform idle" in str(r)


def test_pages_by_where_parsed_and_where_sent():
    r = sample_report(file_pages=4)  # 3 device + 1 host + 1 raw page reads
    text = str(r)
    assert "4 in the input, 5 reads (1 read twice" in text
    assert "device 3 (60.0%), host 2 (40.0%): 1 returned raw by the device" in text
    assert "device 4 (80.0%), host as text 1 (20.0%)" in text
    assert r.page_reads_parsed_on == {"device": 3, "host": 2} and r.page_reads_sent_to == {"device": 4, "host": 1}
    assert (r + r).file_pages == 8


def test_sizes_are_binary_and_said_so():
    assert render.format_bytes(1 << 30) == "1.00 GiB" and render.format_bytes(1536) == "1.50 KiB"
    assert "sizes in binary units (1 MiB = 2^20 B)" in str(sample_report())


def test_an_empty_report_says_so():
    empty = Report.combine([])
    assert empty.empty and not sample_report().empty
    assert str(empty).startswith("Report: empty") and "empty" in empty._repr_html_()
