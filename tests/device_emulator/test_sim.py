"""The event engine (device_emulator.sim) and the hardware pieces built on it."""
from __future__ import annotations

from device_emulator.flash import FlashArray, pages_per_channel
from device_emulator.host import SubmissionWindow
from device_emulator.sim.events import EventLoop
from device_emulator.profile import load_profile
from device_emulator.sim.process import Delay, StartUse, Until, Use, start
from device_emulator.sim.resources import Gate, Resource
from device_emulator.task_queue import TaskQueue, TryAdmit, WaitAdmit


def test_events_run_in_time_then_scheduling_order():
    loop, seen = EventLoop(), []
    for time, name in [(3.0, "c"), (1.0, "a"), (1.0, "b"), (0.0, "first")]:
        loop.at(time, seen.append, name)
    loop.run()
    assert seen == ["first", "a", "b", "c"] and loop.now == 3.0


def test_resource_is_fifo_over_its_servers_and_books_accounts():
    loop, timeline = EventLoop(), []
    port = Resource(loop, "link", 2, timeline)
    for task, account in enumerate(["link", "p2p", "link"]):
        port.request(task, 1.0, account=account)
    loop.run()
    assert timeline == [("link", 0, 0.0, 1.0), ("p2p", 1, 0.0, 1.0), ("link", 2, 1.0, 2.0)]
    assert port.busy == {"link": 2.0, "p2p": 1.0}


def test_a_closed_gate_holds_its_members_until_it_opens():
    loop, timeline = EventLoop(), []
    gate = Gate()
    channel = Resource(loop, "flash", 1, timeline, gate)
    gate.members = [channel]
    gate.close_one()
    channel.request(0, 1.0)
    loop.at(5.0, gate.open_one)
    loop.run()
    assert timeline == [("flash", 0, 5.0, 6.0)]


def test_process_commands():
    loop = EventLoop()
    a, b = Resource(loop, "a", 1, None), Resource(loop, "b", 1, None)
    log = []

    def process():
        started = yield StartUse(a, 0, 4.0)
        log.append(("started", started, loop.now))
        yield Use(a, 0, 1.0)
        log.append(("used", loop.now))  # a frees at 4 then takes 1 more
        yield Use(b, 0, 0.0)
        yield Until(2.0)  # already past
        yield Delay(0.5)
        log.append(("end", loop.now))

    start(loop, process())
    loop.run()
    assert log == [("started", 0.0, 0.0), ("used", 5.0), ("end", 5.5)]


def test_task_queue_admits_waits_and_stalls_the_intake():
    loop = EventLoop()
    intake = Gate()
    queue = TaskQueue(loop, 1, intake)
    log = []

    def holder():
        yield WaitAdmit(queue)
        log.append(("holder in", loop.now))
        yield Delay(2.0)
        queue.release()

    def waiter():
        admitted = yield TryAdmit(queue)
        log.append(("try", admitted))
        yield WaitAdmit(queue)
        log.append(("waiter in", loop.now, intake.closed))

    start(loop, holder())
    start(loop, waiter())
    loop.at(1.0, lambda: log.append(("intake closed at 1", intake.closed)))
    loop.run()
    assert log == [("holder in", 0.0), ("try", False), ("intake closed at 1", 1), ("waiter in", 2.0, 0)]


def test_pages_stripe_over_channels_and_the_window_bounds_submissions():
    assert pages_per_channel(0, 10, 4) == [3, 3, 2, 2] and pages_per_channel(3, 0, 2) == [0, 0]
    started = []
    window = SubmissionWindow(5, 2, started.append)
    window.fill()
    assert started == [0, 1]
    window.finished()
    window.finished()
    assert started == [0, 1, 2, 3]


def test_a_flash_read_resumes_when_its_last_channel_is_done():
    loop, timeline = EventLoop(), []
    flash = FlashArray(loop, load_profile("modern-gen4", **{"flash.channels": 4}), timeline)
    log = []

    def process():
        yield flash.read(7, 6, 5, 2.0)  # pages 6..10: channels 2, 3, 0, 1, 2
        log.append(loop.now)

    start(loop, process())
    loop.run()
    assert log == [4.0] and flash.busy_s() == 10.0
    assert sorted(timeline) == [("flash", 7, 0.0, 2.0)] * 3 + [("flash", 7, 0.0, 4.0)]
