"""`compare._matrix`: per-target summaries, paired comparisons and disagreements, on records
built by hand (the reports' tests run real matrix runs)."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from assertly._records import RunRecord, StepRecord, TrialRecord
from assertly._records import TestRecord as Cell
from assertly.compare import mcnemar_exact, wilson_interval
from assertly.compare._matrix import MatrixBuilder, TargetComparison, matrix_view


def cell(
    test: str,
    label: str,
    status: str,
    *,
    costs: tuple[float | None, ...] = (None,),
    latencies: tuple[float | None, ...] = (None,),
) -> Cell:
    """One cell of test ``test`` under target ``label``: one trial, one step per cost."""
    key = f"t.yaml::s::{test}[{label}]"
    steps = [
        StepRecord(f"step{n}", status, latency_ms=latency, cost_usd=cost)  # type: ignore[arg-type]
        for n, (cost, latency) in enumerate(zip(costs, latencies, strict=True))
    ]
    trial = TrialRecord(key, 1, status, 1.0, steps if status != "skipped" else [])  # type: ignore[arg-type]
    return Cell(key, test, test, "s", "t.yaml", status, None, [trial], target=label)  # type: ignore[arg-type]


def run_of(cells: list[Cell], targets: list[str]) -> RunRecord:
    return RunRecord("r", "2026-01-01T00:00:00Z", 1.0, tests=cells, targets=targets)


def test_a_run_of_one_target_has_no_matrix() -> None:
    plain = Cell("t.yaml::s::a", "a", "a", "s", "t.yaml", "passed", 1.0, [])
    assert matrix_view(run_of([plain], [])) is None


def test_summaries_count_each_target_and_sum_reported_costs() -> None:
    cells = [
        cell("a", "base", "passed", costs=(0.25, 0.5), latencies=(10.0, 30.0)),
        cell("a", "cand", "failed", latencies=(5.0,)),
        cell("b", "base", "error", costs=(1.0,), latencies=(20.0,)),
        cell("b", "cand", "skipped"),
        cell("c", "base", "passed", latencies=(40.0,)),
        cell("c", "cand", "passed"),
    ]
    view = matrix_view(run_of(cells, ["base", "cand"]))
    assert view is not None
    base, cand = view.by_target()["base"], view.by_target()["cand"]
    assert (base["total"], base["passed"], base["failed"], base["errored"], base["skipped"]) == (
        3,
        2,
        0,
        1,
        0,
    )
    assert base["pass_rate"] == pytest.approx(2 / 3)
    assert base["pass_rate_ci95"] == list(wilson_interval(2, 3))
    assert base["cost_usd"] == pytest.approx(1.75)
    assert base["costed_calls"] == 3 and base["calls"] == 4
    assert base["latency_p50_ms"] == 25.0  # median of 10, 20, 30, 40: the middle two's mean
    # The candidate: one skipped test is not judged; no call reported a cost.
    assert (cand["total"], cand["skipped"], cand["pass_rate"]) == (3, 1, 0.5)
    assert cand["cost_usd"] is None
    assert cand["latency_p50_ms"] == 5.0


def test_nothing_judged_gives_a_zero_rate_and_the_whole_interval() -> None:
    view = matrix_view(run_of([cell("a", "x", "skipped"), cell("a", "y", "skipped")], ["x", "y"]))
    assert view is not None
    summary = view.by_target()["x"]
    assert (summary["pass_rate"], summary["pass_rate_ci95"]) == (0.0, [0.0, 1.0])
    assert summary["latency_p50_ms"] is None
    assert view.comparison()[0]["paired"] == 0
    assert view.comparison()[0]["mcnemar_p"] == 1.0
    assert view.disagreements == []


def test_comparisons_pair_tests_judged_under_both_targets() -> None:
    statuses = {  # test: (base, cand, other)
        "reg1": ("passed", "failed", "passed"),
        "reg2": ("passed", "error", "passed"),
        "fix": ("failed", "passed", "error"),
        "same": ("passed", "passed", "passed"),
        "bad": ("failed", "error", "failed"),
        "skip": ("passed", "skipped", "failed"),
    }
    cells = [
        cell(test, label, status)
        for test, row in statuses.items()
        for label, status in zip(("base", "cand", "other"), row, strict=True)
    ]
    view = matrix_view(run_of(cells, ["base", "cand", "other"]))
    assert view is not None
    cand, other = view.comparison()
    assert (cand["base"], cand["candidate"]) == ("base", "cand")
    assert (cand["paired"], cand["regressed"], cand["fixed"]) == (5, 2, 1)
    assert (cand["both_passed"], cand["both_not_passed"]) == (1, 1)
    assert cand["mcnemar_p"] == mcnemar_exact(2, 1) == 1.0
    assert cand["p_worse"] == pytest.approx(0.5)  # P(X >= 2), X ~ Bin(3, 1/2) = 4/8
    assert cand["p_better"] == pytest.approx(7 / 8)
    # "other" against the base (never against "cand"): skip judged under both now.
    assert (other["candidate"], other["paired"], other["regressed"], other["fixed"]) == (
        "other",
        6,
        1,
        0,
    )
    # Disagree: final statuses differ (failed against error, skipped against passed count).
    assert [row.id for row in view.disagreements] == ["reg1", "reg2", "fix", "bad", "skip"]
    skip = view.rows[-1]
    assert skip.statuses == {"base": "passed", "cand": "skipped", "other": "failed"}


def test_a_skip_beside_a_pass_is_a_disagreement_as_in_the_viewer() -> None:
    cells = [cell("a", "x", "passed"), cell("a", "y", "skipped")]
    cells += [cell("b", "x", "skipped"), cell("b", "y", "skipped")]
    cells += [cell("c", "x", "failed")]  # not run under y (a shard): nothing to disagree with
    view = matrix_view(run_of(cells, ["x", "y"]))
    assert view is not None
    assert [row.id for row in view.disagreements] == ["a"]
    assert view.comparison()[0]["paired"] == 0  # a skip pairs with nothing


def test_rows_keep_run_order_and_labels_missing_from_the_run_are_added() -> None:
    builder = MatrixBuilder(["base"])
    for item in (
        cell("z", "base", "passed"),
        cell("z", "new", "failed"),
        cell("a", "base", "passed"),
    ):
        builder.add(item)
    view = builder.view()
    assert view.targets == ["base", "new"]
    assert [row.id for row in view.rows] == ["z", "a"]
    assert view.rows[0].base_key == "t.yaml::s::z"
    assert view.comparison()[0]["regressed"] == 1


def _brute_mcnemar(b: int, c: int) -> float:
    """Two-sided exact McNemar from its definition: min(1, 2 * P(X <= min(b, c)))."""
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, j) for j in range(min(b, c) + 1)) / (1 << n)
    return min(1.0, 2 * tail)


@pytest.mark.parametrize("seed", range(25))
def test_generated_runs_match_the_definitions(seed: int) -> None:
    rng = random.Random(seed)
    labels = ["a", "b"]
    cells: list[Cell] = []
    expected: dict[str, Any] = {"reg": 0, "fix": 0, "passed": [0, 0], "judged": [0, 0]}
    for index in range(rng.randint(1, 60)):
        pair = [rng.choice(["passed", "passed", "failed", "error", "skipped"]) for _ in labels]
        for side, (label, status) in enumerate(zip(labels, pair, strict=True)):
            cells.append(cell(f"t{index}", label, status))
            expected["passed"][side] += status == "passed"
            expected["judged"][side] += status != "skipped"
        if "skipped" not in pair:
            expected["reg"] += pair[0] == "passed" and pair[1] != "passed"
            expected["fix"] += pair[0] != "passed" and pair[1] == "passed"
    view = matrix_view(run_of(cells, labels))
    assert view is not None
    comparison = view.comparison()[0]
    assert (comparison["regressed"], comparison["fixed"]) == (expected["reg"], expected["fix"])
    assert comparison["mcnemar_p"] == pytest.approx(
        _brute_mcnemar(expected["reg"], expected["fix"]), rel=1e-12
    )
    for side, label in enumerate(labels):
        assert view.by_target()[label]["pass_rate_ci95"] == list(
            wilson_interval(expected["passed"][side], expected["judged"][side])
        )


def test_comparison_ignores_tests_missing_on_one_side() -> None:
    item = TargetComparison("a", "b")
    item.add("passed", None)
    item.add(None, "failed")
    assert item.paired == 0
