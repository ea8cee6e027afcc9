"""``--resume`` refuses a run whose verdict-changing config changed since it began (#28)."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from runner_support import Project

IDS = [f"t{number:02d}" for number in range(20)]
STOP = "t08"  # answers wrongly: with -j 1 --fail-fast the run stops after 8 passes


def _project(project: Project, config: dict[str, Any]) -> str:
    """20 tests whose results are documents/ files; an interrupted run of them (8 passed)."""
    answers = project.root / "answers.jsonl"
    answers.write_text(
        "".join(
            json.dumps(
                {
                    "id": i,
                    "output": {
                        "status": "failure" if i == STOP else "success",
                        "results": [{"file": "documents/plan.txt", "redacted": False}],
                    },
                }
            )
            + "\n"
            for i in IDS
        )
    )
    tests = [
        {
            "id": i,
            "input": i,
            "skip_if": "offline",
            "expect": {
                "status": "success",
                "if_sensitive_results": {"has_field": "redacted", "value": True},
            },
        }
        for i in IDS
    ]
    project.write(
        "a.tests.yaml", yaml.safe_dump({"agent": "bot", "test_suites": {"s": {"tests": tests}}})
    )
    project.write("assertly.yaml", config)
    return f"fixtures:{answers}"


BASE: dict[str, Any] = {"sensitive_prefixes": ["people/"], "facts": {"offline": False}}


def _interrupted(project: Project, target: str) -> None:
    first = project.run("run", ".", "--target", target, "-j", "1", "--fail-fast")
    assert first.exit_code == 1
    assert first.counts()[1] == 8, first.stdout


def test_a_new_sensitive_prefix_refuses_resume(project: Project) -> None:
    # issue 28, probe 8: interrupt after 8 of 20 tests, add a prefix to sensitive_prefixes,
    # --resume last: the 8 stale passes were kept (a fresh run: 0 passed).
    target = _project(project, BASE)
    _interrupted(project, target)
    project.write("assertly.yaml", {**BASE, "sensitive_prefixes": ["people/", "documents/"]})
    resumed = project.run("run", "--resume", "last")
    assert resumed.exit_code == 2, resumed.stdout + resumed.stderr
    assert "another sensitive_prefixes than the config and options now give" in resumed.stderr
    assert "assertly recheck" in resumed.stderr
    fresh = project.run("run", ".", "--target", target)
    assert fresh.counts()[1] == 0, "under the new config nothing passes"


@pytest.mark.parametrize(
    ("config", "named"),
    [
        ({**BASE, "facts": {"offline": True}}, "facts (config and --fact)"),
        ({**BASE, "shape": {"results": "$.hits"}}, "shape"),
        (
            {**BASE, "judge": {"base_url": "http://127.0.0.1:9/v1", "model": "m"}},
            "judge",
        ),
    ],
)
def test_other_verdict_changing_parts_refuse_resume(
    project: Project, config: dict[str, Any], named: str
) -> None:
    target = _project(project, BASE)
    _interrupted(project, target)
    project.write("assertly.yaml", config)
    resumed = project.run("run", "--resume", "last")
    assert resumed.exit_code == 2, resumed.stdout + resumed.stderr
    assert f"another {named} than the config and options now give" in resumed.stderr


def test_a_fact_given_again_differently_refuses_resume(project: Project) -> None:
    target = _project(project, BASE)
    _interrupted(project, target)
    resumed = project.run("run", "--resume", "last", "--fact", "offline=true")
    assert resumed.exit_code == 2
    assert "facts (config and --fact)" in resumed.stderr


def test_an_unchanged_config_resumes(project: Project) -> None:
    target = _project(project, BASE)
    _interrupted(project, target)
    # A part that changes no verdict (concurrency) may change.
    project.write("assertly.yaml", {**BASE, "concurrency": 3})
    resumed = project.run("run", "--resume", "last")
    assert resumed.exit_code == 1
    assert resumed.counts() == (20, 19, 1, 0, 0)


def test_a_run_stored_without_the_digest_resumes_with_a_warning(project: Project) -> None:
    target = _project(project, BASE)
    _interrupted(project, target)
    ((run_id, options),) = project.sql("SELECT run_id, options FROM runs")
    data = json.loads(options)
    del data["verdict_config"]
    project.sql("UPDATE runs SET options = ? WHERE run_id = ?", json.dumps(data), run_id)
    resumed = project.run("run", "--resume", "last")
    assert resumed.exit_code == 1
    assert resumed.counts() == (20, 19, 1, 0, 0)
    assert "was stored without a digest of its config" in resumed.stdout + resumed.stderr


def test_recheck_then_resume_judges_the_stored_responses_under_the_new_config(
    project: Project,
) -> None:
    # What the refusal offers: recheck judges the 8 stored responses again under the new
    # prefixes, and resuming the rechecked run runs the rest.
    target = _project(project, BASE)
    _interrupted(project, target)
    project.write("assertly.yaml", {**BASE, "sensitive_prefixes": ["people/", "documents/"]})
    assert project.run("run", "--resume", "last").exit_code == 2
    rechecked = project.run("recheck", "last")
    assert rechecked.counts()[:3] == (20, 0, 9), rechecked.stdout
    resumed = project.run("run", "--resume", "last")
    assert resumed.counts() == (20, 0, 20, 0, 0), resumed.stdout + resumed.stderr


def test_another_now_refuses_resume(project: Project) -> None:
    target = _project(project, BASE)
    first = project.run(
        "run", ".", "--target", target, "-j", "1", "--fail-fast", "--now", "2026-01-01T00:00:00Z"
    )
    assert first.counts()[1] == 8
    resumed = project.run("run", "--resume", "last", "--now", "2027-01-01T00:00:00Z")
    assert resumed.exit_code == 2
    assert "another --now than the config and options now give" in resumed.stderr
    same = project.run("run", "--resume", "last")  # the stored --now is taken again
    assert same.counts() == (20, 19, 1, 0, 0)


def test_a_part_the_stored_run_has_no_digest_of_is_not_taken_for_a_change(
    project: Project,
) -> None:
    # A run stored by an assertly that checked fewer parts: those it lacks are not checked
    # (a warning says so), the others are.
    target = _project(project, BASE)
    _interrupted(project, target)
    ((run_id, options),) = project.sql("SELECT run_id, options FROM runs")
    data = json.loads(options)
    del data["verdict_config"]["parts"]["--now"]
    data["verdict_config"]["digest"] = "from an older assertly"
    project.sql("UPDATE runs SET options = ? WHERE run_id = ?", json.dumps(data), run_id)
    resumed = project.run("run", "--resume", "last")
    assert resumed.counts() == (20, 19, 1, 0, 0)
    assert "without a digest of --now: not checked" in resumed.stdout + resumed.stderr
