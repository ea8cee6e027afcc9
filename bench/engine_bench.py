"""Micro-benchmark of the assertion engine's hot path: `Expectation.check` on one core.

Not a test. A fixed, seeded mix of realistic agent outputs (pure JSON with a results array,
prose around a fenced ```json block, plain prose) is judged by two compiled 10-assertion
expectations, a typed list (a) and an expect dict (b), and by a run alternating both (c).
Compilation happens once, outside the timing; every timed loop builds the `Response` from text
as a runner would. A hand-written Python version of mixes (a) and (b) gives a floor to compare
with, and must agree with the engine on every verdict. The expectations, the responses and the
floors are bench/engine_workload.py; this module times them.

    .venv/bin/python bench/engine_bench.py            # 20,000 responses per mix, best of 5
    .venv/bin/python bench/engine_bench.py --quick    # a few seconds

Figures are printed as a table and written to bench/results/engine.json. `make bench` runs the
whole suite instead (bench/suite.py: this engine benchmark, the peers, end to end, the runner
and start-up), which writes bench/results/latest.json.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import random
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

import assertly
from engine_workload import EXPECT, SEED, TYPED, baseline_expect, baseline_typed, make_responses
from harness import git_commit, pin_to_one_core

ROOT = Path(__file__).resolve().parent
RESULTS = ROOT / "results" / "engine.json"

# --- timing -----------------------------------------------------------------------------------


@dataclass
class MixResult:
    """The figures of one mix."""

    name: str
    description: str
    responses: int
    best_s: float
    runs_s: list[float]
    responses_per_s: float
    us_per_response: float
    verdicts: dict[str, float]
    kinds: dict[str, int]
    mean_chars: float
    notes: dict[str, Any] = field(default_factory=dict)


def _time(loop: Callable[[], object], repeat: int) -> list[float]:
    runs = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        loop()
        runs.append(time.perf_counter() - start)
    return runs


def _fractions(outcomes: Counter[str], total: int) -> dict[str, float]:
    return {key: outcomes.get(key, 0) / total for key in ("passed", "failed", "error")}


def _mix_result(
    name: str,
    description: str,
    items: Sequence[tuple[str, Any]],
    runs: list[float],
    outcomes: Counter[str],
    notes: dict[str, Any] | None = None,
) -> MixResult:
    best = min(runs)
    count = len(items)
    chars = [len(text) if isinstance(text, str) else len(orjson.dumps(text)) for _, text in items]
    return MixResult(
        name=name,
        description=description,
        responses=count,
        best_s=best,
        runs_s=runs,
        responses_per_s=count / best,
        us_per_response=best / count * 1e6,
        verdicts=_fractions(outcomes, count),
        kinds=dict(Counter(kind for kind, _ in items)),
        mean_chars=sum(chars) / count,
        notes=notes or {},
    )


def bench_engine(
    name: str,
    description: str,
    plan: Sequence[tuple[assertly.Expectation, str, Any]],
    repeat: int,
) -> MixResult:
    """Time `Expectation.check` over ``plan`` = [(expectation, kind, response), ...]."""
    outcomes: Counter[str] = Counter()
    for expectation, _, response in plan:  # untimed pass: verdicts, and a warm-up
        outcomes[expectation.check(response).outcome.value] += 1
    pairs = [(expectation, response) for expectation, _, response in plan]

    def loop() -> None:
        for expectation, response in pairs:
            expectation.check(response)

    runs = _time(loop, repeat)
    items = [(kind, response) for _, kind, response in plan]
    return _mix_result(name, description, items, runs, outcomes)


def bench_floor(
    name: str,
    items: Sequence[tuple[str, Any]],
    floor: Callable[[Any], list[bool]],
    engine: assertly.Expectation,
    repeat: int,
    shown: str = "response",
) -> MixResult:
    """Time a hand-written floor (`floor`) and compare every verdict with the engine's.

    ``shown`` names the response in the first disagreement's note ("text" for mix (a)).
    """
    outcomes: Counter[str] = Counter()
    disagreements = 0
    example: dict[str, Any] | None = None
    for _, response in items:
        mine = floor(response)
        outcomes["passed" if all(mine) else "failed"] += 1
        theirs = [result.passed for result in engine.check(response).results]
        if mine != theirs:
            disagreements += 1
            if example is None:
                example = {shown: str(response)[:200], "baseline": mine, "engine": theirs}
    responses = [response for _, response in items]

    def loop() -> None:
        for response in responses:
            all(floor(response))

    runs = _time(loop, repeat)
    notes: dict[str, Any] = {"disagreements_with_engine": disagreements}
    if example is not None:
        notes["first_disagreement"] = example
    return _mix_result(name, "hand-written Python", items, runs, outcomes, notes)


# --- report -----------------------------------------------------------------------------------


def _percent(value: float) -> str:
    return f"{value * 100:5.1f}%"


# Targets of issue #20: the engine's time per response over the hand-written floor's.
TARGETS = {"(a)": 2.0, "(b)": 3.0, "(b')": 3.0}


def ratios(mixes: list[MixResult], baselines: list[MixResult]) -> dict[str, float]:
    """Engine time over floor time per response, for each mix that has a floor."""
    found: dict[str, float] = {}
    for baseline in baselines:
        mix_name = baseline.name.removeprefix("baseline ")
        mix = next(m for m in mixes if m.name == mix_name)
        found[mix_name] = mix.us_per_response / baseline.us_per_response
    return found


def print_table(mixes: list[MixResult], baselines: list[MixResult], header: str) -> None:
    """Print the results table."""
    print(header)
    print()
    columns = (
        f"{'mix':<40} {'responses/s':>12} {'µs/response':>12} "
        f"{'passed':>7} {'failed':>7} {'error':>7}"
    )
    print(columns)
    print("-" * len(columns))
    for mix in [*mixes, *baselines]:
        verdicts = mix.verdicts
        print(
            f"{mix.name + ' ' + mix.description:<40.40} {mix.responses_per_s:>12,.0f} "
            f"{mix.us_per_response:>12.1f} {_percent(verdicts['passed']):>7} "
            f"{_percent(verdicts['failed']):>7} {_percent(verdicts['error']):>7}"
        )
    print()
    for name, ratio in ratios(mixes, baselines).items():
        mix = next(m for m in mixes if m.name == name)
        floor = next(b for b in baselines if b.name == f"baseline {name}")
        target = TARGETS.get(name)
        verdict = (
            ""
            if target is None
            else f" (target <= {target:g}x: {'met' if ratio <= target else 'NOT met'})"
        )
        print(
            f"engine {name} / hand-written baseline {name}: {ratio:.2f}x the time per response "
            f"({mix.us_per_response:.1f} µs vs {floor.us_per_response:.1f} µs){verdict}"
        )
    for baseline in baselines:
        disagreements = baseline.notes["disagreements_with_engine"]
        if disagreements:
            print(
                f"WARNING: {baseline.name} disagrees with the engine on {disagreements} "
                f"responses; first: {baseline.notes['first_disagreement']}"
            )
        else:
            print(f"{baseline.name} and the engine agree on every assertion of every response")
    for mix in mixes:
        kinds = ", ".join(f"{kind} {count}" for kind, count in sorted(mix.kinds.items()))
        print(f"  {mix.name} responses: {kinds}; mean {mix.mean_chars:.0f} characters")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2,000 responses, best of 3")
    parser.add_argument("-n", "--responses", type=int, help="responses per mix (default 20,000)")
    parser.add_argument("-r", "--repeat", type=int, help="timed repetitions (default 5)")
    parser.add_argument("-o", "--output", type=Path, default=RESULTS, help="JSON results file")
    args = parser.parse_args(argv)
    n = args.responses or (2_000 if args.quick else 20_000)
    repeat = args.repeat or (3 if args.quick else 5)

    core = pin_to_one_core()
    rng = random.Random(SEED)
    typed = assertly.compile(TYPED)
    expect = assertly.compile(EXPECT)

    typed_items = make_responses(rng, n, {"json": 0.5, "fenced": 0.3, "prose": 0.2})
    expect_items = make_responses(rng, n, {"json": 0.75, "fenced": 0.25})
    expect_dicts = [("dict", orjson.loads(text)) for kind, text in expect_items if kind == "json"]
    mixed_plan = [
        (typed, *typed_items[i]) if i % 2 == 0 else (expect, *expect_items[i]) for i in range(n)
    ]

    mixes = [
        bench_engine(
            "(a)", "typed list, 10 assertions", [(typed, k, t) for k, t in typed_items], repeat
        ),
        bench_engine(
            "(b)", "expect dict, 10 assertions", [(expect, k, t) for k, t in expect_items], repeat
        ),
        bench_engine("(c)", "mixed, alternating (a)/(b)", mixed_plan, repeat),
        bench_engine(
            "(b')",
            "expect dict on parsed dicts",
            [(expect, k, value) for k, value in expect_dicts],
            repeat,
        ),
    ]
    baselines = [
        bench_floor("baseline (a)", typed_items, baseline_typed, typed, repeat, "text"),
        bench_floor("baseline (b)", expect_items, baseline_expect, expect, repeat),
        bench_floor("baseline (b')", expect_dicts, baseline_expect, expect, repeat),
    ]

    header = (
        f"assertly {assertly.__version__} engine benchmark: {n:,} responses per mix "
        f"(b': the JSON ones, pre-parsed), best of {repeat}, one process"
        + (f" pinned to CPU {core}" if core is not None else "")
        + f"; Python {platform.python_version()} on {platform.machine()}, seed {SEED}"
    )
    print_table(mixes, baselines, header)

    typed_mix = mixes[0]
    report = {
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "commit": git_commit(),
        "assertly": assertly.__version__,
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "machine": platform.machine(),
        "platform": platform.platform(),
        "cpu_pinned": core,
        "seed": SEED,
        "responses_per_mix": n,
        "repeat": repeat,
        "quick": args.quick,
        "mixes": [asdict(mix) for mix in mixes],
        "baseline": asdict(baselines[0]),
        "baselines": [asdict(baseline) for baseline in baselines],
        "engine_over_baseline": typed_mix.us_per_response / baselines[0].us_per_response,
        "engine_over_baselines": ratios(mixes, baselines),
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
