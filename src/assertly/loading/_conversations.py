"""Conversation tests: scripted turns and a simulated user, loaded into `Conversation`."""

from __future__ import annotations

from .._exceptions import Problem
from ._cases import Conversation, SimulatedUser, TestCase, Turn
from ._checks import LoadContext, compile_checks
from ._models import TestModel
from ._source import Key, Source

__all__ = ["fill_conversation"]


def fill_conversation(
    test: TestCase,
    model: TestModel,
    source: Source,
    key: Key,
    context: LoadContext,
    shape: dict[str, str],
) -> None:
    """A conversation test: its turns' checks, its stop rule's, and the whole conversation's."""
    conversation = model.conversation
    assert conversation is not None
    where = f"{source.where((*key, 'conversation'))}: {test.id}"
    for beside in ("input", "multi_step"):
        if getattr(model, beside) is not None:
            hint = (
                "put what every request carries in conversation.input"
                if beside == "input"
                else "a conversation's turns are its steps"
            )
            test.problems.append(
                Problem(
                    f"{source.where((*key, beside))}: {test.id}",
                    f"a test has either conversation or {beside}, not both: {hint}",
                )
            )
    if not conversation.turns and conversation.simulated_user is None:
        test.problems.append(
            Problem(where, "a conversation needs turns, a simulated_user, or both")
        )
    label = (test.id, len(key))
    found = Conversation(input=conversation.input)
    for number, turn in enumerate(conversation.turns or ()):
        checks, problems = compile_checks(
            turn.expect,
            turn.assertions,
            None,
            source,
            (*key, "conversation", "turns", number),
            context,
            label=label,
            shape=shape,
        )
        test.problems.extend(problems)
        found.turns.append(Turn(turn.user, checks))
    simulated = conversation.simulated_user
    if simulated is not None:
        stop_when, problems = compile_checks(
            None,
            simulated.stop_when,
            None,
            source,
            (*key, "conversation", "simulated_user"),
            context,
            label=label,
            typed_key="stop_when",
        )
        test.problems.extend(problems)
        found.simulated_user = SimulatedUser(
            simulated.persona,
            simulated.first_message,
            simulated.max_turns,
            stop_when,
            simulated.stop_token,
            simulated.require_stop,
        )
    checks, problems = compile_checks(
        model.expect,
        model.assertions,
        model.threshold,
        source,
        key,
        context,
        label=label,
        shape=shape,
    )
    test.problems.extend(problems)
    found.checks = checks
    test.conversation = found
