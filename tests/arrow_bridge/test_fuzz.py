"""The differential fuzzer (``benchmarks.fuzz``), run short and checked itself.

* A short seeded run in worker child processes (the same harness as the long
  ``python -m benchmarks.fuzz`` run, every path sampled more often): no
  crash, no hang, no undocumented mismatch, and the results files say so.
* The watchdog: a case that kills its worker and one that hangs are each
  caught, saved with their input and config, and the run goes on in a fresh
  worker.
* The documented differences (``benchmarks/fuzzing/differences.py``, the one
  list): each example is a real mismatch that its entry, and only it,
  explains; each entry refuses a near miss (right message, wrong input).
* The corpus: every seed agrees on every path; every case the fuzzer found
  (``fuzz_corpus/found/``) gives the verdict recorded beside it - a bug still
  open is an ``xfail(strict=True)`` naming it, and its entry in
  ``benchmarks/fuzzing/known_bugs.py`` (which keeps the short run green while
  the bug is open) must still match its case.
* The case maker is deterministic, and the fuzzer's docstring examples run.
"""
from __future__ import annotations

import doctest
import importlib
import json
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pytest

import arrow_bridge
from arrow_bridge import CsvParseError
from benchmarks import fuzz
from benchmarks.fuzzing.configs import ReadConfig, Rates
from benchmarks.fuzzing.corpus import FOUND_DIR, SEEDS_DIR
from benchmarks.fuzzing.differences import DOCUMENTED, explain
from benchmarks.fuzzing.judge import Judge, case_convert_options, compare, read_referee
from benchmarks.fuzzing.known_bugs import KNOWN_BUGS
from benchmarks.fuzzing.outcome import Mismatch, Outcome
from benchmarks.fuzzing.runner import Runner
from benchmarks.fuzzing.worker import CaseMaker

SHORT_RUN_CASES = 15_000
SHORT_RUN_SEED = 2025
CORPUS_LIMIT_BYTES = 200_000


@pytest.fixture(scope="module")
def judge():
    judge = Judge()
    yield judge
    judge.close()


# ---- the short run ---------------------------------------------------------------------------
def test_a_short_seeded_run_finds_no_crash_hang_or_undocumented_mismatch(tmp_path):
    out = tmp_path / "fuzz.json"
    code = fuzz.main(["--cases", str(SHORT_RUN_CASES), "--seed", str(SHORT_RUN_SEED), "--workers", "1",
                      "--slow-paths", "3", "--out", str(out), "--save-dir", str(tmp_path / "failures"),
                      "--progress-every", "1000"])
    result = json.loads(out.read_text())
    problems = {k: result[k] for k in ("crashes", "hangs", "undocumented_mismatches", "harness_errors")}
    assert problems == dict.fromkeys(problems, 0), (
        f"{problems}; failures {result['failures']}; examples {result['failure_examples']}")
    assert code == 0 and result["complete"] and result["cases_run"] == SHORT_RUN_CASES
    assert set(result["by_path"]) == {"host", "device", "ranges"}
    assert result["checks"]["writer"] > 0 and result["checks"]["device_vs_host"] > 0
    # Every case agreed, or differed as documented, or showed a bug already reported (known_bugs.py).
    assert result["agree"] + sum(result["documented"].values()) + sum(result["known_bugs"].values()) == \
        SHORT_RUN_CASES
    assert "| crashes | 0 |" in out.with_suffix(".md").read_text()


# ---- the watchdog --------------------------------------------------------------------------------
def test_a_crash_and_a_hang_are_caught_saved_and_the_run_goes_on(tmp_path):
    runner = Runner(30, batch=10, seed=1, case_timeout=3.0, save_dir=tmp_path,
                    faults={0: "crash", 17: "hang"}, log=lambda line: None)
    totals = runner.run()
    assert [c["index"] for c in totals.crashes] == [0] and [h["index"] for h in totals.hangs] == [17]
    # Cases 10-16 ran before the hang, but their results died with the worker.
    assert totals.verdicts["lost_with_worker"] == 7
    assert totals.cases == 30 - 2 - 7 and totals.worker_starts == 3
    for record in totals.crashes + totals.hangs:
        saved = Path(record["saved_as"])
        meta = json.loads(saved.with_suffix(".json").read_text())
        assert meta["kind"] in ("crash", "hang") and meta["index"] == record["index"]
    data, config = CaseMaker(1, Rates(), []).make(0)  # the first case of a fresh worker replays from the seed
    crash = Path(totals.crashes[0]["saved_as"])
    assert crash.read_bytes() == data and json.loads(crash.with_suffix(".json").read_text())["config"] == \
        config.to_json()


# ---- the documented differences --------------------------------------------------------------------
@pytest.mark.parametrize("difference", DOCUMENTED, ids=lambda d: d.name)
def test_each_documented_difference_explains_its_example_and_only_it_does(judge, difference):
    config = ReadConfig(**difference.example_config)
    verdict = judge.run(difference.example, config)
    assert (verdict.kind, verdict.difference) == ("documented", difference.name), verdict
    mismatch = _mismatch(difference.example, config)
    assert compare(mismatch.ours, mismatch.theirs) is not None  # a real disagreement
    others = [d.name for d in DOCUMENTED if d is not difference and d.explains(mismatch)]
    assert others == []
    assert difference.reason and difference.documented_in


def _mismatch(data: bytes, config: ReadConfig) -> Mismatch:
    """The example read on the host path, as the judge sees it."""
    convert = case_convert_options(data, config)
    theirs = read_referee(data, **config.referee_options(convert))
    ours = Outcome.of(lambda: arrow_bridge.read_csv(data, **config.ours_options(convert)))
    return Mismatch(data, config, ours, theirs, read_referee, compare, convert)


def _near_miss(data: bytes, reason: str, config: ReadConfig = ReadConfig(), theirs=None) -> Mismatch:
    """Our error message claims a difference that the input does not have."""
    ours = Outcome(error=CsvParseError("<bytes>", 1, None, 0, reason))
    theirs = theirs or Outcome(table=pa.table({"a": ["x"]}))
    return Mismatch(data, config, ours, theirs, read_referee, compare, config.convert_options(None))


@pytest.mark.parametrize("mismatch", [
    _near_miss(b'a\n"x"\n', "unterminated quoted field"),  # the quote is closed
    _near_miss(b"a,b\n1,\xff\n", "header is not valid UTF-8"),  # the header is valid
    _near_miss(b"a\xff\n1\n", "header is not valid UTF-8", ReadConfig(header=False)),  # no header
    _near_miss(b"x,y", "something", theirs=Outcome(error=ValueError("Empty CSV file or block: cannot infer "
                                                                      "number of columns"))),  # ours differs
    _near_miss(b'a\n"x\ny"\n', "something", ReadConfig(newlines_in_values=False)),  # referee used its default
    _near_miss(b"\xef\xbb\xbf", "something", theirs=Outcome(error=ValueError("truncated byte order mark"))),
    _near_miss(b'a,b\n"x",', "something", ReadConfig(convert="quoted_nulls")),  # ours is not pyarrow's + newline
    _near_miss(b"a,b\n1,2\n3\n", "something", ReadConfig(bad_lines="skip"),
               theirs=Outcome(error=ValueError("Expected 2 columns, got 1"))),  # the bad row is UTF-8
], ids=["quote-closed", "header-valid", "no-header", "ours-not-pyarrows-with-newline", "referee-default-block",
        "whole-bom", "last-field-ours-differs", "bad-row-is-utf8"])
def test_no_documented_difference_explains_a_near_miss(mismatch):
    assert explain(mismatch) is None


# ---- the corpus ----------------------------------------------------------------------------------
SEED_CONFIGS = [
    ReadConfig(),
    ReadConfig(block_size=3, newlines_in_values=False, writer=True, recheck_block=0),
    ReadConfig(header=False, source="bytesio", block_size=17, n_threads=2),
    ReadConfig(path="ranges", source="path", range_block=5, lookbehind=0),
    ReadConfig(path="device", source="path", split="dynamic", block_size=16, faults=True),
]


@pytest.mark.parametrize("config", SEED_CONFIGS, ids=lambda c: c.describe())
def test_every_seed_agrees_on_every_path(judge, config):
    seeds = sorted(SEEDS_DIR.glob("*.csv"))
    assert len(seeds) > 50
    failures = []
    for path in seeds:
        verdict = judge.run(path.read_bytes(), config)
        if verdict.failed:
            failures.append(f"{path.name}: {verdict.kind}: {verdict.detail[:300]}")
    assert failures == []


def _found_cases() -> list:
    params = []
    for path in sorted(FOUND_DIR.glob("*.csv")):
        meta = json.loads(path.with_suffix(".json").read_text())
        marks = [pytest.mark.xfail(strict=True, reason=meta["bug"])] if meta.get("bug") else []
        params.append(pytest.param(path, meta, marks=marks, id=path.stem))
    return params


@pytest.mark.parametrize("path,meta", _found_cases())
def test_found_cases_give_their_recorded_verdict(judge, path, meta):
    verdict = judge.run(path.read_bytes(), ReadConfig.from_json(meta["config"]))
    assert verdict.label == meta["expect"], verdict.detail


@pytest.mark.parametrize("bug", KNOWN_BUGS, ids=lambda b: b.name)
def test_each_known_bug_is_still_shown_by_its_case(judge, bug):
    """An entry whose case no longer fails must go (its xfail test passes then, strictly an error)."""
    path = FOUND_DIR / bug.case
    meta = json.loads(path.with_suffix(".json").read_text())
    assert meta.get("bug"), "a known bug's corpus case carries its description (and so its xfail)"
    verdict = judge.run(path.read_bytes(), ReadConfig.from_json(meta["config"]))
    assert verdict.label == f"known_bug:{bug.name}", verdict


def test_the_corpus_stays_small():
    files = [p for p in SEEDS_DIR.parent.rglob("*") if p.is_file()]
    assert sum(p.stat().st_size for p in files) < CORPUS_LIMIT_BYTES


# ---- determinism and docstrings -------------------------------------------------------------------
def test_cases_replay_from_the_seed():
    first, second = CaseMaker(7, Rates(), []), CaseMaker(7, Rates(), [])
    assert [first.make(i) for i in range(300)] == [second.make(i) for i in range(300)]
    configs = [first.make(i)[1] for i in range(3000)]
    assert {c.path for c in configs} == {"host", "device", "ranges"}
    assert {c.newlines_in_values for c in configs} == {True, False}
    assert all(ReadConfig.from_json(c.to_json()) == c for c in configs)


@pytest.mark.parametrize("module", ["configs", "corpus", "differences", "judge", "known_bugs", "minimize", "mutate",
                                    "outcome", "reference", "results", "runner", "worker"])
def test_docstring_examples(module):
    result = doctest.testmod(importlib.import_module(f"benchmarks.fuzzing.{module}"),
                             optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


def test_rates_scale_only_the_slow_paths():
    rates = Rates().scaled(3)
    assert rates.device == 3 * Rates().device and rates.small_block == Rates().small_block
    assert replace(rates, device=1.0).scaled(2).device == 1.0
