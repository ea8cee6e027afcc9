"""Red team of matrix runs (issue 31): a matrix run must not say more than its targets did."""

from __future__ import annotations

import json

from runner_support import Project
from runner_support import versioned_agent as _agent


def _suite(project: Project, agent: str = "bot") -> None:
    # refund passes on v1 and fails on v2; boom fails everywhere (it stops a --fail-fast run).
    project.tests_file(
        "t.yaml",
        {
            "orders": [
                {"id": "refund", "input": "order 1042", "expect": {"contains": "1042"}},
                {"id": "boom", "input": "hello", "expect": {"contains": "never said"}},
                {"id": "greeting", "input": "hello", "expect": {"contains": "hello"}},
            ]
        },
        agent=agent,
    )


def _pair(project: Project, base: str, cand: str) -> list[str]:
    """``--target base=… --target cand=…`` with versions of the versioned agent."""
    return [
        "--target",
        f"base={_agent(project, base)}",
        "--target",
        f"cand={_agent(project, cand)}",
    ]


def test_a_resume_with_another_spec_under_a_label_is_refused(project: Project) -> None:
    # red team, probe "resume with other targets": cand=v1 passes refund, the run stops at
    # boom (--fail-fast); resumed with cand=v2 (which fails refund), the stored pass of v1
    # was kept as cand's verdict: one label, two agents, and a pass a fresh run never gives.
    _suite(project)
    v1, v2 = _agent(project, "v1"), _agent(project, "v2")
    first = project.run(
        "run",
        "t.yaml",
        "--target",
        f"base={v1}",
        "--target",
        f"cand={v1}",
        "-j",
        "1",
        "--fail-fast",
    )
    assert first.report is not None
    done = {(t["id"], t["target"]): t["status"] for t in first.report["tests"]}
    assert done[("refund", "cand")] == "passed"
    resumed = project.run(
        "run", "--resume", "last", "--target", f"base={v1}", "--target", f"cand={v2}"
    )
    assert resumed.exit_code == 2, resumed.stdout + resumed.stderr
    assert "--target" in resumed.stderr + resumed.stdout
    # Another order makes another label the base: refused too; the same targets resume.
    swapped = project.run(
        "run", "--resume", "last", "--target", f"cand={v1}", "--target", f"base={v1}"
    )
    assert swapped.exit_code == 2, swapped.stdout + swapped.stderr
    again = project.run(
        "run", "--resume", "last", "--target", f"base={v1}", "--target", f"cand={v1}"
    )
    assert again.exit_code == 1  # boom fails, the rest ran
    assert again.report is not None
    assert {t["target"] for t in again.report["tests"]} == {"base", "cand"}


def test_a_resume_with_other_labels_is_refused(project: Project) -> None:
    # red team, probe "resume with other targets": labels changed (a third one added) keep
    # the stored cells of the first two while the base/candidate pairing changes.
    _suite(project)
    v1, v2 = _agent(project, "v1"), _agent(project, "v2")
    project.run(
        "run",
        "t.yaml",
        "--target",
        f"base={v1}",
        "--target",
        f"cand={v2}",
        "-j",
        "1",
        "--fail-fast",
    )
    resumed = project.run(
        "run",
        "--resume",
        "last",
        "--target",
        f"new={v2}",
        "--target",
        f"base={v1}",
        "--target",
        f"cand={v2}",
    )
    assert resumed.exit_code == 2, resumed.stdout + resumed.stderr


def test_merge_refuses_shard_reports_whose_labels_were_reordered(project: Project) -> None:
    # red team, probe "shard + merge with edited targets": the plan's labels (their order
    # makes the first the base of every comparison) were outside the plan's digest, so two
    # shard reports edited to say targets [cand, base] merged into a run whose base is cand:
    # cand's regression read as a fix.
    _suite(project)
    shards = [
        project.run("run", "t.yaml", "--shard", f"{i}/2", *_pair(project, "v1", "v2"))
        for i in (1, 2)
    ]
    files = []
    for number, part in enumerate(shards):
        assert part.report is not None and part.report["plan"]["targets"] == ["base", "cand"]
        edited = {**part.report, "targets": ["cand", "base"]}
        edited["plan"] = {**part.report["plan"], "targets": ["cand", "base"]}
        path = project.root / f"edited-{number}.json"
        path.write_text(json.dumps(edited), encoding="utf-8")
        files.append(str(path))
    merged = project.run("merge", *files)
    assert merged.exit_code == 2, merged.stdout + merged.stderr
    assert "edited" in merged.stdout + merged.stderr
    honest = project.run("merge", *(str(project.root / f"report-{i}.json") for i in (1, 2)))
    assert honest.report is not None and honest.report["targets"] == ["base", "cand"]


def test_a_resume_after_the_config_matrix_changed_a_spec_is_refused(project: Project) -> None:
    # red team, probe "resume after changing matrix:": the same labels, cand now another
    # agent in the config: cand's stored pass (v1) was kept for v2, which fails refund.
    _suite(project, agent="notes")
    v1, v2 = _agent(project, "v1"), _agent(project, "v2")
    config = {"agents": {"one": v1, "two": v2}, "matrix": {"notes": {"base": "one", "cand": "one"}}}
    project.write("assertly.yaml", config)
    first = project.run("run", "t.yaml", "-j", "1", "--fail-fast")
    assert first.report is not None and first.report["targets"] == ["base", "cand"]
    project.write("assertly.yaml", {**config, "matrix": {"notes": {"base": "one", "cand": "two"}}})
    resumed = project.run("run", "--resume", "last")
    assert resumed.exit_code == 2, resumed.stdout + resumed.stderr
    project.write("assertly.yaml", config)
    again = project.run("run", "--resume", "last")
    assert again.exit_code == 1 and again.report is not None  # boom fails on both
    assert len(again.report["tests"]) == 6


def test_a_recheck_after_the_matrix_labels_changed_is_refused(project: Project) -> None:
    # red team, probe "recheck after the labels changed": cand renamed zzz in the config's
    # matrix; the recheck kept only the cells whose keys still exist (base's), dropped cand's
    # failure and exited 0 with an empty zzz column.
    project.tests_file(
        "t.yaml",
        {"orders": [{"id": "refund", "input": "order 1042", "expect": {"contains": "1042"}}]},
        agent="notes",
    )
    config = {
        "agents": {"one": _agent(project, "v1"), "two": _agent(project, "v2")},
        "matrix": {"notes": {"base": "one", "cand": "two"}},
    }
    project.write("assertly.yaml", config)
    first = project.run("run", "t.yaml")
    assert first.exit_code == 1 and first.report is not None
    project.write("assertly.yaml", {**config, "matrix": {"notes": {"base": "one", "zzz": "two"}}})
    rechecked = project.run("recheck", first.report["run_id"])
    assert rechecked.exit_code == 2, rechecked.stdout + rechecked.stderr
    assert "cand" in rechecked.stdout + rechecked.stderr
    project.write("assertly.yaml", config)
    again = project.run("recheck", first.report["run_id"])
    assert again.exit_code == 1 and again.report is not None
    assert again.report["targets"] == ["base", "cand"]
