"""Re-judge a stored run's responses against the current expectations.

No target is called: change an assertion, recheck in seconds. The result is stored as a new
run. Model-graded assertions ask the judge (their replies are in the judge cache when the
requests are the same, so an unchanged rubric costs nothing again).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from dataclasses import asdict
from datetime import datetime
from typing import Any

from .._exceptions import ConfigError, Problem
from .._records import RunRecord, StepRecord, TrialRecord
from ..engine._context import CallMetrics
from ..loading import Conversation, Step, TestCase
from ..store import RunStore, build_run, new_run_id, open_store
from ._conversation import recheck_conversation
from ._entry import prepare
from ._options import RunOptions, options_dict, restore_options
from ._plan import shard_plan, verdict_config
from ._run import Runner
from ._steps import Answer, StepFailure, check_steps
from ._support import now_iso, test_meta

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
    with open_store(store_path) as store:
        return _recheck_in(store, run_id, now)


def _recheck_in(store: RunStore, run_id: str, now: datetime | None) -> RunRecord:
    """`recheck` in an open store."""
    loop = asyncio.new_event_loop()  # for the judge of model-graded assertions, if any
    try:
        source_id = store.resolve_run_id(run_id)
        info = store.run_info(source_id)
        options = RunOptions(now=now)
        restore_options(options, info["options"])
        config, tests, evals, problems = prepare(options, calls=False)
        labels = list(tests.matrix.labels) if tests.matrix is not None else []
        before = info["options"].get("target_labels")
        if isinstance(before, list) and before != labels:
            # red team, probe "recheck after the labels changed": a label renamed in the
            # config's matrix left the stored cells of the old one out (their keys end in
            # it): a failing target dropped, and the recheck exited 0.
            raise ConfigError(
                [
                    Problem(
                        "matrix",
                        f"run {source_id} ran the targets {before or 'of no matrix'}, the "
                        f"config now gives {labels or 'no matrix'}: a recheck judges the "
                        "run's own targets; give the config its labels back, or start a new run",
                    )
                ]
            )
        stored = store.trials(source_id)
        new_id = new_run_id()
        threshold = options.pass_threshold or config.pass_threshold
        data = options_dict(options, threshold, problems)
        data["recheck_of"] = source_id
        data["target_labels"] = labels
        runner = Runner(options, config, store, store.redact)
        # Judged under the config as it is now: a resume or a merge of this run checks that.
        data["verdict_config"] = verdict_config(config, options)
        if tests.whole is not None:
            data["plan"] = shard_plan(
                tests.whole, runner.definition_of, options, data["verdict_config"]
            )
        store.start_run(new_id, now_iso(), data)
        started = time.perf_counter()
        kept = [test for test in tests if test.key in stored]
        metas = [
            test_meta(test, runner.definition_of(test), runner.threshold_of(test)) for test in kept
        ]
        store.save_tests(new_id, metas)
        loop.run_until_complete(_recheck_all(runner, store, new_id, kept, stored, options.now))
        for suite in evals:
            store.save_eval(new_id, suite.file, asdict(runner.run_eval(suite)))
        loop.run_until_complete(runner.model_judge.close(new_id))
        if info.get("finished_at"):
            store.finish_run(new_id, now_iso(), (time.perf_counter() - started) * 1000)
        else:
            # red team, probe "recheck of a killed shard": the source holds only the trials
            # it finished (1 of a test's 3), and a finished recheck of it merged green. Left
            # unfinished as its source was: merge refuses it, --resume runs the rest.
            problems = [
                *problems,
                f"run {source_id} never finished (interrupted or killed): only its stored "
                f"trials were judged again; `assertly run --resume {new_id}` runs the rest",
            ]
        run = build_run(store, new_id)
        run.problems = problems
        return run
    finally:
        loop.close()


async def _recheck_all(
    runner: Runner,
    store: RunStore,
    new_id: str,
    tests: list[TestCase],
    stored: dict[str, dict[int, dict[str, Any]]],
    now: datetime | None,
) -> None:
    """Judge every stored trial of ``tests`` again and store it under ``new_id``.

    As many workers as the run's concurrency take the next test from one shared iterator, as
    a run does: a test whose steps wait for a model (a judge's reply, the local embeddings of
    ``similar``) lets the others go on, so their requests are sent together (the embeddings
    of the waiting steps are computed in one batch). Without such steps, no worker ever waits
    and the tests are judged in order.
    """
    plan = iter(tests)

    async def work() -> None:
        for test in plan:
            steps_by_name = {step.name: step for step in test.steps}
            for number, raw in sorted(stored[test.key].items()):
                old = TrialRecord.from_dict(raw)
                new = TrialRecord(test.key, number, old.status, old.duration_ms, reason=old.reason)
                if test.problems:
                    new.status = "error"
                    new.error = "; ".join(str(problem) for problem in test.problems)
                elif old.status != "skipped" and test.conversation is not None:
                    await _recheck_conversation(runner, test.conversation, old, new, now)
                elif old.status != "skipped":
                    await _recheck_trial(runner, steps_by_name, old, new, now)
                store.save_trial(new_id, test.key, number, new.to_dict())

    workers = [asyncio.ensure_future(work()) for _ in range(max(1, runner.concurrency))]
    try:
        await asyncio.gather(*workers)
    except BaseException:
        for worker in workers:
            worker.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        raise


async def _recheck_conversation(
    runner: Runner,
    conversation: Conversation,
    old: TrialRecord,
    new: TrialRecord,
    now: datetime | None,
) -> None:
    """Judge a stored conversation's turns and transcript again (`recheck_conversation`)."""
    new.status = "passed"
    await recheck_conversation(
        new, conversation, old.steps, runner._check_step, error=old.error, now=now
    )
    judged: str = new.status  # set by recheck_conversation
    if old.error and judged != "error":
        # As for steps: an error the turns did not make (a hook, no target) stands.
        new.status, new.error = "error", old.error


async def _recheck_trial(
    runner: Runner,
    steps_by_name: dict[str, Step],
    old: TrialRecord,
    new: TrialRecord,
    now: datetime | None,
) -> None:
    """Judge a stored trial's responses again, step by step as the run judged them."""
    current: StepRecord | None = None  # the stored step `respond` answers with

    def steps() -> Iterator[Step | StepFailure]:
        nonlocal current
        for old_step in old.steps:
            step = steps_by_name.get(old_step.name)
            if old_step.status == "error" and old_step.output is None:
                # No response to judge (the call failed): the stored error stands.
                yield StepFailure(old.error, old_step)
                return
            if step is None:
                yield StepFailure(f"step {old_step.name} no longer exists")
                return
            current = old_step
            yield step

    async def respond(step: Step) -> Answer:
        assert current is not None
        metrics = CallMetrics(
            current.latency_ms,
            current.cost_usd,
            current.model,
            current.tokens,
            current.tool_calls,
            current.spans,
        )
        return Answer(current.output, metrics)

    new.status = "passed"
    await check_steps(new, steps(), respond, runner._check_step, now=now)
    judged: str = new.status  # set by check_steps (mypy keeps the literal assigned above)
    if old.error and judged != "error":
        # An error the steps did not make (a setup or cleanup hook, no target, no step at
        # all) stands: a recheck runs no hook and calls nothing, and an error is never a pass.
        new.status, new.error = "error", old.error
