"""The viewer's side of the store's queries (`assertly.store.RunQueries`): run totals, cached.

The pages' queries are the store's (`RunQueries`, `Filters`, `TestPage`; re-exported here for
the viewer's modules). A run's totals read every test; on a big run that takes seconds, so
pages get them from `SummaryCache`, which counts them once per finished run.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from .._exceptions import StoreError
from ..store import PENDING, STATUSES, RunQueries

__all__ = ["COUNT_NOW", "SummaryCache", "by_target_of", "summary_of"]

# A run with at most this many tests has its totals counted while a page waits (~0.1 s); a
# bigger one is counted in the background and its page shows the totals when they are ready.
COUNT_NOW = 20_000


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
    _matrix: dict[str, dict[str, Any]] = field(default_factory=dict)
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

    def matrix(self, info: dict[str, Any]) -> dict[str, Any] | None:
        """A matrix run's totals (`RunQueries.matrix_counts`), counted with `get`'s.

        None in a run of one target, and while a big run is being counted.
        """
        if not info["targets"] or self.get(info) is None:
            return None
        with self._lock:
            return self._matrix.get(info["run_id"])

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
            matrix = None
            if info["targets"]:
                matrix = self.queries.matrix_counts(run_id, info["threshold"], running)
            with self._lock:
                if matrix is not None:
                    self._matrix[run_id] = matrix
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


def by_target_of(matrix: dict[str, Any] | None, targets: list[str]) -> dict[str, Any] | None:
    """``summary.by_target`` of a matrix run: each target's totals, in the run's order.

    Each as `summary_of`'s (without the run's duration), with the Wilson 95% interval of its
    pass rate (``pass_rate_ci95``, [low, high]; None while none of its tests is judged).
    """
    from ..compare import wilson_interval

    if matrix is None:
        return None
    found: dict[str, Any] = {}
    for label in targets:
        counts = matrix["by_target"].get(label) or dict.fromkeys(STATUSES, 0)
        summary = summary_of(counts, 0.0)
        assert summary is not None
        del summary["duration_ms"]
        judged = summary["passed"] + summary["failed"] + summary["errored"]
        # Nothing judged yet: no interval (rather than the uninformative [0, 1]).
        found[label] = {
            **summary,
            "pass_rate_ci95": list(wilson_interval(summary["passed"], judged)) if judged else None,
        }
    return found
