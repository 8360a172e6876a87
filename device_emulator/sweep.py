"""What-if in one call: profiles x splits x profile parameters over one read of a file.

:func:`sweep` reads the input once per task size, keeping every task's work
counters, text and object bytes and byte offsets; every point of the grid is
then :func:`~device_emulator.model.simulate` on those tasks (milliseconds
each), with the task sides and pages the reader would give them on that
device. A point's modeled figures are those of ``read_csv(source,
device=ComputationalSSD(profile, **overrides), split=split)``, without the
read. ``device_emulator`` sits below the reader and does not import it: pass
the reading function (``reader=arrow_bridge.read_csv``).

>>> import io, arrow_bridge
>>> csv = b"a,b,c\\n" + b"".join(b"%d,%d.5,x%d\\n" % (i, i, i % 7) for i in range(3000))
>>> s = sweep(io.BytesIO(csv), reader=arrow_bridge.read_csv, splits=("host", "dynamic"),
...           overrides={"cores.speed*": [1, 16]}, block_size=4096)
>>> s.frame[["split", "cores.speed*", "tasks", "offload_share"]].values.tolist()
[['host', 1, 10, 0.0], ['host', 16, 10, 0.0], ['dynamic', 1, 10, 1.0], ['dynamic', 16, 10, 1.0]]
>>> speedup = s.frame.set_index(["split", "cores.speed*"])["speedup"]
>>> float(speedup["host", 1]), bool(speedup["dynamic", 16] > speedup["dynamic", 1])
(1.0, True)

Override keys are anything :func:`~device_emulator.profile.load_profile`
accepts (``"cores.count"``, ``"link.lanes"``, ``"tR_us"``, ``"cores"``), or a
scale factor: a key ending in ``*`` multiplies a parameter's value in the
profile (``"flash.tR_us*": [0.5, 1]``) or one of the derived quantities of
:data:`SCALED`:

>>> from device_emulator.profile import load_profile
>>> p = load_profile("summarizer-board")
>>> q = p.with_overrides(**scaled_overrides(p, "flash.internal_bandwidth*", 4))
>>> q.internal_bandwidth / p.internal_bandwidth, q["flash.channels"]
(4.0, 2)
"""
from __future__ import annotations

import contextvars
import itertools
import math
import numbers
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

from ndp_core import MAX_PAGES_PER_COMMAND
from ndp_core.device import DEVICE, HOST, HostOnly, Schedule, SplitPolicy, TaskWork
from ndp_core.report import Report

from device_emulator.compute import COST_MODELS
from device_emulator.model import simulate
from device_emulator.profile import Profile, ProfileError, load_profile, resolve_name
from device_emulator.ssd import ComputationalSSD

__all__ = ["sweep", "Sweep", "SCALED", "scaled_overrides"]

#: Derived quantities a ``"<name>*": factor`` key scales, as ``name -> (what it
#: is, parameters it sets)``. Each parameter is multiplied (``+1``) or divided
#: (``-1``) by the factor, from the profile's own value; the quantity then
#: changes by exactly that factor and nothing else in the profile moves.
SCALED: dict[str, tuple[str, tuple[tuple[str, int], ...]]] = {
    "flash.internal_bandwidth": (
        "flash -> controller bytes/s (channels x page / page interval): every channel's transfer rate "
        "x f and its page read time tR / f, same channels and ways",
        (("flash.channel_MBps", 1), ("flash.tR_us", -1))),
    "link.bandwidth": (
        "device <-> host payload bytes/s: link.efficiency x f and link.max_MBps x f (a cap of 0 stays "
        "no cap), same PCIe generation, lanes and per-command overhead; P2P, bounded by the link, follows",
        (("link.efficiency", 1), ("link.max_MBps", 1))),
    "cores.speed": (
        "the embedded cores' compute speed: cores.clock_MHz x f (same count and cycle prices)",
        (("cores.clock_MHz", 1),)),
    "pipeline.rate": (
        "the fixed-function pipeline's bytes/s: pipeline.efficiency x f",
        (("pipeline.efficiency", 1),)),
    "host.speed": (
        "the host's parse speed: host.clock_MHz x f (cost_model='cycles' only)",
        (("host.clock_MHz", 1),)),
}

# Points x tasks beyond which a sweep shows a progress bar (~17 us per task simulated).
_LONG_SWEEP = 200_000

ProfileLike = Union[str, Profile]


def scaled_overrides(profile: Profile, key: str, factor: Any) -> dict[str, Any]:
    """The parameter overrides a scale-factor key (``"<name>*"``) stands for in ``profile``.

    ``<name>`` is a derived quantity of :data:`SCALED` or any numeric
    parameter (by any name :func:`~device_emulator.profile.load_profile`
    accepts); an unknown name, a factor that is not a positive number or a
    parameter that is not a number raise :class:`ProfileError`.

    >>> p = load_profile("modern-gen4")
    >>> scaled_overrides(p, "cores*", 2), scaled_overrides(p, "cores.speed*", 0.5)
    ({'cores.count': 8}, {'cores.clock_MHz': 750.0})
    """
    name = key[:-1].strip() if key.endswith("*") else key
    if isinstance(factor, bool) or not isinstance(factor, numbers.Real) or not (math.isfinite(factor)
                                                                                 and factor > 0):
        raise ProfileError(f"{key!r} takes a scale factor (a number > 0), got {factor!r}")
    parts = SCALED[name][1] if name in SCALED else ((resolve_name(name), 1),)
    out = {}
    for path, power in parts:
        value = profile[path]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ProfileError(f"{path} is not a number: {key!r} cannot scale it")
        scaled = value * factor if power > 0 else value / factor
        out[path] = round(scaled) if isinstance(value, int) and abs(scaled - round(scaled)) < 1e-9 else scaled
    return out


def _paths(key: str) -> tuple[str, ...]:
    """The parameters an override key sets (ProfileError for names no parameter has)."""
    name = key[:-1].strip() if key.endswith("*") else key
    if name in SCALED:
        if not key.endswith("*"):
            raise ProfileError(f"{key!r} is derived, not a parameter ({SCALED[key][0]}): sweep a factor "
                               f"with {key + '*'!r}")
        return tuple(path for path, _ in SCALED[name][1])
    return (resolve_name(name),)


def _values(values: Any) -> list:
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
        return [values]  # one value: a fixed override
    values = [value.item() if hasattr(value, "item") and hasattr(value, "dtype") else value  # NumPy scalars
              for value in values]
    if not values:
        raise ValueError("an override needs at least one value")
    return values


def _as_tuple(items: Any) -> tuple:
    return (items,) if isinstance(items, (str, Profile, SplitPolicy)) else tuple(items)


class _ByteRecorder(HostOnly):
    """A host-only device with 1-byte pages that keeps its run's tasks: their
    ``first_page`` is then the byte offset in the file, so the pages of any
    page size can be recomputed."""

    name = "sweep-recorder"

    def __init__(self) -> None:
        super().__init__(page_size=1)
        self.tasks: list[TaskWork] = []

    def schedule(self, tasks: Sequence[TaskWork], split: SplitPolicy, wall_s: float) -> Schedule:
        self.tasks = list(tasks)
        return super().schedule(tasks, split, wall_s)


def _on_device(task: TaskWork, page_size: int, task_bytes: int, split: SplitPolicy) -> TaskWork:
    """A recorded (byte-addressed) task as a device of ``page_size`` sees it
    under ``split``, with the side the reader gives it (``DeviceExecutor``:
    the static split of the block it starts in, if one command holds it)."""
    start, length = task.first_page, task.text_bytes
    first = start // page_size
    n_pages = -(-(start + length) // page_size) - first
    offloadable = n_pages <= MAX_PAGES_PER_COMMAND
    planned = split.static_side(start // task_bytes) == DEVICE and length > 0 and offloadable
    return TaskWork(task.index, first, max(1, n_pages), task.text_bytes, task.object_bytes, task.counters,
                    DEVICE if planned else HOST, {}, task.measured_s, offloadable)


@dataclass
class _Point:
    profile: str  # the name in the frame
    values: dict  # override key -> value
    ssd: ComputationalSSD


def _task_size(point: _Point, block_size: Optional[int]) -> int:
    """The task size of ``point``'s reads: ``block_size``, else its device's own."""
    return point.ssd.task_bytes if block_size is None else block_size


def _columns(report: Report, host_makespan: float, destination: str) -> dict[str, Any]:
    util = report.utilization
    row = {
        "makespan_s": report.makespan_s,
        "speedup": host_makespan / report.makespan_s if report.makespan_s > 0 else math.nan,
        "offload_share": report.offload_fraction,
        "host_cpu_s": report.host_cpu_s,
        "energy_j": report.energy_total_j,
        "link_bytes": report.bytes["host_link"],
    }
    if destination == "gpu":
        row["p2p_bytes"] = report.bytes["p2p"]
    for resource in ("device_cores", "pipeline", "flash", "link", "host_cpu"):
        row[f"{resource}_util"] = util.get(resource, 0.0)
    return row


def sweep(source: Any, *, reader: Optional[Callable[..., Any]] = None,
          profiles: Union[ProfileLike, Sequence[ProfileLike]] = ("summarizer-board",),
          splits: Union[str, Sequence[str]] = ("host", "dynamic"),
          overrides: Optional[Mapping[str, Any]] = None, block_size: Optional[int] = None,
          cost_model: str = "cycles", destination: str = "host", progress: Optional[bool] = None,
          **read_options: Any) -> "Sweep":
    """Model every (profile, split, override combination) of a read of ``source``.

    ``reader`` reads ``source`` with a device, as ``arrow_bridge.read_csv``
    does (``reader(source, device=..., block_size=..., **read_options)``);
    ``read_options`` are its options (``sep``, ``names``, ``dtype``, ...).
    ``profiles`` are names, TOML paths or :class:`Profile` objects; ``splits``
    split policies (``"host"``, ``"device"``, ``"static:<f>"``,
    ``"dynamic"``). ``overrides`` maps a key to its values (a list; a single
    value is a fixed override): the grid is the cartesian product profiles x
    splits x values. A key is a profile parameter by any name
    :func:`~device_emulator.profile.load_profile` accepts, or a scale factor
    ``"<name>*"`` (:func:`scaled_overrides`, :data:`SCALED`). Every key and
    value is checked (:class:`ProfileError`) before the file is read.

    ``block_size`` is the task size; None (default) takes each device's own
    (``ComputationalSSD.task_bytes``, as a device read does, so
    ``"task_queue.task_bytes"`` can be swept). The file is read once per
    distinct task size, on the host, and that read is not recorded into
    ``ndp_core.report.collect()`` blocks. ``cost_model`` and ``destination``
    are the device's (:class:`ComputationalSSD`). ``progress``: a tqdm bar
    on stderr while simulating; None (default) shows it for a long sweep when
    stderr is a terminal. Faults are not injected.

    Returns a :class:`Sweep`: ``.frame`` has one row per point, ordered by
    profile, split, then values. Columns: ``profile``, ``split``, one per
    override key (the key as given), ``task_bytes``, ``tasks``,
    ``makespan_s``, ``speedup`` (the makespan of ``split="host"`` on the
    same device at the same point over this one's), ``offload_share``
    (pages parsed on the device / all pages), ``host_cpu_s``, ``energy_j``
    (total), ``link_bytes`` (host link), ``p2p_bytes`` (with
    ``destination="gpu"``), and ``<resource>_util`` for ``device_cores``,
    ``pipeline``, ``flash``, ``link`` and ``host_cpu``.

    >>> import io, arrow_bridge
    >>> csv = io.BytesIO(b"x,y\\n" + b"1,2\\n" * 4000)
    >>> sweep(csv, reader=arrow_bridge.read_csv, overrides={"flash.internal_bandwidth": [1, 2]})
    Traceback (most recent call last):
    ...
    device_emulator.profile.schema.ProfileError: 'flash.internal_bandwidth' is derived, not a parameter \
(flash -> controller bytes/s (channels x page / page interval): every channel's transfer rate x f and its \
page read time tR / f, same channels and ways): sweep a factor with 'flash.internal_bandwidth*'
    >>> s = sweep(csv, reader=arrow_bridge.read_csv, profiles=["modern-gen4", "summarizer-board"],
    ...           splits="device", overrides={"cores": [1, 4]}, block_size=2048)
    >>> s.frame[["profile", "split", "cores", "tasks"]].values.tolist()
    [['modern-gen4', 'device', 1, 7], ['modern-gen4', 'device', 4, 7], \
['summarizer-board', 'device', 1, 7], ['summarizer-board', 'device', 4, 7]]
    >>> best = s.best()
    >>> best["profile"], int(best["cores"])
    ('modern-gen4', 4)
    """
    if reader is None:
        raise TypeError("sweep needs reader=, the function that reads source with a device, e.g. "
                        "arrow_bridge.read_csv (device_emulator sits below the reader and does not import it)")
    for name in ("device", "split"):
        if name in read_options:
            raise TypeError(f"sweep chooses {name}= itself: give profiles= and splits=")
    if cost_model not in COST_MODELS:
        raise ValueError(f"cost_model must be one of {COST_MODELS}, got {cost_model!r}")
    if block_size is not None and (isinstance(block_size, bool) or not isinstance(block_size, int)
                                   or block_size < 1):
        raise ValueError(f"block_size must be a positive int or None, got {block_size!r}")
    policies = [SplitPolicy.parse(split) for split in _as_tuple(splits)]
    if not policies:
        raise ValueError("splits is empty")
    points, keys = _points(_as_tuple(profiles), dict(overrides or {}), cost_model, destination)

    task_sizes = {_task_size(point, block_size) for point in points}
    started = time.perf_counter()
    recorded = {size: _record(source, reader, size, read_options) for size in sorted(task_sizes)}
    read_s = time.perf_counter() - started
    result = _simulate_all(points, len(_as_tuple(profiles)), keys, policies, recorded, block_size, cost_model,
                           destination, progress)
    result.timings = {"reads": len(recorded), "read_s": read_s,
                      "simulate_s": time.perf_counter() - started - read_s}
    return result


def _points(profiles: Sequence[ProfileLike], overrides: dict, cost_model: str, destination: str):
    """Every (profile, override values) with its device, checked before anything runs."""
    if not profiles:
        raise ValueError("profiles is empty")
    keys = list(overrides)
    paths: dict[str, str] = {}
    for key in keys:
        for path in _paths(key):
            if path in paths:
                raise ProfileError(f"override keys {paths[path]!r} and {key!r} both set {path}")
            paths[path] = key
    if cost_model == "measured" and any(key.endswith("*") and key[:-1].strip() == "host.speed" for key in keys):
        raise ProfileError("'host.speed*' scales host.clock_MHz, which cost_model='measured' does not use "
                           "for host time")
    grid = list(itertools.product(*(_values(overrides[key]) for key in keys)))
    points = []
    for profile in profiles:
        base = load_profile(profile)
        label = profile if isinstance(profile, str) else base.name
        for combo in grid:
            settings: dict[str, Any] = {}
            for key, value in zip(keys, combo):
                settings.update(scaled_overrides(base, key, value) if key.endswith("*") else {key: value})
            ssd = ComputationalSSD(base.with_overrides(**settings), cost_model=cost_model, destination=destination)
            points.append(_Point(label, dict(zip(keys, combo)), ssd))
    return points, keys


def _record(source: Any, reader: Callable[..., Any], task_bytes: int, options: Mapping) -> list[TaskWork]:
    """The tasks of one host read of ``source`` at ``task_bytes``, byte-addressed."""
    seek = getattr(source, "seek", None)
    if callable(seek) and getattr(source, "seekable", lambda: True)():
        position = source.tell()
        try:
            return _record_once(source, reader, task_bytes, options)
        finally:
            seek(position)
    return _record_once(source, reader, task_bytes, options)


def _record_once(source: Any, reader: Callable[..., Any], task_bytes: int, options: Mapping) -> list[TaskWork]:
    recorder = _ByteRecorder()
    # An empty context: the read's host-only Report stays out of the caller's collect() blocks.
    contextvars.Context().run(reader, source, device=recorder, block_size=task_bytes, **options)
    return recorder.tasks


def _simulate_all(points: list[_Point], n_profiles: int, keys: list[str], policies: list[SplitPolicy],
                  recorded: dict[int, list[TaskWork]], block_size: Optional[int], cost_model: str,
                  destination: str, progress: Optional[bool]) -> "Sweep":
    host = SplitPolicy.parse("host")
    n_tasks = sum(len(recorded[_task_size(point, block_size)]) for point in points)
    total = len(points) * (len(policies) + (host not in policies))
    if progress is None:
        progress = total * n_tasks / max(1, len(points)) >= _LONG_SWEEP and sys.stderr.isatty()
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, desc="sweep", unit="point", file=sys.stderr)
    views: dict[tuple, list[TaskWork]] = {}

    def run(point: _Point, policy: SplitPolicy) -> Report:
        size, page = _task_size(point, block_size), point.ssd.page_size
        key = (size, page, str(policy))
        if key not in views:
            views[key] = [_on_device(task, page, size, policy) for task in recorded[size]]
        report = simulate(point.ssd.profile, views[key], policy, cost_model=cost_model, device=point.ssd.name,
                          timeline=False, destination=destination).report
        if bar is not None:
            bar.update()
        return report

    results: dict[tuple[int, str], Report] = {}
    try:
        for i, point in enumerate(points):
            for policy in [host] + [p for p in policies if p != host]:
                results[i, str(policy)] = run(point, policy)
    finally:
        if bar is not None:
            bar.close()

    rows, reports = [], []
    per_profile = len(points) // n_profiles  # points are profile-major
    for first in range(0, len(points), per_profile):
        for policy in policies:
            for i in range(first, first + per_profile):
                point, report = points[i], results[i, str(policy)]
                row = {"profile": point.profile, "split": str(policy), **point.values,
                       "task_bytes": _task_size(point, block_size),
                       "tasks": report.tasks}
                row.update(_columns(report, results[i, "host"].makespan_s, destination))
                rows.append(row)
                reports.append(report)
    import pandas as pd

    return Sweep(pd.DataFrame(rows), reports, tuple(keys))


@dataclass
class Sweep:
    """The result of :func:`sweep`: ``frame`` (a pandas DataFrame, one row per
    point), ``reports`` (the modeled :class:`~ndp_core.report.Report` of each
    row, without timelines), ``parameters`` (the override keys, in order) and
    ``timings`` (``reads`` of the file, wall seconds spent reading, ``read_s``,
    and simulating, ``simulate_s``).

    >>> import pandas as pd
    >>> s = Sweep(pd.DataFrame({"profile": ["p", "p"], "split": ["dynamic"] * 2, "cores": [1, 4],
    ...                         "speedup": [0.5, 1.5]}), [], ("cores",))
    >>> len(s), int(s.best()["cores"])
    (2, 4)
    """

    frame: Any  # pandas.DataFrame
    reports: list
    parameters: tuple
    timings: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.frame)

    def __repr__(self) -> str:
        shown = [c for c in ("profile", "split", *self.parameters, "makespan_s", "speedup", "offload_share",
                             "energy_j") if c in self.frame.columns]
        return (f"Sweep: {len(self)} points over {', '.join(self.parameters) or 'profiles x splits'} "
                f"(.frame has all {len(self.frame.columns)} columns)\n{self.frame[shown].to_string()}")

    def _repr_html_(self) -> str:
        return self.frame._repr_html_()

    def best(self, by: str = "speedup") -> Any:
        """The row with the highest ``by`` (a pandas Series)."""
        return self.frame.loc[self.frame[by].idxmax()]

    def plot(self, y: str = "speedup", *, x: Optional[str] = None, facet: Optional[str] = None, ax: Any = None):
        """``y`` (a column: ``"speedup"``, ``"makespan_s"``, ``"energy_j"``, ...)
        against swept parameter ``x`` (default: the first override key), one
        line per (profile, split) and per value of any other key, one panel
        per value of ``facet`` (default: the second key, when there is one).
        With no override keys, bars per split and profile. Numeric ``x``
        spanning a factor of 8 or more is drawn on a log2 axis.

        Returns the matplotlib Axes (one panel) or a list of Axes (one per
        ``facet`` value); ``ax`` draws a single panel into an existing Axes.

        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import pandas as pd
        >>> s = Sweep(pd.DataFrame({"profile": ["p"] * 4, "split": ["host", "host", "dynamic", "dynamic"],
        ...                         "cores": [1, 4, 1, 4], "speedup": [1.0, 1.0, 0.5, 1.5]}), [], ("cores",))
        >>> [line.get_label() for line in s.plot().get_lines() if not line.get_label().startswith("_")]
        ['host', 'dynamic']
        """
        import matplotlib.pyplot as plt

        frame = self.frame
        if y not in frame.columns:
            raise KeyError(f"no column {y!r}; columns: {', '.join(frame.columns)}")
        keys = list(self.parameters)
        x = x if x is not None else (keys[0] if keys else None)
        facet = facet if facet is not None or len(keys) < 2 else next(k for k in keys if k != x)
        for name in (x, facet):
            if name is not None and name not in keys:
                raise KeyError(f"{name!r} is not an override key of this sweep ({', '.join(keys) or 'none'})")
        panels = [None] if facet is None else list(dict.fromkeys(frame[facet]))
        if ax is not None and len(panels) > 1:
            raise ValueError("ax= draws one panel: choose facet values by plotting a filtered Sweep")
        if ax is None:
            fig, axes = plt.subplots(1, len(panels), figsize=(1.5 + 4.5 * len(panels), 4.2), sharey=True,
                                     squeeze=False, layout="constrained")
            axes = list(axes[0])
        else:
            axes = [ax]
        profiles = list(dict.fromkeys(frame["profile"]))
        splits = list(dict.fromkeys(frame["split"]))
        for panel, axis in zip(panels, axes):
            part = frame if panel is None else frame[frame[facet] == panel]
            if x is None:
                _bars(axis, part, y, profiles, splits)
            else:
                _lines(axis, part, y, x, [k for k in keys if k not in (x, facet)], profiles, splits)
            if panel is not None:
                axis.set_title(f"{_axis_name(facet)} = {panel:g}" if isinstance(panel, numbers.Real)
                               else f"{_axis_name(facet)} = {panel}", fontsize="medium")
            if y == "speedup":
                axis.axhline(1.0, color="0.55", lw=0.8, ls=":", zorder=0)
            axis.grid(True, which="major", color="0.9", lw=0.6)
            axis.set_axisbelow(True)
        axes[0].set_ylabel("speedup vs. host-only (same device)" if y == "speedup" else y)
        axes[0].legend(fontsize="small", frameon=False)
        if len(profiles) == 1 and ax is None:
            axes[0].figure.suptitle(f"{profiles[0]}: {y} by split", fontsize="medium")
        return axes[0] if len(axes) == 1 else axes


def _axis_name(key: str) -> str:
    if key.endswith("*"):
        return f"{key[:-1].strip()} (x the profile's)"
    return key


def _bars(axis: Any, part: Any, y: str, profiles: list, splits: list) -> None:
    width = 0.8 / len(profiles)
    for j, profile in enumerate(profiles):
        rows = part[part["profile"] == profile].set_index("split")
        heights = [rows[y].get(split, math.nan) for split in splits]
        axis.bar([i + (j - (len(profiles) - 1) / 2) * width for i in range(len(splits))], heights, width,
                 label=profile)
    axis.set_xticks(range(len(splits)), splits)
    axis.set_xlabel("split")


def _lines(axis: Any, part: Any, y: str, x: str, others: list, profiles: list, splits: list) -> None:
    values = list(dict.fromkeys(part[x]))
    numeric = all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in values)
    positions = {v: (v if numeric else i) for i, v in enumerate(values)}
    colours = {split: f"C{i}" for i, split in enumerate(splits)}
    styles = ["-", "--", "-.", ":"]
    markers = ["o", "s", "^", "D", "v", "P"]
    groups = ["profile", "split", *others]
    combos = list(dict.fromkeys(tuple(row) for row in part[others].itertuples(index=False))) if others else [()]
    for label_values, rows in part.groupby(groups, sort=False):
        profile, split, *rest = label_values
        variant = combos.index(tuple(rest))
        rows = rows.sort_values(x, key=lambda col: col.map(positions))
        label_parts = ([profile] if len(profiles) > 1 else []) + [split]
        label_parts += [f"{_axis_name(k)}={v}" for k, v in zip(others, rest)]
        host = split == "host"
        axis.plot(rows[x].map(positions), rows[y], label=" · ".join(label_parts),
                  color="0.45" if host else colours[split],
                  ls="--" if host else styles[(profiles.index(profile) + variant) % len(styles)],
                  marker=markers[(profiles.index(profile) * len(combos) + variant) % len(markers)], ms=4, lw=1.4)
    if numeric and all(v > 0 for v in values) and max(values) / min(values) >= 8:
        axis.set_xscale("log", base=2)
    axis.set_xticks([positions[v] for v in values], [f"{v:g}" if numeric else str(v) for v in values])
    axis.minorticks_off()
    axis.set_xlabel(_axis_name(x))
