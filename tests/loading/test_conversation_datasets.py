"""A dataset line may carry a conversation (issue 32): scripted turns (texts or ``{user}``)
and/or a simulated user, its ``vars`` filled into what the user says, the suite's checks
judging the whole conversation; run by the runner as any conversation test.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner
from conversation_support import assertly_cli

from assertly.cli import main
from assertly.loading import load_paths

# The suite judges every line's whole conversation: the agent must have said the line's order.
SUITE: dict[str, Any] = {
    "agent": "bot",
    "test_suites": {
        "refunds": {
            "dataset": "cases.jsonl",
            "assertions": [{"type": "icontains", "value": "{{ vars.order }}"}],
        }
    },
}


def _project(tmp_path: Path, lines: list[Any], config: str = "") -> Path:
    (tmp_path / "cases.jsonl").write_text(
        "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines),
        encoding="utf-8",
    )
    (tmp_path / "assertly.yaml").write_text(config or "agents: {bot: 'cmd:echo hi'}\n")
    path = tmp_path / "refunds.tests.yaml"
    path.write_text(yaml.safe_dump(SUITE), encoding="utf-8")
    return path


def test_a_line_conversation_is_loaded_with_its_vars(tmp_path: Path) -> None:
    line = {
        "id": "r1",
        "vars": {"order": "A-1042", "count": 2},
        "conversation": {
            "input": {"customer": "{{ vars.order }}"},
            "turns": [
                "I want a refund for {{ vars.order }}",
                {"user": "{{ vars.count }}", "assertions": [{"type": "contains", "value": "2"}]},
            ],
            "simulated_user": {
                "persona": "wants {{ vars.order }} refunded",
                "first_message": "still waiting on {{ vars.order }}",
                "stop_when": [{"type": "icontains", "value": "{{ vars.order }} refunded"}],
            },
        },
    }
    [dataset] = load_paths([_project(tmp_path, [line])], project_dir=tmp_path).datasets
    [case] = dataset.cases()
    assert case.problems == [] and case.steps == [] and not case.recorded
    conversation = case.conversation
    assert conversation is not None
    # What the user says takes a var as text (a whole {{ vars.count }} gives "2", not 2);
    # elsewhere a whole reference keeps its type, as in the suite's assertions.
    assert [turn.user for turn in conversation.turns] == ["I want a refund for A-1042", "2"]
    assert conversation.input == {"customer": "A-1042"}
    assert [len(turn.checks) for turn in conversation.turns] == [0, 1]
    simulated = conversation.simulated_user
    assert simulated is not None
    assert (simulated.persona, simulated.first_message) == (
        "wants A-1042 refunded",
        "still waiting on A-1042",
    )
    assert len(simulated.stop_when) == 1 and simulated.max_turns == 8
    # The suite's assertions judge the whole conversation (filled for this line).
    [check] = conversation.checks
    assert check.check("Your order a-1042 is refunded").passed
    assert not check.check("Your order is refunded").passed


def _definition(tmp_path: Path, line: dict[str, Any]) -> str:
    [dataset] = load_paths([_project(tmp_path, [line])], project_dir=tmp_path).datasets
    [case] = dataset.cases()
    assert case.problems == []
    return case.definition


def test_a_line_conversation_defines_the_case(tmp_path: Path) -> None:
    def line(first: str = "hi {{ vars.order }}", persona: str = "p", order: str = "A") -> Any:
        return {
            "vars": {"order": order},
            "conversation": {"turns": [first], "simulated_user": {"persona": persona}},
        }

    original = _definition(tmp_path, line())
    assert original == _definition(tmp_path, line())
    changed = {
        _definition(tmp_path, line(first="hello {{ vars.order }}")),
        _definition(tmp_path, line(persona="q")),
        _definition(tmp_path, line(order="B")),
    }
    assert original not in changed and len(changed) == 3


BAD_LINES: list[Any] = [
    {"id": "ok", "vars": {"order": "A-1"}, "conversation": {"turns": ["hi {{ vars.order }}"]}},
    {"id": "recorded", "vars": {"order": "A"}, "conversation": {"turns": ["x"]}, "output": "y"},
    {"id": "sent", "vars": {"order": "A"}, "conversation": {"turns": ["x"]}, "input": {}},
    {"id": "typo", "vars": {"order": "A"}, "conversation": {"turns": [{"usr": "x"}]}},
    {"id": "novar", "vars": {"order": "A"}, "conversation": {"turns": ["{{ vars.ordr }}"]}},
    {
        "id": "badcheck",
        "vars": {"order": "A"},
        "conversation": {"turns": [{"user": "x", "assertions": [{"type": "containz"}]}]},
    },
    {"id": "text", "vars": {"order": "A"}, "conversation": "hello"},
    {"id": "empty", "vars": {"order": "A"}, "conversation": {"turns": []}},
    {
        "id": "messages",
        "vars": {"order": "A"},
        "conversation": {"input": {"messages": []}, "turns": ["x"]},
    },
    {"id": "sim", "vars": {"order": "A"}, "conversation": {"simulated_user": {"persona": "p"}}},
]


def test_validate_refuses_each_bad_line_at_its_line(tmp_path: Path) -> None:
    _project(tmp_path, BAD_LINES)
    done = assertly_cli(tmp_path, "validate", "refunds.tests.yaml")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.splitlines() == [
        "cases.jsonl:2: recorded: a line has either conversation or output, not both: a "
        "conversation is sent to the agent, never judged as recorded",
        "cases.jsonl:3: sent: a line has either conversation or input, not both: put what "
        "every request carries in conversation.input",
        "cases.jsonl:4: typo: conversation.turns.0.user: required key is missing",
        "cases.jsonl:4: typo: conversation.turns.0.usr: unknown key 'usr' (did you mean 'user'?)",
        "cases.jsonl:5: novar: the line has no value for {{ vars.ordr }} (its vars: order)",
        "cases.jsonl:6: badcheck: conversation.turns.0.assertions.0.type: unknown assertion "
        "'containz' (did you mean 'contains'?)",
        "cases.jsonl:7: text: conversation must be a mapping (turns and/or simulated_user), "
        "got 'hello'",
        "cases.jsonl:8: empty: a conversation needs turns, a simulated_user, or both",
        "cases.jsonl:9: messages: conversation.input cannot carry 'messages': the agent gets "
        "the conversation's history as messages on every turn, which would overwrite it; write "
        "what the user says as turns",
        "cases.jsonl:10: sim: simulated_user needs a model to play the user: add simulator: "
        "{base_url: …, model: …} (or judge:, which it uses by default) to the config",
    ]
    assert "10 dataset cases" in done.stdout


# A support agent: logs every request; replies with the order it was told about, and calls
# lookup_order on the first turn (so the reply is an OpenAI message with a tool call).
_AGENT = """
import json, os, sys
data = json.load(sys.stdin)
with open("calls.jsonl", "a", encoding="utf-8") as log:
    entry = {"id": os.environ.get("ASSERTLY_CONVERSATION_ID"), "request": data}
    log.write(json.dumps(entry) + "\\n")
messages = data["messages"]
last = messages[-1]["content"]
message = {"role": "assistant", "content": "You said: " + last}
if len(messages) == 1:
    call = {"name": "lookup_order", "arguments": json.dumps({"text": last})}
    message["tool_calls"] = [{"id": "c1", "type": "function", "function": call}]
print(json.dumps({"choices": [{"message": message}]}))
"""


def test_a_dataset_of_conversations_runs_against_a_real_agent(
    tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "agent.py").write_text(_AGENT, encoding="utf-8")
    agent = json.dumps(f"cmd:{sys.executable} agent.py")
    lines = [
        {
            "id": "two_turns",
            "vars": {"order": "A-1042"},
            "conversation": {
                "input": {"user_id": 7},
                "turns": [
                    "Refund {{ vars.order }}, please",
                    {"user": "go ahead", "assertions": [{"type": "contains", "value": "ahead"}]},
                ],
            },
        },
        # Never says its order: the suite's check on the whole conversation fails.
        {"id": "forgets", "vars": {"order": "B-7"}, "conversation": {"turns": ["hello"]}},
    ]
    _project(tmp_path, lines, f"agents: {{bot: {agent}}}\n")
    result = CliRunner().invoke(main, ["run", "refunds.tests.yaml", "-o", "report.json"])
    assert result.exit_code == 1, result.output
    calls = [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()]
    # Lines run side by side: a conversation's calls are told apart by its id.
    by_id: dict[str, list[dict[str, Any]]] = {}
    for call in calls:
        by_id.setdefault(call["id"], []).append(call["request"])
    [(first, second), [third]] = sorted(by_id.values(), key=len, reverse=True)
    # Line 1: two calls, each with the whole history and the conversation's input.
    assert first == {
        "user_id": 7,
        "messages": [{"role": "user", "content": "Refund A-1042, please"}],
    }
    assert [m["role"] for m in second["messages"]] == ["user", "assistant", "user"]
    assert second["messages"][1]["content"] == "You said: Refund A-1042, please"
    assert second["messages"][1]["tool_calls"][0]["function"]["name"] == "lookup_order"
    assert second["messages"][2] == {"role": "user", "content": "go ahead"}
    assert third == {"messages": [{"role": "user", "content": "hello"}]}
    assert len(calls) == 3 and all(call["id"] for call in calls)
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    tests = {test["id"]: test for test in report["tests"]}
    assert tests["two_turns"]["status"] == "passed"
    trial = tests["two_turns"]["trials"][0]
    assert [(t["index"], t["user"], t["outcome"]) for t in trial["turns"]] == [
        (1, "Refund A-1042, please", "passed"),
        (2, "go ahead", "passed"),
    ]
    assert [c["name"] for c in trial["turns"][0]["tool_calls"]] == ["lookup_order"]
    assert trial["conversation"]["outcome"] == "passed"
    assert trial["conversation"]["ended"] == "turns"
    assert tests["forgets"]["status"] == "failed"
    failed = tests["forgets"]["trials"][0]
    assert failed["conversation"]["outcome"] == "failed"
    assert [t["outcome"] for t in failed["turns"]] == ["passed"]


def test_lines_share_the_compiled_checks_of_equal_turns(tmp_path: Path) -> None:
    turn = {"user": "hi", "assertions": [{"type": "contains", "value": "hello"}]}
    lines = [
        {"id": str(n), "vars": {"order": str(n)}, "conversation": {"turns": [turn]}}
        for n in range(3)
    ]
    lines.append(
        {
            "id": "other",
            "vars": {"order": "x"},
            "conversation": {
                "turns": [{"user": "hi", "assertions": [{"type": "contains", "value": "bye"}]}]
            },
        }
    )
    [dataset] = load_paths([_project(tmp_path, lines)], project_dir=tmp_path).datasets
    checks = []
    for case in dataset.cases():
        assert case.problems == [] and case.conversation is not None
        [compiled] = case.conversation.turns[0].checks
        checks.append(compiled)
    assert checks[0] is checks[1] is checks[2]
    assert checks[3] is not checks[0]
    assert checks[3].check("bye").passed and not checks[0].check("bye").passed
