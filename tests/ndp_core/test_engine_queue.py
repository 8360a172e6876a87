"""The command engine without apps: streams, READ/WRITE, splitting, queue semantics."""
import gc
import os
import time
import weakref

import numpy as np
import pytest

from ndp_core import MAX_PAGES_PER_COMMAND, Opcode, Status, split_request

TIMEOUT = 20  # seconds; no test may hang
BLOB = (np.arange(10_000) % 251).astype(np.uint8).tobytes()  # 2 full pages + 1808 bytes


def test_read_round_trip_with_short_last_page(engine, stream_of):
    data = BLOB
    s = stream_of(BLOB)
    assert engine.stream_size(s) == 10_000 and engine.stream_pages(s) == 3
    out = np.zeros(3 * 4096, dtype=np.uint8)
    c = engine.wait(engine.submit_read(s, 0, 3, out), timeout=TIMEOUT)
    assert c.ok and c.result_sizes == [10_000] and not c.raw_page
    assert out[:10_000].tobytes() == data and not out[10_000:].any()
    last = np.zeros(2000, dtype=np.uint8)  # only the short page's bytes are needed
    c = engine.wait(engine.submit_read(s, 2, 1, last), timeout=TIMEOUT)
    assert c.result_sizes == [1808] and last[:1808].tobytes() == data[8192:]


def test_read_errors_complete_or_raise(engine, stream_of):
    s = stream_of(BLOB)
    out = np.zeros(4 * 4096, dtype=np.uint8)
    assert engine.wait(engine.submit_read(s, 2, 2, out), timeout=TIMEOUT).status == Status.OUT_OF_RANGE
    assert engine.wait(engine.submit_read(99, 0, 1, out), timeout=TIMEOUT).status == Status.INVALID_STREAM
    with pytest.raises(ValueError):  # destination too small for the pages
        engine.submit_read(s, 0, 2, np.zeros(4096, dtype=np.uint8))
    with pytest.raises(ValueError):
        engine.submit_read(s, 0, 1, np.zeros(1024, dtype=np.int32))


def test_stream_create_surfaces_os_errors(engine, tmp_path, write_file):
    with pytest.raises(FileNotFoundError):
        engine.stream_create(str(tmp_path / "missing.csv"))
    with pytest.raises(IsADirectoryError):
        engine.stream_create(str(tmp_path))
    locked = write_file("locked.csv", b"a\n")
    locked.chmod(0)
    if os.geteuid() != 0:  # root bypasses permission bits
        with pytest.raises(PermissionError):
            engine.stream_create(str(locked))


def test_split_request_counts():
    assert MAX_PAGES_PER_COMMAND == 65_536
    assert split_request(0, 65_536) == [(0, 65_536)]
    assert split_request(5, 65_537) == [(5, 65_536), (65_541, 1)]
    parts = split_request(7, 200_000)
    assert len(parts) == 4 and sum(n for _, n in parts) == 200_000
    assert all(n <= 65_536 for _, n in parts)
    assert all(a + n == b for (a, n), (b, _) in zip(parts, parts[1:]))
    assert split_request(0, 0) == [(0, 0)]
    assert split_request(0, 10, max_pages=3) == [(0, 3), (3, 3), (6, 3), (9, 1)]


def test_split_read_is_gathered_into_one_completion(make_engine, stream_of):
    # One-byte pages make a >65,536-page request out of a 70 kB file.
    data = (np.arange(70_001) % 253).astype(np.uint8)
    eng = make_engine(page_size=1, cores=2)
    s = stream_of(data.tobytes(), "pages.bin", on=eng)
    out = np.zeros(data.size, dtype=np.uint8)
    c = eng.wait(eng.submit_read(s, 0, data.size, out), timeout=TIMEOUT)
    assert c.ok and c.result_sizes == [data.size]
    assert np.array_equal(out, data)
    assert eng.outstanding == 0


def test_write_then_read_back(engine, tmp_path):
    path = tmp_path / "out.bin"
    w = engine.stream_create(str(path), writable=True)
    payload = np.frombuffer(b"hello device\n" * 500, dtype=np.uint8)
    c = engine.wait(engine.submit_write(w, 1, payload), timeout=TIMEOUT)
    assert c.ok and c.result_sizes == [payload.size]
    assert engine.stream_size(w) == 4096 + payload.size
    assert path.read_bytes()[4096:] == payload.tobytes()
    r = engine.stream_create(str(path))
    assert engine.wait(engine.submit_write(r, 0, payload), timeout=TIMEOUT).status == Status.ACCESS_DENIED


def test_wait_poll_and_consumption_rules(engine, stream_of):
    s = stream_of(BLOB)
    out = [np.zeros(4096, dtype=np.uint8) for _ in range(5)]
    ids = [engine.submit_read(s, k % 3, 1, out[k]) for k in range(5)]
    first = engine.wait(ids[0], timeout=TIMEOUT)
    assert first.command_id == ids[0]
    with pytest.raises(KeyError):  # consumed already
        engine.wait(ids[0], timeout=TIMEOUT)
    with pytest.raises(KeyError):
        engine.wait(10**9, timeout=TIMEOUT)
    seen = set()
    deadline = time.monotonic() + TIMEOUT
    while len(seen) < 4 and time.monotonic() < deadline:
        seen |= {c.command_id for c in engine.poll()}  # each completion returned once
        time.sleep(0.001)
    assert seen == set(ids[1:])
    assert engine.outstanding == 0
    assert Opcode.MREAD == 0x81 and Status.OK == 0


def test_submit_after_close_raises(make_engine, stream_of):
    eng = make_engine(page_size=4096, cores=1)
    s = stream_of(BLOB, on=eng)
    eng.close()
    eng.close()  # idempotent
    with pytest.raises(RuntimeError):
        eng.submit_read(s, 0, 1, np.zeros(4096, dtype=np.uint8))


def test_host_buffers_stay_pinned_until_consumed(engine, stream_of):
    data = BLOB
    s = stream_of(BLOB)
    target = bytearray(4096)
    cid = engine.submit_read(s, 0, 1, target)
    with pytest.raises(BufferError):  # the engine holds a view: no resize in flight
        target.extend(b"more")
    engine.wait(cid, timeout=TIMEOUT)
    target.extend(b"more")  # released once consumed
    assert bytes(target[:4096]) == data[:4096]

    out = np.zeros(4096, dtype=np.uint8)
    alive = weakref.ref(out)
    cid = engine.submit_read(s, 1, 1, out)
    del out
    gc.collect()
    assert alive() is not None  # kept by the engine, not by the caller
    engine.wait(cid, timeout=TIMEOUT)
    gc.collect()
    assert alive() is None


def test_engine_parameters_are_checked(make_engine):
    with pytest.raises(ValueError):
        make_engine(page_size=0)
    with pytest.raises(ValueError):
        make_engine(cores=0)
    with pytest.raises(ValueError):
        make_engine(queue_depth=0)
    eng = make_engine(page_size=8192, cores=3, queue_depth=5)
    assert (eng.page_size, eng.cores, eng.queue_depth, eng.outstanding) == (8192, 3, 5, 0)
