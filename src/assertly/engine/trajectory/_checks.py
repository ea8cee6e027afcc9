"""The checkers behind the trajectory assertions of both dialects.

``tool-called`` / ``tools_called`` / ``tools_not_called`` and ``tool-call-count`` /
``max_tool_calls`` (``tool-sequence`` is in `_sequence`) judge the `Trace` of tool calls
(see `_read`): patterns are compiled once; a check walks the trace, read once per
response. A response with no trace is an ``error``, never a pass. A failure shows the calls
made, next to what was expected, and where they diverge.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import orjson

from ..._json import dumps
from .._base import Checker
from .._result import FAILED, PASSED, AssertionResult, errored, failed, traced_pass
from .._values import json_equal
from ._call_text import render_arguments
from ._read import trace_of
from ._text import render_calls, shown_calls
from ._trace import ToolCall, Trace

if TYPE_CHECKING:
    from .._context import CheckContext
    from .._fast import FastGen
    from .._response import Response

__all__ = [
    "CallPattern",
    "NamesCalled",
    "ToolCalled",
    "ToolCount",
    "TraceChecker",
    "calls_noun",
    "passed_from",
]

_KEPT_CALLS = 50  # calls kept in a result's `actual`
_orjson_loads = orjson.loads


class CallPattern:
    """A call to match: a tool name, and optionally arguments (a subset, or exactly)."""

    __slots__ = ("_described", "args", "exact", "name", "strings")

    def __init__(self, name: str, args: dict[str, Any] | None = None, exact: bool = False) -> None:
        self.name = name
        self.args = args
        self.exact = exact
        self._described: str | None = None  # `describe`, written once (messages repeat it)
        # Subset arguments that are all strings (the common `{query: "x"}`), as pairs: the
        # whole test is then a string under each key, equal to the value.
        self.strings: tuple[tuple[str, str], ...] | None = None
        if args is not None and not exact and all(type(v) is str for v in args.values()):
            self.strings = tuple(args.items())

    def matches_at(self, trace: Trace, index: int) -> bool:
        """Whether call ``index`` of ``trace`` matches (its arguments read only if named so)."""
        if trace.names[index] != self.name:
            return False
        want = self.args
        if want is None:
            return True
        arguments = trace.arguments(index)
        if arguments is None:
            return False  # unreadable arguments match no arguments
        return json_equal(want, arguments) if self.exact else _subset(want, arguments)

    def matches(self, call: ToolCall) -> bool:
        """Whether ``call`` is this tool with matching arguments."""
        if call.name != self.name:
            return False
        if self.args is None:
            return True
        arguments = call.arguments
        if arguments is None:
            return False  # unreadable arguments match no arguments
        return json_equal(self.args, arguments) if self.exact else _subset(self.args, arguments)

    def describe(self) -> str:
        """``search``, ``search(query="x", ...)`` or ``search(query="x")`` (exactly)."""
        described = self._described
        if described is None:
            described = self._described = self._describe()
        return described

    def _describe(self) -> str:
        if self.args is None:
            return self.name
        shown = render_arguments(self.args)
        if self.exact:
            return f"{self.name}({shown})"
        return f"{self.name}({shown}, …)" if shown else f"{self.name}(…)"

    def to_json(self) -> Any:
        """The pattern as results show it: the name, or ``{name, args, args_match}``."""
        if self.args is None:
            return self.name
        return {
            "name": self.name,
            "args": self.args,
            "args_match": "exact" if self.exact else "subset",
        }

    def mismatch(self, call: ToolCall) -> str:
        """Why ``call``, a call of this tool, does not match the arguments."""
        if call.arguments is None:
            return f"{call.problem}"
        assert self.args is not None
        return _difference(self.args, call.arguments, "", self.exact) or "the arguments differ"

    def mismatch_at(self, trace: Trace, index: int) -> str:
        """`mismatch` of call ``index`` of ``trace`` (no `ToolCall` made)."""
        arguments = trace.arguments(index)
        if arguments is None:
            return f"{trace.problem(index)}"
        assert self.args is not None
        return _difference(self.args, arguments, "", self.exact) or "the arguments differ"

    def find(self, trace: Trace, start: int = 0) -> int:
        """The first call from ``start`` that matches, or -1 (found by name in C)."""
        names, name = trace.names, self.name
        # `in` first: `index` of a missing name raises, and the ValueError (its message holds
        # the name's repr) costs more than the search; a failure is usually a missing tool.
        if name not in names:
            return -1
        if self.args is None:
            try:
                return names.index(name, start)
            except ValueError:  # called, but only before `start`
                return -1
        index = start - 1
        while True:
            try:
                index = names.index(name, index + 1)
            except ValueError:
                return -1
            if self.matches_at(trace, index):
                return index


def _subset(want: Any, got: Any) -> bool:
    """``want`` is within ``got``: objects key by key (recursively), arrays element by element."""
    if type(want) is dict and type(got) is dict:
        # The common case, flat string arguments, without the stack.
        for key, value in want.items():
            if key not in got:
                return False
            actual = got[key]
            if type(value) is str:
                if type(actual) is not str or actual != value:
                    return False
            elif not _subset(value, actual):
                return False
        return True
    pairs = [(want, got)]
    while pairs:
        want, got = pairs.pop()
        if type(want) is dict:
            if type(got) is not dict:
                return False
            for key, value in want.items():
                if key not in got:
                    return False
                pairs.append((value, got[key]))
        elif type(want) is list:
            if type(got) is not list or len(got) != len(want):
                return False
            pairs.extend(zip(want, got, strict=True))
        elif not json_equal(want, got):
            return False
    return True


def _short(value: Any) -> str:
    text = dumps(value)
    return text if len(text) <= 60 else text[:59] + "…"


def _difference(want: Any, got: Any, path: str, exact: bool) -> str | None:
    """The first place ``got`` fails ``want``, as a clause (``query is "y", not "x"``)."""
    stack = [(want, got, path)]
    while stack:
        want, got, path = stack.pop()
        where = path or "the arguments"
        if type(want) is dict and type(got) is dict:
            for key in reversed(list(want)):
                child = f"{path}.{key}" if path else str(key)
                if key not in got:
                    return f"{child} is missing (expected {_short(want[key])})"
                stack.append((want[key], got[key], child))
            if exact:
                extra = [key for key in got if key not in want]
                if extra:
                    child = f"{path}.{extra[0]}" if path else str(extra[0])
                    return f"{child} is not expected (got {_short(got[extra[0]])})"
        elif type(want) is list and type(got) is list:
            if len(want) != len(got):
                return f"{where} has {len(got)} items, not {len(want)}"
            stack.extend(
                (left, right, f"{path}[{index}]")
                for index, (left, right) in reversed(list(enumerate(zip(want, got, strict=True))))
            )
        elif not json_equal(want, got):
            return f"{where} is {_short(got)}, not {_short(want)}"
    return None


def _times(low: int, high: int | None) -> str:
    def count(n: int) -> str:
        return {1: "once", 2: "twice"}.get(n, f"{n} times")

    if high is None:
        return "at least once" if low == 1 else f"at least {count(low)}"
    if high == 0:
        return "never"
    if low == high:
        return f"exactly {count(low)}"
    if low == 0:
        return f"at most {count(high)}"
    return f"between {low} and {high} times"


def calls_noun(n: int) -> str:
    return "1 call" if n == 1 else f"{n} calls"


def passed_from(key: str, trace: Trace, score: float = 1.0) -> AssertionResult:
    """A pass that says which format the trace came from (full passes shared per format)."""
    if score == 1.0:
        return traced_pass(key, trace.format)
    return AssertionResult(key, PASSED, score, details={"trace_format": trace.format})


class TraceChecker(Checker):
    """A checker of the trace; no trace is an error."""

    __slots__ = ()

    def check(self, response: Response, ctx: CheckContext) -> AssertionResult:
        trace = trace_of(response, ctx)
        if type(trace) is str:
            return errored(self.key, trace, expected=self.expected())
        return self.check_trace(trace, True)  # type: ignore[arg-type]

    def verdict(self, response: Response, ctx: CheckContext) -> AssertionResult:
        trace = trace_of(response, ctx)
        if type(trace) is str:
            return errored(self.key, trace, expected=self.expected())
        return self.check_trace(trace, False)  # type: ignore[arg-type]

    def observed(self, response: Response, ctx: CheckContext) -> str:
        trace = trace_of(response, ctx)
        return f"got {render_calls(trace)}" if type(trace) is Trace else ""

    def check_trace(self, trace: Trace, explain: bool) -> AssertionResult:
        """Judge the trace; without ``explain``, a failure needs no message (see `verdict`)."""
        raise NotImplementedError

    def passes(self, trace: Trace) -> bool:
        """Whether `judge` gives the full pass (score 1), from the calls' names where it can.

        The generated fast path calls it (see `emit`); subclasses answer without building
        results or messages, and read a call's arguments only for a call of a named tool.
        """
        return self.check_trace(trace, False) is traced_pass(self.key, trace.format)

    def _test(self, gen: FastGen) -> str:
        """The fast path's test of the trace: `passes` unless a subclass writes it inline."""
        return f"{gen.const(self.passes)}({gen.trace()})"

    def emit(self, gen: FastGen) -> bool:
        """In the generated fast path: the trace, read once per response, must pass `_test`.

        A response without a trace leaves the fast path (its error is the detailed path's).
        """
        gen.require(self._test(gen))
        return True

    def expected(self) -> Any:
        """What the assertion expects, as results show it."""
        return None

    def fail(
        self, trace: Trace, message: str, mark: int | None = None, score: float = 0.0
    ) -> AssertionResult:
        """A failure showing the calls made (``mark`` flags where they diverge)."""
        if not message:  # unexplained: only its verdict and score will be read
            return failed(self.key, "", score=score, details={"trace_format": trace.format})
        # `render_calls(trace, mark)` and each call's `to_json()`, written in one pass.
        line, actual = shown_calls(trace, mark, _KEPT_CALLS)
        details = {"trace_format": trace.format, "calls": len(trace.names)}
        # (`failed`, its positional form: a keyword call costs a fifth of this.)
        return AssertionResult(
            self.key,
            FAILED,
            score,
            f"{message}; got {line}",
            None,
            self.expected(),
            actual,
            (),
            details,
        )


def _bounds_test(gen: FastGen, count: str, low: int | None, high: int | None) -> str:
    """A test that ``count`` (an expression) is within [low, high] (None: no bound)."""
    parts = [f"{gen.const(low)} <= {count}"] if low else []
    if high is not None:
        parts.append(f"{count} <= {gen.const(high)}")
    return " and ".join(parts) or "True"


class _PassOrFail(TraceChecker):
    """A trace checker whose failure always scores 0: negated, its failure is the full pass."""

    __slots__ = ()

    def emit_negated(self, gen: FastGen) -> bool:
        """``not-tool-called``, ``not-tool-call-count``: the test must fail."""
        gen.require(f"not ({self._test(gen)})")
        return True


class ToolCalled(_PassOrFail):
    """The number of calls matching a pattern is within [low, high]."""

    __slots__ = ("high", "low", "pattern")

    def __init__(self, key: str, pattern: CallPattern, low: int, high: int | None) -> None:
        self.key = key
        self.pattern = pattern
        self.low = low
        self.high = high

    def describe(self) -> str:
        if self.high == 0:
            return f"tool {self.pattern.describe()} is never called"
        return f"tool {self.pattern.describe()} is called {_times(self.low, self.high)}"

    def expected(self) -> Any:
        return {"call": self.pattern.to_json(), "min": self.low, "max": self.high}

    def passes(self, trace: Trace) -> bool:
        pattern, names, low, high = self.pattern, trace.names, self.low, self.high
        if pattern.args is None:
            count = names.count(pattern.name)
        else:
            count = 0
            name, want, exact, strings = pattern.name, pattern.args, pattern.exact, pattern.strings
            for index, called in enumerate(names):
                if called != name:
                    continue
                if strings is not None:
                    # Only strings are compared: orjson's parse will do (`unchecked_arguments`).
                    arguments = trace.raw[index]
                    if type(arguments) is not dict:
                        arguments = trace.unchecked_arguments(index)
                    if arguments is None:
                        continue  # unreadable arguments match no arguments
                    matched = True
                    for key, value in strings:
                        actual = arguments.get(key)
                        if type(actual) is not str or actual != value:
                            matched = False
                            break
                else:
                    arguments = trace.arguments(index)
                    if arguments is None:
                        continue
                    matched = json_equal(want, arguments) if exact else _subset(want, arguments)
                if matched:
                    count += 1
                    if high is None and count >= low:
                        return True
        return count >= low and (high is None or count <= high)

    def _test(self, gen: FastGen) -> str:
        trace = gen.trace()
        pattern = self.pattern
        if pattern.args is None:
            # A name alone: the count, written into the function (no call).
            count = f"{gen.trace_names()}.count({gen.const(pattern.name)})"
            return _bounds_test(gen, count, self.low, self.high)
        if pattern.strings is None:
            return f"{gen.const(self.passes)}({trace})"
        # Strings only (the common `{query: "x"}`): `passes`, written into the function (no
        # call, no attribute read per check): the calls of the tool holding them, counted, or
        # for "at least once" (the default) the first one settling it. Arguments that are not
        # an object are JSON text read by orjson alone (`unchecked_arguments`, inlined).
        gen.namespace["_orjson_loads"] = _orjson_loads
        index, arguments, value = (gen.fresh(stem) for stem in "iav")
        tests = " and ".join(
            f"type({value} := {arguments}.get({gen.const(key)})) is str "
            f"and {value} == {gen.const(expected)}"
            for key, expected in pattern.strings
        )
        once = self.low == 1 and self.high is None
        found, names, tool = (
            gen.fresh("f" if once else "c"),
            gen.trace_names(),
            gen.const(pattern.name),
        )
        if once:
            matched = f"            {found} = True\n            break"
        else:
            matched = f"            {found} += 1"
            if self.high is None:  # enough matches settle it
                matched += f"\n            if {found} >= {gen.const(self.low)}: break"
        # Each call of the tool found in C (`in` first: a missing one raises no ValueError).
        gen.statement(
            f"{found} = {'False' if once else '0'}\n"
            f"if {tool} in {names}:\n"
            f"    {index} = {names}.index({tool})\n"
            f"    while True:\n"
            f"        {arguments} = {trace}.raw[{index}]\n"
            f"        if type({arguments}) is not dict:\n"
            f"            if type({arguments}) is str and not {trace}.free:\n"
            f"                try:\n"
            f"                    {arguments} = _orjson_loads({arguments})\n"
            f"                except ValueError:\n"
            f"                    {arguments} = None\n"
            f"                if type({arguments}) is not dict:\n"
            f"                    {arguments} = {trace}.arguments({index})\n"
            f"            else:\n"
            f"                {arguments} = {trace}.arguments({index})\n"
            f"        if {arguments} is not None and {tests or 'True'}:\n"
            f"{matched}\n"
            f"        if {tool} not in {names}[{index} + 1 :]:\n"
            f"            break\n"
            f"        {index} = {names}.index({tool}, {index} + 1)"
        )
        return found if once else _bounds_test(gen, found, self.low, self.high)

    def check_trace(self, trace: Trace, explain: bool) -> AssertionResult:
        pattern = self.pattern
        name = pattern.name
        names = trace.names
        high = self.high
        if high is None:
            # No upper bound: enough matches settle it, the rest need not be read.
            needed = self.low
            if needed == 0:
                return passed_from(self.key, trace)
            found = pattern.find(trace)
            while found >= 0:
                needed -= 1
                if not needed:
                    return passed_from(self.key, trace)
                found = pattern.find(trace, found + 1)
        matching = [
            index
            for index, called in enumerate(names)
            if called == name and pattern.matches_at(trace, index)
        ]
        count = len(matching)
        if count >= self.low and (high is None or count <= high):
            return passed_from(self.key, trace)
        if not explain:
            return self.fail(trace, "")
        times = "never to be called" if high == 0 else f"called {_times(self.low, high)}"
        message = (
            f"Expected {pattern.describe()} {times}, got {count} matching "
            f"{'call' if count == 1 else 'calls'}"
        )
        mark: int | None = None
        if high is not None and count > high:
            mark = matching[high]
        else:
            # Calls of the tool whose arguments differ (none matched, or too few did).
            seen = set(matching)
            near = [
                index for index, called in enumerate(names) if called == name and index not in seen
            ]
            if near:
                mark = near[0]
                others = "1 other call" if len(near) == 1 else f"{len(near)} other calls"
                message += (
                    f" ({others} to {pattern.name}: call {mark + 1}: "
                    f"{pattern.mismatch_at(trace, mark)})"
                )
        return self.fail(trace, message, mark)


class ToolCount(_PassOrFail):
    """The number of tool calls (of one tool, or of all) is within [low, high]."""

    __slots__ = ("high", "low", "name")

    def __init__(self, key: str, low: int | None, high: int | None, name: str | None) -> None:
        self.key = key
        self.low = low
        self.high = high
        self.name = name

    def _what(self) -> str:
        plural = (self.high if self.high is not None else self.low) != 1
        noun = "calls" if plural else "call"
        return f"tool {noun}" if self.name is None else f"{noun} to {self.name}"

    def _bounds(self) -> str:
        low, high = self.low, self.high
        if high is None:
            return f"at least {low}"
        if low is None or low == 0:
            return f"at most {high}"
        if low == high:
            return f"exactly {low}"
        return f"between {low} and {high}"

    def describe(self) -> str:
        return f"the agent makes {self._bounds()} {self._what()}"

    def expected(self) -> Any:
        return {"min": self.low, "max": self.high, "name": self.name}

    def passes(self, trace: Trace) -> bool:
        names = trace.names
        count = len(names) if self.name is None else names.count(self.name)
        return (self.low is None or count >= self.low) and (self.high is None or count <= self.high)

    def _test(self, gen: FastGen) -> str:
        names = gen.trace_names()
        count = f"len({names})" if self.name is None else f"{names}.count({gen.const(self.name)})"
        return _bounds_test(gen, count, self.low, self.high)

    def check_trace(self, trace: Trace, explain: bool) -> AssertionResult:
        name = self.name
        if name is None:
            indexes = list(range(len(trace.names)))
        else:
            indexes = [index for index, called in enumerate(trace.names) if called == name]
        count = len(indexes)
        if (self.low is None or count >= self.low) and (self.high is None or count <= self.high):
            return passed_from(self.key, trace)
        if not explain:
            return self.fail(trace, "")
        mark = indexes[self.high] if self.high is not None and count > self.high else None
        return self.fail(trace, f"Expected {self._bounds()} {self._what()}, got {count}", mark)


class NamesCalled(TraceChecker):
    """Every named tool is called (``tools_called``), or none is (``tools_not_called``)."""

    __slots__ = ("called", "names")

    def __init__(self, key: str, names: Sequence[str], called: bool) -> None:
        self.key = key
        self.names = tuple(dict.fromkeys(names))
        self.called = called

    def describe(self) -> str:
        listed = ", ".join(self.names)
        return f"tools {listed} are called" if self.called else f"tools {listed} are never called"

    def expected(self) -> Any:
        return list(self.names)

    def passes(self, trace: Trace) -> bool:
        names = trace.names
        if self.called:
            return all(name in names for name in self.names)
        return not any(name in names for name in self.names)

    def check_trace(self, trace: Trace, explain: bool) -> AssertionResult:
        first: dict[str, int] = {}
        for index, called in enumerate(trace.names):
            first.setdefault(called, index)
        if self.called:
            missing = [name for name in self.names if name not in first]
            if not missing:
                return passed_from(self.key, trace)
            score = 1 - len(missing) / len(self.names)
            listed = ", ".join(self.names)
            message = f"Expected {listed} to be called; not called: {', '.join(missing)}"
            return self.fail(trace, message if explain else "", score=score)
        made = sorted((first[name], name) for name in self.names if name in first)
        if not made:
            return passed_from(self.key, trace)
        if not explain:
            return self.fail(trace, "", score=1 - len(made) / len(self.names))
        shown = ", ".join(f"{name} (call {index + 1})" for index, name in made)
        return self.fail(
            trace,
            f"Expected {', '.join(self.names)} never to be called; called: {shown}",
            made[0][0],
            score=1 - len(made) / len(self.names),
        )
