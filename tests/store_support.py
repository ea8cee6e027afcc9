"""Reading what a SQLite run store holds, for tests that look for text in it.

Trial records are compressed in the file (store schema 2), so a secret that leaked into one
would not show in the file's bytes: tests that scan a store for text scan these too.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path


def stored_records_text(path: Path) -> bytes:
    """Every trial record of the SQLite store ``path`` as the JSON text it decompresses to."""
    from assertly import StoreError
    from assertly.store import RunStore

    if not path.is_file() or path.suffix != ".sqlite":
        return b""  # its WAL and shared memory are read through the store itself
    try:
        store = RunStore(path, must_exist=True, read_only=True)
    except StoreError:
        return b""
    try:
        rows = store._db.execute("SELECT record FROM trials").fetchall()
        return b"\n".join((store.record_text(row[0]) or "").encode() for row in rows)
    except sqlite3.Error:
        return b""
    finally:
        store.close()
