"""GPU-side parsing against the host reader: the same Table bit for bit, or the same error.

The kernels run on Numba's CUDA simulator here (on the GPU under `make gpu`).
Every span after the first (whose types the host infers) goes to the GPU;
what the kernels decline the host parses, so these tests also count that the
GPU did take spans where the data is plain.
"""
from __future__ import annotations

import io
import random
import threading
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from numba import cuda  # the simulator's where there is no GPU (the root conftest)

import arrow_bridge
import cuda_p2p
from arrow_bridge.numbers.parse_floats import parse_float64
from csvgen import assert_tables_identical, csv_cases, error_signature, outcome
from cuda_p2p import gpu_parse, runtime
from cuda_p2p.executor import GPU, GpuExecutor
from cuda_p2p.kernels import fields


def _both(data: bytes, **options: Any):
    host = outcome(lambda: arrow_bridge.read_csv(io.BytesIO(data), **options))
    gpu = outcome(lambda: cuda_p2p.read_csv(io.BytesIO(data), gpu_share=1.0, **options))
    return host, gpu


def _assert_same(data: bytes, **options: Any) -> cuda_p2p.GpuTable:
    (host, host_err), (gpu, gpu_err) = _both(data, **options)
    if host_err is not None:
        assert gpu_err is not None, f"host raised {host_err!r}, the GPU path returned a table"
        assert error_signature(gpu_err) == error_signature(host_err)
        return None
    assert gpu_err is None, f"the GPU path raised {gpu_err!r}"
    assert_tables_identical(gpu.to_arrow(), host)
    return gpu


def _plain_file(rows: int, seed: int = 0) -> bytes:
    rng = random.Random(seed)
    lines = ["id,price,name,day,flag,qty"]
    for k in range(rows):
        price = f"{rng.randint(-99999, 99999) / 100:.2f}"
        day = f"{rng.randint(1992, 1998)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        name = f'"Customer#{k:05d}, ""vip"""' if k % 7 == 0 else f"Customer#{k:05d}"
        lines.append(f"{rng.randint(-2**40, 2**40)},{price},{name},{day},{'true' if k % 3 else 'false'},"
                     f"{'' if k % 11 == 0 else k}")
    return ("\n".join(lines) + "\n").encode()


def test_plain_file_parsed_on_the_gpu_equals_the_host() -> None:
    gpu = _assert_same(_plain_file(120), block_size=512)
    assert gpu.stats.path == "gpu" and gpu.stats.spans_parsed_on_gpu >= 5
    # outputs come back for the host Table; their columns are placed from the GPU, not sent up again
    assert gpu.stats.d2h_bytes >= gpu.nbytes // 2 and "GPU->host)" in repr(gpu)
    assert gpu.stats.d2d_bytes > 3 * gpu.stats.h2d_bytes and "GPU->GPU" in repr(gpu)


@pytest.mark.parametrize("body", [
    b'a,b\n1,"multi\nline"\n2,"x"\n3,"a\nb\nc"\n' * 8,  # quoted line breaks across chunk boundaries
    b"a,b\r\n1,x\r\n2,y\r\n" * 20,  # CRLF
    b"a,b\n1,x\n\n2,y\n" * 20,  # empty lines: the host takes those spans
    b"a,b\n1,x\n2,y,z\n" * 20,  # a bad row: the same error as the host
    b'a,b\n' + b'1,"x\ry\r\nz"\n' * 20 + b"2,x,z\n",  # line breaks inside quotes count for later lines
    b"a,b\n1,x\n2,y\n3",  # no final line break
    b"a,b\n1,2020-02-29\n2,2021-02-29\n",  # not a date: a string column, as on the host
    b"t\n" + b"2020-01-01 10:11:12\n1969-12-31T23:59:59\n2021-06-01\n" * 12 + b"2021-06-01 10:00\n",  # timestamps
    b"a\n1\n" + b"2\n" * 50 + b"x\n",  # a late value that widens the type
    b"a,b\n" + b"1,NA\n" * 30 + b"2,null\n",  # null spellings
    b"a\n" + b"9223372036854775807\n-9223372036854775808\n" * 10,  # int64 extremes
    b"f\n" + b"0.1\n1e22\n1e23\n-0.0\n123456789012345678\n.5\n5.\n1e-400\ninf\n" * 4,  # Clinger and beyond
    b'a,s\n' + b'1,"x"\n' * 12 + b'2,"""\xf4\x90\x80\x80"\n' + b'3,"y"\n' * 4,  # invalid UTF-8 after a doubled quote
])
def test_edge_cases_match_the_host(body: bytes) -> None:
    _assert_same(body, block_size=32)


@pytest.mark.parametrize("body", [
    b"a,b,c\n" + b"1,x,2\n3\n" * 20,  # a short row: empty fields under pandas' semantics
    b"a\n" + b"+5\n0x1f\n" * 20,  # pandas' integers: "+5" an int, "0x1f" text
])
def test_pandas_semantics_match_the_host(body: bytes) -> None:
    _assert_same(body, block_size=32, semantics="pandas")


def test_explicit_types_and_usecols() -> None:
    data = _plain_file(60, seed=3)
    _assert_same(data, block_size=256, dtype={"id": "int64", "qty": "float64", "flag": "bool"},
                 usecols=["id", "qty", "flag", "day"])
    _assert_same(data, block_size=256, dtype={"qty": "int8"})  # out of int8's range: the host's error


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=csv_cases(max_rows=25), block_size=st.sampled_from([16, 64, 300]))
def test_generated_files_match_the_host(case, block_size: int) -> None:
    options: dict[str, Any] = dict(case.dialect.pandas_kwargs(), block_size=case.effective_block_size(block_size))
    if not case.header:
        options["header"] = None
    if case.skip_rows:
        options["skiprows"] = case.skip_rows
    gpu = _assert_same(case.data, **options)
    event("some spans parsed on the GPU" if gpu is not None and gpu.stats.spans_parsed_on_gpu else
          "every span on the host")


def test_a_share_of_the_spans() -> None:
    data = _plain_file(200, seed=5)
    host = arrow_bridge.read_csv(io.BytesIO(data), block_size=256)
    gpu = GpuExecutor(arrow_bridge.executors.host.HostExecutor(), share=0.5)
    table = arrow_bridge.read_csv(io.BytesIO(data), block_size=256, offload=[gpu])
    assert_tables_identical(table, host)
    assert 0 < gpu.parsed_on_gpu < gpu.spans_seen


def _parse_floats(buf, starts, ends, ok, values):
    i = cuda.grid(1)
    if i < starts.shape[0]:
        ok[i], values[i] = fields.parse_float(buf, starts[i], ends[i], 46)


def test_float_kernel_rounds_as_the_host_does() -> None:
    from cuda_p2p import runtime

    run = runtime.cuda().jit(_parse_floats)
    rng = np.random.default_rng(7)
    # 0 to 25 significant digits: Clinger's case, Eisel-Lemire's, and truncated prefixes
    texts = [f"{x:.{rng.integers(0, 26)}g}" for x in rng.standard_normal(200) * 10.0 ** rng.integers(-300, 300, 200)]
    texts += [repr(float(x)) for x in rng.standard_normal(50)]
    texts += ["1e22", "1e23", "9007199254740993", "0.30000000000000004", "-0", "+1.5", "1.", ".1", "1e", "--1",
              "1e999999", "inf", "9007199254740993.0000001", "-0e400", "2.2250738585072011e-308", "1e-400"]
    buf = np.frombuffer(",".join(texts).encode(), dtype=np.uint8)
    ends = np.cumsum([len(t) + 1 for t in texts]) - 1
    starts = ends - np.array([len(t) for t in texts])
    states, values = np.zeros(len(texts), np.int64), np.zeros(len(texts))
    blocks, threads = runtime.launch_shape(len(texts))
    d_states, d_values = runtime.cuda().to_device(states), runtime.cuda().to_device(values)
    run[blocks, threads](runtime.cuda().to_device(buf), runtime.cuda().to_device(starts),
                         runtime.cuda().to_device(ends), d_states, d_values)
    states, values = d_states.copy_to_host(), d_values.copy_to_host()
    for text, state, value, s, e in zip(texts, states, values, starts, ends):
        host_ok, host_value = parse_float64(buf, s, e, np.uint8(46))
        assert (state != fields.NOT_A_FLOAT) == host_ok or text == "inf", text
        if state == fields.EXACT:
            assert np.float64(host_value).view(np.int64) == np.float64(value).view(np.int64), text
    state_of = dict(zip(texts, states))
    assert (states[:250] == fields.EXACT).all()  # only text within 1e-19 of a halfway point is left to the host
    assert state_of["1e23"] == state_of["9007199254740993"] == state_of["-0e400"] == state_of["1e999999"] == fields.EXACT
    # w and w + 1 of the truncated digits round apart (w * 10**4 is the tie 2**53 + 1)
    assert state_of["9007199254740993.0000001"] == fields.ROUND_ON_HOST
    assert state_of["1e"] == state_of["--1"] == state_of["inf"] == fields.NOT_A_FLOAT


def test_long_floats_inside_gpu_spans() -> None:
    rng = np.random.default_rng(3)
    rows = [f"{a!r},{b!r}\n" for a, b in rng.standard_normal((200, 2)).tolist()]
    rows[7::40] = ["9007199254740993.0000001,1\n"] * len(rows[7::40])  # undecided on the GPU: the host rounds it
    gpu = _assert_same(("x,y\n" + "".join(rows)).encode(), block_size=512)
    assert gpu.stats.spans_parsed_on_gpu >= 5 and gpu.to_arrow().schema.types == [pa.float64()] * 2


def _scanned_on_host(state: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each chunk's exclusive prefix state and the whole's, one chunk after another."""
    before = np.zeros_like(state)
    parity = outside = inside = breaks = 0
    for i in range(state.shape[1]):
        before[:, i] = parity, outside, inside, breaks
        q, o, n, b = state[:, i]
        parity, outside, inside, breaks = parity ^ (q & 1), outside + (n if parity else o), \
            inside + (o if parity else n), breaks + b
    return before, np.array([[parity], [outside], [inside], [breaks]])


@pytest.mark.parametrize("chunks", [1, 3, 32, 33, 1100])
def test_record_scan_on_the_gpu_equals_a_scan_chunk_by_chunk(chunks: int) -> None:
    """One block, several, and (1100 > 32 x 32 on the simulator) a third level."""
    rng = np.random.default_rng(chunks)
    state = np.stack([rng.integers(0, 4, chunks), rng.integers(0, 5, chunks), rng.integers(0, 5, chunks),
                      rng.integers(0, 9, chunks)]).astype(np.int64)
    lane = gpu_parse._Lane()
    on_gpu = runtime.cuda().to_device(state, stream=lane.stream)
    whole = lane.to_host(gpu_parse._scan_chunk_states(lane, on_gpu))
    before, expected_whole = _scanned_on_host(state)
    assert (lane.to_host(on_gpu) == before).all() and (whole[:, :1] == expected_whole).all()


@pytest.mark.parametrize("chunks", [1, 2, 500])
def test_the_simulators_record_scan_on_the_host_equals_a_scan_chunk_by_chunk(chunks: int) -> None:
    from cuda_p2p.kernels.records import scan_states_on_host

    rng = np.random.default_rng(chunks)
    state = rng.integers(0, 5, (4, chunks)).astype(np.int64)
    before, whole = scan_states_on_host(state)
    expected_before, expected_whole = _scanned_on_host(state)
    assert (before == expected_before).all() and (whole == expected_whole).all()


def test_record_scan_with_quotes_across_chunks() -> None:
    # chunk 0 opens a quote that chunk 1 closes; chunk 1's first LF is inside the quotes
    lane = gpu_parse._Lane()
    state = runtime.cuda().to_device(np.array([[1, 1, 0], [1, 1, 2], [0, 1, 1], [1, 2, 2]]), stream=lane.stream)
    whole = lane.to_host(gpu_parse._scan_chunk_states(lane, state))
    starts_inside, first_record = lane.to_host(state)[:2]
    assert starts_inside.tolist() == [0, 1, 0] and first_record.tolist() == [0, 1, 2]
    assert whole[:, 0].tolist() == [0, 4, 2, 5]  # no quote left open, 4 records, 5 line breaks


def test_gpu_side_of_a_span_is_recorded() -> None:
    data = _plain_file(40)
    gpu = GpuExecutor(arrow_bridge.executors.host.HostExecutor())

    class Sides:
        seen: list = []

        def checked(self, result) -> None:
            self.seen.append(result.side)

    sides = Sides()
    table = arrow_bridge.read_csv(io.BytesIO(data), block_size=256, offload=[gpu], sinks=[sides])
    assert table.num_rows == 40 and gpu.parsed_on_gpu == sides.seen.count(GPU) > 0


def test_schema_of_every_path_is_the_readers() -> None:
    data = _plain_file(30)
    expected = arrow_bridge.read_csv(io.BytesIO(data)).schema
    for share in (0.0, 1.0):
        assert cuda_p2p.read_csv(io.BytesIO(data), gpu_share=share, block_size=128).schema == expected


@pytest.mark.parametrize("unit, tz", [("s", None), ("ms", None), ("ns", None), ("us", "UTC")])
def test_timestamps_at_every_unit(unit: str, tz) -> None:
    data = b"t\n" + b"".join(b"20%02d-0%d-1%d %02d:%02d:%02d\n" % (k, k % 9 + 1, k % 9, k % 24, k % 60, (7 * k) % 60)
                             for k in range(80))
    gpu = _assert_same(data, block_size=256, dtype={"t": pa.timestamp(unit, tz)})
    if tz is None:
        assert gpu.stats.spans_parsed_on_gpu >= 3


def test_gpu_parse_time_is_recorded(tmp_path) -> None:
    path = tmp_path / "t.csv"
    path.write_bytes(b"a,b\n" + b"".join(b"%d,%d.25\n" % (k, k) for k in range(400)))
    stats = cuda_p2p.read_csv(path, gpu_share=1.0, block_size=1024).stats
    assert stats.spans_parsed_on_gpu > 1 and 0 < stats.gpu_parsed_bytes < path.stat().st_size
    assert 0 < stats.gpu_text_seconds < stats.gpu_parse_seconds and stats.gpu_parse_gb_per_s > 0
    # wall time past the text's copy: no more than the spans' summed times past it, whatever overlapped
    assert 0 < stats.gpu_busy_seconds <= stats.gpu_parse_seconds - stats.gpu_text_seconds + 1e-6


def test_spans_on_several_threads_use_lanes_of_their_own(monkeypatch) -> None:
    made = []
    make = gpu_parse._Lane.__init__
    monkeypatch.setattr(gpu_parse._Lane, "__init__", lambda lane: (made.append(lane), make(lane))[1])
    data = _plain_file(600, seed=11)
    host = arrow_bridge.read_csv(io.BytesIO(data), block_size=512)
    gpu = cuda_p2p.read_csv(io.BytesIO(data), block_size=512, gpu_share=1.0, n_threads=4)
    assert_tables_identical(gpu.to_arrow(), host)
    assert gpu.stats.spans_parsed_on_gpu > 8 and 1 <= len(made) <= 4

    pool, held, both_in = gpu_parse.LanePool(), [], threading.Barrier(2)

    def hold() -> None:
        with pool.lane() as lane:
            held.append(lane)
            both_in.wait(timeout=10)

    threads = [threading.Thread(target=hold) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert held[0] is not held[1] and pool.made == 2
    with pytest.raises(RuntimeError), pool.lane() as lane:  # a span that fails gives its lane back
        raise RuntimeError("a span failed")
    with pool.lane() as again:
        assert pool.made == 2 and again in held and lane in held
