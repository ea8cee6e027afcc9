"""The engine section: responses judged per second, against the baseline and the peers."""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict
from functools import partial
from typing import Any

import assertly
import engine_bench as eb
import engine_workload as ew
import workload as wl
from harness import Run, Table, log, pass_s, pinned, rate
from sections.peer_runs import promptfoo_eval, start_workers

CHUNKS = 7  # each peer judges 1/7 of the outputs per engine round
TYPED_NAMES = [entry["type"] for entry in ew.TYPED]

# Why the engine figures interleave: this machine's vCPUs change speed by up to twofold for
# seconds at a time (the speed probe shows it), so two tools timed one after the other can meet
# different machines. Instead the suite times them in rounds: in every round, assertly, the
# baseline, runsight-core and promptfoo each judge for a similar slice of time (the peers one
# chunk of the outputs each, in turn), so every tool's figure is averaged over the same
# stretch of time. A figure is total time over responses judged, in all its slots.


def assertly_passes(typed: assertly.Expectation, outputs: Sequence[str]) -> list[str]:
    """Per-assertion verdicts of mix (a), one '1'/'0' string per response."""
    return ["".join("1" if r.passed else "0" for r in typed.check(t).results) for t in outputs]


def compare(
    ours: Sequence[str], theirs: Sequence[str | None], outputs: Sequence[str], limit: int = 3
) -> dict[str, Any]:
    """Where a peer's per-assertion verdicts differ from assertly's."""
    by_type: Counter[str] = Counter()
    examples: list[dict[str, Any]] = []
    differing = missing = 0
    for index, (mine, other) in enumerate(zip(ours, theirs, strict=True)):
        if other is None or len(other) != len(mine):
            missing += 1
            continue
        diffs = [i for i, (a, b) in enumerate(zip(mine, other, strict=True)) if a != b]
        if not diffs:
            continue
        differing += 1
        by_type.update(TYPED_NAMES[i] for i in diffs)
        if len(examples) < limit:
            verdicts = {TYPED_NAMES[i]: {"assertly": mine[i], "peer": other[i]} for i in diffs}
            examples.append({"response": index, "verdicts": verdicts, "output": outputs[index]})
    return {
        "responses_compared": len(ours) - missing,
        "responses_without_verdicts": missing,
        "responses_differing": differing,
        "assertions_differing_by_type": dict(by_type),
        "examples": examples,
    }


def interleaved(run: Run, typed: assertly.Expectation, outputs: list[str]) -> dict[str, Any]:
    """Mix (a) by assertly, the baseline and every installed peer, in interleaved rounds."""
    sizes = run.sizes
    rounds = sizes.rounds  # a multiple of CHUNKS: every chunk is timed as often as the others
    log(f"engine: starting the peers' workers ({', '.join(run.peers) or 'none'})")
    workers = start_workers(run, outputs, CHUNKS)
    found: dict[str, Any] = {}
    try:
        ours = assertly_passes(typed, outputs)  # untimed: verdicts and warm-up
        base = ["".join("1" if ok else "0" for ok in ew.baseline_typed(t)) for t in outputs]
        run.agreement["hand-written baseline"] = compare(ours, base, outputs)
        for key, worker in workers.items():
            verdicts = worker.ready()
            found[key] = {k: v for k, v in verdicts.items() if k != "passes"}
            run.agreement[f"{key} in-process"] = compare(ours, verdicts["passes"], outputs)

        def judge_all() -> None:
            for text in outputs:
                typed.check(text)

        def baseline_all() -> None:
            for text in outputs:
                all(ew.baseline_typed(text))

        # Each round gives assertly and the baseline about `slot_s` of passes over all outputs.
        per_pass = {"assertly": pass_s(judge_all), "baseline": pass_s(baseline_all)}
        loops = {"assertly": judge_all, "baseline": baseline_all}
        repeats = {k: max(1, round(sizes.slot_s / v)) for k, v in per_pass.items()}
        slots: dict[str, list[tuple[float, int]]] = {"assertly": [], "baseline": []}
        log(
            f"engine: {rounds} interleaved rounds; per round {repeats['assertly']} assertly "
            f"passes, {repeats['baseline']} baseline passes, one chunk (1/{CHUNKS}) per peer"
        )
        with pinned() as core:
            for number in range(rounds):
                for key, loop in loops.items():
                    for _ in range(repeats[key]):
                        slots[key].append((pass_s(loop), len(outputs)))
                for worker in workers.values():
                    worker.timed(number % CHUNKS)
    finally:
        for worker in workers.values():
            worker.close()
    for key, worker in workers.items():
        slots[key] = worker.slots
    for key, taken in slots.items():
        seconds, responses = sum(s for s, _ in taken), sum(r for _, r in taken)
        found.setdefault(key, {}).update(
            slots=taken,
            timed_s=seconds,
            responses_judged=responses,
            us_per_response=seconds / responses * 1e6,
            responses_per_s=responses / seconds,
        )
    found["rounds"], found["chunks"], found["cpu_pinned"] = rounds, CHUNKS, core
    return found


def _timed(found: dict[str, Any]) -> str:
    return f"{found['timed_s']:.1f} s timed, {found['responses_judged']:,} judged"


def section_engine(run: Run) -> None:
    """Responses judged per second: mix (a) against the baseline and the peers; (b), (c), (b')."""
    sizes = run.sizes
    n = sizes.engine
    rng = random.Random(ew.SEED)
    typed, expect = assertly.compile(ew.TYPED), assertly.compile(ew.EXPECT)
    typed_items = ew.make_responses(rng, n, wl.TYPED_WEIGHTS)
    expect_items = ew.make_responses(rng, n, {"json": 0.75, "fenced": 0.25})
    assert typed_items == wl.typed_outputs(n), "the peers must get mix (a)'s exact outputs"
    outputs = [text for _, text in typed_items]
    found = interleaved(run, typed, outputs)
    engine: dict[str, Any] = {"responses": n, "mix_a": found}
    run.results["engine"] = engine
    kinds = Counter(kind for kind, _ in typed_items)
    engine["mix_a_kinds"] = dict(kinds)
    engine["mix_a_mean_chars"] = sum(len(t) for t in outputs) / n

    a = found["assertly"]
    a_us = a["us_per_response"]
    table = run.table
    label = f"(a) typed list, 10 assertions, {n:,} responses"
    table.add(
        "engine",
        label,
        f"assertly {assertly.__version__}",
        rate(a["responses_per_s"], "resp/s"),
        1.0,
        f"{a_us:.1f} µs/response, one core; {_timed(a)}",
    )
    rows = [
        ("baseline", "hand-written Python", "hand-written baseline", ""),
        (
            "runsight",
            f"{run.peer_name('runsight')} in-process",
            "runsight in-process",
            ", one core",
        ),
        ("promptfoo", f"{run.peer_name('promptfoo')} in-process", "promptfoo in-process", ""),
    ]
    for key, tool, agreement, where in rows:
        if key not in found:
            table.add("engine", "(a)", tool, run.missing(key))
            continue
        us = found[key]["us_per_response"]
        differ = run.agreement[agreement]["responses_differing"]
        table.add(
            "engine",
            "(a)",
            tool,
            rate(found[key]["responses_per_s"], "resp/s"),
            us / a_us,
            f"{us:,.1f} µs{where}; {_timed(found[key])}; {differ} of {n:,} responses judged "
            "differently"
            + (
                f"; assertly takes {a_us / us:.2f}x its time (target <= {eb.TARGETS['(a)']:g}x)"
                if key == "baseline"
                else ""
            ),
        )
    promptfoo_eval_row(run, outputs, a_us)
    expect_mixes(run, typed, expect, typed_items, expect_items)


def expect_mixes(
    run: Run,
    typed: assertly.Expectation,
    expect: assertly.Expectation,
    typed_items: list[tuple[str, str]],
    expect_items: list[tuple[str, str]],
) -> None:
    """(b), (c), (b'): assertly alone (no peer has the expect dict), one after the other."""
    sizes, table, n = run.sizes, run.table, run.sizes.engine
    engine = run.results["engine"]
    dicts = [("dict", json.loads(text)) for kind, text in expect_items if kind == "json"]
    plans = {
        ("(b)", "expect dict, 10 assertions"): [(expect, *item) for item in expect_items],
        ("(c)", "mixed, alternating (a)/(b)"): [
            (typed, *typed_items[i]) if i % 2 == 0 else (expect, *expect_items[i]) for i in range(n)
        ],
        ("(b')", "expect dict on parsed dicts"): [(expect, *item) for item in dicts],
    }
    mixes = []
    with pinned():
        for (name, description), plan in plans.items():
            seconds = pass_s(partial(_check_all, plan))
            passes = max(3, math.ceil(sizes.rounds * sizes.slot_s / seconds))
            mixes.append(eb.bench_engine(name, description, plan, passes))
    engine["mixes"] = [asdict(mix) for mix in mixes]
    floors = expect_floors(run, expect, {"(b)": expect_items, "(b')": dicts})
    for mix in mixes:
        us = sum(mix.runs_s) / len(mix.runs_s) / mix.responses * 1e6
        note = f"{us:.1f} µs/response; {sum(mix.runs_s):.1f} s timed"
        if mix.name == "(b)":
            note += "; no peer has the expect-dict dialect"
        table.add(
            "engine",
            f"{mix.name} {mix.description}",
            "assertly",
            rate(1e6 / us, "resp/s"),
            None,
            note,
        )
        if mix.name in floors:
            floor_row(table, mix.name, floors[mix.name])
    found = engine["mix_a"]
    a_ratio = found["assertly"]["us_per_response"] / found["baseline"]["us_per_response"]
    engine["over_floor"] = {"(a)": a_ratio, **{k: v["ratio"] for k, v in floors.items()}}


def _check_all(plan: Sequence[tuple[assertly.Expectation, str, Any]]) -> list[Any]:
    return [e.check(r) for e, _, r in plan]


def floor_row(table: Table, name: str, floor: dict[str, Any]) -> None:
    """The hand-written floor of an expect-dict mix, with assertly's ratio to it."""
    ours, mine = floor["assertly_us"], floor["floor_us"]
    table.add(
        "engine",
        name,
        "hand-written Python",
        rate(1e6 / mine, "resp/s"),
        mine / ours,
        f"{mine:.1f} µs; interleaved with assertly's {ours:.1f} µs over {floor['rounds']} "
        f"rounds: assertly takes {floor['ratio']:.2f}x its time (target <= "
        f"{eb.TARGETS[name]:g}x); {floor['disagreements']} of {floor['responses']:,} "
        "responses judged differently",
    )


def expect_floors(
    run: Run, expect: assertly.Expectation, items: dict[str, list[tuple[str, Any]]]
) -> dict[str, dict[str, Any]]:
    """(b) and (b') against the hand-written floor, in alternating passes on one core."""
    found: dict[str, dict[str, Any]] = {}
    with pinned():
        for name, pairs in items.items():
            responses = [response for _, response in pairs]
            disagreements = sum(
                ew.baseline_expect(r) != [x.passed for x in expect.check(r).results]
                for r in responses
            )

            def ours(responses: list[Any] = responses) -> None:
                for response in responses:
                    expect.check(response)

            def floor(responses: list[Any] = responses) -> None:
                for response in responses:
                    all(ew.baseline_expect(response))

            seconds = pass_s(ours)
            rounds = max(6, math.ceil(run.sizes.rounds * run.sizes.slot_s / seconds / 2))
            spent = {"assertly": 0.0, "floor": 0.0}
            for _ in range(rounds):
                spent["assertly"] += pass_s(ours)
                spent["floor"] += pass_s(floor)
            count = len(responses) * rounds
            ours_us, floor_us = spent["assertly"] / count * 1e6, spent["floor"] / count * 1e6
            found[name] = {
                "assertly_us": ours_us,
                "floor_us": floor_us,
                "ratio": ours_us / floor_us,
                "rounds": rounds,
                "responses": len(responses),
                "disagreements": disagreements,
            }
    run.results["engine"]["expect_floors"] = found
    return found


def promptfoo_eval_row(run: Run, outputs: list[str], assertly_us: float) -> None:
    """Mix (a) through `promptfoo eval`: the cost per response, start-up subtracted."""
    promptfoo = run.peer("promptfoo")
    if promptfoo is None:
        run.table.add("engine", "(a)", "promptfoo eval", run.missing("promptfoo"))
        return
    n, name = len(outputs), run.peer_name("promptfoo")
    log(f"engine: promptfoo eval, echo provider, on 10 and on {n:,} tests")
    small, _ = promptfoo_eval(
        promptfoo, wl.promptfoo_config(outputs[:10], ew.TYPED, "engine, 10"), run.work, "pf_10"
    )
    full, out = promptfoo_eval(
        promptfoo, wl.promptfoo_config(outputs, ew.TYPED, "engine"), run.work, "pf_engine"
    )
    found: dict[str, Any] = {"tests_10": small, "tests_all": full}
    run.results["engine"]["promptfoo_eval"] = found
    if not (full["finished"] and small["finished"]):
        code = full["exit_code"] if not full["finished"] else small["exit_code"]
        run.table.add("engine", "(a)", f"{name} eval", f"failed: exit {code}", None, "see eval.log")
        return
    echoed, passes = wl.promptfoo_verdicts(out)
    ours = assertly_passes(assertly.compile(ew.TYPED), outputs)
    theirs = ["".join("1" if p else "0" for p in row) if row else None for row in passes]
    agreement = compare(ours, theirs, outputs)
    agreement["outputs_not_echoed_verbatim"] = sum(
        e != o for e, o in zip(echoed, outputs, strict=True)
    )
    run.agreement["promptfoo eval"] = agreement
    # Judging cost per response: the difference between the two runs (start-up, config
    # loading and the fixed costs of an eval cancel out).
    us = (full["wall_s"] - small["wall_s"]) / (n - 10) * 1e6
    found.update(us_per_response=us, responses_per_s=1e6 / us)
    run.table.add(
        "engine",
        "(a)",
        f"{name} eval (echo)",
        rate(1e6 / us, "resp/s"),
        us / assertly_us,
        f"{us:,.0f} µs = ({full['wall_s']:.1f} s - {small['wall_s']:.1f} s for 10) / {n - 10:,}; "
        f"{agreement['responses_differing']} of {n:,} responses judged differently",
    )
