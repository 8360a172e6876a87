"""Dask integration: partitioned, distributed ``read_csv`` with one device per worker.

>>> import dask_plugin
>>> ddf = dask_plugin.read_csv("data/*.csv", blocksize="64MiB")  # doctest: +SKIP
>>> with dask_plugin.job_report() as job:  # doctest: +SKIP
...     dask_plugin.read_csv("big.csv", device="modern-gen4", split="dynamic").compute()
>>> print(job.report)  # doctest: +SKIP

* :func:`read_csv` — a ``dask.dataframe.DataFrame`` whose partitions read
  exact record-aligned byte ranges (see ``docs/dask.md``);
* :func:`job_report` — the device Reports of the partitions computed in a block;
* :func:`install_devices` / :class:`DevicePlugin` — one device per worker;
* :class:`~dask_plugin.backend.NdpBackendEntrypoint` — ``dataframe.backend: ndp``
  makes ``dd.read_csv`` use this reader.
"""
from dask_plugin.core import read_csv
from dask_plugin.devices import DevicePlugin, DeviceSpec, install_devices
from dask_plugin.reports import JobReport, job_report

__all__ = ["read_csv", "job_report", "JobReport", "install_devices", "DevicePlugin", "DeviceSpec"]
