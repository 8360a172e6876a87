"""Nullable ports: values and a validity byte per value between SSDlets, Arrow
bitmaps at the host's end, the same answer on every placement, checked types."""
import itertools

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from ndp_core.ssdlets import Application, GraphError, Nullable, SSDletError, ssdlet
from ndp_core.ssdlets.examples import keep_above
from ssdlet_programs import (bytes_under_a_null_string, count_past_capacity, junk_under_nulls, null_below,
                             null_lengths, validity_of_two)

RNG = np.random.default_rng(5)
VALUES = pa.array(RNG.normal(size=3000), mask=RNG.random(3000) < 0.2)
WORDS = pa.array([None if i % 7 == 3 else "é" * (i % 5) + str(i) for i in range(2000)])


@pytest.mark.parametrize("on", ["device", "host"])
@pytest.mark.parametrize("packet_rows", [1, 999, 65536])
def test_nulls_flow_through_a_program_as_pyarrow_would_give_them(ssd, on, packet_rows):
    app = Application(ssd, packet_rows=packet_rows)
    node = app.add(null_below, on=on, floor=-0.5)
    app.feed(node.x, VALUES)
    app.collect(node.y)
    result = app.run()
    got = result["null_below.y"]
    expected = pc.if_else(pc.greater_equal(VALUES, -0.5), VALUES, pa.scalar(None, pa.float64()))
    assert got.type == pa.float64() and got.equals(expected) and got.null_count > VALUES.null_count
    assert result.work[0].counters == {"values": len(VALUES)}


@pytest.mark.parametrize("sides", list(itertools.product(["device", "host"], repeat=2)))
def test_nullable_strings_between_programs_the_same_on_every_placement(ssd, sides):
    app = Application(ssd, packet_rows=300, queue_depth=2)
    measure = app.add(null_lengths, on=sides[0])
    keep = app.add(null_below, on=sides[1], floor=3.0)
    app.feed(measure.s, WORDS)
    to_double = app.add(int_to_double, on=sides[1])
    app.connect(measure.n, to_double.x)
    app.connect(to_double.y, keep.x)
    app.collect(keep.y)
    got = app.run()["null_below.y"]
    lengths = pc.cast(pc.binary_length(WORDS), pa.float64())
    assert got.equals(pc.if_else(pc.greater_equal(lengths, 3.0), lengths, pa.scalar(None, pa.float64())))


@ssdlet(inputs={"x": Nullable(pa.int64())}, outputs={"y": Nullable(pa.float64())})
def int_to_double(p):
    for i in range(p.x.valid.size):
        p.y.values[i] = p.x.values[i]
        p.y.valid[i] = p.x.valid[i]
    return p.x.valid.size


def test_nullable_and_not_nullable_ports_do_not_connect(ssd):
    app = Application(ssd)
    nullable = app.add(null_lengths)
    plain = app.add(keep_above, floor=0)
    with pytest.raises(GraphError, match=r"cannot connect null_lengths.n .int64\?. to keep_above.x .int64."):
        app.connect(nullable.n, plain.x)
    with pytest.raises(ValueError, match="takes no nulls; 1 found"):
        app.feed(plain.x, pa.array([1, None]))
    with pytest.raises(TypeError, match="state is fixed-width and not null"):
        ssdlet(state={"acc": Nullable(pa.int64())})(lambda p: 0)
    with pytest.raises(TypeError, match="only Arrow-typed ports may hold nulls"):
        Nullable(np.dtype([("a", np.int32)]))


def test_validity_other_than_zero_or_one_is_a_clear_error(ssd):
    app = Application(ssd)
    bad = app.add(validity_of_two, on="device")
    app.feed(bad.x, pa.array([1, None, 3]))
    app.collect(bad.y)
    with pytest.raises(SSDletError, match="output y: validity must be one byte .0 or 1. per value written"):
        app.run()


def test_a_null_reads_as_zero_downstream_whatever_its_producer_left(ssd):
    app = Application(ssd, packet_rows=2)
    junk = app.add(junk_under_nulls, on="device")
    add = app.add(null_below, floor=-1e300)
    to_double = app.add(int_to_double)
    app.feed(junk.x, pa.array([1, None, 3]))
    app.connect(junk.y, to_double.x)
    app.connect(to_double.y, add.x)
    app.collect(add.y)
    got = app.run()["null_below.y"]
    assert got.to_pylist() == [12345.0, None, 12345.0]
    assert np.frombuffer(got.buffers()[1], np.float64)[1] == 0.0  # the null's slot: zero, not 12345


@pytest.mark.parametrize("program, problem", [
    (count_past_capacity, "returned a count larger than an output's capacity"),
    (bytes_under_a_null_string, "a null string must be empty"),
])
def test_counts_and_null_strings_a_program_got_wrong_are_clear_errors(ssd, program, problem):
    app = Application(ssd)
    node = app.add(program, on="device")
    app.feed(node.x, pa.array([1, 2], pa.int64()))
    app.collect(getattr(node, next(iter(program.outputs))))
    with pytest.raises(SSDletError, match=problem):
        app.run()


def test_host_values_for_a_nullable_port_are_checked_like_a_plain_ports(ssd):
    app = Application(ssd)
    node = app.add(null_lengths)
    plain = app.add(int_to_double)
    with pytest.raises(TypeError, match=r"takes int64\? \(int64\), got an array of int32"):
        app.feed(plain.x, np.array([1, 2], np.int32))
    with pytest.raises(TypeError, match=r"input .*takes string\?"):
        app.feed(node.s, [1.5])
