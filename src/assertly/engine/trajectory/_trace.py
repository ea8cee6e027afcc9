"""The trace: the tool calls of one response as names and raw arguments, read on first use.

`_read` reads traces out of responses and metadata; this module is what it makes. A
trace holds the calls' names and their arguments as given; `ToolCall` objects, and the parse
of arguments given as JSON text, are made only for the calls an assertion looks into.
"""

from __future__ import annotations

from typing import Any, Final

import orjson

from ..._json import JsonTooDeep, loads, loads_nested, nested_too_deep
from .._values import json_type
from ._call_text import call_text

__all__ = ["FORMAT_LABELS", "ToolCall", "Trace", "article"]

FORMAT_LABELS: Final[dict[str, str]] = {
    "openai-chat": "OpenAI Chat Completions",
    "openai-responses": "OpenAI Responses",
    "anthropic": "Anthropic Messages",
    "tool_calls": "top-level tool_calls",
    "metadata": "metadata tool_calls",
    "spans": "OpenTelemetry spans",
    "messages": "message list",
}

_orjson_loads = orjson.loads


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
        arguments = self.arguments
        if arguments is None:
            return {"name": self.name, "arguments_error": self._problem}
        return {"name": self.name, "arguments": arguments}

    def __repr__(self) -> str:
        return f"ToolCall({call_text(self.name, self.arguments)})"


class Trace:
    """The tool calls of one response, in order, and the format they were read from.

    Attributes:
        names: The called tools' names, in order (read-only: the trace is shared by every
            assertion on the response).
        format: The format the calls were read from (``openai-chat`` …).
    """

    __slots__ = ("_made", "_read", "format", "free", "names", "raw")

    def __init__(
        self, names: list[str], raw: list[Any], format: str, free: tuple[int, ...] = ()
    ) -> None:
        self.names = names
        self.raw = raw  # each call's arguments as given (an object, JSON text, None …)
        self.free = free  # indexes of calls whose arguments are free text (custom tools)
        self.format = format
        self._made: list[ToolCall | None] | None = None
        # Arguments read from text so far: index -> (the object or None, the problem or None).
        self._read: dict[int, tuple[dict[str, Any] | None, str | None]] | None = None

    @property
    def label(self) -> str:
        """The format as people read it (``OpenAI Chat Completions``)."""
        return FORMAT_LABELS.get(self.format, self.format)

    def arguments(self, index: int) -> dict[str, Any] | None:
        """Call ``index``'s arguments as an object (read on first use), None if unreadable."""
        raw = self.raw[index]
        if type(raw) is dict:
            return raw
        read = self._read
        if read is None:
            read = self._read = {}
        found = read.get(index)
        if found is None:
            if type(raw) is str and not self.free:
                # The common case, JSON text holding an object, read here at once.
                try:
                    value = loads(raw)
                except ValueError:
                    value = None
                if type(value) is dict:
                    read[index] = (value, None)
                    return value
            found = read[index] = _read_arguments(raw, index in self.free)
        return found[0]

    def unchecked_arguments(self, index: int) -> dict[str, Any] | None:
        """`arguments`, for a test that reads no number: JSON text read by orjson alone.

        orjson reads integers beyond 64 bits inexactly, and `loads` tests text for them first;
        a test comparing only strings need not pay for that (the strings, and whether the text
        is an object, are the same either way; what orjson refuses is read by `arguments`).
        Nothing is kept: a failure's message reads the arguments exactly.
        """
        raw = self.raw[index]
        if type(raw) is dict:
            return raw
        if type(raw) is str and not self.free and (self._read is None or index not in self._read):
            try:
                value = _orjson_loads(raw)
            except ValueError:
                return self.arguments(index)
            if type(value) is dict:
                return value  # type: ignore[no-any-return]
        return self.arguments(index)

    def problem(self, index: int) -> str | None:
        """Why call ``index``'s arguments could not be read (None when they were)."""
        if self.arguments(index) is not None:
            return None
        return self._read[index][1]  # type: ignore[index]  # filled by `arguments`

    def call(self, index: int) -> ToolCall:
        """Call ``index`` (made on first use; its arguments are parsed on their first use)."""
        made = self._made
        if made is None:
            made = self._made = [None] * len(self.names)
        call = made[index]
        if call is None:
            call = made[index] = ToolCall(self.names[index], self.raw[index], index in self.free)
            read = self._read
            if read is not None and index in read:  # already read by `arguments`
                call._arguments, call._problem = read[index]
        return call

    @property
    def calls(self) -> tuple[ToolCall, ...]:
        """Every call, in order."""
        return tuple([self.call(index) for index in range(len(self.names))])

    def add(self, name: str, raw: Any, free_text: bool = False) -> None:
        """Append a call (readers build the trace this way)."""
        if free_text:
            self.free = (*self.free, len(self.names))
        self.names.append(name)
        self.raw.append(raw)

    def __len__(self) -> int:
        return len(self.names)

    def __repr__(self) -> str:
        return f"Trace({self.format}, {len(self.names)} calls)"


def _read_arguments(raw: Any, free_text: bool) -> tuple[dict[str, Any] | None, str | None]:
    """Arguments that are not an object: JSON text holding one, or unreadable (saying why)."""
    if raw is None:
        return {}, None
    if type(raw) is not str:
        return None, f"the arguments are {article(raw)}, not an object"
    if free_text:
        return {"input": raw}, None
    try:
        value = loads(raw)  # the common case: an object, read at once
    except ValueError as error:
        if not raw.strip():
            return {}, None  # some models send "" for a call without arguments
        if not nested_too_deep(error):
            return None, f"the arguments are not valid JSON: {_clip(repr(raw), 60)}"
        try:
            value = loads_nested(raw)  # deeper than orjson reads
        except (JsonTooDeep, RecursionError):
            return None, "the arguments are JSON nested too deeply to read"
        except ValueError:
            return None, f"the arguments are not valid JSON: {_clip(repr(raw), 60)}"
    if type(value) is not dict:
        return None, f"the arguments are {article(value)}, not an object"
    return value, None


def article(value: Any) -> str:
    """``a string``, ``an object``: the JSON type of ``value`` with its article."""
    name = json_type(value)
    return f"an {name}" if name[0] in "aeiou" else f"a {name}"


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
