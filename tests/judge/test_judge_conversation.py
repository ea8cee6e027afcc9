"""A model judges a conversation (issue 32): its transcript with roles, or one turn's reply."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from fake_openai import FakeOpenAI, verdict

from assertly.cli import main

AGENT = """
import json, sys
messages = json.load(sys.stdin)["messages"]
turn = sum(1 for m in messages if m["role"] == "user")
print(f"Agent reply {turn} to: {messages[-1]['content']}")
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake: FakeOpenAI) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    config = {
        "agents": {"bot": f"cmd:{sys.executable} agent.py"},
        "judge": {"base_url": fake.url, "model": "judge-1"},
    }
    (tmp_path / "assertly.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    test: dict[str, Any] = {
        "id": "chat",
        "conversation": {
            "turns": [
                {"user": "My order is A-1042"},
                {
                    "user": "Where is it?",
                    "assertions": [{"type": "llm-rubric", "value": "The reply is helpful"}],
                },
            ]
        },
        "assertions": [{"type": "llm-rubric", "value": "Never asks twice for the order"}],
    }
    tests = {"agent": "bot", "test_suites": {"s": {"tests": [test]}}}
    (tmp_path / "c.tests.yaml").write_text(yaml.safe_dump(tests), encoding="utf-8")
    return tmp_path


def _prompt(request: dict[str, Any]) -> str:
    return "\n".join(str(message["content"]) for message in request["messages"])


def test_the_judge_reads_one_turn_or_the_whole_transcript_with_roles(
    project: Path, fake: FakeOpenAI
) -> None:
    fake.answers(verdict("pass", 1.0))
    result = CliRunner().invoke(main, ["run", "c.tests.yaml"])
    assert result.exit_code == 0, result.output
    assert len(fake.requests) == 2
    turn, whole = (_prompt(request) for request in fake.requests)
    # The turn's rubric reads that turn's reply alone.
    assert "Agent reply 2 to: Where is it?" in turn
    assert "Agent reply 1" not in turn and "User:" not in turn
    # The conversation's rubric reads every message, with its role, in order.
    expected = (
        "User: My order is A-1042\n\nAssistant: Agent reply 1 to: My order is A-1042\n\n"
        "User: Where is it?\n\nAssistant: Agent reply 2 to: Where is it?"
    )
    assert expected in whole
    assert "Never asks twice for the order" in whole


def test_a_failing_whole_conversation_verdict_fails_the_test_under_conversation(
    project: Path, fake: FakeOpenAI, tmp_path: Path
) -> None:
    fake.answers(verdict("pass", 1.0), verdict("fail", 0.0, "it asked twice"))
    result = CliRunner().invoke(main, ["run", "c.tests.yaml", "-o", "r.json"])
    assert result.exit_code == 1, result.output
    import json

    trial = json.loads((tmp_path / "r.json").read_text())["tests"][0]["trials"][0]
    assert [(f["step"], f["assertion"]) for f in trial["failures"]] == [
        ("conversation", "llm-rubric")
    ]
    # The second run is judged from the cache: the same transcript asks the same question.
    before = len(fake.requests)
    again = CliRunner().invoke(main, ["run", "c.tests.yaml", "--judge-cache", "replay"])
    assert again.exit_code == 1, again.output
    assert len(fake.requests) == before
