"""Work counters as a StorageApp declares them.

``ndp_core`` knows nothing of what an app counts: each app declares its
counters (names in slot order) with :class:`WorkCounters`, fills an int64 array
of that length while it runs, and hands the counters the timing model prices
(``modeled``) to the device by name. A device profile then prices those names;
the engine only passes the array through.

>>> from ndp_core.counters import WorkCounters
>>> words = WorkCounters(("bytes", "words", "calls"), modeled=("bytes", "words"))
>>> words.slot("words")
1
>>> counts = words.zeros()
>>> counts[words.slot("bytes")] += 11
>>> words.modeled_values(counts)
{'bytes': 11, 'words': 0}
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np


@dataclass(frozen=True)
class WorkCounters:
    """An app's work counters: ``names`` in slot order; ``modeled`` the ones a
    device's timing model charges for (the rest are diagnostics). ``modeled``
    defaults to every name."""

    names: tuple[str, ...]
    modeled: Optional[tuple[str, ...]] = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "names", tuple(self.names))
        if len(set(self.names)) != len(self.names):
            raise ValueError(f"counter names repeat: {self.names}")
        modeled = self.names if self.modeled is None else tuple(self.modeled)
        unknown = [name for name in modeled if name not in self.names]
        if unknown:
            raise ValueError(f"modeled counters {unknown} are not among the declared {self.names}")
        object.__setattr__(self, "modeled", modeled)

    def __len__(self) -> int:
        return len(self.names)

    def slot(self, name: str) -> int:
        """The array index of counter ``name``."""
        try:
            return self.names.index(name)
        except ValueError:
            raise KeyError(f"no work counter {name!r}; this app counts {', '.join(self.names)}") from None

    def zeros(self) -> np.ndarray:
        """A zeroed counter array for the app to add to."""
        return np.zeros(len(self.names), dtype=np.int64)

    def values(self, counts: np.ndarray, names: Optional[Sequence[str]] = None) -> dict[str, int]:
        """``{name: count}`` for ``names`` (default: all)."""
        return {name: int(counts[self.slot(name)]) for name in (self.names if names is None else names)}

    def modeled_values(self, counts: np.ndarray) -> dict[str, int]:
        """The counters a timing model charges for, by name (what ``TaskWork.counters`` holds)."""
        return self.values(counts, self.modeled)
