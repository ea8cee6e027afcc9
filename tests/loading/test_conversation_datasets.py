"""Dataset lines that carry a conversation: loaded into the runtime objects (the line's vars in
what the user says), refused with the line named when wrong, and run against a real `cmd:`
agent that logs every request it receives."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_conversation_loading import NO_SIMULATOR, assertly

from assertly.loading import load_paths

SUITE = {"assertions": [{"type": "contains", "value": "{{ vars.order }}"}]}


@pytest.fixture(autouse=True)
def _in_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the dataset must be inside the project


def project(tmp_path: Path, lines: list[Any], suite: dict[str, Any] | None = None) -> Path:
    (tmp_path / "talks.jsonl").write_text(
        "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines),
        encoding="utf-8",
    )
    tests = tmp_path / "talks.tests.yaml"
    data = {
        "agent": "bot",
        "test_suites": {"talks": {"dataset": "talks.jsonl", **(suite or SUITE)}},
    }
    tests.write_text(yaml.safe_dump(data), encoding="utf-8")
    return tests


def cases(tests: Path) -> list[Any]:
    [dataset] = load_paths([tests]).datasets
    return list(dataset.cases())


def test_a_line_gives_turns_and_a_persona_with_its_vars(tmp_path: Path) -> None:
    tests = project(
        tmp_path,
        [
            {
                "id": "scripted",
                "vars": {"order": "A-1042", "n": 2},
                "conversation": {
                    "input": {"user_id": 7},
                    "turns": ["Refund {{ vars.order }}", {"user": "{{ vars.n }} items"}],
                },
            },
            {
                "vars": {"order": "B-7"},
                "conversation": {
                    "simulated_user": {
                        "persona": "A customer of order {{ vars.order }}",
                        "first_message": "Where is {{ vars.order }}?",
                        "max_turns": 3,
                        "require_stop": True,
                    }
                },
            },
        ],
    )
    scripted, simulated = cases(tests)
    assert scripted.problems == [] and simulated.problems == []
    assert scripted.steps == [] and not scripted.recorded
    assert scripted.conversation is not None and simulated.conversation is not None
    assert [turn.user for turn in scripted.conversation.turns] == ["Refund A-1042", "2 items"]
    assert all(turn.checks == [] for turn in scripted.conversation.turns)
    assert scripted.conversation.input == {"user_id": 7}
    # The suite's checks, filled with each line's vars, judge the whole conversation.
    [check] = scripted.conversation.checks
    assert check.describe() == ["output contains 'A-1042'"]
    assert simulated.conversation.checks[0].describe() == ["output contains 'B-7'"]
    user = simulated.conversation.simulated_user
    assert user is not None
    assert (user.persona, user.first_message) == ("A customer of order B-7", "Where is B-7?")
    assert (user.max_turns, user.require_stop, user.stop_when) == (3, True, [])
    assert simulated.id == "line-2"


def test_the_definition_of_a_line_covers_its_conversation(tmp_path: Path) -> None:
    line = {"vars": {"order": "A"}, "conversation": {"turns": ["hi"]}}
    first = cases(project(tmp_path, [line]))[0].definition
    again = cases(project(tmp_path, [line]))[0].definition
    edited = cases(project(tmp_path, [{**line, "conversation": {"turns": ["hi!"]}}]))
    persona = cases(
        project(tmp_path, [{**line, "conversation": {"simulated_user": {"persona": "p"}}}])
    )
    other_vars = cases(project(tmp_path, [{**line, "vars": {"order": "B"}}]))
    definitions = {first, edited[0].definition, persona[0].definition, other_vars[0].definition}
    assert first == again and len(definitions) == 4


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (
            {"conversation": {"turns": ["hi"]}, "output": "recorded"},
            "a line has either conversation or output: a conversation is sent to the agent "
            "turn by turn; a recorded output has no turns to judge (record it as a line "
            "without conversation)",
        ),
        (
            {"conversation": {"turns": ["hi"]}, "input": {"q": 1}},
            "a line has either conversation or input: put what every request carries in "
            "conversation.input",
        ),
        (
            {"conversation": {"turns": [{"user": "hi", "assertions": []}]}},
            "conversation.turns[0]: a dataset line's conversation says what the user says; the "
            "suite's expect/assertions judge the whole conversation (per-turn checks and "
            "stop_when belong to a conversation test in a test file)",
        ),
        (
            {"conversation": {"simulated_user": {"persona": "p", "stop_when": []}}},
            "conversation.simulated_user: a dataset line's conversation says what the user says",
        ),
        (
            {"conversation": {"turn": ["hi"]}},
            "conversation.turn: unknown key 'turn' (did you mean 'turns'?)",
        ),
        (
            {"conversation": {"simulated_user": {"persona": "p", "max_turn": 2}}},
            "conversation.simulated_user.max_turn: unknown key 'max_turn' (did you mean "
            "'max_turns'?)",
        ),
        ({"conversation": {}}, "a line's conversation needs turns, a simulated_user, or both"),
        (
            {"conversation": {"turns": [], "input": {"messages": []}}},
            "conversation.input.messages: conversation.input may not hold 'messages'",
        ),
        (
            {"vars": {"order": "A"}, "conversation": {"turns": ["{{ vars.ordr }}"]}},
            "conversation.turns[0]: the line has no value for {{ vars.ordr }} (its vars: order)",
        ),
        (
            {"conversation": {"turns": [3]}},
            "conversation.turns.0.str: input should be a valid string, got 3",
        ),
    ],
)
def test_a_wrong_conversation_line_is_refused_naming_the_line(
    tmp_path: Path, line: dict[str, Any], problem: str
) -> None:
    fine = {"conversation": {"turns": ["fine"]}, "vars": {"order": "x"}}
    tests = project(tmp_path, [fine, {"vars": {"order": "x"}, **line}])
    good, bad = cases(tests)
    assert good.problems == []
    assert bad.conversation is None
    messages = [str(found) for found in bad.problems]
    assert any(
        message.startswith("talks.jsonl:2: line-2: ") and problem in message for message in messages
    ), messages


def test_validate_names_each_wrong_line_and_each_line_that_needs_a_simulator(
    tmp_path: Path,
) -> None:
    project(
        tmp_path,
        [
            {"vars": {"order": "A"}, "conversation": {"turns": ["hi"]}},
            {"vars": {"order": "A"}, "conversation": {"turns": ["hi"]}, "output": "x"},
            {"vars": {"order": "A"}, "conversation": {"simulated_user": {"persona": "p"}}},
        ],
    )
    (tmp_path / "assertly.yaml").write_text("agents: {bot: 'cmd: true'}\n", encoding="utf-8")
    result = assertly(tmp_path, "validate", "talks.tests.yaml")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"talks.jsonl:3: {NO_SIMULATOR}",
        "talks.jsonl:2: line-2: a line has either conversation or output: a conversation is "
        "sent to the agent turn by turn; a recorded output has no turns to judge (record it "
        "as a line without conversation)",
    ]
    assert result.stdout.strip() == "0 tests, 3 dataset cases, 0 eval cases, 2 problems"
    run = assertly(tmp_path, "run", "talks.tests.yaml", "--plain")
    assert run.returncode == 2 and f"talks.jsonl:3: {NO_SIMULATOR}" in run.stderr


AGENT = """\
import json, os, sys
request = json.load(sys.stdin)
with open(os.path.join(os.path.dirname(__file__), "requests.jsonl"), "a") as log:
    log.write(json.dumps(request) + "\\n")
said = request["messages"][-1]["content"]
print("noted: " + said + (" (refund issued)" if "refund" in said else ""))
"""


def test_conversation_lines_run_against_a_command_agent(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    log = tmp_path / "requests.jsonl"
    (tmp_path / "assertly.yaml").write_text(
        f"agents: {{bot: 'cmd: {sys.executable} agent.py'}}\n", encoding="utf-8"
    )
    project(
        tmp_path,
        [
            {
                "id": "refund",
                "vars": {"order": "A-1042"},
                "conversation": {
                    "input": {"user_id": 7},
                    "turns": ["a refund for {{ vars.order }}", {"user": "yes, {{ vars.order }}"}],
                },
            },
            {"id": "wrong", "vars": {"order": "Z-9"}, "conversation": {"turns": ["hello"]}},
        ],
        {
            "assertions": [
                {"type": "contains", "value": "{{ vars.order }}"},
                {"type": "contains", "value": "refund issued"},
            ]
        },
    )
    result = assertly(tmp_path, "run", "talks.tests.yaml", "--plain", "-o", "report.json")
    assert result.returncode == 1, result.stdout + result.stderr  # the second line fails
    requests = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    by_line = {
        "refund": [r for r in requests if r.get("user_id") == 7],
        "wrong": [r for r in requests if "user_id" not in r],
    }
    # Each turn is sent the whole history so far, beside conversation.input.
    assert [r["messages"] for r in by_line["refund"]] == [
        [{"role": "user", "content": "a refund for A-1042"}],
        [
            {"role": "user", "content": "a refund for A-1042"},
            {"role": "assistant", "content": "noted: a refund for A-1042 (refund issued)"},
            {"role": "user", "content": "yes, A-1042"},
        ],
    ]
    assert [r["messages"] for r in by_line["wrong"]] == [[{"role": "user", "content": "hello"}]]
    report = {
        test["id"]: test for test in json.loads((tmp_path / "report.json").read_text())["tests"]
    }
    refund, wrong = report["refund"]["trials"][0], report["wrong"]["trials"][0]
    assert [turn["user"] for turn in refund["turns"]] == ["a refund for A-1042", "yes, A-1042"]
    assert refund["conversation"]["outcome"] == "passed"
    assert (refund["conversation"]["ended"], wrong["conversation"]["outcome"]) == (
        "turns",
        "failed",
    )
