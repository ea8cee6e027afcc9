"""The paired statistics of a diff inside a matrix run, checked against scipy (issue 31).

Each case is a matrix run of two targets with seeded random verdicts (one trial a test),
stored the two ways a run is read back: a JSON report (``report.json:A``) through the
command line, and a run of the store (``RUN:A``) through `compare_runs`. The diff of its
two targets must give scipy's exact McNemar test (``binomtest(b, b + c, 0.5)``, two-sided and
one-sided "more regressions"), and scipy's Wilson interval on each target's pass rate, to
1e-12 relative. The cases cover sizes 1 to 400, no discordant pair, only regressions, only
fixes, and lopsided splits.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from scipy import stats  # type: ignore[import-untyped]

from assertly.cli import main
from assertly.compare import compare_runs, open_side
from assertly.store import RunStore

LABELS = ("base", "cand")


def _case(seed: int) -> tuple[list[bool], list[bool]]:
    """Two targets' verdicts over the same tests (True: passed), varied by ``seed``."""
    rng = random.Random(seed)
    size = rng.choice([1, 2, 5, 12, 30, 75, 150, 400])
    shape = seed % 6
    base = [rng.random() < rng.uniform(0.2, 0.95) for _ in range(size)]
    if shape == 0:  # no discordant pair: the same verdicts
        return base, list(base)
    if shape == 1:  # only regressions
        return base, [passed and rng.random() < 0.6 for passed in base]
    if shape == 2:  # only fixes
        return base, [passed or rng.random() < 0.5 for passed in base]
    if shape == 3:  # lopsided: nearly every discordant pair one way
        return base, [
            (not passed) if rng.random() < (0.5 if passed else 0.05) else passed for passed in base
        ]
    flip = rng.uniform(0.05, 0.6)
    return base, [(not passed) if rng.random() < flip else passed for passed in base]


CASES = list(range(24))


def _expected(base: list[bool], cand: list[bool]) -> dict[str, Any]:
    """What scipy says of the pair: both McNemar p-values and both Wilson intervals."""
    b = sum(1 for x, y in zip(base, cand, strict=True) if x and not y)
    c = sum(1 for x, y in zip(base, cand, strict=True) if y and not x)
    if b + c:
        two_sided = float(stats.binomtest(b, b + c, 0.5).pvalue)
        greater = float(stats.binomtest(b, b + c, 0.5, alternative="greater").pvalue)
    else:  # no discordant pair: nothing to test, p = 1 (scipy refuses n = 0)
        two_sided = greater = 1.0

    def wilson(verdicts: list[bool]) -> list[float]:
        interval = stats.binomtest(sum(verdicts), len(verdicts)).proportion_ci(
            confidence_level=0.95, method="wilson"
        )
        return [float(interval.low), float(interval.high)]

    return {
        "b": b,
        "c": c,
        "mcnemar_p": two_sided,
        "suite_p_regression": greater,
        "base": wilson(base),
        "cand": wilson(cand),
    }


def _key(index: int, label: str) -> str:
    # Ids of different lengths with a common prefix: dropping "[label]" reorders keys.
    return f"t.yaml::s::case-{index}[{label}]" if index % 3 else f"t.yaml::s::case{index}[{label}]"


def _verdicts(base: list[bool], cand: list[bool]) -> list[tuple[int, str, bool]]:
    """(test index, label, passed) in run order: each test's cells consecutive."""
    return [
        (index, label, verdicts[index])
        for index in range(len(base))
        for label, verdicts in zip(LABELS, (base, cand), strict=True)
    ]


def _write_report(path: Path, base: list[bool], cand: list[bool]) -> None:
    tests = []
    for index, label, passed in _verdicts(base, cand):
        status = "passed" if passed else "failed"
        tests.append(
            {
                "key": _key(index, label),
                "id": f"case{index}",
                "suite": "s",
                "file": "t.yaml",
                "status": status,
                "score": 1.0 if passed else 0.0,
                "definition": f"d{index}",
                "target": label,
                "trials": [{"trial": 1, "status": status, "failures": []}],
            }
        )
    report = {"run_id": "r", "started_at": "2026-01-01T00:00:00Z", "targets": list(LABELS)}
    path.write_text(json.dumps({**report, "tests": tests, "evals": []}), encoding="utf-8")


def _store_run(store_path: Path, run_id: str, base: list[bool], cand: list[bool]) -> None:
    store = RunStore(store_path)
    try:
        store.start_run(run_id, "2026-01-01T00:00:00Z", {"target_labels": list(LABELS)})
        verdicts = _verdicts(base, cand)
        store.save_tests(
            run_id,
            [
                {
                    "key": _key(index, label),
                    "id": f"case{index}",
                    "name": f"case{index}",
                    "suite": "s",
                    "file": "t.yaml",
                    "definition": f"d{index}",
                    "target": label,
                }
                for index, label, _ in verdicts
            ],
        )
        for index, label, passed in verdicts:
            key = _key(index, label)
            status = "passed" if passed else "failed"
            record = {
                "test_key": key,
                "trial": 1,
                "status": status,
                "duration_ms": 1.0,
                "steps": [],
                "failures": [],
                "error": None,
                "reason": None,
                "score": 1.0 if passed else 0.0,
            }
            store.save_trial(run_id, key, 1, record)
        store.finish_run(run_id, "2026-01-01T01:00:00Z", 10.0)
    finally:
        store.close()


def _close(actual: float, expected: float) -> bool:
    return actual == pytest.approx(expected, rel=1e-12, abs=1e-300)


def test_the_cases_cover_what_they_claim() -> None:
    """At least 20 cases, among them none discordant, one-way and lopsided ones."""
    found = [_expected(*_case(seed)) for seed in CASES]
    assert len(found) >= 20
    assert any(case["b"] == case["c"] == 0 for case in found)
    assert any(case["b"] > 0 and case["c"] == 0 for case in found)
    assert any(case["c"] > 0 and case["b"] == 0 for case in found)
    assert any(case["b"] >= 4 * max(case["c"], 1) for case in found)
    assert any(case["mcnemar_p"] < 0.01 for case in found)
    assert len({len(_case(seed)[0]) for seed in CASES}) >= 5


@pytest.mark.parametrize("seed", CASES)
def test_diff_of_two_targets_of_a_report_matches_scipy(tmp_path: Path, seed: int) -> None:
    base, cand = _case(seed)
    expected = _expected(base, cand)
    report = tmp_path / "report.json"
    _write_report(report, base, cand)
    result = CliRunner().invoke(
        main,
        ["diff", f"{report}:base", f"{report}:cand", "--format", "json"],
        catch_exceptions=False,
    )
    assert result.exit_code == (1 if expected["b"] else 0), result.output
    data = json.loads(result.stdout)
    summary = data["summary"]
    assert (data["base"]["target"], data["candidate"]["target"]) == LABELS
    assert (summary["regressed"], summary["fixed"]) == (expected["b"], expected["c"])
    assert summary["unchanged"] == len(base) - expected["b"] - expected["c"]
    assert summary["added"] == summary["removed"] == 0
    assert _close(summary["mcnemar_p"], expected["mcnemar_p"])
    assert _close(summary["suite_p_regression"], expected["suite_p_regression"])
    for side, name in (("base", "base"), ("candidate", "cand")):
        low, high = summary[f"{side}_pass_rate_interval"]
        assert _close(low, expected[name][0]), (side, low, expected[name])
        assert _close(high, expected[name][1]), (side, high, expected[name])


@pytest.mark.parametrize("seed", CASES)
def test_diff_of_two_targets_of_a_stored_run_matches_scipy(tmp_path: Path, seed: int) -> None:
    base, cand = _case(seed)
    expected = _expected(base, cand)
    store = tmp_path / "runs.sqlite"
    _store_run(store, "matrix", base, cand)
    diff = compare_runs(open_side("matrix:base", store), open_side("matrix:cand", store))
    assert (diff.paired_regressions, diff.paired_fixes) == (expected["b"], expected["c"])
    assert diff.counts["added"] == diff.counts["removed"] == 0
    assert _close(diff.mcnemar_p, expected["mcnemar_p"])
    assert _close(diff.suite_p_regression, expected["suite_p_regression"])
    for side, name in (("base", "base"), ("candidate", "cand")):
        low, high = diff.pass_rate(side)[1]
        assert _close(low, expected[name][0]) and _close(high, expected[name][1])
