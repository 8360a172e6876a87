"""Open bugs the fuzzer found, recognised so that a run counts them apart.

A failure that matches an entry here is a ``known_bug`` verdict, not an
undocumented mismatch: it is still counted (``fuzz.json``: ``known_bugs``)
but does not fail the in-suite run, which must stay green and deterministic
while the owner fixes the bug. Every entry has a minimized case in
``tests/arrow_bridge/fuzz_corpus/found/`` tested as ``xfail(strict=True)``:
once the bug is fixed that test passes, fails as XPASS, and the entry must
go (``test_fuzz.py`` checks that each entry still matches its case).

Unlike :mod:`benchmarks.fuzzing.differences` (deliberate behaviour), these
are defects to fix.

>>> [bug.name for bug in KNOWN_BUGS]
[]
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

import pyarrow as pa

@dataclass(frozen=True)
class KnownBug:
    """An open bug: its name, what goes wrong, the corpus case that shows it and
    ``matches(verdict, table)``: whether a failing verdict (a
    ``benchmarks.fuzzing.judge.Verdict``) on the referee's ``table`` is this bug."""

    name: str
    description: str
    case: str  # file name in tests/arrow_bridge/fuzz_corpus/found/
    matches: Callable[[Any, Optional[pa.Table]], bool]


#: None open: the last three (a writer BOM, an error depending on block size, a device UTF-8
#: error) were fixed; a new one goes here with its corpus case.
KNOWN_BUGS: list[KnownBug] = []


def known_bug(verdict: Any, table: Optional[pa.Table]) -> Optional[str]:
    """The name of the open bug a failing verdict shows, or None."""
    for bug in KNOWN_BUGS:
        if bug.matches(verdict, table):
            return bug.name
    return None
