"""The verdict rule has one source, `status_of_counts`; the SQL that restates it agrees.

SQLite's viewer queries call the Python rule itself (``assertly_status``). PostgreSQL cannot
call Python, so its dialect restates the rule as an SQL ``CASE`` (`VERDICT_WHEN`): these tests
evaluate that ``CASE`` on every combination of trial counts and pass thresholds, on SQLite and
on a real PostgreSQL server, and compare each answer with the Python rule's.
"""

from __future__ import annotations

import itertools
import sqlite3
from typing import Any

from assertly._records import PassThreshold, status_of_counts
from assertly.store._dialects import POSTGRES, SQLITE, VERDICT_WHEN

THRESHOLDS: tuple[PassThreshold, ...] = ("all", "any", "majority")
# Up to 4 trials of each status: every tie, majority and mix of 0..4 (3,000 combinations).
COUNTS = list(itertools.product(range(5), repeat=4))
ROWS: list[tuple[int, int, int, int, PassThreshold]] = [
    (p, f, e, s, threshold) for p, f, e, s in COUNTS for threshold in THRESHOLDS
]
QUERY = f"SELECT p, f, e, s, thr, CASE {VERDICT_WHEN} END FROM c"


def _expected() -> dict[tuple[Any, ...], str]:
    return {(p, f, e, s, thr): status_of_counts(p, f, e, s, thr) for p, f, e, s, thr in ROWS}


def _answers(rows: list[tuple[Any, ...]]) -> dict[tuple[Any, ...], str]:
    return {tuple(row[:5]): row[5] for row in rows}


def test_the_sql_verdict_agrees_with_python_on_every_combination_in_sqlite() -> None:
    with sqlite3.connect(":memory:") as db:
        db.execute("CREATE TABLE c (p INTEGER, f INTEGER, e INTEGER, s INTEGER, thr TEXT)")
        db.executemany("INSERT INTO c VALUES (?, ?, ?, ?, ?)", ROWS)
        answers = _answers(db.execute(QUERY).fetchall())
    assert len(answers) == len(ROWS) == 3 * 5**4
    assert answers == _expected()


def test_the_sql_verdict_agrees_with_python_on_every_combination_in_postgres(
    postgres_database: str,
) -> None:
    import psycopg

    with psycopg.connect(postgres_database, autocommit=True) as db:
        db.execute("CREATE TABLE c (p BIGINT, f BIGINT, e BIGINT, s BIGINT, thr TEXT)")
        with db.cursor() as cursor:
            cursor.executemany("INSERT INTO c VALUES (%s, %s, %s, %s, %s)", ROWS)
        answers = _answers(db.execute(QUERY).fetchall())
    assert answers == _expected()


def test_the_postgres_dialect_uses_the_tested_rule_and_sqlite_the_python_one() -> None:
    assert VERDICT_WHEN in POSTGRES.verdicts
    # SQLite restates nothing: its verdict is the Python function, registered by the store.
    assert "assertly_status(" in SQLITE.verdicts
    assert "THEN 'passed'" not in SQLITE.verdicts and "majority" not in SQLITE.verdicts
