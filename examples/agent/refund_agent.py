"""A small support agent that talks: the example agent of conversation tests (issue 32).

assertly calls it once per turn with the whole conversation so far on stdin, as OpenAI Chat
Completions messages (``{"messages": [...], "channel": ...}``: the test's ``conversation.input``
comes beside them), and reads its answer on stdout: an OpenAI Chat Completions reply, whose
text and tool calls assertly appends to the history it sends on the next turn.

It keeps no state of its own: it reads the order number from anything the user said, and what
it already did from its own earlier tool calls in the history (``ASSERTLY_CONVERSATION_ID``
names the conversation, for an agent that keeps state elsewhere). Its one bug, on purpose: a
user who says "yes" gets the refund at once, even when the user asked a question first.

    echo '{"messages": [{"role": "user", "content": "A-1042"}]}' | python3 agent/refund_agent.py
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

ORDER = re.compile(r"\b[A-Z]-\d{4}\b")
AGREES = re.compile(r"^\s*(yes|yep|sure|ok|okay|please do|go ahead)\b", re.IGNORECASE)


def called(messages: list[dict[str, Any]], tool: str) -> bool:
    """Whether the agent already called ``tool`` in this conversation."""
    return any(
        call["function"]["name"] == tool
        for message in messages
        if message["role"] == "assistant"
        for call in message.get("tool_calls", [])
    )


def answer(messages: list[dict[str, Any]]) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    """The reply's text and tool calls for the conversation so far."""
    said = [message["content"] for message in messages if message["role"] == "user"]
    orders = [found for text in said for found in ORDER.findall(text)]
    if not orders:
        return "I can help with a refund. What is your order number?", []
    order = orders[-1]
    if not called(messages, "lookup_order"):
        return (
            f"Order {order}: one kettle, delivered on 12 January, 49.00 EUR. It can be refunded."
            " Shall I issue the refund?",
            [("lookup_order", {"order_id": order})],
        )
    if called(messages, "issue_refund"):
        return f"The refund for order {order} is already issued. Anything else?", []
    if AGREES.match(said[-1]):
        return (
            f"Refund issued for order {order}: 49.00 EUR, back on your card within 5 business"
            " days.",
            [("issue_refund", {"order_id": order, "amount": 49.0})],
        )
    return f"Shall I issue the refund for order {order}?", []


def main() -> None:
    """Read the request on stdin, write an OpenAI Chat Completions reply on stdout."""
    request = json.load(sys.stdin)
    text, calls = answer(request["messages"])
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [
            {
                "id": f"call_{number}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
            for number, (name, arguments) in enumerate(calls, 1)
        ]
    reply = {
        "object": "chat.completion",
        "model": "refund-mini-1",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
    }
    print(json.dumps(reply))


if __name__ == "__main__":
    main()
