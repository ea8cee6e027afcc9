"""A conversation agent for the tests of conversations everywhere (issue 32, item 5).

A real command agent (``cmd:{python} conversation_agent.py VERSION``): it reads the request on
stdin, appends ``{id, test, version, parent, messages}`` to ``calls.jsonl`` in its working
directory (the conversation id from ``ASSERTLY_CONVERSATION_ID``, the test from the request's
``test``, its parent process's id), then
answers as an OpenAI reply. What it says proves what it was told: every reply repeats the first
thing the user said (version ``v2`` forgets it after turn 1), and a user message saying
"go ahead" makes it call ``issue_refund``. ``delay`` in the request makes each call slow,
``cost`` reports what the call cost, and a user message with "crash" makes it exit with code 3.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

SCRIPT = Path(__file__).resolve()


def spec(version: str = "v1") -> str:
    """The ``cmd:`` target of this agent at ``version``."""
    return f"cmd:{sys.executable} {SCRIPT} {version}"


def calls(root: Path) -> list[dict[str, Any]]:
    """Every request the agent got in ``root``, in order (as `main` logs them)."""
    path = root / "calls.jsonl"
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def assert_single_conversations(logged: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """Each conversation id's requests form one conversation, and only one test's.

    Sorted by length, each request's history is the previous request's history plus the
    agent's reply to it and one new user message; every user message names the same test.
    Returns the requests by conversation id.
    """
    by_id: dict[str, list[Any]] = {}
    for call in logged:
        assert call["id"], "every turn carries a conversation id"
        by_id.setdefault(call["id"], []).append(call)
    for conversation_id, requests in by_id.items():
        requests.sort(key=lambda call: len(call["messages"]))
        assert len(requests[0]["messages"]) == 1, f"{conversation_id} starts at turn 1"
        assert len({(call["test"], call["version"]) for call in requests}) == 1, (
            f"{conversation_id}: two tests or agents"
        )
        for before, after in itertools.pairwise(requests):
            earlier, later = before["messages"], after["messages"]
            assert len(later) == len(earlier) + 2, f"{conversation_id}: a turn missing"
            assert later[: len(earlier)] == earlier, f"{conversation_id}: history rewritten"
            assert later[len(earlier)]["role"] == "assistant"
            said = _reply(earlier, before["version"])["content"]
            assert later[len(earlier)]["content"] == said, (
                f"{conversation_id}: a reply that is not the one this agent gave"
            )
        for call in requests:
            for message in call["messages"]:
                if message["role"] == "user":
                    assert str(call["test"]) in message["content"], (
                        f"{conversation_id}: a user message of another test: {message}"
                    )
    return by_id


def _reply(messages: list[dict[str, Any]], version: str) -> dict[str, Any]:
    """The agent's reply to ``messages``."""
    users = [str(m["content"]) for m in messages if m["role"] == "user"]
    turn, last, first = len(users), users[-1], users[0]
    remembers = version == "v1" or turn == 1
    text = f"turn {turn}: you said {last}" + (f"; first you said {first}" if remembers else "")
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if "go ahead" in last:
        call = {"name": "issue_refund", "arguments": json.dumps({"turn": turn})}
        message["tool_calls"] = [{"id": "c1", "type": "function", "function": call}]
    return message


def main() -> None:
    """Answer one request (the agent's process)."""
    version = sys.argv[1] if len(sys.argv) > 1 else "v1"
    data = json.load(sys.stdin)
    messages = data["messages"]
    entry = {
        "id": os.environ.get("ASSERTLY_CONVERSATION_ID"),
        "test": data.get("test"),
        "version": version,
        "parent": os.getppid(),  # who called it: a Ray worker, or the run's own process
        "messages": messages,
    }
    with open("calls.jsonl", "a", encoding="utf-8") as log:
        log.write(json.dumps(entry) + "\n")
    time.sleep(float(data.get("delay", 0)))
    if data.get("cost") is not None:
        with open(os.environ["ASSERTLY_METADATA_FILE"], "w", encoding="utf-8") as handle:
            json.dump({"cost_usd": float(data["cost"]), "model": "chat-test"}, handle)
    if "crash" in str(messages[-1]["content"]):
        sys.exit(3)
    print(json.dumps({"choices": [{"message": _reply(messages, version)}]}))


if __name__ == "__main__":
    main()
