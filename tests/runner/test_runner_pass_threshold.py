"""Per-test and per-suite ``pass_threshold``: the flaky agent (trials alternate pass, fail, …)
judged by the threshold its file gives, in the live run, in the counts and failure lists read
back from the store (`assertly report`), on --resume, in recheck and with --fail-fast.
"""

from __future__ import annotations

from typing import Any

from runner_support import Project

from assertly.runner import load_run
from assertly.store import StoredTests


def _flaky(project: Project, test_id: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": test_id,
        "input": {"mode": "flaky", "state": str(project.root / f"{test_id}.state")},
        "expect": {"status": "success"},
        "trials": 2,  # pass, fail
        **extra,
    }


def _file(project: Project) -> None:
    project.write("assertly.yaml", {"agents": {"bot": project.agent}})
    project.write(
        "t.tests.yaml",
        {
            "agent": "bot",
            "test_suites": {
                "lenient": {
                    "pass_threshold": "any",
                    "tests": [
                        _flaky(project, "suite_any"),
                        _flaky(project, "own_all", pass_threshold="all"),
                    ],
                },
                "default": {
                    "tests": [
                        _flaky(project, "run_default"),
                        _flaky(project, "own_any", pass_threshold="any"),
                        _flaky(project, "own_majority", pass_threshold="majority"),
                    ]
                },
            },
        },
    )


EXPECTED = {
    "suite_any": "passed",
    "own_all": "failed",
    "run_default": "failed",  # the config's default: all
    "own_any": "passed",
    "own_majority": "failed",  # 1 of 2 is not more than half
}


def test_a_tests_or_suites_threshold_decides_its_verdict(project: Project) -> None:
    _file(project)
    result = project.run("run", ".", "-j", "1")
    assert {key: test["status"] for key, test in result.tests.items()} == EXPECTED
    assert result.tests["suite_any"]["pass_threshold"] == "any"
    assert result.tests["run_default"]["pass_threshold"] == "all"
    assert result.counts() == (5, 2, 3, 0, 0)
    assert result.exit_code == 1


def test_stored_counts_and_failures_use_each_tests_threshold(project: Project) -> None:
    _file(project)
    project.run("run", ".", "-j", "1")
    run = load_run(".assertly/runs.sqlite", "last")
    tests = run.tests
    assert isinstance(tests, StoredTests)
    # The fast paths (trial statuses only, no record parsed) agree with the full records.
    assert tests.status_counts() == {"passed": 2, "failed": 3, "error": 0, "skipped": 0}
    assert sorted(test.id for test in run.not_passed()) == sorted(
        key for key, status in EXPECTED.items() if status == "failed"
    )
    assert {test.id: test.status for test in run.tests} == EXPECTED
    # `assertly report` gives the same verdicts and exit code.
    again = project.run("report", "last")
    assert {key: test["status"] for key, test in again.tests.items()} == EXPECTED
    assert again.exit_code == 1


def test_an_explicit_pass_threshold_is_overridden_with_a_warning(project: Project) -> None:
    _file(project)
    result = project.run("run", ".", "-j", "1", "--pass-threshold", "majority")
    statuses = {key: test["status"] for key, test in result.tests.items()}
    assert statuses == {**EXPECTED, "run_default": "failed"}
    output = result.stdout + result.stderr
    assert "t.tests.yaml::lenient::suite_any: its pass_threshold: any overrides " in output
    assert "--pass-threshold majority" in output
    # The same value as the option overrides nothing: no warning.
    assert "own_majority: its pass_threshold" not in output


def test_resume_and_recheck_keep_each_tests_threshold(project: Project) -> None:
    _file(project)
    first = project.run("run", ".", "-j", "1")
    run_id = first.report["run_id"]  # type: ignore[index]
    project.sql("DELETE FROM trials WHERE run_id = ? AND trial = 2", run_id)
    resumed = project.run("run", "--resume", "last", "-j", "1")
    # The second trials ran again (the state files go on alternating: 3rd call passes).
    assert {key: test["status"] for key, test in resumed.tests.items()} == {
        "suite_any": "passed",
        "own_all": "passed",
        "run_default": "passed",
        "own_any": "passed",
        "own_majority": "passed",
    }
    project.sql("DELETE FROM trials WHERE run_id = ?", run_id)
    project.sql("DELETE FROM tests WHERE run_id = ?", run_id)
    second = project.run("run", ".", "-j", "1")
    # 4th and 5th calls: fail, pass.
    rechecked = project.run("recheck", "last")
    assert {key: test["status"] for key, test in rechecked.tests.items()} == {
        key: test["status"] for key, test in second.tests.items()
    }
    assert rechecked.tests["suite_any"]["pass_threshold"] == "any"
    assert rechecked.tests["suite_any"]["status"] == "passed"
    assert rechecked.tests["run_default"]["status"] == "failed"


def test_fail_fast_follows_the_tests_threshold(project: Project) -> None:
    project.write("assertly.yaml", {"agents": {"bot": project.agent}})
    project.tests_file(
        "t.tests.yaml",
        {"s": [_flaky(project, "lenient", pass_threshold="any"), _flaky(project, "next")]},
    )
    result = project.run("run", ".", "-j", "1", "--fail-fast")
    # The flaky first test passes by its own threshold, so the run goes on to the next one.
    assert result.status("lenient") == "passed"
    assert result.tests["next"]["trials"][0]["status"] == "passed"
    assert result.status("next") == "failed"


def test_an_invalid_pass_threshold_is_a_load_problem(project: Project) -> None:
    project.write("assertly.yaml", {"agents": {"bot": project.agent}})
    project.tests_file("t.tests.yaml", {"s": [_flaky(project, "t", pass_threshold="most")]})
    result = project.run("validate", "t.tests.yaml")
    assert result.exit_code == 2
    output = result.stdout + result.stderr
    assert "pass_threshold" in output and "'any', 'all' or 'majority'" in output
