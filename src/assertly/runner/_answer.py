"""A step's answer in a run: recorded, from the response cache, or its target's call.

Where the response cache (``--cache``) and the run budget (``--max-cost-usd``) meet a call
(issue 34): a call is looked up in the cache first, and a hit costs nothing, so neither the
rate limit nor the budget applies to it; a miss under ``--cache replay`` or a call the budget
refuses ends the trial in an error; an answered call's cost is counted and the answer kept.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Protocol

from .._exceptions import TargetError
from .._records import StepRecord, TrialRecord
from .._spans import SpanSet
from ..loading import Step, TestCase
from ..targets import Target, TargetRequest, TargetResponse
from ..targets._base import metadata_from
from ._budget import RunBudget
from ._response_cache import REPLAY_MISS, ResponseCache, call_key
from ._steps import Answer, StepFailure
from ._support import RateLimiter
from ._tracing import RunTraces

if TYPE_CHECKING:
    from ..traces import CallTrace

__all__ = ["Answering", "answer_step", "call_key_of"]


class Answering(Protocol):
    """What a step's answer needs of the run (`Runner`; no import of it: no cycle)."""

    response_cache: ResponseCache
    budget: RunBudget
    traces: RunTraces
    _limiter: RateLimiter

    def target_spec(self, agent: str, label: str | None = None) -> tuple[Any, Any]:
        """The spec answering ``agent`` under ``label``, and its directory."""
        ...


async def answer_step(
    runner: Answering,
    test: TestCase,
    target: Target | None,
    timeout: float,
    trial: TrialRecord,
    step: Step,
    conversation_id: str | None = None,
) -> Answer | StepFailure:
    """A step's answer (timed when it calls); ``trial.cached`` set on a cache hit.

    A conversation's turn is a step whose input is the request (the history so far), sent
    with the conversation's id.
    """
    # Only a call is rate-limited, and judged in the check process when there is one.
    called = step.recorded is None and target is not None and not target.recorded
    key = call_key_of(runner, test, trial.trial, step) if called else None
    if key is not None:
        hit = runner.response_cache.lookup(key)
        if hit is not None and hit[0].spans is None and runner.traces.wanted(step):
            hit = None  # kept by a run that asked no spans: a miss, not a call without them
        if hit is not None:
            trial.cached = True
            kept, kept_ms = hit
            metrics = runner.traces.evidence(kept.metrics(kept_ms), kept.spans)
            return Answer(kept.output, metrics, True)
        if runner.response_cache.mode == "replay":
            return _refused(step, REPLAY_MISS)
    if called:
        await runner._limiter.wait()
        refused = runner.budget.refused()  # after the wait: the budget may be spent by now
        if refused is not None:
            return _refused(step, refused)
    call_trace: CallTrace | None = None
    call_started = time.perf_counter()
    response: TargetResponse
    try:
        if called:
            # A live call that asks for spans gets a trace of its own (the receiver's).
            call_trace = await runner.traces.expect(step)
            call_started = time.perf_counter()
        if step.recorded is not None:
            output, metadata = step.recorded
            response = TargetResponse(output=output, **metadata_from(metadata))
        elif target is None:
            raise TargetError(f"no target for agent '{test.agent}'")
        else:
            # A target of recorded responses answers by the test's id (step), else input.
            request_key = test.id if len(test.steps) == 1 else f"{test.id}/{step.name}"
            request = TargetRequest(
                step.input,
                timeout,
                request_key,
                conversation_id,
                call_trace.traceparent if call_trace is not None else None,
                runner.traces.endpoint if call_trace is not None else None,
            )
            response = await target.call(request)
    except TargetError as error:
        runner.traces.forget(call_trace)
        # Never cached (the next run calls again); whatever it cost was not reported.
        failed = StepRecord(step.name, "error", error=str(error))
        return StepFailure(f"step {step.name}: {error}", failed)
    except BaseException:
        runner.traces.forget(call_trace)
        raise
    # Only a call has a latency to measure: a recorded output that reports none was not
    # measured, so `latency` on it is an error, not a pass in 0 ms. (The wait for the
    # call's spans comes after: it is not the agent's latency.)
    measured = (time.perf_counter() - call_started) * 1000 if called else None
    spans: SpanSet | str | None = response.spans
    if call_trace is not None:
        spans = await runner.traces.collect(call_trace)
        response.spans = spans if isinstance(spans, SpanSet) else None
    metrics = runner.traces.evidence(response.metrics(measured), spans)
    if called:
        runner.budget.add(metrics.cost_usd)
    if key is not None and not isinstance(spans, str):  # never kept without its spans
        runner.response_cache.keep(key, response, measured)
    return Answer(response.output, metrics, called)


def call_key_of(runner: Answering, test: TestCase, trial: int, step: Step) -> str | None:
    """A call's key in the response cache, or None when the cache is off.

    The spec as configured (a matrix cell's own: `Runner.target_spec`), the request as sent
    (the step's input: a conversation's turn sends the whole history, so each turn has its
    own key), the trial.
    """
    if runner.response_cache.mode == "off":
        return None
    spec, _ = runner.target_spec(test.agent, test.target)
    if hasattr(spec, "model_dump"):  # a config entry (an HTTP or command target)
        spec = spec.model_dump(mode="json", exclude_none=True)
    return call_key(spec, step.input, trial, None)


def _refused(step: Step, why: str) -> StepFailure:
    """A step whose call may not be made (the run budget, a ``--cache replay`` miss)."""
    return StepFailure(f"step {step.name}: {why}", StepRecord(step.name, "error", error=why))
