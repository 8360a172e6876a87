"""Port types: what flows between SSDlets, checked before anything runs.

A port carries fixed-width values: an Arrow primitive type (integers, floats,
dates, timestamps, durations), a fixed record (a NumPy structured dtype,
Biscuit's plain-old-data structs) or :data:`PAGES`, the raw bytes of a file's
pages; or variable-width values: Arrow ``string`` and ``binary``, a packet of
which is Arrow's layout, int32 offsets and the bytes (:class:`Strings`). An
Arrow-typed port takes no nulls unless declared :func:`Nullable`: its packets
then carry a validity byte per value as well (:class:`NullablePacket`). Types
match only when identical (nullable or not included): no implicit conversion,
as in Biscuit (*Biscuit: A Framework for Near-Data Processing of Big Data
Workloads*, ISCA 2016, Sec. III-C).

>>> import pyarrow as pa
>>> port_type(pa.float64())
PortType('double')
>>> port_type(pa.float64()) == port_type(pa.int64())
False
>>> port_type(pa.string()).variable
True
>>> Nullable(pa.float64()), Nullable(pa.float64()) == port_type(pa.float64())
(PortType('double?'), False)
>>> port_type(pa.large_string())
Traceback (most recent call last):
...
TypeError: a port carries fixed-width values (integers, floats, dates, timestamps, durations, fixed records or PAGES) or string/binary, not large_string
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Optional, Union

import numpy as np
import pyarrow as pa

__all__ = ["PAGES", "Nullable", "NullablePacket", "Out", "PortType", "Strings", "port_type", "to_port_values", "to_arrow",
           "concat_packets", "packet_arrays", "packet_from_buffers", "empty_packet", "private_copy"]


@dataclass(frozen=True)
class PortType:
    """A port's element type: its NumPy dtype (what the kernel sees) and, for
    Arrow types, the Arrow type the host gets back."""

    name: str
    dtype: np.dtype
    arrow: Optional[pa.DataType] = None
    #: Variable-width (string, binary): a packet is :class:`Strings`, two buffers in a call.
    variable: bool = False
    #: Values may be null: a packet is a :class:`NullablePacket`, one more buffer (validity bytes).
    nullable: bool = False

    def __repr__(self) -> str:
        return f"PortType({self.name!r})"

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def buffers(self) -> int:
        """Buffers one packet takes in a call: offsets and bytes, or the values;
        then the validity bytes of a nullable port."""
        return (2 if self.variable else 1) + self.nullable


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
    if isinstance(spec, pa.DataType) and spec in (pa.string(), pa.binary()):
        return PortType(str(spec), np.dtype(np.uint8), spec, variable=True)
    raise TypeError("a port carries fixed-width values (integers, floats, dates, timestamps, durations, "
                    f"fixed records or PAGES) or string/binary, not {spec}")


def Nullable(spec: TypeSpec) -> PortType:  # noqa: N802 (a type constructor, spelled like one)
    """An Arrow-typed port whose values may be null (``p.<port>.valid[i]``: 1 when value ``i`` is
    valid, 0 when null); Arrow's bitmap at the host's end, a byte per value inside a program.
    A function returning a :class:`PortType` (``t.nullable`` tells), not a class."""
    t = port_type(spec)
    if t.arrow is None:
        raise TypeError(f"only Arrow-typed ports may hold nulls, not {t.name}")
    return t if t.nullable else PortType(f"{t.name}?", t.dtype, t.arrow, t.variable, nullable=True)


def _numeric(t: pa.DataType) -> bool:
    return pa.types.is_integer(t) or pa.types.is_floating(t)


def _fixed_width(t: pa.DataType) -> bool:
    temporal = pa.types.is_date(t) or pa.types.is_timestamp(t) or pa.types.is_duration(t) or pa.types.is_time(t)
    return (_numeric(t) and not pa.types.is_float16(t)) or temporal


@dataclass(frozen=True)
class Out:
    """An output port: its type, how many values one call may write (``rows``;
    None: as many as the call's largest input packet holds, divided by
    ``input_per_row`` and rounded up, plus ``extra_rows``) and, for string and
    binary ports, how many bytes (``bytes``; None: as many as the call's largest
    input packet takes, plus ``extra_bytes``). The extras are room for what a
    program carried over from its earlier calls (the last call's input is
    empty). ``input_per_row`` is the fewest input values one output value takes
    (a parse of ``n`` columns: a record is at least ``n`` bytes); each call's
    buffers are allocated and zeroed, so a tighter bound is a faster call.

    >>> import pyarrow as pa
    >>> Out(pa.float64(), rows=1).capacity(0)
    1
    >>> Out(pa.float64()).capacity(4096)
    4096
    >>> Out(pa.string(), rows=10).buffer_sizes(4096, 65536)
    [44, 65536]
    >>> Out(Nullable(pa.int32()), rows=10).buffer_sizes(4096, 65536)
    [40, 10]
    >>> Out(pa.binary(), extra_rows=1, extra_bytes=100).buffer_sizes(0, 0)
    [8, 100]
    >>> Out(pa.int64(), input_per_row=16, extra_rows=2).capacity(4096)
    258
    """

    type: TypeSpec
    rows: Optional[int] = None
    bytes: Optional[int] = None
    extra_rows: int = 0
    extra_bytes: int = 0
    input_per_row: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "type", port_type(self.type))
        if min(self.rows or 0, self.bytes or 0, self.extra_rows, self.extra_bytes) < 0:
            raise ValueError(f"Out(rows=..., bytes=..., extra_rows=..., extra_bytes=...) must be >= 0, got "
                             f"{self.rows}, {self.bytes}, {self.extra_rows}, {self.extra_bytes}")
        if self.input_per_row < 1:
            raise ValueError(f"Out(input_per_row=...) must be >= 1, got {self.input_per_row}")
        if self.rows is not None and self.input_per_row != 1:
            raise ValueError("Out(input_per_row=) divides the input's size: not with rows=")
        if (self.rows is not None and self.extra_rows) or (self.bytes is not None and self.extra_bytes):
            raise ValueError("Out(extra_rows=, extra_bytes=) add to the input's size: not with rows= or bytes=")
        if (self.bytes is not None or self.extra_bytes) and not self.type.variable:
            raise ValueError(f"Out(bytes=..., extra_bytes=...) is for string and binary ports, not {self.type.name}")

    def capacity(self, input_rows: int) -> int:
        """Values one call may write when its largest input packet holds ``input_rows``."""
        return -(-input_rows // self.input_per_row) + self.extra_rows if self.rows is None else self.rows

    def buffer_sizes(self, input_rows: int, input_bytes: int) -> list[int]:
        """The call's buffer(s) for this port, in bytes: the values, or offsets and
        bytes; then a nullable port's validity (a byte per value)."""
        rows = self.capacity(input_rows)
        if self.type.variable:
            sizes = [4 * (rows + 1), input_bytes + self.extra_bytes if self.bytes is None else self.bytes]
        else:
            sizes = [rows * self.type.itemsize]
        return sizes + [rows] * self.type.nullable


@dataclass(frozen=True)
class Strings:
    """A packet of a string or binary port: Arrow's layout, ``offsets`` (int32,
    one more than the values, from 0) into ``data``.

    >>> packet = Strings.of(["ab", "", "cde"])
    >>> len(packet), packet.nbytes, packet[1:].to_list()
    (3, 21, [b'', b'cde'])
    """

    offsets: np.ndarray
    data: np.ndarray

    @classmethod
    def of(cls, values: Any) -> "Strings":
        """From a sequence of str/bytes or an Arrow string/binary array without nulls."""
        array = values if isinstance(values, pa.Array) else pa.array(values)
        offsets = np.frombuffer(array.buffers()[1], np.int32, len(array) + 1, array.offset * 4)
        data = np.frombuffer(array.buffers()[2], np.uint8) if array.buffers()[2] is not None else np.zeros(0, np.uint8)
        return cls(np.ascontiguousarray(offsets - offsets[0]), np.ascontiguousarray(data[offsets[0]:offsets[-1]]))

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def nbytes(self) -> int:
        return self.offsets.nbytes + self.data.nbytes

    @property
    def arrays(self) -> list[np.ndarray]:
        """The call's buffers: offsets, then bytes."""
        return [self.offsets, self.data]

    def __getitem__(self, rows: slice) -> "Strings":
        first, stop, _ = rows.indices(len(self))
        stop = max(first, stop)
        offsets = self.offsets[first:stop + 1]
        return Strings(offsets - offsets[0], self.data[offsets[0]:offsets[-1]])

    def to_list(self) -> list[bytes]:
        raw = self.data.tobytes()
        return [raw[a:b] for a, b in zip(self.offsets[:-1].tolist(), self.offsets[1:].tolist())]

    def problem(self) -> Optional[str]:
        """What is wrong with offsets a program wrote (None: nothing)."""
        if not len(self.offsets) or self.offsets[0] != 0:
            return "offsets must start at 0"
        if np.any(np.diff(self.offsets) < 0):
            return "offsets must not decrease"
        if self.offsets[-1] != len(self.data):
            return f"the last offset ({self.offsets[-1]}) must be the bytes written ({len(self.data)})"
        return None


@dataclass(frozen=True)
class NullablePacket:
    """A packet of a nullable port: the values (an array, or :class:`Strings`)
    and a validity byte per value (1: valid, 0: null; a null's value is zero).

    >>> packet = NullablePacket(np.array([1, 0, 3]), np.array([1, 0, 1], np.uint8))
    >>> len(packet), packet.nbytes, packet[1:].valid.tolist()
    (3, 27, [0, 1])
    """

    values: Union[np.ndarray, Strings]
    valid: np.ndarray

    def __len__(self) -> int:
        return len(self.valid)

    @property
    def nbytes(self) -> int:
        return self.values.nbytes + self.valid.nbytes

    def __getitem__(self, rows: slice) -> "NullablePacket":
        return NullablePacket(self.values[rows], self.valid[rows])


Packet = Union[np.ndarray, Strings, NullablePacket]


def packet_arrays(packet: Packet) -> list[np.ndarray]:
    """A packet's buffers in a call: values (or offsets and bytes), then validity."""
    if isinstance(packet, NullablePacket):
        return packet_arrays(packet.values) + [packet.valid]
    return packet.arrays if isinstance(packet, Strings) else [packet]


def packet_from_buffers(buffers: list[np.ndarray], ptype: PortType) -> Packet:
    """The packet a program wrote into ``buffers`` (each cut to its written
    size); raises ValueError saying what is wrong with it."""
    if ptype.variable:
        values: Union[np.ndarray, Strings] = Strings(buffers[0].view(np.int32), buffers[1])
        problem = values.problem()
        if problem is not None:
            raise ValueError(problem)
    else:
        values = buffers[0].view(ptype.dtype)
    if not ptype.nullable:
        return values
    valid = buffers[-1]
    if len(valid) != len(values) or np.any(valid > 1):
        raise ValueError(f"validity must be one byte (0 or 1) per value written ({len(values)})")
    nulls = valid == 0
    if ptype.variable:
        if np.any(np.diff(values.offsets)[nulls]):
            raise ValueError("a null string must be empty (its two offsets equal)")
    elif nulls.any():  # a null's value is zero downstream too, whatever the program left there
        values = values.copy()
        values[nulls] = 0
    return NullablePacket(values, valid)


def private_copy(packet: Packet) -> Packet:
    """``packet`` over memory of its own: a program may write into its inputs,
    and host data fed to a port must not change under its caller."""
    if isinstance(packet, NullablePacket):
        return NullablePacket(private_copy(packet.values), packet.valid.copy())
    if isinstance(packet, Strings):
        return Strings(packet.offsets.copy(), packet.data.copy())
    return packet.copy()


def empty_packet(ptype: PortType) -> Packet:
    """A packet of no values (the last call's inputs)."""
    values = Strings(np.zeros(1, np.int32), np.zeros(0, np.uint8)) if ptype.variable else np.zeros(0, ptype.dtype)
    return NullablePacket(values, np.zeros(0, np.uint8)) if ptype.nullable else values


def concat_packets(parts: list, ptype: PortType) -> Packet:
    """One port's packets as one (offsets of string packets rebased)."""
    if not parts:
        return empty_packet(ptype)
    if ptype.nullable:
        return NullablePacket(concat_packets([p.values for p in parts], replace(ptype, nullable=False)),
                              np.concatenate([p.valid for p in parts]))
    if not ptype.variable:
        return np.concatenate(parts)
    starts = np.cumsum([0] + [len(p.data) for p in parts[:-1]])
    offsets = np.concatenate([np.zeros(1, np.int64)] + [p.offsets[1:] + start for p, start in zip(parts, starts)])
    if offsets[-1] > np.iinfo(np.int32).max:
        raise ValueError(f"a {ptype.name} port's collected values exceed 2 GiB")
    return Strings(offsets.astype(np.int32), np.concatenate([p.data for p in parts]))


def to_port_values(values: Any, ptype: PortType, where: str) -> Packet:
    """Host values for a port as a contiguous NumPy array of its dtype (or
    :class:`Strings`, or for a nullable port a :class:`NullablePacket`),
    checked (same type, no nulls unless nullable); ``where`` names the port in errors."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if ptype.nullable:
        if not isinstance(values, pa.Array) and not ptype.variable and isinstance(values, np.ndarray) \
                and values.dtype != ptype.dtype:
            raise TypeError(f"{where} takes {ptype.name} ({ptype.dtype}), got an array of {values.dtype}")
        try:
            array = values if isinstance(values, pa.Array) else pa.array(values, ptype.arrow)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError) as e:
            raise TypeError(f"{where} takes {ptype.name}: {e}") from None
        if array.type != ptype.arrow:
            raise TypeError(f"{where} takes {ptype.name}, got an Arrow array of {array.type}")
        valid = array.is_valid().to_numpy(zero_copy_only=False).astype(np.uint8)
        if ptype.variable:
            filled = array.fill_null(pa.scalar(b"", ptype.arrow)) if array.null_count else array
            return NullablePacket(Strings.of(filled), valid)
        values = np.frombuffer(array.buffers()[1], ptype.dtype, len(array), array.offset * ptype.itemsize).copy()
        values[valid == 0] = 0  # a null's value is zero, whatever its slot held
        return NullablePacket(values, valid)
    if ptype.variable:
        array = values if isinstance(values, pa.Array) else pa.array(values, ptype.arrow)
        if array.type != ptype.arrow:
            raise TypeError(f"{where} takes {ptype.name}, got an Arrow array of {array.type}")
        if array.null_count:
            raise ValueError(f"{where} takes no nulls; {array.null_count} found")
        return Strings.of(array)
    if isinstance(values, pa.Array):
        if ptype.arrow is None or values.type != ptype.arrow:
            raise TypeError(f"{where} takes {ptype.name}, got an Arrow array of {values.type}")
        if values.null_count:
            raise ValueError(f"{where} takes no nulls; {values.null_count} found (fill them first, "
                             "e.g. pyarrow.compute.fill_null)")
        # The values buffer as it is (dates and timestamps as their integers).
        values = np.frombuffer(values.buffers()[1], ptype.dtype, len(values), values.offset * ptype.itemsize)
    array = np.ascontiguousarray(values)
    if array.ndim != 1:  # a list of packets, say: one array of values, cut into packets by the runtime
        raise ValueError(f"{where} takes one array of values (the runtime cuts it into packets), "
                         f"got an array of shape {array.shape}")
    if array.dtype != ptype.dtype:
        raise TypeError(f"{where} takes {ptype.name} ({ptype.dtype}), got an array of {array.dtype}")
    return array


def to_arrow(values: Packet, ptype: PortType) -> Union[pa.Array, np.ndarray]:
    """What the host gets from an output port: an Arrow array of the port's
    type (records stay a NumPy structured array); strings must be UTF-8.

    >>> to_arrow(NullablePacket(np.array([7, 0]), np.array([1, 0], np.uint8)), Nullable(pa.int64())).to_pylist()
    [7, None]
    """
    bitmap, nulls = None, 0
    if isinstance(values, NullablePacket):
        nulls = len(values) - int(np.count_nonzero(values.valid))
        bitmap = pa.py_buffer(np.packbits(values.valid, bitorder="little")) if nulls else None
        values = values.values
    if ptype.variable:
        array = pa.Array.from_buffers(ptype.arrow, len(values), [bitmap, pa.py_buffer(values.offsets),
                                                                  pa.py_buffer(values.data)], null_count=nulls)
        array.validate(full=True)
        return array
    if ptype.arrow is None:
        return values
    return pa.Array.from_buffers(ptype.arrow, len(values), [bitmap, pa.py_buffer(np.ascontiguousarray(values))],
                                 null_count=nulls)
