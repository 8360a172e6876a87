"""Random CSV files (Hypothesis strategies) and exact-comparison helpers.

Shared by ``test_differential.py`` and ``test_bad_inputs.py``.

* :func:`csv_cases` draws a :class:`CsvCase`: CSV bytes in a random dialect
  (delimiter, quote character, optional escape character), with or without a
  header, 1-6 columns of values from pyarrow-relevant families (ints with
  hex/overflow/edge spellings, floats, inf/nan spellings, bools, dates, times,
  timestamps, strings with delimiters/quotes/newlines/non-ASCII/invalid UTF-8,
  null spellings), random quoting, line endings, BOM, empty lines, a missing
  final newline and, sometimes, malformed rows or an unterminated quote.
* :func:`scan_records` is a small reference tokenizer following pyarrow's
  rules (quotes open only at a field start; ``""`` and the escape character
  inside quotes; LF, CRLF and lone CR end records; empty lines skipped; BOM
  stripped once; ``skip_rows`` counts raw lines): where each record starts,
  its physical line and field count, and whether the file ends inside a
  quoted field.
* :func:`assert_tables_identical` compares two tables exactly: schema, and
  values bit for bit (floats compared through their integer bit patterns, so
  ``-0.0``/``0.0`` and NaN payloads/signs count).
"""
from __future__ import annotations

import datetime
import io
import os
import random
import re
import struct
import sys
import tempfile
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

import pyarrow as pa
import pyarrow.csv as pacsv
from hypothesis import strategies as st

BOM = b"\xef\xbb\xbf"
DEFAULT_NULLS: list[str] = list(pacsv.ConvertOptions().null_values)
TRUE_SPELLINGS = ["1", "True", "TRUE", "true"]
FALSE_SPELLINGS = ["0", "False", "FALSE", "false"]
DELIMITERS = [",", ";", "|", "\t"]
QUOTES = ['"', "'"]
EOLS = {"LF": b"\n", "CRLF": b"\r\n", "CR": b"\r"}


# ==============================================================================================
# Value families: pools of *unquoted field text* (bytes), built once from a fixed seed.
#
# A cell is one draw from a pool (plus one for the family/null/stray choice), so
# a file costs few Hypothesis choices: generation and shrinking stay fast. Each
# pool starts with its simplest value (where shrinking ends) and its hand-picked
# edge spellings, then random values.
# ==============================================================================================
_I64_MIN, _I64_MAX = -(2**63), 2**63 - 1
_INT_EDGES = [0, 1, -1, _I64_MAX, _I64_MIN, _I64_MAX + 1, _I64_MIN - 1, 2**64 - 1, 2**64,
              2**31 - 1, -(2**31), 2**31, 127, 128, -128, -129, 255, 256, 10**20, 2**53 + 1]
_POOL_SIZE = 600


def _padded(rng: random.Random, text: str) -> str:
    """Sometimes surrounds a value with the blanks pyarrow's converters trim."""
    if rng.random() < 0.15:
        return rng.choice(["", " ", "\t", "  "]) + text + rng.choice(["", " ", "\t", "  "])
    return text


def _int_text(rng: random.Random) -> str:
    kind = rng.randrange(6)
    if kind == 0:
        return str(rng.randint(-1000, 1000))
    if kind == 1:
        return str(rng.randint(_I64_MIN, _I64_MAX))
    if kind == 2:
        return str(rng.choice(_INT_EDGES))
    if kind == 3:
        upper, v = rng.random() < 0.3, rng.getrandbits(rng.choice([8, 16, 32, 63, 64]))
        digits = format(v, "X" if upper else "x").rjust(rng.randint(0, 17), "0")
        return ("0X" if upper else "0x") + digits
    if kind == 4:
        return "0" * rng.randint(1, 4) + str(rng.randint(0, 10**6))
    return str(rng.randint(-(10**6), 10**6))


_FLOAT_SPELLINGS = ["inf", "-inf", "+inf", "Inf", "INF", "Infinity", "-Infinity", "iNfInItY",
                    "nan", "NaN", "-nan", "-NaN", "NAN", "+nan", "Nan", "-0", "-0.0", "0.0",
                    ".5", "5.", "-.5", "-5.", "1.e5", "00.5", "+1.5", "1e5", "1E+05", "1e-05",
                    "4.9e-324", "1e400", "-1e400", "1e-400", "1.7976931348623157e308",
                    "1.7976931348623159e308", "2.2250738585072014e-308", "2.225073858507201e-308",
                    "1e", "1e+", ".e5", ".", "1.5.5", "1d5", "1.#INF", "9007199254740993.0"]


def _float_text(rng: random.Random) -> str:
    kind = rng.randrange(6)
    if kind == 0:  # any double, by its bits
        x = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
        return repr(x) if x == x else "nan"
    if kind == 1:  # any float32, printed as such or as a double
        x = struct.unpack("<f", struct.pack("<I", rng.getrandbits(32)))[0]
        return repr(x) if x == x else "-nan"
    if kind == 2:
        return f"%.{rng.randint(0, 20)}e" % (rng.uniform(-1, 1) * 10.0 ** rng.randint(-320, 308))
    if kind == 3:
        return f"%.{rng.randint(0, 8)}f" % rng.uniform(-1e6, 1e6)
    if kind == 4:
        return f"{rng.randint(-999, 999)}.{rng.randint(0, 999999):0{rng.randint(1, 6)}d}"
    return rng.choice(_FLOAT_SPELLINGS)


def _date_text(rng: random.Random) -> str:
    if rng.random() < 0.15:
        return rng.choice(["2020-02-30", "2019-02-29", "2020-02-29", "2020-13-01", "2020-00-10",
                           "2020-01-00", "2020/01/01", "2020-1-1", "0000-01-01", "9999-12-31",
                           "10000-01-01", "20200101", "1969-12-31"])
    d = datetime.date(1, 1, 1) + datetime.timedelta(days=rng.randrange(3652058))
    return f"{d.year:04d}-{d.month:02d}-{d.day:02d}"


def _time_text(rng: random.Random) -> str:
    if rng.random() < 0.15:
        return rng.choice(["24:00:00", "23:59:60", "12:60", "1:02:03", "12:34:5", "12", "00:00",
                           "23:59:59", "12:34:56.789"])
    hh, mm, ss = rng.randrange(24), rng.randrange(60), rng.randrange(60)
    return rng.choice([f"{hh:02d}:{mm:02d}", f"{hh:02d}:{mm:02d}:{ss:02d}"])


_ZONES = ["", "", "", "", "Z", "+01:00", "-0130", "+05", "-00", "+23:59", "z", "+24:00", " +01:00"]


def _timestamp_text(rng: random.Random) -> str:
    if rng.random() < 0.1:
        return rng.choice(["2020-01-01 00:00:00", "2020-01-01T12:34:56.123456789", "2020-01-01 12:34:56Z",
                           "1500-01-01 00:00:00.5", "2262-04-11 23:47:16.854775807",
                           "2262-04-11 23:47:16.854775808", "0000-01-01 00:00:00", "2020-01-01 12"])
    d = datetime.date(1, 1, 1) + datetime.timedelta(days=rng.randrange(3652058))
    sep = rng.choice([" ", "T", "T", " ", "t"])
    hh = rng.randrange(25) if rng.random() < 0.1 else rng.randrange(24)
    text = f"{d.year:04d}-{d.month:02d}-{d.day:02d}{sep}{hh:02d}"
    parts = rng.choice([1, 2, 3, 3, 3])
    if parts >= 2:
        text += f":{rng.randrange(60):02d}"
    if parts >= 3:
        text += f":{rng.randrange(61) if rng.random() < 0.1 else rng.randrange(60):02d}"
        if rng.random() < 0.5:
            text += "." + "".join(rng.choice("0123456789") for _ in range(rng.randint(0, 10)))
    return text + rng.choice(_ZONES)


# Characters for string values: delimiters, quotes, escape, newlines, blanks, non-ASCII.
_STRING_ALPHABET = list("abcXYZ019 -_.:") + [",", ";", "|", "\t", '"', "'", "\\", "\n", "\r",
                                              "é", "ß", "日", "🙂", "\u00a0", "\ufeff"]
_INVALID_UTF8 = [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xc0\x80", b"\xf4\x90\x80\x80", b"\x80"]
_WORDS = ["a", "hello", "None", "NONE", "Null", "-", " ", "yes", "no", "x y", "T", "F", "y", "n"]


def _string_bytes(rng: random.Random) -> bytes:
    if rng.random() < 0.2:
        return rng.choice(_WORDS).encode()
    raw = "".join(rng.choice(_STRING_ALPHABET) for _ in range(rng.randint(0, 8))).encode()
    if rng.random() < 0.05:  # occasionally invalid UTF-8
        at = rng.randint(0, len(raw))
        raw = raw[:at] + rng.choice(_INVALID_UTF8) + raw[at:]
    if rng.random() < 0.1:  # a newline flavour on its own
        raw += rng.choice([b"\r\n", b"\n", b"\r"]) + b"x"
    return raw


def _pool(first: list, make, size: int = _POOL_SIZE, seed: int = 0) -> list[bytes]:
    rng = random.Random(seed)
    out = [v if isinstance(v, bytes) else v.encode() for v in first]
    while len(out) < size:
        v = make(rng)
        out.append(v if isinstance(v, bytes) else v.encode())
    return out


POOLS: dict[str, list[bytes]] = {
    "int": _pool(["1", "0", "-0", "-00", "+1", "+0", "007", "0x", "0xg", "-0x10", "1_000", "0x10", "0XFF",
                  "0xffffffffffffffff", "0x8000000000000000", "0x00000000000000001"]
                 + [str(v) for v in _INT_EDGES], lambda r: _padded(r, _int_text(r)), seed=1),
    "float": _pool(["0.5"] + _FLOAT_SPELLINGS, lambda r: _padded(r, _float_text(r)), seed=2),
    "bool": TRUE_SPELLINGS + FALSE_SPELLINGS + ["tRue", "T", "yes", "no"],
    "date": _pool(["2020-01-01"], lambda r: _padded(r, _date_text(r)), seed=3),
    "time": _pool(["12:34"], lambda r: _padded(r, _time_text(r)), seed=4),
    "timestamp": _pool(["2020-01-01 00:00:00"], _timestamp_text, seed=5),
    "string": _pool(["a"], _string_bytes, seed=6),
    "null": DEFAULT_NULLS + ["", "", ""],
}
POOLS = {k: [v if isinstance(v, bytes) else v.encode() for v in vs] for k, vs in POOLS.items()}
FAMILY_NAMES = sorted(POOLS)
ALL_VALUES: list[bytes] = [v for name in FAMILY_NAMES for v in POOLS[name]]
FAMILIES: dict[str, st.SearchStrategy[bytes]] = {k: st.sampled_from(v) for k, v in POOLS.items()}


def cell_values(family: str) -> st.SearchStrategy[bytes]:
    """A cell of a ``family`` column: mostly the family's values, sometimes a
    null spelling, sometimes a stray value of any family (exercising the
    inference ladder)."""
    own = FAMILIES[family]
    return st.one_of(own, own, own, own, own, own, own, FAMILIES["null"], st.sampled_from(ALL_VALUES))


# ==============================================================================================
# Dialect and field encoding.
# ==============================================================================================
@dataclass(frozen=True)
class Dialect:
    delimiter: str = ","
    quote_char: str = '"'
    escape_char: Optional[str] = None
    double_quote: bool = True

    def parse_options(self, **extra: Any) -> pacsv.ParseOptions:
        """pyarrow's ParseOptions for this dialect (newlines_in_values=True: we
        always handle quoted newlines across blocks)."""
        return pacsv.ParseOptions(delimiter=self.delimiter, quote_char=self.quote_char,
                                  escape_char=self.escape_char or False,
                                  double_quote=self.double_quote, newlines_in_values=True, **extra)

    def pandas_kwargs(self) -> dict[str, Any]:
        kw: dict[str, Any] = {"sep": self.delimiter, "quotechar": self.quote_char}
        if self.escape_char is not None:
            kw["escapechar"] = self.escape_char
        return kw


def _needs_quoting(value: bytes, d: Dialect) -> bool:
    specials = (d.delimiter.encode(), d.quote_char.encode(), b"\r", b"\n")
    return any(s in value for s in specials)


def encode_field(value: bytes, d: Dialect, style: str, force_quote: bool = False,
                 escape_quotes: bool = False) -> bytes:
    """Field text for ``value``. ``style``: 'minimal' (quote when needed),
    'all' (always quote), 'escape' (no quotes; escape specials with the
    escape character). With an escape character, the escape character itself
    is always escaped, quoted or not."""
    q, e = d.quote_char.encode(), (d.escape_char.encode() if d.escape_char else None)
    if e is not None:
        value = value.replace(e, e + e)
    if style == "escape" and e is not None and not force_quote:
        out = bytearray()
        for b in value:
            ch = bytes([b])
            if ch in (d.delimiter.encode(), q, b"\r", b"\n"):
                out += e
            out += ch
        return bytes(out)
    if style == "all" or force_quote or _needs_quoting(value, d):
        inner = value.replace(q, (e if (escape_quotes and e is not None) else q) + q)
        return q + inner + q
    return value


# ==============================================================================================
# The generated file.
# ==============================================================================================
PREAMBLE_CHUNK = 1 << 16  # the reader reads at least this much for BOM/skip_rows/header


@dataclass
class CsvCase:
    """A generated CSV file and what the generator knows about it.

    ``data = prefix + body``. ``prefix`` is an optional BOM plus ``skip_rows``
    filler lines ("padding", 10% of files) that both readers skip
    (``skip_rows``). The padding puts the end of the header near 64 KiB, so
    that the rows that follow are cut into spans by ``block_size`` even by a
    reader that reads at least 64 KiB for its preamble (an earlier version
    did: a small file was then parsed as one span whatever the block size).
    Padded files are read with ``block_size >= 256`` (skipping a 64 KiB line
    a few bytes at a time is slow; see :meth:`effective_block_size`).
    """

    prefix: bytes
    body: bytes
    skip_rows: int
    dialect: Dialect
    header: bool
    ncols: int
    names: Optional[list[str]]  # header names as written (None without a header)
    families: list[str]
    nrows_written: int
    bad_rows: bool = False  # rows with a wrong field count were written
    unterminated: bool = False  # the file was made to end inside a quoted field

    @property
    def data(self) -> bytes:
        return self.prefix + self.body

    @property
    def column_names(self) -> list[str]:
        """The table's column names (pyarrow's f0, f1, ... without a header)."""
        if self.names is not None:
            return list(self.names)
        return [f"f{i}" for i in range(self.ncols)]

    @property
    def unique_names(self) -> bool:
        names = self.column_names
        return len(set(names)) == len(names)

    def effective_block_size(self, block_size: int) -> int:
        """The block size to read this file with (>= 256 for padded files)."""
        return max(block_size, 256) if self.skip_rows else block_size

    def pyarrow_read_options(self, extra_skip: int = 0, **extra: Any) -> pacsv.ReadOptions:
        return pacsv.ReadOptions(autogenerate_column_names=not self.header,
                                 skip_rows=self.skip_rows + extra_skip, **extra)

    def describe_prefix(self) -> str:
        """The prefix in short: ``BOM + 65000*b'#' + b'\\n'`` per padding line."""
        bom = self.prefix.startswith(BOM)
        parts = ["BOM"] if bom else []
        for line in (self.prefix[3:] if bom else self.prefix).splitlines(keepends=True):
            text = line.rstrip(b"\r\n")
            parts.append(f"{len(text)}*b'#' + {line[len(text):]!r}")
        return " + ".join(parts) or "b''"

    def _repr_pretty_(self, printer, cycle) -> None:  # Hypothesis' printer: use __repr__
        printer.text(repr(self))

    def __repr__(self) -> str:  # shown by Hypothesis on failure: compact padding, bytes first
        return (f"CsvCase(prefix=<{self.describe_prefix()}>, body={self.body!r}, skip_rows={self.skip_rows}, "
                f"dialect={self.dialect!r}, header={self.header}, ncols={self.ncols}, "
                f"bad_rows={self.bad_rows}, unterminated={self.unterminated})")


_SPECIAL_NAMES = ["", " x ", "a,b", 'q"q', "é", "x\ny", "NA", "1", "c0"]


@st.composite
def dialects(draw) -> Dialect:
    return Dialect(
        delimiter=draw(st.sampled_from(DELIMITERS)),
        quote_char=draw(st.sampled_from(QUOTES)),
        escape_char=draw(st.sampled_from([None, None, "\\"])),
    )


@st.composite
def csv_cases(draw, max_rows: int = 40, malformed: bool = True, unique_names: bool = False,
              header: Optional[bool] = None, min_cols: int = 1, max_cols: int = 6,
              pad: Optional[bool] = None) -> CsvCase:
    """A random CSV file (see the module docstring).

    ``malformed=False`` never writes bad rows or an unterminated quote;
    ``unique_names`` keeps header names distinct (for ``usecols``); ``pad``
    forces the 64 KiB padding on or off (default: on 10% of the time).
    """
    d = draw(dialects())
    has_header = draw(st.booleans()) if header is None else header
    ncols = draw(st.integers(min_cols, max_cols))
    families = [draw(st.sampled_from(FAMILY_NAMES)) for _ in range(ncols)]
    style = draw(st.sampled_from(["minimal", "minimal", "all"] + (["escape"] if d.escape_char else [])))
    quote_sometimes = draw(st.booleans())  # minimal style: also quote some fields that need none
    escape_quotes = d.escape_char is not None and draw(st.booleans())
    eol_mode = draw(st.sampled_from(["LF", "LF", "CRLF", "CR", "mixed"]))

    def eol() -> bytes:
        if eol_mode == "mixed":
            return EOLS[draw(st.sampled_from(sorted(EOLS)))]
        return EOLS[eol_mode]

    def enc(value: bytes) -> bytes:
        force = style == "minimal" and quote_sometimes and draw(st.integers(0, 3)) == 0
        return encode_field(value, d, style, force_quote=force, escape_quotes=escape_quotes)

    # Rows of raw values.
    nrows = draw(st.integers(0, max_rows))
    rows: list[list[bytes]] = []
    cells = [cell_values(f) for f in families]
    for _ in range(nrows):
        rows.append([draw(c) for c in cells])

    # Header names.
    names: Optional[list[str]] = None
    if has_header:
        names = [f"c{j}" for j in range(ncols)]
        if not unique_names and draw(st.integers(0, 3)) == 0:
            j = draw(st.integers(0, ncols - 1))
            names[j] = draw(st.sampled_from(_SPECIAL_NAMES))

    lines: list[bytes] = []
    if has_header:
        lines.append(d.delimiter.encode().join(enc(n.encode()) for n in names))
    bad_rows = False
    for row in rows:
        fields = [enc(v) for v in row]
        if malformed and draw(st.integers(0, 59)) == 0:  # a wrong field count
            bad_rows = True
            if draw(st.booleans()) and len(fields) > 1:
                del fields[draw(st.integers(0, len(fields) - 1))]
            else:
                fields.append(enc(draw(FAMILIES["int"])))
        lines.append(d.delimiter.encode().join(fields))

    unterminated = False
    if malformed and draw(st.integers(0, 19)) == 0:
        # The last record ends inside a quoted field opened at a field start.
        alphabet = [c for c in "ab1,;|\t\n\r é" if c not in (d.quote_char, d.escape_char)]
        tail = draw(st.text(alphabet=st.sampled_from(alphabet), max_size=6)).encode()
        prefix = [enc(draw(FAMILIES["int"])) for _ in range(ncols - 1)]
        lines.append(d.delimiter.encode().join(prefix + [d.quote_char.encode() + tail]))
        unterminated = True

    # Join with line ends, empty lines, leading empty lines, final newline.
    empty_lines = draw(st.integers(0, 5)) == 0
    out = bytearray()
    if empty_lines and draw(st.booleans()):
        out += eol()
    header_end = 0
    for i, line in enumerate(lines):
        out += line
        last = i == len(lines) - 1
        if not last or not (unterminated or draw(st.integers(0, 4)) == 0):
            out += eol()
        if i == 0 and has_header:
            header_end = len(out)
        if empty_lines and not last and draw(st.integers(0, 3)) == 0:
            out += eol() * draw(st.integers(1, 2))

    # BOM and padding (skipped lines that end the preamble read near the header's end).
    prefix = BOM if draw(st.integers(0, 5)) == 0 else b""
    skip = 0
    if pad if pad is not None else draw(st.integers(0, 9)) == 0:
        slack = draw(st.one_of(st.integers(0, 300), st.integers(-20, 0)))
        room = PREAMBLE_CHUNK - len(prefix) - header_end - slack
        skip = draw(st.integers(1, 3))
        sep = eol() if eol_mode != "mixed" else b"\n"
        widths = [room // skip - len(sep)] * skip
        widths[-1] += room - sum(w + len(sep) for w in widths)
        prefix += b"".join(b"#" * max(w, 0) + sep for w in widths)
    return CsvCase(prefix, bytes(out), skip, d, has_header, ncols, names, families, nrows, bad_rows,
                   unterminated)


# ==============================================================================================
# Reference tokenizer (pyarrow's record structure).
# ==============================================================================================
@dataclass
class Record:
    offset: int  # file offset of the record's first byte
    line: int  # its 1-based physical line
    nfields: int
    empty: bool  # an empty line (skipped by pyarrow)
    end: int = 0  # offset just past its line terminator


@dataclass
class Scan:
    records: list[Record]
    open_quote: bool  # the input ends inside a quoted field
    open_quote_at: int  # offset of that field's opening quote (-1 if none)
    skip_failed: bool  # fewer physical lines than skip_rows


def line_at(data: bytes, offset: int) -> int:
    """1-based physical line of ``offset`` (LF, CRLF and lone CR each end a line)."""
    head = data[:offset]
    lone_cr = head.count(b"\r") - head.count(b"\r\n")
    if head.endswith(b"\r") and data[offset:offset + 1] == b"\n":
        lone_cr -= 1  # the CR of a CRLF split by the cut
    return 1 + head.count(b"\n") + lone_cr


def _past_lines(data: bytes, pos: int, count: int) -> tuple[int, bool]:
    """The offset past ``count`` raw physical lines from ``pos`` (quotes ignored),
    and whether the data ran out first."""
    for _ in range(count):
        cands = [i for i in (data.find(b"\n", pos), data.find(b"\r", pos)) if i >= 0]
        if not cands:
            return len(data), True
        i = min(cands)
        pos = i + (2 if data[i:i + 2] == b"\r\n" else 1)
    return pos, False


def scan_records(data: bytes, d: Dialect, skip_rows: int = 0, skip_after_names: int = 0,
                 header: bool = True, newlines_in_values: bool = True) -> Scan:
    """Splits ``data`` into records the way pyarrow does (BOM stripped first,
    ``skip_rows`` raw physical lines skipped ignoring quotes). ``skip_after_names``
    (pyarrow's ``skip_rows_after_names``) leaves out that many records after the
    header (from the first record without one; empty lines count), or raw physical
    lines with ``newlines_in_values=False``, as pyarrow counts them."""
    delim = ord(d.delimiter)
    quote = ord(d.quote_char) if d.quote_char else -1
    esc = ord(d.escape_char) if d.escape_char else -1
    n = len(data)
    pos, skip_failed = _past_lines(data, 3 if data.startswith(BOM) else 0, skip_rows)
    records: list[Record] = []
    open_quote, open_at = False, -1
    to_skip = skip_after_names  # records still to leave out once the names are read
    names_read = not header
    while pos < n:
        if names_read and to_skip and not newlines_in_values:
            pos, _ = _past_lines(data, pos, to_skip)
            to_skip = 0
            continue
        start = pos
        nfields, field_start, in_quote, quote_at = 1, True, False, -1
        content_end = None
        while pos < n:
            c = data[pos]
            if in_quote:
                if c == esc:
                    pos += 2
                elif c == quote:
                    if d.double_quote and pos + 1 < n and data[pos + 1] == quote:
                        pos += 2
                    else:
                        in_quote = False
                        pos += 1
                else:
                    pos += 1
                continue
            if field_start and c == quote:
                in_quote, field_start, quote_at = True, False, pos
                pos += 1
                continue
            field_start = False
            if c == esc:
                pos += 2
            elif c == delim:
                nfields += 1
                field_start = True
                pos += 1
            elif c == 10 or c == 13:
                content_end = pos
                pos += 2 if (c == 13 and pos + 1 < n and data[pos + 1] == 10) else 1
                break
            else:
                pos += 1
        pos = min(pos, n)
        if content_end is None:
            content_end = n
            if in_quote:
                open_quote, open_at = True, quote_at
        record = Record(start, line_at(data, start), nfields, content_end == start, pos)
        if names_read and to_skip:
            to_skip -= 1
        else:
            records.append(record)
            names_read = names_read or not record.empty
    return Scan(records, open_quote, open_at, skip_failed)


def bad_records(scan: Scan, ncols: Optional[int] = None) -> list[Record]:
    """The data records whose field count differs from the header's (or the
    first record's without a header, or ``ncols`` when the names are given)."""
    recs = [r for r in scan.records if not r.empty]
    if not recs:
        return []
    if ncols is None:
        ncols, recs = recs[0].nfields, recs[1:]
    return [r for r in recs if r.nfields != ncols]


def first_bad_record(scan: Scan, ncols: Optional[int] = None) -> Optional[Record]:
    bad = bad_records(scan, ncols)
    return bad[0] if bad else None


def without_records(data: bytes, records: list[Record]) -> bytes:
    """``data`` with the given records (and their line terminators) cut out."""
    out, pos = bytearray(), 0
    for r in sorted(records, key=lambda r: r.offset):
        out += data[pos:r.offset]
        pos = r.end
    return bytes(out + data[pos:])


# ==============================================================================================
# Sources and calls.
# ==============================================================================================
class NonSeekableStream(io.RawIOBase):
    """A binary stream that cannot seek, like a pipe or a socket (the reader's no-random-access path)."""

    def __init__(self, data: bytes):
        self._buf = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def readinto(self, b) -> int:
        return self._buf.readinto(b)


SOURCE_KINDS = ["bytes", "bytesio", "stream", "path"]


def call_with_source(kind: str, data: bytes, fn: Callable[[Any], Any]) -> Any:
    """``fn(source)`` with ``data`` given as bytes, BytesIO, a non-seekable stream or a file path."""
    if kind == "bytes":
        return fn(data)
    if kind == "bytesio":
        return fn(io.BytesIO(data))
    if kind == "stream":
        return fn(NonSeekableStream(data))
    fd, path = tempfile.mkstemp(suffix=".csv")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        return fn(path)
    finally:
        os.unlink(path)


def outcome(fn: Callable[[], pa.Table]) -> tuple[Optional[pa.Table], Optional[BaseException]]:
    """``(table, None)`` or ``(None, exception)``."""
    try:
        return fn(), None
    except Exception as exc:  # noqa: BLE001 - the caller judges the type
        return None, exc


def read_pyarrow(data: bytes, read_options=None, parse_options=None, convert_options=None,
                 unraisable: Optional[list] = None):
    """pyarrow's ``(table, error)``. Exceptions pyarrow swallows (an
    ``invalid_row_handler`` given a row that is not UTF-8 is never called:
    pyarrow prints "Exception ignored" and raises the parse error) are
    collected into ``unraisable`` instead of being printed."""
    caught: list = [] if unraisable is None else unraisable
    hook = sys.unraisablehook
    sys.unraisablehook = lambda info: caught.append(info.exc_value)
    try:
        return outcome(lambda: pacsv.read_csv(io.BytesIO(data), read_options=read_options,
                                              parse_options=parse_options, convert_options=convert_options))
    finally:
        sys.unraisablehook = hook


# ==============================================================================================
# Exact comparison.
# ==============================================================================================
def _bits(arr: pa.Array) -> pa.Array:
    if pa.types.is_float64(arr.type):
        return arr.view(pa.int64())
    if pa.types.is_float32(arr.type):
        return arr.view(pa.int32())
    if pa.types.is_float16(arr.type):
        return arr.view(pa.int16())
    return arr


def _first_difference(a: pa.Array, b: pa.Array) -> str:
    for i in range(min(len(a), len(b))):
        x, y = a[i], b[i]
        if x.is_valid != y.is_valid or (x.is_valid and not x.equals(y)):
            return f"row {i}: got {x!r}, expected {y!r}"
    return f"lengths {len(a)} vs {len(b)}"


def assert_tables_identical(got: pa.Table, expected: pa.Table, context: str = "") -> None:
    """Same schema (names, types, nullability, metadata) and the same values,
    floats bit for bit, nulls in the same places. Chunking is ignored."""
    where = f" [{context}]" if context else ""
    assert isinstance(got, pa.Table), f"not a Table: {type(got)}{where}"
    assert got.schema.equals(expected.schema, check_metadata=True), (
        f"schema differs{where}:\n got:      {got.schema}\n expected: {expected.schema}")
    assert got.num_rows == expected.num_rows, f"num_rows {got.num_rows} != {expected.num_rows}{where}"
    for i, name in enumerate(expected.column_names):
        a = _bits(got.column(i).combine_chunks())
        b = _bits(expected.column(i).combine_chunks())
        if not a.equals(b):
            raise AssertionError(f"column {i} {name!r} ({expected.schema.field(i).type}) differs{where}: "
                                 f"{_first_difference(a, b)}")


def error_signature(exc: BaseException) -> tuple:
    """What must agree between two reads that fail: class and location."""
    return (type(exc).__name__, getattr(exc, "line", None), getattr(exc, "column", None),
            getattr(exc, "byte_offset", None), getattr(exc, "reason", str(exc)))


_PREAMBLE_REASON = re.compile(r"(?i)header|skip|empty")


def check_error_location(data: bytes, err) -> None:
    """A CsvParseError's ``byte_offset`` lies in the file and ``line`` is its
    physical line. Errors about the preamble (header, skipped rows, empty
    input) are asserted from a separate line, so that Hypothesis reports them
    apart from errors in the data."""
    assert 0 <= err.byte_offset <= len(data), f"byte_offset {err.byte_offset} outside the file: {err!r}"
    expected = line_at(data, err.byte_offset)
    if _PREAMBLE_REASON.search(err.reason):
        assert err.line == expected, (
            f"preamble error: line {err.line} is not the physical line of byte_offset "
            f"{err.byte_offset} (that is line {expected}): {err!r}")
    else:
        assert err.line == expected, (
            f"line {err.line} is not the physical line of byte_offset {err.byte_offset} "
            f"(that is line {expected}): {err!r}")


# ---- files of the values pandas and pyarrow read differently ---------------------------------------
PANDAS_NA_SPELLINGS = ["", "NA", "N/A", "NaN", "nan", "null", "NULL", "None", "<NA>", "#N/A", "n/a", "-NaN"]
PANDAS_FAMILIES = {
    "int": lambda rng: str(rng.randrange(-10**6, 10**6)),
    "float": lambda rng: f"{rng.randrange(-10**5, 10**5) / 8}",
    "bool": lambda rng: rng.choice(["True", "False", "true", "FALSE"]),
    "date": lambda rng: f"20{rng.randrange(10, 30)}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}",
    "timestamp": lambda rng: f"2021-03-0{rng.randrange(1, 10)}{rng.choice(' T')}"
                             f"{rng.randrange(24):02d}:{rng.randrange(60):02d}:{rng.randrange(60):02d}",
    "time": lambda rng: f"{rng.randrange(24):02d}:{rng.randrange(60):02d}:{rng.randrange(60):02d}",
    "text": lambda rng: rng.choice(["alpha", "beta gamma", "x", "None?", "nan-ish", "0x1F"]),
    # pandas reads "+5" as an int and "0x1f" as text; pyarrow the other way round
    "signed int": lambda rng: rng.choice(["+", "-", "", " +"]) + str(rng.randrange(10**6)),
    "hex or int": lambda rng: rng.choice([str(rng.randrange(100)), f"0x{rng.randrange(256):x}"]),
    # pandas' order-dependent reading of integers past int64 beside floats (arrow_bridge.python_ints)
    "past int64 or float": lambda rng: rng.choice([str(rng.randrange(2**63, 2**65)), str(-rng.randrange(2**63 + 1, 2**64)),
                                                    f"{rng.randrange(-10**5, 10**5) / 8}", str(rng.randrange(-9, 9))]),
}


def _pandas_cell(rng: random.Random, family: str, null_rate: float) -> str:
    if rng.random() < null_rate:
        value = rng.choice(PANDAS_NA_SPELLINGS)
    else:
        value = PANDAS_FAMILIES[family](rng)
    return f'"{value}"' if rng.random() < 0.2 else value


def pandas_family_file(seed: int, rows: int = 60, families: Optional[Sequence[str]] = None,
                       null_rates: Optional[Sequence[float]] = None) -> bytes:
    """A header and ``rows`` rows of the families pandas and pyarrow read
    differently (dates, times, timestamps, NA spellings, quoted or not, in
    every column): each column one family of :data:`PANDAS_FAMILIES` (random
    unless given), some columns all missing."""
    rng = random.Random(seed)
    if families is None:
        families = [rng.choice(list(PANDAS_FAMILIES)) for _ in range(rng.randrange(2, 7))]
    if null_rates is None:
        null_rates = [rng.choice([0.0, 0.1, 0.5, 1.0]) for _ in families]
    lines = [",".join(f"c{j}" for j in range(len(families)))]
    for _ in range(rows):
        lines.append(",".join(_pandas_cell(rng, family, rate) for family, rate in zip(families, null_rates)))
    return ("\n".join(lines) + "\n").encode()
