"""Shrinks a failing case: fewer bytes, a simpler config, the same failure kind.

Bytes: delta debugging (drop chunks of halving size, then single bytes, then
try replacing bytes by ``a``); config: each field set back to its default
when the failure stays. Each step re-runs the judge, so a minimization is a
few hundred to a few thousand reads.

>>> from benchmarks.fuzzing.judge import Judge
>>> judge = Judge()
>>> data, config = minimize(judge, b'x,y\\n1,2\\n3,"abc\\n', ReadConfig(block_size=3), "documented")
>>> data, config.describe()
(b',\\n,"', 'defaults')
>>> judge.close()
"""
from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

from benchmarks.fuzzing.configs import ReadConfig

MAX_RUNS = 5000


def minimize(judge: Any, data: bytes, config: ReadConfig, kind: str) -> tuple[bytes, ReadConfig]:
    """The smallest input and simplest config found that still give verdict ``kind``."""
    runs = [0]

    def fails(candidate: bytes, cfg: ReadConfig) -> bool:
        runs[0] += 1
        return runs[0] <= MAX_RUNS and judge.run(candidate, cfg).kind == kind

    config = _simpler_config(data, config, fails)
    data = _fewer_bytes(data, config, fails)
    data = _plainer_bytes(data, config, fails)
    return data, _simpler_config(data, config, fails)


def _fewer_bytes(data: bytes, config: ReadConfig, fails) -> bytes:
    chunk = max(1, len(data) // 2)
    while chunk >= 1:
        at, shrunk = 0, False
        while at < len(data):
            candidate = data[:at] + data[at + chunk:]
            if fails(candidate, config):
                data, shrunk = candidate, True
            else:
                at += chunk
        if not shrunk:
            chunk //= 2
    return data


def _plainer_bytes(data: bytes, config: ReadConfig, fails) -> bytes:
    """Bytes that do not matter become ``a`` (readable reports)."""
    out = bytearray(data)
    for i, byte in enumerate(data):
        if byte >= 0x80 or not chr(byte).isalnum() or byte == ord("a"):
            continue  # punctuation, controls and high bytes usually matter: keep them
        trial = bytes(out[:i]) + b"a" + bytes(out[i + 1:])
        if fails(trial, config):
            out[i] = ord("a")
    return bytes(out)


def _simpler_config(data: bytes, config: ReadConfig, fails) -> ReadConfig:
    default = ReadConfig()
    for f in fields(ReadConfig):
        value = getattr(default, f.name)
        if getattr(config, f.name) == value:
            continue
        trial = replace(config, **{f.name: value})
        if trial.path != "host" and trial.source == "bytes":
            continue  # the device and range paths read files
        try:
            if fails(data, trial):
                config = trial
        except ValueError:
            continue
    return config

