"""The first problem in file order is the one reported, whatever the block size
and wherever the span ran.

A span that holds the end of the input can meet a tokenizer error (an
unterminated quote at the end, a record with too many fields) after complete
records holding a value that does not convert to its column's explicit type.
Read in small blocks, the value's span is checked first and its error wins;
read in one block, the tokenizer error used to win because the rows before it
were never converted (fuzz corpus case ``error-depends-on-block-size``).
"""
from __future__ import annotations

import pytest

import arrow_bridge

CASES = [
    # (input, dtype, line, byte offset, reason) of the first problem.
    pytest.param(b'a\nx\n"', {"a": "int64"}, 2, 2, "cannot convert 'x' to int64", id="then-unterminated-quote"),
    pytest.param(b"a\nx\n1,2\n", {"a": "int64"}, 2, 2, "cannot convert 'x' to int64", id="then-too-many-fields"),
    pytest.param(b'a,b\n1,2\n3,x\n"4', {"b": "int32"}, 3, 10, "cannot convert 'x' to int32",
                 id="second-column-later-row"),
]


@pytest.mark.parametrize("data,dtype,line,offset,reason", CASES)
def test_the_first_problem_is_reported_at_every_block_size_on_host_and_device(
        devices, write_file, data, dtype, line, offset, reason):
    path = str(write_file("bad.csv", data))
    want = (line, offset, reason)
    seen = {}
    for block_size in [*range(1, len(data) + 2), None]:
        for where in ("host", "device"):
            device = {"device": devices("modern-gen4"), "split": "device"} if where == "device" else {}
            with pytest.raises(arrow_bridge.CsvParseError) as error:
                arrow_bridge.read_csv(path, dtype=dtype, block_size=block_size, **device)
            seen[where, block_size] = (error.value.line, error.value.byte_offset, error.value.reason)
    assert {key: got for key, got in seen.items() if got != want} == {}


BAD_ROW_THEN_ERROR = [
    pytest.param(b"a,b\n1,2\n3\n4,zz\n", {"b": "int64"}, id="bad-row-then-bad-value"),
    pytest.param(b'a,b\n1,2\n3\n4,"open\n', {}, id="bad-row-then-unterminated-quote"),
]


@pytest.mark.parametrize("data,dtype", BAD_ROW_THEN_ERROR)
@pytest.mark.parametrize("where", ["host", "device"])
@pytest.mark.parametrize("block_size", [4, 1 << 20])
def test_bad_rows_before_an_error_are_reported_first(devices, write_file, data, dtype, where, block_size):
    """on_bad_lines="warn" or a handler sees line 3's bad row, then line 4's error raises (as
    pandas and pyarrow, going line by line, meet them), in one span or two."""
    path = str(write_file("bad.csv", data))
    device = {"device": devices("modern-gen4"), "split": "device"} if where == "device" else {}
    with pytest.warns(arrow_bridge.CsvBadLineWarning, match=r":3: ") as caught:
        with pytest.raises(arrow_bridge.CsvParseError) as raised:
            arrow_bridge.read_csv(path, dtype=dtype, on_bad_lines="warn", block_size=block_size, **device)
    assert raised.value.line == 4 and len(caught) == 1
    seen = []
    with pytest.raises(arrow_bridge.CsvParseError):
        arrow_bridge.read_csv(path, dtype=dtype, block_size=block_size, **device,
                              on_bad_lines=lambda row: seen.append(row.number) or "skip")
    assert seen == [3]
