"""Dates, times and timestamps (``arrow_bridge.numbers.parse_dates``) against
``datetime`` and pyarrow's acceptance rules."""
from __future__ import annotations

import datetime as dt

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arrow_bridge.numbers.parse_dates import (
    SECONDS_PER_DAY,
    date_at,
    days_from_civil,
    parse_date,
    parse_time,
    parse_timestamp,
    time_at,
    timestamp_at,
    to_unit,
)

SETTINGS = settings(max_examples=300, deadline=None)
EPOCH = dt.date(1970, 1, 1)


def field(text: str) -> tuple[np.ndarray, int, int]:
    data = text.encode()
    return np.frombuffer(data or b"\0", np.uint8), 0, len(data)


@SETTINGS
@given(st.dates(min_value=dt.date(1, 1, 1), max_value=dt.date(9999, 12, 31)))
def test_dates_count_days_like_datetime(day):
    days = (day - EPOCH).days
    assert days_from_civil(day.year, day.month, day.day) == days
    assert parse_date(*field(f" {day.isoformat()}\t")) == (True, days)
    buf, start, end = field(day.isoformat())
    assert date_at(buf.ctypes.data, start, end) == (True, days)


@pytest.mark.parametrize("text", ["2021-02-29", "2020-13-01", "2020-00-10", "2020-01-32", "2020-1-01",
                                  "20200101", "2020-01-01x", "+2020-01-01", "0000-02-29x", ""])
def test_invalid_dates(text):
    assert not parse_date(*field(text))[0]


def test_year_zero_and_leap_years():
    assert parse_date(*field("0000-02-29")) == (True, days_from_civil(0, 2, 29))
    assert days_from_civil(0, 3, 1) - days_from_civil(0, 2, 28) == 2  # 0000 is a leap year
    assert not parse_date(*field("1900-02-29"))[0] and parse_date(*field("2000-02-29"))[0]


@SETTINGS
@given(st.times(), st.integers(0, 9))
def test_times_like_datetime(value, digits):
    frac = f"{value.microsecond:06d}000"[:digits]
    text = value.strftime("%H:%M:%S") + (f".{frac}" if digits else "")
    ok, secs, nanos, ndigits = parse_time(*field(text))
    assert ok and ndigits == digits
    assert secs == value.hour * 3600 + value.minute * 60 + value.second
    assert nanos == int(frac.ljust(9, "0")) if digits else nanos == 0


@pytest.mark.parametrize("text, want", [
    ("12:34", (True, 45240, 0, 0)), ("24:00", (False, 0, 0, 0)), ("12:60", (False, 0, 0, 0)),
    ("12", (False, 0, 0, 0)), ("12:00:00.", (True, 43200, 0, 1)),  # a point: as one fraction digit (Arrow's)
    ("12:00:00.1234567890", (False, 0, 0, 0)),
    ("12:00.5", (False, 0, 0, 0)), (" 01:02:03 ", (True, 3723, 0, 0))])
def test_time_forms(text, want):
    assert parse_time(*field(text)) == want


@SETTINGS
@given(st.datetimes(min_value=dt.datetime(1, 1, 2), max_value=dt.datetime(9999, 12, 30)),
       st.sampled_from(["", "Z", "+01", "-0530", "+14:00"]), st.sampled_from([" ", "T"]))
def test_timestamps_in_utc_like_datetime(value, zone, sep):
    text = f"{value.isoformat(sep=sep, timespec='microseconds')}{zone}"
    ok, secs, nanos, ndigits, has_zone = parse_timestamp(*field(text))
    offset = 0
    if zone not in ("", "Z"):
        sign = -1 if zone[0] == "-" else 1
        digits = zone[1:].replace(":", "")
        offset = sign * (int(digits[:2]) * 3600 + int(digits[2:] or 0) * 60)
    naive = (value.replace(microsecond=0) - dt.datetime(1970, 1, 1)) // dt.timedelta(seconds=1)
    assert (ok, secs, nanos, ndigits, has_zone) == (True, naive - offset, value.microsecond * 1000, 6, zone != "")


@pytest.mark.parametrize("text, ok", [("2020-01-01", True), ("2020-01-01T12", True), ("2020-01-01 12:30", True),
                                      ("2020-01-01 ", False), (" 2020-01-01", False), ("2020-01-01T12Z", True),
                                      ("2020-01-01T12:00+1", False), ("2020-01-01T12:00+24", False),
                                      ("2020-01-01T12:00:00.5+01:60", False), ("2020-01-01X12", False)])
def test_timestamp_forms(text, ok):
    assert parse_timestamp(*field(text))[0] == ok


ZONES = ["", "Z", "+01", "-0530", "+14:00", "+24:00", "-05:60", "+1", "z", "+01:0"]


def _fraction(value: dt.time | dt.datetime, digits: int) -> str:
    """``.`` and ``digits`` fraction digits of ``value`` (up to 10: one more than any unit takes)."""
    return f".{value.microsecond * 1000:09d}{value.microsecond % 10}"[: digits + 1] if digits else ""


def _fast_and_general(fast, general, text: str) -> tuple[tuple, tuple]:
    """``fast`` (by address) and ``general`` (by array) on ``text``."""
    buf, start, end = field(text)
    return fast(buf.ctypes.data, start, end), general(buf, start, end)


def _cut_or_extended(text: str, tail: str, cut: int) -> str:
    longer = text + tail
    return longer[:cut] if 0 <= cut < len(longer) else longer


@SETTINGS
@given(st.datetimes(min_value=dt.datetime(1, 1, 2), max_value=dt.datetime(9999, 12, 30)),
       st.sampled_from([" ", "T"]), st.integers(0, 10), st.sampled_from(ZONES),
       st.sampled_from(["", "x", ".", "5", " "]), st.integers(-1, 34))
def test_the_fused_kernels_timestamp_shape_agrees_with_parse_timestamp(value, sep, digits, zone, tail, cut):
    """``timestamp_at`` takes every ``YYYY-MM-DD[ T]HH:MM:SS[.f][zone]`` with 1-9
    fraction digits and a valid zone, and what it takes (also cut short or with a
    tail) is what parse_timestamp says."""
    text = f"{value.replace(microsecond=0).isoformat(sep=sep)}{_fraction(value, digits)}{zone}"
    got, expected = _fast_and_general(timestamp_at, parse_timestamp, text)
    if digits <= 9 and zone in ZONES[:5]:
        assert got == expected
    assert not got[0] or got == expected
    got, expected = _fast_and_general(timestamp_at, parse_timestamp, _cut_or_extended(text, tail, cut))
    assert not got[0] or got == expected


@SETTINGS
@given(st.times(), st.integers(0, 10), st.sampled_from(["", " ", "x", ".", ":", "5"]), st.integers(-1, 21))
def test_the_fused_kernels_time_shape_agrees_with_parse_time(value, digits, tail, cut):
    text = f"{value.replace(microsecond=0).isoformat()}{_fraction(value, digits)}"
    got, expected = _fast_and_general(time_at, parse_time, text)
    if digits <= 9:
        assert got == expected
    assert not got[0] or got == expected
    got, expected = _fast_and_general(time_at, parse_time, _cut_or_extended(text, tail, cut))
    assert not got[0] or got == expected


def test_units_and_overflow():
    assert SECONDS_PER_DAY == 86400
    assert to_unit(-1, 500_000_000, 1_000) == (True, -500)
    assert to_unit(9223372036, 854775807, 1_000_000_000) == (True, 2**63 - 1)
    assert to_unit(9223372036, 854775808, 1_000_000_000)[0] is False
    assert to_unit(-9223372036, 0, 1_000_000_000) == (True, -9223372036 * 10**9)
    for nanos in (0, 145224191, 145224192, 999_999_999):  # 1677-09-21 00:12:43.x: pyarrow rejects them all
        assert to_unit(-9223372037, nanos, 1_000_000_000)[0] is False
    assert to_unit(10**11, 999_999_999, 1) == (True, 10**11)
