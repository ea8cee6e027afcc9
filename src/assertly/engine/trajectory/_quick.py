"""Plain API replies read in one function: the common case of the trace readers, fast.

`quick_trace` reads a Chat Completions, Responses or Messages reply in its plain shape with
subscripts (the full readers of `_read` cost twice as much: a call and a ``.get`` per
step) and says "not plain" (None) for anything else, which the full readers then read from
the start, with their error messages. The property tests compare the two
(tests/engine/test_trajectory_properties.py).
"""

from __future__ import annotations

from typing import Any

from ._trace import Trace

__all__ = ["ANTHROPIC_CALLS", "Inexact", "quick_trace"]

ANTHROPIC_CALLS = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})
# Values of an argument object that may hide a big integer orjson read as a float.
_INEXACT = frozenset({float, dict, list})


# Only for values of assertly's own JSON parser, whose objects and arrays are exactly dict and
# list: there, a subscript raising KeyError, TypeError or IndexError means exactly that the
# shape is not the plain one (an item that is not an object, a key missing), and the full
# readers then read the reply from the start, with their error messages. A reply they read,
# these read the same (tests/engine/test_trajectory_properties.py compares them on near-plain
# replies).


class Inexact:
    """`quick_trace`'s trace of a reply whose arguments, as orjson read them, may be inexact."""

    __slots__ = ("trace",)

    def __init__(self, trace: Trace) -> None:
        self.trace = trace


def quick_trace(data: dict[str, Any]) -> Trace | Inexact | None:
    """The trace of a plain Chat Completions, Responses or Messages reply, else None.

    The trace as is when its arguments, as orjson read them, can hold no inexact number: each
    is JSON text (parsed exactly when read), absent, or an object none of whose values is a
    float or nests further. Anything else may hide a big integer that orjson read as a float:
    then `Inexact` (rare: no allocation more on the common way).
    """
    names: list[str] = []
    raw: list[Any] = []
    add_name, add_raw = names.append, raw.append  # (bound once: a lookup less per call)
    exact = True
    try:
        choices = data.get("choices")
        if type(choices) is list:
            message = choices[0]["message"]
            calls = message["tool_calls"]
            if type(calls) is not list or message.get("function_call") is not None:
                return None
            for item in calls:
                function = item["function"]
                name = function["name"]
                if type(name) is not str:
                    return None
                add_name(name)
                arguments = function.get("arguments")
                if type(arguments) is not str and arguments is not None:
                    exact = False
                add_raw(arguments)
            return (
                Trace(names, raw, "openai-chat")
                if exact
                else Inexact(Trace(names, raw, "openai-chat"))
            )
        output = data.get("output")
        if type(output) is list:
            if data.get("object") != "response":
                return None  # typed items may still make it a Responses reply: in full
            for item in output:
                kind = item["type"]
                if kind in ("function_call", "mcp_call"):  # (a tuple: `==`, as the full reader)
                    name = item["name"]
                    if type(name) is not str:
                        return None
                    add_name(name)
                    arguments = item.get("arguments")
                    if type(arguments) is not str and arguments is not None:
                        exact = False
                    add_raw(arguments)
                elif kind == "custom_tool_call":
                    return None  # free text: the full reader marks it
            return (
                Trace(names, raw, "openai-responses")
                if exact
                else Inexact(Trace(names, raw, "openai-responses"))
            )
        content = data.get("content")
        if type(content) is list and data.get("type") == "message" and "role" in data:
            if "tool_calls" in data or "function_call" in data:
                return None  # a Chat Completions message: in full
            kinds, inexact = ANTHROPIC_CALLS, _INEXACT
            for block in content:
                if block["type"] in kinds:
                    name = block["name"]
                    if type(name) is not str:
                        return None
                    add_name(name)
                    arguments = block.get("input")
                    if type(arguments) is dict:
                        for value in arguments.values():
                            if type(value) in inexact:
                                exact = False
                                break
                    elif arguments is not None and type(arguments) is not str:
                        exact = False
                    add_raw(arguments)
            return (
                Trace(names, raw, "anthropic") if exact else Inexact(Trace(names, raw, "anthropic"))
            )
    except (KeyError, TypeError, IndexError):
        pass
    return None
