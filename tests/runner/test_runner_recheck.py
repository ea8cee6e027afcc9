"""A recheck judges stored responses with the same step judging as the run that made them.

Multi-step tests carry stored responses to later steps, stop at the first step that did not
pass, and keep a target error (there is no response to judge again); a step the file no longer
has is an error that names it.
"""

from __future__ import annotations

from typing import Any

from runner_support import Project


def _step(name: str, files: list[str], **extra: Any) -> dict[str, Any]:
    return {"step": name, "input": {"files": files}, **extra}


def _tests(second_step: str = "p2") -> dict[str, list[dict[str, Any]]]:
    no_overlap = {"no_overlap": {"path": "results[*].file", "with": "first"}}
    return {
        "paging": [
            {
                "id": "disjoint",
                "multi_step": [
                    _step("p1", ["a", "b"], store="first", expect={"results_count": 2}),
                    _step(second_step, ["c", "d"], expect=no_overlap),
                ],
            },
            {
                "id": "overlapping",
                "multi_step": [
                    _step("q1", ["a", "b"], store="first"),
                    _step("q2", ["b", "c"], expect=no_overlap),
                ],
            },
            {
                "id": "stops-early",
                "multi_step": [
                    _step("r1", ["a"], expect={"results_count": 5}),
                    _step("r2", ["b"], expect={"results_count": 1}),
                ],
            },
            {
                "id": "crashes",
                "multi_step": [
                    _step("s1", ["a"], expect={"results_count": 1}),
                    {"step": "s2", "input": {"mode": "crash"}, "expect": {"status": "success"}},
                ],
            },
            {"id": "single", "input": {"files": ["a"]}, "expect": {"results_count": 2}},
        ]
    }


def _trials(report: dict[str, Any] | None) -> dict[str, list[dict[str, Any]]]:
    assert report is not None
    return {
        test["id"]: [
            {key: value for key, value in trial.items() if key != "duration_ms"}
            for trial in test["trials"]
        ]
        for test in report["tests"]
    }


def test_a_recheck_of_an_unchanged_run_judges_every_trial_as_the_run_did(
    project: Project,
) -> None:
    project.tests_file("steps.tests.yaml", _tests())
    first = project.run("run", ".", "--target", project.agent)
    statuses = {key: first.status(key) for key in first.tests}
    assert statuses == {
        "disjoint": "passed",
        "overlapping": "failed",
        "stops-early": "failed",
        "crashes": "error",
        "single": "failed",
    }
    stops = first.tests["stops-early"]["trials"][0]
    assert [step["step"] for step in stops["output"]] == ["r1"]  # r2 never ran
    again = project.run("recheck", "last")
    assert _trials(again.report) == _trials(first.report)
    crashed = again.tests["crashes"]["trials"][0]
    assert crashed["error"].startswith("step s2: ")
    assert "boom: the agent fell over" in crashed["error"]


def test_a_step_the_file_no_longer_has_is_an_error_that_names_it(project: Project) -> None:
    project.tests_file("steps.tests.yaml", _tests())
    first = project.run("run", ".", "--target", project.agent)
    assert first.status("disjoint") == "passed"
    project.tests_file("steps.tests.yaml", _tests(second_step="p2-renamed"))
    again = project.run("recheck", "last")
    trial = again.tests["disjoint"]["trials"][0]
    assert (trial["status"], trial["error"]) == ("error", "step p2 no longer exists")
    assert [step["step"] for step in trial["output"]] == ["p1"]
    assert trial["failures"] == []
