"""read_csv(progress=True): a tqdm bar over the bytes parsed, the same Table."""
from __future__ import annotations

import io
import re

import arrow_bridge


def test_a_bar_over_the_file_reaches_its_size(tmp_path, capsys) -> None:
    path = tmp_path / "x.csv"
    path.write_bytes(b"a,b\n" + b"".join(b"%d,name %d\n" % (k, k) for k in range(5000)))
    table = arrow_bridge.read_csv(path, progress=True, block_size=4096)
    assert table.equals(arrow_bridge.read_csv(path, block_size=4096))
    err = capsys.readouterr().err
    size = path.stat().st_size
    assert "read_csv" in err and "100%" in err
    assert re.search(r"%d/%d|%.1fk/%.1fk" % (size, size, size / 1024, size / 1024), err), err[-200:]


def test_without_a_known_size_the_bar_counts(capsys) -> None:
    frame = arrow_bridge.read_pandas(io.BytesIO(b"a\n" + b"1\n" * 1000), progress=True, block_size=256)
    assert len(frame) == 1000
    assert "read_csv" in capsys.readouterr().err


def test_a_failed_read_closes_its_bar(tmp_path, capsys) -> None:
    path = tmp_path / "bad.csv"
    path.write_bytes(b"a,b\n1,2\n3\n")
    try:
        arrow_bridge.read_csv(path, progress=True)
    except arrow_bridge.CsvParseError:
        pass
    assert "100%" not in capsys.readouterr().err
