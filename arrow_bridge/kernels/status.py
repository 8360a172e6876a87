"""Kernel statuses, field flags and the reader's work counters (the CSV StorageApp's ABI).

Statuses a kernel shares with the engine take the engine's numbers
(:class:`ndp_core.engine.Status`); codes the kernels pass among themselves
are numbered from ``APP_PRIVATE_STATUS_BASE`` up, so none equals an engine
status. The app turns them into ABI statuses before it returns
(:mod:`arrow_bridge.kernels.span_app`), except ``INVALID_ARGS``, which it
returns on purpose when it cannot trust a command: the engine completes any
status outside the ABI as APP_ERROR.

>>> OK == int(Status.OK) and BAD_VALUE >= APP_PRIVATE_STATUS_BASE
True
"""
import numpy as np

from ndp_core.counters import WorkCounters
from ndp_core.engine import APP_PRIVATE_STATUS_BASE, Status

# Statuses with an engine meaning.
OK = int(Status.OK)
NEEDS_MORE = int(Status.NEEDS_MORE_INPUT)  # the span ends inside a record: retry with more input
OUT_OF_SPACE = int(Status.OUT_OF_SPACE)  # an output buffer's capacity is too small: retry with more

# Kernel-internal statuses (never returned to the engine).
BAD_VALUE = APP_PRIVATE_STATUS_BASE + 0  # a field does not convert to its column's type
UNTERMINATED_QUOTE = APP_PRIVATE_STATUS_BASE + 1  # a quoted field runs to the end of the input
BAD_ROW = APP_PRIVATE_STATUS_BASE + 2  # a record has the wrong number of fields (on_bad_lines="error")
GIVE_UP = APP_PRIVATE_STATUS_BASE + 3  # a fast path declines the span: parse it on the general path
INVALID_ARGS = APP_PRIVATE_STATUS_BASE + 4  # args, outputs or plan not to be trusted: returned, APP_ERROR

#: Bad-row records (offset, field count) a span keeps for ``on_bad_lines`` reports,
#: on the host and in a device task's arena alike.
BAD_ROWS_KEPT = 4096

# Per-field flag bits written by the tokenizer.
QUOTED = 1  # the field started with the quote character
COMPLEX = 2  # the field needs unescaping (doubled quotes, escapes, text after a quote)

#: The reader's work counters, declared once: the kernels add to these slots;
#: the modeled ones go to a device's timing model by name.
READER_COUNTERS = WorkCounters(
    ("bytes_scanned", "rows", "fields", "bad_rows", "spans", "ints", "floats", "bools", "temporals",
     "string_bytes", "nulls"),
    modeled=("bytes_scanned", "rows", "fields", "ints", "floats", "bools", "temporals", "string_bytes", "nulls"),
)
BYTES_SCANNED = READER_COUNTERS.slot("bytes_scanned")
ROWS = READER_COUNTERS.slot("rows")
FIELDS = READER_COUNTERS.slot("fields")
BAD_ROWS = READER_COUNTERS.slot("bad_rows")
SPANS = READER_COUNTERS.slot("spans")  # spans tokenized (one per StorageApp call on a page or block)
INTS_CONVERTED = READER_COUNTERS.slot("ints")
FLOATS_CONVERTED = READER_COUNTERS.slot("floats")
BOOLS_CONVERTED = READER_COUNTERS.slot("bools")
TEMPORALS_CONVERTED = READER_COUNTERS.slot("temporals")
STRING_BYTES = READER_COUNTERS.slot("string_bytes")
NULLS = READER_COUNTERS.slot("nulls")
N_COUNTERS = len(READER_COUNTERS)


def empty_counters() -> np.ndarray:
    """A zeroed work-counter array for kernel calls to add to.

    >>> empty_counters().shape
    (11,)
    """
    return READER_COUNTERS.zeros()
