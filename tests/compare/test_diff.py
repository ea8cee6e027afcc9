"""``assertly diff`` and the comparison behind it: every change kind, the statistics, inputs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from assertly.cli import main
from assertly.compare import compare_runs, open_side
from assertly.store import RunStore

STORE = "runs.sqlite"


def store_run(
    root: Path,
    run_id: str,
    tests: dict[str, Any],
    *,
    started: str | None = None,
    threshold: str = "all",
    evals: dict[str, float] | None = None,
) -> None:
    """A run written straight into a store: ``{key: statuses | (statuses, definition)}``."""
    store = RunStore(root / STORE)
    try:
        store.start_run(
            run_id, started or f"2026-01-01T00:00:{len(run_id):02d}Z", {"pass_threshold": threshold}
        )
        metas = []
        for key, spec in tests.items():
            statuses, definition = spec if isinstance(spec, tuple) else (spec, "d-" + key)
            file, suite, test_id = key.split("::")
            metas.append(
                {
                    "key": key,
                    "id": test_id,
                    "name": test_id,
                    "suite": suite,
                    "file": file,
                    "definition": definition,
                }
            )
        store.save_tests(run_id, metas)
        for key, spec in tests.items():
            statuses = spec[0] if isinstance(spec, tuple) else spec
            for number, status in enumerate(statuses, start=1):
                failures = (
                    [{"assertion": "contains", "outcome": "failed", "message": f"no {key}"}]
                    if status == "failed"
                    else []
                )
                record = {
                    "test_key": key,
                    "trial": number,
                    "status": status,
                    "duration_ms": 1.0,
                    "steps": [],
                    "failures": failures,
                    "error": None,
                    "reason": None,
                    "score": 1.0 if status == "passed" else 0.0,
                }
                store.save_trial(run_id, key, number, record)
        for file, score in (evals or {}).items():
            store.save_eval(
                run_id,
                file,
                {
                    "file": file,
                    "score": score,
                    "threshold": 0.5,
                    "passed": score >= 0.5,
                    "cases": [],
                },
            )
        store.finish_run(run_id, "2026-01-01T01:00:00Z", 10.0)
    finally:
        store.close()


def diff(root: Path, base: str = "base", candidate: str = "cand", **options: Any) -> Any:
    store = root / STORE
    return compare_runs(open_side(base, store), open_side(candidate, store), **options)


def cli(root: Path, *args: str) -> Any:
    return CliRunner().invoke(main, [*args, "--store", str(root / STORE)], catch_exceptions=False)


def test_every_change_kind(tmp_path: Path) -> None:
    store_run(
        tmp_path,
        "base",
        {
            "f::s::regress": ["passed"],
            "f::s::fix": ["failed"],
            "f::s::same": ["passed"],
            "f::s::redefined": (["passed"], "one"),
            "f::s::gone": ["passed"],
            "f::s::skip_then_fail": ["skipped"],
            "f::s::fail_then_skip": ["error"],
            "f::s::fail_then_error": ["failed"],
        },
    )
    store_run(
        tmp_path,
        "cand",
        {
            "f::s::regress": ["failed"],
            "f::s::fix": ["passed"],
            "f::s::same": ["passed"],
            "f::s::redefined": (["failed"], "two"),
            "f::s::new": ["failed"],
            "f::s::skip_then_fail": ["error"],
            "f::s::fail_then_skip": ["skipped"],
            "f::s::fail_then_error": ["error"],
        },
    )
    result = diff(tmp_path)
    kinds = {item.id: item.change for item in result.tests()}
    assert kinds == {
        "regress": "regressed",
        "fix": "fixed",
        "same": "unchanged",
        "redefined": "changed_definition",
        "gone": "removed",
        "new": "added",
        "skip_then_fail": "regressed",
        "fail_then_skip": "fixed",
        "fail_then_error": "unchanged",
    }
    assert result.counts == {
        "regressed": 2,
        "fixed": 2,
        "unchanged": 2,
        "added": 1,
        "removed": 1,
        "changed_definition": 1,
    }
    # A redefined test is about two different tests: no statistics, never a regression.
    redefined = next(item for item in result.tests() if item.id == "redefined")
    assert redefined.p_value is None and redefined.score_delta is None
    assert [item.id for item in result.regressions] == ["regress", "skip_then_fail"]
    assert result.regressions[0].failures[0].message == "no f::s::regress"


def test_fisher_and_holm_per_test(tmp_path: Path) -> None:
    # 5/5 → 0/5: two-sided Fisher p = 2 / C(10, 5) = 2/252 (both extreme tables).
    # 3/3 → 2/3: p = 1. Holm over the two: min(1, 2 * 2/252) and max(that, 1 * 1).
    store_run(tmp_path, "base", {"f::s::a": ["passed"] * 5, "f::s::b": ["passed"] * 3})
    store_run(
        tmp_path,
        "cand",
        {"f::s::a": ["failed"] * 5, "f::s::b": ["passed", "passed", "failed"]},
    )
    result = diff(tmp_path)
    by_id = {item.id: item for item in result.tests()}
    assert by_id["a"].p_value == pytest.approx(2 / 252, rel=1e-12)
    assert by_id["a"].p_adjusted == pytest.approx(4 / 252, rel=1e-12)
    assert by_id["b"].p_value == pytest.approx(1.0)
    assert by_id["b"].p_adjusted == pytest.approx(1.0)
    assert by_id["a"].base_pass_rate == 1.0 and by_id["a"].candidate_pass_rate == 0.0
    assert by_id["b"].candidate_pass_rate == pytest.approx(2 / 3)
    assert by_id["a"].score_delta == pytest.approx(-1.0)
    # The gate is one-sided ("did it get worse?"): a's p = 1/252; b's (3/3 -> 2/3) = 3/6.
    # Holm over the per-test family only (issue 28): a's is 2 * 1/252 = 0.0079, b's
    # max(that, 1 * 0.5) = 0.5. The suite's McNemar (2 regressions, 0 fixes) = 1/4, unadjusted.
    assert by_id["a"].p_regression == pytest.approx(2 / 252, rel=1e-12)
    assert by_id["b"].p_regression == pytest.approx(0.5)
    assert result.suite_p_regression == pytest.approx(0.25)
    assert [item.id for item in result.significant_regressions()] == ["a"]
    assert result.failing_rule("significant") == (
        "1 test regressed significantly (one-sided Fisher, Holm-adjusted p ≤ 0.05)"
    )
    # At alpha 0.005 the adjusted 2/252 = 0.0079 is not significant; one test is not a suite.
    strict = diff(tmp_path, alpha=0.005)
    assert strict.significant_regressions() == []
    assert strict.failing_rule("significant") is None
    assert strict.failing_rule("regressions") == "2 tests regressed"  # b: 2/3 fails "all"


def test_one_trial_regressions_are_judged_by_mcnemar_over_the_suite(tmp_path: Path) -> None:
    keys = [f"f::s::t{number:02d}" for number in range(12)]
    store_run(tmp_path, "base", {key: ["passed"] for key in keys})
    # 10 of 12 single-trial tests regress, none is fixed: exact McNemar p = 2 * 0.5^10.
    store_run(
        tmp_path, "cand", {key: ["failed"] if i < 10 else ["passed"] for i, key in enumerate(keys)}
    )
    result = diff(tmp_path)
    assert result.paired_regressions == 10 and result.paired_fixes == 0
    assert result.mcnemar_p == pytest.approx(2 * 0.5**10)  # two-sided, as shown
    # The gate's one-sided McNemar, 0.5^10, is a question of its own: not Holm-adjusted with
    # the 12 tests' one-sided p-values (issue 28).
    assert result.suite_p_regression == pytest.approx(0.5**10)
    assert result.significant_regressions() == [], "one trial per test: no test alone is evidence"
    assert result.suite_regressed_significantly
    assert "the suite regressed significantly: 10 passing→failing against 0" in str(
        result.failing_rule("significant")
    )
    # 1 regression, 1 fix: p = 1, nothing significant.
    store_run(tmp_path, "c2", {key: ["passed"] for key in keys[1:]} | {keys[0]: ["failed"]})
    store_run(
        tmp_path,
        "c3",
        {key: ["passed"] for key in keys[2:]} | {keys[0]: ["passed"], keys[1]: ["failed"]},
    )
    mixed = diff(tmp_path, "c2", "c3")
    assert mixed.mcnemar_p == pytest.approx(1.0)
    # One-sided: P(at least 1 of 2 discordant pairs is a regression) = 3/4.
    assert mixed.suite_p_regression == pytest.approx(0.75)
    assert mixed.failing_rule("significant") is None
    assert mixed.failing_rule("changes") == "2 tests changed"


def test_pass_rates_with_wilson_intervals(tmp_path: Path) -> None:
    store_run(tmp_path, "base", {f"f::s::t{i}": ["passed"] for i in range(10)})
    store_run(
        tmp_path, "cand", {f"f::s::t{i}": ["passed"] if i < 8 else ["failed"] for i in range(10)}
    )
    summary = diff(tmp_path).summary()
    assert summary["base_pass_rate"] == 1.0
    assert summary["candidate_pass_rate"] == pytest.approx(0.8)
    # Wilson 95 % for 8/10 (z = 1.959964): [0.4901625, 0.9433178] (Newcombe 1998, table I).
    low, high = summary["candidate_pass_rate_interval"]
    assert low == pytest.approx(0.4901625, abs=1e-6)
    assert high == pytest.approx(0.9433178, abs=1e-6)


def test_per_test_pass_threshold_decides_each_sides_status(tmp_path: Path) -> None:
    store_run(tmp_path, "base", {"f::s::a": ["passed", "passed", "failed"]}, threshold="majority")
    store_run(tmp_path, "cand", {"f::s::a": ["passed", "failed", "failed"]}, threshold="majority")
    item = next(diff(tmp_path).tests())
    assert (item.base, item.candidate, item.change) == ("passed", "failed", "regressed")


def test_evals_are_compared_by_file(tmp_path: Path) -> None:
    store_run(tmp_path, "base", {"f::s::a": ["passed"]}, evals={"w.yaml": 0.9, "old.yaml": 0.5})
    store_run(tmp_path, "cand", {"f::s::a": ["passed"]}, evals={"w.yaml": 0.6})
    evals = {change.file: change.to_dict() for change in diff(tmp_path).evals}
    assert evals["w.yaml"]["delta"] == pytest.approx(-0.3)
    assert evals["old.yaml"] == {
        "file": "old.yaml",
        "base_score": 0.5,
        "candidate_score": None,
        "delta": None,
    }


def test_cli_fail_on_rules_and_exit_codes(tmp_path: Path) -> None:
    store_run(tmp_path, "base", {"f::s::a": ["passed"], "f::s::b": ["failed"]})
    store_run(tmp_path, "cand", {"f::s::a": ["failed"], "f::s::b": ["failed"]})
    store_run(tmp_path, "same", {"f::s::a": ["passed"], "f::s::b": ["failed"]})
    regressed = cli(tmp_path, "diff", "base", "cand")
    assert regressed.exit_code == 1
    assert "REGRESSED f::s::a  passed → failed" in regressed.stdout
    assert "✗ contains: no f::s::a" in regressed.stdout
    assert (
        "diff: 1 regression against run base (--fail-on regressions, at most 0 allowed) → exit 1"
        in regressed.stderr
    )
    assert cli(tmp_path, "diff", "base", "cand", "--fail-on", "never").exit_code == 0
    assert cli(tmp_path, "diff", "base", "cand", "--fail-on", "significant").exit_code == 0
    assert cli(tmp_path, "diff", "base", "same", "--fail-on", "changes").exit_code == 0
    changed = cli(tmp_path, "diff", "same", "cand", "--fail-on", "changes")
    assert changed.exit_code == 1 and "1 test changed" in changed.stderr
    fixed = cli(tmp_path, "diff", "cand", "base")
    assert fixed.exit_code == 0, "a fix is not a regression"
    assert "FIXED     f::s::a  failed → passed" in fixed.stdout


def test_cli_names_runs_like_users_do(tmp_path: Path) -> None:
    for number, status in enumerate(["passed", "failed", "passed"]):
        store_run(tmp_path, f"r{number}", {"f::s::a": [status]}, started=f"2026-01-0{number + 1}")
    # last = r2, last~1 = r1, last~2 = r0.
    result = cli(tmp_path, "diff", "last~1", "last", "--format", "json")
    data = json.loads(result.stdout)
    assert (data["base"]["run_id"], data["candidate"]["run_id"]) == ("r1", "r2")
    assert data["tests"][0]["change"] == "fixed"
    assert cli(tmp_path, "diff", "last~2", "last~1").exit_code == 1
    missing = cli(tmp_path, "diff", "last~3", "last")
    assert missing.exit_code == 2
    assert "has only 3 runs (last~2 is the oldest)" in missing.stderr
    unknown = cli(tmp_path, "diff", "nope", "last")
    assert unknown.exit_code == 2 and "no run 'nope'" in unknown.stderr
    assert "Traceback" not in unknown.output
    blessed = cli(tmp_path, "bless", "last~2")
    assert blessed.exit_code == 0 and "blessed run r0" in blessed.stdout
    assert cli(tmp_path, "diff", "blessed", "last~1").exit_code == 1


def test_json_shape_is_pinned(tmp_path: Path) -> None:
    store_run(tmp_path, "base", {"f::s::a": ["passed"], "f::s::gone": ["passed"]})
    store_run(tmp_path, "cand", {"f::s::a": ["failed"], "f::s::new": ["passed"]})
    out = tmp_path / "diff.json"
    result = cli(tmp_path, "diff", "base", "cand", "--format", "json", "-o", str(out))
    assert result.exit_code == 1
    data = json.loads(out.read_text())
    assert set(data) == {"base", "candidate", "summary", "tests", "evals"}
    assert {"run_id", "started_at"} <= set(data["base"])
    assert {"regressed", "fixed", "unchanged", "added", "removed", "changed_definition"} <= set(
        data["summary"]
    )
    pinned = {
        "key",
        "id",
        "suite",
        "file",
        "base",
        "candidate",
        "change",
        "base_pass_rate",
        "candidate_pass_rate",
        "p_value",
        "score_delta",
    }
    for test in data["tests"]:
        assert pinned <= set(test)
    changes = {
        test["id"]: (test["base"], test["candidate"], test["change"]) for test in data["tests"]
    }
    assert changes == {
        "a": ("passed", "failed", "regressed"),
        "gone": ("passed", None, "removed"),
        "new": (None, "passed", "added"),
    }


def test_markdown_is_a_pull_request_comment_and_inert(tmp_path: Path) -> None:
    evil = "f::s::x|<script>alert(1)</script>`"
    store_run(tmp_path, "base", {evil: ["passed"], "f::s::b": ["failed"]})
    store_run(tmp_path, "cand", {evil: ["failed"], "f::s::b": ["passed"]})
    result = cli(tmp_path, "diff", "base", "cand", "--format", "md")
    text = result.stdout
    assert text.startswith("### ❌ assertly: 1 regressed, 1 fixed")
    # Raw HTML only inside code spans (shown as text); everywhere else it is escaped.
    outside_code = re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", text)
    assert "<script>" not in outside_code
    assert "\\<script\\>" in outside_code
    assert "<details><summary>Fixed (1)</summary>" in text
    lines = text.splitlines()
    header = next(line for line in lines if line.startswith("| test |"))
    row = next(line for line in lines if line.startswith("| `") and "regress" not in line)
    cells = re.compile(r"(?<!\\)\|")  # a pipe that is not escaped separates cells
    assert len(cells.findall(row)) == len(cells.findall(header)), "the pipe stays in its cell"


def test_terminal_output_is_inert(tmp_path: Path) -> None:
    store_run(tmp_path, "base", {"f::s::\x1b[2KPASSED": ["passed"]})
    store_run(tmp_path, "cand", {"f::s::\x1b[2KPASSED": ["failed"]})
    result = cli(tmp_path, "diff", "base", "cand")
    assert "\x1b" not in result.stdout
    assert "\\x1b[2KPASSED" in result.stdout


def test_json_output_follows_the_shipped_schema(tmp_path: Path) -> None:
    import jsonschema_rs

    schema = json.loads((Path(__file__).parents[2] / "schemas" / "diff.schema.json").read_text())
    validator = jsonschema_rs.validator_for(schema)
    store_run(
        tmp_path,
        "base",
        {"f::s::a": ["passed"] * 3, "f::s::b": (["failed"], "x"), "f::s::gone": ["skipped"]},
        evals={"w.yaml": 0.7},
    )
    store_run(
        tmp_path,
        "cand",
        {"f::s::a": ["passed", "failed", "error"], "f::s::b": (["passed"], "y"), "f::s::n": []},
        evals={"w.yaml": 0.9, "new.yaml": 0.1},
    )
    result = cli(tmp_path, "diff", "base", "cand", "--format", "json")
    data = json.loads(result.stdout)
    errors = [error.message for error in validator.iter_errors(data)]
    assert errors == []
    assert {test["change"] for test in data["tests"]} == {
        "regressed",
        "changed_definition",
        "removed",
        "added",
    }
    # A test stored with no trial at all (interrupted before it ran) is an error, not a pass.
    assert next(t for t in data["tests"] if t["id"] == "n")["candidate"] == "error"
    assert not validator.is_valid({**data, "unexpected": 1}), "the schema is strict"


def test_a_store_from_before_the_score_column_is_compared_too(tmp_path: Path) -> None:
    import sqlite3

    store_run(tmp_path, "base", {"f::s::a": ["passed"]})
    store_run(tmp_path, "cand", {"f::s::a": ["failed"]})
    path = tmp_path / STORE
    # As an older assertly wrote it: whole JSON records (schema 1), scores only in them.
    store = RunStore(path, must_exist=True, read_only=True)
    rows = [
        (json.dumps(store._record(record, key)), run, key, trial)
        for run, key, trial, record in store._db.execute(
            "SELECT run_id, test_key, trial, record FROM trials"
        )
    ]
    store.close()
    with sqlite3.connect(path) as db:
        db.executemany(
            "UPDATE trials SET record = ? WHERE run_id = ? AND test_key = ? AND trial = ?", rows
        )
        db.execute("ALTER TABLE trials DROP COLUMN score")
        db.execute("PRAGMA user_version = 1")
    item = next(diff(tmp_path).tests())  # read-only: the records' scores are read
    assert (item.change, item.score_delta) == ("regressed", -1.0)
    RunStore(path).close()  # opened for writing: the column is added
    with sqlite3.connect(path) as db:
        columns = [row[1] for row in db.execute("PRAGMA table_info(trials)")]
    assert "score" in columns
    assert next(diff(tmp_path).tests()).score_delta == -1.0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=60))
def test_holm_by_rank_agrees_with_holm(p_values: list[float]) -> None:
    from assertly.compare import holm
    from assertly.compare._diff import _Holm

    table = _Holm(p_values)
    assert [table(p) for p in p_values] == pytest.approx(holm(p_values), abs=1e-15)


def test_cli_fail_on_significant_fails_on_a_real_regression(tmp_path: Path) -> None:
    store_run(tmp_path, "base", {"f::s::a": ["passed"] * 6, "f::s::b": ["passed"] * 6})
    store_run(tmp_path, "cand", {"f::s::a": ["failed"] * 6, "f::s::b": ["passed"] * 6})
    result = cli(tmp_path, "diff", "base", "cand", "--fail-on", "significant", "--format", "json")
    assert result.exit_code == 1
    assert "1 test regressed significantly (one-sided Fisher" in result.stderr
    data = json.loads(result.stdout)
    a = next(test for test in data["tests"] if test["id"] == "a")
    # One-sided p = 1 / C(12, 6) = 1/924; Holm over a and b (the tests only): 2/924.
    assert a["p_regression"] == pytest.approx(2 / 924, rel=1e-12)
    assert data["summary"]["significant_regressions"] == 1
    # The same drop at alpha 0.001 is not significant after Holm (0.0022 > 0.001).
    strict = cli(tmp_path, "diff", "base", "cand", "--fail-on", "significant", "--alpha", "0.001")
    assert strict.exit_code == 0
    wrong = cli(tmp_path, "diff", "base", "cand", "--alpha", "1.5")
    assert wrong.exit_code == 2


def test_every_fail_on_but_never_keeps_the_rules_against_less(tmp_path: Path) -> None:
    # issue 28, build item 5: a missing test is no noise, so --fail-on significant (about
    # chance) and changes keep the rule; never keeps its meaning.
    store_run(tmp_path, "base", {"f::s::a": ["passed"], "f::s::gone": ["passed"]})
    store_run(tmp_path, "cand", {"f::s::a": ["passed"]})
    for fail_on in ("regressions", "significant", "changes"):
        result = cli(tmp_path, "diff", "base", "cand", "--fail-on", fail_on)
        assert result.exit_code == 1, fail_on
        assert "diff: 1 test of the baseline missing from this run" in result.stderr
        accepted = cli(tmp_path, "diff", "base", "cand", "--fail-on", fail_on, "--allow-removed")
        assert accepted.exit_code == (1 if fail_on == "changes" else 0), fail_on
    assert cli(tmp_path, "diff", "base", "cand", "--fail-on", "never").exit_code == 0


def test_diff_fails_on_an_eval_suite_below_its_threshold_or_missing(tmp_path: Path) -> None:
    # Issue 28 red team, probe G1: `diff` exited 0 when the candidate's eval suite fell below
    # its threshold (run --baseline failed on it), and when an eval suite of the baseline was
    # missing from the candidate (neither command noticed).
    store_run(tmp_path, "base", {"f::s::a": ["passed"]}, evals={"w.yaml": 0.9, "x.yaml": 0.8})
    store_run(tmp_path, "low", {"f::s::a": ["passed"]}, evals={"w.yaml": 0.1, "x.yaml": 0.8})
    store_run(tmp_path, "gone", {"f::s::a": ["passed"]}, evals={"w.yaml": 0.9})
    low = cli(tmp_path, "diff", "base", "low")
    assert low.exit_code == 1
    assert "eval below its threshold: w.yaml" in low.output
    assert "1 eval suite below its threshold → exit 1" in low.output
    gone = cli(tmp_path, "diff", "base", "gone")
    assert gone.exit_code == 1
    assert "1 eval suite of the baseline missing from this run: x.yaml" in gone.output
    accepted = cli(tmp_path, "diff", "base", "gone", "--allow-removed")
    assert accepted.exit_code == 0, accepted.output
    assert "(accepted: --allow-removed)" in accepted.output
    # --allow-removed never accepts an eval below its threshold.
    assert cli(tmp_path, "diff", "base", "low", "--allow-removed").exit_code == 1
