"""arrow_bridge: exact, fast CSV → Apache Arrow, with kernels that can run in storage.

>>> import io, arrow_bridge
>>> arrow_bridge.read_csv(io.BytesIO(b"x\\n1.5\\n")).column("x").type
DataType(double)
"""
from arrow_bridge.api import aggregate_csv, calibrate, open_csv, read_csv, read_pandas, sweep, to_pandas
from arrow_bridge.errors import CsvBadLineWarning, CsvDecodeError, CsvParseError, EmptyCsvError, MemoryLimitError

#: Public names whose modules load on first use: a plain read needs none of them, and
#: their imports (regular expressions, the formatting kernels) cost start-up time.
_LAZY = {"grep": "search", "filter_strings": "search", "sniff": "sniffing", "SniffedDialect": "sniffing",
         "write_csv": "writer", "read_back_options": "writer"}

__all__ = ["read_csv", "aggregate_csv", "open_csv", "read_pandas", "to_pandas", "write_csv", "read_back_options", "calibrate", "sweep",
           "grep", "filter_strings",
           "sniff", "SniffedDialect", "CsvParseError", "CsvDecodeError", "EmptyCsvError", "CsvBadLineWarning",
           "MemoryLimitError"]


def __getattr__(name: str):
    import importlib
    if name in _LAZY:
        value = getattr(importlib.import_module(f"arrow_bridge.{_LAZY[name]}"), name)
    elif name in _LAZY.values():  # the modules themselves, as after an eager import
        value = importlib.import_module(f"arrow_bridge.{name}")
    else:
        raise AttributeError(f"module 'arrow_bridge' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
