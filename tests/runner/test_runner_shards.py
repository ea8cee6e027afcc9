"""``run --shard I/N`` splits a suite disjointly and stably; ``assertly merge`` joins the shards."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from runner_support import Project

from assertly.runner._selection import in_shard

IDS = [f"t{number:02d}" for number in range(24)]


def _suite(project: Project, ids: list[str] = IDS) -> Path:
    """24 tests answered by recorded responses (t03, t07, … fail), and a 6-line dataset."""
    answers = project.root / "answers.jsonl"
    answers.write_text(
        "".join(
            json.dumps({"id": i, "output": "no" if int(i[1:]) % 4 == 3 else "ok"}) + "\n"
            for i in IDS
        )
    )
    (project.root / "cases.jsonl").write_text(
        "".join(json.dumps({"id": f"c{n}", "output": "ok"}) + "\n" for n in range(6))
    )
    tests = [
        {"id": i, "input": i, "assertions": [{"type": "contains", "value": "ok"}]} for i in ids
    ]
    data = {
        "agent": "bot",
        "test_suites": {
            "s": {"tests": tests},
            "d": {"dataset": "cases.jsonl", "assertions": [{"type": "contains", "value": "ok"}]},
        },
    }
    project.write("a.tests.yaml", yaml.safe_dump(data, sort_keys=False))
    return answers


def _keys(result: object) -> set[str]:
    report = result.report  # type: ignore[attr-defined]
    return {f"{t['file']}::{t['suite']}::{t['id']}" for t in report["tests"]}


def _eval_files(project: Project, count: int) -> None:
    for number in range(count):
        project.write(
            f"w{number}.workflow.yaml",
            {
                "blocks": {
                    "b": {"type": "linear", "assertions": [{"type": "contains", "value": "ok"}]}
                },
                "eval": {"threshold": 0.5, "cases": [{"id": "e1", "fixtures": {"b": "ok"}}]},
            },
        )


@pytest.mark.parametrize("count", range(1, 9))
def test_shards_are_disjoint_and_cover_every_test(project: Project, count: int) -> None:
    answers = _suite(project)
    _eval_files(project, 4)
    whole = project.run("run", ".", "--target", f"fixtures:{answers}")
    parts = [
        project.run("run", ".", "--target", f"fixtures:{answers}", "--shard", f"{i}/{count}")
        for i in range(1, count + 1)
    ]
    keys = [_keys(part) for part in parts]
    assert set().union(*keys) == _keys(whole), "every test is in some shard"
    assert sum(len(k) for k in keys) == len(_keys(whole)), "and in one only"
    assert all(part.report["shard"] == f"{i}/{count}" for i, part in enumerate(parts, 1))
    evals = [suite["file"] for part in parts for suite in part.report["evals"]]
    assert sorted(evals) == sorted(s["file"] for s in whole.report["evals"])
    assert len(whole.report["evals"]) == 4, "eval suites go whole to one shard each"
    if count > 1:
        assert all(0 < len(k) < len(_keys(whole)) for k in keys), "each shard takes a part"
    # Merged, the shards are the whole run: the same tests, verdicts and evals.
    names = [f"last~{n}" for n in range(count)]
    merged = project.run("merge", *names)
    assert merged.exit_code == whole.exit_code
    assert merged.counts() == whole.counts()
    assert len(merged.report["evals"]) == 4


@pytest.mark.parametrize("count", [2, 3, 8])
def test_filters_apply_before_the_shard(project: Project, count: int) -> None:
    answers = _suite(project)
    target = f"fixtures:{answers}"
    whole = project.run("run", ".", "--target", target, "--suite", "s", "-k", "not t0")
    parts = [
        project.run(
            "run",
            ".",
            "--target",
            target,
            "--suite",
            "s",
            "-k",
            "not t0",
            "--shard",
            f"{i}/{count}",
        )
        for i in range(1, count + 1)
    ]
    keys = [_keys(part) for part in parts]
    assert set().union(*keys) == _keys(whole)
    assert sum(len(k) for k in keys) == len(_keys(whole)) == len(IDS) - 10  # t00-t09 left out


def test_a_test_stays_in_its_shard_whatever_the_order(project: Project) -> None:
    answers = _suite(project)
    first = project.run("run", ".", "--target", f"fixtures:{answers}", "--shard", "2/3")
    _suite(project, ids=list(reversed(IDS)))
    again = project.run("run", ".", "--target", f"fixtures:{answers}", "--shard", "2/3")
    assert _keys(first) == _keys(again)
    # The assignment is a function of the key alone.
    assert all(in_shard(key, (2, 3)) for key in _keys(first) if "::s::" in key)


def test_bad_shards_are_usage_errors(project: Project) -> None:
    answers = _suite(project)
    for wrong, says in (
        ("0/3", "between 1 and N"),
        ("4/3", "between 1 and N"),
        ("a/b", "I/N"),
        # issue 29, "Unbounded" 4: integers from the command line are bounded.
        ("1/99999999999999999999999", "N must be at most 10,000"),
        ("9" * 5000 + "/3", "between 1 and N"),
        ("1/²", "I/N"),  # a digit to str.isdigit, not a number to int()
    ):
        result = project.run("run", ".", "--target", f"fixtures:{answers}", "--shard", wrong)
        assert result.exit_code == 2
        assert says in result.stderr


def test_merge_of_stored_shards_equals_the_whole_run(project: Project) -> None:
    answers = _suite(project)
    whole = project.run("run", ".", "--target", f"fixtures:{answers}")
    for i in (1, 2, 3):
        project.run("run", ".", "--target", f"fixtures:{answers}", "--shard", f"{i}/3")
    merged = project.run("merge", "last", "last~1", "last~2")
    assert merged.exit_code == whole.exit_code == 1
    assert merged.counts() == whole.counts()
    assert _keys(merged) == _keys(whole)
    assert "merged 3 shards into run" in merged.stdout
    # The merged run is a run like any other: diff it with the whole one.
    diff = project.run("diff", whole.report["run_id"], merged.report["run_id"], "--format", "json")
    data = json.loads(diff.stdout)
    assert {test["change"] for test in data["tests"]} == {"unchanged"}
    assert diff.exit_code == 0


def test_merge_of_reports_and_other_stores(project: Project, tmp_path: Path) -> None:
    answers = _suite(project)
    whole = project.run("run", ".", "--target", f"fixtures:{answers}")
    reports = []
    for i in (1, 2):
        part = project.run("run", ".", "--target", f"fixtures:{answers}", "--shard", f"{i}/3")
        reports.append(str(project.root / f"report-{project._reports}.json"))
        assert part.report is not None
    project.run("run", ".", "--target", f"fixtures:{answers}", "--shard", "3/3")
    other = tmp_path / "machine3.sqlite"
    shutil.copy(project.root / ".assertly" / "runs.sqlite", other)
    merged = project.run("merge", *reports, f"{other}:last")
    assert merged.exit_code == 1
    assert merged.counts() == whole.counts()
    failing = {t["id"] for t in merged.report["tests"] if t["status"] == "failed"}
    assert failing == {i for i in IDS if int(i[1:]) % 4 == 3}
    # What a report keeps of a trial comes back: its failures and its output.
    failed = next(t for t in merged.report["tests"] if t["id"] == "t03")
    assert failed["trials"][0]["failures"][0]["assertion"] == "contains"
    assert failed["trials"][0]["output"] == "no"


def test_merge_refuses_parts_that_are_not_one_split(project: Project) -> None:
    answers = _suite(project)
    target = f"fixtures:{answers}"
    project.run("run", ".", "--target", target, "--shard", "1/2")  # last~3
    project.run("run", ".", "--target", target, "--shard", "2/2")  # last~2
    project.run("run", ".", "--target", target, "--shard", "1/3")  # last~1
    project.run("run", ".", "--target", target)  # last
    runs_before = project.sql("SELECT COUNT(*) FROM runs")[0][0]
    for parts, says in (
        (["last~3", "last~1"], "the parts come from different splits"),
        (["last~3", "last~3"], "shard 1/2 is given twice"),
        (["last~3"], "shard missing: 2/2"),
        (["last~3", "last"], "not a shard run (run with --shard I/N)"),
        (["nope"], "no run 'nope'"),
    ):
        result = project.run("merge", *parts)
        assert result.exit_code == 2, (parts, result.stderr)
        assert says in result.stderr
        assert "Traceback" not in result.stderr
    assert project.sql("SELECT COUNT(*) FROM runs")[0][0] == runs_before, "nothing written"
    ok = project.run("merge", "last~3", "last~2")
    assert ok.exit_code == 1


def test_merge_refuses_shards_of_different_test_files(project: Project) -> None:
    answers = _suite(project)
    target = f"fixtures:{answers}"
    project.run("run", ".", "--target", target, "--shard", "1/2")
    project.run("run", ".", "--target", target, "--shard", "1/2")
    # The second run claims to be shard 2 (as a machine whose files differ would hold tests
    # of the first shard): the same tests in two parts.
    import sqlite3

    with sqlite3.connect(project.root / ".assertly" / "runs.sqlite") as db:
        run_id, options = db.execute(
            "SELECT run_id, options FROM runs ORDER BY started_at DESC LIMIT 1"
        ).fetchone()
        data = json.loads(options)
        data["shard"] = "2/2"
        db.execute("UPDATE runs SET options = ? WHERE run_id = ?", (json.dumps(data), run_id))
    result = project.run("merge", "last~1", "last")
    assert result.exit_code == 2
    assert "is not a test of shard 2/2" in result.stderr
    assert project.sql("SELECT COUNT(*) FROM runs")[0][0] == 2, "the partial merge is removed"


def test_eval_suites_go_whole_to_one_shard(project: Project) -> None:
    project.write(
        "w.workflow.yaml",
        {
            "blocks": {
                "b": {"type": "linear", "assertions": [{"type": "contains", "value": "ok"}]}
            },
            "eval": {"threshold": 0.5, "cases": [{"id": "e1", "fixtures": {"b": "ok"}}]},
        },
    )
    counts = []
    for i in (1, 2, 3):
        result = project.run("run", "w.workflow.yaml", "--shard", f"{i}/3")
        assert result.exit_code == 0, result.stderr
        counts.append(len(result.report["evals"]))
    assert sorted(counts) == [0, 0, 1]
