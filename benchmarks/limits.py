"""Hostile shapes at full size: each read ends in a Table equal to pyarrow's or a clear error.

The unit tests (tests/arrow_bridge/test_limits.py) try the shapes small; this
script makes them as large as the reliability issue names them and reads each
in a fresh child process, recording the outcome, the wall time and the child's
peak RSS, ours first and then pyarrow's in another child:

* ``one_gib_field``      one field of 1 GiB;
* ``million_fields``     a header and a row of 10^6 fields;
* ``hundred_k_columns``  100,000 columns, 10 rows;
* ``strings_over_2gib``  one string column of 2.25 GiB (chunks of int32
  offsets as pyarrow builds them; and ``column_types`` large_string);
* ``billion_rows``       10^9 rows of one digit: with ``memory_limit`` too
  small for their 8 GB of int64 it must raise MemoryLimitError early, and as
  int8 it must read (1 GB of output).

Files are written once under ``data/limits/`` (about 7 GB; git-ignored).

    python -m benchmarks.limits                 # every shape
    python -m benchmarks.limits --only one_gib_field --only billion_rows
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from benchmarks.common import DATA_DIR, RESULTS_DIR, host_info, package_versions, write_result

LIMITS_DIR = DATA_DIR / "limits"
GIB = 1 << 30


def _write(path: Path, head: bytes, body: Callable[[], "list[bytes] | object"], tail: bytes = b"") -> Path:
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as out:
        out.write(head)
        for piece in body():
            out.write(piece)
        out.write(tail)
    tmp.replace(path)
    return path


def one_gib_field() -> Path:
    return _write(LIMITS_DIR / "one_gib_field.csv", b"a\n", lambda: (b"x" * (64 << 20) for _ in range(16)), b"\n")


def million_fields() -> Path:
    n = 1_000_000
    return _write(LIMITS_DIR / "million_fields.csv", b"", lambda: [
        ",".join(f"c{i}" for i in range(n)).encode(), b"\n", ",".join(str(i % 10) for i in range(n)).encode(),
        b"\n"])


def hundred_k_columns() -> Path:
    n = 100_000
    row = ",".join(str(i % 100) for i in range(n)).encode() + b"\n"
    return _write(LIMITS_DIR / "hundred_k_columns.csv", ",".join(f"c{i}" for i in range(n)).encode() + b"\n",
                  lambda: [row] * 10)


def strings_over_2gib() -> Path:
    line = b"%s\n" % (b"s" * 99)  # 100 bytes a row
    block = line * (1 << 20)  # 100 MiB
    return _write(LIMITS_DIR / "strings_over_2gib.csv", b"s\n", lambda: (block for _ in range(23)))


def billion_rows() -> Path:
    block = b"7\n" * (1 << 24)  # 32 MiB
    return _write(LIMITS_DIR / "billion_rows.csv", b"d\n", lambda: (block for _ in range(60)))  # 1.007e9 rows


@dataclass(frozen=True)
class Case:
    name: str
    make: Callable[[], Path]
    ours: dict = field(default_factory=dict)  # read_csv keywords (ours only)
    both: dict = field(default_factory=dict)  # column types, given to both readers
    expect: str = "table"  # or "MemoryLimitError"
    pyarrow_block: int = 1 << 20  # pyarrow's block_size: a record must fit in one block there


CASES = [
    Case("one_gib_field", one_gib_field, pyarrow_block=(1 << 31) - 1),
    # The 6.9 MB header does not fit a 1 MiB block: both readers then raise "Empty CSV file or block".
    Case("million_fields", million_fields, ours={"block_size": 16 << 20}, pyarrow_block=16 << 20),
    Case("hundred_k_columns", hundred_k_columns),
    Case("strings_over_2gib", strings_over_2gib),
    Case("strings_over_2gib_large", strings_over_2gib, both={"s": "large_string"}),
    Case("billion_rows_limited", billion_rows, ours={"memory_limit": "4GiB"}, expect="MemoryLimitError"),
    Case("billion_rows_int8", billion_rows, both={"d": "int8"}),
]

_CHILD = r"""
import json, resource, sys, time
import pyarrow as pa, pyarrow.csv as pacsv
path, reader, ours, both = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4])
types = {name: getattr(pa, kind)() for name, kind in both.items()}
theirs = pacsv.ReadOptions(block_size=int(sys.argv[5]))
start, baseline = time.perf_counter(), 0
try:
    if reader == "ours":
        import arrow_bridge
        baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # the interpreter and libraries
        start = time.perf_counter()
        table = arrow_bridge.read_csv(path, convert_options=pacsv.ConvertOptions(column_types=types), **ours)
    else:
        baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        table = pacsv.read_csv(path, read_options=theirs, convert_options=pacsv.ConvertOptions(column_types=types))
    seconds = time.perf_counter() - start  # the read alone, not the check below
    outcome = {"outcome": "table", "seconds": seconds, "rows": table.num_rows, "columns": table.num_columns,
               "schema_head": str(table.schema)[:200], "nbytes": table.nbytes}
    if reader == "ours":
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        outcome["equals_pyarrow"] = table.equals(
            pacsv.read_csv(path, read_options=theirs, convert_options=pacsv.ConvertOptions(column_types=types)))
        outcome["peak_rss_bytes"] = peak
except Exception as error:  # the outcome is the point: report it
    outcome = {"outcome": type(error).__name__, "message": str(error)[:400]}
outcome.setdefault("seconds", time.perf_counter() - start)
outcome.setdefault("peak_rss_bytes", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
outcome["baseline_rss_bytes"] = baseline
print(json.dumps(outcome))
"""


def run_child(path: Path, reader: str, case: Case, timeout_s: float) -> dict:
    """One read in a fresh interpreter; a killed or hung child is an outcome too."""
    args = [sys.executable, "-c", _CHILD, str(path), reader, json.dumps(case.ours), json.dumps(case.both),
            str(case.pyarrow_block)]
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return {"outcome": "hang", "seconds": timeout_s}
    if done.returncode != 0:
        return {"outcome": f"crash (exit {done.returncode})", "stderr": done.stderr[-2000:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def merged_cases(results: list[dict]) -> list[dict]:
    """``results`` in place of the cases of the same name in the last results file
    (a run of some cases keeps the others' rows), in CASES order."""
    path = RESULTS_DIR / "limits.json"
    rows = {row["case"]: row for row in json.loads(path.read_text())["cases"]} if path.exists() else {}
    rows.update({row["case"]: row for row in results})
    order = [case.name for case in CASES]
    return sorted(rows.values(), key=lambda row: order.index(row["case"]) if row["case"] in order else len(order))


def main(argv: "list[str] | None" = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", help="a case name (repeatable); default every case")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per read before it counts as a hang")
    parser.add_argument("--no-pyarrow", action="store_true", help="skip pyarrow's own read (its time and RSS)")
    args = parser.parse_args(argv)
    results = []
    for case in CASES:
        if args.only and case.name not in args.only:
            continue
        path = case.make()
        row = {"case": case.name, "file_bytes": path.stat().st_size, "ours_keywords": case.ours,
               "column_types": case.both, "expected": case.expect,
               "ours": run_child(path, "ours", case, args.timeout)}
        if not args.no_pyarrow:
            row["pyarrow"] = run_child(path, "pyarrow", case, args.timeout)
        ours = row["ours"]
        row["as_expected"] = (ours["outcome"] == case.expect
                              and (case.expect != "table" or bool(ours.get("equals_pyarrow"))))
        results.append(row)
        print(f"{case.name:26s} {path.stat().st_size / GIB:6.2f} GiB  ours: {ours['outcome']:18s} "
              f"{ours.get('seconds', 0):7.1f} s  peak {ours.get('peak_rss_bytes', 0) / GIB:5.2f} GiB  "
              f"pyarrow: {row.get('pyarrow', {}).get('outcome', '-')}  as expected: {row['as_expected']}",
              flush=True)
    out = write_result("limits.json", {"host": host_info(), "versions": package_versions(),
                                       "cases": merged_cases(results)})
    print(f"wrote {out}")
    return 0 if all(row["as_expected"] for row in results) else 1


if __name__ == "__main__":
    sys.exit(main())
