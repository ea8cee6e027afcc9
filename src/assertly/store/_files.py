"""Which file names a run: a SQLite run store, or a JSON report written by ``-o report.json``.

`diff`, `--baseline` and `merge` take either; both read them through here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .._exceptions import StoreError
from .._json import loads

__all__ = ["is_sqlite_file", "read_report"]


def is_sqlite_file(path: Path) -> bool:
    """Whether ``path`` is a SQLite database (by its header)."""
    with path.open("rb") as handle:
        return handle.read(16) == b"SQLite format 3\x00"


def read_report(path: Path) -> dict[str, Any]:
    """A JSON report of a run, read whole.

    Raises:
        StoreError: It cannot be read, is not JSON, or is not an assertly report.
    """
    try:
        data = loads(path.read_bytes())
    except OSError as error:
        raise StoreError(f"cannot read the report {path}: {error.strerror}") from None
    except ValueError as error:
        raise StoreError(f"{path} is not a JSON report: {error}") from None
    if not isinstance(data, dict) or not isinstance(data.get("tests"), list):
        raise StoreError(
            f"{path} is not an assertly JSON report (no tests list); write one with "
            "`assertly run … -o report.json` or `assertly report RUN -o report.json`"
        )
    return data
