"""Invalid UTF-8 in an explicitly string-typed column, read on the device: the
host's CsvParseError (same path, line, column, byte offset and reason), never
pyarrow's offsets validation error.

The app stops converting a failing column at its bad value and reports only
the earliest failure, so the host side must not wrap a failed column's
regions (``device_buffers.read_arena``): a string column's offsets there
outrun its data (fuzz corpus case ``device-invalid-utf8-string-column``).
"""
from __future__ import annotations

import pytest

import arrow_bridge

CASES = [
    pytest.param(b"a\n\x9f\n", {"a": "string"}, id="only-value"),
    pytest.param(b"a\nok\n\x9f\nfine\n", {"a": "large_string"}, id="large-string-after-a-good-row"),
    # Two columns fail: the int earlier in the file is reported, the string one must not be wrapped.
    pytest.param(b"a,b\nx,1\n1,\xff\xfe\n", {"a": "int64", "b": "string"}, id="two-failing-columns"),
    # An inferred column beside the failing one is wrapped as usual.
    pytest.param(b"a,b\n1,\xc3\n", {"b": "string"}, id="beside-an-inferred-column"),
    # Many rows, a small block: the bad value is in a later task.
    pytest.param(b"a,b\n" + b"1,x\n" * 2000 + b"2,\xe2\x82\n" + b"3,y\n" * 10, {"b": "string"}, id="later-task"),
]


@pytest.mark.parametrize("data,dtype", CASES)
def test_device_reports_the_hosts_error(devices, write_file, data, dtype):
    path = str(write_file("bad.csv", data))
    with pytest.raises(arrow_bridge.CsvParseError) as on_host:
        arrow_bridge.read_csv(path, dtype=dtype, block_size=4096)
    with pytest.raises(arrow_bridge.CsvParseError) as on_device:
        arrow_bridge.read_csv(path, dtype=dtype, block_size=4096, device=devices("modern-gen4"), split="device")
    fields = ("path", "line", "column", "byte_offset", "reason")
    assert [getattr(on_device.value, f) for f in fields] == [getattr(on_host.value, f) for f in fields]
    assert on_host.value.reason.startswith("cannot convert")
