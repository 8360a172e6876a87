"""The span cutter: spans end at line breaks, and unread spans (those a device
parses from the file itself) are cut exactly where read ones would be."""
from unittest import mock

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from arrow_bridge import spans
from arrow_bridge.source import RangeSource, open_source
from arrow_bridge.spans import Span, SpanCutter, recut


def _spans(path, block_size, unread=None, start=0, stop=None):
    """``(offset, length, at_eof, bytes, was unread)`` of every span of the file (or byte range)."""
    source = open_source(str(path))
    if stop is not None:
        source = RangeSource(source, start, stop)
    with source:
        cutter = SpanCutter(source, block_size, np.empty(0, np.uint8), 0, False, left_unread=unread)
        out = []
        for span in cutter:
            was_unread = not span.is_read
            out.append((span.offset, span.length, span.at_eof, bytes(span.buf), was_unread))
        return out


_LINES = st.lists(st.tuples(st.binary(max_size=40).map(lambda b: b.replace(b"\r", b"").replace(b"\n", b"")),
                            st.sampled_from([b"\n", b"\r\n", b"\r"])), max_size=60)


@settings(max_examples=150, deadline=None)
@given(lines=_LINES, tail=st.binary(max_size=10), block_size=st.integers(1, 200),
       pattern=st.integers(0, 255), byte_range=st.booleans(), window=st.sampled_from([1, 2, 5, 16, 64 << 10]))
def test_unread_spans_are_cut_where_read_ones_are(write_file, lines, tail, block_size, pattern, byte_range, window):
    """With cut windows shorter than the blocks too: a cut found in the window,
    and no line break in it (the span is then read)."""
    data = b"".join(text + end for text, end in lines) + tail
    path = write_file("data.csv", data)
    start, stop = (len(data) // 3, len(data)) if byte_range else (0, None)

    def unread(offset: int) -> bool:  # any fixed choice per offset
        return bool((pattern >> ((offset // max(block_size, 1)) % 8)) & 1)

    read = _spans(path, block_size, None, start, stop)
    with mock.patch.object(spans, "_CUT_WINDOW", window):
        mixed = _spans(path, block_size, unread, start, stop)
    assert [s[:4] for s in mixed] == [s[:4] for s in read]
    assert b"".join(s[3] for s in mixed) == data[start:stop]
    assert not any(s[4] for s in read)


def test_only_the_last_bytes_of_an_unread_span_are_read(write_file):
    path = write_file("data.csv", b"".join(b"%d,%d\n" % (i, i * 7) for i in range(300_000)))
    read = _spans(path, 1 << 20)
    source = open_source(str(path))
    reads = []
    original = source.read_range
    source.read_range = lambda offset, length, out=None: reads.append(length) or original(offset, length, out)
    with source:
        spans = list(SpanCutter(source, 1 << 20, np.empty(0, np.uint8), 0, False, left_unread=lambda offset: True))
        assert [(s.offset, s.length, s.at_eof) for s in spans] == [s[:3] for s in read]
        assert all(length <= 64 << 10 for length in reads)  # one cut window per unread span
        assert not spans[0].is_read
        assert bytes(spans[0].buf) == read[0][3]  # read when asked for
        assert spans[-1].at_eof and not spans[-1].is_read  # the file's end too: its parser reads it
        assert bytes(spans[-1].buf) == read[-1][3]


def test_a_cut_inside_quotes_joins_an_unread_tail_unread(write_file):
    path = write_file("data.csv", b'a,"b\nc"\nd,e\n')
    with open_source(str(path)) as source:
        first = Span.unread(source, 0, 5, False, 0)  # ends inside the quotes
        following = Span.unread(source, 5, 9, True, 1)
        joined = recut(first, 2, following, source)
        assert (joined.offset, joined.length, joined.at_eof, joined.index) == (2, 12, True, 1)
        assert not joined.is_read and "unread" in repr(joined)
        assert bytes(joined.buf) == b'"b\nc"\nd,e\n' and joined.is_read
        read = recut(Span(first.buf, 0, False, 0), 2, Span(following.buf, 5, True, 1), source)
        assert read.is_read and bytes(read.buf) == bytes(joined.buf)



def test_a_record_of_many_blocks_is_scanned_once_and_copied_a_few_times(write_file):
    """Each step appends one block: its bytes are scanned for the cut once, and
    the room grows geometrically (both were once per step for the whole record
    so far: quadratic in its length). The cuts stay those of a full scan: here
    the record ends with a CR that is the last byte of a step, a cut only once
    the next block shows no LF after it."""
    record = b"x" * 20_003 + b"\r"  # the CR is byte 7 * 2858 - 1 of the file
    data = b"a\r" + record + b"c" * 10 + b"\n"
    path = write_file("long.csv", data)
    scanned, allocated = [], []
    scan, block = spans.last_line_break_end, SpanCutter._block

    def counting_scan(buf, start, end):
        scanned.append(end - start)
        return scan(buf, start, end)

    def counting_block(cutter, size):
        allocated.append(size)
        return block(cutter, size)

    with mock.patch.object(spans, "last_line_break_end", counting_scan), \
            mock.patch.object(SpanCutter, "_block", counting_block):
        got = _spans(path, 7)
    assert [s[3] for s in got] == [b"a\r", record, b"c" * 10 + b"\n"]
    assert sum(scanned) < 2 * len(data)
    assert sum(allocated) < 4 * len(data) and len(allocated) < 20


def test_pooled_unread_spans_are_read_into_recycled_blocks(write_file):
    path = write_file("data.csv", b"".join(b"%d,%d\n" % (i, i * 7) for i in range(300_000)))
    with open_source(str(path)) as source:
        cutter = SpanCutter(source, 1 << 18, np.empty(0, np.uint8), 0, False, left_unread=lambda offset: True,
                            pooled_unread=True)
        blocks, texts = set(), []
        for span in cutter:
            texts.append(bytes(span.buf))
            if span.block is not None:
                blocks.add(span.block.__array_interface__["data"][0])
            cutter.recycle(span)
        assert b"".join(texts) == path.read_bytes()
        assert 0 < len(blocks) <= 2  # each span read into a block handed back by the one before


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(st.sampled_from([b"a", b"bb,1", b"", b"cccc"]), max_size=30),
       ends=st.sampled_from([b"\n", b"\r\n", b"\r"]), prefix=st.integers(0, 6), first_block=st.integers(1, 40))
def test_a_streams_first_span_ends_at_the_last_line_break_of_its_first_block(lines, ends, prefix, first_block):
    """pyarrow's first block: the source's bytes up to ``first_block_end``, cut at their last
    line break (a CRLF whole), or as any span where none lies there; all spans join to the text."""
    data = b"".join(line + ends for line in lines)
    head, rest = np.frombuffer(data[:prefix], np.uint8), data[prefix:]
    with open_source(rest) as source:
        cutter = SpanCutter(source, 8, head, 0, not rest, first_block_end=first_block)
        cut = [span.buf.tobytes() for span in cutter]
    assert b"".join(cut) == data
    window = data[:first_block]
    if len(data) <= first_block:
        assert cut == [data]
        return
    last = max(window.rfind(b"\n"), window.rfind(b"\r"))  # a CR ending the block ends a line (with its LF)
    if last >= 0:
        assert cut[0] == data[:last + (2 if data[last:last + 2] == b"\r\n" else 1)]
