"""Red team of ``--resume`` (#28 item 8): a resumed run holds what a fresh run would."""

from __future__ import annotations

import json

from runner_support import Project

IDS = [f"t{number}" for number in range(6)]


def _suite(project: Project, expected: str, ids: list[str]) -> str:
    answers = project.root / "answers.jsonl"
    answers.write_text("".join(json.dumps({"id": i, "output": "ok"}) + "\n" for i in IDS))
    tests = [
        {"id": i, "input": i, "assertions": [{"type": "contains", "value": expected}]} for i in ids
    ]
    project.write("a.tests.yaml", {"agent": "bot", "test_suites": {"s": {"tests": tests}}})
    return f"fixtures:{answers}"


def test_a_resume_drops_the_verdicts_of_tests_removed_since(project: Project) -> None:
    # red team, probe "resume after removing tests": 6 tests pass; 5 are removed from the file
    # and the one left now fails. `--resume last --min-pass-rate 0.8` kept the 5 stale passes
    # (6 tests, 83.3 %, exit 0) where a fresh run has 1 test at 0 %.
    target = _suite(project, "ok", IDS)
    assert project.run("run", ".", "--target", target).counts() == (6, 6, 0, 0, 0)
    _suite(project, "nope", IDS[:1])
    resumed = project.run(
        "run", ".", "--target", target, "--resume", "last", "--min-pass-rate", "0.8"
    )
    assert resumed.counts() == (1, 0, 1, 0, 0)
    assert resumed.exit_code == 1
    assert resumed.report is not None
    said = " ".join(resumed.report["warnings"])
    assert "5 test(s) of run" in said and "a.tests.yaml::s::t5" in said, said
    stored = project.sql("SELECT COUNT(*) FROM tests WHERE run_id = (SELECT MAX(run_id) FROM runs)")
    assert stored == [(1,)], "the removed tests' metadata is gone from the store too"


def test_a_resume_with_another_filter_is_refused_and_keeps_every_verdict(
    project: Project,
) -> None:
    # red team, probe "resume with a narrower -k": a resume drops the stored tests its plan no
    # longer holds; given `-k t0`, that would delete 5 verdicts of tests that still exist.
    target = _suite(project, "ok", IDS)
    project.run("run", ".", "--target", target)
    narrowed = project.run("run", ".", "--target", target, "--resume", "last", "-k", "t0")
    assert narrowed.exit_code == 2 and "other -k than given now" in narrowed.stderr
    assert project.sql("SELECT COUNT(*) FROM tests") == [(6,)]
    assert project.sql("SELECT COUNT(*) FROM trials") == [(6,)]
    # The run's own filters, given again, are fine.
    project.run("run", ".", "--target", target, "-k", "t")
    assert project.run("run", ".", "--resume", "last", "-k", "t").counts() == (6, 6, 0, 0, 0)


def test_a_resume_judges_an_edited_recorded_response_again(project: Project) -> None:
    # red team, probe "resume after editing a dataset line": a recorded line's output is the
    # response judged, not part of its definition; edited from passing to failing, `--resume`
    # kept the stale pass (2 passed, exit 0) where a fresh run fails it.
    data = project.root / "data" / "cases.jsonl"
    data.parent.mkdir()
    lines = [{"id": "a", "output": "a security incident"}, {"id": "b", "output": "security"}]
    data.write_text("".join(json.dumps(line) + "\n" for line in lines))
    suite = {
        "dataset": "data/cases.jsonl",
        "assertions": [{"type": "contains", "value": "security"}],
    }
    project.write("d.tests.yaml", {"agent": "bot", "test_suites": {"recorded": suite}})
    assert project.run("run", "d.tests.yaml").counts() == (2, 2, 0, 0, 0)
    lines[1]["output"] = "nothing at all"
    data.write_text("".join(json.dumps(line) + "\n" for line in lines))
    resumed = project.run("run", "d.tests.yaml", "--resume", "last")
    assert resumed.counts() == (2, 1, 1, 0, 0) and resumed.exit_code == 1
    # The same for a fixtures target's answers (no agent call either).
    target = _suite(project, "ok", IDS)
    assert project.run("run", "a.tests.yaml", "--target", target).counts() == (6, 6, 0, 0, 0)
    answers = project.root / "answers.jsonl"
    answers.write_text(answers.read_text().replace('"ok"', '"no"'))
    resumed = project.run("run", "a.tests.yaml", "--target", target, "--resume", "last")
    assert resumed.counts() == (6, 0, 6, 0, 0)
