"""The test suite's reference helpers, for the fuzzer.

``tests/arrow_bridge/csvgen.py`` already holds what a differential check of
the reader needs and what the property tests trust: a small reference
tokenizer following pyarrow's record rules (``scan_records``), the exact
table comparison (floats by their bits) and the value pools of its random
files. The fuzzer uses the same ones rather than a second copy that could
drift; csvgen is not a package, so its folder goes on ``sys.path`` here, once.

>>> scan = scan_records(b'a\\n"x', Dialect())
>>> scan.open_quote, [r.offset for r in scan.records]
(True, [0, 2])
>>> print(tables_differ(pa.table({"x": [0.0]}), pa.table({"x": [-0.0]})))  # floats by their bits
column 0 'x' (double) differs: row 0: got <pyarrow.Int64Scalar: 0>, expected <pyarrow.Int64Scalar: -9223...>
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import pyarrow as pa

CSVGEN_DIR = Path(__file__).resolve().parents[2] / "tests" / "arrow_bridge"
if str(CSVGEN_DIR) not in sys.path:
    sys.path.append(str(CSVGEN_DIR))

from csvgen import (  # noqa: E402 - after the path is set
    BOM,
    POOLS,
    Dialect,
    Scan,
    assert_tables_identical,
    bad_records,
    line_at,
    scan_records,
    without_records,
)

__all__ = ["BOM", "POOLS", "Dialect", "Scan", "bad_records", "line_at", "scan_records", "tables_differ",
           "without_records", "CSVGEN_DIR"]


def tables_differ(got: pa.Table, expected: pa.Table) -> Optional[str]:
    """None when the tables are identical (schema, values, float bits; chunking
    ignored), else what differs first.

    Fast path: one C++ ``Table.equals`` settles tables without float columns
    (for floats ``equals`` treats 0.0 and -0.0 as equal, so those columns
    are compared by their bits, by csvgen's ``assert_tables_identical``)."""
    if (got.schema.equals(expected.schema, check_metadata=True) and got.equals(expected)
            and not any(pa.types.is_floating(t) for t in expected.schema.types)):
        return None
    try:
        assert_tables_identical(got, expected)
    except AssertionError as exc:
        return str(exc)
    return None
