"""Small SSDlets to start from (and the ones the tests and benchmarks run).

* :data:`parse_lines` — file pages to the non-negative integers written one per line;
* :data:`keep_above` — the values above an argument (a filter);
* :data:`total` — the sum and count of everything it was sent (an aggregate).

>>> parse_lines
SSDlet parse_lines(pages: pages) -> (numbers: int64); state partial: int64, digits: int64; work bytes, parsed
"""
import pyarrow as pa

from ndp_core.ssdlets.ports import PAGES, Out
from ndp_core.ssdlets.program import ssdlet

__all__ = ["parse_lines", "keep_above", "total"]


@ssdlet(inputs={"pages": PAGES}, outputs={"numbers": pa.int64()},
        state={"partial": pa.int64(), "digits": pa.int64()}, work={"bytes": 2.0, "parsed": 10.0})
def parse_lines(p):
    """One non-negative integer per line; a number cut by a packet boundary
    continues from the state."""
    n = 0
    for i in range(p.pages.size):
        b = p.pages[i]
        if b == 10:
            if p.digits[0] > 0:
                p.numbers[n] = p.partial[0]
                n += 1
            p.partial[0] = 0
            p.digits[0] = 0
        else:
            p.partial[0] = p.partial[0] * 10 + (b - 48)
            p.digits[0] += 1
    p.bytes[0] += p.pages.size
    p.parsed[0] += n
    return n


@ssdlet(inputs={"x": pa.int64()}, outputs={"y": pa.int64()}, args={"floor": pa.int64()}, work={"tested": 3.0})
def keep_above(p):
    n = 0
    for i in range(p.x.size):
        if p.x[i] > p.floor:
            p.y[n] = p.x[i]
            n += 1
    p.tested[0] += p.x.size
    return n


@ssdlet(inputs={"x": pa.int64()}, outputs={"total": Out(pa.int64(), rows=1), "count": Out(pa.int64(), rows=1)},
        state={"acc": pa.int64(), "n": pa.int64()}, work={"added": 1.0})
def total(p):
    for i in range(p.x.size):
        p.acc[0] += p.x[i]
    p.n[0] += p.x.size
    p.added[0] += p.x.size
    if p.at_end:
        p.total[0] = p.acc[0]
        p.count[0] = p.n[0]
        return 1, 1
    return 0, 0
