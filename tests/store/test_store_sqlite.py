"""The SQLite run store: WAL mode, one committed row per trial, resume bookkeeping, `last`,
redaction of secrets (including ones registered after the store was opened).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from assertly import StoreError
from assertly.runner import TrialRecord, build_run
from assertly.store import RunStore, new_run_id
from store_support import stored_records_text


def _record(key: str, trial: int, status: str = "passed", **extra: object) -> dict[str, object]:
    record = TrialRecord(key, trial, status, 12.5).to_dict()  # type: ignore[arg-type]
    record.update(extra)  # e.g. the copy of its failures an older assertly kept
    return record


@pytest.fixture
def store(tmp_path: Path) -> RunStore:
    opened = RunStore(tmp_path / "deep" / "dir" / "runs.sqlite")
    yield opened  # type: ignore[misc]
    opened.close()


def test_creates_its_directory_and_uses_wal(store: RunStore) -> None:
    assert store.path.is_file()
    with sqlite3.connect(store.path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_each_trial_is_visible_to_other_readers_at_once(store: RunStore) -> None:
    store.start_run("r1", "2026-01-01T00:00:00Z", {"paths": ["."]})
    store.save_tests("r1", [{"key": "f::s::a", "id": "a"}])
    store.save_trial("r1", "f::s::a", 1, _record("f::s::a", 1))
    # Another connection (another process, in real life) sees the committed row while the
    # writer is still open.
    with sqlite3.connect(store.path) as reader:
        rows = reader.execute("SELECT test_key, trial, status FROM trials").fetchall()
    assert rows == [("f::s::a", 1, "passed")]


def test_saving_a_trial_again_replaces_it(store: RunStore) -> None:
    store.start_run("r1", "t", {})
    store.save_trial("r1", "k", 1, _record("k", 1, "error", error="first"))
    store.save_trial("r1", "k", 1, _record("k", 1, "passed"))
    store.save_trial("r1", "k", 2, _record("k", 2, "failed"))
    trials = store.trials("r1")
    assert {n: t["status"] for n, t in trials["k"].items()} == {1: "passed", 2: "failed"}
    with sqlite3.connect(store.path) as db:
        assert db.execute("SELECT COUNT(*) FROM trials").fetchone()[0] == 2


def test_resume_keeps_the_original_run_row_and_takes_the_files_test_order(
    store: RunStore,
) -> None:
    store.start_run("r1", "2026-01-01T00:00:00Z", {"trials": 3})
    store.save_tests("r1", [{"key": "a", "id": "a"}, {"key": "b", "id": "b"}])
    store.start_run("r1", "2027-01-01T00:00:00Z", {"trials": 1})
    store.save_tests(
        "r1", [{"key": "b", "id": "b"}, {"key": "a", "id": "a"}, {"key": "c", "id": "c"}]
    )
    info = store.run_info("r1")
    assert info["started_at"] == "2026-01-01T00:00:00Z"
    assert info["options"] == {"trials": 3}
    assert info["finished_at"] is None
    # The resumed run's plan (the files as they are now) orders the run, as its reports do.
    assert [t["key"] for t in store.tests("r1")] == ["b", "a", "c"]
    store.finish_run("r1", "2026-01-01T00:01:00Z", 60000.0)
    assert store.run_info("r1")["duration_ms"] == 60000.0


def test_resolve_run_id(store: RunStore) -> None:
    with pytest.raises(StoreError, match="has no runs yet"):
        store.resolve_run_id("last")
    store.start_run("older", "2026-01-01T00:00:00.000Z", {})
    store.start_run("newer", "2026-01-02T00:00:00.000Z", {})
    assert store.resolve_run_id("last") == "newer"
    assert store.resolve_run_id("older") == "older"
    with pytest.raises(StoreError, match="no run 'missing'"):
        store.resolve_run_id("missing")
    with pytest.raises(StoreError):
        store.run_info("missing")


def test_new_run_ids_sort_by_time_and_are_unique() -> None:
    ids = {new_run_id() for _ in range(200)}
    assert len(ids) == 200
    assert all(len(i.split("-")[0]) == 16 and i[8] == "T" for i in ids)


def test_secrets_are_redacted_even_when_registered_after_opening(tmp_path: Path) -> None:
    secrets: set[str] = set()
    store = RunStore(tmp_path / "runs.sqlite", redact=secrets)
    try:
        store.start_run("r", "t", {})
        # Targets are built (and register their secrets) after the store was opened.
        secrets.update({"tok-123", 'quo"te\\secret', ""})
        store.save_trial(
            "r",
            "k",
            1,
            _record(
                "k", 1, "failed", failures=[{"actual": "Bearer tok-123", "other": 'quo"te\\secret'}]
            ),
        )
        store.save_eval("r", "flow.yaml", {"file": "flow.yaml", "note": "tok-123"})
    finally:
        store.close()
    raw = b"".join(p.read_bytes() + stored_records_text(p) for p in tmp_path.iterdir())
    assert b"Bearer [REDACTED]" in raw  # the records are read too (they are compressed)
    assert b"tok-123" not in raw
    assert b"te\\\\secret" not in raw and b'quo\\"te' not in raw
    reopened = RunStore(tmp_path / "runs.sqlite")
    try:
        failure = reopened.trials("r")["k"][1]["failures"][0]
        assert failure == {"actual": "Bearer [REDACTED]", "other": "[REDACTED]"}
        assert reopened.evals("r") == [{"file": "flow.yaml", "note": "[REDACTED]"}]
    finally:
        reopened.close()


def test_must_exist_does_not_create_a_store(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no run store"):
        RunStore(tmp_path / "missing.sqlite", must_exist=True)
    assert not (tmp_path / "missing.sqlite").exists()


def test_unusable_path_is_a_store_error(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("x")
    with pytest.raises(StoreError, match="cannot open the run store"):
        RunStore(tmp_path / "a-file" / "runs.sqlite")
    (tmp_path / "not-sqlite").write_text("this is not a database" * 100)
    with pytest.raises(StoreError):
        RunStore(tmp_path / "not-sqlite")


def test_build_run_from_stored_rows(store: RunStore) -> None:
    store.start_run("r", "t0", {"pass_threshold": "majority", "problems": ["x.yaml:1:1: bad"]})
    store.save_tests(
        "r",
        [
            {"key": "f::s::a", "id": "a", "name": "A", "suite": "s", "file": "f"},
            {"key": "f::s::b", "id": "b", "name": "B", "suite": "s", "file": "f"},
        ],
    )
    for trial, status in enumerate(["passed", "failed", "passed"], start=1):
        store.save_trial(
            "r",
            "f::s::a",
            trial,
            _record("f::s::a", trial, status, score=1.0 if status == "passed" else 0.0),
        )
    run = build_run(store, "r")
    a, b = run.tests
    assert a.status == "passed"  # 2 of 3 with majority
    assert a.score == pytest.approx(2 / 3)
    assert [t.trial for t in a.trials] == [1, 2, 3]
    assert b.status == "error"  # never ran: the run was interrupted
    assert "interrupted" in (b.trials[0].error or "")
    assert run.problems == ["x.yaml:1:1: bad"]
    assert not run.ok
    data = run.to_dict()
    assert data["summary"]["total"] == 2
    assert json.loads(json.dumps(data)) == data
    # The tests are read from the store as they are iterated: a later trial shows up, and
    # the counts come from the status column alone.
    assert len(run.tests) == 2
    assert run.tests[-1].id == "b"
    assert run.status_counts() == {"passed": 1, "failed": 0, "error": 1, "skipped": 0}
    store.save_trial("r", "f::s::b", 1, _record("f::s::b", 1, "passed", score=1.0))
    fresh = build_run(store, "r")
    assert [test.status for test in fresh.tests] == ["passed", "passed"]
    assert fresh.status_counts()["passed"] == 2


@pytest.mark.parametrize("threshold", ["all", "any", "majority"])
def test_not_passed_reads_exactly_the_failing_and_errored_tests(
    store: RunStore, threshold: str
) -> None:
    trials = {
        "pass": ["passed"],
        "fail": ["failed"],
        "mixed": ["passed", "failed", "failed"],
        "mostly": ["passed", "passed", "failed"],
        "error": ["error"],
        "skipped": ["skipped"],
        "never_ran": [],
    }
    store.start_run("r", "t0", {"pass_threshold": threshold})
    store.save_tests(
        "r", [{"key": k, "id": k, "name": k, "suite": "s", "file": "f"} for k in trials]
    )
    for key, statuses in trials.items():
        for number, status in enumerate(statuses, start=1):
            store.save_trial("r", key, number, _record(key, number, status))
    expected = [t.id for t in build_run(store, "r").tests if t.status in ("failed", "error")]
    assert "never_ran" in expected and "pass" not in expected and "skipped" not in expected
    assert ("mostly" in expected) == (threshold == "all")
    lazy = build_run(store, "r")
    selected = list(lazy.not_passed())
    assert [t.id for t in selected] == expected
    assert all(t.trials for t in selected)  # records parsed, not just statuses
    list(lazy.tests)  # a small run is kept after its first pass; the kept copy agrees
    assert [t.id for t in lazy.not_passed()] == expected


def test_values_orjson_cannot_round_trip_are_kept(store: RunStore) -> None:
    store.start_run("r", "t", {})
    record = _record(
        "k", 1, "failed", failures=[{"actual": 2**70, "text": "lone \udc80 surrogate"}]
    )
    store.save_trial("r", "k", 1, record)
    [failure] = store.trials("r")["k"][1]["failures"]
    assert failure["actual"] == 2**70
    assert isinstance(failure["actual"], int)
    assert failure["text"] == "lone \udc80 surrogate"
