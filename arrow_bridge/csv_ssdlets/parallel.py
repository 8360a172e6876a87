"""A file's parse spread over several instances: whole records dealt to parsers in turn.

A parse of file pages keeps the record a packet ends in for its next call, so
one instance parses a file, call after call, on one core. Cut into whole
records first (:func:`~arrow_bridge.csv_ssdlets.match.split_records`, a byte
loop that only finds record ends), the packets can go to ``instances``
parsers of records: the splitter's output fans out to them in turn (SPMC),
and a node that takes their columns fans them in, in the same turn (MPSC),
so it sees the rows in file order. That holds because a parser of records
sends exactly one packet a call, a row per record: an empty packet is never
routed, and one missing would shift the turns.

The splitter and the parsers run on one side (a connection across the link is
single-producer, single-consumer), and so does the node they fan into.
"""
from __future__ import annotations

import os
from typing import Any, NamedTuple, Union

import pyarrow as pa

from arrow_bridge.csv_ssdlets.match import split_records
from arrow_bridge.csv_ssdlets.parse import csv_parser
from arrow_bridge.csv_ssdlets.programs import CsvProgram
from ndp_core.ssdlets.graph import Node


class ParallelParse(NamedTuple):
    """The nodes :func:`parse_in_parallel` added: the splitter and the parsers (in turn order)."""

    splitter: Node
    parsers: list[Node]

    @property
    def program(self) -> CsvProgram:
        """The parsers' program (its ``schema``, ``columns`` and ``table``)."""
        return self.parsers[0].program


def parse_in_parallel(app: Any, path: Union[str, os.PathLike], instances: int, *, on: str = "device",
                      schema: Union[pa.Schema, None] = None, device: Any = None, **options: Any) -> ParallelParse:
    """Adds to ``app`` a scan of ``path`` parsed by ``instances`` parsers on one side.

    ``schema`` (default: the file's first block, as :func:`csv_parser` infers it) and
    ``options`` are :func:`csv_parser`'s; ``device`` prices the programs' work. Connect
    the parsers to one node that takes the columns (``connect_columns(app,
    parallel.parsers, node)``), on the same side: it receives the rows in file order.
    Bad input stops the run as a parse of records reports it (``byte_offset`` in the
    records a parser received); :func:`~arrow_bridge.csv_ssdlets.reader_error` locates
    it in the file.

    >>> import os, tempfile
    >>> from ndp_core.ssdlets import Application
    >>> from device_emulator import ComputationalSSD
    >>> from arrow_bridge.csv_ssdlets import connect_columns, row_filter
    >>> path = os.path.join(tempfile.mkdtemp(), "n.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("n,sq\\n" + "".join(f"{k},{k * k}\\n" for k in range(5000)))
    >>> app = Application(ComputationalSSD("modern-gen4"), pages_per_packet=1)
    >>> parallel = parse_in_parallel(app, path, 3)
    >>> keep = row_filter([("n", ">=", 4998)], parallel.program.schema)
    >>> kept = app.add(keep, on="device")
    >>> connect_columns(app, parallel.parsers, kept)
    >>> for port in keep.columns:
    ...     app.collect(kept.port(port))
    >>> result = app.run()
    >>> keep.table(result, kept).to_pydict()
    {'n': [4998, 4999], 'sq': [24980004, 24990001]}
    >>> [w.calls > 1 for w in result.work if w.program == "csv_parser"]
    [True, True, True]
    """
    if instances < 1:
        raise ValueError(f"instances={instances!r}: the number of parsers, at least 1")
    parse = csv_parser(schema if schema is not None else path, device=device, records=True, **options)
    splitter = app.add(split_records(device=device, **options), on=on)
    app.scan(splitter.pages, path)
    parsers = [app.add(parse, on=on) for _ in range(instances)]
    for parser in parsers:
        app.connect(splitter.records, parser.records)
    return ParallelParse(splitter, parsers)
