"""The conversation loop's rules (issue 32), driven directly: who speaks, when it stops.

The agent is a function of the messages it gets and the simulated user a scripted list of
replies, so each rule is seen alone: scripted turns are always sent, the stop token, stop_when
and max_turns end the simulated part, require_stop fails a conversation that never stopped,
and a conversation the agent never answered is never a pass. Real agents, the real judge
client and the CLI are in test_conversation_run.py and the simulator's tests.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from assertly._records import TrialRecord
from assertly.engine import CheckContext
from assertly.engine import compile as compile_expectation
from assertly.engine._context import CallMetrics
from assertly.loading import Conversation, SimulatedUser, Step, Turn
from assertly.runner._conversation import run_conversation
from assertly.runner._steps import Answer, StepFailure, check_step


@dataclass
class Message:
    text: str
    ended: bool = False
    cost_usd: float = 0.001
    tokens: int = 10


class Agent:
    """Answers "reply N" on turn N; fails on a user message that says "fail"."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []

    async def __call__(self, name: str, request: dict[str, Any]) -> Answer | StepFailure:
        self.requests.append(request)
        last = request["messages"][-1]["content"]
        if last == "fail":
            return StepFailure("the agent failed")
        turn = sum(1 for m in request["messages"] if m["role"] == "user")
        return Answer(f"reply {turn}", CallMetrics(latency_ms=1.0, cost_usd=0.01), True)


class Simulator:
    """Says its scripted replies in order; records the history it was given each time."""

    def __init__(self, *replies: Message | str) -> None:
        self.replies = list(replies)
        self.histories: list[list[dict[str, Any]]] = []

    async def __call__(self, user: SimulatedUser, history: list[dict[str, Any]]) -> Any:
        self.histories.append(history)
        return self.replies.pop(0)


async def _judge(step: Step, output: Any, context: CheckContext, called: bool) -> Any:
    return check_step(step.name, step.checks, output, context)


def _typed(*assertions: dict[str, Any]) -> list[Any]:
    return [compile_expectation(list(assertions))]


def _run(
    conversation: Conversation, agent: Agent, simulator: Simulator | None = None
) -> TrialRecord:
    record = TrialRecord("t", 1, "passed", 0.0)
    asyncio.run(run_conversation(record, conversation, agent, _judge, simulator, now=None))
    return record


def _ended(record: TrialRecord) -> str | None:
    return record.steps[-1].ended


def test_scripted_turns_only_end_when_the_script_does() -> None:
    agent = Agent()
    turns = [Turn("a"), Turn("b", _typed({"type": "contains", "value": "reply 2"}))]
    record = _run(Conversation(turns=turns), agent)
    assert record.status == "passed"
    assert [step.name for step in record.steps] == ["turn 1", "turn 2", "conversation"]
    assert _ended(record) == "turns"
    assert record.steps[-1].output == "reply 1\n\nreply 2"


def test_the_stop_token_ends_the_simulated_part_and_its_message_is_not_sent() -> None:
    agent = Agent()
    simulator = Simulator(Message("second"), Message("bye", ended=True, cost_usd=0.5))
    user = SimulatedUser("a customer", first_message="first", max_turns=8)
    record = _run(Conversation(simulated_user=user), agent, simulator)
    sent = [request["messages"][-1]["content"] for request in agent.requests]
    assert sent == ["first", "second"]
    assert _ended(record) == "stop_token"
    # The simulator's cost: the turn it wrote, and the stop on the conversation's step.
    assert record.steps[1].simulator_cost_usd == 0.001
    assert record.steps[-1].simulator_cost_usd == 0.5
    # The simulator saw the agent's view of the history each time it was asked.
    assert [len(history) for history in simulator.histories] == [2, 4]


def test_stop_when_ends_the_conversation_on_the_reply_that_satisfies_it() -> None:
    agent = Agent()
    simulator = Simulator(*(Message(f"m{n}") for n in range(10)))
    user = SimulatedUser(
        "a customer", max_turns=8, stop_when=_typed({"type": "contains", "value": "reply 3"})
    )
    record = _run(Conversation(simulated_user=user), agent, simulator)
    assert len(agent.requests) == 3
    assert _ended(record) == "stop_when"
    assert record.status == "passed"


def test_max_turns_counts_every_reply_and_passes_unless_a_stop_is_required() -> None:
    user = SimulatedUser("a customer", max_turns=3)
    conversation = Conversation(turns=[Turn("scripted")], simulated_user=user)
    agent = Agent()
    record = _run(conversation, agent, Simulator(*(Message(f"m{n}") for n in range(10))))
    assert len(agent.requests) == 3  # one scripted, two simulated
    assert _ended(record) == "max_turns"
    assert record.status == "passed"
    user.require_stop = True
    record = _run(conversation, Agent(), Simulator(*(Message(f"m{n}") for n in range(10))))
    assert record.status == "failed"
    failure = record.failures[-1]
    assert failure.step == "conversation" and failure.assertion == "require_stop"
    assert "max_turns (3)" in failure.message


def test_stop_rules_never_skip_a_scripted_turn() -> None:
    user = SimulatedUser(
        "a customer", max_turns=1, stop_when=_typed({"type": "contains", "value": "reply"})
    )
    turns = [Turn("a"), Turn("b"), Turn("c", _typed({"type": "contains", "value": "reply 3"}))]
    agent = Agent()
    record = _run(Conversation(turns=turns, simulated_user=user), agent, Simulator())
    assert len(agent.requests) == 3
    assert record.status == "passed"


def test_a_failed_turn_check_goes_on_and_fails_the_trial() -> None:
    turns = [Turn("a", _typed({"type": "contains", "value": "nope"})), Turn("b")]
    agent = Agent()
    record = _run(Conversation(turns=turns), agent)
    assert len(agent.requests) == 2
    assert record.status == "failed"
    assert [step.status for step in record.steps] == ["failed", "passed", "passed"]


def test_a_failed_call_ends_the_trial_in_an_error_naming_its_turn() -> None:
    turns = [Turn("a"), Turn("fail"), Turn("never")]
    agent = Agent()
    record = _run(
        Conversation(turns=turns, checks=_typed({"type": "contains", "value": "x"})), agent
    )
    assert record.status == "error"
    assert record.error == "turn 2 of 3: the agent failed"
    assert len(agent.requests) == 2
    assert [step.name for step in record.steps] == ["turn 1", "turn 2"]
    assert record.steps[-1].user == "fail"


def test_a_simulator_that_cannot_write_is_an_error_of_its_turn() -> None:
    user = SimulatedUser("a customer", max_turns=4)
    simulator = Simulator(Message("hello"), "the simulator answered HTTP 500")
    record = _run(Conversation(simulated_user=user), Agent(), simulator)
    assert record.status == "error"
    assert record.error is not None and record.error.startswith("turn 2 of up to 4: ")
    assert "HTTP 500" in record.error


def test_a_conversation_the_agent_never_answered_is_never_a_pass() -> None:
    user = SimulatedUser("a customer", max_turns=4)
    checks = _typed({"type": "not-contains", "value": "refund"})
    agent = Agent()
    record = _run(
        Conversation(simulated_user=user, checks=checks), agent, Simulator(Message("", ended=True))
    )
    assert agent.requests == []
    assert record.status == "error"
    assert record.error is not None and "before the agent replied once" in record.error
