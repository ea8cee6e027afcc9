"""Micro-benchmark of the assertion engine's hot path: `Expectation.check` on one core.

Not a test. A fixed, seeded mix of realistic agent outputs (pure JSON with a results array,
prose around a fenced ```json block, plain prose) is judged by two compiled 10-assertion
expectations, a typed list (a) and an expect dict (b), and by a run alternating both (c).
Compilation happens once, outside the timing; every timed loop builds the `Response` from text
as a runner would. A hand-written Python version of mix (a) gives a floor to compare with,
and must agree with the engine on every verdict.

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
import os
import platform
import random
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from rapidfuzz.distance import Levenshtein

import assertly

SEED = 42
ROOT = Path(__file__).resolve().parent
RESULTS = ROOT / "results" / "engine.json"

# --- the two expectations ---------------------------------------------------------------------

SUMMARY_REFERENCE = "Found 2 security incidents in January"

TYPED: list[dict[str, Any]] = [
    {"type": "contains", "value": "security"},
    {"type": "icontains", "value": "INCIDENT"},
    {"type": "regex", "value": r"\b20\d\d-\d\d-\d\d"},
    {"type": "is-json"},
    {"type": "contains-json", "value": {"type": "object", "required": ["status", "results"]}},
    {
        "type": "levenshtein",
        "value": SUMMARY_REFERENCE,
        "threshold": 3,
        "transform": "json_path:$.summary",
    },
    {"type": "word-count", "value": {"min": 5, "max": 150}},
    {"type": "starts-with", "value": "{"},
    {"type": "not-contains", "value": "Traceback"},
    {"type": "equals", "value": "success", "transform": "json_path:$.status"},
]

EXPECT: dict[str, Any] = {
    "status": "success",
    "results_min": 1,
    "has_fields": ["results", "summary", "pagination.total"],
    "field_equals": {"pagination.offset": 0},
    "all_match": {"path": "results[*].metadata.type", "value": "note"},
    "all_match_pattern": {"path": "results[*].file", "regex": "^journal/"},
    "all_have_tags": ["work", "security"],
    "all_dates_between": {
        "path": "results[*].metadata.created",
        "start": "2026-01-01T00:00:00Z",
        "end": "2026-01-31T23:59:59Z",
    },
    "all_in_range": {"path": "results[*].relevance", "min": 0.0, "max": 1.0},
    "sorted_desc": {"path": "results[*].relevance"},
}

# --- the responses ----------------------------------------------------------------------------

TOPICS = ["security", "incident", "outage", "phishing", "access review", "backup"]
FILLER = [
    "I searched the journal for matching entries and ranked them by relevance.",
    "The most relevant entry describes the response and the follow-up actions.",
    "Two of the entries mention the same credential rotation.",
    "Nothing in the personal folders was included.",
    "Let me know if you want me to widen the date range or include drafts.",
    "The incident review notes list owners for every open action item.",
    "I left out entries that only mention the topic in passing.",
]


def _agent_response(rng: random.Random) -> dict[str, Any]:
    """A search agent's JSON answer, sometimes wrong in one of the ways tests catch."""
    count = 0 if rng.random() < 0.03 else rng.randint(1, 3)
    results: list[dict[str, Any]] = []
    for index in range(count):
        day = rng.randint(1, 31)
        tags = ["work", "security", *rng.sample(["incident", "q1", "review", "vpn"], k=2)]
        results.append(
            {
                "file": f"journal/2026/01/{rng.choice(TOPICS).replace(' ', '-')}-{index}.md",
                "type": "note",
                "relevance": round(rng.uniform(0.3, 1.0), 2),
                "metadata": {
                    "type": "note",
                    "tags": tags,
                    "created": f"2026-01-{day:02d}T{rng.randint(0, 23):02d}:00:00Z",
                },
            }
        )
    if rng.random() < 0.9:
        results.sort(key=lambda item: -item["relevance"])
    if results:
        victim = rng.choice(results)
        roll = rng.random()
        if roll < 0.05:
            victim["file"] = "work/security-doc.md"
        elif roll < 0.10:
            victim["metadata"]["tags"] = ["work"]
        elif roll < 0.14:
            victim["metadata"]["created"] = "2026-02-05T10:00:00Z"
        elif roll < 0.16:
            victim["relevance"] = 1.2
        elif roll < 0.20:
            victim["metadata"]["type"] = "incident-log"
    found = len(results)
    summary = rng.choice(
        [
            f"Found {found} security incidents in January",
            f"Found {found} security incidents in January",
            f"Found {found} security incidents in january",
            f"Found {found} incidents",
            f"Found {found} security incident entries in Jan",
        ]
    )
    response: dict[str, Any] = {
        "status": "error" if rng.random() < 0.05 else "success",
        "summary": summary,
        "results": results,
        "pagination": {"total": found, "offset": 5 if rng.random() < 0.04 else 0},
    }
    if rng.random() < 0.03:
        del response["pagination"]
    return response


def _prose(rng: random.Random, data: dict[str, Any] | None = None) -> str:
    data = data or _agent_response(rng)
    topic = rng.choice(TOPICS)
    lines = [f"Summary: {data['summary']} about {topic}."]
    for item in data["results"][:2]:
        lines.append(
            f"The entry {item['file']} was created on {str(item['metadata']['created'])[:10]} "
            f"and scores {item['relevance']}."
        )
    lines.extend(rng.sample(FILLER, k=rng.randint(1, 3)))
    if rng.random() < 0.02:
        lines.append("Traceback (most recent call last): the search tool crashed once.")
    return " ".join(lines)


def _pure_json(rng: random.Random) -> str:
    data = _agent_response(rng)
    if rng.random() < 0.7:
        return orjson.dumps(data).decode()
    return json.dumps(data, indent=2)


def _fenced(rng: random.Random) -> str:
    data = _agent_response(rng)
    intro = rng.choice(["Here is what I found:", "Search complete.", "Results below."])
    return f"{intro}\n\n```json\n{json.dumps(data, indent=2)}\n```\n\n{_prose(rng, data)}"


KINDS: dict[str, Callable[[random.Random], str]] = {
    "json": _pure_json,
    "fenced": _fenced,
    "prose": _prose,
}


def make_responses(rng: random.Random, n: int, weights: dict[str, float]) -> list[tuple[str, str]]:
    """``n`` (kind, text) pairs drawn with the given kind weights."""
    kinds = list(weights)
    chosen = rng.choices(kinds, weights=[weights[k] for k in kinds], k=n)
    return [(kind, KINDS[kind](rng)) for kind in chosen]


# --- the hand-written baseline for mix (a) ----------------------------------------------------

_DATE = re.compile(r"\b20\d\d-\d\d-\d\d")
# A word starts with a letter or digit (a fence or a dash alone is not one), as in the engine.
_WORD = re.compile(r"[A-Za-z0-9]\S*")
_DECODER = json.JSONDecoder()
_OPENER = re.compile(r"[\[{]")
_MISSING = object()


def _loads(text: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return _MISSING


def _schema_ok(value: Any) -> bool:
    return isinstance(value, dict) and "status" in value and "results" in value


def _contains_json(text: str, whole: Any) -> bool:
    if whole is not _MISSING:
        # The whole output is one JSON value: it is the only outermost value (if a container).
        return _schema_ok(whole)
    position = 0
    while (match := _OPENER.search(text, position)) is not None:
        try:
            value, end = _DECODER.raw_decode(text, match.start())
        except ValueError:
            position = match.start() + 1
            continue
        if _schema_ok(value):
            return True
        position = end
    return False


def _first(whole: Any, key: str) -> str | None:
    """``json_path:$.key`` as text, or None when the transform fails."""
    if type(whole) is not dict or key not in whole:
        return None
    value = whole[key]
    return value if type(value) is str else orjson.dumps(value).decode()


def baseline_typed(text: str) -> list[bool]:
    """Mix (a)'s ten checks, coded directly."""
    whole = _loads(text)
    summary = _first(whole, "summary")
    status = _first(whole, "status")
    words = len(_WORD.findall(text))
    return [
        "security" in text,
        "incident" in text.casefold(),
        _DATE.search(text) is not None,
        whole is not _MISSING,
        _contains_json(text, whole),
        summary is not None and Levenshtein.distance(summary, SUMMARY_REFERENCE) <= 3,
        5 <= words <= 150,
        text.startswith("{"),
        "Traceback" not in text,
        status == "success",
    ]


# --- the hand-written baseline for mix (b) ----------------------------------------------------

_JAN_START = datetime(2026, 1, 1, tzinfo=UTC)
_JAN_END = datetime(2026, 1, 31, 23, 59, 59, tzinfo=UTC)
_EXPECT_FAIL = [False] * len(EXPECT)


def _expect_json(text: Any) -> Any:
    """The JSON of a mix (b) response: the whole text, else its fenced block."""
    if type(text) is not str:
        return text
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        pass
    start = text.find("```json\n")
    end = text.find("\n```", start + 8)
    try:
        return orjson.loads(text[start + 8 : end]) if start >= 0 and end >= 0 else _MISSING
    except orjson.JSONDecodeError:
        return _MISSING


def _in_january(value: Any) -> bool:
    if type(value) is not str:
        return False
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return False
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return _JAN_START <= moment <= _JAN_END


def baseline_expect(response: Any) -> list[bool]:
    """Mix (b)'s ten assertions, coded directly: one walk over the results.

    An empty array passes the wildcard assertions, as in the engine; an element without one of
    the fields read fails every wildcard assertion (the bench's responses never lack one).
    """
    data = _expect_json(response)
    if type(data) is not dict:
        return _EXPECT_FAIL
    results = data.get("results")
    pagination = data.get("pagination")
    paged = type(pagination) is dict
    offset = pagination.get("offset", _MISSING) if paged else _MISSING
    walk = type(results) is list
    kinds = files = tags_ok = dates = in_range = ordered = walk
    if walk:
        previous: Any = None
        for item in results:
            try:
                metadata = item["metadata"]
                kind, tags, created = metadata["type"], metadata["tags"], metadata["created"]
                file, relevance = item["file"], item["relevance"]
            except (KeyError, TypeError):
                kinds = files = tags_ok = dates = in_range = ordered = False
                break
            if type(kind) is not str or kind != "note":
                kinds = False
            if type(file) is not str or not file.startswith("journal/"):
                files = False
            if type(tags) is not list or "work" not in tags or "security" not in tags:
                tags_ok = False
            if not _in_january(created):
                dates = False
            number = type(relevance) is int or type(relevance) is float
            if not number or not 0.0 <= relevance <= 1.0:
                in_range = False
            if not number or (previous is not None and relevance > previous):
                ordered = False
            previous = relevance
    return [
        data.get("status") == "success",
        walk and len(results) >= 1,
        "results" in data and "summary" in data and paged and "total" in pagination,
        (type(offset) is int or type(offset) is float) and offset == 0,
        kinds,
        files,
        tags_ok,
        dates,
        in_range,
        ordered,
    ]


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


def bench_baseline(
    items: Sequence[tuple[str, str]], engine: assertly.Expectation, repeat: int
) -> MixResult:
    """Time the hand-written checks and compare every verdict with the engine's."""
    outcomes: Counter[str] = Counter()
    disagreements = 0
    example: dict[str, Any] | None = None
    for _, text in items:
        mine = baseline_typed(text)
        outcomes["passed" if all(mine) else "failed"] += 1
        theirs = [result.passed for result in engine.check(text).results]
        if mine != theirs:
            disagreements += 1
            if example is None:
                example = {"text": text[:200], "baseline": mine, "engine": theirs}
    texts = [text for _, text in items]

    def loop() -> None:
        for text in texts:
            all(baseline_typed(text))

    runs = _time(loop, repeat)
    notes: dict[str, Any] = {"disagreements_with_engine": disagreements}
    if example is not None:
        notes["first_disagreement"] = example
    return _mix_result("baseline (a)", "hand-written Python", items, runs, outcomes, notes)


def bench_expect_baseline(
    name: str,
    items: Sequence[tuple[str, Any]],
    engine: assertly.Expectation,
    repeat: int,
) -> MixResult:
    """Time the hand-written checks of mix (b) and compare every verdict with the engine's."""
    outcomes: Counter[str] = Counter()
    disagreements = 0
    example: dict[str, Any] | None = None
    for _, response in items:
        mine = baseline_expect(response)
        outcomes["passed" if all(mine) else "failed"] += 1
        theirs = [result.passed for result in engine.check(response).results]
        if mine != theirs:
            disagreements += 1
            if example is None:
                example = {"response": str(response)[:200], "baseline": mine, "engine": theirs}
    responses = [response for _, response in items]

    def loop() -> None:
        for response in responses:
            all(baseline_expect(response))

    runs = _time(loop, repeat)
    notes: dict[str, Any] = {"disagreements_with_engine": disagreements}
    if example is not None:
        notes["first_disagreement"] = example
    return _mix_result(name, "hand-written Python", items, runs, outcomes, notes)


# --- report -----------------------------------------------------------------------------------


def _pin_to_one_core() -> int | None:
    if not hasattr(os, "sched_setaffinity"):
        return None
    try:
        core = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {core})
    except OSError:
        return None
    return core


def _git_commit() -> str | None:
    try:
        completed = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except OSError:
        return None
    commit = completed.stdout.strip()
    return commit or None


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

    core = _pin_to_one_core()
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
        bench_baseline(typed_items, typed, repeat),
        bench_expect_baseline("baseline (b)", expect_items, expect, repeat),
        bench_expect_baseline("baseline (b')", expect_dicts, expect, repeat),
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
        "commit": _git_commit(),
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
