"""The viewer over a PostgreSQL run store: every query gives what it gives over SQLite."""

from __future__ import annotations

import dataclasses
import json
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


MATRIX_FILTERS = [
    Filters(),
    Filters(disagree=True),
    Filters(statuses=("failed",)),
    Filters(statuses=("failed",), disagree=True),
    Filters(statuses=("passed",), suite="mx"),
    Filters(q="nope"),
    Filters(q="again", disagree=True),
    Filters(tag="none"),
]


def _matrix(queries: RunQueries, run_id: str, filters: Filters, offset: int) -> Any:
    page = queries.matrix_page(run_id, "all", ["base", "cand"], filters, offset, 2)
    rows = [
        (row.key, row.disagree, {label: test.status for label, test in row.cells.items()})
        for row in page.rows
    ]
    return rows, [test.key for test in page.tests], page.to_dict()


def test_a_matrix_run_reads_the_same_over_postgres(tmp_path: Path, postgres_database: str) -> None:
    """The runner stores one matrix run in each kind of store; every matrix query agrees."""
    from matrix_support import DISAGREE, matrix_project, run_matrix

    project = matrix_project(tmp_path / "mx")
    local_id = run_matrix(project, str(tmp_path / "runs.sqlite"))
    shared_id = run_matrix(project, postgres_database)
    local, shared = RunQueries(tmp_path / "runs.sqlite"), RunQueries(postgres_database)
    assert shared.run_info(shared_id)["targets"] == ["base", "cand"]
    counts = shared.matrix_counts(shared_id, "all", False)
    assert counts == local.matrix_counts(local_id, "all", False)
    assert counts["disagree"] == len(DISAGREE)
    for filters in MATRIX_FILTERS:
        for offset in (0, 2, 20):
            assert _matrix(shared, shared_id, filters, offset) == _matrix(
                local, local_id, filters, offset
            ), (dataclasses.asdict(filters), offset)
    rows, _, page = _matrix(shared, shared_id, Filters(disagree=True), 0)
    assert [key.rsplit("::", 1)[1] for key, _, _ in rows] == DISAGREE
    assert page["matched"] == len(DISAGREE)
    # And through the API of the viewer over PostgreSQL.
    from assertly.viewer import Site

    data = json.loads(Site(shared, background=False).run_json(shared_id, {"disagree": "1"}))
    assert [row["id"] for row in data["matrix"]["rows"]] == DISAGREE
    assert data["summary"]["by_target"]["cand"]["failed"] == 3
