"""The run store.

Every finished trial is committed to SQLite at once (WAL mode), so a crash, a kill or Ctrl-C
loses nothing already judged, and readers (``assertly report``) can open the database while a
run is writing to it. Trial records are stored compact and compressed (`_codec`, store
schema 2); records of older stores read as they were written.
"""

from __future__ import annotations

import functools
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, TypeVar, cast

from .._exceptions import StoreError
from .._records import PassThreshold, status_of_counts
from .._secrets import mask_url, url_scheme
from ._base import BATCH_TRIALS, RunStore, grouped_tests, redacted, redacted_bytes
from ._codec import encode_meta, encode_record
from ._dialects import SQLITE
from ._judge_cache import JUDGE_SCHEMA
from ._packing import PackedRecords
from ._response_cache import RESPONSE_SCHEMA
from ._schema import SCHEMA_VERSION, check_schema

__all__ = ["SQLiteStore"]

_SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS runs (
    run_id      TEXT PRIMARY KEY,
    started_at  TEXT NOT NULL,
    finished_at TEXT,
    options     TEXT NOT NULL,
    duration_ms REAL
);
CREATE TABLE IF NOT EXISTS tests (
    run_id   TEXT NOT NULL,
    test_key TEXT NOT NULL,
    position INTEGER NOT NULL,
    meta     TEXT NOT NULL,
    PRIMARY KEY (run_id, test_key)
);
CREATE INDEX IF NOT EXISTS tests_in_order ON tests (run_id, position);
CREATE TABLE IF NOT EXISTS trials (
    run_id   TEXT NOT NULL,
    test_key TEXT NOT NULL,
    trial    INTEGER NOT NULL,
    status   TEXT NOT NULL,
    score    REAL,  -- before the record: read without reading the record's overflow pages
    record   TEXT NOT NULL,  -- schema 2: a compressed BLOB (`_codec`)
    saved_at REAL NOT NULL,
    PRIMARY KEY (run_id, test_key, trial)
) WITHOUT ROWID;  -- schema 2: rows kept in the key's order, so the key is stored once, not twice
CREATE TABLE IF NOT EXISTS evals (
    run_id   TEXT NOT NULL,
    file     TEXT NOT NULL,
    record   TEXT NOT NULL,
    PRIMARY KEY (run_id, file)
);
CREATE TABLE IF NOT EXISTS writers (
    run_id  TEXT PRIMARY KEY,
    pid     INTEGER NOT NULL,
    host    TEXT NOT NULL,
    since   TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS baseline (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    run_id     TEXT NOT NULL,
    blessed_at TEXT NOT NULL
);
-- The dictionaries of the compressed trial records (`_codec`), by number.
CREATE TABLE IF NOT EXISTS dictionaries (
    id   INTEGER PRIMARY KEY,
    data BLOB NOT NULL
);
"""
    + JUDGE_SCHEMA
    + RESPONSE_SCHEMA
)


_Method = TypeVar("_Method", bound=Callable[..., Any])


def _reading(method: _Method) -> _Method:
    """Turn an SQLite error while reading (a damaged file) into one clear `StoreError`."""

    @functools.wraps(method)
    def read(self: SQLiteStore, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as error:
            raise self._read_failed(error) from None

    return cast(_Method, read)


_SAVE_TRIAL = (
    "INSERT OR REPLACE INTO trials (run_id, test_key, trial, status, record, saved_at, score) "
    "VALUES (?, ?, ?, ?, ?, ?, ?)"
)


def _refuse_url(location: str | Path) -> None:
    """Refuse a URL that is not PostgreSQL's (``postgress://…``, ``sqlite:///…``).

    Taken as a file path it would store the runs in a directory named after the URL (its
    password too), not where the user meant them.

    Raises:
        StoreError: ``location`` is written as a URL.
    """
    if not isinstance(location, str):
        return
    scheme = url_scheme(location)
    if scheme is not None:
        raise StoreError(
            f"the run store {mask_url(location)} is a {scheme}:// URL: a run store is a "
            "SQLite file path or a postgresql:// (postgres://) URL"
        )


class SQLiteStore(PackedRecords, RunStore):
    """A SQLite file holding every run of a project (`RunStore` opens one for a path).

    Args:
        path: The database file (created with its directory when missing).
        redact: Secrets to remove, in every spelling, from every string written (the set is
            kept, not copied, so secrets added later are redacted too).
        must_exist: Raise `StoreError` instead of creating a missing file.
        read_only: Open the file read-only (``mode=ro``).
    """

    dialect = SQLITE

    @property
    def location(self) -> str:
        """What opens this store again: the file's absolute path."""
        return str(self.path.resolve())

    @property
    def shown(self) -> str:
        """The store as messages name it."""
        return str(self.path)

    def __init__(
        self,
        path: str | Path,
        *,
        redact: set[str] | None = None,
        must_exist: bool = False,
        read_only: bool = False,
    ) -> None:
        _refuse_url(path)
        self.path = Path(path)
        if must_exist and not self.path.is_file():
            # Reading a run (report, resume) must not leave an empty store behind.
            raise StoreError(f"no run store at {self.path} (nothing has run here yet)")
        # The caller's set itself, not a copy: targets register their secrets when they are
        # built, which is after the store was opened.
        self.redact = redact if redact is not None else set()
        self._pending = 0  # batched trials written but not committed
        self._functions = False  # whether `_reader` registered its SQL functions
        self._start_packing()
        if read_only:
            try:
                uri = f"{self.path.resolve().as_uri()}?mode=ro"
                self._db = sqlite3.connect(uri, uri=True, timeout=30, isolation_level=None)
                self._check_schema()
            except (sqlite3.Error, OSError) as error:
                raise StoreError(f"cannot read the run store {self.path}: {error}") from None
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            # Checked before anything is written: another program's file is left untouched.
            version = self._check_schema()
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
            if not self._has_score_column():
                # Stores made before trials kept their score in a column of its own (comparing
                # runs reads it there instead of parsing every record).
                self._db.execute("ALTER TABLE trials ADD COLUMN score REAL")
            if version < SCHEMA_VERSION:
                with suppress(sqlite3.OperationalError):  # a read-only store stays readable
                    self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        except (sqlite3.Error, OSError) as error:
            raise StoreError(f"cannot open the run store {self.path}: {error}") from None

    def _check_schema(self) -> int:
        try:
            return check_schema(self._db, self.path)
        except StoreError:
            self._db.close()
            raise

    def close(self) -> None:
        """Commit what is pending and close the connection."""
        try:
            self.flush()
        finally:
            self._db.close()

    def flush(self) -> None:
        """Commit the trials saved with ``batch=True`` that are not committed yet."""
        if not self._pending:
            return
        self._pending = 0
        try:
            self._db.execute("COMMIT")
        except sqlite3.Error as error:
            raise self._write_failed(error) from None

    def _read_failed(self, error: sqlite3.Error) -> StoreError:
        return StoreError(f"cannot read the run store {self.path}: {error} (is it damaged?)")

    def _write_failed(self, error: sqlite3.Error) -> StoreError:
        """Roll back the open transaction; the error to raise."""
        with suppress(sqlite3.Error):
            self._db.execute("ROLLBACK")
        if isinstance(error, sqlite3.OperationalError) and "readonly" in str(error):
            return StoreError(
                f"the run store {self.path} is read-only ({error}): make it writable, or give "
                "another --store"
            )
        return StoreError(f"cannot write to the run store {self.path}: {error}")

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        self.flush()
        try:
            self._db.execute("BEGIN IMMEDIATE")
            yield self._db
            self._db.execute("COMMIT")
        except sqlite3.Error as error:
            raise self._write_failed(error) from None
        except BaseException:
            # Not SQLite's (a value it cannot bind, Ctrl-C): the transaction is still open,
            # and every later write failed with "cannot start a transaction within a
            # transaction" (red team, issue 35). Rolled back, the error is raised as it is.
            with suppress(sqlite3.Error):
                self._db.execute("ROLLBACK")
            raise

    def start_run(self, run_id: str, started_at: str, options: dict[str, Any]) -> None:
        """Record a new run (or keep the existing row when resuming)."""
        with self._write() as db:
            db.execute(
                "INSERT OR IGNORE INTO runs (run_id, started_at, options) VALUES (?, ?, ?)",
                (run_id, started_at, redacted(options, self.redact)),
            )

    def save_tests(self, run_id: str, metas: list[dict[str, Any]], start: int = 0) -> list[str]:
        """Record tests of a run at positions from ``start`` on (`RunStore.save_tests`)."""
        texts = [redacted(encode_meta(meta), self.redact) for meta in metas]
        with self._write() as db:
            db.executemany(
                "INSERT INTO tests (run_id, test_key, position, meta) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (run_id, test_key) DO UPDATE SET position = excluded.position, "
                "meta = excluded.meta",
                [
                    (run_id, meta["key"], position, text)
                    for position, (meta, text) in enumerate(zip(metas, texts, strict=True), start)
                ],
            )
        return texts

    def save_trial(
        self,
        run_id: str,
        test_key: str,
        trial: int,
        record: dict[str, Any],
        *,
        batch: bool = False,
    ) -> bytes:
        """Commit one finished trial in one statement (`RunStore.save_trial`)."""
        text = redacted_bytes(encode_record(record), self.redact)
        row = (
            run_id,
            test_key,
            trial,
            record["status"],
            self._compress(text),
            time.time(),
            record.get("score"),
        )
        if not batch:
            # One statement is its own transaction: committed when execute returns, with no
            # BEGIN and COMMIT round trips (a fifth of the cost of a trial's write).
            self.flush()
            try:
                self._db.execute(_SAVE_TRIAL, row)
            except sqlite3.Error as error:
                raise self._write_failed(error) from None
            return text
        try:
            if not self._pending:
                self._db.execute("BEGIN IMMEDIATE")
            self._db.execute(_SAVE_TRIAL, row)
        except sqlite3.Error as error:
            self._pending = 0
            raise self._write_failed(error) from None
        self._pending += 1
        if self._pending >= BATCH_TRIALS:
            self.flush()
        return text

    def save_eval(self, run_id: str, file: str, record: dict[str, Any]) -> None:
        """Commit one eval suite's verdict."""
        with self._write() as db:
            db.execute(
                "INSERT OR REPLACE INTO evals (run_id, file, record) VALUES (?, ?, ?)",
                (run_id, file, redacted(record, self.redact)),
            )

    def bless(self, run_id: str, blessed_at: str) -> None:
        """Make ``run_id`` the project's baseline (``blessed``), replacing the previous one."""
        with self._write() as db:
            db.execute(
                "INSERT OR REPLACE INTO baseline (id, run_id, blessed_at) VALUES (1, ?, ?)",
                (run_id, blessed_at),
            )

    @_reading
    def definitions(self, run_id: str) -> dict[str, str]:
        """Each stored test's definition digest (tests stored before digests existed: none)."""
        rows = self._db.execute(
            "SELECT test_key, json_extract(meta, '$.definition') FROM tests WHERE run_id = ?",
            (run_id,),
        )
        return {key: definition for key, definition in rows if definition}

    @_reading
    def stored_bytes(self, run_id: str) -> int:
        """The size of a run's trial records as JSON text (what reading them all parses)."""
        return self._text_bytes(run_id)

    def iter_tests(
        self,
        run_id: str,
        *,
        records: bool = True,
        keep: Callable[[list[str], str | None], bool] | None = None,
    ) -> Iterator[tuple[dict[str, Any], dict[int, Any]]]:
        """Each test's metadata with its trials, in run order (`RunStore.iter_tests`)."""
        try:
            yield from self._iter_tests(run_id, records, keep)
        except sqlite3.Error as error:
            raise self._read_failed(error) from None

    def _iter_tests(
        self,
        run_id: str,
        records: bool,
        keep: Callable[[list[str], str | None], bool] | None,
    ) -> Iterator[tuple[dict[str, Any], dict[int, Any]]]:
        # Fixed expressions only: whole records and metadata, or neither.
        column, meta_column = ("r.record", "t.meta") if records else ("NULL", "NULL")
        # A test's pass threshold is read by SQLite from its metadata: counting verdicts
        # parses no JSON in Python (metadata written before per-test thresholds has none).
        cursor = self._db.execute(
            f"SELECT t.test_key, json_extract(t.meta, '$.pass_threshold'), r.trial, r.status, "
            f"{column}, {meta_column} FROM tests t "
            "LEFT JOIN trials r ON r.run_id = t.run_id AND r.test_key = t.test_key "
            "WHERE t.run_id = ? ORDER BY t.position, r.trial",
            (run_id,),
        )
        yield from grouped_tests(cursor, records, keep, self)

    def test_counts(
        self, run_id: str, *, scores: bool = False
    ) -> Iterator[tuple[str, dict[str, Any], int, int, int, int, float | None]]:
        """Each test in key order with its trials counted: for comparing runs at scale.

        Args:
            run_id: The run.
            scores: Also each test's mean trial score, read from the trial records (which
                costs reading every record; without it no record is touched).

        Yields:
            ``(key, meta, passed, failed, errored, skipped, mean score or None)``. SQLite
            counts the trials; the primary key's index gives the order, so a million tests
            stream with no sort.
        """
        try:
            yield from self._test_counts(run_id, scores)
        except sqlite3.Error as error:
            raise self._read_failed(error) from None

    def _test_counts(
        self, run_id: str, scores: bool
    ) -> Iterator[tuple[str, dict[str, Any], int, int, int, int, float | None]]:
        score = "NULL"  # one of three fixed texts
        if scores:
            # A store made before the score column: those trials' scores are in their records.
            # (Schema 2's compressed records are BLOBs; their score is always in the column.)
            old = "CASE WHEN typeof(r.record) = 'text' THEN json_extract(r.record, '$.score') END"
            score = f"AVG(COALESCE(r.score, {old}))" if self._has_score_column() else f"AVG({old})"
        cursor = self._db.execute(
            "SELECT t.test_key, t.meta, "
            "COALESCE(SUM(r.status = 'passed'), 0), COALESCE(SUM(r.status = 'failed'), 0), "
            "COALESCE(SUM(r.status = 'error'), 0), COALESCE(SUM(r.status = 'skipped'), 0), "
            f"{score} "
            "FROM tests t LEFT JOIN trials r ON r.run_id = t.run_id AND r.test_key = t.test_key "
            "WHERE t.run_id = ? GROUP BY t.test_key ORDER BY t.test_key",
            (run_id,),
        )
        read_meta = self._meta
        for key, meta, passed, failed, errored, skipped, mean in cursor:
            yield key, read_meta(meta, key), passed, failed, errored, skipped, mean

    @_reading
    def _one(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        """One row of a read (``?`` placeholders), or None."""
        return self._db.execute(sql, params).fetchone()

    @_reading
    def _all(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        """Every row of a read (``?`` placeholders)."""
        return self._db.execute(sql, params).fetchall()

    def _judge_row(self, sql: str, params: tuple[Any, ...]) -> Any:
        try:
            return self._db.execute(sql, params).fetchone()
        except sqlite3.Error:  # a store made before the judge cache, opened read-only
            return None

    def _reader(self) -> sqlite3.Connection:
        """The store's own connection, with the SQL functions of `SQLITE` (read-only ones).

        ``assertly_status`` is the verdict rule itself (`status_of_counts`), so SQL never
        restates it; ``assertly_text`` the text of a compressed record, for searches.
        """
        if not self._functions:
            self._db.create_function("assertly_status", 5, _counts_status, deterministic=True)
            self._db.create_function("assertly_text", 1, self.record_text, deterministic=True)
            self._functions = True
        return self._db

    def _read_errors(self) -> tuple[type[Exception], ...]:
        return (sqlite3.Error,)

    def _has_score_column(self) -> bool:
        columns = self._db.execute("PRAGMA table_info(trials)").fetchall()
        return any(column[1] == "score" for column in columns)

    @_reading
    def trials(self, run_id: str) -> dict[str, dict[int, dict[str, Any]]]:
        """Every stored trial record: ``{test_key: {trial: record}}``."""
        found: dict[str, dict[int, dict[str, Any]]] = {}
        for test_key, trial, record in self._db.execute(
            "SELECT test_key, trial, record FROM trials WHERE run_id = ?", (run_id,)
        ):
            found.setdefault(test_key, {})[trial] = self._record(record, test_key)
        return found


def _counts_status(passed: int, failed: int, errored: int, skipped: int, threshold: str) -> str:
    return status_of_counts(passed, failed, errored, skipped, cast(PassThreshold, threshold))


SQLiteStore.register(None)  # the default: any location no other kind opens
