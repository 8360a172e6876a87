"""Many reads at once: threads sharing one emulated SSD or each with its own, and
processes (fork and spawn) loading the kernels from Numba's cache together, give
the Tables serial reads give."""
from __future__ import annotations

import multiprocessing
import threading
from concurrent.futures import ThreadPoolExecutor, as_completed

import pytest

import arrow_bridge
from device_emulator import ComputationalSSD, FaultPlan

THREADS = 16


def _mixed_files(folder) -> list[str]:
    """Three files of different shapes: mixed types with quoted line breaks, ints, floats."""
    mixed = folder / "mixed.csv"
    mixed.write_text("id,price,flag,day,note\n" + "".join(
        f"{i},{i * 1.25:.2f},{'true' if i % 3 else 'false'},2020-01-{1 + i % 28:02d},"
        + (f'"multi\nline {i}"' if i % 97 == 0 else f"n{i % 13}") + "\n" for i in range(4000)))
    ints = folder / "ints.csv"
    ints.write_text("src,dst\n" + "".join(f"{i * 7919 % 100003},{i}\n" for i in range(20000)))
    floats = folder / "floats.csv"
    floats.write_text("x,y\n" + "".join(f"{i / 7:.17g},{-i * 1e-3:.6e}\n" for i in range(10000)))
    return [str(mixed), str(ints), str(floats)]


# Each job: (file index, reader keywords); device jobs name the device they use.
JOBS = [(f, kw) for f in range(3) for kw in (
    {"block_size": 4096}, {"block_size": 1 << 16, "n_threads": 2},
    {"device": "shared", "split": "device", "block_size": 8192},
    {"device": "shared", "split": "dynamic", "block_size": 4096},
    {"device": "own", "split": "static:0.5", "block_size": 8192},
    {"device": "faulty", "split": "device", "block_size": 4096})]


def test_sixteen_threads_of_mixed_reads_give_the_serial_tables(tmp_path):
    # Pools other tests in this process left (Dask's threaded scheduler keeps one for good) are not ours
    before = set(threading.enumerate())
    files = _mixed_files(tmp_path)
    expected = [arrow_bridge.read_csv(path) for path in files]
    shared = ComputationalSSD("modern-gen4", workers=2)
    faulty = ComputationalSSD("summarizer-board", workers=2,
                              faults=FaultPlan(media_error=0.2, app_failure=0.1, link_timeout=0.1, seed=3))

    def run(job: int):
        index, kwargs = JOBS[job % len(JOBS)]
        kwargs = dict(kwargs)
        name = kwargs.pop("device", None)
        if name == "own":  # one device per thread, closed after its read
            with ComputationalSSD("morpheus-isca16", workers=1) as own:
                return index, arrow_bridge.read_csv(files[index], device=own, **kwargs)
        device = {"shared": shared, "faulty": faulty, None: None}[name]
        return index, arrow_bridge.read_csv(files[index], device=device, **kwargs)

    try:
        with ThreadPoolExecutor(THREADS) as pool:
            futures = [pool.submit(run, job) for job in range(3 * len(JOBS))]
            for future in as_completed(futures):
                index, table = future.result()
                assert table.equals(expected[index])
    finally:
        shared.close()
        faulty.close()
    assert not [t for t in threading.enumerate() if t.name.startswith("ThreadPoolExecutor") and t not in before]


def _read_in_child(path: str, queue) -> None:
    """A child process: a host read and a device read of ``path``, their tables back as IPC bytes."""
    import pyarrow as pa

    with ComputationalSSD("modern-gen4", workers=1) as ssd:
        tables = [arrow_bridge.read_csv(path), arrow_bridge.read_csv(path, device=ssd, split="dynamic",
                                                                     block_size=4096)]
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, tables[0].schema) as writer:
        for table in tables:
            writer.write_table(table)
    queue.put(sink.getvalue().to_pybytes())


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_processes_loading_the_kernel_cache_at_once_read_the_same(tmp_path, method):
    import pyarrow as pa

    path = _mixed_files(tmp_path)[0]
    expected = arrow_bridge.read_csv(path)
    context = multiprocessing.get_context(method)
    queue = context.Queue()
    children = [context.Process(target=_read_in_child, args=(path, queue)) for _ in range(3)]
    for child in children:
        child.start()
    results = [queue.get(timeout=120) for _ in children]
    for child in children:
        child.join(timeout=60)
        assert child.exitcode == 0
    for payload in results:
        tables = pa.ipc.open_stream(payload).read_all()
        assert tables.num_rows == 2 * expected.num_rows
        assert tables.slice(0, expected.num_rows).equals(expected)
        assert tables.slice(expected.num_rows).equals(expected)
