"""Run tests.

An async core with a bounded pool, per-call timeouts, an optional request rate, trials, skip
facts, setup/cleanup hooks, multi-step tests and fail-fast. Every finished trial is committed to
the run store before the next thing happens.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import Any, cast

from .._exceptions import TargetError
from .._records import (
    EvalRecord,
    PassThreshold,
    RunRecord,
    Status,
    StepRecord,
    TrialRecord,
    test_status,
)
from ..engine import CheckContext
from ..loading import (
    ConfigModel,
    EvalSuite,
    Step,
    TestCase,
    config_read,
    definition_digest,
)
from ..store import RunStore, StoredTests, build_run
from ..targets import Target, make_target, parse_spec
from ..targets._check import agent_warnings
from ._answer import answer_step
from ._budget import RunBudget
from ._check_process import CheckProcess
from ._conversation import converse
from ._evals import check_eval
from ._limits import fit_concurrency
from ._matrix import Matrix, TargetSpec, build_matrix
from ._model_judge import ModelJudge
from ._options import RunOptions
from ._response_cache import ResponseCache
from ._resume import PlannedTest, planned_trials
from ._selection import TestPlan
from ._simulator import UserSimulator
from ._steps import check_step, check_steps
from ._streaming import RunStream
from ._suite_hooks import SuiteHookState
from ._support import (
    NOT_RUN,
    RateLimiter,
    now_iso,
    raise_if_cancelled,
    run_hook,
)
from ._tracing import RunTraces

__all__ = ["Listener", "RunOptions", "Runner"]


Listener = Callable[[str, Any], None]


class Runner:
    """Runs loaded tests against targets, writing every trial to the store."""

    _simulator: UserSimulator | None = None  # conversation tests' simulated user (first use)

    def __init__(
        self,
        options: RunOptions,
        config: ConfigModel,
        store: RunStore,
        secrets: set[str],
        listener: Listener | None = None,
    ) -> None:
        self.options = options
        self.config = config
        self.store = store
        self.secrets = secrets
        self.listener = listener or (lambda event, data: None)
        self.threshold: PassThreshold = options.pass_threshold or config.pass_threshold
        self.default_trials = options.trials or config.trials
        self.timeout_s = options.timeout_s or config.timeout_s
        self.concurrency = options.concurrency or config.concurrency
        self.facts = {**config.facts, **options.facts}
        self.warnings: list[str] = []
        self._targets: dict[tuple[str, str | None], Target | TargetError] = {}
        self.matrix: Matrix | None = build_matrix(options, config)
        self._limiter = RateLimiter(options.rate_limit or config.rate_limit)
        self._stop = asyncio.Event()
        self.check_process: CheckProcess | None = None
        self.trials_run = 0  # trials this invocation ran (not the ones a resumed run had)
        self.resumed_tests = 0  # tests whose verdicts all came from the resumed run
        self.elapsed_ms: float | None = None  # this invocation's time (`_finish`)
        self.changed_definitions = 0  # resumed tests whose stored verdicts were for another test
        self._inline_count = 0
        self.suites = SuiteHookState(self._run_hook)
        self.model_judge = ModelJudge(
            config.judge,
            store,
            cache=options.judge_cache,
            secrets=secrets,
            timeout_s=self.timeout_s,
            wait=self._limiter.wait,
            now=options.now,
        )
        # A Ray worker has no store (the driver writes it): no cache there.
        mode = (options.cache or config.cache) if store is not None else "off"
        self.response_cache = ResponseCache(mode, store)
        self.budget = RunBudget(options.max_cost_usd or config.max_cost_usd, self._judge_spent)
        self.traces = RunTraces(config.traces)
        self.stream = RunStream()  # each finished test, in order, to the reports (`_streaming`)

    def _judge_spent(self) -> float:
        """What the judge and the simulated user spent in this invocation (the budget counts it)."""
        client, simulated = self.model_judge.client, self._simulator
        spent = (client.cost_usd if client else 0.0) + (simulated.cost_usd if simulated else 0.0)
        return spent + float(self.model_judge.elsewhere["cost_usd"])

    # -- targets ---------------------------------------------------------------------------
    def target_spec(self, agent: str, label: str | None = None) -> TargetSpec:
        """What answers ``agent`` (under a matrix ``label``) and the directory it runs in.

        The matrix's target for the label, else ``--target`` (run in the current directory),
        else the config's entry (run in the config file's directory, where its relative paths
        are); a spec of None when there is none.
        """
        if label is not None and self.matrix is not None:
            chosen = self.matrix.spec_of(agent, label)
            if chosen is not None:
                return chosen
        if self.options.target:
            return self.options.target, None
        return self.config.agents.get(agent), self.config.directory

    def calls(self, agent: str, label: str | None = None) -> bool:
        """Whether the target of ``agent`` calls something (read from its spec, unbuilt).

        No target, or one of recorded responses (`TargetSpec.recorded`), calls nothing; a spec
        that names no target is taken to call (building it fails, as an error verdict). With
        no label in a matrix run: whether any of the agent's targets calls.
        """
        labels = (label,) if label is not None else self._labels_of(agent)
        return any(self._spec_calls(self.target_spec(agent, one)[0]) for one in labels)

    def _labels_of(self, agent: str) -> tuple[str | None, ...]:
        labels = self.matrix.labels_of(agent) if self.matrix is not None else ()
        return labels or (None,)

    @staticmethod
    def _spec_calls(spec: Any) -> bool:
        if spec is None:
            return False
        try:
            return not parse_spec(spec).recorded
        except TargetError:
            return True

    def may_call(self, tests: TestPlan) -> bool:
        """Whether some test may call an agent.

        A fixtures target answers without a call; a dataset of recorded responses run without
        a target calls nothing.
        """
        agents = [test.agent for test in tests.tests] + [d.agent for d in tests.datasets]
        return any(self.calls(agent) for agent in agents)

    def definition_of(self, test: TestCase) -> str:
        """The digest stored with a test's verdicts: what its file says, plus how it runs.

        The agent it addresses, its trials and the pass threshold: a change to any of these
        makes a stored verdict about another test. The endpoint that answers the agent (URL,
        command, model, recordings) is not part of it: that is what a comparison of two runs
        measures ("I changed the model: did it get worse?").
        """
        threshold = self.threshold_of(test)
        return definition_digest(test.definition, test.agent, self.trials_of(test), threshold)

    def trials_of(self, test: TestCase) -> int:
        """How many trials ``test`` gets: its own ``trials``, else ``--trials``, else config.

        A test's ``trials`` wins, as a test marker wins over a command-line default in pytest
        plugins: it was written for that test (a known-flaky one). When it overrides
        ``--trials``, the run says so once per test (`_warn`), never silently. A test that
        cannot run (a load problem: an invalid dataset line, a misspelt assertion) gets one
        trial: its error is the same every time, and is reported once.
        """
        if test.problems:
            return 1
        if test.trials is None:
            return self.options.trials or self.config.trials
        if self.options.trials and test.trials != self.options.trials:
            self.warn(
                f"{test.key}: its own trials: {test.trials} override --trials {self.options.trials}"
            )
        return test.trials

    def threshold_of(self, test: TestCase) -> PassThreshold:
        """How many of ``test``'s trials must pass: its own or its suite's, else the run's.

        As with `trials_of`, what the file says for a test wins over ``--pass-threshold``, and
        overriding an explicit ``--pass-threshold`` is said once per test, never silently.
        """
        own = test.pass_threshold
        if own is None:
            return self.threshold
        given = self.options.pass_threshold
        if given and own != given:
            self.warn(f"{test.key}: its pass_threshold: {own} overrides --pass-threshold {given}")
        return own  # type: ignore[return-value]  # validated by the file model

    def fit_open_files(self) -> None:
        """Cap the concurrency to what the open-file limit allows, saying so up front."""
        label = f"-j {self.options.concurrency}" if self.options.concurrency else "concurrency"
        self.concurrency, capped = fit_concurrency(self.concurrency, label)
        if capped:
            self.warnings.append(capped)
            self.listener("warning", capped)  # before any call

    def target_for(self, agent: str, label: str | None = None) -> Target | TargetError:
        """The target answering ``agent`` under ``label`` (built once), or why there is none."""
        key = (agent, label)
        if key not in self._targets:
            spec, base_dir = self.target_spec(agent, label)
            if spec is None:
                self._targets[key] = TargetError(
                    f"no target for agent '{agent}' ({config_read(self.config)}); map it "
                    "under agents: in the config, or pass --target"
                )
            else:
                try:
                    self._targets[key] = make_target(
                        spec, secrets=self.secrets, concurrency=self.concurrency, base_dir=base_dir
                    )
                except TargetError as error:
                    self._targets[key] = error
        return self._targets[key]

    async def close(self) -> None:
        """Close every target, and the check process."""
        for target in self._targets.values():
            if not isinstance(target, TargetError):
                await target.aclose()
        if self.check_process is not None:
            await self.check_process.aclose()
        await self.traces.aclose()
        await self.model_judge.close(getattr(self, "run_id", None))
        if self._simulator is not None:
            await self._simulator.close(getattr(self, "run_id", None))

    # -- hooks -----------------------------------------------------------------------------
    async def _run_hook(self, name: str, target: str | None = None) -> str | None:
        """Run a named hook (in the config file's directory); the reason it failed, or None.

        A test's hook in a matrix run sees its target's label as ``ASSERTLY_TARGET``.
        """
        env = {"ASSERTLY_TARGET": target} if target is not None else None
        return await run_hook(self.config, name, self.timeout_s, env=env)

    # -- one trial -------------------------------------------------------------------------
    async def run_trial(self, test: TestCase, trial: int) -> TrialRecord:
        """Run one trial of a test (setup, steps, cleanup) and return its record."""
        settled = await self._settled_trial(test, trial)
        if settled is not None:
            return settled
        return await self.execute_trial(test, trial)

    async def _settled_trial(self, test: TestCase, trial: int) -> TrialRecord | None:
        """A trial's record when it needs no run: a broken test, a skip, a failed suite setup.

        Decided where the run is driven (suite setups run once there), before `execute_trial`.
        """
        if test.problems:
            message = "; ".join(str(problem) for problem in test.problems)
            return TrialRecord(test.key, trial, "error", 0.0, error=message)
        if test.skip_if:
            fact = self._fact(test.skip_if)
            if fact is None:
                self.warn(f"fact '{test.skip_if}' is not declared; treated as false")
            elif fact:
                return TrialRecord(
                    test.key, trial, "skipped", 0.0, reason=f"skip_if: {test.skip_if} is true"
                )
        if test.suite_hooks is not None:
            failure = await self.suites.ready(test.suite_hooks)
            if failure:
                # The suite's tests never pass on a setup that did not happen.
                error = f"suite setup failed, so the test did not run: {failure}"
                return TrialRecord(test.key, trial, "error", 0.0, error=error)
        return None

    async def execute_trial(self, test: TestCase, trial: int) -> TrialRecord:
        """Run a trial's setup hooks, steps (calls and judging) and cleanup hooks.

        What a Ray worker runs for the driver (`assertly.runner._ray`).
        """
        started = time.perf_counter()
        record = TrialRecord(test.key, trial, "passed", 0.0)
        try:
            for hook in test.setup:
                failure = await self._run_hook(hook, test.target)
                if failure:
                    record.status, record.error = "error", f"setup: {failure}"
                    return record
            await self._run_steps(test, record)
        finally:
            for hook in test.cleanup:
                failure = await self._run_hook(hook, test.target)
                if failure and record.status != "error":
                    record.status, record.error = "error", f"cleanup: {failure}"
            record.duration_ms = (time.perf_counter() - started) * 1000
        return record

    async def _run_steps(self, test: TestCase, record: TrialRecord) -> None:
        # Recorded responses (dataset lines with an output) need no target at all.
        target = None if test.recorded else self.target_for(test.agent, test.target)
        if isinstance(target, TargetError):
            record.status, record.error = "error", str(target)
            return
        # The test's own timeout, else --timeout, else the target's configured one, else config.
        timeout = (
            test.timeout_s
            or self.options.timeout_s
            or (target.timeout_s if target is not None else None)
            or self.config.timeout_s
        )
        if test.conversation is not None:
            await converse(self, test, target, timeout, record)
            return
        respond = partial(answer_step, self, test, target, timeout, record)
        await check_steps(record, test.steps, respond, self._check_step, now=self.options.now)

    def simulator_for(self) -> UserSimulator | None:
        """The run's simulated user, made on first use (None: no simulator: nor judge:)."""
        if self._simulator is None:
            self._simulator = UserSimulator.of_run(self)
        return self._simulator

    async def _check_step(
        self, step: Step, output: Any, context: CheckContext, called: bool
    ) -> StepRecord:
        """Judge a step's output: in the check process when there is one, else here.

        Only responses that came from a call go there: a recorded response is judged inline
        (`_checked_inline`), which costs less here than the round trip to the judge. A step
        with model-graded assertions is judged here, in two passes around the judge's calls.
        """
        if any(expectation.judged for expectation in step.checks):
            refused = self.budget.refused()  # a judge call would start: the run budget
            if refused is not None:
                return StepRecord(step.name, "error", output=output, error=refused)
            return await self.model_judge.judge_step(
                step.name, step.checks, output, context, self._judge
            )
        if called and self.check_process is not None:
            record: StepRecord | None = await self.check_process.check(
                step.name, step.checks, output, context
            )
            if record is not None:
                record.output = output
                return record
        return self._judge(step.name, step.checks, output, context)

    # The step's record (`check_step`; the check process too).
    _judge = staticmethod(check_step)

    def _fact(self, name: str) -> bool | None:
        """A fact's value, or None when no source declares it (false, with a warning).

        ``--fact`` first, then the environment (``skip_if: CI`` with ``CI=true``), then config.
        """
        if name in self.options.facts:
            return self.options.facts[name]
        value = os.environ.get(name)
        if value is not None:
            return value.strip().lower() in ("1", "true", "yes", "on")
        return self.config.facts.get(name)

    def warn(self, message: str, say: bool = False) -> None:
        if message not in self.warnings:
            self.warnings.append(message)
            if say:
                self.listener("warning", message)

    # -- whole test ------------------------------------------------------------------------
    async def run_test(self, planned: PlannedTest, pool: asyncio.Semaphore) -> Status:
        """Run the trials of a test not already stored; return its final status."""
        test, done = planned.test, planned.done
        trials = self.trials_of(test)
        threshold = self.threshold_of(test)
        records: list[TrialRecord] = [TrialRecord.from_dict(done[n]) for n in sorted(done)]
        stored: dict[int, Any] = dict(done)  # each trial as stored, for the reports

        async def one(number: int) -> None:
            async with pool:
                if self._stop.is_set():
                    record = TrialRecord(test.key, number, "skipped", 0.0, reason=NOT_RUN)
                else:
                    self.trials_run += 1
                    try:
                        record = await self.run_trial(test, number)
                    except Exception as error:  # a bug costs this verdict, never the run
                        message = f"internal error: {type(error).__name__}: {error}"
                        record = TrialRecord(test.key, number, "error", 0.0, error=message)
                stored[number] = self.store.save_trial(
                    self.run_id, test.key, number, record.to_dict(), batch=self.no_call(test)
                )
                records.append(record)
                self.listener("trial", (test, record))
                # Decide --fail-fast while still holding the pool slot: once it is released,
                # the next waiting test starts before this coroutine would run again.
                if self.options.fail_fast and len(records) >= trials:
                    ordered = sorted(records, key=lambda r: r.trial)
                    if test_status(ordered, threshold) in ("failed", "error"):
                        self._stop.set()

        numbers = [n for n in range(1, trials + 1) if n not in done]
        if not numbers and done:
            # Judged by the run being resumed: said so, not run again.
            self.resumed_tests += 1
            self.listener("resumed", test)
        if len(numbers) == 1:
            await one(numbers[0])  # no task for the common case of one trial
        else:
            await asyncio.gather(*(one(n) for n in numbers))
        records.sort(key=lambda r: r.trial)
        status = test_status(records, threshold) if records else "error"
        self.stream.finished(planned.position, test.key, planned.meta, stored, self.threshold)
        self.listener("test", (test, status))
        if self.options.fail_fast and status in ("failed", "error"):
            self._stop.set()
        return status

    async def _finish(self, run_id: str, started: float) -> None:
        """Clean up open suites, close the targets; store the duration and failed cleanups.

        The duration is added to a resumed run's.
        """
        await self.suites.close_all()
        await self.close()
        elapsed = self.elapsed_ms = (time.perf_counter() - started) * 1000
        previous = float(self.store.run_info(run_id)["duration_ms"] or 0.0)
        self.store.finish_run(
            run_id,
            now_iso(),
            previous + elapsed,
            self.warnings,
            self.suites.problems,
            budget_stopped=self.budget.stopped,
            cached=self.response_cache.hits,
        )

    async def _start_targets(self, agents: Iterable[str]) -> None:
        for agent in sorted(set(agents)):
            labels = self.matrix.labels_of(agent) if self.matrix is not None else ()
            for label in labels or (None,):
                target = self.target_for(agent, label)
                if not isinstance(target, TargetError):
                    await target.start()

    def no_call(self, test: TestCase) -> bool:
        """Whether a trial of ``test`` costs no agent call (recorded responses, a problem)."""
        if test.problems or test.recorded:
            return True
        target = self._targets.get((test.agent, test.target))
        return target is not None and not isinstance(target, TargetError) and target.recorded

    def _planned(
        self, tests: Iterable[TestCase], resumed: dict[str, dict[int, dict[str, Any]]]
    ) -> Iterator[PlannedTest]:
        """Each test with its stored trials that count, metadata saved a batch ahead."""
        return planned_trials(self, tests, resumed)

    async def _work(self, plan: Iterator[PlannedTest], pool: asyncio.Semaphore) -> None:
        """One worker: run the plan's next test until the plan is exhausted."""
        for planned in plan:
            test = planned.test
            if self._stop.is_set():
                self._save_not_run(planned)
                continue
            raise_if_cancelled()
            hooks = test.suite_hooks
            self.suites.enter(hooks)  # before any await: see SuiteHookState.enter
            if self.suites.pending:
                await self.suites.flush()
            try:
                if self._checked_inline(test):
                    await self._run_inline(planned, pool)
                else:
                    await self.run_test(planned, pool)
            finally:
                if hooks is not None:
                    await self.suites.leave(hooks)

    def _save_not_run(self, planned: PlannedTest) -> None:
        """After --fail-fast stopped the run: store a test it did not reach as skipped."""
        # red team, probe "--fail-fast resumed": the trials a run stopped before left as not
        # run stay stored, so the report of the test (read back or streamed) shows them.
        key, stored = planned.test.key, dict[int, Any](planned.stored)
        if 1 not in planned.done:
            skipped = TrialRecord(key, 1, "skipped", 0.0, reason=NOT_RUN)
            stored[1] = self.store.save_trial(self.run_id, key, 1, skipped.to_dict())
        self.stream.finished(planned.position, key, planned.meta, stored, self.threshold)

    async def _run_inline(self, planned: PlannedTest, pool: asyncio.Semaphore) -> None:
        """Judge a test that never waits; give the event loop a turn every `_YIELD_EVERY`.

        A worker judging recorded responses back to back never suspends on its own: without
        these turns, Ctrl-C and the calls of other tests would wait for the whole dataset.
        """
        await self.run_test(planned, pool)
        self._inline_count += 1
        if self._inline_count % _YIELD_EVERY == 0:
            await asyncio.sleep(0)

    def _checked_inline(self, test: TestCase) -> bool:
        """Whether ``test`` never waits: no agent call, no hook, one trial."""
        return (
            not test.setup and not test.cleanup and self.trials_of(test) == 1 and self.no_call(test)
        )

    # -- evals -----------------------------------------------------------------------------
    def run_eval(self, suite: EvalSuite) -> EvalRecord:
        """Judge a workflow eval section (recorded fixtures; no calls)."""
        return check_eval(suite, self.options.now, self.listener)

    # -- everything --------------------------------------------------------------------------
    run_id: str

    async def run(
        self,
        tests: Iterable[TestCase],
        evals: list[EvalSuite],
        run_id: str,
        problems: list[str],
        total: int | None = None,
        agents: Iterable[str] = (),
    ) -> RunRecord:
        """Run everything; return the run as rebuilt from the store.

        ``tests`` is iterated once, as the run goes (a dataset's lines are read as they are
        reached); ``total`` is for progress only (default: ``len(tests)``). The targets of
        ``agents`` are set up (clients made, libraries imported) before the run's clock starts.
        """
        self.run_id = run_id
        agents = set(agents)
        # Before the first call: what `validate` refuses in the agents this run uses.
        replaced = self.options.target or self.options.targets or None  # --target replaces all
        for message in agent_warnings(self.config, agents, replaced):
            self.warn(message, say=True)
        self.listener("start", total if total is not None else len(tests))  # type: ignore[arg-type]
        await self._start_targets(agents)
        started = time.perf_counter()
        resumed = self.store.trials(run_id)
        pool = asyncio.Semaphore(self.concurrency)  # trials in flight (a test may run several)
        workers: list[asyncio.Future[None]] = []
        try:
            for suite in evals:
                record = self.run_eval(suite)
                self.store.save_eval(run_id, suite.file, record.to_json())
            # As many workers as tests may be in flight, each taking the next test from one
            # shared plan: no task, callback or semaphore per test, and tests stream in order.
            plan = self._planned(tests, resumed)
            workers = [
                asyncio.ensure_future(self._work(plan, pool)) for _ in range(self.concurrency)
            ]
            await asyncio.gather(*workers)
            raise_if_cancelled()
        except BaseException:
            # Ctrl-C, or a store that cannot be written: stop every call in flight and wait for
            # it, so no agent is left running and no subprocess is left half-started (on one,
            # asyncio.run's own clean-up hangs for ever: CPython gh-103847).
            for worker in workers:
                worker.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            raise
        finally:
            if self.changed_definitions:
                self.warn(
                    f"{self.changed_definitions} test(s) changed since run {run_id} judged them "
                    "(input, expectations, target, trials or pass threshold): run again"
                )
            await self._finish(run_id, started)
        run = build_run(self.store, run_id)
        run.tests = self.stream.tests(cast(StoredTests, run.tests))  # in hand: none read back
        run.problems = [*problems, *self.suites.problems]
        run.trials_run = self.trials_run
        run.resumed_tests, run.elapsed_ms = self.resumed_tests, self.elapsed_ms
        return run


# Tests judged inline between two yields to the event loop.
_YIELD_EVERY = 64
