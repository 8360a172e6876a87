"""Command parameters, MINIT's initial state and injected faults."""
import numpy as np
import pytest

from ndp_core import Opcode, Status
from ndp_core.device import FAULT_APP, FAULT_MEDIA, FAULT_TIMEOUT, FAULT_TQ_OVERFLOW
from ndp_test_apps import echo

TIMEOUT = 20
PAGES = bytes(range(256)) * 40  # 10240 bytes: 3 pages


def test_minit_init_bytes_become_the_state_and_args_reach_the_app(engine, stream_of):
    stream = stream_of(PAGES)
    inst = engine.minit(echo.address, init=np.frombuffer(b"plan", np.uint8), streams=[stream])
    out = np.zeros(64, dtype=np.uint8)
    done = engine.wait(engine.submit_mread(inst, stream, 0, 1, [out], None, [7, -1, 1 << 40]), timeout=TIMEOUT)
    assert done.ok and done.result_sizes == [4 + 24]
    assert out[:4].tobytes() == b"plan"
    assert out[4:28].view(np.int64).tolist() == [7, -1, 1 << 40]
    assert engine.mdeinit(inst).tobytes() == b"plan"


def test_init_longer_than_state_size_grows_the_state(engine, stream_of):
    stream = stream_of(PAGES)
    inst = engine.minit(echo.address, state_size=2, init=np.frombuffer(b"abcdef", np.uint8), streams=[stream])
    assert engine.mdeinit(inst).tobytes() == b"abcdef"


@pytest.mark.parametrize("fault, status, raw", [
    (FAULT_MEDIA, "IO_ERROR", False),
    (FAULT_APP, "APP_ERROR", False),
    (FAULT_TIMEOUT, "TIMEOUT", False),
    (FAULT_TQ_OVERFLOW, "RETURNED_RAW", True),
])
def test_injected_faults_complete_as_the_hardware_would(engine, stream_of, fault, status, raw):
    stream = stream_of(PAGES)
    inst = engine.minit(echo.address, state_size=8, streams=[stream])
    out = np.full(64, 9, dtype=np.uint8)
    counters = np.array([5], dtype=np.int64)
    done = engine.wait(engine.submit_mread(inst, stream, 0, 2, [out], counters, [1], fault), timeout=TIMEOUT)
    assert done.status_name == status and done.raw_page == raw
    assert (out == 9).all() and counters.tolist() == [5]  # the app never ran
    # The instance is unharmed: the next command runs normally.
    assert engine.wait(engine.submit_mread(inst, stream, 0, 1, [out], counters, [1]), timeout=TIMEOUT).ok
    engine.mdeinit(inst)


def test_a_fault_in_one_part_of_a_split_task_read_aborts_the_rest(engine, stream_of):
    stream = stream_of(PAGES)
    inst = engine.minit(echo.address, streams=[stream])
    assert engine.wait(engine.submit_task(Opcode.INIT_TSK, inst, 3), timeout=TIMEOUT).ok
    out = np.zeros(64, dtype=np.uint8)
    done = engine.wait(engine.submit_task(Opcode.READ_PROC_TSK, inst, 3, stream, 0, 2, [out], None, [], FAULT_MEDIA),
                       timeout=TIMEOUT)
    assert done.status == Status.IO_ERROR
    assert engine.wait(engine.submit_task(Opcode.FINAL_TSK, inst, 3), timeout=TIMEOUT).ok
    engine.mdeinit(inst)
