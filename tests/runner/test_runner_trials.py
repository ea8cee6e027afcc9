"""Trials: a flaky agent (its state file makes trials alternate pass, fail, pass, …) judged with
``--pass-threshold any|all|majority``; pass_at_k, pass_all_k, flaky; the unbiased pass@k
estimator; the verdict function itself.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from runner_support import Project

from assertly.runner import TrialRecord, pass_at_k
from assertly.runner import test_status as verdict


def _flaky(project: Project, trials: int | None = None, test_id: str = "flaky") -> None:
    test: dict[str, Any] = {
        "id": test_id,
        "input": {"mode": "flaky", "state": str(project.root / f"{test_id}.state")},
        "expect": {"status": "success"},
    }
    if trials is not None:
        test["trials"] = trials
    project.tests_file(f"{test_id}.tests.yaml", {"s": [test]})


@pytest.mark.parametrize(
    ("threshold", "status", "exit_code"),
    [("any", "passed", 0), ("all", "failed", 1), ("majority", "failed", 1)],
)
def test_four_alternating_trials(
    project: Project, threshold: str, status: str, exit_code: int
) -> None:
    _flaky(project)
    result = project.run(
        "run",
        ".",
        "--target",
        project.agent,
        "--trials",
        "4",
        "-j",
        "1",
        "--pass-threshold",
        threshold,
    )
    test = result.tests["flaky"]
    assert test["status"] == status
    assert result.exit_code == exit_code
    assert [t["trial"] for t in test["trials"]] == [1, 2, 3, 4]
    assert [t["status"] for t in test["trials"]] == ["passed", "failed", "passed", "failed"]
    assert test["pass_at_k"] is True
    assert test["pass_all_k"] is False
    assert test["flaky"] is True
    assert test["score"] == 0.5
    # n = 4, c = 2: pass@1 = 0.5, pass@2 = 1 - C(2,2)/C(4,2) = 5/6, pass@4 (k = n) = 1;
    # pass@5 is undefined (n < k).
    estimates = test["pass_at_k_estimates"]
    assert list(estimates) == ["1", "2", "4"]
    assert estimates["1"] == pytest.approx(0.5)
    assert estimates["2"] == pytest.approx(5 / 6)
    assert estimates["4"] == pytest.approx(1.0)
    # Each failing trial lists its failure.
    assert test["trials"][1]["failures"][0]["message"] == "Expected status 'success', got 'error'"
    assert test["trials"][0]["failures"] == []


def test_majority_of_three_alternating_trials_passes(project: Project) -> None:
    _flaky(project)
    result = project.run(
        "run",
        ".",
        "--target",
        project.agent,
        "--trials",
        "3",
        "-j",
        "1",
        "--pass-threshold",
        "majority",
    )
    test = result.tests["flaky"]
    assert [t["status"] for t in test["trials"]] == ["passed", "failed", "passed"]
    assert test["status"] == "passed"
    assert result.counts() == (1, 1, 0, 0, 0)
    assert test["flaky"] is True


def test_per_test_trials_override_the_run_default(project: Project) -> None:
    _flaky(project, trials=2)
    project.tests_file(
        "steady.tests.yaml", {"s": [{"id": "steady", "input": {}, "expect": {"status": "success"}}]}
    )
    result = project.run("run", ".", "--target", project.agent, "--trials", "3", "-j", "1")
    assert len(result.tests["flaky"]["trials"]) == 2
    # ... and the run says so: a command-line option is never ignored silently.
    output = result.stdout + result.stderr
    assert "warning: flaky.tests.yaml::s::flaky: its own trials: 2 override --trials 3" in output
    assert "steady.tests.yaml::s::steady: its own trials" not in output
    steady = result.tests["steady"]
    assert len(steady["trials"]) == 3
    assert (steady["pass_at_k"], steady["pass_all_k"], steady["flaky"]) == (True, True, False)
    assert steady["pass_at_k_estimates"] == {"1": 1.0, "2": 1.0, "3": 1.0}


def test_always_failing_trials_are_not_flaky(project: Project) -> None:
    project.tests_file(
        "bad.tests.yaml",
        {"s": [{"id": "bad", "input": {"status": "error"}, "expect": {"status": "success"}}]},
    )
    result = project.run(
        "run", ".", "--target", project.agent, "--trials", "2", "--pass-threshold", "any"
    )
    test = result.tests["bad"]
    assert test["status"] == "failed"
    assert (test["pass_at_k"], test["pass_all_k"], test["flaky"]) == (False, False, False)
    assert test["pass_at_k_estimates"] == {"1": 0.0, "2": 0.0}


def test_pass_threshold_from_config(project: Project) -> None:
    project.write("assertly.yaml", {"pass_threshold": "any", "trials": 2, "concurrency": 1})
    _flaky(project)
    result = project.run("run", ".", "--target", project.agent)
    test = result.tests["flaky"]
    assert len(test["trials"]) == 2
    assert test["status"] == "passed"
    assert result.exit_code == 0


# --- the estimator -----------------------------------------------------------------------------


def test_pass_at_k_is_undefined_when_fewer_trials_than_k() -> None:
    assert pass_at_k(1, 1, 2) is None
    assert pass_at_k(4, 4, 5) is None
    assert pass_at_k(3, 0, 0) is None


@pytest.mark.parametrize(
    ("n", "c", "k"), [(10, 3, 1), (10, 3, 5), (20, 7, 10), (5, 1, 5), (5, 0, 3)]
)
def test_pass_at_k_matches_the_unbiased_formula(n: int, c: int, k: int) -> None:
    expected = 1.0 - math.comb(n - c, k) / math.comb(n, k)
    assert pass_at_k(n, c, k) == pytest.approx(expected)


def test_pass_at_k_edge_values() -> None:
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)  # pass@1 is the pass rate
    assert pass_at_k(10, 0, 5) == 0.0
    assert pass_at_k(10, 6, 5) == 1.0  # fewer than k failures: some k-sample always passes
    assert pass_at_k(3, 3, 3) == 1.0


# --- the verdict function ----------------------------------------------------------------------


def _trials(*statuses: str) -> list[TrialRecord]:
    return [TrialRecord("k", n, s, 1.0) for n, s in enumerate(statuses, start=1)]  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("statuses", "any_", "all_", "majority"),
    [
        (("passed",), "passed", "passed", "passed"),
        (("failed",), "failed", "failed", "failed"),
        (("passed", "failed"), "passed", "failed", "failed"),
        (("passed", "passed", "failed"), "passed", "failed", "passed"),
        (("passed", "error"), "passed", "error", "error"),
        (("error", "error"), "error", "error", "error"),
        (("passed", "skipped"), "passed", "passed", "passed"),
        (("skipped", "skipped"), "skipped", "skipped", "skipped"),
        (("failed", "error", "passed"), "passed", "failed", "failed"),
    ],
)
def test_test_status(statuses: tuple[str, ...], any_: str, all_: str, majority: str) -> None:
    trials = _trials(*statuses)
    assert verdict(trials, "any") == any_
    assert verdict(trials, "all") == all_
    assert verdict(trials, "majority") == majority


def test_a_test_without_trials_is_an_error() -> None:
    assert verdict([], "all") == "error"
