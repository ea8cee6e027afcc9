"""`assertly run` against real subprocess agents: passing, failing, crashing, hanging, slow,
empty and text-only agents, each asserted through the exit code, the summary counts and the
pinned JSON report.
"""

from __future__ import annotations

import time
from pathlib import Path

from runner_support import Project, process_alive


def test_passing_failing_and_crashing_agents_in_one_run(project: Project) -> None:
    project.tests_file(
        "search.tests.yaml",
        {
            "search": [
                {
                    "id": "ok",
                    "input": {"files": ["journal/a.md", "journal/b.md"]},
                    "expect": {"status": "success", "results_min": 2},
                },
                {
                    "id": "too-many",
                    "input": {"files": ["a", "b", "c"]},
                    "expect": {"results_max": 1},
                },
                {"id": "crash", "input": {"mode": "crash"}, "expect": {"status": "success"}},
            ]
        },
    )
    result = project.run("run", ".", "--target", project.agent, "--plain")
    assert result.exit_code == 1
    assert result.counts() == (3, 1, 1, 1, 0)
    assert result.summary["pass_rate"] == 1 / 3
    tests = result.tests
    assert tests["ok"]["status"] == "passed"
    assert tests["ok"]["score"] == 1.0
    assert tests["ok"]["suite"] == "search"
    assert tests["ok"]["file"].endswith("search.tests.yaml")

    failing = tests["too-many"]
    assert failing["status"] == "failed"
    [failure] = failing["trials"][0]["failures"]
    assert failure["assertion"] == "results_max"
    assert failure["message"] == "Expected at most 1 result, got 3"
    assert failure["expected"] == 1 and failure["actual"] == 3

    crashed = tests["crash"]
    assert crashed["status"] == "error"
    assert crashed["pass_at_k"] is False
    error = crashed["trials"][0]["error"]
    assert "exited with code 3" in error
    # The tail of stderr, where the useful line is, not its beginning.
    assert "boom: the agent fell over" in error
    assert crashed["trials"][0]["failures"] == []
    # The console names the failing assertion and the crash.
    assert "Expected at most 1 result, got 3" in result.stdout
    assert "boom: the agent fell over" in result.stdout


def test_all_passing_exits_zero(project: Project) -> None:
    project.tests_file(
        "a.tests.yaml", {"s": [{"id": "one", "input": {}, "expect": {"status": "success"}}]}
    )
    result = project.run("run", "a.tests.yaml", "--target", project.agent)
    assert result.exit_code == 0
    assert result.counts() == (1, 1, 0, 0, 0)
    assert result.summary["pass_rate"] == 1.0
    test = result.tests["one"]
    assert (test["pass_at_k"], test["pass_all_k"], test["flaky"]) == (True, True, False)
    assert [t["trial"] for t in test["trials"]] == [1]


def test_hanging_agent_times_out_and_its_whole_process_group_is_killed(project: Project) -> None:
    pidfile = project.root / "grandchild.pid"
    project.tests_file(
        "hang.tests.yaml",
        {
            "s": [
                {
                    "id": "hang",
                    "input": {"mode": "hang", "pidfile": str(pidfile)},
                    "timeout_s": 1.0,
                    "expect": {"status": "success"},
                }
            ]
        },
    )
    started = time.monotonic()
    result = project.run("run", ".", "--target", project.agent)
    elapsed = time.monotonic() - started
    assert elapsed < 10, "the timeout must stop the agent, not wait for its sleep"
    assert result.exit_code == 1
    assert result.status("hang") == "error"
    assert "timed out after 1 s" in result.tests["hang"]["trials"][0]["error"]
    grandchild = int(pidfile.read_text())
    deadline = time.monotonic() + 3
    while process_alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not process_alive(grandchild), "the agent's child survived the timeout"


def test_global_timeout_option_applies_to_every_call(project: Project) -> None:
    project.tests_file(
        "slow.tests.yaml",
        {
            "s": [
                {
                    "id": "slow",
                    "input": {"mode": "slow", "delay": 5},
                    "expect": {"status": "success"},
                }
            ]
        },
    )
    started = time.monotonic()
    result = project.run("run", ".", "--target", project.agent, "--timeout", "0.5")
    assert time.monotonic() - started < 4
    assert result.status("slow") == "error"
    assert "timed out after 0.5 s" in result.tests["slow"]["trials"][0]["error"]


def test_slow_agent_within_its_timeout_passes_and_latency_is_measured(project: Project) -> None:
    project.tests_file(
        "slow.tests.yaml",
        {
            "s": [
                {
                    "id": "slow-ok",
                    "input": {"mode": "slow", "delay": 0.4},
                    "timeout_s": 10,
                    "expect": {"status": "success"},
                },
                # The agent reports no latency, so the runner measures it: ≥ 400 ms here.
                {
                    "id": "slow-latency",
                    "input": {"mode": "slow", "delay": 0.4},
                    "assertions": [{"type": "latency", "threshold": 200}],
                },
            ]
        },
    )
    result = project.run("run", ".", "--target", project.agent)
    assert result.status("slow-ok") == "passed"
    assert result.tests["slow-ok"]["trials"][0]["duration_ms"] >= 400
    assert result.status("slow-latency") == "failed"
    [failure] = result.tests["slow-latency"]["trials"][0]["failures"]
    assert failure["assertion"] == "latency"
    assert failure["actual"] >= 400
    assert result.counts() == (2, 1, 1, 0, 0)


def test_empty_output_is_an_error_with_stderr(project: Project) -> None:
    project.tests_file(
        "empty.tests.yaml",
        {"s": [{"id": "empty", "input": {"mode": "empty"}, "expect": {"status": "success"}}]},
    )
    result = project.run("run", ".", "--target", project.agent)
    assert result.exit_code == 1
    assert result.counts() == (1, 0, 0, 1, 0)
    error = result.tests["empty"]["trials"][0]["error"]
    assert "wrote nothing on stdout" in error
    assert "nothing to say" in error


def test_text_response_is_judged_as_text(project: Project) -> None:
    project.tests_file(
        "text.tests.yaml",
        {
            "s": [
                {
                    "id": "contains",
                    "input": {"mode": "text", "text": "The answer is 42."},
                    "expect": {"contains": "answer is 42"},
                },
                {
                    "id": "not-json",
                    "input": {"mode": "text", "text": "no json here"},
                    "expect": {"status": "success"},
                },
            ]
        },
    )
    result = project.run("run", ".", "--target", project.agent)
    assert result.status("contains") == "passed"
    assert result.status("not-json") == "failed"
    assert "not JSON" in result.tests["not-json"]["trials"][0]["failures"][0]["message"]


def test_agent_reported_metadata_reaches_the_assertions(project: Project) -> None:
    project.tests_file(
        "meta.tests.yaml",
        {
            "s": [
                {
                    "id": "model",
                    "input": {"mode": "meta", "model": "gpt-x"},
                    "expect": {"agent_used_model": "gpt-x"},
                },
                {
                    "id": "wrong-model",
                    "input": {"mode": "meta", "model": "gpt-y"},
                    "expect": {"agent_used_model": "gpt-x"},
                },
                {
                    "id": "cost",
                    "input": {"mode": "meta"},
                    "assertions": [{"type": "cost", "threshold": 0.1}],
                },
            ]
        },
    )
    result = project.run("run", ".", "--target", project.agent)
    assert result.status("model") == "passed"
    assert result.status("wrong-model") == "failed"
    assert result.status("cost") == "failed"  # reported 0.25 > 0.1
    assert result.tests["cost"]["trials"][0]["failures"][0]["actual"] == 0.25


def test_unknown_command_is_an_error_not_a_crash(project: Project, tmp_path: Path) -> None:
    project.tests_file(
        "a.tests.yaml", {"s": [{"id": "t", "input": {}, "expect": {"status": "success"}}]}
    )
    result = project.run("run", ".", "--target", f"cmd:{tmp_path}/does-not-exist --flag")
    assert result.exit_code == 1
    assert result.status("t") == "error"
    assert "cannot start" in result.tests["t"]["trials"][0]["error"]


def test_concurrency_runs_calls_in_parallel(project: Project) -> None:
    tests = [
        {"id": f"t{i}", "input": {"mode": "slow", "delay": 0.5}, "expect": {"status": "success"}}
        for i in range(6)
    ]
    project.tests_file("par.tests.yaml", {"s": tests})
    started = time.monotonic()
    result = project.run("run", ".", "--target", project.agent, "-j", "6")
    elapsed = time.monotonic() - started
    assert result.counts() == (6, 6, 0, 0, 0)
    # Six half-second calls, one after another, would take 3 s and more.
    assert elapsed < 2.8


def test_rate_limit_spaces_the_calls(project: Project) -> None:
    log = str(project.root / "calls.log")
    tests = [
        {"id": f"t{i}", "input": {"log": log}, "expect": {"status": "success"}} for i in range(5)
    ]
    project.tests_file("rate.tests.yaml", {"s": tests})
    started = time.monotonic()
    result = project.run("run", ".", "--target", project.agent, "-j", "5", "--rate-limit", "5")
    elapsed = time.monotonic() - started
    assert result.counts() == (5, 5, 0, 0, 0)
    # Five calls at five per second: the last one starts 0.8 s after the first.
    assert elapsed >= 0.8
