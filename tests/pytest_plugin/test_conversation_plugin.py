"""The pytest plugin runs conversation tests (issue 32): one item per test, a failing turn named
with what the user said, an agent that crashes at a turn an error naming that turn. The agent is
the real command agent of tests/runner/conversation_agent.py, which logs what it was sent.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from plugin_support import run, write

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runner"))
import conversation_agent as agent

TESTS = """\
agent: bot
test_suites:
  chat:
    tests:
      - id: remembers
        conversation:
          input: {test: remembers}
          turns:
            - user: "remembers: order A-1042"
              assertions: [{type: contains, value: "A-1042"}]
            - user: "remembers: go ahead"
              assertions: [{type: contains, value: "first you said remembers: order A-1042"}]
        assertions:
          - {type: tool-called, value: issue_refund}
      - id: forgets
        conversation:
          input: {test: forgets}
          turns:
            - user: "forgets: hello"
            - user: "forgets: where is\nmy order?"
              assertions: [{type: contains, value: "Sorry"}]
        assertions:
          - {type: not-tool-called, value: issue_refund}
      - id: falls_over
        conversation:
          input: {test: falls_over}
          turns:
            - user: "falls_over: hi"
            - user: "falls_over: crash please"
            - user: "falls_over: never sent"
"""


def test_conversation_items_pass_fail_by_turn_and_error_at_their_turn(
    pytester: pytest.Pytester,
) -> None:
    root = pytester.path
    (root / "assertly.yaml").write_text(
        f"agents:\n  bot: {json.dumps(agent.spec())}\n", encoding="utf-8"
    )
    write(root, "chat.tests.yaml", TESTS)
    result = run(pytester, "-v")
    result.assert_outcomes(passed=1, failed=2)
    out = result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "*chat.tests.yaml::chat::remembers PASSED*",
            "*chat.tests.yaml::chat::forgets FAILED*",
            "*chat.tests.yaml::chat::falls_over FAILED*",
        ],
        consecutive=False,
    )
    # The failing turn is named with what the user said there, first in the short summary
    # line; the turns that passed too.
    assert (
        "forgets failed: turn 2 (user: forgets: where is my order?): contains: Output does not"
        in out
    ), out
    assert "turn 2: failed (user: forgets: where is" in out
    assert "turn 1: passed (user: forgets: hello)" in out
    assert "Sorry" in out
    # The crash: an error naming its turn, and the turn after it never sent.
    assert "ERROR: turn 2 of 3: command exited with code 3" in out, out
    sent = [call["messages"][-1]["content"] for call in agent.calls(root)]
    assert "falls_over: crash please" in sent
    assert "falls_over: never sent" not in sent
    assert len(sent) == 2 + 2 + 2
    # Each item's turns were one conversation each.
    by_id = agent.assert_single_conversations(agent.calls(root))
    assert len(by_id) == 3
