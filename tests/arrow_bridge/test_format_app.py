"""The writer's StorageApp (``arrow_bridge.kernels.format_app.csv_format``)
run by an engine: the same text as the host kernel, whole pages per MWRITE,
only ABI statuses (OK, OUT_OF_SPACE, BAD_INPUT) and the writer's own work
counters."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from arrow_bridge import writer
from arrow_bridge.kernels import formatting
from arrow_bridge.kernels.format_app import csv_format

ndp_core = pytest.importorskip("ndp_core")
COUNTERS = formatting.WRITER_COUNTERS


def batch_of(table: pa.Table, flags: int) -> np.ndarray:
    dialect = writer._dialect(",", '"', "", "\n", True)
    encoder = writer._Encoder(table.schema, writer._plans(table.schema, ""), dialect)
    return encoder.encode(encoder.prepare(table.to_batches()[0]), flags)[0]


def host_text(batch: np.ndarray) -> bytes:
    out = np.empty(1 << 16, np.uint8)
    code, end, _ = formatting.format_batch(batch, out, 0, COUNTERS.zeros())
    assert code == formatting.OK
    return out[:end].tobytes()


TABLE = pa.table({"i": [1, None, -3], "f": [0.1, 2.5, None], "s": ["a,b", None, ""],
                  "d": pa.array([0, 1, None], pa.date32()), "b": [True, False, None]})


def test_batches_come_out_in_whole_pages_and_the_last_flushes(mwrite_engine, mwrite_app):
    inst, stream, path = mwrite_app
    first = batch_of(TABLE, formatting.F_HEADER_LINE)
    last = batch_of(TABLE, formatting.F_LAST)
    want = host_text(first) + host_text(last)
    counters = COUNTERS.zeros()
    written_total, page = 0, 0
    for batch in (first, last):
        out = np.empty(1 << 12, np.uint8)
        done = mwrite_engine.wait(mwrite_engine.submit_mwrite(inst, stream, page, batch, [out], counters))
        assert done.status == ndp_core.Status.OK
        written = done.result_sizes[0]
        if batch is first:
            assert written % mwrite_engine.page_size == 0 and written < len(host_text(first))
        written_total += written
        page += written // mwrite_engine.page_size
    assert written_total == len(want) and path.read_bytes()[:len(want)] == want
    values = COUNTERS.values(counters)
    assert values["rows"] == 6 and values["fields"] == 30 and values["batches"] == 2
    assert (values["ints"], values["floats"], values["bools"], values["temporals"], values["nulls"]) == (4, 4, 4, 4, 10)
    assert values["string_bytes"] == 2 * len("a,b") and values["bytes_scanned"] == first.size + last.size


def test_a_small_output_is_out_of_space_with_the_size_needed_and_no_trace(mwrite_engine, mwrite_app):
    inst, stream, _ = mwrite_app
    batch = batch_of(TABLE, formatting.F_HEADER_LINE | formatting.F_LAST)
    counters = COUNTERS.zeros()
    done = mwrite_engine.wait(mwrite_engine.submit_mwrite(inst, stream, 0, batch, [np.empty(8, np.uint8)], counters))
    assert done.status == ndp_core.Status.OUT_OF_SPACE and done.result_sizes[0] == len(host_text(batch))
    assert not counters.any()
    done = mwrite_engine.wait(mwrite_engine.submit_mwrite(inst, stream, 0, batch, [np.empty(done.result_sizes[0], np.uint8)],
                                            counters))
    assert done.status == ndp_core.Status.OK and COUNTERS.values(counters)["batches"] == 1


def test_bad_input_names_the_field_or_minus_one(mwrite_engine, mwrite_app):
    inst, stream, _ = mwrite_app
    out = [np.empty(1 << 12, np.uint8)]
    dates = pa.table({"x": [1, 2], "d": pa.array([0, 2_932_897], pa.date32())})  # 10000-01-01: no CSV text
    done = mwrite_engine.wait(mwrite_engine.submit_mwrite(inst, stream, 0, batch_of(dates, formatting.F_LAST), out))
    assert done.status == ndp_core.Status.BAD_INPUT and done.error_offset == 1 * 2 + 1
    done = mwrite_engine.wait(mwrite_engine.submit_mwrite(inst, stream, 0, np.zeros(256, np.uint8), out))
    assert done.status == ndp_core.Status.BAD_INPUT and done.error_offset == -1
    done = mwrite_engine.wait(mwrite_engine.submit_mwrite(inst, stream, 0, batch_of(TABLE, formatting.F_LAST), []))
    assert done.status == ndp_core.Status.BAD_INPUT  # nowhere to put the text


def test_a_state_without_room_for_a_page_is_bad_input(mwrite_engine, tmp_path):
    stream = mwrite_engine.stream_create(str(tmp_path / "x.csv"), writable=True)
    inst = mwrite_engine.minit(csv_format.address, state_size=formatting.STATE_HEADER, streams=[stream])
    try:
        done = mwrite_engine.wait(mwrite_engine.submit_mwrite(inst, stream, 0, batch_of(TABLE, formatting.F_LAST),
                                                [np.empty(1 << 12, np.uint8)]))
        assert done.status == ndp_core.Status.BAD_INPUT and done.error_offset == -1
    finally:
        mwrite_engine.mdeinit(inst)
        mwrite_engine.stream_close(stream)


def test_statuses_are_the_abi_s():
    assert {int(ndp_core.Status.OK), int(ndp_core.Status.OUT_OF_SPACE)} == {formatting.OK, formatting.OUT_OF_SPACE}
    assert formatting.BAD_VALUE >= ndp_core.engine.APP_PRIVATE_STATUS_BASE  # never returned by the app
