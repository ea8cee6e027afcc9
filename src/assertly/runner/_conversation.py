"""Judging a conversation test's trial: turn by turn, then the whole conversation (issue 32).

A conversation trial calls the agent once per turn with the whole history as OpenAI Chat
Completions messages (``{"messages": [...]}`` merged with the conversation's ``input``). The
user's turns are the scripted ones, in order, then the simulated user's (a model playing the
user, `runner._simulator`). Each reply is judged by its turn's checks; a failed check does not
stop the conversation (later turns still tell what went wrong), while a call that fails (an
error, a timeout, a crash) ends the trial in an ``error`` naming its turn, and no later turn is
sent. Then the conversation's own checks judge the transcript: text assertions read the agent's
messages joined by blank lines, trajectory assertions every turn's tool calls in order, and a
model judge the transcript with roles (`TRANSCRIPT_KEY`).

The simulated part ends when the simulated user writes its stop token, when ``stop_when``
passes on a reply to a simulated turn, or at ``max_turns`` agent replies (scripted turns count;
every scripted turn is always sent, so no stop rule can skip a scripted turn's checks).

`run_conversation` drives a run (calls, simulator); `recheck_conversation` judges a stored trial
again without calling anything. Both record the same steps (see `_records.StepRecord`): one per
turn, named ``turn N``, then the conversation's own, named ``conversation``.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from .._check_records import AssertionRecord, CheckRecord
from .._records import CONVERSATION_STEP, StepRecord, TrialRecord
from .._spans import MissingCalls, merged_spans
from ..engine import CheckContext, Response
from ..engine._context import CallMetrics
from ..engine.graded._judging import TRANSCRIPT_KEY
from ..engine.graded._reply_text import arguments_text, assistant_reply
from ..loading import Conversation, SimulatedUser, Step, TestCase
from ._answer import Answering, answer_step
from ._steps import Answer, StepChecker, StepFailure

if TYPE_CHECKING:
    from ..targets import Target

__all__ = [
    "SimulatedMessage",
    "Simulate",
    "converse",
    "recheck_conversation",
    "run_conversation",
]


class SimulatedMessage(Protocol):
    """The simulated user's next message (`runner._simulator.SimulatedMessage`)."""

    @property
    def text(self) -> str:
        """The message, its stop token removed."""
        ...

    @property
    def ended(self) -> bool:
        """Whether the simulated user wrote its stop token."""
        ...

    @property
    def cost_usd(self) -> float:
        """What writing it cost."""
        ...

    @property
    def tokens(self) -> int:
        """The tokens it took."""
        ...


# The simulated user's next message, from its persona and the history so far (the agent's
# view: roles user/assistant); a str is why it could not write one.
Simulate = Callable[[SimulatedUser, list[dict[str, Any]]], Awaitable["SimulatedMessage | str"]]
# A turn's answer: (turn's name, the request) -> the agent's answer, or why there is none.
Respond = Callable[[str, dict[str, Any]], Awaitable[Answer | StepFailure]]


class Conversing(Answering, Protocol):
    """What a conversation trial needs of the run (`Runner`; no import of it: no cycle)."""

    async def _check_step(
        self, step: Step, output: Any, context: CheckContext, called: bool
    ) -> StepRecord:
        """A step's verdict (`Runner._check_step`)."""
        ...

    @property
    def options(self) -> Any:
        """The run's options (``now``)."""
        ...

    def simulator_for(self) -> Any:
        """The run's simulated user (None: there is none)."""
        ...


async def converse(
    runner: Conversing,
    test: TestCase,
    target: Target | None,
    timeout: float,
    record: TrialRecord,
) -> None:
    """Run a conversation test's trial into ``record``: `run_conversation` with the run's parts.

    One id for the trial's conversation, sent with every turn: a stateful agent keeps its
    state by it.
    """
    conversation = test.conversation
    assert conversation is not None
    conversation_id = uuid.uuid4().hex

    def respond(name: str, request: dict[str, Any]) -> Awaitable[Answer | StepFailure]:
        step = Step(name, request, [])
        return answer_step(runner, test, target, timeout, record, step, conversation_id)

    async def simulate(user: SimulatedUser, history: list[dict[str, Any]]) -> Any:
        simulator = runner.simulator_for()
        if simulator is None:
            return "no model plays the simulated user: add simulator: (or judge:) to the config"
        return await simulator.next_message(user, history)

    await run_conversation(
        record,
        conversation,
        respond,
        runner._check_step,
        simulate if conversation.simulated_user is not None else None,
        now=runner.options.now,
    )


@dataclass(slots=True)
class _Transcript:
    """The conversation so far: the agent's view of it, and what the whole-checks read."""

    history: list[dict[str, Any]] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    traced: bool = False  # some turn's tool calls could be read
    # Some turn's reply was structured (not text) with no tool calls that could be read: what
    # it did is unknown, so the conversation's trajectory is too (never "no call", a pass).
    untraced: bool = False
    metrics: list[CallMetrics] = field(default_factory=list)
    called: bool = False

    def add(self, user: str, output: Any, metrics: CallMetrics, called: bool) -> Any:
        """Add a turn; returns its tool calls as the turn's record keeps them."""
        text, calls, message = assistant_reply(output, metrics.tool_calls)
        self.history += [{"role": "user", "content": user}, message]
        self.texts.append(text)
        self.lines += [f"User: {user}", f"Assistant: {text}"]
        if calls is None and isinstance(Response(output).whole_json, dict | list):
            self.untraced = True
        if calls is not None:
            self.traced = True
            self.calls += calls
            if calls:
                listed = "; ".join(
                    f"{call['name']}({arguments_text(call['arguments'])})" for call in calls
                )
                self.lines.append(f"Assistant tool calls: {listed}")
        self.metrics.append(metrics)
        self.called = self.called or called
        return metrics.tool_calls if metrics.tool_calls is not None else calls

    def context(self, now: datetime | None) -> CheckContext:
        """The whole conversation's context: its calls, costs, time, and the transcript."""
        latencies = [m.latency_ms for m in self.metrics]
        costs = [m.cost_usd for m in self.metrics]
        models = list(dict.fromkeys(m.model for m in self.metrics if m.model))
        # traces: {prefer: true} and a turn without spans: the whole conversation's calls
        # cannot be read either (never the other turns' calls alone).
        missing = next(
            (m.tool_calls for m in self.metrics if type(m.tool_calls) is MissingCalls), None
        )
        return CheckContext(
            cost_usd=None if None in costs or not costs else sum(c or 0.0 for c in costs),
            latency_ms=None
            if None in latencies or not latencies
            else sum(v or 0.0 for v in latencies),
            model=", ".join(models) or None,
            now=now,
            tool_calls=missing or (self.calls if self.traced and not self.untraced else None),
            extra={TRANSCRIPT_KEY: "\n\n".join(self.lines)},
            spans=merged_spans([m.spans for m in self.metrics]),
        )


async def run_conversation(
    record: TrialRecord,
    conversation: Conversation,
    respond: Respond,
    judge: StepChecker,
    simulate: Simulate | None,
    *,
    now: datetime | None,
) -> None:
    """Run a conversation trial into ``record`` (its steps, status, score, error).

    Args:
        record: The trial's record (comes in ``passed``).
        conversation: The test's conversation.
        respond: A turn's call of the agent.
        judge: A step's verdict on an output (the runner's, so model judges and the check
            process work as for any step).
        simulate: The simulated user (None when the conversation has none).
        now: The clock date assertions read (``--now``).
    """
    simulated = conversation.simulated_user
    scripted = len(conversation.turns)
    limit = scripted if simulated is None else max(scripted, simulated.max_turns)
    of = f"{limit}" if simulated is None else f"up to {limit}"
    transcript = _Transcript()
    ended = "turns" if simulated is None else "max_turns"
    # The simulated user's cost of a message not sent (its stop): kept on the whole step.
    spent: tuple[float, int] | None = None
    for index in range(limit):
        name = f"turn {index + 1}"
        said = await _user_turn(conversation, index, transcript, simulate)
        if isinstance(said, str):
            why = f"the simulated user could not write its message: {said}"
            record.steps.append(StepRecord(name, "error", error=why, user=""))
            record.status, record.error = "error", f"{name} of {of}: {why}"
            return
        user, checks, cost = said
        if user is None:  # the simulated user wrote its stop token
            ended, spent = "stop_token", cost
            break
        request = {
            **(conversation.input or {}),
            "messages": [*transcript.history, {"role": "user", "content": user}],
        }
        answer = await respond(name, request)
        if isinstance(answer, StepFailure):
            failed = answer.step or StepRecord(name, "error", error=answer.error)
            failed.name, failed.user = name, user
            _spend(failed, cost)
            record.steps.append(failed)
            why = failed.error or answer.error or "the call failed"
            record.status, record.error = "error", f"{name} of {of}: {why}"
            return
        metrics = answer.metrics
        calls = transcript.add(user, answer.output, metrics, answer.called)
        judged = await _judge_turn(
            judge, Step(name, request, checks), answer, metrics, calls, user, now
        )
        _spend(judged, cost)
        record.steps.append(judged)
        if simulated is not None and index >= scripted and simulated.stop_when:
            context = CheckContext.of_call(metrics, steps=None, now=now)
            stop = await judge(
                Step("stop_when", request, simulated.stop_when), answer.output, context, False
            )
            if stop.status == "passed":
                ended = "stop_when"
                break
    if not transcript.texts:
        # Nothing the agent said was judged: never a pass (a not-contains would pass on "").
        record.status = "error"
        record.error = "the simulated user ended the conversation before the agent replied once"
        return
    await _finish(record, judge, conversation, transcript, (ended, spent), now)


async def _user_turn(
    conversation: Conversation,
    index: int,
    transcript: _Transcript,
    simulate: Simulate | None,
) -> tuple[str | None, list[Any], tuple[float, int] | None] | str:
    """Turn ``index``'s user message, its checks and the simulator's cost of it.

    The message is None when the simulated user ended the conversation; a str is why the
    simulated user could not write one.
    """
    if index < len(conversation.turns):
        turn = conversation.turns[index]
        return turn.user, turn.checks, None
    simulated = conversation.simulated_user
    assert simulated is not None and simulate is not None
    if index == len(conversation.turns) and simulated.first_message is not None:
        return simulated.first_message, [], None
    message = await simulate(simulated, list(transcript.history))
    if isinstance(message, str):
        return message
    cost = (message.cost_usd, message.tokens)
    return (None if message.ended else message.text), [], cost


async def recheck_conversation(
    record: TrialRecord,
    conversation: Conversation,
    stored: Sequence[StepRecord],
    judge: StepChecker,
    *,
    error: str | None,
    now: datetime | None,
) -> None:
    """Judge a stored conversation trial again into ``record``, calling nothing.

    Each stored turn's reply is judged by its turn's checks as they are now (a simulated turn
    has none), then the transcript by the conversation's. A trial whose call failed keeps its
    error; a scripted turn whose user message is no longer the one the agent answered is an
    error (its reply answers another question: run again).

    Args:
        record: The new trial record (comes in ``passed``).
        conversation: The test's conversation as loaded now.
        stored: The stored trial's steps.
        judge: A step's verdict on an output.
        error: The stored trial's error.
        now: The clock date assertions read.
    """
    changed = _turns_changed(conversation, stored)
    if changed is not None:
        record.status, record.error = "error", changed
        return
    transcript = _Transcript()
    ended = "turns"
    spent: tuple[float, int] | None = None
    for index, old in enumerate(stored):
        if old.user is None:  # the conversation's own step: how it ended, what its stop cost
            ended = old.ended or ended
            if old.simulator_cost_usd is not None or old.simulator_tokens is not None:
                spent = (old.simulator_cost_usd or 0.0, old.simulator_tokens or 0)
            continue
        if old.status == "error" and old.output is None:
            record.steps.append(old)  # no reply to judge: the stored error stands
            record.status, record.error = "error", error or old.error
            return
        checks = conversation.turns[index].checks if index < len(conversation.turns) else []
        if index < len(conversation.turns) and conversation.turns[index].user != old.user:
            why = (
                f"{old.name}'s user message changed since the run (the reply answers "
                f"{_short(old.user)!r}, the test now says "
                f"{_short(conversation.turns[index].user)!r}): run the test again"
            )
            record.steps.append(StepRecord(old.name, "error", error=why, user=old.user))
            record.status, record.error = "error", why
            return
        metrics = CallMetrics(
            old.latency_ms, old.cost_usd, old.model, old.tokens, old.tool_calls, old.spans
        )
        calls = transcript.add(old.user, old.output, metrics, False)
        answer = Answer(old.output, metrics)
        judged = await _judge_turn(
            judge, Step(old.name, None, checks), answer, metrics, calls, old.user, now
        )
        judged.simulator_cost_usd, judged.simulator_tokens = (
            old.simulator_cost_usd,
            old.simulator_tokens,
        )
        record.steps.append(judged)
    await _finish(record, judge, conversation, transcript, (ended, spent), now)


def _turns_changed(conversation: Conversation, stored: Sequence[StepRecord]) -> str | None:
    """Why a stored conversation no longer fits the test's scripted turns, or None.

    A scripted turn added since the run was never sent: judging the stored turns alone would
    skip its checks (a pass the test no longer earns). A stored turn beyond the script, with
    no simulated user now, answers a turn the test no longer has.
    """
    sent = sum(1 for step in stored if step.user is not None)
    finished = any(step.user is None for step in stored)  # the conversation's own step
    scripted = len(conversation.turns)
    if finished and sent < scripted:
        return (
            f"the test now has {scripted} scripted turns, the run sent {sent}: the turns "
            "added were never answered; run the test again"
        )
    if conversation.simulated_user is None and sent > scripted:
        return (
            f"the run sent {sent} turns, the test now has {scripted} scripted turns and no "
            "simulated user: run the test again"
        )
    return None


async def _judge_turn(
    judge: StepChecker,
    step: Step,
    answer: Answer,
    metrics: CallMetrics,
    calls: Any,
    user: str,
    now: datetime | None,
) -> StepRecord:
    """A turn's record: its checks on the reply, judged with the turn's tool calls.

    The calls the record keeps are the ones judged (reported, else read from the reply), so a
    recheck of the stored turn reads exactly what the run read.
    """
    turn_metrics = CallMetrics(
        metrics.latency_ms, metrics.cost_usd, metrics.model, metrics.tokens, calls, metrics.spans
    )
    context = CheckContext.of_call(turn_metrics, steps=None, now=now)
    judged = await judge(step, answer.output, context, answer.called)
    judged.latency_ms, judged.cost_usd = metrics.latency_ms, metrics.cost_usd
    judged.model, judged.tokens = metrics.model, metrics.tokens
    judged.tool_calls, judged.user, judged.spans = calls, user, metrics.spans
    return judged


async def _judge_whole(
    judge: StepChecker,
    conversation: Conversation,
    transcript: _Transcript,
    ended: str,
    now: datetime | None,
) -> StepRecord:
    """The conversation's own step: its checks on the agent's messages, and how it ended."""
    output = "\n\n".join(transcript.texts)
    step = Step(CONVERSATION_STEP, None, conversation.checks)
    judged = await judge(step, output, transcript.context(now), transcript.called)
    judged.ended = ended
    simulated = conversation.simulated_user
    if simulated is not None and simulated.require_stop and ended == "max_turns":
        message = (
            f"the conversation reached max_turns ({simulated.max_turns}) without the simulated "
            f"user writing {simulated.stop_token!r}"
            + (" or stop_when passing" if simulated.stop_when else "")
            + " (require_stop: true)"
        )
        result = AssertionRecord("require_stop", "failed", message, expected=True, actual=False)
        judged.checks = [*judged.checks, CheckRecord(False, 0.0, [result], outcome="failed")]
        judged.status = "failed"
    return judged


async def _finish(
    record: TrialRecord,
    judge: StepChecker,
    conversation: Conversation,
    transcript: _Transcript,
    ending: tuple[str, tuple[float, int] | None],
    now: datetime | None,
) -> None:
    """Judge the whole conversation into its own step, then settle the trial's verdict."""
    ended, spent = ending
    whole = await _judge_whole(judge, conversation, transcript, ended, now)
    _spend(whole, spent)
    record.steps.append(whole)
    _settle(record)


def _spend(step: StepRecord, cost: tuple[float, int] | None) -> None:
    if cost is not None:
        step.simulator_cost_usd, step.simulator_tokens = cost


def _settle(record: TrialRecord) -> None:
    """The trial's status (a failure outranks an error) and score (the steps' mean)."""
    statuses = {step.status for step in record.steps}
    record.status = (
        "failed" if "failed" in statuses else "error" if "error" in statuses else "passed"
    )
    scores = [step.score if step.score is not None else 0.0 for step in record.steps]
    record.score = sum(scores) / len(scores) if scores else 0.0


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
