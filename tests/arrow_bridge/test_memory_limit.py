"""``memory_limit``: a read that would go over its budget stops with a
MemoryLimitError naming it, before it goes over; a read that fits gives the
same Table as one without a limit; the process's peak memory stays within
the budget plus a stated slack.
"""
from __future__ import annotations

import json
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import arrow_bridge
from arrow_bridge import MemoryLimitError
from arrow_bridge.api import parse_memory_limit
from arrow_bridge.assembly import assemble, assembly_bytes
from arrow_bridge.executors import SpanResult
from arrow_bridge.read_plan import ColumnPlan

BLOCK = 256 << 10


def _rows(n: int) -> bytes:
    """Ints, floats, quoted strings with a delimiter, dates and bools: about 60 bytes a row."""
    return b"".join(b'%d,%d.%03d,"name %d, x",2024-%02d-%02d,%s\n'
                    % (i * 7919 % 10**9, i % 1000, i % 997, i % 977, i % 12 + 1, i % 28 + 1,
                       b"true" if i % 3 else b"false") for i in range(n))


def _write_csv(path: Path, size: int) -> Path:
    """About ``size`` bytes of CSV, written fast: one block of rows repeated."""
    rows = _rows(20000)
    with open(path, "wb") as out:
        out.write(b"a,b,c,d,e\n")
        for _ in range(max(1, size // len(rows))):
            out.write(rows)
    return path


@pytest.fixture(scope="module")
def csv_file(tmp_path_factory) -> Path:
    """12 MB of CSV: about 50 spans of 256 KiB."""
    return _write_csv(tmp_path_factory.mktemp("budget") / "data.csv", 12 << 20)


@pytest.fixture(scope="module")
def whole(csv_file) -> pa.Table:
    return arrow_bridge.read_csv(csv_file, block_size=BLOCK)


def test_a_budget_far_below_the_output_stops_the_read_naming_it(csv_file, whole):
    with pytest.raises(MemoryLimitError) as raised:
        arrow_bridge.read_csv(csv_file, block_size=BLOCK, memory_limit="1MiB")
    err = raised.value
    assert isinstance(err, MemoryError)
    assert err.limit == 1 << 20 and "memory_limit=1.0 MiB" in str(err)
    assert err.path == str(csv_file) and str(csv_file) in str(err)
    assert f"{arrow_bridge.errors.byte_size(err.held)} of parsed output" in str(err)
    # Stopped before going over (what it held and had in flight fit), long before the whole output.
    assert err.held + err.in_flight <= err.limit < err.held + err.in_flight + err.needed
    assert err.held < whole.nbytes / 8


@pytest.mark.parametrize("n_threads", [1, 2, 3])
def test_a_budget_that_fits_gives_the_same_table(csv_file, whole, n_threads):
    generous = arrow_bridge.read_csv(csv_file, block_size=BLOCK, n_threads=n_threads, memory_limit="1GiB")
    assert generous.equals(whole)
    # Tight: room for the output and a few spans only, so fewer spans are parsed at once near the end.
    output_per_byte = whole.nbytes / csv_file.stat().st_size
    tight = whole.nbytes + int(3 * BLOCK * (1 + output_per_byte))
    assert arrow_bridge.read_csv(csv_file, block_size=BLOCK, n_threads=n_threads, memory_limit=tight).equals(whole)


def test_memory_limit_spellings():
    assert parse_memory_limit("512MiB") == 512 << 20
    assert parse_memory_limit("2GB") == 2 * 10**9
    assert parse_memory_limit(4096) == 4096 and parse_memory_limit(None) is None
    with pytest.raises(ValueError, match="could not interpret 'lots'"):
        arrow_bridge.read_csv(b"a\n1\n", memory_limit="lots")
    with pytest.raises(ValueError, match="at least 1 byte"):
        arrow_bridge.read_csv(b"a\n1\n", memory_limit=0)
    with pytest.raises(TypeError, match="memory_limit"):
        arrow_bridge.read_csv(b"a\n1\n", memory_limit=True)


def test_a_stream_parses_fewer_spans_ahead_and_fails_only_when_one_cannot_fit(csv_file, whole):
    span_cost = int(BLOCK * (1 + whole.nbytes / csv_file.stat().st_size))
    with arrow_bridge.open_csv(csv_file, block_size=BLOCK, memory_limit=3 * span_cost) as reader:
        assert reader.read_all().equals(whole.combine_chunks().cast(reader.schema))
    with pytest.raises(MemoryError, match=r"memory_limit=64.0 KiB.*smaller block_size"):
        with arrow_bridge.open_csv(csv_file, block_size=BLOCK, memory_limit="64KiB") as reader:
            reader.read_all()
    # pandas' chunks consume the stream in Python: the error keeps its class.
    with pytest.raises(MemoryLimitError, match="memory_limit=64.0 KiB"):
        with arrow_bridge.read_pandas(csv_file, chunksize=1000, block_size=BLOCK, memory_limit="64KiB") as chunks:
            next(chunks)


def test_device_reads_keep_the_budget(csv_file, whole, devices):
    ssd = devices("modern-gen4")
    with pytest.raises(MemoryLimitError, match="memory_limit=1.0 MiB"):
        arrow_bridge.read_csv(csv_file, device=ssd, split="dynamic", memory_limit="1MiB")
    assert ssd.engine.outstanding == 0
    table = arrow_bridge.read_csv(csv_file, device=ssd, split="dynamic", memory_limit="1GiB")
    assert table.equals(arrow_bridge.read_csv(csv_file))


def test_read_pandas_checks_the_copy_numpy_backends_make(csv_file, whole):
    limit = int(1.5 * whole.nbytes)  # the Table fits, the Table and a copy do not
    frame = arrow_bridge.read_pandas(csv_file, memory_limit=limit)  # ArrowDtype: wrapped, not copied
    assert len(frame) == whole.num_rows
    with pytest.raises(MemoryLimitError, match="converting it to pandas \\(dtype_backend='numpy'\\)"):
        arrow_bridge.read_pandas(csv_file, memory_limit=limit, dtype_backend="numpy")


def test_the_error_crosses_processes_whole():
    err = MemoryLimitError("x.csv", 1 << 20, 900 << 10, 100 << 10, 300 << 10)
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is MemoryLimitError and str(again) == str(err)
    assert (again.limit, again.held, again.in_flight, again.needed) == (1 << 20, 900 << 10, 100 << 10, 300 << 10)


def test_assembly_copies_nothing_but_the_columns_the_file_lacks():
    chunks = [pa.array(np.arange(1000)), pa.array(np.arange(1000, 1500))]
    results = [SpanResult(None, nrows=len(chunk), columns=[chunk], rungs=[-1]) for chunk in chunks]
    columns = [ColumnPlan("a", 0, pa.int64()), ColumnPlan("missing", -1, pa.int32())]
    table = assemble(results, columns)
    assert [chunk.buffers()[1].address for chunk in table.column("a").chunks] == \
        [chunk.buffers()[1].address for chunk in chunks]  # the spans' own buffers
    assert assembly_bytes(results, columns) == 1500 * 4  # the missing column's values


RSS_CHILD = r"""
import json, sys
import arrow_bridge

path, small, limit, device = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
keywords = dict(device=device, split="dynamic") if device else {}


def status(field):
    with open("/proc/self/status") as lines:
        return next(int(line.split()[1]) * 1024 for line in lines if line.startswith(field + ":"))


from arrow_bridge import startup

startup.retire()  # Numba's kernels, as a read of this size runs: loading them is not the read's
arrow_bridge.read_csv(small, **keywords)  # kernels loaded and workspaces made: not the read's to count
# The peak from here: resource.getrusage's ru_maxrss would not do, as it survives fork and exec (a
# child of the test runner starts with the runner's RSS); the kernel's VmHWM resets on request.
with open("/proc/self/clear_refs", "w") as clear:
    clear.write("5")
before = status("VmRSS")
try:
    outcome = arrow_bridge.read_csv(path, memory_limit=limit, **keywords).nbytes
except arrow_bridge.MemoryLimitError as error:
    outcome = str(error)
print(json.dumps({"outcome": outcome, "growth": status("VmHWM") - before}))
"""
# Memory a read uses beyond its budget: the blocks being read and cut (n_threads + 1 of 2 MiB, and the
# cutter's spare ones), the per-thread workspaces and the allocator's retained pages. Measured here
# (64 MiB budget, 2 threads): 9 MiB over on the host, 15 MiB on a device (its task arenas have room
# to spare and its engine reads each task's pages into a buffer of its own).
SLACK = 32 << 20


@pytest.fixture(scope="module")
def large_files(tmp_path_factory) -> tuple[Path, Path, Path]:
    """300 MB and 100 MB of CSV (about as much output), and 2 MB to warm up on."""
    folder = tmp_path_factory.mktemp("rss")
    return (_write_csv(folder / "large.csv", 300 << 20), _write_csv(folder / "medium.csv", 100 << 20),
            _write_csv(folder / "small.csv", 2 << 20))


@pytest.mark.parametrize("device", ["", "modern-gen4"], ids=["host", "device"])
@pytest.mark.parametrize("which, limit, fits", [("large", 64 << 20, False), ("medium", 160 << 20, True)],
                         ids=["over", "within"])
def test_peak_memory_stays_within_the_budget_and_a_slack(large_files, tmp_path, device, which, limit, fits):
    large, medium, small = large_files
    script = tmp_path / "child.py"
    script.write_text(RSS_CHILD)
    path = large if which == "large" else medium
    done = subprocess.run([sys.executable, str(script), str(path), str(small), str(limit), device],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    print(f"{which} ({path.stat().st_size >> 20} MiB) {device or 'host'}, memory_limit={limit >> 20} MiB: "
          f"peak RSS grew {report['growth'] / (1 << 20):.1f} MiB")
    assert isinstance(report["outcome"], int) == fits, report["outcome"]
    assert report["growth"] <= limit + SLACK


def _huge_page_advice() -> bool:
    from numpy._core.multiarray import _set_madvise_hugepage

    state = _set_madvise_hugepage(False)
    _set_madvise_hugepage(state)
    return bool(state)


@pytest.mark.parametrize("before", [True, False])
def test_limited_reads_allocate_small_pages_and_restore_numpys_advice(before):
    """Huge pages round a span's capacity-sized output up to 2 MiB steps the budget does not count
    (10^9 rows under 4 GiB peaked 0.5 GiB over it): reads under a limit turn numpy's advice off,
    nested or concurrent ones too, and the last one puts back what was there."""
    from numpy._core.multiarray import _set_madvise_hugepage

    from arrow_bridge.reader import small_pages

    previous = _set_madvise_hugepage(before)
    try:
        with small_pages(True):
            assert not _huge_page_advice()
            with small_pages(True):
                assert not _huge_page_advice()
            assert not _huge_page_advice()
        assert _huge_page_advice() is before
        with small_pages(False):
            assert _huge_page_advice() is before
    finally:
        _set_madvise_hugepage(previous)
