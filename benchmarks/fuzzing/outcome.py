"""What one read gave: a Table or an exception; and one disagreement with the referee.

>>> ok = Outcome.of(lambda: pa.table({"a": [1]}))
>>> bad = Outcome.of(lambda: 1 / 0)
>>> ok.ok, bad.ok, bad.summary()
(True, False, 'ZeroDivisionError: division by zero')
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Optional

import pyarrow as pa

_NUMBERS = re.compile(r"\d+")
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|b'[^']*'")


@dataclass(frozen=True)
class Outcome:
    """``table`` or ``error`` (exactly one is set)."""

    table: Optional[pa.Table] = None
    error: Optional[BaseException] = None

    @classmethod
    def of(cls, read: Callable[[], Any]) -> "Outcome":
        """Runs ``read()``; any ``Exception`` is the outcome (the judge decides whether it is fine)."""
        try:
            return cls(table=read())
        except Exception as exc:  # noqa: BLE001 - every exception is an outcome to judge
            return cls(error=exc)

    @property
    def ok(self) -> bool:
        return self.error is None

    def summary(self) -> str:
        """The error as ``Type: message`` (first line), or the table's shape and types."""
        if self.error is not None:
            text = str(self.error).splitlines()[0] if str(self.error) else ""
            return f"{type(self.error).__name__}: {text}"[:300]
        types = ", ".join(str(t) for t in self.table.schema.types)
        return f"table {self.table.num_rows}x{self.table.num_columns} [{types}]"

    def signature(self) -> str:
        """:meth:`summary` with numbers and quoted text blanked: a behaviour, not an input.

        >>> Outcome(error=ValueError("x.csv:12: column 'a': cannot convert '1x'")).signature()
        'ValueError: x.csv:#: column _: cannot convert _'
        """
        return _NUMBERS.sub("#", _QUOTED.sub("_", self.summary()))


@dataclass
class Mismatch:
    """A case on which we and the referee disagree, with what a documented
    difference needs to recognise itself: the input, the config and the
    ConvertOptions both readers got, both outcomes, ``referee(data,
    **options)`` to ask pyarrow again and ``compare`` (None when two outcomes
    agree)."""

    data: bytes
    config: Any  # ReadConfig
    ours: Outcome
    theirs: Outcome
    referee: Callable[..., Outcome]
    compare: Callable[[Outcome, Outcome], Optional[str]]
    convert: Any = None  # pyarrow.csv.ConvertOptions or None

    def ask_referee(self, data: Optional[bytes] = None, **overrides: Any) -> Outcome:
        """pyarrow again, on ``data`` (default: the same bytes) with the case's
        options except ``overrides`` (``ReadConfig.referee_options`` keywords)."""
        options = self.config.referee_options(self.convert, **overrides)
        return self.referee(self.data if data is None else data, **options)
