"""String ports: Arrow's offsets + bytes between SSDlets, the same answer on every placement,
checked types, and a clear error for offsets a program got wrong."""
import itertools

import pyarrow as pa
import pytest

from ndp_core.ssdlets import Application, GraphError, SSDletError
from ndp_core.ssdlets.examples import keep_above
from ssdlet_programs import decreasing_offsets, lengths, starting_with

WORDS = [f"{'aé'[i % 2]}{'x' * (i % 13)}{i}" if i % 3 else f"b{i}" for i in range(5000)] + ["", "a"]


@pytest.mark.parametrize("sides", list(itertools.product(["device", "host"], repeat=2)))
@pytest.mark.parametrize("packet_rows", [1, 700, 65536])
def test_strings_flow_between_programs_the_same_on_every_placement(ssd, sides, packet_rows):
    app = Application(ssd, packet_rows=packet_rows, queue_depth=2)
    keep = app.add(starting_with, on=sides[0], first=ord("a"))
    measure = app.add(lengths, on=sides[1])
    app.feed(keep.s, pa.array(WORDS))
    app.connect(keep.kept, measure.s)
    app.collect(measure.n)
    result = app.run()
    expected = [w for w in WORDS if w.startswith("a")]
    assert result["lengths.n"].to_pylist() == [len(w.encode()) for w in expected]
    work = {w.node: w for w in result.work}
    assert work["starting_with"].counters == {"strings": len(WORDS)}
    crossing = sides[0] != sides[1]
    assert (work["lengths"].link_bytes > 0) == (crossing or sides[1] == "device")


@pytest.mark.parametrize("on", ["device", "host"])
def test_collected_strings_come_back_as_an_arrow_string_array(ssd, on):
    app = Application(ssd, packet_rows=333)
    keep = app.add(starting_with, on=on, first=ord("b"))
    app.feed(keep.s, WORDS)
    app.collect(keep.kept)
    got = app.run()["starting_with.kept"]
    assert got.type == pa.string() and got.equals(pa.array([w for w in WORDS if w.startswith("b")]))


def test_a_string_port_connects_only_to_a_string_port(ssd):
    app = Application(ssd)
    keep = app.add(starting_with, first=1)
    numbers = app.add(keep_above, floor=0)
    with pytest.raises(GraphError, match="cannot connect starting_with.kept .string. to keep_above.x .int64."):
        app.connect(keep.kept, numbers.x)
    with pytest.raises(TypeError, match="takes string, got an Arrow array of int64"):
        app.feed(keep.s, pa.array([1, 2]))


def test_offsets_a_program_got_wrong_are_a_clear_error(ssd):
    app = Application(ssd)
    bad = app.add(decreasing_offsets, on="device")
    app.feed(bad.s, ["abc", "d"])
    app.collect(bad.t)
    with pytest.raises(SSDletError, match="output t: offsets must not decrease"):
        app.run()
