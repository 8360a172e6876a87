"""The ``"ndp"`` Dask DataFrame backend: ``dd.read_csv`` through this reader.

Registered at install under the ``dask.dataframe.backends`` entry-point group
(``pyproject.toml``), so that

>>> import dask, dask.dataframe as dd, os, shutil, tempfile
>>> folder = tempfile.mkdtemp()
>>> with open(os.path.join(folder, "data.csv"), "w") as f:
...     _ = f.write("a,b\\n1,x\\n2,y\\n")
>>> with dask.config.set({"dataframe.backend": "ndp"}):
...     ddf = dd.read_csv(os.path.join(folder, "*.csv"), blocksize="32MiB")
>>> ddf.dtypes["a"], int(ddf.a.sum().compute())
(dtype('int64'), 3)
>>> shutil.rmtree(folder)

builds the collection with :func:`dask_plugin.read_csv`. How it dispatches (Dask
2026.8): ``dd.read_csv`` is registered with
``dask.dataframe.backends.dataframe_creation_dispatch``, which looks up the
configured backend's entrypoint object (loading the entry point on first use)
and calls its ``read_csv`` method. Everything else (``from_dict``,
``read_parquet``, ``read_json``, ``to_backend``...) is pandas': partitions are
plain pandas DataFrames. dask-expr's own creation functions (``from_dict``,
``read_parquet``) use a second dispatcher; importing this module registers the
backend there too.
"""
from __future__ import annotations

from typing import Any

from dask.dataframe.backends import DataFrameBackendEntrypoint
from dask.dataframe.backends import dataframe_creation_dispatch as _legacy_dispatch
from dask.dataframe.dispatch import to_pandas_dispatch

BACKEND_NAME = "ndp"


class NdpBackendEntrypoint(DataFrameBackendEntrypoint):
    """pandas, except that ``read_csv`` is :func:`dask_plugin.read_csv`.

    >>> from dask.dataframe.backends import dataframe_creation_dispatch
    >>> isinstance(dataframe_creation_dispatch.dispatch("ndp"), NdpBackendEntrypoint)
    True
    """

    @staticmethod
    def read_csv(urlpath: Any, **kwargs: Any):
        """``dask_plugin.read_csv`` with the pandas backend's values
        (``semantics="pandas"``: dates stay text, empty text is missing) and
        dtypes unless ``dtype_backend="pyarrow"`` is asked for (code written for the pandas
        backend compares and concatenates frames unchanged); Dask keywords
        such as ``sample_rows`` are accepted and ignored."""
        from dask_plugin.core import read_csv

        kwargs.setdefault("dtype_backend", "numpy")
        kwargs.setdefault("semantics", "pandas")
        return read_csv(urlpath, **kwargs)

    @staticmethod
    def from_dict(data: Any, *, npartitions: int, **kwargs: Any):
        return _pandas("from_dict")(data, npartitions=npartitions, **kwargs)

    @staticmethod
    def read_parquet(path: Any, **kwargs: Any):
        return _pandas("read_parquet")(path, **kwargs)

    @staticmethod
    def read_json(url_path: Any, **kwargs: Any):
        return _pandas("read_json")(url_path, **kwargs)

    @staticmethod
    def read_orc(path: Any, **kwargs: Any):
        return _pandas("read_orc")(path, **kwargs)

    @staticmethod
    def read_hdf(pattern: Any, key: str, **kwargs: Any):
        return _pandas("read_hdf")(pattern, key, **kwargs)

    @classmethod
    def to_backend_dispatch(cls):
        return to_pandas_dispatch

    @classmethod
    def to_backend(cls, data: Any, **kwargs: Any):
        return _expr_dispatch().dispatch("pandas").to_backend(data, **kwargs)


def _expr_dispatch():
    from dask.dataframe.dask_expr._backends import dataframe_creation_dispatch

    return dataframe_creation_dispatch


def _pandas(name: str):
    """The pandas backend's ``name`` (registered on dask-expr's or the legacy dispatcher)."""
    for dispatch in (_expr_dispatch(), _legacy_dispatch):
        fn = vars(dispatch.dispatch("pandas")).get(name)
        if fn is not None:
            return fn
    raise NotImplementedError(f"the pandas backend has no {name}")


def _register() -> None:
    """Both creation dispatchers know the backend once this module is imported."""
    for dispatch in (_legacy_dispatch, _expr_dispatch()):
        if BACKEND_NAME not in dispatch._lookup:
            dispatch.register_backend(BACKEND_NAME, NdpBackendEntrypoint())


_register()
