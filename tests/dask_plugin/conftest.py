"""Fixtures of the Dask tests: test modules take them as arguments and define none of their own.

The data are small CSV files that stress record boundaries: every file mixes
quoted fields holding LF/CRLF line breaks, delimiters and doubled quotes, stray
quotes inside unquoted fields, empty lines and long quoted fields, so that
block cuts land inside records of every kind.
"""
from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Callable

import dask
import pandas as pd
import pytest
from distributed import Client, LocalCluster

import arrow_bridge

sys.path.insert(0, str(Path(__file__).parents[1] / "arrow_bridge"))  # csvgen: the host tests' generated files


def _name(rng: random.Random, i: int) -> str:
    kind = rng.randrange(6)
    if kind == 0:
        return f'"line {i}\nnext, ""quoted"" line"'  # quoted LF, delimiter, doubled quotes
    if kind == 1:
        return f'"crlf {i}\r\nafter"'  # quoted CRLF
    if kind == 2:
        return f'stray"quote{i}'  # a quote inside an unquoted field is a literal
    if kind == 3:
        return '"' + "long\n" * rng.randrange(50, 400) + '"'  # a long multi-line field
    return f"plain{i}"


def _write_awkward_csv(path: Path, rows: int, seed: int, eol: str = "\n", start: int = 0) -> Path:
    rng = random.Random(seed)
    lines = ["id,name,value,flag"]
    for i in range(start, start + rows):
        lines.append(f"{i},{_name(rng, i)},{i * 0.25 + seed},{'true' if i % 3 else 'false'}")
        if rng.randrange(40) == 0:
            lines.append("")  # an empty line: skipped
    path.write_bytes((eol.join(lines) + eol).encode())
    return path


@pytest.fixture(scope="session")
def awkward_csv() -> Callable[..., Path]:
    """``awkward_csv(path, rows, seed, eol="\\n", start=0)``: writes a CSV file
    ``id,name,value,flag`` (ids from ``start``) with the awkward names above; returns ``path``."""
    return _write_awkward_csv


@pytest.fixture(scope="session")
def csv_dir(tmp_path_factory) -> Path:
    """A folder of three files ``part-0.csv`` (LF), ``part-1.csv`` (CRLF), ``part-2.csv`` (LF), a few dozen KiB each."""
    folder = tmp_path_factory.mktemp("dask_csv")
    _write_awkward_csv(folder / "part-0.csv", 300, seed=1)
    _write_awkward_csv(folder / "part-1.csv", 250, seed=2, eol="\r\n", start=300)
    _write_awkward_csv(folder / "part-2.csv", 200, seed=3, start=550)
    return folder


@pytest.fixture(scope="session")
def csv_files(csv_dir) -> list[Path]:
    """The files of :func:`csv_dir`, in name order."""
    return sorted(csv_dir.glob("part-*.csv"))


@pytest.fixture(scope="module")
def client():
    """A real ``distributed.LocalCluster`` (2 worker processes, 1 thread each) and its Client.

    Module-scoped: closed when the module's tests are done, so that nothing
    after them computes on it by default.
    """
    # ":0": the scheduler's HTTP server (it runs even without a dashboard) on a free port, not on
    # 8787, which a cluster of a test in another pytest-xdist process may hold
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                      worker_dashboard_address=None) as cluster, Client(cluster) as connected:
        yield connected


@pytest.fixture
def sync():
    """The synchronous scheduler for the test's ``compute()`` calls."""
    with dask.config.set(scheduler="sync"):
        yield


@pytest.fixture(scope="session")
def expected_frame() -> Callable[..., pd.DataFrame]:
    """``expected_frame(paths, path_column=None, **options)``: what a Dask read
    of ``paths`` must equal: each file read whole by ``arrow_bridge.read_pandas``,
    concatenated in order (with a categorical column of the file paths if asked)."""

    def expected(paths: list, path_column: str | None = None, **options) -> pd.DataFrame:
        frames = []
        for code, path in enumerate(paths):
            df = arrow_bridge.read_pandas(str(path), **options)
            if path_column:
                df[path_column] = pd.Categorical.from_codes([code] * len(df), categories=[str(p) for p in paths])
            frames.append(df)
        return pd.concat(frames, ignore_index=True)

    return expected


@pytest.fixture(scope="session")
def assert_same() -> Callable[[pd.DataFrame, pd.DataFrame], None]:
    """``assert_same(got, expected)``: equal frames, values exact; ``got``'s
    index (per-partition, from 0) is ignored."""

    def check(got: pd.DataFrame, expected: pd.DataFrame) -> None:
        pd.testing.assert_frame_equal(got.reset_index(drop=True), expected, check_exact=True)

    return check
