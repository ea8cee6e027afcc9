"""Suite-level setup/cleanup hooks, run through `assertly run` with real hook processes and the
real subprocess agent: once per suite (also with -j), lazily, around exactly the suite's tests;
a failing setup errors the suite's tests; a failing cleanup fails the run.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from runner_support import Project

HOOK = r"""
import sys
from pathlib import Path

with Path(__file__).with_name("events.log").open("a") as handle:
    handle.write(sys.argv[1] + "\n")
if sys.argv[1].startswith("fail"):
    sys.stderr.write("the database is not reachable\n")
    sys.exit(5)
"""


@pytest.fixture
def hooked(project: Project) -> Project:
    hook = project.write("hook.py", HOOK)
    names = ("up-a", "down-a", "up-b", "down-b", "fail-up", "fail-down")
    project.write(
        "assertly.yaml",
        {
            "agents": {"bot": project.agent},
            "hooks": {name: f"{sys.executable} {hook} {name}" for name in names},
        },
    )
    return project


def _events(project: Project) -> list[str]:
    path = project.root / "events.log"
    return path.read_text().split() if path.exists() else []


def _test(project: Project, test_id: str, **extra: Any) -> dict[str, Any]:
    """A test whose agent call writes its id to events.log (after a short wait)."""
    log = str(project.root / "events.log")
    return {
        "id": test_id,
        "input": {"mode": "slow", "delay": 0.05, "log": log, "tag": test_id},
        "expect": {"status": "success"},
        **extra,
    }


def _file(project: Project, suites: dict[str, dict[str, Any]]) -> Path:
    return project.write("s.tests.yaml", {"agent": "bot", "test_suites": suites})


def _suites(project: Project) -> None:
    _file(
        project,
        {
            "a": {
                "setup": "up-a",
                "cleanup": ["down-a"],
                "tests": [_test(project, f"a{n}") for n in range(6)],
            },
            "b": {
                "setup": ["up-b"],
                "cleanup": "down-b",
                "tests": [_test(project, f"b{n}") for n in range(6)],
            },
        },
    )


@pytest.mark.parametrize("jobs", ["1", "4"])
def test_suite_hooks_run_once_around_the_suites_tests(hooked: Project, jobs: str) -> None:
    _suites(hooked)
    result = hooked.run("run", ".", "-j", jobs)
    assert result.exit_code == 0, result.stdout
    events = _events(hooked)
    for suite in ("a", "b"):
        assert events.count(f"up-{suite}") == 1 and events.count(f"down-{suite}") == 1
        calls = [events.index(f"{suite}{n}") for n in range(6)]
        # Setup before any test of the suite starts; cleanup after every one has finished.
        assert events.index(f"up-{suite}") < min(calls)
        assert events.index(f"down-{suite}") > max(calls)
    # Suite b's tests start only when the plan reaches them, after suite a's setup.
    assert events.index("up-a") < events.index("up-b")


def test_a_failing_suite_setup_errors_the_suites_tests_and_still_cleans_up(
    hooked: Project,
) -> None:
    _file(
        hooked,
        {
            "broken": {
                "setup": "fail-up",
                "cleanup": "down-a",
                "tests": [_test(hooked, f"x{n}", trials=2) for n in range(3)],
            },
            "fine": {"tests": [_test(hooked, "ok")]},
        },
    )
    result = hooked.run("run", ".", "-j", "3")
    assert result.exit_code == 1
    for n in range(3):
        test = result.tests[f"x{n}"]
        assert test["status"] == "error"
        for trial in test["trials"]:
            assert trial["error"].startswith("suite setup failed, so the test did not run: ")
            assert (
                "hook 'fail-up' exited with code 5: the database is not reachable"
                in (trial["error"])
            )
    assert result.status("ok") == "passed"
    events = _events(hooked)
    # One setup for six trials, none of them called the agent, and the cleanup still ran.
    assert events.count("fail-up") == 1
    assert not [event for event in events if event.startswith("x")]
    assert events.count("down-a") == 1


def test_a_failing_suite_cleanup_fails_the_run_and_is_stored(hooked: Project) -> None:
    _file(
        hooked,
        {"a": {"setup": "up-a", "cleanup": "fail-down", "tests": [_test(hooked, "t")]}},
    )
    result = hooked.run("run", ".")
    assert result.status("t") == "passed"
    assert result.exit_code == 1
    problem = "cleanup: hook 'fail-down' exited with code 5: the database is not reachable"
    assert any(problem in line for line in result.report["problems"])  # type: ignore[index]
    assert problem in result.stdout + result.stderr
    # Re-rendered from the store, the run still failed.
    again = hooked.run("report", "last")
    assert again.exit_code == 1
    assert any(problem in line for line in again.report["problems"])  # type: ignore[index]


def test_filters_hooks_and_skips(hooked: Project) -> None:
    _suites(hooked)
    # -k picks part of suite a and nothing of b: a's hooks run once, b's never.
    result = hooked.run("run", ".", "-k", "a1 or a2", "-j", "2")
    assert result.exit_code == 0
    assert _events(hooked)[0] == "up-a" and _events(hooked)[-1] == "down-a"
    assert sorted(_events(hooked)) == ["a1", "a2", "down-a", "up-a"]


def test_a_suite_whose_tests_all_skip_runs_no_hook(hooked: Project) -> None:
    _file(
        hooked,
        {
            "a": {
                "setup": "up-a",
                "cleanup": "down-a",
                "tests": [_test(hooked, "t", skip_if="offline")],
            }
        },
    )
    result = hooked.run("run", ".", "--fact", "offline=true")
    assert result.status("t") == "skipped"
    assert _events(hooked) == []


def test_resume_runs_the_hooks_only_for_suites_with_work_left(hooked: Project) -> None:
    _suites(hooked)
    first = hooked.run("run", ".", "-j", "2")
    assert first.exit_code == 0
    run_id = first.report["run_id"]  # type: ignore[index]
    # Forget the verdicts of suite b only: a resumed run has nothing to do for suite a.
    hooked.sql("DELETE FROM trials WHERE run_id = ? AND test_key LIKE '%::b::%'", run_id)
    (hooked.root / "events.log").unlink()
    resumed = hooked.run("run", "--resume", "last")
    assert resumed.exit_code == 0
    events = _events(hooked)
    assert "up-a" not in events and "down-a" not in events
    assert events[0] == "up-b" and events[-1] == "down-b"
    assert sorted(e for e in events if e.startswith("b")) == [f"b{n}" for n in range(6)]


def test_fail_fast_still_cleans_up_the_open_suite(hooked: Project) -> None:
    tests = [_test(hooked, "t0"), {**_test(hooked, "t1"), "expect": {"status": "nope"}}]
    tests += [_test(hooked, f"t{n}") for n in range(2, 6)]
    _file(hooked, {"a": {"setup": "up-a", "cleanup": "down-a", "tests": tests}})
    result = hooked.run("run", ".", "--fail-fast", "-j", "1")
    assert result.exit_code == 1
    events = _events(hooked)
    assert events == ["up-a", "t0", "t1", "down-a"]


def test_validate_names_an_unknown_suite_hook(hooked: Project) -> None:
    _file(hooked, {"a": {"setup": "up-aa", "tests": [_test(hooked, "t")]}})
    result = hooked.run("validate", "s.tests.yaml")
    assert result.exit_code == 2
    assert "s.tests.yaml:3:3: suite a: setup" in result.stdout + result.stderr
    assert "unknown hook 'up-aa' (did you mean 'up-a'?)" in result.stdout + result.stderr


def test_an_unknown_suite_hook_at_run_time_is_an_error_of_its_tests(hooked: Project) -> None:
    _file(hooked, {"a": {"setup": "nope", "tests": [_test(hooked, "t")]}})
    result = hooked.run("run", ".")
    assert result.status("t") == "error"
    assert "unknown hook 'nope'" in result.tests["t"]["trials"][0]["error"]


def test_suite_keys_are_checked(hooked: Project) -> None:
    _file(hooked, {"a": {"setup": "up-a", "stup": "x", "tests": [_test(hooked, "t")]}})
    result = hooked.run("validate", "s.tests.yaml")
    assert result.exit_code == 2
    assert "stup" in result.stdout + result.stderr


def test_ctrl_c_still_cleans_up_the_open_suite(hooked: Project) -> None:
    """A real SIGINT to a real `assertly run`: the suite set up is cleaned up before exit 130."""
    log = hooked.root / "events.log"
    tests = [
        {
            "id": f"t{n}",
            "input": {"mode": "slow", "delay": 0.5, "log": str(log), "tag": f"t{n}"},
            "expect": {"status": "success"},
        }
        for n in range(20)
    ]
    _file(hooked, {"a": {"setup": "up-a", "cleanup": "down-a", "tests": tests}})
    assertly = str(Path(sys.executable).with_name("assertly"))
    process = subprocess.Popen(
        [assertly, "run", ".", "-j", "2", "--plain"],
        cwd=hooked.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509
    )
    deadline = time.monotonic() + 30
    while "t0" not in _events(hooked) and "t1" not in _events(hooked):
        assert process.poll() is None, "the run ended before Ctrl-C"
        assert time.monotonic() < deadline
        time.sleep(0.01)
    process.send_signal(signal.SIGINT)
    try:
        stdout, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130, stdout + stderr
    events = _events(hooked)
    assert events[0] == "up-a" and events[-1] == "down-a", events
    assert events.count("down-a") == 1
    assert len([e for e in events if e.startswith("t")]) < 20
