"""Conversation tests in test files: what `validate` refuses (each problem at its line, all of a
file at once), YAML and JSON alike, the JSON Schema, and the definition digest."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
import yaml

from assertly.loading import json_schemas, load_paths

SRC = Path(__file__).resolve().parents[2] / "src"

BAD = """\
agent: bot
test_suites:
  s:
    tests:
      - id: unknown_keys
        conversation:
          turn: []
          persona: x
        input: {a: 1}
        assertions: [{type: contains, value: x}]
      - id: beside_input
        input: {a: 1}
        conversation:
          turns: [{user: hi}]
        assertions: [{type: contains, value: x}]
      - id: beside_multi
        multi_step: [{step: 1, input: a, assertions: [{type: contains, value: x}]}]
        conversation:
          turns: [{user: hi}]
      - id: empty
        conversation: {}
        assertions: [{type: contains, value: x}]
      - id: empty_turns
        conversation: {turns: []}
        assertions: [{type: contains, value: x}]
      - id: in_turn
        conversation:
          turns:
            - user: hi
              asertions: []
          simulated_user: {persona: p, stop_wen: []}
      - id: messages
        conversation:
          input: {messages: [], user_id: 4}
          turns: [{user: hi}]
      - id: bad_assertions
        conversation:
          turns:
            - user: hi
              assertions: [{type: contians, value: x}]
          simulated_user:
            persona: p
            stop_when: [{type: icontians, value: y}]
        assertions: [{type: regex, value: "("}]
"""

MESSAGES = (
    "conversation.input may not hold 'messages': the agent receives the conversation's "
    "history as messages, which would overwrite it (script earlier messages as turns)"
)
BESIDE_INPUT = (
    "a test has either conversation or input, not both: "
    "put what every request carries in conversation.input"
)
NO_SIMULATOR = (
    "simulated_user needs a model to play the user: add simulator: {base_url: …, model: …} "
    "(or judge:, which it uses by default) to the config"
)


def assertly(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real CLI, `python -m assertly`, importing this checkout's sources."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, "-m", "assertly", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def write(
    tmp_path: Path, name: str, text: str, config: str = "agents: {bot: 'cmd: true'}\n"
) -> None:
    (tmp_path / "assertly.yaml").write_text(config, encoding="utf-8")
    (tmp_path / name).write_text(text, encoding="utf-8")


def test_validate_names_every_problem_of_a_conversation_at_its_line(tmp_path: Path) -> None:
    write(tmp_path, "bad.tests.yaml", BAD)
    result = assertly(tmp_path, "validate", "bad.tests.yaml")
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    problems = result.stderr.splitlines()
    assert problems == [
        "bad.tests.yaml:7:11: unknown_keys: conversation.turn: unknown key 'turn' "
        "(did you mean 'turns'?)",
        "bad.tests.yaml:8:11: unknown_keys: conversation.persona: unknown key 'persona': "
        "not allowed here; it belongs in conversation.simulated_user",
        # Reported beside the unknown keys, though they leave the test without a model.
        f"bad.tests.yaml:9:9: unknown_keys: {BESIDE_INPUT}",
        f"bad.tests.yaml:12:9: beside_input: {BESIDE_INPUT}",
        "bad.tests.yaml:17:9: beside_multi: a test has either conversation or multi_step, "
        "not both: a conversation's turns are its steps",
        "bad.tests.yaml:21:9: empty: a conversation needs turns, a simulated_user, or both",
        "bad.tests.yaml:24:24: empty_turns: conversation.turns is empty and there is no "
        "simulated_user, so nothing would be said",
        "bad.tests.yaml:30:15: in_turn: conversation.turns.0.asertions: unknown key "
        "'asertions' (did you mean 'assertions'?)",
        "bad.tests.yaml:31:40: in_turn: conversation.simulated_user.stop_wen: unknown key "
        "'stop_wen' (did you mean 'stop_when'?)",
        f"bad.tests.yaml:34:19: messages: {MESSAGES}",
        "bad.tests.yaml:40:29: bad_assertions: conversation.turns.0.assertions.0.type: "
        "unknown assertion 'contians' (did you mean 'contains'?)",
        "bad.tests.yaml:43:26: bad_assertions: conversation.simulated_user.stop_when.0.type: "
        "unknown assertion 'icontians' (did you mean 'icontains'?)",
        "bad.tests.yaml:44:36: bad_assertions: assertions.0.value: invalid regular expression "
        "'(': missing ), unterminated subpattern at position 0",
        f"bad.tests.yaml:36: bad_assertions: {NO_SIMULATOR}",
    ]
    assert result.stdout.strip() == "8 tests, 0 eval cases, 14 problems"


def test_a_json_test_file_is_checked_the_same(tmp_path: Path) -> None:
    data = yaml.safe_load(BAD)
    data["test_suites"]["s"]["tests"] = data["test_suites"]["s"]["tests"][:2]
    text = json.dumps(data, indent=2)
    write(tmp_path, "bad.tests.json", text)

    def at(key: str, nth: int = 0) -> str:  # where the key is written: file:line:column
        rows = [(n, row) for n, row in enumerate(text.splitlines(), 1) if f'"{key}":' in row]
        number, row = rows[nth]
        column = row.index('"' + key + '"') + 1
        return f"bad.tests.json:{number}:{column}"

    result = assertly(tmp_path, "validate", "bad.tests.json")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"{at('turn')}: unknown_keys: conversation.turn: unknown key 'turn' "
        "(did you mean 'turns'?)",
        f"{at('persona')}: unknown_keys: conversation.persona: unknown key 'persona': "
        "not allowed here; it belongs in conversation.simulated_user",
        f"{at('input', 0)}: unknown_keys: {BESIDE_INPUT}",
        f"{at('input', 1)}: beside_input: {BESIDE_INPUT}",
    ]


SIMULATED = """\
agent: bot
test_suites:
  s:
    tests:
      - id: talk
        conversation:
          turns: [{user: "Hi, I want a refund for order A-1042"}]
          simulated_user: {persona: "A customer in a hurry"}
        assertions: [{type: contains, value: A-1042}]
"""


def test_a_simulated_user_with_no_model_is_refused_by_validate_and_run(tmp_path: Path) -> None:
    write(tmp_path, "sim.tests.yaml", SIMULATED)
    for command in ("validate", "run"):
        result = assertly(tmp_path, command, "sim.tests.yaml", *(["--plain"] * (command == "run")))
        assert result.returncode == 2, (command, result.stdout, result.stderr)
        assert f"sim.tests.yaml:5: talk: {NO_SIMULATOR}" in result.stderr
        assert "Traceback" not in result.stderr
    # The judge plays the user by default; a simulator of its own does too.
    for model in ("judge", "simulator"):
        endpoint = "{base_url: 'http://127.0.0.1:9/v1', model: m}"
        config = f"agents: {{bot: 'cmd: true'}}\n{model}: {endpoint}\n"
        write(tmp_path, "sim.tests.yaml", SIMULATED, config)
        result = assertly(tmp_path, "validate", "sim.tests.yaml")
        assert (result.returncode, result.stderr) == (0, ""), model


def test_run_refuses_only_the_tests_it_selects(tmp_path: Path) -> None:
    write(
        tmp_path,
        "sim.tests.yaml",
        SIMULATED + "      - id: scripted\n"
        "        conversation: {turns: [{user: hi}]}\n"
        "        assertions: [{type: contains, value: hi}]\n",
        "agents: {bot: 'cmd: cat'}\n",
    )
    result = assertly(tmp_path, "run", "sim.tests.yaml", "--plain", "--test", "scripted")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout


ISSUE_SCRIPTED: dict[str, Any] = {
    "id": "refund_flow",
    "conversation": {
        "turns": [
            {
                "user": "Hi, I want a refund for order A-1042",
                "assertions": [{"type": "icontains", "value": "A-1042"}],
            },
            {
                "user": "Yes, go ahead",
                "assertions": [{"type": "tool-called", "value": "issue_refund"}],
            },
        ]
    },
    "assertions": [
        {"type": "tool-sequence", "value": ["lookup_order", "issue_refund"]},
        {"type": "not-tool-called", "value": "escalate_to_human"},
        {"type": "llm-rubric", "value": "The agent never asked again for the order number"},
    ],
}
ISSUE_SIMULATED: dict[str, Any] = {
    "id": "impatient",
    "conversation": {
        "input": {"user_id": 42},
        "simulated_user": {
            "persona": "A customer who wants a refund for order A-1042 and gets impatient",
            "first_message": "Hi, I need my money back",
            "max_turns": 6,
            "stop_when": [{"type": "icontains", "value": "refund issued"}],
        },
    },
    "expect": {"status": "success"},
}


def _file(*tests: dict[str, Any]) -> dict[str, Any]:
    return {"agent": "bot", "test_suites": {"s": {"tests": list(tests)}}}


def _wrong(change: str) -> dict[str, Any]:
    test = copy.deepcopy(ISSUE_SCRIPTED)
    conversation = test["conversation"]
    if change == "beside input":
        test["input"] = {"q": 1}
    elif change == "beside multi_step":
        test["multi_step"] = [{"step": 1, "input": "x", "expect": {"status": "ok"}}]
    elif change == "unknown key":
        conversation["turn"] = []
    elif change == "unknown key in a turn":
        conversation["turns"][0]["asertions"] = []
    elif change == "neither turns nor simulated_user":
        del conversation["turns"]
    elif change == "empty turns":
        conversation["turns"] = []
    elif change == "messages in input":
        conversation["input"] = {"messages": []}
    elif change == "misspelt stop_when assertion":
        conversation["simulated_user"] = {"persona": "p", "stop_when": [{"type": "contians"}]}
    elif change == "unknown key in simulated_user":
        conversation["simulated_user"] = {"persona": "p", "max_turn": 3}
    return _file(test)


def test_the_schema_accepts_the_issue_examples() -> None:
    for name in ("agent-tests", "test"):
        validator = jsonschema_rs.validator_for(json_schemas()[name])
        for example in (ISSUE_SCRIPTED, ISSUE_SIMULATED):
            document = _file(example) if name == "agent-tests" else example
            assert [e.message for e in validator.iter_errors(document)] == []


@pytest.mark.parametrize(
    "change",
    [
        "beside input",
        "beside multi_step",
        "unknown key",
        "unknown key in a turn",
        "neither turns nor simulated_user",
        "empty turns",
        "messages in input",
        "misspelt stop_when assertion",
        "unknown key in simulated_user",
    ],
)
def test_the_schema_rejects_what_the_loader_refuses(change: str, tmp_path: Path) -> None:
    document = _wrong(change)
    validator = jsonschema_rs.validator_for(json_schemas()["agent-tests"])
    assert not validator.is_valid(document)
    # The loader refuses the same file (the schema never accepts what validate refuses).
    (tmp_path / "w.tests.json").write_text(json.dumps(document), encoding="utf-8")
    assert load_paths([tmp_path / "w.tests.json"]).problems


def _definition(tmp_path: Path, test: dict[str, Any]) -> str:
    path = tmp_path / "d.tests.json"
    path.write_text(json.dumps(_file(test)), encoding="utf-8")
    [loaded] = load_paths([path]).tests
    assert loaded.problems == []
    return loaded.definition


def test_the_definition_covers_the_conversation(tmp_path: Path) -> None:
    base = _definition(
        tmp_path,
        ISSUE_SIMULATED
        | {"conversation": {**ISSUE_SIMULATED["conversation"], "turns": [{"user": "Hello"}]}},
    )
    changed: list[str] = []
    edits: list[tuple[tuple[str | int, ...], str, Any]] = [
        (("turns", 0), "user", "Hello!"),
        (("turns", 0), "assertions", [{"type": "contains", "value": "x"}]),
        (("simulated_user",), "persona", "Someone else"),
        (("simulated_user",), "max_turns", 7),
        (("simulated_user",), "stop_when", [{"type": "contains", "value": "ok"}]),
        (("input",), "user_id", 43),
    ]
    for place, name, value in edits:
        conversation = copy.deepcopy(ISSUE_SIMULATED["conversation"])
        conversation["turns"] = [{"user": "Hello"}]
        target: Any = conversation
        for part in place:
            target = target[part]
        target[name] = value
        changed.append(_definition(tmp_path, ISSUE_SIMULATED | {"conversation": conversation}))
    assert base not in changed and len(set(changed)) == len(changed)
    # What only shows or selects a test leaves it as it was.
    same = copy.deepcopy(ISSUE_SIMULATED)
    same["conversation"]["turns"] = [{"user": "Hello"}]
    assert _definition(tmp_path, same | {"name": "Renamed", "tags": ["x"]}) == base


def test_a_conversation_loads_into_the_runtime_objects(tmp_path: Path) -> None:
    path = tmp_path / "c.tests.yaml"
    path.write_text(yaml.safe_dump(_file(ISSUE_SCRIPTED, ISSUE_SIMULATED)), encoding="utf-8")
    loaded = load_paths([path])
    assert loaded.problems == []
    scripted, simulated = loaded.tests
    assert scripted.steps == [] and simulated.steps == []
    assert scripted.conversation is not None and simulated.conversation is not None
    assert [turn.user for turn in scripted.conversation.turns] == [
        "Hi, I want a refund for order A-1042",
        "Yes, go ahead",
    ]
    assert [len(turn.checks) for turn in scripted.conversation.turns] == [1, 1]
    assert len(scripted.conversation.checks) == 1  # the typed list, one expectation
    assert scripted.conversation.simulated_user is None
    user = simulated.conversation.simulated_user
    assert user is not None
    assert (user.persona, user.first_message, user.max_turns) == (
        "A customer who wants a refund for order A-1042 and gets impatient",
        "Hi, I need my money back",
        6,
    )
    assert (user.stop_token, user.require_stop, len(user.stop_when)) == ("[END]", False, 1)
    assert simulated.conversation.input == {"user_id": 42}
    assert not simulated.recorded
    # Its stop rule is judged on replies like any check: counted among its expectations.
    assert len(simulated.expectations()) == 2
