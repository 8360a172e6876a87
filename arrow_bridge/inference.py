"""Type inference: pyarrow's ladder of kinds, tried in order per column.

A column takes the first kind whose converter accepts every value. Each span
starts from the widest kind seen so far (a hint), and the reader settles the
whole column at the end: the first kind at or above every span's kind that
all spans accept. That equals inferring over the whole file at once.
"""
from __future__ import annotations

import pyarrow as pa

from arrow_bridge.converters import Converter, Result, TokenizedSpan, ValueRules, converter_for

INFERENCE_LADDER: tuple[pa.DataType, ...] = (
    pa.null(),
    pa.int64(),
    pa.bool_(),
    pa.date32(),
    pa.time32("s"),
    pa.timestamp("s"),
    pa.timestamp("ns"),
    pa.timestamp("s", tz="UTC"),
    pa.timestamp("ns", tz="UTC"),
    pa.float64(),
    pa.string(),
    pa.binary(),
)


def inference_ladder(rules: ValueRules) -> tuple[pa.DataType, ...]:
    """The types tried at each rung under ``rules``. Without date inference
    (pandas' semantics) the temporal rungs convert as ``null``, which accepts
    no column that reached them (a column of nulls stops at a lower rung), so
    the rung numbers, and every plan keyed by them, stay the same.

    >>> from arrow_bridge.options import CsvOptions
    >>> rules = ValueRules.from_options(CsvOptions(semantics="pandas"))
    >>> [str(t) for t in inference_ladder(rules)][:5]
    ['null', 'int64', 'bool', 'null', 'null']
    """
    if rules.infer_dates:
        return INFERENCE_LADDER
    return tuple(pa.null() if _is_temporal(t) else t for t in INFERENCE_LADDER)


def _is_temporal(type_: pa.DataType) -> bool:
    return pa.types.is_date(type_) or pa.types.is_time(type_) or pa.types.is_timestamp(type_)


class InferringConverter:
    """Converts a column at the first kind (from a starting rung) that fits."""

    def __init__(self, rules: ValueRules):
        self._converters: list[Converter] = [converter_for(t, rules) for t in inference_ladder(rules)]

    def convert_from(self, span: TokenizedSpan, col: int, rung: int) -> tuple[int, pa.Array]:
        """``(rung, array)``: the first rung >= ``rung`` whose converter accepts the column."""
        for k in range(rung, len(INFERENCE_LADDER)):
            array, _ = self._converters[k](span, col)
            if array is not None:
                return k, array
        raise AssertionError("binary accepts every value")  # pragma: no cover

    def convert_exactly(self, span: TokenizedSpan, col: int, rung: int) -> Result:
        return self._converters[rung](span, col)
