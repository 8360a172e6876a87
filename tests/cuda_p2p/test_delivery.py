"""Spans copied to the GPU while the read goes on: streamed where the Table kept them, copied again where not."""
from __future__ import annotations

import io
import threading

import pytest

import arrow_bridge
import cuda_p2p


def _file(tmp_path, body: bytes):
    path = tmp_path / "data.csv"
    path.write_bytes(body)
    return path


def _rows(n: int, start: int = 0) -> bytes:
    return b"".join(b"%d,%d.5,name %d,2020-01-%02d\n" % (k, k, k, k % 28 + 1) for k in range(start, start + n))


def test_every_column_streams_when_the_first_span_settles_the_types(tmp_path) -> None:
    path = _file(tmp_path, b"a,b,c,d\n" + _rows(300))
    gpu = cuda_p2p.read_csv(path, block_size=512)
    assert gpu.to_arrow().equals(arrow_bridge.read_csv(path, block_size=512))
    assert (gpu.stats.columns_streamed, gpu.stats.columns_recopied) == (4, 0)


def test_a_type_settled_late_is_copied_again_the_others_stream(tmp_path) -> None:
    path = _file(tmp_path, b"a,b,c,d\n" + _rows(200) + b"x,1.5,late,2020-01-01\n")
    gpu = cuda_p2p.read_csv(path, block_size=512)
    assert gpu.to_arrow().equals(arrow_bridge.read_csv(path, block_size=512))
    assert gpu.schema.field("a").type == "string"
    assert (gpu.stats.columns_streamed, gpu.stats.columns_recopied) == (3, 1)


def test_nrows_filters_and_usecols(tmp_path) -> None:
    path = _file(tmp_path, b"a,b,c,d\n" + _rows(300))
    for options in ({"nrows": 123}, {"filters": [("a", "<", 50)]}, {"usecols": ["d", "a"]}):
        gpu = cuda_p2p.read_csv(path, block_size=512, **options)
        assert gpu.to_arrow().equals(arrow_bridge.read_csv(path, block_size=512, **options)), options


def test_buffers_grow_when_the_first_span_underestimates() -> None:
    body = b"a,s\n" + b"1,x\n" * 50 + b"".join(b"%d,%s\n" % (k, b"y" * (k % 50)) for k in range(400))
    gpu = cuda_p2p.read_csv(io.BytesIO(body), block_size=256)  # no file size: estimates from the first span
    assert gpu.to_arrow().equals(arrow_bridge.read_csv(io.BytesIO(body), block_size=256))
    assert gpu.stats.growths > 0 and gpu.stats.columns_streamed == 2
    assert 0 < gpu.stats.after_read_seconds <= gpu.stats.seconds


def test_device_spans_stream_too(tmp_path) -> None:
    path = _file(tmp_path, b"a,b,c,d\n" + _rows(300))
    gpu = cuda_p2p.read_csv(path, block_size=512, device="modern-gen4", split="device")
    assert gpu.to_arrow().equals(arrow_bridge.read_csv(path, block_size=512))
    assert gpu.stats.columns_streamed == 4 and gpu.report.bytes["p2p"] > 0


def test_a_failed_read_leaves_nothing_in_flight(tmp_path) -> None:
    path = _file(tmp_path, b"a,b,c,d\n" + _rows(100) + b"1,2\n")
    try:
        cuda_p2p.read_csv(path, block_size=256)
    except arrow_bridge.CsvParseError as e:
        assert e.line == 102
    else:
        raise AssertionError("the bad row was not reported")
    assert cuda_p2p.read_csv(path, block_size=256, nrows=50).num_rows == 50


def test_spans_are_copied_in_batches_whatever_their_number(tmp_path) -> None:
    path = _file(tmp_path, b"a,b,c,d\n" + _rows(300))
    expected = arrow_bridge.read_csv(path, block_size=512)
    one_span = cuda_p2p.read_csv(path)
    many_spans = cuda_p2p.read_csv(path, block_size=512)  # a dozen spans, one batch
    span_by_span = cuda_p2p.read_csv(path, block_size=512, batch_bytes=1)
    for gpu in (one_span, many_spans, span_by_span):
        assert gpu.to_arrow().equals(expected)
        assert gpu.stats.launches == 0  # no nulls: no bitmap to place
    assert many_spans.stats.copies == one_span.stats.copies == 5  # a, b, d values; c offsets and bytes
    assert many_spans.stats.batches == 1 and span_by_span.stats.batches == expected.column(0).num_chunks
    assert span_by_span.stats.copies == 5 * span_by_span.stats.batches


def test_columns_copied_again_are_not_copied_first(tmp_path) -> None:
    # a late string in "a" re-parses every span, and the filter replaces every column: all three are
    # copied again from the Table, so the batch still pending at the end is not copied at all
    path = _file(tmp_path, b"a,b,s\n" + b"".join(b"%d,%d.5,name %d\n" % (k, k, k) for k in range(3000))
                 + b"x,1.5,late\n")
    gpu = cuda_p2p.read_csv(path, block_size=4096, filters=[("b", "<", 100.0)])
    table = gpu.to_arrow()
    assert table.equals(arrow_bridge.read_csv(path, block_size=4096, filters=[("b", "<", 100.0)]))
    assert gpu.stats.columns_recopied == 3 and gpu.stats.h2d_bytes < table.nbytes + 64


def test_a_failure_while_copying_the_last_batch_leaves_nothing_in_flight(tmp_path, monkeypatch) -> None:
    from cuda_p2p.delivery import SpanDelivery

    closed = []
    monkeypatch.setattr(SpanDelivery, "close", lambda self: closed.append(self))
    monkeypatch.setattr(SpanDelivery, "_hand_over", lambda self, columns=None: (_ for _ in ()).throw(MemoryError("GPU")))
    path = _file(tmp_path, b"a,b,c,d\n" + _rows(50))
    try:
        cuda_p2p.read_csv(path)  # under one batch: every copy starts in finish()
    except MemoryError:
        assert len(closed) == 1
    else:
        raise AssertionError("the copy's failure was lost")


def test_batches_are_copied_off_the_readers_driver_thread(tmp_path, monkeypatch) -> None:
    from cuda_p2p.transfer import ColumnBuilder

    threads = []
    append = ColumnBuilder.append_batch
    monkeypatch.setattr(ColumnBuilder, "append_batch",
                        lambda self, *args: (threads.append(threading.current_thread().name), append(self, *args)))
    path = _file(tmp_path, b"a,b,c,d\n" + _rows(3000))
    gpu = cuda_p2p.read_csv(path, block_size=2048, batch_bytes=4096)
    assert gpu.to_arrow().equals(arrow_bridge.read_csv(path, block_size=2048))
    assert gpu.stats.batches > 3 and threads and all(name.startswith("ndp-gpu-delivery") for name in threads)
    assert not any(t.name.startswith("ndp-gpu-delivery") for t in threading.enumerate())


def test_a_failure_in_a_batch_copied_during_the_read_ends_the_read(tmp_path, monkeypatch) -> None:
    from cuda_p2p.transfer import ColumnBuilder

    path = _file(tmp_path, b"a,b,c,d\n" + _rows(20_000))
    batches = cuda_p2p.read_csv(path, block_size=2048, batch_bytes=4096).stats.batches
    tried = []

    def fail(self, chunks, on_gpu=None):
        tried.append(len(chunks))
        raise MemoryError("GPU out of memory")

    monkeypatch.setattr(ColumnBuilder, "append_batch", fail)
    with pytest.raises(MemoryError, match="GPU out of memory"):
        cuda_p2p.read_csv(path, block_size=2048, batch_bytes=4096)
    # raised at the next batch handed over, the batches queued after it cancelled
    assert batches > 100 and len(tried) < batches // 4, (len(tried), batches)
    assert not any(t.name.startswith("ndp-gpu-delivery") for t in threading.enumerate())


def test_gpu_parsed_spans_are_placed_gpu_to_gpu_beside_host_spans(tmp_path) -> None:
    path = _file(tmp_path, b"a,b,c,d,e\n" + b"".join(
        b"%d,%s,name %d,2020-01-%02d,%s\n" % (k, b"" if k % 7 == 0 else b"%d.5" % k, k, k % 28 + 1,
                                             b"true" if k % 3 else b"false") for k in range(600)))
    expected = arrow_bridge.read_csv(path, block_size=1024)
    half = cuda_p2p.read_csv(path, block_size=1024, gpu_share=0.5)  # host and GPU spans take turns in each column
    assert half.to_arrow().equals(expected)
    assert half.stats.columns_streamed == 5 and half.stats.d2d_bytes > 0 and half.stats.h2d_bytes > 0
    everything = cuda_p2p.read_csv(path, block_size=1024, gpu_share=1.0)
    assert everything.to_arrow().equals(expected)
    assert everything.stats.d2d_bytes > half.stats.d2d_bytes and everything.stats.h2d_bytes < half.stats.h2d_bytes


def test_columns_the_gpu_does_not_store_as_arrow_does_go_up_from_the_host(tmp_path) -> None:
    path = _file(tmp_path, b"a,b,c,d\n" + _rows(400))
    options = dict(block_size=1024, dtype={"a": "int16", "c": "large_string"})
    gpu = cuda_p2p.read_csv(path, gpu_share=1.0, **options)  # int16 is cast from int64, large offsets widened
    assert gpu.to_arrow().equals(arrow_bridge.read_csv(path, **options))
    assert gpu.stats.spans_parsed_on_gpu > 3 and gpu.stats.d2d_bytes > 0


@pytest.mark.parametrize("options", [{"nrows": 333}, {"filters": [("a", "<", 150)]}, {"usecols": ["d", "a"]},
                                     {"skiprows": 5}])
def test_gpu_copies_of_columns_the_reader_replaced_are_not_used(tmp_path, options) -> None:
    path = _file(tmp_path, b"a,b,c,d\n" + _rows(400))
    gpu = cuda_p2p.read_csv(path, block_size=1024, gpu_share=1.0, **options)
    assert gpu.to_arrow().equals(arrow_bridge.read_csv(path, block_size=1024, **options)), options
