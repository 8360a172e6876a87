"""Byte-level differential fuzzing of ``arrow_bridge.read_csv`` against pyarrow.

``python -m benchmarks.fuzz`` runs it (see :mod:`benchmarks.fuzz` for why the
fuzzer is a hand-written mutational one rather than atheris). The pieces:

* :mod:`~benchmarks.fuzzing.reference` - the test suite's reference helpers
  (``tests/arrow_bridge/csvgen.py``: record scanner, exact table comparison);
* :mod:`~benchmarks.fuzzing.configs` - one read configuration (path, split,
  block size, dialect, ...) and how configurations are drawn;
* :mod:`~benchmarks.fuzzing.mutate` - byte-level mutations over a seed corpus;
* :mod:`~benchmarks.fuzzing.corpus` - the seed corpus and the inputs kept
  because they showed new behaviour;
* :mod:`~benchmarks.fuzzing.differences` - THE list of documented, deliberate
  differences from pyarrow;
* :mod:`~benchmarks.fuzzing.known_bugs` - open bugs the fuzzer found (each
  with an ``xfail(strict=True)`` corpus case), counted apart from new failures;
* :mod:`~benchmarks.fuzzing.outcome` - a read's Table or error, and a mismatch;
* :mod:`~benchmarks.fuzzing.judge` - runs one case on every path it names and
  classifies the outcome against pyarrow;
* :mod:`~benchmarks.fuzzing.worker` / :mod:`~benchmarks.fuzzing.runner` - the
  child process that runs batches of cases and the parent's watchdog;
* :mod:`~benchmarks.fuzzing.minimize` - shrinks a failing input;
* :mod:`~benchmarks.fuzzing.results` - ``fuzz.json`` and ``fuzz.md``.
"""
