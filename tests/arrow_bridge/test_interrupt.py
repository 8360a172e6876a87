"""Ctrl-C during a long read: a KeyboardInterrupt comes at once (once the spans
being parsed are done), no reader or engine thread is left but the shared parse
threads (idle, as between any two reads), a device's engine keeps no command,
and the next read in the same process works.

Each read runs in a child process that gets a real SIGINT while it reads a
file large enough to take seconds (a KeyboardInterrupt reaching the test
runner would stop it). The only time bound is the feature's own, checked
generously (2 s; the delays measured here were tens of milliseconds).
"""
from __future__ import annotations

import pytest

# Reads ``path`` with the mode's call until SIGINT, then reports how it ended.
CHILD = r"""
import json, os, sys, threading, time
import pyarrow.csv as pacsv
import arrow_bridge
from device_emulator import ComputationalSSD

mode, path, small = sys.argv[1:4]
ssd = ComputationalSSD("modern-gen4") if mode == "device-object" else None
keywords = {
    "host-2": dict(n_threads=2), "host-4": dict(n_threads=4), "open_csv": dict(n_threads=2),
    "device-dynamic": dict(device="modern-gen4", split="dynamic", n_threads=2),
    "device-object": dict(device=ssd, split="dynamic", n_threads=1),
}[mode]


def read(source):
    if mode == "open_csv":
        with arrow_bridge.open_csv(source, **keywords) as reader:
            return sum(batch.num_rows for batch in reader)
    return arrow_bridge.read_csv(source, **keywords).num_rows


def os_threads(at_most=None):
    # A joined thread's OS thread may take a moment to go: give it up to 2 s.
    for _ in range(200):
        count = len(os.listdir("/proc/self/task"))
        if at_most is None or count <= at_most:
            break
        time.sleep(0.01)
    return count


read(small)  # kernels loaded, a device's app compiled: the read below is a long one like any other
threads, tasks = {t.name for t in threading.enumerate()}, os_threads()
print("reading", flush=True)
try:
    read(path)
    outcome = "finished before SIGINT"
except KeyboardInterrupt:
    outcome = "KeyboardInterrupt"
except BaseException as error:
    outcome = repr(error)
caught = time.monotonic()
# The shared parse threads stay between reads (arrow_bridge.workers): only they may be new.
kept = {t.name for t in threading.enumerate() if t.name.startswith("ndp-parse")} - threads
report = dict(outcome=outcome, caught=caught,
              new_threads=sorted({t.name for t in threading.enumerate()} - threads - kept),
              new_os_threads=os_threads(at_most=tasks + len(kept)) - tasks - len(kept),
              outstanding=ssd.engine.outstanding if ssd is not None else 0,
              next_read=arrow_bridge.read_csv(small, **keywords).equals(pacsv.read_csv(small)))
print(json.dumps(report), flush=True)
"""

MODES = ["host-2", "host-4", "open_csv", "device-dynamic", "device-object"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A CSV file of 800 MB (ints, floats, quoted strings with a delimiter; seconds to read here)
    and its first 2 MB: written fast, as one block of rows repeated."""
    folder = tmp_path_factory.mktemp("interrupt")
    rows = b"".join(b'%d,%d.%03d,"name %d, x",%d\n' % (i * 7919 % 10**9, i % 1000, i % 997, i % 977, i)
                    for i in range(20000))
    big, small = folder / "big.csv", folder / "small.csv"
    with open(big, "wb") as out:
        out.write(b"a,b,c,d\n")
        for _ in range((800 << 20) // len(rows)):
            out.write(rows)
    small.write_bytes(b"a,b,c,d\n" + rows * ((2 << 20) // len(rows)))
    return big, small


@pytest.mark.parametrize("mode", MODES)
def test_ctrl_c_stops_a_read_at_once_and_leaves_nothing_behind(mode, files, interrupted_child):
    big, small = files
    report, sent = interrupted_child(CHILD, [mode, big, small], "reading", after=0.5)  # well into the read
    delay = report["caught"] - sent
    print(f"{mode}: KeyboardInterrupt {delay * 1000:.0f} ms after SIGINT")
    assert report["outcome"] == "KeyboardInterrupt"
    assert delay < 2.0  # the feature's own bound (the issue asks for 0.5 s), generous for a loaded machine
    assert report["new_threads"] == []  # the reader's private pools (the shared parse threads stay)
    assert report["new_os_threads"] <= 0  # the engine's workers too (a library's own may end meanwhile)
    assert report["outstanding"] == 0  # the device's engine keeps no command of the read
    assert report["next_read"]  # the same process reads again, equal to pyarrow
