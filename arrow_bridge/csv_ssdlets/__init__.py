"""The reader's CSV app as SSDlets: file pages to typed columns, a row filter, aggregates, a matcher.

Biscuit (*Biscuit: A Framework for Near-Data Processing of Big Data
Workloads*, ISCA 2016) builds its queries from SSDlets: a scanner, a parser,
a filter, connected by typed ports. :func:`csv_parser` is the reader's own
parse written that way: an SSDlet whose input is file pages and whose
outputs are one nullable port per column, typed as the reader types them.
Its body calls the reader's kernels (:func:`~arrow_bridge.kernels.tokenizer.tokenize`,
``convert_fixed``, ``convert_strings``) with the reader's dialect and value
rules, so its columns are ``read_csv``'s, bit for bit, on the device or the
host. :func:`row_filter` turns a ``filters=`` DNF into an SSDlet over those
ports, with ``read_csv(filters=...)``'s meaning; :func:`group_aggregate` does
``aggregate_csv``'s aggregates as partial states per packet, merged on the
host; :func:`records_containing` is Biscuit's pattern matcher, and
:func:`scan_filter` puts it in front of the parse where a sample says it pays;
:func:`parse_in_parallel` spreads a file's parse over several instances
(:func:`split_records` cuts whole records for them).

Modules: :mod:`.parse`, :mod:`.filter`, :mod:`.aggregate`, :mod:`.match`,
:mod:`.scan`, :mod:`.parallel`; :mod:`.programs` holds what they share (generating and compiling
a program once per process, port names, prices).

Ports are typed before a graph runs (Biscuit's rule), so the column types
come from the reader's first block (as :func:`arrow_bridge.open_csv` infers
them) or from ``dtype=``/``column_types``; a later value that does not fit
its port's type stops the run with an ``SSDletError``, where ``read_csv``
would have widened the column. Bad input stops it the same way; the error's
``byte_offset`` says where, and :func:`reader_error` gives ``read_csv``'s
``CsvParseError`` for it, with line and column (:func:`scan_filter` raises that).

A graph that parses a file in the device and filters on the host:

>>> import os, tempfile
>>> from ndp_core.ssdlets import Application
>>> from device_emulator import ComputationalSSD
>>> path = os.path.join(tempfile.mkdtemp(), "prices.csv")
>>> with open(path, "w") as f:
...     _ = f.write("id,price\\n1,9.5\\n2,\\n3,12.25\\n")
>>> parse = csv_parser(path)
>>> parse
SSDlet csv_parser(pages: pages) -> (id: int64?, price: double?); state carry: ..., started: int64, consumed: int64; work ...
>>> keep = row_filter([("price", ">", 10)], parse.schema)
>>> app = Application(ComputationalSSD("modern-gen4"))
>>> scan, cheap = app.add(parse, on="device"), app.add(keep, on="host")
>>> app.scan(scan.pages, path)
>>> connect_columns(app, scan, cheap)
>>> for port in keep.columns:
...     app.collect(cheap.port(port))
>>> keep.table(app.run(), cheap).to_pydict()
{'id': [3], 'price': [12.25]}
"""
from arrow_bridge.csv_ssdlets.aggregate import AggregateProgram, group_aggregate
from arrow_bridge.csv_ssdlets.filter import row_filter
from arrow_bridge.csv_ssdlets.match import prefilter_keys, records_containing, split_records
from arrow_bridge.csv_ssdlets.parallel import ParallelParse, parse_in_parallel
from arrow_bridge.csv_ssdlets.parse import MAX_RECORD_BYTES, csv_parser, reader_error
from arrow_bridge.csv_ssdlets.programs import CsvProgram, connect_columns, parse_prices
from arrow_bridge.csv_ssdlets.scan import ScanDecision, scan_filter

__all__ = ["CsvProgram", "AggregateProgram", "csv_parser", "reader_error", "row_filter", "group_aggregate",
           "connect_columns", "records_containing", "split_records", "prefilter_keys", "scan_filter", "ScanDecision",
           "parse_in_parallel", "ParallelParse", "parse_prices", "MAX_RECORD_BYTES"]
