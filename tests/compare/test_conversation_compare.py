"""``diff`` and matrix runs of conversation tests (issue 32), against the real command agent of
tests/runner/conversation_agent.py: version v1 remembers what the user said first, v2 forgets
it after turn 1.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runner"))
import conversation_agent as agent
from runner_support import Project


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    """A project directory that is also the working directory."""
    monkeypatch.chdir(tmp_path)
    return Project(tmp_path)


def _conversation(name: str) -> dict[str, Any]:
    said = [f"{name}: order A-1042", f"{name}: any news?", f"{name}: go ahead"]
    remembers = [{"type": "contains", "value": f"first you said {said[0]}"}]
    return {
        "id": name,
        "conversation": {
            "input": {"test": name},
            "turns": [{"user": text, "assertions": remembers} for text in said],
        },
        "assertions": [{"type": "tool-called", "value": "issue_refund"}],
    }


def _suite(project: Project) -> None:
    # "greets" has one turn: both versions answer it alike.
    greets = _conversation("greets")
    greets["conversation"]["turns"] = greets["conversation"]["turns"][:1]
    greets["assertions"] = [{"type": "not-tool-called", "value": "issue_refund"}]
    project.tests_file("t.yaml", {"chat": [_conversation("refund"), greets]})


def test_diff_names_a_regressed_conversation_test(project: Project) -> None:
    _suite(project)
    before = project.run("run", "t.yaml", "--target", agent.spec("v1"))
    assert before.exit_code == 0, before.stdout + before.stderr
    after = project.run("run", "t.yaml", "--target", agent.spec("v2"))
    assert after.exit_code == 1
    assert [f["step"] for f in after.tests["refund"]["trials"][0]["failures"]] == [
        "turn 2",
        "turn 3",
    ]
    diff = project.run("diff", "last~1", "last")
    assert diff.exit_code == 1, diff.stdout + diff.stderr
    assert "1 regressed" in diff.stdout and "refund" in diff.stdout
    as_json = project.run("diff", "last~1", "last", "--format", "json")
    changes = {t["id"]: t["change"] for t in json.loads(as_json.stdout)["tests"]}
    assert changes == {"refund": "regressed", "greets": "unchanged"}
    # Back to v1: fixed, and nothing regressed.
    project.run("run", "t.yaml", "--target", agent.spec("v1"))
    fixed = project.run("diff", "last~1", "last")
    assert fixed.exit_code == 0, fixed.stdout
    assert "0 regressed, 1 fixed" in fixed.stdout


def test_a_matrix_run_of_conversation_tests(project: Project) -> None:
    _suite(project)
    targets = ["--target", f"base={agent.spec('v1')}", "--target", f"cand={agent.spec('v2')}"]
    result = project.run("run", "t.yaml", "--trials", "2", *targets)
    assert result.exit_code == 1, result.stdout + result.stderr
    assert result.report is not None and result.report["targets"] == ["base", "cand"]
    cells = {(t["id"], t["target"]): t["status"] for t in result.report["tests"]}
    assert cells == {
        ("refund", "base"): "passed",
        ("refund", "cand"): "failed",
        ("greets", "base"): "passed",
        ("greets", "cand"): "passed",
    }
    cand = next(t for t in result.report["tests"] if (t["id"], t["target"]) == ("refund", "cand"))
    for trial in cand["trials"]:
        assert [t["outcome"] for t in trial["turns"]] == ["passed", "failed", "failed"]
    # Every cell's trial is a conversation of its own, with its own agent.
    logged = agent.calls(project.root)
    by_id = agent.assert_single_conversations(logged)
    per_cell = sorted(
        (calls[0]["test"], calls[0]["version"], len(calls)) for calls in by_id.values()
    )
    assert per_cell == sorted(
        [
            (name, version, turns)
            for name, turns in (("refund", 3), ("greets", 1))
            for version in ("v1", "v2")
            for _ in range(2)
        ]
    )
    # The matrix's own comparison names the conversation test the candidate broke.
    assert "refund" in result.stdout and "cand" in result.stdout
    diff = project.run("diff", "last:base", "last:cand", "--format", "json")
    assert diff.exit_code == 1, diff.stdout + diff.stderr
    changes = {t["id"]: t["change"] for t in json.loads(diff.stdout)["tests"]}
    assert changes == {"refund": "regressed", "greets": "unchanged"}
