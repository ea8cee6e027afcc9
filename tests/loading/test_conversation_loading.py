"""Conversation tests (issue 32) as loaded: every problem refused at its own line, through the
real command line (``python -m assertly validate`` / ``run``), in YAML and JSON test files.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from conversation_support import assertly_cli

from assertly.loading import load_paths

GOOD: dict[str, Any] = {
    "id": "refund_flow",
    "conversation": {
        "input": {"user_id": 42},
        "turns": [
            {
                "user": "Hi, I want a refund for order A-1042",
                "assertions": [{"type": "icontains", "value": "A-1042"}],
            },
            {"user": "Yes, go ahead", "expect": {"status": "success"}},
        ],
    },
    "assertions": [{"type": "tool-sequence", "value": ["lookup_order", "issue_refund"]}],
}

BAD_YAML = """\
agent: bot
test_suites:
  support:
    tests:
      - id: typos
        conversation:
          tunrs: []
          turns:
            - user: hi
              asertions: [{type: contains, value: x}]
          simulated_user:
            persona: someone
            max_turn: 3
      - id: with_input
        input: {q: 1}
        conversation:
          turns: [{user: hi}]
        assertions: [{type: contains, value: x}]
      - id: with_steps
        multi_step: [{step: 1, input: {}}]
        conversation:
          turns: [{user: hi, assertions: [{type: contains, value: x}]}]
      - id: no_turns
        conversation: {turns: []}
        assertions: [{type: contains, value: x}]
      - id: empty
        conversation: {}
        assertions: [{type: contains, value: x}]
      - id: messages
        conversation:
          input: {messages: [], user_id: 1}
          turns: [{user: hi}]
        assertions: [{type: contains, value: x}]
      - id: bad_checks
        conversation:
          turns:
            - user: hi
              assertions: [{type: containz, value: x}]
          simulated_user:
            persona: p
            stop_when: [{type: icontains}]
        assertions: [{type: contains, value: x}]
      - id: nothing_judged
        conversation:
          turns: [{user: hi}]
      - id: persona_misplaced
        conversation:
          persona: a customer
          turns: [{user: hi}]
        assertions: [{type: contains, value: x}]
"""


def test_validate_refuses_every_conversation_problem_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.tests.yaml"
    path.write_text(BAD_YAML, encoding="utf-8")
    (tmp_path / "good.tests.yaml").write_text(
        yaml.safe_dump({"agent": "bot", "test_suites": {"ok": {"tests": [GOOD]}}}),
        encoding="utf-8",
    )
    (tmp_path / "assertly.yaml").write_text("agents: {bot: 'cmd:echo hi'}\n", encoding="utf-8")
    done = assertly_cli(tmp_path, "validate", ".")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    problems = done.stderr.splitlines()
    name = "bad.tests.yaml"
    expected = [
        f"{name}:7:11: typos: conversation.tunrs: unknown key 'tunrs' (did you mean 'turns'?)",
        f"{name}:10:15: typos: conversation.turns.0.asertions: unknown key 'asertions' "
        "(did you mean 'assertions'?)",
        f"{name}:13:13: typos: conversation.simulated_user.max_turn: unknown key 'max_turn' "
        "(did you mean 'max_turns'?)",
        f"{name}:15:9: with_input: a test has either conversation or input, not both: put "
        "what every request carries in conversation.input",
        f"{name}:20:9: with_steps: a test has either conversation or multi_step, not both: a "
        "conversation's turns are its steps",
        f"{name}:24:9: no_turns: a conversation needs turns, a simulated_user, or both",
        f"{name}:27:9: empty: a conversation needs turns, a simulated_user, or both",
        f"{name}:31:19: messages: conversation.input cannot carry 'messages': the agent gets "
        "the conversation's history as messages on every turn, which would overwrite it; write "
        "what the user says as turns",
        f"{name}:38:29: bad_checks: conversation.turns.0.assertions.0.type: unknown assertion "
        "'containz' (did you mean 'contains'?)",
        f"{name}:41:25: bad_checks: conversation.simulated_user.stop_when.0.value: icontains "
        "needs a non-empty string value, got '' (e.g. value: 'Machine Learning')",
        f"{name}:44:9: nothing_judged: the conversation has no expect and no assertions (on a "
        "turn or beside conversation) and no require_stop, so nothing would be judged",
        f"{name}:48:11: persona_misplaced: conversation.persona: unknown key 'persona': not "
        "allowed here; it belongs in conversation.simulated_user",
        # No simulator and no judge in the config: a simulated user is refused as well.
        f"{name}:34: bad_checks: simulated_user needs a model to play the user: add simulator: "
        "{base_url: …, model: …} (or judge:, which it uses by default) to the config",
    ]
    assert sorted(problems) == sorted(expected)
    assert done.stdout.strip().endswith(f"{len(expected)} problems")


def test_a_json_test_file_is_refused_at_the_same_places(tmp_path: Path) -> None:
    bad_turn = {**GOOD, "id": "bad_turn"}
    bad_turn["conversation"] = {"turns": [{"user": "hi", "expcet": {"status": "success"}}]}
    document = {
        "agent": "bot",
        "test_suites": {
            "support": {
                "tests": [
                    GOOD,
                    bad_turn,
                    {**GOOD, "id": "with_input", "input": {"q": 1}},
                    {
                        **GOOD,
                        "id": "messages",
                        "conversation": {"input": {"messages": []}, "turns": [{"user": "x"}]},
                    },
                ]
            }
        },
    }
    path = tmp_path / "chat.tests.json"
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    lines = path.read_text(encoding="utf-8").splitlines()

    def line_of(text: str) -> int:
        return next(n for n, line in enumerate(lines, 1) if text in line)

    done = assertly_cli(tmp_path, "validate", "chat.tests.json")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    problems = done.stderr.splitlines()
    assert len(problems) == 3, problems
    turn = line_of('"expcet"')
    assert problems[0].startswith(f"chat.tests.json:{turn}:")
    assert problems[0].endswith(
        "bad_turn: conversation.turns.0.expcet: unknown key 'expcet' (did you mean 'expect'?)"
    )
    beside = line_of('"q": 1') - 1  # the test's own input
    assert problems[1].startswith(f"chat.tests.json:{beside}:")
    assert "with_input: a test has either conversation or input, not both" in problems[1]
    messages = line_of('"messages": []')
    assert problems[2].startswith(f"chat.tests.json:{messages}:")
    assert "messages: conversation.input cannot carry 'messages'" in problems[2]


SIMULATED: dict[str, Any] = {
    "id": "impatient",
    "conversation": {
        "simulated_user": {
            "persona": "A customer who wants a refund for order A-1042",
            "first_message": "Hi, I need my money back",  # the agent is called first
            "stop_when": [{"type": "icontains", "value": "refund issued"}],
        }
    },
    "assertions": [{"type": "tool-called", "value": "issue_refund"}],
}


@pytest.mark.parametrize(
    ("model", "refused"),
    [
        ("", True),
        ("judge: {base_url: 'http://127.0.0.1:9/v1', model: j}\n", False),
        ("simulator: {base_url: 'http://127.0.0.1:9/v1', model: s}\n", False),
    ],
)
def test_a_simulated_user_needs_a_simulator_or_a_judge(
    tmp_path: Path, model: str, refused: bool
) -> None:
    # An agent that leaves a trace when it is called.
    (tmp_path / "agent.py").write_text("open('called', 'w').close()\nprint('hi')\n")
    agent = json.dumps(f"cmd:{sys.executable} agent.py")
    (tmp_path / "assertly.yaml").write_text(f"agents: {{bot: {agent}}}\n{model}")
    (tmp_path / "sim.tests.yaml").write_text(
        yaml.safe_dump({"agent": "bot", "test_suites": {"s": {"tests": [SIMULATED]}}}),
        encoding="utf-8",
    )
    done = assertly_cli(tmp_path, "validate", "sim.tests.yaml")
    message = (
        "sim.tests.yaml:5: impatient: simulated_user needs a model to play the user: add "
        "simulator: {base_url: …, model: …} (or judge:, which it uses by default) to the config"
    )
    if not refused:
        assert done.returncode == 0, done.stderr
        return
    assert done.returncode == 2 and done.stderr.strip() == message
    # `run` refuses it before anything is called (the agent would log a call).
    done = assertly_cli(tmp_path, "run", "sim.tests.yaml")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert message in done.stderr
    assert not (tmp_path / "called").exists()


def test_the_loaded_conversation_is_what_the_file_says(tmp_path: Path) -> None:
    test = {
        **GOOD,
        "conversation": {
            **GOOD["conversation"],
            "simulated_user": {
                "persona": "impatient",
                "first_message": "Well?",
                "max_turns": 3,
                "stop_token": "<done>",
                "require_stop": True,
                "stop_when": [{"type": "icontains", "value": "refund issued"}],
            },
        },
    }
    path = tmp_path / "c.tests.yaml"
    path.write_text(yaml.safe_dump({"agent": "bot", "test_suites": {"s": {"tests": [test]}}}))
    [loaded] = load_paths([path]).tests
    assert loaded.problems == [] and loaded.steps == [] and not loaded.recorded
    conversation = loaded.conversation
    assert conversation is not None
    assert conversation.input == {"user_id": 42}
    assert [turn.user for turn in conversation.turns] == [
        "Hi, I want a refund for order A-1042",
        "Yes, go ahead",
    ]
    assert [len(turn.checks) for turn in conversation.turns] == [1, 1]
    assert len(conversation.checks) == 1
    simulated = conversation.simulated_user
    assert simulated is not None
    assert (simulated.persona, simulated.first_message, simulated.max_turns) == (
        "impatient",
        "Well?",
        3,
    )
    assert (simulated.stop_token, simulated.require_stop, len(simulated.stop_when)) == (
        "<done>",
        True,
        1,
    )
    # Every expectation the test judges, for the judge check and recheck: 2 turns, stop, own.
    assert len(loaded.expectations()) == 4


def _definition(tmp_path: Path, test: dict[str, Any]) -> str:
    path = tmp_path / "d.tests.yaml"
    path.write_text(yaml.safe_dump({"agent": "bot", "test_suites": {"s": {"tests": [test]}}}))
    [loaded] = load_paths([path]).tests
    assert loaded.problems == []
    return loaded.definition


def test_the_definition_covers_the_conversation(tmp_path: Path) -> None:
    base: dict[str, Any] = {
        "id": "chat",
        "conversation": {
            "input": {"user_id": 1},
            "turns": [{"user": "hi", "assertions": [{"type": "contains", "value": "x"}]}],
            "simulated_user": {"persona": "a customer", "max_turns": 4},
        },
        "assertions": [{"type": "contains", "value": "y"}],
    }
    original = _definition(tmp_path, base)
    assert original == _definition(tmp_path, json.loads(json.dumps(base)))

    def edited(path: tuple[str | int, ...], value: object) -> dict[str, Any]:
        copy: dict[str, Any] = json.loads(json.dumps(base))
        node: Any = copy
        for part in path[:-1]:
            node = node[part]
        node[path[-1]] = value
        return copy

    edits = [
        (("conversation", "turns", 0, "user"), "hello"),
        (("conversation", "turns", 0, "assertions"), [{"type": "contains", "value": "z"}]),
        (("conversation", "simulated_user", "persona"), "an impatient customer"),
        (("conversation", "simulated_user", "max_turns"), 5),
        (("conversation", "simulated_user", "stop_token"), "<done>"),
        (("conversation", "input", "user_id"), 2),
    ]
    digests = {_definition(tmp_path, edited(path, value)) for path, value in edits}
    assert original not in digests and len(digests) == len(edits)
    # The name and tags only say how a test is shown and picked: not part of it.
    assert _definition(tmp_path, {**base, "name": "Chat", "tags": ["x"]}) == original


def test_a_turn_may_be_its_user_text_alone(tmp_path: Path) -> None:
    path = tmp_path / "short.tests.yaml"
    path.write_text(
        "agent: bot\n"
        "test_suites:\n"
        "  s:\n"
        "    tests:\n"
        "      - id: short\n"
        "        conversation:\n"
        "          turns:\n"
        "            - Hi, I want a refund for order A-1042\n"
        "            - {user: 'Yes, go ahead', assertions: [{type: tool-called, value: r}]}\n"
        "        assertions: [{type: contains, value: x}]\n"
        "      - id: blank\n"
        "        conversation:\n"
        "          turns: ['', 5]\n"
        "        assertions: [{type: contains, value: x}]\n",
        encoding="utf-8",
    )
    short, blank = load_paths([path]).tests
    assert short.problems == [] and short.conversation is not None
    assert [(t.user, len(t.checks)) for t in short.conversation.turns] == [
        ("Hi, I want a refund for order A-1042", 0),
        ("Yes, go ahead", 1),
    ]
    assert [str(problem) for problem in blank.problems] == [
        f"{path}:13:19: blank: conversation.turns.0.user: string should have at least 1 "
        "character, got ''",
        f"{path}:13:23: blank: conversation.turns.1: a turn is {{user: …}} (with "
        "expect/assertions) or the user's text, got 5",
    ]
