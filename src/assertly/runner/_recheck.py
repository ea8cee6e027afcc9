"""Re-judge a stored run's responses against the current expectations.

No target is called: change an assertion, recheck in seconds. The result is stored as a new
run. Model-graded assertions ask the judge (their replies are in the judge cache when the
requests are the same, so an unchanged rubric costs nothing again).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import asdict
from datetime import datetime
from typing import Any

from .._records import RunRecord, TrialRecord
from ..engine import CheckContext
from ..store import RunStore, new_run_id
from ._entry import prepare
from ._options import RunOptions, options_dict, restore_options
from ._run import Runner
from ._support import now_iso, test_meta
from ._verdict import build_run

__all__ = ["recheck"]


def recheck(store_path: str, run_id: str, *, now: datetime | None = None) -> RunRecord:
    """Re-judge every stored trial of ``run_id`` with the test files as they are now.

    The stored run's options (paths, filters, ``--now``, facts, pass threshold, trials, config
    file) are reused; ``now`` overrides the stored ``--now``. Trials that ended in a target
    error keep their error (there is no response to judge); tests that did not exist in the
    stored run are left out.

    Raises:
        StoreError: The store or run cannot be read.
        ConfigError: The test files can no longer be loaded.
    """
    store = RunStore(store_path)
    loop = asyncio.new_event_loop()  # for the judge of model-graded assertions, if any
    try:
        source_id = store.resolve_run_id(run_id)
        info = store.run_info(source_id)
        options = RunOptions(now=now)
        restore_options(options, info["options"])
        config, tests, evals, problems = prepare(options)
        stored = store.trials(source_id)
        new_id = new_run_id()
        threshold = options.pass_threshold or config.pass_threshold
        data = options_dict(options, threshold, problems)
        data["recheck_of"] = source_id
        store.start_run(new_id, now_iso(), data)
        runner = Runner(options, config, store, store.redact)
        started = time.perf_counter()
        kept = [test for test in tests if test.key in stored]
        metas = [
            test_meta(test, runner.definition_of(test), runner.threshold_of(test)) for test in kept
        ]
        store.save_tests(new_id, metas)
        for test in kept:
            steps_by_name = {step.name: step for step in test.steps}
            for number, raw in sorted(stored[test.key].items()):
                old = TrialRecord.from_dict(raw)
                new = TrialRecord(test.key, number, old.status, old.duration_ms, reason=old.reason)
                if test.problems:
                    new.status = "error"
                    new.error = "; ".join(str(problem) for problem in test.problems)
                elif old.status != "skipped":
                    _rejudge(runner, test.steps, steps_by_name, old, new, options.now, loop)
                store.save_trial(new_id, test.key, number, new.to_dict())
        for suite in evals:
            store.save_eval(new_id, suite.file, asdict(runner.run_eval(suite)))
        loop.run_until_complete(runner.model_judge.close(new_id))
        store.finish_run(new_id, now_iso(), (time.perf_counter() - started) * 1000)
        run = build_run(store, new_id)
        run.problems = problems
        return run
    finally:
        loop.close()
        store.close()


def _rejudge(
    runner: Runner,
    steps: list[Any],
    steps_by_name: dict[str, Any],
    old: TrialRecord,
    new: TrialRecord,
    now: datetime | None,
    loop: asyncio.AbstractEventLoop,
) -> None:
    stored_responses: dict[str, Any] = {}
    scores: list[float] = []
    new.status = "passed"
    for old_step in old.steps:
        step = steps_by_name.get(old_step.name)
        if old_step.status == "error" and old_step.response is None:
            new.steps.append(old_step)
            new.status, new.error = "error", old.error
            break
        if step is None:
            new.status, new.error = "error", f"step {old_step.name} no longer exists"
            break
        context = CheckContext(
            cost_usd=old_step.cost_usd,
            latency_ms=old_step.latency_ms,
            model=old_step.model,
            steps=stored_responses,
            now=now,
            tool_calls=old_step.tool_calls,
        )
        if any(expectation.judged for expectation in step.checks):
            judged, failures = loop.run_until_complete(
                runner.model_judge.judge_step(
                    step.name, step.checks, old_step.response, context, runner._judge
                )
            )
        else:
            judged, failures = runner._judge(step.name, step.checks, old_step.response, context)
        judged.latency_ms, judged.cost_usd, judged.model, judged.tokens = (
            old_step.latency_ms,
            old_step.cost_usd,
            old_step.model,
            old_step.tokens,
        )
        judged.tool_calls = old_step.tool_calls
        new.failures.extend(failures)
        new.steps.append(judged)
        scores.append(judged.score or 0.0)
        if step.store:
            stored_responses[step.store] = old_step.response
        if judged.status != "passed":
            new.status = judged.status
            break
    if not old.steps and old.error:
        new.status, new.error = "error", old.error
    new.score = sum(scores) / len(scores) if scores else 0.0
