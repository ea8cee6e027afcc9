"""A --agent, --suite or --test value that matches nothing is a usage error with a
did-you-mean, never a run that silently judges fewer tests."""

from __future__ import annotations

import pytest
from runner_support import Project


@pytest.fixture
def suites(project: Project) -> Project:
    project.tests_file(
        "a.tests.yaml",
        {
            "search": [{"id": "security_search", "input": {}, "expect": {"status": "success"}}],
            "errors": [{"id": "empty_request", "input": {}, "expect": {"status": "success"}}],
        },
    )
    return project


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--suite", "serch", "'serch' matches no suite in these files (did you mean 'search'?)"),
        ("--test", "security_serch", "(did you mean 'security_search'?)"),
        ("--test", "nothing_*", "'nothing_*' matches no test id in these files"),
        ("--agent", "bott", "'bott' matches no agent in these files"),
    ],
)
def test_a_value_matching_nothing_is_refused(
    suites: Project, option: str, value: str, message: str
) -> None:
    result = suites.run("run", ".", "--target", suites.agent, option, value, report=False)
    assert result.exit_code == 2
    assert message in result.stderr
    assert "PASSED" not in result.stdout  # nothing ran


def test_one_misspelt_value_among_good_ones_is_refused(suites: Project) -> None:
    result = suites.run(
        "run", ".", "--target", suites.agent, "--suite", "search", "--suite", "eror", report=False
    )
    assert result.exit_code == 2
    assert "'eror' matches no suite in these files (did you mean 'errors'?)" in result.stderr


def test_values_that_match_run_as_before(suites: Project) -> None:
    result = suites.run("run", ".", "--target", suites.agent, "--test", "security_*")
    assert result.exit_code == 0
    assert set(result.tests) == {"security_search"}
