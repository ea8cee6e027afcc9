"""Seeded tool-calling responses for the trajectory section of the benchmark suite.

Realistic agent turns in every format assertly reads: OpenAI Chat Completions and Responses
replies and Anthropic Messages replies as JSON text (as a `cmd:` or HTTP agent sends them),
a top-level ``tool_calls`` object as a parsed value (as a `py:` agent returns it), and prose
with the calls reported as metadata. One to six calls each, from a research agent's tools, with
an answer text of a few hundred characters.
"""

from __future__ import annotations

import json
import random
from typing import Any

TOOLS = ["search", "fetch", "lookup_order", "summarize", "answer"]
WORDS = [
    "the",
    "refund",
    "policy",
    "allows",
    "returns",
    "within",
    "thirty",
    "days",
    "of",
    "delivery",
    "when",
    "the",
    "item",
    "arrived",
    "damaged",
    "or",
    "did",
    "not",
    "match",
    "its",
    "description",
    "and",
    "the",
    "customer",
    "keeps",
    "the",
    "receipt",
]
FORMATS = ("openai-chat", "openai-responses", "anthropic", "tool_calls", "metadata")

# What the section checks: a plain `contains`, and trajectory assertions on the same outputs.
CONTAINS: list[dict[str, Any]] = [{"type": "contains", "value": "refund"}]
TOOL_CALLED: list[dict[str, Any]] = [
    {"type": "tool-called", "value": {"name": "search", "args": {"query": "refund policy"}}}
]
TOOL_SEQUENCE: list[dict[str, Any]] = [{"type": "tool-sequence", "value": ["search", "answer"]}]
TOOL_CALL_COUNT: list[dict[str, Any]] = [{"type": "tool-call-count", "value": {"max": 6}}]
FOUR_CONTAINS: list[dict[str, Any]] = [
    {"type": "contains", "value": word} for word in ("refund", "policy", "days", "receipt")
]
FOUR_TRAJECTORY: list[dict[str, Any]] = [
    *TOOL_CALLED,
    *TOOL_SEQUENCE,
    {"type": "not-tool-called", "value": "delete_account"},
    {"type": "tool-call-count", "value": {"max": 6}},
]


def _text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(30, 80))) + "."


def _calls(rng: random.Random) -> list[tuple[str, dict[str, Any]]]:
    calls: list[tuple[str, dict[str, Any]]] = [("search", {"query": "refund policy", "limit": 5})]
    for _ in range(rng.randint(0, 3)):
        tool = rng.choice(TOOLS)
        calls.append((tool, {"id": rng.randint(1, 10_000), "text": _text(rng)[:60]}))
    if rng.random() < 0.8:
        calls.append(("answer", {"text": _text(rng)[:120]}))
    return calls


def response(rng: random.Random, format: str) -> tuple[Any, dict[str, Any] | None]:
    """One response in ``format``, and the context it comes with."""
    calls = _calls(rng)
    text = _text(rng)
    if format == "openai-chat":
        tool_calls = [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {"name": n, "arguments": json.dumps(a)},
            }
            for i, (n, a) in enumerate(calls)
        ]
        message = {"role": "assistant", "content": text, "tool_calls": tool_calls}
        reply = {
            "object": "chat.completion",
            "model": "gpt-4o",
            "choices": [{"index": 0, "message": message}],
        }
        return json.dumps(reply), None
    if format == "openai-responses":
        output: list[dict[str, Any]] = [
            {"type": "function_call", "call_id": f"c{i}", "name": n, "arguments": json.dumps(a)}
            for i, (n, a) in enumerate(calls)
        ]
        output.append(
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text}],
            }
        )
        return json.dumps({"object": "response", "output": output}), None
    if format == "anthropic":
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        content += [
            {"type": "tool_use", "id": f"t{i}", "name": n, "input": a}
            for i, (n, a) in enumerate(calls)
        ]
        return json.dumps({"type": "message", "role": "assistant", "content": content}), None
    if format == "tool_calls":
        return {"answer": text, "tool_calls": [{"name": n, "arguments": a} for n, a in calls]}, None
    return text, {"tool_calls": [{"name": n, "arguments": a} for n, a in calls]}


def make_responses(rng: random.Random, n: int) -> list[tuple[Any, dict[str, Any] | None]]:
    """``n`` responses, the formats in turn."""
    return [response(rng, FORMATS[index % len(FORMATS)]) for index in range(n)]
