"""The shared parse threads (arrow_bridge.workers) and small files shared out among them."""
from __future__ import annotations

import multiprocessing
import threading

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


def test_reads_nested_two_deep_in_parse_threads_finish(write_file, monkeypatch):
    """A parse that reads another file, on a private pool's thread too: that read
    gets a private pool of its own, not the shared one its callers wait on."""
    path = write_file("nested2.csv", _rows(20_000))
    parse, lock, nested = HostExecutor.parse, threading.Lock(), []

    def parse_and_read(self, span, plan):
        with lock:
            go = on_parse_thread() and len(nested) < 6
            nested.append(go)
        if go:
            nested_table = arrow_bridge.read_csv(path, n_threads=2, block_size=64 << 10)
            assert nested_table.num_rows == 20_000
        return parse(self, span, plan)

    monkeypatch.setattr(HostExecutor, "parse", parse_and_read)
    busy = [parse_pool(2).submit(arrow_bridge.read_csv, path, n_threads=2, block_size=64 << 10)
            for _ in range(2)]
    assert all(future.result(timeout=120).num_rows == 20_000 for future in busy)
    assert sum(nested) == 6


def test_parse_threads_keep_no_workspace_past_the_cap(write_file, monkeypatch):
    from arrow_bridge import fast_path
    from arrow_bridge.executors import host

    monkeypatch.setattr(host, "WORKSPACE_KEEP_BYTES", 1 << 20)
    monkeypatch.setattr(fast_path, "WORKSPACE_KEEP_BYTES", 1 << 20)
    path = write_file("big-spans.csv", _rows(200_000))
    expected = pacsv.read_csv(path)
    kept = []

    def kept_bytes() -> int:
        held = [getattr(host._thread_workspace, name, None) for name in ("row_starts", "ends", "flags", "scratch")]
        held.append(getattr(fast_path._workspace, "data", None))
        return sum(a.nbytes for a in held if a is not None)

    threads = 7  # a pool no other test uses: its threads hold nothing yet
    for escapechar in (None, "\\"):  # the fused path, and the general path
        table = arrow_bridge.read_csv(path, n_threads=threads, block_size=4 << 20, escapechar=escapechar)
        assert table.equals(expected)
        kept += [parse_pool(threads).submit(kept_bytes).result() for _ in range(4 * threads)]
    assert max(kept) <= 2 << 20, kept


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
    arrow_bridge.read_csv(write_file("named.csv", _rows(60_000)), n_threads=2)
    assert any(t.name.startswith(THREAD_NAME_PREFIX) for t in threading.enumerate())


def test_many_threads_cut_a_larger_file_in_larger_spans(write_file, monkeypatch):
    from arrow_bridge import options, reader

    monkeypatch.setattr(options, "DEFAULT_BLOCK_SIZE", 32 << 10)  # scaled down: 2 MiB -> 32 KiB
    monkeypatch.setattr(reader, "LARGEST_AUTO_SPAN_BYTES", 128 << 10)  # 8 MiB -> 128 KiB
    path = write_file("larger.csv", _rows(200_000))  # ~4.8 MB
    size = path.stat().st_size
    parsed = []
    parse = HostExecutor.parse
    monkeypatch.setattr(HostExecutor, "parse",
                        lambda self, span, plan: parsed.append(span.length) or parse(self, span, plan))
    table = arrow_bridge.read_csv(path, n_threads=reader.MANY_THREADS)
    assert table.equals(pacsv.read_csv(path))
    even = size // (reader.MANY_THREADS * reader.SPANS_PER_THREAD)  # ~75 KB: each thread gets eight
    spans = parsed[1:-1]  # between the prefix and the file's last span
    assert all(abs(n - even) < 1024 for n in spans) and len(spans) >= 60, parsed
    parsed.clear()
    assert arrow_bridge.read_csv(path, n_threads=2).equals(table)  # few threads: the default
    assert all(abs(n - (32 << 10)) < 1024 for n in parsed[1:-1]), parsed
    parsed.clear()
    assert arrow_bridge.read_csv(path, n_threads=reader.MANY_THREADS, nrows=10).num_rows == 10
    assert max(parsed) <= 32 << 10, parsed  # a few rows wanted: spans no larger than the default
