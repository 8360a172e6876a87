"""Deterministic benchmark CSV files: TPC-H lineitem, an integer edge list, a float matrix.

Usage::

    python -m benchmarks.datasets lineitem --scale-factor 1 [--out data/lineitem-sf1.csv]
    python -m benchmarks.datasets edges --rows 40000000 [--out data/edges-40M.csv]
    python -m benchmarks.datasets floats --rows 8000000 [--out data/floats-8M.csv]

Every file is written to a temporary name and renamed into place when complete, then a
``<file>.meta.json`` marker records the parameters and byte size. A later call with the
same parameters finds the marker, checks the size and returns without regenerating.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
from tqdm import tqdm

from benchmarks.common import DATA_DIR, MB

KINDS = ("lineitem", "edges", "floats")
DEFAULT_SCALE_FACTOR = 1.0
DEFAULT_EDGE_ROWS = 40_000_000
DEFAULT_FLOAT_ROWS = 8_000_000
DEFAULT_SEED = 20240601
#: Bump when the generated content changes, so that old files' markers stop matching.
FORMAT_VERSION = 1
#: Rows per generated chunk: bounds the generator's memory to a few hundred MB.
CHUNK_ROWS = 1_000_000

#: Node ids live in [0, N_NODES): 9-digit ids like a large real graph's.
N_NODES = 100_000_000
#: ``rank * _ID_MULT + _ID_OFFSET mod N_NODES`` is a bijection because _ID_MULT is
#: coprime to 10**8 (odd, not a multiple of 5); it scatters hub ranks over the id space.
_ID_MULT = 54_435_761
_ID_OFFSET = 12_345_678


# ---------------------------------------------------------------------------
# Markers: skip regeneration when an identical file is already in place.
# ---------------------------------------------------------------------------

def _marker_path(path: Path) -> Path:
    return path.with_name(path.name + ".meta.json")


def dataset_params(kind: str, *, scale_factor: float = DEFAULT_SCALE_FACTOR, rows: int | None = None,
                   seed: int = DEFAULT_SEED) -> dict[str, object]:
    """The parameters that determine a dataset's content, as recorded in its marker."""
    if kind == "lineitem":
        return {"kind": kind, "scale_factor": scale_factor, "version": FORMAT_VERSION}
    return {"kind": kind, "rows": default_rows(kind) if rows is None else rows, "seed": seed,
            "version": FORMAT_VERSION}


def is_current(path: Path, params: dict[str, object]) -> bool:
    """True when ``path`` exists and its marker records ``params`` and its exact size."""
    marker = _marker_path(path)
    if not (path.exists() and marker.exists()):
        return False
    try:
        meta = json.loads(marker.read_text())
    except (OSError, ValueError):
        return False
    return meta.get("params") == params and meta.get("bytes") == path.stat().st_size


def _generate(path: Path, params: dict[str, object], write: Callable[[Path], None], force: bool) -> Path:
    """Run ``write(tmp)`` and move the result to ``path`` unless an identical file exists."""
    path = Path(path)
    if not force and is_current(path, params):
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    marker = _marker_path(path)
    marker.unlink(missing_ok=True)  # the old marker must not vouch for a half-written file
    tmp = path.with_name(f".{path.name}.tmp")
    start = time.perf_counter()
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    meta = {"params": params, "bytes": path.stat().st_size, "seconds": round(time.perf_counter() - start, 3)}
    marker.write_text(json.dumps(meta, indent=2) + "\n")
    return path


def generation_seconds(path: Path) -> float | None:
    """Seconds the last generation of ``path`` took, from its marker (None if unknown)."""
    try:
        return json.loads(_marker_path(Path(path)).read_text()).get("seconds")
    except (OSError, ValueError):
        return None


# ---------------------------------------------------------------------------
# Chunked CSV writing shared by the synthetic datasets.
# ---------------------------------------------------------------------------

def _write_csv_chunks(tmp: Path, header: list[str], chunks: Iterator[pa.Table], total_chunks: int) -> None:
    """Write a bare header line, then each chunk through Arrow's C++ CSV writer.

    Arrow's writer formats numbers vectorised and prints doubles in their shortest
    round-trip form (``repr``-like: up to 17 significant digits). We write the
    header ourselves because Arrow would quote the column names.
    """
    with pa.OSFile(str(tmp), "wb") as sink:
        sink.write((",".join(header) + "\n").encode())
        writer = None
        for chunk in tqdm(chunks, total=total_chunks, desc=tmp.name.strip("."), unit="chunk", disable=None):
            if writer is None:
                options = pacsv.WriteOptions(include_header=False)
                writer = pacsv.CSVWriter(sink, chunk.schema, write_options=options)
            writer.write_table(chunk)
        if writer is not None:
            writer.close()


def _chunk_sizes(rows: int, chunk_rows: int = CHUNK_ROWS) -> list[int]:
    return [min(chunk_rows, rows - start) for start in range(0, rows, chunk_rows)]


# ---------------------------------------------------------------------------
# (a) TPC-H lineitem via tpchgen-cli
# ---------------------------------------------------------------------------

def _tpchgen_exe() -> str:
    """The ``tpchgen-cli`` next to this interpreter (the venv's), else the one on PATH."""
    local = Path(sys.executable).with_name("tpchgen-cli")
    if local.exists():
        return str(local)
    found = shutil.which("tpchgen-cli")
    if found is None:
        raise RuntimeError("tpchgen-cli not found: pip install tpchgen-cli")
    return found


def tpchgen_command(scale_factor: float, output_dir: Path, table: str = "lineitem") -> list[str]:
    """The tpchgen-cli invocation: one table, CSV with a header row, comma-delimited.

    >>> tpchgen_command(1, Path("out"), "part")[1:]
    ['csv', '--scale-factor', '1', '--tables', 'part', '--output-dir', 'out']
    """
    return [_tpchgen_exe(), "csv", "--scale-factor", f"{scale_factor:g}", "--tables", table,
            "--output-dir", str(output_dir)]


def _write_tpch_table(tmp: Path, scale_factor: float, table: str) -> None:
    # tpchgen-cli's csv format already has the header and ',' delimiter we want, so the
    # file is moved, not converted; the scratch dir is beside the target so that the
    # move is a rename on the same filesystem.
    with tempfile.TemporaryDirectory(dir=tmp.parent, prefix=".tpchgen-") as outdir:
        subprocess.run(tpchgen_command(scale_factor, Path(outdir), table), check=True)
        produced = Path(outdir) / f"{table}.csv"
        with open(produced, "rb") as f:
            if not f.readline().startswith(TPCH_FIRST_COLUMNS[table].encode() + b","):
                raise RuntimeError(f"unexpected tpchgen-cli output (no header row) in {produced}")
        os.replace(produced, tmp)


TPCH_FIRST_COLUMNS = {"lineitem": "l_orderkey", "part": "p_partkey"}


def make_lineitem(path: Path | str, scale_factor: float = DEFAULT_SCALE_FACTOR, *, force: bool = False) -> Path:
    """Write TPC-H lineitem at ``scale_factor`` as a headed, comma-delimited CSV.

    16 columns: 5 ints, 3 decimals (as text, read as floats), 2 one-char flags,
    3 ISO dates, 3 strings (the comment is quoted). SF1 is about 6M rows / ~770 MB.
    """
    params = dataset_params("lineitem", scale_factor=scale_factor)
    return _generate(Path(path), params, lambda tmp: _write_tpch_table(tmp, scale_factor, "lineitem"), force)


def make_part(path: Path | str, scale_factor: float = DEFAULT_SCALE_FACTOR, *, force: bool = False) -> Path:
    """Write TPC-H part at ``scale_factor`` as a headed CSV (SF1: 200,000 rows, ~24 MB),
    unless its marker says an identical file is in place."""
    params = {"kind": "part", "scale_factor": scale_factor, "version": FORMAT_VERSION}
    return _generate(Path(path), params, lambda tmp: _write_tpch_table(tmp, scale_factor, "part"), force)


# ---------------------------------------------------------------------------
# (b) integer edge list
# ---------------------------------------------------------------------------

def _node_ids(rng: np.random.Generator, n: int, skew: float) -> np.ndarray:
    """``n`` node ids with a power-law popularity: P(rank < k) = (k / N_NODES) ** (1 / skew)."""
    ranks = (rng.random(n) ** skew * N_NODES).astype(np.int64)
    # Real ids carry no degree information, so hubs must not all get short ids.
    return (ranks * _ID_MULT + _ID_OFFSET) % N_NODES


def edge_chunks(rows: int, seed: int = DEFAULT_SEED) -> Iterator[pa.Table]:
    """The edge list as int64 ``src, dst`` tables of at most CHUNK_ROWS rows."""
    rng = np.random.default_rng(seed)
    for n in _chunk_sizes(rows):
        # Sources are more skewed than destinations, like follower graphs.
        yield pa.table({"src": _node_ids(rng, n, skew=4.0), "dst": _node_ids(rng, n, skew=2.0)})


def make_edges(path: Path | str, rows: int = DEFAULT_EDGE_ROWS, *, seed: int = DEFAULT_SEED,
               force: bool = False) -> Path:
    """Write an edge list: header ``src,dst``, two int64 columns of ids below 10**8."""
    params = dataset_params("edges", rows=rows, seed=seed)
    return _generate(Path(path), params,
                     lambda tmp: _write_csv_chunks(tmp, ["src", "dst"], edge_chunks(rows, seed),
                                                   len(_chunk_sizes(rows))), force)


# ---------------------------------------------------------------------------
# (c) float matrix
# ---------------------------------------------------------------------------

FloatColumn = Callable[[np.random.Generator, int], np.ndarray]

#: One generator per column, chosen to cover the shapes a float parser meets. No column
#: may produce integral values only: Arrow prints 42.0 as "42", which would read as int64.
FLOAT_COLUMNS: tuple[FloatColumn, ...] = (
    lambda rng, n: rng.standard_normal(n),                     # 16-17 significant digits
    lambda rng, n: rng.random(n),                              # uniform [0, 1)
    lambda rng, n: rng.lognormal(0.0, 6.0, n),                 # ~1e-8 .. 1e8, some exponents
    lambda rng, n: np.round(rng.uniform(0.0, 1e5, n), 2),      # price-like, short
    lambda rng, n: rng.standard_normal(n) * 1e6,               # large magnitudes
    lambda rng, n: rng.standard_normal(n) * 1e-6,              # tiny, mostly "1.2e-7" style
    lambda rng, n: rng.integers(-1000, 1000, n) + 0.5,         # short half-integers
    lambda rng, n: rng.uniform(-1.0, 1.0, n) * 10.0 ** rng.integers(-30, 31, n),  # wide exponents
)


def float_chunks(rows: int, seed: int = DEFAULT_SEED) -> Iterator[pa.Table]:
    """The float matrix as float64 ``c0..c7`` tables of at most CHUNK_ROWS rows."""
    rng = np.random.default_rng(seed)
    for n in _chunk_sizes(rows):
        yield pa.table({f"c{i}": make(rng, n) for i, make in enumerate(FLOAT_COLUMNS)})


def make_floats(path: Path | str, rows: int = DEFAULT_FLOAT_ROWS, *, seed: int = DEFAULT_SEED,
                force: bool = False) -> Path:
    """Write a float matrix: header ``c0..c7``, float64 values in shortest round-trip form."""
    params = dataset_params("floats", rows=rows, seed=seed)
    header = [f"c{i}" for i in range(len(FLOAT_COLUMNS))]
    return _generate(Path(path), params,
                     lambda tmp: _write_csv_chunks(tmp, header, float_chunks(rows, seed),
                                                   len(_chunk_sizes(rows))), force)


# ---------------------------------------------------------------------------
# Names and dispatch (used by the CLI and by benchmarks.peers)
# ---------------------------------------------------------------------------

# ---------------------------------------------------------------------------
# One column kind per file: what a reader's per-kind cost is, one kind at a time.
# ---------------------------------------------------------------------------

#: Words of lineitem's short string columns (no delimiter in them: written unquoted).
_WORDS = ["DELIVER IN PERSON", "TAKE BACK RETURN", "NONE", "COLLECT COD", "AIR", "REG AIR", "TRUCK", "MAIL",
          "furiously regular accounts", "slyly ironic deposits nag"]
#: Phrases with commas: written quoted, as lineitem's comments are.
_PHRASES = ["carefully final requests sleep, quickly", "ironic, even packages", "blithely bold deposits. furious"]
#: The one-kind files :func:`make_one_kind_files` writes.
ONE_KIND_FILES = ("dates", "timestamps", "zoned_timestamps", "times", "strings", "quoted", "bools", "nulls",
                  "quoted_numbers")


def one_kind_table(kind: str, rows: int, seed: int = 1) -> tuple[pa.Table, str]:
    """``(table, pyarrow quoting style)`` of one column kind (:data:`ONE_KIND_FILES`):
    four columns of it (two of the long quoted phrases; ``quoted_numbers``: an int,
    a float, a date and a bool, every value quoted)."""
    rng = np.random.default_rng(seed)

    def picks(choices: list[str]) -> pa.Array:
        return pa.array(np.array(choices, dtype=object)[rng.integers(0, len(choices), rows)])

    def days() -> pa.Array:
        return pa.array(rng.integers(8000, 10500, rows).astype("int32")).cast(pa.date32())

    if kind == "dates":
        return pa.table({f"d{i}": days() for i in range(4)}), "none"
    if kind in ("timestamps", "zoned_timestamps"):
        seconds = rng.integers(10**9, 17 * 10**8, size=(rows, 4))
        type_ = pa.timestamp("s", tz="UTC" if kind == "zoned_timestamps" else None)
        return pa.table({f"{kind[0]}{i}": pa.array(seconds[:, i]).cast(type_) for i in range(4)}), "none"
    if kind == "times":
        seconds = rng.integers(0, 86400, size=(rows, 4)).astype("int32")
        return pa.table({f"h{i}": pa.array(seconds[:, i]).cast(pa.time32("s")) for i in range(4)}), "none"
    if kind == "strings":
        return pa.table({f"s{i}": picks(_WORDS) for i in range(4)}), "none"
    if kind == "quoted":
        return pa.table({f"q{i}": picks(_PHRASES) for i in range(2)}), "needed"
    if kind == "bools":
        return pa.table({f"b{i}": pa.array(rng.integers(0, 2, rows).astype(bool)) for i in range(4)}), "none"
    if kind == "nulls":
        values = rng.integers(-10**6, 10**6, size=rows)
        return pa.table({f"n{i}": pa.array(values, mask=rng.integers(0, 2, rows).astype(bool))
                         for i in range(4)}), "none"
    if kind == "quoted_numbers":
        return pa.table({"i": rng.integers(-10**6, 10**6, rows), "f": rng.random(rows).round(4), "d": days(),
                         "b": pa.array(rng.integers(0, 2, rows).astype(bool))}), "all_valid"
    raise ValueError(f"one-kind file: expected one of {ONE_KIND_FILES}, got {kind!r}")


def make_one_kind_files(out_dir: Path, rows: int, kinds: tuple[str, ...] = ONE_KIND_FILES) -> dict[str, Path]:
    """Writes ``<kind>.csv`` per kind into ``out_dir`` (Arrow's CSV writer; a few seconds
    for 3M rows each) and returns their paths."""
    paths = {}
    for kind in kinds:
        table, quoting = one_kind_table(kind, rows)
        paths[kind] = Path(out_dir) / f"{kind}.csv"
        pacsv.write_csv(table, paths[kind], pacsv.WriteOptions(quoting_style=quoting))
    return paths


def count_label(rows: int) -> str:
    """40_000_000 -> '40M', 500_000 -> '500k', 1234 -> '1234'."""
    for unit, size in (("M", 1_000_000), ("k", 1_000)):
        if rows % size == 0:
            return f"{rows // size}{unit}"
    return str(rows)


def default_path(kind: str, *, scale_factor: float = DEFAULT_SCALE_FACTOR, rows: int | None = None,
                 data_dir: Path = DATA_DIR) -> Path:
    """Where a dataset lives by default, e.g. ``data/lineitem-sf1.csv`` or ``data/edges-40M.csv``."""
    if kind == "lineitem":
        return data_dir / f"lineitem-sf{scale_factor:g}.csv"
    return data_dir / f"{kind}-{count_label(default_rows(kind) if rows is None else rows)}.csv"


def default_rows(kind: str) -> int:
    """Default row count of a synthetic dataset."""
    return {"edges": DEFAULT_EDGE_ROWS, "floats": DEFAULT_FLOAT_ROWS}[kind]


def make(kind: str, path: Path | str | None = None, *, scale_factor: float = DEFAULT_SCALE_FACTOR,
         rows: int | None = None, data_dir: Path = DATA_DIR, force: bool = False) -> Path:
    """Generate (or find up to date) dataset ``kind`` and return its path."""
    if path is None:
        path = default_path(kind, scale_factor=scale_factor, rows=rows, data_dir=data_dir)
    if kind == "lineitem":
        return make_lineitem(path, scale_factor, force=force)
    makers = {"edges": make_edges, "floats": make_floats}
    return makers[kind](path, default_rows(kind) if rows is None else rows, force=force)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.datasets", description=__doc__.split("\n\n")[0])
    parser.add_argument("kind", choices=KINDS)
    parser.add_argument("--out", type=Path, help="output CSV path (default: data/<kind>-<size>.csv)")
    parser.add_argument("--scale-factor", type=float, default=DEFAULT_SCALE_FACTOR, help="lineitem only")
    parser.add_argument("--rows", type=int, help="edges/floats only (defaults: 40M edges, 8M float rows)")
    parser.add_argument("--force", action="store_true", help="regenerate even if up to date")
    args = parser.parse_args(argv)

    path = args.out or default_path(args.kind, scale_factor=args.scale_factor, rows=args.rows)
    params = dataset_params(args.kind, scale_factor=args.scale_factor, rows=args.rows)
    if not args.force and is_current(path, params):
        size = path.stat().st_size / MB
        print(f"{path}: up to date ({size:.1f} MB; generated in {generation_seconds(path)} s)")
        return 0
    start = time.perf_counter()
    make(args.kind, path, scale_factor=args.scale_factor, rows=args.rows, force=args.force)
    elapsed = time.perf_counter() - start
    size = path.stat().st_size / MB
    print(f"{path}: {size:.1f} MB generated in {elapsed:.1f} s ({size / elapsed:.0f} MB/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
