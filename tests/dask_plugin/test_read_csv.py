"""``dask_plugin.read_csv`` on a real ``LocalCluster`` (2 worker processes) and
on the synchronous and threaded schedulers.

The result must equal ``arrow_bridge.read_csv`` of the same files concatenated
(row order kept) for every block size and scheduler; errors must come back
with file-global lines; device Reports must add up across workers.
"""
from __future__ import annotations

import gzip
import os
import pickle
import uuid

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import arrow_bridge
import dask_plugin
from arrow_bridge.ranges import plan_cuts
from csvgen import pandas_family_file
from dask_plugin import core
from dask_plugin.io import CsvPartReader
from ndp_core.device import HostOnly


# ---- equality with the whole-file reader ----------------------------------------------------------
@pytest.mark.parametrize("blocksize", [1, 6000, 1 << 30], ids=["below-a-page", "mid", "above-the-file"])
def test_cluster_read_equals_the_files_read_whole(client, csv_dir, blocksize, csv_files, expected_frame, assert_same):
    ddf = dask_plugin.read_csv(str(csv_dir / "part-*.csv"), blocksize=blocksize, include_path_column=True)
    plans = [core.read_file_plan(f, {}) for f in core.expand_paths(str(csv_dir / "part-*.csv"))]
    assert ddf.npartitions == sum(len(plan_cuts(p.data_offset, p.file.size, blocksize)) - 1 for p in plans)
    assert (ddf.npartitions == 3) == (blocksize == 1 << 30)
    assert_same(ddf.compute(), expected_frame(csv_files, path_column="path"))


def test_sync_scheduler_small_pages_and_column_projection(sync, monkeypatch, csv_files, expected_frame, assert_same):
    """Blocks of 100 bytes on 64-byte pages: most cuts fall inside quoted fields,
    some inside long multi-line ones (settled by transfer functions). A
    projection reaches the reader: only the selected file columns are parsed."""
    ddf = dask_plugin.read_csv([str(p) for p in csv_files], blocksize=100, page_size=64, include_path_column="src")
    expected = expected_frame(csv_files, path_column="src")
    assert_same(ddf.compute(), expected)
    parsed = []
    monkeypatch.setattr(CsvPartReader, "_read", lambda self, part, columns, _read=CsvPartReader._read:
                        parsed.append(tuple(columns)) or _read(self, part, columns))
    assert_same(ddf[["value", "src"]].compute(), expected[["value", "src"]])
    # a range holding no record start (cut inside a long quoted field) needs no read
    _, parts, _ = core._partition_plan([str(p) for p in csv_files], destination="host", **core._plan_keywords(
        dict(blocksize=100, page_size=64, include_path_column="src")))
    nonempty = sum(part.start < part.stop for part in parts)
    assert set(parsed) == {("value",)} and len(parsed) == nonempty and 0 < nonempty <= ddf.npartitions
    parsed.clear()
    assert_same(ddf["src"].compute().to_frame(), expected[["src"]])
    assert len(set(parsed)) == 1 and len(parsed[0]) == 1  # one column, for the row count


def test_threaded_scheduler_numpy_dtypes_and_reader_options(csv_dir, csv_files, expected_frame, assert_same):
    opts = dict(usecols=["id", "value"], dtype={"id": "int32"}, na_values=["-1"])
    ddf = dask_plugin.read_csv(str(csv_dir / "part-*.csv"), blocksize=4096, dtype_backend="numpy", **opts)
    with dask.config.set(scheduler="threads"):
        got = ddf.compute()
    assert got.dtypes.to_dict() == {"id": "int32", "value": "float64"}
    assert_same(got, expected_frame(csv_files, dtype_backend="numpy", **opts))


def test_records_larger_than_blocks_give_empty_partitions(client, tmp_path, monkeypatch, expected_frame, assert_same):
    """A 100 KiB quoted field swallows many blocks: those partitions are empty
    but typed. The cuts inside it cannot be settled by probing; their range
    summaries run as tasks on the cluster here."""
    big = '"' + "x,\n" * 40_000 + '"'
    path = tmp_path / "big.csv"
    path.write_text(f"a,b\n1,one\n2,{big}\n3,three\n" + "".join(f"{i},v{i}\n" for i in range(4, 2000)))
    monkeypatch.setattr(core, "PARALLEL_SCAN_BYTES", 0)
    ddf = dask_plugin.read_csv(str(path), blocksize=4096)
    lengths = ddf.map_partitions(len).compute().tolist()
    assert lengths.count(0) >= 20 and sum(lengths) == 1999
    empty = ddf.partitions[lengths.index(0)].compute()
    assert empty.dtypes.to_dict() == {"a": pd.ArrowDtype(pa.int64()), "b": pd.ArrowDtype(pa.string())}
    assert_same(ddf.compute(), expected_frame([path]))


def test_escapes_cr_line_ends_and_header_only_files(sync, tmp_path, expected_frame, assert_same):
    esc = tmp_path / "a-esc.csv"
    esc.write_bytes(b"k;v\r" + b"".join(b'%d;a\\;b\\\rc\r%d;"q\\"\rx"\r' % (i, i) for i in range(1500)))
    (tmp_path / "b-empty.csv").write_bytes(b"k;v\r")
    opts = dict(sep=";", escapechar="\\")
    ddf = dask_plugin.read_csv(str(tmp_path / "*.csv"), blocksize=1000, page_size=16, **opts)
    assert_same(ddf.compute(), expected_frame([esc, tmp_path / "b-empty.csv"], **opts))


def test_headerless_files_with_names(sync, tmp_path, expected_frame, assert_same):
    for i in range(2):
        (tmp_path / f"n{i}.csv").write_text("".join(f'{j},"x\n{j}"\n' for j in range(i * 500, i * 500 + 500)))
    opts = dict(header=None, names=["n", "s"])
    ddf = dask_plugin.read_csv(str(tmp_path / "n*.csv"), blocksize=2000, **opts)
    assert_same(ddf.compute(), expected_frame(sorted(tmp_path.glob("n*.csv")), **opts))


# ---- errors -----------------------------------------------------------------------------------
def _with_a_bad_row(path) -> tuple[int, int]:
    """Puts a row with too many fields before row 390 of ``path``; its ``(line, byte offset)``."""
    data = path.read_bytes()
    at = data.index(b"\n390,") + 1
    path.write_bytes(data[:at] + b"390,too,many,fields,here\n" + data[at:])
    return 1 + data[:at].count(b"\n"), at


def test_a_bad_row_raises_on_the_client_with_its_file_and_global_line(client, tmp_path, awkward_csv):
    path = awkward_csv(tmp_path / "bad.csv", 400, seed=7)
    line, at = _with_a_bad_row(path)
    ddf = dask_plugin.read_csv(str(path), blocksize=4096, sample=4096)  # the sample ends before it
    with pytest.raises(arrow_bridge.CsvParseError) as err:
        ddf.compute()
    assert (err.value.path, err.value.line, err.value.byte_offset) == (str(path), line, at)
    with pytest.raises(arrow_bridge.CsvParseError) as whole:
        arrow_bridge.read_csv(str(path))
    assert str(err.value) == str(whole.value)


def test_values_that_do_not_fit_the_sample_types_ask_for_dtype(sync, tmp_path, expected_frame, assert_same):
    path = tmp_path / "types.csv"
    path.write_text("a,b\n" + "".join(f"{i},x\n" for i in range(20000)) + "2.5,y\n")
    with pytest.raises(arrow_bridge.CsvParseError, match=r"pass dtype=\{'a': \.\.\.\}") as err:
        dask_plugin.read_csv(str(path), blocksize=4096, sample=1000).compute()
    assert err.value.line == 20002 and err.value.column == "a"
    got = dask_plugin.read_csv(str(path), blocksize=4096, sample=1000, dtype={"a": "float64"}).compute()
    assert_same(got, expected_frame([path]))


def test_invalid_arguments_fail_when_building_the_graph(csv_dir):
    pattern = str(csv_dir / "part-*.csv")
    with pytest.raises(TypeError, match="unexpected keyword"):
        dask_plugin.read_csv(pattern, no_such_option=1)
    with pytest.raises(ValueError, match="needs a device"):
        dask_plugin.read_csv(pattern, split="dynamic")
    with pytest.raises(NotImplementedError, match="nrows"):
        dask_plugin.read_csv(pattern, nrows=5)
    with pytest.raises(TypeError, match="factory"):
        dask_plugin.read_csv(pattern, device=HostOnly())
    with pytest.raises(FileNotFoundError):
        dask_plugin.read_csv(str(csv_dir / "nothing-*.csv"))


# ---- the backend entry point -------------------------------------------------------------------------
def test_backend_switch_routes_dd_read_csv_here(client, csv_dir, csv_files, expected_frame, assert_same):
    with dask.config.set({"dataframe.backend": "ndp"}):
        ddf = dd.read_csv(str(csv_dir / "part-*.csv"), blocksize=5000, sample_rows=5)
        arrow = dd.read_csv(str(csv_dir / "part-*.csv"), blocksize=5000, dtype_backend="pyarrow")
        assert any(isinstance(getattr(e, "func", None), CsvPartReader) for e in ddf.expr.walk())
        assert dd.from_dict({"x": [1, 2]}, npartitions=1).x.sum().compute() == 3
    # the pandas backend's dtypes and values by default: code comparing or concatenating frames keeps working
    # (whole files for the pandas backend: its byte blocks split these files' quoted line breaks)
    pandas_backend = dd.read_csv(str(csv_dir / "part-*.csv"), blocksize=None)
    assert ddf.dtypes.to_dict() == pandas_backend.dtypes.to_dict()
    assert_same(ddf.compute(), pandas_backend.compute().reset_index(drop=True))
    assert_same(arrow.compute(), expected_frame(csv_files))
    assert ddf.npartitions > 3


@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gzip"])
def test_backend_switch_gives_the_pandas_backends_values(client, tmp_path, compressed):
    """Dates stay text, NA spellings are missing in text columns, all-null columns are float64, the
    path column is pandas' categorical: as the pandas backend reads the same files (several, compressed)."""
    families = ["date", "text", "timestamp", "int", "bool", "float", "time"]
    for seed in range(3):
        data = pandas_family_file(seed, rows=300, families=families, null_rates=[0.1, 0.5, 0, 0, 0, 0, 1.0])
        name = tmp_path / f"part-{seed}.csv{'.gz' if compressed else ''}"
        name.write_bytes(gzip.compress(data) if compressed else data)
    pattern = str(tmp_path / f"part-*.csv{'.gz' if compressed else ''}")
    with dask.config.set({"dataframe.backend": "ndp"}):
        ours = dd.read_csv(pattern, blocksize=None, include_path_column=True)
    theirs = dd.read_csv(pattern, blocksize=None, include_path_column=True)
    assert ours.dtypes.to_dict() == theirs.dtypes.to_dict()
    pd.testing.assert_frame_equal(ours.compute().reset_index(drop=True), theirs.compute().reset_index(drop=True),
                                  check_exact=True)


def test_compressed_files_with_a_blocksize_warn_as_dask_does(sync, tmp_path):
    (tmp_path / "a.csv.gz").write_bytes(gzip.compress(b"a\n1\n2\n"))
    with pytest.warns(UserWarning, match="gzip compression does not support breaking apart files") as seen:
        ddf = dask_plugin.read_csv(str(tmp_path / "*.csv.gz"))
    assert seen[0].filename == __file__  # the caller's line
    assert ddf.npartitions == 1 and ddf.a.sum().compute() == 3


def test_backend_switch_reads_an_int_column_missing_a_value_as_float64(client, tmp_path):
    """Dask's pandas backend takes dtypes from 10 rows and fails at compute() on a later missing
    int; here the sample decides, and every partition gives float64."""
    path = tmp_path / "ints.csv"
    path.write_text("a,b\n" + "".join(f"{i},x{i}\n" for i in range(3000)) + ",y\n" + "7,z\n" * 3000)
    with dask.config.set({"dataframe.backend": "ndp"}):
        ours = dd.read_csv(str(path), blocksize=8192)
    assert ours.dtypes.to_dict()["a"] == np.float64 and ours.npartitions > 3
    got, expected = ours.compute().reset_index(drop=True), pd.read_csv(path)
    pd.testing.assert_series_equal(got.a, expected.a, check_exact=True)
    assert got.b.tolist() == expected.b.tolist()
    with pytest.raises(ValueError, match="Mismatched dtypes"):
        dd.read_csv(str(path), blocksize=8192).compute()


def test_backend_errors_survive_dasks_reraise(client, tmp_path, awkward_csv):
    """Dask re-raises a backend's error as ``type(e)(message)``: the parse error, not a TypeError."""
    path = awkward_csv(tmp_path / "bad.csv", 400, seed=7)
    line, _ = _with_a_bad_row(path)
    with dask.config.set({"dataframe.backend": "ndp"}):
        ddf = dd.read_csv(str(path), blocksize=4096, sample=4096)
        with pytest.raises(arrow_bridge.CsvParseError, match=f"{path.name}:{line}:"):
            ddf.compute()
    again = arrow_bridge.CsvParseError("only a message")
    assert str(pickle.loads(pickle.dumps(again))) == "only a message"


def test_assume_missing_reads_untyped_integer_columns_as_floats(sync, tmp_path):
    path = tmp_path / "ints.csv"
    path.write_text("a,b,c\n" + "".join(f"{i},{i},x{i}\n" for i in range(2000)) + ",,y\n")
    ddf = dask_plugin.read_csv(str(path), blocksize=4096, sample=1024, assume_missing=True, dtype={"b": "float32"},
                               dtype_backend="numpy")
    assert ddf.dtypes.to_dict()["a"] == np.float64 and ddf.dtypes.to_dict()["b"] == np.float32
    got = ddf.compute()
    assert got.a.isna().sum() == 1 and got.a.iloc[:2000].tolist() == [float(i) for i in range(2000)]


# ---- devices and Reports -----------------------------------------------------------------------
class NamedHostOnly(HostOnly):
    """A baseline device whose Reports say which instance made them."""

    def __init__(self, page_size: int = 4096):
        super().__init__(page_size)
        self.name = f"host-only-{os.getpid()}-{uuid.uuid4().hex[:8]}"


def test_worker_plugin_gives_each_worker_one_device_reused_by_its_tasks(client, csv_dir, csv_files, expected_frame,
                                                                        assert_same):
    key = dask_plugin.install_devices(client, NamedHostOnly, name="named-host")
    plugin_devices = client.run(lambda dask_worker: dask_worker.plugins["ndp-device-named-host"].device.name)
    assert len(set(plugin_devices.values())) == 2
    ddf = dask_plugin.read_csv(str(csv_dir / "part-*.csv"), blocksize=4096, device=key, split="host")
    with dask_plugin.job_report() as job:
        got = ddf.compute()
    assert_same(got, expected_frame(csv_files))
    assert job.partitions == ddf.npartitions and len(job.reports) == ddf.npartitions
    used = {(e.worker, e.report.device) for e in job.entries}
    assert used <= set(plugin_devices.items())  # every task used its worker's plugin device
    assert len({w for w, _ in used}) == len(used)  # one device per worker


def test_job_report_adds_up_the_partitions_on_every_scheduler(client, csv_dir, csv_files):
    data_bytes = sum(os.path.getsize(p) - len(p.read_bytes().split(b"\n", 1)[0]) - 1 for p in csv_files)
    ddf = dask_plugin.read_csv(str(csv_dir / "part-*.csv"), blocksize=8192, device=HostOnly)
    totals = {}
    for scheduler in ("distributed", "sync", "threads"):
        with dask.config.set(scheduler=client if scheduler == "distributed" else scheduler):
            with dask_plugin.job_report(client if scheduler == "distributed" else None) as job:
                ddf.compute()
        report = job.report
        assert report.runs == ddf.npartitions, scheduler
        totals[scheduler] = (report.text_bytes, report.pages["host"], report.tasks)
    assert totals["distributed"] == totals["sync"] == totals["threads"]
    assert totals["sync"][0] == data_bytes


def test_job_report_records_into_an_enclosing_collect(sync, csv_dir):
    from ndp_core.report import collect

    ddf = dask_plugin.read_csv(str(csv_dir / "part-0.csv"), blocksize=4096, device=HostOnly)
    with collect() as outer:
        with dask_plugin.job_report(client=None) as job:
            ddf.compute()
    assert len(outer.reports) == 1 and outer.reports[0].runs == job.report.runs == ddf.npartitions


def test_fsspec_urls(sync, csv_files, expected_frame, assert_same):
    """Files behind an fsspec filesystem (here ``memory://``) are cut and read the same way."""
    import fsspec

    fs = fsspec.filesystem("memory")
    for p in csv_files:
        fs.pipe(f"/dask-plugin-test/{p.name}", p.read_bytes())
    try:
        ddf = dask_plugin.read_csv("memory://dask-plugin-test/part-*.csv", blocksize=4096)
        assert ddf.npartitions > len(csv_files)
        assert_same(ddf.compute(), expected_frame(csv_files))
    finally:
        fs.rm("/dask-plugin-test", recursive=True)


def test_storage_options_reach_every_read(sync, csv_files, expected_frame, assert_same):
    """fsspec's ``dir://`` filesystem cannot open anything without its root and
    target: the headers, the sample, the range probes and the partitions all
    need ``storage_options``."""
    import fsspec

    fs = fsspec.filesystem("memory")
    for p in csv_files:
        fs.pipe(f"/dask-plugin-options/{p.name}", p.read_bytes())
    try:
        ddf = dask_plugin.read_csv("dir://part-*.csv", blocksize=4096,
                                   storage_options={"path": "/dask-plugin-options", "target_protocol": "memory"})
        assert ddf.npartitions > len(csv_files)
        assert_same(ddf.compute(), expected_frame(csv_files))
    finally:
        fs.rm("/dask-plugin-options", recursive=True)


def test_planning_opens_each_file_once(sync, monkeypatch, csv_files):
    """The preamble and the cut probes share one open per file (one round trip
    less per remote file). Besides: the first file twice more for the sample
    (its record range, then its rows), and a file once per range summary its
    cuts need (they may run on workers). Counted where every local open goes."""
    from collections import Counter

    from arrow_bridge.source import PathSource

    files = [str(p) for p in csv_files]
    plans = [core.read_file_plan(f, {}, None, 4096, 4096) for f in core.expand_paths(files)]
    expected = Counter(files) + Counter({files[0]: 2}) + Counter({p.file.path: len(p.planner.jobs) for p in plans})
    opened = []
    monkeypatch.setattr(PathSource, "__init__", lambda self, path, _init=PathSource.__init__: opened.append(path) or
                        _init(self, path))
    ddf = dask_plugin.read_csv(files, blocksize=4096)
    assert ddf.npartitions > len(files)
    assert Counter(opened) == expected


def test_emulated_ssd_splits_give_the_same_frame_and_a_job_report(sync, csv_dir, csv_files, expected_frame,
                                                                  assert_same):
    expected = expected_frame(csv_files)
    pages = {}
    for split in ("device", "static:0.5", "dynamic"):
        # Reader blocks of 4 KiB: several device tasks per partition (static shares apply per partition).
        ddf = dask_plugin.read_csv(str(csv_dir / "part-*.csv"), blocksize=32768, block_size=4096,
                                   device="modern-gen4", split=split)
        with dask_plugin.job_report(client=None) as job:
            assert_same(ddf.compute(), expected)
        report = job.report
        assert report.runs == ddf.npartitions and report.split == split and report.device == "modern-gen4"
        pages[split] = report.pages
    assert pages["device"]["host"] == 0 < pages["device"]["device"]
    assert 0 < pages["static:0.5"]["device"] < pages["device"]["device"]
    assert sum(pages["dynamic"].values()) == sum(pages["device"].values())


def test_cluster_devices_with_a_fault_plan_give_the_same_frame_and_count_the_faults(client, csv_dir, csv_files,
                                                                                    expected_frame, assert_same):
    from device_emulator import FaultPlan

    plan = FaultPlan(media_error=0.1, app_failure=0.1, link_timeout=0.1, tq_overflow=0.1, seed=7)
    key = dask_plugin.install_devices(client, "modern-gen4", name="faulty", faults=plan)
    ddf = dask_plugin.read_csv(str(csv_dir / "part-*.csv"), blocksize=16384, block_size=2048, device=key,
                               split="dynamic")
    with dask_plugin.job_report(client) as job:
        got = ddf.compute()
    assert_same(got, expected_frame(csv_files))
    report = job.report
    assert sum(report.faults.values()) > 0 and report.pages["raw"] > 0
    assert report.runs == ddf.npartitions and len(job.workers) == 2
    # each worker's device models the threads it parses with: 2 workers x 1 thread, not 2 x the profile's 8
    assert report.units["host_cpu"] == 2


def test_storage_options_never_show_in_errors_reprs_or_task_keys(sync):
    """Credentials in storage_options stay out of what users print and share."""
    import fsspec

    secret = "SECRET-TOKEN-4f1c"
    data = b"a,b\n" + b"".join(b"%d,%d\n" % (i, i) for i in range(3000)) + b"1,2,3\n"
    with fsspec.filesystem("memory").open("memory://creds/bad.csv", "wb") as f:
        f.write(data)
    options = {"token": secret}
    with pytest.raises(arrow_bridge.CsvParseError) as host_error:
        arrow_bridge.read_csv("memory://creds/bad.csv", storage_options=options)
    ddf = dask_plugin.read_csv("memory://creds/bad.csv", storage_options=options, blocksize=4096, sample=4096)
    with pytest.raises(arrow_bridge.CsvParseError) as dask_error:
        ddf.compute()
    shown = [str(host_error.value), repr(host_error.value), str(dask_error.value), repr(ddf), ddf._name,
             *map(str, ddf.__dask_graph__().keys())]
    assert not [text for text in shown if secret in text]


@pytest.mark.parametrize("keywords", [{}, dict(usecols=["c", "Unnamed: 0"]), dict(dtype={"a.1": "float32"})],
                         ids=["names", "usecols order", "a repeat's dtype"])
def test_backend_switch_names_columns_as_the_pandas_backend(sync, tmp_path, keywords):
    """An empty header field is ``Unnamed: i``, a repeat ``a.1`` (with a dtype of its own), ``usecols``
    come in the file's order; a projection still gets its own order."""
    path = tmp_path / "indexed.csv"
    path.write_text(",a,c,a\n" + "".join(f"{i},{i},x{i},{i}.5\n" for i in range(2000)))
    with dask.config.set({"dataframe.backend": "ndp"}):
        ours = dd.read_csv(str(path), blocksize=8192, **keywords)
    theirs = dd.read_csv(str(path), blocksize=8192, **keywords)
    assert ours.npartitions > 2 and ours.dtypes.to_dict() == theirs.dtypes.to_dict()
    pd.testing.assert_frame_equal(ours.compute().reset_index(drop=True), theirs.compute().reset_index(drop=True),
                                  check_exact=True)
    projected = list(reversed(ours.columns))
    assert ours[projected].compute().columns.tolist() == projected


# ---- NumPy dtypes: every partition has the meta's ---------------------------------------------------
NUMPY = dict(dtype_backend="numpy", semantics="pandas")


def _frames(path, blocksizes=(None, 8), **options):
    """The computed frames at each blocksize (1-byte pages: cuts anywhere), with the meta's dtypes."""
    out = []
    for blocksize in blocksizes:
        ddf = dask_plugin.read_csv(str(path), blocksize=blocksize, page_size=1, **options)
        frame = ddf.compute()
        assert frame.dtypes.astype(str).tolist() == ddf.dtypes.astype(str).tolist()
        out.append(frame.reset_index(drop=True))
    return out


def test_a_bool_column_missing_a_value_reads_the_same_at_every_blocksize(sync, tmp_path):
    path = tmp_path / "flags.csv"
    path.write_text("a,b\nTrue,1\n,2\nFalse,3\n")
    whole, parts = _frames(path, **NUMPY)
    pd.testing.assert_frame_equal(whole, parts)
    assert whole.a.tolist()[::2] == parts.a.tolist()[::2] and len({type(v) for v in parts.a.tolist()[::2]}) == 1


def test_a_later_missing_value_numpy_cannot_hold_raises_as_dask_does(sync, tmp_path):
    path = tmp_path / "late.csv"
    path.write_text("a,b\n" + "".join(f"{i},True\n" for i in range(2000)) + ",\n")
    ddf = dask_plugin.read_csv(str(path), blocksize=4096, sample=1000, **NUMPY)
    with pytest.raises(ValueError, match=r"Mismatched dtypes found in .*late.csv \(bytes \d+-\d+\): 'a': found "
                                         r"float64, expected int64; 'b': found object, expected bool"):
        ddf.compute()
    typed = dask_plugin.read_csv(str(path), blocksize=4096, sample=1000, dtype={"a": "float64", "b": "boolean"},
                                 **NUMPY).compute()
    assert typed.a.isna().sum() == 1 and typed.b.dtype == "boolean" and typed.b.isna().sum() == 1


def test_filters_keep_the_types_of_the_unfiltered_read(sync, tmp_path):
    path = tmp_path / "b.csv"
    path.write_text("a,b\nx,591\n1.5,\n")
    plain = dask_plugin.read_csv(str(path), usecols=["b"], **NUMPY).compute()
    kept = dask_plugin.read_csv(str(path), usecols=["b"], filters=[("b", "<=", 591)], **NUMPY).compute()
    assert plain.b.dtype == kept.b.dtype == np.float64 and kept.b.tolist() == [591.0]
    path.write_text("a,b\n34,None\n")
    ddf = dask_plugin.read_csv(str(path), **NUMPY)
    pushed = ddf[ddf.a > 34]
    assert pushed.compute().dtypes.to_dict() == pushed.dtypes.to_dict() == {"a": np.int64, "b": np.float64}


def test_pandas_extension_dtypes_are_honoured_exactly(sync, tmp_path):
    path = tmp_path / "ext.csv"
    path.write_text("a,b,c\n9007199254740993,True,x\n,,y\n3,False,x\n")
    dtype = {"a": "Int64", "b": "boolean", "c": "category"}
    for frame in _frames(path, dtype=dtype, **NUMPY):
        expected = pd.read_csv(path, dtype=dtype)
        assert frame.a.tolist() == expected.a.tolist() and frame.a.dtype == "Int64"
        assert frame.b.tolist() == expected.b.tolist() and frame.b.dtype == "boolean"
        assert frame.c.astype(str).tolist() == ["x", "y", "x"] and frame.c.dtype == "category"


def test_an_int_past_2_53_missing_a_value_is_float64_as_in_pandas(sync, tmp_path):
    path = tmp_path / "big.csv"
    path.write_text("a,b\n9007199254740993,1\n,2\n")
    for frame in _frames(path, **NUMPY):
        pd.testing.assert_series_equal(frame.a, pd.read_csv(path).a)


def test_a_header_without_a_line_break_and_an_empty_file_read_as_no_rows(sync, tmp_path):
    header_only = tmp_path / "h.csv"
    header_only.write_text("a,b")
    for options in ({}, NUMPY):
        frame = dask_plugin.read_csv(str(header_only), **options).compute()
        assert list(frame.columns) == ["a", "b"] and len(frame) == 0
    empty, rows = tmp_path / "e0.csv", tmp_path / "e1.csv"
    empty.write_text("")
    rows.write_text("1,x\n2,y\n")
    for options in ({}, NUMPY):
        frame = dask_plugin.read_csv([str(empty), str(rows)], header=None, names=["a", "b"], **options).compute()
        assert frame.a.tolist() == [1, 2] and frame.b.tolist() == ["x", "y"]


def test_extension_dtypes_by_position_and_with_the_pyarrow_backend(sync, tmp_path):
    path = tmp_path / "ext.csv"
    path.write_text("a,b,c\n9007199254740993,True,x\n,,y\n3,False,x\n")
    for options, dtype in ((NUMPY, {0: "Int64"}), ({}, {"a": "Int64"}), ({}, {0: "Int64"})):
        frame = dask_plugin.read_csv(str(path), dtype=dtype, **options).compute()
        pd.testing.assert_series_equal(frame.a, pd.read_csv(path, dtype=dtype).a)


def test_reads_differing_in_their_categories_are_told_apart(sync, tmp_path):
    path = tmp_path / "cats.csv"
    path.write_text("c\nx\ny\nx\n")
    listed = dask_plugin.read_csv(str(path), dtype={"c": pd.CategoricalDtype(["z", "y", "x"])}, **NUMPY)
    inferred = dask_plugin.read_csv(str(path), dtype={"c": "category"}, **NUMPY)
    assert listed._name != inferred._name and listed.c.cat.known and not inferred.c.cat.known
    assert listed.compute().c.cat.categories.tolist() == ["z", "y", "x"]
    assert inferred.compute().c.cat.categories.tolist() == ["x", "y"]


def test_a_column_empty_in_the_sample_is_float64_with_assume_missing_too(sync, tmp_path):
    path = tmp_path / "late.csv"
    path.write_text("a,b\n" + "".join(f"{i},\n" for i in range(300)) + "".join(f"{i},{i}\n" for i in range(300)))
    frame = dask_plugin.read_csv(str(path), assume_missing=True, sample=1000, blocksize=2000, **NUMPY).compute()
    assert frame.dtypes.to_dict() == {"a": np.float64, "b": np.float64} and frame.b.iloc[300:].tolist()[:2] == [0, 1]


def test_a_typed_int_column_missing_a_value_raises_as_pandas(sync, tmp_path):
    path = tmp_path / "na.csv"
    path.write_text("a,b\n1,x\n,y\n3,z\n")
    with pytest.raises(ValueError, match="Integer column has NA values in column 'a'"):
        dask_plugin.read_csv(str(path), dtype={"a": "int64"}, **NUMPY)
    assert dask_plugin.read_csv(str(path), dtype={"a": "int64"}).compute().a.isna().sum() == 1  # Arrow holds it
