"""The agent-response cache (``--cache``, issue 34), with real command agents and a real HTTP
server: each call is logged by the agent itself, so the tests count what was really called."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from runner_support import HttpAgent, Project, versioned_agent
from runner_support import agent_calls as versioned_calls

from store_support import stored_records_text


def _calls(project: Project) -> list[str]:
    log = project.root / "calls.log"
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def _input(project: Project, tag: str, **extra: Any) -> dict[str, Any]:
    """A call of the standard agent that reports a cost and logs itself."""
    return {
        "mode": "meta",
        "cost": 0.25,
        "log": str(project.root / "calls.log"),
        "tag": tag,
        **extra,
    }


def _suite(project: Project, expected: str = "success") -> None:
    project.tests_file(
        "t.yaml",
        {
            "s": [
                {"id": "one", "input": _input(project, "one"), "expect": {"status": expected}},
                {"id": "two", "input": _input(project, "two"), "expect": {"status": "success"}},
                {
                    "id": "three",
                    "input": _input(project, "three", files=["x.md"]),
                    "expect": {"contains": "journal"},  # fails: the agent answers x.md
                },
            ]
        },
    )


def _verdicts(report: dict[str, Any]) -> dict[str, list[tuple[str, Any]]]:
    return {
        test["id"]: [(trial["status"], trial["output"]) for trial in test["trials"]]
        for test in report["tests"]
    }


def test_cache_rw_twice_calls_the_agent_once_with_identical_verdicts(project: Project) -> None:
    _suite(project)
    first = project.run("run", "t.yaml", "--target", project.agent, "--cache", "rw", "-j", "1")
    assert first.exit_code == 1  # "three" fails
    assert sorted(_calls(project)) == ["one", "three", "two"]
    assert first.report is not None
    assert all("cached" not in t for test in first.report["tests"] for t in test["trials"])
    assert "cached" not in first.summary

    second = project.run("run", "t.yaml", "--target", project.agent, "--cache", "rw")
    assert second.exit_code == 1
    assert sorted(_calls(project)) == ["one", "three", "two"]  # zero agent calls
    assert second.report is not None and first.report is not None
    assert _verdicts(second.report) == _verdicts(first.report)
    for test in second.report["tests"]:
        (trial,) = test["trials"]
        assert trial["cached"] is True
        # The reported cost and model come back with the response.
        assert trial["metrics"]["cost_usd"] == 0.25
        assert trial["metrics"]["model"] == "gpt-test"
        assert trial["metrics"]["latency_ms"] is not None
    assert second.summary["cached"] == 3
    assert "3 trial(s) from the response cache" in second.stdout
    # The stored run keeps the count, and the option (what --resume restores).
    again = project.run("report", "last")
    assert again.summary["cached"] == 3
    options = json.loads(project.sql("SELECT options FROM runs ORDER BY started_at")[-1][0])
    assert options["cache"] == "rw"

    # The typical use: an assertion changes, the verdict follows, still no call.
    _suite(project, expected="error")
    third = project.run("run", "t.yaml", "--target", project.agent, "--cache", "rw")
    assert third.status("one") == "failed" and third.status("two") == "passed"
    assert len(_calls(project)) == 3


def test_cache_off_by_default_and_ro_never_writes(project: Project) -> None:
    _suite(project)
    project.run("run", "t.yaml", "--target", project.agent)
    project.run("run", "t.yaml", "--target", project.agent)
    assert len(_calls(project)) == 6  # off: every run calls
    assert project.sql("SELECT count(*) FROM agent_cache") == [(0,)]
    project.run("run", "t.yaml", "--target", project.agent, "--cache", "ro")
    assert len(_calls(project)) == 9
    assert project.sql("SELECT count(*) FROM agent_cache") == [(0,)]
    # The config's `cache:` sets it; rw then ro reads what rw wrote.
    project.write("assertly.yaml", {"agents": {"bot": project.agent}, "cache": "rw"})
    project.run("run", "t.yaml")
    assert len(_calls(project)) == 12
    ro = project.run("run", "t.yaml", "--cache", "ro")
    assert len(_calls(project)) == 12 and ro.summary["cached"] == 3


def test_an_erroring_call_is_never_cached(project: Project) -> None:
    log = str(project.root / "calls.log")
    project.tests_file(
        "t.yaml",
        {
            "s": [
                {
                    "id": "crash",
                    "input": {"mode": "crash", "log": log, "tag": "crash"},
                    "expect": {"status": "success"},
                },
                {
                    "id": "slow",
                    "input": {"mode": "slow", "delay": 5, "log": log, "tag": "slow"},
                    "expect": {"status": "success"},
                },
            ]
        },
    )
    for _ in range(2):
        result = project.run(
            "run", "t.yaml", "--target", project.agent, "--cache", "rw", "--timeout", "1"
        )
        assert result.status("crash") == "error" and result.status("slow") == "error"
        assert "cached" not in result.summary
    assert sorted(_calls(project)) == ["crash", "crash", "slow", "slow"]  # called again
    assert project.sql("SELECT count(*) FROM agent_cache") == [(0,)]


def test_replay_miss_is_an_error_and_calls_nothing(project: Project) -> None:
    _suite(project)
    result = project.run("run", "t.yaml", "--target", project.agent, "--cache", "replay")
    assert result.exit_code == 1
    assert result.counts() == (3, 0, 0, 3, 0)
    for test in result.tests.values():
        assert "no cached response for this call (--cache replay)" in test["trials"][0]["error"]
    assert _calls(project) == []
    # Recorded with rw, replayed offline: every verdict, no call.
    project.run("run", "t.yaml", "--target", project.agent, "--cache", "rw")
    replayed = project.run("run", "t.yaml", "--target", project.agent, "--cache", "replay")
    assert replayed.counts() == (3, 2, 1, 0, 0)
    assert len(_calls(project)) == 3


def test_trials_of_a_test_are_cached_apart(project: Project) -> None:
    # The flaky agent alternates its answer: trial 1 and trial 2 get different outputs.
    state = str(project.root / "state")
    project.tests_file(
        "t.yaml",
        {
            "s": [
                {
                    "id": "flaky",
                    "trials": 2,
                    "input": {"mode": "flaky", "state": state},
                    "expect": {"status": "success"},
                }
            ]
        },
    )
    # -j 1: the agent's state file is read and written without a lock, so two trials at once
    # could both read 0 (on a busy machine they did).
    first = project.run("run", "t.yaml", "--target", project.agent, "--cache", "rw", "-j", "1")
    assert Path(state).read_text() == "2"
    second = project.run("run", "t.yaml", "--target", project.agent, "--cache", "rw", "-j", "1")
    assert Path(state).read_text() == "2"  # no call
    assert first.report is not None and second.report is not None
    outputs = _verdicts(second.report)["flaky"]
    assert outputs == _verdicts(first.report)["flaky"]
    assert outputs[0] != outputs[1]  # each trial its own response
    assert project.sql("SELECT count(*) FROM agent_cache") == [(2,)]


def test_two_matrix_targets_are_cached_apart(project: Project) -> None:
    project.tests_file(
        "t.yaml",
        {"s": [{"id": "refund", "input": "order 1042", "expect": {"contains": "1042"}}]},
    )
    v1, v2 = versioned_agent(project, "v1"), versioned_agent(project, "v2")
    args = ("run", "t.yaml", "--target", f"base={v1}", "--target", f"cand={v2}", "--cache", "rw")
    first = project.run(*args)
    second = project.run(*args)
    assert versioned_calls(project) == {"v1 order 1042": 1, "v2 order 1042": 1}
    for result in (first, second):
        assert result.report is not None
        cells = {(t["id"], t["target"]): t["status"] for t in result.report["tests"]}
        assert cells == {("refund", "base"): "passed", ("refund", "cand"): "failed"}
    assert second.summary["cached"] == 2
    # The key is a digest: no spec (it may hold a secret) is stored in clear.
    keys = [row[0] for row in project.sql("SELECT key FROM agent_cache")]
    assert len(keys) == 2 and all(len(key) == 64 for key in keys)


def test_a_secret_in_a_cached_response_is_redacted(
    project: Project, http_server: HttpAgent, monkeypatch: Any
) -> None:
    token = "sk-cache-0123456789abcdef"
    monkeypatch.setenv("TOKEN", token)
    project.write(
        "assertly.yaml",
        {
            "agents": {
                "bot": {
                    "url": http_server.url("/auth"),
                    "headers": {"Authorization": "Bearer ${TOKEN}"},
                }
            }
        },
    )
    project.tests_file(
        "t.yaml",
        {
            "s": [
                {
                    "id": "sent",
                    "input": {},
                    "expect": {"field_contains": {"path": "auth", "text": "Bearer"}},
                }
            ]
        },
    )
    first = project.run("run", "t.yaml", "--cache", "rw")
    assert first.status("sent") == "passed"
    (stored,) = [row[0] for row in project.sql("SELECT response FROM agent_cache")]
    assert token not in stored and "[REDACTED]" in stored
    for path in (project.root / ".assertly").iterdir():
        assert token.encode() not in path.read_bytes() + stored_records_text(path)
    second = project.run("run", "t.yaml", "--cache", "rw")
    assert len(http_server.hits("/auth")) == 1
    assert second.status("sent") == "passed"
    assert second.tests["sent"]["trials"][0]["cached"] is True


def test_cache_and_budget_are_refused_with_the_ray_backend(project: Project) -> None:
    _suite(project)
    for option in (("--cache", "rw"), ("--max-cost-usd", "1")):
        result = project.run(
            "run", "t.yaml", "--target", project.agent, "--backend", "ray", *option
        )
        assert result.exit_code == 2
        assert f"{option[0]}: is not supported with --backend ray yet" in result.stderr
    assert _calls(project) == []
