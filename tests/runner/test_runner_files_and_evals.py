"""Files the runner reads: broken test files next to good ones, `assertly validate`, config and
usage errors (exit 2), and workflow ``eval:`` sections (fixtures, block assertions, weighted
case scores, suite threshold).
"""

from __future__ import annotations

import json
import re
import sys
from xml.etree import ElementTree

import pytest
from runner_support import Project

from assertly.engine import REGISTRY

GOOD = """\
agent: bot
test_suites:
  s:
    tests:
      - {id: good, input: {}, expect: {status: success}}
"""

BROKEN_YAML = """\
agent: bot
test_suites:
  s:
    tests:
      - id: a
        input: {x: [1, 2}
"""

BAD_TESTS = """\
agent: bot
test_suites:
  search:
    tests:
      - id: typo
        input: {}
        expect: {stauts: success}
      - id: badregex
        input: {}
        expect:
          all_match_pattern: {path: "results[*].file", regex: "(unclosed"}
      - id: wrongtype
        input: {}
        trials: "three"
        expect: {status: success}
      - id: nothing
        input: {}
      - id: badkey
        inptu: {}
        expect: {status: success}
      - id: typed
        assertions:
          - {type: contains-all, value: "abc"}
          - {type: regex, value: "[a"}
      - id: steps
        multi_step:
          - {step: one, input: {}, expect: {results_mni: 1}}
      - id: fine
        input: {}
        expect: {status: success}
"""


def test_broken_file_is_reported_and_other_files_still_run(project: Project) -> None:
    project.write("good.tests.yaml", GOOD)
    project.write("broken.tests.yaml", BROKEN_YAML)
    project.write("broken.tests.json", '{"agent": "bot",\n  "test_suites": {,}}\n')
    result = project.run("run", ".", "--target", project.agent)
    assert result.exit_code == 1, "a file that could not be read is not a pass"
    assert result.status("good") == "passed"
    assert result.counts() == (1, 1, 0, 0, 0)
    assert result.report is not None
    problems = result.report["problems"]
    assert any(re.search(r"broken\.tests\.yaml:6:25: invalid YAML", p) for p in problems), problems
    assert any(re.search(r"broken\.tests\.json:2:\d+: invalid JSON", p) for p in problems), problems
    assert "broken.tests.yaml:6:25" in result.stdout


def test_a_test_with_an_unknown_assertion_errors_and_its_neighbours_run(project: Project) -> None:
    project.write("bad.tests.yaml", BAD_TESTS)
    result = project.run("run", ".", "--target", project.agent)
    assert result.exit_code == 1
    assert result.status("fine") == "passed"
    for test_id in ("typo", "badregex", "wrongtype", "nothing", "badkey", "typed", "steps"):
        assert result.status(test_id) == "error", test_id
    error = result.tests["typo"]["trials"][0]["error"]
    assert "bad.tests.yaml:7:18: typo: expect.stauts" in error
    assert "unknown assertion 'stauts' (did you mean 'status'?)" in error


def test_validate_lists_every_problem_with_location_and_test_id(project: Project) -> None:
    project.write("bad.tests.yaml", BAD_TESTS)
    project.write("broken.tests.yaml", BROKEN_YAML)
    project.write("good.tests.yaml", GOOD)
    result = project.run("validate", ".")
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    expected = [
        ("broken.tests.yaml:6:25", None, "invalid YAML"),
        ("bad.tests.yaml:7:18", "typo", "unknown assertion 'stauts' (did you mean 'status'?)"),
        ("bad.tests.yaml:11:56", "badregex", "invalid regular expression '(unclosed'"),
        ("bad.tests.yaml:14:9", "wrongtype", "valid integer"),
        ("bad.tests.yaml:16:9", "nothing", "no expect and no assertions"),
        ("bad.tests.yaml:19:9", "badkey", "unknown key 'inptu' (did you mean 'input'?)"),
        ("bad.tests.yaml:23:34", "typed", "contains-all needs a list of strings"),
        ("bad.tests.yaml:24:27", "typed", "invalid regular expression '[a'"),
        ("bad.tests.yaml:27:45", "steps", "unknown assertion 'results_mni'"),
    ]
    assert len(lines) == len(expected), lines
    for where, test_id, message in expected:
        matching = [line for line in lines if where in line and message in line]
        assert matching, f"no problem at {where} saying {message!r} in:\n" + "\n".join(lines)
        if test_id is not None:
            assert f"{where}: {test_id}" in matching[0]
    assert "9 tests, 0 eval cases, 9 problems" in result.stdout


def test_validate_accepts_valid_files(project: Project) -> None:
    project.write("assertly.yaml", {"agents": {"bot": project.agent}})
    project.write("good.tests.yaml", GOOD)
    project.write("flow.yaml", FLOW)
    result = project.run("validate", ".")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "1 test, 3 eval cases, 0 problems\n"
    assert result.stderr == ""


def test_validate_checks_hooks_agents_and_facts_against_the_config(project: Project) -> None:
    project.write(
        "assertly.yaml",
        {"agents": {"bot": project.agent}, "hooks": {"seed": "true"}, "facts": {"on_ci": False}},
    )
    project.write(
        "a.tests.yaml",
        "agent: bot\ntest_suites:\n  s:\n    tests:\n"
        "      - {id: hooked, setup: seed, cleanup: [seed], input: {}, expect: {status: ok}}\n"
        "      - {id: typo, setup: sede, skip_if: mystery, input: {}, expect: {status: ok}}\n"
        "      - {id: declared, skip_if: on_ci, input: {}, expect: {status: ok}}\n",
    )
    project.write(
        "b.tests.yaml",
        "agent: other\ntest_suites:\n  s:\n    tests:\n"
        "      - {id: elsewhere, input: {}, expect: {status: ok}}\n",
    )
    result = project.run("validate", ".")
    # An unknown hook would make the test an error at run time: a problem.
    assert result.exit_code == 2, result.stdout + result.stderr
    assert result.stderr.splitlines() == [
        "a.tests.yaml:6: typo: setup: unknown hook 'sede' (did you mean 'seed'?) "
        "(hooks in config: seed)"
    ]
    # A missing target (--target can still run it) and an undeclared fact are warnings.
    assert result.stdout.splitlines() == [
        f"warning: no target for agent 'other' (config read: {project.root / 'assertly.yaml'}); "
        "map it under agents: in the config, or pass --target",
        "warning: fact 'mystery' is not declared; treated as false "
        "(skip_if of a.tests.yaml:6: typo)",
        "4 tests, 0 eval cases, 1 problem, 2 warnings",
    ]
    # Without the bad hook, warnings alone do not fail validation.
    project.write(
        "a.tests.yaml", (project.root / "a.tests.yaml").read_text().replace("sede", "seed")
    )
    fixed = project.run("validate", ".")
    assert fixed.exit_code == 0, fixed.stderr
    assert fixed.stdout.endswith("4 tests, 0 eval cases, 0 problems, 2 warnings\n")


def test_validate_loads_the_config_plugins(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As `run` does: a custom assertion from a plugin module is not an unknown assertion.
    monkeypatch.syspath_prepend(str(project.root))
    monkeypatch.setattr(REGISTRY, "_entries", {d: dict(t) for d, t in REGISTRY._entries.items()})
    monkeypatch.setattr(REGISTRY, "_functions", dict(REGISTRY._functions))
    project.write(
        "assertly_validate_plugin.py", "def get_assert(output, context):\n    return True\n"
    )
    project.write(
        "assertly.yaml",
        {"agents": {"bot": project.agent}, "plugins": ["assertly_validate_plugin"]},
    )
    project.write(
        "p.tests.yaml",
        "agent: bot\ntest_suites:\n  s:\n    tests:\n"
        "      - {id: t, input: {}, assertions: [{type: assertly_validate_plugin}]}\n",
    )
    result = project.run("validate", ".")
    sys.modules.pop("assertly_validate_plugin", None)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "1 test, 0 eval cases, 0 problems\n"


def test_duplicate_ids_and_keys_are_problems(project: Project) -> None:
    project.write(
        "dup.tests.yaml",
        "agent: bot\ntest_suites:\n  a:\n    tests:\n"
        "      - {id: x, input: {}, expect: {status: ok}}\n"
        "  b:\n    tests:\n      - {id: x, input: {}, expect: {status: ok, status: bad}}\n",
    )
    result = project.run("validate", "dup.tests.yaml")
    assert result.exit_code == 2
    assert "duplicate key 'status'" in result.stderr
    assert "dup.tests.yaml:8:" in result.stderr


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ("agentz: {}\n", "unknown key 'agentz'"),
        ("trials: 0\n", "trials"),
        ("agents: [1, 2\n", "invalid YAML"),
        ("pass_threshold: most\n", "pass_threshold"),
    ],
)
def test_config_errors_exit_2(project: Project, config: str, message: str) -> None:
    project.write("assertly.yaml", config)
    project.write("good.tests.yaml", GOOD)
    result = project.run("run", ".", "--target", project.agent)
    assert result.exit_code == 2
    assert result.report is None
    assert "assertly.yaml" in result.stderr and message in result.stderr
    assert not (project.root / ".assertly").exists(), "nothing may run on a config error"
    assert project.run("validate", ".").exit_code == 2


def test_config_in_pyproject_is_used(project: Project) -> None:
    project.write("pyproject.toml", f'[tool.assertly]\nagents = {{ bot = "{project.agent}" }}\n')
    project.write("good.tests.yaml", GOOD)
    result = project.run("run", ".")
    assert result.exit_code == 0
    assert result.counts() == (1, 1, 0, 0, 0)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("run", "empty-dir"), "no tests found"),
        (("run", "missing-path"), "no such file or directory"),
        (("run", "only-broken"), "invalid YAML"),
        (("run",), "give at least one test file"),
        (("run", "good.tests.yaml", "-o", "report.txt"), ".json, .xml, .md, .html"),
        (("run", "good.tests.yaml", "--target", "ftp://example.com"), "unknown target"),
        (("run", "good.tests.yaml", "--now", "yesterday"), "--now"),
    ],
)
def test_usage_errors_exit_2(project: Project, args: tuple[str, ...], message: str) -> None:
    (project.root / "empty-dir").mkdir()
    project.write("only-broken/x.tests.yaml", BROKEN_YAML)
    project.write("good.tests.yaml", GOOD)
    result = project.run(*args, report=False)
    assert result.exit_code == 2, result.stdout + result.stderr
    assert message in result.stderr


# --- eval sections ------------------------------------------------------------------------------

FLOW = """\
name: triage
souls: {analyst: {model: some-model}}
blocks:
  summarize:
    soul: analyst
    assertions:
      - {type: contains, value: incident}
  classify:
    assertions:
      - {type: is-json}
eval:
  threshold: 0.8
  cases:
    - id: clean
      inputs: {q: one}
      fixtures:
        summarize: "Two incidents found: incident A and incident B"
        classify: '{"label": "security"}'
    - id: also-clean
      fixtures:
        summarize: "one incident"
      expected:
        summarize:
          - {type: icontains, value: ONE}
    - id: too-slow
      fixtures:
        summarize: "an incident"
        classify: {output: '{"label": "ops"}', cost_usd: 0.01, latency_ms: 120}
      expected:
        classify:
          - {type: contains, value: ops}
          - {type: cost, threshold: 0.05}
          - {type: latency, threshold: 100, weight: 3}
"""


def test_eval_section_scores_cases_and_suite(project: Project) -> None:
    project.write("flow.yaml", FLOW)
    result = project.run("run", ".")
    assert result.report is not None
    [suite] = result.report["evals"]
    assert suite["file"].endswith("flow.yaml")
    assert suite["threshold"] == 0.8
    cases = {case["id"]: case for case in suite["cases"]}
    assert cases["clean"]["status"] == "passed"
    assert cases["clean"]["score"] == 1.0
    assert cases["also-clean"]["status"] == "passed"
    # too-slow: summarize contains (1, w1), classify is-json (1, w1), contains (1, w1),
    # cost (1, w1), latency 120 > 100 (0, w3): weighted mean 4/7.
    assert cases["too-slow"]["status"] == "failed"
    assert cases["too-slow"]["score"] == pytest.approx(4 / 7)
    assert suite["score"] == pytest.approx((1 + 1 + 4 / 7) / 3)
    # The suite passes its threshold although one case failed; the failing case is listed.
    assert suite["passed"] is True
    assert result.exit_code == 0
    assert result.counts() == (0, 0, 0, 0, 0)  # the summary counts tests, not eval cases
    assert "too-slow" in result.stdout
    latency = cases["too-slow"]["blocks"]["classify"]["results"][-1]
    assert latency["passed"] is False


def test_a_failing_case_of_a_passing_suite_is_no_failure_in_summary_or_junit(
    project: Project,
) -> None:
    project.write("flow.yaml", FLOW)
    project.write("good.tests.yaml", GOOD)
    result = project.run("run", ".", "--target", project.agent, "-o", "junit.xml")
    assert result.exit_code == 0
    assert result.summary["failed"] == 0
    assert result.counts() == (1, 1, 0, 0, 0)
    assert (
        "1 test: 1 passed, 0 failed, 0 errored, 0 skipped (100.0% pass rate); "
        "1 of 1 eval suite met the threshold in "
    ) in result.stdout
    root = ElementTree.parse(project.root / "junit.xml").getroot()
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("5", "0", "0")
    suite = root.find("testsuite[@name='eval: flow.yaml']")
    assert suite is not None and suite.get("failures") == "0"
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert list(cases) == ["clean", "also-clean", "too-slow", "suite threshold"]
    slow = cases["too-slow"]
    assert slow.find("failure") is None
    out = slow.findtext("system-out") or ""
    assert "failed (score 0.571), but the suite met its threshold" in out
    assert "[classify] latency" in out
    assert list(cases["suite threshold"]) == []  # passed


def test_a_failing_suite_fails_its_threshold_testcase_in_junit(project: Project) -> None:
    project.write("flow.yaml", FLOW.replace("threshold: 0.8", "threshold: 0.9"))
    result = project.run("run", "flow.yaml", "-o", "junit.xml")
    assert result.exit_code == 1
    root = ElementTree.parse(project.root / "junit.xml").getroot()
    assert (root.get("tests"), root.get("failures")) == ("4", "2")
    cases = {case.get("name"): case for case in root.iter("testcase")}
    assert cases["too-slow"].find("failure") is not None
    threshold = cases["suite threshold"].find("failure")
    assert threshold is not None
    assert threshold.get("message") == "score 0.857, threshold 0.9: below the threshold"


@pytest.mark.parametrize(
    "args",
    [
        ("--agent", "bot"),
        ("--suite", "s"),
        ("--test", "good"),
        ("--tag", "t"),
        ("-k", "good"),
    ],
)
def test_every_filter_leaves_eval_sections_out(project: Project, args: tuple[str, ...]) -> None:
    project.write("flow.yaml", FLOW)
    project.write("good.tests.yaml", GOOD.replace("expect:", "tags: [t], expect:"))
    result = project.run("run", ".", "--target", project.agent, *args)
    assert result.exit_code == 0
    assert set(result.tests) == {"good"}
    assert result.report is not None
    assert result.report["evals"] == []


def test_eval_suite_below_threshold_fails_the_run(project: Project) -> None:
    project.write("flow.yaml", FLOW.replace("threshold: 0.8", "threshold: 0.9"))
    result = project.run("run", "flow.yaml")
    assert result.report is not None
    [suite] = result.report["evals"]
    assert suite["passed"] is False
    assert result.exit_code == 1


def test_eval_runs_next_to_agent_tests(project: Project) -> None:
    project.write("flow.yaml", FLOW)
    project.write("good.tests.yaml", GOOD)
    result = project.run("run", ".", "--target", project.agent)
    assert result.exit_code == 0
    assert result.status("good") == "passed"
    assert result.counts() == (1, 1, 0, 0, 0)


def test_expected_block_without_fixture_is_a_load_error(project: Project) -> None:
    flow = FLOW.replace(
        '    - id: also-clean\n      fixtures:\n        summarize: "one incident"\n',
        '    - id: also-clean\n      fixtures:\n        summarize: "one incident"\n'
        "      expected:\n        classify:\n          - {type: is-json}\n",
    ).replace(
        "      expected:\n        summarize:\n          - {type: icontains, value: ONE}\n", ""
    )
    project.write("flow.yaml", flow)
    validated = project.run("validate", "flow.yaml")
    assert validated.exit_code == 2
    assert re.search(
        r"flow\.yaml:\d+:\d+: also-clean: expected block 'classify' has no fixture",
        validated.stderr,
    )
    result = project.run("run", "flow.yaml")
    assert result.report is not None
    cases = {case["id"]: case for case in result.report["evals"][0]["cases"]}
    assert cases["also-clean"]["status"] == "error"
    assert "has no fixture output" in cases["also-clean"]["error"]
    assert result.report["evals"][0]["passed"] is False
    assert result.exit_code == 1


def test_eval_case_problems_name_the_case(project: Project) -> None:
    project.write(
        "flow.yaml",
        "blocks: {b: {}}\neval:\n  cases:\n    - id: c1\n      fixture: {b: x}\n"
        "    - id: c1\n      fixtures: {b: x}\n      expected: {b: [{type: nope}]}\n",
    )
    result = project.run("validate", "flow.yaml")
    assert result.exit_code == 2
    assert re.search(r"flow\.yaml:5:\d+: c1: fixture: unknown key 'fixture'", result.stderr), (
        result.stderr
    )
    assert "duplicate case id 'c1'" in result.stderr
    assert "nope" in result.stderr


def test_missing_metric_in_plain_fixture_is_an_error_not_a_pass(project: Project) -> None:
    project.write(
        "flow.yaml",
        "blocks: {b: {assertions: [{type: latency, threshold: 100}]}}\n"
        "eval:\n  threshold: 0.0\n  cases:\n    - id: c\n      fixtures: {b: some text}\n",
    )
    result = project.run("run", "flow.yaml")
    assert result.report is not None
    [case] = result.report["evals"][0]["cases"]
    assert case["status"] == "error"
    assert result.exit_code == 1
    json.dumps(result.report)  # the report stays plain JSON


def test_validate_suggests_agent_and_fact_names(project: Project) -> None:
    project.write(
        "assertly.yaml", {"agents": {"notes": project.agent}, "facts": {"vault_is_read_only": True}}
    )
    project.write(
        "a.tests.yaml",
        "agent: note\ntest_suites:\n  s:\n    tests:\n"
        "      - {id: t, skip_if: vault_read_only, input: {}, expect: {status: ok}}\n",
    )
    result = project.run("validate", ".")
    assert "no target for agent 'note' (did you mean 'notes'?)" in result.stdout
    assert "fact 'vault_read_only' is not declared (did you mean 'vault_is_read_only'?)" in (
        result.stdout
    )
