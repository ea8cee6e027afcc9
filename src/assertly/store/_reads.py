"""The reads both run stores share: runs by name, a run's row, its tests' metadata, evals.

Written once in portable SQL with ``?`` placeholders; each store runs them through its own
``_one``/``_all`` (the PostgreSQL store turns the placeholders into its own).
"""

from __future__ import annotations

from typing import Any

from .._exceptions import StoreError
from ._codec import decode_meta, decode_record, loads_text

__all__ = ["StoreReads", "loads_record"]


def loads_record(text: str) -> Any:
    """A stored record: exact (big integers stay integers), lone surrogates allowed."""
    return loads_text(text)


class StoreReads:
    """Reads of a run store in portable SQL (mixed into `RunStore`)."""

    _TIE = "rowid"  # orders runs started at the same instant

    @property
    def shown(self) -> str:
        raise NotImplementedError  # the store as messages name it

    def _one(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        raise NotImplementedError

    def _all(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        raise NotImplementedError

    def _decompress(self, blob: bytes) -> bytes:
        """A compressed record's text (`_codec`; only SQLite compresses)."""
        raise ValueError("a compressed record in a store that has none")

    def _record(self, value: str | bytes, test_key: str) -> Any:
        """A stored trial record as the runner saved it (compressed, compact or whole JSON).

        Raises:
            StoreError: It cannot be read (damaged).
        """
        try:
            if isinstance(value, bytes | bytearray | memoryview):
                return decode_record(loads_text(self._decompress(bytes(value))), test_key)
            return decode_record(loads_record(value), test_key)
        except ValueError as error:
            raise StoreError(
                f"cannot read the run store {self.shown}: the record of a trial of {test_key} "
                f"is damaged ({error})"
            ) from None

    def _meta(self, value: str, test_key: str) -> Any:
        """A test's stored metadata as the runner saved it."""
        return decode_meta(loads_record(value), test_key)

    def resolve_run_id(self, run_id: str) -> str:
        """A run named as users name it, checked to exist.

        ``last`` is the run started most recently (finished or not: a run interrupted a
        moment ago is the one to resume); ``last~N`` the run started N runs before it;
        ``blessed`` the run `bless` marked as the project's baseline; anything else a run id.

        Raises:
            StoreError: No such run.
        """
        if run_id == "last" or run_id.startswith("last~"):
            back = run_id.removeprefix("last").removeprefix("~") or "0"
            if not (back.isascii() and back.isdigit()):
                raise StoreError(f"{run_id!r}: write last~N with N a whole number (e.g. last~1)")
            # Beyond 64 bits SQLite raises OverflowError; no store holds 10^15 runs, so such
            # an N is simply "more runs back than there are" (issue 29).
            row = self._one(
                f"SELECT run_id FROM runs ORDER BY started_at DESC, {self._TIE} DESC "
                "LIMIT 1 OFFSET ?",
                (min(int(back), 10**15) if len(back) <= 20 else 10**15,),
            )
            if row is None:
                count = self._one("SELECT COUNT(*) FROM runs")[0]
                if not count:
                    raise StoreError(f"the run store {self.shown} has no runs yet")
                raise StoreError(
                    f"{run_id!r}: the run store {self.shown} has only {count} "
                    f"run{'' if count == 1 else 's'} (last~{count - 1} is the oldest)"
                )
            return str(row[0])
        if run_id == "blessed":
            row = self._one("SELECT run_id FROM baseline WHERE id = 1")
            if row is None:
                raise StoreError(
                    f"no run of {self.shown} is blessed yet: `assertly bless RUN` marks one "
                    "as the baseline"
                )
            return str(row[0])
        if self._one("SELECT run_id FROM runs WHERE run_id = ?", (run_id,)) is None:
            raise StoreError(f"no run {run_id!r} in {self.shown}")
        return run_id

    def run_info(self, run_id: str) -> dict[str, Any]:
        """The run's row: started_at, finished_at, options, duration_ms."""
        row = self._one(
            "SELECT started_at, finished_at, options, duration_ms FROM runs WHERE run_id = ?",
            (run_id,),
        )
        if row is None:
            raise StoreError(f"no run {run_id!r} in {self.shown}")
        return {
            "started_at": row[0],
            "finished_at": row[1],
            "options": loads_record(row[2]),
            "duration_ms": row[3],
        }

    def tests(self, run_id: str) -> list[dict[str, Any]]:
        """Test metadata in run order."""
        rows = self._all(
            "SELECT test_key, meta FROM tests WHERE run_id = ? ORDER BY position", (run_id,)
        )
        return [self._meta(meta, key) for key, meta in rows]

    def count_tests(self, run_id: str) -> int:
        """How many tests the run is made of."""
        return int(self._one("SELECT COUNT(*) FROM tests WHERE run_id = ?", (run_id,))[0])

    def first_not_passed(self, run_id: str, test_key: str) -> dict[str, Any] | None:
        """The record of a test's first trial that failed or errored, if any."""
        row = self._one(
            "SELECT record FROM trials WHERE run_id = ? AND test_key = ? "
            "AND status IN ('failed', 'error') ORDER BY trial LIMIT 1",
            (run_id, test_key),
        )
        return None if row is None else dict(self._record(row[0], test_key))

    def evals(self, run_id: str) -> list[dict[str, Any]]:
        """Every stored eval suite record."""
        rows = self._all("SELECT record FROM evals WHERE run_id = ? ORDER BY file", (run_id,))
        return [loads_record(row[0]) for row in rows]
