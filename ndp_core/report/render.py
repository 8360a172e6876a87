"""A Report as text and as notebook HTML: one summary block, one row per resource in use.

``str(report)`` and ``report._repr_html_()`` call :func:`as_text` and
:func:`as_html` (:mod:`ndp_core.report.views`); both show the same rows (:func:`summary_rows`,
:func:`resource_rows`) with quantities in readable units.

>>> print(as_text(ReportData(device="demo", split="host", makespan_s=0.002)).splitlines()[7])
  makespan (modeled)  2.00 ms
"""
from __future__ import annotations

import html

from ndp_core.report.data import RESOURCES, ReportData

__all__ = ["as_text", "as_html", "summary_rows", "resource_rows",
           "format_seconds", "format_bytes", "format_joules"]


def format_seconds(s: float) -> str:
    """Seconds with a readable unit.

    >>> format_seconds(0), format_seconds(2.5e-5), format_seconds(0.25), format_seconds(12)
    ('0 s', '25.0 µs', '250.00 ms', '12.000 s')
    """
    a = abs(s)
    if a == 0:
        return "0 s"
    if a < 1e-3:
        return f"{s * 1e6:.1f} µs"
    if a < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.3f} s"


def format_bytes(n: float) -> str:
    """A byte count in decimal units.

    >>> format_bytes(512), format_bytes(32768), format_bytes(3e9)
    ('512 B', '32.77 kB', '3.00 GB')
    """
    a = abs(n)
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if a >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{int(n)} B"


def format_joules(j: float) -> str:
    """Joules, in kJ from a thousand up.

    >>> format_joules(0.5), format_joules(2500)
    ('0.5 J', '2.50 kJ')
    """
    return f"{j / 1e3:.2f} kJ" if abs(j) >= 1e3 else f"{j:.3g} J"


def summary_rows(report: ReportData) -> list[tuple[str, str]]:
    """The summary block: ``(label, value)`` for the run, pages, bytes, times,
    energy and faults.

    >>> summary_rows(ReportData(device="demo"))[:2]
    [('device', 'demo'), ('split', '')]
    """
    n = report.total_pages
    pages = ", ".join(f"{k} {v}" for k, v in report.pages.items())
    rows = [
        ("device", report.device), ("split", report.split),
        ("runs / tasks", f"{report.runs} / {report.tasks}"),
        ("pages", f"{n} ({pages})"),
        ("text -> objects", f"{format_bytes(report.text_bytes)} -> {format_bytes(report.object_bytes)}"),
        ("bytes", ", ".join(f"{k} {format_bytes(v)}" for k, v in report.bytes.items())),
        ("makespan (modeled)", format_seconds(report.makespan_s)),
        ("wall clock (real)", format_seconds(report.wall_s)),
        ("host CPU (modeled)",
         f"{format_seconds(report.host_cpu_s)} spent, {format_seconds(report.host_cpu_saved_s)} saved"),
        ("energy (modeled)", format_joules(report.energy_total_j)),
    ]
    faults = {k: v for k, v in report.faults.items() if v}
    rows.append(("faults", ", ".join(f"{k} {v}" for k, v in faults.items()) if faults else "none"))
    return rows


def resource_rows(report: ReportData) -> list[tuple[str, str, str, str, str]]:
    """``(resource, units, busy, utilization, energy)`` for each resource of
    :data:`~ndp_core.report.data.RESOURCES` that has units, busy time or energy.

    >>> resource_rows(ReportData(busy_s={"link": 0.5}, units={"link": 1}, makespan_s=1.0))
    [('link', '1', '500.00 ms', '50.0%', '0 J')]
    """
    util = report.utilization
    out = []
    for r in RESOURCES:
        if not report.units.get(r) and not report.busy_s.get(r) and not report.energy_j.get(r):
            continue
        out.append((r, str(report.units.get(r, 0)), format_seconds(report.busy_s.get(r, 0.0)),
                    f"{100 * util.get(r, 0.0):.1f}%", format_joules(report.energy_j.get(r, 0.0))))
    return out


def as_text(report: ReportData) -> str:
    """The report as an aligned text table (what ``print(report)`` shows).

    >>> print(as_text(ReportData(device="demo", split="host", busy_s={"link": 0.5}, units={"link": 1},
    ...                      makespan_s=1.0)))  # doctest: +NORMALIZE_WHITESPACE
    Report: demo [host]
      device              demo
      split               host
      runs / tasks        1 / 0
      pages               0 (device 0, host 0, raw 0)
      text -> objects     0 B -> 0 B
      bytes               internal 0 B, host_link 0 B, p2p 0 B
      makespan (modeled)  1.000 s
      wall clock (real)   0 s
      host CPU (modeled)  0 s spent, 0 s saved
      energy (modeled)    0 J
      faults              none
    <BLANKLINE>
      resource  units       busy   util  energy
      link          1  500.00 ms  50.0%     0 J
    """
    rows = summary_rows(report)
    w = max(len(k) for k, _ in rows)
    lines = [f"Report: {report.device or '?'} [{report.split or '?'}]"]
    lines += [f"  {k.ljust(w)}  {v}" for k, v in rows]
    res = resource_rows(report)
    if res:
        head = ("resource", "units", "busy", "util", "energy")
        widths = [max(len(head[i]), *(len(r[i]) for r in res)) for i in range(5)]
        lines.append("")
        lines.append("  " + "  ".join(h.rjust(widths[i]) if i else h.ljust(widths[i])
                                      for i, h in enumerate(head)))
        for r in res:
            lines.append("  " + "  ".join(c.rjust(widths[i]) if i else c.ljust(widths[i])
                                          for i, c in enumerate(r)))
    return "\n".join(lines)


def as_html(report: ReportData) -> str:
    """The report as HTML tables (what a notebook shows), every value escaped.

    >>> as_html(ReportData(device="<ssd>")).split("<table>")[0]
    '<div><b>Report</b>: &lt;ssd&gt; [?]'
    """
    esc = html.escape
    parts = [f"<div><b>Report</b>: {esc(report.device or '?')} [{esc(report.split or '?')}]",
             "<table>"]
    parts += [f"<tr><th style='text-align:left'>{esc(k)}</th><td style='text-align:left'>{esc(v)}</td></tr>"
              for k, v in summary_rows(report)]
    parts.append("</table>")
    res = resource_rows(report)
    if res:
        parts.append("<table><tr><th>resource</th><th>units</th><th>busy</th><th>utilization</th>"
                     "<th>energy</th></tr>")
        for r in res:
            parts.append("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>")
        parts.append("</table>")
    parts.append("</div>")
    return "".join(parts)
