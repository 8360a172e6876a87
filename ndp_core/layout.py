"""Binary layouts of int64 words, defined once for a StorageApp and its driver.

A StorageApp sees only flat buffers (plan, args, result header); the app and
the host code that packs and reads them must agree on where each word lies.
:func:`word_layout` defines such a layout once, as a ``NamedTuple`` instance
whose fields are word offsets: Python reads it by name, and Numba-compiled
apps read the very same global (a tuple of ints is a compile-time constant).

>>> from ndp_core.layout import word_layout, word_list
>>> HEADER = word_layout("Header", ["status", "rows", ("spans", 2)])
>>> HEADER.rows, HEADER.spans, HEADER.size
(1, 2, 4)
>>> words = word_list(HEADER, rows=3, spans=[7, 8])
>>> words
[0, 3, 7, 8]
>>> words[HEADER.rows]
3
>>> word_layout("Padded", ["a", "b"], size=4)
Padded(a=0, b=1, reserved=2, size=4)
"""
from __future__ import annotations

import zlib
from collections import namedtuple
from typing import Any, NamedTuple, Optional, Sequence, Union


Field = Union[str, tuple[str, int]]
RESERVED = "reserved"  # the unused words of a layout given a ``size`` beyond its fields


def word_layout(name: str, fields: Sequence[Field], size: Optional[int] = None) -> Any:
    """A layout: ``fields`` in order, each one word or ``(name, words)``.

    Returns a ``NamedTuple`` instance mapping each field to its first word,
    plus ``size``: the layout's length in words (``size`` if given, for room
    kept past the last field, which is then named ``reserved``).
    """
    names, offsets, widths, at = [], [], [], 0
    for item in fields:
        field_name, width = (item, 1) if isinstance(item, str) else item
        if hasattr(tuple, field_name) or field_name in ("size", RESERVED):
            raise ValueError(f"{name}: field name {field_name!r} would hide a tuple attribute or clash")
        names.append(field_name)
        offsets.append(at)
        widths.append(width)
        at += width
    if size is not None and size < at:
        raise ValueError(f"{name}: {at} words of fields do not fit in size {size}")
    spans = {field: (offset, width) for field, offset, width in zip(names, offsets, widths)}
    if size is not None and size > at:  # room kept for later fields: no field spans it
        names.append(RESERVED)
        offsets.append(at)
    layout_type = namedtuple(name, [*names, "size"])
    # Drivers pack and read layouts once per command: fields are looked up in one dict.
    # (Field names cannot start with "_", so the attribute never hides a field.)
    layout_type._field_spans = spans
    return layout_type(*offsets, at if size is None else size)


def layout_fingerprint(*parts: Any) -> int:
    """A version number for an app's layouts (and any constants its compiled
    code bakes in): it changes whenever one of them does. An app compiles it
    in and its driver packs it into the plan, so a kernel cached before a
    layout changed (Numba keys its cache on the kernel's own file) refuses the
    plan instead of reading words where they no longer are.

    >>> A = word_layout("A", ["x", "y"])
    >>> layout_fingerprint(A) == layout_fingerprint(word_layout("A", ["x", "y"]))
    True
    >>> layout_fingerprint(A) == layout_fingerprint(word_layout("A", ["y", "x"]))
    False
    """
    described = [(type(part).__name__, getattr(part, "_fields", None), tuple(part) if isinstance(part, tuple) else part)
                 for part in parts]
    return zlib.crc32(repr(described).encode()) & 0x7FFFFFFF


def align8(nbytes: int) -> int:
    """``nbytes`` rounded up to a multiple of 8: sections and regions of an app's
    buffers start on word boundaries.

    >>> align8(13), align8(16)
    (16, 16)
    """
    return (nbytes + 7) & ~7


def fields_of(layout: NamedTuple) -> tuple[str, ...]:
    """The layout's fields in word order (without ``size`` and ``reserved``).

    >>> fields_of(word_layout("Row", ["start", "length"], size=4))
    ('start', 'length')
    """
    return tuple(type(layout)._field_spans)


def word_list(layout: NamedTuple, **values: Any) -> list[int]:
    """The layout's ``size`` words, ``values`` by field name (a sequence for a
    multi-word field) and 0 elsewhere: the one way a driver packs a plan, an
    argument block or a row, joined into arrays as it needs.

    >>> word_list(word_layout("Row", ["start", ("pair", 2)]), pair=[7, 8])
    [0, 7, 8]
    """
    words = [0] * layout.size
    spans = type(layout)._field_spans
    for field, value in values.items():
        if field not in spans:
            raise KeyError(f"{type(layout).__name__} has no field {field!r}; fields: {fields_of(layout)}")
        at, width = spans[field]
        if width == 1:
            words[at] = int(value)
        elif len(value) == width:
            words[at: at + width] = [int(v) for v in value]
        else:
            raise ValueError(f"{type(layout).__name__}.{field} takes {width} words, got {len(value)}")
    return words
