"""CSV straight into GPU memory: host-parsed, device-parsed (emulated NVMe P2P) or GPU-parsed.

>>> import cuda_p2p
>>> sorted(name for name in cuda_p2p.__all__)[:3]
['GpuColumn', 'GpuExecutor', 'GpuTable']
"""
from cuda_p2p.api import read_csv
from cuda_p2p.columns import GpuColumn, GpuTable, TransferStats
from cuda_p2p.executor import GpuExecutor
from cuda_p2p.runtime import GpuUnavailable
from cuda_p2p.transfer import to_gpu

__all__ = ["GpuColumn", "GpuExecutor", "GpuTable", "GpuUnavailable", "TransferStats", "read_csv", "to_gpu"]
