"""Paginated, filtered reads of the run store for the viewer.

Everything here opens the store read-only (SQLite ``mode=ro``; a PostgreSQL store in a
read-only session) and reads only what one page shows: a page of a run is one indexed range
of ``tests`` in run order (``LIMIT``/``OFFSET`` on the ``(run_id, position)`` index), then
the trials of those tests alone. A status filter needs each test's verdict, which SQLite
computes from its trials' statuses with the test's own pass threshold (`status_of_counts`,
registered as an SQL function), streaming in run order until the page is full, so the first
page of a million-test run never reads the whole run. On PostgreSQL the same queries use the
store's columns (pass threshold) and a ``CASE`` for the verdict; the SQL differences are the
`_Dialect`'s.

The run's totals (``summary``) do read every test; on a big run that takes seconds, so callers
get them from `SummaryCache`, which counts them once per finished run.
"""

from __future__ import annotations

import contextlib
import queue
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from .._exceptions import StoreError
from .._records import EvalCaseRecord, EvalRecord, PassThreshold, TestRecord, status_of_counts
from ..runner._verdict import _test_record
from ..store import RunStore
from ._dialects import POSTGRES as _POSTGRES
from ._dialects import SQLITE as _SQLITE
from ._dialects import read_errors as _read_errors

__all__ = [
    "MAX_LIMIT",
    "FILTER_STATUSES",
    "PENDING",
    "STATUSES",
    "Filters",
    "QueryError",
    "RunQueries",
    "SummaryCache",
    "TestPage",
    "check_params",
]

STATUSES = ("passed", "failed", "error", "skipped")
# What a page may filter on: a verdict, or (in a run still being written) no trial yet.
PENDING = "pending"
FILTER_STATUSES = (*STATUSES, PENDING)
DEFAULT_LIMIT = 50
MAX_LIMIT = 500
# A run with at most this many tests has its totals counted while a page waits (~0.1 s); a
# bigger one is counted in the background and its page shows the totals when they are ready.
COUNT_NOW = 20_000


class QueryError(ValueError):
    """A bad query parameter (HTTP 400): says what is wrong and what would be right."""


@dataclass(frozen=True, slots=True)
class Filters:
    """What a run page shows.

    Tests with one of ``statuses``, in ``suite``, tagged ``tag``, containing ``q``.
    """

    statuses: tuple[str, ...] = ()
    suite: str = ""
    tag: str = ""
    q: str = ""

    @classmethod
    def parse(cls, query: dict[str, str]) -> Filters:
        """From URL parameters; an unknown status is a `QueryError` naming the right ones."""
        statuses: list[str] = []
        for item in filter(None, (s.strip() for s in query.get("status", "").split(","))):
            if item not in FILTER_STATUSES:
                hint = _did_you_mean(item, FILTER_STATUSES)
                raise QueryError(
                    f"status={item!r} is not a status{hint}; use one or more of "
                    f"{', '.join(FILTER_STATUSES)} (comma-separated)"
                )
            if item not in statuses:
                statuses.append(item)
        return cls(
            tuple(statuses),
            query.get("suite", "").strip(),
            query.get("tag", "").strip(),
            query.get("q", "").strip(),
        )

    @property
    def active(self) -> bool:
        """Whether anything is filtered out."""
        return bool(self.statuses or self.suite or self.tag or self.q)

    def params(self) -> dict[str, str]:
        """The URL parameters that give these filters (empty ones left out)."""
        found = {
            "status": ",".join(self.statuses),
            "suite": self.suite,
            "tag": self.tag,
            "q": self.q,
        }
        return {name: value for name, value in found.items() if value}


def check_params(query: Mapping[str, str], allowed: tuple[str, ...]) -> None:
    """Refuse a URL parameter the endpoint does not know (a typo must not be ignored)."""
    for name in query:
        if name not in allowed:
            hint = _did_you_mean(name, allowed)
            known = ", ".join(allowed) if allowed else "none"
            raise QueryError(f"unknown parameter {name!r}{hint}; this one takes: {known}")


def _did_you_mean(word: str, choices: tuple[str, ...]) -> str:
    import difflib

    close = difflib.get_close_matches(word.lower(), choices, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


# Larger than any store holds, far below SQLite's and PostgreSQL's 64-bit integers (an offset
# of 10^23 was an OverflowError, HTTP 500, issue 29).
MAX_OFFSET = 10**12


def page_bounds(query: dict[str, str]) -> tuple[int, int]:
    """``offset`` and ``limit`` from URL parameters, checked."""
    bounds = []
    for name, default, high in (("offset", 0, MAX_OFFSET), ("limit", DEFAULT_LIMIT, MAX_LIMIT)):
        text = query.get(name, "").strip()
        if not text:
            bounds.append(default)
            continue
        # ASCII digits only: "²" is a digit to str.isdigit and not a number to int().
        if not (text.isascii() and text.isdigit()):
            raise QueryError(f"{name}={text!r}: write a whole number (e.g. {name}={default})")
        if len(text) > len(str(high)) or int(text) > high:  # before SQLite's 64-bit integers
            raise QueryError(
                f"{name}={text[:30]}{'…' if len(text) > 30 else ''} is more than {high}"
                + ("; page with offset instead" if name == "limit" else "")
            )
        value = int(text)
        bounds.append(value)
    return bounds[0], bounds[1]


@dataclass(slots=True)
class TestPage:
    """One page of a run's tests, in run order."""

    __test__ = False  # not a pytest class

    tests: list[TestRecord]
    pending: set[str]  # keys of tests with no trial yet, in a run still being written
    offset: int
    limit: int
    total: int  # tests in the run
    matched: int | None  # tests the filters keep, when known without reading the whole run
    next_offset: int | None  # where the next page starts; None on the last page

    def to_dict(self) -> dict[str, Any]:
        """The ``page`` object of ``GET /api/runs/{run_id}``."""
        return {
            "offset": self.offset,
            "limit": self.limit,
            "total": self.total,
            "matched": self.matched,
            "next_offset": self.next_offset,
        }


def _counts_status(passed: int, failed: int, errored: int, skipped: int, threshold: str) -> str:
    return status_of_counts(passed, failed, errored, skipped, cast(PassThreshold, threshold))


_RUN_ID = re.compile(r"[A-Za-z0-9._~-]{1,200}")


class RunQueries:
    """Read-only queries on one run store; each call opens its own connection (thread-safe).

    Args:
        store_path: The run store (a SQLite file or a PostgreSQL URL); it must exist.
    """

    def __init__(self, store_path: str | Path) -> None:
        postgres = str(store_path).startswith(("postgresql://", "postgres://"))
        self.store_path: str | Path = str(store_path) if postgres else Path(store_path)
        self.sql = _POSTGRES if postgres else _SQLITE
        self._sizes: dict[str, int] = {}  # tests in each finished run
        store = self._open()  # fails now, with a clear message, if it cannot be read
        self.shown = store.shown
        store.close()

    def _open(self) -> RunStore:
        store = RunStore(self.store_path, must_exist=True, read_only=True)
        if self.sql is _SQLITE:
            # The store's own connection: the viewer only adds a read-only SQL function to it.
            store._db.create_function("assertly_status", 5, _counts_status, deterministic=True)
            # The text of a deflated trial record, for the search (`Dialect.record`).
            store._db.create_function("assertly_text", 1, store.record_text, deterministic=True)
        return store

    def _query(self, work: Callable[[RunStore, Any], Any]) -> Any:
        store = self._open()
        try:
            if self.sql is _SQLITE:
                return work(store, store._db)
            from ..store._postgres import _Connection

            return work(store, _Connection(store._pg))  # type: ignore[attr-defined]
        except _read_errors() as error:
            reason = " ".join(str(error).split())
            raise StoreError(f"cannot read the run store {self.shown}: {reason}") from None
        finally:
            store.close()

    def resolve(self, name: str) -> str:
        """A run named as users name it (``last``, ``last~N``, ``blessed``, an id).

        Raises:
            StoreError: No such run.
        """
        if not _RUN_ID.fullmatch(name):
            raise StoreError(f"no run {name!r} in {self.shown}")
        return cast(str, self._query(lambda store, _db: store.resolve_run_id(name)))

    def runs(self, offset: int, limit: int) -> tuple[list[dict[str, Any]], int]:
        """A page of runs, newest first, with each run's test count; and how many runs."""

        def work(_store: RunStore, db: Any) -> tuple[list[dict[str, Any]], int]:
            rows = db.execute(
                "SELECT run_id, started_at, finished_at, duration_ms FROM runs "
                f"ORDER BY started_at DESC, {self.sql.tie} DESC LIMIT ? OFFSET ?",
                (limit, offset),
            ).fetchall()
            total = db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
            return [
                {
                    "run_id": run_id,
                    "started_at": started_at,
                    "finished_at": finished_at,
                    "duration_ms": duration_ms,
                }
                for run_id, started_at, finished_at, duration_ms in rows
            ], int(total)

        return cast(tuple[list[dict[str, Any]], int], self._query(work))

    def previous(self, run_id: str) -> str | None:
        """The run started just before ``run_id`` (the order of ``last~N``), if any."""

        def work(_store: RunStore, db: Any) -> str | None:
            tie = self.sql.tie
            row = db.execute(
                f"SELECT run_id FROM runs WHERE (started_at, {tie}) < "
                f"(SELECT started_at, {tie} FROM runs WHERE run_id = ?) "
                f"ORDER BY started_at DESC, {tie} DESC LIMIT 1",
                (run_id,),
            ).fetchone()
            return None if row is None else str(row[0])

        return cast("str | None", self._query(work))

    def run_info(self, run_id: str) -> dict[str, Any]:
        """started_at, finished_at, duration_ms, threshold, problems, warnings, evals, tests."""

        def work(store: RunStore, _db: Any) -> dict[str, Any]:
            info = store.run_info(run_id)
            options = info.get("options") or {}
            evals = [
                EvalRecord(
                    file=data["file"],
                    score=data["score"],
                    threshold=data["threshold"],
                    passed=data["passed"],
                    cases=[EvalCaseRecord.from_json(case) for case in data.get("cases", [])],
                )
                for data in store.evals(run_id)
            ]
            return {
                "run_id": run_id,
                "started_at": info["started_at"],
                "finished_at": info["finished_at"],
                "duration_ms": info["duration_ms"] or 0.0,
                "threshold": options.get("pass_threshold") or "all",
                "problems": list(options.get("problems") or []),
                "warnings": list(options.get("warnings") or []),
                "evals": evals,
                "tests": self._sizes.get(run_id) or store.count_tests(run_id),
            }

        info = cast(dict[str, Any], self._query(work))
        if info["finished_at"] is not None:
            # A finished run's tests never change here (the store is only read): counting a
            # million of them again on every page cost 70 ms.
            self._sizes[run_id] = info["tests"]
        return info

    def progress(self, run_id: str) -> dict[str, Any]:
        """What changes while a run is written: finished_at and the trials saved so far."""

        def work(store: RunStore, db: Any) -> dict[str, Any]:
            info = store.run_info(run_id)
            trials = db.execute("SELECT COUNT(*) FROM trials WHERE run_id = ?", (run_id,))
            return {
                "run_id": run_id,
                "finished_at": info["finished_at"],
                "tests": store.count_tests(run_id),
                "trials": int(trials.fetchone()[0]),
            }

        return cast(dict[str, Any], self._query(work))

    def status_counts(self, run_id: str, threshold: str, running: bool) -> dict[str, int]:
        """Tests by final status over the whole run, counted by SQLite.

        In a run still being written (``running``), a test with no trial yet is ``pending``
        (a finished run counts it as an error: it was never judged).
        """

        def work(_store: RunStore, db: Any) -> dict[str, int]:
            counts = dict.fromkeys(FILTER_STATUSES if running else STATUSES, 0)
            rows = db.execute(
                self.sql.counts_sql().replace("{where}", ""), (running, threshold, run_id)
            )
            for status, count in rows:
                counts[status] += count
            return counts

        return cast(dict[str, int], self._query(work))

    def page(
        self,
        run_id: str,
        threshold: str,
        filters: Filters,
        offset: int,
        limit: int,
        *,
        total: int,
        running: bool = False,
    ) -> TestPage:
        """The tests of one page, in run order, as the JSON report gives them.

        ``total`` is how many tests the run has (`run_info`).

        In a run still being written (``running``), the tests with no trial yet are in the
        page's ``pending`` (with no trials), not errors.
        """

        def work(store: RunStore, db: Any) -> TestPage:
            where, params = self.sql.where(filters)
            if filters.statuses:
                marks = ", ".join("?" for _ in filters.statuses)
                sql = self.sql.page_sql(where, marks)
                args = [running, threshold, run_id, *params, *filters.statuses]
                args += [limit + 1, offset]
            else:
                sql = (
                    f"SELECT t.test_key FROM tests t WHERE t.run_id = ? {where} "
                    "ORDER BY t.position LIMIT ? OFFSET ?"
                )
                args = [run_id, *params, limit + 1, offset]
            keys = [row[0] for row in db.execute(sql, args)]
            more = len(keys) > limit
            keys = keys[:limit]
            tests, unjudged = _records(store, db, run_id, keys, threshold)
            return TestPage(
                tests=tests,
                pending=unjudged if running else set(),
                offset=offset,
                limit=limit,
                total=total,
                matched=None if filters.active else total,
                next_offset=offset + limit if more else None,
            )

        return cast(TestPage, self._query(work))


def _records(
    store: RunStore, db: sqlite3.Connection, run_id: str, keys: list[str], threshold: str
) -> tuple[list[TestRecord], set[str]]:
    """The records of ``keys`` (one page), in the order given; the keys with no trial."""
    if not keys:
        return [], set()

    marks = ", ".join("?" for _ in keys)
    metas: dict[str, dict[str, Any]] = {}
    trials: dict[str, dict[int, Any]] = {key: {} for key in keys}
    for key, meta in db.execute(
        f"SELECT test_key, meta FROM tests WHERE run_id = ? AND test_key IN ({marks})",
        (run_id, *keys),
    ):
        metas[key] = store._meta(meta, key)
    for key, trial, record in db.execute(
        f"SELECT test_key, trial, record FROM trials WHERE run_id = ? AND test_key IN ({marks})",
        (run_id, *keys),
    ):
        trials[key][trial] = store._record(record, key)
    records = [
        _test_record(metas[key], trials[key], cast(PassThreshold, threshold))
        for key in keys
        if key in metas
    ]
    return records, {key for key, found in trials.items() if not found}


@dataclass
class SummaryCache:
    """Each run's totals, counted once.

    A finished run never changes (the store is only read here); a run still being written is
    counted again when asked after ``fresh_s``.

    A run of more than `COUNT_NOW` tests is counted on a background thread: `get` gives None
    until the count is ready, so no page waits seconds for it. One thread counts one run at a
    time (a list of fifty big runs must not start fifty full scans at once); it is a daemon, so
    Ctrl-C never waits for it.
    """

    queries: RunQueries
    fresh_s: float = 2.0
    background: bool = True
    _done: dict[str, tuple[dict[str, int], bool, float]] = field(default_factory=dict)
    _counting: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _queue: queue.SimpleQueue[dict[str, Any]] = field(default_factory=queue.SimpleQueue)
    _worker: threading.Thread | None = None

    def get(self, info: dict[str, Any]) -> dict[str, int] | None:
        """Tests by status of the run ``info`` describes (`RunQueries.run_info`).

        None while a big run is being counted.
        """
        run_id = info["run_id"]
        with self._lock:
            found = self._done.get(run_id)
            if found is not None and (found[1] or time.monotonic() - found[2] < self.fresh_s):
                return found[0]
            if not self.background or info["tests"] <= COUNT_NOW:
                pass
            elif run_id in self._counting:
                return found[0] if found else None
            else:
                self._counting.add(run_id)
                self._queue.put(info)
                if self._worker is None:
                    self._worker = threading.Thread(
                        target=self._work, name="assertly-view-count", daemon=True
                    )
                    self._worker.start()
                return found[0] if found else None
        return self._count(info)

    def _work(self) -> None:
        while True:
            info = self._queue.get()
            # A store that cannot be read now is counted again when a page asks next.
            with contextlib.suppress(StoreError):
                self._count(info)

    def _count(self, info: dict[str, Any]) -> dict[str, int]:
        run_id = info["run_id"]
        try:
            running = info["finished_at"] is None
            counts = self.queries.status_counts(run_id, info["threshold"], running)
            with self._lock:
                self._done[run_id] = (counts, info["finished_at"] is not None, time.monotonic())
            return counts
        finally:
            with self._lock:
                self._counting.discard(run_id)


def summary_of(counts: dict[str, int] | None, duration_ms: float) -> dict[str, Any] | None:
    """The pinned ``summary`` object of the JSON report (`RunRecord.summary`) from counts.

    A run still being written also has ``pending``: its tests with no trial yet (counted in
    ``total``, not in the pass rate).
    """
    if counts is None:
        return None
    total = sum(counts.values())
    judged = total - counts["skipped"] - counts.get(PENDING, 0)
    summary = {
        "total": total,
        "passed": counts["passed"],
        "failed": counts["failed"],
        "errored": counts["error"],
        "skipped": counts["skipped"],
        "pass_rate": (counts["passed"] / judged) if judged else 0.0,
        "duration_ms": round(duration_ms, 3),
    }
    if PENDING in counts:
        summary[PENDING] = counts[PENDING]
    return summary
