"""What a run produces: one record per trial, per test and per eval suite.

Records are plain data with `to_dict`/`from_dict`, so the store can keep them as JSON and
reports can be rendered from a stored run exactly as from a live one. The runner builds them;
reports, the viewer and run comparison read them, with the verdict rule over trials
(`test_status`), without importing the runner. This module imports only the standard library
and the package's JSON codec.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from ._check_records import AssertionRecord, CheckRecord
from ._eval_records import EvalCaseRecord, EvalRecord
from ._spans import SpanSet
from ._trial_report import OUTPUT_LIMIT, conversation_report, report_output, trace_report
from ._verdicts import PassThreshold, Status, pass_at_k, status_of, status_of_counts

__all__ = [
    "CONVERSATION_ENDINGS",
    "CONVERSATION_STEP",
    "OUTPUT_LIMIT",
    "PassThreshold",
    "EvalCaseRecord",
    "EvalRecord",
    "RunRecord",
    "Status",
    "StepRecord",
    "TestRecord",
    "TrialRecord",
    "combined_metrics",
    "conversation_report",
    "pass_at_k",
    "report_output",
    "status_of",
    "status_of_counts",
    "test_status",
]


@dataclass(slots=True)
class StepRecord:
    """One call and its verdict within a trial."""

    name: str
    status: Status
    output: Any = None  # what the agent answered (the store's and old records' ``response``)
    checks: list[CheckRecord] = field(default_factory=list)
    error: str | None = None
    latency_ms: float | None = None
    cost_usd: float | None = None
    model: str | None = None
    score: float | None = None
    tokens: dict[str, int] | None = None
    tool_calls: Any = None  # as the target reported them, so a recheck judges them again
    # What the judge of model-graded assertions cost for this step (None: no judge asked).
    judge_cost_usd: float | None = None
    judge_tokens: int | None = None
    # A conversation's turn: what the user said (None: not a turn; the conversation's own
    # checks are a step named ``conversation`` without it), and what the simulated user's
    # model cost to write it (None: a scripted turn).
    user: str | None = None
    simulator_cost_usd: float | None = None
    simulator_tokens: int | None = None
    # On a conversation's own step: why the conversation ended (`CONVERSATION_ENDINGS`).
    ended: str | None = None
    # The call's spans (`SpanSet`), why none arrived (a sentence), or None: none asked.
    spans: SpanSet | str | None = None

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form (the store keeps this; the output under its stored name).

        A turn's fields only on a turn: the store's compact form stays the common one.
        """
        data = {
            "name": self.name,
            "status": self.status,
            "response": self.output,
            "checks": [check.to_json() for check in self.checks],
            "error": self.error,
            "latency_ms": self.latency_ms,
            "cost_usd": self.cost_usd,
            "model": self.model,
            "score": self.score,
            "tokens": self.tokens,
            "tool_calls": self.tool_calls,
            "judge_cost_usd": self.judge_cost_usd,
            "judge_tokens": self.judge_tokens,
        }
        if self.user is not None:
            data["user"] = self.user
        if self.simulator_cost_usd is not None or self.simulator_tokens is not None:
            data["simulator_cost_usd"] = self.simulator_cost_usd
            data["simulator_tokens"] = self.simulator_tokens
        if self.ended is not None:
            data["ended"] = self.ended
        if self.spans is not None:
            spans = self.spans
            data["spans"] = spans if isinstance(spans, str) else spans.to_json()
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> StepRecord:
        """Rebuild from `to_json` output (or a step an older assertly stored)."""
        get = data.get
        return cls(
            data["name"],
            data["status"],
            get("response"),
            [CheckRecord.from_json(check) for check in get("checks") or ()],
            get("error"),
            get("latency_ms"),
            get("cost_usd"),
            get("model"),
            get("score"),
            get("tokens"),
            get("tool_calls"),
            get("judge_cost_usd"),
            get("judge_tokens"),
            get("user"),
            get("simulator_cost_usd"),
            get("simulator_tokens"),
            get("ended"),
            None if get("spans") is None else SpanSet.from_json(data["spans"]),
        )

    def failures(self) -> list[AssertionRecord]:
        """The step's top-level assertions that did not pass, in order."""
        return [failure for check in self.checks for failure in check.failures(self.name)]

    def metrics(self) -> dict[str, Any]:
        """``{latency_ms, cost_usd, model, tokens}``, each None when unknown.

        With ``judge_cost_usd`` and ``judge_tokens`` (the judge's, apart from the agent's)
        when a judge was asked.
        """
        metrics = {
            "latency_ms": _rounded(self.latency_ms),
            "cost_usd": self.cost_usd,
            "model": self.model,
            "tokens": self.tokens,
        }
        if self.judge_cost_usd is not None:
            metrics["judge_cost_usd"] = self.judge_cost_usd
            metrics["judge_tokens"] = self.judge_tokens or 0
        if self.simulator_cost_usd is not None or self.simulator_tokens is not None:
            metrics["simulator_cost_usd"] = self.simulator_cost_usd or 0.0
            metrics["simulator_tokens"] = self.simulator_tokens or 0
        return metrics


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


# Why a conversation ended (a conversation step's ``ended``): its scripted turns ran out, the
# simulated user wrote its stop token, ``stop_when`` passed on a reply, or ``max_turns``.
CONVERSATION_ENDINGS = ("turns", "stop_token", "stop_when", "max_turns")
# A conversation trial's own step (its checks judge the whole conversation).
CONVERSATION_STEP = "conversation"


def _total(values: list[float | None]) -> float | None:
    """The sum when every value is known; None otherwise (a partial sum would mislead)."""
    if not values or any(value is None for value in values):
        return None
    return sum(value for value in values if value is not None)


def combined_metrics(steps: Sequence[StepRecord]) -> dict[str, Any]:
    """A trial's metrics over its steps.

    Latency and cost are summed when every step reported them (else None), the model is the
    distinct models joined by ", ", tokens are summed per kind.
    """
    # A conversation's own step is no call (its calls are its turns); what its judge and
    # the simulated user's stop cost counts.
    calls = [step for step in steps if step.ended is None]
    simulated = [step for step in steps if step.simulator_tokens is not None]
    if len(steps) == 1:
        return steps[0].metrics()
    latencies = [step.latency_ms for step in calls]
    costs = [step.cost_usd for step in calls]
    models = list(dict.fromkeys(step.model for step in calls if step.model))
    tokens: dict[str, int] = {}
    for step in calls:
        for kind, count in (step.tokens or {}).items():
            tokens[kind] = tokens.get(kind, 0) + count
    metrics = {
        "latency_ms": _rounded(_total(latencies)),
        "cost_usd": _total(costs),
        "model": ", ".join(models) or None,
        "tokens": tokens or None,
    }
    judged = [step for step in steps if step.judge_cost_usd is not None]
    if judged:
        metrics["judge_cost_usd"] = sum(step.judge_cost_usd or 0.0 for step in judged)
        metrics["judge_tokens"] = sum(step.judge_tokens or 0 for step in judged)
    if simulated:
        metrics["simulator_cost_usd"] = sum(step.simulator_cost_usd or 0.0 for step in simulated)
        metrics["simulator_tokens"] = sum(step.simulator_tokens or 0 for step in simulated)
    return metrics


@dataclass(slots=True)
class TrialRecord:
    """One attempt at a test: every step's call and verdict."""

    test_key: str
    trial: int
    status: Status
    duration_ms: float
    steps: list[StepRecord] = field(default_factory=list)
    error: str | None = None
    reason: str | None = None  # why it was skipped
    score: float | None = None
    # The failures an old store row kept beside its steps, when they are not what the steps
    # give (None: `failures` are the steps'). The runner never sets it.
    kept_failures: list[AssertionRecord] | None = None
    cached: bool = False  # a call was answered from the response cache (`--cache`)

    @property
    def failures(self) -> list[AssertionRecord]:
        """The failing assertions of every step, in order (computed: never stored twice)."""
        if self.kept_failures is not None:
            return self.kept_failures
        return [failure for step in self.steps for failure in step.failures()]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the store keeps this): the failures are the steps', not a copy.

        Shallow on purpose: outputs and check results are JSON data that is serialized, never
        mutated, so `dataclasses.asdict`'s deep copy only cost time (a fifth of a fixtures run).
        """
        data = {
            "test_key": self.test_key,
            "trial": self.trial,
            "status": self.status,
            "duration_ms": self.duration_ms,
            "steps": [step.to_json() for step in self.steps],
            "error": self.error,
            "reason": self.reason,
            "score": self.score,
        }
        if self.kept_failures is not None:
            data["failures"] = [failure.failure_json() for failure in self.kept_failures]
        if self.cached:  # only then: the store's compact form stays the common one
            data["cached"] = True
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrialRecord:
        """Rebuild from `to_dict` output, or from a row of an older store.

        An older row keeps its ``failures`` beside the steps: read as they are, and kept only
        when they are not what the steps give (they always are in rows assertly wrote).
        """
        get = data.get
        record = cls(
            data["test_key"],
            data["trial"],
            data["status"],
            data["duration_ms"],
            [StepRecord.from_json(step) for step in get("steps") or ()],
            get("error"),
            get("reason"),
            get("score"),
        )
        kept = get("failures")
        if isinstance(kept, list):
            failures = [AssertionRecord.from_json(item) for item in kept]
            if failures != record.failures:
                record.kept_failures = failures
        record.cached = get("cached") is True
        return record


def test_status(trials: list[TrialRecord], threshold: PassThreshold) -> Status:
    """A test's status from its trials.

    ``any``: some trial passed. ``all``: every trial run passed. ``majority``: more than half of
    the trials run passed. Skipped trials do not count as run; a test whose trials were all
    skipped is skipped. A test that did not pass is ``failed`` if any trial failed, else
    ``error`` (it could not be judged).
    """
    return status_of([trial.status for trial in trials], threshold)


@dataclass(slots=True)
class TestRecord:
    """A test's final verdict over its trials."""

    key: str
    id: str
    name: str
    suite: str
    file: str
    status: Status
    score: float | None
    trials: list[TrialRecord]
    line: int | None = None
    tags: list[str] = field(default_factory=list)
    priority: str | int | None = None
    description: str | None = None
    definition: str | None = None  # digest of what defined it (`loading.definition_digest`)
    # What was sent: the input, or for a multi-step test [{step, input}, ...].
    input: Any = None
    multi_step: bool = False
    pass_threshold: str = "all"  # the one that decided `status`
    # A conversation test: its trials' steps are turns, then ``conversation`` (`turn_steps`).
    conversation: bool = False
    # In a matrix run, the label of the target it ran against (`key` ends in ``[label]``).
    target: str | None = None

    @property
    def base_key(self) -> str:
        """The key without its target's ``[label]``: the same test under every target."""
        if self.target is None:
            return self.key
        return self.key.removesuffix(f"[{self.target}]")

    @property
    def passes(self) -> int:
        """Trials that passed."""
        return sum(1 for trial in self.trials if trial.status == "passed")

    @property
    def judged(self) -> int:
        """Trials that ended passed or failed (errors and skips excluded)."""
        return sum(1 for trial in self.trials if trial.status in ("passed", "failed"))

    @property
    def flaky(self) -> bool:
        """Some trials passed and some did not."""
        statuses = {trial.status for trial in self.trials}
        return "passed" in statuses and bool(statuses & {"failed", "error"})

    @property
    def duration_ms(self) -> float:
        """Total time of all trials."""
        return sum(trial.duration_ms for trial in self.trials)

    def step_inputs(self) -> list[tuple[str | None, Any]]:
        """What was sent, as ``(step, input)`` pairs (one, of step None, for a test of one call)."""
        if self.multi_step and isinstance(self.input, list):
            return [
                (None if item.get("step") is None else str(item["step"]), item.get("input"))
                for item in self.input
                if isinstance(item, dict)
            ]
        return [] if self.input is None else [(None, self.input)]

    def to_dict(self) -> dict[str, Any]:
        """The pinned shape of a test in ``run -o report.json`` (plus a few extras)."""
        n = len([t for t in self.trials if t.status != "skipped"])
        c = self.passes
        estimates = {
            str(k): value
            for k in sorted({1, 2, 5, 10, n})  # and k = n: every trial run
            if (value := pass_at_k(n, c, k)) is not None
        }
        return {
            "key": self.key,
            "id": self.id,
            "name": self.name,
            "suite": self.suite,
            "file": self.file,
            "status": self.status,
            "score": self.score,
            "input": self.input,
            "trials": [self._trial_dict(trial) for trial in self.trials],
            "pass_at_k": c > 0,
            "pass_all_k": n > 0 and c == n,
            "flaky": self.flaky,
            "passes": c,
            "pass_at_k_estimates": estimates,
            "line": self.line,
            "tags": self.tags,
            "definition": self.definition,
            "pass_threshold": self.pass_threshold,
            **({"target": self.target} if self.target is not None else {}),
        }

    def _trial_dict(self, trial: TrialRecord) -> dict[str, Any]:
        output: Any
        turns: list[dict[str, Any]] | None = None
        whole: dict[str, Any] | None = None
        if self.conversation:
            turns, whole, output, truncated = conversation_report(trial.steps)
        elif self.multi_step:
            output, truncated = [], False
            for step in trial.steps:
                value, cut = report_output(step.output)
                output.append({"step": step.name, "output": value, "metrics": step.metrics()})
                truncated = truncated or cut
        elif trial.steps:
            output, truncated = report_output(trial.steps[0].output)
        else:
            output, truncated = None, False
        return {
            "trial": trial.trial,
            "status": trial.status,
            "duration_ms": round(trial.duration_ms, 3),
            "failures": [failure.failure_json() for failure in trial.failures],
            **({"error": trial.error} if trial.error else {}),
            **({"reason": trial.reason} if trial.reason else {}),
            **({"cached": True} if trial.cached else {}),
            "output": output,
            "output_truncated": truncated,
            **({"turns": turns, "conversation": whole} if turns is not None else {}),
            "metrics": combined_metrics(trial.steps),
            **({"trace": trace} if (trace := trace_report(trial.steps)) is not None else {}),
        }


@dataclass(slots=True, repr=False)
class RunRecord:
    """A whole run.

    ``tests`` is a list, or for a stored run a lazy view that reads the store as it is
    iterated (it has ``status_counts()``, so totals never parse every record).
    """

    run_id: str
    started_at: str
    duration_ms: float
    tests: Sequence[TestRecord] = field(default_factory=list)
    evals: list[EvalRecord] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # Trials this invocation ran (None for a run rebuilt from the store): 0 on a resumed run
    # means every test already had its verdicts.
    trials_run: int | None = None
    # Of a resumed run, in this invocation: tests whose verdicts came whole from the stored
    # run (none of their trials ran again), and how long this invocation took (the stored
    # duration is the sum of every invocation's).
    resumed_tests: int = 0
    elapsed_ms: float | None = None
    # The comparison with a --baseline run (`compare.RunDiff`), shown by the HTML report.
    comparison: Any = None
    shard: str | None = None  # "I/N" when the run is one shard of a suite (`--shard`)
    # A shard's plan: what it is a part of, with its digest (`assertly._digests`).
    plan: dict[str, Any] | None = None
    # What the judge of model-graded assertions cost ({cost_usd, tokens, calls, cached}); None
    # when the run asked no judge.
    judge: dict[str, Any] | None = None
    # What the simulated user of conversation tests cost (the same keys); None: none was used.
    simulator: dict[str, Any] | None = None
    # A matrix run's target labels, in order (the first is the base of comparisons); empty
    # for a run of one target.
    targets: list[str] = field(default_factory=list)
    # What the run is called (``--name``), and where it was made: {host, git: {commit, branch,
    # dirty}} (`runner._provenance`); None for a run stored before runs kept them.
    name: str | None = None
    provenance: dict[str, Any] | None = None
    # Trials answered from the response cache (`--cache`); why the run budget stopped the
    # run (`--max-cost-usd`), or None.
    cached: int = 0
    budget_stopped: str | None = None

    def __repr__(self) -> str:
        # Short on purpose: asyncio formats the finished task's result (this record) when it
        # restores the SIGINT handler, and a full repr of 5,000 tests took 0.6 s.
        return f"RunRecord({self.run_id!r}, {len(self.tests)} tests, {len(self.evals)} evals)"

    def status_counts(self) -> dict[str, int]:
        """Tests by final status."""
        counted = getattr(self.tests, "status_counts", None)
        if counted is not None:
            return dict(counted())
        counts = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
        for test in self.tests:
            counts[test.status] += 1
        return counts

    def not_passed(self) -> Iterator[TestRecord]:
        """The tests that failed or errored, in run order (a stored run parses only those)."""
        select = getattr(self.tests, "not_passed", None)
        if select is not None:
            return cast(Iterator[TestRecord], select())
        return (test for test in self.tests if test.status in ("failed", "error"))

    def summary(self) -> dict[str, Any]:
        """Totals for the pinned ``summary`` object: tests only.

        Eval cases are not counted here: an eval suite is judged by its score against its
        threshold, reported in ``evals``.
        """
        counts = self.status_counts()
        total = sum(counts.values())
        judged = total - counts["skipped"]
        return {
            "total": total,
            "passed": counts["passed"],
            "failed": counts["failed"],
            "errored": counts["error"],
            "skipped": counts["skipped"],
            "pass_rate": (counts["passed"] / judged) if judged else 0.0,
            "duration_ms": round(self.duration_ms, 3),
            **{  # the judge's and the simulated user's spend, each only when it was asked
                f"{who}_{name}": spent[name]
                for who, spent in (("judge", self.judge), ("simulator", self.simulator))
                if spent
                for name in ("cost_usd", "tokens", "calls", "cached")
            },
            **({"cached": self.cached} if self.cached else {}),
            **({"budget_stopped": self.budget_stopped} if self.budget_stopped else {}),
        }

    @property
    def ok(self) -> bool:
        """Exit code 0: every test passed or was skipped, and every eval met its threshold."""
        counts = self.status_counts()
        tests_ok = counts["failed"] == 0 and counts["error"] == 0
        return tests_ok and all(suite.passed for suite in self.evals) and not self.problems

    def to_dict(self) -> dict[str, Any]:
        """The pinned shape of ``run -o report.json``."""
        return {
            "run_id": self.run_id,
            "started_at": self.started_at,
            **({"name": self.name} if self.name else {}),
            **({"targets": self.targets} if self.targets else {}),
            "summary": self.summary(),
            "tests": [test.to_dict() for test in self.tests],
            "evals": [suite.to_dict() for suite in self.evals],
            "problems": self.problems,
            "warnings": self.warnings,
        }
