"""Which process writes a run: one at a time, so two resumes never call the same test twice."""

from __future__ import annotations

import os
import socket
import sqlite3
from contextlib import AbstractContextManager

from .._exceptions import StoreError

__all__ = ["RunClaims"]


def _alive(pid: int) -> bool:
    """Whether a process of this host is still running."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, under another user
        return True
    return True


class RunClaims:
    """The ``writers`` table of a run store: a run's claim by the process writing it."""

    # The statements, in the store's SQL (``?`` placeholders): PostgreSQL's differ.
    _READ_CLAIM = "SELECT pid, host, since FROM writers WHERE run_id = ?"
    _WRITE_CLAIM = "INSERT OR REPLACE INTO writers (run_id, pid, host, since) VALUES (?, ?, ?, ?)"

    def _write(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError  # the store's own transaction

    def claim_run(self, run_id: str, since: str) -> None:
        """Become the one process writing ``run_id`` (a run, or a resume of it).

        A claim whose process is gone (killed, crashed) on this host is taken over; a live
        one, or one held from another host, is refused, so two resumes of one run never call
        the same test twice.

        Raises:
            StoreError: Another live process writes the run.
        """
        host = socket.gethostname()
        with self._write() as db:
            row = db.execute(self._READ_CLAIM, (run_id,)).fetchone()
            if row is not None and (row[0], row[1]) != (os.getpid(), host):
                pid, holder, held_since = row
                if holder != host or _alive(pid):
                    raise StoreError(
                        f"run {run_id} is being written by process {pid} on {holder} (since "
                        f"{held_since}); wait for it to finish or stop it, then resume again"
                    )
            db.execute(self._WRITE_CLAIM, (run_id, os.getpid(), host, since))

    def release_run(self, run_id: str) -> None:
        """Give up this process's claim on ``run_id``."""
        with self._write() as db:
            db.execute("DELETE FROM writers WHERE run_id = ? AND pid = ?", (run_id, os.getpid()))
