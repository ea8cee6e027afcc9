"""First-contact defects of `assertly run` (issue 29, item 5)."""

from __future__ import annotations

import json

from runner_support import Project


def test_an_invalid_dataset_line_is_reported_once_not_once_per_trial(project: Project) -> None:
    # issue 29, first contact: "an invalid dataset line is reported once per trial"
    project.write("assertly.yaml", {"agents": {"bot": project.agent}})
    (project.root / "cases.jsonl").write_text('{"id": "a", "output": "ok"}\n{not json\n')
    suite = {"trials": 3, "dataset": "cases.jsonl"}
    suite["assertions"] = [{"type": "contains", "value": "ok"}]
    project.write("d.tests.yaml", {"agent": "bot", "test_suites": {"ds": suite}})
    project.tests_file(
        "t.tests.yaml",
        {"s": [{"id": "typo", "trials": 3, "input": {}, "expect": {"statuss": "ok"}}]},
    )
    result = project.run("run", ".", "--plain")
    assert result.exit_code == 1, result.stdout
    tests = {t["id"]: t for t in result.report["tests"]}
    assert [t["status"] for t in tests["a"]["trials"]] == ["passed"] * 3
    for broken in ("line-2", "typo"):
        assert tests[broken]["status"] == "error"
        assert len(tests[broken]["trials"]) == 1, tests[broken]["trials"]
    assert json.dumps(result.report).count("invalid JSON") == 1
    assert result.stdout.count("invalid JSON") == 1
