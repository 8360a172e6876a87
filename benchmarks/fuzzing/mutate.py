"""Byte-level mutations of CSV inputs, AFL-style "havoc" with a CSV dictionary.

A mutant is a corpus input with one to six stacked mutations: bit flips,
bytes set to CSV-significant values (delimiters, quotes, escapes, CR, LF,
NUL, 0xFF, BOM bytes), tokens inserted or put in place of a field (the
dictionary: structural tokens and the value pools of
``tests/arrow_bridge/csvgen.py``: edge integers, float spellings, dates,
timestamps, null spellings, strings with quotes and invalid UTF-8), ranges
deleted or duplicated, lines duplicated, dropped or swapped, line ends
rewritten, a field quoted, a BOM toggled, two inputs spliced, rows repeated
(so inputs span many blocks). Everything draws from the ``random.Random``
given, so a seed replays the same mutants.

>>> import random
>>> mutator = Mutator()
>>> a = mutator.mutate(random.Random(5), b"a,b\\n1,2\\n", [b"x\\n"])
>>> a == mutator.mutate(random.Random(5), b"a,b\\n1,2\\n", [b"x\\n"])
True
"""
from __future__ import annotations

import random
from typing import Callable, Sequence

from benchmarks.fuzzing.reference import BOM, POOLS

MAX_INPUT = 16 << 10  # bytes; larger mutants are cut
INTERESTING_BYTES = b',;|\t"\'\\\r\n\x00\xff\xef\xbb\xbf \x80\xc3-+.eE0019:TZ'
STRUCTURAL_TOKENS = [
    b",", b";", b"\t", b"|", b'"', b"'", b"\\", b'""', b'"""', b"\r\n", b"\n", b"\r", b"\n\n", b"\r\r\n",
    b'","', b'"\n"', b'"\r\n"', b"\\\n", b'\\"', BOM, b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00",
    b"0x1F", b"-0", b"1e400", b"nan", b"-inf", b"null", b"NULL", b"N/A", b"true", b"False",
    b"9223372036854775808", b"-9223372036854775809", b"18446744073709551616", b"1.7976931348623159e308",
    b"2020-02-29", b"2020-01-01 00:00:00.123456789Z", b"23:59:60", b"2262-04-11 23:47:16.854775808",
]


def _dictionary() -> list[bytes]:
    tokens = list(STRUCTURAL_TOKENS)
    for values in POOLS.values():
        tokens += [v for v in values if len(v) <= 48]
    return tokens


class Mutator:
    """Stacked random mutations (see the module docstring)."""

    def __init__(self, max_input: int = MAX_INPUT):
        self.max_input = max_input
        self.tokens = _dictionary()
        self.operators: list[Callable[[random.Random, bytes, Sequence[bytes]], bytes]] = [
            self.flip_bit, self.set_byte, self.set_byte, self.insert_token, self.insert_token,
            self.replace_field, self.replace_field, self.delete_range, self.duplicate_range,
            self.duplicate_line, self.delete_line, self.swap_lines, self.splice, self.line_ends,
            self.truncate, self.quote_field, self.random_bytes, self.repeat_rows, self.toggle_bom,
        ]

    def mutate(self, rng: random.Random, data: bytes, others: Sequence[bytes]) -> bytes:
        """``data`` with 1-6 mutations (``others``: inputs to splice with)."""
        for _ in range(min(6, 1 + int(rng.expovariate(0.7)))):
            data = rng.choice(self.operators)(rng, data, others)
        return data[: self.max_input]

    # ---- single bytes ------------------------------------------------------------------------
    @staticmethod
    def flip_bit(rng: random.Random, data: bytes, others: Sequence[bytes]) -> bytes:
        if not data:
            return bytes([rng.randrange(256)])
        at = rng.randrange(len(data))
        return data[:at] + bytes([data[at] ^ (1 << rng.randrange(8))]) + data[at + 1:]

    @staticmethod
    def set_byte(rng: random.Random, data: bytes, others: Sequence[bytes]) -> bytes:
        value = bytes([rng.choice(INTERESTING_BYTES)])
        if not data:
            return value
        at = rng.randrange(len(data))
        return data[:at] + value + data[at + 1:]

    @staticmethod
    def random_bytes(rng: random.Random, data: bytes, others: Sequence[bytes]) -> bytes:
        at = rng.randint(0, len(data))
        return data[:at] + bytes(rng.randrange(256) for _ in range(rng.randint(1, 4))) + data[at:]

    # ---- tokens and fields -------------------------------------------------------------------------
    def insert_token(self, rng: random.Random, data: bytes, others: Sequence[bytes]) -> bytes:
        at = rng.randint(0, len(data))
        return data[:at] + rng.choice(self.tokens) + data[at:]

    def replace_field(self, rng: random.Random, data: bytes, others: Sequence[bytes]) -> bytes:
        """A field (between delimiters/line ends around a random byte) replaced by a token."""
        if not data:
            return rng.choice(self.tokens)
        start, end = _field_around(data, rng.randrange(len(data)))
        return data[:start] + rng.choice(self.tokens) + data[end:]

    @staticmethod
    def quote_field(rng: random.Random, data: bytes, others: Sequence[bytes]) -> bytes:
        if not data:
            return b'""'
        start, end = _field_around(data, rng.randrange(len(data)))
        quote = rng.choice((b'"', b'"', b"'"))
        inner = data[start:end].replace(quote, quote + quote) if rng.random() < 0.7 else data[start:end]
        return data[:start] + quote + inner + quote + data[end:]

    # ---- ranges and lines ----------------------------------------------------------------------
    @staticmethod
    def delete_range(rng: random.Random, data: bytes, others: Sequence[bytes]) -> bytes:
        if not data:
            return data
        at = rng.randrange(len(data))
        return data[:at] + data[at + rng.randint(1, 16):]

    @staticmethod
    def duplicate_range(rng: random.Random, data: bytes, others: Sequence[bytes]) -> bytes:
        if not data:
            return data
        at = rng.randrange(len(data))
        chunk = data[at:at + rng.randint(1, 32)]
        to = rng.randint(0, len(data))
        return data[:to] + chunk + data[to:]

    @staticmethod
    def duplicate_line(rng: random.Random, data: bytes, others: Sequence[bytes]) -> bytes:
        lines = data.splitlines(keepends=True)
        if not lines:
            return data
        i = rng.randrange(len(lines))
        lines.insert(rng.randint(0, len(lines)), lines[i])
        return b"".join(lines)

    @staticmethod
    def delete_line(rng: random.Random, data: bytes, others: Sequence[bytes]) -> bytes:
        lines = data.splitlines(keepends=True)
        if len(lines) < 2:
            return data
        del lines[rng.randrange(len(lines))]
        return b"".join(lines)

    @staticmethod
    def swap_lines(rng: random.Random, data: bytes, others: Sequence[bytes]) -> bytes:
        lines = data.splitlines(keepends=True)
        if len(lines) < 2:
            return data
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
        return b"".join(lines)

    def repeat_rows(self, rng: random.Random, data: bytes, others: Sequence[bytes]) -> bytes:
        """The lines after the first, repeated (inputs of a few KiB: many blocks and ranges)."""
        lines = data.splitlines(keepends=True)
        if len(lines) < 2:
            return data
        body = b"".join(lines[1:])
        times = min(rng.randint(2, 64), self.max_input // max(1, len(body)))
        return lines[0] + body * max(times, 1)

    @staticmethod
    def line_ends(rng: random.Random, data: bytes, others: Sequence[bytes]) -> bytes:
        """Every line end rewritten as LF, CRLF or CR, or one line end changed."""
        lines = data.splitlines(keepends=True)
        if not lines:
            return data
        ends = (b"\n", b"\r\n", b"\r")
        if rng.random() < 0.5:
            end = rng.choice(ends)
            return b"".join(line.rstrip(b"\r\n") + end if line.endswith((b"\n", b"\r")) else line
                            for line in lines)
        i = rng.randrange(len(lines))
        lines[i] = lines[i].rstrip(b"\r\n") + rng.choice(ends + (b"",))
        return b"".join(lines)

    @staticmethod
    def truncate(rng: random.Random, data: bytes, others: Sequence[bytes]) -> bytes:
        return data[:rng.randint(0, len(data))] if data else data

    @staticmethod
    def toggle_bom(rng: random.Random, data: bytes, others: Sequence[bytes]) -> bytes:
        return data[len(BOM):] if data.startswith(BOM) else BOM + data

    @staticmethod
    def splice(rng: random.Random, data: bytes, others: Sequence[bytes]) -> bytes:
        """The head of ``data`` and the tail of another input."""
        if not others:
            return data
        other = rng.choice(others)
        return data[:rng.randint(0, len(data))] + other[rng.randint(0, len(other)):]


def _field_around(data: bytes, at: int) -> tuple[int, int]:
    """``[start, end)`` of the run of non-separator bytes around ``at`` (separators:
    the usual delimiters and line ends; a separator at ``at`` gives an empty field)."""
    separators = b',;|\t\r\n'
    start = at
    while start > 0 and data[start - 1] not in separators:
        start -= 1
    end = at
    while end < len(data) and data[end] not in separators:
        end += 1
    return start, end
