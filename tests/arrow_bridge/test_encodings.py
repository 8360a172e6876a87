"""Encodings: every Python text codec read as UTF-8, block by block.

Files are written with Python's codecs; the reader's Table must equal
pyarrow's (``ReadOptions(encoding=...)``) and its pandas frame pandas' own,
whatever the transcoding block (multi-byte characters split across blocks) and
the span size; errors name offsets in the file as written.
"""
from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pytest
from csvgen import NonSeekableStream, assert_tables_identical, csv_cases, error_signature, outcome
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import arrow_bridge
from arrow_bridge.errors import CsvDecodeError
from arrow_bridge.options import CsvOptions, resolve_options
from arrow_bridge.source import AsciiSource, TranscodedSource, open_source
from arrow_bridge.transcoding import IncrementalCodec, SingleByteCodec, block_codec, raw_offset
from ndp_core.device import HostOnly

_LATIN = "id,name,price,note\n" + "".join(
    f"{i},{name},{i * 1.25},{note}\n"
    for i, (name, note) in enumerate([("café", "naïve"), ("Müller", "ß-straße"), ("plain", "x"),
                                      ("Ångström", "¿qué?"), ("façade", "«guillemets»")] * 3))
_CP1252 = _LATIN + "99,“smart” quotes,1.5,€ 10 – ‰\n"
_CJK = "id,名前,値\n" + "".join(f"{i},東京{i},{i}.5\n" for i in range(12)) + "12,価格「円」,0.25\n"
_WIDE = _CP1252 + "100,日本語 🙂,2.5,emoji\n"  # outside the BMP: surrogate pairs in UTF-16

# (encoding, text, BOM written before the text)
CASES = [
    ("ascii", "id,name\n1,plain\n2,text\n", ""),
    ("latin-1", _LATIN, ""),
    ("iso-8859-15", _LATIN.replace("ß", "€"), ""),
    ("cp1252", _CP1252, ""),
    ("utf-8-sig", _WIDE, ""),  # the encoder writes the BOM
    ("utf-16", _WIDE, ""),  # the encoder writes a BOM (native order)
    ("utf-16-le", _WIDE, ""),
    ("utf-16-le", _WIDE, "\ufeff"),
    ("utf-16-be", _WIDE, ""),
    ("utf-16-be", _WIDE, "\ufeff"),
    ("utf-32", _WIDE, ""),
    ("utf-32-le", _WIDE, ""),
    ("shift_jis", _CJK, ""),
    ("gb18030", _CJK + "13,😀,1\n", ""),
    ("cp037", "id,name\n1,EBCDIC\n2,façade\n", ""),
]
IDS = [f"{enc}{'+bom' if bom else ''}" for enc, _, bom in CASES]


def _encoded(encoding: str, text: str, bom: str) -> bytes:
    return (bom + text).encode(encoding)


def _pyarrow(data: bytes, encoding: str) -> pa.Table:
    return pacsv.read_csv(io.BytesIO(data), read_options=pacsv.ReadOptions(encoding=encoding))


@pytest.mark.parametrize("encoding,text,bom", CASES, ids=IDS)
def test_same_table_as_pyarrow_and_pandas(write_file, encoding, text, bom):
    data = _encoded(encoding, text, bom)
    path = write_file("enc.csv", data)
    expected = _pyarrow(data, encoding)
    assert_tables_identical(arrow_bridge.read_csv(path, encoding=encoding), expected, "path")
    assert_tables_identical(arrow_bridge.read_csv(io.BytesIO(data), encoding=encoding), expected, "file object")
    assert_tables_identical(arrow_bridge.read_csv(NonSeekableStream(data), encoding=encoding), expected, "pipe")
    via_pyarrow = arrow_bridge.read_csv(path, read_options=pacsv.ReadOptions(encoding=encoding))
    assert_tables_identical(via_pyarrow, expected, "ReadOptions")
    ours = arrow_bridge.read_pandas(path, encoding=encoding, dtype_backend="numpy")
    pd.testing.assert_frame_equal(ours, pd.read_csv(path, encoding=encoding))


@pytest.mark.parametrize("encoding,text,bom", CASES, ids=IDS)
def test_any_block_boundary(encoding, text, bom):
    """Transcoding blocks of 1, 2, 3, 5 and 7 bytes split every multi-byte
    character somewhere; spans of 16 bytes cut the text anywhere too."""
    data = _encoded(encoding, text, bom)
    expected = _pyarrow(data, encoding)
    for block in (1, 2, 3, 5, 7):
        for threads in (1, 3):
            src = TranscodedSource(open_source(io.BytesIO(data)), encoding, block_size=block, threads=threads)
            got = arrow_bridge.read_csv(src, block_size=16, n_threads=2)
            assert_tables_identical(got, expected, f"block {block}, {threads} threads")


def test_codec_kinds():
    """ASCII-compatible single-byte codecs take the table (parallel) path; the others Python's
    incremental decoder (EBCDIC too: its ASCII bytes are not ASCII)."""
    for encoding in ("cp1252", "iso8859-1", "koi8-r", "mac-roman", "cp437"):
        assert isinstance(block_codec(encoding, "strict"), SingleByteCodec), encoding
    for encoding in ("utf-8", "utf-16", "utf-32-le", "shift_jis", "gb18030", "iso2022_jp", "utf-7", "cp037"):
        assert isinstance(block_codec(encoding, "strict"), IncrementalCodec), encoding


def test_stateful_codecs_across_blocks():
    """ISO-2022-JP and UTF-7 carry shift states across blocks."""
    text = "a,b\n1,東京\n2,plain\n3,価格+x\n"
    for encoding in ("iso2022_jp", "utf-7"):
        data = text.encode(encoding)
        for block in (1, 3, 64):
            src = TranscodedSource(open_source(data), encoding, block_size=block)
            assert arrow_bridge.read_csv(src).to_pydict() == {"a": [1, 2, 3], "b": ["東京", "plain", "価格+x"]}


def test_encoding_names_are_normalized():
    assert CsvOptions(encoding="LATIN1").encoding == "iso8859-1"
    assert resolve_options(encoding="UTF8").encoding == "utf-8"
    assert resolve_options(read_options=pacsv.ReadOptions(encoding="cp1252")).encoding == "cp1252"
    assert resolve_options(encoding_errors="replace").encoding_errors == "replace"
    with pytest.raises(LookupError, match="unknown encoding"):
        resolve_options(encoding="no-such-codec")
    with pytest.raises(LookupError, match="not a text encoding"):
        resolve_options(encoding="base64")
    with pytest.raises(LookupError, match="unknown error handler"):
        resolve_options(encoding_errors="bogus")


def test_utf8_and_ascii_are_read_as_they_are(write_file):
    """No transcoding where the text is UTF-8 already (ASCII is checked as it is read)."""
    with open_source(b"a\n", encoding="utf-8") as src:
        assert not isinstance(src, TranscodedSource)
    with open_source(b"a\n", encoding="utf-8-sig") as src:
        assert not isinstance(src, TranscodedSource)
    with open_source(b"a\n", encoding="ascii") as src:
        assert isinstance(src, AsciiSource)
    path = write_file("ascii.csv", b"a,b\n1,x\n")
    with open_source(path, encoding="ascii") as src:
        assert src.path == str(path) and src.random_access  # a device may still read it
    with open_source(path, encoding="ascii", for_device=True) as src:
        assert not isinstance(src, AsciiSource)  # the device reads the pages themselves: nothing to check here


# ---- errors ---------------------------------------------------------------------------------------
_BAD_VALUE = "a,b,c\n" + "".join(f"{i},é€{i},{i}.5\n" for i in range(300)) + "7,xé,zzz\n" + "8,y,1\n"


@pytest.mark.parametrize("encoding", ["cp1252", "utf-16", "utf-32-be", "gb18030", "utf-8-sig"])
@pytest.mark.parametrize("kind", ["path", "bytesio", "stream"])
def test_error_offsets_refer_to_the_file(write_file, encoding, kind):
    data = _BAD_VALUE.encode(encoding)
    source = {"path": lambda: write_file("bad.csv", data), "bytesio": lambda: io.BytesIO(data),
              "stream": lambda: NonSeekableStream(data)}[kind]()
    with pytest.raises(arrow_bridge.CsvParseError) as info:
        arrow_bridge.read_csv(source, encoding=encoding, block_size=256, dtype={"c": "float64"})
    err = info.value
    assert (err.line, err.column) == (302, "c")
    assert data[err.byte_offset:].decode(encoding).startswith("zzz\n")
    assert str(err).endswith(f"(byte offset {err.byte_offset})")


def test_error_offset_in_a_dropped_block_is_the_block_start():
    """A pipe's raw blocks are kept only ``keep`` bytes back: beyond that, the block's start, said so."""
    data = (_BAD_VALUE + "9,z,2\n" * 100).encode("utf-16")
    src = TranscodedSource(open_source(NonSeekableStream(data)), "utf-16", block_size=64, keep=64)
    with pytest.raises(arrow_bridge.CsvParseError, match="exact offset is no longer known") as info:
        arrow_bridge.read_csv(src, dtype={"c": "float64"})
    true_offset = data.index("zzz".encode("utf-16-le"))
    assert info.value.byte_offset % 64 == 0 and true_offset - 64 < info.value.byte_offset <= true_offset


@pytest.mark.parametrize("encoding,bad,expected", [
    ("cp1252", b"\x81", b"\x81"),
    ("ascii", b"\xe9", b"\xe9"),
    ("utf-16-le", "\ud800".encode("utf-16-le", "surrogatepass") + b"x\x00", b"\x00\xd8"),
    ("shift_jis", b"\x81\x20", b"\x81"),
    ("utf-8-sig", b"\xc3(", b"\xc3"),
])
@pytest.mark.parametrize("block", [3, 1 << 20])
@pytest.mark.parametrize("stream", [NonSeekableStream, io.BytesIO], ids=["pipe", "bytesio"])
def test_strict_decode_errors(encoding, bad, expected, block, stream):
    """The line is counted as the text goes by (pipes) or again when the error comes (seekable)."""
    head = "a,b\n" + {"ascii": "1,x\n", "shift_jis": "1,x日\n"}.get(encoding, '1,"x\ré"\r\n') * 500
    line = 1 + head.count("\n") + head.count("\r") - head.count("\r\n")
    data = head.encode(encoding) + "2,".encode(encoding) + bad + "\n3,y\n".encode(encoding)
    base = open_source(stream(data))
    source = TranscodedSource(base, encoding, block_size=block) if encoding != "ascii" else stream(data)
    with pytest.raises(UnicodeDecodeError) as info:  # what pandas raises
        arrow_bridge.read_csv(source, encoding="utf-8" if encoding != "ascii" else "ascii")
    err = info.value
    assert isinstance(err, CsvDecodeError) and isinstance(err, arrow_bridge.CsvParseError)
    assert (err.line, err.encoding, err.object) == (line, block_codec(encoding, "strict").encoding, expected)
    assert data[err.byte_offset:].startswith(expected)
    with pytest.raises(UnicodeDecodeError):
        pd.read_csv(io.BytesIO(data), encoding=encoding)


@pytest.mark.parametrize("options", [{}, dict(chunksize=1), dict(dtype_backend="pyarrow")])
def test_read_pandas_raises_on_bytes_utf8_refuses_as_pandas(options):
    """Without an encoding the reader keeps such a column as bytes (pyarrow's binary);
    pandas' strict decoding raises there, so read_pandas does, naming column and row."""
    data = b"a,b\n1,x\n2,\xe9\n"
    with pytest.raises(UnicodeDecodeError):
        pd.read_csv(io.BytesIO(data))
    with pytest.raises(UnicodeDecodeError, match="column 'b', row [01] "):  # (a chunk's row in chunks)
        frames = arrow_bridge.read_pandas(io.BytesIO(data), **options)
        list(frames) if "chunksize" in options else frames
    assert arrow_bridge.read_csv(io.BytesIO(data)).column("b").type == pa.binary()  # pyarrow's reading


@pytest.mark.parametrize("options", [dict(dtype=str), dict(converters={"a": str}), dict(parse_dates=["a"]),
                                     dict(index_col=0, parse_dates=True), dict(dtype={"a": "category"})],
                         ids=["str", "converter", "parse_dates", "index dates", "category"])
def test_read_pandas_raises_unicode_decode_error_on_a_text_column_too(options):
    data = b"a,b\nx\xe9y,1\n"
    with pytest.raises(UnicodeDecodeError):
        pd.read_csv(io.BytesIO(data), **options)
    with pytest.raises(UnicodeDecodeError) as raised:
        arrow_bridge.read_pandas(io.BytesIO(data), **options)
    assert isinstance(raised.value, arrow_bridge.CsvParseError)
    if raised.value.byte_offset is not None:  # (a converter's column has no location)
        assert (raised.value.object, raised.value.byte_offset) == (b"\xe9", 5)


def test_pyarrow_options_raise_on_undecodable_bytes_as_pyarrow():
    data = b"a,b\n1,\x81\n"
    with pytest.raises(UnicodeDecodeError):
        _pyarrow(data, "cp1252")
    with pytest.raises(UnicodeDecodeError, match="byte offset 6"):
        arrow_bridge.read_csv(io.BytesIO(data), read_options=pacsv.ReadOptions(encoding="cp1252"))


@pytest.mark.parametrize("errors", ["replace", "ignore", "backslashreplace"])
@pytest.mark.parametrize("encoding,bad", [("cp1252", b"\x81"), ("utf-8", b"\xff\xfe"), ("utf-8", b"\xe2\x82"),
                                          ("utf-16-le", b"\x00\xdc"), ("shift_jis", b"\x81\x20")])
def test_error_handlers_as_pandas(encoding, bad, errors):
    data = f"a,b\n1,x{'日' if encoding == 'shift_jis' else 'é'}\n2,x".encode(encoding) + bad + "y\n3,z\n".encode(encoding)
    ours = arrow_bridge.read_pandas(io.BytesIO(data), encoding=encoding, encoding_errors=errors,
                                    dtype_backend="numpy")
    pd.testing.assert_frame_equal(ours, pd.read_csv(io.BytesIO(data), encoding=encoding, encoding_errors=errors))


def test_surrogateescape_keeps_the_bytes():
    """Undecodable bytes pass through unchanged: the column holds them as binary, as pyarrow reads
    text that is not UTF-8 (pandas cannot: its UTF-8 re-encoding fails)."""
    data = b"a,b\n1,x\x81y\n2,z\n"
    table = arrow_bridge.read_csv(io.BytesIO(data), encoding="cp1252", encoding_errors="surrogateescape")
    assert table.to_pydict() == {"a": [1, 2], "b": [b"x\x81y", b"z"]}


def test_utf8_with_replace_matches_pandas():
    """UTF-8 that is not valid: pyarrow's binary column under "strict" (as before), pandas' U+FFFD under "replace"."""
    data = "a,b\n1,é\n".encode() + b"2,\xff\n"
    assert arrow_bridge.read_csv(io.BytesIO(data)).column("b").type == pa.binary()
    ours = arrow_bridge.read_pandas(io.BytesIO(data), encoding_errors="replace", dtype_backend="numpy")
    pd.testing.assert_frame_equal(ours, pd.read_csv(io.BytesIO(data), encoding_errors="replace"))


def test_device_and_byte_range_refuse_transcoding(write_file):
    path = write_file("latin.csv", _LATIN.encode("latin-1"))
    with pytest.raises(ValueError, match="device parses the file's raw pages as UTF-8"):
        arrow_bridge.read_csv(path, encoding="latin-1", device=HostOnly(), split="device")
    with pytest.raises(ValueError, match="byte_range with encoding='iso8859-1'"):
        arrow_bridge.read_csv(path, encoding="latin-1", byte_range=(0, 10), names=["a", "b", "c", "d"])
    # On the host, with a device given, it reads.
    assert arrow_bridge.read_csv(path, encoding="latin-1", device=HostOnly()).num_rows == 15
    with open(path, encoding="latin-1") as text, pytest.raises(TypeError, match="binary mode"):
        arrow_bridge.read_csv(text, encoding="latin-1")  # a file's text: its bytes and encoding are the file's


def test_streaming_reads_transcode_too():
    header, rows = _CP1252.split("\n", 1)
    data = (header + "\n" + rows * 20).encode("cp1252")  # a header once: the first block's types hold
    with arrow_bridge.api.open_csv(io.BytesIO(data), encoding="cp1252", block_size=256) as reader:
        batches = list(reader)
    assert len(batches) > 1
    assert pa.Table.from_batches(batches).equals(arrow_bridge.read_csv(io.BytesIO(data), encoding="cp1252"))


# ---- offsets, random access, memory ----------------------------------------------------------------
def _raw_offset(text: str, i: int, encoding: str, data: bytes) -> int:
    """Where character ``i`` of ``text`` starts in ``data`` (``text`` written in ``encoding``)."""
    bom, bomless = 0, encoding
    if encoding in ("utf-16", "utf-32"):
        bom = 2 if encoding == "utf-16" else 4
        bomless = f"{encoding}-le" if data[:2] == b"\xff\xfe" else f"{encoding}-be"
    elif encoding == "utf-8-sig":
        bom, bomless = 3, "utf-8"
    return bom + len(text[:i].encode(bomless))


@pytest.mark.parametrize("encoding", ["cp1252", "utf-16", "utf-16-be", "utf-32", "gb18030", "shift_jis",
                                      "utf-8-sig"])
def test_file_offset_and_random_access(encoding):
    text = {"cp1252": _CP1252, "shift_jis": _CJK}.get(encoding, _WIDE) * 3
    data = text.encode(encoding)
    utf8 = text.encode("utf-8")
    starts = np.cumsum([0] + [len(c.encode()) for c in text])
    for block in (1, 5, 64):
        with TranscodedSource(open_source(io.BytesIO(data)), encoding, block_size=block) as src:
            assert src.read_block(len(utf8) + 10).tobytes() == utf8
            for i in range(0, len(text) + 1, 7):
                assert src.file_offset(int(starts[i])) == _raw_offset(text, i, encoding, data), (block, i)
            for offset, length in [(0, 5), (3, 40), (len(utf8) - 9, 30), (17, 1)]:
                assert src.read_range(offset, length).tobytes() == utf8[offset: offset + length]


@pytest.mark.parametrize("encoding", ["iso8859-1", "cp1252", "iso8859-7", "koi8-r", "cp437"])
@pytest.mark.parametrize("errors", ["strict", "replace", "ignore", "backslashreplace"])
def test_table_kernel_equals_python(encoding, errors):
    """Every byte, at every alignment of the kernel's 8-byte words, as Python decodes it."""
    codec = block_codec(encoding, errors)
    assert isinstance(codec, SingleByteCodec)
    rng = np.random.default_rng(1)
    data = np.concatenate([np.arange(256, dtype=np.uint8), rng.integers(0, 128, 300, dtype=np.uint8),
                           rng.integers(0, 256, 300, dtype=np.uint8)])
    if errors == "strict":  # undefined bytes raise: keep the ones Python takes
        data = np.array([b for b in data if _decodes(bytes([b]), encoding)], dtype=np.uint8)
    for start in range(9):
        raw = data[start:]
        out, _ = codec.decode(raw)
        assert out.tobytes() == bytes(raw).decode(encoding, errors).encode("utf-8"), start


def _decodes(raw: bytes, encoding: str) -> bool:
    try:
        raw.decode(encoding)
    except UnicodeDecodeError:
        return False
    return True


def test_raw_offset_of_a_character_split_across_blocks():
    codec = block_codec("utf-16-le", "strict")
    raw = np.frombuffer("é🙂x".encode("utf-16-le"), np.uint8)
    # '🙂' (a surrogate pair) starts 2 bytes in; 'x' after it at 6; from the middle of the pair: held
    assert [raw_offset(codec, raw, codec.start_state, True, t) for t in (0, 2, 6)] == [0, 2, 6]
    _, state = codec.decode(raw[:3], codec.start_state, False)
    assert raw_offset(codec, raw[3:], state, True, 0) == -1


def test_a_large_file_is_decoded_a_block_at_a_time(write_file, monkeypatch):
    """20 MB of latin-1: the decoder only ever sees one transcoding block (1 MiB), never the whole file."""
    row = "1,155190,7706,1,17,21168.23,0.04,0.02,N,O,1996-03-13,très résumé à la façade\n".encode("latin-1")
    data = b"a,b,c,d,e,f,g,h,i,j,k,l\n" + row * (20_000_000 // len(row))
    path = write_file("big-latin1.csv", data)
    seen: list[int] = []
    decode = SingleByteCodec.decode

    def spy(self, raw, state=None, final=True):
        seen.append(len(raw))
        return decode(self, raw, state, final)

    monkeypatch.setattr(SingleByteCodec, "decode", spy)
    table = arrow_bridge.read_csv(path, encoding="latin-1")
    assert table.num_rows == len(data) // len(row)
    assert table.column("l")[0].as_py() == "très résumé à la façade"
    assert max(seen) <= 1 << 20 and sum(seen) == len(data) and len(seen) >= 20


# ---- the same read as the UTF-8 file, whatever the encoding (random CSV) ----------------------------
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=csv_cases(max_rows=20), encoding=st.sampled_from(["utf-16", "utf-16-be", "utf-32-le", "gb18030"]),
       block=st.sampled_from([1, 3, 7, 64]), span=st.sampled_from([8, 64, 1 << 20]))
def test_random_csv_reads_as_its_utf8(case, encoding, block, span):
    utf8 = case.data
    try:
        text = utf8.decode("utf-8")
    except UnicodeDecodeError:
        return  # not text: nothing to encode
    data = text.encode(encoding)
    opts = dict(read_options=case.pyarrow_read_options(block_size=case.effective_block_size(span)),
                parse_options=case.dialect.parse_options())
    expected, want_error = outcome(lambda: arrow_bridge.read_csv(io.BytesIO(utf8), **opts))
    src = TranscodedSource(open_source(io.BytesIO(data)), encoding, block_size=block)
    got, error = outcome(lambda: arrow_bridge.read_csv(src, **opts))
    if want_error is not None:
        assert error is not None, want_error
        assert error_signature(error)[:3] == error_signature(want_error)[:3], (error, want_error)
        assert error.reason == want_error.reason, (error, want_error)
        if want_error.byte_offset is not None:  # the same character, in the file as written
            at = len(utf8[: want_error.byte_offset].decode("utf-8"))
            assert error.byte_offset == _raw_offset(text, at, encoding, data), (error, want_error)
    else:
        assert error is None, error
        assert_tables_identical(got, expected)
