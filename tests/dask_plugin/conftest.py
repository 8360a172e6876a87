"""Shared data for the Dask tests: small CSV files that stress record boundaries.

Every file mixes quoted fields holding LF/CRLF line breaks, delimiters and
doubled quotes, stray quotes inside unquoted fields, empty lines and long
quoted fields, so that block cuts land inside records of every kind.
"""
from __future__ import annotations

import random
from pathlib import Path

import pandas as pd
import pytest

import arrow_bridge


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


def write_csv(path: Path, rows: int, seed: int, eol: str = "\n", start: int = 0) -> Path:
    """A CSV file: ``id,name,value,flag`` with the awkward names above."""
    rng = random.Random(seed)
    lines = ["id,name,value,flag"]
    for i in range(start, start + rows):
        lines.append(f"{i},{_name(rng, i)},{i * 0.25 + seed},{'true' if i % 3 else 'false'}")
        if rng.randrange(40) == 0:
            lines.append("")  # an empty line: skipped
    path.write_bytes((eol.join(lines) + eol).encode())
    return path


@pytest.fixture(scope="session")
def csv_dir(tmp_path_factory) -> Path:
    """Three files (LF, CRLF, LF) of a few dozen KiB each."""
    d = tmp_path_factory.mktemp("dask_csv")
    write_csv(d / "part-0.csv", 300, seed=1)
    write_csv(d / "part-1.csv", 250, seed=2, eol="\r\n", start=300)
    write_csv(d / "part-2.csv", 200, seed=3, start=550)
    return d


def expected_frame(paths: list, path_column: str | None = None, **options) -> pd.DataFrame:
    """What the Dask read must equal: each file read whole, concatenated in order."""
    frames = []
    for code, path in enumerate(paths):
        df = arrow_bridge.read_pandas(str(path), **options)
        if path_column:
            df[path_column] = pd.Categorical.from_codes([code] * len(df), categories=[str(p) for p in paths])
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


def assert_same(got: pd.DataFrame, expected: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(got.reset_index(drop=True), expected, check_exact=True)
