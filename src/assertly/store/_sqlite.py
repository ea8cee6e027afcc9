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
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import Any, TypeVar, cast

import orjson

from .._exceptions import StoreError
from .._json import to_json_bytes
from .._secrets import json_is_clean, redact_value
from ._claims import RunClaims
from ._codec import encode_meta, encode_record
from ._judge_cache import JUDGE_SCHEMA, JudgeCache
from ._packing import PackedRecords
from ._reads import StoreReads, loads_record
from ._schema import SCHEMA_VERSION, check_schema

__all__ = ["RunStore", "new_run_id"]

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
)


_Method = TypeVar("_Method", bound=Callable[..., Any])


def _reading(method: _Method) -> _Method:
    """Turn an SQLite error while reading (a damaged file) into one clear `StoreError`."""

    @functools.wraps(method)
    def read(self: RunStore, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as error:
            raise self._read_failed(error) from None

    return cast(_Method, read)


def grouped_tests(
    rows: Iterable[Any],
    records: bool,
    keep: Callable[[list[str], str | None], bool] | None,
    store: StoreReads,
) -> Iterator[tuple[dict[str, Any], dict[int, Any]]]:
    """`RunStore.iter_tests` from its rows, in run order and trial order.

    Each row: ``(test_key, pass_threshold, trial, status, record, meta)``; a test that never
    ran has one row whose trial is NULL. ``store`` reads the stored records and metadata.
    """
    read, read_meta = store._record, store._meta
    for test_key, group in groupby(rows, key=itemgetter(0)):
        found = list(group)
        threshold = found[0][1]
        trials = [row[2:5] for row in found if row[2] is not None]
        if keep is not None and not keep([status for _, status, _ in trials], threshold):
            continue
        if records:
            yield (
                read_meta(found[0][5], test_key),
                {trial: read(record, test_key) for trial, _, record in trials},
            )
        else:
            meta = {"key": test_key, "pass_threshold": threshold}
            yield meta, {trial: status for trial, status, _ in trials}


def new_run_id() -> str:
    """A sortable, unique run id: UTC time plus a random suffix."""
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + uuid.uuid4().hex[:6]


def _redacted(value: Any, secrets: set[str]) -> str:
    """``value`` as stored JSON text, every spelling of every secret redacted."""
    return _redacted_bytes(value, secrets).decode()


def _redacted_bytes(value: Any, secrets: set[str]) -> bytes:
    """``value`` as stored JSON text (UTF-8), every spelling of every secret redacted.

    Serialised once when no secret can be in it (the common case), walked only when one may.
    """
    if not secrets:
        return to_json_bytes(value, keep_surrogates=True)
    try:  # orjson's own text (the stdlib's fallback escapes differently: walked instead)
        data = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        return to_json_bytes(redact_value(value, secrets), keep_surrogates=True)
    if json_is_clean(data, secrets):
        return data  # what `to_json_bytes` writes when orjson can
    return to_json_bytes(redact_value(value, secrets), keep_surrogates=True)


_loads = loads_record  # the name the store's modules (and the viewer) read records by


_SAVE_TRIAL = (
    "INSERT OR REPLACE INTO trials (run_id, test_key, trial, status, record, saved_at, score) "
    "VALUES (?, ?, ?, ?, ?, ?, ?)"
)
# Trials saved with batch=True that may share one commit.
BATCH_TRIALS = 256
_POSTGRES_PREFIXES = ("postgresql://", "postgres://")


class RunStore(PackedRecords, StoreReads, RunClaims, JudgeCache):
    """A SQLite file holding every run of a project.

    ``RunStore("postgresql://…")`` opens a PostgreSQL store instead (`PostgresRunStore`, the
    ``assertly[postgres]`` extra): same methods, same behaviour, as `pathlib.Path` makes the
    path class of its system.

    Args:
        path: The database file (created with its directory when missing).
        redact: Secrets to remove, in every spelling, from every string written (the set is
            kept, not copied, so secrets added later are redacted too).
        must_exist: Raise `StoreError` instead of creating a missing file.
    """

    def __new__(cls, path: str | Path, **_: Any) -> RunStore:
        if cls is RunStore and isinstance(path, str) and path.startswith(_POSTGRES_PREFIXES):
            from ._postgres import PostgresRunStore

            return super().__new__(PostgresRunStore)
        return super().__new__(cls)

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
        self.path = Path(path)
        if must_exist and not self.path.is_file():
            # Reading a run (report, resume) must not leave an empty store behind.
            raise StoreError(f"no run store at {self.path} (nothing has run here yet)")
        # The caller's set itself, not a copy: targets register their secrets when they are
        # built, which is after the store was opened.
        self.redact = redact if redact is not None else set()
        self._pending = 0  # batched trials written but not committed
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

    def start_run(self, run_id: str, started_at: str, options: dict[str, Any]) -> None:
        """Record a new run (or keep the existing row when resuming)."""
        with self._write() as db:
            db.execute(
                "INSERT OR IGNORE INTO runs (run_id, started_at, options) VALUES (?, ?, ?)",
                (run_id, started_at, _redacted(options, self.redact)),
            )

    def finish_run(
        self,
        run_id: str,
        finished_at: str,
        duration_ms: float,
        warnings: list[str] | None = None,
        problems: list[str] | None = None,
    ) -> None:
        """Mark a run finished, keeping the warnings and problems it raised.

        Kept for re-rendered reports: a problem (a failed suite cleanup) fails the run.
        """
        with self._write() as db:
            db.execute(
                "UPDATE runs SET finished_at = ?, duration_ms = ? WHERE run_id = ?",
                (finished_at, duration_ms, run_id),
            )
            if warnings or problems:
                row = db.execute("SELECT options FROM runs WHERE run_id = ?", (run_id,)).fetchone()
                if row is not None:
                    options = _loads(row[0])
                    for name, added in (("warnings", warnings), ("problems", problems)):
                        kept = options.get(name) or []
                        options[name] = [*kept, *(w for w in added or () if w not in kept)]
                    db.execute(
                        "UPDATE runs SET options = ? WHERE run_id = ?",
                        (_redacted(options, self.redact), run_id),
                    )

    def save_tests(self, run_id: str, metas: list[dict[str, Any]], start: int = 0) -> None:
        """Record tests of a run (metadata for reports), at positions from ``start`` on."""
        with self._write() as db:
            db.executemany(
                "INSERT OR IGNORE INTO tests (run_id, test_key, position, meta) "
                "VALUES (?, ?, ?, ?)",
                [
                    (run_id, meta["key"], position, _redacted(encode_meta(meta), self.redact))
                    for position, meta in enumerate(metas, start=start)
                ],
            )

    def save_trial(
        self,
        run_id: str,
        test_key: str,
        trial: int,
        record: dict[str, Any],
        *,
        batch: bool = False,
    ) -> None:
        """Commit one finished trial, durably, before anything else happens.

        Args:
            run_id: The run.
            test_key: The test.
            trial: The trial number.
            record: The trial record.
            batch: Commit with the next ones (at most `BATCH_TRIALS` of them, and before any
                other write): for verdicts that cost no agent call (recorded responses), where
                a commit per trial would take longer than the judging. A crash loses at most
                those uncommitted verdicts, which a resumed run judges again.
        """
        text = _redacted_bytes(encode_record(record), self.redact)
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
            return
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

    def save_eval(self, run_id: str, file: str, record: dict[str, Any]) -> None:
        """Commit one eval suite's verdict."""
        with self._write() as db:
            db.execute(
                "INSERT OR REPLACE INTO evals (run_id, file, record) VALUES (?, ?, ?)",
                (run_id, file, _redacted(record, self.redact)),
            )

    def bless(self, run_id: str, blessed_at: str) -> None:
        """Make ``run_id`` the project's baseline (``blessed``), replacing the previous one."""
        with self._write() as db:
            db.execute(
                "INSERT OR REPLACE INTO baseline (id, run_id, blessed_at) VALUES (1, ?, ?)",
                (run_id, blessed_at),
            )

    def forget_trials(self, run_id: str, test_keys: list[str]) -> None:
        """Drop the stored trials and metadata of tests (resumed, with a changed definition)."""
        with self._write() as db:
            for key in test_keys:
                db.execute("DELETE FROM trials WHERE run_id = ? AND test_key = ?", (run_id, key))
                db.execute("DELETE FROM tests WHERE run_id = ? AND test_key = ?", (run_id, key))

    def forget_run(self, run_id: str) -> None:
        """Remove a run and everything stored with it (a merge that could not finish)."""
        with self._write() as db:
            for table in ("trials", "tests", "evals", "writers", "runs"):
                db.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))

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
        """Each test's metadata with its trials, in run order, streamed (memory stays flat).

        Args:
            run_id: The run.
            records: Trials as whole records; False gives only each trial's status (no JSON to
                parse: enough for counting verdicts), and the metadata only ``key`` and
                ``pass_threshold``.
            keep: Given a test's trial statuses in trial order and its own pass threshold
                (None: the run's), whether to yield the test; the records of the tests it
                leaves out are never parsed.

        Yields:
            ``(meta, {trial: record or status})``; a test that never ran has no trials.
        """
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
