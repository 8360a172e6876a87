"""SSDlets only the tests need (module level: their source must be readable), and the
three-node graph the tests run."""
import pyarrow as pa

from ndp_core.ssdlets import Application, ssdlet
from ndp_core.ssdlets.examples import keep_above, parse_lines, total


def pipeline(ssd, path, sides, floor=5 * 10**11, **app_options):
    """scan -> parse -> keep_above(floor) -> total; sides: where each of the three runs."""
    app = Application(ssd, **app_options)
    parse = app.add(parse_lines, on=sides[0])
    keep = app.add(keep_above, on=sides[1], floor=floor)
    add = app.add(total, on=sides[2])
    app.scan(parse.pages, path)
    app.connect(parse.numbers, keep.x)
    app.connect(keep.y, add.x)
    app.collect(add.total)
    app.collect(add.count)
    return app.run()


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
