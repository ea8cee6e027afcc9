"""A store written before issue 30 (trials kept a copy of their failures) reads the same.

The fixture was written by assertly at main 4979ad6: three tests through `check_step` (a
pass, a failure, an error-free output that fails twice), and one trial whose ``failures`` are
not its steps' (a hand-made row, kept whole by that writer). ``old-failures.report.json`` is
that assertly's JSON report of the stored run; the current code must give the same report.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from assertly.runner import TrialRecord
from assertly.store import RunStore, build_run

FIXTURES = Path(__file__).parent / "fixtures"


def _old_store(tmp_path: Path) -> RunStore:
    """The fixture, copied (opening a store, even to read, may add files beside it)."""
    path = tmp_path / "old.sqlite"
    shutil.copyfile(FIXTURES / "old-failures.sqlite", path)
    return RunStore(path, must_exist=True, read_only=True)


def test_an_old_store_gives_the_report_it_gave(tmp_path: Path) -> None:
    expected = json.loads((FIXTURES / "old-failures.report.json").read_text(encoding="utf-8"))
    store = _old_store(tmp_path)
    try:
        report = json.loads(json.dumps(build_run(store, "old").to_dict()))
        trials = store.trials("old")
    finally:
        store.close()
    assert report == expected
    # The rows assertly wrote kept no copy worth keeping: their failures are the steps'.
    rebuilt = TrialRecord.from_dict(trials["f.tests.yaml::s::fails"][1])
    assert rebuilt.kept_failures is None
    assert [failure.assertion for failure in rebuilt.failures] == ["status", "contains"]
    # A row whose failures were not its steps' reads with them, as they were.
    odd = TrialRecord.from_dict(trials["f.tests.yaml::s::fails"][2])
    assert odd.steps == []
    assert [failure.failure_json() for failure in odd.failures] == [
        {
            "step": "gone",
            "assertion": "equals",
            "outcome": "failed",
            "message": "m",
            "path": None,
            "expected": 1,
            "actual": 2,
        }
    ]


def test_a_trial_written_now_keeps_no_copy_and_reads_back_the_same(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    old = _old_store(tmp_path)
    try:
        record = TrialRecord.from_dict(old.trials("old")["f.tests.yaml::s::fails-twice"][1])
    finally:
        old.close()
    try:
        store.start_run("new", "2026-11-28T00:00:00Z", {})
        store.save_trial("new", record.test_key, 1, record.to_dict())
        stored = store.trials("new")[record.test_key][1]
    finally:
        store.close()
    assert "failures" not in stored
    assert TrialRecord.from_dict(stored) == record
    assert len(record.failures) == 3
