"""Type inference (arrow_bridge.inference): the rungs skipped on the first rows'
evidence (kernels.columns.first_fitting_rung) never change the inferred type."""
from __future__ import annotations

import numpy as np
import pyarrow.csv as pacsv
import pytest

import arrow_bridge
from arrow_bridge.converters import ValueRules
from arrow_bridge.executors.base import SpanResult
from arrow_bridge.executors.host import HostExecutor
from arrow_bridge.inference import SAMPLE_ROWS, InferringConverter
from arrow_bridge.options import CsvOptions
from arrow_bridge.read_plan import ReadPlan
from arrow_bridge.source import open_source
from arrow_bridge.spans import Span

_LATE = SAMPLE_ROWS + 3  # a row past the sample
# (column values by row, the value that appears only at row _LATE)
COLUMNS = {
    "int_then_float": ("7", "2.5"),
    "int_then_text": ("7", "x"),
    "bool_then_int": ("true", "1"),
    "date_then_timestamp": ("2020-01-02", "2020-01-02 03:04:05"),
    "null_then_date": ("", "2020-01-02"),
    "null_then_text": ("", "x"),
    "all_null": ("", ""),
    "float_then_text": ("1e3", "one"),
    "time_then_text": ("12:30:00", "noon"),
}


def _csv(late_row: int) -> bytes:
    names = list(COLUMNS)
    rows = [",".join(COLUMNS[n][1] if r == late_row else COLUMNS[n][0] for n in names) for r in range(40)]
    return (",".join(names) + "\n" + "\n".join(rows) + "\n").encode()


@pytest.mark.parametrize("late_row", [0, SAMPLE_ROWS - 1, _LATE, 39])
def test_values_past_the_sample_still_raise_the_type(late_row, write_file):
    path = write_file("late.csv", _csv(late_row))
    expected = pacsv.read_csv(path)
    for block_size in (None, 200):  # one first span, and spans of a few rows
        table = arrow_bridge.read_csv(path, block_size=block_size)
        assert table.equals(expected), (late_row, block_size, table.schema, expected.schema)


def test_the_search_starts_where_the_first_rows_allow(write_file):
    """The kernel's answer equals trying every converter in turn."""
    data = _csv(_LATE)
    opts = CsvOptions()
    read = ReadPlan.build(open_source(data), opts, list(COLUMNS))
    host = HostExecutor()
    host.start(read)
    body = np.frombuffer(data[data.index(b"\n") + 1:], np.uint8)
    tokens = host.tokenize(body, True, SpanResult(Span(body, 0, True)))
    inferring = InferringConverter(ValueRules.from_options(opts))
    for col in range(len(COLUMNS)):
        climbed = next(k for k in range(12) if inferring.convert_exactly(tokens, col, k)[0] is not None)
        assert inferring.convert_from(tokens, col, 0)[0] == climbed, list(COLUMNS)[col]
