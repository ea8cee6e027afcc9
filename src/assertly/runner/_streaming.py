"""Each finished test, in the suite's order, to the reports and the console as it is stored.

``assertly run`` never reads the whole run back at its end: the runner hands every finished
test to a `RunStream` at the moment its last trial is stored, and the stream passes it on, in
the order of the plan, to every sink (each ``-o`` report being written, the console summary).
The record a sink gets is built from the stored text itself (the metadata and trial records
exactly as the store wrote them, secrets redacted), by the function the store's reader uses
(`stored_test_record`): a streamed report cannot differ from one written from the store
afterwards (``assertly report RUN -o``), which tests/reports/test_streamed_reports.py proves.

With ``-j N`` tests finish out of order; the stream holds each until every test before it has
finished, so it holds about N tests, never the run (past `WAITING_TESTS`, as when one
call hangs while the other workers go on, it gives up: the reports are written from the
store at the end). A run small enough (`KEEP_TESTS`,
`KEEP_BYTES`) keeps its records in memory for whatever reads the whole run at the end (the
HTML, Markdown and JUnit reports, a matrix's comparison, the gates); a larger run drops them
and those readers read the store, test by test, as before.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Protocol, overload

from .._records import PassThreshold, Status, TestRecord
from ..store._codec import decode_meta, decode_record, loads_text
from ..store._read_model import KEEP_BYTES, KEEP_TESTS, StoredTests, stored_test_record

__all__ = ["RunStream", "StreamedTests", "TestSink"]

_NOT_PASSED = ("failed", "error")

# Finished tests held for one before them (a slow or hung call while the other workers go on)
# at most: beyond, the stream gives up and the reports are written from the store at the end.
WAITING_TESTS = KEEP_TESTS
WAITING_BYTES = KEEP_BYTES


class TestSink(Protocol):
    """Something fed each finished test of a run, in the suite's order."""

    def add(self, test: TestRecord) -> None:
        """Take the next test."""


class RunStream:
    """Finished tests released in plan order to every sink (and kept while the run is small).

    Args:
        sinks: What each test goes to, in order.
        keep: Whether anything will read the whole run at its end (a report written whole,
            a gate comparing runs, the caller of `assertly.run`): the records are then kept
            in memory up to ``keep_tests`` tests and ``keep_bytes`` bytes of stored text.
    """

    def __init__(
        self,
        sinks: Sequence[TestSink] = (),
        *,
        keep: bool = True,
        keep_tests: int = KEEP_TESTS,
        keep_bytes: int = KEEP_BYTES,
    ) -> None:
        self.sinks = list(sinks)
        self.counts: dict[Status, int] = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
        self.released = 0  # tests passed on, in order: the positions 0 … released - 1
        self.planned: int | None = None  # the plan's length, once it is all read
        self._waiting: dict[int, tuple[TestRecord, int]] = {}  # each with its stored size
        self._waiting_bytes = 0
        self._gave_up = False  # too many waited: the sinks were fed part of the run only
        self._kept: list[TestRecord] | None = [] if keep else None
        self._kept_bytes = 0
        self._keep_tests, self._keep_bytes = keep_tests, keep_bytes

    def finished(
        self,
        position: int,
        key: str,
        meta: str | bytes,
        trials: dict[int, Any],
        threshold: PassThreshold,
    ) -> None:
        """Test ``position`` of the plan (``key``) is stored: its metadata and trials as stored.

        ``trials``: each trial's record as stored (JSON text), or as the store's reader gives
        it (a dict: a trial kept from the run being resumed). ``threshold``: the run's.
        """
        if self._gave_up:
            return
        size = len(meta)
        by_trial: dict[int, dict[str, Any]] = {}
        for number, stored in trials.items():
            if isinstance(stored, dict):
                by_trial[number] = stored
                continue
            size += len(stored)
            by_trial[number] = decode_record(loads_text(stored), key)
        record = stored_test_record(decode_meta(loads_text(meta), key), by_trial, threshold)
        self._arrived(position, record, size)

    def _arrived(self, position: int, record: TestRecord, size: int) -> None:
        if position != self.released:
            self._waiting[position] = (record, size)
            self._waiting_bytes += size
            if len(self._waiting) > WAITING_TESTS or self._waiting_bytes > WAITING_BYTES:
                # red team, probe "one slow test under -j": every test finished after it
                # waited here, the run in memory. The sinks, not fed the whole run, write
                # their reports from the store at the end (`ReportSink.finish`).
                self._gave_up, self._kept = True, None
                self._waiting.clear()
            return
        self._release(record, size)
        while self.released in self._waiting:
            # red team, probe "-j N, KEEP_BYTES": released with a size of 0, the tests that
            # waited here went uncounted and the memory bound did not hold.
            record, size = self._waiting.pop(self.released)
            self._waiting_bytes -= size
            self._release(record, size)

    def _release(self, record: TestRecord, size: int) -> None:
        self.released += 1
        self.counts[record.status] += 1
        if self._kept is not None:
            self._kept_bytes += size
            if len(self._kept) >= self._keep_tests or self._kept_bytes > self._keep_bytes:
                self._kept = None  # too big to hold: readers of the whole run read the store
            else:
                self._kept.append(record)
        for sink in self.sinks:
            sink.add(record)

    @property
    def complete(self) -> bool:
        """Whether every test of the plan was passed on (the sinks hold the whole run)."""
        return self.planned == self.released and not self._waiting and not self._gave_up

    def tests(self, stored: StoredTests) -> Sequence[TestRecord]:
        """The run's tests: in hand when complete, else ``stored`` (read from the store)."""
        if not self.complete:
            return stored
        return StreamedTests(self._kept, dict(self.counts), stored)


class StreamedTests(Sequence[TestRecord]):
    """A run's tests as its run had them: counted as they finished, held while small.

    Iterated from memory when the run was small enough to keep, else from the store
    (``stored``), like `StoredTests`, whose counting and selection methods it shares.
    """

    def __init__(
        self,
        kept: list[TestRecord] | None,
        counts: dict[Status, int],
        stored: StoredTests,
    ) -> None:
        self._kept = kept
        self._counts = counts
        self._stored = stored

    def __len__(self) -> int:
        return sum(self._counts.values())

    def __iter__(self) -> Iterator[TestRecord]:
        return iter(self._kept) if self._kept is not None else iter(self._stored)

    @overload
    def __getitem__(self, index: int) -> TestRecord: ...

    @overload
    def __getitem__(self, index: slice) -> list[TestRecord]: ...

    def __getitem__(self, index: int | slice) -> TestRecord | list[TestRecord]:
        if self._kept is not None:
            return self._kept[index]
        return self._stored[index]

    def status_counts(self) -> dict[Status, int]:
        """Tests by final status (counted as they finished)."""
        return dict(self._counts)

    def not_passed(self) -> Iterator[TestRecord]:
        """The tests that failed or errored, in run order."""
        if self._kept is not None:
            return (test for test in self._kept if test.status in _NOT_PASSED)
        return self._stored.not_passed()
