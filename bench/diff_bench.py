"""The diff of two large runs: ``assertly diff`` over a store holding two N-test runs.

The two runs are written straight into a real run store (the store's own schema, one trial a
test with a record shaped like the runner's), 1 % of the tests regressing and 0.5 % fixed, so
the measured command does the whole job: stream both runs in key order, classify, Fisher per
test, Holm over all of them, McNemar and Wilson, and write every test as JSON.

Used by ``bench/suite.py`` (section "diff"); alone: ``python bench/diff_bench.py [N] [DIR]``.
"""

from __future__ import annotations

import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from assertly.store import RunStore


def build_store(path: Path, tests: int) -> None:
    """Two runs, ``base`` and ``cand``, of ``tests`` tests each, in one store at ``path``."""
    RunStore(path).close()  # the schema, as assertly creates it
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=OFF")
    for run_id, started in (("base", "2026-01-01T00:00:00Z"), ("cand", "2026-01-02T00:00:00Z")):
        options = orjson.dumps({"pass_threshold": "all"}).decode()
        db.execute(
            "INSERT INTO runs (run_id, started_at, finished_at, options, duration_ms) "
            "VALUES (?, ?, ?, ?, 0)",
            (run_id, started, started, options),
        )
        batch_tests: list[tuple[Any, ...]] = []
        batch_trials: list[tuple[Any, ...]] = []
        for number in range(tests):
            key = f"suite{number % 50:02d}.tests.yaml::s::test-{number:07d}"
            passed = not (run_id == "cand" and number % 100 == 7) and not (
                run_id == "base" and number % 200 == 3
            )
            meta = {
                "definition": f"{number:032x}",
                "key": key,
                "id": f"test-{number:07d}",
                "name": f"test-{number:07d}",
                "suite": "s",
                "file": f"suite{number % 50:02d}.tests.yaml",
                "line": 10 + number,
                "tags": [],
                "pass_threshold": "all",
            }
            status = "passed" if passed else "failed"
            failures = (
                []
                if passed
                else [{"step": key, "assertion": "contains", "outcome": "failed",
                       "message": "Output does not contain 'refund'", "expected": "refund",
                       "actual": "no"}]
            )  # fmt: skip
            record = {
                "test_key": key, "trial": 1, "status": status, "duration_ms": 1.0,
                "steps": [{"name": key, "status": status, "response": "an answer " * 20,
                           "checks": [], "score": 1.0 if passed else 0.0}],
                "failures": failures, "error": None, "reason": None,
                "score": 1.0 if passed else 0.0,
            }  # fmt: skip
            batch_tests.append((run_id, key, number, orjson.dumps(meta).decode()))
            batch_trials.append(
                (run_id, key, 1, status, orjson.dumps(record).decode(), 0.0, record["score"])
            )
            if len(batch_tests) >= 50_000:
                _flush(db, batch_tests, batch_trials)
        _flush(db, batch_tests, batch_trials)
    db.close()


def _flush(
    db: sqlite3.Connection, tests: list[tuple[Any, ...]], trials: list[tuple[Any, ...]]
) -> None:
    with db:
        db.executemany("INSERT INTO tests VALUES (?, ?, ?, ?)", tests)
        db.executemany(
            "INSERT INTO trials (run_id, test_key, trial, status, record, saved_at, score) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            trials,
        )
    tests.clear()
    trials.clear()


def main() -> int:
    tests = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    directory = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(tempfile.mkdtemp())
    store = directory / "diff.sqlite"
    started = time.perf_counter()
    build_store(store, tests)
    print(f"built {store} with 2 x {tests:,} tests in {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
