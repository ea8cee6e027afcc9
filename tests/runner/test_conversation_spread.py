"""Conversation tests run everywhere a test runs (issue 32, item 5): resume after a SIGKILL,
shards and merge, recheck, ``-j``, the response cache, the run budget, the store and
``assertly report``, against a real command agent that logs every request it gets
(tests/runner/conversation_agent.py).
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import conversation_agent as agent
from runner_support import Project

ASSERTLY = str(Path(sys.executable).parent / "assertly")


def conversation(name: str, turns: int = 3, **request: Any) -> dict[str, Any]:
    """A scripted conversation test: each turn's reply must repeat the first message."""
    said = [f"{name} hello", *(f"{name} then {n}" for n in range(2, turns)), f"{name} go ahead"]
    remembers = [{"type": "contains", "value": f"first you said {name} hello"}]
    return {
        "id": name,
        "conversation": {
            "input": {"test": name, **request},
            "turns": [{"user": text, "assertions": remembers} for text in said[:turns]],
        },
        "assertions": [{"type": "tool-called", "value": "issue_refund"}],
    }


def _turn_counts(report: dict[str, Any]) -> dict[str, list[int]]:
    return {t["id"]: [len(trial["turns"]) for trial in t["trials"]] for t in report["tests"]}


def _stored(root: Path) -> set[str]:
    path = root / ".assertly/runs.sqlite"
    if not path.exists():
        return set()
    try:
        with sqlite3.connect(path, timeout=5) as db:
            return {key.rsplit("::", 1)[1] for (key,) in db.execute("SELECT test_key FROM trials")}
    except sqlite3.OperationalError:  # the schema is not there yet
        return set()


def test_a_killed_conversation_run_resumes_each_unfinished_trial_from_turn_one(
    project: Project,
) -> None:
    names = [f"c{n}" for n in range(6)]
    project.tests_file("t.yaml", {"s": [conversation(n, delay=0.2) for n in names]})
    argv = ["run", "t.yaml", "--target", agent.spec(), "-j", "1", "--plain"]
    process = subprocess.Popen(
        [ASSERTLY, *argv], cwd=project.root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 60
        # Killed at turn 2 of a conversation whose trial is not stored yet (-j 1: the last
        # request logged is the one in flight; each takes 0.2 s).
        while True:
            assert process.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline, "no conversation reached turn 2"
            logged, stored = agent.calls(project.root), _stored(project.root)
            last = logged[-1] if logged else None
            midway = last is not None and len(last["messages"]) == 3
            if len(stored) >= 2 and midway and last["test"] not in stored:
                break
            time.sleep(0.01)
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.wait(timeout=10)
    time.sleep(0.5)  # the agent in flight (a session of its own) finishes its line
    interrupted = logged[-1]["test"]
    stored = _stored(project.root)
    assert interrupted not in stored and 2 <= len(stored) < len(names)
    before = agent.calls(project.root)
    old_ids = {call["id"] for call in before}

    resumed = project.run("run", "--resume", "last")
    assert resumed.exit_code == 0, resumed.stdout + resumed.stderr
    after = agent.calls(project.root)[len(before) :]
    # Only the trials without a verdict were called, each a whole new conversation: a new id,
    # turn 1 first, its three turns; the interrupted one was not half-replayed.
    assert {call["test"] for call in after} == set(names) - stored
    by_id = agent.assert_single_conversations(after)
    assert not set(by_id) & old_ids
    assert sorted(len(requests) for requests in by_id.values()) == [3] * (len(names) - len(stored))
    [again] = [requests for requests in by_id.values() if requests[0]["test"] == interrupted]
    assert again[0]["messages"] == [{"role": "user", "content": f"{interrupted} hello"}]
    report = resumed.report or {}
    assert {t["id"]: t["status"] for t in report["tests"]} == dict.fromkeys(names, "passed")
    assert _turn_counts(report) == {name: [3] for name in names}
    assert project.sql("SELECT COUNT(*) FROM trials") == [(len(names),)]


def test_shards_merge_with_their_turns_and_recheck_judges_the_merged_run(
    project: Project,
) -> None:
    names = [f"c{n}" for n in range(5)]
    tests = [conversation(n) for n in names]
    tests[1]["trials"] = 2
    project.tests_file("t.yaml", {"s": tests})
    parts = [
        project.run("run", "t.yaml", "--target", agent.spec(), "--shard", f"{i}/2") for i in (1, 2)
    ]
    assert all(part.exit_code == 0 for part in parts), [p.stdout for p in parts]
    ids = [t["id"] for part in parts for t in (part.report or {})["tests"]]
    assert sorted(ids) == names
    shard_turns = {
        t["id"]: [trial["turns"] for trial in t["trials"]]
        for part in parts
        for t in (part.report or {})["tests"]
    }
    merged = project.run("merge", *(part.report["run_id"] for part in parts if part.report))
    assert merged.exit_code == 0, merged.stdout + merged.stderr
    assert merged.report is not None
    assert {t["id"]: [trial["turns"] for trial in t["trials"]] for t in merged.report["tests"]} == (
        shard_turns
    )
    assert _turn_counts(merged.report) == {n: [3, 3] if n == "c1" else [3] for n in names}
    c1 = merged.tests["c1"]["trials"][0]
    assert c1["turns"][2]["user"] == "c1 go ahead"
    assert [call["name"] for call in c1["turns"][2]["tool_calls"]] == ["issue_refund"]
    assert c1["conversation"]["ended"] == "turns"
    calls = len(agent.calls(project.root))
    assert calls == 6 * 3
    # Recheck of the merged run: turn 2 of c3 must now say something it did not; judged on
    # the stored replies, nothing called.
    changed = json.loads(json.dumps(tests))
    changed[3]["conversation"]["turns"][1]["assertions"] = [
        {"type": "contains", "value": "never said"}
    ]
    project.tests_file("t.yaml", {"s": changed})
    rechecked = project.run("recheck", merged.report["run_id"])
    assert rechecked.exit_code == 1, rechecked.stdout + rechecked.stderr
    assert len(agent.calls(project.root)) == calls
    assert {t["id"]: t["status"] for t in (rechecked.report or {})["tests"]} == {
        n: "failed" if n == "c3" else "passed" for n in names
    }
    [failure] = rechecked.tests["c3"]["trials"][0]["failures"]
    assert failure["step"] == "turn 2" and failure["assertion"] == "contains"


def test_shard_reports_merge_as_files_with_their_turns(project: Project) -> None:
    # CI's way: each shard's JSON report is an artifact, merged from the files.
    tests = [conversation(f"c{n}") for n in range(4)]
    tests[1]["trials"] = 2
    tests[2]["conversation"]["turns"][1]["assertions"] = [{"type": "contains", "value": "no"}]
    tests[3]["conversation"]["turns"][1]["user"] = "c3 crash now"
    project.tests_file("t.yaml", {"s": tests})
    parts = [
        project.run("run", "t.yaml", "--target", agent.spec(), "--shard", f"{i}/2") for i in (1, 2)
    ]
    files = [f"report-{i}.json" for i in (1, 2)]
    merged = project.run("merge", *files)
    assert merged.exit_code == 1, merged.stdout + merged.stderr
    assert merged.report is not None

    def trials(tests: list[dict[str, Any]]) -> dict[str, Any]:
        # A trial's latency is its turns' (each rounded to the microsecond in the report)
        # summed: the merged trial's sum may differ from the shard's in the last digits, so
        # it is compared apart (`latencies`), within a hundredth of a millisecond.
        def without_latency(trial: dict[str, Any]) -> dict[str, Any]:
            return {**trial, "metrics": {**trial["metrics"], "latency_ms": None}}

        return {
            t["id"]: (t["status"], t["score"], [without_latency(x) for x in t["trials"]])
            for t in tests
        }

    def latencies(tests: list[dict[str, Any]]) -> dict[tuple[str, int], Any]:
        return {
            (t["id"], x["trial"]): x["metrics"]["latency_ms"] for t in tests for x in t["trials"]
        }

    shards = [t for part in parts for t in (part.report or {})["tests"]]
    assert trials(merged.report["tests"]) == trials(shards)
    for key, latency in latencies(shards).items():
        found = latencies(merged.report["tests"])[key]
        assert found == latency or abs(found - latency) <= 0.01, (key, found, latency)
    c2 = merged.tests["c2"]["trials"][0]
    assert [(f["step"], f["assertion"]) for f in c2["failures"]] == [("turn 2", "contains")]
    assert merged.tests["c3"]["trials"][0]["error"].startswith("turn 2 of 3: ")
    # Stored as turns: a report of the merged run renders them again, and the console names
    # the failing turn.
    again = project.run("report", merged.report["run_id"])
    assert trials((again.report or {})["tests"]) == trials(shards)
    console = project.run("report", merged.report["run_id"], report=False).stdout
    assert "turn 2 (user: 'c2 then 2')" in console, console
    # Recheck of the merged run: c0's last turn must now say what it did not; nothing called.
    calls = len(agent.calls(project.root))
    tests[0]["conversation"]["turns"][2]["assertions"] = [{"type": "contains", "value": "no"}]
    project.tests_file("t.yaml", {"s": tests})
    rechecked = project.run("recheck", merged.report["run_id"])
    assert rechecked.exit_code == 1, rechecked.stdout + rechecked.stderr
    assert len(agent.calls(project.root)) == calls
    statuses = {t["id"]: t["status"] for t in (rechecked.report or {})["tests"]}
    assert statuses == {"c0": "failed", "c1": "passed", "c2": "failed", "c3": "error"}
    [failure] = rechecked.tests["c0"]["trials"][0]["failures"]
    assert failure["step"] == "turn 3"


def test_j4_each_conversation_sees_only_its_own_history(project: Project) -> None:
    names = [f"c{n}" for n in range(6)]
    tests = [{**conversation(n, turns=4, delay=0.05), "trials": 2} for n in names]
    project.tests_file("t.yaml", {"s": tests})
    result = project.run("run", "t.yaml", "--target", agent.spec(), "-j", "4")
    assert result.exit_code == 0, result.stdout + result.stderr
    logged = agent.calls(project.root)
    assert len(logged) == len(names) * 2 * 4
    by_id = agent.assert_single_conversations(logged)
    assert len(by_id) == len(names) * 2  # one conversation per trial
    assert all(len(requests) == 4 for requests in by_id.values())
    # Conversations ran at once: some conversation's turn came between another's turns.
    order = [call["id"] for call in logged]
    spans = {cid: (order.index(cid), len(order) - order[::-1].index(cid)) for cid in by_id}
    assert any(a != b and spans[a][0] < spans[b][0] < spans[a][1] for a in spans for b in spans), (
        "the conversations never overlapped"
    )
    assert _turn_counts(result.report or {}) == {name: [4, 4] for name in names}


def test_a_cached_conversation_replays_every_turn_with_no_call(project: Project) -> None:
    tests = [conversation("c0"), {**conversation("c1"), "trials": 2}]
    project.tests_file("t.yaml", {"s": tests})
    first = project.run("run", "t.yaml", "--target", agent.spec(), "--cache", "rw")
    assert first.exit_code == 0, first.stdout + first.stderr
    assert len(agent.calls(project.root)) == 9
    # A key per turn: its whole history (and the trial).
    assert project.sql("SELECT COUNT(*) FROM agent_cache") == [(9,)]
    replayed = project.run("run", "t.yaml", "--target", agent.spec(), "--cache", "replay")
    assert replayed.exit_code == 0, replayed.stdout + replayed.stderr
    assert len(agent.calls(project.root)) == 9  # zero agent calls
    for test_id in ("c0", "c1"):
        for old, new in zip(
            first.tests[test_id]["trials"], replayed.tests[test_id]["trials"], strict=True
        ):
            assert [(t["user"], t["output"], t["outcome"]) for t in new["turns"]] == [
                (t["user"], t["output"], t["outcome"]) for t in old["turns"]
            ]
            assert new["conversation"] == old["conversation"]
    # A changed turn is a new history: its key is not cached, so replay refuses it (and the
    # turns before it, unchanged, still replay).
    changed = json.loads(json.dumps(tests))
    changed[0]["conversation"]["turns"][1]["user"] = "c0 something else"
    project.tests_file("t.yaml", {"s": changed})
    missed = project.run("run", "t.yaml", "--target", agent.spec(), "--cache", "replay")
    trial = missed.tests["c0"]["trials"][0]
    assert trial["status"] == "error"
    assert trial["error"].startswith("turn 2 of 3: no cached response for this call")
    assert [t["outcome"] for t in trial["turns"]] == ["passed", "error"]
    assert len(agent.calls(project.root)) == 9


def test_the_run_budget_stops_a_conversation_between_turns(project: Project) -> None:
    project.tests_file("t.yaml", {"s": [conversation("c0", turns=4, cost=0.25)]})
    result = project.run("run", "t.yaml", "--target", agent.spec(), "--max-cost-usd", "0.5")
    assert result.exit_code == 1
    sent = [call["messages"][-1]["content"] for call in agent.calls(project.root)]
    assert sent == ["c0 hello", "c0 then 2"]  # $0.25 + $0.25 spent: turn 3 is never sent
    trial = result.tests["c0"]["trials"][0]
    assert trial["status"] == "error"
    assert trial["error"].startswith("turn 3 of 4: run budget of $0.50 spent")
    assert [t["outcome"] for t in trial["turns"]] == ["passed", "passed", "error"]
    assert trial["turns"][2]["user"] == "c0 then 3"
    assert trial["conversation"] is None
    assert "turn 3 of 4" in result.stdout


def test_a_stored_conversation_round_trips_and_report_renders_the_same(
    project: Project,
) -> None:
    tests = [conversation("c0"), conversation("c1", turns=2), conversation("broken", turns=3)]
    tests[2]["conversation"]["turns"][1]["user"] = "broken: crash at turn 2"
    project.tests_file("t.yaml", {"s": tests})
    result = project.run("run", "t.yaml", "--target", agent.spec())
    assert result.exit_code == 1
    assert result.report is not None
    stored = {r["steps"][0]["user"].split()[0]: r for r in project.records()}
    c0 = stored["c0"]
    assert [s["name"] for s in c0["steps"]] == ["turn 1", "turn 2", "turn 3", "conversation"]
    said = [s.get("user") for s in c0["steps"]]
    assert said == ["c0 hello", "c0 then 2", "c0 go ahead", None]
    assert c0["steps"][-1]["ended"] == "turns"
    assert c0["steps"][2]["tool_calls"][0]["name"] == "issue_refund"
    crashed = stored["broken"]
    assert crashed["status"] == "error" and crashed["error"].startswith("turn 2 of 3: ")
    assert [s["name"] for s in crashed["steps"]] == ["turn 1", "turn 2"]
    # What `report` renders from the store is the run's own report, but for when it was
    # written.
    again = project.run("report", result.report["run_id"])
    assert again.exit_code == 1 and again.report is not None
    assert _without_time(again.report) == _without_time(result.report)


def _without_time(report: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in report.items() if key not in ("generated_at",)}
