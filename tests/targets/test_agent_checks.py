"""`validate` refuses agents that can never work and unset variables; `run` warns (issue 29)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from assertly.cli import main

AGENT = "import json, sys; json.load(sys.stdin); print(json.dumps({'status': 'ok'}))"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FC_UNSET_TOKEN", raising=False)
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    return tmp_path


def write(project: Path, agents: dict[str, object], agent: str = "ok") -> None:
    config = {"agents": {"ok": f"cmd:{sys.executable} agent.py", **agents}}
    (project / "assertly.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    tests = {
        "agent": agent,
        "test_suites": {"s": {"tests": [{"id": "t", "input": {}, "expect": {"status": "ok"}}]}},
    }
    (project / "a.tests.yaml").write_text(yaml.safe_dump(tests), encoding="utf-8")


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        # issue 29, first contact: agents `ftp://x`, `cmd:` and `{command: []}` passed validate
        ("ftp://x", "unknown target 'ftp://x'"),
        ("cmd:", "the command is empty"),
        ("cmd:   ", "the command is empty"),
        ({"command": []}, "the command is empty"),
        ({"command": ""}, "the command is empty"),
        ("py:", "nothing after py:"),
    ],
)
def test_validate_refuses_an_agent_that_can_never_work(
    project: Path, spec: object, said: str
) -> None:
    write(project, {"bad": spec})
    result = CliRunner().invoke(main, ["validate", "a.tests.yaml"])
    assert result.exit_code == 2, result.output
    line = next(line for line in result.stderr.splitlines() if "agents.bad" in line)
    assert line.startswith(f"{project / 'assertly.yaml'}:"), line
    assert said in line


def test_validate_refuses_an_unset_variable_and_run_warns(project: Path) -> None:
    # issue 29, first contact: "An unset ${VAR} passes validate"
    headers = {"Authorization": "Bearer ${FC_UNSET_TOKEN}"}
    write(project, {"web": {"url": "http://127.0.0.1:9/x", "headers": headers}}, agent="web")
    result = CliRunner().invoke(main, ["validate", "a.tests.yaml"])
    assert result.exit_code == 2, result.output
    assert "agents.web: ${FC_UNSET_TOKEN} is not set in the environment" in result.stderr
    assert f"{project / 'assertly.yaml'}:" in result.stderr

    run = CliRunner().invoke(main, ["run", "a.tests.yaml", "--plain", "-o", "r.json"])
    assert run.exit_code == 1, run.output  # the test itself is an error, never a pass
    assert "warning:" in run.output and "${FC_UNSET_TOKEN} is not set" in run.output
    report = json.loads((project / "r.json").read_text(encoding="utf-8"))
    assert report["tests"][0]["status"] == "error"


def test_a_good_config_and_an_unused_bad_agent(project: Path) -> None:
    write(project, {})
    assert CliRunner().invoke(main, ["validate", "a.tests.yaml"]).exit_code == 0
    # `run` warns only about the agents it uses.
    write(project, {"bad": "cmd:"})
    run = CliRunner().invoke(main, ["run", "a.tests.yaml", "--plain"])
    assert run.exit_code == 0, run.output
    assert "agents.bad" not in run.output


def test_an_unset_judge_key_is_a_warning_of_validate(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(project, {})
    config = yaml.safe_load((project / "assertly.yaml").read_text(encoding="utf-8"))
    config["judge"] = {"base_url": "http://127.0.0.1:9/v1", "model": "m"}
    config["judge"]["api_key"] = "${FC_UNSET_TOKEN}"
    (project / "assertly.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    result = CliRunner().invoke(main, ["validate", "a.tests.yaml"])
    assert result.exit_code == 0, result.output
    assert "judge.api_key: ${FC_UNSET_TOKEN} is not set" in result.stdout
