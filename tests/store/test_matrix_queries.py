"""The matrix queries' SQL restates two Python rules; on SQLite and PostgreSQL it agrees.

`targets_disagree` (whether a test's verdicts across targets differ, a cell not yet judged left
out) is the filter ``disagree``; its SQL is `DISAGREE`, an aggregate over a row's cells. A
cell's row is its key without ``[label]`` (`TestRecord.base_key`); its SQL is ``_BASE``.
Both are evaluated here on every combination of verdicts (and on awkward keys) and compared
with the Python rules.
"""

from __future__ import annotations

import itertools
import sqlite3
from typing import Any

from assertly._records import TestRecord as Record
from assertly.store import FILTER_STATUSES, targets_disagree
from assertly.store._dialects import _BASE, DISAGREE

# Every assignment of a verdict (or no cell) to up to three targets: 1 + 6 + 36 + 216 rows.
CELLS = [combo for n in range(1, 4) for combo in itertools.product(FILTER_STATUSES, repeat=n)]
QUERY = (
    f"SELECT row_id, CASE WHEN {DISAGREE} THEN 1 ELSE 0 END FROM cells GROUP BY row_id "
    "ORDER BY row_id"
)
KEYS = [
    ("f.yaml::s::t[base]", "base"),
    ("f.yaml::s::t[cand]", "cand"),
    ("f.yaml::s::t", None),
    ("f.yaml::s::t[other]", "cand"),  # not its label: the key is its row
    ("f.yaml::s::[x][y]", "y"),
    ("f.yaml::s::t[a]b]", "a]b"),
    ("f.yaml::s::é ✓ 中[ü]", "ü"),
    ("x[]", ""),
    ("[cand]", "cand"),
    ("ab", "abcdef"),  # shorter than its label: SQL's substr starts before the text
]


def _rows() -> list[tuple[int, str]]:
    return [(n, verdict) for n, combo in enumerate(CELLS) for verdict in combo]


def _expected() -> list[tuple[int, int]]:
    return [(n, int(targets_disagree(list(combo)))) for n, combo in enumerate(CELLS)]


def _base_expected() -> list[str]:
    return [
        Record(key, "t", "t", "s", "f", "passed", 1.0, [], target=target).base_key
        for key, target in KEYS
    ]


def test_the_rule_itself() -> None:
    assert targets_disagree(["passed", "failed"])
    assert not targets_disagree(["failed", "failed"])
    assert not targets_disagree(["passed", "pending"])  # not judged yet: no disagreement
    assert targets_disagree(["error", "failed", "pending"])
    assert not targets_disagree(["skipped"])


def test_the_sql_rules_agree_with_python_in_sqlite() -> None:
    with sqlite3.connect(":memory:") as db:
        db.execute("CREATE TABLE cells (row_id INTEGER, verdict TEXT)")
        db.executemany("INSERT INTO cells VALUES (?, ?)", _rows())
        assert db.execute(QUERY).fetchall() == _expected()
        db.execute("CREATE TABLE k (n INTEGER, test_key TEXT, target TEXT)")
        db.executemany("INSERT INTO k VALUES (?, ?, ?)", [(n, *kt) for n, kt in enumerate(KEYS)])
        found = [row[0] for row in db.execute(f"SELECT {_BASE} FROM k ORDER BY n")]
    assert found == _base_expected()
    assert sum(d for _, d in _expected()) > 100  # both answers are common: the test bites


def test_the_sql_rules_agree_with_python_in_postgres(postgres_database: str) -> None:
    import psycopg

    with psycopg.connect(postgres_database, autocommit=True) as db:
        db.execute("CREATE TABLE cells (row_id INTEGER, verdict TEXT)")
        db.execute('CREATE TABLE k (n INTEGER, test_key TEXT COLLATE "C", target TEXT)')
        with db.cursor() as cursor:
            cursor.executemany("INSERT INTO cells VALUES (%s, %s)", _rows())
            cursor.executemany(
                "INSERT INTO k VALUES (%s, %s, %s)", [(n, *kt) for n, kt in enumerate(KEYS)]
            )
        answers: list[Any] = db.execute(QUERY).fetchall()
        found = [row[0] for row in db.execute(f"SELECT {_BASE} FROM k ORDER BY n")]
    assert [tuple(row) for row in answers] == _expected()
    assert found == _base_expected()
