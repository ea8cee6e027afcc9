"""The tool calls an agent made, read from its response or from the call's metadata.

A *trace* is the list of tool calls, in order, with the format it was read from. Formats:

* ``openai-chat``: a Chat Completions reply (``choices[0].message.tool_calls[*]``, each
  ``function.name`` and ``function.arguments`` as JSON text), one assistant message, or a
  list of messages (a transcript);
* ``openai-responses``: a Responses API reply (``output[*]`` items of type ``function_call``,
  ``custom_tool_call`` or ``mcp_call``), or a list of such items;
* ``anthropic``: a Messages reply (``content[*]`` blocks of type ``tool_use``,
  ``server_tool_use`` or ``mcp_tool_use``, with ``name`` and ``input``), one message, a list
  of messages or a list of content blocks;
* ``tool_calls``: a top-level ``{"tool_calls": [{name, arguments | args | input}]}``;
* ``metadata``: ``tool_calls`` the target reported beside the output (a ``cmd:`` agent's
  metadata file, a ``py:`` agent's ``TargetResponse``); it wins over the response.

A response that is none of these has no trace: trajectory assertions are then an error, never
a pass. A recognised reply without calls has an empty trace. Arguments given as JSON text that
does not parse into an object are kept as unreadable: a match on arguments fails on them, a
match on the name alone still works.

Extraction is done once per response (cached on the `Response`) or once per call context
(metadata), however many trajectory assertions read it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from ._response import NOT_JSON, _loads
from ._values import TOO_DEEP_MESSAGE, JsonTooDeep, dumps, json_type

if TYPE_CHECKING:
    from ._context import CheckContext
    from ._response import Response

__all__ = [
    "FORMAT_LABELS",
    "NO_TRACE",
    "ToolCall",
    "Trace",
    "read_calls",
    "read_trace",
    "render_call",
    "render_calls",
    "trace_of",
]

FORMAT_LABELS: Final[dict[str, str]] = {
    "openai-chat": "OpenAI Chat Completions",
    "openai-responses": "OpenAI Responses",
    "anthropic": "Anthropic Messages",
    "tool_calls": "top-level tool_calls",
    "metadata": "metadata tool_calls",
    "messages": "message list",
}

NO_TRACE: Final = (
    "no tool-call trace found: the response is none of OpenAI Chat Completions, OpenAI "
    "Responses, Anthropic Messages or a top-level tool_calls list, and the call reported no "
    "tool_calls metadata"
)

_RESPONSES_CALLS = frozenset({"function_call", "custom_tool_call", "mcp_call"})
_ANTHROPIC_CALLS = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})


_UNREAD: Final[Any] = object()


class ToolCall:
    """One tool call.

    Arguments given as JSON text are parsed on first use: assertions on names and counts never
    pay for it.

    Attributes:
        name: The tool's name.
    """

    __slots__ = ("_arguments", "_free_text", "_problem", "_raw", "name")

    def __init__(self, name: str, raw: Any, free_text: bool = False) -> None:
        self.name = name
        self._problem: str | None = None
        # An object is the arguments as they are; anything else is read on first use.
        self._arguments: Any = raw if type(raw) is dict else _UNREAD
        self._raw = raw
        self._free_text = free_text

    @property
    def arguments(self) -> dict[str, Any] | None:
        """The arguments as an object, or None when they could not be read (see `problem`)."""
        arguments = self._arguments
        if arguments is _UNREAD:
            arguments, self._problem = _read_arguments(self._raw, self._free_text)
            self._arguments = arguments
        return arguments  # type: ignore[no-any-return]

    @property
    def problem(self) -> str | None:
        """Why the arguments could not be read (None when they were)."""
        if self._arguments is _UNREAD:
            _ = self.arguments
        return self._problem

    def to_json(self) -> dict[str, Any]:
        """The call as results and reports show it."""
        if self.problem is not None:
            return {"name": self.name, "arguments_error": self.problem}
        return {"name": self.name, "arguments": self.arguments}

    def __repr__(self) -> str:
        return f"ToolCall({render_call(self)})"


class Trace:
    """The tool calls of one response, in order, and the format they were read from."""

    __slots__ = ("calls", "format")

    def __init__(self, calls: tuple[ToolCall, ...], format: str) -> None:
        self.calls = calls
        self.format = format

    @property
    def label(self) -> str:
        """The format as people read it (``OpenAI Chat Completions``)."""
        return FORMAT_LABELS.get(self.format, self.format)

    def names(self) -> list[str]:
        """The called tools' names, in order."""
        return [call.name for call in self.calls]

    def __len__(self) -> int:
        return len(self.calls)

    def __repr__(self) -> str:
        return f"Trace({self.format}, {len(self.calls)} calls)"


class _Unreadable(Exception):
    """A call-shaped item that cannot be read: the trace is an error, not empty."""


def trace_of(response: Response, ctx: CheckContext) -> Trace | str:
    """The trace to judge: the call's metadata when it has one, else the response's.

    Returns:
        The trace, or why there is none (a sentence for an ``error`` result).
    """
    if ctx.tool_calls is not None:
        trace = ctx.trace_cache
        if trace is None:
            trace = ctx.trace_cache = read_calls(ctx.tool_calls)
        return trace  # type: ignore[no-any-return]
    trace = response.trace_cache
    if trace is None:
        trace = response.trace_cache = read_trace(response)
    return trace  # type: ignore[no-any-return]


def read_calls(value: Any, where: str = "tool_calls", format: str = "metadata") -> Trace | str:
    """A trace from a list of calls ``[{name, arguments | args | input}]`` (metadata)."""
    if type(value) is not list:
        return f"the call's reported {where} is {_article(value)}, not a list of tool calls"
    try:
        return Trace(tuple([_generic(item, where, i) for i, item in enumerate(value)]), format)
    except _Unreadable as error:
        return f"the tool-call trace ({FORMAT_LABELS[format]}) cannot be read: {error}"
    except RecursionError:
        return f"the tool-call trace ({FORMAT_LABELS[format]}) is nested too deeply to read"


def read_trace(response: Response) -> Trace | str:
    """The trace in a response, or why there is none (see the module docstring)."""
    data = response.whole_json
    if data is NOT_JSON:
        if response.too_deep:
            return TOO_DEEP_MESSAGE
        return NO_TRACE
    found: tuple[list[ToolCall], str] | None
    try:
        if type(data) is dict:
            found = _from_object(data)
        elif type(data) is list:
            found = _from_list(data)
        else:
            found = None
    except _Unreadable as error:
        return f"the tool-call trace cannot be read: {error}"
    except RecursionError:
        return "the tool-call trace is nested too deeply to read"
    if found is None:
        return NO_TRACE
    calls, format = found
    return Trace(tuple(calls), format)


# Locations (``choices[0].message.tool_calls[2]``) are only spelt out for an error message:
# functions take the location of the list and the item's index.


def _from_object(data: dict[str, Any]) -> tuple[list[ToolCall], str] | None:
    choices = data.get("choices")
    if type(choices) is list:
        if not choices:
            return [], "openai-chat"
        first = choices[0]
        message = first.get("message") if type(first) is dict else None
        if type(message) is not dict:
            raise _Unreadable("choices[0] has no message object")
        return _openai_message(message, "choices[0].message"), "openai-chat"
    output = data.get("output")
    if type(output) is list and (
        data.get("object") == "response" or (output and _all_typed(output))
    ):
        return _responses_items(output, "output"), "openai-responses"
    if "role" in data and ("tool_calls" in data or "function_call" in data):
        return _openai_message(data, ""), "openai-chat"  # one assistant message
    content = data.get("content")
    if type(content) is list and (data.get("type") == "message" or "role" in data):
        return _anthropic_blocks(content, "content"), "anthropic"
    if "tool_calls" in data:
        calls = data["tool_calls"]
        if calls is None:
            return [], "tool_calls"
        if type(calls) is not list:
            raise _Unreadable(f"tool_calls is {_article(calls)}, not a list")
        return [_generic(item, "tool_calls", i) for i, item in enumerate(calls)], "tool_calls"
    messages = data.get("messages")
    if type(messages) is list and messages and _all_messages(messages):
        return _from_list(messages, "messages")
    return None


def _from_list(items: list[Any], where: str = "") -> tuple[list[ToolCall], str] | None:
    """A transcript: messages, Responses items or Anthropic content blocks, in order."""
    if not items or not all(type(item) is dict for item in items):
        return None
    if not all("role" in item or type(item.get("type")) is str for item in items):
        return None
    calls: list[ToolCall] = []
    format = ""
    for index, item in enumerate(items):
        kind = item.get("type")
        if kind in _RESPONSES_CALLS:
            calls.append(_responses_call(item, where, index))
            format = format or "openai-responses"
        elif kind in _ANTHROPIC_CALLS:
            calls.append(_named(item, "input", where, index))
            format = format or "anthropic"
        elif "role" in item:
            content = item.get("content")
            if type(content) is list and any(
                type(block) is dict and block.get("type") in _ANTHROPIC_CALLS for block in content
            ):
                calls.extend(_anthropic_blocks(content, f"{where}[{index}].content"))
                format = format or "anthropic"
            elif item.get("tool_calls") or item.get("function_call"):
                calls.extend(_openai_message(item, f"{where}[{index}]"))
                format = format or "openai-chat"
    return calls, format or "messages"


def _all_typed(items: list[Any]) -> bool:
    return all(type(item) is dict and type(item.get("type")) is str for item in items)


def _all_messages(items: list[Any]) -> bool:
    return all(type(item) is dict and ("role" in item or "type" in item) for item in items)


def _openai_message(message: dict[str, Any], where: str) -> list[ToolCall]:
    calls: list[ToolCall] = []
    tool_calls = message.get("tool_calls")
    if tool_calls is not None:
        if type(tool_calls) is not list:
            raise _Unreadable(f"{_at(where, 'tool_calls')} is {_article(tool_calls)}, not a list")
        try:
            calls = [_openai_call(item) for item in tool_calls]
        except _Nameless:
            # Read again, slowly, only to say where.
            at = _at(where, "tool_calls")
            calls = [_generic(item, at, index) for index, item in enumerate(tool_calls)]
    legacy = message.get("function_call")  # the pre-tools form: one call per message
    if legacy is not None:
        at = _at(where, "function_call")
        if type(legacy) is not dict:
            raise _Unreadable(f"{at} is {_article(legacy)}, not an object")
        calls.append(_named(legacy, "arguments", at, None))
    return calls


def _at(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


class _Nameless(Exception):
    """A call without a readable name, found on the fast path (its place is not known)."""


def _openai_call(item: Any) -> ToolCall:
    """``{type: function, function: {name, arguments}}``, fast; anything else via `_generic`."""
    if type(item) is dict:
        function = item.get("function")
        if type(function) is dict:
            name = function.get("name")
            if type(name) is str:
                return ToolCall(name, function.get("arguments"))
    raise _Nameless


def _responses_items(items: list[Any], where: str) -> list[ToolCall]:
    calls: list[ToolCall] = []
    for index, item in enumerate(items):
        if type(item) is not dict:
            continue
        kind = item.get("type")
        if kind in ("function_call", "mcp_call"):
            name = item.get("name")
            if type(name) is not str:
                raise _Unreadable(_nameless(name, f"{where}[{index}]"))
            calls.append(ToolCall(name, item.get("arguments")))
        elif kind == "custom_tool_call":
            calls.append(_responses_call(item, where, index))
    return calls


def _responses_call(item: dict[str, Any], where: str, index: int) -> ToolCall:
    # custom_tool_call carries free text in `input`; function_call and mcp_call JSON text in
    # `arguments`.
    if item.get("type") == "custom_tool_call":
        return _named(item, "input", where, index, free_text=True)
    return _named(item, "arguments", where, index)


def _anthropic_blocks(blocks: list[Any], where: str) -> list[ToolCall]:
    kinds = _ANTHROPIC_CALLS
    calls: list[ToolCall] = []
    for index, block in enumerate(blocks):
        if type(block) is dict and block.get("type") in kinds:
            name = block.get("name")
            if type(name) is not str:
                raise _Unreadable(_nameless(name, f"{where}[{index}]"))
            calls.append(ToolCall(name, block.get("input")))
    return calls


def _generic(item: Any, where: str, index: int) -> ToolCall:
    """``{name, arguments | args | input}``, or OpenAI's ``{function: {name, arguments}}``."""
    if type(item) is not dict:
        raise _Unreadable(f"{where}[{index}] is {_article(item)}, not a tool call object")
    name = item.get("name")
    if name is None:
        function = item.get("function")
        if type(function) is dict:
            name = function.get("name")
            if type(name) is not str:
                raise _Unreadable(_nameless(name, f"{where}[{index}].function"))
            return ToolCall(name, function.get("arguments"))
        custom = item.get("custom")  # OpenAI's custom tools: {type: custom, custom: {name, input}}
        if type(custom) is dict:
            return _named(custom, "input", f"{where}[{index}].custom", None, free_text=True)
    if type(name) is not str:
        raise _Unreadable(_nameless(name, f"{where}[{index}]"))
    arguments = item.get("arguments")
    if arguments is None:
        arguments = item.get("args")
        if arguments is None:
            arguments = item.get("input")
    return ToolCall(name, arguments)


def _named(
    item: dict[str, Any], key: str, where: str, index: int | None, *, free_text: bool = False
) -> ToolCall:
    """A call whose name is ``item["name"]`` and arguments ``item[key]``."""
    name = item.get("name")
    if type(name) is not str:
        raise _Unreadable(_nameless(name, where if index is None else f"{where}[{index}]"))
    return ToolCall(name, item.get(key), free_text)


def _nameless(name: Any, where: str) -> str:
    shown = "no name" if name is None else f"a name that is {_article(name)}"
    return f"{where or 'the message'} is a tool call with {shown}"


def _read_arguments(raw: Any, free_text: bool) -> tuple[dict[str, Any] | None, str | None]:
    """Arguments that are not an object: JSON text holding one, or unreadable (saying why)."""
    if raw is None:
        return {}, None
    if type(raw) is not str:
        return None, f"the arguments are {_article(raw)}, not an object"
    if free_text:
        return {"input": raw}, None
    if not raw.strip():
        return {}, None  # some models send "" for a call without arguments
    try:
        value = _loads(raw)
    except JsonTooDeep:
        return None, "the arguments are JSON nested too deeply to read"
    except RecursionError:
        return None, "the arguments are JSON nested too deeply to read"
    if value is NOT_JSON:
        return None, f"the arguments are not valid JSON: {_clip(repr(raw), 60)}"
    if type(value) is not dict:
        return None, f"the arguments are {_article(value)}, not an object"
    return value, None


def _article(value: Any) -> str:
    name = json_type(value)
    return f"an {name}" if name[0] in "aeiou" else f"a {name}"


# --- how calls read in messages ---------------------------------------------------------------

_ARGUMENT_CLIP = 40
_CALL_CLIP = 120
_SHOWN_CALLS = 20


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render_arguments(arguments: Mapping[str, Any]) -> str:
    """``query="x", limit=5``: each value as compact JSON, long ones clipped."""
    return ", ".join(
        f"{key}={_clip(dumps(value), _ARGUMENT_CLIP)}" for key, value in arguments.items()
    )


def render_call(call: ToolCall) -> str:
    """``search(query="x", limit=5)``, or ``search(<arguments unreadable>)``."""
    if call.arguments is None:
        return f"{call.name}(<unreadable arguments>)"
    return _clip(f"{call.name}({render_arguments(call.arguments)})", _CALL_CLIP)


def render_calls(trace: Trace, mark: int | None = None) -> str:
    """The trace as one line: ``2 calls (OpenAI Chat Completions): 1. a(x=1) → 2. b()``.

    ``mark`` (an index) is flagged with ``<<`` as the point of divergence. Long traces show
    the first calls, the marked one and a count of the rest.
    """
    count = len(trace.calls)
    noun = "call" if count == 1 else "calls"
    head = f"{count} {noun} ({trace.label})"
    if not count:
        return f"no calls ({trace.label})"
    shown: list[str] = []
    indexes = list(range(min(count, _SHOWN_CALLS)))
    if mark is not None and mark >= _SHOWN_CALLS and mark < count:
        indexes.append(mark)
    previous = -1
    for index in indexes:
        if index != previous + 1:
            shown.append("…")
        text = f"{index + 1}. {render_call(trace.calls[index])}"
        shown.append(text + " <<" if index == mark else text)
        previous = index
    if previous < count - 1:
        shown.append(f"… ({count - previous - 1} more)")
    return f"{head}: " + " → ".join(shown)
