"""Float kernels vs pyarrow's CSV float converter and Python's ``float``.

pyarrow decides which texts are floats (the kernels must accept and reject
exactly the same fields, also with ``null_values=[]`` so null spellings reach
the converter); values must be bit-identical to pyarrow and, for float64, to
``float(text)`` wherever Python accepts the text.

Run ``python tests/arrow_bridge/numbers/test_parse_floats.py [n]`` for the single-thread
throughput microbenchmark (not part of the test run).
"""
from __future__ import annotations

import struct
import sys
import time

import numba as nb
import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arrow_bridge.numbers.parse_floats import parse_float32, parse_float32_verbose, parse_float64, parse_float64_verbose

DOT = ord(".")
_SETTINGS = settings(max_examples=300, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow])


# --------------------------------------------------------------------------
# References.
# --------------------------------------------------------------------------
def _u8(text: bytes) -> np.ndarray:
    return np.frombuffer(text, dtype=np.uint8)


def ours(text: bytes, single: bool = False, decimal_point: int = DOT) -> tuple[bool, int | None]:
    """``(ok, bits)`` from the kernel; bits is None when rejected."""
    buf = _u8(text)
    if single:
        ok, value = parse_float32(buf, 0, len(buf), decimal_point)
        return ok, (int(np.float32(value).view(np.uint32)) if ok else None)
    ok, value = parse_float64(buf, 0, len(buf), decimal_point)
    return ok, (int(np.float64(value).view(np.uint64)) if ok else None)


def _csv(texts: list[bytes]) -> bytes:
    """One-column CSV; every field quoted so blanks and commas survive."""
    rows = [b'"' + t.replace(b'"', b'""') + b'"' for t in texts]
    return b"x\n" + b"\n".join(rows) + b"\n"


def _arrow_column(texts: list[bytes], single: bool, decimal_point: str) -> np.ndarray:
    typ = pa.float32() if single else pa.float64()
    table = pacsv.read_csv(
        pa.py_buffer(_csv(texts)),
        read_options=pacsv.ReadOptions(use_threads=False),
        parse_options=pacsv.ParseOptions(newlines_in_values=True),
        convert_options=pacsv.ConvertOptions(
            column_types={"x": typ}, null_values=[], decimal_point=decimal_point,
            strings_can_be_null=False, quoted_strings_can_be_null=False),
    )
    column = table.column("x").combine_chunks()
    assert column.null_count == 0 and len(column) == len(texts)
    return column.to_numpy(zero_copy_only=False).view(np.uint32 if single else np.uint64)


def arrow(text: bytes, single: bool = False, decimal_point: str = ".") -> tuple[bool, int | None]:
    """``(ok, bits)`` from ``pyarrow.csv.read_csv`` for a one-row column."""
    try:
        return True, int(_arrow_column([text], single, decimal_point)[0])
    except pa.ArrowInvalid:
        return False, None


def python_bits(text: bytes) -> int | None:
    """float64 bits of ``float(text)``; None where Python rejects it."""
    try:
        value = float(text.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        return None
    return struct.unpack("<Q", struct.pack("<d", value))[0]


def check(text: bytes) -> None:
    """The full contract for one text, float64 and float32."""
    ok, bits = ours(text)
    assert (ok, bits) == arrow(text), text
    py = python_bits(text)
    if ok and py is not None:
        assert bits == py, text
    assert ours(text, single=True) == arrow(text, single=True), text


# --------------------------------------------------------------------------
# Edge cases.
# --------------------------------------------------------------------------
def _halfway(m: int, k: int) -> str:
    """Exact decimal of (2m+1) * 2**(k-1): the tie between two floats."""
    n = 2 * m + 1
    if k - 1 >= 0:
        return str(n << (k - 1))
    digits = str(n * 5 ** (1 - k))
    return f"{digits}e-{1 - k}"


EDGE_CASES = [
    # syntax
    "1.5", "+1.5", "-1.5", ".5", "5.", ".", "+.5", "-.5", "-.", "+", "-", "", " ", "\t",
    "1e5", "1E+05", "1e-5", "1e05", "1.e5", ".5e5", ".e5", "e5", "1e", "1e+", "1E-", "1e+-5",
    "1ee5", "1e5.5", "1.5.", "1..5", "--1", "+-1", "-+1", "++1", "+ 1", "- 1", "1 000",
    "1_000", "1,5", "1d5", "1f", "1.5f", "0x10", "0x1p3", "0b1", "1e 5", "00012", "01e01",
    "\ufeff1", "1\x00", "\x001", "1\r", "\r1", "\n1", "1\n", "\x0b1", "\x0c1", "\xa01",
    " 1.5", "1.5 ", "\t1.5\t", " \t 1.5 \t ", " 1 . 5 ",
    # specials
    "inf", "Inf", "INF", "-inf", "+inf", "infinity", "Infinity", "-INFINITY", "+infinity",
    "infin", "infinit", "infinityy", "in", "i", "inf ", " -inf", "iNfInItY", "∞",
    "nan", "NaN", "NAN", "-nan", "+nan", "-NaN", "nan(123)", "nan()", "nan(a_b)", "-nan(x)",
    "nan(", "nan(abc", "nan(a-b)", "nan(.)", "nan(a)b", "nan(a))", "nanx", "na", "n",
    # null spellings the caller normally handles: the converter's own verdict
    "NA", "N/A", "n/a", "NULL", "null", "None", "#N/A", "#NA", "1.#IND",
    "1.#QNAN", "-1.#IND", "<NA>", "#N/A N/A", "-1.#QNAN",
    # zeros and signs
    "0", "-0", "+0", "-0.0", "0.", "-0e0", "0e99999999999999999", "-0e-99999", "0" * 40,
    "-" + "0" * 30 + "." + "0" * 30,
    # overflow / underflow / subnormals
    "1e308", "1e309", "1e400", "-1e400", "1e-400", "-1e-400", "1e99999999999999999999",
    "1e-99999999999999999999", "4.9406564584124654e-324", "2.4703282292062327e-324",
    "2.4703282292062328e-324", "2.2250738585072011e-308", "2.2250738585072012e-308",
    "2.2250738585072014e-308", "2.225073858507201136057409796709131975934819546351645648e-308",
    "1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308",
    "-1.7976931348623159e308", "3.4028235e38", "3.4028236e38", "3.40282357e38",
    "1.4e-45", "7.006492321624085e-46", "7.006492321624086e-46", "1.17549435e-38",
    # exactness: ties, long digit strings, the Clinger / Eisel-Lemire borders
    "9007199254740992", "9007199254740993", "9007199254740994", "9007199254740995",
    "9007199254740993.0000000000000000000000001", "9007199254740992.9999999999999999999",
    "1e22", "1e23", "9007199254740993e22", "8.98846567431158e307", "0.1", "0.2", "0.3",
    "123456789012345678901234567890", "12345678901234567890", "1234567890123456789",
    "18446744073709551615", "18446744073709551616", "184467440737095516150000",
    "0.000000000000000000000000000000000000000000001234567890123456789012345",
    "3.14159265358979323846264338327950288419716939937510582097494459",
    "1.00000005960464477550", "1.0000000596046447755", "1.000000059604644775390625",
    "1.000000059604644775390625000000000000000000000000000000000000000001",
    "16777217", "16777217.000000000000000000001", "33554431", "0.7" + "9" * 40,
    "4.4501477170144022721148195934182639518696390927032912960468522194496444440421538910"
    "3e-308",
    "1" + "0" * 400 + "e-400", "0." + "0" * 400 + "1e401", "1" * 1000, "9" * 1000 + "e-1000",
    _halfway(2**53 - 1, 971),               # max double's tie with 2**1024: inf
    str((2**1024 - 2**970) - 1),            # just below it: max double
    _halfway(0, -1074),                     # 2**-1075: ties to even, 0
    _halfway(0, -1074) + "000000000000000000000001",
    _halfway(1, -1074),                     # 3 * 2**-1075: ties to 2 * 2**-1074
    _halfway(2**52 - 1, -1074),             # tie at the subnormal/normal border
    _halfway(2**52 + 12345, -1000),
    _halfway(2**52 + 12345, -1000) + "0" * 300 + "1",
    _halfway(2**23 - 1, 104),               # float32 max's tie with 2**128: inf in float32
    _halfway(0, -149),                      # float32 2**-150
    _halfway(2**23 + 7, -20),
]


@pytest.mark.parametrize("text", EDGE_CASES, ids=lambda t: repr(t[:30]))
def test_edge_case(text: str) -> None:
    check(text.encode("utf-8"))


def test_grammar_summary() -> None:
    """The accepted grammar, spelled out (mirrors the module docstring)."""
    accepted = [b"+1.5", b"-.5", b"5.", b"1E+05", b" \t1e5\t ", b"INFINITY", b"-nan(x_1)"]
    rejected = [b".", b"1e", b"1e+", b"0x10", b"1_000", b"\r1", b"1\r", b"infin", b"", b"  "]
    for text in accepted:
        assert ours(text)[0] and ours(text, single=True)[0], text
    for text in rejected:
        assert ours(text) == (False, None) and ours(text, single=True) == (False, None), text


def test_nan_keeps_sign_but_no_payload() -> None:
    assert ours(b"nan") == (True, 0x7FF8000000000000)
    assert ours(b"-nan(123)") == (True, 0xFFF8000000000000)
    assert ours(b"-NaN", single=True) == (True, 0xFFC00000)


def test_float32_rounds_once() -> None:
    # float(text) lands exactly on the float32 tie 1 + 2**-24 and would then
    # round to even (1.0); the decimal is above the tie, so 1 + 2**-23.
    text = b"1.00000005960464477550"
    assert np.float32(float(text)) == np.float32(1.0)
    assert ours(text, single=True) == arrow(text, single=True) == (True, 0x3F800001)


def test_field_bounds_are_respected() -> None:
    buf = _u8(b"99-1.5e3999")
    assert parse_float64(buf, 2, 8, DOT) == (True, -1500.0)
    assert parse_float32(buf, 2, 8, DOT) == (True, -1500.0)
    assert parse_float64(buf, 4, 4, DOT) == (False, 0.0)


@pytest.mark.parametrize("decimal_point", [",", "e", ";"])
def test_decimal_point(decimal_point: str) -> None:
    texts = [b"1,5", b"1.5", b",5", b"5,", b"1,5e3", b"1e5", b"1e5e3", b"1;5", b"1", b"inf",
             b"nan", b"1,", b",", b"1,5,", b"-1,25E-2"]
    dp = ord(decimal_point)
    for text in texts:
        assert ours(text, decimal_point=dp) == arrow(text, decimal_point=decimal_point), text
        assert ours(text, True, dp) == arrow(text, True, decimal_point), text


# --------------------------------------------------------------------------
# Bulk: typical data never takes the exact path and matches pyarrow.
# --------------------------------------------------------------------------
@nb.njit(nogil=True, cache=True)
def _parse_lines(buf, single, out):
    """Parses newline-separated fields into ``out``; returns (bad, exact)."""
    bad = 0
    exact = 0
    row = 0
    start = 0
    n = len(buf)
    while start < n:
        end = start
        while end < n and buf[end] != 10:
            end += 1
        if single:
            ok, v32, slow = parse_float32_verbose(buf, start, end, DOT)
            out[row] = v32
        else:
            ok, v64, slow = parse_float64_verbose(buf, start, end, DOT)
            out[row] = v64
        bad += not ok
        exact += slow
        row += 1
        start = end + 1
    return bad, exact


def _random_doubles(n: int, seed: int) -> np.ndarray:
    """Finite doubles with uniformly random bit patterns."""
    bits = np.random.default_rng(seed).integers(0, 2**64, n, dtype=np.uint64)
    values = bits.view(np.float64)
    return values[np.isfinite(values)]


@pytest.mark.parametrize("fmt", ["repr", "%.17g", "%.16e"])
def test_random_doubles_round_trip_without_exact_path(fmt: str) -> None:
    values = np.concatenate([_random_doubles(30_000, 1),
                             np.random.default_rng(2).random(30_000),
                             np.random.default_rng(3).standard_normal(30_000) * 1e6])
    texts = [repr(v) if fmt == "repr" else fmt % v for v in values.tolist()]
    buf = _u8("\n".join(texts).encode())
    out = np.empty(len(texts), np.float64)
    assert _parse_lines(buf, False, out) == (0, 0)
    assert np.array_equal(out.view(np.uint64), values.view(np.uint64))
    out32 = np.empty(len(texts), np.float32)
    assert _parse_lines(buf, True, out32) == (0, 0)
    encoded = [t.encode() for t in texts]
    assert np.array_equal(out32.view(np.uint32), _arrow_column(encoded, True, "."))


def test_exact_path_is_taken_for_ambiguous_long_inputs() -> None:
    buf = _u8(b"9007199254740993.0000000000000000000000001")
    assert parse_float64_verbose(buf, 0, len(buf), DOT) == (True, 9007199254740994.0, True)


# --------------------------------------------------------------------------
# Properties.
# --------------------------------------------------------------------------
@_SETTINGS
@given(st.floats(allow_nan=False), st.integers(0, 25))
def test_printed_floats(value: float, digits: int) -> None:
    check(repr(value).encode())
    check((f"%.{digits}e" % value).encode())


@_SETTINGS
@given(st.floats(width=32, allow_nan=False), st.integers(0, 12))
def test_printed_float32s(value: float, digits: int) -> None:
    for text in (repr(value), f"%.{digits}e" % value, str(np.float32(value))):
        assert ours(text.encode(), single=True) == arrow(text.encode(), single=True), text


_DIGITS = st.text("0123456789", max_size=30) | st.text("0123456789", max_size=900)


@_SETTINGS
@given(st.sampled_from(["", "-", "+"]), _DIGITS, st.none() | _DIGITS,
       st.none() | st.integers(-800, 800), st.sampled_from(["e", "E"]))
def test_digit_strings(sign: str, integer: str, fraction: str | None, exponent: int | None,
                       e: str) -> None:
    text = sign + integer
    if fraction is not None:
        text += "." + fraction
    if exponent is not None:
        text += f"{e}{exponent:+d}" if exponent % 3 else f"{e}{exponent}"
    check(text.encode())


@_SETTINGS
@given(st.integers(-1074, 971), st.integers(0, 2**53 - 1), st.sampled_from([-1, 0, 1]))
def test_near_halfway_points(k: int, m: int, nudge: int) -> None:
    # The tie itself, and the tie moved by 1e-30 of itself either way.
    digits, _, exp = _halfway(m, k).partition("e")
    check(f"{int(digits) * 10**30 + nudge}e{int(exp or 0) - 30}".encode())


@_SETTINGS
@given(st.integers(-149, 104), st.integers(0, 2**24 - 1), st.sampled_from([-1, 0, 1]))
def test_near_float32_halfway_points(k: int, m: int, nudge: int) -> None:
    digits, _, exp = _halfway(m, k).partition("e")
    text = f"{int(digits) * 10**30 + nudge}e{int(exp or 0) - 30}".encode()
    assert ours(text, single=True) == arrow(text, single=True), text


_NEAR_MISS = st.text(" \t+-.eE0123456789infatyINFATYn()_x,", max_size=12)


@_SETTINGS
@given(st.binary(max_size=10) | _NEAR_MISS.map(lambda s: s.encode()))
def test_garbage_agrees_with_pyarrow(text: bytes) -> None:
    check(text)


# --------------------------------------------------------------------------
# Microbenchmark (not a test).
# --------------------------------------------------------------------------
def benchmark(n: int = 10_000_000, seed: int = 0) -> dict[str, float]:
    """Single-thread MB/s parsing ``repr`` of n random doubles, one per line."""
    rng = np.random.default_rng(seed)
    datasets = {
        "uniform[0,1)": rng.random(n),
        "normal*10^U(-20,20)": rng.standard_normal(n) * 10.0 ** rng.integers(-20, 21, n),
    }
    results = {}
    for name, values in datasets.items():
        buf = _u8("\n".join(map(repr, values.tolist())).encode())
        out = np.empty(n, np.float64)
        _parse_lines(buf[:1000], False, out)  # compile / load outside the timing
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            bad, exact = _parse_lines(buf, False, out)
            best = min(best, time.perf_counter() - t0)
        assert bad == 0 and np.array_equal(out, values)
        results[name] = len(buf) / best / 1e6
        print(f"{name:22s} {len(buf) / 1e6:7.1f} MB  {best:6.3f} s  "
              f"{results[name]:7.1f} MB/s  {n / best / 1e6:6.1f} M values/s  exact-path {exact}")
    return results


if __name__ == "__main__":
    benchmark(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000)
