"""Type inference: pyarrow's ladder of kinds, tried in order per column.

A column takes the first kind whose converter accepts every value. Each span
starts from the widest kind seen so far (a hint), and the reader settles the
whole column at the end: the first kind at or above every span's kind that
all spans accept. That equals inferring over the whole file at once.
"""
from __future__ import annotations

from typing import Optional

import numpy as np
import pyarrow as pa

from arrow_bridge.converters import Converter, Result, TokenizedSpan, ValueRules, conversion_spec, converter_for
from arrow_bridge.kernels import columns

INFERENCE_LADDER: tuple[pa.DataType, ...] = (
    pa.null(),
    pa.int64(),
    pa.uint64(),  # pandas' rung: an integer past int64 (pyarrow infers a double)
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
    """The types tried at each rung under ``rules``. A rung the semantics do
    not infer converts as ``null``, which accepts no column that reached it
    (a column of nulls stops at a lower rung), so the rung numbers, and every
    plan keyed by them, stay the same: under pyarrow's semantics the uint64
    rung (pyarrow infers no unsigned type); under pandas' (no date inference)
    the temporal ones.

    >>> from arrow_bridge.options import CsvOptions
    >>> [str(t) for t in inference_ladder(ValueRules.from_options(CsvOptions()))][:5]
    ['null', 'int64', 'null', 'bool', 'date32[day]']
    >>> [str(t) for t in inference_ladder(ValueRules.from_options(CsvOptions(semantics="pandas")))][:5]
    ['null', 'int64', 'uint64', 'bool', 'null']
    """
    return tuple(t if _inferred(t, rules) else pa.null() for t in INFERENCE_LADDER)


def _inferred(type_: pa.DataType, rules: ValueRules) -> bool:
    """Whether inference under ``rules`` may settle on ``type_``."""
    if _is_temporal(type_):
        return rules.infer_dates
    if pa.types.is_integer(type_) and not rules.infer_integers:
        return False
    return rules.pandas_ints if type_ == pa.uint64() else True


def _is_temporal(type_: pa.DataType) -> bool:
    return pa.types.is_date(type_) or pa.types.is_time(type_) or pa.types.is_timestamp(type_)


#: Rows a column's rungs are first tried on (:func:`columns.first_fitting_rung`).
SAMPLE_ROWS = 16


class InferringConverter:
    """Converts a column at the first kind (from a starting rung) that fits."""

    def __init__(self, rules: ValueRules):
        ladder = inference_ladder(rules)
        self._rules = rules
        self._converters: list[Converter] = [converter_for(t, rules, inferring=True) for t in ladder]
        specs = [conversion_spec(t, rules, inferring=True) for t in ladder]
        self._kinds = np.array([spec.kind for spec in specs], dtype=np.int64)
        self._params = np.array([spec.params for spec in specs], dtype=np.int64)

    @property
    def rules(self) -> ValueRules:
        """The value rules it infers under."""
        return self._rules

    def sampled_rung(self, span: TokenizedSpan, col: int, rung: int) -> int:
        """The first rung >= ``rung`` that accepts the column's first :data:`SAMPLE_ROWS` values."""
        rules = self._rules
        return columns.first_fitting_rung(span.kernel_span, col, rules.nulls, rules.quoted_nulls, self._kinds,
                                          self._params, rules.trues, rules.falses, rung, SAMPLE_ROWS)

    def convert_from(self, span: TokenizedSpan, col: int, rung: int) -> tuple[int, pa.Array]:
        """``(rung, array)``: the first rung >= ``rung`` whose converter accepts the column.
        Rungs that reject a value of the first rows are skipped without converting the column."""
        for k in range(self.sampled_rung(span, col, rung), len(INFERENCE_LADDER)):
            array, _ = self._converters[k](span, col)
            if array is not None:
                return k, array
        raise AssertionError("binary accepts every value")  # pragma: no cover

    def floats(self, span: TokenizedSpan) -> Optional[pa.Array]:
        """The span's one column as float64, integers past int64 taken (where pandas'
        float try is reached: :mod:`~arrow_bridge.python_ints`); None where a value is
        no float."""
        return converter_for(pa.float64(), self._rules)(span, 0)[0]

    def convert_exactly(self, span: TokenizedSpan, col: int, rung: int) -> Result:
        return self._converters[rung](span, col)
