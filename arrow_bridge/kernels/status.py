"""Status codes and work-counter slots shared by all kernels (the StorageApp ABI)."""
import numpy as np

# Kernel return statuses.
OK = 0
NEEDS_MORE = 1  # the span ends inside a record: retry with more input
BAD_VALUE = 2  # a field does not convert to its column's type
UNTERMINATED_QUOTE = 3  # a quoted field runs to the end of the input
BAD_ROW = 4  # a record has the wrong number of fields (on_bad_lines="error")
OUT_OF_SPACE = 5  # an output buffer's capacity is too small: retry with more
GIVE_UP = 6  # a fast path declines the span: parse it on the general path

# Per-field flag bits written by the tokenizer.
QUOTED = 1  # the field started with the quote character
COMPLEX = 2  # the field needs unescaping (doubled quotes, escapes, text after a quote)

# Work counters (int64 slots in the ``counters`` array every kernel receives).
BYTES_SCANNED = 0
ROWS = 1
FIELDS = 2
BAD_ROWS = 3
SPANS = 4  # spans tokenized (one per StorageApp call on a page or block)
INTS_CONVERTED = 5
FLOATS_CONVERTED = 6
BOOLS_CONVERTED = 7
TEMPORALS_CONVERTED = 8
STRING_BYTES = 9
NULLS = 10
N_COUNTERS = 11
#: Each slot's name (index = slot); the device timing model's names where it has one.
SLOT_NAMES = ("bytes_scanned", "rows", "fields", "bad_rows", "spans", "ints", "floats", "bools", "temporals",
              "string_bytes", "nulls")


def empty_counters() -> np.ndarray:
    """A zeroed work-counter array for kernel calls to add to.

    >>> empty_counters().shape
    (11,)
    """
    return np.zeros(N_COUNTERS, dtype=np.int64)
