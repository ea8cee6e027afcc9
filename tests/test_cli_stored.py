"""``assertly report RUN`` without ``-o`` and with ``--format``; ``recheck --plain``.

Every test runs a real ``cmd:`` agent once, then shows the stored run again.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from assertly.cli import main
from assertly.reports._github import escape_data, escape_property

AGENT = """
import json, sys
q = json.load(sys.stdin)
print(q["say"])
"""

TESTS = {
    "agent": "bot",
    "test_suites": {
        "s": {
            "tests": [
                {"id": "good", "input": {"say": "yes"}, "expect": {"contains": "yes"}},
                {
                    "id": "bad,one: 100%",
                    "input": {"say": "no\r\nsecond line"},
                    "expect": {"contains": "yes"},
                },
            ]
        }
    },
}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "t.tests.json").write_text(json.dumps(TESTS, indent=2))
    (tmp_path / "assertly.yaml").write_text(f"agents:\n  bot: 'cmd:{sys.executable} agent.py'\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)  # as outside GitHub Actions
    ran = _cli("run", "t.tests.json", "--plain")
    assert ran.exit_code == 1, ran.output
    return tmp_path


def _cli(*args: str) -> Result:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert "Traceback" not in result.output
    return result


def test_report_without_o_prints_the_run_as_run_ends(project: Path) -> None:
    shown = _cli("report", "last")
    assert shown.exit_code == 1  # the run's verdict, as `run` exits
    assert "FAILED s::bad,one: 100%  (t.tests.json:" in shown.stdout
    assert "contains" in shown.stdout  # the failing assertion
    assert "2 tests: 1 passed, 1 failed, 0 errored, 0 skipped (50.0% pass rate)" in shown.stdout
    assert "wrote" not in shown.stdout
    assert not list(project.glob("*.html"))
    assert _cli("report", "last", "--plain").stdout == shown.stdout  # not a terminal: plain


def test_report_format_text_is_the_console_summary(project: Path) -> None:
    assert _cli("report", "last", "--format", "text").stdout == _cli("report", "last").stdout


def test_report_format_json_is_the_json_report(project: Path) -> None:
    printed = _cli("report", "last", "--format", "json")
    assert printed.exit_code == 1
    written = _cli("report", "last", "-o", "r.json")
    assert written.exit_code == 1
    assert printed.stdout_bytes == (project / "r.json").read_bytes()
    assert json.loads(printed.stdout)["summary"]["failed"] == 1


def test_report_format_md_is_the_markdown_report(project: Path) -> None:
    printed = _cli("report", "last", "--format", "md")
    _cli("report", "last", "-o", "r.md")
    assert printed.stdout == (project / "r.md").read_text(encoding="utf-8")
    assert printed.stdout.startswith("#")


def test_report_format_json_with_o_is_refused(project: Path) -> None:
    refused = _cli("report", "last", "--format", "json", "-o", "r.html")
    assert refused.exit_code == 2
    assert "--format json prints the report on stdout" in refused.stderr
    assert not (project / "r.html").exists()


def test_report_format_github_annotates_failing_tests(project: Path) -> None:
    shown = _cli("report", "last", "--format", "github", "-o", "r.html")
    assert shown.exit_code == 1
    lines = shown.stdout.splitlines()
    errors = [line for line in lines if line.startswith("::error")]
    assert len(errors) == 1
    assert errors[0].startswith(
        f"::error file=t.tests.json,line={_line_of(project)},"
        "title=failed%3A s%3A%3Abad%2Cone%3A 100%25::"
    ), errors[0]
    message = errors[0].split("::", 2)[2]
    assert "\n" not in message and "\r" not in message
    assert "%0A" in message  # failure lines joined, escaped
    assert any(item.startswith("::notice title=assertly::2 tests: 1 passed") for item in lines)
    assert "50.0%25 pass rate" in lines[-2] or "50.0%25 pass rate" in lines[-1]
    assert (project / "r.html").is_file()


def _line_of(project: Path) -> int:
    """The line of the failing test in its file, as the store keeps it."""
    data = json.loads(_cli("report", "last", "--format", "json").stdout)
    (failing,) = [test for test in data["tests"] if test["status"] == "failed"]
    assert isinstance(failing["line"], int)
    return int(failing["line"])


def test_report_of_a_passing_run_exits_0_with_only_the_notice(project: Path) -> None:
    good = {"id": "good", "input": {"say": "yes"}, "expect": {"contains": "yes"}}
    (project / "t.tests.json").write_text(
        json.dumps({"agent": "bot", "test_suites": {"s": {"tests": [good]}}})
    )
    assert _cli("run", "t.tests.json", "--plain").exit_code == 0
    shown = _cli("report", "last", "--format", "github")
    assert shown.exit_code == 0
    assert [line[:9] for line in shown.stdout.splitlines()] == ["::notice "]


def test_workflow_command_escaping() -> None:
    # GitHub's rules (toolkit's command.ts): data escapes % CR LF; properties also : and ,.
    assert escape_data("50% done\r\nnext: a,b") == "50%25 done%0D%0Anext: a,b"
    assert escape_property("s::a,b\n%") == "s%3A%3Aa%2Cb%0A%25"


def test_recheck_takes_plain(project: Path) -> None:
    plain = _cli("recheck", "last", "--plain")
    assert plain.exit_code == 1
    assert "2 tests: 1 passed, 1 failed" in plain.stdout
    assert "FAILED s::bad,one: 100%" in plain.stdout


def test_github_annotations_name_files_from_the_checkouts_root(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The run started in a subfolder of the checkout (a job's working-directory).
    monkeypatch.setenv("GITHUB_WORKSPACE", str(project.parent))
    shown = _cli("report", "last", "--format", "github")
    assert f"::error file={project.name}/t.tests.json,line=" in shown.stdout
    monkeypatch.setenv("GITHUB_WORKSPACE", str(project / "elsewhere"))
    shown = _cli("report", "last", "--format", "github")
    assert "::error file=t.tests.json,line=" in shown.stdout  # outside it: as stored


def test_github_annotations_cover_eval_suites_and_problems(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    from assertly._records import EvalCaseRecord, EvalRecord, RunRecord
    from assertly.reports._github import github_annotations

    suite = EvalRecord(
        "flows/w.yaml",
        0.25,
        0.8,
        False,
        [EvalCaseRecord("w::bad", "bad", "error", 0.0, error="writer crashed\x1b[2J")],
    )
    met = EvalRecord("flows/ok.yaml", 1.0, 0.5, True)
    run = RunRecord("r1", "t", 1.0, [], [suite, met], problems=["x.yaml:1:1: bad, file"])
    lines = list(github_annotations(run))
    assert lines[0] == (
        "::error file=flows/w.yaml,title=eval suite failed::score 0.250 below the threshold 0.8"
        "%0Aerror bad: writer crashed\\x1b[2J"  # the terminal's escape shown, not obeyed
    )
    assert lines[1] == "::error title=assertly problem::x.yaml:1:1: bad, file"
    assert lines[2].startswith("::notice title=assertly::0 tests:")
    assert len(lines) == 3  # the suite that met its threshold is not annotated
