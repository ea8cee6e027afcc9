"""Trajectory keys of the expect dict: the tool calls the agent made.

``tools_called`` (every named tool is called), ``tools_not_called`` (none is),
``tool_sequence`` (these calls in this order, others may come between) and ``max_tool_calls``.
The calls are read as the typed ``tool-*`` assertions read them (see `_read`); a
response with no tool-call trace is an error.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, RootModel

from .._base import BuildContext, Checker
from .._entries import expect_assertion
from ._checks import NamesCalled, ToolCount
from ._sequence import ToolSequence
from .typed import CallSpec, compile_calls

# Parameter models, for the JSON Schemas only (values are checked by the builders).
_Name = Annotated[str, Field(min_length=1)]


class ToolNames(RootModel[list[_Name] | _Name]):
    """Tool names (one name stands for a list of one)."""


class ToolCalls(RootModel[list[_Name | CallSpec] | _Name]):
    """Tool names, or ``{name, args?, args_match?}`` calls."""


class CallCount(RootModel[Annotated[int, Field(ge=0)]]):
    """A number of tool calls."""


def _names(value: Any, ctx: BuildContext) -> list[str] | None:
    if isinstance(value, str) and value:
        return [value]
    if isinstance(value, list) and value and all(isinstance(name, str) and name for name in value):
        return value
    ctx.problem(f"expected a non-empty list of tool names, got {value!r} (e.g. [search, fetch])")
    return None


@expect_assertion("tools_called", params=ToolNames)
def build_tools_called(value: Any, ctx: BuildContext) -> Checker | None:
    """Every listed tool is called at least once."""
    names = _names(value, ctx)
    return None if names is None else NamesCalled("tools_called", names, called=True)


@expect_assertion("tools_not_called", params=ToolNames)
def build_tools_not_called(value: Any, ctx: BuildContext) -> Checker | None:
    """None of the listed tools is called."""
    names = _names(value, ctx)
    return None if names is None else NamesCalled("tools_not_called", names, called=False)


@expect_assertion("tool_sequence", params=ToolCalls)
def build_tool_sequence(value: Any, ctx: BuildContext) -> Checker | None:
    """The listed tools are called in this order (other calls may come between)."""
    patterns = compile_calls(value, ctx)
    return None if patterns is None else ToolSequence("tool_sequence", patterns, "in_order", None)


@expect_assertion("max_tool_calls", params=CallCount)
def build_max_tool_calls(value: Any, ctx: BuildContext) -> Checker | None:
    """The agent makes at most N tool calls."""
    bound = ctx.whole_number(value)
    return None if bound is None else ToolCount("max_tool_calls", None, bound, None)
