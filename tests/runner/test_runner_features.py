"""Multi-step tests, setup/cleanup hooks, skip facts, combined filters and --fail-fast, all run
through `assertly run` against the real subprocess agent.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import pytest
from runner_support import AGENT, Project, process_alive

HOOK = r"""
import sys
import time
from pathlib import Path

log = Path(__file__).with_name("hooks.log")
with log.open("a") as handle:
    handle.write(sys.argv[1] + "\n")
if sys.argv[1] == "fail":
    sys.stderr.write("could not seed the database\n")
    sys.exit(4)
"""


def _log(project: Project, name: str = "calls.log") -> list[str]:
    path = project.root / name
    return path.read_text().split() if path.exists() else []


# --- multi-step ---------------------------------------------------------------------------------


def test_multi_step_store_and_no_overlap(project: Project) -> None:
    log = str(project.root / "calls.log")

    def step(name: str, files: list[str], **extra: Any) -> dict[str, Any]:
        return {"step": name, "input": {"files": files, "log": log, "tag": name}, **extra}

    project.tests_file(
        "steps.tests.yaml",
        {
            "paging": [
                {
                    "id": "disjoint",
                    "multi_step": [
                        step("p1", ["a", "b"], store="first", expect={"results_count": 2}),
                        step(
                            "p2",
                            ["c", "d"],
                            expect={"no_overlap": {"path": "results[*].file", "with": "first"}},
                        ),
                    ],
                },
                {
                    "id": "overlapping",
                    "multi_step": [
                        step("q1", ["a", "b"], store="first"),
                        step(
                            "q2",
                            ["b", "c"],
                            expect={"no_overlap": {"path": "results[*].file", "with": "first"}},
                        ),
                    ],
                },
                {
                    "id": "stops-early",
                    "multi_step": [
                        step("r1", ["a"], expect={"results_count": 5}),
                        step("r2", ["b"], expect={"results_count": 1}),
                    ],
                },
                {
                    "id": "unknown-store",
                    "multi_step": [
                        step("s1", ["a"], store="first", expect={"status": "success"}),
                        step(
                            "s2",
                            ["b"],
                            expect={"no_overlap": {"path": "results[*].file", "with": "frist"}},
                        ),
                    ],
                },
            ]
        },
    )
    result = project.run("run", ".", "--target", project.agent, "-j", "1")
    assert result.exit_code == 1
    assert result.status("disjoint") == "passed"
    assert result.tests["disjoint"]["score"] == 1.0

    overlapping = result.tests["overlapping"]
    assert overlapping["status"] == "failed"
    [failure] = overlapping["trials"][0]["failures"]
    assert failure["step"] == "q2"
    assert failure["assertion"] == "no_overlap"
    assert "overlaps with step 'first'" in failure["message"]
    assert failure["actual"] == ["b"]

    stops = result.tests["stops-early"]
    assert stops["status"] == "failed"
    assert [f["step"] for f in stops["trials"][0]["failures"]] == ["r1"]

    unknown = result.tests["unknown-store"]
    assert unknown["status"] == "error"
    assert "no stored step named 'frist'" in unknown["trials"][0]["failures"][0]["message"]

    # Steps run in order within one trial; a failed step ends the trial (r2 never called).
    calls = _log(project)
    assert calls.index("p1") < calls.index("p2")
    assert calls.index("q1") < calls.index("q2")
    assert "r1" in calls and "r2" not in calls
    assert result.counts() == (4, 1, 2, 1, 0)


def test_multi_step_with_top_level_expect_is_a_load_error(project: Project) -> None:
    project.tests_file(
        "bad.tests.yaml",
        {
            "s": [
                {
                    "id": "mixed",
                    "expect": {"status": "success"},
                    "multi_step": [{"step": 1, "input": {}, "expect": {"status": "success"}}],
                }
            ]
        },
    )
    result = project.run("run", ".", "--target", project.agent)
    assert result.status("mixed") == "error"
    assert "puts expect/assertions in its steps" in result.tests["mixed"]["trials"][0]["error"]


# --- hooks --------------------------------------------------------------------------------------


@pytest.fixture
def hooks(project: Project) -> Project:
    hook = project.write("hook.py", HOOK)
    python = sys.executable
    project.write(
        "assertly.yaml",
        {
            "agents": {"bot": project.agent},
            "hooks": {
                "seed": f"{python} {hook} setup",
                "wipe": [python, str(hook), "cleanup"],
                "broken": f"{python} {hook} fail",
            },
        },
    )
    return project


def _hook_log(project: Project) -> list[str]:
    return _log(project, "hooks.log")


def test_setup_and_cleanup_run_around_a_passing_test(hooks: Project) -> None:
    log = str(hooks.root / "hooks.log")
    hooks.tests_file(
        "h.tests.yaml",
        {
            "s": [
                {
                    "id": "t",
                    "setup": "seed",
                    "cleanup": ["wipe"],
                    "input": {"log": log, "tag": "agent"},
                    "expect": {"status": "success"},
                }
            ]
        },
    )
    result = hooks.run("run", ".")
    assert result.exit_code == 0
    assert result.status("t") == "passed"
    assert _hook_log(hooks) == ["setup", "agent", "cleanup"]


@pytest.mark.parametrize(
    ("test_input", "status"),
    [({"status": "error"}, "failed"), ({"mode": "crash"}, "error")],
)
def test_cleanup_runs_even_when_the_test_fails(
    hooks: Project, test_input: dict[str, Any], status: str
) -> None:
    hooks.tests_file(
        "h.tests.yaml",
        {
            "s": [
                {
                    "id": "t",
                    "setup": "seed",
                    "cleanup": "wipe",
                    "input": test_input,
                    "expect": {"status": "success"},
                }
            ]
        },
    )
    result = hooks.run("run", ".")
    assert result.exit_code == 1
    assert result.status("t") == status
    assert _hook_log(hooks) == ["setup", "cleanup"]


def test_unknown_or_failing_hook_makes_that_test_an_error(hooks: Project) -> None:
    log = str(hooks.root / "calls.log")
    hooks.tests_file(
        "h.tests.yaml",
        {
            "s": [
                {
                    "id": "unknown-setup",
                    "setup": "nope",
                    "cleanup": "wipe",
                    "input": {"log": log, "tag": "unknown-setup"},
                    "expect": {"status": "success"},
                },
                {
                    "id": "unknown-cleanup",
                    "cleanup": "missing",
                    "input": {"log": log, "tag": "unknown-cleanup"},
                    "expect": {"status": "success"},
                },
                {
                    "id": "failing-setup",
                    "setup": "broken",
                    "input": {"log": log, "tag": "failing-setup"},
                    "expect": {"status": "success"},
                },
                {"id": "fine", "input": {}, "expect": {"status": "success"}},
            ]
        },
    )
    result = hooks.run("run", ".", "-j", "1")
    assert result.exit_code == 1
    assert result.counts() == (4, 1, 0, 3, 0)
    tests = result.tests
    assert "unknown hook 'nope'" in tests["unknown-setup"]["trials"][0]["error"]
    assert tests["unknown-setup"]["trials"][0]["error"].startswith("setup:")
    assert "unknown hook 'missing'" in tests["unknown-cleanup"]["trials"][0]["error"]
    assert tests["unknown-cleanup"]["trials"][0]["error"].startswith("cleanup:")
    error = tests["failing-setup"]["trials"][0]["error"]
    assert "hook 'broken' exited with code 4" in error
    assert "could not seed the database" in error
    # A failed setup means the agent is never called; cleanup still runs.
    assert _log(hooks) == ["unknown-cleanup"]
    assert _hook_log(hooks) == ["cleanup", "fail"]


def test_hook_timeout_kills_the_hook_and_its_children(project: Project) -> None:
    pidfile = project.root / "hook-child.pid"
    hook = project.write(
        "slow_hook.py",
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pidfile)!r}, 'w').write(str(child.pid))\n"
        "time.sleep(60)\n",
    )
    project.write("assertly.yaml", {"hooks": {"slow": f"{sys.executable} {hook}"}})
    project.tests_file(
        "h.tests.yaml",
        {"s": [{"id": "t", "setup": "slow", "input": {}, "expect": {"status": "success"}}]},
    )
    started = time.monotonic()
    result = project.run("run", ".", "--target", project.agent, "--timeout", "1")
    assert time.monotonic() - started < 8
    assert result.status("t") == "error"
    assert "hook 'slow' timed out after 1 s" in result.tests["t"]["trials"][0]["error"]
    child = int(pidfile.read_text())
    deadline = time.monotonic() + 3
    while process_alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not process_alive(child)


def test_relative_paths_in_the_config_resolve_against_its_directory(project: Project) -> None:
    python = sys.executable
    project.write("proj/agent.py", AGENT)
    project.write("proj/hook.py", HOOK)
    project.write(
        "proj/assertly.yaml",
        {
            "agents": {"bot": f"cmd:{python} agent.py"},
            "hooks": {"seed": f"{python} hook.py setup", "wipe": [python, "hook.py", "cleanup"]},
            "store": "runs/store.sqlite",
        },
    )
    project.tests_file(
        "proj/t.tests.yaml",
        {
            "s": [
                {
                    "id": "t",
                    "setup": "seed",
                    "cleanup": "wipe",
                    "input": {"log": "calls.log"},  # relative: written where the agent runs
                    "expect": {"status": "success"},
                }
            ]
        },
    )
    # Run from the directory above: the agent and the hooks run in the config's directory,
    # and the store is relative to it.
    result = project.run("run", "proj", "--config", "proj/assertly.yaml")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert _log(project, "proj/calls.log") == ["ok"]
    assert _log(project, "proj/hooks.log") == ["setup", "cleanup"]
    assert (project.root / "proj/runs/store.sqlite").is_file()
    assert not (project.root / "runs").exists() and not (project.root / ".assertly").exists()
    assert project.run("report", "last", "--store", "proj/runs/store.sqlite").exit_code == 0
    # A --target from the command line runs in the current directory.
    target = f"cmd:{python} proj/agent.py"
    cli = project.run("run", "proj", "--config", "proj/assertly.yaml", "--target", target)
    assert cli.exit_code == 0, cli.stdout + cli.stderr
    assert _log(project) == ["ok"]
    assert _log(project, "proj/calls.log") == ["ok"]


# --- skip facts ---------------------------------------------------------------------------------


def _skip_tests(project: Project) -> None:
    project.tests_file(
        "skip.tests.yaml",
        {
            "s": [
                {
                    "id": "ci-only-skip",
                    "skip_if": "on_ci",
                    "input": {},
                    "expect": {"status": "success"},
                },
                {
                    "id": "slow-skip",
                    "skip_if": "slow_env",
                    "input": {},
                    "expect": {"status": "success"},
                },
                {
                    "id": "undeclared",
                    "skip_if": "mystery_fact",
                    "input": {},
                    "expect": {"status": "success"},
                },
                {"id": "always", "input": {}, "expect": {"status": "success"}},
            ]
        },
    )


def test_skip_if_with_cli_and_config_facts(project: Project) -> None:
    project.write("assertly.yaml", {"facts": {"slow_env": True, "on_ci": False}})
    _skip_tests(project)
    result = project.run("run", ".", "--target", project.agent, "--fact", "on_ci=true")
    assert result.exit_code == 0
    assert result.status("ci-only-skip") == "skipped"
    assert result.tests["ci-only-skip"]["trials"][0]["reason"] == "skip_if: on_ci is true"
    assert result.status("slow-skip") == "skipped"
    assert result.status("undeclared") == "passed"  # an undeclared fact is false …
    assert result.status("always") == "passed"
    assert result.counts() == (4, 2, 0, 0, 2)
    assert result.summary["pass_rate"] == 1.0  # skipped tests are not judged
    assert result.report is not None
    # … and the report warns about it.
    assert any("mystery_fact" in warning for warning in result.report["warnings"])
    assert "mystery_fact" in result.stdout


def test_cli_fact_overrides_config_fact(project: Project) -> None:
    project.write("assertly.yaml", {"facts": {"slow_env": True}})
    _skip_tests(project)
    result = project.run(
        "run", ".", "--target", project.agent, "--fact", "slow_env=false", "--fact", "on_ci=no"
    )
    assert result.status("slow-skip") == "passed"
    assert result.status("ci-only-skip") == "passed"
    assert result.counts() == (4, 4, 0, 0, 0)
    assert result.report is not None
    assert [w for w in result.report["warnings"] if "on_ci" in w] == []


def test_fact_from_the_environment(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    project.write("assertly.yaml", {"facts": {"slow_env": False}})
    _skip_tests(project)
    monkeypatch.setenv("on_ci", "true")
    monkeypatch.setenv("slow_env", "1")  # the environment overrides the config …
    monkeypatch.setenv("mystery_fact", "no")
    result = project.run("run", ".", "--target", project.agent, "--fact", "slow_env=false")
    assert result.status("ci-only-skip") == "skipped"
    assert result.status("slow-skip") == "passed"  # … and --fact overrides both
    assert result.status("undeclared") == "passed"
    assert result.report is not None
    assert result.report["warnings"] == []  # every fact was declared somewhere


def test_warnings_survive_in_the_store(project: Project) -> None:
    _skip_tests(project)
    live = project.run("run", ".", "--target", project.agent)
    again = project.run("report", "last")
    assert live.report is not None and again.report is not None
    assert [w for w in live.report["warnings"] if "mystery_fact" in w]
    assert again.report["warnings"] == live.report["warnings"]
    assert again.report["summary"] == live.report["summary"]


def test_bad_fact_argument_is_a_usage_error(project: Project) -> None:
    _skip_tests(project)
    result = project.run("run", ".", "--target", project.agent, "--fact", "on_ci")
    assert result.exit_code == 2
    assert "--fact" in result.stderr
    assert result.report is None


# --- filters ------------------------------------------------------------------------------------


@pytest.fixture
def filtered(project: Project) -> Project:
    project.write(
        "alpha.tests.yaml",
        {
            "agent": "alpha",
            "test_suites": {
                "search": {
                    "tags": ["smoke"],
                    "tests": [
                        {
                            "id": "a1",
                            "name": "finds notes",
                            "input": {},
                            "expect": {"status": "success"},
                        },
                        {
                            "id": "a2",
                            "tags": ["slow"],
                            "input": {},
                            "expect": {"status": "success"},
                        },
                    ],
                },
                "write": {
                    "tests": [
                        {
                            "id": "a3",
                            "tags": ["smoke"],
                            "input": {},
                            "expect": {"status": "success"},
                        },
                    ]
                },
            },
        },
    )
    project.write(
        "beta.tests.yaml",
        {
            "agent": "beta",
            "test_suites": {
                "search": {
                    "tests": [
                        {
                            "id": "b1",
                            "tags": ["smoke"],
                            "input": {},
                            "expect": {"status": "success"},
                        },
                        {"id": "b2", "input": {}, "expect": {"status": "success"}},
                    ]
                }
            },
        },
    )
    return project


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((), {"a1", "a2", "a3", "b1", "b2"}),
        (("--agent", "alpha"), {"a1", "a2", "a3"}),
        (("--agent", "alpha", "--suite", "search"), {"a1", "a2"}),
        (("--agent", "alpha", "--suite", "search", "--tag", "smoke", "-k", "not slow"), {"a1"}),
        (("--suite", "search", "--tag", "smoke"), {"a1", "a2", "b1"}),
        (("--test", "a*", "--tag", "smoke"), {"a1", "a2", "a3"}),
        (("--test", "a1", "--test", "b2"), {"a1", "b2"}),
        (("-k", "a3 or b1"), {"a3", "b1"}),
        (("-k", "notes"), {"a1"}),  # -k matches the name too
        (("--agent", "beta", "-k", "not smoke"), {"b2"}),
    ],
)
def test_filters_combine(filtered: Project, args: tuple[str, ...], expected: set[str]) -> None:
    result = filtered.run("run", ".", "--target", filtered.agent, *args)
    assert result.exit_code == 0
    assert set(result.tests) == expected
    assert result.summary["total"] == len(expected)


@pytest.mark.parametrize(
    "args",
    [
        ("--suite", "nope"),
        ("--agent", "alpha", "--tag", "nope"),
        ("-k", "(a1)(a2)"),
        ("-k", "a1 a2"),
    ],
)
def test_filters_matching_nothing_or_unparseable_are_usage_errors(
    filtered: Project, args: tuple[str, ...]
) -> None:
    result = filtered.run("run", ".", "--target", filtered.agent, *args)
    assert result.exit_code == 2
    assert result.report is None
    assert result.stderr.strip()


# --- fail-fast ----------------------------------------------------------------------------------


@pytest.mark.parametrize("first", [{"status": "error"}, {"mode": "crash"}])
def test_fail_fast_skips_later_tests_with_a_reason(project: Project, first: dict[str, Any]) -> None:
    log = str(project.root / "calls.log")
    tests = [
        {"id": "t1", "input": {**first, "log": log, "tag": "t1"}, "expect": {"status": "success"}}
    ]
    tests += [
        {"id": f"t{i}", "input": {"log": log, "tag": f"t{i}"}, "expect": {"status": "success"}}
        for i in range(2, 6)
    ]
    project.tests_file("ff.tests.yaml", {"s": tests})
    result = project.run("run", ".", "--target", project.agent, "-j", "1", "--fail-fast")
    assert result.exit_code == 1
    assert result.status("t1") in ("failed", "error")
    for i in range(2, 6):
        test = result.tests[f"t{i}"]
        assert test["status"] == "skipped"
        assert "fail-fast" in test["trials"][0]["reason"]
    assert _log(project) == ["t1"], "no test may start after the failure with -j 1"
    assert result.summary["skipped"] == 4


def test_without_fail_fast_everything_runs(project: Project) -> None:
    log = str(project.root / "calls.log")
    project.tests_file(
        "ff.tests.yaml",
        {
            "s": [
                {
                    "id": "t1",
                    "input": {"status": "error", "log": log, "tag": "t1"},
                    "expect": {"status": "success"},
                },
                {"id": "t2", "input": {"log": log, "tag": "t2"}, "expect": {"status": "success"}},
            ]
        },
    )
    result = project.run("run", ".", "--target", project.agent, "-j", "1")
    assert result.counts() == (2, 1, 1, 0, 0)
    assert sorted(_log(project)) == ["t1", "t2"]


def test_fail_fast_lets_a_passing_run_finish(project: Project) -> None:
    project.tests_file(
        "ff.tests.yaml",
        {"s": [{"id": f"t{i}", "input": {}, "expect": {"status": "success"}} for i in range(4)]},
    )
    result = project.run("run", ".", "--target", project.agent, "-j", "2", "--fail-fast")
    assert result.exit_code == 0
    assert result.counts() == (4, 4, 0, 0, 0)


def test_missing_target_for_agent_is_an_error(project: Project, tmp_path: Path) -> None:
    project.tests_file(
        "a.tests.yaml", {"s": [{"id": "t", "input": {}, "expect": {"status": "success"}}]}
    )
    result = project.run("run", ".")
    assert result.status("t") == "error"
    assert "no target for agent 'bot'" in result.tests["t"]["trials"][0]["error"]


def test_a_recheck_keeps_the_error_of_a_cleanup_that_failed(hooks: Project) -> None:
    """Its steps passed, its cleanup failed: an error, and a recheck (no hooks) keeps it."""
    log = str(hooks.root / "calls.log")
    hooks.tests_file(
        "h.tests.yaml",
        {
            "s": [
                {
                    "id": "t",
                    "cleanup": "broken",
                    "input": {"log": log, "tag": "agent"},
                    "expect": {"status": "success"},
                }
            ]
        },
    )
    first = hooks.run("run", ".")
    assert first.status("t") == "error"
    assert first.tests["t"]["trials"][0]["error"].startswith("cleanup: ")
    again = hooks.run("recheck", "last")
    assert again.status("t") == "error", again.tests["t"]["trials"][0]
