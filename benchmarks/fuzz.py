"""Differential fuzzing of ``arrow_bridge.read_csv`` against pyarrow, at scale.

    python -m benchmarks.fuzz --cases 1000000 --workers 1        # -> results/fuzz.json, results/fuzz.md
    python -m benchmarks.fuzz --cases 20000 --out - --seed 3      # print the summary only
    python -m benchmarks.fuzz --replay data/fuzz-failures/host-values-0123456789.csv
    python -m benchmarks.fuzz --minimize data/fuzz-failures/host-values-0123456789.csv

Byte-level mutants of a seed corpus (``tests/arrow_bridge/fuzz_corpus/``) are
read by ``arrow_bridge.read_csv`` on the host (bytes, files, BytesIO; one
and two threads; small and large block sizes; with and without
``newlines_in_values``; several dialects, no header, skipped rows), on an
emulated SSD (every split, 512-byte and 16 KiB pages, fault plans), through
the Dask range cutter (``record_ranges`` + ``byte_range=`` reads,
concatenated) and through the writer's round trip; each result is judged
against ``pyarrow.csv.read_csv`` with the same options: the same Table, or
both raise. Deliberate differences are listed in one place,
:mod:`benchmarks.fuzzing.differences`. Cases run in batches in worker child
processes under a watchdog: a crash or a case over ``--case-timeout`` is
saved and the worker restarted. Failing cases are saved under
``--save-dir`` (``.csv`` input + ``.json`` config and verdict); ``--replay``
judges one again, ``--minimize`` shrinks it.

Why not atheris. ``pip download atheris`` works here and atheris 3.0
installs, but its guidance is Python line/branch coverage, and the parts of
the reader where input bytes decide the control flow - tokenizer, field
conversion, the fused fast path, boundary scans, the device StorageApp - are
Numba-compiled machine code that atheris does not instrument. What it sees
is the Python driver around them (options, preamble, span cutting, error
assembly), and that coverage saturates at once on CSV input. Measured here
(2-core machine shared with other jobs, the tests/arrow_bridge/fuzz_corpus
seeds, ``read_csv`` then pyarrow per input): with ``arrow_bridge``'s modules
instrumented, libFuzzer found 176 coverage edges, all by the 112th input,
and nothing new in the remaining 41,700 inputs of 90 s (459 inputs/s); with
every loaded module instrumented, 6,450 edges at start-up and 0 new inputs
in 12,186 (199/s); uninstrumented, 834/s. libFuzzer's in-process model also
ends the run at the first crash, where this harness needs batches in a
restartable child. So this is a hand-written mutational fuzzer: AFL-style
havoc mutations with a CSV dictionary (csvgen's value pools), a seed
corpus, and a cheap behavioural feedback that does reach into the kernels:
a mutant is kept when its case shows a new outcome signature (our or
pyarrow's error message with numbers blanked, or the result's column types)
or a new verdict (:mod:`benchmarks.fuzzing.corpus`).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from benchmarks.common import REPO_ROOT, RESULTS_DIR, host_info, package_versions

DEFAULT_SAVE_DIR = REPO_ROOT / "data" / "fuzz-failures"


def _parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fuzz", description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=100_000, help="cases to run (default 100000)")
    parser.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch", type=int, default=200, help="cases per batch sent to a worker")
    parser.add_argument("--case-timeout", type=float, default=20.0, help="seconds before a case is a hang")
    parser.add_argument("--slow-paths", type=float, default=1.0,
                        help="scale the rates of the device, range and writer paths (default 1)")
    parser.add_argument("--progress-every", type=float, default=60.0, help="seconds between results files")
    parser.add_argument("--save-dir", type=Path, default=DEFAULT_SAVE_DIR, help="where failing cases go")
    parser.add_argument("--out", default=str(RESULTS_DIR / "fuzz.json"),
                        help="results JSON (a .md summary is written beside it); '-' prints the summary only")
    parser.add_argument("--replay", type=Path, help="judge one saved case (.csv with its .json) and exit")
    parser.add_argument("--minimize", type=Path, help="shrink one saved failing case and exit")
    parser.add_argument("--write-csvgen-seeds", action="store_true",
                        help="(re)write the csvgen seeds of tests/arrow_bridge/fuzz_corpus/seeds and exit")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """The command line (see the module docstring)."""
    args = _parse_args(sys.argv[1:] if argv is None else argv)
    if args.write_csvgen_seeds:
        from benchmarks.fuzzing.corpus import write_csvgen_seeds

        print(f"wrote {len(write_csvgen_seeds())} seeds")
        return 0
    if args.replay or args.minimize:
        return _replay_or_minimize(args.replay or args.minimize, minimize=args.minimize is not None)
    return _run(args, argv)


def _run(args: argparse.Namespace, argv: list[str] | None) -> int:
    from benchmarks.fuzzing import results
    from benchmarks.fuzzing.configs import Rates
    from benchmarks.fuzzing.runner import Runner

    command = "python -m benchmarks.fuzz " + " ".join(sys.argv[1:] if argv is None else argv)
    out = None if args.out == "-" else Path(args.out)
    extra = {"host": host_info(), "versions": package_versions(),
             "fuzzer": "mutational (havoc + CSV dictionary) with behavioural feedback; see benchmarks/fuzz.py",
             "save_dir": str(args.save_dir)}

    def progress(runner: Runner) -> None:
        p = results.payload(runner, complete=False, command=command, extra=extra)
        print(f"[{time.strftime('%H:%M:%S')}] {p['cases_run']:,}/{p['cases_target']:,} cases, "
              f"{p['cases_per_s']:,.0f}/s, crashes {p['crashes']}, hangs {p['hangs']}, "
              f"undocumented {p['undocumented_mismatches']}, harness errors {p['harness_errors']}", flush=True)
        if out is not None:
            results.write(p, out)

    runner = Runner(args.cases, workers=args.workers, seed=args.seed, batch=args.batch,
                    case_timeout=args.case_timeout, rates=Rates().scaled(args.slow_paths),
                    save_dir=args.save_dir, progress_every=args.progress_every, on_progress=progress,
                    log=lambda line: print(line, flush=True))
    runner.run()
    p = results.payload(runner, complete=True, command=command, extra=extra)
    if out is not None:
        results.write(p, out)
        print(f"wrote {out} and {out.with_suffix('.md')}")
    print(results.markdown(p))
    failed = p["crashes"] + p["hangs"] + p["undocumented_mismatches"] + p["harness_errors"]
    return 1 if failed else 0


def _replay_or_minimize(path: Path, *, minimize: bool) -> int:
    from benchmarks.fuzzing.configs import ReadConfig
    from benchmarks.fuzzing.judge import Judge
    from benchmarks.fuzzing.minimize import minimize as shrink

    data = path.read_bytes()
    meta = json.loads(path.with_suffix(".json").read_text()) if path.with_suffix(".json").exists() else {}
    config = ReadConfig.from_json(meta.get("config", {}))
    judge = Judge()
    try:
        verdict = judge.run(data, config)
        print(f"{path}: {len(data)} bytes, {config.describe()}\n  {verdict.label}\n  {verdict.detail}")
        if minimize and verdict.failed:
            small, small_config = shrink(judge, data, config, verdict.kind)
            out = path.with_name(path.stem + ".min.csv")
            out.write_bytes(small)
            out.with_suffix(".json").write_text(json.dumps({**meta, "config": small_config.to_json(),
                                                            "minimized_from": str(path)}, indent=2) + "\n")
            print(f"minimized to {len(small)} bytes ({small_config.describe()}): {small!r}\n  -> {out}")
    finally:
        judge.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
