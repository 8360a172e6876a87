"""``arrow_bridge.grep`` against the real ``grep -F`` on generated files, on the host and
on emulated devices, at every task size; the kernel's counters and statuses; the
column filter."""
from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from arrow_bridge.kernels.search import COUNT, HASHED, LINES, PAIRS, PLAN, RESULT, SEARCH_COUNTERS
from arrow_bridge.kernels.search_app import search_storage_app
from arrow_bridge.search import (LINE_TAIL_BYTES, OutputRoom, SearchPlan, SearchText, TaskResult, filter_strings,
                                 grep, matcher_fits, run_tasks, search_buffer)
from device_emulator import ComputationalSSD, FaultPlan
from ndp_core.engine import Engine, Status
from ndp_core.report import collect

GREP = shutil.which("grep")
needs_grep = pytest.mark.skipif(GREP is None, reason="no grep binary")
ALPHABET = b"abcAB \r\n\n\nxyz-:"


def real_grep(path: Path, keywords: list[bytes], *, ignore_case: bool = False, count: bool = False,
              offsets: bool = False):
    """``LC_ALL=C grep -a -F -n`` (``-i``, ``-c``, ``-b`` as asked): ``[(line number, [offset,] line)]``
    or the count."""
    args = [GREP, "-a", "-F", "-n"] + ["-i"] * ignore_case + ["-c"] * count + ["-b"] * offsets
    for keyword in keywords:
        args += ["-e", keyword]
    done = subprocess.run([*args, str(path)], capture_output=True, env={"LC_ALL": "C"})
    assert done.returncode in (0, 1), done.stderr
    if count:
        return int(done.stdout)
    rows = []
    for line in done.stdout.split(b"\n")[:-1]:
        number, _, rest = line.partition(b":")
        if offsets:
            offset, _, rest = rest.partition(b":")
            rows.append((int(number), int(offset), rest))
        else:
            rows.append((int(number), rest))
    return rows


def rows_of(table: pa.Table) -> list[tuple]:
    return list(zip(*(table.column(name).to_pylist() for name in table.column_names)))


def random_case(rng: random.Random, size: int) -> tuple[bytes, list[bytes]]:
    """A file of short lines (CR, empty lines, no final break sometimes) and keywords, most taken from it."""
    data = bytes(rng.choice(ALPHABET) for _ in range(size))
    keywords = []
    for _ in range(rng.choice([1, 1, 2, 3, 5, 13, 30])):
        length = rng.choice([1, 2, 3, 5, 9])
        if data and rng.random() < 0.7:
            at = rng.randrange(len(data))
            keyword = data[at: at + length]
        else:
            keyword = bytes(rng.choice(b"abcAB xyz-:") for _ in range(length))
        keywords.append(keyword.replace(b"\n", b"").replace(b"\r", b"") or b"a")
    return data, keywords


@needs_grep
@pytest.mark.parametrize("seed", range(6))
def test_equals_grep_on_random_files(tmp_path, seed):
    rng = random.Random(seed)
    path = tmp_path / "text.txt"
    for _ in range(40):
        data, keywords = random_case(rng, rng.choice([0, 1, 7, 80, 2000, 9000]))
        path.write_bytes(data)
        ignore_case = rng.random() < 0.3
        # tiny tasks on small files (each task costs a kernel call from Python)
        block_size = rng.choice([1, 2, 3, None] if len(data) <= 100 else [None, 7, 64, 100, 1000])
        expected = real_grep(path, keywords, ignore_case=ignore_case, offsets=True)
        got = grep(path, keywords, ignore_case=ignore_case, binary=True, offsets=True, block_size=block_size,
                   n_threads=2)
        assert rows_of(got) == expected, (keywords, ignore_case, block_size)
        assert grep(path, keywords, ignore_case=ignore_case, count=True, block_size=block_size) == len(expected)


@needs_grep
def test_keywords_across_every_task_boundary(tmp_path):
    """A keyword straddling the cut between two tasks at each of its offsets, and
    lines longer than several tasks: found once, on the right line."""
    keyword = b"needle"
    block = 64
    parts = []
    for cut in range(1, 40):
        line = bytearray(b"." * (3 * block))
        at = 2 * block - (cut % len(keyword))  # where the cut falls inside the keyword
        line[at: at + len(keyword)] = keyword
        parts.append(bytes(line) if cut % 3 else b"x" * (cut * 7))
    text = b"\n".join(parts) + b"\nlast needle without a break"
    path = tmp_path / "cuts.txt"
    for offset in range(0, 7):  # shift the lines against the task grid
        path.write_bytes(b"-" * offset + text)
        expected = real_grep(path, [keyword])
        for block_size in (block, block + 1, 5, 4096):
            assert rows_of(grep(path, keyword, binary=True, block_size=block_size)) == expected


@needs_grep
def test_line_ends_and_edges(tmp_path):
    path = tmp_path / "edges.txt"
    cases = [b"", b"\n", b"\n\n\n", b"a", b"a\n", b"a\r\n\r\nb\r\n", b"ab\nab", b"\r", b"b\n" * 5 + b"b"]
    for data in cases:
        path.write_bytes(data)
        for keywords in ([b"a"], [b"b"], [b"\r"], [b""], [b"ab", b"a"], [b"zz"]):
            expected = real_grep(path, keywords)
            for block_size in (1, 2, 3, None):
                got = grep(path, keywords, binary=True, block_size=block_size)
                assert rows_of(got) == expected, (data, keywords, block_size)


def test_keywords_are_normalized_as_grep_reads_them():
    data = b"GET /a\npost /b\nPUT /c\n"
    assert rows_of(grep(data, "GET\nPUT")) == [(1, "GET /a"), (3, "PUT /c")]  # a line break: two keywords
    assert rows_of(grep(data, ["POST", "get"], ignore_case=True)) == [(1, "GET /a"), (2, "post /b")]
    assert grep(data, [""], count=True) == 3  # an empty keyword matches every line
    assert grep(data, ["/", "PUT /c"], count=True) == 3  # a keyword holding another adds nothing
    with pytest.raises(ValueError, match="at least one keyword"):
        grep(data, [])


def test_sources_and_types(tmp_path):
    data = "naïve café\nplain\ncafé au lait\n".encode()
    path = tmp_path / "utf8.txt"
    path.write_bytes(data)
    expected = [(1, "naïve café"), (3, "café au lait")]
    assert rows_of(grep(path, "café")) == expected
    assert rows_of(grep(str(path), "café")) == expected
    with open(path, "rb") as f:
        assert rows_of(grep(f, "café")) == expected
    assert rows_of(grep(bytearray(data), "café")) == expected
    table = grep(data, "café", offsets=True)
    assert table.schema == pa.schema([("line_number", pa.int64()), ("byte_offset", pa.int64()),
                                      ("line", pa.string())])
    assert grep(b"", "x").num_rows == 0 and grep(b"", "x").schema.field("line").type == pa.string()


def test_lines_that_are_not_utf8(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes("ok\nZürich\n".encode("latin-1"))
    with pytest.raises(UnicodeDecodeError, match="line 2 is not valid UTF-8"):
        grep(path, "Z")
    assert rows_of(grep(path, "Z", binary=True)) == [(2, "Zürich".encode("latin-1"))]


def test_filters_agree_past_the_pair_limit(tmp_path):
    """The pair and hashed filters give the same answer for any keyword set."""
    rng = random.Random(5)
    data = b"\n".join(b"%d.%d.%d.%d GET /p%d" % tuple(rng.randrange(300) for _ in range(5)) for _ in range(3000))
    path = tmp_path / "log.txt"
    path.write_bytes(data)
    keywords = [b"%d.%d" % (rng.randrange(300), rng.randrange(300)) for _ in range(40)] + [b"/p7", b"9 G"]
    with SearchText(path) as text:
        answers = []
        for strategy in (PAIRS, HASHED):
            for ignore_case in (False, True):
                plan = SearchPlan.build(keywords, ignore_case, strategy=strategy)
                results = run_tasks(text, plan, LINES, block_size=777)
                answers.append([(r.lines, r.records.tolist(), r.data.tobytes()) for r in results])
    assert answers[0] == answers[1] == answers[2] == answers[3]
    assert sum(len(records) for _, records, _ in answers[0]) > 100


@needs_grep
def test_counters_add_up(tmp_path):
    rng = random.Random(9)
    data, keywords = random_case(rng, 20000)
    path = tmp_path / "c.txt"
    path.write_bytes(data)
    expected = real_grep(path, keywords)
    plan = SearchPlan.build(keywords)
    with SearchText(path) as text:
        for block_size in (100, 4096):
            results = run_tasks(text, plan, LINES, block_size=block_size)
            counters = SEARCH_COUNTERS.values(sum(r.counters for r in results))
            lines = data.count(b"\n") + (not data.endswith(b"\n"))
            assert sum(r.lines for r in results) == counters["lines_searched"] == lines
            assert counters["lines_matched"] == len(expected)
            assert counters["bytes_emitted"] == sum(len(line) for _, line in expected)
            assert len(data) <= counters["bytes_searched"] <= len(data) + sum(
                len(max(data.split(b"\n"), key=len)) + 1 for _ in results)
            assert counters["keyword_checks"] >= counters["lines_matched"]
            assert sum(r.length for r in results) == len(data)


def test_output_room_is_never_passed():
    """Tiny capacities: every task outgrows them, reports what it needs, and the rerun is exact."""
    data = np.frombuffer(b"ab\n" * 500 + b"zz\n" + b"ab\n" * 10, dtype=np.uint8)
    plan = SearchPlan.build("ab")
    room = OutputRoom(LINES)
    room.SLACK_RECORDS, room.SLACK_BYTES = 1, 1
    result = TaskResult(0, 0, data.size)
    assert search_buffer(data, 0, True, result, plan, LINES, room) == Status.OK
    assert result.records.shape == (510, 3) and result.data.tobytes() == b"ab" * 510
    assert result.records[-1].tolist() == [510, 3 * 510, 2] and result.lines == 511
    counted = TaskResult(0, 0, data.size)
    assert search_buffer(data, 0, True, counted, plan, COUNT, room) == Status.OK
    assert counted.matched == 510 and counted.records.shape == (0, 3)


def test_a_line_past_the_input_needs_more():
    plan = SearchPlan.build("x")
    data = np.frombuffer(b"a\nbbbbx", dtype=np.uint8)
    result = TaskResult(0, 0, 3)
    assert search_buffer(data, 0, False, result, plan, LINES, OutputRoom(LINES)) == Status.NEEDS_MORE_INPUT
    assert search_buffer(data, 0, True, result, plan, LINES, OutputRoom(LINES)) == Status.OK
    assert result.records.tolist() == [[1, 2, 5]]


@pytest.fixture(scope="module")
def weblog(tmp_path_factory) -> Path:
    """A small web log with a line longer than a device command's first read past its task."""
    rng = random.Random(3)
    lines = [f"10.0.{rng.randrange(256)}.{rng.randrange(256)} GET /p{rng.randrange(999)} {rng.choice([200, 404])}"
             for _ in range(4000)]
    lines[1700] = "GET /" + "q" * (3 * LINE_TAIL_BYTES) + " 404 long"
    path = tmp_path_factory.mktemp("search") / "access.log"
    path.write_text("\r\n".join(lines))
    return path


@pytest.mark.parametrize("profile", ["modern-gen4", "biscuit-pm", "summarizer-board", "morpheus-isca16"])
@pytest.mark.parametrize("split", ["device", "dynamic", "static:0.5"])
def test_device_equals_host(weblog, profile, split):
    host = grep(weblog, [" 404", "/p12"], offsets=True, block_size=20000)
    ssd = ComputationalSSD(profile, page_size=4096)
    try:
        with collect() as runs:
            got = grep(weblog, [" 404", "/p12"], offsets=True, device=ssd, split=split, block_size=20000)
            count = grep(weblog, [" 404", "/p12"], count=True, device=ssd, split=split, block_size=20000)
    finally:
        ssd.close()
    assert got.equals(host) and count == host.num_rows
    report = runs.reports[0]
    assert report.tasks == -(-weblog.stat().st_size // 20000) and report.meta["app"] == "search"
    assert report.pages["device"] > 0 and report.makespan_s > 0


def test_device_faults_fall_back_to_the_host(weblog):
    host = grep(weblog, "404", block_size=9000)
    faults = FaultPlan(media_error=0.2, app_failure=0.2, link_timeout=0.2, tq_overflow=0.2, seed=4)
    ssd = ComputationalSSD("modern-gen4", page_size=4096, faults=faults)
    try:
        for split in ("device", "dynamic"):
            with collect() as runs:
                assert grep(weblog, "404", device=ssd, split=split, block_size=9000).equals(host)
            report = runs.total
            assert report.pages["raw"] > 0 and sum(report.faults.values()) > 0
    finally:
        ssd.close()


def test_device_counters_equal_the_host_counters(weblog):
    plan = SearchPlan.build(["404", "GET /p1"])
    ssd = ComputationalSSD("modern-gen4", page_size=4096)
    try:
        with SearchText(weblog) as text:
            host = run_tasks(text, plan, LINES, block_size=30000)
            device = run_tasks(text, plan, LINES, block_size=30000, device=ssd, split="device")
    finally:
        ssd.close()
    assert [r.side for r in device] == ["device"] * len(device)
    assert [r.counters.tolist() for r in device] == [r.counters.tolist() for r in host]


def test_the_matcher_searches_on_biscuit(weblog):
    """biscuit-pm charges the scan to its pattern matcher when the keywords fit it, to its
    cores when they do not; other profiles' cores always search."""
    reports = {}
    for profile, keywords in (("biscuit-pm", ["404"]), ("biscuit-pm", ["404", "GET", "/p1"]),
                              ("modern-gen4", ["404"])):
        with collect() as runs:
            grep(weblog, keywords, count=True, device=profile, split="device")
        reports[(profile, len(keywords))] = runs.total
    fits, too_many, modern = reports[("biscuit-pm", 1)], reports[("biscuit-pm", 3)], reports[("modern-gen4", 1)]
    assert fits.meta["matcher"] == "used" and fits.busy_s["pipeline"] > 0
    assert too_many.meta["matcher"].startswith("off") and too_many.busy_s["pipeline"] == 0
    assert too_many.busy_s["device_cores"] > fits.busy_s["device_cores"]
    assert "matcher" not in modern.meta and modern.busy_s["pipeline"] == 0 and modern.busy_s["device_cores"] > 0


def test_matcher_capacity():
    assert matcher_fits(SearchPlan.build(["GET", "x" * 16]))
    assert not matcher_fits(SearchPlan.build(["GET", "x" * 17]))
    assert not matcher_fits(SearchPlan.build(["a", "b", "c"]))
    assert matcher_fits(SearchPlan.build(["a", "b", "ab"]))  # "ab" adds nothing: two keywords
    assert matcher_fits(SearchPlan.build("404", ignore_case=True))  # no letters: one spelling


def test_a_csv_only_device_cannot_search(weblog):
    with pytest.raises(ValueError, match="cannot search"):
        grep(weblog, "404", device="hods-fpga", split="device")
    with collect() as runs:  # the host side is still modeled
        assert grep(weblog, "404", count=True, device="hods-fpga") == grep(weblog, "404", count=True)
    assert runs.total.pages["host"] > 0


def test_the_app_refuses_a_plan_it_cannot_trust(tmp_path):
    path = tmp_path / "t.txt"
    path.write_bytes(b"a\nb\n")
    plan = SearchPlan.build("a").state.copy()
    plan.view(np.int64)[PLAN.version] += 1  # a plan of other layouts
    app = search_storage_app()
    engine = Engine(page_size=4096)
    try:
        stream = engine.stream_create(str(path))
        inst = engine.minit(app.address, init=plan, streams=[stream])
        out, lines = np.zeros(8 * (RESULT.size + 30), np.uint8), np.zeros(64, np.uint8)
        args = [0, 4, 1, LINES, 10, 64]
        done = engine.wait(engine.submit_mread(inst, stream, 0, 1, [out, lines], SEARCH_COUNTERS.zeros(), args))
        assert done.status == Status.APP_ERROR
        engine.mdeinit(inst)
        good = engine.minit(app.address, init=SearchPlan.build("a").state, streams=[stream])
        done = engine.wait(engine.submit_mread(good, stream, 0, 1, [out, lines], SEARCH_COUNTERS.zeros(), args))
        assert done.ok and lines[:1].tobytes() == b"a"
        engine.mdeinit(good)
        engine.stream_close(stream)
    finally:
        engine.close()


@pytest.mark.parametrize("kind", [pa.string(), pa.large_string(), pa.binary(), pa.large_binary()])
def test_filter_strings_equals_match_substring(kind):
    rng = random.Random(2)
    values = [None if rng.random() < 0.1 else "".join(rng.choice("abAB c\nd") for _ in range(rng.randrange(12)))
              for _ in range(3000)]
    column = pa.array(values, type=kind).slice(5)  # an offset into the buffers
    for keywords in (["ab"], ["ab", "c d", "B"], [f"{a}{b}" for a in "abAB" for b in "abcd "]):
        for ignore_case in (False, True):
            expected = None
            for keyword in keywords:
                hit = pc.match_substring(column, keyword, ignore_case=ignore_case)
                expected = hit if expected is None else pc.or_(expected, hit)
            got = filter_strings(column, keywords, ignore_case=ignore_case)
            assert got.equals(expected), (keywords, ignore_case)
    chunked = pa.chunked_array([column.slice(0, 100), column.slice(100)])
    assert filter_strings(chunked, ["ab"]).combine_chunks().equals(pc.match_substring(column, "ab"))
    with pytest.raises(TypeError, match="string or binary"):
        filter_strings(pa.array([1, 2]), ["1"])


def test_a_line_longer_than_a_command_goes_to_the_host(tmp_path):
    """With 16-byte pages one command holds 1 MiB: the task where a 2 MB line starts
    cannot finish it on the device, and the host reads its pages instead."""
    path = tmp_path / "long.txt"
    path.write_bytes(b"short 1\n" * 1000 + b"x" * 2_000_000 + b" needle\n" + b"needle 2\n" * 1000)
    ssd = ComputationalSSD("modern-gen4", page_size=16)
    try:
        with SearchText(path) as text:
            results = run_tasks(text, SearchPlan.build("needle"), COUNT, device=ssd, split="device",
                                block_size=64 << 10)
    finally:
        ssd.close()
    assert sum(r.matched for r in results) == 1001 == grep(path, "needle", count=True)
    assert [r.side for r in results].count("raw") == 1 and not results[0].offloadable
    assert {r.side for r in results[1:]} == {"device"}
