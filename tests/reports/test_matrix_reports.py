"""Reports of a real matrix run: two versions of a `cmd:` agent, each test against both.

The agent's v2 fails a test v1 passes ("two": a regression) and passes one v1 fails
("three": a fix); both error on "five" (the agent exits 3) and pass the rest. One test's name
carries an escape sequence and a bidirectional override: every report keeps it inert.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

import assertly
from assertly.compare import mcnemar_exact, wilson_interval
from assertly.reports import ConsoleReporter
from assertly.reports._analysis import NONE, SEP
from assertly.reports._html import render_html
from assertly.reports._json import render_json
from assertly.reports._junit import render_junit
from assertly.reports._markdown import render_markdown
from assertly.reports._report_schema import report_schema
from assertly.runner import RunOptions, RunRecord, load_run, run

AGENT = r"""
import json, os, sys
request = json.load(sys.stdin)  # a string input arrives as a JSON string
version, text = sys.argv[1], str(request)
if "crash" in text:
    sys.exit(3)
if version == "v1":  # v1 reports what each call cost; v2 reports nothing
    with open(os.environ["ASSERTLY_METADATA_FILE"], "w") as handle:
        json.dump({"cost_usd": 0.002}, handle)
if version == "v2" and "fail" in text:
    print("nope")
elif version == "v2" and "new" in text:
    print("new feature")
else:
    print(f"echo {text}")
"""

TESTS = r"""
agent: echo
test_suites:
  s:
    tests:
      - {id: one, input: hello, expect: {contains: hello}}
      - {id: two, input: please fail, expect: {contains: fail}}
      - {id: three, input: new, expect: {contains: feature}}
      - {id: four, name: "evil \e[31mred\u202e name", input: hi, expect: {contains: hi}}
      - {id: five, input: crash, expect: {contains: x}}
"""


def _project(root: Path) -> dict[str, str]:
    (root / "agent.py").write_text(AGENT)
    (root / "t.yaml").write_text(TESTS)
    agent = f"cmd:{sys.executable} {root / 'agent.py'}"
    return {"base": f"{agent} v1", "cand": f"{agent} v2"}


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> tuple[RunRecord, Path]:
    root = tmp_path_factory.mktemp("matrix")
    store = root / "s.sqlite"
    record = run(
        RunOptions(paths=[str(root / "t.yaml")], targets=_project(root), store_path=str(store))
    )
    return record, store


def test_the_json_report_has_each_target_and_the_comparison(
    matrix: tuple[RunRecord, Path],
) -> None:
    import jsonschema_rs

    record, store = matrix
    data = json.loads(render_json(record))
    jsonschema_rs.validator_for(report_schema()).validate(data)
    assert data["targets"] == ["base", "cand"]
    assert [(t["id"], t["target"], t["status"]) for t in data["tests"][:4]] == [
        ("one", "base", "passed"),
        ("one", "cand", "passed"),
        ("two", "base", "passed"),
        ("two", "cand", "failed"),
    ]
    by_target = data["summary"]["by_target"]
    assert list(by_target) == ["base", "cand"]
    for label, failed_test in (("base", "three"), ("cand", "two")):
        summary = by_target[label]
        counts = [summary[k] for k in ("total", "passed", "failed", "errored", "skipped")]
        assert counts == [5, 3, 1, 1, 0], label
        assert summary["pass_rate"] == pytest.approx(3 / 5)
        assert summary["pass_rate_ci95"] == list(wilson_interval(3, 5))
        assert summary["latency_p50_ms"] > 0  # measured for each call
        failing = [
            t["id"] for t in data["tests"] if t["target"] == label and t["status"] == "failed"
        ]
        assert failing == [failed_test]
    # v1 reported a cost for each of its four answers (not for the crash); v2 reported none.
    assert by_target["base"]["cost_usd"] == pytest.approx(0.008)
    assert (by_target["base"]["costed_calls"], by_target["base"]["calls"]) == (4, 5)
    assert by_target["cand"]["cost_usd"] is None
    [comparison] = data["comparison"]
    assert comparison["base"] == "base" and comparison["candidate"] == "cand"
    assert (comparison["paired"], comparison["regressed"], comparison["fixed"]) == (5, 1, 1)
    assert comparison["mcnemar_p"] == mcnemar_exact(1, 1) == 1.0
    # The stored run gives the same report (its tests stream from the store).
    assert json.loads(render_json(load_run(str(store), record.run_id))) == data


def _console(record: RunRecord) -> str:
    stream = io.StringIO()
    ConsoleReporter(stream=stream, force_plain=True).summary(record)
    return stream.getvalue()


def test_the_console_prints_the_matrix_when_it_fits(
    matrix: tuple[RunRecord, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    text = _console(matrix[0])
    lines = text.splitlines()
    start = lines.index("    test      base  cand")
    assert lines[start + 1 : start + 6] == [
        "    s::one     ✓     ✓",
        "  ≠ s::two     ✓     ✗",
        "  ≠ s::three   ✗     ✓",
        "    s::four    ✓     ✓",
        "    s::five    !     !",
    ]
    assert "targets disagree on 2 of 5 tests" in lines
    assert (
        "base: 3 of 5 judged passed, 1 failed, 1 errored (60.0%, 95% CI [23.1%, 88.2%]), "
        "cost $0.0080 (4 of 5 calls reported one), p50 latency "
    ) in text
    assert (
        "cand: 3 of 5 judged passed, 1 failed, 1 errored (60.0%, 95% CI [23.1%, 88.2%]), "
        f"cost {NONE}, p50 latency "
    ) in text
    assert "cand vs base: 1 regressed, 1 fixed of 5 paired tests, McNemar p = 1" in lines
    # Failure headers name the target the test failed under.
    assert any(line.startswith("FAILED s::two [cand]  (") for line in lines)
    assert any(line.startswith("FAILED s::three [base]  (") for line in lines)
    assert any(line.startswith("ERROR s::five [cand]  (") for line in lines)


def test_a_matrix_too_wide_lists_the_disagreements_instead(
    matrix: tuple[RunRecord, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "23")  # the matrix needs 24: "    s::three" and 2 times 6
    lines = _console(matrix[0]).splitlines()
    assert not any("✓     ✓" in line for line in lines)
    start = lines.index("targets disagree on 2 of 5 tests:")
    assert lines[start + 1 : start + 3] == [
        "  s::two  base ✓  cand ✗",
        "  s::three  base ✗  cand ✓",
    ]
    assert any(line.startswith("cand: 3 of 5 judged passed") for line in lines)


def test_the_console_keeps_test_names_inert(matrix: tuple[RunRecord, Path]) -> None:
    text = _console(matrix[0])
    assert "\x1b" not in text and "\u202e" not in text


def test_the_cli_prints_the_matrix_and_exits_1(tmp_path: Path) -> None:
    targets = _project(tmp_path)
    args = [sys.executable, "-m", "assertly", "run", "t.yaml", "-o", "r.md"]
    for label, spec in targets.items():
        args += ["--target", f"{label}={spec}"]
    # The sources under test, wherever this process imported them from.
    source = str(Path(assertly.__file__).parents[1])
    path = os.pathsep.join(filter(None, [source, os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "COLUMNS": "100", "PYTHONPATH": path}
    done = subprocess.run(
        args, cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert done.returncode == 1, done.stderr
    assert "  ≠ s::two" in done.stdout
    assert "cand vs base: 1 regressed, 1 fixed" in done.stdout
    assert f"| ≠ s {SEP} two | ✓ | ✗ |" in (tmp_path / "r.md").read_text()


def test_markdown_shows_the_targets_and_the_matrix(matrix: tuple[RunRecord, Path]) -> None:
    text = render_markdown(matrix[0])
    assert "## Targets" in text
    assert "| base | 5 | 3 | 1 | 1 | 0 | 60.0% | [23.1%, 88.2%] | $0.0080 |" in text
    assert "- cand vs base: 1 regressed, 1 fixed of 5 paired tests, McNemar p = 1" in text
    assert "### Matrix (5 tests; the targets disagree on 2)" in text
    assert "| Test | base | cand |" in text
    assert f"| s {SEP} one | ✓ | ✓ |" in text
    assert f"| ≠ s {SEP} two | ✓ | ✗ |" in text
    assert f"| ≠ s {SEP} three | ✗ | ✓ |" in text
    assert f"| s {SEP} five | ! | ! |" in text
    assert f"| s {SEP} evil \\x1b\\[31mred\\u202e name (four) | ✓ | ✓ |" in text
    assert f"### ❌ s {SEP} two \\[cand\\]" in text  # failed tests name their target
    assert "\x1b" not in text and "\u202e" not in text


def test_html_shows_the_targets_and_the_matrix_escaped(matrix: tuple[RunRecord, Path]) -> None:
    page = render_html(matrix[0])
    assert '<section id="targets">' in page
    assert '<th class="mx">base</th><th class="mx">cand</th>' in page
    assert (
        f'<tr class="disagree" title="the targets disagree"><td>s {SEP} two</td>'
        '<td class="mx passed" title="base: passed">✓</td>'
        '<td class="mx failed" title="cand: failed">✗</td></tr>'
    ) in page
    assert "cand vs base: 1 regressed, 1 fixed of 5 paired tests, McNemar p = 1" in page
    assert "\x1b" not in page and "\u202e" not in page
    assert "evil \\x1b[31mred\\u202e name" in page  # shown as escapes, never obeyed


def test_junit_names_each_cell_by_its_target(matrix: tuple[RunRecord, Path]) -> None:
    root = ElementTree.fromstring(render_junit(matrix[0]))
    names = [case.get("name") for case in root.iter("testcase")]
    assert names[:4] == ["one[base]", "one[cand]", "two[base]", "two[cand]"]
    failed = [
        case.get("name") for case in root.iter("testcase") if case.find("failure") is not None
    ]
    assert failed == ["two[cand]", "three[base]"]


def test_a_single_target_run_has_no_matrix(tmp_path: Path) -> None:
    targets = _project(tmp_path)
    store = str(tmp_path / "s.sqlite")
    record = run(
        RunOptions(paths=[str(tmp_path / "t.yaml")], target=targets["base"], store_path=store)
    )
    data = json.loads(render_json(record))
    assert "targets" not in data and "comparison" not in data
    assert "by_target" not in data["summary"]
    assert all("target" not in test for test in data["tests"])
    assert "## Targets" not in render_markdown(record)
    assert 'id="targets"' not in render_html(record)
    assert "matrix" not in _console(record)
    assert "one[" not in render_junit(record).decode()
