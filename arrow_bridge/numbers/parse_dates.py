"""ISO-8601 dates, times and timestamps, with pyarrow's exact acceptance rules.

* date: ``YYYY-MM-DD`` (years 0000-9999, checked against the calendar);
  surrounding spaces/tabs are trimmed.
* time: ``HH:MM[:SS[.f{1,9}]]``; trimmed.
* timestamp: a date, optionally followed by ``' '`` or ``'T'`` and
  ``HH[:MM[:SS[.f{1,9}]]]``, then an optional zone ``Z | ±HH | ±HHMM | ±HH:MM``
  (the value is converted to UTC). Not trimmed.

>>> text = np.frombuffer(b"2020-03-01T12:00:00.5+01:00", np.uint8)
>>> parse_timestamp(text, 0, len(text))
(True, 1583060400, 500000000, 1, True)
"""
import numpy as np

from arrow_bridge.jit import njit
from arrow_bridge.numbers.internal import trim_blanks
from arrow_bridge.numbers.swar import byte_at

SECONDS_PER_DAY = 86400


@njit(nogil=True, cache=True)
def _digits(src, start, count):
    """Value of ``count`` decimal digits at ``start``, or -1."""
    v = 0
    for i in range(start, start + count):
        d = src[i] - 48
        if d < 0 or d > 9:
            return -1
        v = v * 10 + d
    return v


@njit(nogil=True, cache=True)
def days_from_civil(y, m, d):
    """Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's method).

    >>> days_from_civil(1970, 1, 1), days_from_civil(2000, 3, 1)
    (0, 11017)
    """
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _calendar_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Days from the epoch to Jan 1 of years 0..9999, days before each month
    (common, leap) and month lengths (common, leap): a date is two look-ups.
    Built by the Python function: a jitted call at import would start Numba's
    compiler before any read needs it."""
    civil = days_from_civil.py_func
    year_start = np.array([civil(y, 1, 1) for y in range(10000)], dtype=np.int32)
    lengths = np.array([[31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31],
                        [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]], dtype=np.int64)
    before = np.zeros((2, 13), dtype=np.int64)
    before[:, 1:] = np.cumsum(lengths, axis=1)
    month_length = np.zeros((2, 13), dtype=np.int64)
    month_length[:, 1:] = lengths
    return year_start, before, month_length


_YEAR_START, _DAYS_BEFORE_MONTH, _MONTH_LENGTH = _calendar_tables()


@njit(nogil=True, cache=True, inline="always")
def _digit(at, i):
    """The digit at address ``at + i`` (0-9), or a value above 9 for any other byte."""
    return np.uint64(byte_at(at, i)) - np.uint64(48)


@njit(nogil=True, cache=True, inline="always")
def date_at(at, pos, end):
    """``(ok, days)`` for ``YYYY-MM-DD`` at ``pos`` of the buffer at address
    ``at`` (an address, not an array: the fused kernel calls this per field,
    and an array argument costs reference counting per call).

    >>> text = np.frombuffer(b"1969-12-31", np.uint8)
    >>> date_at(text.ctypes.data, 0, 10)
    (True, -1)
    """
    if end - pos < 10 or byte_at(at, pos + 4) != 45 or byte_at(at, pos + 7) != 45:
        return False, 0
    y0, y1, y2, y3 = _digit(at, pos), _digit(at, pos + 1), _digit(at, pos + 2), _digit(at, pos + 3)
    m0, m1, d0, d1 = _digit(at, pos + 5), _digit(at, pos + 6), _digit(at, pos + 8), _digit(at, pos + 9)
    if max(y0, y1, y2, y3, m0, m1, d0, d1) > 9:
        return False, 0
    y = np.int64(y0 * 1000 + y1 * 100 + y2 * 10 + y3)
    m = np.int64(m0 * 10 + m1)
    d = np.int64(d0 * 10 + d1)
    if m < 1 or m > 12 or d < 1:
        return False, 0
    leap = 1 if (y % 4 == 0 and y % 100 != 0) or y % 400 == 0 else 0
    if d > _MONTH_LENGTH[leap, m]:
        return False, 0
    return True, np.int64(_YEAR_START[y]) + _DAYS_BEFORE_MONTH[leap, m - 1] + d - 1


@njit(nogil=True, cache=True, inline="always")
def _two_digits(at, i):
    """The value of the two digits at address ``at + i``, or a value above 99."""
    d0, d1 = _digit(at, i), _digit(at, i + 1)
    return np.int64(100) if max(d0, d1) > 9 else np.int64(d0 * 10 + d1)


@njit(nogil=True, cache=True, inline="always")
def _clock_at(at, pos, end):
    """``(ok, seconds, nanos, fraction_digits, next_pos)`` for ``HH:MM:SS[.f]``
    at ``pos``, 1-9 fraction digits: :func:`_clock`'s answer where it says ok
    (other shapes are not ok here, and left to it)."""
    if end - pos < 8 or byte_at(at, pos + 2) != 58 or byte_at(at, pos + 5) != 58:
        return False, 0, 0, 0, pos
    h, m, sec = _two_digits(at, pos), _two_digits(at, pos + 3), _two_digits(at, pos + 6)
    if h > 23 or m > 59 or sec > 59:
        return False, 0, 0, 0, pos
    p = pos + 8
    nanos = np.int64(0)
    ndigits = 0
    if p < end and byte_at(at, p) == 46:  # '.'
        p += 1
        while p < end and _digit(at, p) <= 9:
            if ndigits == 9:
                return False, 0, 0, 0, pos
            nanos = nanos * 10 + np.int64(_digit(at, p))
            ndigits += 1
            p += 1
        if ndigits == 0:
            return False, 0, 0, 0, pos
        for _ in range(9 - ndigits):
            nanos *= 10
    return True, h * 3600 + m * 60 + sec, nanos, ndigits, p


@njit(nogil=True, cache=True, inline="always")
def _zone_at(at, pos, end):
    """``(ok, offset seconds)`` for ``Z``, ``±HH``, ``±HHMM`` or ``±HH:MM`` filling
    ``[pos, end)`` at address ``at``, as :func:`_zone`."""
    n = end - pos
    sign = byte_at(at, pos) if n > 0 else 0
    if n == 1 and sign == 90:  # 'Z'
        return True, np.int64(0)
    if (n != 3 and n != 5 and n != 6) or (sign != 43 and sign != 45):
        return False, np.int64(0)
    hh = _two_digits(at, pos + 1)
    mm = np.int64(0)
    if n == 5:
        mm = _two_digits(at, pos + 3)
    elif n == 6:
        if byte_at(at, pos + 3) != 58:
            return False, np.int64(0)
        mm = _two_digits(at, pos + 4)
    if hh > 23 or mm > 59:
        return False, np.int64(0)
    return True, (np.int64(-1) if sign == 45 else np.int64(1)) * (hh * 3600 + mm * 60)


@njit(nogil=True, cache=True, inline="always")
def timestamp_at(at, pos, end):
    """``(ok, seconds since epoch in UTC, nanos, fraction_digits, has_zone)``
    for the common shape ``YYYY-MM-DD[ T]HH:MM:SS[.fraction][zone]`` at ``pos``
    of the buffer at address ``at`` (as :func:`date_at`, per field in the
    fused kernel). Any other text is not ok here; :func:`parse_timestamp`
    decides it.

    >>> text = np.frombuffer(b"1970-01-02T00:00:01.5+01:00", np.uint8)
    >>> timestamp_at(text.ctypes.data, 0, 27)
    (True, 82801, 500000000, 1, True)
    """
    if end - pos < 19 or (byte_at(at, pos + 10) != 32 and byte_at(at, pos + 10) != 84):
        return False, 0, 0, 0, False
    ok, days = date_at(at, pos, pos + 10)
    if not ok:
        return False, 0, 0, 0, False
    ok, clock, nanos, ndigits, p = _clock_at(at, pos + 11, end)
    if not ok:
        return False, 0, 0, 0, False
    secs = days * SECONDS_PER_DAY + clock
    if p == end:
        return True, secs, nanos, ndigits, False
    ok, offset = _zone_at(at, p, end)
    return ok, secs - offset, nanos, ndigits, ok


@njit(nogil=True, cache=True, inline="always")
def time_at(at, pos, end):
    """``(ok, seconds, nanos, fraction_digits)`` for ``HH:MM:SS[.fraction]``
    filling ``[pos, end)`` at address ``at``: :func:`parse_time`'s answer where
    it says ok (other shapes, blanks, ``HH:MM``, a bare point, are left to it).

    >>> text = np.frombuffer(b"01:02:03.25", np.uint8)
    >>> time_at(text.ctypes.data, 0, 11)
    (True, 3723, 250000000, 2)
    """
    ok, secs, nanos, ndigits, p = _clock_at(at, pos, end)
    return ok and p == end, secs, nanos, ndigits


@njit(nogil=True, cache=True)
def parse_date(src, start, end):
    """``(ok, days since epoch)`` for a (trimmed) ``YYYY-MM-DD``.

    >>> parse_date(np.frombuffer(b" 2021-02-29", np.uint8), 0, 11)
    (False, 0)
    """
    start, end = trim_blanks(src, start, end)
    if end - start != 10:
        return False, 0
    return date_at(src.ctypes.data, start, end)


@njit(nogil=True, cache=True)
def _clock(src, pos, end, need_minutes, bare_point):
    """Parses ``HH[:MM[:SS[.fraction]]]`` at ``pos``; with ``bare_point``, a point
    without digits too, as one fraction digit (Arrow takes ``12:34:56.`` as a time
    whose unit has a fraction, not as a second's or in a timestamp).

    Returns ``(ok, seconds, nanos, fraction_digits, next_pos)``.
    """
    if end - pos < 2:
        return False, 0, 0, 0, pos
    h = _digits(src, pos, 2)
    if h < 0 or h > 23:
        return False, 0, 0, 0, pos
    pos += 2
    mi = 0
    s = 0
    has_seconds = False
    if pos < end and src[pos] == 58:  # ':'
        if end - pos < 3:
            return False, 0, 0, 0, pos
        mi = _digits(src, pos + 1, 2)
        if mi < 0 or mi > 59:
            return False, 0, 0, 0, pos
        pos += 3
        if pos < end and src[pos] == 58:
            if end - pos < 3:
                return False, 0, 0, 0, pos
            s = _digits(src, pos + 1, 2)
            if s < 0 or s > 59:
                return False, 0, 0, 0, pos
            pos += 3
            has_seconds = True
    elif need_minutes:
        return False, 0, 0, 0, pos
    nanos = 0
    ndigits = 0
    if pos < end and src[pos] == 46 and has_seconds:  # '.'
        pos += 1
        while pos < end and 48 <= src[pos] <= 57:
            if ndigits == 9:
                return False, 0, 0, 0, pos
            nanos = nanos * 10 + (src[pos] - 48)
            ndigits += 1
            pos += 1
        if ndigits == 0:
            return bare_point, h * 3600 + mi * 60 + s, 0, 1, pos
        for _ in range(9 - ndigits):
            nanos *= 10
    return True, h * 3600 + mi * 60 + s, nanos, ndigits, pos


@njit(nogil=True, cache=True)
def parse_time(src, start, end):
    """``(ok, seconds, nanos, fraction_digits)`` for a (trimmed) ``HH:MM[:SS[.f]]``.

    >>> parse_time(np.frombuffer(b"01:02:03.25", np.uint8), 0, 11)
    (True, 3723, 250000000, 2)
    >>> parse_time(np.frombuffer(b"01:02:03.", np.uint8), 0, 9)  # a unit with a fraction takes it
    (True, 3723, 0, 1)
    """
    start, end = trim_blanks(src, start, end)
    ok, secs, nanos, ndigits, pos = _clock(src, start, end, True, True)
    if not ok or pos != end or end - start < 5:
        return False, 0, 0, 0
    return True, secs, nanos, ndigits


@njit(nogil=True, cache=True)
def _zone(src, pos, end):
    """``(ok, offset seconds)`` for ``Z``, ``±HH``, ``±HHMM`` or ``±HH:MM``."""
    n = end - pos
    if n == 1 and src[pos] == 90:  # 'Z'
        return True, 0
    if n not in (3, 5, 6) or (src[pos] != 43 and src[pos] != 45):
        return False, 0
    sign = -1 if src[pos] == 45 else 1
    hh = _digits(src, pos + 1, 2)
    mm = 0
    if n == 5:
        mm = _digits(src, pos + 3, 2)
    elif n == 6:
        if src[pos + 3] != 58:
            return False, 0
        mm = _digits(src, pos + 4, 2)
    if hh < 0 or hh > 23 or mm < 0 or mm > 59:
        return False, 0
    return True, sign * (hh * 3600 + mm * 60)


@njit(nogil=True, cache=True)
def parse_timestamp(src, start, end):
    """``(ok, seconds since epoch in UTC, nanos, fraction_digits, has_zone)``;
    see the module example."""
    ok, days = date_at(src.ctypes.data, start, end)
    if not ok:
        return False, 0, 0, 0, False
    pos = start + 10
    secs = days * SECONDS_PER_DAY
    if pos == end:
        return True, secs, 0, 0, False
    if src[pos] != 32 and src[pos] != 84:  # ' ' or 'T'
        return False, 0, 0, 0, False
    ok, clock, nanos, ndigits, pos = _clock(src, pos + 1, end, False, False)
    if not ok:
        return False, 0, 0, 0, False
    secs += clock
    if pos == end:
        return True, secs, nanos, ndigits, False
    ok, offset = _zone(src, pos, end)
    if not ok:
        return False, 0, 0, 0, False
    return True, secs - offset, nanos, ndigits, True


_NS_MAX_SECONDS = 9223372036  # floor((2**63 - 1) / 1e9)


@njit(nogil=True, cache=True)
def to_unit(secs, nanos, units_per_second):
    """``(ok, value)``: seconds + nanos in a unit of ``1/units_per_second`` s,
    failing on int64 overflow (only possible for nanoseconds).

    >>> to_unit(2, 500_000_000, 1000), to_unit(10**10, 0, 1_000_000_000)
    ((True, 2500), (False, 0))
    """
    if units_per_second == 1_000_000_000:
        # Like pyarrow, not the second before -_NS_MAX_SECONDS either, though -2**63 ns lies in it.
        if secs > _NS_MAX_SECONDS or secs < -_NS_MAX_SECONDS:
            return False, np.int64(0)
        v = np.int64(secs) * 1_000_000_000
        limit = np.int64(9223372036854775807) - v if v >= 0 else np.int64(9223372036854775807)
        if nanos > limit:
            return False, np.int64(0)
        return True, v + nanos
    return True, np.int64(secs) * units_per_second + nanos // (1_000_000_000 // units_per_second)


@njit(nogil=True, cache=True, inline="always")
def in_column_unit(ok, secs, nanos, fraction_digits, has_zone, max_digits, zoned, units_per_second):
    """``(ok, value)`` of a parsed time or timestamp in its column: one the
    column takes (at most ``max_digits`` fraction digits, a zone exactly when
    the column is ``zoned``) in its unit (:func:`to_unit`). The parsers'
    results go through this one rule wherever they are stored.

    >>> in_column_unit(True, 2, 500_000_000, 1, False, 3, 0, 1000)
    (True, 2500)
    >>> in_column_unit(True, 2, 500_000_000, 1, True, 3, 0, 1000)  # a zone in a zoneless column
    (False, 0)
    """
    if not ok or fraction_digits > max_digits or has_zone != (zoned != 0):
        return False, np.int64(0)
    return to_unit(secs, nanos, units_per_second)
