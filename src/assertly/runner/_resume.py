"""Which stored trials a run keeps when it resumes, as it reads its plan.

A resumed run keeps the stored trials of a test only while they still judge the same test:
a changed definition, a recorded response (judged again at no cost: it may have been edited)
and a test no longer in the files each drop theirs. Tests' metadata is stored a batch ahead of
their trials, as reports join on it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple, Protocol

from .._records import PassThreshold
from ..loading import TestCase
from ..store import RunStore
from ._streaming import RunStream
from ._support import batches, kept_trials, test_meta

__all__ = ["PlannedTest", "planned_trials"]

# Tests whose metadata is written in one transaction, just before they are scheduled.
_META_BATCH = 256


class PlannedTest(NamedTuple):
    """A test of the plan, with what the run knows of it before it runs."""

    test: TestCase
    done: dict[int, dict[str, Any]]  # its trials kept from the run being resumed
    position: int  # its place in the run (reports keep this order)
    meta: str  # its metadata as stored (JSON text): what its report entry reads
    # All its stored trials, those --fail-fast never ran too: a test not reached keeps them.
    stored: dict[int, dict[str, Any]]


class PlanningRunner(Protocol):
    """What reading a run's plan needs of the runner (a protocol: `_run` imports this module)."""

    store: RunStore
    run_id: str
    changed_definitions: int
    stream: RunStream

    def definition_of(self, test: TestCase) -> str: ...
    def threshold_of(self, test: TestCase) -> PassThreshold: ...
    def no_call(self, test: TestCase) -> bool: ...
    def warn(self, message: str, say: bool = False) -> None: ...


def planned_trials(
    runner: PlanningRunner, tests: Iterable[TestCase], resumed: dict[str, dict[int, dict[str, Any]]]
) -> Iterator[PlannedTest]:
    """Each test with its stored trials that count, metadata saved a batch ahead."""
    position = 0
    stored = runner.store.definitions(runner.run_id) if resumed else {}
    gone = set(stored)  # stored tests the files no longer hold, once the plan is read
    for batch in batches(tests, _META_BATCH):
        # A test's metadata is stored before any of its trials: reports join on it.
        metas = [
            test_meta(test, runner.definition_of(test), runner.threshold_of(test)) for test in batch
        ]
        changed = [
            meta["key"]
            for meta in metas
            if stored.get(meta["key"], meta["definition"]) != meta["definition"]
        ]
        if changed:
            # Its verdicts judged another test: they are dropped and it runs again.
            runner.store.forget_trials(runner.run_id, changed)
            for key in changed:
                resumed.pop(key, None)
                runner.changed_definitions += 1
        # red team, probe "resume after editing a recorded response": a recorded dataset
        # line's output (or a fixtures target's answer) is not in the definition digest
        # (it is the response judged, not the test), so an edited one kept its stale pass.
        # Judging it again costs no agent call: its stored trials are never kept.
        recorded = [
            meta["key"]
            for test, meta in zip(batch, metas, strict=True)
            if meta["key"] in resumed and not test.problems and runner.no_call(test)
        ]
        if recorded:
            runner.store.forget_trials(runner.run_id, recorded)
            for key in recorded:
                resumed.pop(key, None)
        stored_metas = runner.store.save_tests(runner.run_id, metas, start=position)
        gone.difference_update(meta["key"] for meta in metas)
        for test, meta in zip(batch, stored_metas, strict=True):
            trials = resumed.get(test.key, {})
            yield PlannedTest(test, kept_trials(trials), position, meta, trials)
            position += 1
    runner.stream.planned = position  # the whole plan is read: the stream knows its end
    if gone:
        # red team, probe "resume after removing tests": a test removed from the files
        # since the run began kept its stored verdict in the resumed run (5 stale passes
        # turned a 0 % run into 83 %, through --min-pass-rate 0.8). A fresh run would not
        # have it: dropped, and said.
        removed = sorted(gone)
        runner.store.forget_trials(runner.run_id, removed)
        shown = ", ".join(removed[:5]) + (
            f" and {len(removed) - 5} more" if len(removed) > 5 else ""
        )
        runner.warn(
            f"{len(removed)} test(s) of run {runner.run_id} are no longer in its files (or "
            f"filters): their stored verdicts are dropped from the run ({shown})"
        )
