"""Unit arithmetic for profile numbers: PCIe lane rates, MB/s, MHz and us to SI.

Profiles state numbers in the units datasheets use (``MBps`` = 1e6 bytes/s,
``MHz``, ``us``, PCIe generations); the timing model works in bytes, seconds
and hertz. Every conversion goes through here.

>>> bytes_per_s(1600.0), hertz(1500.0), seconds(8.0)
(1600000000.0, 1500000000.0, 8e-06)
>>> round(pcie_link_bytes_per_s(4, 4, 0.889) / 1e9, 2)
7.0
"""
from __future__ import annotations

__all__ = ["PCIE_GENERATIONS", "bytes_per_s", "hertz", "seconds", "pcie_lane_bytes_per_s",
           "pcie_link_bytes_per_s", "capped"]

# PCIe: transfer rate per lane (GT/s) and line-code efficiency per generation (PCI-SIG base specs).
_PCIE_GTS = {1: 2.5, 2: 5.0, 3: 8.0, 4: 16.0, 5: 32.0, 6: 64.0}
_PCIE_ENCODING = {1: 8 / 10, 2: 8 / 10, 3: 128 / 130, 4: 128 / 130, 5: 128 / 130, 6: 242 / 256}
#: The PCIe generations a profile may name.
PCIE_GENERATIONS = tuple(sorted(_PCIE_GTS))


def bytes_per_s(MBps: float) -> float:
    """MB/s (1e6 bytes, as datasheets count) to bytes/s.

    >>> bytes_per_s(0.5)
    500000.0
    """
    return MBps * 1e6


def hertz(MHz: float) -> float:
    """MHz to Hz.

    >>> hertz(2.5)
    2500000.0
    """
    return MHz * 1e6


def seconds(us: float) -> float:
    """Microseconds to seconds.

    >>> seconds(2.0)
    2e-06
    """
    return us * 1e-6


def pcie_lane_bytes_per_s(gen: int) -> float:
    """Raw payload bytes/s of one PCIe lane after line coding (PCI-SIG base specs).

    >>> round(pcie_lane_bytes_per_s(3) / 1e6, 1), round(pcie_lane_bytes_per_s(4) / 1e6, 1)
    (984.6, 1969.2)
    """
    if gen not in _PCIE_GTS:
        raise ValueError(f"link.pcie_gen must be one of {list(PCIE_GENERATIONS)}, got {gen}")
    return _PCIE_GTS[gen] * 1e9 * _PCIE_ENCODING[gen] / 8


def pcie_link_bytes_per_s(gen: int, lanes: int, efficiency: float) -> float:
    """Payload bytes/s of a ``lanes``-wide link, ``efficiency`` the payload share
    left after TLP, DLLP and flow-control overheads.

    >>> pcie_link_bytes_per_s(3, 4, 1.0) == 4 * pcie_lane_bytes_per_s(3)
    True
    """
    return pcie_lane_bytes_per_s(gen) * lanes * efficiency


def capped(rate: float, cap_MBps: float) -> float:
    """``rate`` (bytes/s) limited to ``cap_MBps`` when that is > 0 (0: no cap).

    >>> capped(2e9, 0.0), capped(2e9, 500.0)
    (2000000000.0, 500000000.0)
    """
    return min(rate, bytes_per_s(cap_MBps)) if cap_MBps > 0 else rate
