"""From trials to a test's verdict, and from the store back to a whole run.

Live runs and ``assertly report`` build their `RunRecord` with the same functions from the
same stored rows, so a re-rendered report can never disagree with the run that made it.
"""

from __future__ import annotations

from typing import Any, Literal

from ._records import EvalCaseRecord, EvalRecord, RunRecord, Status, TestRecord, TrialRecord

__all__ = ["PassThreshold", "build_run", "test_status"]

PassThreshold = Literal["any", "all", "majority"]


def test_status(trials: list[TrialRecord], threshold: PassThreshold) -> Status:
    """A test's status from its trials.

    ``any``: some trial passed. ``all``: every trial run passed. ``majority``: more than half of
    the trials run passed. Skipped trials do not count as run; a test whose trials were all
    skipped is skipped. A test that did not pass is ``failed`` if any trial failed, else
    ``error`` (it could not be judged).
    """
    run = [trial for trial in trials if trial.status != "skipped"]
    if not run:
        return "skipped" if trials else "error"
    passes = sum(1 for trial in run if trial.status == "passed")
    if threshold == "any":
        verdict = passes > 0
    elif threshold == "majority":
        verdict = passes * 2 > len(run)
    else:
        verdict = passes == len(run)
    if verdict:
        return "passed"
    return "failed" if any(trial.status == "failed" for trial in run) else "error"


def _score(trials: list[TrialRecord]) -> float | None:
    scores = [trial.score for trial in trials if trial.score is not None]
    return sum(scores) / len(scores) if scores else None


def build_run(
    run_id: str,
    info: dict[str, Any],
    metas: list[dict[str, Any]],
    stored_trials: dict[str, dict[int, dict[str, Any]]],
    stored_evals: list[dict[str, Any]],
) -> RunRecord:
    """Assemble a run from stored rows (tests in run order, trials in trial order)."""
    options = info.get("options", {})
    threshold: PassThreshold = options.get("pass_threshold", "all")
    tests: list[TestRecord] = []
    for meta in metas:
        by_trial = stored_trials.get(meta["key"], {})
        trials = [TrialRecord.from_dict(by_trial[number]) for number in sorted(by_trial)]
        status: Status = test_status(trials, threshold) if trials else "error"
        record = TestRecord(
            key=meta["key"],
            id=meta["id"],
            name=meta["name"],
            suite=meta["suite"],
            file=meta["file"],
            status=status,
            score=_score(trials),
            trials=trials,
            line=meta.get("line"),
            tags=meta.get("tags", []),
            priority=meta.get("priority"),
            description=meta.get("description"),
        )
        if not trials:
            record.trials = [
                TrialRecord(meta["key"], 1, "error", 0.0, error="not run (the run was interrupted)")
            ]
        tests.append(record)
    evals = [
        EvalRecord(
            file=data["file"],
            score=data["score"],
            threshold=data["threshold"],
            passed=data["passed"],
            cases=[EvalCaseRecord(**case) for case in data.get("cases", [])],
        )
        for data in stored_evals
    ]
    return RunRecord(
        run_id=run_id,
        started_at=info.get("started_at", ""),
        duration_ms=info.get("duration_ms") or 0.0,
        tests=tests,
        evals=evals,
        problems=options.get("problems", []),
        warnings=options.get("warnings", []),
    )
