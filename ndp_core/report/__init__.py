"""``Report``: what one device run cost, in modeled hardware time, bytes and energy.

Every run through a :class:`~ndp_core.device.Device` yields a :class:`Report`:
pages by the side that parsed them, bytes over each link, busy seconds and
utilization per resource, the modeled makespan, host CPU seconds (spent and
saved), an energy estimate, the faults seen, the real wall-clock time and, for
``split="sampled"``, the offload decision (:class:`OffloadDecision`).
Reports add up (``a + b``, :meth:`Report.combine`), print as a table, become a
pandas DataFrame and plot as a Gantt chart of the modeled timeline.

The package keeps the numbers apart from how they are shown:

* ``data`` — ``ReportData``: the fields, derived figures, combining and exports;
* ``render`` — the text table and the notebook HTML;
* ``timeline`` — the Gantt chart (matplotlib, imported when drawing);
* ``views`` — ``Report``: ``ReportData`` that shows itself through those two;
* ``collecting`` — ``collect()`` blocks and ``record()``.

Presentation imports the data, never the reverse; importing this package pulls
in neither matplotlib nor pandas.

>>> r = Report(device="demo", split="dynamic", tasks=2, pages={"device": 3, "host": 1},
...            busy_s={"flash": 0.5, "link": 0.25}, units={"flash": 1, "link": 1},
...            makespan_s=1.0)
>>> r.utilization["flash"]
0.5
>>> (r + r).pages["device"], (r + r).makespan_s, (r + r).runs
(6, 2.0, 2)

Callers collect the Reports of the runs made inside a block:

>>> with collect() as c:
...     record(r)
...     record(r)
>>> len(c.reports), c.total.tasks
(2, 4)
"""
from ndp_core.report.collecting import Collector, collect, record
from ndp_core.report.data import LINKS, RESOURCES, SIDES, OffloadDecision
from ndp_core.report.views import Report

__all__ = ["Report", "OffloadDecision", "Collector", "collect", "record", "RESOURCES", "SIDES", "LINKS"]
