"""benchmarks.peers --sizes on a small file: slices of whole records, every reader timed, ratios."""
import argparse

from benchmarks.peers import bench_sizes, write_prefix
from benchmarks.readers import READERS_BY_NAME


def test_prefix_keeps_whole_lines(tmp_path):
    src = tmp_path / "src.csv"
    src.write_bytes(b"a,b\n" + b"".join(b"%d,x%d\n" % (i, i) for i in range(1000)))
    cut = write_prefix(src, tmp_path / "cut.csv", 100).read_bytes()
    assert len(cut) <= 100 and cut.endswith(b"\n") and src.read_bytes().startswith(cut)
    assert write_prefix(src, tmp_path / "all.csv", 1 << 20).read_bytes() == src.read_bytes()


def test_sizes_row_times_ndp_and_pyarrow_on_each_slice(tmp_path):
    src = tmp_path / "lineitem.csv"
    src.write_bytes(b"k,v,d\n" + b"".join(b"%d,%d.5,1996-03-%02d\n" % (i, i, i % 28 + 1) for i in range(40_000)))
    args = argparse.Namespace(threads=1, repeat=1, reads_per_process=1)
    readers = [READERS_BY_NAME["ndp"], READERS_BY_NAME["pyarrow"]]
    result = bench_sizes(readers, src, [0.1, 0.5], args, tmp_path)
    assert [row["mb"] for row in result["rows"]] == [0.1, 0.5] and result["reads_per_process"] == 3
    for row in result["rows"]:
        assert set(row["best_s"]) == {"ndp", "pyarrow"} and all(t > 0 for t in row["best_s"].values())
        assert row["ndp_vs_pyarrow"] == row["best_s"]["pyarrow"] / row["best_s"]["ndp"]
        assert all(row["first_read_best_s"][name] >= row["best_s"][name] for name in ("ndp", "pyarrow"))
        assert row["summary"]["ndp"]["rows"] == row["summary"]["pyarrow"]["rows"] > 0
