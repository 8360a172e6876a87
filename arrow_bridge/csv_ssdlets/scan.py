"""Biscuit's filtered scan: a sample decides whether the matcher runs in front of the parse."""
from __future__ import annotations

import math
import os
import tempfile
from dataclasses import dataclass
from typing import Any, Optional, Union

import pyarrow as pa

from arrow_bridge.csv_ssdlets.filter import row_filter
from arrow_bridge.csv_ssdlets.match import prefilter_keys, records_containing
from arrow_bridge.csv_ssdlets.parse import csv_parser, reader_error
from arrow_bridge.csv_ssdlets.programs import CsvProgram, connect_columns, parse_options
from arrow_bridge.filters import Filters
from arrow_bridge.options import CsvOptions
from ndp_core.ssdlets import SSDlet, SSDletError
from ndp_core.ssdlets.application import RunResult


@dataclass(frozen=True)
class ScanDecision:
    """How :func:`scan_filter` ran a query: whether the matcher prefiltered the
    records, and the sampled estimate it chose by (modeled seconds of both graphs
    on the same sample of the file)."""

    keys: Optional[tuple[str, ...]]  # what records_containing looks for; None: the filter allows no prefilter
    sample_bytes: int
    selectivity: float  # of the sampled records, the fraction the matcher sends on
    parse_all_s: float  # modeled seconds on the sample: the host parses every record
    prefilter_s: float  # ... the device's matcher sends the records holding a key (inf without keys)

    @property
    def prefilter(self) -> bool:
        return self.prefilter_s < self.parse_all_s


def scan_filter(path: Union[str, Any], filters: Filters, device: Any, *, samples: int = 8, plan: str = "sampled",
                **options: Any) -> tuple[pa.Table, RunResult, ScanDecision]:
    """Biscuit's filtered scan: ``read_csv(path, filters=...)``'s Table, from an SSDlet graph on ``device``.

    When :func:`prefilter_keys` finds keys, both plans run on a sample of the
    file (``samples`` record ranges spread over it; real kernels, modeled
    time): the host parsing every record, and the device's
    :func:`records_containing` sending only records holding a key to the host
    parse. The faster, in modeled time, then reads the whole file: Biscuit
    samples pages to estimate selectivity and offloads a filter only where it
    pays. Parse and filter run on the host (as MariaDB's did on Biscuit's). Bad
    input that a plan parses raises ``read_csv``'s ``CsvParseError`` (see
    :func:`reader_error`); with the matcher in front, a bad record holding no key
    is never parsed, so it raises nothing, where ``read_csv`` would.
    ``plan="prefilter"`` or ``"parse_all"`` runs that plan and takes no sample (the
    decision's estimates are then NaN).
    Returns the Table, the run's :class:`~ndp_core.ssdlets.RunResult` (work
    and modeled time) and the :class:`ScanDecision`.
    """
    if plan not in ("sampled", "prefilter", "parse_all"):
        raise ValueError(f"plan must be 'sampled', 'prefilter' or 'parse_all', got {plan!r}")
    opts = parse_options(options)
    parse = csv_parser(path, device=device, **options)
    keep = row_filter(filters, parse.schema, device=device)
    keys = prefilter_keys(filters, parse.schema, quote_char=opts.quote_char, escape_char=opts.escape_char)
    if opts.escape_char is not None or not opts.double_quote:
        keys = None  # the matcher follows the default quoting only
    matcher = parse_records = None
    if keys is not None:
        matcher = records_containing(keys, device=device, **options)
        parse_records = csv_parser(parse.schema, device=device, records=True, **options)
    elif plan == "prefilter":
        raise ValueError(f"no prefilter for filters {filters!r} with these options: they name no key a record "
                         "must hold (see prefilter_keys), or the dialect has an escape character or "
                         "doublequote=False, which the matcher does not follow")
    found = tuple(keys) if keys is not None else None
    try:
        if plan == "sampled":
            decision = _sampled_decision(device, path, samples, opts, found, (parse, parse_records, keep, matcher))
            prefilter = decision.prefilter
        else:  # a forced plan takes no sample (nor runs the other plan's programs)
            decision, prefilter = ScanDecision(found, 0, math.nan, math.nan, math.nan), plan == "prefilter"
        result = _filter_graph(device, path, parse_records, keep, matcher) if prefilter else \
            _filter_graph(device, path, parse, keep)
    except SSDletError as error:  # bad input (or a program's limit): the reader's error, located in the file
        raise reader_error(error, path, parse.schema, **options) from None
    return keep.table(result, "row_filter"), result, decision


def _sampled_decision(device: Any, path: Any, samples: int, opts: CsvOptions, keys: Optional[tuple[str, ...]],
                      programs: tuple) -> ScanDecision:
    """Both plans on a sample of the file, modeled (a matcher the sample stops, say on a
    record longer than it carries, counts as not paying)."""
    parse, parse_records, keep, matcher = programs
    with tempfile.TemporaryDirectory() as folder:
        sample = _sample_file(path, os.path.join(folder, "sample.csv"), samples, opts)
        everything = _filter_graph(device, sample, parse, keep)
        timings = {"parse_all_s": everything.model.makespan_s, "prefilter_s": math.inf, "selectivity": 1.0}
        if matcher is not None:
            try:
                matched = _filter_graph(device, sample, parse_records, keep, matcher)
            except SSDletError:
                matched = None
            if matched is not None:
                sent, read = matched.work[0].counters["lines_matched"], everything.work[0].counters["csv_rows"]
                timings.update(prefilter_s=matched.model.makespan_s, selectivity=sent / max(read, 1))
        return ScanDecision(keys, os.path.getsize(sample), **timings)


def _filter_graph(device: Any, path: Any, parse: CsvProgram, keep: CsvProgram,
                  matcher: Optional[SSDlet] = None) -> RunResult:
    """scan -> [records_containing on the device ->] parse -> filter on the host, run."""
    from ndp_core.ssdlets import Application

    app = Application(device, pages_per_packet=64)
    if matcher is None:
        first = parsed = app.add(parse, on="host")
    else:
        first, parsed = app.add(matcher, on="device"), app.add(parse, on="host")
        app.connect(first.records, parsed.records)
    app.scan(first.pages, path)
    kept = app.add(keep, on="host", name="row_filter")
    connect_columns(app, parsed, kept)
    for port in keep.columns:
        app.collect(kept.port(port))
    return app.run()


def _sample_file(path: Any, sample: str, samples: int, opts: CsvOptions) -> str:
    """A file of ``path``'s header and ``samples`` record ranges spread over its data."""
    from arrow_bridge.preamble import read_preamble
    from arrow_bridge.ranges import record_ranges
    from arrow_bridge.source import open_source

    size = os.path.getsize(path)
    with open_source(os.fspath(path)) as source:
        start = read_preamble(source, opts).data_offset
    parts = max(4 * samples, (size - start) // (1 << 19))  # ranges of about 512 KiB
    ranges = [r for r in record_ranges(path, start, size, max(1, (size - start) // parts), opts) if r[1] > r[0]]
    chosen = ranges[::max(1, len(ranges) // samples)][:samples]
    with open(path, "rb") as src, open(sample, "wb") as out:
        out.write(src.read(start))
        for a, b in chosen:
            src.seek(a)
            out.write(src.read(b - a))
    return sample

