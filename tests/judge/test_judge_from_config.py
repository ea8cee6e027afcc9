"""The judge's endpoint and key come from the project config, never from a test file (issue 29).

A test file is often less trusted than the config (a pull request changes it; CI runs it with
the project's secrets). Before, ``config: {base_url: "http://anyhost/v1/", api_key:
"${CI_DEPLOY_TOKEN}"}`` on an assertion sent the token to that server and ``validate`` said
nothing.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from fake_openai import FakeOpenAI, serve

from assertly.cli import main

AGENT = "import json, sys; json.load(sys.stdin); print(json.dumps({'answer': 'Thanks!'}))"
TOKEN = "ci-deploy-token-4f9a"


@pytest.fixture
def other() -> Iterator[FakeOpenAI]:
    """A second server: the one a test file names."""
    yield from serve()


def _project(tmp_path: Path, judge_url: str, judge_config: dict[str, Any], **extra: Any) -> None:
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    config = {
        "agents": {"bot": f"cmd:{sys.executable} agent.py"},
        "judge": {"base_url": judge_url, "model": "judge-1"},
        **extra,
    }
    (tmp_path / "assertly.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    rubric = {"type": "llm-rubric", "value": "thanks the user", "config": judge_config}
    tests = {
        "agent": "bot",
        "test_suites": {"s": {"tests": [{"id": "t", "input": 1, "assertions": [rubric]}]}},
    }
    (tmp_path / "a.tests.yaml").write_text(yaml.safe_dump(tests), encoding="utf-8")


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def test_a_test_file_cannot_send_a_token_to_its_own_server(
    tmp_path: Path, fake: FakeOpenAI, other: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 29, Secrets probe 3: config: {base_url: anyhost, api_key: ${CI_DEPLOY_TOKEN}}
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI_DEPLOY_TOKEN", TOKEN)
    _project(tmp_path, fake.url, {"base_url": other.url, "api_key": "${CI_DEPLOY_TOKEN}"})
    # validate refuses the file (exit 2); run reports the test as an error, as any test whose
    # assertions do not compile, and calls no judge.
    for command, exit_code in (("validate", 2), ("run", 1)):
        code, output = _cli(command, ".")
        assert code == exit_code, output
        assert "a.tests.yaml:" in output and "config.base_url" in output, output
        assert "secrets_from_tests: [CI_DEPLOY_TOKEN]" in output, output
    assert other.requests == [] and fake.requests == []
    assert TOKEN not in output


def test_the_config_may_let_a_test_file_name_a_key_for_its_judge(
    tmp_path: Path, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TEAM_JUDGE_KEY", TOKEN)
    # The config's own base_url (a trailing slash aside) is no choice: accepted.
    config = {"base_url": fake.url + "/", "api_key": "${TEAM_JUDGE_KEY}"}
    _project(tmp_path, fake.url, config, secrets_from_tests=["TEAM_JUDGE_KEY"])
    code, output = _cli("run", ".")
    assert code == 0, output
    assert fake.headers[0]["Authorization"] == f"Bearer {TOKEN}"
    assert TOKEN not in output


def test_python_code_may_still_name_its_judge(fake: FakeOpenAI) -> None:
    # assertly.compile in code (trusted) keeps the per-assertion endpoint and key.
    import assertly

    spec = [
        {
            "type": "llm-rubric",
            "value": "x",
            "config": {"base_url": fake.url, "model": "m", "api_key": "${ANY}"},
        }
    ]
    assert assertly.compile(spec).judged == "self"
