"""GpuColumn/GpuTable: the interfaces other GPU libraries take, null policies, what a notebook shows."""
from __future__ import annotations

import pickle

import numpy as np
import pyarrow as pa
import pytest

from cuda_p2p import runtime, to_gpu


@pytest.fixture
def table():
    return to_gpu(pa.table({"x": [1.5, 2.5, 3.5], "n": [1, None, 3], "s": ["a", "b", None], "b": [True, False, True]}))


def test_cuda_array_interface_of_values_without_nulls(table) -> None:
    interface = table["x"].__cuda_array_interface__
    assert interface["shape"] == (3,) and interface["typestr"] == "<f8" and interface["version"] == 3
    assert table["x"].device_values().copy_to_host().tolist() == [1.5, 2.5, 3.5]


@pytest.mark.parametrize("name, reason", [("n", "nulls"), ("s", "not a flat number array"),
                                          ("b", "not a flat number array")])
def test_no_array_interface_where_the_type_does_not_allow(table, name: str, reason: str) -> None:
    assert not hasattr(table[name], "__cuda_array_interface__")
    with pytest.raises(AttributeError, match=reason):
        table[name].__cuda_array_interface__


def test_a_table_pickles_through_the_host_and_lands_on_the_gpu(table) -> None:
    """As Dask moves a partition between workers: each buffer copied to the host, then up again."""
    again = pickle.loads(pickle.dumps(table))
    assert again.to_arrow().equals(table.to_arrow()) and again.schema == table.schema
    assert hasattr(again["x"].values, "copy_to_host")  # a device array again
    assert again["n"].validity is not None and again["b"].validity is None


def test_temporal_values_are_their_integer_storage() -> None:
    gpu = to_gpu(pa.table({"d": pa.array([0, 1, 365], pa.date32())}))
    assert gpu["d"].__cuda_array_interface__["typestr"] == "<i4"


def test_repr_and_html_name_rows_types_and_bytes(table) -> None:
    text = repr(table)
    assert "3 rows x 4 columns" in text and "double" in text and "1 null" in text
    assert "on " + runtime.describe() in text
    html = table._repr_html_()
    assert "<table>" in html and "<td>x</td>" in html


@pytest.mark.skipif(runtime.cupy() is not None, reason="CuPy is installed: the real paths are tested")
def test_without_cupy_to_cupy_and_dlpack_say_what_is_missing(table) -> None:
    with pytest.raises(RuntimeError, match="needs CuPy"):
        table["x"].to_cupy()
    with pytest.raises(RuntimeError, match="needs CuPy"):
        table["x"].__dlpack__()


def test_to_cudf_without_cudf_names_the_alternatives(table) -> None:
    try:
        import cudf
    except ImportError:
        with pytest.raises(RuntimeError, match="to_arrow"):
            table.to_cudf()
    else:
        assert isinstance(table.to_cudf(), cudf.DataFrame)


@pytest.mark.gpu
def test_cupy_null_policies(table) -> None:
    import cupy

    n = table["n"]
    with pytest.raises(ValueError, match="1 nulls"):
        n.to_cupy()
    assert cupy.asnumpy(n.to_cupy(nulls="fill", fill_value=-1)).tolist() == [1, -1, 3]
    as_float = cupy.asnumpy(n.to_cupy(nulls="nan"))
    assert as_float[0] == 1.0 and np.isnan(as_float[1])
    values, valid = n.to_cupy(nulls="mask")
    assert cupy.asnumpy(valid).tolist() == [True, False, True]
    assert cupy.asnumpy(cupy.asarray(table["x"])).tolist() == [1.5, 2.5, 3.5]


@pytest.mark.gpu
def test_dlpack_reaches_cupy_without_a_copy(table) -> None:
    import cupy

    x = table["x"]
    from_dlpack = cupy.from_dlpack(x)
    assert from_dlpack.data.ptr == x.__cuda_array_interface__["data"][0]
