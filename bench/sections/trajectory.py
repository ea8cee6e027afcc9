"""The trajectory section: tool-call checks per second against a plain `contains`."""

from __future__ import annotations

import math
import random
from collections import Counter
from typing import Any

import assertly
import engine_workload as ew
import trajectory_workload as tw
from harness import Run, log, pass_s, pinned, rate

TRAJECTORY_WORKLOADS: dict[str, list[dict[str, Any]]] = {
    "contains": tw.CONTAINS,
    "is-json": [{"type": "is-json"}],
    "tool-called": tw.TOOL_CALLED,
    "tool-sequence": tw.TOOL_SEQUENCE,
    "tool-call-count": tw.TOOL_CALL_COUNT,
    "4 x contains": tw.FOUR_CONTAINS,
    "4 trajectory": tw.FOUR_TRAJECTORY,
}


def section_trajectory(run: Run) -> None:
    """Trajectory checks per second against a plain `contains` on the same responses.

    Every timed check builds the `Response` from the output as the runner does, so a JSON
    text reply is parsed, and its calls read, within the check. Workloads and formats are
    timed in interleaved rounds on one core. Each slot is a few milliseconds, so a burst of
    another process's work can double one; a figure is the best of its rounds, the time the
    work takes when nothing else interferes, for assertly and `contains` alike.
    """
    n = run.sizes.engine
    rng = random.Random(ew.SEED + 16)
    items = tw.make_responses(rng, n)
    by_format = {name: items[index :: len(tw.FORMATS)] for index, name in enumerate(tw.FORMATS)}
    compiled = {name: assertly.compile(spec) for name, spec in TRAJECTORY_WORKLOADS.items()}
    verdicts: dict[str, dict[str, int]] = {}
    for name, expectation in compiled.items():  # untimed: warm-up and a look at the verdicts
        outcomes = Counter(
            expectation.check(output, context=context).outcome.value for output, context in items
        )
        verdicts[name] = dict(outcomes)
    log(f"trajectory: {len(compiled)} workloads x {len(by_format)} formats, {n:,} responses")
    timed: dict[tuple[str, str], float] = {}
    rounds = run.sizes.rounds * 4
    with pinned():
        for _ in range(rounds):
            for format, group in by_format.items():
                for name, expectation in compiled.items():

                    def loop(expectation: Any = expectation, group: Any = group) -> None:
                        for output, context in group:
                            expectation.check(output, context=context)

                    key = (name, format)
                    timed[key] = min(timed.get(key, math.inf), pass_s(loop))
    checks = {name: len(TRAJECTORY_WORKLOADS[name]) for name in compiled}
    per_check_us: dict[str, float] = {}
    per_format: dict[str, dict[str, float]] = {}
    for name in compiled:
        seconds = sum(timed[(name, format)] for format in by_format)
        per_check_us[name] = seconds / (n * checks[name]) * 1e6
        per_format[name] = {
            format: timed[(name, format)] / (len(group) * checks[name]) * 1e6
            for format, group in by_format.items()
        }
    run.results["trajectory"] = {
        "responses": n,
        "rounds": rounds,
        "workloads": TRAJECTORY_WORKLOADS,
        "verdicts": verdicts,
        "us_per_check": per_check_us,
        "us_per_check_by_format": per_format,
    }
    label = f"{n:,} tool-calling responses, 5 formats, best of {rounds} rounds"
    base = per_check_us["contains"]
    for name in compiled:
        us = per_check_us[name]
        if name.startswith("4 "):
            reference, against = per_check_us["4 x contains"], "4 x contains"
        else:
            reference, against = base, "contains"
        note = f"{us:.2f} µs/check, {us / reference:.2f}x the time of {against}"
        if name in ("tool-called", "tool-sequence", "tool-call-count", "4 trajectory"):
            base_by_format = per_format[against]
            ratios = ", ".join(
                f"{format} {per_format[name][format] / base_by_format[format]:.1f}x"
                for format in by_format
            )
            note += f" (by format: {ratios})"
        run.table.add("trajectory", label, name, rate(1e6 / us, "checks/s"), None, note)
