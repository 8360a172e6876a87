"""String search (Biscuit's Table V) on a generated web log: ``arrow_bridge.grep`` beside GNU grep.

Usage::

    python -m benchmarks.grep                    # 1 GB log, every case, best of 3
    python -m benchmarks.grep --size 200MB --repeat 1 --cases rare
    python -m benchmarks.grep --model-only       # redo the model after a profile changed

Biscuit (Gu et al., ISCA'16, Sec. V.C, Table V) searches 7.8 GiB of web logs
with its SSD's per-channel pattern matcher in 2.3 s, against 12.2 s for Linux
``grep`` on the host: 5.3x unloaded, 8.3x with 24 background threads. This
script

1. generates a web log in Apache's combined format (seeded, ``data/``);
2. times ``LC_ALL=C grep -F -c`` and ``grep -F -n`` (output to a file: grep
   stops at the first match when it writes to /dev/null) beside
   ``grep(count=True)`` and ``grep()`` (an Arrow Table) on this host, best of
   ``--repeat`` in wall and in CPU time, page cache warm, each answer checked
   against grep's; the two filters by keyword count; cycles per unit (the
   profiles' search prices);
3. models the search on the ``biscuit-pm`` profile: the device (matcher)
   against the host baseline, from the real run's work counters;

and writes ``benchmarks/results/grep.json`` and ``grep.md``.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from benchmarks.common import DATA_DIR, MB, RESULTS_DIR, host_info, package_versions, warm_page_cache, write_result

DEFAULT_SIZE = 1_000 * MB
SEED = 20160618  # ISCA'16
LINES_PER_CHUNK = 500_000
#: The searches timed: name -> (keywords, what it shows).
CASES = {
    "rare": (["sqlmap"], "one rare keyword (an attack tool's user agent, ~0.02% of lines): Table V's kind of search"),
    "common": ([" 404 "], "one common keyword (~6% of lines): output-heavy"),
    "pair": (["wp-login.php", "sqlmap"], "two keywords: the most Biscuit's matcher takes beside the line break"),
    "many": (["sqlmap", "Nikto", "wp-login.php", "/etc/passwd", "union%20select", "../..", "%3Cscript", "cmd.exe",
              "xmlrpc.php", "phpmyadmin", "/.env", "/.git/", "eval(", "base64_decode", "${jndi:", "/cgi-bin/"],
             "sixteen keywords (a scanner's signatures): the hashed filter"),
}


# --------------------------------------------------------------------------
# The web log.
# --------------------------------------------------------------------------
def _weighted(rng: np.random.Generator, values: list[str], weights: list[float], n: int) -> pa.Array:
    """``n`` draws from ``values`` with ``weights`` (a dictionary decode, no Python per line)."""
    p = np.asarray(weights, dtype=float)
    codes = rng.choice(len(values), size=n, p=p / p.sum())
    return pc.take(pa.array(values), pa.array(codes))


def _paths(rng: np.random.Generator) -> tuple[list[str], list[float]]:
    """Request paths: a Zipf-like catalogue, static files, an API, and rare attack probes."""
    paths = [f"/products/{cat}/{item}" for cat in ("shoes", "books", "garden", "toys", "audio", "kitchen")
             for item in range(400)]
    paths += [f"/static/js/app.{rng.integers(1 << 32):08x}.js" for _ in range(60)]
    paths += [f"/static/img/banner-{i}.jpg" for i in range(80)]
    paths += [f"/api/v1/users/{i}/orders?page={i % 7}" for i in range(800)]
    paths += ["/", "/index.html", "/cart", "/checkout", "/login", "/search?q=red+shoes", "/favicon.ico"]
    weights = list(1.0 / np.arange(1, len(paths) + 1) ** 0.8)
    probes = ["/wp-login.php", "/xmlrpc.php", "/phpmyadmin/index.php", "/.env", "/.git/config",
              "/cgi-bin/test.cgi", "/index.php?page=../../etc/passwd", "/search?q=1%20union%20select%20password",
              "/search?q=%3Cscript%3Ealert(1)%3C/script%3E", "/scripts/cmd.exe?c=dir", "/?x=${jndi:ldap://x}"]
    total = sum(weights)
    paths += probes
    weights += [total * 0.0002] * len(probes)  # each probe ~0.02% of requests
    return paths, weights


AGENTS = [
    ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/118.0 Safari/537.36", 40),
    ("Mozilla/5.0 (Macintosh; Intel Mac OS X 13_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 "
     "Safari/605.1.15", 20),
    ("Mozilla/5.0 (X11; Linux x86_64; rv:119.0) Gecko/20100101 Firefox/119.0", 10),
    ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148", 18),
    ("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", 6),
    ("Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", 3),
    ("curl/8.4.0", 2),
    ("python-requests/2.31.0", 1),
    ("sqlmap/1.7.2#stable (https://sqlmap.org)", 0.02),
    ("Mozilla/5.00 (Nikto/2.5.0) (Evasions:None) (Test:000001)", 0.02),
]


def weblog_chunk(rng: np.random.Generator, n: int, first_second: int) -> pa.Array:
    """``n`` lines of an Apache combined log (each ending in a line break), one
    second apart on average from ``first_second`` (Unix time)."""
    octets = [pc.cast(pa.array(rng.integers(1, 255, n)), pa.string()) for _ in range(4)]
    ips = pc.binary_join_element_wise(*octets, ".")
    seconds = first_second + np.cumsum(rng.integers(0, 3, n))
    stamps = pc.strftime(pa.array(seconds.astype("datetime64[s]")), format="[%d/%b/%Y:%H:%M:%S +0000]")
    methods = _weighted(rng, ["GET", "POST", "HEAD", "PUT", "DELETE"], [85, 10, 3, 1, 1], n)
    paths = _weighted(rng, *_paths(np.random.default_rng(SEED)), n)
    statuses = _weighted(rng, ["200", "304", "404", "301", "500", "403"], [85, 5, 6, 2, 1, 1], n)
    sizes = pc.cast(pa.array(rng.integers(0, 60000, n)), pa.string())
    referers = _weighted(rng, ["-", "https://www.example.com/", "https://www.google.com/",
                               "https://www.example.com/products/shoes/12", "https://duckduckgo.com/"],
                         [40, 25, 20, 10, 5], n)
    agents = _weighted(rng, [a for a, _ in AGENTS], [w for _, w in AGENTS], n)
    request = pc.binary_join_element_wise(methods, paths, "HTTP/1.1", " ")
    quoted = [pc.binary_join_element_wise("\"", column, "\"", "") for column in (request, referers, agents)]
    return pc.binary_join_element_wise(ips, "-", "-", stamps, quoted[0], statuses, sizes, quoted[1], quoted[2],
                                       pa.scalar("\n"), " ")


def make_weblog(path: Path, size: int, seed: int = SEED) -> Path:
    """A web log of about ``size`` bytes (whole lines) at ``path``, made once (seeded)."""
    if path.exists() and abs(path.stat().st_size - size) < 1 << 20:
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    tmp = path.with_suffix(".tmp")
    written, second = 0, 1_600_000_000
    with open(tmp, "wb") as out:
        while written < size:
            chunk = weblog_chunk(rng, LINES_PER_CHUNK, second)
            second += 2 * LINES_PER_CHUNK
            end = int(np.frombuffer(chunk.buffers()[1], dtype=np.int32)[chunk.offset + len(chunk)])
            data = chunk.buffers()[2].to_pybytes()[:end]
            data = data.replace(b" \n", b"\n")  # the join put a space before each line break
            out.write(data[: size - written] if written + len(data) > size else data)
            written += min(len(data), size - written)
    with open(tmp, "rb+") as f:  # end on a whole line
        f.seek(max(0, written - 4096))
        tail = f.read()
        f.truncate(max(0, written - 4096) + tail.rfind(b"\n") + 1)
    os.replace(tmp, path)
    return path


# --------------------------------------------------------------------------
# Timing on this host.
# --------------------------------------------------------------------------
def cpu_seconds() -> float:
    """CPU seconds used so far by this process (all threads) and its finished children."""
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


def best_of(repeat: int, call: Callable[[], Any]) -> tuple[float, float, Any]:
    """The shortest wall time and the smallest CPU time of ``repeat`` runs of ``call``
    (the page cache warm), and its result. On a shared machine the CPU time is the
    steadier figure: waiting for a core counts in wall time only."""
    wall, cpu, result = float("inf"), float("inf"), None
    for _ in range(repeat):
        started, used = time.perf_counter(), cpu_seconds()
        result = call()
        wall, cpu = min(wall, time.perf_counter() - started), min(cpu, cpu_seconds() - used)
    return wall, cpu, result


def run_grep(args: list[str], path: Path, out: Path) -> bytes:
    """``LC_ALL=C grep -F ARGS PATH`` with its output in a file (grep stops at the first
    match when its output is /dev/null, so it must go somewhere real); returns the output."""
    with open(out, "wb") as sink:
        done = subprocess.run(["grep", "-F", *args, str(path)], stdout=sink, env={"LC_ALL": "C"})
    if done.returncode not in (0, 1):
        raise RuntimeError(f"grep {args} failed ({done.returncode})")
    return out.read_bytes()


def time_case(path: Path, keywords: list[str], repeat: int, threads: tuple[int, ...]) -> dict[str, Any]:
    """grep -c, grep -n and ours (count and Table, per thread count) on one keyword set; answers checked."""
    from arrow_bridge.cli import grep_output
    from arrow_bridge.search import grep

    flags = [part for keyword in keywords for part in ("-e", keyword)]
    sink = DATA_DIR / "grep-output.tmp"
    size = path.stat().st_size
    row: dict[str, Any] = {"keywords": keywords}

    def timed(name: str, call: Callable[[], Any]) -> Any:
        row[f"{name}_s"], row[f"{name}_cpu_s"], result = best_of(repeat, call)
        return result

    row["matching_lines"] = int(timed("grep_count", lambda: run_grep(["-c", *flags], path, sink)))
    printed = timed("grep_lines", lambda: run_grep(["-n", *flags], path, sink))
    row["grep_output_bytes"] = len(printed)
    for n in threads:
        count = timed(f"ours_count_{n}t", lambda: grep(path, keywords, count=True, n_threads=n))
        assert count == row["matching_lines"], (keywords, count, row["matching_lines"])
        table = timed(f"ours_table_{n}t", lambda: grep(path, keywords, n_threads=n))
        assert b"".join(grep_output(table)) == printed, keywords  # grep -n's very bytes
        del table
    sink.unlink()
    for key in [k for k in row if k.endswith("_s") and not k.endswith("cpu_s")]:
        row[key[:-2] + "_MBps"] = size / MB / row[key]
    return row


def strategy_speeds(path: Path, repeat: int) -> list[dict[str, Any]]:
    """The pair and hashed filters on 1-32 IP-address prefixes (common bytes: the pair
    filter's hard case), one thread: where ``PAIR_LIMIT`` comes from."""
    from arrow_bridge.kernels.search import COUNT, HASHED, PAIRS
    from arrow_bridge.search import SearchPlan, SearchText, run_tasks

    rng = np.random.default_rng(7)
    prefixes = [f"{a}.{b}.{c}." for a, b, c in rng.integers(1, 255, (32, 3))]
    rows = []
    with SearchText(path) as text:
        for k in (1, 4, 8, 12, 16, 24, 32):
            row: dict[str, Any] = {"keywords": k}
            for name, strategy in (("pairs", PAIRS), ("hashed", HASHED)):
                plan = SearchPlan.build(prefixes[:k], strategy=strategy)
                _, seconds, _ = best_of(repeat, lambda: run_tasks(text, plan, COUNT, n_threads=1))
                row[f"{name}_MBps"] = text.text.size / MB / seconds  # per CPU second
            rows.append(row)
    return rows


def cpu_hz() -> float:
    """This host's core clock (``cpu MHz`` of /proc/cpuinfo), for cycles per unit."""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("cpu MHz"):
            return float(line.split(":")[1]) * 1e6
    return float("nan")


def unit_costs(path: Path, repeat: int) -> dict[str, float]:
    """Cycles per unit on this host, for the profiles' price tables: ours (one thread)
    and GNU grep's, per byte searched (a rare keyword), per matching line (count mode,
    every line matching) and per byte of matching lines given back (a Table; grep: printed)."""
    from arrow_bridge.search import grep

    hz, size = cpu_hz(), path.stat().st_size
    sink = DATA_DIR / "grep-output.tmp"

    def cpu(call: Callable[[], Any]) -> tuple[float, Any]:
        _, seconds, result = best_of(repeat, call)
        return seconds, result

    lines = int(run_grep(["-c", "HTTP/1.1"], path, sink))
    rare, _ = cpu(lambda: grep(path, "sqlmap", count=True, n_threads=1))
    every, _ = cpu(lambda: grep(path, "HTTP/1.1", count=True, n_threads=1))
    table, _ = cpu(lambda: grep(path, "HTTP/1.1", n_threads=1))
    grep_rare, _ = cpu(lambda: run_grep(["-c", "sqlmap"], path, sink))
    grep_every, _ = cpu(lambda: run_grep(["-c", "HTTP/1.1"], path, sink))
    grep_printed, printed = cpu(lambda: run_grep(["-n", "HTTP/1.1"], path, sink))
    sink.unlink()
    return {
        "clock_hz": hz, "lines": lines,
        "ours_cycles_per_byte_searched": rare * hz / size,
        "ours_cycles_per_matching_line": (every - rare) * hz / lines,
        "ours_cycles_per_byte_emitted": (table - every) * hz / size,
        "grep_cycles_per_byte_searched": grep_rare * hz / size,
        # grep skips through a line by its keyword's bytes (Boyer-Moore): a line costs it what its
        # keyword lets it skip, so "every line matching" can take less time than a rare keyword
        "grep_cycles_per_matching_line": (grep_every - grep_rare) * hz / lines,
        "grep_cycles_per_byte_printed": (grep_printed - grep_every) * hz / len(printed),
    }


# --------------------------------------------------------------------------
# The model: Biscuit's device against its host.
# --------------------------------------------------------------------------
#: [B] Table V: execution time (s) of Conv (grep on the host) and Biscuit, by background threads.
TABLE_V = {0: (12.2, 2.3), 6: (14.8, 2.3), 12: (16.3, 2.3), 18: (18.8, 2.3), 24: (19.9, 2.4)}
TABLE_V_BYTES = 7.8 * 2**30


def modeled(path: Path, keywords: list[str], **overrides: Any) -> dict[str, Any]:
    """The search run for real on an emulated biscuit-pm (the device) and modeled
    for the host alone, with profile ``overrides``: modeled seconds and what bound them."""
    from device_emulator import ComputationalSSD
    from ndp_core.report import collect

    from arrow_bridge.search import grep

    row: dict[str, Any] = {}
    for side in ("device", "host"):
        ssd = ComputationalSSD("biscuit-pm", **overrides)
        try:
            with collect() as runs:
                grep(path, keywords, count=True, device=ssd, split=side)
        finally:
            ssd.close()
        report = runs.total
        row[f"{side}_s"] = report.makespan_s
        row[f"{side}_busy"] = {k: v for k, v in report.utilization.items() if v}
        if side == "device":
            row["matcher"] = report.meta.get("matcher")
    row["speedup"] = row["host_s"] / row["device_s"]
    return row


def model_rows(path: Path) -> list[dict[str, Any]]:
    """biscuit-pm against its host: Table V's host (grep, one core) unloaded and loaded,
    its twelve cores, and a host running this project's kernel instead of grep."""
    from device_emulator import load_profile

    ours = load_profile("modern-gen4")["host.cycles"]  # this project's measured search table
    rows = []
    for label, keywords, overrides in (
            ("Table V host: grep on 1 core (rare keyword)", ["sqlmap"], {"host.cores": 1}),
            ("... two keywords (the matcher's most)", ["wp-login.php", "sqlmap"], {"host.cores": 1}),
            ("... sixteen keywords (matcher off: the cores search)", CASES["many"][0], {"host.cores": 1}),
            ("grep on all 12 host cores", ["sqlmap"], {}),
            ("host runs our kernel, 1 core", ["sqlmap"], {"host.cores": 1, **{
                f"host.cycles.{name}": ours[name] for name in ("bytes_searched", "lines_matched", "bytes_emitted")}}),
    ):
        row = modeled(path, keywords, **overrides)
        rows.append({"case": label, "keywords": keywords, "overrides": overrides, **row})
    for threads, (conv, biscuit) in TABLE_V.items():
        if threads:  # a loaded host: its grep as slow as Table V's (by construction: its figure is the input)
            slowdown = conv / TABLE_V[0][0]
            row = modeled(path, ["sqlmap"], **{"host.cores": 1, "host.clock_MHz": 2500.0 / slowdown})
            rows.append({"case": f"Table V host with {threads} background threads (clock / {slowdown:.2f})",
                         "keywords": ["sqlmap"], "overrides": {"host.clock_MHz": 2500.0 / slowdown}, **row,
                         "paper_speedup": conv / biscuit})
    rows[0]["paper_speedup"] = TABLE_V[0][0] / TABLE_V[0][1]
    return rows


# --------------------------------------------------------------------------
# Results.
# --------------------------------------------------------------------------
def markdown(payload: dict[str, Any]) -> str:
    size = payload["file_bytes"]
    threads = payload["threads"]
    lines = ["# String search: `arrow_bridge.grep` beside GNU grep, and Biscuit's Table V modeled",
             "",
             f"`python -m benchmarks.grep` on {payload['host']['cpu_model']} ({payload['host']['cpu_count']} cores, "
             f"load average {payload['host']['loadavg'][0]:.2f} at the start), {payload['grep_version']}, "
             f"`LC_ALL=C`. File: a generated Apache combined log, {size / MB:,.0f} MB, "
             f"{payload['file_lines']:,} lines. Best of {payload['repeat']}, page cache warm; every answer of ours "
             "equals grep's (counts; for lines, `grep -n`'s very bytes). MB/s = file size / time.",
             "",
             "## On this host",
             "",
             "| case | matching lines | grep -c | grep -n | ours count, " + " / ".join(f"{n} thr" for n in threads)
             + " | ours Table, " + " / ".join(f"{n} thr" for n in threads)
             + " | ours count / grep -c, 1 thr: wall (CPU) | ours Table / grep -n, 1 thr: wall (CPU) |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    one = threads[0]
    for name, row in payload["cases"].items():
        count = " / ".join(f"{row[f'ours_count_{n}t_MBps']:,.0f}" for n in threads)
        table = " / ".join(f"{row[f'ours_table_{n}t_MBps']:,.0f}" for n in threads)
        ratios = [f"{row[f'grep_{g}_s'] / row[f'ours_{o}_{one}t_s']:.2f}x "
                  f"({row[f'grep_{g}_cpu_s'] / row[f'ours_{o}_{one}t_cpu_s']:.2f}x)"
                  for g, o in (("count", "count"), ("lines", "table"))]
        lines.append(f"| {name} ({len(row['keywords'])} kw) | {row['matching_lines']:,} | "
                     f"{row['grep_count_MBps']:,.0f} MB/s | {row['grep_lines_MBps']:,.0f} MB/s | {count} MB/s | "
                     f"{table} MB/s | {ratios[0]} | {ratios[1]} |")
    lines += ["", "Cases: " + "; ".join(f"**{name}**: {CASES[name][1]}" for name in payload["cases"]), ""]
    if payload.get("strategies"):
        lines += ["### The two filters (one thread, IP-address prefixes; MB per CPU second)", "",
                  "| keywords | pairs MB/s | hashed MB/s |", "| ---: | ---: | ---: |"]
        lines += [f"| {r['keywords']} | {r['pairs_MBps']:,.0f} | {r['hashed_MBps']:,.0f} |"
                  for r in payload["strategies"]]
        lines.append("")
    if payload.get("unit_costs"):
        u = payload["unit_costs"]
        lines += ["### Cycles per unit on this host (CPU time x clock: the profiles' search prices)", "",
                  "| | per byte searched | per matching line (count) | per byte given back |",
                  "| --- | ---: | ---: | ---: |",
                  f"| ours, 1 thread | {u['ours_cycles_per_byte_searched']:.2f} | "
                  f"{u['ours_cycles_per_matching_line']:.0f} | {u['ours_cycles_per_byte_emitted']:.2f} (Table) |",
                  f"| GNU grep | {u['grep_cycles_per_byte_searched']:.2f} | "
                  f"{_per_line(u['grep_cycles_per_matching_line'])} | "
                  f"{u['grep_cycles_per_byte_printed']:.2f} (printed) |",
                  "", f"At {u['clock_hz'] / 1e9:.2f} GHz; rare keyword `sqlmap`, every line matching `HTTP/1.1` "
                  f"({u['lines']:,} lines).", ""]
    if payload.get("model"):
        lines += ["## Modeled: biscuit-pm's matcher against its host", "",
                  "The same search run functionally on an emulated `biscuit-pm` (split device: the per-channel "
                  "matcher at 3.64 GB/s, [B] Table V) and modeled for the host alone (split host: pages over "
                  "PCIe Gen3 x4, searched at the host's price, 3.64 cycles/byte for grep, [B] Table V).", "",
                  "| host | modeled host | modeled device | speedup | paper | device bound by |",
                  "| --- | ---: | ---: | ---: | ---: | --- |"]
        for row in payload["model"]:
            bound = max(row["device_busy"], key=row["device_busy"].get)
            paper = f"{row['paper_speedup']:.1f}x" if "paper_speedup" in row else ""
            lines.append(f"| {row['case']} | {row['host_s'] * 1e3:,.0f} ms | {row['device_s'] * 1e3:,.0f} ms | "
                         f"{row['speedup']:.2f}x | {paper} | {bound} |")
        lines.append("")
    return "\n".join(lines)


def _per_line(cycles: float) -> str:
    return "does not separate (its skip depends on the keyword)" if cycles < 0 else f"{cycles:.0f}"


def grep_version() -> str:
    return subprocess.run(["grep", "--version"], capture_output=True, text=True).stdout.splitlines()[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="1000MB", help="log size (default 1000MB)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cases", default=",".join(CASES), help=f"of {', '.join(CASES)}")
    parser.add_argument("--threads", default="1,2", help="our thread counts (default 1,2)")
    parser.add_argument("--no-model", action="store_true", help="skip the biscuit-pm model")
    parser.add_argument("--no-extras", action="store_true", help="skip the filter and unit-cost measurements")
    parser.add_argument("--model-only", action="store_true",
                        help="keep results/grep.json's host timings, redo the model (after a profile changed)")
    args = parser.parse_args(argv)
    from arrow_bridge.cli import parse_size

    if args.model_only:
        payload = json.loads((RESULTS_DIR / "grep.json").read_text())
        payload["model"] = model_rows(Path(payload["file"]))
        write_result("grep.json", payload)
        (RESULTS_DIR / "grep.md").write_text(markdown(payload))
        print(markdown(payload))
        return 0
    size = parse_size(args.size)
    path = make_weblog(DATA_DIR / f"weblog-{size // MB}MB.log", size)
    warm_page_cache(path)
    threads = tuple(int(n) for n in args.threads.split(","))
    payload: dict[str, Any] = {"host": host_info(), "versions": package_versions(), "grep_version": grep_version(),
                               "file": str(path), "file_bytes": path.stat().st_size, "repeat": args.repeat,
                               "threads": threads}
    with open(path, "rb") as f:
        payload["file_lines"] = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 24), b""))
    payload["cases"] = {}
    for name in args.cases.split(","):
        payload["cases"][name] = time_case(path, CASES[name][0], args.repeat, threads)
        print(name, {k: round(v) for k, v in payload["cases"][name].items() if k.endswith("MBps")}, flush=True)
    if not args.no_extras:
        payload["strategies"] = strategy_speeds(path, args.repeat)
        payload["unit_costs"] = unit_costs(path, args.repeat)
    if not args.no_model:
        payload["model"] = model_rows(path)
    write_result("grep.json", payload)
    (RESULTS_DIR / "grep.md").write_text(markdown(payload))
    print(markdown(payload))
    return 0


if __name__ == "__main__":
    sys.exit(main())
