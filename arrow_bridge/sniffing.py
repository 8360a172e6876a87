"""Dialect sniffing: delimiter, quoting, header and preamble of a CSV, guessed from a sample.

:func:`sniff` reads the start of a source (1 MiB by default) and returns a
:class:`SniffedDialect`; its :meth:`~SniffedDialect.to_options` are the reader's
keywords (``arrow_bridge.read_csv(path, **sniff(path).to_options())``; pandas'
``read_csv`` takes them too). :func:`sniff_for_read` is the hook behind
``read_csv(path, sep=None)``.

How the guess is made (DuckDB's sniffer is the model: candidate dialects scored
by the consistency of their field counts):

1. **Candidates.** Every delimiter of ``, ; TAB | :`` and space found in the
   head of the sample (its first :data:`HEAD_LINES` lines, at most about
   :data:`HEAD_CHARS` characters), plus the first one not found (a one-column
   table); each with no quoting and with ``"`` and ``'`` where they occur, and
   with a backslash escape where a backslash stands before a quote or another
   backslash. Lines starting with ``#`` are left out (see 4.).
2. **Consistency.** Python's C ``csv`` parser splits the head by each
   candidate, in strict mode (a quoting error counts against it). The most
   frequent field count is the table's width; the *body* starts at the first
   record of that width that the next :data:`CONFIRM_ROWS` records mostly
   confirm, and the records above it are the preamble (titles, "exported by"
   lines; blank lines are skipped like the reader does). For one column of
   typed values (numbers, dates), the body starts at the last text line above
   them (its header). Per delimiter, the quoting with the largest share of
   consistent records wins (then fewer errors, more quoted fields, backslash
   escapes when they outnumber doubled quotes).
3. **Delimiter.** A table wider than one column needs :data:`WIDE_SHARE` of
   its records at its width, and is out when most of its ``:`` (spaces) sit
   inside times (timestamps) rather than between fields. Candidates whose
   text columns mostly hold another delimiter (``a,b;c`` split on ``;``) give
   way to the others; then the most consistent records win, and among those
   within :data:`TIE_TOLERANCE` of the best: more typed columns (numbers,
   decimal commas, dates, times, booleans), more columns, the delimiter's
   place in the list. Without any table wider than one column, one column.
   Past the head, the sample is parsed again only when it shows quoting the
   head did not (quoted fields, backslash escapes).
4. **Header, comments, the rest.** Each column's type comes from the rows
   below the first; a first-row value that does not fit a typed column (or a
   whole number above decimals) votes for a header, one that fits votes
   against, as does a text value that repeats below; text above fixed-length
   text votes for one. No vote: a header when the first row's values are
   distinct and not empty (pandas' default). ``#`` lines are comments unless
   they all stand inside the body with its width. The line terminator is the
   most frequent record end (LF, CRLF or CR); decimal commas are reported when
   a column is made of them.

A 1 MiB sample takes about 15 ms here, 55 ms when it must be parsed again past
the head (``benchmarks/results/sniff-corpus.json``, with the accuracy against
``csv.Sniffer`` and DuckDB's ``sniff_csv`` on a generated corpus).

>>> d = sniff(b"Sales export\\n\\nid;price;day\\n1;2,5;2024-01-02\\n2;3,75;2024-01-03\\n")
>>> d.delimiter, d.header, d.skip_rows, d.decimal
(';', True, 2, ',')
>>> d.to_options()
{'sep': ';', 'header': 0, 'skiprows': 2, 'doublequote': True, 'quotechar': '"', 'decimal': ','}
"""
from __future__ import annotations

import csv
import html
import io
import os
import re
from collections import Counter
from dataclasses import dataclass
from typing import IO, Any, Iterable, Union

from arrow_bridge.source import is_seekable, open_source

Source = Union[str, os.PathLike, IO[bytes], bytes]

#: Bytes of the source :func:`sniff` reads by default.
SAMPLE_BYTES = 1 << 20
#: The delimiters tried, in order of preference when candidates tie.
DEFAULT_DELIMITERS = (",", ";", "\t", "|", ":", " ")
QUOTE_CHARS = ('"', "'")
COMMENT_CHAR = "#"
#: Lines of the sample's start that every candidate dialect parses.
HEAD_LINES = 1000
#: Characters of the sample's start that every candidate dialect parses (whichever limit comes first).
HEAD_CHARS = 1 << 17
#: Records below the first one whose values give the column types.
TYPE_ROWS = 200
#: Text values below a first row needed before their common length says the first row is a header.
FIXED_LENGTH_ROWS = 10
#: Candidates with at least this share of the best candidate's consistent rows are compared on types.
TIE_TOLERANCE = 0.9
#: A table wider than one column must have at least this share of the records at its width.
WIDE_SHARE = 0.5
#: Records after a body's first record that must mostly share its width for the body to start there.
CONFIRM_ROWS = 4

_NULLS = frozenset(("", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
                    "N/A", "NA", "NULL", "NaN", "n/a", "nan", "null", "None", "-"))
# In lattice order: a column takes the first type every value matches. Each pattern matches a value in
# one way only, so that the joined column's match cannot backtrack exponentially.
_TYPE_PATTERNS = (
    ("int", r"[-+]?\d+"),
    ("float", r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:inf|Inf|INF)"),
    ("decimal_comma", r"[-+]?\d+,\d+(?:[eE][-+]?\d+)?"),
    ("bool", r"true|false|True|False|TRUE|FALSE"),
    ("date", r"\d{4}-\d\d-\d\d|\d{1,2}[/.]\d{1,2}[/.]\d{2,4}|\d{4}/\d\d/\d\d"),
    ("time", r"\d{1,2}:\d\d(?::\d\d(?:\.\d+)?)?"),
    ("timestamp", r"\d{4}-\d\d-\d\d[T ]\d{1,2}:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[-+]\d\d:?\d\d)?"),
)
_WIDER = {"int": {"float", "decimal_comma"}, "date": {"timestamp"}}  # an int fits a float column
_COMPILED = {name: re.compile(f"(?:{pattern})(?:\n(?:{pattern}))*") for name, pattern in _TYPE_PATTERNS}
_SINGLE = {name: re.compile(pattern) for name, pattern in _TYPE_PATTERNS}
_TIME_TOKEN = re.compile(r"(?<![\d:.])\d{1,2}:\d\d(?::\d\d(?:\.\d+)?)?(?![\d:])")
_STAMP_TOKEN = re.compile(r"\d{4}-\d\d-\d\d \d{1,2}:\d\d")
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


@dataclass(frozen=True)
class SniffedDialect:
    """The dialect :func:`sniff` chose, with what it saw.

    ``skip_rows`` counts physical lines before the header (or the first data
    row): the preamble, blank and comment lines included. ``comment`` is
    ``"#"`` when lines starting with it were seen; the reader has no comment
    option, so :meth:`to_options` covers them only when they stand in the
    preamble (``reasons`` says what to do otherwise). ``line_terminator`` is
    informative: the reader takes LF, CRLF and CR alike.

    >>> d = sniff(b"a|b\\r\\n1|x\\r\\n2|y\\r\\n")
    >>> d  # doctest: +NORMALIZE_WHITESPACE
    SniffedDialect(delimiter='|', quote_char='"', escape_char=None, double_quote=True, header=True,
                   skip_rows=0, line_terminator='\\r\\n', comment=None, decimal='.', columns=2, confidence=1.0)
    >>> d.names
    ('a', 'b')
    """

    delimiter: str
    quote_char: str | None
    escape_char: str | None
    double_quote: bool
    header: bool
    skip_rows: int
    line_terminator: str
    comment: str | None = None
    decimal: str = "."
    columns: int = 1
    names: tuple[str, ...] = ()
    confidence: float = 1.0
    reasons: tuple[str, ...] = ()
    #: Fields the line just above a headerless table lacks where it reads as names
    #: (distinct, not numbers): a header without names for the leading (index)
    #: columns, as R's ``write.table`` writes; ``read_pandas`` takes it as the header
    #: (pandas' implicit index). 0: no such line.
    index_columns: int = 0

    def to_options(self) -> dict[str, Any]:
        """The reader's keywords for this dialect (pandas' spelling: ``pandas.read_csv`` takes them too).

        >>> import io, arrow_bridge
        >>> data = b"# made by a logger\\nt\\tv\\n1\\t0.5\\n2\\t0.25\\n"
        >>> options = sniff(data).to_options()
        >>> options
        {'sep': '\\t', 'header': 0, 'skiprows': 1, 'doublequote': True, 'quotechar': '"'}
        >>> arrow_bridge.read_csv(io.BytesIO(data), **options).to_pydict()
        {'t': [1, 2], 'v': [0.5, 0.25]}
        """
        options: dict[str, Any] = {"sep": self.delimiter, "header": 0 if self.header else None,
                                   "skiprows": self.skip_rows, "doublequote": self.double_quote}
        if self.quote_char is None:
            options["quoting"] = csv.QUOTE_NONE
        else:
            options["quotechar"] = self.quote_char
        if self.escape_char is not None:
            options["escapechar"] = self.escape_char
        if self.decimal != ".":
            options["decimal"] = self.decimal
        return options

    def __repr__(self) -> str:
        shown = ("delimiter", "quote_char", "escape_char", "double_quote", "header", "skip_rows",
                 "line_terminator", "comment", "decimal", "columns", "confidence")
        return f"{type(self).__name__}({', '.join(f'{name}={getattr(self, name)!r}' for name in shown)})"

    def _repr_html_(self) -> str:
        """A table of the dialect and the reasons, for notebooks.

        >>> "<td>delimiter</td><td>&#x27;;&#x27;</td>" in sniff(b"a;b\\n1;2\\n")._repr_html_()
        True
        """
        rows = "".join(f"<tr><td>{name}</td><td>{html.escape(repr(getattr(self, name)))}</td></tr>"
                       for name in ("delimiter", "quote_char", "escape_char", "double_quote", "header",
                                    "skip_rows", "line_terminator", "comment", "decimal", "columns",
                                    "names", "confidence"))
        reasons = "".join(f"<li>{html.escape(reason)}</li>" for reason in self.reasons)
        return (f"<div><strong>{type(self).__name__}</strong><table>{rows}</table>"
                f"<ul>{reasons}</ul></div>")


@dataclass(frozen=True)
class _Candidate:
    delimiter: str
    quote: str | None
    escape: str | None = None

    def reader(self, lines: Iterable[str]) -> Any:
        if self.quote is None:
            return csv.reader(lines, delimiter=self.delimiter, quoting=csv.QUOTE_NONE, strict=True)
        return csv.reader(lines, delimiter=self.delimiter, quotechar=self.quote, escapechar=self.escape,
                          doublequote=self.escape is None, strict=True)


@dataclass
class _Parse:
    """One candidate's records over some lines: widths (-1: a quoting error), first lines, values."""

    candidate: _Candidate
    widths: list[int]
    starts: list[int]  # physical line of each record
    rows: list[list[str] | None]
    width: int = 0  # the dominant field count
    body: int = 0  # index of the body's first record (the header, or the first data row)
    consistent: int = 0  # body records of the dominant width
    errors: int = 0
    evidence: int = 0  # fields that start with the quote
    escapes: int = 0  # backslash escapes less doubled quotes (> 0: the text looks backslash-escaped)
    typed: float = 0.0  # share of typed columns (filled for finalists)
    foreign: float = 0.0  # share of text columns whose values mostly hold another delimiter (finalists)

    @property
    def body_records(self) -> int:
        return len(self.widths) - self.body


@dataclass(frozen=True)
class _Sample:
    text: str
    lines: list[str]
    complete: bool  # the whole source, not a cut


def sniff(source: Source, *, sample_bytes: int = SAMPLE_BYTES, delimiters: Iterable[str] | None = None,
          storage_options: dict[str, Any] | None = None) -> SniffedDialect:
    """Guesses the dialect of ``source`` (a path or URL, ``bytes`` or a binary file object) from its start.

    ``sample_bytes`` bytes are read (a seekable file object is put back where
    it was; a non-seekable one loses them). ``delimiters`` limits the
    candidates (default :data:`DEFAULT_DELIMITERS`). ``storage_options`` go to
    fsspec for URLs and compressed files, as in :func:`arrow_bridge.read_csv`.

    >>> sniff(b"name,comment\\nann,\\"hi, there\\"\\nbob,\\"two\\nlines\\"\\n").quote_char
    '"'
    >>> d = sniff(b"1 2.5 x\\n2 3.5 y\\n3 4.5 z\\n")
    >>> d.delimiter, d.header, d.names
    (' ', False, ('f0', 'f1', 'f2'))
    >>> sniff(b"'a';'b'\\n'x';'it''s'\\n").quote_char
    "'"
    """
    if sample_bytes < 1:
        raise ValueError(f"sample_bytes must be at least 1, got {sample_bytes}")
    candidates = tuple(delimiters) if delimiters is not None else DEFAULT_DELIMITERS
    for delimiter in candidates:
        if not isinstance(delimiter, str) or len(delimiter) != 1 or delimiter in "\r\n" + "".join(QUOTE_CHARS):
            raise ValueError(f"delimiters must be single characters other than quotes and line breaks, "
                             f"got {delimiter!r}")
    block = _read_sample(source, sample_bytes, storage_options)
    return _sniff_sample(_sample(block[:sample_bytes], len(block) <= sample_bytes), candidates)


def sniff_for_read(source: Source, keywords: dict[str, Any], storage_options: dict[str, Any] | None = None,
                   ) -> tuple[Source, dict[str, Any]]:
    """``read_csv(source, sep=None, **keywords)``: the source to read and the keywords, with the sniffed
    dialect in place of ``sep=None`` (or ``delimiter=None``).

    Keywords the caller gave win over sniffed ones (``header``, ``skiprows``,
    ``quotechar``, ``decimal``, ...). A non-seekable file object gives its
    first bytes to the sniffer: the source returned replays them.

    >>> import io, arrow_bridge
    >>> source, keywords = sniff_for_read(io.BytesIO(b"x;y\\n1;2\\n3;4\\n"), {"sep": None, "nrows": 1})
    >>> keywords
    {'nrows': 1, 'sep': ';', 'header': 0, 'skiprows': 0, 'doublequote': True, 'quotechar': '"'}
    >>> arrow_bridge.read_csv(source, **keywords).to_pydict()
    {'x': [1], 'y': [2]}
    """
    given = {key: value for key, value in keywords.items() if not (key in ("sep", "delimiter") and value is None)}
    if hasattr(source, "read") and not is_seekable(source):
        block = _read_sample(source, SAMPLE_BYTES, None)
        dialect = sniff(block, sample_bytes=SAMPLE_BYTES)
        source = _Replay(block, source)
    else:
        dialect = sniff(source, sample_bytes=SAMPLE_BYTES, storage_options=storage_options)
    sniffed = dialect.to_options()
    if dialect.index_columns and given.get("implicit_index") is not None:  # read_pandas: pandas' implicit index
        sniffed.update(header=0, skiprows=dialect.skip_rows - 1)
    if "quotechar" in given or "quoting" in given:
        sniffed.pop("quotechar", None)
        sniffed.pop("quoting", None)
    return source, {**given, **{key: value for key, value in sniffed.items() if key not in given}}


class _Replay(io.RawIOBase):
    """A non-seekable stream whose first bytes were read already: those bytes, then the rest of it.

    >>> _Replay(b"ab", io.BytesIO(b"cd")).read()
    b'abcd'
    """

    def __init__(self, head: bytes, rest: IO[bytes]):
        super().__init__()
        self._head = memoryview(head)
        self._rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if len(self._head):
            n = min(len(buffer), len(self._head))
            buffer[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = self._rest.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def _sniff_sample(sample: _Sample, delimiters: tuple[str, ...]) -> SniffedDialect:
    """The dialect of a decoded sample (:func:`sniff` without the reading)."""
    reasons: list[str] = []
    head = _head(sample)
    cut = not sample.complete or len(head) < len(sample.lines)
    text = sample.text
    has_comments = text.startswith(COMMENT_CHAR) or f"\n{COMMENT_CHAR}" in text or f"\r{COMMENT_CHAR}" in text
    comment_lines = [i for i, line in enumerate(sample.lines) if line.startswith(COMMENT_CHAR)] if has_comments else []
    head_comments = {i for i in comment_lines if i < len(head)}
    best, rivals = _choose(head, head_comments, delimiters, cut)
    comment = None
    if comment_lines:
        if _comments_are_data(best, sample.lines, comment_lines):
            if head_comments:
                best, rivals = _choose(head, set(), delimiters, cut)
        else:
            comment = COMMENT_CHAR
            reasons.append(_comment_reason(best, comment_lines))
    if cut and _tail_may_change_quoting(best, text[sum(map(len, head)):]):
        best = _recheck_quoting(best, sample, comment)
    terminator = _line_terminator(sample.lines, best.starts, reasons)
    reasons.append(_delimiter_reason(best, rivals))
    reasons.append(_quote_reason(best))
    rows = [row for row in best.rows[best.body:] if row is not None]
    header, header_reason = _has_header(rows, best.width, best.candidate.delimiter)
    reasons.append(header_reason)
    decimal = "," if best.candidate.delimiter != "," and "decimal_comma" in _types(
        rows[1: 1 + TYPE_ROWS], best.width, True) else "."
    if decimal == ",":
        reasons.append("decimal ',': a column of numbers with decimal commas")
    skip_rows = best.starts[best.body] if best.widths else 0
    if skip_rows:
        reasons.append(f"skip_rows {skip_rows}: {_preamble_reason(best)}")
    ragged = sum(1 for w in best.widths[best.body:] if w != best.width)
    if ragged:
        reasons.append(f"{ragged} of the {best.body_records} records parsed do not have {best.width} "
                       f"fields: read with on_bad_lines='skip' or 'warn'")
    index_columns = 0 if header else _short_header(best)
    if index_columns:
        reasons.append(f"the line above the table names {best.width - index_columns} of its {best.width} "
                       f"columns: a header without names for the first {index_columns} (an index, as R writes "
                       f"it); read_pandas takes it as the header")
    names = tuple(rows[0]) if header and rows else tuple(f"f{i}" for i in range(best.width))
    confidence = _confidence(best, rivals)
    return SniffedDialect(
        delimiter=best.candidate.delimiter, quote_char=_reported_quote(best.candidate, sample.text),
        escape_char=best.candidate.escape, double_quote=best.candidate.escape is None, header=header,
        skip_rows=skip_rows, line_terminator=terminator, comment=comment, decimal=decimal, columns=best.width,
        names=names, confidence=confidence, reasons=tuple(reasons), index_columns=index_columns)


def _short_header(best: _Parse) -> int:
    """The fields the record just above the table lacks, where it reads as a header
    of the table's last columns (2 or more names, distinct, none empty or a number,
    on the line right above); else 0.

    >>> _short_header(_parse(_Candidate(";", None), ["a;b\\n", "x;1;2\\n", "y;3;4\\n"], [0, 1, 2], False))
    1
    """
    if best.body == 0 or not best.widths:
        return 0
    above, width = best.rows[best.body - 1], best.widths[best.body - 1]
    if above is None or not 2 <= width < best.width or best.starts[best.body] - best.starts[best.body - 1] != 1:
        return 0
    values = [value.strip() for value in above]
    numbers = any(_SINGLE["float"].fullmatch(value) for value in values)
    return best.width - width if all(values) and len(set(values)) == len(values) and not numbers else 0


# ----------------------------------------------------------------------------- the sample


def _read_sample(source: Source, size: int, storage_options: dict[str, Any] | None) -> bytes:
    """The first ``size + 1`` bytes of ``source`` (fewer at its end: then that is all of it)."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source[: size + 1])
    is_file = hasattr(source, "read")
    start = source.tell() if is_file and is_seekable(source) else None
    src = open_source(source, storage_options)
    try:
        return src.read_block(size + 1).tobytes()
    finally:
        if not is_file:
            src.close()
        if start is not None:
            source.seek(start)


def _sample(data: bytes, complete: bool) -> _Sample:
    """Decoded text (UTF-8, a BOM dropped) and its physical lines; a cut sample loses its partial last line.

    >>> _sample(b"a\\r\\nb\\rc\\nd", True).lines
    ['a\\r\\n', 'b\\r', 'c\\n', 'd']
    """
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    text = data.decode("utf-8", errors="replace")
    if "\r" in text:
        lines = _LINE.findall(text)
    else:
        lines = [line + "\n" for line in text.split("\n")]
        lines[-1] = lines[-1][:-1]
        if not lines[-1]:
            lines.pop()
    if not complete and len(lines) > 1:
        lines.pop()
        text = "".join(lines)
    return _Sample(text, lines, complete)


def _head(sample: _Sample) -> list[str]:
    """The lines every candidate parses: at most :data:`HEAD_LINES` and about :data:`HEAD_CHARS`."""
    total = 0
    for i, line in enumerate(sample.lines[:HEAD_LINES]):
        total += len(line)
        if total > HEAD_CHARS and i >= CONFIRM_ROWS * 4:
            return sample.lines[: i + 1]
    return sample.lines[:HEAD_LINES]


def _line_terminator(lines: list[str], starts: list[int], reasons: list[str]) -> str:
    """The most frequent record terminator (LF on a tie or none): the line breaks before each record's
    first line and at the end, not those inside quoted fields.

    >>> _line_terminator(["a\\r\\n", "b\\r\\n", 'c,"x\\n', 'y"\\r\\n'], [0, 1, 2], [])
    '\\r\\n'
    """
    ends = [lines[start - 1] for start in starts[1:] if start > 0] + lines[-1:]
    counts = {"\n": 0, "\r\n": 0, "\r": 0}
    for line in ends:
        end = "\r\n" if line.endswith("\r\n") else line[-1:]
        if end in counts:
            counts[end] += 1
    best = max(counts, key=lambda key: (counts[key], key == "\n"))
    seen = {key: n for key, n in counts.items() if n}
    if len(seen) > 1:
        reasons.append("mixed line ends: " + ", ".join(f"{n} {key!r}" for key, n in seen.items())
                       + f" (records); the most frequent is {best!r} (the reader takes all three)")
    return best


def _reported_quote(candidate: _Candidate, text: str) -> str | None:
    """The quote to report: ``"`` (the reader's default) for no quoting when the sample holds none."""
    if candidate.quote is None and '"' not in text:
        return '"'
    return candidate.quote


# ----------------------------------------------------------------------------- candidates


def _candidates(text: str, delimiters: tuple[str, ...]) -> list[_Candidate]:
    """Every delimiter found in ``text`` and the first one not found (one column) with each quoting.

    >>> text = 'a;"b' + chr(92) + '"c"'
    >>> [(c.delimiter, c.quote, c.escape) for c in _candidates(text, (",", ";"))]
    [(';', None, None), (';', '"', None), (';', '"', '\\\\'), (',', None, None), (',', '"', None), (',', '"', '\\\\')]
    """
    present = [d for d in delimiters if d in text]
    present += [d for d in delimiters if d not in text][:1]
    quotes = [q for q in QUOTE_CHARS if q in text]
    found = []
    for delimiter in present:
        found.append(_Candidate(delimiter, None))
        for quote in quotes:
            found.append(_Candidate(delimiter, quote))
            if "\\" + quote in text or "\\\\" in text:
                found.append(_Candidate(delimiter, quote, "\\"))
    return found


def _parse(candidate: _Candidate, lines: list[str], physical: list[int], cut: bool) -> _Parse:
    """Splits ``lines`` (physical line numbers ``physical``) into records; drops a cut last record."""
    reader = candidate.reader(lines)
    widths: list[int] = []
    starts: list[int] = []
    rows: list[list[str] | None] = []
    errors = consumed = 0
    while True:
        try:
            row: list[str] | None = next(reader)
        except StopIteration:
            break
        except csv.Error:
            row = None
        start, consumed = consumed, reader.line_num
        if row == []:
            continue  # a blank line: the reader skips it too
        if start >= len(physical):
            break
        widths.append(len(row) if row is not None else -1)
        starts.append(physical[start])
        rows.append(row)
        errors += row is None
    if cut and widths and consumed >= len(lines):  # the head cut this record short
        errors -= widths.pop() == -1
        starts.pop()
        rows.pop()
    parse = _Parse(candidate, widths, starts, rows, errors=errors)
    _find_body(parse)
    return parse


def _find_body(parse: _Parse) -> None:
    """The dominant width, where the body starts and how many body records have that width."""
    counted = Counter(w for w in parse.widths if w > 0)
    if not counted:
        return
    parse.width = max(counted, key=lambda w: (counted[w], w))
    widths, n = parse.widths, len(parse.widths)
    at_width = [i for i, width in enumerate(widths) if width == parse.width]
    parse.body = at_width[0]  # no record confirmed: the first of the table's width
    for i in at_width:
        after = widths[i + 1: i + 1 + CONFIRM_ROWS]
        if after and 2 * sum(1 for w in after if w == parse.width) >= len(after):
            parse.body = i
            break
    if parse.width == 1:
        parse.body = _typed_column_start(parse)
    parse.consistent = sum(1 for w in widths[parse.body:n] if w == parse.width)


def _typed_column_start(parse: _Parse) -> int:
    """One column of typed values (numbers, dates, ...): its header is the last line of text above them.

    >>> parse = _parse(_Candidate(",", None), ["Report\\n", "\\n", "price\\n", "1.5\\n", "2\\n", "3.25\\n"],
    ...                list(range(6)), False)
    >>> parse.body, parse.starts[parse.body]
    (1, 2)
    """
    values = [row[0].strip() if row is not None and len(row) == 1 else None for row in parse.rows]
    tail = [v for v in values[parse.body + len(values[parse.body:]) // 2:] if v is not None and v not in _NULLS]
    column_type = _column_type(tail[:TYPE_ROWS], True)
    if column_type in ("string", "empty"):
        return parse.body
    fitting = [v is not None and (v in _NULLS or _fits(v, column_type)) for v in values]
    for i in range(parse.body, len(values)):
        if all(fitting[i: i + 1 + CONFIRM_ROWS]):
            return max(parse.body, i - 1)
    return parse.body


def _evidence(candidate: _Candidate, text: str) -> tuple[int, int]:
    """Fields that start with the quote, and backslash escapes less doubled quotes inside fields."""
    quote = candidate.quote
    if quote is None:
        return 0, 0
    delimiter = candidate.delimiter
    starts = text.count(delimiter + quote) + text.count("\n" + quote) + text.count("\r" + quote)
    starts += text.startswith(quote)
    if "\\" not in text:
        return starts, 0
    outside = re.escape(delimiter + "\r\n" + quote)
    doubled = len(re.findall(f"[^{outside}]{quote}{quote}[^{outside}]", text))
    return starts, text.count("\\" + quote) + text.count("\\\\") - doubled


def _choose(head: list[str], comment_lines: set[int], delimiters: tuple[str, ...],
            cut: bool) -> tuple[_Parse, list[_Parse]]:
    """The best candidate over the head, and the best of each other delimiter (its rivals)."""
    physical = [i for i in range(len(head)) if i not in comment_lines]
    lines = [head[i] for i in physical]
    text = "".join(lines)
    per_delimiter: dict[str, _Parse] = {}
    for candidate in _candidates(text, delimiters):
        parse = _parse(candidate, lines, physical, cut)
        parse.evidence, parse.escapes = _evidence(candidate, text)
        current = per_delimiter.get(candidate.delimiter)
        if current is None or _quoting_key(parse) > _quoting_key(current):
            per_delimiter[candidate.delimiter] = parse
    finalists = list(per_delimiter.values())
    wide = [p for p in finalists if p.width > 1 and p.consistent >= max(2, WIDE_SHARE * len(p.widths))
            and not _inside_values(p.candidate, text)]
    order = {d: i for i, d in enumerate(delimiters)}
    if wide:
        for parse in wide:
            _score_types(parse, delimiters)
        clean = [p for p in wide if p.foreign < 0.5] or wide
        top = max(p.consistent for p in clean)
        tied = [p for p in clean if p.consistent >= TIE_TOLERANCE * top]
        best = max(tied, key=lambda p: (-p.foreign, p.typed, p.width, p.consistent,
                                        -order[p.candidate.delimiter]))
    else:  # one column: a delimiter that splits nothing, when there is one
        best = max(finalists, key=lambda p: (p.width == 1, p.consistent, p.candidate.delimiter not in text,
                                             -order[p.candidate.delimiter]))
    return best, [p for p in finalists if p is not best]


def _inside_values(candidate: _Candidate, text: str) -> bool:
    """Whether most of the ``:`` (or spaces) outside quotes are inside times (or timestamps), not between fields.

    >>> stamps = "2024-01-02 10:11:12\\n2024-01-03 09:00:00\\n"
    >>> _inside_values(_Candidate(":", None), stamps), _inside_values(_Candidate(":", None), "a:b:c\\n")
    (True, False)
    >>> _inside_values(_Candidate(":", '"'), 'x:"10:11:12"\\ny:"09:00:00"\\n')
    False
    """
    delimiter, quote = candidate.delimiter, candidate.quote
    if delimiter not in ": ":
        return False
    if quote is not None:
        text = re.sub(f"{quote}[^{quote}]*{quote}", quote + quote, text)
    if delimiter == ":":
        inside = sum(match.group().count(":") for match in _TIME_TOKEN.finditer(text))
    else:
        inside = len(_STAMP_TOKEN.findall(text))
    return 2 * inside > text.count(delimiter)


def _score_types(parse: _Parse, delimiters: tuple[str, ...]) -> None:
    """Shares of typed columns, and of text columns holding another delimiter in most values.

    >>> parse = _parse(_Candidate(",", None), ["1,5;2,5\\n", "2,5;3,5\\n"], [0, 1], False)
    >>> _score_types(parse, (",", ";")); parse.typed, parse.foreign
    (0.666667, 0.333333)
    """
    rows = [row for row in parse.rows[parse.body + 1: parse.body + 1 + TYPE_ROWS] if row is not None]
    if not rows:
        rows = [row for row in parse.rows[parse.body:] if row is not None]
    types = _types(rows, parse.width, parse.candidate.delimiter != ",")
    others = [d for d in delimiters if d not in (" ", parse.candidate.delimiter)]
    foreign = 0
    for j, column_type in enumerate(types):
        if column_type != "string" or not others:
            continue
        values = [row[j] for row in rows if len(row) == parse.width and row[j].strip() not in _NULLS]
        holding = sum(1 for value in values if any(d in value for d in others))
        foreign += 2 * holding > len(values)
    width = max(parse.width, 1)
    parse.typed = round(sum(t not in ("string", "empty") for t in types) / width, 6)
    parse.foreign = round(foreign / width, 6)


def _quoting_key(parse: _Parse) -> tuple:
    """How one quoting of a delimiter compares with another: the share of consistent records (quoting
    changes how many records there are), errors, quoted fields, then escapes."""
    escaped = parse.candidate.escape is not None
    share = (parse.consistent - parse.errors) / max(len(parse.widths), 1)
    return (round(share, 3), -parse.errors, parse.evidence > 0, escaped == (parse.escapes > 0),
            parse.evidence, parse.candidate.quote == '"')


def _comments_are_data(best: _Parse, lines: list[str], comment_lines: list[int]) -> bool:
    """``#`` lines are data when they all come after the body's start and mostly have its width."""
    if not best.widths:
        return False
    if comment_lines[0] < best.starts[best.body]:
        return False
    widths = [_parse(best.candidate, [lines[i]], [i], False).widths for i in comment_lines[:100]]
    matching = sum(1 for w in widths if w == [best.width])
    return 2 * matching > len(widths)


def _tail_may_change_quoting(best: _Parse, tail: str) -> bool:
    """Whether the sample after the head holds quoting the head did not show: quoted fields where the head
    had none, or a backslash before the quote where the head had no backslash escapes.

    >>> best = _parse(_Candidate(",", None), ["a,b\\n", "1,2\\n"], [0, 1], False)
    >>> _tail_may_change_quoting(best, '3,"x, y"\\n'), _tail_may_change_quoting(best, "3,4\\n")
    (True, False)
    """
    candidate = best.candidate
    if candidate.quote is None or best.evidence == 0:
        return any(f"{before}{quote}" in tail for quote in QUOTE_CHARS for before in (candidate.delimiter, "\n", "\r"))
    return candidate.escape is None and "\\" + candidate.quote in tail


def _recheck_quoting(best: _Parse, sample: _Sample, comment: str | None) -> _Parse:
    """The quoting of ``best``'s delimiter that is most consistent over the whole sample."""
    physical = [i for i, line in enumerate(sample.lines) if comment is None or not line.startswith(comment)]
    lines = [sample.lines[i] for i in physical]
    text = sample.text
    delimiter = best.candidate.delimiter
    variants = _candidates(text, (delimiter,))
    parses = []
    for candidate in variants:
        parse = _parse(candidate, lines, physical, not sample.complete)
        parse.evidence, parse.escapes = _evidence(candidate, text)
        parses.append(parse)
    return max(parses, key=_quoting_key)


# ----------------------------------------------------------------------------- types and header


def _types(rows: list[list[str]], width: int, decimal_comma: bool) -> list[str]:
    """Each column's type over ``rows``: int, float, decimal_comma, bool, date, time, timestamp, string, empty.

    >>> _types([["1", "2,5", "x"], ["-3", "4,0", ""]], 3, True)
    ['int', 'decimal_comma', 'string']
    """
    columns: list[list[str]] = [[] for _ in range(width)]
    for row in rows:
        if len(row) == width:
            for j, value in enumerate(row):
                value = value.strip()
                if value not in _NULLS:
                    columns[j].append(value)
    return [_column_type(values, decimal_comma) for values in columns]


def _column_type(values: list[str], decimal_comma: bool) -> str:
    if not values:
        return "empty"
    joined = "\n".join(values)
    for name, pattern in _COMPILED.items():
        if name == "decimal_comma" and not decimal_comma:
            continue
        if pattern.fullmatch(joined):
            return name
    return "string"


def _fits(value: str, column_type: str) -> bool:
    """Whether one value could be a value of a column of ``column_type``."""
    names = {column_type} | _WIDER.get(column_type, set())
    names |= {narrow for narrow, wide in _WIDER.items() if column_type in wide}
    return any(_SINGLE[name].fullmatch(value) for name in names)


def _has_header(rows: list[list[str]], width: int, delimiter: str) -> tuple[bool, str]:
    """Whether ``rows[0]`` is a header, by the types of the rows below it; and why."""
    if not rows:
        return False, "header: no rows"
    first, rest = rows[0], rows[1: 1 + TYPE_ROWS]
    if len(first) != width:
        return False, f"header: no (the first row has {len(first)} fields, not {width})"
    types = _types(rest, width, delimiter != ",")
    yes: list[str] = []
    no: list[str] = []
    for j, (value, column_type) in enumerate(zip(first, types)):
        value = value.strip()
        if column_type == "empty" or value in _NULLS:
            continue
        if column_type == "string":
            below = [row[j].strip() for row in rest if len(row) == width and row[j].strip() not in _NULLS]
            lengths = {len(v) for v in below}
            if value in below:
                no.append(f"{value!r} repeats below")
            elif len(lengths) == 1 and len(below) >= FIXED_LENGTH_ROWS and len(value) not in lengths:
                yes.append(f"{value!r} above text of {lengths.pop()} characters")
            continue
        if not _fits(value, column_type):
            yes.append(f"{value!r} above {column_type}")
        elif column_type in ("float", "decimal_comma") and _SINGLE["int"].fullmatch(value) and not any(
                _SINGLE["int"].fullmatch(row[j].strip()) for row in rest if len(row) == width):
            yes.append(f"{value!r} (a whole number) above {column_type}")
        else:
            no.append(f"{value!r} is a {column_type} like the values below it")
    if yes and len(yes) >= len(no):
        return True, "header: yes, " + "; ".join(yes[:3])
    if no:
        return False, "header: no, " + "; ".join(no[:3])
    values = [v.strip() for v in first]
    header = all(values) and len(set(values)) == len(values)
    return header, ("header: yes (text columns; the first row's values are distinct and not empty)" if header
                    else "header: no (text columns; the first row has empty or repeated values)")


# ----------------------------------------------------------------------------- reasons


def _confidence(best: _Parse, rivals: list[_Parse]) -> float:
    """Share of body records with the table's width, halved when another delimiter is as consistent."""
    if not best.body_records:
        return 0.0
    share = best.consistent / best.body_records
    tied = any(r.width > 1 and r.consistent >= best.consistent and r.width == best.width for r in rivals)
    return round(share / 2 if tied else share, 3)


def _delimiter_reason(best: _Parse, rivals: list[_Parse]) -> str:
    reason = (f"delimiter {best.candidate.delimiter!r}: {best.consistent} of {best.body_records} records "
              f"have {best.width} fields")
    runner = max((r for r in rivals if r.width > 1), key=lambda r: r.consistent, default=None)
    if runner is not None:
        reason += (f" (next: {runner.candidate.delimiter!r}, {runner.width} fields in {runner.consistent} of "
                   f"{runner.body_records})")
    return reason


def _quote_reason(best: _Parse) -> str:
    candidate = best.candidate
    if candidate.quote is None:
        return "quote: none (quoting would not make the rows more consistent)"
    if candidate.escape is not None:
        return (f"quote {candidate.quote!r}, escaped with a backslash ({best.escapes} more backslash escapes "
                f"than doubled quotes)")
    if best.evidence == 0:
        return f"quote {candidate.quote!r}: the default, no quoted field in the sample"
    return f"quote {candidate.quote!r}: {best.evidence} fields start with it"


def _preamble_reason(best: _Parse) -> str:
    widths = best.widths[: best.body]
    blank = best.starts[best.body] - len(widths)
    parts = [f"{len(widths)} line(s) with {', '.join(map(str, widths))} field(s) before the "
             f"{best.width}-field table"] if widths else []
    if blank > 0:
        parts.append(f"{blank} blank or comment line(s)")
    return "; ".join(parts)


def _comment_reason(best: _Parse, comment_lines: list[int]) -> str:
    body_line = best.starts[best.body] if best.widths else 0
    inside = sum(1 for i in comment_lines if i > body_line)
    reason = f"comment '#': {len(comment_lines)} line(s) start with it"
    if inside:
        reason += (f", {inside} after the header: the reader has no comment option; read with "
                   f"on_bad_lines='skip' when they have another field count")
    return reason
