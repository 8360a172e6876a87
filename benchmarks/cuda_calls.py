"""Count the CUDA calls a ``cuda_p2p.read_csv`` makes, on a machine without a GPU.

Each CUDA call made from Python costs tens of microseconds on a real GPU, and
on the H200 their number, not the bytes, decided how long a read took into GPU
memory (docs/gpu.md). The counts need no GPU: the reads run on Numba's CUDA
simulator, whose API this script wraps to count host -> GPU copies, GPU ->
host copies, ``to_device`` calls, kernel launches, device allocations and
events made, and the bytes each way, for the three paths (host, emulated-SSD
P2P, GPU parse)::

    python -m benchmarks.cuda_calls [--rows 20000] [--gpu-rows 2000] [--data-dir data] [--out benchmarks/results]

The data are the first rows of TPC-H lineitem SF0.01 (made in ``data/`` by
``tpchgen-cli`` on first use); the GPU-parse read takes
fewer rows, with 64 KiB spans, since the simulator runs its kernels one Python
thread per record. Results: ``<out>/cuda-calls.json``.
"""
from __future__ import annotations

import argparse
import collections
import itertools
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Optional

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"  # before numba is imported

from benchmarks.common import DATA_DIR, RESULTS_DIR, host_info, write_result  # noqa: E402

PATHS = {"host": {}, "p2p": {"device": "modern-gen4", "split": "device"},
         "gpu": {"gpu_share": 1.0, "block_size": 64 << 10}}


def counting(calls: collections.Counter) -> None:
    """Wraps the simulator's CUDA API so that each call adds to ``calls``."""
    import numba.cuda as cuda
    from numba.cuda.simulator import kernel
    from numba.cuda.simulator.cudadrv import devicearray

    def wrap(owner: Any, name: str, label: str, only: Any = None) -> None:
        original = getattr(owner, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            if only is None or only(*args):
                calls[label] += 1
            return original(*args, **kwargs)

        setattr(owner, name, counted)

    wrap(kernel.FakeCUDAKernel, "__call__", "launches",
         only=lambda self, *a: not (self._device or kernel._kernel_context))  # kernels, not device functions
    wrap(devicearray.FakeCUDAArray, "copy_to_device", "copies in")
    wrap(devicearray.FakeCUDAArray, "copy_to_host", "copies back")
    wrap(cuda, "to_device", "to_device")
    wrap(cuda, "device_array", "allocations")
    wrap(cuda, "event", "events made")


def count(path: Path, options: dict[str, Any], calls: collections.Counter) -> dict[str, Any]:
    """The calls of one read (after an uncounted one: compilation, the plan's constants)."""
    import cuda_p2p

    cuda_p2p.read_csv(path, **options)
    calls.clear()
    table = cuda_p2p.read_csv(path, **options)
    spans = table.stats.spans_parsed_on_gpu if options.get("gpu_share") else None
    stats = table.stats
    return {"calls": dict(sorted(calls.items())), "chunks_per_column": _chunks(path, options),
            "gpu_spans": spans, "bytes": path.stat().st_size,
            "moved": {"host->GPU": stats.h2d_bytes, "GPU->GPU": stats.d2d_bytes, "GPU->host": stats.d2h_bytes}}


def _chunks(path: Path, options: dict[str, Any]) -> int:
    import arrow_bridge

    read = {k: v for k, v in options.items() if k != "gpu_share"}
    return arrow_bridge.read_csv(path, **read).column(0).num_chunks


def head(rows: int, out: Path, data_dir: Path) -> Path:
    """The header and first ``rows`` rows of lineitem SF0.01 (made once in ``data_dir``, 60,175 rows)."""
    from benchmarks import datasets

    source = datasets.make("lineitem", scale_factor=0.01, data_dir=data_dir)
    with open(source, "rb") as src, open(out, "wb") as dst:
        dst.writelines(itertools.islice(src, rows + 1))
    return out


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.cuda_calls", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=20_000, help="lineitem rows of the host and P2P reads")
    parser.add_argument("--gpu-rows", type=int, default=2_000, help="lineitem rows of the GPU-parse read")
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR, help="where lineitem SF0.01 is found or made")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR)
    args = parser.parse_args(argv)
    calls: collections.Counter = collections.Counter()
    counting(calls)
    with tempfile.TemporaryDirectory(prefix="ndp-cuda-calls-") as scratch:
        files = {"host": head(args.rows, Path(scratch) / "rows.csv", args.data_dir),
                 "gpu": head(args.gpu_rows, Path(scratch) / "gpu-rows.csv", args.data_dir)}
        results = {name: count(files.get(name, files["host"]), options, calls) for name, options in PATHS.items()}
    for name, result in results.items():
        print(f"{name:5} {result['bytes'] / 1e6:6.1f} MB, {result['chunks_per_column']} chunks a column: "
              + ", ".join(f"{k} {v}" for k, v in result["calls"].items())
              + "; bytes " + ", ".join(f"{k} {v:,}" for k, v in result["moved"].items()))
    payload = {"host": host_info(), "args": {"rows": args.rows, "gpu_rows": args.gpu_rows}, "paths": results}
    print(f"-> {write_result('cuda-calls.json', payload, args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
