"""The line filter (pandas' skiprows, comment, skipinitialspace, lineterminator, skipfooter, header rows) on its own:
the text it hands the reader does not depend on its block size, re-reads give the same bytes, every
byte maps back to the same byte on the same line of the file, errors name the file's lines and offsets,
and on random files the frames equal ``pandas.read_csv``'s."""
from __future__ import annotations

import io
import random
import re
import warnings

import numpy as np
import pandas as pd
import pyarrow.csv as pacsv
import pytest

import arrow_bridge
from arrow_bridge.errors import CsvParseError
from arrow_bridge.kernels.tokenizer import count_line_breaks
from arrow_bridge.line_filters import LineFilterSource, LineRules, open_text
from arrow_bridge.source import OpeningOptions, RangeSource, open_source
from csvgen import NonSeekableStream

MESSY = (b"\xef\xbb\xbf# made by hand\r\n"
         b"id,name,note\r\n"
         b'1,"a\nb",x # tail\n'
         b"\n"
         b"   \t\n"
         b"#2,skipped,line\r"
         b'3, "c, d",  y\r\n'
         b'4,"q""#",z#\n'
         b"5,e,\"f\r\ng\"\n"
         b"6,h,i")

RULES = {
    "comment": LineRules(comment="#"),
    "skiprows list": LineRules(skiprows=[1, 4, 6]),
    "skiprows callable": LineRules(skiprows=lambda i: i % 2 == 1),
    "skiprows int": LineRules(skiprows=3),
    "skipinitialspace": LineRules(skipinitialspace=True),
    "header records": LineRules(header_records=2, comment="#"),
    "everything": LineRules(skiprows=[2], comment="#", skipinitialspace=True, header_records=1),
    "skipfooter": LineRules(skipfooter=3),
    "skipfooter and the others": LineRules(skipfooter=2, skiprows=[1, 7], comment="#", header_records=1),
    "skipfooter and a callable": LineRules(skipfooter=1, skiprows=lambda i: i in (2, 9)),
}


def filtered(data: bytes, rules: LineRules, block_size: int = 1 << 20) -> bytes:
    with LineFilterSource(open_source(data), rules, block_size=block_size) as src:
        return src.read_block(4 * len(data) + 16).tobytes()


@pytest.mark.parametrize("name", list(RULES))
@pytest.mark.parametrize("block_size", [1, 2, 3, 5, 16])
def test_text_does_not_depend_on_the_block_size(name, block_size):
    assert filtered(MESSY, RULES[name], block_size) == filtered(MESSY, RULES[name])


@pytest.mark.parametrize("name", list(RULES))
def test_every_byte_maps_back_to_itself_on_its_own_line(name):
    """Kept bytes map to the same byte in the file, on the same physical line (what error lines rely on:
    the reader counts the breaks in the text it sees)."""
    rules = RULES[name]
    for block_size in (4, 1 << 20):
        with LineFilterSource(open_source(MESSY), rules, block_size=block_size) as src:
            text = src.read_block(4 * len(MESSY)).tobytes()
            buf = np.frombuffer(text, np.uint8).copy()
            raw = np.frombuffer(MESSY, np.uint8).copy()
            for at in range(len(text)):
                origin = src.file_offset(at)
                if text[at] not in b"\r\n":
                    assert MESSY[origin] == text[at], (at, origin)
                    assert count_line_breaks(buf, 0, at) == count_line_breaks(raw, 0, origin), (at, origin)


@pytest.mark.parametrize("name", list(RULES))
def test_reads_at_an_offset_give_the_sequential_text(name):
    text = filtered(MESSY, RULES[name])
    rng = random.Random(0)
    with LineFilterSource(open_source(MESSY), RULES[name], block_size=7) as src:
        src.read_block(5)  # part of the text read in order, the rest filtered on demand
        for _ in range(60):
            offset, length = rng.randrange(len(text) + 3), rng.randrange(1, 40)
            assert src.read_range(offset, length).tobytes() == text[offset: offset + length]


def test_the_rest_passes_through_after_the_last_skipped_line():
    data = b"skip\nskip\n" + b"".join(b"%d,   x\n" % i for i in range(1000))
    with LineFilterSource(open_source(data), LineRules(skiprows=2), block_size=64) as src:
        text = src.read_block(len(data) * 2).tobytes()
        assert text == b"\r\n\r\n" + data[10:]
        assert src.file_offset(len(text) - 3) == len(data) - 3
        assert src.read_range(500, 20).tobytes() == text[500:520]


def test_header_rows_are_captured_and_the_last_stays():
    rules = LineRules(header_records=2, header_rows=(0, 2), comment="#")
    assert filtered(b'#c\na,"b,c"\nskip\nx,y # z\n1,2\n', rules) == b'\r\n\r\n\r\nx,y \n1,2\n'
    assert rules.captured == [b'a,"b,c"', b"x,y "]


def test_a_callable_is_asked_about_lines_that_exist_in_order():
    asked = []
    flags = [False, True, False, True, False, False]  # indexing past the end would raise, as in pandas it never is

    def skip(i: int) -> bool:
        asked.append(i)
        return flags[i]

    frame = arrow_bridge.read_pandas(io.BytesIO(b"a\n1\n2\n3\n4\n5\n"), skiprows=skip, dtype_backend="numpy")
    assert frame.a.tolist() == [2, 4, 5]
    assert asked == sorted(set(asked)) and max(asked) <= 5


@pytest.mark.parametrize("block_size", [1, 2, 3, 5, 16, 1 << 20])
def test_blanks_before_a_comment_are_a_record_as_in_pandas(block_size, write_file):
    """pandas skips a line of blanks, but not one of blanks then a comment: that is a record
    of one field holding the blanks (the filter quotes them so the reader keeps them)."""
    data = b"a,b\n  # note\n1,2\n\t#\n  \n3,4\n #end"
    assert filtered(data, LineRules(comment="#"), block_size) == filtered(data, LineRules(comment="#"))
    path = write_file("commented.csv", data)
    pd.testing.assert_frame_equal(arrow_bridge.read_pandas(path, comment="#", block_size=max(block_size, 64),
                                                           dtype_backend="numpy"),
                                  pd.read_csv(path, comment="#"), check_exact=True)


def test_a_callable_that_raises_raises():
    with pytest.raises(ZeroDivisionError):
        arrow_bridge.read_pandas(io.BytesIO(b"a\n1\n2\n"), skiprows=lambda i: 1 / (i - 2))


def test_a_line_break_outside_quotes_with_another_terminator_is_refused_naming_it():
    with pytest.raises(NotImplementedError, match=r"line 3: lineterminator='~', and a LF outside quotes "
                                                  r"\(byte offset 8\)"):
        arrow_bridge.read_pandas(io.BytesIO(b'a~"1\n"~2\n3~'), lineterminator="~")


# ---- errors name the file's own lines and offsets ----------------------------------------------------------

ERROR_CASES = {
    "comment": (b"a,b\n# c1\n1,2\n#c2\n3,BAD # t\n5,6\n", dict(comment="#")),
    "skiprows list": (b'a,b\nskip\n"q\nq",1\n1,2\n3,BAD\n', dict(skiprows=[1, 2])),
    "skiprows callable": (b"a,b\n1,2\nx\n3,BAD\n", dict(skiprows=lambda i: i == 2)),
    "skipinitialspace": (b"a, b\n1, 2\n3,   BAD\n", dict(skipinitialspace=True)),
    "header": (b"x\n#y\nx\na,b\n1,2\n3,BAD\n", dict(header=2, comment="#")),
    "crlf and lone cr": (b"a,b\r\n#c\r1,2\r\n\r\n#d\n3,BAD\r\n", dict(comment="#")),
}


@pytest.mark.parametrize("case", list(ERROR_CASES))
@pytest.mark.parametrize("source", ["bytes", "pipe"])
def test_errors_name_the_files_line_and_offset(case, source):
    data, options = ERROR_CASES[case]
    at = data.index(b"BAD")
    line = 1 + count_line_breaks(np.frombuffer(data, np.uint8).copy(), 0, at)
    given = io.BytesIO(data) if source == "bytes" else NonSeekableStream(data)
    with pytest.raises(CsvParseError) as caught:
        arrow_bridge.read_pandas(given, dtype={"b": "int64"}, **options)
    assert (caught.value.line, caught.value.byte_offset, caught.value.column) == (line, at, "b")


def test_errors_far_down_a_transcoded_file():
    text = "a,b\n" + "".join(f"{i},{i} # é\n" for i in range(60_000)) + "9,BAD\n"
    data = text.encode("utf-16")
    with pytest.raises(CsvParseError) as caught:
        arrow_bridge.read_pandas(io.BytesIO(data), comment="#", encoding="utf-16", dtype={"b": "int64"})
    assert caught.value.line == 60_002
    assert caught.value.byte_offset == 2 + 2 * text.index("BAD")  # the BOM, then two bytes a character


def test_a_pipe_error_past_the_kept_blocks_names_its_block():
    rows = [b"%d,%d # c\n" % (i, i) for i in range(20_000)]
    rows[100] = b"9,BAD\n"
    data = b"a,b\n" + b"".join(rows)
    with pytest.raises(CsvParseError) as caught:
        with LineFilterSource(open_source(NonSeekableStream(data)), LineRules(comment="#"), block_size=4096, keep=8192) as src:
            arrow_bridge.read_csv(src, dtype={"b": "int64"}, block_size=1 << 16)
    assert caught.value.line == 102  # lines need no map
    assert "exact offset is no longer known" in str(caught.value)
    assert 0 <= data.index(b"BAD") - caught.value.byte_offset < 4096


def test_a_device_split_or_byte_range_refuse_line_keywords(write_file):
    path = write_file("t.csv", b"a\n#c\n1\n")
    with pytest.raises(ValueError, match="comment"):
        with open_text(path, OpeningOptions(line_rules=LineRules(comment="#")), for_device=True):
            pass
    with pytest.raises(NotImplementedError, match="comment with byte_range"):
        arrow_bridge.read_pandas(path, comment="#", byte_range=(0, 2))
    with pytest.raises(ValueError, match="byte_range with pandas' comment"):
        RangeSource(LineFilterSource(open_source(path), LineRules(comment="#")), 0, 2)


# ---- random files against pandas.read_csv ---------------------------------------------------------------

def _random_case(rng: random.Random) -> tuple[bytes, dict]:
    """A small random file and keywords: quoted fields with delimiters, quotes, line breaks and '#',
    leading spaces, comment and blank-looking lines, LF/CRLF/CR ends or a custom terminator."""
    options: dict = {}
    terminator = "~" if rng.random() < 0.2 else None
    sep = rng.choice([",", ",", ";", "\t"])
    if terminator:
        options["lineterminator"] = terminator
    if sep != ",":
        options["sep"] = sep
    if rng.random() < 0.5:
        options["comment"] = "#"
    if rng.random() < 0.4:
        options["skipinitialspace"] = True
    if rng.random() < 0.15:
        options["escapechar"] = "\\"
    pick = rng.random()
    if pick < 0.25:
        options["skiprows"] = rng.randint(0, 3)
    elif pick < 0.5:
        options["skiprows"] = sorted(rng.sample(range(6), rng.randint(1, 3)))
    elif pick < 0.65:
        options["skiprows"] = (lambda m: lambda i: i % m == 1)(rng.randint(2, 3))
    pick = rng.random()
    if pick < 0.5:
        options["header"] = None
    elif pick < 0.75:
        options["header"] = rng.randint(1, 2)
    scanning = bool({"comment", "skipinitialspace", "lineterminator"} & set(options)) or \
        callable(options.get("skiprows"))

    def field() -> str:
        if rng.random() < 0.25:
            inner = "".join(rng.choice(['a', sep, '""', '\n', '\r\n', '#', ' ', '~']) for _ in range(rng.randint(0, 4)))
            spaces = " " * rng.randint(0, 1) if "skipinitialspace" in options else ""  # else a literal quote
            return spaces + '"' + inner + '"'
        word = "".join(rng.choice("ab1#  \\" if terminator else "ab1#~ \\") for _ in range(rng.randint(0, 3)))
        return word.replace("#", "") if "comment" not in options else word

    ncols, lines = rng.randint(1, 3), []
    for _ in range(rng.randint(1, 9)):
        pick = rng.random()
        if pick < 0.1:
            lines.append("")
        elif pick < 0.17 and "comment" in options:
            lines.append("#" + 'x,y"' * rng.randint(0, 1))
        elif pick < 0.22 and scanning:
            lines.append(rng.choice([" ", "\t", "  \t"]))
        else:
            line = sep.join(field() for _ in range(ncols))
            lines.append(line + ('#tail,"x' if "comment" in options and rng.random() < 0.3 else ""))
    ends = [terminator or (rng.choice(["\n", "\r\n", "\r"]) if rng.random() < 0.3 else "\n") for _ in lines]
    text = "".join(line + end for line, end in zip(lines, ends))
    return (text.rstrip("\r\n~") if rng.random() < 0.3 else text).encode(), options


def _outcome(read, data: bytes, options: dict) -> tuple:
    try:
        frame = read(data, options)
    except Exception as exc:  # noqa: BLE001 - compared below
        return ("error", type(exc).__name__, str(exc))
    names = [str(name) for name in frame.columns] if options.get("header", 0) is not None else []
    return ("frame", names, [[None if v is None else str(v) for v in row] for row in frame.values.tolist()])


def _known_difference(data: bytes, options: dict, theirs: tuple, ours: tuple) -> bool:
    """Differences that are the reader's own, not the line keywords' (docs/reader.md lists them)."""
    if ours[0] == "error" and theirs[0] == "frame" and "expected" in ours[2]:
        return True  # a row with another field count: pandas pads it or takes an index column, the reader raises
    if ours[0] == "error" and "lineterminator" in ours[2]:
        return True  # a line break outside quotes with another terminator: refused, said so
    if theirs[0] == "error" and "EOF following escape character" in theirs[2]:
        return True  # the reader takes an escape character ending the file as itself
    if re.search(rb"\r[^\n]", data) and re.search(rb"(^|[\r\n])[ \t]", data):
        return True  # pandas' blank-line check backs up over a lone CR to the previous LF (a bug)
    scanning = bool({"comment", "skipinitialspace", "lineterminator"} & set(options)) or \
        callable(options.get("skiprows"))
    if not scanning and re.search(rb"(^|[\r\n])[ \t]+([\r\n]|$)", data):
        return True  # a blank-looking line after the filter passes the text through: the reader's row
    if theirs[0] == ours[0] == "frame" and theirs[2] == ours[2]:  # empty header names: pandas' "Unnamed: k"
        return all(a == b or a.startswith("Unnamed") and (b == "" or b.startswith(".")) for a, b in
                   zip(theirs[1], ours[1]))
    return False


def test_random_files_give_pandas_frame():
    rng, differences, compared, excused = random.Random(20240607), [], 0, 0
    for _ in range(400):
        data, options = _random_case(rng)
        theirs = _outcome(lambda d, o: pd.read_csv(io.BytesIO(d), dtype=str, na_filter=False, **o), data, options)
        ours = _outcome(lambda d, o: arrow_bridge.read_pandas(io.BytesIO(d), dtype="string", na_filter=False,
                                                               dtype_backend="numpy", **o), data, options)
        if theirs[0] == ours[0] == "error" or theirs == ours:
            compared += theirs == ours
            continue
        if _known_difference(data, options, theirs, ours):
            excused += 1
        else:
            differences.append((data, options, theirs, ours))
    assert not differences, differences[:3]
    assert compared > 2 * excused  # most cases are compared, not excused (205 against 84 as written)



@pytest.mark.parametrize("data, keywords", [
    (b"a,b\n#comment here long\n1,2\n3,4,5\n6,7\n", dict(comment="#")),
    (b"a,b\n1,2\nskipped\n3,4,5\n6,7\n", dict(skiprows=[2])),
    ("a,b\n\u00e9,2\n3,4,5\n6,7\n".encode("latin-1"), dict(encoding="latin-1")),
    ("a,b\n#\u00e9\n\u00e9,2\n3,4,5\n6,7\n".encode("latin-1"), dict(encoding="latin-1", comment="#")),
], ids=["comment", "skiprows", "latin-1", "latin-1 and comment"])
def test_bad_line_warnings_name_the_files_line_and_offset(data, keywords):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        arrow_bridge.read_csv(io.BytesIO(data), on_bad_lines="warn", **keywords)
    line = data[:data.index(b"3,4,5")].count(b"\n") + 1
    assert [str(w.message) for w in seen] == [
        f"skipping bad line: <BytesIO>:{line}: expected 2 fields, got 3: '3,4,5' (byte offset {data.index(b'3,4,5')})"]


# ---- skipfooter: the text ends where the footer begins ---------------------------------------------------

FOOTERS = {  # files with a footer pandas' skipfooter is made for, and the keywords beside it
    "summary line": (b"id,name\n1,x\n2,y\n3,z\nTotal: 3 rows\n", dict(skipfooter=1)),
    "two footer lines": (b"id,name\n1,x\n2,y\n\nexported by a tool,2026-11-28\n", dict(skipfooter=2)),
    "blank lines count": (b"id,name\n1,x\n2,y\n3,z\n\n\n", dict(skipfooter=2)),
    "a quoted line break is one line": (b'id,name\n1,x\n2,"y\nz"\ntotal,9\n', dict(skipfooter=2)),
    "comment lines count": (b"id,name\n1,x\n2,y\n#c\ntotal,9\n", dict(skipfooter=2, comment="#")),
    "no line end at the end": (b"id,name\n1,x\n2,y\ntotal", dict(skipfooter=1)),
    "CRLF": (b"id,name\r\n1,x\r\n2,y\r\ntotal\r\n", dict(skipfooter=1)),
    "CR": (b"id,name\r1,x\r2,y\rtotal\r", dict(skipfooter=1)),
    "a skipped line in the footer": (b"id,name\n1,x\n2,y\n3,z\n", dict(skipfooter=1, skiprows=[3])),
    "a skipped line before it": (b"id,name\n1,x\n2,y\n3,z\n", dict(skipfooter=1, skiprows=[2])),
    "a callable": (b"id,name\n1,x\n2,y\n3,z\nTotal: 3\n", dict(skipfooter=1, skiprows=lambda i: i == 2)),
    "header=1": (b"exported\nid,name\n1,x\n2,y\nend\n", dict(skipfooter=1, header=1)),
    "header=None": (b"1,x\n2,y\n3\n", dict(skipfooter=1, header=None)),
    "all of it but the header": (b"id\n1\n2\n3\n", dict(skipfooter=5)),
    "skip_blank_lines=False": (b"id\n1\n\n2\n3\n", dict(skipfooter=1, skip_blank_lines=False)),
    "a BOM": (b"\xef\xbb\xbfid\n1\n2\n", dict(skipfooter=1)),
    "CR, a footer line starting with the delimiter": (b"a,b\r1,x\r,9\r", dict(skipfooter=1)),
    "CR, two such lines": (b"a,b\r1,x\r,9\r,8\r", dict(skipfooter=2)),
    "names= (no header row)": (b"1,x\n2,y\n3,z\n", dict(names=["a", "b"], skipfooter=2)),
    "names=, all of it footer": (b"1,x\n2,y\n", dict(names=["a", "b"], skipfooter=2)),
    "header=None, all of it footer": (b"id,name\ntotal,9", dict(header=None, skipfooter=2)),
    "header=None, blank lines and a footer record": (b"\n\n1,x\n", dict(header=None, skipfooter=1)),
    "header=None, a comment and a footer record": (b"#c\n1,x\n", dict(header=None, skipfooter=1, comment="#")),
}


@pytest.mark.parametrize("case", list(FOOTERS))
def test_skipfooter_gives_pandas_frame_with_the_types_of_the_rows_kept(case):
    """pandas reads skipfooter with its Python engine; the types are those of the rows before the footer."""
    data, keywords = FOOTERS[case]
    expected = pd.read_csv(io.BytesIO(data), engine="python", **keywords)
    got = arrow_bridge.read_pandas(io.BytesIO(data), dtype_backend="numpy", **keywords)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


def test_skipfooter_in_chunks_read_csv_and_a_path(write_file):
    data = b"id,v\n" + b"".join(b"%d,%d.5\n" % (i, i) for i in range(50)) + b"rows: 50\n(end)\n"
    path = write_file("footer.csv", data)
    whole = arrow_bridge.read_pandas(path, skipfooter=2)
    assert str(whole.dtypes["id"]) == "int64[pyarrow]" and len(whole) == 50
    with arrow_bridge.read_pandas(path, skipfooter=2, chunksize=16) as chunks:
        pd.testing.assert_frame_equal(pd.concat(list(chunks)), whole)
    assert arrow_bridge.read_csv(path, skipfooter=2).equals(arrow_bridge.read_csv(io.BytesIO(data[:data.index(b"rows")])))


def test_skipfooter_with_pyarrows_column_names_spares_no_record():
    data = b"1,x\n2,y\n3,z\n"
    for read_options in (pacsv.ReadOptions(column_names=["a", "b"]), pacsv.ReadOptions(autogenerate_column_names=True)):
        table = arrow_bridge.read_csv(io.BytesIO(data), read_options=read_options, skipfooter=2)
        assert table.equals(pacsv.read_csv(io.BytesIO(data[:4]), read_options=read_options))


def test_skipfooter_with_nrows_is_refused_as_pandas_refuses_it():
    for keywords in (dict(), dict(sep=None)):
        with pytest.raises(ValueError, match="'skipfooter' not supported with 'nrows'"):
            arrow_bridge.read_pandas(io.BytesIO(b"a\n1\n2\n"), skipfooter=1, nrows=1, **keywords)
        none = dict(skipfooter=1, nrows=0)  # no row read: pandas allows it
        expected = pd.read_csv(io.BytesIO(b"a\n1\n2\n"), engine="python", **none)
        got = arrow_bridge.read_pandas(io.BytesIO(b"a\n1\n2\n"), dtype_backend="numpy", **none, **keywords)
        pd.testing.assert_frame_equal(got, expected, check_exact=True)


def test_skipfooter_needs_a_source_it_can_read_twice():
    with pytest.raises(NotImplementedError, match="skipfooter needs a source it can read twice"):
        arrow_bridge.read_pandas(NonSeekableStream(b"a\n1\nend\n"), skipfooter=1)


@pytest.mark.parametrize("value, message", [(-1, "skipfooter cannot be negative"),
                                            (1.5, "skipfooter must be an integer")])
def test_skipfooter_is_checked_as_pandas_checks_it(value, message):
    with pytest.raises(ValueError, match=message):
        arrow_bridge.read_pandas(io.BytesIO(b"a\n1\n"), skipfooter=value)


def test_skipfooter_where_the_text_is_read_as_it_is_drops_rows_after_the_read():
    """sep=None (the dialect sniffed from the file's bytes): the footer's rows go after the read."""
    data = b"id;name\n1;x\n2;y\n3;z\n"
    expected = pd.read_csv(io.BytesIO(data), sep=None, engine="python", skipfooter=1)
    got = arrow_bridge.read_pandas(io.BytesIO(data), sep=None, skipfooter=1, dtype_backend="numpy")
    pd.testing.assert_frame_equal(got, expected)
