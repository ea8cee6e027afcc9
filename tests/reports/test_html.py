"""The HTML report: one self-contained, script-free page rendered from a real run.

Checked by parsing the page (counts, per-suite table, failures with expected / actual / path,
skip reasons, flaky tests, evals, charts), by its safety properties (the CSP meta, no ``<script``
at all, no external resources, agent output only ever escaped), and, when Chromium is installed,
by loading it in headless Chromium: the DOM shows the failing tests and the agent's injected
script did not run.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from html.parser import HTMLParser
from importlib import resources
from pathlib import Path

import pytest

from assertly._check_records import CheckRecord
from assertly.reports import write_report
from assertly.reports._html import CSP, SUITE_CHART, render_html
from assertly.runner import (
    EvalCaseRecord,
    EvalRecord,
    RunRecord,
    StepRecord,
    TrialRecord,
    load_run,
)
from assertly.runner import TestRecord as Record  # not "Test*": pytest would collect it
from records_support import given

PWNED = "<script>document.title='PWNED'</script></textarea><img src=x onerror=alert(1)>"


SampleRun = Callable[[str, str, str], tuple[RunRecord, Path]]  # the conftest fixture


@pytest.fixture(scope="module")
def project(sample_run: SampleRun) -> tuple[RunRecord, Path]:
    """The shared sample run (see conftest.py), with this report's injected output."""
    return sample_run("html", PWNED, "<b>nope</b>")


@pytest.fixture(scope="module")
def page(project: tuple[RunRecord, Path]) -> str:
    return render_html(project[0])


@pytest.fixture(scope="module")
def report_file(project: tuple[RunRecord, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("out") / "report.html"
    write_report(project[0], path)
    return path


class _Page(HTMLParser):
    """Every start tag with its attributes, the text per element id, and the tables per section."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.tables: dict[str, list[list[list[str]]]] = {}
        self.section = ""
        self.text: list[str] = []
        self._cell: list[str] | None = None
        self._row: list[str] | None = None
        self._table: list[list[str]] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        self.tags.append((tag, attributes))
        if tag == "section" and attributes.get("id"):
            self.section = attributes["id"] or ""
        elif tag == "table":
            self._table = []
            self.tables.setdefault(self.section, []).append(self._table)
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._row is not None and self._cell is not None:
            self._row.append(" ".join(" ".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._table is not None and self._row is not None:
            self._table.append(self._row)
            self._row = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


def parse(html: str) -> _Page:
    parser = _Page()
    parser.feed(html)
    parser.close()
    return parser


def rows_of(table: list[list[str]]) -> dict[str, dict[str, str]]:
    header, *rows = table
    return {row[0]: dict(zip(header, row, strict=True)) for row in rows}


# -- content ----------------------------------------------------------------------------------


def test_summary_cards(page: str) -> None:
    cards = dict(
        (label.lower(), value)
        for value, label in re.findall(
            r'<div class="v">([^<]*)</div><div class="l">([^<]*)</div>', page
        )
    )
    assert cards["total"] == "7"  # tests only: the eval suite is judged by its threshold
    assert (cards["passed"], cards["failed"], cards["errored"], cards["skipped"]) == (
        "2",
        "3",
        "1",
        "1",
    )
    assert cards["pass rate"] == "33.3%"
    assert cards["flaky"] == "1"
    assert re.fullmatch(r"[\d.]+ m?s", cards["duration"])
    assert "2 of 6 tests passed" in page


def test_per_suite_table(page: str) -> None:
    (table,) = parse(page).tables["suites"]
    rows = rows_of(table)
    assert list(rows["search"].values())[2:] == ["5", "1", "2", "1", "1", "25.0%"]
    assert list(rows["summaries"].values())[2:] == ["2", "1", "1", "0", "0", "50.0%"]
    assert list(rows["eval"].values())[2:] == ["2", "1", "1", "0", "0", "50.0%"]


def test_failed_tests_with_expected_actual_and_path(page: str) -> None:
    parsed = parse(page)
    failed = [t for t in parsed.tables["failed"] if t[0][:2] == ["Assertion", "Step / path"]]
    assert len(failed) == 3  # too-many, flaky, injected: one failure table each
    cells = [row for table in failed for row in table[1:]]
    too_many = next(row for row in cells if row[0].startswith("results_max"))
    assert too_many[0] == "results_max Expected at most 1 result, got 3"
    assert too_many[1:4] == ["path results", "1", "3"]
    flaky = next(row for row in cells if row[0].startswith("status"))
    assert flaky[1:] == ["path status", '"success"', '"error"', "2"]  # failed in trial 2 only
    text = " ".join(" ".join(parsed.text).split())
    assert "search \u203a Caps results (too-many)" in text
    assert "summaries \u203a Injected output (injected)" in text
    assert "Output does not contain 'hello'" in text


def test_errored_tests_with_reasons(page: str) -> None:
    body = page.split('<section id="errored">', 1)[1].split("</section>", 1)[0]
    assert '<strong class="name">crash</strong>' in body
    assert "command exited with code 3" in body and "index unavailable" in body


def test_skipped_tests_with_reasons(page: str) -> None:
    (table,) = parse(page).tables["skipped"]
    assert table[1][0:2] == ["search", "needs-prod"]
    assert table[1][3] == "skip_if: prod_only is true"
    # The location (file:line) never wraps, least of all inside the line number.
    body = page.split('<section id="skipped">', 1)[1].split("</section>", 1)[0]
    assert re.search(r'<td><code class="loc">[^<]*notes\.tests\.json:\d+</code></td>', body)
    assert ".loc { white-space: nowrap; }" in page


def test_flaky_tests(page: str) -> None:
    (table,) = parse(page).tables["flaky"]
    assert table[1][0:2] == ["search", "flaky"]
    assert table[1][3] == "2/3"
    trials = re.findall(r'<i class="(\w+)" title="trial (\d)', page.split('id="flaky"')[1])
    assert trials[:3] == [("passed", "1"), ("failed", "2"), ("passed", "3")]


def test_slowest_tests(page: str, project: tuple[RunRecord, Path]) -> None:
    (table,) = parse(page).tables["slowest"]
    ran = sorted(
        (t for t in project[0].tests if t.status != "skipped"), key=lambda t: -t.duration_ms
    )
    assert [row[2] for row in table[1:]] == [
        t.id if t.name == t.id else f"{t.name} ({t.id})" for t in ran
    ]


def test_evals_list_failing_cases_even_when_the_suite_passed(page: str) -> None:
    body = page.split('<section id="evals">', 1)[1].split("</section>", 1)[0]
    assert "writer.yaml" in body and '<span class="score">0.500</span>' in body
    assert "The suite met its threshold; these cases still did not pass" in body
    assert "<span>bad</span>" in body and "writer forgets" in body
    assert "<span>good</span>" not in body
    assert "&lt;b&gt;nope&lt;/b&gt;" in body and "<b>nope" not in body


def test_charts(page: str, project: tuple[RunRecord, Path]) -> None:
    suites_chart = page.split('aria-label="Pass rate per suite"', 1)[1].split("</svg>", 1)[0]
    labels = re.findall(r'<text class="lbl"[^>]*>([^<]*)</text>', suites_chart)
    assert labels[:2] == ["search", "summaries"] and labels[2].startswith("eval · ")
    assert re.findall(r'<text class="pct"[^>]*>([^<]*)</text>', suites_chart) == [
        "25.0%",
        "50.0%",
        "50.0%",
    ]
    # The pass rate is right-aligned, so the widest one ("100.0%") ends where the others do,
    # before the passed/judged count starts; both fit in the chart.
    svg = re.search(r'<svg viewBox="0 0 (\d+) \d+"[^>]*aria-label="Pass rate per suite"', page)
    assert svg
    bar_end = SUITE_CHART["bar_x"] + SUITE_CHART["bar"]
    rates = re.findall(
        r'<text class="pct" x="([\d.]+)" y="[\d.]+" text-anchor="end">', suites_chart
    )
    counts = re.findall(r'<text class="axis" x="([\d.]+)"', suites_chart)
    assert len(rates) == len(counts) == 3
    for rate_x, count_x in zip(rates, counts, strict=True):
        assert float(rate_x) - bar_end >= 55, "room for '100.0%' (13px) after the bar"
        assert float(count_x) - float(rate_x) >= 6
        assert int(svg.group(1)) - float(count_x) >= 45, "room for '100/100' (11px)"
    histogram = page.split('aria-label="Histogram of step latency"', 1)[1].split("</svg>", 1)[0]
    counts = [int(n) for n in re.findall(r"<title>[^<]*: (\d+) calls?</title>", histogram)]
    latencies = [
        step.latency_ms
        for test in project[0].tests
        for trial in test.trials
        for step in trial.steps
        if step.latency_ms is not None
    ]
    assert counts and sum(counts) == len(latencies)


# -- safety -----------------------------------------------------------------------------------


def test_csp_meta_comes_first(page: str) -> None:
    assert CSP == "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
    meta = f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
    assert meta in page
    head = page.split("<head>", 1)[1]
    assert head.index(meta) < head.index("<title>") < head.index("<style>")


def test_no_script_and_no_external_resources(page: str) -> None:
    assert "<script" not in page.lower()
    tags = parse(page).tags
    names = {tag for tag, _ in tags}
    assert not names & {"script", "link", "img", "iframe", "object", "embed", "base", "form"}
    for _tag, attributes in tags:
        for name, value in attributes.items():
            assert not name.startswith("on"), name
            if name in ("href", "src", "action", "xlink:href"):
                assert (value or "").startswith("#"), (name, value)
    assert "@import" not in page and "url(http" not in page


def test_agent_output_appears_only_escaped(page: str) -> None:
    assert PWNED not in page
    assert "&lt;script&gt;document.title=&#39;PWNED&#39;&lt;/script&gt;&lt;/textarea&gt;" in page
    assert "<img" not in page and "</textarea>" not in page
    assert "<title>assertly report · failed · " in page


def test_hostile_test_names_are_escaped_everywhere() -> None:
    nasty = '"><script>alert(1)</script><svg onload=alert(2)>'
    failure = {
        "step": nasty,
        "assertion": nasty,
        "outcome": "failed",
        "message": nasty,
        "path": nasty,
        "expected": nasty,
        "actual": {"k": nasty},
    }
    trial = TrialRecord(
        "k",
        1,
        "failed",
        5.0,
        steps=[StepRecord(nasty, "failed", nasty, latency_ms=5.0)],
        kept_failures=given([failure]),
    )
    skipped = TrialRecord("k2", 1, "skipped", 0.0, reason=nasty)
    record = RunRecord(
        nasty,
        nasty,
        5.0,
        [
            Record("k", nasty, nasty, nasty, nasty, "failed", 0.0, [trial], description=nasty),
            Record("k2", "s", "s", nasty, nasty, "skipped", None, [skipped]),
        ],
        evals=[
            EvalRecord(
                nasty, 0.0, 1.0, False, [EvalCaseRecord("e", nasty, "error", 0.0, error=nasty)]
            )
        ],
        problems=[nasty],
        warnings=[nasty],
    )
    html = render_html(record)
    assert "<script" not in html.lower() and "<svg onload" not in html.lower()
    assert html.count("&lt;script&gt;alert(1)") >= 10
    for _tag, attributes in parse(html).tags:
        assert not any(name.startswith("on") for name in attributes)


def test_an_empty_run_renders() -> None:
    html = render_html(RunRecord("r0", "2026-01-01T00:00:00Z", 0.0))
    assert "No tests ran." in html and "No step latencies were recorded." in html
    assert 'id="failed"' not in html


def test_a_stored_run_renders_the_same(project: tuple[RunRecord, Path], page: str) -> None:
    record, store = project
    assert render_html(load_run(str(store), record.run_id)) == page


def test_the_template_ships_inside_the_package() -> None:
    template = resources.files("assertly.reports").joinpath("templates/report.html.j2")
    assert template.is_file()


def test_many_trials_and_long_values_stay_bounded() -> None:
    long = "x" * 50_000
    failures = [
        {"step": "s", "assertion": "equals", "outcome": "failed", "message": "m", "actual": long}
    ]
    trials = [
        TrialRecord(
            "k",
            n,
            "failed",
            1.0,
            steps=[StepRecord("s", "failed", long)],
            kept_failures=given(failures),
        )
        for n in range(1, 6)
    ]
    html = render_html(
        RunRecord("r", "t", 5.0, [Record("k", "k", "k", "s", "f", "failed", 0, trials)])
    )
    assert html.count("equals") == 1  # one row for the same failure in five trials
    assert "1, 2, 3, 4, 5" in html
    assert len(html) < 60_000


# -- in a real browser ------------------------------------------------------------------------

CHROMIUM = shutil.which("chromium")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="chromium is not installed (CI installs it with apt-get install -y chromium)",
)


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    command = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
        *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


@needs_chromium
def test_chromium_shows_the_failures_and_runs_no_injected_script(
    report_file: Path, tmp_path: Path
) -> None:
    done = chromium(tmp_path, "--dump-dom", report_file.as_uri())
    dom = done.stdout
    assert done.returncode == 0 and "</html>" in dom, done.stderr[-2000:]
    title = re.search(r"<title>(.*?)</title>", dom, re.S)
    assert title and title.group(1).startswith("assertly report · failed")
    assert "PWNED" not in title.group(1)
    assert not re.search(r"<(script|img)\b", dom, re.I)  # the agent's tags never became elements
    assert "&lt;script&gt;document.title='PWNED'&lt;/script&gt;" in dom
    for name in ("Caps results", "Injected output", "flaky", "crash", "needs-prod"):
        assert name in dom
    assert "Expected at most 1 result, got 3" in dom


@needs_chromium
def test_chromium_screenshot(report_file: Path, tmp_path: Path) -> None:
    shot = tmp_path / "report.png"
    done = chromium(
        tmp_path, f"--screenshot={shot}", "--window-size=1280,2000", report_file.as_uri()
    )
    assert done.returncode == 0, done.stderr[-2000:]
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 20_000
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (1280, 2000)


# -- every test ---------------------------------------------------------------------------------


def _passing(key: str, output: object, **step: object) -> Record:
    from assertly import compile as compile_expectation

    result = compile_expectation({"status": "success"}).check({"status": "success"})
    step_record = StepRecord(
        key, "passed", output, [CheckRecord.from_json(result.to_dict())], score=1.0, **step
    )  # type: ignore[arg-type]
    trial = TrialRecord(key, 1, "passed", 12.0, steps=[step_record], score=1.0)
    return Record(key, key, key, "s", "f.tests.yaml", "passed", 1.0, [trial], input={"q": key})


def test_passing_tests_are_listed_collapsed_with_their_output(page: str) -> None:
    body = page.split('<section id="passed">', 1)[1].split("</section>", 1)[0]
    assert '<details class="test passed">' in body and "open>" not in body
    parsed = parse(body)
    text = " ".join(" ".join(parsed.text).split())
    assert "search \u203a ok" in text
    assert '{"n":1}' in text  # input
    assert '{"status":"success","results":[{"file":"journal/0.md"}]}' in text  # output preview
    assertions = [t for t in parsed.tables[""] if t[0][0] == "Assertion"]
    assert [row[:3] for row in assertions[0][1:]] == [
        ["status", "passed", "1"],
        ["results_min", "passed", "1"],
    ]
    assert 'href="#passed"' in page


def test_failing_tests_show_input_and_output_expanded(page: str) -> None:
    body = page.split('<section id="failed">', 1)[1].split("</section>", 1)[0]
    assert '<details class="test failed" open>' in body
    text = " ".join(" ".join(parse(body).text).split())
    assert "input {&quot;n&quot;:3}" not in body and 'input {"n":3}' in text
    assert '"file": "journal/2.md"' in text or '"journal/2.md"' in text


def test_summary_gives_calls_cost_latency_percentiles_and_models() -> None:
    tests = [
        _passing("a", {"status": "success"}, latency_ms=100.0, cost_usd=0.25, model="m-1"),
        _passing("b", {"status": "success"}, latency_ms=300.0, cost_usd=0.5, model="m-1"),
        _passing("c", {"status": "success"}, latency_ms=200.0, model="m-2"),
    ]
    html = render_html(RunRecord("r", "t", 600.0, tests))
    panel = html.split('<div class="panel calls">', 1)[1].split("</div>\n  </div>", 1)[0]
    text = " ".join(" ".join(parse(panel).text).split())
    assert "calls 3" in text
    assert "total cost $0.7500 (2 of 3 calls reported a cost)" in text
    assert "latency p50 200 ms" in text and "p90 280 ms" in text and "p99 298 ms" in text
    assert "models m-1 \u00d7 2 · m-2 \u00d7 1" in text


def test_a_hostile_output_of_a_passing_test_is_escaped() -> None:
    html = render_html(
        RunRecord("r", "t", 1.0, [_passing("t", PWNED, model=PWNED, tokens={"total": 3})])
    )
    assert PWNED not in html and "<script" not in html.lower() and "<img" not in html
    assert html.count("&lt;script&gt;document.title=") >= 3  # preview, output, metrics


def test_the_passing_tests_listed_are_capped() -> None:
    from assertly.reports._analysis import LISTED_PASSED

    tests = [_passing(f"t{n:03d}", "ok") for n in range(LISTED_PASSED + 5)]
    html = render_html(RunRecord("r", "t", 1.0, tests))
    assert html.count('<details class="test passed">') == LISTED_PASSED
    assert f"The first {LISTED_PASSED} are listed; 5 more passed" in html


def test_failing_tests_are_all_listed_the_first_ones_in_detail() -> None:
    from assertly.reports._analysis import DETAILED_NOT_PASSED

    failure = {"step": "s", "assertion": "status", "outcome": "failed", "message": "nope"}
    tests = [
        Record(
            f"k{n}", f"k{n}", f"k{n}", "s", "f", "failed", 0.0,
            [TrialRecord(f"k{n}", 1, "failed", 1.0,
                         steps=[StepRecord("s", "failed", {"n": n})],
                         kept_failures=given([failure]))],
            input={"n": n},
        )
        for n in range(DETAILED_NOT_PASSED + 3)
    ]  # fmt: skip
    html = render_html(RunRecord("r", "t", 1.0, tests))
    assert html.count('<details class="test failed"') == DETAILED_NOT_PASSED + 3
    assert html.count('<div class="io">') == DETAILED_NOT_PASSED
    assert f"The first {DETAILED_NOT_PASSED} show their input and outputs" in html
