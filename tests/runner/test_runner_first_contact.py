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


def test_a_resumed_run_says_which_tests_it_kept_and_its_own_time(project: Project) -> None:
    # issue 29, first contact: "after --resume nothing says which tests were resumed and the
    # summary's time is wrong" (it showed the sum of every invocation as this one's time).
    import re

    tests = [
        {"id": "t1", "input": {"status": "error"}, "expect": {"status": "success"}},
        {"id": "t2", "input": {}, "expect": {"status": "success"}},
        {"id": "t3", "input": {}, "expect": {"status": "success"}},
    ]
    project.tests_file("ff.tests.yaml", {"s": tests})
    first = project.run("run", ".", "--target", project.agent, "-j", "1", "--fail-fast")
    assert first.counts() == (3, 0, 1, 0, 2)
    resumed = project.run("run", "--resume", "last", "--plain")
    assert resumed.counts() == (3, 2, 1, 0, 0)
    lines = resumed.stdout.splitlines()
    marked = [line for line in lines if "(resumed: verdict of the stored run)" in line]
    assert len(marked) == 1 and "ff.tests.yaml::s::t1" in marked[0], resumed.stdout
    assert "resumed: 1 test(s) kept their verdicts from the stored run" in resumed.stdout
    took = re.search(
        r" in (\d+\.\d\d)s \((\d+\.\d\d)s in all, with the run resumed\)", resumed.stdout
    )
    assert took is not None, resumed.stdout
    assert float(took.group(1)) <= float(took.group(2))
    total = resumed.report["summary"]["duration_ms"]
    assert abs(float(took.group(2)) - total / 1000) < 0.006  # the stored run's, in all


def test_the_console_names_a_dataset_case_as_pytest_does(project: Project) -> None:
    # issue 29, first contact: one dataset test had three names; the console said
    # `cases.jsonl::ds::a` (the dataset file), pytest `d.tests.yaml::ds::a`. Both now name the
    # test file that defines the suite; the report's `key` stays the unique identity.
    project.write("assertly.yaml", {"agents": {"bot": project.agent}})
    (project.root / "cases.jsonl").write_text('{"id": "a", "output": "ok"}\n')
    suite = {"dataset": "cases.jsonl", "assertions": [{"type": "contains", "value": "ok"}]}
    project.write("d.tests.yaml", {"agent": "bot", "test_suites": {"ds": suite}})
    result = project.run("run", "d.tests.yaml", "--plain")
    assert result.exit_code == 0, result.stdout
    assert "PASSED  d.tests.yaml::ds::a" in result.stdout.splitlines()
    assert "cases.jsonl::ds::a" not in result.stdout
    (test,) = result.report["tests"]
    assert test["key"] == "d.tests.yaml::ds::cases.jsonl:1"
