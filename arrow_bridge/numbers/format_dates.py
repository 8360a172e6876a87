"""Dates, timestamps and times of day as ISO-8601 text pyarrow reads back.

* date32: ``YYYY-MM-DD``;
* timestamps: ``YYYY-MM-DDTHH:MM:SS``, then a fraction of exactly the unit's
  digits (none for seconds) and ``Z`` for zoned types (the UTC instant);
* times: ``HH:MM:SS`` plus the unit's fraction digits.

Years outside 0000-9999 and times outside [0, 24 h) have no such text:
those return not ok. Otherwise each writes only what fits below ``cap`` and
returns ``(ok, end)`` either way (:mod:`.format_ints`).

>>> out = np.zeros(32, np.uint8)
>>> ok, end = format_timestamp(out, 0, out.size, np.int64(-100), 3, True)
>>> ok, bytes(out[:end])
(True, b'1969-12-31T23:59:59.900Z')
"""
import numpy as np

from arrow_bridge.jit import njit
from arrow_bridge.numbers.internal import write_fixed_digits

_POW10_I64 = np.array([10**i for i in range(19)], dtype=np.int64)


@njit(nogil=True, cache=True)
def civil_from_days(days):
    """Proleptic Gregorian ``(year, month, day)`` of days since 1970-01-01
    (H. Hinnant's algorithm; floor division keeps it right before 1970).

    >>> civil_from_days(-1)
    (1969, 12, 31)
    """
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    y = yoe + era * 400 + (1 if m <= 2 else 0)
    return y, m, d


# Days from 1970-01-01 to 0000-01-01 and to 10000-01-01: pyarrow reads 4-digit years only.
_MIN_DAY = -719528
_END_DAY = 2932897


@njit(nogil=True, cache=True)
def _put_date(out, p, days):
    y, m, d = civil_from_days(days)
    write_fixed_digits(out, p, y, 4)
    out[p + 4] = 45
    write_fixed_digits(out, p + 5, m, 2)
    out[p + 7] = 45
    write_fixed_digits(out, p + 8, d, 2)


@njit(nogil=True, cache=True)
def _put_clock(out, p, seconds, frac, digits):
    """``HH:MM:SS`` and, when ``digits``, ``.`` and ``frac`` in that many digits."""
    write_fixed_digits(out, p, seconds // 3600, 2)
    out[p + 2] = 58
    write_fixed_digits(out, p + 3, (seconds // 60) % 60, 2)
    out[p + 5] = 58
    write_fixed_digits(out, p + 6, seconds % 60, 2)
    if digits > 0:
        out[p + 8] = 46
        write_fixed_digits(out, p + 9, frac, digits)


@njit(nogil=True, cache=True)
def format_date(out, pos, cap, days):
    """``(ok, end)``: days since 1970-01-01 as ``YYYY-MM-DD``; not ok outside years 0000-9999.

    >>> format_date(np.zeros(10, np.uint8), 0, 10, np.int64(2932897))  # 10000-01-01
    (False, 0)
    """
    if days < _MIN_DAY or days >= _END_DAY:
        return False, pos
    end = pos + 10
    if end <= cap:
        _put_date(out, pos, days)
    return True, end


@njit(nogil=True, cache=True, inline="always")
def _floor_div_pow10(v, digits):
    """``v // 10**digits`` for digits in (0, 3, 6, 9); constant divisors turn
    into multiplications, a variable one into a slow hardware divide."""
    if digits == 9:
        return v // 1_000_000_000
    if digits == 6:
        return v // 1_000_000
    if digits == 3:
        return v // 1_000
    return v


@njit(nogil=True, cache=True)
def format_timestamp(out, pos, cap, v, digits, utc):
    """``(ok, end)``: ``v`` units of ``10**-digits`` s since the epoch (``utc``:
    append ``Z``); see the module example."""
    seconds = _floor_div_pow10(v, digits)  # floor: 1969-12-31T23:59:59.9 is -1 s + 0.9
    frac = v - seconds * _POW10_I64[digits]
    days = seconds // 86400
    if days < _MIN_DAY or days >= _END_DAY:
        return False, pos
    end = pos + 19 + (digits + 1 if digits > 0 else 0) + (1 if utc else 0)
    if end <= cap:
        _put_date(out, pos, days)
        out[pos + 10] = 84  # 'T': no space, so a space delimiter stays safe
        _put_clock(out, pos + 11, seconds - days * 86400, frac, digits)
        if utc:
            out[end - 1] = 90
    return True, end


@njit(nogil=True, cache=True)
def format_time(out, pos, cap, v, digits):
    """``(ok, end)``: ``v`` units of ``10**-digits`` s since midnight.

    >>> out = np.zeros(16, np.uint8)
    >>> ok, end = format_time(out, 0, out.size, np.int64(45296789), 3)
    >>> ok, bytes(out[:end])
    (True, b'12:34:56.789')
    """
    per = _POW10_I64[digits]
    if v < 0 or v >= 86400 * per:
        return False, pos
    end = pos + 8 + (digits + 1 if digits > 0 else 0)
    if end <= cap:
        seconds = _floor_div_pow10(v, digits)
        _put_clock(out, pos, seconds, v - seconds * per, digits)
    return True, end
