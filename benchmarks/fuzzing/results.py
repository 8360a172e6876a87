"""The results files of a fuzz run: ``fuzz.json`` (everything) and ``fuzz.md`` (a short summary).

>>> payload = {"complete": True, "cases_run": 10, "cases_target": 10, "elapsed_s": 2.0, "cases_per_s": 5.0,
...            "crashes": 0, "hangs": 0, "undocumented_mismatches": 0, "harness_errors": 0, "by_path": {},
...            "documented": {}, "known_bugs": {}, "failures": {}, "command": "python -m benchmarks.fuzz", "seed": 0,
...            "workers": 1, "lost_with_worker": 0, "saved": []}
>>> print(markdown(payload).splitlines()[0])
# Differential fuzzing of `arrow_bridge.read_csv` (complete)
"""
from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from benchmarks.fuzzing.runner import Runner


def payload(runner: Runner, *, complete: bool, command: str, extra: dict[str, Any]) -> dict[str, Any]:
    """Everything about the run so far, as a JSON-able dict."""
    totals = runner.totals
    documented = {k.split(":", 1)[1]: n for k, n in sorted(totals.verdicts.items()) if k.startswith("documented:")}
    known = {k.split(":", 1)[1]: n for k, n in sorted(totals.verdicts.items()) if k.startswith("known_bug:")}
    harness = totals.failure_kinds.get("harness_error", 0)
    elapsed = max(runner.elapsed, 1e-9)
    return {
        "benchmark": "fuzz",
        "complete": complete,
        "command": command,
        "seed": runner.seed,
        "workers": runner.n_workers,
        "cases_target": runner.cases,
        "cases_run": totals.cases,
        "elapsed_s": round(runner.elapsed, 1),
        "cases_per_s": round(totals.cases / elapsed, 1),
        "by_path": {path: {"cases": n, "seconds": round(s, 1), "cases_per_s": round(n / s, 1) if s else None}
                    for path, (n, s) in sorted(totals.by_path.items())},
        "checks": dict(sorted(totals.checks.items())),
        "agree": totals.verdicts.get("agree", 0),
        "documented": documented,
        "known_bugs": known,
        "failures": dict(sorted(totals.failure_kinds.items())),
        "crashes": len(totals.crashes),
        "hangs": len(totals.hangs),
        "undocumented_mismatches": totals.failure_count() - harness,
        "harness_errors": harness,
        "lost_with_worker": totals.verdicts.get("lost_with_worker", 0),
        "crash_cases": totals.crashes,
        "hang_cases": totals.hangs,
        "saved": [f.get("saved_as") for f in totals.failures if f.get("saved_as")]
        + [c.get("saved_as") for c in totals.crashes + totals.hangs if c.get("saved_as")],
        "failure_examples": [{k: f[k] for k in ("kind", "index", "detail", "config")} | {"data": f["data"][:400]}
                             for f in totals.failures[:20]],
        "slowest_case": {"seconds": round(totals.slowest[0], 3), "index": totals.slowest[1]},
        "worker_starts": totals.worker_starts,
        "max_worker_rss_mb": round(totals.max_rss_kib / 1024, 1),
        "case_timeout_s": runner.case_timeout,
        "rates": asdict(runner.rates),
        **extra,
    }


def markdown(p: dict[str, Any]) -> str:
    """A short human summary of :func:`payload`."""
    state = "complete" if p["complete"] else f"in progress: {p['cases_run']:,} of {p['cases_target']:,}"
    lines = [
        f"# Differential fuzzing of `arrow_bridge.read_csv` ({state})",
        "",
        f"`{p['command']}` (seed {p['seed']}, {p['workers']} worker process(es))",
        "",
        "| | |",
        "| --- | --- |",
        f"| cases run | {p['cases_run']:,} |",
        f"| wall time | {p['elapsed_s'] / 60:.1f} min ({p['cases_per_s']:,.0f} cases/s) |",
        f"| crashes | {p['crashes']} |",
        f"| hangs | {p['hangs']} |",
        f"| undocumented mismatches | {p['undocumented_mismatches']} |",
        f"| harness errors | {p['harness_errors']} |",
        f"| cases lost with a killed worker | {p['lost_with_worker']} |",
        "",
        "Cases by path (seconds inside the worker):",
        "",
        "| path | cases | seconds | cases/s |",
        "| --- | --- | --- | --- |",
    ]
    for path, row in p["by_path"].items():
        lines.append(f"| {path} | {row['cases']:,} | {row['seconds']:,} | {row['cases_per_s']} |")
    if p.get("checks"):
        lines += ["", "Comparisons made: " + ", ".join(f"{k} {n:,}" for k, n in p["checks"].items()) + "."]
    lines += ["", "Documented differences seen (benchmarks/fuzzing/differences.py):", ""]
    lines += [f"* `{name}`: {n:,}" for name, n in p["documented"].items()] or ["* none"]
    lines += ["", "Open bugs already reported (benchmarks/fuzzing/known_bugs.py; xfail tests):", ""]
    lines += [f"* `{name}`: {n:,}" for name, n in p.get("known_bugs", {}).items()] or ["* none seen"]
    lines += ["", "Failures by kind:", ""]
    lines += [f"* `{kind}`: {n:,}" for kind, n in p["failures"].items()] or ["* none"]
    if p["saved"]:
        lines += ["", "Saved cases:", ""] + [f"* `{path}`" for path in p["saved"]]
    return "\n".join(lines) + "\n"


def write(p: dict[str, Any], json_path: Path) -> None:
    """Writes ``json_path`` and the markdown summary beside it (same name, ``.md``)."""
    import json

    json_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = json_path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(p, indent=2, default=str) + "\n")
    tmp.replace(json_path)
    json_path.with_suffix(".md").write_text(markdown(p))
