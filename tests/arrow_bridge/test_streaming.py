"""Streaming reads: ``open_csv`` (a ``pyarrow.RecordBatchReader``) and ``read_pandas(chunksize=/iterator=)``.

The batches concatenated are ``read_csv``'s Table where the first block's
types hold; the first block decides the schema (pyarrow's ``open_csv`` rule)
and a later value that breaks it is an error naming line, column and value;
closing early stops the worker threads and closes the source.
"""
import gc
import io
import os
import threading
import time

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.dataset as pads
import pyarrow.parquet as pq
import pytest

import arrow_bridge
from arrow_bridge.api import open_csv
from arrow_bridge.executors import HostExecutor
from arrow_bridge.workers import THREAD_NAME_PREFIX
from csvgen import NonSeekableStream

HEADER = b"id,name,price,day,ok,note\n"


def rows(n: int, start: int = 0) -> bytes:
    """``n`` records: ints, quoted strings (delimiters, line breaks), floats, dates, bools;
    nulls (empty fields) only after the first few, so any first block infers every type."""
    out = []
    for i in range(start, start + n):
        empty = i > 3 and i % 7 == 0
        name = b'"multi\nline, %d"' % i if i % 5 == 0 else b"plain%d" % i
        price = b"" if empty else b"%d.25" % (i % 1000)
        day = b"" if empty and i % 2 else b"2024-%02d-%02d" % (1 + i % 12, 1 + i % 28)
        ok = b"" if empty else (b"true" if i % 3 else b"false")
        out.append(b"%d,%s,%s,%s,%s,%s\n" % (i, name, price, day, ok, b"n%d" % (i % 11)))
    return b"".join(out)


DATA = HEADER + rows(3000)


def line_of(data: bytes, text: bytes) -> int:
    """The 1-based line where ``text`` first occurs in ``data``."""
    return data.count(b"\n", 0, data.index(text)) + 1


def concat(reader: pa.RecordBatchReader) -> pa.Table:
    return pa.Table.from_batches(list(reader), schema=reader.schema)


@pytest.mark.parametrize("block_size", [64, 1000, 1 << 14, None])
@pytest.mark.parametrize("n_threads", [1, 3])
def test_batches_concatenated_equal_read_csv(write_file, block_size, n_threads):
    path = write_file("d.csv", DATA)
    options = dict(block_size=block_size, n_threads=n_threads)
    expected = arrow_bridge.read_csv(path, **options)
    with open_csv(path, **options) as reader:
        batches = list(reader)
    assert pa.Table.from_batches(batches, schema=expected.schema).equals(expected)
    if block_size is not None and block_size <= 1000:
        assert len(batches) > 10  # a batch per span, quoted line breaks cut across spans


@pytest.mark.parametrize("options", [
    dict(nrows=5), dict(nrows=1234), dict(nrows=0), dict(usecols=["price", "id"]), dict(usecols=[4, 0]),
    dict(dtype={"id": "int32", "price": "float32"}), dict(skiprows=1, header=None),
    dict(na_values=["n3"], keep_default_na=False), dict(names=list("abcdef"), header=0),
], ids=repr)
def test_options_behave_as_in_read_csv(options):
    expected = arrow_bridge.read_csv(DATA, block_size=500, **options)
    assert concat(open_csv(DATA, block_size=500, **options)).equals(expected)


def test_sources_and_bad_lines(csv_path):
    ragged = HEADER + rows(200) + b"1,2\n" + rows(200, 200) + b"1,2,3,4,5,6,7\n" + rows(50, 400)
    expected = arrow_bridge.read_csv(ragged, block_size=300, on_bad_lines="skip")
    assert expected.num_rows == 450
    assert concat(open_csv(ragged, block_size=300, on_bad_lines="skip")).equals(expected)
    for source in (NonSeekableStream(DATA), io.BytesIO(DATA)):  # no random access: spans keep their bytes
        assert concat(open_csv(source, block_size=700)).equals(arrow_bridge.read_csv(DATA, block_size=700))
    assert concat(open_csv(csv_path, block_size=64)).equals(arrow_bridge.read_csv(csv_path))
    with open_csv(DATA, byte_range=(len(HEADER), len(HEADER) + len(rows(10)))) as reader:
        assert reader.read_all().column("id").to_pylist() == list(range(10))


def test_a_name_holding_a_nul_is_kept_as_pyarrow_keeps_it():
    """The Arrow C stream interface ends names at a NUL; such a schema skips it."""
    data = b"a\x00b,c\n1,2\n"
    with open_csv(data) as reader:
        assert reader.read_all().equals(pacsv.read_csv(io.BytesIO(data)))
    assert pacsv.open_csv(io.BytesIO(data)).schema.names == ["a\x00b", "c"]


def test_header_only_and_empty_range():
    reader = open_csv(HEADER)
    assert reader.schema == arrow_bridge.read_csv(HEADER).schema  # null types, as read_csv
    assert reader.read_all().num_rows == 0
    empty = open_csv(DATA, byte_range=(len(DATA), len(DATA)), names=["a", "b"])
    assert empty.schema.names == ["a", "b"] and empty.read_all().num_rows == 0


def test_schema_comes_from_the_first_block_and_a_later_break_names_line_column_value():
    late = HEADER + rows(400) + b"400,x,1.5,2024-01-01,maybe,n\n" + rows(10, 401)
    whole = arrow_bridge.read_csv(late)
    assert whole.schema.field("ok").type == pa.string()  # the whole file settles it wider
    reader = open_csv(late, block_size=1000)
    assert reader.schema.field("ok").type == pa.bool_()  # the first block alone
    line = line_of(late, b"maybe")
    with pytest.raises(pa.ArrowInvalid) as err:  # the kind pyarrow's open_csv raises
        reader.read_all()
    message = str(err.value)
    assert f":{line}: column 'ok': cannot convert 'maybe' to bool" in message
    assert "first block" in message and "dtype={'ok'" in message
    with pytest.raises(pa.ArrowInvalid, match="'maybe'"):  # pyarrow's open_csv: the same kind of error
        concat(pacsv.open_csv(io.BytesIO(late), read_options=pacsv.ReadOptions(block_size=1000),
                              parse_options=pacsv.ParseOptions(newlines_in_values=True)))
    widened = open_csv(late, block_size=1000, dtype={"ok": "string"}).read_all()
    assert widened.equals(whole)


def test_errors_in_the_first_block_raise_at_open_and_keep_their_type_in_pandas_chunks():
    early = HEADER + rows(1) + b"bad,row\n" + rows(100)
    with pytest.raises(arrow_bridge.CsvParseError, match=f":{line_of(early, b'bad,row')}: .*expected 6 fields, got 2"):
        open_csv(early)
    late = HEADER + rows(300) + b"bad,row,3,4,5,6,7\n"  # a long row (pandas pads a short one)
    chunks = arrow_bridge.read_pandas(late, chunksize=100, block_size=500)
    with pytest.raises(arrow_bridge.CsvParseError, match=f":{line_of(late, b'bad,row')}: .*expected 6 fields"):
        list(chunks)


def test_device_streaming_is_refused_with_the_reason():
    with pytest.raises(NotImplementedError, match="finish"):
        open_csv(DATA, device="modern-gen4")


def _threads() -> set[str]:
    """Threads but the shared parse threads, which stay between reads (arrow_bridge.workers)."""
    return {t.name for t in threading.enumerate() if not t.name.startswith(THREAD_NAME_PREFIX)}


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _counting_parses(monkeypatch) -> list:
    parsed = []
    parse = HostExecutor.parse
    monkeypatch.setattr(HostExecutor, "parse", lambda self, span, plan: parsed.append(span) or parse(self, span, plan))
    return parsed


def _stays(parsed: list) -> bool:
    """No span parses after a close: the queued ones were cancelled, the running ones waited for."""
    count = len(parsed)
    time.sleep(0.2)
    return len(parsed) == count


def test_closing_early_stops_the_work_and_closes_the_source(write_file, monkeypatch):
    path = write_file("d.csv", DATA * 1 + rows(20000, 3000))
    parsed = _counting_parses(monkeypatch)
    before_threads, before_fds = _threads(), _open_fds()
    reader = open_csv(path, block_size=4096, n_threads=3)
    reader.read_next_batch()
    deadline = time.monotonic() + 5
    while len(parsed) < 3 and time.monotonic() < deadline:  # the next spans parse ahead of the caller
        time.sleep(0.01)
    assert len(parsed) >= 3
    reader.close()
    assert _stays(parsed) and not _threads() - before_threads and _open_fds() <= before_fds
    with pytest.raises(pa.ArrowInvalid, match="closed"):
        reader.read_next_batch()
    with open_csv(path, block_size=4096, n_threads=3) as reader:
        reader.read_next_batch()
    assert _stays(parsed) and not _threads() - before_threads and _open_fds() <= before_fds
    reader = open_csv(path, block_size=4096, n_threads=3)
    reader.read_next_batch()
    del reader  # dropped half-read
    gc.collect()
    assert _stays(parsed) and not _threads() - before_threads and _open_fds() <= before_fds
    with arrow_bridge.read_pandas(path, chunksize=10, block_size=4096, n_threads=3) as chunks:
        next(chunks)
    assert _stays(parsed) and not _threads() - before_threads and _open_fds() <= before_fds


def test_spans_in_flight_are_bounded(monkeypatch):
    parsed = _counting_parses(monkeypatch)
    reader = open_csv(DATA * 1 + rows(20000, 3000), block_size=1000, n_threads=2)
    reader.read_next_batch()
    assert len(parsed) <= 1 + 3  # the first span, then n_threads + 1 ahead
    reader.read_next_batch()
    assert len(parsed) <= 2 + 3
    reader.close()


@pytest.mark.parametrize("dtype_backend", ["pyarrow", "numpy", "numpy_nullable"])
def test_chunksize_frames_equal_read_pandas_slices(dtype_backend):
    whole = arrow_bridge.read_pandas(DATA, dtype_backend=dtype_backend, dtype={"price": "float64"})
    frames = list(arrow_bridge.read_pandas(DATA, chunksize=700, dtype_backend=dtype_backend,
                                           dtype={"price": "float64"}, block_size=2000))
    assert [len(f) for f in frames] == [700] * 4 + [200]
    for k, frame in enumerate(frames):
        expected = whole.iloc[700 * k: 700 * (k + 1)]
        if dtype_backend == "numpy":  # a chunk's dtypes are its own rows' (a column without nulls stays bool)
            expected = expected.astype(frame.dtypes.to_dict())
        pd.testing.assert_frame_equal(frame, expected)


def test_iterator_get_chunk_read_and_empty_input():
    whole = arrow_bridge.read_pandas(DATA)
    with arrow_bridge.read_pandas(DATA, iterator=True, block_size=500) as reader:
        pd.testing.assert_frame_equal(reader.get_chunk(5), whole.iloc[:5])
        nothing = reader.get_chunk(0)  # no values to type its columns by (pandas' own raises StopIteration)
        assert len(nothing) == 0 and list(nothing.columns) == list(whole.columns)
        pd.testing.assert_frame_equal(reader.get_chunk(1000), whole.iloc[5:1005])
        pd.testing.assert_frame_equal(reader.read(), whole.iloc[1005:])
        with pytest.raises(StopIteration):
            reader.get_chunk(3)
    assert [len(f) for f in arrow_bridge.read_pandas(DATA, iterator=True)] == [3000]
    empty = list(arrow_bridge.read_pandas(HEADER, chunksize=10))  # one empty frame, as pandas gives
    assert len(empty) == 1 and list(empty[0].columns) == HEADER.decode().strip().split(",")
    with pytest.raises(ValueError, match="chunksize"):
        arrow_bridge.read_pandas(DATA, chunksize=0)


def test_parquet_writer_dataset_duckdb_and_polars_consume_it(tmp_path):
    expected = arrow_bridge.read_csv(DATA)
    with open_csv(DATA, block_size=2000) as reader, pq.ParquetWriter(tmp_path / "t.parquet", reader.schema) as out:
        for batch in reader:
            out.write_batch(batch)
    assert pq.read_table(tmp_path / "t.parquet").equals(expected)
    pads.write_dataset(open_csv(DATA, block_size=2000), tmp_path / "ds", format="parquet")
    assert pads.dataset(tmp_path / "ds").to_table().sort_by("id").equals(expected)
    duckdb = pytest.importorskip("duckdb")
    stream = open_csv(DATA, block_size=2000)
    assert duckdb.sql("select count(*), sum(id) from stream").fetchall() == [(3000, sum(range(3000)))]
    polars = pytest.importorskip("polars")
    assert polars.from_arrow(open_csv(DATA, block_size=2000)).shape == (3000, 6)


def test_open_csv_refuses_batches_typed_per_chunk():
    """chunk_typed_columns is read_pandas' own: open_csv's batches must share one schema."""
    with pytest.raises(TypeError, match="chunk_typed_columns is read_pandas'"):
        open_csv(io.BytesIO(b"a\n1\n"), chunk_typed_columns=())
