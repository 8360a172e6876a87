"""arrow_bridge: exact, fast CSV → Apache Arrow, with kernels that can run in storage.

>>> import io, arrow_bridge
>>> arrow_bridge.read_csv(io.BytesIO(b"x\\n1.5\\n")).column("x").type
DataType(double)
"""
from arrow_bridge.api import aggregate_csv, calibrate, open_csv, read_csv, read_pandas, sweep, to_pandas
from arrow_bridge.errors import CsvBadLineWarning, CsvDecodeError, CsvParseError, EmptyCsvError, MemoryLimitError
from arrow_bridge.search import filter_strings, grep
from arrow_bridge.sniffing import SniffedDialect, sniff
from arrow_bridge.writer import read_back_options, write_csv

__all__ = ["read_csv", "aggregate_csv", "open_csv", "read_pandas", "to_pandas", "write_csv", "read_back_options", "calibrate", "sweep",
           "grep", "filter_strings",
           "sniff", "SniffedDialect", "CsvParseError", "CsvDecodeError", "EmptyCsvError", "CsvBadLineWarning",
           "MemoryLimitError"]
