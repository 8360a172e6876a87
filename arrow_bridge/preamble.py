"""What comes before the data: BOM, skipped lines, the header row.

pyarrow's rules: the BOM is stripped once at the very start; ``skip_rows``
and ``skip_rows_after_names`` count physical lines (empty ones included,
quotes ignored), but ``skip_rows_after_names`` counts records (quoted line
breaks inside them) with ``newlines_in_values``; the header is the first non-empty record (the first record,
empty or not, with ``ignore_empty_lines=False``, where an empty line is a row
of empty fields: :func:`empty_line_offsets` and :func:`with_empty_rows` find
and write out those in the data). Under ``semantics="pandas"`` a header's
empty and repeated names are pandas' (:mod:`arrow_bridge.column_names`).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from arrow_bridge.column_names import ImplicitColumns, implicit_index, pandas_header, renamed_fields, unnamed_fields
from arrow_bridge.dialect import Dialect
from arrow_bridge.errors import CsvParseError, EmptyCsvError, MissingColumnsError
from arrow_bridge.jit import njit
from arrow_bridge.kernels.status import NEEDS_MORE, OUT_OF_SPACE, UNTERMINATED_QUOTE
from arrow_bridge.kernels.fields import field_value
from arrow_bridge.kernels.tokenizer import count_line_breaks, split_record
from arrow_bridge.options import CsvOptions
from arrow_bridge.source import ByteSource
from arrow_bridge.spans import concat

_BOM = b"\xef\xbb\xbf"


@dataclass
class Preamble:
    """Column names and where the data starts (with the bytes already read)."""

    names: list[str]
    data_offset: int  # file offset of the first data byte
    data_line: int  # 1-based line number there
    prefix: np.ndarray  # bytes read past data_offset
    eof: bool
    made_up: ImplicitColumns = ImplicitColumns()  # names given to fields past the names (implicit_index)
    bom_bytes: int = 0  # the byte order mark stripped at the start

    def columns_read(self, opts: CsvOptions) -> CsvOptions:
        """``opts`` reading the index levels pandas' implicit index adds
        (:func:`~arrow_bridge.column_names.implicit_index`) whatever ``usecols``
        names, as pandas keeps them, typing a repeated header field's repeats as
        ``dtype`` types the field, and knowing the columns made up.

        >>> from arrow_bridge.options import resolve_options
        >>> from arrow_bridge.source import open_source
        >>> opts = resolve_options(usecols=["b"], implicit_index="leading")
        >>> read_preamble(open_source(b"a,b\\nx,1,2\\n"), opts).columns_read(opts).include_columns
        ('__index_level_0__', 'b')
        """
        if not self.made_up:
            return opts
        if self.made_up.renamed and opts.repeats_typed:  # a repeated header field's dtype types its repeats
            typed = {key: kind for key, kind in opts.column_types.items() if key in opts.repeats_typed}
            repeats = self.made_up.repeats_of(typed, opts.repeats_typed)
            opts = dataclasses.replace(opts, column_types={**repeats, **opts.column_types})
        levels = self.made_up.index
        include = opts.include_columns
        asked = [key for key in include or () if key in {*levels, *self.made_up.trailing}]
        if asked:  # names the header lacks: the read made them up
            raise MissingColumnsError(asked, opts.columns_keyword)
        if include is not None and levels:
            include = (*levels, *(key for key in include if key not in levels))
        return dataclasses.replace(opts, include_columns=include, made_up_columns=self.made_up)


#: The preamble's first read, which becomes the first span (SpanCutter): small,
#: as that span is parsed on the general path, before the types are known, and
#: alone (no other span parses until it has settled them). 16 KiB against 256:
#: a warm 1 MB lineitem read 5.8 -> 3.8 ms (pyarrow 2.9). Types still settle over
#: every span, so a column the first rows leave empty costs a later re-plan only.
FIRST_READ_BYTES = 16 << 10


class _Buffered:
    """The first bytes of a source, extended on demand."""

    def __init__(self, source: ByteSource, block_size: int):
        self.source = source
        self.block_size = block_size
        self.buf = np.empty(0, dtype=np.uint8)
        self.eof = False
        self.more()

    def more(self) -> bool:
        if self.eof:
            return False
        # Grow geometrically: each call copies what was read, so fixed-size
        # steps would make a long header or skipped line quadratic.
        want = max(self.block_size, len(self.buf))
        block = self.source.read_block(want)
        self.eof = len(block) < want
        self.buf = concat(self.buf, block)
        return True


def read_preamble(source: ByteSource, opts: CsvOptions) -> Preamble:
    """Consumes BOM, skipped lines and header; returns names and the data start.

    >>> from arrow_bridge.options import resolve_options
    >>> from arrow_bridge.source import open_source
    >>> pre = read_preamble(open_source(b"\\xef\\xbb\\xbfskip me\\na,b\\n1,2\\n"), resolve_options(skiprows=1))
    >>> pre.names, pre.data_offset, pre.data_line
    (['a', 'b'], 15, 3)
    """
    data = _Buffered(source, min(opts.span_bytes, FIRST_READ_BYTES))
    empty_is_error = opts.semantics != "pandas" or opts.column_names is None  # (pandas: given names, no rows)
    if len(data.buf) == 0 and empty_is_error:
        raise EmptyCsvError(source.name, 1, None, 0, "empty CSV file")
    while len(data.buf) < len(_BOM) and data.more():
        pass  # tiny block sizes: see the whole BOM before deciding
    at_file_start = source.origin == 0  # a byte range's first bytes are data, never a BOM
    pos = bom_bytes = len(_BOM) if at_file_start and bytes(data.buf[: len(_BOM)]) == _BOM else 0
    while pos and pos == len(data.buf) and data.more():
        pass
    if pos and pos == len(data.buf) and empty_is_error:  # a BOM alone: empty too, as in pyarrow
        raise EmptyCsvError(source.name, 1, None, 0, "empty CSV file")
    pos = _skip_lines(data, pos, opts.skip_rows, source.name)
    if opts.header or opts.column_names is None:  # (a byte range given the names starts at data)
        pos = _skip_space_lines(data, pos, opts)
    if opts.header:
        header_at = pos
        header, pos = _record(data, pos, opts)
        if _no_columns(data, header_at, header, opts):
            header = []
        if not header and opts.column_names is None:
            raise EmptyCsvError(source.name, _line_at(data, header_at), None, header_at,
                                "empty CSV file: no header row")
        names = [_decode_name(v, source.name, _line_at(data, header_at), header_at) for v in header]
    renamed: tuple[tuple[str, str], ...] = ()
    unnamed: tuple[str, ...] = ()
    if opts.header and opts.column_names is None and opts.semantics == "pandas":
        header_names, names = names, pandas_header(names)
        renamed, unnamed = renamed_fields(header_names, names), unnamed_fields(header_names, names)
    if opts.column_names is not None:
        names = list(opts.column_names)
    elif not opts.header:
        first_record, _ = _record(data, pos, opts)
        if _no_columns(data, pos, first_record, opts):
            raise EmptyCsvError(source.name, _line_at(data, pos), None, pos, "empty CSV file: no columns")
        names = [f"f{i}" for i in range(len(first_record))]
    if opts.newlines_in_values:  # pyarrow's parser skips records then, its chunker lines otherwise
        pos = _skip_records(data, pos, opts.skip_rows_after_names, opts)
    else:
        pos = _skip_lines(data, pos, opts.skip_rows_after_names, source.name, strict=False)
    made_up = ImplicitColumns()
    # pandas looks at the first record unless no row is read, and only where the names are the header's or given
    if opts.implicit_index is not None and opts.nrows != 0 and (opts.header or opts.column_names is not None):
        field_count = _first_record_fields(data, pos, opts)
        if field_count > len(names):
            names, made_up = implicit_index(names, field_count, _implicit_rule(opts, names))
    made_up = dataclasses.replace(made_up, renamed=renamed, unnamed=unnamed) if renamed or unnamed else made_up
    return Preamble(names, pos, _line_at(data, pos), data.buf[pos:], data.eof, made_up, bom_bytes)


def _implicit_rule(opts: CsvOptions, names: list[str]) -> object:
    """``opts.implicit_index``, as ``usecols`` changes it in pandas: naming as many
    columns as there are names, the fields past them are left out; fewer, the
    first ones are the index (an error where ``names`` were given); more, an error.
    Positions in ``usecols`` are pandas' own puzzle there (they pick fields and
    rename them): refused."""
    rule, usecols = opts.implicit_index, opts.include_columns
    if usecols is None or opts.columns_keyword != "usecols":
        return rule
    if any(isinstance(key, int) for key in usecols):
        raise NotImplementedError("usecols positions where the first record has more fields than there are "
                                  "column names (pandas' implicit index): give usecols the columns' names")
    wanted = len(set(usecols))  # pandas takes usecols as a set
    if rule == "trailing" or wanted == len(names):
        return "trailing"
    if wanted > len(names) or opts.column_names is not None:  # pandas' words
        raise ValueError("Number of passed names did not match number of header fields in the file")
    return rule


def _first_record_fields(data: _Buffered, pos: int, opts: CsvOptions) -> int:
    """The fields of the first data record (0 where there is none, or it is
    bad input, which the read reports where it lies), which pandas compares
    with the names to find an implicit index."""
    pos = _skip_space_lines(data, pos, opts)
    try:
        return len(_record(data, pos, opts)[0])
    except CsvParseError:
        return 0


def _line_at(data: "_Buffered", pos: int) -> int:
    """The 1-based physical line of byte ``pos`` of the buffered start (``pos``
    may lie one past the end: after a last record without its line end)."""
    return 1 + count_line_breaks(data.buf, 0, min(pos, len(data.buf)))


def _no_columns(data: _Buffered, pos: int, fields: list, opts: CsvOptions) -> bool:
    """Whether the first record, at ``pos``, is an empty line that pandas finds no
    columns in (kept by ``skip_blank_lines=False``), where pyarrow reads one empty field."""
    return opts.semantics == "pandas" and fields == [b""] and data.buf[pos] in (10, 13)


def _skip_space_lines(data: _Buffered, pos: int, opts: CsvOptions) -> int:
    """Under pandas' semantics (blank lines skipped), empty lines and lines of only spaces
    and tabs (none of them the delimiter) before the header or first record, skipped as
    pandas skips them.

    >>> from arrow_bridge.options import resolve_options
    >>> from arrow_bridge.source import open_source
    >>> read_preamble(open_source(b" \\t\\r\\n  \\na,b\\n1,2\\n"), resolve_options(semantics="pandas")).names
    ['a', 'b']
    """
    if opts.semantics != "pandas" or not opts.ignore_empty_lines:
        return pos
    blank = {32, 9} - {ord(opts.delimiter)}
    while True:
        end = pos
        while True:
            buf = data.buf
            while end < len(buf) and buf[end] in blank:
                end += 1
            if end < len(buf) or not data.more():
                break
        if end < len(buf) and buf[end] not in (10, 13):
            return pos  # a record
        if end >= len(buf):
            return end  # spaces (or nothing) to the end of the file (a last record without its line end: past it)
        while end + 1 >= len(data.buf) and data.buf[end] == 13 and data.more():
            pass  # see a CRLF whole
        buf = data.buf
        pos = end + (2 if buf[end] == 13 and end + 1 < len(buf) and buf[end + 1] == 10 else 1)


def _skip_lines(data: _Buffered, pos: int, count: int, name: str, strict: bool = True) -> int:
    for _ in range(count):
        while True:
            buf = data.buf
            hits = np.flatnonzero((buf[pos:] == 10) | (buf[pos:] == 13))
            if len(hits) and (buf[pos + hits[0]] == 10 or pos + hits[0] + 1 < len(buf) or data.eof):
                end = pos + int(hits[0])
                pos = end + (2 if buf[end] == 13 and end + 1 < len(buf) and buf[end + 1] == 10 else 1)
                break
            if not data.more():
                if strict:
                    raise CsvParseError(name, _line_at(data, pos), None, pos,
                                        f"cannot skip {count} rows: the file is shorter")
                return len(data.buf)
    return pos


def _skip_records(data: _Buffered, pos: int, count: int, opts: CsvOptions) -> int:
    """The position after ``count`` records from ``pos`` (quoted line breaks inside
    them), an empty line counting as one, as pyarrow counts ``skip_rows_after_names``
    with ``newlines_in_values``; the end where the file has fewer.

    >>> from arrow_bridge.options import CsvOptions
    >>> from arrow_bridge.source import open_source
    >>> _skip_records(_Buffered(open_source(b'"x\\ny"\\n\\n2\\n'), 64), 0, 2, CsvOptions())
    7
    """
    for _ in range(count):
        while len(data.buf) <= pos + 1 and data.more():
            pass  # see a CRLF whole
        if pos >= len(data.buf):
            break
        if data.buf[pos] in (10, 13):  # an empty line
            pos += 2 if data.buf[pos] == 13 and pos + 1 < len(data.buf) and data.buf[pos + 1] == 10 else 1
        else:
            pos = _record(data, pos, opts)[1]
    return pos


def _record(data: _Buffered, pos: int, opts: CsvOptions) -> tuple[list[bytes], int]:
    """The decoded fields of the record at ``pos`` and the position after it
    (an empty line is a record of one empty field with ``ignore_empty_lines=False``)."""
    if not opts.ignore_empty_lines:
        while len(data.buf) <= pos + 1 and data.more():
            pass  # see a CRLF whole
        if pos < len(data.buf) and data.buf[pos] in (10, 13):
            crlf = data.buf[pos] == 13 and pos + 1 < len(data.buf) and data.buf[pos + 1] == 10
            return [b""], pos + (2 if crlf else 1)
    dialect = Dialect.from_options(opts)
    capacity = 256
    while True:
        starts = np.empty(capacity, dtype=np.int64)
        ends = np.empty(capacity, dtype=np.int64)
        flags = np.empty(capacity, dtype=np.uint8)
        status, n, next_pos = split_record(data.buf, pos, len(data.buf), data.eof,
                                           *dialect.scan_args, starts, ends, flags)
        if status == OUT_OF_SPACE:
            capacity *= 4
        elif status == NEEDS_MORE:
            data.more()
        elif status == UNTERMINATED_QUOTE:
            raise CsvParseError(data.source.name, _line_at(data, next_pos), None, next_pos,
                                "unterminated quoted field")
        else:
            break
    scratch = np.empty(max(int((ends[:n] - starts[:n]).max(initial=0)), 1), dtype=np.uint8)
    values = []
    for i in range(n):
        src, s, e = field_value(data.buf, starts[i], ends[i], flags[i], dialect.unescape_args, scratch)
        values.append(bytes(src[s:e]))
    return values, next_pos


def _decode_name(raw: bytes, path: str, line: int, offset: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CsvParseError(path, line, None, offset, f"header is not valid UTF-8: {raw!r}") from exc


# ---- ignore_empty_lines=False: an empty line is a row of empty fields ----------------------------
def empty_line_offsets(buf: np.ndarray, dialect: Dialect) -> np.ndarray:
    """Offsets of the empty lines between the records of ``buf`` (whole records;
    a line break inside a quoted field is data, not an empty line).

    >>> from arrow_bridge.options import CsvOptions
    >>> empty_line_offsets(np.frombuffer(b'a\\n\\n"x\\n\\ny"\\r\\n\\r\\n', np.uint8), Dialect.from_options(CsvOptions())).tolist()
    [2, 11]
    """
    out = np.empty(count_line_breaks(buf, 0, len(buf)) + 1, dtype=np.int64)
    n = _empty_lines(buf, len(buf), *dialect.scan_args, out)
    return out[:n]


#: The bytes a lone column's empty line may be written as (:func:`with_empty_rows`): one byte.
LONE_FILLERS = b"x_0a"


def with_empty_rows(buf: np.ndarray, offsets: np.ndarray, ncols: int, dialect: Dialect) -> np.ndarray:
    """``buf`` with each empty line at ``offsets`` made a record of ``ncols`` empty
    fields: ``ncols - 1`` delimiters. A lone column's empty field would leave the line
    empty, so it gets one byte no dialect reads specially, which the tokens then make
    the empty field it stands for (``type_settling.EmptyLineRows``).

    >>> from arrow_bridge.options import CsvOptions
    >>> bytes(with_empty_rows(np.frombuffer(b"1,2\\n\\n", np.uint8), np.array([4]), 3, Dialect.from_options(CsvOptions())))
    b'1,2\\n,,\\n'
    >>> bytes(with_empty_rows(np.frombuffer(b"1\\n\\n", np.uint8), np.array([2]), 1, Dialect.from_options(CsvOptions())))
    b'1\\nx\\n'
    """
    if ncols > 1:
        filler = np.full(ncols - 1, dialect.delimiter, dtype=np.uint8)
    else:
        # four candidates: the dialect takes three bytes at most
        filler = np.array([next(b for b in LONE_FILLERS if b not in (dialect.delimiter, dialect.quote, dialect.escape))],
                          dtype=np.uint8)
    return np.insert(buf, np.repeat(offsets, len(filler)), np.tile(filler, len(offsets)))


@njit(nogil=True, cache=True)
def _empty_lines(buf, end, delim, special, quote, escape, double_quote, out):
    capacity = 64
    starts = np.empty(capacity, dtype=np.int64)
    ends = np.empty(capacity, dtype=np.int64)
    flags = np.empty(capacity, dtype=np.uint8)
    pos = 0
    n = 0
    while pos < end:
        c = buf[pos]
        if c == 10 or c == 13:
            out[n] = pos
            n += 1
            pos += 2 if c == 13 and pos + 1 < end and buf[pos + 1] == 10 else 1
            continue
        status, _, next_pos = split_record(buf, pos, end, True, delim, special, quote, escape, double_quote,
                                           starts, ends, flags)
        if status == OUT_OF_SPACE:  # a record with more fields than the arrays hold: grow, then again
            capacity *= 4
            starts = np.empty(capacity, dtype=np.int64)
            ends = np.empty(capacity, dtype=np.int64)
            flags = np.empty(capacity, dtype=np.uint8)
            continue
        if next_pos <= pos:
            break
        pos = next_pos
    return n

