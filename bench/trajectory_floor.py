"""How close `tool-sequence` can come to `contains`: the floors under #16's 2x target.

Times, on the trajectory section's responses (bench/trajectory_workload.py) and as that
section does (one core, garbage collected before each slot, best of interleaved rounds):

* ``contains``, and assertly's ``tool-sequence`` (``[search, answer]`` in order), as shipped;
* ``tool-sequence, ideal failures``: the same expectation with its failing checks built by a
  function written for this one expectation: no dispatch, no loop over checkers, the message
  written inline. Its results are checked equal to assertly's (outcome, score, message,
  expected, actual, details) on every response before timing, so it does exactly the same
  work, as cheaply as Python allows. It bounds what any faster failure path could give;
* ``hand-written floor``: the least a Python function can do for the same verdicts: parse,
  read the names, test the order, and on failure a message listing the calls as the agent
  sent them (no result objects, no re-written arguments). Verdicts checked equal.

Run: ``.venv/bin/python bench/trajectory_floor.py [--rounds N]``. Not part of `make bench`:
it answers one question (docs/performance.md, "Trajectory checks").
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

import assertly
import engine_workload as ew
import trajectory_workload as tw
from assertly.engine import _compile
from assertly.engine._result import FAILED, AssertionResult, CheckResult
from assertly.engine.trajectory._trace import FORMAT_LABELS

_PREFIXES = tuple(f"{number}. " for number in range(1, 21))
_WEIGHTS = (1.0,)
_loads, _dumps = orjson.loads, orjson.dumps
_PASS = ("passed",)


def ideal_failure(trace: Any) -> CheckResult:
    """The failing result of ``tool-sequence [search, answer]``, written for it alone."""
    names = trace.names
    if "search" not in names:
        score, problem = 0.0, "step 1 (search) is not called"
    else:
        score = 0.5
        problem = f"step 2 (answer) is not called after call {names.index('search') + 1}"
    parts: list[str] = []
    actual: list[dict[str, Any]] = []
    add, keep = parts.append, actual.append
    for prefix, name, raw in zip(_PREFIXES, names, trace.raw, strict=False):
        arguments = raw if type(raw) is dict else _loads(raw)
        keep({"name": name, "arguments": arguments})
        add(f"{prefix}{name}({_dumps(arguments).decode()})")
    count = len(names)
    noun = "call" if count == 1 else "calls"
    message = (
        f"Expected calls in this order: search → answer; {problem}; got {count} {noun} "
        f"({FORMAT_LABELS[trace.format]}): {' → '.join(parts)}"
    )
    result = AssertionResult(
        "tool-sequence",
        FAILED,
        score,
        message,
        None,
        {"mode": "in_order", "calls": ["search", "answer"]},
        actual,
        (),
        {"trace_format": trace.format, "calls": count},
    )
    return CheckResult(FAILED, score, [result], None, None, None, _WEIGHTS)


def hand_written(output: Any, context: dict[str, Any] | None = None) -> tuple[Any, ...]:
    """``tool-sequence [search, answer]`` on this workload's five formats, by hand."""
    if context is not None:
        calls = context["tool_calls"]
        names = [call["name"] for call in calls]
        arguments = [call["arguments"] for call in calls]
    elif type(output) is dict:
        calls = output["tool_calls"]
        names = [call["name"] for call in calls]
        arguments = [call["arguments"] for call in calls]
    else:
        data = _loads(output)
        if "choices" in data:
            functions = [call["function"] for call in data["choices"][0]["message"]["tool_calls"]]
            names = [function["name"] for function in functions]
            arguments = [function["arguments"] for function in functions]
        elif "output" in data:
            items = [item for item in data["output"] if item["type"] == "function_call"]
            names = [item["name"] for item in items]
            arguments = [item["arguments"] for item in items]
        else:
            blocks = [block for block in data["content"] if block["type"] == "tool_use"]
            names = [block["name"] for block in blocks]
            arguments = [block["input"] for block in blocks]
    if "search" in names and "answer" in names[names.index("search") + 1 :]:
        return _PASS
    shown = " → ".join(
        [
            f"{prefix}{name}({value if type(value) is str else _dumps(value).decode()})"
            for prefix, name, value in zip(_PREFIXES, names, arguments, strict=False)
        ]
    )
    return ("failed", f"Expected search → answer in order; got {len(names)}: {shown}")


def main() -> None:
    """Print each way's µs per check and its ratio to `contains`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=56)
    parser.add_argument("--responses", type=int, default=5000)
    rounds, count = parser.parse_args().rounds, parser.parse_args().responses
    items = tw.make_responses(random.Random(ew.SEED + 16), count)
    by_format = {name: items[i :: len(tw.FORMATS)] for i, name in enumerate(tw.FORMATS)}
    contains = assertly.compile(tw.CONTAINS)
    shipped = assertly.compile(tw.TOOL_SEQUENCE)
    ideal = assertly.compile(tw.TOOL_SEQUENCE)
    judged = _compile.Expectation._trace_not_passed

    def patched(
        self: Any, output: Any, context: Any, now: Any, ctx: Any, trace: Any, v: Any
    ) -> Any:
        if self is ideal and type(trace) is _compile.Trace:
            return ideal_failure(trace)
        return judged(self, output, context, now, ctx, trace, v)

    _compile.Expectation._trace_not_passed = patched  # type: ignore[method-assign]
    for output, context in items:  # the same work: equal results, equal verdicts
        want = shipped.check(output, context=context).to_dict()
        assert ideal.check(output, context=context).to_dict() == want, (output, want)
        assert (hand_written(output, context) is _PASS) == want["passed"], output
    ways: dict[str, Callable[..., Any]] = {
        "contains": contains.check,
        "tool-sequence": shipped.check,
        "tool-sequence, ideal failures": ideal.check,
        "hand-written floor": hand_written,
    }
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})
    best: dict[tuple[str, str], float] = {}
    for _ in range(rounds):
        for format, group in by_format.items():
            for name, way in ways.items():
                gc.collect()
                started = time.perf_counter()
                for output, context in group:
                    way(output, context=context)
                elapsed = time.perf_counter() - started
                best[(name, format)] = min(best.get((name, format), elapsed), elapsed)
    base = sum(best[("contains", format)] for format in by_format)
    failing = sum(not shipped.check(o, context=c).passed for o, c in items)
    print(f"{count:,} responses ({failing:,} fail tool-sequence), best of {rounds} rounds")
    for name in ways:
        total = sum(best[(name, format)] for format in by_format)
        by = ", ".join(
            f"{format} {best[(name, format)] / len(by_format[format]) * 1e6:.2f}"
            for format in by_format
        )
        print(f"{name:30} {total / count * 1e6:5.2f} µs  {total / base:.2f}x contains  ({by})")


if __name__ == "__main__":
    main()
