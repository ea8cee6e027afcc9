"""The store's seam (issue 30): one abstract `RunStore`, two sibling kinds, `open_store`.

``RunStore(location)`` opens the kind its location names; `open_store` closes the store after
its block (committing what was batched); the kinds share the base and the codec and import
neither each other nor anything that imports them, counting every import a module makes
(at module level, inside functions, and for type checking only).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import assertly.store
import assertly.viewer
from assertly import StoreError
from assertly.runner import TrialRecord
from assertly.store import PostgresStore, RunStore, SQLiteStore, open_store
from import_graph_support import every_import_graph, find_cycle, modules_under

STORE = modules_under(Path(assertly.store.__file__).parent)
VIEWER = modules_under(Path(assertly.viewer.__file__).parent)


def test_a_path_opens_sqlite_and_a_url_postgres(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    try:
        assert type(store) is SQLiteStore and isinstance(store, RunStore)
    finally:
        store.close()
    assert RunStore.kind(str(tmp_path / "runs.sqlite")) is SQLiteStore
    assert RunStore.kind("postgresql://user@host/db") is PostgresStore
    assert RunStore.kind("postgres://user@host/db") is PostgresStore
    assert SQLiteStore.dialect.tie == "rowid" and PostgresStore.dialect.tie == "seq"


def test_the_kinds_are_siblings_not_parent_and_child() -> None:
    assert not issubclass(PostgresStore, SQLiteStore)
    assert not issubclass(SQLiteStore, PostgresStore)
    assert RunStore in PostgresStore.__mro__ and RunStore in SQLiteStore.__mro__


def test_open_store_closes_and_commits_what_was_batched(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    with open_store(path) as store:
        store.start_run("r", "2026-01-01T00:00:00Z", {})
        store.save_tests("r", [{"key": "k", "id": "k"}])
        store.save_trial("r", "k", 1, TrialRecord("k", 1, "passed", 1.0).to_dict(), batch=True)
    with pytest.raises(sqlite3.ProgrammingError):  # closed
        store._db.execute("SELECT 1")
    with open_store(path, must_exist=True, read_only=True) as reader:
        assert list(reader.trials("r")) == ["k"]


def test_open_store_closes_when_the_block_raises(tmp_path: Path) -> None:
    with pytest.raises(KeyError), open_store(tmp_path / "runs.sqlite") as store:
        raise KeyError("boom")
    with pytest.raises(sqlite3.ProgrammingError):
        store._db.execute("SELECT 1")


def test_open_store_refuses_a_missing_store(tmp_path: Path) -> None:
    with (
        pytest.raises(StoreError, match="no run store"),
        open_store(tmp_path / "none.sqlite", must_exist=True),
    ):
        pass
    assert not (tmp_path / "none.sqlite").exists()


def test_no_import_cycle_in_the_store_and_the_viewer_counting_every_import() -> None:
    graph = every_import_graph({**STORE, **VIEWER})
    assert "assertly.store._base" in graph["assertly.store._sqlite"]
    assert "assertly.store._base" in graph["assertly.store._postgres"]
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_kinds_import_neither_each_other_nor_the_package() -> None:
    graph = every_import_graph(STORE)
    for kind, other in (("_sqlite", "_postgres"), ("_postgres", "_sqlite")):
        assert f"assertly.store.{other}" not in graph[f"assertly.store.{kind}"]
        assert "assertly.store" not in graph[f"assertly.store.{kind}"]
    assert graph["assertly.store._dialects"] == set()  # no longer imports the queries


def test_the_cycle_check_sees_a_type_only_import() -> None:
    graph = every_import_graph({**STORE, **VIEWER})
    graph["assertly.store._dialects"].add("assertly.store._queries")  # the old TYPE_CHECKING one
    assert find_cycle(graph) is not None


@pytest.mark.parametrize(
    "location",
    ["postgress://app:pw@db.example.com/runs", "postgresq://db/runs", "sqlite:///runs.sqlite"],
)
def test_a_url_that_is_not_postgres_is_refused_not_made_a_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, location: str
) -> None:
    # A misspelled scheme was a file path: the runs went to ./postgress:/app:pw@db…/runs,
    # a directory named after the password, not to the database the team reads.
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StoreError, match=r"is a .*:// URL: a run store is a SQLite file") as error:
        RunStore(location)
    assert "pw" not in str(error.value)
    assert list(tmp_path.iterdir()) == []
