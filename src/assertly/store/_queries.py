"""Paginated, filtered reads of a run store: the queries the viewer shows pages with.

Everything here opens the store read-only (SQLite ``mode=ro``; a PostgreSQL store in a
read-only session) and reads only what one page shows: a page of a run is one indexed range
of ``tests`` in run order (``LIMIT``/``OFFSET`` on the ``(run_id, position)`` index), then
the trials of those tests alone. A status filter needs each test's verdict, which SQLite
computes from its trials' statuses with the test's own pass threshold (`status_of_counts`,
registered as an SQL function), streaming in run order until the page is full, so the first
page of a million-test run never reads the whole run. On PostgreSQL the same queries use the
store's columns (pass threshold) and a ``CASE`` for the verdict; the SQL differences are the
`Dialect`'s (`_dialects`, each store kind's ``dialect``).

A matrix run (several targets) is shown by rows, one per test across its targets: a page of it
is a page of rows (`matrix_page`), each with its cells, and its filters keep a row when one of
its cells meets them (and, with ``disagree``, when its cells' verdicts differ,
`targets_disagree`). Rows group a run's cells in SQL, so each such page reads the whole run.

The run's totals (``summary``) do read every test; on a big run that takes seconds, so the
viewer gets them from its `SummaryCache`, which counts them once per finished run.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from .._exceptions import StoreError
from .._records import PassThreshold, TestRecord
from ._base import RunStore, open_store
from ._dialects import Dialect
from ._read_model import eval_records, stored_test_record

__all__ = [
    "DEFAULT_LIMIT",
    "FILTER_STATUSES",
    "MAX_LIMIT",
    "MatrixPage",
    "MatrixRow",
    "PENDING",
    "STATUSES",
    "Filters",
    "QueryError",
    "RunQueries",
    "TestPage",
    "check_params",
    "page_bounds",
    "targets_disagree",
]

STATUSES = ("passed", "failed", "error", "skipped")
# What a page may filter on: a verdict, or (in a run still being written) no trial yet.
PENDING = "pending"
FILTER_STATUSES = (*STATUSES, PENDING)
DEFAULT_LIMIT = 50
MAX_LIMIT = 500


class QueryError(ValueError):
    """A bad query parameter (HTTP 400): says what is wrong and what would be right."""


@dataclass(frozen=True, slots=True)
class Filters:
    """What a run page shows.

    Tests with one of ``statuses``, in ``suite``, tagged ``tag``, containing ``q``; in a
    matrix run, with ``disagree``, only the tests whose verdict differs across targets.
    """

    statuses: tuple[str, ...] = ()
    suite: str = ""
    tag: str = ""
    q: str = ""
    disagree: bool = False

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
        disagree = query.get("disagree", "").strip().lower()
        if disagree not in _YES + _NO:
            raise QueryError(f"disagree={disagree[:30]!r}: write disagree=1 (or leave it out)")
        return cls(
            tuple(statuses),
            query.get("suite", "").strip(),
            query.get("tag", "").strip(),
            query.get("q", "").strip(),
            disagree in _YES,
        )

    @property
    def active(self) -> bool:
        """Whether anything is filtered out."""
        return bool(self.statuses or self.suite or self.tag or self.q or self.disagree)

    def params(self) -> dict[str, str]:
        """The URL parameters that give these filters (empty ones left out)."""
        found = {
            "status": ",".join(self.statuses),
            "suite": self.suite,
            "tag": self.tag,
            "q": self.q,
            "disagree": "1" if self.disagree else "",
        }
        return {name: value for name, value in found.items() if value}


_YES = ("1", "true", "yes", "on")
_NO = ("", "0", "false", "no", "off")


def targets_disagree(verdicts: list[str]) -> bool:
    """Whether a test's verdicts across targets differ (one not yet judged left out).

    The rule of the filter ``disagree``; its SQL is `DISAGREE` (``_dialects``).
    """
    return len({verdict for verdict in verdicts if verdict != PENDING}) > 1


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


@dataclass(slots=True)
class MatrixRow:
    """One test of a matrix run across its targets.

    Attributes:
        key: The test's key without a target (`TestRecord.base_key`).
        cells: Its record under each target that ran it, by label.
        disagree: Whether its verdicts differ across targets (`targets_disagree`).
    """

    key: str
    cells: dict[str, TestRecord]
    disagree: bool


@dataclass(slots=True)
class MatrixPage(TestPage):
    """One page of a matrix run, by rows (a row: a test across its targets).

    ``offset``, ``limit``, ``total`` and ``matched`` count rows; ``tests`` holds every cell
    of the page's rows, in run order.
    """

    targets: list[str] = field(default_factory=list)
    rows: list[MatrixRow] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The ``page`` object of ``GET /api/runs/{run_id}``; it counts rows."""
        return {**super(MatrixPage, self).to_dict(), "unit": "rows"}


_RUN_ID = re.compile(r"[A-Za-z0-9._~-]{1,200}")


class RunQueries:
    """Read-only queries on one run store; each call opens its own connection (thread-safe).

    Args:
        store_path: The run store (a SQLite file or a PostgreSQL URL); it must exist.
    """

    def __init__(self, store_path: str | Path) -> None:
        self.kind = RunStore.kind(str(store_path))
        self.sql = self.kind.dialect
        self.store_path: str | Path = str(store_path) if self.kind.by_url else Path(store_path)
        self._sizes: dict[str, int] = {}  # tests in each finished run
        with self._open() as store:  # fails now, with a clear message, if it cannot be read
            self.shown = store.shown

    def _open(self) -> AbstractContextManager[RunStore]:
        return open_store(self.store_path, must_exist=True, read_only=True)

    def _query(self, work: Callable[[RunStore, Any], Any]) -> Any:
        with self._open() as store:
            try:
                return work(store, store._reader())
            except store._read_errors() as error:
                reason = " ".join(str(error).split())
                raise StoreError(f"cannot read the run store {self.shown}: {reason}") from None

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
        """The run ``run_id`` is compared with ("vs previous"), if any.

        The newest run started before it with the same ``files`` and the same target labels
        (both as stored with each run). A run stored before runs kept their files: the run
        started just before it (the order of ``last~N``).
        """
        return self.previous_of([run_id]).get(run_id)

    def previous_of(self, run_ids: list[str]) -> dict[str, str | None]:
        """`previous` of each run (an unknown one: None), in one pass over the older runs."""

        def work(_store: RunStore, db: Any) -> dict[str, str | None]:
            found: dict[str, str | None] = dict.fromkeys(run_ids)
            if not run_ids:
                return found
            tie, keys = self.sql.tie, self.sql.run_keys
            marks = ", ".join("?" for _ in run_ids)
            left = {
                run_id: ((started, order), files, labels)
                for run_id, started, order, files, labels in db.execute(
                    f"SELECT run_id, started_at, {tie}, {keys} FROM runs WHERE run_id IN ({marks})",
                    list(run_ids),
                )
            }
            newest = max((when for when, _, _ in left.values()), default=None)
            if newest is None:
                return found
            older = db.execute(
                f"SELECT run_id, started_at, {tie}, {keys} FROM runs "
                f"WHERE (started_at, {tie}) < (?, ?) ORDER BY started_at DESC, {tie} DESC",
                newest,
            )
            for run_id, started, order, files, labels in older:
                for wanted, (when, wanted_files, wanted_labels) in list(left.items()):
                    if (started, order) >= when:
                        continue
                    if wanted_files is None or (files, labels) == (wanted_files, wanted_labels):
                        found[wanted] = str(run_id)
                        del left[wanted]
                if not left:
                    break
            return found

        return cast(dict[str, "str | None"], self._query(work))

    def run_options(self, run_id: str) -> dict[str, Any]:
        """The options stored with the run (an export looks for its absolute paths)."""
        found = self._query(lambda store, _db: store.run_info(run_id).get("options"))
        return found if isinstance(found, dict) else {}

    def blessed(self) -> str | None:
        """The run ``assertly bless`` marked as the baseline; None when none is."""
        try:
            return self.resolve("blessed")
        except StoreError:
            return None

    def run_info(self, run_id: str) -> dict[str, Any]:
        """started_at, finished_at, duration_ms, threshold, problems, warnings, evals, tests."""

        def work(store: RunStore, _db: Any) -> dict[str, Any]:
            info = store.run_info(run_id)
            options = info.get("options") or {}
            evals = eval_records(store.evals(run_id))
            labels = options.get("target_labels") or []
            return {
                "run_id": run_id,
                # A matrix run's target labels, in order (empty: a run of one target).
                "targets": [str(label) for label in labels] if isinstance(labels, list) else [],
                "started_at": info["started_at"],
                "finished_at": info["finished_at"],
                "duration_ms": info["duration_ms"] or 0.0,
                "threshold": options.get("pass_threshold") or "all",
                "problems": list(options.get("problems") or []),
                "warnings": list(options.get("warnings") or []),
                "evals": evals,
                "tests": self._sizes.get(run_id) or store.count_tests(run_id),
                # What the run is called and made of, where it was made (as stored; None for
                # a run stored before runs kept them).
                "name": options.get("name"),
                "files": options.get("files"),
                "provenance": options.get("provenance"),
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
            where, params = self.sql.where(filters.suite, filters.tag, filters.q)
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

    def matrix_counts(self, run_id: str, threshold: str, running: bool) -> dict[str, Any]:
        """A matrix run's totals, read from every test.

        ``by_target`` (label: verdict: count, as `status_counts`), ``rows`` (tests across
        targets) and ``disagree`` (rows whose verdicts differ).
        """

        def work(_store: RunStore, db: Any) -> dict[str, Any]:
            cells_sql, rows_sql = self.sql.matrix_counts_sql()
            args = (running, threshold, run_id)
            by_target: dict[str, dict[str, int]] = {}
            for label, status, count in db.execute(cells_sql, args):
                counts = by_target.setdefault(
                    str(label), dict.fromkeys(FILTER_STATUSES if running else STATUSES, 0)
                )
                counts[status] += int(count)
            rows, disagree = db.execute(rows_sql, args).fetchone()
            return {"by_target": by_target, "rows": int(rows), "disagree": int(disagree)}

        return cast(dict[str, Any], self._query(work))

    def matrix_page(
        self,
        run_id: str,
        threshold: str,
        targets: list[str],
        filters: Filters,
        offset: int,
        limit: int,
        *,
        running: bool = False,
    ) -> MatrixPage:
        """A page of a matrix run's rows (tests across ``targets``), in run order.

        A row is kept when one of its cells meets the filters' status, suite, tag and text
        (all of them), and, with ``filters.disagree``, when its cells' verdicts differ.
        """

        def work(store: RunStore, db: Any) -> MatrixPage:
            where, params = self.sql.where(filters.suite, filters.tag, filters.q)
            marks = ", ".join("?" for _ in filters.statuses)
            sql = self.sql.matrix_page_sql(where, marks, filters.disagree)
            head: list[Any] = [*params, run_id]
            if filters.statuses or filters.disagree:  # the cells' verdicts are needed
                head = [*filters.statuses, running, threshold, *head]
            found = db.execute(sql, [*head, limit + 1, offset]).fetchall()
            if not found and offset:  # past the end: the counts still say what there is
                sizes = db.execute(sql, [*head, 1, 0]).fetchall()
                total, matched = (sizes[0][3], sizes[0][4]) if sizes else (None, 0)
            else:
                total, matched = (found[0][3], found[0][4]) if found else (None, 0)
            if total is None:
                total = self.matrix_counts(run_id, threshold, running)["rows"]
            more = len(found) > limit
            found = found[:limit]
            keys = _cell_keys(self.sql, db, run_id, [(row[0], row[1], row[2]) for row in found])
            tests, unjudged = _records(store, db, run_id, keys, threshold)
            pending = unjudged if running else set()
            by_row: dict[str, dict[str, TestRecord]] = {row[0]: {} for row in found}
            for test in tests:
                by_row[test.base_key][test.target or ""] = test
            rows = []
            for base, *_ in found:
                cells = by_row[base]
                verdicts = [PENDING if t.key in pending else t.status for t in cells.values()]
                rows.append(MatrixRow(base, cells, targets_disagree(verdicts)))
            return MatrixPage(
                tests=tests,
                pending=pending,
                offset=offset,
                limit=limit,
                total=int(total),
                matched=int(matched or 0),
                next_offset=offset + limit if more else None,
                targets=list(targets),
                rows=rows,
            )

        return cast(MatrixPage, self._query(work))


def _cell_keys(sql: Dialect, db: Any, run_id: str, rows: list[tuple[str, int, int]]) -> list[str]:
    """The keys of the cells of ``rows`` (base key, first and last position), in run order.

    A row's cells are consecutive in run order, so the page's span holds them (with those of
    rows filtered out in between, left out here).
    """
    if not rows:
        return []
    wanted = {base for base, _, _ in rows}
    found = db.execute(
        f"SELECT t.test_key, {sql.target} FROM tests t WHERE t.run_id = ? "
        "AND t.position BETWEEN ? AND ? ORDER BY t.position",
        (run_id, min(row[1] for row in rows), max(row[2] for row in rows)),
    )
    return [key for key, target in found if _base_of(key, target) in wanted]


def _base_of(key: str, target: str | None) -> str:
    """A cell's row, as the SQL of `Dialect.matrix_rows_sql` gives it."""
    return key if target is None else key.removesuffix(f"[{target}]")


def _records(
    store: RunStore, db: Any, run_id: str, keys: list[str], threshold: str
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
        stored_test_record(metas[key], trials[key], cast(PassThreshold, threshold))
        for key in keys
        if key in metas
    ]
    return records, {key for key, found in trials.items() if not found}
