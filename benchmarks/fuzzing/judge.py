"""Runs one fuzz case on the path its config names and judges it against pyarrow.

The referee is ``pyarrow.csv.read_csv`` with the same ParseOptions and
ReadOptions. A case *agrees* when both give identical Tables (schema,
values, float bits; chunking ignored) or both raise, ours a
``CsvParseError`` whose line and byte offset agree (the line is the physical
line of the offset, inside the input). Otherwise it is a mismatch: either a
documented difference (:mod:`benchmarks.fuzzing.differences`), an open bug
already reported (:mod:`benchmarks.fuzzing.known_bugs`) or a failure, whose
kind says on which path and how (``host:values``, ``ranges:ours_error_only``,
``writer:pyarrow_readback``, ...).

Paths:

* ``host`` - ``arrow_bridge.read_csv`` of bytes, a file or a BytesIO;
* ``device`` - the same file on an emulated SSD under a split policy (with a
  fault plan sometimes); besides the referee, its error must be the host's;
* ``ranges`` - the Dask range cutter: the preamble, ``record_ranges`` over
  the data (one-byte pages), each range read with ``byte_range=``, names
  given and the column types of our whole-file read (the Dask sample's
  role), concatenated;
* ``writer`` (on top of any path, when pyarrow gives a table) -
  ``arrow_bridge.writer.write_csv`` of pyarrow's table, read back by pyarrow
  and by us with ``read_back_options``: the same table;
* ``block_size`` (on top of the host path, sampled) - our read again with
  another block size: the same table, or the same error (type, line,
  column, byte offset, reason), as docs/reader.md promises.

>>> judge = Judge()
>>> judge.run(b"a,b\\n1,2\\n", ReadConfig()).kind
'agree'
>>> verdict = judge.run(b'a\\n"x', ReadConfig())
>>> verdict.kind, verdict.difference
('documented', 'unterminated_quote')
"""
from __future__ import annotations

import io
import os
import sys
import tempfile
import traceback
from dataclasses import dataclass, field, replace
from typing import Any, Optional

import pyarrow as pa
import pyarrow.csv as pacsv

import arrow_bridge
from arrow_bridge import CsvParseError
from arrow_bridge.options import resolve_options
from arrow_bridge.preamble import read_preamble
from arrow_bridge.ranges import record_ranges
from arrow_bridge.source import open_source
from arrow_bridge.writer import read_back_options, write_csv
from benchmarks.fuzzing.configs import CONVERT_PRESETS, ReadConfig
from benchmarks.fuzzing.differences import explain
from benchmarks.fuzzing.known_bugs import known_bug
from benchmarks.fuzzing.outcome import Mismatch, Outcome
from benchmarks.fuzzing.reference import line_at, tables_differ

AGREE = "agree"
DOCUMENTED = "documented"
KNOWN_BUG = "known_bug"


@dataclass
class Verdict:
    """How a case went: ``kind`` is ``"agree"``, ``"documented"`` (then
    ``difference`` names the entry) or a failure kind; ``detail`` says what
    differed; ``features`` describe the behaviour seen (for corpus feedback);
    ``checks`` name the comparisons made (``host``, ``device``, ``ranges``,
    ``device_vs_host``, ``writer``)."""

    kind: str
    detail: str = ""
    difference: Optional[str] = None
    features: tuple = field(default_factory=tuple)
    checks: tuple = field(default_factory=tuple)
    bug: Optional[str] = None  # kind "known_bug": the open bug (benchmarks.fuzzing.known_bugs)
    errors: tuple = ()  # the two errors that differ (block size and device checks)

    @property
    def failed(self) -> bool:
        return self.kind not in (AGREE, DOCUMENTED, KNOWN_BUG)

    @property
    def label(self) -> str:
        """``agree``, ``documented:<name>``, ``known_bug:<name>`` or the failure kind."""
        if self.kind == DOCUMENTED:
            return f"{DOCUMENTED}:{self.difference}"
        if self.kind == KNOWN_BUG:
            return f"{KNOWN_BUG}:{self.bug}"
        return self.kind


def read_referee(data: bytes, **options: Any) -> Outcome:
    """pyarrow's outcome for ``data`` (``options``: ``read_options``, ``parse_options``, ...).

    An ``invalid_row_handler`` pyarrow cannot call (a bad row that is not
    UTF-8) is reported by pyarrow through ``sys.unraisablehook`` before it
    raises: kept quiet here, the error is the outcome."""
    if options["parse_options"].invalid_row_handler is None:
        return Outcome.of(lambda: pacsv.read_csv(pa.py_buffer(data), **options))
    hook = sys.unraisablehook
    sys.unraisablehook = lambda info: None
    try:
        return Outcome.of(lambda: pacsv.read_csv(pa.py_buffer(data), **options))
    finally:
        sys.unraisablehook = hook


def compare(ours: Outcome, theirs: Outcome) -> Optional[str]:
    """None when the two outcomes agree (identical tables, or both raised), else why not."""
    if ours.ok and theirs.ok:
        return tables_differ(ours.table, theirs.table)
    if not ours.ok and not theirs.ok:
        return None
    return f"ours: {ours.summary()}; pyarrow: {theirs.summary()}"


def case_convert_options(data: bytes, config: ReadConfig) -> Optional[pacsv.ConvertOptions]:
    """The ConvertOptions both readers get for a case; explicit types need the column names, pyarrow's.

    >>> case_convert_options(b"a,b\\n1,2\\n", ReadConfig(types=((1, "int8"),))).column_types
    {'b': DataType(int8)}
    """
    if not (config.types or config.convert):
        return None
    names = None
    if config.types:
        inferred = read_referee(data, **config.referee_options())
        try:
            names = inferred.table.column_names if inferred.ok else None
        except UnicodeDecodeError:  # pyarrow keeps header bytes that are not UTF-8 as names
            names = None
    return config.convert_options(names)


def error_problem(data: bytes, error: BaseException) -> Optional[str]:
    """None when ``error`` is a CsvParseError whose location is consistent, else what is wrong."""
    if not isinstance(error, CsvParseError):
        return f"not a CsvParseError: {type(error).__name__}: {error}"
    if not 0 <= error.byte_offset <= len(data):
        return f"byte_offset {error.byte_offset} outside the input ({len(data)} bytes): {error}"
    if error.line != line_at(data, error.byte_offset):
        return f"line {error.line} is not the line of byte_offset {error.byte_offset} " \
               f"(line {line_at(data, error.byte_offset)}): {error}"
    return None


def _mismatch_kind(ours: Outcome, theirs: Outcome, detail: str) -> str:
    if not ours.ok:
        return "ours_error_only"
    if not theirs.ok:
        return "pyarrow_error_only"
    return "schema" if detail.startswith("schema differs") else "values"


class Judge:
    """Runs cases; holds what is costly to make (emulated SSDs, a scratch folder)."""

    def __init__(self, scratch: Optional[str] = None):
        self._own_scratch = scratch is None
        self.scratch = scratch or tempfile.mkdtemp(prefix="ndp-fuzz-", dir=_fast_tmp())
        self._devices: dict[tuple, Any] = {}
        self._file = os.path.join(self.scratch, "case.csv")

    def close(self) -> None:
        for device in self._devices.values():
            device.close()
        self._devices.clear()
        if self._own_scratch:
            for name in os.listdir(self.scratch):
                os.unlink(os.path.join(self.scratch, name))
            os.rmdir(self.scratch)

    # ---- one case ------------------------------------------------------------------------------
    def run(self, data: bytes, config: ReadConfig) -> Verdict:
        """The verdict on ``data`` read as ``config`` says."""
        if config.source == "path" or config.path != "host":
            with open(self._file, "wb") as f:
                f.write(data)
        convert = case_convert_options(data, config)
        theirs = read_referee(data, **config.referee_options(convert))
        ours = self._read(data, config, theirs, convert)
        verdict = self._judge(data, config, ours, theirs, convert)
        checks = [config.path]
        if verdict.kind == AGREE and config.path == "device":
            checks.append("device_vs_host")
            verdict = self._device_matches_host(config, ours, convert) or verdict
        if verdict.kind == AGREE and config.writer and theirs.ok:
            checks.append("writer")
            verdict = self._writer_round_trip(theirs.table) or verdict
        if not verdict.failed and config.recheck_block >= 0 and config.path == "host":
            checks.append("block_size")
            verdict = self._same_for_another_block_size(data, config, ours, convert) or verdict
        if verdict.failed:
            bug = known_bug(verdict, theirs.table if theirs.ok else None)
            if bug is not None:
                verdict = replace(verdict, kind=KNOWN_BUG, bug=bug)
        features = (config.path, ours.signature(), theirs.signature(), verdict.kind, verdict.difference)
        return replace(verdict, features=features, checks=tuple(checks))

    def _judge(self, data: bytes, config: ReadConfig, ours: Outcome, theirs: Outcome,
               convert: Optional[pacsv.ConvertOptions]) -> Verdict:
        path = config.path
        if not ours.ok:
            problem = error_problem(data, ours.error)
            if problem is not None:
                kind = "error_location" if isinstance(ours.error, CsvParseError) else "error_type"
                return Verdict(f"{path}:{kind}", problem + _trace(ours.error))
        detail = compare(ours, theirs)
        if detail is None:
            return Verdict(AGREE)
        mismatch = Mismatch(data, config, ours, theirs, read_referee, compare, convert)
        name = explain(mismatch)
        if name is not None:
            return Verdict(DOCUMENTED, detail, name)
        return Verdict(f"{path}:{_mismatch_kind(ours, theirs, detail)}", detail)

    # ---- the paths ---------------------------------------------------------------------------
    def _read(self, data: bytes, config: ReadConfig, theirs: Outcome,
              convert: Optional[pacsv.ConvertOptions]) -> Outcome:
        options = config.ours_options(convert)
        if config.path == "host":
            return Outcome.of(lambda: arrow_bridge.read_csv(self._source(data, config), **options))
        if config.path == "device":
            device = self._device(config)
            return Outcome.of(lambda: arrow_bridge.read_csv(self._file, device=device, split=config.split,
                                                             **options))
        if config.path == "ranges":
            types = self._sample_types(options, theirs)
            return Outcome.of(lambda: self._read_ranges(data, config, types, convert))
        raise ValueError(f"unknown path {config.path!r}")

    def _source(self, data: bytes, config: ReadConfig) -> Any:
        if config.source == "path":
            return self._file
        if config.source == "bytesio":
            return io.BytesIO(data)
        return data

    def _device(self, config: ReadConfig) -> Any:
        from device_emulator import ComputationalSSD, FaultPlan

        key = (config.device_profile, config.faults)
        if key not in self._devices:
            name, _, page = config.device_profile.partition("/")
            overrides = {"flash.page_size": int(page)} if page else {}
            faults = FaultPlan(media_error=0.2, app_failure=0.2, link_timeout=0.1, tq_overflow=0.2, seed=11) \
                if config.faults else None
            self._devices[key] = ComputationalSSD(name, workers=1, faults=faults, **overrides)
        return self._devices[key]

    def _sample_types(self, options: dict, theirs: Outcome) -> Optional[list]:
        """The column types a Dask read would give every partition: those our reader
        gives the whole file (the sample), else the referee's, else None."""
        whole = Outcome.of(lambda: arrow_bridge.read_csv(self._file, **options))
        if whole.ok:
            return whole.table.schema.types
        return theirs.table.schema.types if theirs.ok else None

    def _read_ranges(self, data: bytes, config: ReadConfig, types: Optional[list],
                     convert: Optional[pacsv.ConvertOptions]) -> pa.Table:
        """As dask_plugin reads a file: preamble, exact ranges, each read with ``byte_range=``.

        Columns get synthetic unique names (so duplicate header names can be typed)
        and ``types`` (see :meth:`_sample_types`); without them, the explicit types
        of ``convert`` and binary for the other columns (any bytes convert)."""
        opts = resolve_options(read_options=config.read_options(), parse_options=config.parse_options())
        with open_source(self._file) as src:
            pre = read_preamble(src, opts)
        ranges = record_ranges(self._file, pre.data_offset, len(data), config.range_block, opts, page_size=1,
                               lookbehind=config.lookbehind)
        names = [f"c{i}" for i in range(len(pre.names))]
        if types is None or len(types) != len(names):  # no sample (or the referee's, of other columns)
            explicit = dict(convert.column_types) if convert is not None else {}
            types = [explicit.get(name, pa.binary()) for name in pre.names]
        dtype = dict(zip(names, types))
        convert = pacsv.ConvertOptions(**CONVERT_PRESETS[config.convert], column_types=dtype)
        kw = dict(parse_options=config.parse_options(), names=names, header=None, convert_options=convert,
                  n_threads=config.n_threads)
        if config.block_size is not None:
            kw["block_size"] = config.block_size
        parts = [arrow_bridge.read_csv(self._file, byte_range=r, **kw) for r in ranges]
        table = pa.concat_tables(parts) if parts else pa.schema([(n, dtype[n]) for n in names]).empty_table()
        return table.rename_columns(pre.names)

    def _device_matches_host(self, config: ReadConfig, ours: Outcome,
                             convert: Optional[pacsv.ConvertOptions]) -> Optional[Verdict]:
        host = Outcome.of(lambda: arrow_bridge.read_csv(self._file, **config.ours_options(convert)))
        if ours.ok and host.ok:
            detail = tables_differ(ours.table, host.table)
        elif ours.ok != host.ok:
            detail = f"device: {ours.summary()}; host: {host.summary()}"
        else:
            detail = None if str(ours.error) == str(host.error) else f"device: {ours.error}; host: {host.error}"
        errors = (ours.error, host.error) if not (ours.ok or host.ok) else ()
        return None if detail is None else Verdict("device:differs_from_host", detail, errors=errors)

    def _same_for_another_block_size(self, data: bytes, config: ReadConfig, ours: Outcome,
                                     convert: Optional[pacsv.ConvertOptions]) -> Optional[Verdict]:
        """docs/reader.md: the result "does not depend on block_size": the same table,
        or the same error (type, line, column, byte offset, reason)."""
        options = config.ours_options(convert)
        options.pop("block_size", None)
        if config.recheck_block > 0:
            options["block_size"] = config.recheck_block
        other = Outcome.of(lambda: arrow_bridge.read_csv(self._source(data, config), **options))
        first, second = f"block_size={config.block_size}", f"block_size={config.recheck_block or None}"
        if ours.ok and other.ok:
            detail = tables_differ(other.table, ours.table)
        elif ours.ok != other.ok:
            detail = f"{first}: {ours.summary()}; {second}: {other.summary()}"
        else:
            detail = None if _error_signature(ours.error) == _error_signature(other.error) else \
                f"{first}: {ours.summary()}; {second}: {other.summary()}"
        errors = (ours.error, other.error) if not (ours.ok or other.ok) else ()
        return None if detail is None else Verdict("host:block_size_dependent", detail, errors=errors)

    def _writer_round_trip(self, table: pa.Table) -> Optional[Verdict]:
        if len(set(table.column_names)) != table.num_columns:
            return None  # read_back_options types columns by name
        sink = io.BytesIO()
        written = Outcome.of(lambda: write_csv(table, sink, n_threads=1))
        if not written.ok:
            return Verdict("writer:error", written.summary() + _trace(written.error))
        text = sink.getvalue()
        options = read_back_options(table.schema)
        back = read_referee(text, **options)
        detail = compare(back, Outcome(table=table))
        if detail is not None:
            return Verdict("writer:pyarrow_readback", f"{detail}; text={text[:200]!r}")
        if options["parse_options"].ignore_empty_lines:  # we do not support ignore_empty_lines=False
            ours = Outcome.of(lambda: arrow_bridge.read_csv(text, n_threads=1, **options))
            detail = compare(ours, Outcome(table=table))
            if detail is not None:
                return Verdict("writer:ours_readback", f"{detail}; text={text[:200]!r}")
        return None


def _error_signature(error: BaseException) -> tuple:
    return (type(error).__name__, getattr(error, "line", None), getattr(error, "column", None),
            getattr(error, "byte_offset", None), getattr(error, "reason", str(error)))


def _trace(error: BaseException) -> str:
    """The innermost frames of ``error``'s traceback (where an unexpected exception came from)."""
    frames = traceback.extract_tb(error.__traceback__)[-3:]
    return "".join(f"\n  at {f.filename}:{f.lineno} in {f.name}" for f in frames)


def _fast_tmp() -> Optional[str]:
    """/dev/shm when there is one (the case file is rewritten for every case)."""
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
