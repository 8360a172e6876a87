"""Partitions in GPU memory: dask_plugin.gpu_tables on a real LocalCluster (kernels on the simulator here)."""
from __future__ import annotations

import dask
import pyarrow as pa
import pytest

import arrow_bridge
import dask_plugin


def _arrow_of(table) -> pa.Table:
    return table.to_arrow()  # runs on the worker: the GPU table stays there


@pytest.mark.parametrize("options", [{}, {"gpu_share": 1.0}, {"device": "modern-gen4", "split": "static:0.5"}])
def test_gpu_tables_on_a_local_cluster_equal_the_files(client, csv_files, options) -> None:
    parts = dask_plugin.gpu_tables([str(p) for p in csv_files], blocksize="8KiB", **options)
    assert len(parts) > len(csv_files)  # several partitions per file
    tables = dask.compute(*[dask.delayed(_arrow_of)(part) for part in parts])
    got = pa.concat_tables(tables)
    sample = dask_plugin.read_csv([str(p) for p in csv_files], blocksize="8KiB")._meta
    expected = pa.concat_tables(arrow_bridge.read_csv(p, dtype={n: t for n, t in zip(
        got.schema.names, got.schema.types)}) for p in csv_files)
    assert got.equals(expected) and list(sample.columns) == got.column_names


def test_gpu_destination_without_cudf_points_to_gpu_tables(csv_files) -> None:
    try:
        import dask_cudf  # noqa: F401
    except ImportError:
        with pytest.raises(RuntimeError, match="gpu_tables"):
            dask_plugin.read_csv(str(csv_files[0]), destination="gpu")
    else:
        ddf = dask_plugin.read_csv(str(csv_files[0]), destination="gpu")
        assert len(ddf.compute()) == 300


def test_gpu_share_needs_the_gpu_destination(csv_files) -> None:
    with pytest.raises(ValueError, match="destination='gpu'"):
        dask_plugin.read_csv(str(csv_files[0]), gpu_share=0.5)
    with pytest.raises(ValueError, match="destination must be"):
        dask_plugin.read_csv(str(csv_files[0]), destination="tpu")
