r"""The run store in PostgreSQL: one database that every machine and developer of a team shares.

``--store postgresql://user:password@host/db`` (or ``store:`` in the config) gives the same
logical store as the SQLite file, method for method: every finished trial is committed as it
finishes, and runs, resumes, rechecks, reports, diffs and merges read it the same way. Several
runs (shards on several machines) write to one database at once: each run writes only its own
rows, and a run's claim keeps two resumes of it apart.

Differences that are implementation, not behaviour:

* the schema is created on first use under an advisory lock (two machines starting at once
  do not race) and versioned in ``assertly_store``; a database written by a newer assertly
  is refused;
* a test's pass threshold and definition digest get columns of their own, so no JSON is
  parsed in SQL (PostgreSQL's ``jsonb`` refuses the ``\u0000`` an agent may answer);
* keys sort by code point (``COLLATE "C"``), as Python and SQLite sort them, so comparisons
  stream both runs in the same order;
* batched trials (recorded responses) are written with one pipelined ``executemany`` per batch;
* trial records and tests' metadata are stored in the same compact JSON as in SQLite (store
  schema 2, `_codec`), but not compressed: PostgreSQL compresses long values itself (TOAST),
  and SQL can still search the text. A database of schema 1 is read as it is, and becomes
  schema 2 when a run writes to it (its old rows read back as they were written).

The password of the URL is a secret: it never appears in a message, and the runner redacts
it from everything it stores.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .._exceptions import StoreError
from .._secrets import mask_url, safe_message, url_secrets
from ._base import BATCH_TRIALS, RunStore, grouped_tests, redacted
from ._codec import encode_meta, encode_record
from ._dialects import POSTGRES, is_postgres_url
from ._judge_cache import JUDGE_SCHEMA_POSTGRES
from ._response_cache import RESPONSE_SCHEMA_POSTGRES

__all__ = ["PostgresStore"]

SCHEMA_VERSION = 2
_SCHEMA = """
CREATE TABLE IF NOT EXISTS assertly_store (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    run_id      TEXT COLLATE "C" PRIMARY KEY,
    seq         BIGSERIAL,
    started_at  TEXT NOT NULL,
    finished_at TEXT,
    options     TEXT NOT NULL,
    duration_ms DOUBLE PRECISION
);
CREATE TABLE IF NOT EXISTS tests (
    run_id         TEXT COLLATE "C" NOT NULL,
    test_key       TEXT COLLATE "C" NOT NULL,
    position       BIGINT NOT NULL,
    pass_threshold TEXT,
    definition     TEXT,
    meta           TEXT NOT NULL,
    PRIMARY KEY (run_id, test_key)
);
CREATE INDEX IF NOT EXISTS tests_in_order ON tests (run_id, position);
CREATE TABLE IF NOT EXISTS trials (
    run_id   TEXT COLLATE "C" NOT NULL,
    test_key TEXT COLLATE "C" NOT NULL,
    trial    INTEGER NOT NULL,
    status   TEXT NOT NULL,
    score    DOUBLE PRECISION,
    record   TEXT NOT NULL,
    saved_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (run_id, test_key, trial)
);
CREATE TABLE IF NOT EXISTS evals (
    run_id TEXT COLLATE "C" NOT NULL,
    file   TEXT NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (run_id, file)
);
CREATE TABLE IF NOT EXISTS writers (
    run_id TEXT COLLATE "C" PRIMARY KEY,
    pid    INTEGER NOT NULL,
    host   TEXT NOT NULL,
    since  TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS baseline (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    run_id     TEXT NOT NULL,
    blessed_at TEXT NOT NULL
);
"""
_SAVE_TRIAL = (
    "INSERT INTO trials (run_id, test_key, trial, status, record, saved_at, score) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (run_id, test_key, trial) DO UPDATE SET "
    "status = EXCLUDED.status, record = EXCLUDED.record, saved_at = EXCLUDED.saved_at, "
    "score = EXCLUDED.score"
)
_TRIAL_COLUMNS = "run_id, test_key, trial, status, record, saved_at, score"
_TRIAL_CONFLICT = (
    "ON CONFLICT (run_id, test_key, trial) DO UPDATE SET status = EXCLUDED.status, "
    "record = EXCLUDED.record, saved_at = EXCLUDED.saved_at, score = EXCLUDED.score"
)
_TEST_COLUMNS = "run_id, test_key, position, pass_threshold, definition, meta"
# A resumed run's plan: each test at its place in the files as they are now, described as
# they are now (the report of the run, streamed or read back, shows that order).
_TEST_CONFLICT = (
    "ON CONFLICT (run_id, test_key) DO UPDATE SET position = EXCLUDED.position, "
    "pass_threshold = EXCLUDED.pass_threshold, definition = EXCLUDED.definition, "
    "meta = EXCLUDED.meta"
)
_SCHEMA_LOCK = 0x61737274  # "asrt": the advisory lock held while the schema is made


class PostgresStore(RunStore):
    """A PostgreSQL database holding every run of a project (see the module docstring).

    Made by `RunStore` when its location is a ``postgresql://`` URL; same methods.
    """

    dialect = POSTGRES
    by_url = True

    _TIE = "seq"  # orders runs started at the same instant (SQLite: rowid)
    _READ_CLAIM = "SELECT pid, host, since FROM writers WHERE run_id = ? FOR UPDATE"
    _WRITE_CLAIM = (
        "INSERT INTO writers (run_id, pid, host, since) VALUES (?, ?, ?, ?) ON CONFLICT "
        "(run_id) DO UPDATE SET pid = EXCLUDED.pid, host = EXCLUDED.host, since = EXCLUDED.since"
    )
    _judge_tables = False  # whether the judge cache's tables exist (`_prepare`)

    def __init__(
        self,
        path: str | Path,
        *,
        redact: set[str] | None = None,
        must_exist: bool = False,
        read_only: bool = False,
    ) -> None:
        self.url = str(path)
        self.path = Path(mask_url(self.url))  # only ever shown
        self.redact = redact if redact is not None else set()
        self._pending_rows: list[tuple[Any, ...]] = []
        self._pending = 0
        self._writer: ThreadPoolExecutor | None = None
        self._writer_pg: Any = None
        self._inflight: Future[None] | None = None
        try:
            import psycopg
        except ImportError:
            raise StoreError(
                "a PostgreSQL run store needs psycopg: pip install 'assertly[postgres]'"
            ) from None
        self._errors: type[Exception] = psycopg.Error
        try:
            self._pg = psycopg.connect(self.url, autocommit=True, connect_timeout=10)
        except psycopg.Error as error:
            raise StoreError(
                f"cannot open the run store {self.shown}: {self._reason(error)}"
            ) from None
        try:
            self._prepare(must_exist=must_exist, read_only=read_only)
        except BaseException:
            self._pg.close()
            raise

    @property
    def shown(self) -> str:
        """The store as messages name it (no password)."""
        return mask_url(self.url)

    @property
    def location(self) -> str:
        """What opens this store again (the URL itself)."""
        return self.url

    def _reason(self, error: Exception) -> str:
        text = " ".join(str(error).split())
        return safe_message(text, self.redact | url_secrets(self.url))

    def _prepare(self, *, must_exist: bool, read_only: bool) -> None:
        try:
            exists = self._pg.execute("SELECT to_regclass('assertly_store')").fetchone()
            if exists is None or exists[0] is None:
                if must_exist or read_only:
                    raise StoreError(f"no run store at {self.shown} (nothing has run here yet)")
                with self._pg.transaction():
                    self._pg.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
                    self._pg.execute(_SCHEMA)
                    self._pg.execute(
                        "INSERT INTO assertly_store (key, value) VALUES ('schema_version', %s) "
                        "ON CONFLICT (key) DO NOTHING",
                        (str(SCHEMA_VERSION),),
                    )
            row = self._pg.execute(
                "SELECT value FROM assertly_store WHERE key = 'schema_version'"
            ).fetchone()
            version = int(row[0]) if row else 0
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"the run store {self.shown} was written by a newer assertly (store schema "
                    f"{version}; this one reads up to {SCHEMA_VERSION}): upgrade assertly, or "
                    "give another --store"
                )
            if version < SCHEMA_VERSION and not read_only:
                # Compact records from now on (older ones read as they are): an older
                # assertly must refuse this database rather than misread them.
                self._pg.execute(
                    "UPDATE assertly_store SET value = %s WHERE key = 'schema_version' "
                    "AND value::integer < %s",
                    (str(SCHEMA_VERSION), SCHEMA_VERSION),
                )
            if read_only:
                self._pg.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
            # agent_cache is the newest of the tables added to older stores: its absence
            # means one of them (or more) is missing.
            found = self._pg.execute("SELECT to_regclass('agent_cache')").fetchone()
            if not (found and found[0]) and not read_only:
                # Under the schema lock: two processes opening one store must not race.
                with self._pg.transaction():
                    self._pg.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
                    self._pg.execute(JUDGE_SCHEMA_POSTGRES + RESPONSE_SCHEMA_POSTGRES)
                found = (True,)
            self._judge_tables = bool(found and found[0])
        except self._errors as error:
            raise StoreError(
                f"cannot open the run store {self.shown}: {self._reason(error)}"
            ) from None

    # -- plumbing --------------------------------------------------------------------------------
    def close(self) -> None:
        """Write what is pending and close the connections."""
        try:
            self.flush()
        finally:
            self._pg.close()
            if self._writer is not None:
                self._writer.shutdown()
                if self._writer_pg is not None:
                    self._writer_pg.close()

    def flush(self) -> None:
        """Write the trials saved with ``batch=True`` that are not written yet, and wait."""
        self._send_batch()
        self._wait()

    def _send_batch(self) -> None:
        """Hand the pending batch to the writer (after the one before it is written)."""
        if not self._pending_rows:
            return
        rows, self._pending_rows = self._pending_rows, []
        self._pending = 0
        self._background("trials", _TRIAL_COLUMNS, rows, _TRIAL_CONFLICT)

    def _background(
        self, table: str, columns: str, rows: list[tuple[Any, ...]], conflict: str
    ) -> None:
        """Write a batch on the writer thread's own connection while the run goes on.

        One batch at a time is in flight (memory stays bounded), in order; any other write
        or read of this store first waits for it (`_wait`), so what was saved is read back.
        """
        self._wait()
        if self._writer is None:
            import psycopg

            self._writer = ThreadPoolExecutor(1, thread_name_prefix="assertly-store")
            try:
                self._writer_pg = psycopg.connect(self.url, autocommit=True, connect_timeout=10)
            except psycopg.Error as error:
                raise self._failed("write to", error) from None
        self._inflight = self._writer.submit(
            self._copy, table, columns, rows, conflict, self._writer_pg
        )

    def _wait(self) -> None:
        """Wait for the batch in flight; its failure is raised here."""
        inflight, self._inflight = self._inflight, None
        if inflight is not None:
            inflight.result()

    def _copy(
        self,
        table: str,
        columns: str,
        rows: list[tuple[Any, ...]],
        conflict: str,
        connection: Any = None,
    ) -> None:
        """Write many rows in one transaction: COPY into a staging table, then one upsert.

        COPY streams the rows with no statement per row; the upsert keeps the semantics of
        the single-row statements (a resumed run replaces a trial it runs again).
        """
        staging = f"assertly_staging_{table}"
        pg = connection if connection is not None else self._pg
        try:
            with pg.transaction(), pg.cursor() as cursor:
                # What is batched costs no call (recorded verdicts, metadata): like SQLite's
                # batches, it need not wait for the disk; a server crash loses at most the
                # last batches, which a resumed run writes again. A called trial's own write
                # (`save_trial` without batch) waits for the disk.
                cursor.execute("SET LOCAL synchronous_commit = off")
                cursor.execute(
                    f"CREATE TEMP TABLE IF NOT EXISTS {staging} "
                    f"(LIKE {table} INCLUDING DEFAULTS) ON COMMIT DELETE ROWS"
                )
                with cursor.copy(f"COPY {staging} ({columns}) FROM STDIN") as copy:
                    for row in rows:
                        copy.write_row(row)
                cursor.execute(
                    f"INSERT INTO {table} ({columns}) SELECT {columns} FROM {staging} {conflict}"
                )
        except self._errors as error:
            raise self._failed("write to", error) from None

    def _failed(self, doing: str, error: Exception) -> StoreError:
        return StoreError(f"cannot {doing} the run store {self.shown}: {self._reason(error)}")

    @contextmanager
    def _write(self) -> Iterator[Any]:  # type: ignore[override]
        self.flush()
        try:
            with self._pg.transaction():
                yield _Connection(self._pg)
        except self._errors as error:
            raise self._failed("write to", error) from None

    def _one(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        self.flush()
        try:
            return self._pg.execute(sql.replace("?", "%s"), params).fetchone()
        except self._errors as error:
            raise self._failed("read", error) from None

    def _judge_row(self, sql: str, params: tuple[Any, ...]) -> Any:
        if not self._judge_tables:  # an older store opened read-only: an empty cache
            return None
        return self._one(sql.replace("?", "%s"), params)  # the judge cache (`JudgeCache`)

    def _all(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        self.flush()
        try:
            return self._pg.execute(sql.replace("?", "%s"), params).fetchall()
        except self._errors as error:
            raise self._failed("read", error) from None

    def _stream(self, sql: str, params: tuple[Any, ...]) -> Iterator[Any]:
        """Rows of a large result, a few thousand at a time (a server-side cursor)."""
        self.flush()
        try:
            with self._pg.transaction(), self._pg.cursor(name=f"assertly_{id(self)}") as cursor:
                cursor.itersize = 2_000
                cursor.execute(sql, params)
                yield from cursor
        except self._errors as error:
            raise self._failed("read", error) from None

    # -- writing ---------------------------------------------------------------------------------
    def start_run(self, run_id: str, started_at: str, options: dict[str, Any]) -> None:
        """Record a new run (or keep the existing row when resuming)."""
        with self._write() as db:
            db.execute(
                "INSERT INTO runs (run_id, started_at, options) VALUES (?, ?, ?) "
                "ON CONFLICT (run_id) DO NOTHING",
                (run_id, started_at, redacted(options, self.redact)),
            )

    def save_tests(self, run_id: str, metas: list[dict[str, Any]], start: int = 0) -> list[str]:
        """Record tests of a run at positions from ``start`` on (`RunStore.save_tests`)."""
        if not metas:
            return []
        texts = [redacted(encode_meta(meta), self.redact) for meta in metas]
        rows = [
            (
                run_id,
                meta["key"],
                position,
                meta.get("pass_threshold"),
                meta.get("definition"),
                text,
            )
            for position, (meta, text) in enumerate(zip(metas, texts, strict=True), start)
        ]
        # Before their trials, in order, on the writer: a test's metadata and trials are
        # written by one connection, one batch after the other.
        self._send_batch()
        self._background("tests", _TEST_COLUMNS, rows, _TEST_CONFLICT)
        return texts

    def save_trial(
        self,
        run_id: str,
        test_key: str,
        trial: int,
        record: dict[str, Any],
        *,
        batch: bool = False,
    ) -> str:
        """Commit one finished trial (``batch``: with the next ones, as `RunStore.save_trial`)."""
        text = redacted(encode_record(record), self.redact)
        row = (
            run_id,
            test_key,
            trial,
            record["status"],
            text,
            time.time(),
            record.get("score"),
        )
        if batch:
            self._pending_rows.append(row)
            self._pending = len(self._pending_rows)
            if len(self._pending_rows) >= BATCH_TRIALS:
                self._send_batch()
            return text
        self.flush()
        try:
            self._pg.execute(_SAVE_TRIAL, row)  # autocommit: durable when it returns
        except self._errors as error:
            raise self._failed("write to", error) from None
        return text

    def save_eval(self, run_id: str, file: str, record: dict[str, Any]) -> None:
        """Commit one eval suite's verdict."""
        with self._write() as db:
            db.execute(
                "INSERT INTO evals (run_id, file, record) VALUES (?, ?, ?) "
                "ON CONFLICT (run_id, file) DO UPDATE SET record = EXCLUDED.record",
                (run_id, file, redacted(record, self.redact)),
            )

    def bless(self, run_id: str, blessed_at: str) -> None:
        """Make ``run_id`` the project's baseline (``blessed``), replacing the previous one."""
        with self._write() as db:
            db.execute(
                "INSERT INTO baseline (id, run_id, blessed_at) VALUES (1, ?, ?) "
                "ON CONFLICT (id) DO UPDATE SET run_id = EXCLUDED.run_id, "
                "blessed_at = EXCLUDED.blessed_at",
                (run_id, blessed_at),
            )

    def release_run(self, run_id: str) -> None:
        """Give up this process's claim on ``run_id``."""
        with self._write() as db:
            db.execute(
                "DELETE FROM writers WHERE run_id = ? AND pid = ? AND host = ?",
                (run_id, os.getpid(), socket.gethostname()),
            )

    # -- reading ---------------------------------------------------------------------------------
    def definitions(self, run_id: str) -> dict[str, str]:
        """Each stored test's definition digest."""
        rows = self._all(
            "SELECT test_key, definition FROM tests WHERE run_id = %s AND definition IS NOT NULL",
            (run_id,),
        )
        return {key: definition for key, definition in rows}

    def stored_bytes(self, run_id: str) -> int:
        """The size of a run's trial records as stored."""
        row = self._one(
            "SELECT COALESCE(SUM(octet_length(record)), 0) FROM trials WHERE run_id = %s",
            (run_id,),
        )
        return int(row[0])

    def iter_tests(
        self,
        run_id: str,
        *,
        records: bool = True,
        keep: Callable[[list[str], str | None], bool] | None = None,
    ) -> Iterator[tuple[dict[str, Any], dict[int, Any]]]:
        """Each test's metadata with its trials, in run order (see `RunStore.iter_tests`)."""
        column, meta_column = ("r.record", "t.meta") if records else ("NULL", "NULL")
        rows = self._stream(
            f"SELECT t.test_key, t.pass_threshold, r.trial, r.status, {column}, {meta_column} "
            "FROM tests t LEFT JOIN trials r ON r.run_id = t.run_id AND r.test_key = t.test_key "
            "WHERE t.run_id = %s ORDER BY t.position, r.trial",
            (run_id,),
        )
        yield from grouped_tests(rows, records, keep, self)

    def test_counts(
        self, run_id: str, *, scores: bool = False
    ) -> Iterator[tuple[str, dict[str, Any], int, int, int, int, float | None]]:
        """Each test in key order with its trials counted (see `RunStore.test_counts`)."""
        score = "AVG(r.score)" if scores else "NULL"  # one of two fixed texts
        rows = self._stream(
            "SELECT t.test_key, t.meta, "
            "COUNT(*) FILTER (WHERE r.status = 'passed'), "
            "COUNT(*) FILTER (WHERE r.status = 'failed'), "
            "COUNT(*) FILTER (WHERE r.status = 'error'), "
            f"COUNT(*) FILTER (WHERE r.status = 'skipped'), {score} "
            "FROM tests t LEFT JOIN trials r ON r.run_id = t.run_id AND r.test_key = t.test_key "
            "WHERE t.run_id = %s GROUP BY t.test_key, t.meta ORDER BY t.test_key",
            (run_id,),
        )
        for key, meta, passed, failed, errored, skipped, mean in rows:
            yield key, self._meta(meta, key), passed, failed, errored, skipped, mean

    def trials(self, run_id: str) -> dict[str, dict[int, dict[str, Any]]]:
        """Every stored trial record: ``{test_key: {trial: record}}``."""
        found: dict[str, dict[int, dict[str, Any]]] = {}
        for test_key, trial, record in self._stream(
            "SELECT test_key, trial, record FROM trials WHERE run_id = %s", (run_id,)
        ):
            found.setdefault(test_key, {})[trial] = self._record(record, test_key)
        return found

    def _has_score_column(self) -> bool:
        return True

    def _reader(self) -> _Connection:
        return _Connection(self._pg)

    def _read_errors(self) -> tuple[type[Exception], ...]:
        return (self._errors,)


class _Connection:
    """The SQLite-style ``execute``/``executemany`` (``?`` placeholders) over psycopg.

    The methods that write share `RunStore`'s statements where they are portable SQL.
    """

    def __init__(self, connection: Any) -> None:
        self._connection = connection

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        return self._connection.execute(sql.replace("?", "%s"), params)

    def executemany(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        with self._connection.cursor() as cursor:
            cursor.executemany(sql.replace("?", "%s"), rows)


PostgresStore.register(is_postgres_url)
