"""Tool-calling responses in every format assertly reads, built from one list of calls.

Shared by the engine's trajectory tests and the runner's. Each builder returns the response
as the agent or API would send it (JSON text for the APIs, so the parse is part of the test),
plus the check context it comes with.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

Calls = list[tuple[str, dict[str, Any]]]


def openai_chat(calls: Calls) -> tuple[Any, Any]:
    """A Chat Completions reply: arguments as JSON text, content null when calling tools."""
    message: dict[str, Any] = {"role": "assistant", "content": None if calls else "Done."}
    if calls:
        message["tool_calls"] = [
            {
                "id": f"call_{index}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for index, (name, args) in enumerate(calls)
        ]
    reply = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "gpt-4o-2024-08-06",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }
    return json.dumps(reply), None


def openai_responses(calls: Calls) -> tuple[Any, Any]:
    """A Responses API reply: function_call items among reasoning and message items."""
    output: list[dict[str, Any]] = [{"type": "reasoning", "id": "rs_1", "summary": []}]
    output += [
        {
            "type": "function_call",
            "id": f"fc_{index}",
            "call_id": f"call_{index}",
            "name": name,
            "arguments": json.dumps(args),
            "status": "completed",
        }
        for index, (name, args) in enumerate(calls)
    ]
    output.append(
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Done."}],
        }
    )
    return json.dumps({"id": "resp_1", "object": "response", "output": output}), None


def anthropic(calls: Calls) -> tuple[Any, Any]:
    """An Anthropic Messages reply: tool_use blocks with ``input`` objects."""
    content: list[dict[str, Any]] = [{"type": "text", "text": "Let me look that up."}]
    content += [
        {"type": "tool_use", "id": f"toolu_{index}", "name": name, "input": args}
        for index, (name, args) in enumerate(calls)
    ]
    reply = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": content,
        "stop_reason": "tool_use" if calls else "end_turn",
    }
    return json.dumps(reply), None


def generic(calls: Calls) -> tuple[Any, Any]:
    """A top-level ``tool_calls`` list, the argument key varying (arguments, args, input)."""
    keys = ("arguments", "args", "input")
    items = [
        {"name": name, keys[index % 3]: args if index % 2 == 0 else json.dumps(args)}
        for index, (name, args) in enumerate(calls)
    ]
    return {"answer": "Done.", "tool_calls": items}, None


def metadata(calls: Calls) -> tuple[Any, Any]:
    """Prose output; the calls reported beside it as metadata (a cmd: or py: agent)."""
    reported = [{"name": name, "arguments": args} for name, args in calls]
    return "The weather in Paris is mild.", {"tool_calls": reported}


FORMATS: dict[str, Callable[[Calls], tuple[Any, Any]]] = {
    "openai-chat": openai_chat,
    "openai-responses": openai_responses,
    "anthropic": anthropic,
    "tool_calls": generic,
    "metadata": metadata,
}

LABELS = {
    "openai-chat": "OpenAI Chat Completions",
    "openai-responses": "OpenAI Responses",
    "anthropic": "Anthropic Messages",
    "tool_calls": "top-level tool_calls",
    "metadata": "metadata tool_calls",
}

# Responses that carry no tool-call trace in any format.
NO_TRACE_RESPONSES: list[Any] = [
    "The weather in Paris is mild.",
    '{"status": "success", "results": []}',
    {"answer": "42"},
    [1, 2, 3],
    "[]",
    42,
    None,
    "",
    b"\xff\xfe",
    '{"choices": "not a list"}',
    '{"content": [{"type": "tool_use", "name": "x"}]}',  # blocks without a message around them
    'Here it is: ```json\n{"tool_calls": [{"name": "search"}]}\n```',
]

# A research agent's run: search twice, fetch a page, answer.
TRAJECTORY: Calls = [
    ("search", {"query": "weather paris", "limit": 5, "filters": {"lang": "en", "safe": True}}),
    ("search", {"query": "paris forecast", "limit": 5}),
    ("fetch", {"url": "https://example.com/paris"}),
    ("answer", {"text": "Mild, 18 °C."}),
]


def can_fail(value: dict[str, Any]) -> dict[str, Any]:
    """A drawn `{min, max}` made judgeable: `min: 0` alone can never fail, and is refused."""
    return {**value, "max": 2} if value.get("min") == 0 and "max" not in value else value
