"""A Report as text and as notebook HTML: one summary block, one row per resource in use.

``str(report)`` and ``report._repr_html_()`` call :func:`as_text` and
:func:`as_html` (:mod:`ndp_core.report.views`); both show the same rows (:func:`summary_rows`,
:func:`resource_rows`) with quantities in readable units.

>>> print(as_text(ReportData(device="demo", split="host", makespan_s=0.002)).splitlines()[9])
  makespan (modeled)  2.00 ms
"""
from __future__ import annotations

import html

from ndp_core.report.data import RESOURCES, OffloadDecision, ReportData

__all__ = ["as_text", "as_html", "summary_rows", "resource_rows", "page_rows", "energy_text", "notes",
           "decision_text", "format_seconds", "format_bytes", "format_joules"]


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
    """A size in binary units (KiB = 1024 B; rates elsewhere are decimal MB/s).

    >>> format_bytes(512), format_bytes(32768), format_bytes(3 << 30)
    ('512 B', '32.00 KiB', '3.00 GiB')
    """
    a = abs(n)
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if a >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{int(n)} B"


def format_joules(j: float) -> str:
    """Joules, in kJ from a thousand up.

    >>> format_joules(0.5), format_joules(2500)
    ('0.5 J', '2.50 kJ')
    """
    return f"{j / 1e3:.2f} kJ" if abs(j) >= 1e3 else f"{j:.3g} J"


def _share(part: int, whole: int) -> str:
    return f"{part:,} ({100 * part / whole:.1f}%)" if whole else f"{part:,}"


def page_rows(report: ReportData) -> list[tuple[str, str]]:
    """Pages of the input, and page reads by where they were parsed and
    where the host sent them (with the split's realised share).

    >>> for row in page_rows(ReportData(split="dynamic", pages={"device": 3, "raw": 2, "host": 0}, file_pages=4)):
    ...     print(row)
    ('pages', '4 in the input, 5 reads (1 read twice: it holds a task boundary)')
    ('parsed on', 'device 3 (60.0%), host 2 (40.0%): 2 returned raw by the device')
    ('sent to', 'device 5 (100.0%), host as text 0 (0.0%)')
    """
    reads = report.total_pages
    extra = reads - report.file_pages
    pages = f"{report.file_pages:,} in the input"
    if extra > 0 and report.file_pages:
        pages += f", {reads:,} reads ({extra:,} read twice: {'it holds' if extra == 1 else 'they hold'} a task boundary)"
    parsed, sent = report.page_reads_parsed_on, report.page_reads_sent_to
    raw = report.pages.get("raw", 0)
    parsed_text = f"device {_share(parsed['device'], reads)}, host {_share(parsed['host'], reads)}"
    if raw:
        parsed_text += f": {raw:,} returned raw by the device"
    if report.split.startswith("static:"):
        parsed_text += f" ({report.split} sends that share of blocks to the device)"
    return [("pages", pages), ("parsed on", parsed_text),
            ("sent to", f"device {_share(sent['device'], reads)}, host as text {_share(sent['host'], reads)}")]


def energy_text(report: ReportData) -> str:
    """The total energy and what it is made of.

    >>> energy_text(ReportData(energy_j={"flash": 1.0, "host_cpu": 2.0, "platform": 5.0, "total": 8.0}))
    '8 J = 3 J resources + 5 J platform idle'
    """
    total = report.energy_total_j
    platform = report.energy_j.get("platform", 0.0)
    if not total:
        return format_joules(0.0)
    return f"{format_joules(total)} = {format_joules(total - platform)} resources + {format_joules(platform)} platform idle"


def decision_text(decision: OffloadDecision) -> str:
    """A sampled offload decision in one line: the choice, the sample and the two modeled times.

    >>> print(decision_text(OffloadDecision(8, 8000, 160, host_s=1.2, device_s=0.11, choice="device")))
    device: 8 spans sampled, 8,000 rows, 2.00% kept; modeled whole read: host 1.200 s, device 110.00 ms
    """
    return (f"{decision.choice}: {decision.samples} spans sampled, {decision.sampled_rows:,} rows, "
            f"{100 * decision.selectivity:.2f}% kept; modeled whole read: host {format_seconds(decision.host_s)}, "
            f"device {format_seconds(decision.device_s)}")


def _decisions_text(decisions: list) -> str:
    """One decision's line, or how several reads (Dask partitions) decided.

    >>> d = OffloadDecision(8, 8000, 160, host_s=1.2, device_s=0.11, choice="device")
    >>> _decisions_text([d, d, OffloadDecision(8, 8000, 7900, 1.2, 1.5, "host")])
    '3 reads sampled: 2 on the device, 1 on the host; 2.00%-98.75% of sampled rows kept'
    """
    if len(decisions) == 1:
        return decision_text(decisions[0])
    on_device = sum(d.choice == "device" for d in decisions)
    kept = sorted(d.selectivity for d in decisions if d.sampled_rows)
    spread = f"; {100 * kept[0]:.2f}%-{100 * kept[-1]:.2f}% of sampled rows kept" if kept else ""
    return (f"{len(decisions)} reads sampled: {on_device} on the device, {len(decisions) - on_device} on the host"
            f"{spread}")


def summary_rows(report: ReportData) -> list[tuple[str, str]]:
    """The summary block: ``(label, value)`` for the run, pages, bytes, times,
    energy and faults.

    >>> summary_rows(ReportData(device="demo"))[:2]
    [('device', 'demo'), ('split', '')]
    """
    b = report.bytes
    rows = [("device", report.device), ("split", report.split)]
    if report.decisions:
        rows.append(("offload (sampled)", _decisions_text(report.decisions)))
    rows.append(("runs / tasks", f"{report.runs} / {report.tasks:,}"))
    rows += page_rows(report)
    rows += [
        ("text -> objects", f"{format_bytes(report.text_bytes)} -> {format_bytes(report.object_bytes)}"),
        ("bytes moved", f"flash->controller {format_bytes(b.get('internal', 0))}, "
                        f"over the link {format_bytes(b.get('host_link', 0))}, P2P {format_bytes(b.get('p2p', 0))}"),
        ("makespan (modeled)", format_seconds(report.makespan_s)),
        ("wall clock (real)", format_seconds(report.wall_s)),
        ("host CPU (modeled)",
         f"{format_seconds(report.host_cpu_s)} spent, {format_seconds(report.host_cpu_saved_s)} saved"),
        ("energy (modeled)", energy_text(report)),
    ]
    faults = {k: v for k, v in report.faults.items() if v}
    rows.append(("faults", ", ".join(f"{k} {v}" for k, v in faults.items()) if faults else "none"))
    return rows


def resource_rows(report: ReportData) -> list[tuple[str, str, str, str, str]]:
    """``(resource, units, busy, utilization, energy)`` for each resource of
    :data:`~ndp_core.report.data.RESOURCES` that has units, busy time or
    energy, then ``platform (idle)`` and ``total`` rows when there is energy:
    the energy column adds up to the total.

    >>> resource_rows(ReportData(busy_s={"link": 0.5}, units={"link": 1}, makespan_s=1.0))
    [('link', '1', '500.00 ms', '50.0%', '0 J')]
    """
    util = report.utilization
    unpowered = set(report.meta.get("unpowered") or ())
    out = []
    for r in RESOURCES:
        if not report.units.get(r) and not report.busy_s.get(r) and not report.energy_j.get(r):
            continue
        energy = format_joules(report.energy_j.get(r, 0.0)) + (" *" if r in unpowered else "")
        out.append((r, str(report.units.get(r, 0)), format_seconds(report.busy_s.get(r, 0.0)),
                    f"{100 * util.get(r, 0.0):.1f}%", energy))
    if report.energy_total_j:
        out.append(("platform (idle)", "", "", "", format_joules(report.energy_j.get("platform", 0.0))))
        out.append(("total", "", "", "", format_joules(report.energy_total_j)))
    return out


def notes(report: ReportData) -> list[str]:
    """Footnotes: how to read the units, and resources whose power the profile folds into others.

    >>> notes(ReportData(meta={"unpowered": ["link"]}))[-1]
    '* link: no power of its own in the profile (folded into other rows; see its [power] notes)'
    """
    out = ["sizes in binary units (1 MiB = 2^20 B); times and energy modeled unless marked real"]
    unpowered = report.meta.get("unpowered") or ()
    if unpowered:
        out.append(f"* {', '.join(unpowered)}: no power of its own in the profile "
                   "(folded into other rows; see its [power] notes)")
    return out


EMPTY = "Report: empty - no run was recorded (nothing read on a device inside the collect() block)"


def as_text(report: ReportData) -> str:
    """The report as an aligned text table (what ``print(report)`` shows).

    >>> print(as_text(ReportData(device="demo", split="host", busy_s={"link": 0.5}, units={"link": 1},
    ...                      makespan_s=1.0)))  # doctest: +NORMALIZE_WHITESPACE
    Report: demo [host]
      device              demo
      split               host
      runs / tasks        1 / 0
      pages               0 in the input
      parsed on           device 0, host 0
      sent to             device 0, host as text 0
      text -> objects     0 B -> 0 B
      bytes moved         flash->controller 0 B, over the link 0 B, P2P 0 B
      makespan (modeled)  1.000 s
      wall clock (real)   0 s
      host CPU (modeled)  0 s spent, 0 s saved
      energy (modeled)    0 J
      faults              none
    <BLANKLINE>
      resource  units       busy   util  energy
      link          1  500.00 ms  50.0%     0 J
    <BLANKLINE>
      sizes in binary units (1 MiB = 2^20 B); times and energy modeled unless marked real
    >>> print(as_text(ReportData.combine([])))
    Report: empty - no run was recorded (nothing read on a device inside the collect() block)
    """
    if report.empty:
        return EMPTY
    rows = summary_rows(report)
    w = max(len(k) for k, _ in rows)
    lines = [f"Report: {report.device or '?'} [{report.split or '?'}]"]
    lines += [f"  {k.ljust(w)}  {v}" for k, v in rows]
    res = resource_rows(report)
    if res:
        head = ("resource", "units", "busy", "util", "energy")
        widths = [max(len(head[i]), *(len(r[i]) for r in res)) for i in range(5)]
        lines.append("")
        for r in [head, *res]:
            lines.append("  " + "  ".join(c.rjust(widths[i]) if i else c.ljust(widths[i])
                                          for i, c in enumerate(r)).rstrip())
    lines.append("")
    lines += [f"  {note}" for note in notes(report)]
    return "\n".join(lines)


def as_html(report: ReportData) -> str:
    """The report as HTML tables (what a notebook shows), every value escaped.

    >>> as_html(ReportData(device="<ssd>")).split("<table>")[0]
    '<div><b>Report</b>: &lt;ssd&gt; [?]'
    """
    esc = html.escape
    if report.empty:
        return f"<div>{esc(EMPTY)}</div>"
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
    parts += [f"<p style='font-size:smaller'>{esc(note)}</p>" for note in notes(report)]
    parts.append("</div>")
    return "".join(parts)
