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
['writer_leading_bom_char', 'error_depends_on_block_size', 'device_invalid_utf8_string_column']
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

import pyarrow as pa

BOM_CHAR = "\ufeff"


@dataclass(frozen=True)
class KnownBug:
    """An open bug: its name, what goes wrong, the corpus case that shows it and
    ``matches(verdict, table)``: whether a failing verdict (a
    ``benchmarks.fuzzing.judge.Verdict``) on the referee's ``table`` is this bug."""

    name: str
    description: str
    case: str  # file name in tests/arrow_bridge/fuzz_corpus/found/
    matches: Callable[[Any, Optional[pa.Table]], bool]


def _first_name_starts_with_bom(verdict: Any, table: Optional[pa.Table]) -> bool:
    """The writer's round trip (always with a header) of a table whose first column name starts with U+FEFF."""
    return verdict.kind.startswith("writer:") and table is not None and table.num_columns > 0 \
        and table.column_names[0].startswith(BOM_CHAR)


def _unterminated_quote_reported_before_earlier_value(verdict: Any, table: Optional[pa.Table]) -> bool:
    """One read reports the unterminated quote at the end of the input, the other
    (another block size, or the host beside the device) a value that does not
    convert, earlier in the file."""
    if verdict.kind not in ("host:block_size_dependent", "device:differs_from_host") or len(verdict.errors) != 2:
        return False
    reasons = [str(getattr(e, "reason", "")) for e in verdict.errors]
    if not any(r.startswith("unterminated quoted field") for r in reasons):
        return False
    unterminated, other = verdict.errors if reasons[0].startswith("unterminated") else verdict.errors[::-1]
    return str(getattr(other, "reason", "")).startswith("cannot convert") and \
        other.byte_offset < unterminated.byte_offset


def _device_string_arena(verdict: Any, table: Optional[pa.Table]) -> bool:
    """The device path fails building a string column from its arena (pyarrow's validation)."""
    return verdict.kind == "device:error_type" and "larger than values array" in verdict.detail


KNOWN_BUGS: list[KnownBug] = [
    KnownBug(
        "writer_leading_bom_char",
        "arrow_bridge.writer.write_csv writes the file's first field (the first column name, or with "
        "header=False the first value) unquoted even when its text starts with U+FEFF, so the file starts "
        "with the bytes of a UTF-8 BOM and every reader strips them: column '\\ufeff' reads back as no "
        "column, '\\ufeffa' as 'a'. Fix: quote a first field that starts with U+FEFF.",
        "writer-bom-char-name.csv",
        _first_name_starts_with_bom),
    KnownBug(
        "error_depends_on_block_size",
        "read_csv reports a different error for the same input depending on block_size: when one read "
        "holds the whole input and sees its end, an unterminated quoted field at the end is reported "
        "('unterminated quoted field', its line and offset) although an earlier value does not convert "
        "to its column's explicit type; with smaller blocks the earlier conversion error is reported. "
        "b'a\\nx\\n\"' with dtype={'a': 'int64'}: block_size >= 6 gives line 3 'unterminated quoted "
        "field' (offset 4), block_size <= 5 gives line 2 \"cannot convert 'x' to int64\" (offset 2). The "
        "first problem in file order (the conversion error) is the one every block size should report.",
        "error-depends-on-block-size.csv",
        _unterminated_quote_reported_before_earlier_value),
    KnownBug(
        "device_invalid_utf8_string_column",
        "on the device path (split 'device', 'static:<f>' or 'dynamic'), a value that is not valid UTF-8 "
        "in a column given an explicit string/large_string type raises pyarrow's ArrowInvalid 'Length "
        "spanned by binary offsets (1) larger than values array (size 0)' from "
        "arrow_bridge/executors/device_buffers.py wrap_column (read_arena) instead of the host's "
        "CsvParseError \"column 'a': cannot convert '\\x9f' to string\": b'a\\n\\x9f\\n' with "
        "dtype={'a': 'string'}, device=ComputationalSSD('modern-gen4'), split='device'.",
        "device-invalid-utf8-string-column.csv",
        _device_string_arena),
]


def known_bug(verdict: Any, table: Optional[pa.Table]) -> Optional[str]:
    """The name of the open bug a failing verdict shows, or None."""
    for bug in KNOWN_BUGS:
        if bug.matches(verdict, table):
            return bug.name
    return None
