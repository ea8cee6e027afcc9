"""Conversation tests on Ray workers (issue 32): each trial's conversation runs on a worker of a
real local cluster (the module's fixture of tests/runner/test_runner_ray.py), with the same
verdicts, turns and conversations as a local run.
"""

from __future__ import annotations

import os

import conversation_agent as agent
import pytest
from runner_support import Project
from test_conversation_spread import conversation

pytest.importorskip("ray", reason="the Ray backend's tests need `pip install assertly[ray]`")
# The cluster fixture is test_runner_ray.py's: these cases run in that module.


def test_conversation_trials_run_on_the_workers_as_they_run_locally(
    project: Project,
    cluster: None,
) -> None:
    tests = [{**conversation("c0"), "trials": 2}, conversation("c1", turns=2)]
    broken = conversation("broken")
    broken["conversation"]["turns"][1]["user"] = "broken: crash at turn 2"
    project.tests_file("t.yaml", {"s": [*tests, broken]})
    local = project.run("run", "t.yaml", "--target", agent.spec(), "-j", "2")
    assert {call["parent"] for call in agent.calls(project.root)} == {os.getpid()}
    (project.root / "calls.jsonl").unlink()
    remote = project.run("run", "t.yaml", "--target", agent.spec(), "-j", "2", "--backend", "ray")
    assert remote.exit_code == local.exit_code == 1, remote.stdout + remote.stderr
    assert remote.report is not None and local.report is not None

    def seen(report: dict) -> dict:
        return {
            t["id"]: sorted(
                (
                    trial["status"],
                    trial.get("error"),
                    [(turn["user"], turn["output"], turn["outcome"]) for turn in trial["turns"]],
                    trial["conversation"],
                )
                for trial in t["trials"]
            )
            for t in report["tests"]
        }

    assert seen(remote.report) == seen(local.report)
    assert remote.status("c0") == "passed" and remote.status("broken") == "error"
    assert remote.tests["broken"]["trials"][0]["error"].startswith("turn 2 of 3: ")
    # Called from the workers' processes (not this one), one conversation per trial.
    logged = agent.calls(project.root)
    by_id = agent.assert_single_conversations(logged)
    assert sorted(len(calls) for calls in by_id.values()) == [2, 2, 3, 3]
    assert os.getpid() not in {call["parent"] for call in logged}
