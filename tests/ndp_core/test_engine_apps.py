"""StorageApps in the engine: MINIT/MREAD/MDEINIT, statuses, isolation, tasks, concurrency."""
import threading
import time

import numpy as np
import pytest

from ndp_core import Opcode, Status
from ndp_test_apps import probe, sleeper

TIMEOUT = 20  # seconds; no test may hang
TEXT = b"alpha,1\nbeta,2\ngamma,3\n" * 300  # 6900 bytes: 2 pages of 4096, the last short


def mread(engine, inst, stream, first, n, capacity=8192, counters=None):
    out = np.zeros(capacity, dtype=np.uint8)
    counters = np.zeros(2, dtype=np.int64) if counters is None else counters
    c = engine.wait(engine.submit_mread(inst, stream, first, n, [out], counters), timeout=TIMEOUT)
    return c, out, counters


def test_mread_runs_the_app_on_the_pages(engine, stream_of):
    text_stream = stream_of(TEXT, "text.csv")
    inst = engine.minit(probe.address, state_size=8, streams=[text_stream])
    c, out, counters = mread(engine, inst, text_stream, 0, 2)
    assert c.ok and c.app_status == 0 and c.result_sizes == [len(TEXT)]
    assert out[: len(TEXT)].tobytes() == TEXT
    assert counters.tolist() == [TEXT.count(b"\n"), len(TEXT)]
    c, out, counters = mread(engine, inst, text_stream, 1, 1, counters=counters)
    assert c.ok and out[: c.result_sizes[0]].tobytes() == TEXT[4096:]
    assert counters[1] == len(TEXT) + len(TEXT) - 4096  # counters accumulate
    state = engine.mdeinit(inst)
    assert state[0] == 2 and state[1] == Opcode.MREAD and len(state) == 8


def test_bad_input_becomes_an_error_completion(engine, stream_of):
    s = stream_of(b"a\n" * 3000 + b"X" + b"b\n" * 10, "bad.csv")  # the X is at byte 6000 (page 1)
    inst = engine.minit(probe.address, state_size=4, streams=[s])
    c, _, counters = mread(engine, inst, s, 1, 1)
    assert c.status == Status.BAD_INPUT and c.error_offset == 6000 - 4096
    c, _, counters = mread(engine, inst, s, 0, 2)
    assert c.status == Status.BAD_INPUT and c.error_offset == 6000 and not c.ok
    assert counters.tolist() == [0, 0]  # rolled back
    c, _, _ = mread(engine, inst, s, 0, 1)  # the engine carries on
    assert c.ok
    assert engine.mdeinit(inst)[0] == 1  # only the successful call left a trace


def test_status_outside_the_abi_is_an_app_error(engine, stream_of):
    s = stream_of(b"fine\n!\n", "bang.csv")
    inst = engine.minit(probe.address, state_size=4, streams=[s])
    c, _, _ = mread(engine, inst, s, 0, 1)
    assert c.status == Status.APP_ERROR and c.app_status == 42
    assert engine.mdeinit(inst)[0] == 0


def test_claimed_write_past_capacity_is_reported(engine, stream_of):
    s = stream_of(b"what?\n", "liar.csv")
    inst = engine.minit(probe.address, state_size=4, streams=[s])
    c, _, counters = mread(engine, inst, s, 0, 1, capacity=16)
    assert c.status == Status.CAPACITY_EXCEEDED and counters.tolist() == [0, 0]


def test_out_of_space_then_retry_with_more_room(engine, stream_of):
    text_stream = stream_of(TEXT, "text.csv")
    inst = engine.minit(probe.address, state_size=4, streams=[text_stream])
    counters = np.zeros(2, dtype=np.int64)
    c, _, _ = mread(engine, inst, text_stream, 0, 2, capacity=100, counters=counters)
    assert c.status == Status.OUT_OF_SPACE and c.result_sizes == [len(TEXT)]  # size needed
    assert counters.tolist() == [0, 0]  # nothing happened, so a retry is clean
    c, out, _ = mread(engine, inst, text_stream, 0, 2, capacity=c.result_sizes[0], counters=counters)
    assert c.ok and out.tobytes() == TEXT and counters[1] == len(TEXT)
    assert engine.mdeinit(inst)[0] == 1


def test_instances_are_isolated(engine, stream_of):
    sa, sb = stream_of(b"a\n" * 10, "a.csv"), stream_of(b"secret\n" * 10, "b.csv")
    ia = engine.minit(probe.address, state_size=4, streams=[sa])
    ib = engine.minit(probe.address, state_size=4, streams=[sb])
    c, out, counters = mread(engine, ia, sb, 0, 1)
    assert c.status == Status.ACCESS_DENIED and not out.any() and counters.tolist() == [0, 0]
    c, out, _ = mread(engine, ib, sb, 0, 1)
    assert c.ok and out[:7].tobytes() == b"secret\n"
    with pytest.raises(ValueError):  # a stream that does not exist cannot be granted
        engine.minit(probe.address, streams=[12345])
    assert engine.mdeinit(ia)[0] == 0  # A's denied attempt never ran its app
    assert engine.mdeinit(ib)[0] == 1  # and never touched B's state


def test_mdeinit_frees_the_instance(engine, stream_of):
    text_stream = stream_of(TEXT, "text.csv")
    inst = engine.minit(probe.address, state_size=4, streams=[text_stream])
    engine.mdeinit(inst)
    c, out, _ = mread(engine, inst, text_stream, 0, 1)
    assert c.status == Status.INVALID_INSTANCE and not out.any()
    with pytest.raises(RuntimeError, match="INVALID_INSTANCE"):
        engine.mdeinit(inst)
    with pytest.raises(ValueError):
        engine.minit(0)


def test_split_mread_appends_parts_in_order(make_engine, stream_of):
    data = (b"0123456789abcde\n" * 4376)[:70_000]
    eng = make_engine(page_size=1, cores=2)  # 70,000 one-byte pages: two commands
    s = stream_of(data, "pages.csv", on=eng)
    inst = eng.minit(probe.address, state_size=4, streams=[s])
    c, out, counters = mread(eng, inst, s, 0, len(data), capacity=len(data))
    assert c.ok and c.result_sizes == [len(data)] and out.tobytes() == data
    assert counters.tolist() == [data.count(b"\n"), len(data)]
    assert eng.mdeinit(inst)[0] == 2  # the app ran once per part


def test_summarizer_task_commands(engine, stream_of):
    text_stream = stream_of(TEXT, "text.csv")
    inst = engine.minit(probe.address, state_size=4, streams=[text_stream])
    out, counters = np.zeros(8192, dtype=np.uint8), np.zeros(2, dtype=np.int64)

    def task(op, n, **kw):
        cid = engine.submit_task(op, inst, n, **kw)
        return engine.wait(cid, timeout=TIMEOUT)

    read = dict(stream=text_stream, first_page=0, n_pages=2, outputs=[out], counters=counters)
    assert task(Opcode.READ_PROC_TSK, 3, **read).status == Status.TASK_ERROR
    assert task(Opcode.INIT_TSK, 3).ok
    c = task(Opcode.READ_PROC_TSK, 3, **read)
    assert c.ok and c.result_sizes == [len(TEXT)] and counters[1] == len(TEXT)
    assert task(Opcode.READ_FILT_TSK, 3, **read).ok
    assert task(Opcode.FINAL_TSK, 3).ok
    assert task(Opcode.FINAL_TSK, 3).status == Status.TASK_ERROR  # closed
    state = engine.mdeinit(inst)
    assert state[0] == 4 and state[1] == Opcode.FINAL_TSK & 0xFF and state[2] == 3
    with pytest.raises(ValueError):
        engine.submit_task(Opcode.MREAD, inst, 0)


def test_mwrite_stores_the_apps_output(engine, tmp_path):
    path = tmp_path / "written.csv"
    s = engine.stream_create(str(path), writable=True)
    inst = engine.minit(probe.address, state_size=4, streams=[s])
    payload = np.frombuffer(b"x,1\n" * 10, dtype=np.uint8).copy()
    payload[0] = ord("y")  # no "X": the probe copies it through
    out = np.zeros(64, dtype=np.uint8)
    c = engine.wait(engine.submit_mwrite(inst, s, 0, payload, [out]), timeout=TIMEOUT)
    assert c.ok and c.result_sizes == [40]
    assert path.read_bytes() == payload.tobytes()


def test_many_threads_submit_concurrently(make_engine, stream_of):
    n_threads, per_thread = 8, 25  # 200 commands
    results, errors = [], []
    eng = make_engine(page_size=4096, cores=2, queue_depth=4)  # small rings: backpressure
    s = stream_of(TEXT, "text.csv", on=eng)
    insts = [eng.minit(probe.address, state_size=4, streams=[s]) for _ in range(2)]

    def work(t):
        try:
            pending = []
            for k in range(per_thread):
                out = np.zeros(8192, dtype=np.uint8)
                if (t + k) % 2:
                    cid = eng.submit_read(s, 0, 2, out)
                    pending.append((cid, out, None))
                else:
                    counters = np.zeros(2, dtype=np.int64)
                    cid = eng.submit_mread(insts[t % 2], s, 0, 2, [out], counters)
                    pending.append((cid, out, counters))
                if len(pending) == 3:  # keep a few in flight per thread
                    results.append(check(eng.wait(pending[0][0], timeout=TIMEOUT), *pending.pop(0)[1:]))
            for cid, out, counters in pending:
                results.append(check(eng.wait(cid, timeout=TIMEOUT), out, counters))
        except Exception as exc:  # surfaced below
            errors.append(exc)

    def check(c, out, counters):
        assert c.ok and c.result_sizes == [len(TEXT)], c
        assert out[: len(TEXT)].tobytes() == TEXT
        if counters is not None:
            assert counters[1] == len(TEXT)
        return c.command_id

    threads = [threading.Thread(target=work, args=(t,), daemon=True) for t in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "deadlock"
    assert not errors, errors[0]
    assert len(results) == len(set(results)) == n_threads * per_thread
    assert eng.outstanding == 0
    calls = sum(eng.mdeinit(i)[0] for i in insts)
    assert calls == n_threads * per_thread // 2  # every MREAD ran exactly once


def test_apps_run_on_parallel_workers_without_the_gil(make_engine):
    eng = make_engine(page_size=4096, cores=4)
    insts = [eng.minit(sleeper.address, state_size=24) for _ in range(4)]
    ticks = []
    stop = threading.Event()

    def spin():  # runs only if waiting Python threads let go of the GIL
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.001)

    spinner = threading.Thread(target=spin, daemon=True)
    spinner.start()
    cids = [eng.submit_task(Opcode.INIT_TSK, i, 0) for i in insts]  # one 50 ms call each
    for cid in cids:
        assert eng.wait(cid, timeout=TIMEOUT).ok
    stop.set()
    spinner.join(timeout=TIMEOUT)
    started, ended = zip(*(eng.mdeinit(i)[8:24].view(np.int64) for i in insts))
    assert max(started) < min(ended)  # a moment when all four calls were running: in parallel
    assert len(ticks) > 5


def test_wait_times_out_and_can_wait_again(make_engine):
    eng = make_engine(page_size=4096, cores=1)
    inst = eng.minit(sleeper.address)
    cid = eng.submit_task(Opcode.INIT_TSK, inst, 0)
    with pytest.raises(TimeoutError):
        eng.wait(cid, timeout=0.001)
    assert eng.wait(cid, timeout=TIMEOUT).ok
