"""The checkers behind the trajectory assertions of both dialects.

``tool-called`` / ``tools_called``, ``tool-sequence`` / ``tool_sequence`` and
``tool-call-count`` / ``max_tool_calls`` judge the `Trace` of tool calls (see `_trajectory`):
patterns are compiled once; a check walks the trace, read once per response. A response with
no trace is an ``error``, never a pass. A failure shows the calls made, next to what was
expected, and where they diverge.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from ._base import Checker
from ._result import PASSED, AssertionResult, errored, failed
from ._trajectory import Trace, ToolCall, render_arguments, render_call, render_calls, trace_of
from ._values import dumps, json_equal

if TYPE_CHECKING:
    from ._context import CheckContext
    from ._response import Response

__all__ = [
    "MODES",
    "CallPattern",
    "NamesCalled",
    "ToolCalled",
    "ToolCount",
    "ToolSequence",
    "TraceChecker",
]

MODES: Final = ("in_order", "exact", "unordered", "subset", "superset")
_KEPT_CALLS = 50  # calls kept in a result's `actual`


class CallPattern:
    """A call to match: a tool name, and optionally arguments (a subset, or exactly)."""

    __slots__ = ("args", "exact", "name")

    def __init__(self, name: str, args: dict[str, Any] | None = None, exact: bool = False) -> None:
        self.name = name
        self.args = args
        self.exact = exact

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


def _subset(want: Any, got: Any) -> bool:
    """``want`` is within ``got``: objects key by key (recursively), arrays element by element."""
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


def _calls_noun(n: int) -> str:
    return "1 call" if n == 1 else f"{n} calls"


_PASSES: dict[tuple[str, str], AssertionResult] = {}


def _passed(key: str, trace: Trace, score: float = 1.0) -> AssertionResult:
    """A pass that says which format the trace came from (full passes shared per format)."""
    if score == 1.0:
        shared = _PASSES.get((key, trace.format))
        if shared is None:
            details = {"trace_format": trace.format}
            shared = _PASSES[(key, trace.format)] = AssertionResult(
                key, PASSED, 1.0, details=details
            )
        return shared
    return AssertionResult(key, PASSED, score, details={"trace_format": trace.format})


class TraceChecker(Checker):
    """A checker of the trace; no trace is an error."""

    __slots__ = ()

    def check(self, response: Response, ctx: CheckContext) -> AssertionResult:
        trace = trace_of(response, ctx)
        if type(trace) is str:
            return errored(self.key, trace, expected=self.expected())
        return self.judge(trace)  # type: ignore[arg-type]

    def observed(self, response: Response, ctx: CheckContext) -> str:
        trace = trace_of(response, ctx)
        return f"got {render_calls(trace)}" if type(trace) is Trace else ""

    def judge(self, trace: Trace) -> AssertionResult:
        """Judge the trace."""
        raise NotImplementedError

    def expected(self) -> Any:
        """What the assertion expects, as results show it."""
        return None

    def fail(
        self, trace: Trace, message: str, mark: int | None = None, score: float = 0.0
    ) -> AssertionResult:
        """A failure showing the calls made (``mark`` flags where they diverge)."""
        return failed(
            self.key,
            f"{message}; got {render_calls(trace, mark)}",
            expected=self.expected(),
            actual=[call.to_json() for call in trace.calls[:_KEPT_CALLS]],
            score=score,
            details={"trace_format": trace.format, "calls": len(trace.calls)},
        )


class ToolCalled(TraceChecker):
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

    def judge(self, trace: Trace) -> AssertionResult:
        pattern = self.pattern
        matching = [index for index, call in enumerate(trace.calls) if pattern.matches(call)]
        count = len(matching)
        high = self.high
        if count >= self.low and (high is None or count <= high):
            return _passed(self.key, trace)
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
                index
                for index, call in enumerate(trace.calls)
                if call.name == pattern.name and index not in seen
            ]
            if near:
                mark = near[0]
                others = "1 other call" if len(near) == 1 else f"{len(near)} other calls"
                message += (
                    f" ({others} to {pattern.name}: call {mark + 1}: "
                    f"{pattern.mismatch(trace.calls[mark])})"
                )
        return self.fail(trace, message, mark)


class ToolCount(TraceChecker):
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

    def judge(self, trace: Trace) -> AssertionResult:
        name = self.name
        if name is None:
            indexes = list(range(len(trace.calls)))
        else:
            indexes = [index for index, call in enumerate(trace.calls) if call.name == name]
        count = len(indexes)
        if (self.low is None or count >= self.low) and (self.high is None or count <= self.high):
            return _passed(self.key, trace)
        mark = indexes[self.high] if self.high is not None and count > self.high else None
        return self.fail(
            trace, f"Expected {self._bounds()} {self._what()}, got {count}", mark
        )


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

    def judge(self, trace: Trace) -> AssertionResult:
        first: dict[str, int] = {}
        for index, call in enumerate(trace.calls):
            first.setdefault(call.name, index)
        if self.called:
            missing = [name for name in self.names if name not in first]
            if not missing:
                return _passed(self.key, trace)
            score = 1 - len(missing) / len(self.names)
            return self.fail(
                trace,
                f"Expected {', '.join(self.names)} to be called; not called: {', '.join(missing)}",
                score=score,
            )
        made = sorted((first[name], name) for name in self.names if name in first)
        if not made:
            return _passed(self.key, trace)
        shown = ", ".join(f"{name} (call {index + 1})" for index, name in made)
        return self.fail(
            trace,
            f"Expected {', '.join(self.names)} never to be called; called: {shown}",
            made[0][0],
            score=1 - len(made) / len(self.names),
        )


class ToolSequence(TraceChecker):
    """The calls against a list of patterns, by mode; the score is the fraction matched."""

    __slots__ = ("mode", "patterns", "threshold")

    def __init__(
        self, key: str, patterns: Sequence[CallPattern], mode: str, threshold: float | None
    ) -> None:
        self.key = key
        self.patterns = tuple(patterns)
        self.mode = mode
        self.threshold = threshold

    def _listed(self, separator: str) -> str:
        return separator.join(pattern.describe() for pattern in self.patterns)

    def describe(self) -> str:
        mode = self.mode
        if mode == "in_order":
            return f"tools are called in this order: {self._listed(' → ')}"
        if mode == "exact":
            return f"the tool calls are exactly {self._listed(' → ')}"
        if mode == "unordered":
            return f"the tool calls are exactly {self._listed(', ')}, in any order"
        if mode == "subset":
            return f"every tool call is one of {self._listed(', ')}"
        return f"{self._listed(', ')} are all called, in any order"

    def expected(self) -> Any:
        return {"mode": self.mode, "calls": [pattern.to_json() for pattern in self.patterns]}

    def judge(self, trace: Trace) -> AssertionResult:
        judge = {
            "in_order": self._in_order,
            "exact": self._exact,
            "unordered": self._unordered,
            "subset": self._subset,
            "superset": self._superset,
        }[self.mode]
        score, problem, mark = judge(trace.calls)
        threshold = self.threshold
        if (problem is None) if threshold is None else score + 1e-12 >= threshold:
            return _passed(self.key, trace, score)
        if problem is None:
            problem = f"score {score:.4g} is below the threshold {threshold:g}"
        elif threshold is not None:
            problem += f"; score {score:.4g} is below the threshold {threshold:g}"
        return self.fail(trace, f"{self._expectation()}; {problem}", mark, score)

    def _expectation(self) -> str:
        mode = self.mode
        if mode == "in_order":
            return f"Expected calls in this order: {self._listed(' → ')}"
        if mode == "exact":
            return f"Expected exactly these calls: {self._listed(' → ')}"
        if mode == "unordered":
            return f"Expected exactly these calls, in any order: {self._listed(', ')}"
        if mode == "subset":
            return f"Expected only calls among: {self._listed(', ')}"
        return f"Expected all of these calls, in any order: {self._listed(', ')}"

    # Each mode: (score, what diverges or None, the call index to flag or None).

    def _in_order(self, calls: tuple[ToolCall, ...]) -> tuple[float, str | None, int | None]:
        patterns = self.patterns
        position = 0
        for number, pattern in enumerate(patterns):
            for index in range(position, len(calls)):
                if pattern.matches(calls[index]):
                    position = index + 1
                    break
            else:
                score = number / len(patterns)
                after = f" after call {position}" if position else ""
                near = _first_named(calls, pattern, position)
                if near is not None:
                    clause = (
                        f"step {number + 1} ({pattern.describe()}) is not called{after}; "
                        f"call {near + 1} is {pattern.name} but {pattern.mismatch(calls[near])}"
                    )
                    return score, clause, near
                earlier = _first_named(calls, pattern, 0)
                if earlier is not None and pattern.matches(calls[earlier]):
                    clause = (
                        f"step {number + 1} ({pattern.describe()}) is not called{after}, only "
                        f"earlier (call {earlier + 1}): out of order"
                    )
                    return score, clause, earlier
                return score, f"step {number + 1} ({pattern.describe()}) is not called{after}", None
        return 1.0, None, None

    def _exact(self, calls: tuple[ToolCall, ...]) -> tuple[float, str | None, int | None]:
        patterns = self.patterns
        matched = [
            pattern.matches(call) for pattern, call in zip(patterns, calls, strict=False)
        ]
        score = sum(matched) / max(len(patterns), len(calls))
        for index, ok in enumerate(matched):
            if not ok:
                pattern, call = patterns[index], calls[index]
                why = (
                    f"{pattern.mismatch(call)}"
                    if call.name == pattern.name
                    else f"got {call.name}"
                )
                return score, f"call {index + 1} should be {pattern.describe()}: {why}", index
        if len(calls) > len(patterns):
            extra = len(calls) - len(patterns)
            return score, f"{_calls_noun(extra)} more than expected from call {len(patterns) + 1}", (
                len(patterns)
            )
        if len(calls) < len(patterns):
            missing = patterns[len(calls)]
            return (
                score,
                f"only {_calls_noun(len(calls))} made; call {len(calls) + 1} should be "
                f"{missing.describe()}",
                None,
            )
        return 1.0, None, None

    def _unordered(self, calls: tuple[ToolCall, ...]) -> tuple[float, str | None, int | None]:
        owner = _matching(self.patterns, calls)
        matched = sum(1 for call in owner if call >= 0)
        score = matched / max(len(self.patterns), len(calls))
        if matched == len(self.patterns) == len(calls):
            return 1.0, None, None
        return score, self._unmatched(calls, owner), _first_unused(calls, owner)

    def _superset(self, calls: tuple[ToolCall, ...]) -> tuple[float, str | None, int | None]:
        owner = _matching(self.patterns, calls)
        matched = sum(1 for call in owner if call >= 0)
        if matched == len(self.patterns):
            return 1.0, None, None
        missing = [p.describe() for p, call in zip(self.patterns, owner, strict=True) if call < 0]
        return matched / len(self.patterns), f"not called: {', '.join(missing)}", None

    def _subset(self, calls: tuple[ToolCall, ...]) -> tuple[float, str | None, int | None]:
        patterns = self.patterns
        outside = [
            index
            for index, call in enumerate(calls)
            if not any(pattern.matches(call) for pattern in patterns)
        ]
        if not outside:
            return 1.0, None, None
        score = 1 - len(outside) / len(calls)
        shown = ", ".join(f"call {index + 1} {render_call(calls[index])}" for index in outside[:5])
        more = f" (and {len(outside) - 5} more)" if len(outside) > 5 else ""
        return score, f"not among the listed calls: {shown}{more}", outside[0]

    def _unmatched(self, calls: tuple[ToolCall, ...], owner: list[int]) -> str:
        used = {call for call in owner if call >= 0}
        missing = [p.describe() for p, call in zip(self.patterns, owner, strict=True) if call < 0]
        extra = [index for index in range(len(calls)) if index not in used]
        parts = []
        if missing:
            parts.append(f"not called: {', '.join(missing)}")
        if extra:
            shown = ", ".join(f"call {index + 1} {render_call(calls[index])}" for index in extra[:5])
            more = f" (and {len(extra) - 5} more)" if len(extra) > 5 else ""
            parts.append(f"not expected: {shown}{more}")
        return "; ".join(parts)


def _first_named(calls: tuple[ToolCall, ...], pattern: CallPattern, start: int) -> int | None:
    for index in range(start, len(calls)):
        if calls[index].name == pattern.name:
            return index
    return None


def _first_unused(calls: tuple[ToolCall, ...], owner: list[int]) -> int | None:
    used = set(owner)
    for index in range(len(calls)):
        if index not in used:
            return index
    return None


def _matching(patterns: Sequence[CallPattern], calls: tuple[ToolCall, ...]) -> list[int]:
    """A maximum matching of patterns to distinct calls: each pattern's call index, or -1.

    Augmenting paths found breadth first (no recursion), so that a pattern that could take
    several calls leaves the one another pattern needs.
    """
    by_name: dict[str, list[int]] = {}
    for index, call in enumerate(calls):
        by_name.setdefault(call.name, []).append(index)
    options = [
        [index for index in by_name.get(pattern.name, ()) if pattern.matches(calls[index])]
        for pattern in patterns
    ]
    owner = [-1] * len(calls)  # call -> pattern
    chosen = [-1] * len(patterns)  # pattern -> call
    for start in range(len(patterns)):
        if not options[start]:
            continue
        reached_from: dict[int, int] = {}  # call -> the pattern that reached it
        queue = [start]
        free = -1
        head = 0
        while head < len(queue) and free < 0:
            pattern = queue[head]
            head += 1
            for call in options[pattern]:
                if call in reached_from:
                    continue
                reached_from[call] = pattern
                if owner[call] < 0:
                    free = call
                    break
                queue.append(owner[call])
        call = free
        while call >= 0:
            pattern = reached_from[call]
            previous = chosen[pattern]
            owner[call], chosen[pattern] = pattern, call
            call = -1 if pattern == start else previous
    return chosen
