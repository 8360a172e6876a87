"""The device's compute: embedded cores and the fixed-function pipeline.

Work is priced by name. A StorageApp declares its work counters
(``ndp_core.counters.WorkCounters``) and a task carries the modeled ones in
``TaskWork.counters``; a profile's price tables (``[cores.cycles]``,
``[host.cycles]``) give cycles per unit of each, plus ``tasks``, a fixed cost
per command. A counter the table does not price is an error, not a free lunch.

>>> from device_emulator.profile import load_profile
>>> p = load_profile("modern-gen4")
>>> Prices(p, "cores.cycles").cycles({"bytes_scanned": 1000, "ints": 10})
22104.0
>>> Prices(p, "cores.cycles").cycles({"widgets": 3})
Traceback (most recent call last):
...
device_emulator.profile.schema.ProfileError: profile 'modern-gen4' has no price for work counter 'widgets' in [cores.cycles]; it prices aggregate_updates, bools, bytes_emitted, bytes_scanned, bytes_searched, fields, filter_tests, floats, ints, lines_matched, nulls, rows, string_bytes, temporals, values_kept
"""
from __future__ import annotations

from typing import Collection, Mapping

from ndp_core.device import TaskWork

from device_emulator.profile import Profile, ProfileError, units
from device_emulator.profile.schema import TASK_PRICE

__all__ = ["COST_MODELS", "Prices", "CoreTime", "pipeline_seconds"]

#: ``"cycles"``: work counters x the profile's prices; ``"measured"``: the
#: task's measured host seconds, scaled to the device by clocks.
COST_MODELS = ("cycles", "measured")


class Prices:
    """One price table of a profile (``table``: ``"cores.cycles"`` or ``"host.cycles"``):
    ``scaled`` counters cost ``factor`` times their price, ``skipped`` ones are not
    charged here (another unit does that work)."""

    def __init__(self, profile: Profile, table: str, *, scaled: Collection[str] = (), factor: float = 1.0,
                 skipped: Collection[str] = ()) -> None:
        section, key = table.split(".")
        self.prices: Mapping[str, float] = profile.data[section][key]
        self.table, self.profile_name = table, profile.name
        self.scaled, self.factor, self.skipped = frozenset(scaled), factor, frozenset(skipped)

    def cycles(self, counters: Mapping[str, int]) -> float:
        """Cycles of one task: the ``tasks`` price plus each counter x its price,
        summed in the counters' order (as the app declared them)."""
        prices = self.prices
        total = prices.get(TASK_PRICE, 0.0)
        for name, count in counters.items():
            if name in self.skipped:
                continue
            if name not in prices or name == TASK_PRICE:
                raise self.unpriced(name)
            if not count:
                continue
            price = prices[name]
            if name in self.scaled:
                price *= self.factor
            total += count * price
        return total

    def unpriced(self, name: str) -> ProfileError:
        """The error for a counter this table does not price."""
        priced = ", ".join(sorted(k for k in self.prices if k != TASK_PRICE)) or "nothing"
        return ProfileError(f"profile {self.profile_name!r} has no price for work counter {name!r} "
                            f"in [{self.table}]; it prices {priced}")


class CoreTime:
    """One embedded core's service time per task (0 when a pipeline does it all).

    Cycles: floating-point counters (``cores.float_counters``) cost
    ``soft_float_factor`` times more without an FPU; a ``scan`` pipeline takes
    over ``pipeline.scan_counters``. Measured: the host's measured seconds x
    ``host.clock_MHz / cores.clock_MHz x cores.measured_scale``.

    >>> from device_emulator.profile import load_profile
    >>> from ndp_core.device import TaskWork
    >>> CoreTime(load_profile("hods-fpga"), "cycles").seconds(TaskWork(0, 0, 1, 10, 0, {"rows": 1}))
    0.0
    """

    def __init__(self, profile: Profile, cost_model: str) -> None:
        cores, pipeline = profile.data["cores"], profile.data["pipeline"]
        self.used = cores["count"] > 0 and pipeline["scope"] != "all"
        self.measured = cost_model == "measured"
        self.clock_ratio = profile.data["host"]["clock_MHz"] / cores["clock_MHz"] if self.used else 0.0
        self.measured_scale = cores["measured_scale"]
        self.hertz = units.hertz(cores["clock_MHz"])
        self.prices = Prices(profile, "cores.cycles", scaled=cores["float_counters"],
                             factor=1.0 if cores["fpu"] else cores["soft_float_factor"],
                             skipped=pipeline["scan_counters"] if pipeline["scope"] == "scan" else ())

    def seconds(self, task: TaskWork) -> float:
        """``task``'s service time on one core."""
        if not self.used:
            return 0.0
        if self.measured:
            return task.measured_s * self.clock_ratio * self.measured_scale
        return self.prices.cycles(task.counters) / self.hertz


def pipeline_seconds(rate: float, task: TaskWork) -> float:
    """The fixed-function pipeline's time for ``task``'s text at ``rate`` bytes/s
    (``Profile.pipeline_rate``; 0 without a pipeline).

    >>> pipeline_seconds(0.0, TaskWork(0, 0, 1, 10, 0, {})), pipeline_seconds(5.0, TaskWork(0, 0, 1, 10, 0, {}))
    (0.0, 2.0)
    """
    return task.text_bytes / rate if rate > 0 else 0.0
