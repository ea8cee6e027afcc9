"""How traces read in failure messages and results (one call's text: `_call_text`).

`ToolCall.to_json` is what results keep. `render_calls` writes a trace on one line;
`shown_calls` writes that line and the kept calls' JSON for one failure at once, straight from
the `Trace` (no `ToolCall` objects, each call's arguments read once, a call that fits written
by one `orjson.dumps`). A failing trajectory assertion shows every call with its arguments, and
that was most of its cost (#16): tests/engine/test_trace_judging.py checks `shown_calls`
against the plain definition (tests/trajectory_reference.py).
"""

from __future__ import annotations

from typing import Any

import orjson

from ._call_text import CALL_CLIP, UNWRITABLE, call_text, call_text_by_entry
from ._trace import FORMAT_LABELS, ToolCall, Trace

__all__ = [
    "render_call",
    "render_call_at",
    "render_calls",
    "shown_calls",
]

_SHOWN_CALLS = 20
_dumps = orjson.dumps
_loads = orjson.loads
_PREFIXES = tuple(f"{number}. " for number in range(1, _SHOWN_CALLS + 1))


def render_call(call: ToolCall) -> str:
    """`call_text` of a `ToolCall`."""
    return call_text(call.name, call.arguments)


def render_call_at(trace: Trace, index: int) -> str:
    """`call_text` of call ``index`` of ``trace`` (no `ToolCall` made)."""
    return call_text(trace.names[index], trace.arguments(index))


def render_calls(trace: Trace, mark: int | None = None) -> str:
    """The trace as one line: ``2 calls (OpenAI Chat Completions): 1. a({"x":1}) → 2. b({})``.

    ``mark`` (an index) is flagged with ``<<`` as the point of divergence. Long traces show
    the first 20 calls, the marked one and a count of the rest.
    """
    return shown_calls(trace, mark, 0)[0]


def shown_calls(trace: Trace, mark: int | None, kept: int) -> tuple[str, list[dict[str, Any]]]:
    """``render_calls(trace, mark)`` and ``[c.to_json() for c in trace.calls[:kept]]``, at once.

    One loop reads each call's arguments (`Trace.arguments`, its common case inlined),
    keeps its JSON and writes it; `call_text` is inlined for a call that fits (one
    `orjson.dumps`, whose length in bytes bounds the text's in characters).
    """
    names = trace.names
    count = len(names)
    if not count:
        return f"no calls ({trace.label})", []
    parts: list[str] = []
    actual: list[dict[str, Any]] = []
    add, keep, dumps_, loads_ = parts.append, actual.append, _dumps, _loads
    plain_text = not trace.free
    # (The first 20 calls: `_PREFIXES` is the shortest.)
    for prefix, name, raw in zip(_PREFIXES, names, trace.raw, strict=False):
        if type(raw) is dict:
            arguments = raw
        elif type(raw) is str and plain_text:
            # `_arguments`, its common case inlined: JSON text orjson reads exactly.
            try:
                arguments = loads_(raw)
            except ValueError:
                arguments = None
            if type(arguments) is dict:
                for item in arguments.values():
                    kind = type(item)
                    if kind is float or kind is dict or kind is list:
                        arguments = trace.arguments(len(parts))
                        break
            else:
                arguments = trace.arguments(len(parts))
        else:
            arguments = trace.arguments(len(parts))
        if arguments is None:
            keep({"name": name, "arguments_error": trace.problem(len(parts))})
            add(f"{prefix}{name}(<unreadable arguments>)")
            continue
        keep({"name": name, "arguments": arguments})
        try:
            written = dumps_(arguments)
        except UNWRITABLE:  # big integers, lone surrogates, keys that are not strings …
            add(prefix + call_text_by_entry(name, arguments))
            continue
        if len(written) + len(name) <= CALL_CLIP - 2:
            add(f"{prefix}{name}({written.decode()})")
        else:
            add(prefix + call_text(name, arguments))
    if mark is not None and 0 <= mark < count:
        if mark >= _SHOWN_CALLS:
            if mark != _SHOWN_CALLS:
                add("…")
            add(f"{mark + 1}. {call_text(names[mark], trace.arguments(mark))} <<")
        else:
            parts[mark] += " <<"
    if count > _SHOWN_CALLS:
        _past_the_shown(trace, mark, kept, parts, actual)
    if kept < len(actual):
        del actual[kept:]
    noun = "call" if count == 1 else "calls"
    return (
        f"{count} {noun} ({FORMAT_LABELS.get(trace.format, trace.format)}): {' → '.join(parts)}",
        actual,
    )


def _past_the_shown(
    trace: Trace, mark: int | None, kept: int, parts: list[str], actual: list[dict[str, Any]]
) -> None:
    """`shown_calls` of a trace of more than 20 calls: how many more, and the kept ones."""
    names, count = trace.names, len(trace.names)
    shown = mark + 1 if mark is not None and _SHOWN_CALLS <= mark < count else _SHOWN_CALLS
    if shown < count:
        parts.append(f"… ({count - shown} more)")
    for index in range(_SHOWN_CALLS, min(count, kept)):  # kept beyond the shown
        arguments = trace.arguments(index)
        actual.append(
            {"name": names[index], "arguments": arguments}
            if arguments is not None
            else {"name": names[index], "arguments_error": trace.problem(index)}
        )
