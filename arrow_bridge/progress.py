"""``read_csv(..., progress=True)``: a progress bar over the bytes parsed.

A :class:`~arrow_bridge.executors.SpanSink`: the reader hands it each span as
it is checked, in file order, and the bar advances by the span's bytes. tqdm's
``auto`` flavour draws a widget in Jupyter and text on stderr elsewhere.

>>> import io, arrow_bridge
>>> arrow_bridge.read_csv(io.BytesIO(b"a\\n1\\n"), progress=True).num_rows  # the bar goes to stderr
1
"""
from __future__ import annotations

from typing import Optional

from arrow_bridge.executors.base import SpanResult


class ProgressBar:
    """A tqdm bar over ``total`` bytes (None: unknown, the bar counts only)."""

    def __init__(self, total: Optional[int], desc: str = "read_csv"):
        from tqdm.auto import tqdm

        self.bar = tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, desc=desc)

    def checked(self, result: SpanResult) -> None:
        self.bar.update(result.parsed)

    def complete(self) -> None:
        """The read is done: the bar reaches its total (the header and skipped
        lines are bytes no span holds)."""
        if self.bar.total:
            self.bar.update(self.bar.total - self.bar.n)

    def close(self) -> None:
        self.bar.close()

