"""The run budget (``--max-cost-usd``, issue 34): real command agents that report what each
call cost, and the fake judge server of tests/judge for the judge's cost."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from runner_support import Project

# The fake judge server of the judge tests (tests/judge/fake_openai.py).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "judge"))
import fake_openai


def _calls(project: Project) -> list[str]:
    log = project.root / "calls.log"
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def _suite(project: Project, count: int = 6, cost: float = 0.25) -> None:
    log = str(project.root / "calls.log")
    tests = [
        {
            "id": f"t{n}",
            "input": {"mode": "meta", "cost": cost, "log": log, "tag": f"t{n}"},
            "expect": {"status": "success"},
        }
        for n in range(1, count + 1)
    ]
    project.tests_file("t.yaml", {"s": tests})


def test_the_budget_stops_new_calls_and_errors_the_rest(project: Project) -> None:
    _suite(project)
    result = project.run(
        "run", "t.yaml", "--target", project.agent, "--max-cost-usd", "0.5", "-j", "1"
    )
    assert result.exit_code == 1
    assert _calls(project) == ["t1", "t2"]  # $0.25 + $0.25: spent, no third call
    assert result.counts() == (6, 2, 0, 4, 0)  # never skipped, never passed
    message = "run budget of $0.50 spent ($0.50)"
    for test_id in ("t3", "t4", "t5", "t6"):
        assert message in result.tests[test_id]["trials"][0]["error"]
    assert result.summary["budget_stopped"] == message
    assert f"the run budget stopped the run: {message}" in result.stdout
    # Stored with the run: a report of it says so again.
    again = project.run("report", "last")
    assert again.summary["budget_stopped"] == message


def test_a_budget_not_reached_changes_nothing(project: Project) -> None:
    _suite(project, count=2)
    project.write("assertly.yaml", {"agents": {"bot": project.agent}, "max_cost_usd": 5})
    result = project.run("run", "t.yaml")
    assert result.exit_code == 0 and len(_calls(project)) == 2
    assert "budget_stopped" not in result.summary


def test_with_concurrency_the_calls_in_flight_finish(project: Project) -> None:
    _suite(project, count=8, cost=1.0)
    result = project.run(
        "run", "t.yaml", "--target", project.agent, "--max-cost-usd", "0.5", "-j", "4"
    )
    assert result.exit_code == 1
    started = len(_calls(project))
    # Not reserved: the calls that started before the first cost was reported finish and
    # count (at most -j of them); none starts after.
    assert 1 <= started <= 4
    _, passed, _, errored, _ = result.counts()
    assert passed == started and errored == 8 - started


def test_a_cache_hit_costs_nothing_and_is_still_judged(project: Project) -> None:
    _suite(project, count=3)
    project.run("run", "t.yaml", "--target", project.agent, "--cache", "rw")
    assert len(_calls(project)) == 3
    result = project.run(
        "run", "t.yaml", "--target", project.agent, "--cache", "rw", "--max-cost-usd", "0.1"
    )
    assert result.exit_code == 0, result.stdout
    assert result.counts() == (3, 3, 0, 0, 0) and len(_calls(project)) == 3


# --- the judge's cost -----------------------------------------------------------------------


@pytest.fixture
def fake() -> Iterator[Any]:
    yield from fake_openai.serve()


def test_the_judges_cost_counts(project: Project, fake: Any) -> None:
    reply = fake_openai.completion(fake_openai.verdict("pass", 1.0), cost=0.4)
    fake.answers(fake_openai.Raw(200, reply))
    log = str(project.root / "calls.log")
    rubric = [{"type": "llm-rubric", "value": "The answer is fine."}]
    project.write(
        "assertly.yaml",
        {
            "agents": {"bot": project.agent},
            "judge": {"base_url": fake.url, "model": "judge-1"},
            "max_cost_usd": 0.5,
        },
    )
    tests = [
        {
            "id": f"t{n}",
            # The agent's calls cost nothing: only the judge's spend the budget.
            # Each its own output: a judge's request is not answered from its cache.
            "input": {"mode": "meta", "cost": 0, "log": log, "files": [f"t{n}.md"]},
            "assertions": rubric,
        }
        for n in (1, 2, 3, 4)
    ]
    project.tests_file("t.yaml", {"s": tests})
    result = project.run("run", "t.yaml", "-j", "1")
    assert result.exit_code == 1
    assert len(fake.requests) == 2  # $0.40, then $0.80: spent
    assert result.counts() == (4, 2, 0, 2, 0)
    message = "run budget of $0.50 spent ($0.80)"
    assert result.summary["budget_stopped"] == message
    errors = [
        t["trials"][0]["error"] or "" for t in result.report["tests"] if t["status"] == "error"
    ]  # type: ignore[index]
    assert len(errors) == 2 and all(message in error for error in errors)
