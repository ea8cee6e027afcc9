"""A conversation trial in the run store (issue 32): its record round-trips exactly, in SQLite
and in PostgreSQL (a real server, tests/conftest.py), and a run stored in PostgreSQL renders
as it ran.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import conversation_agent as agent
import pytest
from runner_support import Project
from test_conversation_spread import conversation

from assertly._check_records import AssertionRecord, CheckRecord
from assertly._records import CONVERSATION_STEP, StepRecord, TrialRecord
from assertly.store import open_store


def _trial() -> TrialRecord:
    """A simulated conversation's trial: every turn field set, the simulator's costs on the
    turns it wrote and on the stop it wrote last."""
    failed = AssertionRecord("contains", "failed", "no 'A-1042'", expected="A-1042", actual="hm")
    steps = [
        StepRecord(
            "turn 1",
            "passed",
            output={"choices": [{"message": {"role": "assistant", "content": "Hello ☃"}}]},
            latency_ms=12.5,
            cost_usd=0.001,
            model="chat-test",
            tokens={"prompt": 30, "completion": 10},
            tool_calls=[{"name": "lookup_order", "arguments": {"order": "A-1042"}}],
            user="Hi, refund order A-1042",
        ),
        StepRecord(
            "turn 2",
            "failed",
            output="Which order?",
            checks=[CheckRecord(False, 0.0, [failed], outcome="failed")],
            score=0.0,
            latency_ms=8.0,
            tool_calls=[],
            user="I told you already\n\n(twice)",
            simulator_cost_usd=0.0004,
            simulator_tokens=31,
        ),
        StepRecord(
            CONVERSATION_STEP,
            "passed",
            output="Hello ☃\n\nWhich order?",
            ended="stop_token",
            simulator_cost_usd=0.0002,
            simulator_tokens=9,
        ),
    ]
    return TrialRecord("c.yaml::s::refund", 1, "failed", 123.0, steps=steps, score=0.5)


@pytest.fixture(params=["sqlite", "postgres"])
def store_path(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A store of each kind (PostgreSQL: skipped, and saying why, without its binaries)."""
    if request.param == "sqlite":
        return str(tmp_path / "runs.sqlite")
    pytest.importorskip("psycopg", reason="psycopg is not installed (pip install -e '.[dev]')")
    return str(request.getfixturevalue("postgres_database"))


def test_a_conversation_trial_round_trips_exactly(store_path: str) -> None:
    trial = _trial()
    written = trial.to_dict()
    with open_store(store_path) as store:
        store.start_run("r1", "2026-01-01T00:00:00Z", {"pass_threshold": "all"})
        meta = {"key": trial.test_key, "id": "refund", "name": "refund", "suite": "s"}
        store.save_tests(
            "r1", [{**meta, "file": "c.yaml", "definition": "d", "conversation": True}]
        )
        store.save_trial("r1", trial.test_key, 1, written)
    with open_store(store_path, must_exist=True, read_only=True) as store:
        read: dict[str, Any] = store.trials("r1")[trial.test_key][1]
    assert read == written
    again = TrialRecord.from_dict(read)
    assert again == trial
    assert [step.user for step in again.steps] == [
        "Hi, refund order A-1042",
        "I told you already\n\n(twice)",
        None,
    ]
    assert again.steps[1].simulator_tokens == 31 and again.steps[2].ended == "stop_token"


@pytest.fixture
def database(postgres_database: str) -> str:
    """A fresh database on the test server (see tests/conftest.py)."""
    pytest.importorskip("psycopg", reason="psycopg is not installed (pip install -e '.[dev]')")
    return postgres_database


def test_a_conversation_run_stored_in_postgres_renders_as_it_ran(
    project: Project, database: str
) -> None:
    tests = [conversation("c0"), conversation("broken", turns=3)]
    tests[1]["conversation"]["turns"][1]["user"] = "broken: crash at turn 2"
    project.tests_file("t.yaml", {"s": tests})
    result = project.run("run", "t.yaml", "--target", agent.spec(), "--store", database)
    assert result.exit_code == 1 and result.report is not None
    again = project.run("report", result.report["run_id"], "--store", database)
    assert again.report is not None
    drop = ("generated_at",)
    assert {k: v for k, v in again.report.items() if k not in drop} == {
        k: v for k, v in result.report.items() if k not in drop
    }
    c0 = again.tests["c0"]["trials"][0]
    assert [t["user"] for t in c0["turns"]] == ["c0 hello", "c0 then 2", "c0 go ahead"]
    crashed = again.tests["broken"]["trials"][0]
    assert crashed["error"].startswith("turn 2 of 3: ") and crashed["conversation"] is None
