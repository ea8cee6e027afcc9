"""The JSON Schemas accept the conversation tests of issue 32 and flag what the loader refuses."""

from __future__ import annotations

from typing import Any

import jsonschema_rs
import pytest
import yaml

from assertly.loading import json_schemas

ISSUE_EXAMPLES = yaml.safe_load(
    """
agent: support
test_suites:
  refunds:
    tests:
      - id: refund_flow
        conversation:
          turns:
            - user: "Hi, I want a refund for order A-1042"
              assertions: [{type: icontains, value: "A-1042"}]
            - user: "Yes, go ahead"
              assertions: [{type: tool-called, value: issue_refund}]
        assertions:
          - {type: tool-sequence, value: [lookup_order, issue_refund]}
          - {type: not-tool-called, value: escalate_to_human}
          - {type: llm-rubric, value: "The agent never asked again for the order number"}
      - id: impatient
        conversation:
          input: {user_id: 42}
          simulated_user:
            persona: "A customer who wants a refund for order A-1042 and gets impatient"
            first_message: "Hi, I need my money back"
            max_turns: 6
            stop_when: [{type: icontains, value: "refund issued"}]
            stop_token: "<done>"
            require_stop: true
        assertions: [{type: tool-called, value: issue_refund}]
      - id: scripted_then_simulated
        conversation:
          turns: [{user: "Hello", expect: {status: success}}, "And then?"]
          simulated_user: {persona: "a curious customer"}
          turns_note_is_not_a_key: 1
        assertions: [{type: contains, value: "x"}]
"""
)
# The last test carries one wrong key (below it is removed for the "accepted" check).
del ISSUE_EXAMPLES["test_suites"]["refunds"]["tests"][2]["conversation"]["turns_note_is_not_a_key"]


def _errors(document: Any, schema: str = "agent-tests") -> list[str]:
    validator = jsonschema_rs.validator_for(json_schemas()[schema])
    return [error.message for error in validator.iter_errors(document)]


def _file(test: dict[str, Any]) -> dict[str, Any]:
    return {"agent": "support", "test_suites": {"s": {"tests": [test]}}}


def test_the_issues_examples_are_accepted() -> None:
    assert _errors(ISSUE_EXAMPLES) == []
    for test in ISSUE_EXAMPLES["test_suites"]["refunds"]["tests"]:
        assert _errors(test, "test") == []


_TURNS: dict[str, Any] = {"turns": [{"user": "hi"}]}
_CHECKS: dict[str, Any] = {"assertions": [{"type": "contains", "value": "x"}]}


@pytest.mark.parametrize(
    ("test", "says"),
    [
        ({"id": "a", "conversation": {"tunrs": [{"user": "hi"}]}, **_CHECKS}, "'tunrs'"),
        (
            {"id": "a", "conversation": {"turns": [{"user": "hi", "asertions": []}]}, **_CHECKS},
            "'asertions' was unexpected",
        ),
        (
            {"id": "a", "conversation": {"simulated_user": {"persona": "p", "max_turn": 2}}},
            "'max_turn' was unexpected",
        ),
        (
            {"id": "a", "input": {}, "conversation": _TURNS, **_CHECKS},
            '{"required":["conversation","input"]},{"required":["conversation","multi_step"]}]} is '
            "not allowed",
        ),
        (
            {"id": "a", "multi_step": [{"step": 1}], "conversation": _TURNS, **_CHECKS},
            "is not allowed for",
        ),
        ({"id": "a", "conversation": {}, **_CHECKS}, "is not valid under any of the schemas"),
        (
            {"id": "a", "conversation": {"turns": []}, **_CHECKS},
            "is not valid under any of the schemas",
        ),
        (
            {"id": "a", "conversation": {"input": {"messages": []}, **_TURNS}, **_CHECKS},
            '{"required":["messages"]} is not allowed for {"messages":[]}',
        ),
        ({"id": "a", "conversation": {"turns": [{"user": ""}]}, **_CHECKS}, "shorter than"),
        ({"id": "a", "conversation": {"turns": [""]}, **_CHECKS}, '"" is shorter than 1'),
        ({"id": "a", "conversation": {"turns": [5]}, **_CHECKS}, '5 is not of type "object"'),
        (
            {
                "id": "a",
                "conversation": {"simulated_user": {"persona": "p", "stop_when": [{"type": "x"}]}},
                **_CHECKS,
            },
            '"x" is not one of',
        ),
        (
            {"id": "a", "conversation": {"turns": [{"user": "hi", "assertions": [{"typ": 1}]}]}},
            '"type" is a required property',
        ),
        ({"id": "a", "conversation": {"simulated_user": {"max_turns": 3}}}, '"persona"'),
    ],
)
def test_wrong_conversations_are_flagged(test: dict[str, Any], says: str) -> None:
    for document, schema in ((_file(test), "agent-tests"), (test, "test")):
        messages = " | ".join(_errors(document, schema))
        assert says in messages, messages
