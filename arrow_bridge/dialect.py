"""The CSV dialect in the form the kernels take it."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from arrow_bridge.kernels.tokenizer import NO_CHAR, byte_classes
from arrow_bridge.options import CsvOptions


@dataclass(frozen=True)
class Dialect:
    """Delimiter, quote and escape bytes (``NO_CHAR`` when unused).

    >>> Dialect.from_options(CsvOptions(delimiter=";")).delimiter
    59
    """

    delimiter: int
    quote: int
    escape: int
    double_quote: bool
    special: np.ndarray  # byte classes for the field scanner

    @classmethod
    def from_options(cls, opts: CsvOptions) -> "Dialect":
        delimiter = ord(opts.delimiter)
        quote = ord(opts.quote_char) if opts.quote_char else NO_CHAR
        escape = ord(opts.escape_char) if opts.escape_char else NO_CHAR
        return cls(delimiter, quote, escape, opts.double_quote, byte_classes(delimiter, escape))

    @property
    def scan_args(self) -> tuple:
        """``(delim, special, quote, escape, double_quote)`` for tokenize/split_record."""
        return (np.int64(self.delimiter), self.special, np.int64(self.quote),
                np.int64(self.escape), self.double_quote)

    @property
    def unescape_args(self) -> tuple:
        """``(quote, escape, double_quote)`` as converters take it."""
        return (np.int64(self.quote), np.int64(self.escape), self.double_quote)
