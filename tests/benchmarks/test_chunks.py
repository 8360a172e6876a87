"""benchmarks.chunks: the file with text late, and the check that ndp's chunks are pandas'."""
from __future__ import annotations

import pandas as pd

from benchmarks.chunks import check_alike, with_text_late


def test_the_late_text_file_breaks_one_chunk_and_reads_as_pandas(tmp_path):
    lineitem = tmp_path / "lineitem.csv"
    lineitem.write_bytes(b"l_orderkey,l_partkey,l_comment\n" +
                         b"".join(b'%d,%d,"a, b"\n' % (i, i * 7) for i in range(3000)))
    late = with_text_late(lineitem)
    chunks = [frame.l_partkey.dtype.kind for frame in pd.read_csv(late, chunksize=500)]
    assert chunks == ["i"] * 4 + ["O"] + ["i"]  # the text two thirds of the way down, its chunk text
    check_alike(late, 500)
