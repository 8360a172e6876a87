"""CSV file -> columns in GPU memory: cuda_p2p's three paths beside pyarrow + CuPy,
pandas + CuPy and cudf; and the host reader's thread scaling beside pyarrow and polars.

Usage::

    python -m benchmarks.gpu [--threads N] [--repeat 3] [--datasets lineitem,edges,floats]
                             [--scale-factor 1] [--edge-rows N] [--float-rows N] [--quick] [--skip pandas]
                             [--data-dir data] [--tpchgen-cli PATH] [--out benchmarks/results]
    python -m benchmarks.gpu --scaling [--scaling-threads 1,2,4,8,16] [--repeat 3] ...

Every reader runs in this process with the same thread count, from a file in the page
cache, after a warm-up read of the file's head (imports, JIT compilation and the CUDA
context stay out of the timed region); readers are interleaved round-robin and the best
of ``--repeat`` rounds is reported. Timed up to the columns being in GPU memory:

* ``pyarrow+cupy``: ``pyarrow.csv.read_csv``, then ``cupy.asarray`` per numeric column;
* ``pandas+cupy``: ``pandas.read_csv``, then ``cupy.asarray`` per numeric column;
* ``ndp host->GPU``: ``cuda_p2p.read_csv(path)`` (host parse, pinned asynchronous copies);
* ``ndp GPU parse``: ``cuda_p2p.read_csv(path, gpu_share=1.0)`` (spans the kernels
  decline are parsed on the host: both counts are reported); again with 32 MiB spans
  (``block_size=``): each GPU span pays a fixed cost in CUDA calls (lineitem SF1 on an
  H200: 9.7 s for 365 spans of 2 MiB);
* ``ndp P2P (emulated)``: ``cuda_p2p.read_csv(path, device=ComputationalSSD("modern-gen4"),
  split="device")``: wall time here, and the device Report's modeled makespan and P2P bytes;
* ``cudf``: ``cudf.read_csv(path)`` when cudf imports.

The peers move their numeric columns only; ours and cudf move every column (strings,
dates too): each row records the bytes it left in GPU memory. Beside them, the parse
alone (pyarrow, pandas, ``arrow_bridge.read_csv``), and the physical limits: pinned
host -> GPU bandwidth and the raw text file's copy to the GPU. Text goes to the GPU
through pinned bounce buffers: cuFile / GPUDirect Storage is not used (whether it could
run is probed and recorded: ``gpu.cufile``).

Without a CUDA GPU (or under Numba's CUDA simulator) the GPU rows are recorded as
skipped, with the reason, and only the CPU rows run. Results:
``<out>/gpu-<host tag>.json``; ``--scaling``: ``<out>/scaling-<host tag>.{json,png}``.

Offline machines without ``tpchgen-cli`` (lineitem's generator): pass ``--tpchgen-cli``
a copy of the binary, or put ``lineitem-sf<SF>.csv`` in ``--data-dir``.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from benchmarks.common import (DATA_DIR, MB, RESULTS_DIR, host_info, mb_per_s, package_versions, warm_page_cache,
                               write_head, write_result)
from benchmarks import datasets, peers
from benchmarks.readers import READERS_BY_NAME

#: Reference rows: ratios are speeds relative to these (>1: faster).
CPU_BASE, GPU_BASE = "pyarrow (parse only)", "pyarrow+cupy"
SCALING_THREADS = (1, 2, 4, 8, 16)
SCALING_READERS = ("ndp", "pyarrow", "polars")
#: How text reaches the GPU on every path measured here.
TRANSFER = "pinned bounce buffer (host memory -> cudaMemcpyAsync); cuFile / GPUDirect Storage not used"
#: Distributions of the GPU stack whose versions go into the results (by name prefix).
GPU_PACKAGES = ("cupy", "numba-cuda", "cudf", "pylibcudf", "nvidia-cufile", "cuda-python", "pybind11")


# --- what runs here ----------------------------------------------------------------------------

def gpu_missing_reason() -> Optional[str]:
    """Why the GPU rows cannot run here (None on a real CUDA GPU).

    >>> gpu_missing_reason() is None or gpu_missing_reason().startswith("no CUDA GPU: ")
    True
    """
    from cuda_p2p import runtime

    if runtime.available() and not runtime.simulator_requested():
        return None
    return f"no CUDA GPU: {runtime.describe()}"


def slug(text: str) -> str:
    """A file-name-safe tag.

    >>> slug("NVIDIA H100 80GB HBM3 (compute capability 9.0)")
    'nvidia-h100-80gb-hbm3'
    """
    return re.sub(r"[^a-z0-9]+", "-", text.split(" (")[0].lower()).strip("-")


def host_tag() -> str:
    """The GPU's name, or ``nogpu-<cores>cpu``: results of different machines do not overwrite each other."""
    from cuda_p2p import runtime

    if gpu_missing_reason() is None:
        return slug(runtime.describe())
    return f"nogpu-{os.cpu_count()}cpu"


def gpu_versions() -> dict[str, str]:
    """Installed versions of the GPU stack's distributions (CuPy's name carries its CUDA major)."""
    found = {}
    for dist in metadata.distributions():
        name = (dist.metadata["Name"] or "").lower()
        if name.startswith(GPU_PACKAGES):
            found[name] = dist.version
    return dict(sorted(found.items()))


def gpu_facts() -> dict[str, Any]:
    """The device and its CUDA versions, and how data reaches it."""
    from cuda_p2p import runtime

    facts: dict[str, Any] = {"device": runtime.describe(), "real_gpu": gpu_missing_reason() is None,
                             "transfer": TRANSFER, "gpudirect_storage": False, "cufile": runtime.cufile_status()}
    cp = runtime.cupy() if facts["real_gpu"] else None
    if cp is not None:
        facts["cuda_runtime"] = cp.cuda.runtime.runtimeGetVersion()
        facts["cuda_driver"] = cp.cuda.runtime.driverGetVersion()
    return facts


# --- the rows ----------------------------------------------------------------------------------

ReadFn = Callable[[Path], Any]


@dataclass(frozen=True)
class Row:
    """One way of reading a file: ``setup(threads)`` gives ``read(path) -> result``
    (timed), ``facts(result)`` what the result holds (not timed)."""

    name: str
    gpu: bool
    setup: Callable[[int], ReadFn]
    facts: Callable[[Any], dict[str, Any]]
    missing: Callable[[], Optional[str]] = lambda: None
    #: options of the untimed warm-up read of the file's head (GPU rows: spans small
    #: enough that the head is several, so the GPU parses some and its kernels compile)
    warmup_options: tuple[tuple[str, Any], ...] = ()


def _synchronize() -> None:
    from cuda_p2p import runtime

    runtime.cuda().synchronize()


def _peer_reader(name: str) -> Callable[[int], ReadFn]:
    """A reader of benchmarks.readers (its thread set-up), reading in this process."""
    return lambda threads: READERS_BY_NAME[name].setup(threads)


def _ssd_to_host(ssd: Any) -> Callable[[int], ReadFn]:
    """``arrow_bridge.read_csv`` through the emulated SSD into a host Table: the
    P2P row's work less its copies to the GPU."""
    def setup(threads: int) -> ReadFn:
        import arrow_bridge

        return lambda path: arrow_bridge.read_csv(path, n_threads=threads, device=ssd, split="device")

    return setup


def _to_cupy(name: str, numeric: Callable[[Any], list[Any]]) -> Callable[[int], ReadFn]:
    """Reader ``name``, then ``cupy.asarray`` of each host array ``numeric(result)`` lists."""
    def setup(threads: int) -> ReadFn:
        from cuda_p2p import runtime

        read, cp = READERS_BY_NAME[name].setup(threads), runtime.cupy()

        def run(path: Path) -> Any:
            host = read(path)
            arrays = [cp.asarray(values) for values in numeric(host)]
            cp.cuda.Device().synchronize()
            return len(host), arrays

        return run

    return setup


def _arrow_numeric(table: Any) -> list[Any]:
    import pyarrow as pa

    return [column.to_numpy() for column in table.columns
            if pa.types.is_integer(column.type) or pa.types.is_floating(column.type)]


def _pandas_numeric(frame: Any) -> list[Any]:
    return [frame[name].to_numpy() for name in frame.select_dtypes("number").columns]


def _cupy_facts(result: Any) -> dict[str, Any]:
    rows, arrays = result
    return {"rows": rows, "gpu_bytes": sum(int(a.nbytes) for a in arrays), "gpu_columns": len(arrays)}


def _ours(**options: Any) -> Callable[[int], ReadFn]:
    """``cuda_p2p.read_csv`` with ``options``."""
    def setup(threads: int) -> ReadFn:
        import cuda_p2p

        def run(path: Path, **warmup: Any) -> Any:
            table = cuda_p2p.read_csv(path, **({"n_threads": threads} | options | warmup))
            _synchronize()
            return table

        return run

    return setup


def _gpu_table_facts(table: Any) -> dict[str, Any]:
    stats = table.stats
    facts = {"rows": table.num_rows, "gpu_bytes": table.nbytes, "gpu_columns": len(table.columns),
             "path": stats.path, "h2d_bytes": stats.h2d_bytes, "copies": stats.copies, "launches": stats.launches,
             "allocations": stats.allocations, "batches": stats.batches, "delivery_s": stats.seconds,
             "after_read_s": stats.after_read_seconds, "growths": stats.growths,
             "columns_recopied": stats.columns_recopied}
    if stats.path == "gpu":
        facts |= {"spans_parsed_on_gpu": stats.spans_parsed_on_gpu,
                  "spans_parsed_elsewhere": stats.spans_parsed_elsewhere, "gpu_parse_s": stats.gpu_parse_seconds,
                  "gpu_text_copy_s": stats.gpu_text_seconds, "gpu_busy_s": stats.gpu_busy_seconds,
                  "gpu_parse_gb_per_s": stats.gpu_parse_gb_per_s,
                  "gpu_parse_steps_s": stats.gpu_parse_steps, "d2h_bytes": stats.d2h_bytes,
                  "d2d_bytes": stats.d2d_bytes}
    if table.report is not None:
        facts |= {"modeled_makespan_s": table.report.makespan_s, "p2p_bytes": table.report.bytes["p2p"],
                  "host_link_bytes": table.report.bytes["host_link"]}
    return facts


def _cudf_setup(threads: int) -> ReadFn:
    import cudf

    def run(path: Path) -> Any:
        frame = cudf.read_csv(str(path))
        _synchronize()
        return frame

    return run


def _cudf_facts(frame: Any) -> dict[str, Any]:
    return {"rows": len(frame), "gpu_bytes": int(frame.memory_usage(deep=True).sum()),
            "gpu_columns": len(frame.columns)}


def _needs_cupy() -> Optional[str]:
    from cuda_p2p import runtime

    return None if runtime.cupy() is not None else "CuPy not installed"


def _needs_cudf() -> Optional[str]:
    return None if importlib.util.find_spec("cudf") is not None else "cudf not importable"


_SMALL_SPANS = (("block_size", 512),)


def rows_for(ssd: Any) -> list[Row]:
    """Every row, CPU rows first; ``ssd`` is the P2P row's emulated device."""
    host_rows = lambda result: {"rows": len(result)}  # noqa: E731
    return [
        Row(CPU_BASE, False, _peer_reader("pyarrow"), host_rows),
        Row("pandas (parse only)", False, _peer_reader("pandas-c"), host_rows),
        Row("ndp (parse only)", False, _peer_reader("ndp"), host_rows),
        Row(f"ndp SSD->host ({ssd.profile.name})", False, _ssd_to_host(ssd), host_rows),
        Row(GPU_BASE, True, _to_cupy("pyarrow", _arrow_numeric), _cupy_facts, _needs_cupy),
        Row("pandas+cupy", True, _to_cupy("pandas-c", _pandas_numeric), _cupy_facts, _needs_cupy),
        Row("ndp host->GPU", True, _ours(), _gpu_table_facts),
        Row("ndp GPU parse", True, _ours(gpu_share=1.0), _gpu_table_facts, warmup_options=_SMALL_SPANS),
        Row("ndp GPU parse, 32 MiB spans", True, _ours(gpu_share=1.0, block_size=32 << 20), _gpu_table_facts,
            warmup_options=_SMALL_SPANS),
        # the same on one thread: what GPU spans running side by side (cuda_p2p.gpu_parse lanes) gain
        Row("ndp GPU parse, 32 MiB, 1 thread", True, _ours(gpu_share=1.0, block_size=32 << 20, n_threads=1),
            _gpu_table_facts, warmup_options=_SMALL_SPANS),
        Row(f"ndp P2P (emulated {ssd.profile.name})", True, _ours(device=ssd, split="device"), _gpu_table_facts),
        Row("cudf", True, _cudf_setup, _cudf_facts, _needs_cudf),
    ]


# --- timing ------------------------------------------------------------------------------------

def _error(e: BaseException) -> dict[str, str]:
    return {"error": f"{type(e).__name__}: {e}"}


def time_rows(rows: Sequence[Row], path: Path, warmup: Path, threads: int, repeat: int) -> dict[str, dict]:
    """Best of ``repeat`` rounds per row, rows rotated between rounds; a row that
    cannot run here is ``{"skipped": reason}``, one that fails ``{"error": ...}``."""
    gpu_reason = gpu_missing_reason()
    by_name = {row.name: row for row in rows}
    results: dict[str, dict] = {}
    reads: dict[str, ReadFn] = {}
    for row in rows:
        reason = (gpu_reason if row.gpu else None) or row.missing()
        if reason:
            results[row.name] = {"skipped": reason}
            continue
        try:  # a reader that fails is recorded and the others still run
            reads[row.name] = row.setup(threads)
            reads[row.name](warmup, **dict(row.warmup_options))
        except Exception as e:
            results[row.name] = _error(e)
            reads.pop(row.name, None)
    seconds: dict[str, list[float]] = {name: [] for name in reads}
    facts: dict[str, dict] = {}
    order = list(reads)
    for rep in range(repeat if order else 0):
        shift = rep % len(order)
        for name in order[shift:] + order[:shift]:
            if name in results:
                continue
            result = None  # the previous result is freed before, not during, the next read
            if gpu_reason is None:
                _free_gpu_memory()
            try:
                started = time.perf_counter()
                result = reads[name](path)
                seconds[name].append(time.perf_counter() - started)
                if seconds[name][-1] == min(seconds[name]):  # the best round's facts
                    facts[name] = by_name[name].facts(result)
            except Exception as e:
                results[name] = _error(e)
    size = path.stat().st_size
    for name in order:
        if name not in results:
            best = min(seconds[name])
            results[name] = {"best_s": best, "mb_per_s": mb_per_s(size, best), "seconds": seconds[name],
                             **facts[name]}
    return {row.name: results[row.name] for row in rows}


def pinned_h2d(nbytes: int, repeat: int) -> dict[str, Any]:
    """Best host -> GPU copy of ``nbytes`` from pinned memory (Numba): the ceiling of every pinned path."""
    cuda = _cuda()
    host = cuda.pinned_array(nbytes, dtype="u1")
    host[:] = 1  # touch every page before timing
    device = cuda.device_array(nbytes, dtype="u1")
    best = _best(lambda: device.copy_to_device(host), repeat + 1)
    return {"bytes": nbytes, "best_s": best, "gb_per_s": nbytes / best / 1e9}


def text_to_gpu(path: Path, repeat: int) -> dict[str, Any]:
    """The raw text file to GPU memory: read from the page cache into pinned memory,
    then one copy; the floor for a reader that ships the text."""
    cuda = _cuda()
    size = path.stat().st_size
    host = cuda.pinned_array(size, dtype="u1")
    device = cuda.device_array(size, dtype="u1")
    read_s = _best(lambda: _read_into(path, memoryview(host)), repeat)
    h2d_s = _best(lambda: device.copy_to_device(host), repeat)
    return {"bytes": size, "read_s": read_s, "h2d_s": h2d_s, "total_s": read_s + h2d_s,
            "h2d_gb_per_s": size / h2d_s / 1e9}


def _cuda() -> Any:
    from cuda_p2p import runtime

    return runtime.cuda()


def _free_gpu_memory() -> None:
    """Numba frees device memory lazily, in batches: flush it now, not inside a timed read."""
    _cuda().current_context().deallocations.clear()


def _best(action: Callable[[], Any], repeat: int) -> float:
    """Best wall seconds of ``action`` over ``repeat`` runs, each ended by a device synchronize."""
    best = float("inf")
    for _ in range(max(repeat, 1)):
        started = time.perf_counter()
        action()
        _synchronize()
        best = min(best, time.perf_counter() - started)
    return best


def _read_into(path: Path, buffer: memoryview) -> None:
    # One read() returns at most ~2 GiB on Linux: loop until the buffer is full.
    with open(path, "rb", buffering=0) as f:
        done = 0
        while done < len(buffer):
            got = f.readinto(buffer[done:])
            if not got:
                raise EOFError(f"{path}: {done} of {len(buffer)} bytes")
            done += got


# --- printing ----------------------------------------------------------------------------------

def ratio(base: dict, row: dict) -> Optional[float]:
    """Speed of ``row`` relative to ``base`` (>1: ``row`` is faster); None unless both ran.

    >>> ratio({"best_s": 2.0}, {"best_s": 0.5}), ratio({"skipped": "x"}, {"best_s": 1.0})
    (4.0, None)
    """
    if "best_s" not in base or "best_s" not in row:
        return None
    return base["best_s"] / row["best_s"]


def _note(row: dict) -> str:
    """What a row's table line adds after its figures.

    >>> _note({"spans_parsed_on_gpu": 3, "spans_parsed_elsewhere": 1, "gpu_parse_gb_per_s": 2.5, "copies": 9,
    ...        "gpu_busy_s": 0.1, "gpu_parse_steps_s": {"text": 0.25, "convert": 0.125}})
    'spans: 3 on GPU, 1 on host; parse 2.50 GB/s with the text on the GPU (0.100 s wall); s by step, summed over spans: text 0.250, convert 0.125'
    >>> _note({"copies": 40, "launches": 2})
    '40 copies, 2 launches'
    >>> _note({"copies": 40, "launches": 0, "after_read_s": 0.0125, "growths": 1})
    '40 copies, 0 launches, 0.013 s after the read, 1 buffer(s) grown'
    """
    if "spans_parsed_on_gpu" in row:
        speed = row.get("gpu_parse_gb_per_s")
        steps = ", ".join(f"{name} {seconds:.3f}" for name, seconds in row.get("gpu_parse_steps_s", {}).items())
        return (f"spans: {row['spans_parsed_on_gpu']} on GPU, {row['spans_parsed_elsewhere']} on host" +
                ("" if speed is None else f"; parse {speed:.2f} GB/s with the text on the GPU") +
                (f" ({row['gpu_busy_s']:.3f} s wall)" if row.get("gpu_busy_s") else "") +
                (f"; s by step, summed over spans: {steps}" if steps else ""))
    if "modeled_makespan_s" in row:
        return f"modeled makespan {row['modeled_makespan_s']:.3f} s, P2P {row['p2p_bytes'] / MB:.1f} MB"
    if "copies" in row:
        return (f"{row['copies']} copies, {row.get('launches', 0)} launches" +
                (f", {row['after_read_s']:.3f} s after the read" if "after_read_s" in row else "") +
                (f", {row['growths']} buffer(s) grown" if row.get("growths") else ""))
    return ""


def table_lines(results: dict[str, dict]) -> list[str]:
    """The per-row table: CPU rows against pyarrow's parse, GPU rows against pyarrow+CuPy.

    >>> rows = {CPU_BASE: {"best_s": 0.5, "mb_per_s": 200.0, "rows": 10}, "cudf": {"skipped": "no CUDA GPU: no GPU"}}
    >>> print("\\n".join(table_lines(rows)[2:4]))  # doctest: +NORMALIZE_WHITESPACE
    pyarrow (parse only)   0.500   200   1.00x   -   10
    cudf                   skipped: no CUDA GPU: no GPU
    """
    head = f"{'reader':<32}{'best s':>8}{'MB/s':>8}{'speed vs':>10}{'GPU MB':>8}{'rows':>11}  notes"
    lines = [head, "-" * len(head)]
    for name, row in results.items():
        if "best_s" not in row:
            lines.append(f"{name:<32}  {'skipped' if 'skipped' in row else 'FAILED'}: "
                         f"{row.get('skipped') or row.get('error')}")
            continue
        speed = ratio(results.get(GPU_BASE if "gpu_bytes" in row else CPU_BASE, {}), row)
        speed_text = "-" if speed is None else f"{speed:.2f}x"
        gpu_mb = f"{row['gpu_bytes'] / MB:.0f}" if "gpu_bytes" in row else "-"
        lines.append(f"{name:<32}{row['best_s']:>8.3f}{row['mb_per_s']:>8.0f}{speed_text:>10}{gpu_mb:>8}"
                     f"{row['rows']:>11}  {_note(row)}")
    counts = {row["rows"] for row in results.values() if "rows" in row}
    if len(counts) > 1:
        lines.append(f"WARNING: readers disagree on the row count: {sorted(counts)}")
    lines.append(f"speed vs: CPU rows against {CPU_BASE!r}, GPU rows against {GPU_BASE!r} (>1: faster)")
    return lines


# --- data sets ---------------------------------------------------------------------------------

def dataset(kind: str, args: argparse.Namespace) -> tuple[Optional[Path], Optional[str]]:
    """``kind``'s file in ``args.data_dir`` (made if need be), or None and why it could not be."""
    rows = {"edges": args.edge_rows, "floats": args.float_rows}.get(kind)
    path = datasets.default_path(kind, scale_factor=args.scale_factor, rows=rows, data_dir=args.data_dir)
    try:
        return datasets.make(kind, path, scale_factor=args.scale_factor, rows=rows), None
    except (RuntimeError, OSError, ValueError, subprocess.SubprocessError) as e:  # e.g. no tpchgen-cli on an offline machine
        if path.exists():  # a copy brought without its marker: used as it is
            return path, None
        return None, f"cannot make {path}: {e}"


# --- the two benchmarks ------------------------------------------------------------------------

def bench_gpu(args: argparse.Namespace) -> int:
    """The GPU table per data set; writes ``gpu-<tag>.json``. Exit status 1 when a row failed."""
    reason = gpu_missing_reason()
    payload: dict[str, Any] = {
        "host": host_info(), "versions": package_versions() | gpu_versions(), "gpu": gpu_facts(),
        "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "pinned_h2d": {"skipped": reason} if reason else pinned_h2d(args.pinned_mb * MB, args.repeat),
        "datasets": {},
    }
    print(f"GPU: {payload['gpu']['device']}; {args.threads} threads; best of {args.repeat}; {TRANSFER}")
    if "gb_per_s" in payload["pinned_h2d"]:
        print(f"pinned host->GPU: {payload['pinned_h2d']['gb_per_s']:.1f} GB/s ({args.pinned_mb} MB copies)")
    failed = False
    from device_emulator import ComputationalSSD

    with ComputationalSSD(args.profile, workers=args.threads) as ssd, \
            tempfile.TemporaryDirectory(prefix="ndp-gpu-bench-") as scratch:
        rows = [row for row in rows_for(ssd) if not row.name.startswith(tuple(args.skip))]
        for kind in args.datasets:
            path, why = dataset(kind, args)
            if path is None:
                print(f"\n== {kind}: skipped: {why}")
                payload["datasets"][kind] = {"skipped": why}
                continue
            warm_page_cache(path)
            warmup = write_head(path, Path(scratch) / f"{kind}-warmup.csv")
            results = time_rows(rows, path, warmup, args.threads, args.repeat)
            floor = {"skipped": reason} if reason else text_to_gpu(path, args.repeat)
            payload["datasets"][kind] = {"path": str(path), "bytes": path.stat().st_size, "rows": results,
                                         "text_to_gpu": floor}
            failed |= any("error" in row for row in results.values())
            print(f"\n== {kind}: {path.name}, {path.stat().st_size / MB:.1f} MB ==")
            print("\n".join(table_lines(results)))
            if "total_s" in floor:
                print(f"raw text -> GPU: read {floor['read_s']:.3f} s + copy {floor['h2d_s']:.3f} s "
                      f"({floor['h2d_gb_per_s']:.1f} GB/s)")
            # written after every data set too: a run cut off by the device's time keeps what it measured
            write_result(f"gpu-{args.host_tag}.json", payload, args.out)
    out = write_result(f"gpu-{args.host_tag}.json", payload, args.out)
    print(f"-> {out}")
    return 1 if failed else 0


def bench_scaling(args: argparse.Namespace) -> int:
    """The host readers at each thread count on lineitem, each read a fresh child
    process (benchmarks.peers); writes ``scaling-<tag>.{json,png}``."""
    path, why = dataset("lineitem", args)
    if path is None:
        print(f"scaling: skipped: {why}")
        return 1
    threads = [t for t in args.scaling_threads if t <= (os.cpu_count() or 1)]
    readers = peers.available_readers(SCALING_READERS)
    size = path.stat().st_size
    summaries: dict[int, dict] = {}
    with tempfile.TemporaryDirectory(prefix="ndp-scaling-") as scratch:
        warmup = write_head(path, Path(scratch) / "lineitem-warmup.csv")
        warm_page_cache(path)
        for n in threads:
            runs = peers.run_rounds(readers, path, warmup, n, args.repeat, desc=f"{n} threads")
            summaries[n] = peers.summarize(runs, size)
    payload = {"host": host_info(), "versions": package_versions(), "path": str(path), "bytes": size,
               "repeat": args.repeat, "threads": threads,
               "skipped_readers": [name for name in SCALING_READERS if name not in {r.name for r in readers}],
               "summary": summaries}
    print(f"\n== scaling: {path.name}, {size / MB:.1f} MB, best of {args.repeat} ==")
    print("\n".join(scaling_lines(summaries)))
    png = args.out / f"scaling-{args.host_tag}.png"
    payload["plot"] = str(png) if plot_scaling(summaries, path.name, png) else None
    print(f"-> {write_result(f'scaling-{args.host_tag}.json', payload, args.out)}" + (f", {png}" if payload["plot"] else
                                                                                 " (no plot: matplotlib missing)"))
    return 1 if any("error" in s for by_reader in summaries.values() for s in by_reader.values()) else 0


def scaling_lines(summaries: dict[int, dict]) -> list[str]:
    """MB/s per reader and thread count, and ndp's speed over pyarrow's.

    >>> fast = {"ndp": {"best_s": 1.0, "mb_per_s": 300.0}, "pyarrow": {"best_s": 1.5, "mb_per_s": 200.0}}
    >>> print("\\n".join(scaling_lines({1: fast})))  # doctest: +NORMALIZE_WHITESPACE
    threads  ndp MB/s  pyarrow MB/s  ndp/pyarrow
          1       300           200        1.50x
    """
    names = list(dict.fromkeys(name for by_reader in summaries.values() for name in by_reader))
    lines = [f"{'threads':>7}" + "".join(f"{name + ' MB/s':>14}" for name in names) + f"{'ndp/pyarrow':>13}"]
    for n, by_reader in summaries.items():
        cells = [f"{by_reader[name].get('mb_per_s', float('nan')):>14.0f}" for name in names]
        speed = ratio(by_reader.get("pyarrow", {}), by_reader.get("ndp", {}))
        lines.append(f"{n:>7}" + "".join(cells) + ("-" if speed is None else f"{speed:.2f}x").rjust(13))
    return lines


def plot_scaling(summaries: dict[int, dict], title: str, out: Path) -> bool:
    """MB/s against threads, one line per reader; False when matplotlib is missing."""
    try:
        import matplotlib
    except ImportError:
        return False
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4), layout="constrained")
    names = dict.fromkeys(name for by_reader in summaries.values() for name in by_reader)
    for name in names:
        points = [(n, s[name]["mb_per_s"]) for n, s in summaries.items() if "mb_per_s" in s.get(name, {})]
        ax.plot([n for n, _ in points], [v for _, v in points], marker="o", label=name)
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(summaries), [str(n) for n in summaries])
    ax.set_xlabel("threads")
    ax.set_ylim(bottom=0)  # speed-ups read true against a zero baseline
    ax.set_ylabel("MB/s (file in page cache -> table in memory)")
    ax.set_title(f"{title}: read_csv scaling, {os.cpu_count()} cores", fontsize="medium")
    ax.legend(frameon=False)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=130)
    plt.close(fig)
    return True


# --- command line ------------------------------------------------------------------------------

def thread_list(text: str) -> list[int]:
    """``"1,2,4"`` -> ``[1, 2, 4]``.

    >>> thread_list("1,2, 4")
    [1, 2, 4]
    """
    return [int(part) for part in text.split(",") if part.strip()]


def parse_args(argv: Optional[list[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.gpu", description=__doc__.split("\n\n")[0],
                                     epilog="Without a CUDA GPU only the CPU rows run; GPU rows are recorded as "
                                            "skipped with the reason.")
    parser.add_argument("--threads", type=int, default=os.cpu_count(), help="threads for every reader "
                        "(default: all cores, %(default)s here)")
    parser.add_argument("--repeat", type=int, default=3, help="rounds; the best is reported (default 3)")
    parser.add_argument("--datasets", default=",".join(datasets.KINDS), help="comma list of %(default)s")
    parser.add_argument("--scale-factor", type=float, default=None, help="lineitem SF (default 1)")
    parser.add_argument("--edge-rows", type=int, default=None, help="edge list rows (default 40M)")
    parser.add_argument("--float-rows", type=int, default=None, help="float matrix rows (default 8M)")
    parser.add_argument("--quick", action="store_true", help="small data sets: SF0.05, 2M edges, 500k float rows")
    parser.add_argument("--skip", type=lambda text: [name for name in text.split(",") if name], default=[],
                        help="comma list of rows to leave out, by name prefix (e.g. 'pandas,cudf')")
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR,
                        help="where the data sets are found or made (default: data/)")
    parser.add_argument("--tpchgen-cli", type=Path, default=None,
                        help="a tpchgen-cli binary, for machines without one on PATH (lineitem's generator)")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR, help="results directory (default: %(default)s)")
    parser.add_argument("--host-tag", default=None, help="results file name tag (default: the GPU's name, or "
                        "nogpu-<cores>cpu)")
    parser.add_argument("--profile", default="modern-gen4", help="emulated SSD profile of the P2P row")
    parser.add_argument("--pinned-mb", type=int, default=256, help="size of the pinned bandwidth copies (MB)")
    parser.add_argument("--scaling", action="store_true",
                        help="instead: arrow_bridge.read_csv vs pyarrow (and polars) by thread count on lineitem")
    parser.add_argument("--scaling-threads", type=thread_list, default=list(SCALING_THREADS),
                        help="thread counts of --scaling, capped at the core count (default 1,2,4,8,16)")
    args = parser.parse_args(argv)
    sizes = peers.QUICK_SIZES if args.quick else peers.FULL_SIZES
    args.scale_factor = args.scale_factor or sizes["scale_factor"]
    args.edge_rows = args.edge_rows or sizes["edges"]
    args.float_rows = args.float_rows or sizes["floats"]
    args.datasets = [kind for kind in args.datasets.split(",") if kind]
    for kind in args.datasets:
        if kind not in datasets.KINDS:
            parser.error(f"unknown data set {kind!r}; choose from {datasets.KINDS}")
    if args.tpchgen_cli is not None:
        # benchmarks.datasets finds tpchgen-cli beside the interpreter or on PATH.
        os.environ["PATH"] = os.pathsep.join([str(args.tpchgen_cli.resolve().parent), os.environ.get("PATH", "")])
    args.host_tag = args.host_tag or host_tag()
    return args


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    return bench_scaling(args) if args.scaling else bench_gpu(args)


if __name__ == "__main__":
    sys.exit(main())
