"""Hostile shapes end in a Table or a clear error, never a crash or a hang:
files of only quotes, delimiters or newlines, NUL bytes, very wide rows, and
multi-byte UTF-8 characters cut by every block boundary."""
from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.csv as pacsv
import pytest

import arrow_bridge
from arrow_bridge import CsvParseError


def _read(data: bytes, **options) -> "pa.Table | CsvParseError":
    try:
        return arrow_bridge.read_csv(io.BytesIO(data), **options)
    except CsvParseError as err:
        return err


@pytest.mark.parametrize("data, expected", [
    (b'"' * 1000, (0, 1)),  # one quoted header name of escaped quotes
    (b"," * 1000, (0, 1001)),  # a header of 1001 empty names
    (b"a,b\n1,\x00\n\x00,2\n", (2, 2)),  # NUL bytes are data
])
def test_degenerate_files_read_as_tables(data, expected):
    table = _read(data)
    assert isinstance(table, pa.Table) and (table.num_rows, table.num_columns) == expected


@pytest.mark.parametrize("data, message", [
    (b'"' * 1001, "unterminated quoted field"),
    (b"\n" * 1000, "empty CSV file"),
    (b"", "empty CSV file"),
])
def test_degenerate_files_raise_clear_errors(data, message):
    err = _read(data)
    assert isinstance(err, CsvParseError) and message in str(err) and err.line == 1


def test_nul_bytes_read_as_pyarrow_reads_them():
    data = b"a,b\n1,\x00x\n\x00,2\n"
    assert arrow_bridge.read_csv(io.BytesIO(data)).equals(pacsv.read_csv(io.BytesIO(data)))


def test_wide_rows_read_as_pyarrow_reads_them():
    columns = 20000
    data = (",".join(f"c{i}" for i in range(columns)) + "\n" + ",".join(str(i) for i in range(columns)) + "\n"
            ).encode()
    assert arrow_bridge.read_csv(io.BytesIO(data)).equals(pacsv.read_csv(io.BytesIO(data)))


def test_multibyte_characters_cut_by_every_block_boundary():
    """Two-, three- and four-byte UTF-8 characters; block sizes that put a boundary
    inside each of them somewhere in the file."""
    rows = [f"{i},{'é€𝄞ß' * (i % 5)}x,{'日本' * (i % 3)}" for i in range(300)]
    data = ("n,s,t\n" + "\n".join(rows) + "\n").encode()
    expected = pacsv.read_csv(io.BytesIO(data))
    for block_size in range(61, 97):
        assert arrow_bridge.read_csv(io.BytesIO(data), block_size=block_size).equals(expected), block_size


def test_a_truncated_character_cut_by_a_block_boundary_makes_the_column_binary():
    good = "".join(f"{i},é{i}\n" for i in range(200)).encode()
    data = b"n,s\n" + good + b"200,\xe2\x82\n" + good  # a truncated euro sign, then more rows
    for block_size in (64, 65, 66, 1 << 20):
        table = arrow_bridge.read_csv(io.BytesIO(data), block_size=block_size)
        assert table.schema.field("s").type == pa.binary()  # as pyarrow: invalid UTF-8 makes the column binary
        assert table.column("s")[200].as_py() == b"\xe2\x82"
        assert table.equals(pacsv.read_csv(io.BytesIO(data))), block_size
