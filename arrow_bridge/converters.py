"""Arrow type → column converter: runs a kernel, wraps its buffers zero-copy.

A converter takes one tokenized span and a column index and returns either a
``pyarrow.Array`` (built with ``Array.from_buffers`` over the kernel's NumPy
output, no copy) or the row at which a value did not convert.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable, Optional, Sequence, Tuple

import numpy as np
import pyarrow as pa

from arrow_bridge.kernels import columns
from arrow_bridge.kernels.fields import spelling_set
from arrow_bridge.options import CsvOptions

Result = Tuple[Optional[pa.Array], int]  # (array, -1) or (None, bad row)
Converter = Callable[["TokenizedSpan", int], Result]


@dataclass
class TokenizedSpan:
    """The tokenizer's output for one span, plus what converters need."""

    buf: np.ndarray  # the span's bytes
    row_starts: np.ndarray  # int32 record starts
    ends: np.ndarray  # int32 field ends, column-major: [c * capacity + r]
    flags: np.ndarray  # uint8 QUOTED/COMPLEX bits, same layout
    nrows: int
    capacity: int
    dialect: tuple  # (quote, escape, double_quote) as the kernels take it
    scratch: np.ndarray  # room for the longest field, for unescaping
    counters: np.ndarray

    def field_start(self, row: int, col: int) -> int:
        if col == 0:
            return int(self.row_starts[row])
        return int(self.ends[(col - 1) * self.capacity + row]) + 1

    @property
    def kernel_span(self) -> tuple:
        return (self.buf, self.row_starts, self.ends, self.flags, self.nrows, self.capacity,
                self.dialect, self.scratch)


@dataclass(frozen=True)
class ValueRules:
    """Option-derived spelling sets, packed once per read for the kernels."""

    nulls: tuple
    trues: tuple
    falses: tuple
    quoted_nulls: bool
    strings_can_be_null: bool
    check_utf8: bool
    decimal_point: np.uint8
    # False when timestamp_parsers name other formats: the kernels' ISO 8601 parser then accepts no
    # timestamp, and the column's text is parsed after the read (arrow_bridge.column_finish).
    iso_timestamps: bool = True
    # False under pandas' semantics: inference never settles on a date, time or timestamp.
    infer_dates: bool = True
    # True under pandas' semantics: integers as pandas' C parser reads them (a leading "+", no "0x")
    pandas_ints: bool = False
    # False with pandas' quoting=csv.QUOTE_NONNUMERIC: inference never settles on an integer type
    infer_integers: bool = True
    # pandas' semantics but for read_pandas' chunks: the uint64 rung refuses a value past int64 with
    # a blank after it while inferring (pandas reads floats; a chunked stream's first block would
    # make every chunk float then, where pandas types each chunk by its own values)
    blank_ends_integers: bool = False

    @classmethod
    def from_options(cls, opts: CsvOptions, null_values: Optional[Sequence[str]] = None) -> "ValueRules":
        """The rules of ``opts`` (with ``null_values`` in place of its null spellings when given)."""
        return cls(
            nulls=spelling_set(opts.null_values if null_values is None else null_values),
            trues=spelling_set(opts.true_values),
            falses=spelling_set(opts.false_values),
            quoted_nulls=opts.quoted_strings_can_be_null,
            strings_can_be_null=opts.strings_can_be_null,
            check_utf8=opts.check_utf8,
            decimal_point=np.uint8(ord(opts.decimal_point)),
            iso_timestamps=not opts.custom_timestamps,
            infer_dates=opts.semantics == "pyarrow",
            pandas_ints=opts.semantics == "pandas",
            infer_integers=opts.infer_integers,
            blank_ends_integers=opts.semantics == "pandas" and opts.chunk_typed_columns is None,
        )


def _validity(nrows: int) -> np.ndarray:
    return np.zeros((nrows + 7) // 8, dtype=np.uint8)


def wrap_buffers(type_: pa.DataType, nrows: int, validity: np.ndarray, null_count: int, *buffers) -> pa.Array:
    """An Arrow array over NumPy buffers, zero-copy (no validity bitmap when nothing is null).

    >>> wrap_buffers(pa.int64(), 2, np.zeros(1, np.uint8), 0, np.array([1, 2])).to_pylist()
    [1, 2]
    """
    bitmap = pa.py_buffer(validity) if null_count else None
    return pa.Array.from_buffers(type_, nrows, [bitmap, *map(pa.py_buffer, buffers)], null_count=null_count)


_NO_BITS = np.empty(0, dtype=np.uint8)
_TIME_UNITS = {"s": (0, 1), "ms": (3, 1_000), "us": (6, 1_000_000), "ns": (9, 1_000_000_000)}


STRINGS = -1  # ConversionSpec.kind of string/binary types
_NO_TIMESTAMP = -1  # TIMESTAMP's max_fraction_digits that no value meets


@dataclass(frozen=True)
class ConversionSpec:
    """How one Arrow type is produced: ``convert_fixed``'s ``kind``/``params`` and
    value dtype, or ``kind == STRINGS`` with offset width and UTF-8 check."""

    kind: int
    params: tuple = (0, 0, 0)
    dtype: type = np.uint8  # value array dtype (fixed width)
    large: bool = False  # int64 offsets
    check_utf8: bool = False


def _fixed_dtype(type_: pa.DataType, kind: int) -> type:
    if kind in (columns.SIGNED, columns.UNSIGNED, columns.FLOAT):
        return type_.to_pandas_dtype()
    if kind in (columns.NULL, columns.BOOL):
        return np.uint8  # NULL: zeros never wrapped; BOOL: values go to a bitmap
    return np.int32 if type_.bit_width == 32 else np.int64  # temporal: integer representation


def conversion_spec(type_: pa.DataType, rules: ValueRules, *, inferring: bool = False) -> ConversionSpec:
    """The kernel settings that turn CSV fields into ``type_``: a type asked for, or
    one inference tries (``inferring``). They differ under pandas' semantics only: an
    asked-for bool also takes ``1`` and ``0``, which pandas infers as ints, and an
    inferred float takes no integer past int64 (pandas keeps such a column as text).

    >>> conversion_spec(pa.int16(), ValueRules.from_options(CsvOptions())).params
    (16, 0, 0)
    >>> pandas = ValueRules.from_options(CsvOptions(semantics="pandas"))
    >>> conversion_spec(pa.bool_(), pandas).params, conversion_spec(pa.bool_(), pandas, inferring=True).params
    ((1, 0, 0), (0, 0, 0))
    """
    # Cached: every read plans a spec per inference rung and per column (0.1 ms a read).
    return _conversion_spec(type_, int(rules.decimal_point), rules.iso_timestamps, rules.check_utf8,
                            rules.pandas_ints, inferring, rules.infer_integers, rules.blank_ends_integers)


@functools.lru_cache(maxsize=1024)
def _conversion_spec(type_: pa.DataType, decimal_point: int, iso_timestamps: bool, check_utf8: bool,
                     pandas_ints: bool, inferring: bool, infer_integers: bool,
                     blank_ends_integers: bool) -> ConversionSpec:
    if type_ in (pa.string(), pa.large_string(), pa.binary(), pa.large_binary()):
        return ConversionSpec(STRINGS, large=type_ in (pa.large_string(), pa.large_binary()),
                              check_utf8=check_utf8 and type_ in (pa.string(), pa.large_string()))
    if pa.types.is_null(type_):
        kind, params = columns.NULL, (0, 0, 0)
    elif pa.types.is_signed_integer(type_):
        kind, params = columns.SIGNED, (type_.bit_width, int(pandas_ints), 0)
    elif pa.types.is_unsigned_integer(type_):
        kind, params = columns.UNSIGNED, (type_.bit_width, int(pandas_ints), int(blank_ends_integers and inferring))
    elif pa.types.is_floating(type_) and type_.bit_width in (32, 64):
        # pandas' inference reads no float from an integer past int64 (params[1]: refuse one)
        # (no integer inferred, as with QUOTE_NONNUMERIC: pandas tries floats first, past int64 too)
        kind, params = columns.FLOAT, (decimal_point, int(pandas_ints and inferring and infer_integers),
                                       int(pandas_ints))
    elif pa.types.is_boolean(type_):
        kind, params = columns.BOOL, (int(pandas_ints and not inferring), 0, 0)
    elif pa.types.is_date32(type_):
        kind, params = columns.DATE, (0, 0, 0)
    elif pa.types.is_time(type_) or pa.types.is_timestamp(type_):
        digits, per_second = _TIME_UNITS[type_.unit]
        zoned = int(getattr(type_, "tz", None) is not None)
        kind = columns.TIME if pa.types.is_time(type_) else columns.TIMESTAMP
        if kind == columns.TIMESTAMP and not iso_timestamps:
            digits = _NO_TIMESTAMP  # every value has at least 0 fraction digits: the kernels reject it
        params = (digits, zoned, per_second)
    else:
        raise pa.ArrowNotImplementedError(f"CSV conversion to {type_} is not supported")
    return ConversionSpec(kind, params, _fixed_dtype(type_, kind))


def _fixed_width(type_: pa.DataType, rules: ValueRules, spec: ConversionSpec) -> Converter:
    """A converter running ``convert_fixed`` for a fixed-width Arrow type."""
    kind = spec.kind
    is_bool = kind == columns.BOOL
    dtype = spec.dtype
    params = tuple(np.int64(p) for p in spec.params)

    def convert(span: TokenizedSpan, col: int) -> Result:
        out = np.empty(0 if is_bool else span.nrows, dtype=dtype)
        bits = _validity(span.nrows) if is_bool else _NO_BITS
        validity = _validity(span.nrows)
        status, bad_row, null_count = columns.convert_fixed(
            span.kernel_span, col, rules.nulls, rules.quoted_nulls, kind, params, rules.trues,
            rules.falses, out, bits, validity, span.counters)
        if status:
            return None, bad_row
        if kind == columns.NULL:
            return pa.nulls(span.nrows), -1
        return wrap_buffers(type_, span.nrows, validity, null_count, bits if is_bool else out), -1

    return convert


def converter_for(type_: pa.DataType, rules: ValueRules, *, inferring: bool = False) -> Converter:
    """The converter that turns CSV fields into ``type_`` (asked for, or tried by
    inference: :func:`conversion_spec`).

    >>> conv = converter_for(pa.int32(), ValueRules.from_options(CsvOptions()))
    """
    spec = conversion_spec(type_, rules, inferring=inferring)
    if spec.kind == STRINGS:
        return _string_converter(type_, rules, spec)
    return _fixed_width(type_, rules, spec)


def _string_converter(type_: pa.DataType, rules: ValueRules, spec: ConversionSpec) -> Converter:
    large, check_utf8 = spec.large, spec.check_utf8

    def convert(span: TokenizedSpan, col: int) -> Result:
        # Spans are under 2 GiB (spans.MAX_SPAN), so int32 offsets always suffice;
        # large types are used when asked for.
        capacity = columns.string_bytes_upper_bound(span.kernel_span, col)
        offsets = np.empty(span.nrows + 1, dtype=np.int64 if large else np.int32)
        data = np.empty(max(capacity, 1), dtype=np.uint8)
        validity = _validity(span.nrows)
        status, bad_row, null_count = columns.convert_strings(
            span.kernel_span, col, rules.nulls, rules.strings_can_be_null, rules.quoted_nulls,
            check_utf8, offsets, data, validity, span.counters)
        if status:
            return None, bad_row
        used = int(offsets[-1])
        if used < len(data) // 2:  # release a mostly unused buffer (many quoted fields)
            data = data[:used].copy()
        return wrap_buffers(type_, span.nrows, validity, null_count, offsets, data[:used]), -1

    return convert
