"""``tool-sequence`` and ``tool_sequence``: the calls made against a list of calls, by mode.

Modes: ``in_order`` (the listed calls in this order, others between allowed), ``exact``,
``unordered`` (exactly these, any order), ``subset`` (every call made is listed) and
``superset`` (every listed call is made). Listed calls match distinct calls; the unordered
modes pair them by a maximum bipartite matching.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._result import AssertionResult
from ._checks import CallPattern, TraceChecker, calls_noun, passed_from
from ._text import render_call_at
from ._trace import Trace

if TYPE_CHECKING:
    from .._fast import FastGen

__all__ = ["MODES", "ToolSequence"]

MODES = ("in_order", "exact", "unordered", "subset", "superset")
_UNROLLED = 6  # names in order written out one by one in the fast path; a loop for more

# What each mode asks for: as a check describes itself, and as a failure's message opens.
_DESCRIPTIONS = {
    "in_order": "tools are called in this order: {calls}",
    "exact": "the tool calls are exactly {calls}",
    "unordered": "the tool calls are exactly {calls}, in any order",
    "subset": "every tool call is one of {calls}",
    "superset": "{calls} are all called, in any order",
}
_EXPECTATIONS = {
    "in_order": "Expected calls in this order: {calls}",
    "exact": "Expected exactly these calls: {calls}",
    "unordered": "Expected exactly these calls, in any order: {calls}",
    "subset": "Expected only calls among: {calls}",
    "superset": "Expected all of these calls, in any order: {calls}",
}


class ToolSequence(TraceChecker):
    """The calls against a list of patterns, by mode; the score is the fraction matched."""

    __slots__ = ("_expected_text", "_names", "mode", "patterns", "threshold")

    def __init__(
        self, key: str, patterns: Sequence[CallPattern], mode: str, threshold: float | None
    ) -> None:
        self.key = key
        self.patterns = tuple(patterns)
        self.mode = mode
        self.threshold = threshold
        self._expected_text: str | None = None  # `_expectation`, written once
        # The listed tools' names, when every pattern is a name alone (`expected` is then
        # written from them: a failure writes it every time).
        self._names = (
            tuple(pattern.name for pattern in patterns)
            if all(pattern.args is None for pattern in patterns)
            else None
        )

    def _listed(self, separator: str) -> str:
        return separator.join(pattern.describe() for pattern in self.patterns)

    def _worded(self, wordings: Mapping[str, str]) -> str:
        """The mode's wording with the listed calls: in order with arrows, else with commas."""
        separator = " → " if self.mode in ("in_order", "exact") else ", "
        return wordings[self.mode].format(calls=self._listed(separator))

    def describe(self) -> str:
        return self._worded(_DESCRIPTIONS)

    def expected(self) -> Any:
        names = self._names
        if names is not None:  # tools by name only: each pattern's JSON is its name
            return {"mode": self.mode, "calls": list(names)}
        return {"mode": self.mode, "calls": [pattern.to_json() for pattern in self.patterns]}

    def passes(self, trace: Trace) -> bool:
        mode, patterns, names = self.mode, self.patterns, trace.names
        if mode == "in_order":
            # Each listed call at the first matching call after the previous one's: found by
            # name in C, arguments read only for calls of the tool.
            position = 0
            for pattern in patterns:
                position = pattern.find(trace, position) + 1
                if not position:
                    return False
            return True
        if mode == "exact":
            return len(names) == len(patterns) and all(
                pattern.matches_at(trace, index) for index, pattern in enumerate(patterns)
            )
        return super().passes(trace)  # the matching of the unordered modes

    def _test(self, gen: FastGen) -> str:
        if self.mode != "in_order" or any(pattern.args is not None for pattern in self.patterns):
            return super()._test(gen)
        # Tools listed by name, in order (the common sequence): `passes`, written into the
        # function (no call). Each is looked for in C after the previous one, a missing one
        # by `in` (no ValueError): unrolled for a short list, a loop for a longer one.
        names = gen.trace_names()
        ok, position = gen.fresh("s"), gen.fresh("p")
        listed = [gen.const(pattern.name) for pattern in self.patterns]
        if len(listed) > _UNROLLED:
            name = gen.fresh("n")
            gen.statement(
                f"{ok} = True\n"
                f"{position} = 0\n"
                f"for {name} in {gen.const(tuple(p.name for p in self.patterns))}:\n"
                f"    if {name} not in {names}[{position}:]:\n"
                f"        {ok} = False\n"
                f"        break\n"
                f"    {position} = {names}.index({name}, {position}) + 1"
            )
            return ok
        # `s = False; if a in names: p = names.index(a) + 1; if b in names[p:]: … s = True`
        lines = [f"{ok} = False", f"if {listed[0]} in {names}:"]
        for depth, name in enumerate(listed[1:], 1):
            indent = "    " * depth
            start = "" if depth == 1 else f", {position}"
            lines.append(f"{indent}{position} = {names}.index({listed[depth - 1]}{start}) + 1")
            lines.append(f"{indent}if {name} in {names}[{position}:]:")
        lines.append("    " * len(listed) + f"{ok} = True")
        gen.statement("\n".join(lines))
        return ok

    def check_trace(self, trace: Trace, explain: bool) -> AssertionResult:
        score, problem, mark = _MODE_JUDGES[self.mode](self, trace, explain)
        threshold = self.threshold
        if (problem is None) if threshold is None else score + 1e-12 >= threshold:
            return passed_from(self.key, trace, score)
        if not explain:
            return self.fail(trace, "", score=score)
        if problem is None:
            problem = f"score {score:.4g} is below the threshold {threshold:g}"
        elif threshold is not None:
            problem += f"; score {score:.4g} is below the threshold {threshold:g}"
        return self.fail(trace, f"{self._expectation()}; {problem}", mark, score)

    def _expectation(self) -> str:
        text = self._expected_text
        if text is None:
            text = self._expected_text = self._write_expectation()
        return text

    def _write_expectation(self) -> str:
        return self._worded(_EXPECTATIONS)

    # Each mode: (score, what diverges or None, the call index to flag or None). They read
    # the trace by index (names, and arguments only for calls of a listed tool): no `ToolCall`
    # objects, which cost more than the judging.

    def _in_order(self, trace: Trace, explain: bool) -> tuple[float, str | None, int | None]:
        patterns = self.patterns
        position = 0
        for number, pattern in enumerate(patterns):
            found = pattern.find(trace, position)
            if found >= 0:
                position = found + 1
                continue
            score = number / len(patterns)
            if not explain:
                return score, "", None
            after = f" after call {position}" if position else ""
            if pattern.name not in trace.names:  # never called (the usual failure): say so
                return score, f"step {number + 1} ({pattern.describe()}) is not called{after}", None
            near = _first_named(trace, pattern, position)
            if near is not None:
                clause = (
                    f"step {number + 1} ({pattern.describe()}) is not called{after}; "
                    f"call {near + 1} is {pattern.name} but {pattern.mismatch_at(trace, near)}"
                )
                return score, clause, near
            earlier = _first_named(trace, pattern, 0)
            if earlier is not None and pattern.matches_at(trace, earlier):
                clause = (
                    f"step {number + 1} ({pattern.describe()}) is not called{after}, only "
                    f"earlier (call {earlier + 1}): out of order"
                )
                return score, clause, earlier
            return score, f"step {number + 1} ({pattern.describe()}) is not called{after}", None
        return 1.0, None, None

    def _exact(self, trace: Trace, explain: bool) -> tuple[float, str | None, int | None]:
        patterns, names = self.patterns, trace.names
        count = len(names)
        matched = [
            pattern.matches_at(trace, index)
            for index, pattern in enumerate(patterns)
            if index < count
        ]
        score = sum(matched) / max(len(patterns), count)
        if not explain and score < 1:
            return score, "", None
        for index, ok in enumerate(matched):
            if not ok:
                pattern, name = patterns[index], names[index]
                why = pattern.mismatch_at(trace, index) if name == pattern.name else f"got {name}"
                return score, f"call {index + 1} should be {pattern.describe()}: {why}", index
        if count > len(patterns):
            extra = count - len(patterns)
            return (
                score,
                f"{calls_noun(extra)} more than expected from call {len(patterns) + 1}",
                (len(patterns)),
            )
        if count < len(patterns):
            missing = patterns[count]
            return (
                score,
                f"only {calls_noun(count)} made; call {count + 1} should be {missing.describe()}",
                None,
            )
        return 1.0, None, None

    def _unordered(self, trace: Trace, explain: bool) -> tuple[float, str | None, int | None]:
        count = len(trace.names)
        chosen = _matching(self.patterns, trace)
        matched = sum(1 for call in chosen if call >= 0)
        score = matched / max(len(self.patterns), count)
        if matched == len(self.patterns) == count:
            return 1.0, None, None
        if not explain:
            return score, "", None
        return score, self._unmatched(trace, chosen), _first_unused(count, chosen)

    def _superset(self, trace: Trace, explain: bool) -> tuple[float, str | None, int | None]:
        chosen = _matching(self.patterns, trace)
        matched = sum(1 for call in chosen if call >= 0)
        if matched == len(self.patterns):
            return 1.0, None, None
        if not explain:
            return matched / len(self.patterns), "", None
        missing = [p.describe() for p, call in zip(self.patterns, chosen, strict=True) if call < 0]
        return matched / len(self.patterns), f"not called: {', '.join(missing)}", None

    def _subset(self, trace: Trace, explain: bool) -> tuple[float, str | None, int | None]:
        patterns = self.patterns
        count = len(trace.names)
        outside = [
            index
            for index in range(count)
            if not any(pattern.matches_at(trace, index) for pattern in patterns)
        ]
        if not outside:
            return 1.0, None, None
        score = 1 - len(outside) / count
        if not explain:
            return score, "", None
        shown = ", ".join(
            f"call {index + 1} {render_call_at(trace, index)}" for index in outside[:5]
        )
        more = f" (and {len(outside) - 5} more)" if len(outside) > 5 else ""
        return score, f"not among the listed calls: {shown}{more}", outside[0]

    def _unmatched(self, trace: Trace, chosen: list[int]) -> str:
        used = {call for call in chosen if call >= 0}
        missing = [p.describe() for p, call in zip(self.patterns, chosen, strict=True) if call < 0]
        extra = [index for index in range(len(trace.names)) if index not in used]
        parts = []
        if missing:
            parts.append(f"not called: {', '.join(missing)}")
        if extra:
            shown = ", ".join(
                f"call {index + 1} {render_call_at(trace, index)}" for index in extra[:5]
            )
            more = f" (and {len(extra) - 5} more)" if len(extra) > 5 else ""
            parts.append(f"not expected: {shown}{more}")
        return "; ".join(parts)


# Each mode's judging, by mode (a lookup, not a `getattr` per check).
_MODE_JUDGES = {mode: getattr(ToolSequence, f"_{mode}") for mode in MODES}


def _first_named(trace: Trace, pattern: CallPattern, start: int) -> int | None:
    names, name = trace.names, pattern.name
    if name not in names:  # (see `CallPattern.find`: no ValueError for a missing tool)
        return None
    try:
        return names.index(name, start)
    except ValueError:
        return None


def _first_unused(count: int, chosen: list[int]) -> int | None:
    used = set(chosen)
    for index in range(count):
        if index not in used:
            return index
    return None


def _matching(patterns: Sequence[CallPattern], trace: Trace) -> list[int]:
    """A maximum matching of patterns to distinct calls: each pattern's call index, or -1.

    Augmenting paths found breadth first (no recursion), so that a pattern that could take
    several calls leaves the one another pattern needs.
    """
    by_name: dict[str, list[int]] = {}
    for index, name in enumerate(trace.names):
        by_name.setdefault(name, []).append(index)
    options = [
        [index for index in by_name.get(pattern.name, ()) if pattern.matches_at(trace, index)]
        for pattern in patterns
    ]
    owner = [-1] * len(trace.names)  # call -> pattern
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
