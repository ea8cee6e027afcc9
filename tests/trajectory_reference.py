"""The trajectory checkers' judging as first written: plain, slow, on `ToolCall` objects.

The engine judges failures straight from the `Trace` (names and arguments by index) and writes
the calls shown in a failure in one pass (`engine/_trace_text.shown_calls`), to make failures
cheap (#16). This module keeps the straightforward version they replaced, `judge` for every
trace checker and the failure it builds, so tests can require the same result to the byte.
Kept independent of the engine's helpers on purpose: only `ToolCall`, the patterns' own
`matches` / `mismatch` / `describe` and the result constructors are shared.
"""

from __future__ import annotations

from collections.abc import Sequence

from assertly._json import dumps
from assertly.engine._result import AssertionResult, failed
from assertly.engine.trajectory._checks import (
    CallPattern,
    NamesCalled,
    ToolCalled,
    ToolCount,
    TraceChecker,
    _times,
    calls_noun,
    passed_from,
)
from assertly.engine.trajectory._sequence import ToolSequence
from assertly.engine.trajectory._trace import ToolCall, Trace

KEPT_CALLS = 50


def render_call(call: ToolCall) -> str:
    """``name({"key":value,…})``: every entry's key and value as JSON; past 120 characters,
    values clipped at 40, then the call at 120 (the format since round 3 of #16)."""
    arguments = call.arguments
    if arguments is None:
        return f"{call.name}(<unreadable arguments>)"
    entries = [(dumps({key: 0})[1:-3], dumps(value)) for key, value in arguments.items()]
    text = call.name + "({" + ",".join(f"{key}:{value}" for key, value in entries) + "})"
    if len(text) <= 120:
        return text
    clipped = [(key, value if len(value) <= 40 else value[:39] + "…") for key, value in entries]
    text = call.name + "({" + ",".join(f"{key}:{value}" for key, value in clipped) + "})"
    return text if len(text) <= 120 else text[:119] + "…"


def render_calls(trace: Trace, mark: int | None = None) -> str:
    count = len(trace.names)
    noun = "call" if count == 1 else "calls"
    head = f"{count} {noun} ({trace.label})"
    if not count:
        return f"no calls ({trace.label})"
    shown: list[str] = []
    indexes = list(range(min(count, 20)))
    if mark is not None and mark >= 20 and mark < count:
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


def fail(
    checker: TraceChecker, trace: Trace, message: str, mark: int | None = None, score: float = 0.0
) -> AssertionResult:
    if not message:
        return failed(checker.key, "", score=score, details={"trace_format": trace.format})
    return failed(
        checker.key,
        f"{message}; got {render_calls(trace, mark)}",
        expected=checker.expected(),
        actual=[call.to_json() for call in trace.calls[:KEPT_CALLS]],
        score=score,
        details={"trace_format": trace.format, "calls": len(trace.calls)},
    )


def judge(checker: TraceChecker, trace: Trace, explain: bool) -> AssertionResult:
    """What ``checker.judge(trace, explain)`` gave before failures were made cheap."""
    if isinstance(checker, ToolSequence):
        return _sequence(checker, trace, explain)
    if isinstance(checker, ToolCalled):
        return _called(checker, trace, explain)
    if isinstance(checker, ToolCount):
        return _count(checker, trace, explain)
    if isinstance(checker, NamesCalled):
        return _names(checker, trace, explain)
    raise TypeError(type(checker).__name__)


# --- tool-sequence ---------------------------------------------------------------------------

Judged = tuple[float, str | None, int | None]


def _sequence(checker: ToolSequence, trace: Trace, explain: bool) -> AssertionResult:
    modes = {
        "in_order": _in_order,
        "exact": _exact,
        "unordered": _unordered,
        "subset": _subset,
        "superset": _superset,
    }
    score, problem, mark = modes[checker.mode](checker.patterns, trace.calls, explain)
    threshold = checker.threshold
    if (problem is None) if threshold is None else score + 1e-12 >= threshold:
        return passed_from(checker.key, trace, score)
    if not explain:
        return fail(checker, trace, "", score=score)
    if problem is None:
        problem = f"score {score:.4g} is below the threshold {threshold:g}"
    elif threshold is not None:
        problem += f"; score {score:.4g} is below the threshold {threshold:g}"
    return fail(checker, trace, f"{checker._write_expectation()}; {problem}", mark, score)


def _in_order(
    patterns: Sequence[CallPattern], calls: tuple[ToolCall, ...], explain: bool
) -> Judged:
    position = 0
    for number, pattern in enumerate(patterns):
        for index in range(position, len(calls)):
            if pattern.matches(calls[index]):
                position = index + 1
                break
        else:
            score = number / len(patterns)
            if not explain:
                return score, "", None
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


def _exact(patterns: Sequence[CallPattern], calls: tuple[ToolCall, ...], explain: bool) -> Judged:
    matched = [pattern.matches(call) for pattern, call in zip(patterns, calls, strict=False)]
    score = sum(matched) / max(len(patterns), len(calls))
    if not explain and score < 1:
        return score, "", None
    for index, ok in enumerate(matched):
        if not ok:
            pattern, call = patterns[index], calls[index]
            why = f"{pattern.mismatch(call)}" if call.name == pattern.name else f"got {call.name}"
            return score, f"call {index + 1} should be {pattern.describe()}: {why}", index
    if len(calls) > len(patterns):
        extra = len(calls) - len(patterns)
        return (
            score,
            f"{calls_noun(extra)} more than expected from call {len(patterns) + 1}",
            len(patterns),
        )
    if len(calls) < len(patterns):
        missing = patterns[len(calls)]
        return (
            score,
            f"only {calls_noun(len(calls))} made; call {len(calls) + 1} should be "
            f"{missing.describe()}",
            None,
        )
    return 1.0, None, None


def _unordered(
    patterns: Sequence[CallPattern], calls: tuple[ToolCall, ...], explain: bool
) -> Judged:
    chosen = _matching(patterns, calls)
    matched = sum(1 for call in chosen if call >= 0)
    score = matched / max(len(patterns), len(calls))
    if matched == len(patterns) == len(calls):
        return 1.0, None, None
    if not explain:
        return score, "", None
    return score, _unmatched(patterns, calls, chosen), _first_unused(calls, chosen)


def _superset(
    patterns: Sequence[CallPattern], calls: tuple[ToolCall, ...], explain: bool
) -> Judged:
    chosen = _matching(patterns, calls)
    matched = sum(1 for call in chosen if call >= 0)
    if matched == len(patterns):
        return 1.0, None, None
    if not explain:
        return matched / len(patterns), "", None
    missing = [p.describe() for p, call in zip(patterns, chosen, strict=True) if call < 0]
    return matched / len(patterns), f"not called: {', '.join(missing)}", None


def _subset(patterns: Sequence[CallPattern], calls: tuple[ToolCall, ...], explain: bool) -> Judged:
    outside = [
        index
        for index, call in enumerate(calls)
        if not any(pattern.matches(call) for pattern in patterns)
    ]
    if not outside:
        return 1.0, None, None
    score = 1 - len(outside) / len(calls)
    if not explain:
        return score, "", None
    shown = ", ".join(f"call {index + 1} {render_call(calls[index])}" for index in outside[:5])
    more = f" (and {len(outside) - 5} more)" if len(outside) > 5 else ""
    return score, f"not among the listed calls: {shown}{more}", outside[0]


def _unmatched(
    patterns: Sequence[CallPattern], calls: tuple[ToolCall, ...], chosen: list[int]
) -> str:
    used = {call for call in chosen if call >= 0}
    missing = [p.describe() for p, call in zip(patterns, chosen, strict=True) if call < 0]
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


def _first_unused(calls: tuple[ToolCall, ...], chosen: list[int]) -> int | None:
    used = set(chosen)
    for index in range(len(calls)):
        if index not in used:
            return index
    return None


def _matching(patterns: Sequence[CallPattern], calls: tuple[ToolCall, ...]) -> list[int]:
    by_name: dict[str, list[int]] = {}
    for index, made in enumerate(calls):
        by_name.setdefault(made.name, []).append(index)
    options = [
        [index for index in by_name.get(pattern.name, ()) if pattern.matches(calls[index])]
        for pattern in patterns
    ]
    owner = [-1] * len(calls)
    chosen = [-1] * len(patterns)
    for start in range(len(patterns)):
        if not options[start]:
            continue
        reached_from: dict[int, int] = {}
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


# --- tool-called, tool-call-count, tools_called ------------------------------------------------


def _called(checker: ToolCalled, trace: Trace, explain: bool) -> AssertionResult:
    pattern = checker.pattern
    name = pattern.name
    high = checker.high
    if high is None:
        needed = checker.low
        if needed == 0:
            return passed_from(checker.key, trace)
        for call in trace.calls:
            if call.name == name and pattern.matches(call):
                needed -= 1
                if not needed:
                    return passed_from(checker.key, trace)
    matching = [
        index
        for index, call in enumerate(trace.calls)
        if call.name == name and pattern.matches(call)
    ]
    count = len(matching)
    if count >= checker.low and (high is None or count <= high):
        return passed_from(checker.key, trace)
    if not explain:
        return fail(checker, trace, "")
    times = "never to be called" if high == 0 else f"called {_times(checker.low, high)}"
    message = (
        f"Expected {pattern.describe()} {times}, got {count} matching "
        f"{'call' if count == 1 else 'calls'}"
    )
    mark: int | None = None
    if high is not None and count > high:
        mark = matching[high]
    else:
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
    return fail(checker, trace, message, mark)


def _count(checker: ToolCount, trace: Trace, explain: bool) -> AssertionResult:
    name = checker.name
    if name is None:
        indexes = list(range(len(trace.calls)))
    else:
        indexes = [index for index, call in enumerate(trace.calls) if call.name == name]
    count = len(indexes)
    low, high = checker.low, checker.high
    if (low is None or count >= low) and (high is None or count <= high):
        return passed_from(checker.key, trace)
    if not explain:
        return fail(checker, trace, "")
    mark = indexes[high] if high is not None and count > high else None
    return fail(
        checker, trace, f"Expected {checker._bounds()} {checker._what()}, got {count}", mark
    )


def _names(checker: NamesCalled, trace: Trace, explain: bool) -> AssertionResult:
    first: dict[str, int] = {}
    for index, call in enumerate(trace.calls):
        first.setdefault(call.name, index)
    if checker.called:
        missing = [name for name in checker.names if name not in first]
        if not missing:
            return passed_from(checker.key, trace)
        score = 1 - len(missing) / len(checker.names)
        listed = ", ".join(checker.names)
        message = f"Expected {listed} to be called; not called: {', '.join(missing)}"
        return fail(checker, trace, message if explain else "", score=score)
    made = sorted((first[name], name) for name in checker.names if name in first)
    if not made:
        return passed_from(checker.key, trace)
    if not explain:
        return fail(checker, trace, "", score=1 - len(made) / len(checker.names))
    shown = ", ".join(f"{name} (call {index + 1})" for index, name in made)
    return fail(
        checker,
        trace,
        f"Expected {', '.join(checker.names)} never to be called; called: {shown}",
        made[0][0],
        score=1 - len(made) / len(checker.names),
    )
