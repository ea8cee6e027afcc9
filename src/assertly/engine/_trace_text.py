"""How tool calls read in failure messages and results.

`render_calls` and `ToolCall.to_json` say what a failure shows; `shown_calls` writes both for
one failure at once, straight from the `Trace` (no `ToolCall` objects, each call's arguments
read once). A failing trajectory assertion shows every call with its arguments, and that was
most of its cost (#16): tests/engine/test_trace_judging.py checks that `shown_calls` gives
exactly what the plain definitions give.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import orjson

from ._values import dumps

if TYPE_CHECKING:
    from ._trace import ToolCall, Trace

__all__ = ["render_arguments", "render_call", "render_call_at", "render_calls", "shown_calls"]

_ARGUMENT_CLIP = 40
_CALL_CLIP = 120
_SHOWN_CALLS = 20


def render_arguments(arguments: Mapping[str, Any]) -> str:
    """``query="x", limit=5``: each value as compact JSON, long ones clipped."""
    parts = []
    for key, value in arguments.items():
        try:
            text = orjson.dumps(value).decode()  # `dumps`, its common case inlined
        except (TypeError, orjson.JSONEncodeError):
            text = dumps(value)  # big integers, lone surrogates, non-string keys …
        if len(text) > _ARGUMENT_CLIP:
            text = text[: _ARGUMENT_CLIP - 1] + "…"
        parts.append(f"{key}={text}")
    return ", ".join(parts)


def render_call(call: ToolCall) -> str:
    """``search(query="x", limit=5)``, or ``search(<arguments unreadable>)``."""
    arguments = call.arguments
    if arguments is None:
        return f"{call.name}(<unreadable arguments>)"
    text = f"{call.name}({render_arguments(arguments)})"
    return text if len(text) <= _CALL_CLIP else text[: _CALL_CLIP - 1] + "…"


def render_call_at(trace: Trace, index: int) -> str:
    """`render_call` of call ``index`` of ``trace`` (no `ToolCall` made)."""
    return _call_text(trace.names[index], trace.arguments(index))


def render_calls(trace: Trace, mark: int | None = None) -> str:
    """The trace as one line: ``2 calls (OpenAI Chat Completions): 1. a(x=1) → 2. b()``.

    ``mark`` (an index) is flagged with ``<<`` as the point of divergence. Long traces show
    the first calls, the marked one and a count of the rest.
    """
    count = len(trace.names)
    noun = "call" if count == 1 else "calls"
    head = f"{count} {noun} ({trace.label})"
    if not count:
        return f"no calls ({trace.label})"
    shown: list[str] = []
    indexes = list(range(min(count, _SHOWN_CALLS)))
    if mark is not None and mark >= _SHOWN_CALLS and mark < count:
        indexes.append(mark)
    previous = -1
    calls = trace.calls
    for index in indexes:
        if index != previous + 1:
            shown.append("…")
        text = f"{index + 1}. {render_call(calls[index])}"
        shown.append(text + " <<" if index == mark else text)
        previous = index
    if previous < count - 1:
        shown.append(f"… ({count - previous - 1} more)")
    return f"{head}: " + " → ".join(shown)


def shown_calls(trace: Trace, mark: int | None, kept: int) -> tuple[str, list[dict[str, Any]]]:
    """``render_calls(trace, mark)`` and ``[c.to_json() for c in trace.calls[:kept]]``, at once.

    The same text and values, for a fraction of the cost (a failure's main one): the calls'
    arguments read at once (`_all_arguments`), then one loop writing each call inline.
    """
    names = trace.names
    count = len(names)
    shown = count if count <= _SHOWN_CALLS else _SHOWN_CALLS
    values = _all_arguments(trace, max(shown, min(count, kept)))
    actual: list[dict[str, Any]] = []
    parts: list[str] = []
    add_actual, add_part = actual.append, parts.append
    dumps_ = _dumps
    for number, arguments in enumerate(values, 1):  # (not zip(..., strict=): a keyword call)
        name = names[number - 1]
        if number <= kept:
            if arguments is None:
                add_actual({"name": name, "arguments_error": trace.problem(number - 1)})
            else:
                add_actual({"name": name, "arguments": arguments})
        if number > shown:
            continue
        if arguments is None:
            add_part(f"{number}. {name}(<unreadable arguments>)")
            continue
        # `_call_text`, inlined: the loop's main cost (40 and 120: the two clips).
        text = ""
        for key, value in arguments.items():
            try:
                written = dumps_(value).decode()
            except (TypeError, orjson.JSONEncodeError):
                written = dumps(value)
            if len(written) > 40:
                written = written[:39] + "…"
            text = f"{text}, {key}={written}" if text else f"{key}={written}"
        text = f"{name}({text})"
        add_part(f"{number}. {text}" if len(text) <= 120 else f"{number}. {text[:119]}…")
    label = trace.label
    if not count:
        return f"no calls ({label})", actual
    if mark is not None and 0 <= mark < count:
        if mark >= _SHOWN_CALLS:
            if mark != _SHOWN_CALLS:
                parts.append("…")
            parts.append(f"{mark + 1}. {_call_text(names[mark], trace.arguments(mark))} <<")
            shown = mark + 1
        else:
            parts[mark] += " <<"
    if shown < count:
        parts.append(f"… ({count - shown} more)")
    noun = "call" if count == 1 else "calls"
    return f"{count} {noun} ({label}): " + " → ".join(parts), actual


def _all_arguments(trace: Trace, count: int) -> list[dict[str, Any] | None]:
    """`Trace.arguments` of the first ``count`` calls.

    JSON text is read by orjson alone when it gives an object of strings, integers, booleans
    and nulls: what `Trace.arguments` gives (orjson reads a big integer as a float, and
    refuses what `loads` might read otherwise), at half its cost. The rest by `arguments`.
    """
    plain_text = not trace.free
    loads_ = _loads
    found: list[dict[str, Any] | None] = []
    add = found.append
    for index, arguments in enumerate(trace.raw[:count]):
        if type(arguments) is dict:
            add(arguments)
            continue
        if type(arguments) is str and plain_text:
            try:
                value = loads_(arguments)
            except ValueError:
                value = None
            if type(value) is dict:
                for item in value.values():
                    kind = type(item)
                    if kind is float or kind is dict or kind is list:
                        break
                else:
                    add(value)
                    continue
        add(trace.arguments(index))
    return found


def _call_text(name: str, arguments: dict[str, Any] | None) -> str:
    """`render_call` of a call given by its name and arguments (`render_arguments` inlined)."""
    if arguments is None:
        return f"{name}(<unreadable arguments>)"
    parts = []
    for key, value in arguments.items():
        try:
            text = _dumps(value).decode()
        except (TypeError, orjson.JSONEncodeError):
            text = dumps(value)
        parts.append(
            f"{key}={text}"
            if len(text) <= _ARGUMENT_CLIP
            else f"{key}={text[: _ARGUMENT_CLIP - 1]}…"
        )
    text = f"{name}({', '.join(parts)})"
    return text if len(text) <= _CALL_CLIP else text[: _CALL_CLIP - 1] + "…"


_dumps = orjson.dumps
_loads = orjson.loads
