"""Per-field parsing on the GPU: one thread per record, typed values out.

The contract is the host's fused kernel's (:mod:`arrow_bridge.kernels.fused`):
take what can be answered *exactly as the host would*, and give up on the
span otherwise, after which the host parses it (an error, widening, a bad
line policy: the host decides). So every accepted value must be the host's
value; anything unusual is declined:

* ints: ``-?digits`` within the type's range (no blanks, ``+``, hex);
* floats: ``[+-]?digits[.digits][(e|E)[+-]?digits]`` are rounded here by
  the host's own algorithms (Clinger's exact case, else Eisel-Lemire on the
  first 19 significant digits, compiled for the GPU from the same source);
  the rare text they cannot decide (a value within 1e-19 of a rounding
  boundary, an exponent of seven digits or more) is listed for the host's
  parser to round, those fields only; ``inf``/``nan`` decline;
* dates: ``YYYY-MM-DD``, a real calendar day; timestamps without a time
  zone: ``YYYY-MM-DD`` or ``YYYY-MM-DD[ T]hh:mm:ss`` (fractions, zones,
  shorter clocks decline);
* booleans and nulls: the read's spelling sets, byte for byte;
* strings: ASCII fields, doubled quotes unescaped (non-ASCII bytes decline
  when UTF-8 is checked);
* an empty line, another field count, text after a closing quote, a CR
  without LF: decline.

Days are counted by the host's own :func:`~arrow_bridge.numbers.parse_dates.days_from_civil`,
compiled for the GPU from the same Python source.
"""
import numba as nb
import numpy as np
from numba import cuda

from arrow_bridge.numbers.eisel_lemire import DOUBLE, bits_to_float64, decimal_to_bits
from arrow_bridge.numbers.parse_dates import days_from_civil
from arrow_bridge.numbers.parse_floats import pandas_refuses
from arrow_bridge.numbers.parse_ints import integer_text_past_int64

# Field kinds: the host converters' codes (arrow_bridge.kernels.columns / fused).
from arrow_bridge.kernels.columns import BOOL, DATE, FLOAT, SIGNED, TIMESTAMP
from arrow_bridge.kernels.fused import SKIP, STRING

GIVE_UP = 1  # the status word a declining thread sets
CR = 13

_days = cuda.jit(device=True)(days_from_civil.py_func)
_past_int64 = cuda.jit(device=True)(integer_text_past_int64.py_func)  # pandas: no float from such an int
_pandas_refuses = cuda.jit(device=True)(pandas_refuses.py_func)  # pandas: no NaN text, no blanks around inf
_POW10 = np.array([10.0 ** k for k in range(23)], dtype=np.float64)  # exact up to 10**22
_MAX_EXACT = np.uint64(1 << 53)
_SIGN = np.uint64(1 << 63)


@cuda.jit(device=True)
def digit(buf, i):
    """The byte at ``i`` minus ``'0'``, as a signed integer (a digit if 0..9)."""
    return np.int64(buf[i]) - 48


@cuda.jit(device=True)
def spelled(buf, s, e, data, offsets, first_lengths, has_empty):
    """Whether ``buf[s:e]`` is one of a spelling set's values."""
    n = e - s
    if n == 0:
        return has_empty
    if n >= 64 or not (first_lengths[buf[s]] >> n) & 1:
        return False
    for k in range(offsets.shape[0] - 1):
        if offsets[k + 1] - offsets[k] != n:
            continue
        same = True
        for i in range(n):
            if data[offsets[k] + i] != buf[s + i]:
                same = False
                break
        if same:
            return True
    return False


@cuda.jit(device=True)
def parse_int(buf, s, e, bits):
    """``(ok, value)`` for ``-?digits`` fitting a signed ``bits``-bit integer."""
    negative = s < e and buf[s] == 45
    i = s + 1 if negative else s
    if i >= e or e - i > 19 or (e - i == 19 and buf[i] == 57):  # 9 and 18 digits may pass int64
        return False, 0
    value = 0
    for k in range(i, e):
        d = digit(buf, k)
        if d < 0 or d > 9:
            return False, 0
        value = value * 10 + d
    if bits < 64 and value > (1 << (bits - 1)) - (0 if negative else 1):
        return False, 0
    return True, -value if negative else value


NOT_A_FLOAT = 0  # outside the grammar (or a spelling the GPU leaves to the host): decline the span
EXACT = 1  # the value, rounded exactly
ROUND_ON_HOST = 2  # a float too close to a rounding boundary, or with a 7-digit exponent: the host's parser rounds it

_U10 = np.uint64(10)
_MAX_W_DIGITS = 19  # significant digits a uint64 always holds


@cuda.jit(device=True)
def parse_float(buf, s, e, decimal_point):
    """``(state, value)``: EXACT with the correctly rounded value, ROUND_ON_HOST
    for text of the grammar the fast algorithms cannot decide, NOT_A_FLOAT otherwise.

    Rounding is the host's own: Clinger's exact case, else Eisel-Lemire on the
    first 19 significant digits (:func:`~arrow_bridge.numbers.eisel_lemire.decimal_to_bits`,
    compiled for the GPU from the same source; with more digits, it decides only
    when both ends of the truncation interval round alike)."""
    i = s
    negative = False
    if i < e and (buf[i] == 45 or buf[i] == 43):
        negative = buf[i] == 45
        i += 1
    w = np.uint64(0)
    digits = 0
    q = 0
    seen = 0
    while i < e and 48 <= buf[i] <= 57:
        if w or buf[i] != 48:
            digits += 1
            if digits <= _MAX_W_DIGITS:
                w = w * _U10 + np.uint64(buf[i] - 48)
            else:
                q += 1  # digits past the 19th only scale (w is then a truncated prefix)
        seen += 1
        i += 1
    if i < e and buf[i] == decimal_point:
        i += 1
        while i < e and 48 <= buf[i] <= 57:
            if w or buf[i] != 48:
                digits += 1
                if digits <= _MAX_W_DIGITS:
                    w = w * _U10 + np.uint64(buf[i] - 48)
                    q -= 1
            else:
                q -= 1
            seen += 1
            i += 1
    if seen == 0:
        return NOT_A_FLOAT, 0.0
    long_exponent = False
    if i < e and (buf[i] == 101 or buf[i] == 69):
        i += 1
        exp_negative = False
        if i < e and (buf[i] == 45 or buf[i] == 43):
            exp_negative = buf[i] == 45
            i += 1
        if i >= e:
            return NOT_A_FLOAT, 0.0
        x = 0
        while i < e:
            if buf[i] < 48 or buf[i] > 57:
                return NOT_A_FLOAT, 0.0
            if x < 100000:
                x = x * 10 + digit(buf, i)
            else:
                long_exponent = True
            i += 1
        q += -x if exp_negative else x
    if i != e:
        return NOT_A_FLOAT, 0.0
    if long_exponent:
        return ROUND_ON_HOST, 0.0
    if w <= _MAX_EXACT and -22 <= q <= 22 and digits <= _MAX_W_DIGITS:  # Clinger: one exact rounding
        value = float(w)
        value = value * _POW10[q] if q >= 0 else value / _POW10[-q]
        return EXACT, -value if negative else value
    decided, value = _lemire(w, q, digits > _MAX_W_DIGITS, negative)
    return (EXACT, value) if decided else (ROUND_ON_HOST, 0.0)


@nb.njit(cache=True)
def _lemire(w, q, truncated, negative):
    """``(decided, ±w * 10**q)`` by the host's Eisel-Lemire. A CPU function on
    purpose: numba-cuda compiles it for the GPU where a kernel calls it, and
    under the CUDA simulator it runs as compiled host code (its bit cast is an
    LLVM intrinsic, which plain Python cannot call)."""
    bits, decided = decimal_to_bits(w, q, truncated, DOUBLE)
    return decided, bits_to_float64(bits | _SIGN if negative else bits)


@cuda.jit(device=True)
def parse_date(buf, s, e):
    """``(ok, days since 1970-01-01)`` for ``YYYY-MM-DD``."""
    if e - s != 10 or buf[s + 4] != 45 or buf[s + 7] != 45:
        return False, 0
    y = 0
    for k in range(4):
        d = digit(buf, s + k)
        if d < 0 or d > 9:
            return False, 0
        y = y * 10 + d
    m0 = digit(buf, s + 5)
    m1 = digit(buf, s + 6)
    d0 = digit(buf, s + 8)
    d1 = digit(buf, s + 9)
    if m0 < 0 or m0 > 9 or m1 < 0 or m1 > 9 or d0 < 0 or d0 > 9 or d1 < 0 or d1 > 9:
        return False, 0
    m = m0 * 10 + m1
    d = d0 * 10 + d1
    if y < 1 or m < 1 or m > 12 or d < 1:
        return False, 0
    leap = (y % 4 == 0 and y % 100 != 0) or y % 400 == 0
    days_in_month = 30 + ((m + (m >> 3)) & 1) if m != 2 else (29 if leap else 28)
    if d > days_in_month:
        return False, 0
    return True, _days(y, m, d)


@cuda.jit(device=True)
def two_digits(buf, i):
    """The number ``buf[i:i + 2]`` spells, or -1."""
    d0 = digit(buf, i)
    d1 = digit(buf, i + 1)
    if d0 < 0 or d0 > 9 or d1 < 0 or d1 > 9:
        return -1
    return d0 * 10 + d1


@cuda.jit(device=True)
def parse_timestamp(buf, s, e, zoned, per_second):
    """``(ok, value in 1/per_second s)`` for ``YYYY-MM-DD`` or ``YYYY-MM-DD[ T]hh:mm:ss``
    in a column without a time zone (fractions, zones and shorter clocks: the host)."""
    n = e - s
    if zoned or (n != 10 and n != 19):
        return False, 0
    ok, days = parse_date(buf, s, s + 10)
    if not ok:
        return False, 0
    secs = days * 86400
    if n == 19:
        if (buf[s + 10] != 32 and buf[s + 10] != 84) or buf[s + 13] != 58 or buf[s + 16] != 58:
            return False, 0
        h = two_digits(buf, s + 11)
        mi = two_digits(buf, s + 14)
        sec = two_digits(buf, s + 17)
        if h < 0 or h > 23 or mi < 0 or mi > 59 or sec < 0 or sec > 59:
            return False, 0
        secs += h * 3600 + mi * 60 + sec
    if per_second == 1_000_000_000 and (secs > 9223372036 or secs < -9223372036):  # int64 nanoseconds
        return False, 0
    return True, secs * per_second


@cuda.jit
def parse_records(buf, ends, ncols, delim, quote, kinds, slots, params, quoted_nulls,
                  null_data, null_offsets, null_first, null_empty,
                  true_data, true_offsets, true_first, true_empty,
                  false_data, false_offsets, false_first, false_empty,
                  i64, i32, f64, flags, valid, str_start, str_len, null_counts, host_floats, host_floats_used,
                  status):
    """Record ``r`` (ending at ``ends[r]``) into row ``r`` of the outputs;
    ``status[0] = GIVE_UP`` when the span must go to the host. Floats the
    host must round are listed in ``host_floats`` as (slot, row, start, end),
    ``host_floats_used[0]`` of them (more than it holds: the span goes to the host)."""
    r = cuda.grid(1)
    if r >= ends.shape[0]:
        return
    pos = ends[r - 1] + 1 if r > 0 else 0
    end = ends[r]
    if end > pos and buf[end - 1] == CR:
        end -= 1
    if end == pos:  # an empty line: the host skips it and counts the line
        status[0] = GIVE_UP
        return
    for j in range(ncols):
        if pos > end:  # fewer fields than columns
            status[0] = GIVE_UP
            return
        quoted = buf[pos] == quote if pos < end else False
        if quoted:
            s = pos + 1
            e = s
            doubled = 0
            while e < end:
                if buf[e] == quote:
                    if e + 1 < end and buf[e + 1] == quote:
                        doubled += 1
                        e += 2
                        continue
                    break
                e += 1
            if e >= end:  # no closing quote in the record
                status[0] = GIVE_UP
                return
            after = e + 1
            if after < end and buf[after] != delim:  # text after the closing quote
                status[0] = GIVE_UP
                return
        else:
            s = pos
            e = s
            doubled = 0
            while e < end and buf[e] != delim:
                if buf[e] == quote or buf[e] == CR:
                    status[0] = GIVE_UP
                    return
                e += 1
            after = e
        if (after < end) != (j < ncols - 1):  # more or fewer fields than columns
            status[0] = GIVE_UP
            return
        pos = after + 1
        kind = kinds[j]
        if kind == SKIP:
            continue
        slot = slots[j]
        may_be_null = quoted_nulls or not quoted
        if doubled:  # an unescaped value: only strings take it, and only where it cannot be a null spelling
            if kind != STRING or (params[j, 1] and quoted_nulls):
                status[0] = GIVE_UP
                return
            if params[j, 0]:  # UTF-8 checked: non-ASCII goes to the host, as below
                for k in range(s, e):
                    if buf[k] >= 128:
                        status[0] = GIVE_UP
                        return
            str_start[slot, r] = -1 - s  # negative: copy_strings unescapes it
            str_len[slot, r] = e - s - doubled
            valid[j, r] = 1
            continue
        if may_be_null and (kind != STRING or params[j, 1]) and spelled(buf, s, e, null_data, null_offsets,
                                                                          null_first, null_empty):
            cuda.atomic.add(null_counts, j, 1)
            if kind == STRING:
                str_start[slot, r] = s
                str_len[slot, r] = 0
            elif kind == SIGNED or kind == TIMESTAMP:  # a null's slot holds 0, as on the host
                i64[slot, r] = 0
            elif kind == FLOAT:
                f64[slot, r] = 0.0
            elif kind == DATE:
                i32[slot, r] = 0
            continue
        ok = True
        if kind == STRING:
            if params[j, 0]:
                for k in range(s, e):
                    if buf[k] >= 128:
                        ok = False
            str_start[slot, r] = s
            str_len[slot, r] = e - s
        elif kind == SIGNED:
            ok, v = parse_int(buf, s, e, params[j, 0])
            i64[slot, r] = v
        elif kind == FLOAT:
            state, x = parse_float(buf, s, e, params[j, 0])
            f64[slot, r] = x
            ok = state != NOT_A_FLOAT and not (params[j, 1] != 0 and _past_int64(buf, s, e)) \
                and not (params[j, 2] != 0 and _pandas_refuses(buf, s, e))
            if state == ROUND_ON_HOST:
                k = cuda.atomic.add(host_floats_used, 0, 1)
                if k < host_floats.shape[0]:
                    host_floats[k, 0] = slot
                    host_floats[k, 1] = r
                    host_floats[k, 2] = s
                    host_floats[k, 3] = e
        elif kind == DATE:
            ok, days = parse_date(buf, s, e)
            i32[slot, r] = days
        elif kind == TIMESTAMP:
            ok, t = parse_timestamp(buf, s, e, params[j, 1], params[j, 2])
            i64[slot, r] = t
        elif kind == BOOL:  # params[j, 0]: 1 and 0 too (an explicit bool under pandas' semantics)
            if spelled(buf, s, e, true_data, true_offsets, true_first, true_empty):
                flags[slot, r] = 1
            elif spelled(buf, s, e, false_data, false_offsets, false_first, false_empty):
                flags[slot, r] = 0
            elif params[j, 0] != 0 and e - s == 1 and (buf[s] == 48 or buf[s] == 49):
                flags[slot, r] = buf[s] - 48
            else:
                ok = False
        else:  # a null column's value that is not null, or a kind the GPU does not convert
            ok = False
        if not ok:
            status[0] = GIVE_UP
            return
        valid[j, r] = 1


@cuda.jit
def copy_strings(buf, quote, rows, str_start, str_len, offsets, data):
    """Row ``r < rows`` of string slot ``k``: its bytes at ``offsets[k, r]`` of ``data[k]``."""
    r = cuda.grid(1)
    if r >= rows:
        return
    for k in range(str_start.shape[0]):
        at = offsets[k, r]
        s = str_start[k, r]
        if s >= 0:
            for i in range(str_len[k, r]):
                data[k, at + i] = buf[s + i]
        else:  # doubled quotes: every second quote byte dropped
            i = -1 - s
            for o in range(str_len[k, r]):
                data[k, at + o] = buf[i]
                i += 2 if buf[i] == quote else 1
