"""The crash-proof run store: SQLite files and PostgreSQL databases behind one `RunStore`.

`RunStore` is the abstract store (`_base`); ``RunStore(location)`` opens a `SQLiteStore` or a
`PostgresStore`, and `open_store` one for a ``with`` block. The run read model (`build_run`,
`StoredTests`) and the viewer's paginated queries (`RunQueries`) read through it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import attributes
from ._base import RunStore, new_run_id, open_store
from ._dialects import is_postgres_url
from ._read_model import StoredTests, build_run
from ._sqlite import SQLiteStore

if TYPE_CHECKING:
    from ._postgres import PostgresStore
    from ._queries import (
        DEFAULT_LIMIT,
        FILTER_STATUSES,
        MAX_LIMIT,
        PENDING,
        STATUSES,
        Filters,
        MatrixPage,
        MatrixRow,
        QueryError,
        RunQueries,
        TestPage,
        check_params,
        page_bounds,
        targets_disagree,
    )

# PostgreSQL (psycopg, a thread pool) is imported when a location names it, and the viewer's
# queries when first asked for: a run on a SQLite file loads neither.
RunStore.defer(is_postgres_url, f"{__name__}._postgres")

_QUERIES = (
    "DEFAULT_LIMIT",
    "FILTER_STATUSES",
    "MAX_LIMIT",
    "PENDING",
    "STATUSES",
    "Filters",
    "MatrixPage",
    "MatrixRow",
    "QueryError",
    "RunQueries",
    "TestPage",
    "check_params",
    "page_bounds",
    "targets_disagree",
)
_HOMES = {"PostgresStore": "._postgres", **dict.fromkeys(_QUERIES, "._queries")}
__getattr__ = attributes(__name__, _HOMES)


__all__ = [
    "DEFAULT_LIMIT",
    "FILTER_STATUSES",
    "MAX_LIMIT",
    "PENDING",
    "STATUSES",
    "Filters",
    "MatrixPage",
    "MatrixRow",
    "PostgresStore",
    "QueryError",
    "RunQueries",
    "RunStore",
    "SQLiteStore",
    "StoredTests",
    "TestPage",
    "build_run",
    "check_params",
    "new_run_id",
    "open_store",
    "page_bounds",
    "targets_disagree",
]
