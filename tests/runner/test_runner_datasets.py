"""Dataset suites: one expectation over every line of a JSON Lines file, recorded or called,
read line by line; bad lines are errors while the others are judged; resumable; filters apply
to cases; the file must be inside the project."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from runner_support import Project

CHECKS = [{"type": "contains", "value": "security"}, {"type": "word-count", "value": {"min": 2}}]


def _dataset(project: Project, lines: list[object], name: str = "data/cases.jsonl") -> Path:
    text = "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines)
    return project.write(name, text + "\n")


def _suite(project: Project, **suite: object) -> Path:
    data = {"agent": "bot", "test_suites": {"recorded": {"dataset": "data/cases.jsonl", **suite}}}
    return project.write("d.tests.yaml", data)


def test_recorded_lines_are_judged_without_a_target(project: Project) -> None:
    _dataset(
        project,
        [
            {"id": "good", "output": "a security incident", "model": "m1", "latency_ms": 12},
            {"id": "bad", "output": "nothing"},
            "",
            {"output": "security"},
        ],
    )
    _suite(project, assertions=CHECKS)
    result = project.run("run", "d.tests.yaml")
    assert result.exit_code == 1
    assert [t["id"] for t in result.report["tests"]] == ["good", "bad", "line-4"]  # type: ignore[index]
    assert [result.status(i) for i in ("good", "bad", "line-4")] == ["passed", "failed", "failed"]
    good = result.tests["good"]
    assert good["file"] == os.path.join("data", "cases.jsonl")
    assert good["line"] == 1
    [record] = project.records("test_key LIKE '%cases.jsonl:1'")
    step = record["steps"][0]
    assert (step["model"], step["latency_ms"]) == ("m1", 12.0)
    assert "FAILED recorded::bad  (data/cases.jsonl:2)" in result.stdout


def test_lines_without_output_are_sent_to_the_agent(project: Project) -> None:
    _dataset(project, [{"id": "q1", "input": {"mode": "text", "text": "security review done"}}])
    _suite(project, assertions=CHECKS)
    result = project.run("run", "d.tests.yaml", "--target", project.agent)
    assert result.status("q1") == "passed", result.stdout
    # Without a target the case is an error that says so, not a silent pass.
    result = project.run("run", "d.tests.yaml")
    assert result.status("q1") == "error"
    assert "no target for agent 'bot'" in json.dumps(result.tests["q1"])


def test_bad_lines_are_errors_and_the_rest_is_judged(project: Project) -> None:
    _dataset(
        project,
        [
            "not json",
            [1, 2],
            {"id": "extra", "output": "security ok", "bogus": 1},
            {"id": "neither"},
            {"id": "tags", "output": "security ok", "tags": "x"},
            {"id": "fine", "output": "security ok"},
        ],
    )
    _suite(project, assertions=CHECKS)
    result = project.run("run", "d.tests.yaml")
    statuses = {t["id"]: t["status"] for t in result.report["tests"]}  # type: ignore[index]
    assert statuses == {
        "line-1": "error",
        "line-2": "error",
        "extra": "error",
        "neither": "error",
        "tags": "error",
        "fine": "passed",
    }
    text = json.dumps(result.report)
    assert "cases.jsonl:1: line-1: invalid JSON" in text
    assert "unknown key 'bogus'" in text
    assert "a line needs output (recorded) or input (to send)" in text
    validate = project.run("validate", "d.tests.yaml")
    assert validate.exit_code == 2
    assert "0 tests, 6 dataset cases, 0 eval cases, 5 problems" in validate.stdout


def test_expect_dict_threshold_tags_and_filters(project: Project) -> None:
    _dataset(
        project,
        [
            {"id": "a", "output": {"status": "success"}, "tags": ["smoke"]},
            {"id": "b", "output": {"status": "error"}},
            {"id": "c", "output": {"status": "success"}, "tags": ["smoke"]},
        ],
    )
    _suite(project, expect={"status": "success"}, tags=["nightly"])
    result = project.run("run", "d.tests.yaml", "--tag", "smoke")
    assert sorted(result.tests) == ["a", "c"]
    assert result.tests["a"]["status"] == "passed"
    result = project.run("run", "d.tests.yaml", "--test", "b")
    assert list(result.tests) == ["b"] and result.status("b") == "failed"
    result = project.run("run", "d.tests.yaml", "-k", "nightly and not a")
    assert sorted(result.tests) == ["b", "c"]


def test_duplicate_ids_are_both_judged(project: Project) -> None:
    _dataset(project, [{"id": "same", "output": "security ok"}, {"id": "same", "output": "no"}])
    _suite(project, assertions=CHECKS)
    result = project.run("run", "d.tests.yaml")
    assert [t["status"] for t in result.report["tests"]] == ["passed", "failed"]  # type: ignore[index]


def test_resume_runs_only_the_lines_without_a_verdict(project: Project) -> None:
    _dataset(project, [{"id": f"c{n}", "output": "security ok"} for n in range(600)])
    _suite(project, assertions=CHECKS)
    first = project.run("run", "d.tests.yaml")
    assert first.summary["passed"] == 600
    run_id = first.report["run_id"]  # type: ignore[index]
    # Forget the verdicts of 100 lines, as a crash would have left them.
    project.sql(
        "DELETE FROM trials WHERE run_id = ? AND test_key IN "
        "(SELECT test_key FROM tests WHERE run_id = ? AND position >= 500)",
        run_id,
        run_id,
    )
    resumed = project.run("run", "--resume", "last")
    assert resumed.summary["total"] == 600 and resumed.summary["passed"] == 600
    rows = project.sql("SELECT COUNT(*) FROM trials WHERE run_id = ?", run_id)
    assert rows == [(600,)]


@pytest.mark.parametrize(
    "reference",
    ["../outside.jsonl", "/etc/hostname", "link.jsonl"],
)
def test_a_dataset_outside_the_project_is_refused(
    project: Project, tmp_path_factory: pytest.TempPathFactory, reference: str
) -> None:
    outside = tmp_path_factory.mktemp("elsewhere") / "secret.jsonl"
    outside.write_text(json.dumps({"output": "security"}) + "\n")
    (project.root / "link.jsonl").symlink_to(outside)  # a link out of the project is out
    (project.root.parent / "outside.jsonl").write_text(json.dumps({"output": "x"}) + "\n")
    project.write(
        "d.tests.yaml",
        {"agent": "bot", "test_suites": {"s": {"dataset": reference, "assertions": CHECKS}}},
    )
    result = project.run("validate", "d.tests.yaml")
    assert result.exit_code == 2
    assert "outside the project directory" in result.stderr
    assert (
        "d.tests.yaml:4:5: test_suites.s.dataset:" in result.stderr
    )  # file:line of the dataset key
    run = project.run("run", "d.tests.yaml", report=False)
    assert run.exit_code == 2  # nothing else to run: a configuration error


def test_a_dataset_removed_after_loading_is_an_error_not_a_crash(project: Project) -> None:
    from assertly.loading import load_paths

    path = _dataset(project, [{"id": "a", "output": "security ok"}])
    _suite(project, assertions=CHECKS)
    [dataset] = load_paths([project.root / "d.tests.yaml"], project_dir=project.root).datasets
    path.unlink()
    assert dataset.count() == 1
    [case] = list(dataset.cases())
    assert "cannot read the dataset" in str(case.problems[0])


def test_an_empty_dataset_or_filters_leaving_no_line_are_not_a_pass(project: Project) -> None:
    _dataset(project, ["", "  "])
    _suite(project, assertions=CHECKS)
    validate = project.run("validate", "d.tests.yaml")
    assert validate.exit_code == 2
    assert "has no lines, so nothing would be judged" in validate.stderr
    assert project.run("run", "d.tests.yaml", report=False).exit_code == 2
    _dataset(project, [{"id": "a", "output": "security ok"}])
    result = project.run("run", "d.tests.yaml", "--test", "nothing-like-this", report=False)
    assert result.exit_code == 2
    assert "no tests found (after filters)" in result.stderr
