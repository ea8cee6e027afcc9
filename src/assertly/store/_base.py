"""The run store's seam: what every store does, whichever database holds it.

`RunStore` is the abstract store: writing a run (trials, tests' metadata, evals, claims, the
judge cache), and the reads that every store answers the same way (`StoreReads`). Its kinds
are siblings: `SQLiteStore` (a file, records compressed) and `PostgresStore` (a shared
database); both encode their records with `_codec`. ``RunStore(location)`` opens the kind its
location names, as `pathlib.Path` makes the path class of its system: each kind registers
itself when its module is imported, so this module imports neither and no kind imports another.
The package imports the SQLite kind and defers the PostgreSQL one (`RunStore.defer`) until a
location needs it: a SQLite run never loads it. `open_store` opens one for a ``with`` block.
"""

from __future__ import annotations

import importlib
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from types import TracebackType
from typing import Any, ClassVar

import orjson

from .._json import to_json_bytes
from .._secrets import json_is_clean, redact_value
from ._claims import RunClaims
from ._dialects import Dialect
from ._judge_cache import JudgeCache
from ._reads import StoreReads, loads_record
from ._response_cache import ResponseCache

__all__ = [
    "BATCH_TRIALS",
    "RunStore",
    "grouped_tests",
    "new_run_id",
    "open_store",
    "redacted",
    "redacted_bytes",
]

# Trials saved with batch=True that may share one commit.
BATCH_TRIALS = 256


class RunStore(StoreReads, RunClaims, JudgeCache, ResponseCache):
    """The run store of a project: every run, test and trial (abstract: see the module).

    ``RunStore(path)`` opens a SQLite file (`SQLiteStore`); ``RunStore("postgresql://…")`` a
    PostgreSQL store (`PostgresStore`, the ``assertly[postgres]`` extra): same methods, same
    behaviour. A store is a context manager that closes it (`open_store`). Every method
    that raises `NotImplementedError` here is each kind's own.

    Args:
        path: The database file (created with its directory when missing), or a URL.
        redact: Secrets to remove, in every spelling, from every string written (the set is
            kept, not copied, so secrets added later are redacted too).
        must_exist: Raise `StoreError` instead of creating a missing store.
        read_only: Open for reading only (the viewer, reports).
    """

    # The kinds of store, each with the test of the locations it opens, and the kind that
    # opens any other location (a SQLite file).
    _kinds: ClassVar[list[tuple[Callable[[object], bool], type[RunStore]]]] = []
    _default: ClassVar[type[RunStore] | None] = None
    # Kinds not imported yet: the test of their locations and the module that registers them.
    _deferred: ClassVar[list[tuple[Callable[[object], bool], str]]] = []
    dialect: ClassVar[Dialect]  # what the viewer's SQL says on this kind (`_dialects`)
    by_url: ClassVar[bool] = False  # whether its location is a URL (else a file's path)
    path: Path
    redact: set[str]

    @classmethod
    def register(cls, opens: Callable[[object], bool] | None) -> None:
        """Make ``RunStore(location)`` open this kind where ``opens(location)`` is true.

        ``opens`` None: the kind of every location no other kind opens.
        """
        if opens is None:
            RunStore._default = cls
        else:
            RunStore._kinds.append((opens, cls))

    @staticmethod
    def defer(opens: Callable[[object], bool], module: str) -> None:
        """Import ``module`` (which registers its kind) when a location ``opens`` is met."""
        RunStore._deferred.append((opens, module))

    @staticmethod
    def kind(location: object) -> type[RunStore]:
        """The kind of store that opens ``location``."""
        for opens, module in RunStore._deferred:
            if opens(location):
                importlib.import_module(module)  # registers the kind it defines
        found = next((kind for opens, kind in RunStore._kinds if opens(location)), None)
        kind = found or RunStore._default
        if kind is None:  # only while the package is being imported
            raise RuntimeError("no kind of run store is registered yet")
        return kind

    def __new__(cls, path: str | Path, **_: Any) -> RunStore:
        return super().__new__(RunStore.kind(path) if cls is RunStore else cls)

    def __enter__(self) -> RunStore:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def location(self) -> str:
        """What opens this store again (an absolute path, or the URL)."""
        raise NotImplementedError

    @property
    def shown(self) -> str:
        """The store as messages name it (no password)."""
        raise NotImplementedError

    # -- plumbing --------------------------------------------------------------------------------
    def close(self) -> None:
        """Write what is pending and close the connection."""
        raise NotImplementedError

    def flush(self) -> None:
        """Write the trials saved with ``batch=True`` that are not written yet."""
        raise NotImplementedError

    def _write(self) -> AbstractContextManager[Any]:
        """A write transaction: a connection with ``?`` placeholders, committed at the end."""
        raise NotImplementedError

    def _one(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        """One row of a read (``?`` placeholders), or None."""
        raise NotImplementedError

    def _all(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        """Every row of a read (``?`` placeholders)."""
        raise NotImplementedError

    def _reader(self) -> Any:
        """The connection the viewer's queries run on (``?`` placeholders, `dialect`'s SQL)."""
        raise NotImplementedError

    def _read_errors(self) -> tuple[type[Exception], ...]:
        """What a failed read of this store raises."""
        raise NotImplementedError

    # -- writing ---------------------------------------------------------------------------------
    def start_run(self, run_id: str, started_at: str, options: dict[str, Any]) -> None:
        """Record a new run (or keep the existing row when resuming)."""
        raise NotImplementedError

    def save_tests(self, run_id: str, metas: list[dict[str, Any]], start: int = 0) -> list[str]:
        """Record tests of a run (metadata for reports), at positions from ``start`` on.

        A test already stored (a resumed run) takes its new position and metadata. Returns
        each test's metadata as stored (JSON text, secrets redacted): what a report reads.
        """
        raise NotImplementedError

    def save_trial(
        self,
        run_id: str,
        test_key: str,
        trial: int,
        record: dict[str, Any],
        *,
        batch: bool = False,
    ) -> bytes | str:
        """Commit one finished trial, durably, before anything else happens; return it as stored.

        Args:
            run_id: The run.
            test_key: The test.
            trial: The trial number.
            record: The trial record.
            batch: Commit with the next ones (at most `BATCH_TRIALS` of them, and before any
                other write): for verdicts that cost no agent call (recorded responses), where
                a commit per trial would take longer than the judging. A crash loses at most
                those uncommitted verdicts, which a resumed run judges again.

        Returns:
            The record as stored (JSON text, secrets redacted): what a report reads.
        """
        raise NotImplementedError

    def save_eval(self, run_id: str, file: str, record: dict[str, Any]) -> None:
        """Commit one eval suite's verdict."""
        raise NotImplementedError

    def bless(self, run_id: str, blessed_at: str) -> None:
        """Make ``run_id`` the project's baseline (``blessed``), replacing the previous one."""
        raise NotImplementedError

    def finish_run(
        self,
        run_id: str,
        finished_at: str,
        duration_ms: float,
        warnings: list[str] | None = None,
        problems: list[str] | None = None,
        budget_stopped: str | None = None,
        cached: int = 0,
    ) -> None:
        """Mark a run finished, keeping the warnings and problems it raised.

        Kept for re-rendered reports: a problem (a failed suite cleanup) fails the run;
        ``budget_stopped`` says the run budget (``--max-cost-usd``) stopped it; ``cached``
        trials were answered from the response cache (added to a resumed run's).
        """
        with self._write() as db:
            db.execute(
                "UPDATE runs SET finished_at = ?, duration_ms = ? WHERE run_id = ?",
                (finished_at, duration_ms, run_id),
            )
            if warnings or problems or budget_stopped or cached:
                row = db.execute("SELECT options FROM runs WHERE run_id = ?", (run_id,)).fetchone()
                if row is not None:
                    options = loads_record(row[0])
                    if budget_stopped:
                        options["budget_stopped"] = budget_stopped
                    if cached:
                        options["cached"] = (options.get("cached") or 0) + cached
                    for name, added in (("warnings", warnings), ("problems", problems)):
                        kept = options.get(name) or []
                        options[name] = [*kept, *(w for w in added or () if w not in kept)]
                    db.execute(
                        "UPDATE runs SET options = ? WHERE run_id = ?",
                        (redacted(options, self.redact), run_id),
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

    # -- reading ---------------------------------------------------------------------------------
    def definitions(self, run_id: str) -> dict[str, str]:
        """Each stored test's definition digest (tests stored before digests existed: none)."""
        raise NotImplementedError

    def stored_bytes(self, run_id: str) -> int:
        """The size of a run's trial records as JSON text (what reading them all parses)."""
        raise NotImplementedError

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
        raise NotImplementedError

    def test_counts(
        self, run_id: str, *, scores: bool = False
    ) -> Iterator[tuple[str, dict[str, Any], int, int, int, int, float | None]]:
        """Each test in key order with its trials counted: for comparing runs at scale.

        Args:
            run_id: The run.
            scores: Also each test's mean trial score (which may cost reading every record;
                without it no record is touched).

        Yields:
            ``(key, meta, passed, failed, errored, skipped, mean score or None)``.
        """
        raise NotImplementedError

    def trials(self, run_id: str) -> dict[str, dict[int, dict[str, Any]]]:
        """Every stored trial record: ``{test_key: {trial: record}}``."""
        raise NotImplementedError


@contextmanager
def open_store(
    location: str | Path,
    *,
    redact: set[str] | None = None,
    must_exist: bool = False,
    read_only: bool = False,
) -> Iterator[RunStore]:
    """The run store at ``location`` (a file or a URL, as `RunStore`), closed after the block.

    Closing writes what is pending, so a block that ends normally has committed every trial.

    Raises:
        StoreError: The store cannot be opened (or, with ``must_exist``, does not exist).
    """
    store = RunStore(location, redact=redact, must_exist=must_exist, read_only=read_only)
    try:
        yield store
    finally:
        store.close()


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


def redacted(value: Any, secrets: set[str]) -> str:
    """``value`` as stored JSON text, every spelling of every secret redacted."""
    return redacted_bytes(value, secrets).decode()


def redacted_bytes(value: Any, secrets: set[str]) -> bytes:
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
