"""Nullable ports: values and a validity byte per value between SSDlets, Arrow
bitmaps at the host's end, the same answer on every placement, checked types."""
import itertools

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from ndp_core.ssdlets import Application, GraphError, Nullable, SSDletError, ssdlet
from ndp_core.ssdlets.examples import keep_above
from ssdlet_programs import null_below, null_lengths, validity_of_two

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
