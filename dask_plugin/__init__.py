"""Dask integration: partitioned, distributed ``read_csv`` with one device per worker.

>>> import dask_plugin, os, shutil, tempfile
>>> folder = tempfile.mkdtemp()
>>> for part in range(3):
...     with open(os.path.join(folder, f"part-{part}.csv"), "w") as f:
...         _ = f.write("id,name\\n" + "".join(f"{i},row {i}\\n" for i in range(100 * part, 100 * part + 100)))
>>> ddf = dask_plugin.read_csv(os.path.join(folder, "*.csv"), blocksize="64MiB")
>>> ddf.npartitions, len(ddf.compute())
(3, 300)
>>> with dask_plugin.job_report() as job:
...     df = dask_plugin.read_csv(os.path.join(folder, "*.csv"), device="modern-gen4", split="dynamic").compute()
>>> job.partitions, job.report.device
(3, 'modern-gen4')
>>> shutil.rmtree(folder)

* :func:`read_csv` — a ``dask.dataframe.DataFrame`` whose partitions read
  exact record-aligned byte ranges (see ``docs/dask.md``);
* :func:`gpu_tables` — the same partitions as ``cuda_p2p.GpuTable`` s in the
  workers' GPU memory (``read_csv(..., destination="gpu")`` for cudf partitions);
* :func:`pushed_filters` — the filters Dask's optimizer moved into the reads
  (``ddf[ddf.x > 5]`` on a :func:`read_csv` collection reads with ``filters=``);
* :func:`job_report` — the device Reports of the partitions computed in a block,
  with the partitions a lost worker made ``distributed`` retry
  (:mod:`dask_plugin.attempts`);
* :func:`install_devices` / :class:`DevicePlugin` — one device per worker;
* :class:`~dask_plugin.backend.NdpBackendEntrypoint` — ``dataframe.backend: ndp``
  makes ``dd.read_csv`` use this reader.
"""
from dask_plugin.core import gpu_tables, read_csv
from dask_plugin.devices import DevicePlugin, DeviceSpec, install_devices
from dask_plugin.pushdown import pushed_filters
from dask_plugin.reports import JobReport, job_report

__all__ = ["read_csv", "gpu_tables", "pushed_filters", "job_report", "JobReport", "install_devices", "DevicePlugin", "DeviceSpec"]
