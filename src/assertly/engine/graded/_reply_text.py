"""What a model judges of an API reply: its message text and tool calls, not the envelope.

An OpenAI Chat Completions reply, an OpenAI Responses reply or an Anthropic Messages reply
carries an envelope (``id``, ``created``, ``usage``, ``system_fingerprint``, call ids …) that
changes on every call. Judged whole, every run asked the judge a new question (the judge cache
never hit; ``--judge-cache replay`` failed) and the judge read ids and token counts. So
``llm-rubric`` and ``rubric`` judge, for such a reply, the assistant's text followed by its
tool calls, one per line as ``name(arguments)``; any other response is judged as its text.

The reply formats are the ones the trajectory assertions read (`trajectory._read`): the tool calls
come from the same reader (`read_trace`), so both see the same calls.
"""

from __future__ import annotations

from typing import Any

import orjson

from .._context import CheckContext
from .._response import NOT_JSON, Response
from ..trajectory._read import read_trace, trace_of

__all__ = ["arguments_text", "assistant_reply", "judged_text", "reply_parts"]


def judged_text(response: Response) -> str:
    """What a model judges of ``response`` (see the module docstring)."""
    parts = reply_parts(response)
    if parts is None:
        return response.text
    text, calls = parts
    if not calls:
        return text
    lines = "\n".join(f"{number}. {call}" for number, call in enumerate(calls, 1))
    return f"{text}\n\nTool calls:\n{lines}" if text else f"Tool calls:\n{lines}"


def reply_parts(response: Response) -> tuple[str, list[str]] | None:
    """An API reply's message text and its tool calls as ``name(arguments)``; None otherwise."""
    data = response.whole_json
    if data is NOT_JSON or type(data) is not dict:
        return None
    texts = _texts(data)
    if texts is None:
        return None
    trace = read_trace(response)
    calls: list[str] = []
    if not isinstance(trace, str):
        calls = [
            f"{name}({_arguments(raw)})" for name, raw in zip(trace.names, trace.raw, strict=True)
        ]
    return "\n\n".join(text for text in texts if text), calls


def _texts(data: dict[str, Any]) -> list[str] | None:
    """The text parts of a reply's message, in order; None when ``data`` is no API reply."""
    choices = data.get("choices")
    if type(choices) is list and choices:
        # The first choice, as the trajectory assertions read it.
        message = choices[0].get("message") if type(choices[0]) is dict else None
        if type(message) is not dict:
            return None
        return [*_content(message.get("content")), *_strings(message.get("refusal"))]
    output = data.get("output")
    if type(output) is list and data.get("object") == "response":
        found: list[str] = []
        for item in output:
            if type(item) is dict and item.get("type") == "message":
                found += _content(item.get("content"))
        return found
    content = data.get("content")
    if type(content) is list and data.get("type") == "message" and "role" in data:
        return _content(content)
    return None


def _content(content: Any) -> list[str]:
    """Text of a message's content: a string, or parts / blocks with text or a refusal."""
    if type(content) is str:
        return [content]
    found: list[str] = []
    if type(content) is list:
        for part in content:
            if type(part) is dict and part.get("type") in ("text", "output_text", "refusal"):
                found += _strings(part.get("text"), part.get("refusal"))
    return found


def _strings(*values: Any) -> list[str]:
    return [value for value in values if type(value) is str and value]


def _arguments(raw: Any) -> str:
    """A call's arguments as given: JSON text as it is, an object as compact JSON."""
    if type(raw) is str:
        return raw
    if raw is None:
        return ""
    try:
        return orjson.dumps(raw).decode()
    except (TypeError, orjson.JSONEncodeError):
        return repr(raw)


def assistant_reply(output: Any, reported: Any) -> tuple[str, list[dict[str, Any]] | None, Any]:
    """A reply as the conversation keeps it: (its text, its tool calls, the assistant message).

    An OpenAI or Anthropic reply object is read as its message text and tool calls; a JSON
    object with a ``content`` text as that text; other text as it is, stripped. Tool calls are
    the ones reported beside the output, else the reply's own (None when neither can be read:
    a plain text reply made no call anyone can see).
    """
    response = Response(output)
    parts = reply_parts(response)
    if parts is not None:
        text = parts[0]
    elif isinstance(output, dict) and isinstance(output.get("content"), str):
        text = output["content"]
    else:
        text = response.text.strip()  # a command agent's printed line ends in a newline
    trace = trace_of(response, CheckContext(tool_calls=reported))
    calls: list[dict[str, Any]] | None = None
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if not isinstance(trace, str):
        calls = [
            {"name": name, "arguments": raw}
            for name, raw in zip(trace.names, trace.raw, strict=True)
        ]
        if calls:
            message["tool_calls"] = [
                {
                    "id": f"call_{number}",
                    "type": "function",
                    "function": {
                        "name": call["name"],
                        "arguments": arguments_text(call["arguments"]),
                    },
                }
                for number, call in enumerate(calls, 1)
            ]
    return text, calls, message


def arguments_text(arguments: Any) -> str:
    """Arguments as the JSON text an OpenAI message carries (``{}`` for none)."""
    return _arguments(arguments) or "{}"
