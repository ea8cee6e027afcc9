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
(metadata), however many trajectory assertions read it. A trace (`_trace.Trace`) holds the
calls' names and their raw arguments; `ToolCall` objects, and the parse of arguments given
as JSON text, are made only for the calls an assertion looks into (a call of the tool it
names, or a message).

Speed (#16): a plain API reply is read in one function (`_quick.quick_trace`), from
orjson's value before the test for big integers when no number it holds is read
(`Response.unchecked_json`),
and, for an expectation of trajectory assertions alone, without a `Response` (`peek_trace`,
its JSON text case inlined in `Expectation.check`). Each shortcut reads what the full readers
read; the property tests compare them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

import orjson

from ..._json import TOO_DEEP_MESSAGE
from ..._python_values import PLAIN_TYPES, NotJsonValue, as_json_value
from ..._spans import MissingCalls, SpanCalls
from .._response import NOT_JSON
from ._quick import ANTHROPIC_CALLS, Inexact, quick_trace
from ._trace import FORMAT_LABELS, Trace, article

if TYPE_CHECKING:
    from .._context import CheckContext
    from .._response import Response

__all__ = ["NO_TRACE", "peek_trace", "read_calls", "read_trace", "trace_of"]

NO_TRACE: Final = (
    "no tool-call trace found: the response is none of OpenAI Chat Completions, OpenAI "
    "Responses, Anthropic Messages or a top-level tool_calls list, and the call reported no "
    "tool_calls metadata"
)

_orjson_loads = orjson.loads
_RESPONSES_CALLS = frozenset({"function_call", "custom_tool_call", "mcp_call"})


def _kind_in(kind: Any, kinds: frozenset[str]) -> bool:
    """Whether an item's ``type`` is one of ``kinds``; a list or object there is none of them.

    (``kind in kinds`` alone raises TypeError for an unhashable ``type``, which made a reply
    with such a block unjudgeable instead of read.)
    """
    return isinstance(kind, str) and kind in kinds


class _Unreadable(Exception):
    """A call-shaped item that cannot be read: the trace is an error, not empty."""


class _NotPlain(Exception):
    """A reader met an object that stands for JSON (an SDK's block): read its JSON instead."""


def _skip(value: Any) -> None:
    """A reader passes over ``value``, not what it looks for: unless it stands for JSON.

    Right for a JSON value; an object (an SDK's content block, message or item) must be read
    as its JSON first (`_NotPlain`: `_read_value` converts the whole value and reads again).
    """
    if type(value) not in PLAIN_TYPES:
        raise _NotPlain


def trace_of(response: Response, ctx: CheckContext | None) -> Trace | str:
    """The trace to judge: the call's metadata when it has one, else the response's.

    ``ctx`` may be None (a check without context: the generated fast path does not build one).

    Returns:
        The trace, or why there is none (a sentence for an ``error`` result).
    """
    if ctx is not None and ctx.tool_calls is not None:
        trace = ctx.trace_cache
        if trace is None:
            trace = ctx.trace_cache = read_calls(ctx.tool_calls)
        return trace  # type: ignore[no-any-return]
    trace = response.trace_cache
    if trace is None:
        trace = response.trace_cache = read_trace(response)
    return trace  # type: ignore[no-any-return]


def peek_trace(output: Any, reported: Any = None, ctx: CheckContext | None = None) -> Any:
    """The trace of an output not made a `Response` yet, when it is read at once.

    What `trace_of(Response(output), ctx)` gives, for the cases read without a `Response`:
    the calls the context reported (``reported``, its ``tool_calls`` when not None; read once
    per ``ctx`` when there is one), a dict (a parsed value), or JSON text holding a plain reply
    whose calls `read_trace` takes from orjson's value (see there). Otherwise not a `Trace`
    but orjson's value of JSON text (`NOT_JSON` if none): build the `Response` and read it
    so, handing it that value (`Response.adopt_unchecked`) rather than parsing again. (One
    value, not a pair: this runs for every output of a trace-only expectation.)
    """
    if reported is not None:
        trace = None if ctx is None else ctx.trace_cache
        if trace is None:
            trace = read_calls(reported)
            if ctx is not None:
                ctx.trace_cache = trace
        return trace if type(trace) is Trace else NOT_JSON
    kind = type(output)
    if kind is str:
        try:
            data = _orjson_loads(output)
        except ValueError:
            if not output.startswith("\ufeff"):  # (orjson refuses one: a byte order mark)
                return NOT_JSON
            try:
                data = _orjson_loads(output[1:])
            except ValueError:
                return NOT_JSON
        if type(data) is dict:
            quick = quick_trace(data)
            if type(quick) is Trace:
                return quick
        return data
    if kind is dict:
        found = _read_value(output)
        return found if type(found) is Trace else NOT_JSON
    return NOT_JSON


def read_calls(value: Any, where: str = "tool_calls", format: str = "metadata") -> Trace | str:
    """A trace from a list of calls ``[{name, arguments | args | input}]`` (metadata)."""
    if type(value) is SpanCalls:  # read from the call's spans (source: trace, prefer)
        return _as_json_if_met(lambda calls: _read_calls(calls, "spans", "spans"), value, "spans")
    if type(value) is not list:
        if type(value) is MissingCalls:  # traces: {prefer: true}, and no spans arrived
            return f"the tool calls are read from the call's spans, and there are none: {value}"
        return f"the call's reported {where} is {article(value)}, not a list of tool calls"
    return _as_json_if_met(lambda calls: _read_calls(calls, where, format), value, format)


def _read_calls(value: list[Any], where: str, format: str) -> Trace | str:
    found = Trace([], [], "")
    try:
        _generic_list(value, where, found)
    except _Unreadable as error:
        return f"the tool-call trace ({FORMAT_LABELS[format]}) cannot be read: {error}"
    except RecursionError:
        return f"the tool-call trace ({FORMAT_LABELS[format]}) is nested too deeply to read"
    found.format = format
    return found


def read_trace(response: Response) -> Trace | str:
    """The trace in a response, or why there is none (see the module docstring)."""
    tried = NOT_JSON  # a value `quick_trace` found no plain reply in
    if response.is_text:
        # A plain reply is read from orjson's value before the test for big integers
        # (`Response.unchecked_json`): names, and arguments as JSON text or as objects of
        # strings, integers, booleans and nulls, are the same in the exact value (orjson
        # reads a big integer as a float).
        data = response.unchecked_json()
        if type(data) is dict:
            quick = quick_trace(data)
            if type(quick) is Trace:
                return quick
            if type(quick) is Inexact and response.whole_json is data:
                return quick.trace  # the test found no big integer
            if quick is None:
                tried = data
    data = response.whole_json
    if data is NOT_JSON:
        if response.too_deep:
            return TOO_DEEP_MESSAGE
        return NO_TRACE
    if response.is_text and type(data) is dict and data is not tried:
        quick = quick_trace(data)  # (on the exact value: its arguments are exact)
        if type(quick) is Trace:
            return quick
        if type(quick) is Inexact:
            return quick.trace
    return _read_value(data)


def _read_value(data: Any) -> Trace | str:
    """The trace in a response's JSON value, by the full readers."""
    return _as_json_if_met(_read_json, data, None)


def _as_json_if_met(
    read: Callable[[Any], Trace | str], data: Any, format: str | None
) -> Trace | str:
    """``read(data)``; where a reader met an object that stands for JSON, of its JSON.

    A Python caller's value may hold such objects: an agent loop's message list mixes dicts
    and the SDK's message objects or content blocks; reported calls may be the SDK's call
    objects. The whole value is converted only when one is met (`_NotPlain`): a plain value
    is not walked on the way to its verdict.
    """
    try:
        return read(data)
    except _NotPlain:
        pass
    try:
        converted = as_json_value(data)
    except NotJsonValue as error:
        label = "" if format is None else f" ({FORMAT_LABELS[format]})"
        return f"the tool-call trace{label} cannot be read: {error.what} is not a JSON value"
    return read(converted)


def _read_json(data: Any) -> Trace | str:
    found = Trace([], [], "")
    format: str | None
    try:
        if type(data) is dict:
            format = _from_object(data, found)
        elif type(data) is list:
            format = _from_list(data, found)
        else:
            format = None
    except _Unreadable as error:
        return f"the tool-call trace cannot be read: {error}"
    except RecursionError:
        return "the tool-call trace is nested too deeply to read"
    if format is None:
        return NO_TRACE
    found.format = format
    return found


# Each reader appends the calls it finds to a `Trace` and returns the format (None: not a
# trace). Locations (``choices[0].message.tool_calls[2]``) are only spelt out for an error
# message: functions take the location of the list and the item's index.


def _from_object(data: dict[str, Any], found: Trace) -> str | None:
    choices = data.get("choices")
    if type(choices) is list:
        if not choices:
            return "openai-chat"
        first = choices[0]
        _skip(first)
        message = first.get("message") if type(first) is dict else None
        if type(message) is not dict:
            _skip(message)
            raise _Unreadable("choices[0] has no message object")
        _openai_message(message, "choices[0].message", found)
        return "openai-chat"
    output = data.get("output")
    if type(output) is list and (
        data.get("object") == "response" or (output and _all_typed(output))
    ):
        _responses_items(output, "output", found)
        return "openai-responses"
    if "role" in data and ("tool_calls" in data or "function_call" in data):
        _openai_message(data, "", found)  # one assistant message
        return "openai-chat"
    content = data.get("content")
    if type(content) is list and (data.get("type") == "message" or "role" in data):
        _anthropic_blocks(content, "content", found)
        return "anthropic"
    if "tool_calls" in data:
        calls = data["tool_calls"]
        if calls is None:
            return "tool_calls"
        if type(calls) is not list:
            raise _Unreadable(f"tool_calls is {article(calls)}, not a list")
        _generic_list(calls, "tool_calls", found)
        return "tool_calls"
    messages = data.get("messages")
    if type(messages) is list and messages and _all_messages(messages):
        return _from_list(messages, found, "messages")
    return None


def _from_list(items: list[Any], found: Trace, where: str = "") -> str | None:
    """A transcript: messages, Responses items or Anthropic content blocks, in order."""
    if not items or not all(type(item) is dict for item in items):
        for item in items:
            _skip(item)  # an SDK's message or item among dicts: read as its JSON
        return None
    if not all("role" in item or type(item.get("type")) is str for item in items):
        return None
    format = ""
    for index, item in enumerate(items):
        kind = item.get("type")
        if _kind_in(kind, _RESPONSES_CALLS):
            _responses_call(item, where, index, found)
            format = format or "openai-responses"
        elif _kind_in(kind, ANTHROPIC_CALLS):
            _named(item, "input", where, index, found)
            format = format or "anthropic"
        elif "role" in item:
            content = item.get("content")
            if type(content) is list and _has_tool_use(content):
                _anthropic_blocks(content, f"{where}[{index}].content", found)
                format = format or "anthropic"
            elif item.get("tool_calls") or item.get("function_call"):
                _openai_message(item, f"{where}[{index}]", found)
                format = format or "openai-chat"
        else:
            # A message without a role that carries calls, as LangChain serialises one:
            # {"type": "ai", "tool_calls": [{name, args}]} (`model_dump`), the same under
            # "data" (`messages_to_dict`) or "kwargs" (`dumpd`, {"lc": 1, ...}). Read as the
            # object alone is read; skipped, its calls were zero calls, and not-tool-called
            # passed on them.
            body, at = item, f"{where}[{index}]"
            for key in ("data", "kwargs"):
                inner = item.get(key)
                if type(inner) is dict:
                    body, at = inner, f"{at}.{key}"
                    break
            if body.get("tool_calls") is not None or body.get("function_call") is not None:
                _openai_message(body, at, found)
    return format or "messages"


def _all_typed(items: list[Any]) -> bool:
    if all(type(item) is dict and type(item.get("type")) is str for item in items):
        return True
    for item in items:
        _skip(item)
    return False


def _all_messages(items: list[Any]) -> bool:
    if all(type(item) is dict and ("role" in item or "type" in item) for item in items):
        return True
    for item in items:
        _skip(item)
    return False


def _has_tool_use(content: list[Any]) -> bool:
    """Whether a message's content blocks hold an Anthropic tool call."""
    for block in content:
        if type(block) is dict:
            if _kind_in(block.get("type"), ANTHROPIC_CALLS):
                return True
        else:
            _skip(block)  # the SDK's block objects, as an agent loop appends them
    return False


def _openai_message(message: dict[str, Any], where: str, found: Trace) -> None:
    tool_calls = message.get("tool_calls")
    if tool_calls is not None:
        if type(tool_calls) is not list:
            raise _Unreadable(f"{_at(where, 'tool_calls')} is {article(tool_calls)}, not a list")
        names, raw = found.names, found.raw
        start = len(names)
        for item in tool_calls:
            # The common shape, {type: function, function: {name, arguments}}, read inline.
            function = item.get("function") if type(item) is dict else None
            name = function.get("name") if type(function) is dict else None
            if type(name) is not str:
                # Any other shape: read the list again with the general reader, which knows
                # the other forms and says where a call is unreadable.
                del names[start:], raw[start:]
                at = _at(where, "tool_calls")
                for index, other in enumerate(tool_calls):
                    _generic(other, at, index, found)
                break
            names.append(name)
            raw.append(function.get("arguments"))  # type: ignore[union-attr]
    legacy = message.get("function_call")  # the pre-tools form: one call per message
    if legacy is not None:
        at = _at(where, "function_call")
        if type(legacy) is not dict:
            _skip(legacy)
            raise _Unreadable(f"{at} is {article(legacy)}, not an object")
        _named(legacy, "arguments", at, None, found)


def _at(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _responses_items(items: list[Any], where: str, found: Trace) -> None:
    names, raw = found.names, found.raw
    for index, item in enumerate(items):
        if type(item) is not dict:
            _skip(item)
            continue
        kind = item.get("type")
        if kind in ("function_call", "mcp_call"):
            name = item.get("name")
            if type(name) is not str:
                raise _Unreadable(_nameless(name, f"{where}[{index}]"))
            names.append(name)
            raw.append(item.get("arguments"))
        elif kind == "custom_tool_call":
            _responses_call(item, where, index, found)


def _responses_call(item: dict[str, Any], where: str, index: int, found: Trace) -> None:
    # custom_tool_call carries free text in `input`; function_call and mcp_call JSON text in
    # `arguments`.
    if item.get("type") == "custom_tool_call":
        _named(item, "input", where, index, found, free_text=True)
    else:
        _named(item, "arguments", where, index, found)


def _anthropic_blocks(blocks: list[Any], where: str, found: Trace) -> None:
    kinds = ANTHROPIC_CALLS
    names, raw = found.names, found.raw
    for index, block in enumerate(blocks):
        if type(block) is not dict:
            _skip(block)
        elif _kind_in(block.get("type"), kinds):
            name = block.get("name")
            if type(name) is not str:
                raise _Unreadable(_nameless(name, f"{where}[{index}]"))
            names.append(name)
            raw.append(block.get("input"))


def _generic_list(items: list[Any], where: str, found: Trace) -> None:
    """`_generic` for each item; the common ``{name, arguments}`` read inline."""
    add_name, add_raw = found.names.append, found.raw.append  # (bound once)
    for index, item in enumerate(items):
        if type(item) is dict:
            name = item.get("name")
            if type(name) is str:
                arguments = item.get("arguments")
                if arguments is None:
                    arguments = item.get("args")
                    if arguments is None:
                        arguments = item.get("input")
                add_name(name)
                add_raw(arguments)
                continue
        _generic(item, where, index, found)


def _generic(item: Any, where: str, index: int, found: Trace) -> None:
    """``{name, arguments | args | input}``, or OpenAI's ``{function: {name, arguments}}``."""
    if type(item) is not dict:
        _skip(item)  # an SDK's call object: the whole value is read as its JSON
        raise _Unreadable(f"{where}[{index}] is {article(item)}, not a tool call object")
    name = item.get("name")
    if name is None:
        function = item.get("function")
        if type(function) is dict:
            name = function.get("name")
            if type(name) is not str:
                raise _Unreadable(_nameless(name, f"{where}[{index}].function"))
            found.add(name, function.get("arguments"))
            return
        custom = item.get("custom")  # OpenAI's custom tools: {type: custom, custom: {name, input}}
        if type(custom) is dict:
            _named(custom, "input", f"{where}[{index}].custom", None, found, free_text=True)
            return
    if type(name) is not str:
        raise _Unreadable(_nameless(name, f"{where}[{index}]"))
    arguments = item.get("arguments")
    if arguments is None:
        arguments = item.get("args")
        if arguments is None:
            arguments = item.get("input")
    found.add(name, arguments)


def _named(
    item: dict[str, Any],
    key: str,
    where: str,
    index: int | None,
    found: Trace,
    *,
    free_text: bool = False,
) -> None:
    """A call whose name is ``item["name"]`` and arguments ``item[key]``."""
    name = item.get("name")
    if type(name) is not str:
        raise _Unreadable(_nameless(name, where if index is None else f"{where}[{index}]"))
    found.add(name, item.get(key), free_text)


def _nameless(name: Any, where: str) -> str:
    shown = "no name" if name is None else f"a name that is {article(name)}"
    return f"{where or 'the message'} is a tool call with {shown}"
