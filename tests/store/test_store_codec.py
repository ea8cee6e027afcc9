"""The store's compact, compressed records (schema 2) read back exactly; older stores still read."""

from __future__ import annotations

import copy
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from assertly import StoreError
from assertly.store import RunStore, SQLiteStore
from assertly.store._codec import (
    DICTIONARY_AFTER,
    decode_meta,
    decode_record,
    encode_meta,
    encode_record,
)


def _result(name: str, outcome: str = "passed", **extra: Any) -> dict[str, Any]:
    passed = outcome in ("passed", "skipped")
    data: dict[str, Any] = {
        "assertion": name,
        "outcome": outcome,
        "passed": passed,
        "score": 1.0 if passed else 0.0,
        "message": "" if passed else f"{name} failed",
        "path": None,
        "expected": None if passed else "x",
        "actual": None if passed else "y",
    }
    data.update(extra)
    return data


def _trial(key: str = "f::s::t", *, results: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    results = results or [
        _result("contains"),
        _result("levenshtein", details={"distance": 1}),
        _result("equals", "failed"),
    ]
    step = {
        "name": "t",
        "status": "failed",
        "response": '{"status": "error"}',
        "checks": [{"passed": False, "score": 0.5, "results": results, "outcome": "failed"}],
        "error": None,
        "latency_ms": 12.5,
        "cost_usd": None,
        "model": "m",
        "score": 0.5,
        "tokens": None,
        "tool_calls": None,
        "judge_cost_usd": None,
        "judge_tokens": None,
    }
    return {
        "test_key": key,
        "trial": 1,
        "status": "failed",
        "duration_ms": 3.25,
        "steps": [step],
        "error": None,
        "reason": None,
        "score": 0.5,
    }


def _meta(key: str, test_id: str, **extra: Any) -> dict[str, Any]:
    """A test's metadata as the runner writes it (`runner._support.test_meta`)."""
    meta = {
        "definition": "abc",
        "key": key,
        "id": test_id,
        "name": test_id,
        "suite": "s",
        "file": "f",
        "line": 3,
        "tags": [],
        "priority": None,
        "description": None,
        "agent": "bot",
        "pass_threshold": "all",
        "input": None,
    }
    return {**meta, **extra}


def _round_trip(record: dict[str, Any]) -> Any:
    return decode_record(copy.deepcopy(encode_record(record)), record["test_key"])


def test_a_runner_record_is_written_compactly_and_reads_back_exactly() -> None:
    record = _trial()
    encoded = encode_record(record)
    assert isinstance(encoded, list)  # compact: no keys, no test_key
    results = encoded[3][0][3][0]["results"]
    assert results[:2] == ["contains", ["levenshtein", {"distance": 1}]]  # quiet passes
    assert isinstance(results[2], dict)  # a failure is kept whole
    assert encoded[4] is None  # no copy of the failures: they are the steps'
    decoded = _round_trip(record)
    assert decoded == record
    assert list(decoded) == list(record)
    assert list(decoded["steps"][0]) == list(record["steps"][0])
    assert [list(r) for r in decoded["steps"][0]["checks"][0]["results"]] == [
        list(r) for r in record["steps"][0]["checks"][0]["results"]
    ]


@pytest.mark.parametrize(
    "change",
    [
        # A pass that says something, an integer score, `passed` as 1, a skip: kept whole.
        lambda r: r["steps"][0]["checks"][0]["results"].append(_result("x", message="why")),
        lambda r: r["steps"][0]["checks"][0]["results"].append(_result("x", score=1)),
        lambda r: r["steps"][0]["checks"][0]["results"].append(_result("x", passed=1)),
        lambda r: r["steps"][0]["checks"][0]["results"].append(_result("x", "skipped")),
        lambda r: r["steps"][0]["checks"][0]["results"].append(
            _result("all", children=[_result("x")])
        ),
        # A record of an older assertly with its copy of the failures (any copy, or None).
        lambda r: r.update(failures=[]),
        lambda r: r.update(failures=[{"step": "other"}]),
        lambda r: r.update(failures=None),
        # A field a later version adds, at the trial and at the step; a step of another shape.
        lambda r: r.update(extra=1),
        lambda r: r["steps"][0].update(extra=1),
        lambda r: r["steps"].append({"name": "old step", "status": "passed"}),
        lambda r: r["steps"][0].update(checks=None),
        lambda r: r["steps"][0]["checks"].append("odd"),
        # A step whose trailing fields are set, and one with every field None but its name.
        lambda r: r["steps"][0].update(judge_tokens=5, tool_calls=[{"name": "f"}]),
        lambda r: r["steps"][0].update(
            {k: None for k in r["steps"][0] if k not in ("name", "checks")}
        ),
    ],
)
def test_records_the_compact_form_does_not_describe_read_back_exactly(change: Any) -> None:
    record = _trial()
    change(record)
    decoded = _round_trip(record)
    assert decoded == record
    assert repr(decoded) == repr(record)  # same values, same types, same key order


def test_metadata_drops_its_key_and_empty_fields_and_reads_back() -> None:
    meta = _meta("f::s::t", "t")
    compact = encode_meta(meta)
    assert compact == {
        "definition": "abc",
        "id": "t",
        "suite": "s",
        "file": "f",
        "line": 3,
        "agent": "bot",
        "pass_threshold": "all",
    }
    assert repr(decode_meta(copy.deepcopy(compact), "f::s::t")) == repr(meta)
    for other in (
        {**meta, "input": [{"step": "a", "input": 1}], "multi_step": True},
        {**meta, "name": "another name", "tags": ["x"], "priority": 2},
        {**meta, "name": "", "tags": [[]], "input": {"q": None}},
    ):
        assert repr(decode_meta(copy.deepcopy(encode_meta(other)), "f::s::t")) == repr(other)
    # Metadata of another shape (a field added later, one missing, a None the compact form
    # would read back otherwise) is kept whole, and read back as it is.
    for odd in (
        {**meta, "later_field": 1},
        {key: value for key, value in meta.items() if key != "priority"},
        {**meta, "name": None},
        {**meta, "tags": None},
        {"key": "f::s::t", "id": "t"},
    ):
        assert encode_meta(odd) is odd
        assert decode_meta(odd, "ignored") is odd


def test_the_store_compresses_records_with_a_dictionary_and_reads_them(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    store.start_run("r", "2026-01-01T00:00:00Z", {})
    count = DICTIONARY_AFTER + 50
    metas = [_meta(f"f::s::t{n}", f"t{n}") for n in range(count)]
    store.save_tests("r", metas)
    records = [_trial(f"f::s::t{n}") for n in range(count)]
    for n, record in enumerate(records):
        record["steps"][0]["response"] = f'{{"status": "error", "n": {n}}}'
        store.save_trial("r", record["test_key"], 1, record, batch=True)
    store.flush()
    kinds = store._db.execute("SELECT typeof(record), COUNT(*) FROM trials GROUP BY 1").fetchall()
    assert kinds == [("blob", count)]
    assert store._db.execute("SELECT COUNT(*) FROM dictionaries").fetchone() == (1,)
    sizes = [len(r) for (r,) in store._db.execute("SELECT record FROM trials ORDER BY saved_at")]
    assert max(sizes[-20:]) < 150  # with the dictionary: a ~1 kB record in ~100 bytes
    store.close()

    again = SQLiteStore(tmp_path / "runs.sqlite", must_exist=True, read_only=True)
    read = [trials[1] for _, trials in again.iter_tests("r")]
    assert read == records
    assert again.trials("r")["f::s::t7"][1] == records[7]
    assert again.first_not_passed("r", "f::s::t1") == records[1]
    # Counted as the JSON text it reads back as (from a sample), not as compressed.
    texts = [again.record_text(r) or "" for (r,) in again._db.execute("SELECT record FROM trials")]
    assert 0.7 < again.stored_bytes("r") / sum(map(len, texts)) < 1.3
    assert sum(map(len, texts)) > sum(sizes) * 1.3
    assert again.record_text(
        again._db.execute("SELECT record FROM trials LIMIT 1").fetchone()[0]
    ).startswith("[1,")
    again.close()


def test_a_schema_1_store_reads_as_it_is_and_takes_compact_records_after(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    old = _trial("f::s::old")
    db = sqlite3.connect(path)
    db.executescript(
        """
        CREATE TABLE runs (run_id TEXT PRIMARY KEY, started_at TEXT NOT NULL, finished_at TEXT,
            options TEXT NOT NULL, duration_ms REAL);
        CREATE TABLE tests (run_id TEXT NOT NULL, test_key TEXT NOT NULL,
            position INTEGER NOT NULL, meta TEXT NOT NULL, PRIMARY KEY (run_id, test_key));
        CREATE TABLE trials (run_id TEXT NOT NULL, test_key TEXT NOT NULL,
            trial INTEGER NOT NULL, status TEXT NOT NULL, record TEXT NOT NULL,
            saved_at REAL NOT NULL, PRIMARY KEY (run_id, test_key, trial));
        CREATE TABLE evals (run_id TEXT NOT NULL, file TEXT NOT NULL, record TEXT NOT NULL,
            PRIMARY KEY (run_id, file));
        PRAGMA user_version = 1;
        """
    )

    db.execute("INSERT INTO runs VALUES ('r', '2026-01-01T00:00:00Z', NULL, '{}', NULL)")
    meta = {"key": "f::s::old", "id": "old", "suite": "s", "pass_threshold": "all"}
    db.execute("INSERT INTO tests VALUES ('r', 'f::s::old', 0, ?)", (json.dumps(meta),))
    db.execute(
        "INSERT INTO trials VALUES ('r', 'f::s::old', 1, 'failed', ?, 0)", (json.dumps(old),)
    )
    db.commit()
    db.close()

    reader = RunStore(path, must_exist=True, read_only=True)
    assert [(m, t) for m, t in reader.iter_tests("r")] == [(meta, {1: old})]
    reader.close()
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone() == (1,)

    writer = RunStore(path)  # opened to write: schema 2 from now on
    new = _trial("f::s::new")
    writer.save_tests("r", [{"key": "f::s::new", "id": "new", "pass_threshold": "all"}], start=1)
    writer.save_trial("r", "f::s::new", 1, new)
    assert [t for _, t in writer.iter_tests("r")] == [{1: old}, {1: new}]
    assert [row[-1] for row in writer.test_counts("r", scores=True)] == [0.5, 0.5]
    writer.close()
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone() == (2,)


def test_a_damaged_record_is_a_clear_store_error(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    store.start_run("r", "2026-01-01T00:00:00Z", {})
    store.save_tests("r", [{"key": "k", "id": "k"}])
    store.save_trial("r", "k", 1, _trial("k"))
    store._db.execute("UPDATE trials SET record = X'01007A7A7A'")
    with pytest.raises(StoreError, match="the record of a trial of k is damaged"):
        store.trials("r")
    store.close()


def test_postgres_keeps_the_compact_text_and_reads_schema_1_rows(postgres_database: str) -> None:
    """Same compact records in PostgreSQL (not compressed: SQL searches them); old rows read."""
    psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (.[dev] has it)")
    store = RunStore(postgres_database)
    store.start_run("r", "2026-01-01T00:00:00Z", {})
    store.save_tests("r", [_meta("f::s::new", "new")])
    new = _trial("f::s::new")
    store.save_trial("r", "f::s::new", 1, new)
    store.close()
    with psycopg.connect(postgres_database, autocommit=True) as db:
        text, meta = db.execute(
            "SELECT r.record, t.meta FROM trials r JOIN tests t USING (run_id, test_key)"
        ).fetchone()
        assert text.startswith("[1,") and '"contains"' in text and "f::s::new" not in text
        assert meta == (
            '{"definition":"abc","id":"new","suite":"s","file":"f","line":3,"agent":"bot",'
            '"pass_threshold":"all"}'
        )
        assert db.execute("SELECT value FROM assertly_store").fetchone() == ("2",)
        # A row as schema 1 wrote it (whole JSON with its key) next to the new one.
        old = _trial("f::s::old")
        db.execute(
            "INSERT INTO tests (run_id, test_key, position, meta) VALUES ('r', 'f::s::old', 1, %s)",
            (json.dumps({"key": "f::s::old", "id": "old"}),),
        )
        db.execute(
            "INSERT INTO trials (run_id, test_key, trial, status, record, saved_at, score) "
            "VALUES ('r', 'f::s::old', 1, 'failed', %s, 0, 0.5)",
            (json.dumps(old),),
        )
    reader = RunStore(postgres_database, must_exist=True, read_only=True)
    tests = list(reader.iter_tests("r"))
    assert [trials for _, trials in tests] == [{1: new}, {1: old}]
    assert tests[0][0] == _meta("f::s::new", "new")
    assert tests[1][0] == {"key": "f::s::old", "id": "old"}
    assert reader.first_not_passed("r", "f::s::new") == new
    reader.close()


def test_a_newer_postgres_schema_is_refused(postgres_database: str) -> None:
    psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (.[dev] has it)")
    RunStore(postgres_database).close()
    with psycopg.connect(postgres_database, autocommit=True) as db:
        db.execute("UPDATE assertly_store SET value = '3' WHERE key = 'schema_version'")
    with pytest.raises(StoreError, match=r"written by a newer assertly \(store schema 3"):
        RunStore(postgres_database)


@pytest.mark.parametrize(
    ("in_step", "in_failure"),
    [
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}),  # equal objects, keys in another order
        ([1], [1.0]),  # equal to ==, of other types, inside a container
        ([1], [True]),
        ({"n": 0}, {"n": False}),
        (-0.0, 0.0),  # equal to ==, another sign
    ],
)
def test_failures_equal_to_the_steps_but_not_the_same_read_back_as_written(
    in_step: Any, in_failure: Any
) -> None:
    record = _trial()
    record["steps"][0]["checks"][0]["results"][2]["expected"] = in_step
    # An older assertly's copy of the failures beside the steps.
    failed = record["steps"][0]["checks"][0]["results"][2]
    record["failures"] = [
        {"step": "t", **{k: failed[k] for k in ("assertion", "outcome", "message", "path")}}
    ]
    record["failures"][0].update(expected=in_failure, actual=failed["actual"])
    whole = json.loads(json.dumps(record))  # what schema 1 read back
    compact = json.loads(json.dumps(encode_record(record)))
    assert repr(decode_record(compact, record["test_key"])) == repr(whole)
