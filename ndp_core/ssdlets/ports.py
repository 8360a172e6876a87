"""Port types: what flows between SSDlets, checked before anything runs.

A port carries fixed-width values: an Arrow primitive type (integers, floats,
dates, timestamps, durations; no nulls), a fixed record (a NumPy structured
dtype, Biscuit's plain-old-data structs) or :data:`PAGES`, the raw bytes of a
file's pages. Types match only when identical: no implicit conversion, as in
Biscuit (*Biscuit: A Framework for Near-Data Processing of Big Data
Workloads*, ISCA 2016, Sec. III-C).

>>> import pyarrow as pa
>>> port_type(pa.float64())
PortType('double')
>>> port_type(pa.float64()) == port_type(pa.int64())
False
>>> port_type(pa.string())
Traceback (most recent call last):
...
TypeError: a port carries fixed-width values (integers, floats, dates, timestamps, durations, fixed records or PAGES), not string
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Union

import numpy as np
import pyarrow as pa

__all__ = ["PAGES", "Out", "PortType", "port_type", "to_port_values", "to_arrow"]


@dataclass(frozen=True)
class PortType:
    """A port's element type: its NumPy dtype (what the kernel sees) and, for
    Arrow types, the Arrow type the host gets back."""

    name: str
    dtype: np.dtype
    arrow: Optional[pa.DataType] = None

    def __repr__(self) -> str:
        return f"PortType({self.name!r})"

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize


#: The raw bytes of a file's pages (the input of a scanning SSDlet).
PAGES = PortType("pages", np.dtype(np.uint8))

TypeSpec = Union[pa.DataType, np.dtype, PortType]


def port_type(spec: TypeSpec) -> PortType:
    """The :class:`PortType` a declaration names (an Arrow type, a NumPy
    structured dtype, or a PortType)."""
    if isinstance(spec, PortType):
        return spec
    if isinstance(spec, np.dtype) and spec.fields:
        return PortType(f"record{spec.descr}", spec)
    if isinstance(spec, pa.DataType) and _fixed_width(spec):
        return PortType(str(spec), np.dtype(spec.to_pandas_dtype() if _numeric(spec) else f"i{spec.bit_width // 8}"),
                        spec)
    raise TypeError("a port carries fixed-width values (integers, floats, dates, timestamps, durations, "
                    f"fixed records or PAGES), not {spec}")


def _numeric(t: pa.DataType) -> bool:
    return pa.types.is_integer(t) or pa.types.is_floating(t)


def _fixed_width(t: pa.DataType) -> bool:
    temporal = pa.types.is_date(t) or pa.types.is_timestamp(t) or pa.types.is_duration(t) or pa.types.is_time(t)
    return (_numeric(t) and not pa.types.is_float16(t)) or temporal


@dataclass(frozen=True)
class Out:
    """An output port: its type and how many values one call may write
    (``rows``; None: as many as the call's largest input packet holds).

    >>> import pyarrow as pa
    >>> Out(pa.float64(), rows=1).capacity(0)
    1
    >>> Out(pa.float64()).capacity(4096)
    4096
    """

    type: TypeSpec
    rows: Optional[int] = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "type", port_type(self.type))
        if self.rows is not None and self.rows < 0:
            raise ValueError(f"Out(rows=...) must be >= 0, got {self.rows}")

    def capacity(self, input_rows: int) -> int:
        """Values one call may write when its largest input packet holds ``input_rows``."""
        return input_rows if self.rows is None else self.rows


def to_port_values(values: Any, ptype: PortType, where: str) -> np.ndarray:
    """Host values for a port as a contiguous NumPy array of its dtype, checked
    (same type, no nulls); ``where`` names the port in errors."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if isinstance(values, pa.Array):
        if ptype.arrow is None or values.type != ptype.arrow:
            raise TypeError(f"{where} takes {ptype.name}, got an Arrow array of {values.type}")
        if values.null_count:
            raise ValueError(f"{where} takes no nulls; {values.null_count} found (fill them first, "
                             "e.g. pyarrow.compute.fill_null)")
        # The values buffer as it is (dates and timestamps as their integers).
        values = np.frombuffer(values.buffers()[1], ptype.dtype, len(values), values.offset * ptype.itemsize)
    array = np.ascontiguousarray(values)
    if array.dtype != ptype.dtype:
        raise TypeError(f"{where} takes {ptype.name} ({ptype.dtype}), got an array of {array.dtype}")
    return array


def to_arrow(values: np.ndarray, ptype: PortType) -> Union[pa.Array, np.ndarray]:
    """What the host gets from an output port: an Arrow array of the port's
    type (records stay a NumPy structured array)."""
    if ptype.arrow is None:
        return values
    return pa.Array.from_buffers(ptype.arrow, len(values), [None, pa.py_buffer(np.ascontiguousarray(values))])
