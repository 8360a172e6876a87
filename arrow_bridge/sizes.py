"""Byte sizes as users type them (``64KiB``, ``2MB``, ``1_000_000``): one parser for the
CLI's ``--block-size`` and the reader's ``memory_limit=``.

>>> parse_size("64KiB"), parse_size("2mib"), parse_size("1_000_000"), parse_size("1.5MB")
(65536, 2097152, 1000000, 1500000)
"""
from __future__ import annotations

import re

_SIZE = re.compile(r"(?i)^\s*(\d[\d_,]*(?:\.\d+)?)\s*(b|k|kb|kib|m|mb|mib|g|gb|gib|t|tb|tib)?\s*$")
_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "kib": 2**10, "m": 10**6, "mb": 10**6, "mib": 2**20,
          "g": 10**9, "gb": 10**9, "gib": 2**30, "t": 10**12, "tb": 10**12, "tib": 2**40}


def parse_size(text: str) -> int:
    """Bytes from ``64KiB``, ``2MiB``, ``1_000_000``, ``1.5MB``, ``4k`` (k/kB/MB/GB: powers of
    1000; KiB/MiB/GiB: powers of 1024; case does not matter); a ValueError otherwise.

    >>> parse_size("lots")
    Traceback (most recent call last):
    ...
    ValueError: not a size: 'lots' (try 65536, 64KiB, 2MiB, 1_000_000)
    """
    match = _SIZE.match(text)
    if not match:
        raise ValueError(f"not a size: {text!r} (try 65536, 64KiB, 2MiB, 1_000_000)")
    number = float(match.group(1).replace("_", "").replace(",", ""))
    value = int(number * _UNITS[(match.group(2) or "").lower()])
    if value <= 0:
        raise ValueError(f"a size must be positive, got {text!r}")
    return value
