"""SSDlets only the tests need (module level: their source must be readable), and the
three-node graph the tests run."""
import pyarrow as pa

from ndp_core.ssdlets import Application, Nullable, ssdlet
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


@ssdlet(inputs={"x": pa.int64()}, outputs={"y": pa.int64()}, state={"seen": pa.int64()})
def no_negatives(p):
    """Copies its values; a negative one is bad input, located among all the bytes received."""
    for i in range(p.x.size):
        if p.x[i] < 0:
            p.error_at[0] = (p.seen[0] + i) * 8
            raise ValueError("a negative value")
        p.y[i] = p.x[i]
    p.seen[0] += p.x.size
    return p.x.size


@ssdlet(inputs={"s": pa.string()}, outputs={"kept": pa.string()}, args={"first": pa.uint8()},
        work={"strings": 2.0})
def starting_with(p):
    """The strings whose first byte is ``first``: string in, string out."""
    n = 0
    for i in range(p.s.offsets.size - 1):
        a, b = p.s.offsets[i], p.s.offsets[i + 1]
        if b > a and p.s.data[a] == p.first:
            at = p.kept.offsets[n]
            p.kept.data[at:at + b - a] = p.s.data[a:b]
            p.kept.offsets[n + 1] = at + b - a
            n += 1
    p.strings[0] += p.s.offsets.size - 1
    return n


@ssdlet(inputs={"s": pa.string()}, outputs={"n": pa.int64()})
def lengths(p):
    for i in range(p.s.offsets.size - 1):
        p.n[i] = p.s.offsets[i + 1] - p.s.offsets[i]
    return p.s.offsets.size - 1


@ssdlet(inputs={"s": pa.string()}, outputs={"t": pa.string()})
def decreasing_offsets(p):
    p.t.offsets[1], p.t.offsets[2] = 3, 1
    return 2


@ssdlet(inputs={"x": Nullable(pa.float64())}, outputs={"y": Nullable(pa.float64())}, args={"floor": pa.float64()},
        work={"values": 2.0})
def null_below(p):
    """Each value, or null where it is null or below ``floor``: one output row per input row."""
    for i in range(p.x.valid.size):
        keep = p.x.valid[i] == 1 and p.x.values[i] >= p.floor
        p.y.values[i] = p.x.values[i] if keep else 0.0
        p.y.valid[i] = 1 if keep else 0
    p.values[0] += p.x.valid.size
    return p.x.valid.size


@ssdlet(inputs={"s": Nullable(pa.string())}, outputs={"n": Nullable(pa.int64())})
def null_lengths(p):
    """Each string's length in bytes, null for a null string."""
    for i in range(p.s.valid.size):
        p.n.values[i] = p.s.offsets[i + 1] - p.s.offsets[i]
        p.n.valid[i] = p.s.valid[i]
    return p.s.valid.size


@ssdlet(inputs={"x": Nullable(pa.int64())}, outputs={"y": Nullable(pa.int64())})
def validity_of_two(p):
    for i in range(p.x.valid.size):
        p.y.values[i] = p.x.values[i]
        p.y.valid[i] = 2
    return p.x.valid.size


@ssdlet(inputs={"x": Nullable(pa.int64())}, outputs={"y": Nullable(pa.int64())})
def junk_under_nulls(p):
    """Copies the validity, writes 12345 under every value (nulls included)."""
    for i in range(p.x.valid.size):
        p.y.values[i] = 12345
        p.y.valid[i] = p.x.valid[i]
    return p.x.valid.size


@ssdlet(inputs={"x": pa.int64()}, outputs={"y": pa.int64()})
def count_past_capacity(p):
    return p.y.size + 1


@ssdlet(inputs={"x": Nullable(pa.int64())}, outputs={"s": Nullable(pa.string())})
def bytes_under_a_null_string(p):
    p.s.data[0] = 65
    p.s.offsets[1] = 1
    p.s.valid[0] = 0
    return 1


@ssdlet(inputs={"x": pa.int64()}, outputs={"y": pa.int64()})
def scribbles_on_its_input(p):
    for i in range(p.x.size):
        p.y[i] = p.x[i]
        p.x[i] = -1
    return p.x.size


@ssdlet(inputs={"x": pa.int64()}, outputs={"y": pa.int64()}, work={f"w{k}": 1.0 for k in range(40)})
def many_counters(p):
    """42 fields in ``p``: more than a Python call or tuple display takes without a list."""
    for i in range(p.x.size):
        p.y[i] = p.x[i]
    p.w0[0] += p.x.size
    p.w39[0] += 1
    return p.x.size
