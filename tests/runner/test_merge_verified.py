"""``assertly merge`` verifies what it joins: one plan, all of it, records as written (#28)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import yaml
from runner_support import Project

from assertly._digests import records_digest
from assertly.runner._selection import in_shard

IDS = [f"t{number}" for number in range(10)]


def _suite(project: Project, failing: set[str], expected: str = "ok", source: str = "") -> str:
    """Ten tests answered by id: those in ``failing`` answer "no" (expected: ``expected``)."""
    answers = project.root / "answers.jsonl"
    answers.write_text(
        "".join(json.dumps({"id": i, "output": "no" if i in failing else "ok"}) + "\n" for i in IDS)
    )
    tests = [
        {"id": i, "input": f"{source}{i}", "assertions": [{"type": "contains", "value": expected}]}
        for i in IDS
    ]
    data = {"agent": "bot", "test_suites": {"s": {"tests": tests}}}
    project.write("a.tests.yaml", yaml.safe_dump(data, sort_keys=False))
    return f"fixtures:{answers}"


def _shard_of(test_id: str, count: int = 2) -> int:
    return next(
        i for i in range(1, count + 1) if in_shard(f"a.tests.yaml::s::{test_id}", (i, count))
    )


def _refused(result: Any, *says: str) -> None:
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    for text in says:
        assert text in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_a_shard_run_with_an_extra_filter_is_refused(project: Project) -> None:
    # issue 28, probe 4a: a shard run with an extra -k filter left its failing test out.
    bad = "t3"
    target = _suite(project, failing={bad})
    home = _shard_of(bad)
    for index in (1, 2):
        extra = ["-k", f"not {bad}"] if index == home else []
        project.run("run", ".", "--target", target, "--shard", f"{index}/2", *extra)
    runs = project.sql("SELECT COUNT(*) FROM runs")[0][0]
    result = project.run("merge", "last~1", "last")
    _refused(result, "is not a part of the same run", '"keyword":"not t3"', "no filters")
    assert project.sql("SELECT COUNT(*) FROM runs")[0][0] == runs, "nothing written"
    # The same filter on every shard is one plan: merged, it is the filtered run.
    for index in (1, 2):
        project.run("run", ".", "--target", target, "--shard", f"{index}/2", "-k", f"not {bad}")
    assert project.run("merge", "last~1", "last").counts() == (9, 9, 0, 0, 0)


def test_shards_from_checkouts_with_other_tests_under_the_same_ids_are_refused(
    project: Project,
) -> None:
    # issue 28, probe 4b: one shard from a checkout whose tests have other inputs (and
    # expectations) under the same ids: in the real checkout, its tests fail.
    other = [i for i in IDS if _shard_of(i) == 2]
    target = _suite(project, failing=set(other))
    project.run("run", ".", "--target", target, "--shard", "1/2", "-o", "s1.json")
    real = project.run("run", ".", "--target", target, "--shard", "2/2", "-o", "s2-real.json")
    assert real.exit_code == 1
    _suite(project, failing=set(other), expected="no", source="other ")
    project.run("run", ".", "--target", target, "--shard", "2/2", "-o", "s2-other.json")
    for parts in (["last~2", "last"], ["s1.json", "s2-other.json"]):
        result = project.run("merge", *parts)
        _refused(result, "is not a part of the same run", "other definitions")
    assert project.run("merge", "s1.json", "s2-real.json").exit_code == 1


def _edit(path: Path, change: Any) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2))


def _passed_by_hand(data: dict[str, Any]) -> None:
    for test in data["tests"]:
        test["status"] = "passed"
        for trial in test["trials"]:
            trial["status"] = "passed"


def _shard_reports(project: Project) -> tuple[Path, Path]:
    target = _suite(project, failing={"t3", "t7"})
    for index in (1, 2):
        project.run("run", ".", "--target", target, "--shard", f"{index}/2", "-o", f"s{index}.json")
    return project.root / "s1.json", project.root / "s2.json"


def test_a_json_shard_whose_statuses_were_edited_is_refused(project: Project) -> None:
    # issue 28, probe 4c: trial statuses edited to "passed" in a JSON shard report.
    first, second = _shard_reports(project)
    assert project.run("merge", str(first), str(second)).exit_code == 1
    for path in (first, second):
        _edit(path, _passed_by_hand)
    result = project.run("merge", str(first), str(second))
    _refused(result, "do not match the report's records_digest")


def test_an_edited_report_whose_digest_was_recomputed_is_refused_by_its_failures(
    project: Project,
) -> None:
    # The digest is no signature (docs/scale.md): an editor who recomputes it is caught only
    # where the verdict contradicts the rest of the record, which merge recomputes.
    first, second = _shard_reports(project)

    def forge(data: dict[str, Any]) -> None:
        _passed_by_hand(data)
        data["records_digest"] = records_digest(data["tests"], data["evals"])

    for path in (first, second):
        _edit(path, forge)
    result = project.run("merge", str(first), str(second))
    _refused(result, "says passed, but its failures and error make it failed")


def test_a_report_missing_tests_or_mislabelled_is_refused(project: Project) -> None:
    first, second = _shard_reports(project)
    keep = second.read_text()

    def drop_failing(data: dict[str, Any]) -> None:
        data["tests"] = [test for test in data["tests"] if test["status"] == "passed"]
        data["records_digest"] = records_digest(data["tests"], data["evals"])

    for path in (first, second):
        _edit(path, drop_failing)
    _refused(project.run("merge", str(first), str(second)), "tests are missing from a part")
    # A shard that says it is another one.
    second.write_text(keep)
    _edit(second, lambda data: data.update(shard="1/2"))
    shutil.copy(second, project.root / "s2-as-1.json")
    _edit(first, lambda data: data.update(shard="2/2"))
    _refused(
        project.run("merge", str(first), str(project.root / "s2-as-1.json")),
        "is not a test of shard",
    )


def test_parts_without_a_plan_are_refused(project: Project) -> None:
    first, second = _shard_reports(project)
    for path in (first, second):
        _edit(path, lambda data: data.pop("plan"))
    _refused(project.run("merge", str(first), str(second)), "carries no plan digest")
    _edit(first, lambda data: data.pop("records_digest"))
    _refused(project.run("merge", str(first), str(second)), "carries no records_digest")


def test_a_rechecked_shard_merges_with_the_others(project: Project) -> None:
    target = _suite(project, failing={"t3"})
    for index in (1, 2):
        project.run("run", ".", "--target", target, "--shard", f"{index}/2")
    rechecked = project.run("recheck", "last")
    assert rechecked.report is not None and rechecked.report["plan"]["tests"] == 10
    merged = project.run("merge", "last~2", "last")
    assert merged.exit_code == 1
    assert merged.counts() == (10, 9, 1, 0, 0)


def test_a_part_that_lost_its_eval_suite_is_refused(project: Project) -> None:
    target = _suite(project, failing=set())
    for number in range(3):
        project.write(
            f"w{number}.workflow.yaml",
            {
                "blocks": {
                    "b": {"type": "linear", "assertions": [{"type": "contains", "value": "ok"}]}
                },
                "eval": {"threshold": 0.5, "cases": [{"id": "e1", "fixtures": {"b": "no"}}]},
            },
        )
    paths = []
    for index in (1, 2):
        project.run("run", ".", "--target", target, "--shard", f"{index}/2", "-o", f"s{index}.json")
        paths.append(project.root / f"s{index}.json")
    assert project.run("merge", *map(str, paths)).exit_code == 1, "the evals fail"

    def drop_evals(data: dict[str, Any]) -> None:
        data["evals"] = []
        data["records_digest"] = records_digest(data["tests"], data["evals"])

    for path in paths:
        _edit(path, drop_evals)
    _refused(project.run("merge", *map(str, paths)), "eval suites are not those of their plan")


def test_the_records_digest_is_of_the_report_as_redacted(project: Project) -> None:
    # A secret is redacted from a report after it is rendered: the digest is of what a reader
    # of the report sees, so a redacted shard report still merges.
    from assertly.reports._json import render_json
    from assertly.store import RunStore, build_run

    target = _suite(project, failing={"t3"})
    for index in (1, 2):
        project.run("run", ".", "--target", target, "--shard", f"{index}/2")
    store = RunStore(str(project.root / ".assertly" / "runs.sqlite"), must_exist=True)
    try:
        for name in ("last~1", "last"):
            text = render_json(build_run(store, store.resolve_run_id(name)), redact={"ok"})
            (project.root / f"{name}.json").write_bytes(text)
    finally:
        store.close()
    data = json.loads((project.root / "last.json").read_text())
    assert "ok" not in json.dumps(data["tests"]), "the secret is redacted"
    assert data["records_digest"] == records_digest(data["tests"], data["evals"])
    merged = project.run("merge", "last~1.json", "last.json")
    assert merged.counts() == (10, 9, 1, 0, 0)


def test_shards_with_outputs_past_the_report_depth_merge(project: Project) -> None:
    # issue 29 red team (break-bounded), probe "merge of deep shards": a shard whose output
    # nests 101+ levels wrote its records_digest of the value but the value as capped text,
    # so `assertly merge s1.json s2.json` refused its own report ("the report was changed").
    deep: Any = "x"
    for _ in range(150):
        deep = [deep]
    answers = project.root / "answers.jsonl"
    answers.write_text("".join(json.dumps({"id": i, "output": {"a": deep}}) + "\n" for i in IDS))
    tests = [{"id": i, "input": i, "assertions": [{"type": "equals", "value": "no"}]} for i in IDS]
    data = {"agent": "bot", "test_suites": {"s": {"tests": tests}}}
    project.write("a.tests.yaml", yaml.safe_dump(data, sort_keys=False))
    for index in (1, 2):
        project.run("run", ".", "--target", f"fixtures:{answers}", "--shard", f"{index}/2")
        project.run("report", "last", "-o", f"s{index}.json")
    merged = project.run("merge", "s1.json", "s2.json")
    assert merged.counts() == (10, 0, 10, 0, 0), merged.stderr
