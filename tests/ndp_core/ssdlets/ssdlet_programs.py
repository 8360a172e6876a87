"""SSDlets only the tests need (module level: their source must be readable)."""
import pyarrow as pa

from ndp_core.ssdlets import ssdlet


@ssdlet(inputs={"x": pa.int64()}, outputs={"y": pa.float64()}, args={"factor": pa.float64()})
def scale(p):
    for i in range(p.x.size):
        p.y[i] = p.x[i] * p.factor
    return p.x.size


@ssdlet(inputs={"x": pa.int64()}, outputs={"y": pa.int64()})
def writes_too_far(p):
    for i in range(p.x.size + 1):
        p.y[i] = 1
    return p.x.size


@ssdlet(inputs={"x": pa.int64()}, outputs={"y": pa.int64()})
def never_ends(p):
    k = 0
    while k >= 0:
        k = (k + 1) % 7
    return 0


@ssdlet(inputs={"x": pa.int64()}, outputs={"y": pa.int64()})
def claims_too_much(p):
    return p.x.size + 5
