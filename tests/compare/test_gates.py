"""Gates on ``assertly run`` and diffs of real runs: ``--min-pass-rate``, ``--baseline``, reports.

Every run here is a real ``assertly run`` over a test file, answered by recorded responses
(a ``fixtures:`` target), so the verdicts, the store and the reports are the real ones.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from assertly.cli import main


class Project:
    """A project directory with one test file; each run answers from a fixtures file."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.runs = 0

    def tests(self, ids: list[str], file: str = "a.tests.yaml") -> None:
        tests = [
            {"id": test_id, "input": test_id, "assertions": [{"type": "contains", "value": "ok"}]}
            for test_id in ids
        ]
        data = {"agent": "bot", "test_suites": {"s": {"tests": tests}}}
        (self.root / file).write_text(yaml.safe_dump(data), encoding="utf-8")

    def run(self, answers: dict[str, str], *args: str) -> Any:
        """``assertly run .`` with these answers (test id → output) and a JSON report."""
        self.runs += 1
        fixtures = self.root / f"answers-{self.runs}.jsonl"
        fixtures.write_text(
            "".join(
                json.dumps({"id": key, "output": value}) + "\n" for key, value in answers.items()
            )
        )
        report = self.root / f"report-{self.runs}.json"
        argv = ["run", ".", "--target", f"fixtures:{fixtures}", "--plain", "-o", str(report), *args]
        result = CliRunner().invoke(main, argv, catch_exceptions=False)
        result.report = report
        return result

    def cli(self, *args: str) -> Any:
        return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.chdir(tmp_path)
    return Project(tmp_path)


def test_min_pass_rate_gate(project: Project) -> None:
    project.tests(["a", "b", "c", "d"])
    answers = {"a": "ok", "b": "ok", "c": "ok", "d": "no"}
    plain = project.run(answers)
    assert plain.exit_code == 1, "without a gate, any failure fails the run"
    assert "gate:" not in plain.stdout
    met = project.run(answers, "--min-pass-rate", "0.75")
    assert met.exit_code == 0
    assert "gate: pass rate 75.0% ≥ 75.0% (--min-pass-rate) → exit 0" in met.stdout
    missed = project.run(answers, "--min-pass-rate", "0.8")
    assert missed.exit_code == 1
    assert "gate: pass rate 75.0% < 80.0% (--min-pass-rate) → exit 1" in missed.stdout
    wrong = project.run(answers, "--min-pass-rate", "1.5")
    assert wrong.exit_code == 2 and "1.5" in wrong.output


def test_baseline_gate_allows_known_failures_and_catches_regressions(project: Project) -> None:
    project.tests(["a", "b", "c"])
    base = project.run({"a": "ok", "b": "ok", "c": "no"})  # c is a known failure
    assert base.exit_code == 1
    same = project.run({"a": "ok", "b": "ok", "c": "no"}, "--baseline", "last")
    assert same.exit_code == 0, same.output
    assert "gate: 0 regressions against run" in same.stdout
    assert "(--baseline, at most 0 allowed) → exit 0" in same.stdout
    worse = project.run({"a": "ok", "b": "no", "c": "no"}, "--baseline", "last~1")
    assert worse.exit_code == 1
    assert "REGRESSED a.tests.yaml::s::b  passed → failed" in worse.stdout
    assert "✗ contains:" in worse.stdout
    assert "gate: 1 regression against run" in worse.stdout
    allowed = project.run(
        {"a": "ok", "b": "no", "c": "no"}, "--baseline", "last~2", "--max-regressions", "1"
    )
    assert allowed.exit_code == 0
    assert "at most 1 allowed) → exit 0" in allowed.stdout
    both = project.run(
        {"a": "ok", "b": "no", "c": "no"},
        "--baseline",
        "last~3",
        "--max-regressions",
        "1",
        "--min-pass-rate",
        "0.5",
    )
    assert both.exit_code == 1, "both gates must pass: 33 % < 50 %"
    assert "pass rate 33.3% < 50.0%" in both.stdout and "1 regression" in both.stdout


def test_baseline_last_is_the_run_before_this_one(project: Project) -> None:
    project.tests(["a"])
    project.run({"a": "ok"})
    result = project.run({"a": "no"}, "--baseline", "last")
    assert result.exit_code == 1
    assert "1 regression against run" in result.stdout


def test_baseline_gate_fails_on_a_new_failing_test(project: Project) -> None:
    project.tests(["a"])
    project.run({"a": "ok"})
    project.tests(["a", "new"])
    result = project.run({"a": "ok", "new": "no"}, "--baseline", "last")
    assert result.exit_code == 1
    assert "0 regressions" in result.stdout and "1 new test failing" in result.stdout


def test_bless_and_baseline_blessed(project: Project) -> None:
    project.tests(["a", "b"])
    no_store = project.run({"a": "ok", "b": "ok"}, "--baseline", "blessed")
    assert no_store.exit_code == 2 and "nothing has run here yet" in no_store.stderr
    project.run({"a": "ok", "b": "no"})
    nothing = project.run({"a": "ok", "b": "ok"}, "--baseline", "blessed")
    assert nothing.exit_code == 2
    assert "no run of" in nothing.stderr and "assertly bless RUN" in nothing.stderr
    blessed = project.cli("bless", "last")
    assert blessed.exit_code == 0 and "as the baseline" in blessed.stdout
    project.run({"a": "ok", "b": "ok"})
    result = project.run({"a": "ok", "b": "no"}, "--baseline", "blessed")
    assert result.exit_code == 0, "b fails in the blessed run too: no regression"


def test_diff_of_report_files_and_of_runs_whose_files_differ(project: Project) -> None:
    project.tests(["a", "b"])
    first = project.run({"a": "ok", "b": "ok"})
    project.tests(["x"], file="more.tests.yaml")
    second = project.run({"a": "no", "b": "ok", "x": "ok"})
    from_reports = project.cli("diff", str(first.report), str(second.report), "--format", "json")
    assert from_reports.exit_code == 1
    data = json.loads(from_reports.stdout)
    changes = {test["key"]: test["change"] for test in data["tests"]}
    assert changes == {
        "a.tests.yaml::s::a": "regressed",
        "a.tests.yaml::s::b": "unchanged",
        "more.tests.yaml::s::x": "added",
    }
    from_store = project.cli("diff", "last~1", "last", "--format", "json")
    assert json.loads(from_store.stdout)["tests"] == data["tests"]
    mixed = project.cli("diff", str(first.report), "last")
    assert mixed.exit_code == 1 and "REGRESSED a.tests.yaml::s::a" in mixed.stdout


def test_a_changed_test_is_not_a_regression(project: Project) -> None:
    project.tests(["a"])
    project.run({"a": "ok"})
    data = {
        "agent": "bot",
        "test_suites": {
            "s": {
                "tests": [
                    {"id": "a", "input": "a", "assertions": [{"type": "contains", "value": "yes"}]}
                ]
            }
        },
    }
    (project.root / "a.tests.yaml").write_text(yaml.safe_dump(data))
    project.run({"a": "ok"})
    result = project.cli("diff", "last~1", "last")
    assert result.exit_code == 0
    assert "REDEFINED a.tests.yaml::s::a  passed → failed" in result.stdout


def test_a_bad_report_file_is_a_clear_error(project: Project) -> None:
    (project.root / "not-a-report.json").write_text('{"hello": 1}')
    result = project.cli("diff", "not-a-report.json", "not-a-report.json")
    assert result.exit_code == 2
    assert "not an assertly JSON report" in result.stderr
    assert "Traceback" not in result.output


def test_the_html_report_of_a_gated_run_shows_the_comparison(project: Project) -> None:
    project.tests(["a", "<img src=x onerror=alert(1)>"])
    project.run({"a": "ok", "<img src=x onerror=alert(1)>": "ok"})
    html = project.root / "run.html"
    result = project.run(
        {"a": "ok", "<img src=x onerror=alert(1)>": "no"}, "--baseline", "last", "-o", str(html)
    )
    assert result.exit_code == 1
    page = html.read_text(encoding="utf-8")
    assert '<section id="comparison">' in page
    assert "1 regressed, 0 fixed, 1 unchanged" in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "<img src=x" not in page
    plain = project.root / "plain.html"
    project.run({"a": "ok", "<img src=x onerror=alert(1)>": "no"}, "-o", str(plain))
    assert '<section id="comparison">' not in plain.read_text(encoding="utf-8")


def test_the_markdown_report_of_a_gated_run_shows_the_comparison(project: Project) -> None:
    # issue 29, first contact: "The Markdown report of a --baseline run omits the comparison"
    project.tests(["a", "b|`x`"])
    project.run({"a": "ok", "b|`x`": "ok"})
    md = project.root / "run.md"
    result = project.run({"a": "ok", "b|`x`": "no"}, "--baseline", "last", "-o", str(md))
    assert result.exit_code == 1
    text = md.read_text(encoding="utf-8")
    assert "## Compared with the baseline" in text
    assert "### ❌ assertly: 1 regressed, 0 fixed" in text
    regression = next(line for line in text.splitlines() if "b|" in line or "b\\|" in line)
    assert regression.startswith("| ") and "failed" in regression
    plain = project.root / "plain.md"
    project.run({"a": "ok", "b|`x`": "no"}, "-o", str(plain))
    assert "Compared with the baseline" not in plain.read_text(encoding="utf-8")


def test_a_resumed_run_cannot_be_its_own_baseline(project: Project) -> None:
    project.tests(["a"])
    project.run({"a": "ok"})
    project.run({"a": "no"})
    result = project.cli("run", "--resume", "last", "--baseline", "last")
    assert result.exit_code == 2
    assert "the run being resumed: name the run to compare with" in result.stderr
    fine = project.cli("run", "--resume", "last", "--baseline", "last~1")
    assert fine.exit_code == 1 and "1 regression against run" in fine.stdout
