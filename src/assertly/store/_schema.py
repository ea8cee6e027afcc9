"""Which SQLite files are assertly run stores this assertly can read.

The store's schema version is kept in SQLite's ``PRAGMA user_version``. Stores written before
it was kept read 0 and hold the tables of version 1. A store with a higher version was written
by a newer assertly, and is refused rather than misread. Raise `SCHEMA_VERSION` with every
schema change that older readers cannot read.

Version 2 stores trial records compact and compressed, and tests' metadata compact (`_codec`).
A store of version 0 or 1 is read as it is; opened for writing, it becomes version 2 (its
tables are kept, a ``dictionaries`` table is added) and its old rows stay as they were written:
they read back as before, side by side with the new ones. No data is rewritten.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from .._exceptions import StoreError

__all__ = ["SCHEMA_VERSION", "check_schema"]

SCHEMA_VERSION = 2
# The columns each table must have (a file with tables of these names but not these columns
# belongs to another program). Columns added since (trials.score) are added on opening.
_COLUMNS = {
    "runs": {"run_id", "started_at", "finished_at", "options", "duration_ms"},
    "tests": {"run_id", "test_key", "position", "meta"},
    "trials": {"run_id", "test_key", "trial", "status", "record", "saved_at"},
    "evals": {"run_id", "file", "record"},
}


def check_schema(db: sqlite3.Connection, path: Path) -> int:
    """The store's schema version, once it is known to be an assertly store we can read.

    Only reads: another program's file is refused before anything is written to it.

    Raises:
        StoreError: A newer assertly wrote it, or it is another program's SQLite file.
        sqlite3.Error: The file cannot be read at all (not a database).
    """
    version = int(db.execute("PRAGMA user_version").fetchone()[0])
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"the run store {path} was written by a newer assertly (store schema {version}; "
            f"this one reads up to {SCHEMA_VERSION}): upgrade assertly, or give another --store"
        )
    tables = {
        name
        for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        if not name.startswith("sqlite_")
    }
    foreign = None
    if tables and not tables & _COLUMNS.keys():
        foreign = f"it holds the tables {', '.join(sorted(tables)[:5])}"
    for table in sorted(tables & _COLUMNS.keys()):
        columns = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
        missing = sorted(_COLUMNS[table] - columns)
        if missing:
            foreign = f"its table {table} has no column {missing[0]}"
            break
    if foreign is not None:
        raise StoreError(f"{path} is not an assertly run store ({foreign}); give another --store")
    return version
