"""Conversation tests run against real agents (issue 32): a command agent and an HTTP agent.

Each agent logs every request it gets (the whole history, the conversation id), so the tests
check what was really sent, turn by turn, and what was never sent after a crash.
"""

from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path
from typing import Any

from runner_support import HttpAgent, Project, chat_reply

_AGENT = """
import json, os, sys
from typing import Any

{chat_reply}

data = json.load(sys.stdin)
messages = data["messages"]
with open("calls.jsonl", "a", encoding="utf-8") as log:
    entry = {{"id": os.environ.get("ASSERTLY_CONVERSATION_ID"), "request": data}}
    log.write(json.dumps(entry) + "\\n")
if "crash" in messages[-1]["content"]:
    sys.exit(3)
print(json.dumps(chat_reply(messages)))
"""


def _agent(project: Project) -> str:
    path = project.write("chat_agent.py", _AGENT.format(chat_reply=inspect.getsource(chat_reply)))
    return f"cmd:{sys.executable} {path}"


def _calls(project: Project) -> list[dict[str, Any]]:
    path = project.root / "calls.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


REFUND = {
    "id": "refund_flow",
    "conversation": {
        "input": {"user_id": 42},
        "turns": [
            {
                "user": "Hi, I want a refund for order A-1042",
                "assertions": [{"type": "icontains", "value": "looking up"}],
            },
            {
                "user": "Yes, go ahead",
                "assertions": [{"type": "tool-called", "value": "issue_refund"}],
            },
        ],
    },
    "assertions": [
        {"type": "tool-sequence", "value": ["lookup_order", "issue_refund"]},
        {"type": "not-tool-called", "value": "escalate_to_human"},
        {"type": "contains", "value": "Refund issued"},
    ],
}


def _trial(result: Any, test_id: str, number: int = 0) -> dict[str, Any]:
    return dict(result.tests[test_id]["trials"][number])


def test_the_agent_gets_the_whole_history_each_turn_and_both_verdicts_pass(
    project: Project,
) -> None:
    project.tests_file("t.yaml", {"support": [REFUND]})
    result = project.run("run", "t.yaml", "--target", _agent(project))
    assert result.exit_code == 0, result.stdout + result.stderr
    calls = _calls(project)
    assert len(calls) == 2
    first, second = (call["request"] for call in calls)
    assert first == {
        "user_id": 42,
        "messages": [{"role": "user", "content": "Hi, I want a refund for order A-1042"}],
    }
    # Turn 2 carries turn 1 whole: the user's message, the agent's reply with its tool call.
    assert second["user_id"] == 42
    assert [m["role"] for m in second["messages"]] == ["user", "assistant", "user"]
    reply = second["messages"][1]
    assert reply["content"].startswith("Looking up your order")
    assert [call["function"]["name"] for call in reply["tool_calls"]] == ["lookup_order"]
    assert json.loads(reply["tool_calls"][0]["function"]["arguments"]) == {"order": "A-1042"}
    assert second["messages"][2] == {"role": "user", "content": "Yes, go ahead"}
    # One conversation id per trial, the same on every turn.
    assert calls[0]["id"] and calls[0]["id"] == calls[1]["id"]
    trial = _trial(result, "refund_flow")
    assert [(t["index"], t["outcome"]) for t in trial["turns"]] == [(1, "passed"), (2, "passed")]
    assert trial["turns"][1]["user"] == "Yes, go ahead"
    assert [c["name"] for c in trial["turns"][1]["tool_calls"]] == ["issue_refund"]
    assert trial["conversation"]["outcome"] == "passed"
    assert trial["conversation"]["ended"] == "turns"
    results = trial["conversation"]["checks"][0]["results"]
    assert [r["assertion"] for r in results] == ["tool-sequence", "not-tool-called", "contains"]


def test_a_failing_turn_is_named_and_the_conversation_goes_on(project: Project) -> None:
    test = {
        "id": "wrong_turn",
        "conversation": {
            "turns": [
                {"user": "Hi"},
                {"user": "where is it?", "assertions": [{"type": "contains", "value": "Sorry"}]},
                {"user": "bye"},
            ]
        },
        "assertions": [{"type": "tool-called", "value": "issue_refund"}],
    }
    project.tests_file("t.yaml", {"support": [test]})
    result = project.run("run", "t.yaml", "--target", _agent(project))
    assert result.exit_code == 1
    assert len(_calls(project)) == 3  # a failed check does not end the conversation
    trial = _trial(result, "wrong_turn")
    assert trial["status"] == "failed"
    assert [t["outcome"] for t in trial["turns"]] == ["passed", "failed", "passed"]
    steps = [(f["step"], f["assertion"]) for f in trial["failures"]]
    assert steps == [("turn 2", "contains"), ("conversation", "tool-called")]


def test_tool_calls_across_turns_feed_tool_sequence_in_order(project: Project) -> None:
    wrong_order = {
        **REFUND,
        "id": "wrong_order",
        "assertions": [{"type": "tool-sequence", "value": ["issue_refund", "lookup_order"]}],
    }
    project.tests_file("t.yaml", {"support": [REFUND, wrong_order]})
    result = project.run("run", "t.yaml", "--target", _agent(project))
    assert result.status("refund_flow") == "passed"
    assert result.status("wrong_order") == "failed"
    failure = _trial(result, "wrong_order")["failures"][0]
    assert failure["step"] == "conversation" and failure["assertion"] == "tool-sequence"


def test_an_agent_crash_at_turn_two_is_an_error_and_turn_three_is_never_sent(
    project: Project,
) -> None:
    test = {
        "id": "crash",
        "conversation": {
            "turns": [{"user": "Hi"}, {"user": "crash now"}, {"user": "never sent"}],
        },
        "assertions": [{"type": "not-contains", "value": "anything"}],
    }
    project.tests_file("t.yaml", {"support": [test]})
    result = project.run("run", "t.yaml", "--target", _agent(project))
    assert result.exit_code == 1
    sent = [call["request"]["messages"][-1]["content"] for call in _calls(project)]
    assert sent == ["Hi", "crash now"]
    trial = _trial(result, "crash")
    assert trial["status"] == "error"
    assert trial["error"].startswith("turn 2 of 3: ")
    assert "exited with code 3" in trial["error"]
    assert [t["outcome"] for t in trial["turns"]] == ["passed", "error"]
    assert trial["conversation"] is None  # the whole conversation was never judged
    assert "turn 2 of 3" in result.stdout


def test_each_trial_is_a_fresh_conversation_with_its_own_id(project: Project) -> None:
    project.tests_file("t.yaml", {"support": [{**REFUND, "trials": 3}]})
    result = project.run("run", "t.yaml", "--target", _agent(project))
    assert result.exit_code == 0
    calls = _calls(project)
    assert len(calls) == 6
    ids = [call["id"] for call in calls]
    assert len(set(ids)) == 3 and all(ids.count(i) == 2 for i in ids)
    # Every trial starts from the first message again.
    firsts = [c for c in calls if len(c["request"]["messages"]) == 1]
    assert len(firsts) == 3


def test_an_http_agent_gets_the_history_and_the_conversation_header(
    project: Project, http_server: HttpAgent
) -> None:
    project.tests_file("t.yaml", {"support": [REFUND]})
    result = project.run("run", "t.yaml", "--target", http_server.url("/chat"))
    assert result.exit_code == 0, result.stdout + result.stderr
    hits = http_server.hits("/chat")
    assert len(hits) == 2
    bodies = [hit[3] for hit in hits]
    assert [len(body["messages"]) for body in bodies] == [1, 3]
    assert all(body["user_id"] == 42 for body in bodies)
    headers = [{k.lower(): v for k, v in hit[2].items()} for hit in hits]
    ids = [h.get("x-assertly-conversation-id") for h in headers]
    assert ids[0] and ids[0] == ids[1]
    trial = _trial(result, "refund_flow")
    assert trial["conversation"]["outcome"] == "passed"


def test_recheck_judges_the_stored_turns_again_without_calling_the_agent(
    project: Project,
) -> None:
    project.tests_file("t.yaml", {"support": [REFUND]})
    agent = _agent(project)
    first = project.run("run", "t.yaml", "--target", agent)
    assert first.exit_code == 0
    run_id = first.report["run_id"] if first.report else ""
    assert len(_calls(project)) == 2
    # The test now wants another reply on turn 2 and another tool order: both fail on the
    # stored replies, and the agent is not called again.
    changed = json.loads(json.dumps(REFUND))
    changed["conversation"]["turns"][1]["assertions"] = [{"type": "contains", "value": "Sorry"}]
    changed["assertions"] = [
        {"type": "tool-sequence", "value": ["issue_refund"], "config": {"mode": "exact"}}
    ]
    project.tests_file("t.yaml", {"support": [changed]})
    again = project.run("recheck", run_id)
    assert len(_calls(project)) == 2
    trial = _trial(again, "refund_flow")
    assert trial["status"] == "failed", trial.get("error")
    assert [t["outcome"] for t in trial["turns"]] == ["passed", "failed"]
    assert {f["step"] for f in trial["failures"]} == {"turn 2", "conversation"}
    assert trial["turns"][1]["output"] == _trial(first, "refund_flow")["turns"][1]["output"]


def test_recheck_refuses_a_turn_whose_user_message_changed(project: Project) -> None:
    project.tests_file("t.yaml", {"support": [REFUND]})
    first = project.run("run", "t.yaml", "--target", _agent(project))
    run_id = first.report["run_id"] if first.report else ""
    changed = json.loads(json.dumps(REFUND))
    changed["conversation"]["turns"][1]["user"] = "No, cancel it"
    project.tests_file("t.yaml", {"support": [changed]})
    again = project.run("recheck", run_id)
    trial = _trial(again, "refund_flow")
    assert trial["status"] == "error"
    assert "turn 2's user message changed" in trial["error"]


def test_a_python_agent_reads_the_conversation_id_from_its_environment(
    project: Project,
) -> None:
    project.write(
        "py_agent.py",
        "import os\n"
        "def answer(request):\n"
        "    turn = len(request['messages']) // 2 + 1\n"
        "    return f\"turn {turn} of {os.environ.get('ASSERTLY_CONVERSATION_ID')}\"\n",
    )
    test = {
        "id": "py",
        "conversation": {"turns": [{"user": "a"}, {"user": "b"}]},
        "assertions": [{"type": "regex", "value": "turn 1 of ([0-9a-f]{32})\\s+turn 2 of \\1"}],
    }
    project.tests_file("t.yaml", {"support": [test]})
    sys.path.insert(0, str(project.root))
    try:
        result = project.run("run", "t.yaml", "--target", "py:py_agent:answer")
    finally:
        sys.path.remove(str(project.root))
    assert result.status("py") == "passed", result.stdout
    assert Path(project.root / "py_agent.py").exists()


def test_recheck_refuses_a_conversation_whose_scripted_turns_changed_in_number(
    project: Project,
) -> None:
    project.tests_file("t.yaml", {"support": [REFUND]})
    first = project.run("run", "t.yaml", "--target", _agent(project))
    run_id = first.report["run_id"] if first.report else ""
    # A turn added with a check that would fail: never sent, so never a pass on a recheck.
    longer = json.loads(json.dumps(REFUND))
    longer["conversation"]["turns"].append(
        {"user": "And my other order?", "assertions": [{"type": "contains", "value": "x"}]}
    )
    project.tests_file("t.yaml", {"support": [longer]})
    trial = _trial(project.run("recheck", run_id), "refund_flow")
    assert trial["status"] == "error"
    assert "the test now has 3 scripted turns, the run sent 2" in trial["error"]
    shorter = json.loads(json.dumps(REFUND))
    shorter["conversation"]["turns"].pop()
    project.tests_file("t.yaml", {"support": [shorter]})
    trial = _trial(project.run("recheck", run_id), "refund_flow")
    assert trial["status"] == "error"
    assert "the run sent 2 turns, the test now has 1 scripted turns" in trial["error"]


def test_a_fixtures_target_answers_each_turn_by_test_id_and_turn(project: Project) -> None:
    recorded = [
        {"id": "refund_flow/turn 1", "output": "Looking up your order A-1042"},
        {
            "id": "refund_flow/turn 2",
            "output": "Refund issued",
            "tool_calls": [{"name": "issue_refund", "arguments": {}}],
        },
    ]
    project.write("fx.jsonl", "\n".join(json.dumps(line) for line in recorded) + "\n")
    test = json.loads(json.dumps(REFUND))
    test["assertions"] = [
        {"type": "contains", "value": "Refund issued"},
        {"type": "tool-called", "value": "issue_refund"},
    ]
    project.tests_file("t.yaml", {"support": [test]})
    result = project.run("run", "t.yaml", "--target", "fixtures:fx.jsonl")
    assert result.exit_code == 0, result.stdout + result.stderr
    turns = _trial(result, "refund_flow")["turns"]
    assert [t["output"] for t in turns] == ["Looking up your order A-1042", "Refund issued"]
