"""``-o`` report paths are fixed before any agent runs (issue 29, first contact)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from assertly.cli import main

# A `py:` agent that moves the process's working directory, as a careless agent may.
AGENT = """
import os

def answer(value):
    os.makedirs(os.environ["FC_ELSEWHERE"], exist_ok=True)
    os.chdir(os.environ["FC_ELSEWHERE"])
    return {"status": "ok"}
"""


def test_an_agent_that_changes_directory_does_not_move_the_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 29, first contact: "A py: agent that calls os.chdir moves the reports (`wrote
    # r.json`, the file is in the new directory)"
    project = tmp_path / "project"
    project.mkdir()
    elsewhere = tmp_path / "elsewhere"
    monkeypatch.chdir(project)
    monkeypatch.setenv("FC_ELSEWHERE", str(elsewhere))
    monkeypatch.syspath_prepend(str(project))
    monkeypatch.delitem(sys.modules, "wandering_agent", raising=False)
    (project / "wandering_agent.py").write_text(AGENT, encoding="utf-8")
    (project / "assertly.yaml").write_text(
        yaml.safe_dump({"agents": {"bot": "py:wandering_agent:answer"}, "store": "runs.sqlite"}),
        encoding="utf-8",
    )
    tests = {
        "agent": "bot",
        "test_suites": {"s": {"tests": [{"id": "t", "input": "x", "expect": {"status": "ok"}}]}},
    }
    (project / "a.tests.yaml").write_text(yaml.safe_dump(tests), encoding="utf-8")
    result = CliRunner().invoke(
        main, ["run", "a.tests.yaml", "--plain", "-o", "r.json", "-o", "out/r.md"]
    )
    assert result.exit_code == 0, result.output
    assert "wrote r.json" in result.output and "wrote out/r.md" in result.output
    assert json.loads((project / "r.json").read_text(encoding="utf-8"))["summary"]["passed"] == 1
    assert (project / "out" / "r.md").is_file()
    assert not (elsewhere / "r.json").exists() and not (elsewhere / "out").exists()
