"""What a pytest session of assertly items leaves behind: pytest's own JUnit XML, a run store
that ``assertly report`` renders, assertly's reports, and the same under pytest-xdist.
"""

from __future__ import annotations

import json
import re
import sqlite3
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner
from plugin_support import FLOW, SEARCH_TESTS, make_project, read_json, run, write

from assertly.cli import main

STATUSES = {
    ("core", "finds_notes"): "passed",
    ("core", "only_journal"): "failed",
    ("prose", "summary_text"): "passed",
    ("s", "crashes"): "error",
    ("s", "typo"): "error",
    ("s", "offline_only"): "skipped",
}

MORE_TESTS = """\
agent: bot
test_suites:
  s:
    tests:
      - {id: crashes, input: {mode: crash}, expect: {status: success}}
      - {id: typo, input: {}, expect: {stauts: success}}
      - {id: offline_only, skip_if: offline, input: {}, expect: {status: success}}
"""


def _project(pytester: pytest.Pytester) -> Path:
    return make_project(
        pytester,
        {"search.tests.yaml": SEARCH_TESTS, "more.tests.yaml": MORE_TESTS, "flow.yaml": FLOW},
        config="facts:\n  offline: true\n",
    )


def _statuses(report: dict[str, object]) -> dict[tuple[str, str], str]:
    tests = report["tests"]
    assert isinstance(tests, list)
    return {(test["suite"], test["id"]): test["status"] for test in tests}


def test_junitxml_has_one_testcase_per_item_with_the_failure_text(
    pytester: pytest.Pytester,
) -> None:
    root = _project(pytester)
    result = run(pytester, "--junitxml=junit.xml")
    result.assert_outcomes(passed=3, failed=3, errors=1, skipped=1)
    suite = ET.parse(root / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("8", "3", "1")
    cases = {(case.get("classname"), case.get("name")): case for case in suite.iter("testcase")}
    assert set(cases) == {
        ("search.tests.yaml.core", "finds_notes"),
        ("search.tests.yaml.core", "only_journal"),
        ("search.tests.yaml.prose", "summary_text"),
        ("more.tests.yaml.s", "crashes"),
        ("more.tests.yaml.s", "typo"),
        ("more.tests.yaml.s", "offline_only"),
        ("flow.yaml.eval", "clean"),
        ("flow.yaml.eval", "wrong"),
    }
    failure = cases[("search.tests.yaml.core", "only_journal")].find("failure")
    assert failure is not None
    assert "doesn't match pattern '^journal/'" in failure.get("message", "")
    assert "expected: '^journal/'" in (failure.text or "")
    assert "search.tests.yaml:14: declared here" in (failure.text or "")
    error = cases[("more.tests.yaml.s", "typo")].find("error")
    assert error is not None and "unknown assertion 'stauts'" in (error.text or "")
    skipped = cases[("more.tests.yaml.s", "offline_only")].find("skipped")
    assert skipped is not None and "skip_if: offline is true" in skipped.get("message", "")
    properties = {
        prop.get("name"): prop.get("value")
        for prop in cases[("search.tests.yaml.core", "finds_notes")].iter("property")
    }
    assert properties == {
        "assertly_status": "passed",
        "assertly_trials": "1/1",
        "assertly_score": "1.0000",
    }


def test_store_and_assertly_report_render_the_session(pytester: pytest.Pytester) -> None:
    root = _project(pytester)
    result = run(
        pytester,
        "--assertly-store=runs.sqlite",
        "--assertly-report=out/session.json",
        "--assertly-report=out/session.md",
        "--assertly-report=out/session.html",
        "--assertly-report=out/session.xml",
    )
    result.assert_outcomes(passed=3, failed=3, errors=1, skipped=1)
    text = result.stdout.str()
    match = re.search(r"assertly: run (\S+) stored in (\S+)", text)
    assert match, text
    run_id = match.group(1)
    assert match.group(2) == "runs.sqlite"
    assert f"assertly report {run_id} --store runs.sqlite -o report.html" in text
    for name in ("session.json", "session.md", "session.html", "session.xml"):
        assert f"assertly: wrote out/{name}" in text
        assert (root / "out" / name).stat().st_size > 0

    report = read_json(root / "out" / "session.json")
    assert report["run_id"] == run_id
    assert _statuses(report) == STATUSES
    summary = report["summary"]
    # The summary counts tests; the eval section is judged by its score, under "evals".
    assert (summary["total"], summary["passed"], summary["failed"]) == (6, 2, 1)
    assert (summary["errored"], summary["skipped"]) == (2, 1)
    [flow] = report["evals"]
    assert (flow["file"], flow["score"], flow["passed"]) == ("flow.yaml", 0.5, False)
    tests = {test["id"]: test for test in report["tests"]}
    failure = tests["only_journal"]["trials"][0]["failures"][0]
    assert failure["assertion"] == "all_match_pattern"
    assert (failure["path"], failure["actual"]) == ("results[1].file", "work/b.md")
    assert "command exited with code 3" in tests["crashes"]["trials"][0]["error"]
    assert tests["only_journal"]["line"] == 14
    assert tests["finds_notes"]["tags"] == ["smoke"]

    # `assertly report` re-renders the stored session exactly.
    cli = CliRunner().invoke(main, ["report", run_id, "--store", "runs.sqlite", "-o", "b.json"])
    assert cli.exit_code == 1, cli.output  # the session had failures
    assert read_json(root / "b.json") == report
    cli = CliRunner().invoke(main, ["report", "last", "--store", "runs.sqlite", "-o", "a.md"])
    assert "only\\_journal" in (root / "a.md").read_text(encoding="utf-8")


def test_report_alone_uses_a_temporary_store(pytester: pytest.Pytester) -> None:
    root = _project(pytester)
    result = run(pytester, "--assertly-report=session.json", "-k", "finds_notes or flow")
    result.assert_outcomes(passed=2, failed=1, deselected=5)
    assert "stored in" not in result.stdout.str()
    report = read_json(root / "session.json")
    # Only the selected tests (and cases) are in the report.
    assert _statuses(report) == {("core", "finds_notes"): "passed"}
    assert [case["id"] for case in report["evals"][0]["cases"]] == ["clean", "wrong"]
    assert not list(root.glob("**/*.sqlite"))


def test_a_failing_trial_is_in_the_store_before_the_session_ends(
    pytester: pytest.Pytester,
) -> None:
    root = _project(pytester)
    write(
        root,
        "test_peek.py",
        """\
        import sqlite3

        def test_zz_peek():
            db = sqlite3.connect("runs.sqlite")
            rows = db.execute("SELECT test_key, status FROM trials").fetchall()
            assert ("search.tests.yaml::core::only_journal", "failed") in rows
        """,
    )
    result = run(pytester, "--assertly-store=runs.sqlite")
    result.assert_outcomes(passed=4, failed=3, errors=1, skipped=1)


def test_xdist_workers_share_one_stored_run(pytester: pytest.Pytester) -> None:
    root = _project(pytester)
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "-n",
        "2",
        "--assertly-store=runs.sqlite",
        "--assertly-report=session.json",
        "--junitxml=junit.xml",
    )
    result.assert_outcomes(passed=3, failed=3, errors=1, skipped=1)
    result.stdout.fnmatch_lines(["*assertly: wrote session.json*"])
    report = read_json(root / "session.json")
    assert _statuses(report) == STATUSES
    assert report["evals"][0]["score"] == 0.5
    db = sqlite3.connect(root / "runs.sqlite")
    try:
        assert db.execute("SELECT count(*) FROM runs").fetchone() == (1,)
        assert db.execute("SELECT count(*) FROM trials").fetchone() == (6,)
    finally:
        db.close()
    suite = ET.parse(root / "junit.xml").getroot().find("testsuite")
    assert suite is not None and suite.get("tests") == "8"


def test_a_failure_report_shows_control_characters(pytester: pytest.Pytester) -> None:
    hostile = "ok\x1b[2K\r\x1b[32mPASSED\x1b[0m fake"
    root = make_project(
        pytester,
        {
            "h.tests.yaml": "agent: rec\ntest_suites:\n  s:\n    tests:\n"
            "      - {id: t, input: {}, expect: {status: success}}\n"
        },
    )
    (root / "assertly.yaml").write_text("agents:\n  rec: fixtures:rec.jsonl\n")
    record = {"id": "t", "output": {"status": hostile}}
    (root / "rec.jsonl").write_text(json.dumps(record) + "\n")
    result = run(pytester, "h.tests.yaml")
    output = result.stdout.str()
    assert "\x1b[2K" not in output and "\r" not in output
    assert "\\x1b[2K\\r\\x1b[32mPASSED" in output


def test_a_failure_report_shows_no_secret(pytester: pytest.Pytester) -> None:
    """A secret the agent echoes (here a secret-named ``env:`` value) is redacted from pytest's
    failure report as from the store and the reports, in every spelling."""
    secret = 'tok-"plugin-\u00e4'
    root = make_project(
        pytester,
        {
            "s.tests.yaml": "agent: echo\ntest_suites:\n  s:\n    tests:\n"
            "      - {id: t, input: {}, expect: {status: success}}\n"
        },
    )
    agent = (
        "import json, os\n"
        "v = os.environ['API_TOKEN']\n"
        "print(json.dumps({'status': v, 'b': json.dumps(v), 'c': [v]}))\n"
    )
    (root / "echo.py").write_text(agent, encoding="utf-8")
    config = {
        "agents": {"echo": {"command": [sys.executable, "echo.py"], "env": {"API_TOKEN": secret}}}
    }
    (root / "assertly.yaml").write_text(json.dumps(config), encoding="utf-8")
    result = run(pytester, "s.tests.yaml")
    output = result.stdout.str()
    assert "1 failed" in output
    assert "[REDACTED]" in output
    for spelling in (
        secret,
        json.dumps(secret)[1:-1],
        json.dumps(secret, ensure_ascii=False)[1:-1],
    ):
        assert spelling not in output


def test_a_clipped_response_in_a_failure_report_shows_no_part_of_a_secret(
    pytester: pytest.Pytester,
) -> None:
    # red team of issue 29, probe "pytest clipped response": the plugin clipped a response to
    # 500 characters and redacted after; cut inside the secret's escapes (JSON text in a JSON
    # string: ä as \\u00e4) it was no whole spelling, and "tok-plugin-\\u…" showed.
    secret = "tok-plugin-\u00e4\u20acx"
    tests = "".join(
        f"      - {{id: p{pad}, input: {{pad: {pad}}}, expect: {{status: success}}}}\n"
        for pad in range(430, 470)
    )
    root = make_project(
        pytester, {"s.tests.yaml": f"agent: echo\ntest_suites:\n  s:\n    tests:\n{tests}"}
    )
    agent = (
        "import json, os, sys\n"
        "pad = json.load(sys.stdin)['pad']\n"
        "v = os.environ['API_TOKEN']\n"
        "print(json.dumps({'status': 'x', 'a': '.' * pad, 'x': json.dumps({'k': v})}))\n"
    )
    (root / "echo.py").write_text(agent, encoding="utf-8")
    config = {
        "agents": {"echo": {"command": [sys.executable, "echo.py"], "env": {"API_TOKEN": secret}}}
    }
    (root / "assertly.yaml").write_text(json.dumps(config), encoding="utf-8")
    output = run(pytester, "s.tests.yaml").stdout.str()
    assert "40 failed" in output
    assert "tok-plug" not in output
