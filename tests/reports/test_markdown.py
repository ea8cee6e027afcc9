"""The Markdown report: summary, per-suite table, failed / errored / skipped / flaky / slowest
tests and evals, rendered from a real run (a real agent subprocess) and from hand-built records.

Agent output and test text are untrusted: the report is parsed back with a CommonMark + GFM-table
parser (markdown-it-py) to check that pipes, backticks and HTML in them cannot change the layout.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

from assertly._check_records import CheckRecord
from assertly.reports import write_report
from assertly.reports._analysis import format_ms, percentile
from assertly.reports._markdown import md_code, md_text, render_markdown
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

INJECTED = "<script>alert(1)</script></textarea> a|b `tick` ``` done"


SampleRun = Callable[[str, str, str], tuple[RunRecord, Path]]  # the conftest fixture


@pytest.fixture(scope="module")
def project(sample_run: SampleRun) -> tuple[RunRecord, Path]:
    """The shared sample run (see conftest.py), with this report's injected output."""
    return sample_run("md", INJECTED, "nope | `x`")


@pytest.fixture(scope="module")
def report(project: tuple[RunRecord, Path]) -> str:
    return render_markdown(project[0])


class _Tables(HTMLParser):
    """Tables of rendered HTML, keyed by the text of the closest heading before them."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[list[str]]]] = {}
        self.heading: str | None = None
        self._text: list[str] | None = None
        self._row: list[str] | None = None
        self._current: list[list[str]] | None = None
        self._in_heading = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("h1", "h2", "h3"):
            self._in_heading, self._text = True, []
        elif tag == "table":
            self._current = []
            self.tables.setdefault(self.heading or "", []).append(self._current)
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._text = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("h1", "h2", "h3") and self._text is not None:
            self.heading = re.sub(r"\s*\(\d+\)$", "", "".join(self._text).strip())
            self._in_heading, self._text = False, None
        elif tag in ("td", "th") and self._row is not None and self._text is not None:
            self._row.append("".join(self._text).strip())
            self._text = None
        elif tag == "tr" and self._current is not None and self._row is not None:
            self._current.append(self._row)
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._text is not None:
            self._text.append(data)


def to_html(markdown: str) -> str:
    return MarkdownIt("commonmark").enable("table").render(markdown)


def tables(markdown: str) -> dict[str, list[list[list[str]]]]:
    parser = _Tables()
    parser.feed(to_html(markdown))
    return parser.tables


def section(markdown: str, title: str) -> str:
    """The text of one ``## title`` section."""
    match = re.search(rf"^## {re.escape(title)}.*?$(.*?)(?=^## |\Z)", markdown, re.M | re.S)
    assert match, f"no section {title!r}"
    return match.group(1)


# -- a real run -------------------------------------------------------------------------------


def test_summary_totals_pass_rate_and_durations(report: str) -> None:
    header, row = tables(report)["Summary"][0]
    summary = dict(zip(header, row, strict=True))
    assert summary["Total"] == "7"  # tests only: the eval suite is judged by its threshold
    assert (summary["Passed"], summary["Failed"]) == ("2", "3")
    assert (summary["Errored"], summary["Skipped"]) == ("1", "1")
    assert summary["Pass rate"] == "33.3%"  # 2 of 6 judged
    assert re.fullmatch(r"[\d.]+ m?s", summary["Duration"])
    assert re.fullmatch(r"[\d.]+ m?s", summary["Avg per test"])
    assert report.startswith("# assertly report\n")
    assert "**❌ FAILED** — 2 of 6 judged tests passed (33.3%)" in report
    assert "1 of 1 eval file(s) met the threshold (2 eval cases, judged by score" in report


def test_per_suite_table(report: str) -> None:
    header, *rows = tables(report)["Suites"][0]
    assert header == [
        "Suite",
        "File",
        "Total",
        "Passed",
        "Failed",
        "Errored",
        "Skipped",
        "Pass rate",
    ]
    by_suite = {row[0]: row for row in rows}
    assert by_suite["search"][2:] == ["5", "1", "2", "1", "1", "25.0%"]
    assert by_suite["summaries"][2:] == ["2", "1", "1", "0", "0", "50.0%"]
    assert by_suite["eval"][1].endswith("writer.yaml")
    assert by_suite["eval"][2:] == ["2", "1", "1", "0", "0", "50.0%"]


def test_failed_tests_show_their_diffs(report: str) -> None:
    failed = section(report, "Failed tests")
    assert "## Failed tests (3)" in report
    assert "### ❌ search \u203a Caps results (too-many)" in failed
    assert "# Expected at most 1 result, got 3" in failed
    assert "@@ results_max (path results) @@" in failed
    assert "- expected: 1\n+ actual:   3" in failed
    # the flaky test failed in its second trial only
    assert "@@ status (path status; trial 2) @@" in failed
    assert "1/3 trials passed" not in failed and "2/3 trials passed · **flaky**" in failed
    assert "# Output does not contain 'hello'" in failed


def test_errored_tests_with_reasons(report: str) -> None:
    header, *rows = tables(report)["Errored tests"][0]
    assert header == ["Suite", "Test", "Where", "Trials errored", "Reason"]
    assert len(rows) == 1
    suite, test, _where, trials, reason = rows[0]
    assert (suite, test, trials) == ("search", "crash", "1/1")
    assert "exited with code 3" in reason and "index unavailable" in reason


def test_skipped_tests_with_reasons(report: str) -> None:
    (row,) = tables(report)["Skipped tests"][0][1:]
    assert row[:2] == ["search", "needs-prod"]
    assert row[3] == "skip_if: prod_only is true"


def test_flaky_tests_list_passes_over_trials(report: str) -> None:
    header, *rows = tables(report)["Flaky tests"][0]
    assert header == ["Suite", "Test", "Passes/trials", "Trials", "Verdict"]
    assert rows == [["search", "flaky", "2/3", "✓ ✗ ✓", "❌ failed"]]


def test_slowest_tests_ranked(report: str, project: tuple[RunRecord, Path]) -> None:
    header, *rows = tables(report)["Slowest tests (top 6)"][0]
    assert header[:3] == ["#", "Suite", "Test"]
    ran = [t for t in project[0].tests if t.status != "skipped"]
    assert len(rows) == len(ran)
    expected = [t.id for t in sorted(ran, key=lambda t: -t.duration_ms)]
    assert [re.sub(r".*\((.*)\)$", r"\1", row[2]) for row in rows] == expected


def test_evals_list_failing_cases_even_when_the_suite_passed(report: str) -> None:
    header, row = tables(report)["Evals"][0]
    assert header == ["File", "Score", "Threshold", "Result", "Cases passed"]
    assert row[1:] == ["0.500", "0.5", "✅ passed", "1/2"]
    evals = section(report, "Evals")
    assert "(the suite passed its threshold)" in evals
    assert "- **bad**: failed, score 0.000 — writer forgets" in evals
    assert "# Output does not contain 'done'" in evals
    assert "@@ contains (block writer) @@" in evals  # an eval case has blocks, not steps
    assert '+ actual:   "nope | `x`"' in evals
    assert "**good**" not in evals


def test_injected_output_stays_inside_its_code_block(report: str) -> None:
    html = to_html(report)
    assert "<script>" not in html and "</textarea>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&lt;/textarea&gt;" in html
    # the diff fence is longer than the ``` run inside the agent output
    assert "````diff" in report


def test_a_stored_run_renders_the_same(project: tuple[RunRecord, Path], report: str) -> None:
    record, store = project
    assert render_markdown(load_run(str(store), record.run_id)) == report


def test_write_report_picks_markdown_by_extension(
    project: tuple[RunRecord, Path], tmp_path: Path, report: str
) -> None:
    write_report(project[0], tmp_path / "out" / "report.md")
    assert (tmp_path / "out" / "report.md").read_text(encoding="utf-8") == report


# -- hand-built records -----------------------------------------------------------------------


def _test(
    key: str,
    status: str,
    *,
    suite: str = "s",
    duration: float = 10.0,
    trials: list[TrialRecord] | None = None,
    **extra: Any,
) -> Record:
    trials = trials or [TrialRecord(key, 1, status, duration)]  # type: ignore[arg-type]
    return Record(key, key, key, suite, "f.tests.yaml", status, None, trials, **extra)  # type: ignore[arg-type]


def test_slowest_lists_the_top_ten_by_duration() -> None:
    tests = [_test(f"t{i:02d}", "passed", duration=float(i * 100)) for i in range(1, 13)]
    tests.append(_test("skip", "skipped", duration=0.0))
    record = RunRecord("r1", "2026-01-01T00:00:00Z", 5000.0, tests)
    rows = tables(render_markdown(record))["Slowest tests (top 10)"][0][1:]
    assert [row[2] for row in rows] == [f"t{i:02d}" for i in range(12, 2, -1)]
    assert rows[0][3] == "1.20 s" and rows[-1][3] == "300 ms"


def test_hostile_names_and_output_cannot_break_the_layout() -> None:
    nasty = "a|b `c` ``d`` \\| <script>alert(1)</script> *e* [f](http://x) # g\nnext line"
    failure = {
        "step": "s",
        "assertion": "equals",
        "outcome": "failed",
        "message": nasty,
        "path": "x|y",
        "expected": nasty,
        "actual": {"html": "</textarea><img src=x onerror=alert(1)>", "ticks": "````"},
    }
    failed = TrialRecord("k1", 1, "failed", 5.0, kept_failures=given([failure]))
    errored = TrialRecord("k2", 1, "error", 5.0, error=nasty)
    skipped = TrialRecord("k3", 1, "skipped", 0.0, reason=nasty)
    record = RunRecord(
        "r1",
        "2026-01-01T00:00:00Z",
        20.0,
        [
            _test("t|1", "failed", suite=nasty, trials=[failed], line=3),
            _test("t`2", "error", suite="x|y", trials=[errored]),
            _test("t3", "skipped", suite="z", trials=[skipped]),
        ],
        evals=[
            EvalRecord(
                "w|f.yaml",
                0.0,
                1.0,
                False,
                [EvalCaseRecord("w::eval::c", "c|`1`", "error", 0.0, error=nasty)],
            )
        ],
        problems=[nasty],
        warnings=[nasty],
    )
    markdown = render_markdown(record)
    html = to_html(markdown)
    assert "<script>" not in html and "<img" not in html and "<textarea" not in html
    assert "<a " not in html  # the [f](http://x) link stays text
    found = tables(markdown)
    for title, expected_columns in (
        ("Summary", 8),
        ("Suites", 8),
        ("Errored tests", 5),
        ("Skipped tests", 4),
    ):
        for row in found[title][0]:
            assert len(row) == expected_columns, (title, row)
    suites = {row[0]: row for row in found["Suites"][0][1:]}
    assert nasty.replace("\n", "") in suites  # the cell holds the whole name, pipes and all
    assert "x|y" in suites and "z" in suites
    (errored_row,) = found["Errored tests"][0][1:]
    assert errored_row[1] == "t`2"
    assert errored_row[4] == nasty.replace("\n", "")
    (skipped_row,) = found["Skipped tests"][0][1:]
    assert skipped_row[3] == nasty.replace("\n", "")
    # headings stay one line and plain text
    assert (
        "<h3>❌ a|b `c` ``d`` \\| &lt;script&gt;alert(1)&lt;/script&gt; *e* [f](http://x) # g"
        in html
    )


@pytest.mark.parametrize(
    ("text", "rendered"),
    [
        ("plain", "<code>plain</code>"),
        ("a`b", "<code>a`b</code>"),
        ("``x``", "<code>``x``</code>"),
        ("a|b", "<code>a|b</code>"),
        ("<b>", "<code>&lt;b&gt;</code>"),
    ],
)
def test_code_spans_in_table_cells(text: str, rendered: str) -> None:
    html = to_html(f"| h |\n| --- |\n| {md_code(text)} |\n")
    assert f"<td>{rendered}</td>" in html


def test_backslash_before_pipe_in_a_table_cell_stays_literal() -> None:
    cell = md_code("a\\|b")
    html = to_html(f"| h | i |\n| --- | --- |\n| {cell} | x |\n")
    assert "<td>a\\|b</td>" in html and "<td>x</td>" in html


def test_text_escaping() -> None:
    assert md_text("*bold* _it_ [l](u) <b> a|b") == r"\*bold\* \_it\_ \[l\](u) \<b\> a\|b"
    assert md_text("- item\n# head") == r"\- item<br>\# head"
    assert md_text("12. item") == r"12\. item"
    assert md_text("3) item") == r"3\) item"
    assert to_html(f"- {md_text('1. not a list')}") == "<ul>\n<li>1. not a list</li>\n</ul>\n"
    assert md_text("x" * 600).endswith("… (100 more chars)")


@pytest.mark.parametrize(
    ("ms", "text"),
    [(0.5, "0.50 ms"), (12.4, "12 ms"), (1500, "1.50 s"), (125_000, "2m 05s"), (None, "\u2013")],
)
def test_format_ms(ms: float | None, text: str) -> None:
    assert format_ms(ms) == text


def test_percentile() -> None:
    assert percentile([], 0.5) is None
    assert percentile([10.0], 0.95) == 10.0
    assert percentile([0.0, 10.0, 20.0, 30.0], 0.5) == 15.0


def test_an_empty_run_renders() -> None:
    markdown = render_markdown(RunRecord("r0", "2026-01-01T00:00:00Z", 0.0))
    _header, row = tables(markdown)["Summary"][0]
    assert row[:6] == ["0", "0", "0", "0", "0", "\u2013"]
    assert "Failed tests" not in markdown and "Suites" not in markdown


def test_multi_step_failures_name_their_step() -> None:
    failures = [
        {"step": "login", "assertion": "status", "outcome": "failed", "message": "m1"},
        {"step": "search", "assertion": "results_min", "outcome": "error", "message": "m2"},
    ]
    trial = TrialRecord(
        "k",
        1,
        "failed",
        9.0,
        steps=[StepRecord("login", "failed", "{}"), StepRecord("search", "error", "{}")],
        kept_failures=given(failures),
    )
    markdown = render_markdown(RunRecord("r", "t", 9.0, [_test("k", "failed", trials=[trial])]))
    assert "@@ status (step login) @@\n# m1" in markdown
    assert "@@ results_min [error] (step search) @@\n# m2" in markdown


# -- every test: input, output, metrics, assertions -------------------------------------------


def _passing(key: str, output: Any, **step: Any) -> Record:
    """A passing test with one judged step (real check results from the engine)."""
    from assertly import compile as compile_expectation

    result = compile_expectation({"status": "success"}).check({"status": "success"})
    trial = TrialRecord(
        key,
        1,
        "passed",
        12.0,
        steps=[
            StepRecord(
                key, "passed", output, [CheckRecord.from_json(result.to_dict())], score=1.0, **step
            )
        ],
        score=1.0,
    )
    return Record(key, key, key, "s", "f.tests.yaml", "passed", 1.0, [trial], input={"q": key})


def test_passing_tests_show_input_output_metrics_and_assertions(report: str) -> None:
    passed = section(report, "Passed tests")
    assert "### ✅ search \u203a ok" in passed
    assert '{"n":1}' in passed  # the input
    assert '{"status":"success","results":[{"file":"journal/0.md"}]}' in passed  # the output
    assert "Metrics: " in passed
    rows = tables(report)["✅ search \u203a ok"][0]
    assert rows[0] == ["Assertion", "Outcome", "Score"]
    assert rows[1:] == [["status", "✅ passed", "1"], ["results_min", "✅ passed", "1"]]


def test_summary_gives_calls_cost_latency_percentiles_and_models() -> None:
    tests = [
        _passing("a", {"status": "success"}, latency_ms=100.0, cost_usd=0.25, model="m-1"),
        _passing("b", {"status": "success"}, latency_ms=300.0, cost_usd=0.5, model="m-1"),
        _passing("c", {"status": "success"}, latency_ms=200.0, model="m-2"),
    ]
    markdown = render_markdown(RunRecord("r", "t", 600.0, tests))
    header, row = tables(markdown)["Summary"][1]
    assert header == ["Calls", "Total cost", "Latency p50", "p90", "p99", "max", "Models (calls)"]
    assert row == [
        "3",
        "$0.7500 (2 of 3 calls reported a cost)",
        "200 ms",
        "280 ms",
        "298 ms",
        "300 ms",
        "m-1 (2), m-2 (1)",
    ]
    assert "Metrics: 100 ms · $0.2500 · m-1" in markdown


def test_a_hostile_output_of_a_passing_test_stays_inert() -> None:
    nasty = "<script>alert(1)</script> ```` `x` | # no heading\n- no list"
    markdown = render_markdown(RunRecord("r", "t", 1.0, [_passing("t", nasty, model="<b>m</b>|x")]))
    html = to_html(markdown)
    assert "<script>" not in html and "<b>m</b>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; ```` `x` | # no heading\n- no list" in html
    assert "<h1>no heading" not in html and "<li>no list" not in html


def test_the_passing_tests_listed_are_capped() -> None:
    from assertly.reports._analysis import LISTED_PASSED

    tests = [_passing(f"t{n:03d}", "ok") for n in range(LISTED_PASSED + 5)]
    markdown = render_markdown(RunRecord("r", "t", 1.0, tests))
    passed = section(markdown, "Passed tests")
    assert f"The first {LISTED_PASSED} are listed; 5 more passed" in passed
    assert passed.count("### ✅") == LISTED_PASSED
    assert f"t{LISTED_PASSED - 1:03d}" in passed and f"t{LISTED_PASSED:03d}" not in passed


def test_trials_and_multi_step_details() -> None:
    from assertly import compile as compile_expectation

    check = compile_expectation({"status": "success"})
    trials = []
    for number, status in ((1, "success"), (2, "error"), (3, "success")):
        result = check.check({"status": status})
        step = StepRecord(
            "page",
            "passed" if status == "success" else "failed",
            {"status": status},
            [CheckRecord.from_json(result.to_dict())],
            latency_ms=10.0 * number,
        )
        trials.append(TrialRecord("k", number, step.status, 1.0, steps=[step]))
    record = Record(
        "k",
        "k",
        "k",
        "s",
        "f",
        "failed",
        0.66,
        trials,
        multi_step=True,
        input=[{"step": "page", "input": {"p": 1}}],
    )
    markdown = render_markdown(RunRecord("r", "t", 1.0, [record]))
    assert "**Input** of step `page`" in markdown
    assert "**Output** of step `page` (trials 1, 3)" in markdown
    assert "**Output** of step `page` (trial 2)" in markdown
    rows = tables(markdown)["❌ s \u203a k"]
    trial_table = next(t for t in rows if t[0][0] == "Trial")
    assert [row[:2] for row in trial_table[1:]] == [
        ["1", "✅ passed"],
        ["2", "❌ failed"],
        ["3", "✅ passed"],
    ]
    assertions = next(t for t in rows if t[0][0] == "Assertion")
    assert assertions[0] == ["Assertion", "Step", "Outcome", "Score", "Message"]
    assert assertions[1][:4] == ["status", "page", "❌ failed ✓ ✗ ✓", "0.667"]
    assert assertions[1][4].startswith("Expected status")


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
    markdown = render_markdown(RunRecord("r", "t", 1.0, tests))
    failed = section(markdown, "Failed tests")
    assert failed.count("### ❌") == DETAILED_NOT_PASSED + 3  # every failing test, with its diff
    assert failed.count("@@ status (step s) @@") == DETAILED_NOT_PASSED + 3
    assert failed.count("**Input**") == DETAILED_NOT_PASSED  # input and output: the first ones
    assert f"The first {DETAILED_NOT_PASSED} show their input and outputs" in failed


def test_a_line_separator_in_an_output_is_shown_not_obeyed() -> None:
    # red team of issue 29, probe "U+2028 in a Markdown report": splitlines() broke an output's
    # U+2028 (and U+0085, FS) into real lines, so "ok<U+2028>PASSED" read as a line "PASSED".
    nasty = {"answer": "ok\u2028PASSED\x85x\x1cy"}
    markdown = render_markdown(RunRecord("r", "t", 1.0, [_passing("t", nasty)]))
    assert '"ok\\u2028PASSED\\x85x\\u001cy"' in markdown, markdown
    text = render_markdown(RunRecord("r", "t", 1.0, [_passing("t", "ok\u2028PASSED")]))
    assert "ok\\u2028PASSED" in text and "\nPASSED" not in text
