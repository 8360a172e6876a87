"""Date and time text (``arrow_bridge.numbers.format_dates``) against ``datetime``."""
from __future__ import annotations

import datetime as dt

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from arrow_bridge.numbers.format_dates import civil_from_days, format_date, format_time, format_timestamp

SETTINGS = settings(max_examples=300, deadline=None)
EPOCH = dt.datetime(1970, 1, 1)
UNITS = {0: 1, 3: 1_000, 6: 1_000_000, 9: 1_000_000_000}


def written(call, *args) -> tuple[bool, bytes]:
    out = np.zeros(40, np.uint8)
    ok, end = call(out, 0, out.size, *args)
    return ok, out[:end].tobytes()


@SETTINGS
@given(st.dates(min_value=dt.date(1, 1, 1)))
def test_dates_like_isoformat(day):
    days = (day - EPOCH.date()).days
    assert civil_from_days(days) == (day.year, day.month, day.day)
    assert written(format_date, np.int64(days)) == (True, day.isoformat().encode())


@SETTINGS
@given(st.datetimes(min_value=dt.datetime(1, 1, 1)), st.sampled_from([0, 3, 6, 9]), st.booleans())
def test_timestamps_like_isoformat(value, digits, utc):
    units = (value - EPOCH) // dt.timedelta(microseconds=1) * UNITS[digits] // 1_000_000
    assume(-(2**63) <= units < 2**63)
    shown = EPOCH + dt.timedelta(microseconds=units * 1_000_000 // UNITS[digits])
    frac = f"{shown.microsecond:06d}000"[:digits]
    want = shown.isoformat(timespec="seconds") + (f".{frac}" if digits else "") + ("Z" if utc else "")
    assert written(format_timestamp, np.int64(units), digits, utc) == (True, want.encode())


@SETTINGS
@given(st.times(), st.sampled_from([0, 3, 6, 9]))
def test_times_like_isoformat(value, digits):
    micros = ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond
    units = micros * UNITS[digits] // 1_000_000
    frac = f"{value.microsecond:06d}000"[:digits]
    want = value.strftime("%H:%M:%S") + (f".{frac}" if digits else "")
    assert written(format_time, np.int64(units), digits) == (True, want.encode())


@pytest.mark.parametrize("call, args", [
    (format_date, (np.int64(-719529),)),  # -0001-12-31
    (format_date, (np.int64(2932897),)),  # 10000-01-01
    (format_timestamp, (np.int64(253402300800), 0, False)),
    (format_time, (np.int64(-1), 3)),
    (format_time, (np.int64(86400 * 10**6), 6)),
])
def test_values_without_text_are_not_ok(call, args):
    assert written(call, *args) == (False, b"")


def test_year_zero_and_room():
    assert written(format_date, np.int64(-719528)) == (True, b"0000-01-01")
    out = np.full(12, 0xAB, np.uint8)
    assert format_date(out, 0, 9, np.int64(0)) == (True, 10) and (out == 0xAB).all()
