"""One read configuration of a fuzz case, and how configurations are drawn.

A case is an input (bytes) and a :class:`ReadConfig`: which path reads it
(the host reader, an emulated SSD under a split policy, or the Dask range
cutter's record ranges read with ``byte_range=`` and concatenated), the
block size and threads, the dialect, header and skipped rows (before the
header and after it), whether
``newlines_in_values`` is set, explicit column types, ConvertOptions
presets, bad rows skipped, the block size pyarrow (the referee) reads with,
and whether the writer's round trip and a second read with another block
size are checked too.

Cheap configurations are drawn most of the time (host path, one thread);
the slower paths are sampled at :class:`Rates`, so that a long run makes
several hundred cases a second on one core.

>>> import random
>>> config = draw_config(random.Random(1), size=100)
>>> ReadConfig.from_json(config.to_json()) == config
True
>>> ReadConfig(delimiter=";").parse_options().delimiter
';'
"""
from __future__ import annotations

import json
import random
from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Optional

import pyarrow as pa
import pyarrow.csv as pacsv

SPLITS = ("device", "static:0.5", "static:0.3", "dynamic")
DEVICE_PROFILES = ("modern-gen4", "modern-gen4/512")  # /512: 512-byte pages, records cross many
DELIMITERS = (",", ";", "\t", "|")
QUOTES = ('"', "'", None)  # None: quoting off
SOURCES = ("bytes", "path", "bytesio")
#: Explicit column types by name (``ReadConfig.types``): conversion errors, the typed fast path.
TYPES = {
    "int8": pa.int8(), "int32": pa.int32(), "int64": pa.int64(), "uint8": pa.uint8(), "uint64": pa.uint64(),
    "float32": pa.float32(), "float64": pa.float64(), "bool": pa.bool_(), "date32": pa.date32(),
    "time32[s]": pa.time32("s"), "timestamp[s]": pa.timestamp("s"), "timestamp[ns]": pa.timestamp("ns"),
    "timestamp[ms,UTC]": pa.timestamp("ms", tz="UTC"), "string": pa.string(), "large_string": pa.large_string(),
    "binary": pa.binary(), "null": pa.null(),
}
#: ConvertOptions presets (``ReadConfig.convert``), given to both readers.
CONVERT_PRESETS: dict[str, dict[str, Any]] = {
    "": {},
    "nulls": {"null_values": ["", "x", "-", "0"], "strings_can_be_null": True},
    "no_nulls": {"null_values": []},
    "quoted_nulls": {"strings_can_be_null": True, "quoted_strings_can_be_null": False},
    "bools": {"true_values": ["yes", "1", "T"], "false_values": ["no", "0", "F"]},
    "decimal_comma": {"decimal_point": ","},
}


def skip_bad_row(row: Any) -> str:
    """pyarrow's ``invalid_row_handler`` for ``bad_lines="skip"``."""
    return "skip"


@dataclass(frozen=True)
class ReadConfig:
    """How one case is read, by us and by pyarrow.

    ``block_size``/``referee_block_size`` None: the readers' defaults (2 MiB
    here, 1 MiB in pyarrow: "large"). ``split``, ``device_profile`` and
    ``faults`` apply to the device path, ``range_block`` and ``lookbehind``
    to the range path (``arrow_bridge.ranges.record_ranges`` with one-byte
    pages, so cuts fall anywhere).
    """

    path: str = "host"
    source: str = "bytes"
    block_size: Optional[int] = None
    n_threads: int = 1
    newlines_in_values: bool = True
    referee_block_size: Optional[int] = None
    delimiter: str = ","
    quote_char: Optional[str] = '"'
    escape_char: Optional[str] = None
    double_quote: bool = True
    header: bool = True
    skip_rows: int = 0
    skip_rows_after_names: int = 0
    split: str = "host"
    device_profile: str = "modern-gen4"
    faults: bool = False
    range_block: int = 0
    lookbehind: int = 4096
    writer: bool = False
    types: tuple = ()  # (column position, TYPES name) pairs
    convert: str = ""  # a CONVERT_PRESETS name
    bad_lines: str = "error"  # or "skip" (both readers get pyarrow's invalid_row_handler)
    recheck_block: int = -1  # host path: read again with this block size (0: the default) - same result?

    def __post_init__(self) -> None:
        object.__setattr__(self, "types", tuple(tuple(t) for t in self.types))  # JSON gives lists

    # ---- the readers' options ------------------------------------------------------------------
    def parse_options(self, newlines_in_values: Optional[bool] = None,
                      bad_lines: Optional[str] = None) -> pacsv.ParseOptions:
        """pyarrow ParseOptions of the dialect (both readers take the same object)."""
        nl = self.newlines_in_values if newlines_in_values is None else newlines_in_values
        skip = (bad_lines or self.bad_lines) == "skip"
        return pacsv.ParseOptions(delimiter=self.delimiter, quote_char=self.quote_char or False,
                                  escape_char=self.escape_char or False, double_quote=self.double_quote,
                                  newlines_in_values=nl, invalid_row_handler=skip_bad_row if skip else None)

    def convert_options(self, names: Optional[list[str]]) -> Optional[pacsv.ConvertOptions]:
        """The preset's ConvertOptions plus :attr:`types` for the columns at those
        positions (``names``: the columns, as pyarrow names them; duplicate names are
        not typed). None when there is nothing to convert differently.

        >>> ReadConfig(types=((1, "int8"),)).convert_options(["a", "b"]).column_types
        {'b': DataType(int8)}
        """
        kw = dict(CONVERT_PRESETS[self.convert])
        column_types = {names[i]: TYPES[t] for i, t in self.types
                        if names is not None and i < len(names) and names.count(names[i]) == 1}
        if column_types:
            kw["column_types"] = column_types
        return pacsv.ConvertOptions(**kw) if kw else None

    def read_options(self, block_size: Optional[int] = None, **extra: Any) -> pacsv.ReadOptions:
        """ReadOptions for header, skipped rows and a block size (None: pyarrow's default)."""
        kw: dict[str, Any] = dict(autogenerate_column_names=not self.header, skip_rows=self.skip_rows,
                                  skip_rows_after_names=self.skip_rows_after_names, **extra)
        if block_size is not None:
            kw["block_size"] = block_size
        return pacsv.ReadOptions(**kw)

    def referee_options(self, convert: Optional[pacsv.ConvertOptions] = None, *,
                        newlines_in_values: Optional[bool] = None, block_size: Optional[int] = -1,
                        bad_lines: Optional[str] = None) -> dict[str, Any]:
        """Keywords of ``pyarrow.csv.read_csv`` for the referee (``block_size=-1``: the config's)."""
        block = self.referee_block_size if block_size == -1 else block_size
        kw = {"read_options": self.read_options(block, use_threads=False),
              "parse_options": self.parse_options(newlines_in_values, bad_lines)}
        if convert is not None:
            kw["convert_options"] = convert
        return kw

    def ours_options(self, convert: Optional[pacsv.ConvertOptions] = None) -> dict[str, Any]:
        """Keywords of ``arrow_bridge.read_csv`` (without ``device``/``split``)."""
        kw: dict[str, Any] = {"read_options": self.read_options(), "parse_options": self.parse_options(),
                              "n_threads": self.n_threads}
        if convert is not None:
            kw["convert_options"] = convert
        if self.block_size is not None:
            kw["block_size"] = self.block_size
        return kw

    # ---- (de)serialisation ---------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """The fields that differ from the defaults (what a corpus file records)."""
        default = ReadConfig()
        out = {k: v for k, v in asdict(self).items() if getattr(default, k) != v}
        if "types" in out:
            out["types"] = [list(t) for t in out["types"]]
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "ReadConfig":
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown ReadConfig fields: {sorted(unknown)}")
        return cls(**data)

    def describe(self) -> str:
        """A one-line summary of the fields that are not the defaults.

        >>> ReadConfig(block_size=7, delimiter=";").describe()
        "block_size=7 delimiter=';'"
        """
        return " ".join(f"{k}={v!r}" for k, v in self.to_json().items()) or "defaults"


@dataclass(frozen=True)
class Rates:
    """How often the configuration draws each option (probabilities)."""

    device: float = 0.015
    ranges: float = 0.04
    writer: float = 0.04
    two_threads: float = 0.04
    small_block: float = 0.4
    tiny_block: float = 0.1  # of the small ones: 1-8 bytes (inputs under 300 bytes only)
    dialect: float = 0.2
    no_header: float = 0.15
    skip_rows: float = 0.04
    skip_rows_after_names: float = 0.04
    no_newlines_in_values: float = 0.5
    referee_block: float = 0.05
    path_source: float = 0.1
    faults: float = 0.3  # of the device cases
    types: float = 0.08
    convert: float = 0.06
    skip_bad_lines: float = 0.04
    recheck_block: float = 0.1  # of the host cases

    def scaled(self, factor: float) -> "Rates":
        """The slow paths (device, ranges, writer) ``factor`` times as often."""
        return replace(self, device=min(1.0, self.device * factor), ranges=min(1.0, self.ranges * factor),
                       writer=min(1.0, self.writer * factor))


def _small_block(rng: random.Random, size: int, rates: Rates) -> int:
    """A block size that cuts an input of ``size`` bytes into a few to a few dozen spans."""
    if size < 300 and rng.random() < rates.tiny_block:
        return rng.randint(1, 8)
    pieces = rng.randint(1, 32) if rng.random() < 0.2 else rng.randint(1, 8)
    return max(1, size // pieces + rng.randint(-2, 2))


def draw_dialect(rng: random.Random) -> dict[str, Any]:
    """Delimiter, quote, escape and doubled quotes, all distinct bytes."""
    return {"delimiter": rng.choice(DELIMITERS), "quote_char": rng.choice(QUOTES),
            "escape_char": rng.choice((None, "\\")), "double_quote": rng.random() < 0.8}


def draw_config(rng: random.Random, size: int, rates: Rates = Rates()) -> ReadConfig:
    """A configuration for an input of ``size`` bytes (see :class:`Rates`)."""
    kw: dict[str, Any] = {}
    roll = rng.random()
    if roll < rates.device:
        kw.update(path="device", split=rng.choice(SPLITS), device_profile=rng.choice(DEVICE_PROFILES),
                  faults=rng.random() < rates.faults, source="path")
    elif roll < rates.device + rates.ranges:
        kw.update(path="ranges", range_block=max(1, size // rng.randint(1, 12)),
                  lookbehind=rng.choice((0, 3, 4096)), source="path")
    elif rng.random() < rates.path_source:
        kw["source"] = rng.choice(SOURCES[1:])
    if rng.random() < rates.small_block:
        kw["block_size"] = _small_block(rng, size, rates)
    if rng.random() < rates.two_threads:
        kw["n_threads"] = 2
    kw["newlines_in_values"] = rng.random() >= rates.no_newlines_in_values
    if rng.random() < rates.referee_block:
        kw["referee_block_size"] = max(64, _small_block(rng, size, rates))  # pyarrow is slow on tiny blocks
    if rng.random() < rates.dialect:
        kw.update(draw_dialect(rng))
    if rng.random() < rates.no_header:
        kw["header"] = False
    if rng.random() < rates.skip_rows:
        kw["skip_rows"] = rng.randint(1, 2)
    if rng.random() < rates.skip_rows_after_names:
        kw["skip_rows_after_names"] = rng.randint(1, 3)
    if rng.random() < rates.types:
        kw["types"] = tuple((i, rng.choice(sorted(TYPES))) for i in sorted(rng.sample(range(6), rng.randint(1, 3))))
    if rng.random() < rates.convert:
        kw["convert"] = rng.choice(sorted(CONVERT_PRESETS)[1:])
    if rng.random() < rates.skip_bad_lines:
        kw["bad_lines"] = "skip"
    if kw.get("path", "host") == "host" and rng.random() < rates.recheck_block:
        kw["recheck_block"] = _small_block(rng, size, rates) if "block_size" not in kw else 0
    kw["writer"] = rng.random() < rates.writer
    return ReadConfig(**kw)


def config_json(config: ReadConfig) -> str:
    """The config as one JSON line (for logs and corpus files)."""
    return json.dumps(config.to_json(), sort_keys=True)
