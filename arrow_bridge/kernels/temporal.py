"""ISO-8601 dates, times and timestamps, with pyarrow's exact acceptance rules.

* date: ``YYYY-MM-DD`` (years 0000-9999, checked against the calendar);
  surrounding spaces/tabs are trimmed.
* time: ``HH:MM[:SS[.f{1,9}]]``; trimmed.
* timestamp: a date, optionally followed by ``' '`` or ``'T'`` and
  ``HH[:MM[:SS[.f{1,9}]]]``, then an optional zone ``Z | ±HH | ±HHMM | ±HH:MM``
  (the value is converted to UTC). Not trimmed.
"""
import numba as nb
import numpy as np

SECONDS_PER_DAY = 86400


@nb.njit(nogil=True, cache=True)
def trim(src, start, end):
    """Strips spaces and tabs from both ends, as pyarrow's numeric converters do."""
    while start < end and (src[start] == 32 or src[start] == 9):
        start += 1
    while end > start and (src[end - 1] == 32 or src[end - 1] == 9):
        end -= 1
    return start, end


@nb.njit(nogil=True, cache=True)
def _digits(src, start, count):
    """Value of ``count`` decimal digits at ``start``, or -1."""
    v = 0
    for i in range(start, start + count):
        d = src[i] - 48
        if d < 0 or d > 9:
            return -1
        v = v * 10 + d
    return v


@nb.njit(nogil=True, cache=True)
def days_from_civil(y, m, d):
    """Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's method)."""
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


@nb.njit(nogil=True, cache=True)
def _days_in_month(y, m):
    if m == 2:
        leap = (y % 4 == 0 and y % 100 != 0) or y % 400 == 0
        return 29 if leap else 28
    return 30 if m in (4, 6, 9, 11) else 31


@nb.njit(nogil=True, cache=True)
def _date_at(src, pos, end):
    """``(ok, days)`` for ``YYYY-MM-DD`` starting at ``pos`` (needs 10 bytes)."""
    if end - pos < 10 or src[pos + 4] != 45 or src[pos + 7] != 45:
        return False, 0
    y = _digits(src, pos, 4)
    m = _digits(src, pos + 5, 2)
    d = _digits(src, pos + 8, 2)
    if y < 0 or m < 1 or m > 12 or d < 1 or d > _days_in_month(y, m):
        return False, 0
    return True, days_from_civil(y, m, d)


@nb.njit(nogil=True, cache=True)
def parse_date(src, start, end):
    """``(ok, days since epoch)`` for a (trimmed) ``YYYY-MM-DD``."""
    start, end = trim(src, start, end)
    if end - start != 10:
        return False, 0
    return _date_at(src, start, end)


@nb.njit(nogil=True, cache=True)
def _clock(src, pos, end, need_minutes):
    """Parses ``HH[:MM[:SS[.fraction]]]`` at ``pos``.

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
            return False, 0, 0, 0, pos
        for _ in range(9 - ndigits):
            nanos *= 10
    return True, h * 3600 + mi * 60 + s, nanos, ndigits, pos


@nb.njit(nogil=True, cache=True)
def parse_time(src, start, end):
    """``(ok, seconds, nanos, fraction_digits)`` for a (trimmed) ``HH:MM[:SS[.f]]``."""
    start, end = trim(src, start, end)
    ok, secs, nanos, ndigits, pos = _clock(src, start, end, True)
    if not ok or pos != end or end - start < 5:
        return False, 0, 0, 0
    return True, secs, nanos, ndigits


@nb.njit(nogil=True, cache=True)
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


@nb.njit(nogil=True, cache=True)
def parse_timestamp(src, start, end):
    """``(ok, seconds since epoch in UTC, nanos, fraction_digits, has_zone)``."""
    ok, days = _date_at(src, start, end)
    if not ok:
        return False, 0, 0, 0, False
    pos = start + 10
    secs = days * SECONDS_PER_DAY
    if pos == end:
        return True, secs, 0, 0, False
    if src[pos] != 32 and src[pos] != 84:  # ' ' or 'T'
        return False, 0, 0, 0, False
    ok, clock, nanos, ndigits, pos = _clock(src, pos + 1, end, False)
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


@nb.njit(nogil=True, cache=True)
def to_unit(secs, nanos, units_per_second):
    """``(ok, value)``: seconds + nanos in a unit of ``1/units_per_second`` s,
    failing on int64 overflow (only possible for nanoseconds)."""
    if units_per_second == 1_000_000_000:
        if secs > _NS_MAX_SECONDS or secs < -_NS_MAX_SECONDS - 1:
            return False, np.int64(0)
        v = np.int64(secs) * 1_000_000_000
        limit = np.int64(9223372036854775807) - v if v >= 0 else np.int64(9223372036854775807)
        if nanos > limit:
            return False, np.int64(0)
        return True, v + nanos
    return True, np.int64(secs) * units_per_second + nanos // (1_000_000_000 // units_per_second)
