"""SSDlets: same results on every placement, checked graphs, isolated and stopped instances."""
import itertools
import pickle

import numpy as np
import pyarrow as pa
import pytest

from ndp_core.ssdlets import Application, GraphError, SSDletError

from ndp_core.ssdlets.examples import keep_above, total
from ssdlet_programs import (claims_too_much, many_counters, never_ends, no_negatives, pipeline, scale,
                             scribbles_on_its_input, writes_too_far)

NUMBERS = np.random.default_rng(7).integers(0, 10**12, 20_000)


@pytest.fixture(scope="module")
def numbers_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("ssdlets") / "numbers.txt"
    path.write_text("".join(f"{v}\n" for v in NUMBERS))
    return path


@pytest.mark.parametrize("sides", list(itertools.product(["device", "host"], repeat=3)))
def test_a_pipeline_gives_the_same_answer_wherever_each_node_runs(ssd, numbers_file, sides):
    kept = NUMBERS[NUMBERS > 5 * 10**11]
    result = pipeline(ssd, numbers_file, sides, pages_per_packet=3)
    assert result["total.total"].to_pylist() == [int(kept.sum())]
    assert result["total.count"].to_pylist() == [len(kept)]
    work = {w.node: w for w in result.work}
    assert work["parse_lines"].counters == {"bytes": numbers_file.stat().st_size, "parsed": len(NUMBERS)}
    assert work["keep_above"].counters == {"tested": len(NUMBERS)}


@pytest.mark.parametrize("options", [dict(pages_per_packet=1, packet_rows=1, queue_depth=1),
                                     dict(pages_per_packet=7, packet_rows=100, queue_depth=2),
                                     dict(pages_per_packet=1000, queue_depth=8)])
def test_packet_sizes_and_queue_depths_do_not_change_the_answer(ssd, numbers_file, options):
    result = pipeline(ssd, numbers_file, ("device", "device", "host"), **options)
    assert result["total.count"].to_pylist() == [int((NUMBERS > 5 * 10**11).sum())]


def fan_out_fan_in(ssd, on, **options):
    """feed -> keep_above -> {scale a, scale b} (SPMC) -> collected; and
    {keep_above, keep_above} -> total (MPSC)."""
    app = Application(ssd, **options)
    source = app.add(keep_above, on=on, floor=-1, name="source")
    a = app.add(scale, on=on, factor=2.0, name="a")
    b = app.add(scale, on=on, factor=2.0, name="b")
    app.feed(source.x, pa.array(NUMBERS))
    app.connect(source.y, a.x)
    app.connect(source.y, b.x)
    app.collect(a.y)
    app.collect(b.y)
    return app.run()


@pytest.mark.parametrize("on", ["device", "host"])
def test_fan_out_deals_packets_in_turn(ssd, on):
    result = fan_out_fan_in(ssd, on, packet_rows=1000)
    a, b = result["a.y"].to_numpy(), result["b.y"].to_numpy()
    packets = NUMBERS.reshape(-1, 1000) * 2.0
    np.testing.assert_array_equal(a, packets[0::2].ravel())
    np.testing.assert_array_equal(b, packets[1::2].ravel())


def test_fan_in_takes_packets_in_turn(ssd):
    app = Application(ssd, packet_rows=500)
    left = app.add(keep_above, floor=-1, name="left")
    right = app.add(keep_above, floor=-1, name="right")
    merged = app.add(keep_above, floor=-1, name="merged")
    app.feed(left.x, pa.array(NUMBERS[:2000]))
    app.feed(right.x, pa.array(NUMBERS[2000:3000]))
    app.connect(left.y, merged.x)
    app.connect(right.y, merged.x)
    app.collect(merged.y)
    out = app.run()["merged.y"].to_numpy()
    l, r = NUMBERS[:2000].reshape(-1, 500), NUMBERS[2000:3000].reshape(-1, 500)
    expected = np.concatenate([l[0], r[0], l[1], r[1], l[2], l[3]])
    np.testing.assert_array_equal(out, expected)


def test_ports_connect_only_with_identical_types(ssd):
    app = Application(ssd)
    a, b = app.add(scale, factor=1.0), app.add(keep_above, floor=0)
    with pytest.raises(GraphError, match=r"cannot connect scale.y \(double\) to keep_above.x \(int64\)"):
        app.connect(a.y, b.x)


def test_a_port_crossing_sides_is_single_producer_single_consumer(ssd):
    app = Application(ssd)
    source = app.add(keep_above, on="device", floor=0)
    near, far = app.add(keep_above, on="device", floor=0), app.add(keep_above, on="host", floor=0)
    app.connect(source.y, near.x)
    with pytest.raises(GraphError, match="single-producer, single-consumer"):
        app.connect(source.y, far.x)


@pytest.mark.parametrize("mistake, message", [
    ("unconnected input", "input keep_above.x is not connected"),
    ("dangling output", "output keep_above.y goes nowhere"),
    ("cycle", "the graph has a cycle"),
])
def test_a_broken_graph_is_refused_before_anything_runs(ssd, mistake, message):
    app = Application(ssd)
    node = app.add(keep_above, floor=0)
    if mistake == "dangling output":
        app.feed(node.x, pa.array([1, 2]))
    if mistake == "cycle":
        other = app.add(keep_above, floor=0)
        app.connect(node.y, other.x)
        app.connect(other.y, node.x)
    outstanding = ssd.engine.outstanding
    with pytest.raises(GraphError, match=message):
        app.run()
    assert ssd.engine.outstanding == outstanding


def test_a_scan_packet_is_at_most_one_read_command(ssd):
    from ndp_core.engine import MAX_PAGES_PER_COMMAND

    assert Application(ssd, pages_per_packet=MAX_PAGES_PER_COMMAND).pages_per_packet == MAX_PAGES_PER_COMMAND
    with pytest.raises(ValueError, match=rf"at most MAX_PAGES_PER_COMMAND \({MAX_PAGES_PER_COMMAND}\) pages"):
        Application(ssd, pages_per_packet=MAX_PAGES_PER_COMMAND + 1)


def test_arguments_are_checked_against_the_declaration(ssd):
    app = Application(ssd)
    with pytest.raises(TypeError, match=r"missing argument\(s\) \['floor'\]"):
        app.add(keep_above)
    with pytest.raises(ValueError, match="does not fit int64"):
        app.add(keep_above, floor=2**70)
    with pytest.raises(TypeError, match=r"unknown argument\(s\) \['ceiling'\]"):
        app.add(keep_above, floor=1, ceiling=3)
    node = app.add(keep_above, floor=1)
    with pytest.raises(TypeError, match="takes int64, got an Arrow array of double"):
        app.feed(node.x, pa.array([1.5]))
    with pytest.raises(ValueError, match=r"takes one array of values .* got an array of shape \(2, 3\)"):
        app.feed(node.x, [np.arange(3), np.arange(3, 6)])  # packets are the runtime's to cut


@pytest.mark.parametrize("program, message", [
    (writes_too_far, "index out of bounds"),
    (never_ends, "used up its work budget of 100000 loop iterations"),
    (claims_too_much, "returned a count larger than an output's capacity"),
])
@pytest.mark.parametrize("on", ["device", "host"])
def test_a_misbehaving_program_is_stopped_with_a_clear_error(ssd, numbers_file, program, message, on):
    app = Application(ssd)
    node = app.add(program, on=on)
    app.feed(node.x, pa.array([1, 2, 3]))
    app.collect(node.y)
    with pytest.raises(SSDletError, match=message):
        app.run(budget=100_000)
    assert ssd.engine.outstanding == 0
    # the engine keeps running other programs
    result = pipeline(ssd, numbers_file, ("device", "device", "device"))
    assert result["total.count"].to_pylist() == [int((NUMBERS > 5 * 10**11).sum())]


@pytest.mark.parametrize("on", ["device", "host"])
def test_bad_input_a_program_locates_reaches_the_host_with_its_offset(ssd, on):
    app = Application(ssd, packet_rows=3)
    node = app.add(no_negatives, on=on)
    app.feed(node.x, pa.array([1, 2, 3, 4, -5, 6]))
    app.collect(node.y)
    with pytest.raises(SSDletError, match="call 2: stopped at bad input, byte 32 of what its first input received"
                       ) as found:
        app.run()
    assert (found.value.byte_offset, found.value.path) == (32, None)
    assert pickle.loads(pickle.dumps(found.value)).byte_offset == 32  # as Dask sends it back


def test_a_program_with_many_ports_and_counters_compiles_and_runs(ssd):
    app = Application(ssd, packet_rows=100)
    node = app.add(many_counters, on="device")
    app.feed(node.x, pa.array(NUMBERS[:250]))
    app.collect(node.y)
    result = app.run()
    assert result["many_counters.y"].to_pylist() == NUMBERS[:250].tolist()
    assert result.work[0].counters["w0"] == 250 and result.work[0].counters["w39"] == 4  # 3 packets + the last call


def test_instances_of_one_program_keep_their_own_state(ssd):
    app = Application(ssd, packet_rows=100)
    first, second = app.add(total, name="first"), app.add(total, name="second")
    app.feed(first.x, pa.array(NUMBERS[:1000]))
    app.feed(second.x, pa.array(NUMBERS[1000:1500]))
    for node in (first, second):
        app.collect(node.total)
        app.collect(node.count)
    result = app.run()
    assert result["first.total"].to_pylist() == [int(NUMBERS[:1000].sum())]
    assert result["second.count"].to_pylist() == [500]


def test_the_model_charges_each_node_and_what_crosses_the_link(ssd, numbers_file):
    near = pipeline(ssd, numbers_file, ("device", "device", "device"))
    far = pipeline(ssd, numbers_file, ("host", "host", "host"))
    text_bytes = numbers_file.stat().st_size
    assert sum(w.link_bytes for w in near.work) == 16  # the two collected 8-byte results
    assert sum(w.link_bytes for w in far.work) == text_bytes  # the host scans the text
    assert set(near.model.node_s) == {"parse_lines", "keep_above", "total"}
    assert far.model.resource_s["link"] > near.model.resource_s["link"]
    assert far.model.resource_s["link"] >= text_bytes / ssd.profile.link_bandwidth
    assert near.model.resource_s["flash"] == far.model.resource_s["flash"] > 0
    assert near.model.makespan_s == max(near.model.resource_s.values())



@pytest.mark.parametrize("on", ["device", "host"])
def test_a_program_writing_into_its_input_leaves_the_callers_data_alone(ssd, on):
    numbers, arrow = np.arange(5, dtype=np.int64), pa.array([7, 8, 9], pa.int64())
    for values in (numbers, arrow):
        app = Application(ssd)
        node = app.add(scribbles_on_its_input, on=on)
        app.feed(node.x, values)
        app.collect(node.y)
        assert app.run()["scribbles_on_its_input.y"].to_pylist() == list(values.tolist())
    assert numbers.tolist() == [0, 1, 2, 3, 4] and arrow.to_pylist() == [7, 8, 9]
