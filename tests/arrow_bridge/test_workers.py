"""The shared parse threads (arrow_bridge.workers) and small files shared out among them."""
from __future__ import annotations

import multiprocessing

import pyarrow as pa
import pyarrow.csv as pacsv

import arrow_bridge
from arrow_bridge.executors import HostExecutor
from arrow_bridge.workers import THREAD_NAME_PREFIX, on_parse_thread, parse_pool


def _rows(n: int) -> bytes:
    return b"a,b,c\n" + b"".join(b'%d,%d.25,"text %d"\n' % (i, i % 977, i % 13) for i in range(n))


def test_reads_with_one_thread_count_share_one_pool():
    assert parse_pool(3) is parse_pool(3) is not parse_pool(2)
    assert not on_parse_thread() and parse_pool(3).submit(on_parse_thread).result()
    assert parse_pool(3).submit(parse_pool, 3).result() is None  # a parse thread gets no shared pool


def test_reads_started_on_every_parse_thread_finish(write_file):
    """Reads from user callbacks on the parse threads start private pools: the
    shared one is busy running those very callbacks."""
    path = write_file("nested.csv", _rows(60_000))
    expected = pacsv.read_csv(path)
    busy = [parse_pool(2).submit(arrow_bridge.read_csv, path, n_threads=2, block_size=64 << 10)
            for _ in range(2)]
    assert all(future.result(timeout=120).equals(expected) for future in busy)


def _read_in_forked_child(path: str, queue) -> None:
    table = arrow_bridge.read_csv(path, n_threads=2, block_size=64 << 10)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    queue.put(sink.getvalue().to_pybytes())


def test_a_forked_child_starts_its_own_parse_threads(write_file):
    path = write_file("forked.csv", _rows(60_000))
    expected = arrow_bridge.read_csv(path, n_threads=2, block_size=64 << 10)  # the parent's pool is up
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_read_in_forked_child, args=(str(path), queue))
    child.start()
    table = pa.ipc.open_stream(queue.get(timeout=120)).read_all()
    child.join(timeout=60)
    assert child.exitcode == 0 and table.equals(expected)


def test_a_small_file_is_shared_out_among_the_threads(write_file, monkeypatch):
    path = write_file("small.csv", _rows(40_000))  # ~0.9 MB: one default span
    parsed = []
    parse = HostExecutor.parse
    monkeypatch.setattr(HostExecutor, "parse",
                        lambda self, span, plan: parsed.append(span.length) or parse(self, span, plan))
    table = arrow_bridge.read_csv(path, n_threads=2)
    assert table.equals(pacsv.read_csv(path))
    first, *rest = parsed
    assert len(rest) == 2 and max(rest) - min(rest) < 64 << 10, parsed  # the prefix, then two near halves
    parsed.clear()
    assert arrow_bridge.read_csv(path, n_threads=1).equals(table) and len(parsed) == 2  # one thread: one span


def test_parse_threads_are_named_for_the_reader(write_file):
    import threading

    arrow_bridge.read_csv(write_file("named.csv", _rows(60_000)), n_threads=2)
    assert any(t.name.startswith(THREAD_NAME_PREFIX) for t in threading.enumerate())
