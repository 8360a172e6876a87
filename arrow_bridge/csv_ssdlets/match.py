"""Biscuit's pattern matcher as an SSDlet, and the keys a filter lets it look for."""
from __future__ import annotations

import datetime
from typing import Any, Optional, Sequence

import numpy as np
import pyarrow as pa

from arrow_bridge.csv_ssdlets.parse import MAX_RECORD_BYTES
from arrow_bridge.csv_ssdlets.programs import (compiled_function, compiled_once, contains, counter_prices, is_string,
                                               kernel_namespace, parse_options, settings_key)
from arrow_bridge.filters import Filters, Predicate, RowFilter
from arrow_bridge.jit import njit
from arrow_bridge.options import CsvOptions
from ndp_core.ssdlets import PAGES, Out, SSDlet
from ndp_core.ssdlets.examples import QUOTED, next_field_state

def records_containing(keys: Sequence[str], *, device: Any = None, **options: Any) -> SSDlet:
    """Biscuit's pattern matcher as an SSDlet: file pages in, the records holding
    one of ``keys`` out (``records``, one value per record, line end kept), for
    :func:`csv_parser` with ``records=True``.

    Records end as the reader ends them: at LF, CR or CRLF outside quotes (a line
    end in a quoted field stays in its record); empty lines are skipped, a UTF-8
    BOM at the file's start too, and the header row is dropped when ``options``
    say the file has one. A record is searched with its quote characters taken
    out, so ``"hi"t`` (the value ``hit``) holds ``hit``. Options are
    ``read_csv``'s; an escape character or ``doublequote=False`` is refused (the
    record ends would differ from the reader's). A record longer than
    :data:`MAX_RECORD_BYTES` stops the run. Its work counts ``bytes_searched`` (a
    profile with a scan pipeline, ``biscuit-pm``'s per-channel matcher, charges
    it there), ``lines_matched`` and ``bytes_emitted``, at ``device``'s
    profile's prices (default ``biscuit-pm``'s). Pair it with
    :func:`prefilter_keys`, which says which keys a filter allows.

    >>> records_containing(["1995-01-17"])
    SSDlet records_containing(pages: pages) -> (records: binary); state carry: ...; work bytes_searched, ...
    """
    encoded = [key.encode() for key in keys]
    if not encoded or not all(encoded):
        raise ValueError("records_containing needs at least one key, none of them empty")
    return _matcher(encoded, device, options)


def split_records(*, device: Any = None, **options: Any) -> SSDlet:
    """File pages in, every record out (``records``, one value per record, line end
    kept), for :func:`csv_parser` with ``records=True``: the matcher of
    :func:`records_containing` without keys. Records end, and empty lines, a BOM
    and the header go, as there. It lets packets of whole records go to several
    parse instances in turn (:func:`~arrow_bridge.csv_ssdlets.parse_in_parallel`),
    where a parse of pages keeps a carry and so runs its calls in file order.
    Its ``bytes_searched`` (finding record ends) go to ``biscuit-pm``'s scan
    pipeline as the matcher's do.

    >>> split_records()
    SSDlet split_records(pages: pages) -> (records: binary); state carry: ...; work bytes_searched, ...
    """
    return _matcher(None, device, options)


def _matcher(encoded: Optional[list[bytes]], device: Any, options: dict[str, Any]) -> SSDlet:
    """The matcher for ``encoded`` keys (None: every record), compiled once."""
    opts = parse_options(options)
    name = "split_records" if encoded is None else "records_containing"
    if opts.escape_char is not None or not opts.double_quote:
        raise ValueError(f"{name} follows quotes as the reader's default dialect does: "
                         "no escape character, doubled quotes")
    key = tuple(encoded) if encoded is not None else None
    return compiled_once(("match", key, settings_key(opts)), lambda: _match_program(name, encoded, opts),
                         _match_prices(device))


def _match_program(name: str, encoded: Optional[list[bytes]], opts: CsvOptions) -> SSDlet:
    namespace = kernel_namespace(None, None)
    namespace.update(KEY_DATA=np.frombuffer(b"".join(encoded or []), np.uint8).copy(),
                     KEY_OFFSETS=np.cumsum([0] + [len(k) for k in encoded or []]).astype(np.int64),
                     EVERY_RECORD=encoded is None,
                     HEADER=int(opts.header), DELIMITER=ord(opts.delimiter),
                     QUOTE=ord(opts.quote_char) if opts.quote_char else -1,
                     record_end=record_end, MAX_RECORD_BYTES=MAX_RECORD_BYTES, any_key=any_key,
                     only_line_ends=only_line_ends)
    func = compiled_function(name, _MATCH_TEMPLATE.format(name=name), namespace)
    return SSDlet(func, inputs={"pages": PAGES},
                  outputs={"records": Out(pa.binary(), extra_rows=1, extra_bytes=MAX_RECORD_BYTES)},
                  args={}, state={"carry": _MATCH_CARRY}, work=_match_prices(None), budget=1 << 40)


def _match_prices(device: Any) -> dict[str, tuple[float, float]]:
    """The matcher's counters at ``device``'s profile's prices (default ``biscuit-pm``'s)."""
    return counter_prices(device, ("bytes_searched", "lines_matched", "bytes_emitted"), default="biscuit-pm")


def prefilter_keys(filters: Filters, schema: pa.Schema, *, quote_char: Optional[str] = '"',
                   escape_char: Optional[str] = None) -> Optional[list[str]]:
    """The texts a record must hold for ``filters`` to keep it, or None when there are none.

    Each AND-group needs an equality (``=``, ``in``) on a date32 column (its values
    are written ``YYYY-MM-DD``, the only spelling the reader reads as a date) or
    a string column (for a value without the quote or escape character, its
    field with the quotes taken out holds it, as :func:`records_containing`
    searches); the keys are those values. A group without one, or
    with a null in its ``in``, could keep a record holding no key: then None, and
    the whole file must be parsed.

    >>> import datetime
    >>> schema = pa.schema({"d": pa.date32(), "n": pa.int64()})
    >>> prefilter_keys([("d", "=", datetime.date(1995, 1, 17)), ("n", ">", 3)], schema)
    ['1995-01-17']
    >>> prefilter_keys([[("d", "=", datetime.date(1995, 1, 17))], [("n", "=", 3)]], schema) is None
    True
    """
    parsed = RowFilter(filters)
    if parsed.groups is None:
        return None
    keys: list[str] = []
    for group in parsed.groups:
        found = next((texts for texts in (_key_texts(p, schema, quote_char, escape_char) for p in group)
                      if texts is not None), None)
        if found is None:
            return None
        keys += [k for k in found if k not in keys]
    return keys


def _key_texts(predicate: Predicate, schema: pa.Schema, quote: Optional[str], escape: Optional[str]) -> Optional[list]:
    if predicate.op not in ("=", "==", "in") or predicate.column not in schema.names:
        return None
    values = predicate.value if predicate.op == "in" else [predicate.value]
    type_ = schema.field(predicate.column).type
    if type_ == pa.date32() and all(isinstance(v, datetime.date) and not isinstance(v, datetime.datetime)
                                    for v in values):
        return [v.isoformat() for v in values]
    special = {c for c in (quote, escape) if c}
    if is_string(type_) and all(isinstance(v, str) and v and not special & set(v) for v in values):
        return list(values)
    return None


_MATCH_CARRY = np.dtype([("bytes", np.uint8, (MAX_RECORD_BYTES,)), ("n", np.int64), ("state", np.int64),
                         ("seen", np.int64), ("started", np.int64)])

_MATCH_TEMPLATE = '''
def {name}(p):
    c = p.carry[0]
    size = p.pages.size
    i = 0
    if c["started"] == 0:
        c["started"] = 1
        if size >= 3 and p.pages[0] == 0xEF and p.pages[1] == 0xBB and p.pages[2] == 0xBF:
            i = 3  # a UTF-8 BOM at the file's start, which the reader skips
    state = c["state"]
    held = c["n"]  # the first bytes of the record the last packet ended in
    seen = c["seen"]
    n = 0
    while i < size or (p.at_end and held > 0):
        start = i
        ended = False
        if i < size:
            i, state, ended = record_end(p.pages, i, size, state, DELIMITER, QUOTE)
        length = held + i - start
        if length > MAX_RECORD_BYTES:
            raise ValueError("a record longer than MAX_RECORD_BYTES")
        if not ended and not p.at_end:  # the record goes on in the next packet
            c["bytes"][held:length] = p.pages[start:i]
            held = length
            break
        at = p.records.offsets[n]  # the record is written after the last one kept, then kept or not
        p.records.data[at:at + held] = c["bytes"][:held]
        p.records.data[at + held:at + length] = p.pages[start:i]
        held = 0
        record = p.records.data[at:at + length]
        if not only_line_ends(record, length):
            seen += 1
            if seen > HEADER and (EVERY_RECORD or any_key(record, length, KEY_DATA, KEY_OFFSETS, QUOTE)):
                p.records.offsets[n + 1] = at + length
                n += 1
                p.bytes_emitted[0] += length
    c["state"] = state
    c["n"] = held
    c["seen"] = seen
    p.bytes_searched[0] += size
    p.lines_matched[0] += n
    return n
'''


@njit(nogil=True, cache=True)
def record_end(pages, i, size, state, delimiter, quote):
    """Where the record at ``i`` ends: ``(past its line end, state, True)`` at the first
    LF or CR outside quotes, else ``(size, the quote state there, False)``. The matcher's
    byte loop, apart so that the runtime meters a record, not a byte.

    >>> record_end(np.frombuffer(b'a,"x\\ny"\\nb', np.uint8), 0, 9, 0, 44, 34)
    (8, 0, True)
    """
    while i < size:
        b = pages[i]
        if (b == 10 or b == 13) and state != QUOTED:
            return i + 1, 0, True
        state = next_field_state(state, b, delimiter, quote)
        i += 1
    return size, state, False


@njit(nogil=True, cache=True)
def only_line_ends(data, n):
    """Whether ``data[:n]`` is an empty line (only CR and LF bytes), which the reader skips."""
    for k in range(n):
        if data[k] != 10 and data[k] != 13:
            return False
    return True


@njit(nogil=True, cache=True)
def any_key(data, n, keys, offsets, quote):
    """Whether ``data[:n]``, its ``quote`` bytes taken out, holds one of the strings
    ``keys[offsets[k]:offsets[k + 1]]``. Keys hold no quote, so taking quotes out only
    joins a value's text as the reader joins it (``"hi"t`` is ``hit``), never hides one."""
    text = np.empty(n, np.uint8)
    m = 0
    for k in range(n):
        if data[k] != quote:
            text[m] = data[k]
            m += 1
    for k in range(offsets.size - 1):
        if contains(text, 0, m, keys[offsets[k]:offsets[k + 1]]):
            return True
    return False
