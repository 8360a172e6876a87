"""Ctrl-C and the engine.

* ``Engine.wait`` on the main thread lets a KeyboardInterrupt through while a
  long command runs; the command stays in flight, and waiting again consumes it.
* ``raise_keyboard_interrupt_after``: a generator that C code pulls from ends
  quietly on Ctrl-C and its consumer gets the KeyboardInterrupt as the C call
  returns.

Real SIGINTs go to a child process: a KeyboardInterrupt that reached the test
runner would stop it. The one time bound here is the feature's own (Ctrl-C
answered while the command still runs), checked generously.
"""
from __future__ import annotations

import sys

import pytest

from ndp_core.engine import raise_keyboard_interrupt_after

CHILD = r"""
import ctypes, json, sys, time
from ndp_core import Engine
from ndp_core.engine import storage_app

usleep = ctypes.CDLL(None).usleep
usleep.argtypes, usleep.restype = [ctypes.c_uint], ctypes.c_int


@storage_app
def slow(call):  # 3 s in 10 ms sleeps: a signal landing on the engine's worker cuts one short at most
    for _ in range(300):
        usleep(10_000)
    return 0


engine = Engine(page_size=4096, cores=1)
stream = engine.stream_create(sys.argv[1])
inst = engine.minit(slow.address, streams=[stream])
cid = engine.submit_mread(inst, stream, 0, 1)
print("waiting", flush=True)
try:
    engine.wait(cid)
    outcome = "completed"
except KeyboardInterrupt:
    outcome = "KeyboardInterrupt"
caught = time.monotonic()
in_flight = engine.outstanding
done = engine.wait(cid)
print(json.dumps({"outcome": outcome, "caught": caught, "in_flight": in_flight, "status": done.status_name,
                  "left": engine.outstanding}), flush=True)
engine.mdeinit(inst)
engine.stream_close(stream)
engine.close()
"""


def test_ctrl_c_interrupts_a_wait_not_the_command(tmp_path, interrupted_child):
    data = tmp_path / "page.bin"
    data.write_bytes(b"x" * 4096)
    report, sent = interrupted_child(CHILD, [data], "waiting", after=0.3, timeout=60)  # the 3 s command runs
    delay = report["caught"] - sent
    print(f"KeyboardInterrupt {delay * 1000:.1f} ms after SIGINT")
    assert report["outcome"] == "KeyboardInterrupt"
    assert report["in_flight"] == 1  # raised while the command still ran: it was not waited out
    assert delay < 2.0  # the feature itself (a 20 ms slice), bounded generously for a loaded machine
    assert report["status"] == "OK" and report["left"] == 0  # waiting again consumed it


def test_a_generator_pulled_by_c_code_hands_ctrl_c_to_its_consumer():
    seen = []

    def batches():
        yield 1
        try:
            raise KeyboardInterrupt  # as if Ctrl-C came while it waited for the next item
        except KeyboardInterrupt:
            raise_keyboard_interrupt_after(sys._getframe())
            seen.append("the generator ends quietly")  # its own code does not get it back

    with pytest.raises(KeyboardInterrupt) as raised:
        list(batches())  # C code pulling the generator
    assert seen == ["the generator ends quietly"]
    assert raised.value.__context__ is None  # not raised inside the generator's or the caller's handling
    assert list(iter([1, 2])) == [1, 2]  # one KeyboardInterrupt only


def test_raise_keyboard_interrupt_after_wants_a_frame():
    with pytest.raises(TypeError, match="frame"):
        raise_keyboard_interrupt_after(object())
