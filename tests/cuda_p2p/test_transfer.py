"""Arrow Tables into GPU memory and back: every CSV type, chunks at any bit offset, tiny staging buffers."""
from __future__ import annotations

import datetime
import decimal

import pyarrow as pa
import pytest

from cuda_p2p import GpuTable, to_gpu
from cuda_p2p.transfer import ColumnBuilder, PinnedStager


def _every_type(rows: int = 11) -> pa.Table:
    values = {
        "i8": pa.array([k - 5 if k % 4 else None for k in range(rows)], pa.int8()),
        "i64": pa.array([(-1) ** k * 2 ** 62 if k % 3 else None for k in range(rows)], pa.int64()),
        "u32": pa.array([k * 7 for k in range(rows)], pa.uint32()),
        "f32": pa.array([k / 3 if k % 5 else None for k in range(rows)], pa.float32()),
        "f64": pa.array([-0.0 if k == 0 else k / 7 for k in range(rows)], pa.float64()),
        "b": pa.array([None if k % 5 == 1 else k % 2 == 0 for k in range(rows)]),
        "d32": pa.array([datetime.date(1969, 12, 31) + datetime.timedelta(days=k) for k in range(rows)]),
        "d64": pa.array([datetime.date(2000, 1, 1)] * rows, pa.date64()),
        "ts": pa.array([datetime.datetime(2020, 1, 1, k % 24) for k in range(rows)], pa.timestamp("us", "UTC")),
        "t32": pa.array([k * 1000 for k in range(rows)], pa.time32("ms")),
        "dec": pa.array([decimal.Decimal(k) / 4 if k % 2 else None for k in range(rows)], pa.decimal128(9, 2)),
        "s": pa.array([None if k % 4 == 3 else "x" * k for k in range(rows)]),
        "ls": pa.array(["é" * (k % 3) for k in range(rows)], pa.large_string()),
        "bin": pa.array([bytes([k]) * (k % 4) for k in range(rows)], pa.binary()),
        "n": pa.nulls(rows),
    }
    return pa.table(values)


@pytest.mark.parametrize("staging", [8, 64, 1 << 20])
def test_round_trip_of_every_type_through_chunks_at_odd_offsets(staging: int) -> None:
    whole = _every_type(40)
    # chunks of 1, 3, 5, ... rows, and slices that start inside a bitmap byte
    pieces = [whole.slice(start, length) for start, length in ((0, 1), (1, 3), (4, 5), (9, 13), (22, 18))]
    chunked = pa.concat_tables(pieces)
    gpu = to_gpu(chunked, staging_bytes=staging)
    assert isinstance(gpu, GpuTable) and gpu.num_rows == 40
    back = gpu.to_arrow()
    assert back.schema == whole.schema
    assert back.equals(whole)
    for name in whole.column_names:
        assert gpu[name].null_count == whole[name].null_count


def test_columns_are_allocated_once_at_their_final_size() -> None:
    table = pa.concat_tables([pa.table({"a": list(range(k, k + 10))}) for k in range(0, 100, 10)])
    gpu = to_gpu(table)
    assert gpu["a"].values.nbytes == 100 * 8  # one buffer for the ten chunks
    assert gpu["a"].validity is None  # nothing null: no bitmap, as in Arrow
    assert gpu.stats.h2d_bytes == 800


def test_a_column_of_many_chunks_is_one_copy_per_buffer() -> None:
    chunks = [pa.array(range(k, k + 7), pa.int64()) for k in range(0, 7000, 7)]
    chunks[500] = pa.array([1, None, 3, 4, 5, 6, 7], pa.int64())
    table = pa.table({"a": pa.chunked_array(chunks), "s": pa.chunked_array([pa.array(["xy"] * 7)] * 1000)})
    gpu = to_gpu(table)
    assert gpu.to_arrow().equals(table)
    assert gpu.stats.copies == 4  # a: values, validity bits; s: offsets, bytes
    assert gpu.stats.launches <= 2  # the bitmap zeroed, the bits ORed in


@pytest.mark.parametrize("name", ["i64", "b", "s"])
def test_batches_before_the_first_null_stay_valid(name: str) -> None:
    whole = _every_type(40).select([name])
    column = whole.column(0).combine_chunks()
    clean = pa.array([v for v in column.to_pylist() if v is not None][:9], column.type)
    batches = [[clean.slice(0, 4), clean.slice(4, 5)], [column.slice(3, 14)], [clean.slice(1, 6)], [column.slice(17, 2)]]
    stager = PinnedStager(64)
    builder = ColumnBuilder(column.type, 3, 8, stager)  # estimates that fall short: buffers grow
    for batch in batches:
        builder.append_batch(batch)
    gpu = builder.finish()
    stager.finish()
    expected = pa.concat_arrays([a for batch in batches for a in batch])
    assert gpu.to_arrow().equals(expected) and gpu.null_count == expected.null_count > 0


def test_empty_table_and_empty_strings() -> None:
    table = pa.table({"a": pa.array([], pa.int64()), "s": pa.array([], pa.string())})
    assert to_gpu(table).to_arrow().equals(table)
    strings = pa.table({"s": ["", "", None]})
    assert to_gpu(strings).to_arrow().equals(strings)


def test_dictionary_columns_say_what_to_do() -> None:
    table = pa.table({"d": pa.array(["a", "b"]).dictionary_encode()})
    with pytest.raises(NotImplementedError, match="dictionary"):
        to_gpu(table)


def test_staging_buffers_hold_whole_words() -> None:
    with pytest.raises(ValueError, match="8-byte"):
        to_gpu(pa.table({"a": [1]}), staging_bytes=12)


def test_string_offsets_past_int32_say_to_read_large_strings(monkeypatch) -> None:
    from cuda_p2p import transfer

    monkeypatch.setattr(transfer, "_INT32_MAX", 10)  # 2 GiB of strings, scaled down
    with pytest.raises(OverflowError, match="int32 offsets; read it as large_string"):
        to_gpu(pa.table({"s": ["abcdef", "ghijkl"]}))
    assert to_gpu(pa.table({"s": pa.array(["abcdef", "ghijkl"], pa.large_string())})).num_rows == 2


@pytest.mark.parametrize("nbytes", [0, 5, 8, 17, 64])
def test_take_brings_device_bytes_back_through_a_small_ring(nbytes: int) -> None:
    import numpy as np

    from cuda_p2p import runtime

    cuda = runtime.cuda()
    stager = PinnedStager(8)
    source = np.random.default_rng(nbytes).integers(0, 256, nbytes, dtype=np.uint8)
    on_gpu = cuda.device_array(max(nbytes, 1), dtype=np.uint8)[:nbytes]
    stager.put_bytes(on_gpu, source)  # queued on the stream that take's copies follow
    back = np.zeros(nbytes, dtype=np.uint8)
    stager.take(on_gpu, back)
    assert back.tolist() == source.tolist() and stager.copied_back == nbytes


def test_a_ring_of_one_pinned_buffer_is_refused() -> None:
    with pytest.raises(ValueError, match="two or more"):
        PinnedStager(8, ring=1)
