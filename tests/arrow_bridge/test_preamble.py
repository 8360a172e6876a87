"""The preamble (BOM, skipped lines, header): positions and lines it reports."""
import numpy as np

from arrow_bridge import preamble
from arrow_bridge.options import resolve_options
from arrow_bridge.source import open_source


def test_a_header_ending_the_file_without_a_line_end_is_counted_inside_the_buffer(tmp_path, monkeypatch):
    """Its end lies one past the last byte: counting lines there once read a byte past the
    buffer (a crash under ThreadSanitizer when the buffer ended a page)."""
    counted = preamble.count_line_breaks

    def within_bounds(buf: np.ndarray, start: int, end: int) -> int:
        assert 0 <= start <= end <= len(buf), (start, end, len(buf))
        return counted(buf, start, end)

    monkeypatch.setattr(preamble, "count_line_breaks", within_bounds)
    path = tmp_path / "header-only.csv"
    path.write_bytes(b"#" * 16381 + b"\nc0")
    found = preamble.read_preamble(open_source(str(path)), resolve_options(skiprows=1, block_size=64))
    assert found.names == ["c0"] and found.data_line == 2 and found.data_offset == 16385
