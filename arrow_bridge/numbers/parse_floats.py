"""Correctly rounded decimal text -> float64 / float32 kernels.

Accepted syntax
---------------
Exactly what ``pyarrow.csv.read_csv`` (Arrow 26, which wraps ``fast_float``)
accepts for a float64 / float32 column, found empirically and pinned down by
``tests/arrow_bridge/numbers/test_parse_floats.py``::

    field    := ws* sign? (number | special) ws*
    ws       := ' ' | '\\t'                 (only these two; not \\r \\n \\v \\f)
    sign     := '+' | '-'                   (at most one)
    number   := mantissa exponent?
    mantissa := digit+ [dp digit*] | dp digit+       ("5." and ".5" ok, "." not)
    exponent := ('e' | 'E') sign? digit+             (any number of digits)
    special  := 'inf' | 'infinity' | 'nan' | 'nan(' [A-Za-z0-9_]* ')'
                                                     (case-insensitive)

``dp`` is the ``decimal_point`` byte; '.' is then an ordinary invalid byte.
An 'e' without exponent digits ("1e", "1e+") makes the field invalid, as do
hexadecimal floats, digit separators ('_', ',', ' '), a BOM, a second sign and
empty or all-blank fields. NaN keeps its sign ("-nan" has the sign bit set)
but never a payload. Null spellings ("", "NA", "NaN", ...) are the caller's
business; text that reaches these kernels is judged by the grammar alone.

Algorithm: one pass validates the field and accumulates the first digits
into a ``uint64`` ``w`` and the decimal exponent ``q`` (value = w * 10**q);
:mod:`.eisel_lemire` rounds that (Clinger, else Eisel-Lemire; the float32
Clinger step is here), and :mod:`.exact_decimal` decides the rare values
neither can. Every kernel is ``nopython``/``nogil``, never raises, and the
common path allocates nothing.
"""
import numpy as np

from arrow_bridge.jit import njit
from arrow_bridge.numbers.eisel_lemire import (
    DOUBLE,
    MAX_FAST_MANTISSA64,
    SINGLE,
    bits_to_float32,
    bits_to_float64,
    decimal_to_bits,
    decimal_to_float64,
)
from arrow_bridge.numbers.exact_decimal import exact_bits
from arrow_bridge.numbers.internal import trim_blanks

# Every uint64 constant is a NumPy scalar on purpose: in Numba, mixing uint64
# with a plain (int64) literal silently promotes to float64.
_U0 = np.uint64(0)
_U9 = np.uint64(9)
_U10 = np.uint64(10)
_U48 = np.uint64(48)
_MIN_19_DIGITS = np.uint64(10**18)

# Exponents beyond this cannot matter for any field shorter than ~1e12 bytes;
# saturating keeps the int64 exponent arithmetic from overflowing.
_EXP_SATURATION = 1_000_000_000_000

_SIGN64 = np.uint64(1 << 63)
_INF64_BITS = np.uint64(0x7FF << 52)
_NAN64_BITS = np.uint64(0x7FF8 << 48)
_SIGN32 = np.uint64(1 << 31)
_INF32_BITS = np.uint64(0xFF << 23)
_NAN32_BITS = np.uint64(0x7FC00000)

_MAX_FAST_MANTISSA32 = np.uint64(1 << 24)
_POW10_F32 = np.array([float(10**i) for i in range(11)], dtype=np.float32)


# --------------------------------------------------------------------------
# Lexing.
# --------------------------------------------------------------------------
@njit(nogil=True, cache=True)
def _is_digit(c):
    return 48 <= c <= 57



@njit(nogil=True, cache=True)
def _lower_is(c, letter):
    # OR-ing 0x20 folds case; for letters no other byte folds onto them.
    return (c | 32) == letter


@njit(nogil=True, cache=True)
def _scan_special(buf, i, end):
    """0: not special, 1: inf/infinity, 2: nan or nan(chars) (case-insensitive)."""
    n = end - i
    if n < 3:
        return 0
    if _lower_is(buf[i], 110) and _lower_is(buf[i + 1], 97) and _lower_is(buf[i + 2], 110):
        if n == 3:
            return 2
        if buf[i + 3] != 40:  # '('
            return 0
        for j in range(i + 4, end):
            c = buf[j]
            if c == 41:  # ')' ends the payload; it must end the field too
                return 2 if j == end - 1 else 0
            if not (_is_digit(c) or 65 <= (c & 0xDF) <= 90 or c == 95):
                return 0
        return 0
    if _lower_is(buf[i], 105) and _lower_is(buf[i + 1], 110) and _lower_is(buf[i + 2], 102):
        if n == 3:
            return 1
        if (n == 8 and _lower_is(buf[i + 3], 105) and _lower_is(buf[i + 4], 110)
                and _lower_is(buf[i + 5], 105) and _lower_is(buf[i + 6], 116)
                and _lower_is(buf[i + 7], 121)):
            return 1
    return 0


@njit(nogil=True, cache=True)
def _scan_exponent(buf, i, end):
    """``(next_index, exponent)`` of an optional ``[eE][+-]?digit+``.

    An 'e' not followed by digits is not consumed (so the field is invalid).
    """
    if i >= end or not _lower_is(buf[i], 101):
        return i, 0
    j = i + 1
    negative = False
    if j < end and (buf[j] == 45 or buf[j] == 43):
        negative = buf[j] == 45
        j += 1
    if j >= end or not _is_digit(buf[j]):
        return i, 0
    e = 0
    while j < end and _is_digit(buf[j]):
        if e < _EXP_SATURATION:
            e = e * 10 + (buf[j] - 48)
        j += 1
    return j, -e if negative else e


@njit(nogil=True, cache=True)
def _accumulate_digits(buf, i, end, w):
    """``(index of the first non-digit, w * 10**n + digits)`` (wrapping)."""
    while i < end:
        d = np.uint64(buf[i]) - _U48  # wraps around below '0': one compare
        if d > _U9:
            break
        w = w * _U10 + d
        i += 1
    return i, w


@njit(nogil=True, cache=True)
def _scan_number(buf, i, end, decimal_point):
    """Validates ``mantissa exponent?`` filling ``[i, end)`` exactly.

    Returns ``(ok, w, exp10, int_start, int_end, frac_start, frac_end, exp)``:
    ``w`` is the digits as a (wrapping) uint64, ``exp10`` the power of ten of
    its last digit and ``exp`` the explicit exponent.
    """
    int_start = i
    i, w = _accumulate_digits(buf, i, end, _U0)
    int_end = i
    frac_start = i
    if i < end and buf[i] == decimal_point:
        frac_start = i + 1
        i, w = _accumulate_digits(buf, frac_start, end, w)
    frac_end = i
    if int_end == int_start and frac_end == frac_start:
        return False, w, 0, int_start, int_end, frac_start, frac_end, 0
    i, exp = _scan_exponent(buf, i, end)
    exp10 = exp - (frac_end - frac_start)
    return i == end, w, exp10, int_start, int_end, frac_start, frac_end, exp


@njit(nogil=True, cache=True)
def _significant_digits(buf, int_start, int_end, frac_start, frac_end):
    """Number of digits after the leading zeros."""
    n = (int_end - int_start) + (frac_end - frac_start)
    i = int_start
    while i < int_end and buf[i] == 48:
        n -= 1
        i += 1
    if i == int_end:
        i = frac_start
        while i < frac_end and buf[i] == 48:
            n -= 1
            i += 1
    return n


@njit(nogil=True, cache=True)
def _first_19_digits(buf, int_start, int_end, frac_start, frac_end, exp):
    """``(w, exp10)`` for the first 19 significant digits (truncated)."""
    w = _U0
    i = int_start
    while w < _MIN_19_DIGITS and i < int_end:
        w = w * _U10 + np.uint64(buf[i] - 48)
        i += 1
    if w >= _MIN_19_DIGITS:
        return w, exp + (int_end - i)
    i = frac_start
    while w < _MIN_19_DIGITS and i < frac_end:
        w = w * _U10 + np.uint64(buf[i] - 48)
        i += 1
    return w, exp - (i - frac_start)



# --------------------------------------------------------------------------
# Entry points.
# --------------------------------------------------------------------------
# The two entry points are deliberately flat twins: moving the shared lexing
# into more helpers measured ~20% slower (LLVM then stops inlining the hot
# path), and the fast paths differ in float type anyway.
@njit(nogil=True, cache=True)
def parse_float64_verbose(buf, start, end, decimal_point):
    """``(ok, value, used_exact_path)``: :func:`parse_float64`, and whether
    the value needed the big-integer path (:mod:`.exact_decimal`).

    >>> buf = np.frombuffer(b"9007199254740993", np.uint8)  # 2**53 + 1: a tie
    >>> parse_float64_verbose(buf, 0, len(buf), ord("."))
    (True, 9007199254740992.0, False)
    """
    start, end = trim_blanks(buf, start, end)
    if start >= end:
        return False, 0.0, False
    i = start
    negative = buf[i] == 45
    if negative or buf[i] == 43:
        i += 1
    ok, w, q, int_start, int_end, frac_start, frac_end, exp = _scan_number(
        buf, i, end, decimal_point)
    sign = _SIGN64 if negative else _U0
    if not ok:
        special = _scan_special(buf, i, end)
        if special == 0:
            return False, 0.0, False
        return True, bits_to_float64((_INF64_BITS if special == 1 else _NAN64_BITS) | sign), False
    too_many = (int_end - int_start) + (frac_end - frac_start) > 19 and _significant_digits(
        buf, int_start, int_end, frac_start, frac_end) > 19
    if too_many:
        w, q = _first_19_digits(buf, int_start, int_end, frac_start, frac_end, exp)
    else:
        decided, value = decimal_to_float64(w, q, w <= MAX_FAST_MANTISSA64, negative)
        if decided:
            return True, value, False
    bits, decided = decimal_to_bits(w, q, too_many, DOUBLE)
    if not decided:
        bits = exact_bits(buf, (int_start, int_end, frac_start, frac_end, exp), bits, DOUBLE)
    return True, bits_to_float64(bits | sign), not decided


@njit(nogil=True, cache=True)
def parse_float32_verbose(buf, start, end, decimal_point):
    """``(ok, value, used_exact_path)``: :func:`parse_float32`, and whether
    the value needed the big-integer path (:mod:`.exact_decimal`).

    >>> buf = np.frombuffer(b"1.5", np.uint8)
    >>> parse_float32_verbose(buf, 0, len(buf), ord("."))
    (True, 1.5, False)
    """
    start, end = trim_blanks(buf, start, end)
    if start >= end:
        return False, np.float32(0), False
    i = start
    negative = buf[i] == 45
    if negative or buf[i] == 43:
        i += 1
    ok, w, q, int_start, int_end, frac_start, frac_end, exp = _scan_number(
        buf, i, end, decimal_point)
    sign = _SIGN32 if negative else _U0
    if not ok:
        special = _scan_special(buf, i, end)
        if special == 0:
            return False, np.float32(0), False
        bits = _INF32_BITS if special == 1 else _NAN32_BITS
        return True, bits_to_float32(np.uint32(bits | sign)), False
    too_many = (int_end - int_start) + (frac_end - frac_start) > 19 and _significant_digits(
        buf, int_start, int_end, frac_start, frac_end) > 19
    if too_many:
        w, q = _first_19_digits(buf, int_start, int_end, frac_start, frac_end, exp)
    elif w <= _MAX_FAST_MANTISSA32 and -10 <= q <= 10:
        value = np.float32(np.int64(w))
        value = value / _POW10_F32[-q] if q < 0 else value * _POW10_F32[q]
        return True, -value if negative else value, False
    bits, decided = decimal_to_bits(w, q, too_many, SINGLE)
    if not decided:
        bits = exact_bits(buf, (int_start, int_end, frac_start, frac_end, exp), bits, SINGLE)
    return True, bits_to_float32(np.uint32(bits | sign)), not decided


@njit(nogil=True, cache=True)
def pandas_refuses(buf, start, end):
    """Whether pandas' float parser refuses ``buf[start:end]``, a special value Arrow's
    grammar reads: NaN spelled out (pandas reads NaN only as a missing value's
    spelling) or an infinity with blanks around it (pandas compares the whole field
    with ``inf``, ``infinity``, signed, in any case). Numbers keep their blanks.

    >>> refuses = lambda text: pandas_refuses(np.frombuffer(text, np.uint8), 0, len(text))
    >>> refuses(b"nan"), refuses(b"-Infinity"), refuses(b"inf "), refuses(b" 1.5 ")
    (True, False, True, False)
    """
    first, last = start, end  # (blanks trimmed here, not by a call: the GPU kernels compile this too)
    while first < last and (buf[first] == 32 or buf[first] == 9):
        first += 1
    while last > first and (buf[last - 1] == 32 or buf[last - 1] == 9):
        last -= 1
    i = first + (first < last and (buf[first] == 43 or buf[first] == 45))
    if i >= last:
        return False
    letter = buf[i] | 32
    if letter == 110:  # n: NaN
        return True
    return letter == 105 and (first != start or last != end)  # i: an infinity, blanks around


@njit(nogil=True, cache=True)
def parse_float64(buf, start, end, decimal_point):
    """Parses ``buf[start:end]`` as a correctly rounded float64.

    Returns ``(ok, value)``; ``ok`` is False (value 0.0) when the text is not
    a float as Arrow's CSV reader defines it (see the module docstring).

    >>> buf = np.frombuffer(b"-1.5e3", np.uint8)
    >>> parse_float64(buf, 0, len(buf), ord("."))
    (True, -1500.0)
    """
    ok, value, _ = parse_float64_verbose(buf, start, end, decimal_point)
    return ok, value


@njit(nogil=True, cache=True)
def parse_float32(buf, start, end, decimal_point):
    """Parses ``buf[start:end]`` as a correctly rounded float32 (rounded once,
    straight from the decimal; never via float64).

    >>> buf = np.frombuffer(b"0.1", np.uint8)
    >>> ok, value = parse_float32(buf, 0, len(buf), ord("."))
    >>> ok, bool(np.float32(value) == np.float32(0.1))
    (True, True)
    """
    ok, value, _ = parse_float32_verbose(buf, start, end, decimal_point)
    return ok, value
