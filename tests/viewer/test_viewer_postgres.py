"""The viewer over a PostgreSQL run store: every query gives what it gives over SQLite."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from viewer_support import build_store

from assertly.store import Filters, RunQueries

FILTERS = [
    Filters(),
    Filters(statuses=("failed",)),
    Filters(statuses=("passed", "skipped")),
    Filters(statuses=("error",)),
    Filters(suite="privacy"),
    Filters(tag="smoke"),
    Filters(q="notes"),
    Filters(statuses=("passed",), suite="search", tag="limits"),
]


def _page(queries: RunQueries, run_id: str, filters: Filters, offset: int) -> Any:
    info = queries.run_info(run_id)
    page = queries.page(
        run_id, info["threshold"], filters, offset, 3, total=info["tests"], running=False
    )
    tests = [(test.key, test.status, [t.status for t in test.trials]) for test in page.tests]
    return tests, page.next_offset, page.total


def test_every_query_agrees_with_sqlite(tmp_path: Path, postgres_database: str) -> None:
    sqlite = tmp_path / "runs.sqlite"
    build_store(sqlite, running=True)
    build_store(postgres_database, running=True)  # type: ignore[arg-type]
    local, shared = RunQueries(sqlite), RunQueries(postgres_database)
    assert shared.runs(0, 10) == local.runs(0, 10)
    assert [shared.resolve(name) for name in ("last", "last~1", "last~2")] == [
        "live",
        "cand",
        "base",
    ]
    assert shared.previous("cand") == local.previous("cand") == "base"
    for run_id in ("base", "cand", "live"):
        info = shared.run_info(run_id)
        assert {k: v for k, v in info.items() if k != "evals"} == {
            k: v for k, v in local.run_info(run_id).items() if k != "evals"
        }
        running = info["finished_at"] is None
        assert shared.status_counts(run_id, info["threshold"], running) == local.status_counts(
            run_id, info["threshold"], running
        )
        for filters in FILTERS:
            for offset in (0, 3):
                assert _page(shared, run_id, filters, offset) == _page(
                    local, run_id, filters, offset
                ), (run_id, dataclasses.asdict(filters), offset)
    # The counts are not all of one kind: the comparison above means something.
    counts = shared.status_counts("cand", "all", False)
    assert counts["passed"] and counts["failed"] and counts["error"] and counts["skipped"]


def test_the_password_stays_out_of_messages(postgres_database: str) -> None:
    from assertly._exceptions import StoreError

    with pytest.raises(StoreError) as raised:
        RunQueries(postgres_database)  # nothing has run here yet
    assert "nothing has run here yet" in str(raised.value)
    assert "assertly-test" not in str(raised.value)
