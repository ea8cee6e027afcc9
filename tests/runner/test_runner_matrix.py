"""Matrix runs: every test against every target of one run (issue 31), with real agents.

Two versions of one real command agent (and a real HTTP server) answer side by side; each call
is logged by the agent itself, so the tests count what was really called.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from runner_support import HttpAgent, Project
from runner_support import agent_calls as _calls
from runner_support import versioned_agent as _agent

ASSERTLY = str(Path(sys.executable).parent / "assertly")


def _suite(project: Project, *, trials: int = 1, name: str = "t.yaml") -> None:
    project.tests_file(
        name,
        {
            "orders": [
                {"id": "refund", "input": "order 1042", "expect": {"contains": "1042"}},
                {"id": "greeting", "input": "hello", "expect": {"contains": "hello"}},
                {
                    "id": "repeat",
                    "input": "again",
                    "trials": trials,
                    "expect": {"contains": "again"},
                },
            ]
        },
    )


def _cells(report: dict[str, Any]) -> dict[tuple[str, str], str]:
    return {(t["id"], t["target"]): t["status"] for t in report["tests"]}


def test_every_test_runs_against_every_target_exactly_tests_times_trials(
    project: Project,
) -> None:
    _suite(project, trials=3)
    v1, v2 = _agent(project, "v1"), _agent(project, "v2")
    result = project.run("run", "t.yaml", "--target", f"base={v1}", "--target", f"cand={v2}")
    assert result.exit_code == 1, result.stdout + result.stderr  # refund fails on cand
    report = result.report
    assert report is not None
    assert report["targets"] == ["base", "cand"]
    assert _cells(report) == {
        ("refund", "base"): "passed",
        ("refund", "cand"): "failed",
        ("greeting", "base"): "passed",
        ("greeting", "cand"): "passed",
        ("repeat", "base"): "passed",
        ("repeat", "cand"): "passed",
    }
    # Each target is called tests x trials times: 1 + 1 + 3.
    calls = _calls(project)
    for version in ("v1", "v2"):
        assert calls[f"{version} order 1042"] == 1
        assert calls[f"{version} hello"] == 1
        assert calls[f"{version} again"] == 3
    assert sum(calls.values()) == 10
    keys = [t["key"] for t in report["tests"]]
    assert keys[:2] == ["t.yaml::orders::refund[base]", "t.yaml::orders::refund[cand]"]
    repeat = next(t for t in report["tests"] if t["key"].endswith("repeat[cand]"))
    assert len(repeat["trials"]) == 3
    # The disagreement is visible per test: the same test, another verdict per target.
    refund = [t for t in report["tests"] if t["id"] == "refund"]
    assert {t["status"] for t in refund} == {"passed", "failed"}
    assert "which order?" in str(next(t for t in refund if t["target"] == "cand")["trials"])


def test_an_http_agent_and_a_command_agent_side_by_side(
    project: Project, http_server: HttpAgent
) -> None:
    project.tests_file(
        "t.yaml",
        {
            "s": [
                {"id": f"q{i}", "input": f"q{i}", "expect": {"status": "success"}} for i in range(4)
            ]
        },
    )
    cmd = _agent(project, "v1")
    result = project.run(
        "run",
        "t.yaml",
        "--trials",
        "2",
        "--target",
        f"local={cmd}",
        "--target",
        f"remote={http_server.url('/ok')}",
    )
    assert result.exit_code == 0, result.stdout + result.stderr
    assert result.report is not None
    assert result.report["targets"] == ["local", "remote"]
    assert len(http_server.hits("/ok")) == 4 * 2
    assert sum(_calls(project).values()) == 4 * 2
    assert Counter(t["target"] for t in result.report["tests"]) == {"local": 4, "remote": 4}


def test_the_config_matrix_varies_one_agent_of_two(project: Project) -> None:
    v1, v2 = _agent(project, "v1"), _agent(project, "v2")
    project.tests_file(
        "notes.yaml",
        {"n": [{"id": "order", "input": "order 7", "expect": {"status": "success"}}]},
        agent="notes",
    )
    project.tests_file(
        "search.yaml",
        {"s": [{"id": "find", "input": "find", "expect": {"status": "success"}}]},
        agent="search",
    )
    project.write(
        "assertly.yaml",
        {
            "agents": {
                "notes_v1": v1,
                "notes_v2": v2,
                "search": _agent(project, "search"),
            },
            "matrix": {"notes": {"v1": "notes_v1", "v2": "notes_v2"}},
        },
    )
    result = project.run("run", "notes.yaml", "search.yaml")
    assert result.exit_code == 0, result.stdout + result.stderr
    report = result.report
    assert report is not None and report["targets"] == ["v1", "v2"]
    by_key = {t["key"]: t.get("target") for t in report["tests"]}
    assert by_key == {
        "notes.yaml::n::order[v1]": "v1",
        "notes.yaml::n::order[v2]": "v2",
        "search.yaml::s::find": None,  # an agent the matrix does not vary runs once
    }
    calls = _calls(project)
    assert calls == Counter({"v1 order 7": 1, "v2 order 7": 1, "search find": 1})


def test_hooks_see_the_label_of_their_target(project: Project) -> None:
    project.write(
        "hook.py",
        "import os\nopen('hooks.log', 'a').write(os.environ['ASSERTLY_TARGET'] + '\\n')\n",
    )
    project.write("assertly.yaml", {"hooks": {"mark": f"{sys.executable} hook.py"}})
    project.tests_file(
        "t.yaml",
        {"s": [{"id": "one", "input": "x", "setup": ["mark"], "expect": {"status": "success"}}]},
    )
    result = project.run(
        "run",
        "t.yaml",
        "--target",
        f"a={_agent(project, 'v1')}",
        "--target",
        f"b={_agent(project, 'v2')}",
    )
    assert result.exit_code == 0, result.stdout + result.stderr
    assert sorted((project.root / "hooks.log").read_text().split()) == ["a", "b"]


@pytest.mark.parametrize(
    ("targets", "message"),
    [
        (["a=cmd:x", "a=cmd:y"], "the label 'a' is given twice"),
        (["a::b=cmd:x", "c=cmd:y"], "is not a target label"),
        (["cmd:x", "c=cmd:y"], "has no label beside labelled targets"),
        (["cmd:x", "cmd:y"], "without labels"),
        (["a=nosuchagent", "b=cmd:y"], "nor is it an agent of the config"),
    ],
)
def test_bad_targets_are_usage_errors(project: Project, targets: list[str], message: str) -> None:
    _suite(project)
    argv = [part for target in targets for part in ("--target", target)]
    result = project.run("run", "t.yaml", *argv)
    assert result.exit_code == 2, result.stdout + result.stderr
    assert message in result.stderr
    assert not (project.root / "calls.log").exists()


def test_a_config_matrix_naming_no_agent_is_a_load_error_at_its_line(project: Project) -> None:
    _suite(project)
    project.write(
        "assertly.yaml",
        "agents:\n  bot_v1: cmd:true\n"
        "matrix:\n  bot:\n    v1: bot_v1\n    v2: bot_v3\n"
        "  other:\n    v1: bot_v1\n    v9: bot_v1\n",
    )
    result = project.run("run", "t.yaml")
    assert result.exit_code == 2
    assert "assertly.yaml:6" in result.stderr and "unknown agent 'bot_v3'" in result.stderr
    assert "did you mean 'bot_v1'" in result.stderr
    assert "labels v1, v9 differ from matrix.bot's (v1, v2)" in result.stderr
    validate = project.run("validate", "t.yaml")
    assert validate.exit_code == 2 and "unknown agent 'bot_v3'" in validate.stderr
    project.write("assertly.yaml", "matrix:\n  bot:\n    'a::b': cmd:true\n")
    result = project.run("run", "t.yaml")
    assert result.exit_code == 2 and "matrix.bot" in result.stderr


def test_shards_split_the_cells_and_recheck_judges_every_target(project: Project) -> None:
    _suite(project)
    targets = [
        "--target",
        f"base={_agent(project, 'v1')}",
        "--target",
        f"cand={_agent(project, 'v2')}",
    ]
    parts = [project.run("run", "t.yaml", "--shard", f"{i}/3", *targets) for i in (1, 2, 3)]
    keys = [t["key"] for part in parts for t in (part.report or {}).get("tests", [])]
    assert len(keys) == len(set(keys)) == 6
    assert sum(_calls(project).values()) == 6
    # The shards of one test's targets are independent: a split that kept cells together
    # would give every shard an even number of cells.
    merged = project.run("merge", *(p.report["run_id"] for p in parts if p.report))
    assert merged.exit_code == 1, merged.stdout + merged.stderr
    assert merged.report is not None and merged.report["targets"] == ["base", "cand"]
    assert _cells(merged.report)[("refund", "cand")] == "failed"
    # Recheck with the refund test now accepting what v2 says: every target judged again,
    # nothing called.
    project.tests_file(
        "t.yaml",
        {
            "orders": [
                {"id": "refund", "input": "order 1042", "expect": {"status": "success"}},
                {"id": "greeting", "input": "hello", "expect": {"contains": "hello"}},
                {"id": "repeat", "input": "again", "expect": {"contains": "again"}},
            ]
        },
    )
    full = project.run("run", "t.yaml", *targets)
    calls = sum(_calls(project).values())
    assert full.exit_code == 0 and full.report is not None
    _suite(project)  # back to the expectation v2 fails
    rechecked = project.run("recheck", full.report["run_id"])
    assert rechecked.exit_code == 1, rechecked.stdout + rechecked.stderr
    assert rechecked.report is not None and rechecked.report["targets"] == ["base", "cand"]
    cells = _cells(rechecked.report)
    assert cells.pop(("refund", "cand")) == "failed"
    assert set(cells.values()) == {"passed"} and len(cells) == 5
    assert sum(_calls(project).values()) == calls  # a recheck calls nothing


def _stored_trials(root: Path) -> int:
    path = root / ".assertly/runs.sqlite"
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(path, timeout=5) as db:
            return int(db.execute("SELECT COUNT(*) FROM trials").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def test_resume_after_an_interrupted_matrix_run_calls_only_what_was_not_done(
    project: Project,
) -> None:
    project.tests_file(
        "t.yaml",
        {
            "s": [
                {"id": f"t{i}", "input": f"slow {i}", "expect": {"status": "success"}}
                for i in range(4)
            ]
        },
    )
    v1, v2 = _agent(project, "v1"), _agent(project, "v2")
    argv = ["run", "t.yaml", "-j", "1", "--target", f"base={v1}", "--target", f"cand={v2}"]
    process = subprocess.Popen(
        [ASSERTLY, *argv], cwd=project.root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 60
        while _stored_trials(project.root) < 3:
            assert process.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.01)
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.wait(timeout=10)
    # The agent of the call in flight is in a session of its own (assertly ends it on Ctrl-C,
    # which SIGKILL gives no chance to): it writes its line before it sleeps; let it finish.
    time.sleep(1.0)
    stored = {key for (key,) in project.sql("SELECT test_key FROM trials")}
    assert len(stored) >= 3
    before = _calls(project)
    resumed = subprocess.run(
        [ASSERTLY, "run", "--resume", "last", "-o", "resumed.json"],
        cwd=project.root,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    after = _calls(project) - before
    # Only the cells with no stored verdict were called: (label, input) of each.
    not_done = {
        ("v1" if key.endswith("[base]") else "v2", f"slow {key.split('::t')[-1][0]}")
        for key in (f"t.yaml::s::t{i}[{label}]" for i in range(4) for label in ("base", "cand"))
        if key not in stored
    }
    assert set(after) == {f"{version} {value}" for version, value in not_done}
    assert sum(after.values()) == len(not_done)
    import json

    report = json.loads((project.root / "resumed.json").read_text())
    assert len(report["tests"]) == 8 and report["targets"] == ["base", "cand"]


def test_validate_takes_an_agent_of_the_matrix_as_answered(project: Project) -> None:
    project.write(
        "assertly.yaml",
        {"agents": {"v1": _agent(project, "v1")}, "matrix": {"bot": {"a": "v1", "b": "cmd:true"}}},
    )
    _suite(project)
    result = project.run("validate", "t.yaml")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "no target for agent" not in result.stdout + result.stderr
