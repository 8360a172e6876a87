"""The reader's parse as an SSDlet: file pages (or matched records) to one nullable port per column."""
from __future__ import annotations

from typing import Any, Mapping, Union

import numpy as np
import pyarrow as pa

from arrow_bridge.converters import STRINGS, ValueRules, conversion_spec
from arrow_bridge.csv_ssdlets.programs import (CsvProgram, check_column_type, compiled_function, compiled_once,
                                               is_string, kernel_namespace, parse_options, parse_prices,
                                               port_names, settings_key)
from arrow_bridge.dialect import Dialect
from arrow_bridge.jit import njit
from arrow_bridge.kernels.status import READER_COUNTERS
from arrow_bridge.kernels.tokenizer import shortest_record
from arrow_bridge.options import CsvOptions
from arrow_bridge.read_plan import row_rules
from ndp_core.ssdlets import PAGES, Nullable, Out, SSDletError

#: The longest record :func:`csv_parser` carries from one packet to the next.
MAX_RECORD_BYTES = 1 << 16
_CARRY = np.dtype([("bytes", np.uint8, (MAX_RECORD_BYTES,)), ("n", np.int64)])


def csv_parser(source: Union[str, Any, pa.Schema], *, device: Any = None, records: bool = False,
               **options: Any) -> CsvProgram:
    """The reader's parse as an SSDlet: ``pages`` in, one ``Nullable`` port per column out.

    ``source`` is a file (its first block gives the types, as :func:`arrow_bridge.open_csv`
    infers them) or a ``pyarrow.Schema`` (the file's columns, in order). ``options`` are
    ``read_csv``'s dialect and value options (``sep``, ``quotechar``, ``escapechar``,
    ``na_values``, ``true_values``, ``dtype``, ``decimal``, ``semantics``, ...); options
    that choose rows or columns (``usecols``, ``skiprows``, ``nrows``, ``on_bad_lines``)
    are refused: a graph chooses with further SSDlets. ``device``'s profile prices the work
    counters (default: the profiles' reader table). ``records=True`` makes the input a
    ``records`` port of whole records with their line ends and no header, as
    :func:`records_containing` sends them, instead of file pages.

    A record longer than :data:`MAX_RECORD_BYTES` that a packet boundary cuts, a record
    with another field count, an unterminated quote or a value its port's type does not
    take stops the run with an ``SSDletError``. For bad input its ``byte_offset`` says
    where: the record's or the value's first byte, as ``read_csv``'s ``CsvParseError``
    reports it (in the file, for a parse that scans it; with ``records=True``, in the
    records it received). An unterminated quote that runs on past :data:`MAX_RECORD_BYTES`
    stops it as a record too long, without an offset; :func:`reader_error` finds it.

    >>> import pyarrow as pa
    >>> csv_parser(pa.schema({"id": pa.int64(), "name": pa.string()})).columns
    {'id': 'id', 'name': 'name'}
    """
    opts = parse_options(options)
    schema = source if isinstance(source, pa.Schema) else _first_block_schema(source, options)
    key = ("parse", schema, settings_key(opts), records)
    return compiled_once(key, lambda: _parse_program(schema, opts, records), parse_prices(device))


def _parse_program(schema: pa.Schema, opts: CsvOptions, records: bool) -> CsvProgram:
    ports = port_names(schema.names)
    for port, field in zip(ports, schema):
        check_column_type(field)
    rules, dialect = ValueRules.from_options(opts), Dialect.from_options(opts)
    namespace = kernel_namespace(rules, dialect)
    namespace.update(valid_bytes=valid_bytes, field_start=field_start, MAX_RECORD_BYTES=MAX_RECORD_BYTES)
    # A header row is skipped whether or not names are given (names= with header=0); the
    # matcher drops it before a records input.
    namespace.update(HEADER=int(opts.header and not records), BOM_AT_START=not records,
                     ROW_RULES=row_rules(opts))
    body = "".join(_convert_lines(k, port, field.type, rules) for k, (port, field) in enumerate(zip(ports, schema)))
    work = "".join(f"    p.csv_{name}[0] += counters[{READER_COUNTERS.slot(name)}]\n" for name in READER_COUNTERS.modeled)
    text = "p.records.data[:p.records.offsets[p.records.offsets.size - 1]]" if records else "p.pages"
    source_text = _PARSE_TEMPLATE.format(ncols=len(schema), text=text, convert=body, work=work, first=ports[0],
                                         returns=", ".join(["rows"] * len(ports)))
    func = compiled_function("csv_parser", source_text, namespace)
    # Rows a call may send: one per record of its input, plus those the carry held. A record
    # takes at least a byte per field (delimiters, then a line end or the end of the file),
    # or, padded (pandas), a field and a line end; records=True takes one record per value.
    per_row = 1 if records else shortest_record(len(schema), row_rules(opts))
    carried = 1 if records else MAX_RECORD_BYTES // per_row + 2
    program = CsvProgram(func, inputs={"records": pa.binary()} if records else {"pages": PAGES},
                         outputs={p: Out(Nullable(f.type), extra_rows=carried, input_per_row=per_row,
                                         **({"extra_bytes": MAX_RECORD_BYTES} if is_string(f.type) else {}))
                                  for p, f in zip(ports, schema)},
                         args={}, state={"carry": _CARRY, "headers_skipped": pa.int64(), "started": pa.int64(),
                                "consumed": pa.int64()},
                         work=parse_prices(None), budget=1 << 40)
    program.columns = dict(zip(ports, schema.names))
    return program


def reader_error(error: SSDletError, source: Any, schema: pa.Schema, **options: Any) -> Exception:
    """The reader's ``CsvParseError`` (file, line, column, byte offset, reason) for the bad
    input a parse of ``source`` stopped at: ``read_csv`` with the parse's types and
    ``options`` reads ``source`` and meets the same first bad record or value (an
    unterminated quote too, which the parse can stop at as a record longer than it
    carries, with no offset). ``error`` itself where the reader finds nothing wrong (a
    record longer than :data:`MAX_RECORD_BYTES`, say). The reader reads the file again,
    on the error path only.

    >>> import io
    >>> kv = pa.schema({"k": pa.string(), "v": pa.int64()})
    >>> print(reader_error(SSDletError("...", byte_offset=10), io.BytesIO(b"k,v\\na,1\\nb,x\\n"), kv))
    <BytesIO>:3: column 'v': cannot convert 'x' to int64 (byte offset 10)
    """
    from arrow_bridge.api import read_csv
    from arrow_bridge.errors import CsvParseError

    if hasattr(source, "seek"):
        source.seek(0)
    try:
        read_csv(source, **{**options, "dtype": dict(zip(schema.names, schema.types))})
    except CsvParseError as found:
        return found
    return error


def _first_block_schema(source: Any, options: Mapping[str, Any]) -> pa.Schema:
    from arrow_bridge.api import open_csv

    with open_csv(source, **options) as reader:
        return reader.schema



@njit(nogil=True, cache=True)
def field_start(row_starts, ends, capacity, row, col):
    """Where field ``col`` of record ``row`` starts, in the tokenizer's layout."""
    return row_starts[row] if col == 0 else ends[(col - 1) * capacity + row] + 1


@njit(nogil=True, cache=True)
def valid_bytes(bitmap, null_count, valid, rows):
    """An Arrow validity bitmap as a byte per value (a kernel leaves its bitmap
    unset while a column has no null)."""
    if null_count == 0:
        valid[:rows] = 1
        return
    for r in range(rows):
        valid[r] = (bitmap[r >> 3] >> (r & 7)) & 1


_PARSE_TEMPLATE = '''
def csv_parser(p):
    text = {text}
    c = p.carry[0]
    kept = c["n"]
    size = kept + text.size
    buf = np.empty(max(size, 1), np.uint8)
    for i in range(kept):
        buf[i] = c["bytes"][i]
    buf[kept:size] = text
    counters = np.zeros(N_COUNTERS, np.int64)
    start = 0
    if BOM_AT_START and p.started[0] == 0:
        if size < 3 and not p.at_end:
            start = size  # too little to see a BOM yet: all of it waits in the carry
        else:
            p.started[0] = 1
            if size >= 3 and buf[0] == 0xEF and buf[1] == 0xBB and buf[2] == 0xBF:
                start = 3  # a UTF-8 BOM at the file's start, which the reader skips
    if p.headers_skipped[0] < HEADER and start < size:
        one = np.empty(1, np.int32)
        status, rows, pos, lines = tokenize(buf, start, size, p.at_end, {ncols}, DELIMITER, SPECIAL.copy(), QUOTE,
                                            ESCAPE, DOUBLE_QUOTE, 0, one, np.empty({ncols}, np.int32),
                                            np.zeros({ncols}, np.uint8), np.zeros((1, 2), np.int64), counters)
        if status != OK and status != NEEDS_MORE and status != OUT_OF_SPACE:
            p.error_at[0] = p.consumed[0] - kept + pos
            raise ValueError("the header is not a record of the schema's fields")
        if rows == 1:
            p.headers_skipped[0] = 1
            start = pos
        else:
            start = size
    capacity = 1 + np.count_nonzero(buf[start:size] == 10) + np.count_nonzero(buf[start:size] == 13)
    row_starts = np.empty(capacity, np.int32)
    ends = np.empty(capacity * {ncols}, np.int32)
    flags = np.zeros(capacity * {ncols}, np.uint8)
    rows = 0
    pos = size
    refused_at = size  # a record the tokenizer refuses (field count): its start; an unterminated quote's
    if p.headers_skipped[0] >= HEADER and (p.started[0] == 1 or not BOM_AT_START):
        status, rows, pos, lines = tokenize(buf, start, size, p.at_end, {ncols}, DELIMITER, SPECIAL.copy(), QUOTE,
                                            ESCAPE, DOUBLE_QUOTE, ROW_RULES, row_starts, ends, flags, np.zeros((1, 2), np.int64),
                                            counters)
        if status != OK and status != NEEDS_MORE:
            refused_at = pos  # the records before it are converted first: a bad value there comes first
        if rows > p.{first}.valid.size:
            raise ValueError("more records than the outputs hold (records that were not whole)")
    elif not p.at_end:
        pos = 0
    if refused_at == size:
        if size - pos > MAX_RECORD_BYTES:
            raise ValueError("a record longer than MAX_RECORD_BYTES crosses a packet boundary")
        for i in range(pos, size):
            c["bytes"][i - pos] = buf[i]
        c["n"] = size - pos
    span = (buf, row_starts, ends, flags, rows, capacity, (QUOTE, ESCAPE, DOUBLE_QUOTE),
            np.empty(max(size - start, 1), np.uint8))
    nulls = (NULL_DATA.copy(), NULL_OFFSETS.copy(), NULL_FIRST.copy(), NULL_EMPTY)
    trues = (TRUE_DATA.copy(), TRUE_OFFSETS.copy(), TRUE_FIRST.copy(), TRUE_EMPTY)
    falses = (FALSE_DATA.copy(), FALSE_OFFSETS.copy(), FALSE_FIRST.copy(), FALSE_EMPTY)
    bad_at = size  # the first bad value's field, over all columns (as the reader reports it)
{convert}    if bad_at < size or refused_at < size:
        p.error_at[0] = p.consumed[0] - kept + min(bad_at, refused_at)  # the first in file order, as the reader's
        raise ValueError("bad input: a record the tokenizer refuses, a value its port's type does not take")
    p.consumed[0] += text.size
{work}    return ({returns})
'''

_FIXED_CONVERT = '''    validity = np.zeros((rows + 7) // 8, np.uint8)
    status, bad, null_count = convert_fixed(span, {col}, nulls, QUOTED_NULLS, {kind}, ({p0}, {p1}, {p2}), trues,
                                            falses, p.{port}.values[:rows], np.empty(0, np.uint8), validity, counters)
    if status != OK:
        bad_at = min(bad_at, field_start(row_starts, ends, capacity, bad, {col}))
    valid_bytes(validity, null_count, p.{port}.valid, rows)
'''

_STRING_CONVERT = '''    validity = np.zeros((rows + 7) // 8, np.uint8)
    status, bad, null_count = convert_strings(span, {col}, nulls, STRINGS_CAN_BE_NULL, QUOTED_NULLS, {check},
                                              p.{port}.offsets[:rows + 1], p.{port}.data, validity, counters)
    if status != OK:
        bad_at = min(bad_at, field_start(row_starts, ends, capacity, bad, {col}))
    valid_bytes(validity, null_count, p.{port}.valid, rows)
'''


def _convert_lines(col: int, port: str, type_: pa.DataType, rules: ValueRules) -> str:
    spec = conversion_spec(type_, rules)
    if spec.kind == STRINGS:
        return _STRING_CONVERT.format(col=col, port=port, check=bool(spec.check_utf8))
    p0, p1, p2 = (int(v) for v in spec.params)
    return _FIXED_CONVERT.format(col=col, port=port, kind=spec.kind, p0=p0, p1=p1, p2=p2)

