"""Ctrl-C during Application.run: KeyboardInterrupt, no command left in the device's engine,
every instance freed (the next run on the same device works).

The run happens in a child process that gets a real SIGINT (a KeyboardInterrupt reaching the
test runner would stop it), as in tests/arrow_bridge/test_interrupt.py."""
from __future__ import annotations

from pathlib import Path

CHILD = r"""
import json, sys, time
from device_emulator import ComputationalSSD

big, small, sides, tests = sys.argv[1], sys.argv[2], sys.argv[3].split(","), sys.argv[4]
sys.path.insert(0, tests)
from ssdlet_programs import pipeline


def run(ssd, path):
    result = pipeline(ssd, path, sides, floor=-1, pages_per_packet=1, queue_depth=1)
    return result["total.count"].to_pylist()[0]


with ComputationalSSD("biscuit-pm", workers=2) as ssd:
    run(ssd, small)  # compiled and installed once: the run below is a long one like any other
    print("running", flush=True)
    try:
        run(ssd, big)
        outcome = "finished before SIGINT"
    except KeyboardInterrupt:
        outcome = "KeyboardInterrupt"
    caught = time.monotonic()
    report = dict(outcome=outcome, caught=caught, outstanding=ssd.engine.outstanding, next_run=run(ssd, small))
print(json.dumps(report), flush=True)
"""


def test_ctrl_c_stops_an_application_and_frees_its_instances(tmp_path, interrupted_child):
    line = b"".join(b"%d\n" % (i * 7919 % 10**9) for i in range(10_000))
    big, small = tmp_path / "big.txt", tmp_path / "small.txt"
    big.write_bytes(line * 2000)  # ~200 MB in 4 KiB packets: seconds of rounds
    small.write_bytes(line)
    report, sent = interrupted_child(CHILD, [big, small, "device,device,host", Path(__file__).parent], "running",
                                     after=0.5)
    assert report["outcome"] == "KeyboardInterrupt"
    assert report["caught"] - sent < 2.0
    assert report["outstanding"] == 0
    assert report["next_run"] == 10_000  # instances freed: the same device runs the graph again
