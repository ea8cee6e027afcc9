"""Conversation tests, loaded: from a test file's ``conversation:`` and from a dataset line.

A test file's conversation has scripted turns (each with its own checks), a simulated user
(with a ``stop_when`` rule), or both; the test's own expect/assertions judge the whole
conversation. A dataset line's ``conversation`` says only what the user says (turns as
strings or ``{user}``) and who the simulated user is, with the line's ``vars`` filled into
those texts; the suite's checks judge the whole conversation. Both become the same runtime
`Conversation`, so the runner needs nothing else.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from .._exceptions import Problem
from ..engine import Expectation
from ._cases import Conversation, SimulatedUser, TestCase, Turn
from ._compiling import LoadContext, compile_checks
from ._models import FileModel, SimulatedUserModel, TestModel, TurnModel
from ._problems import _did_you_mean
from ._references import MISSING, fill_text, missing_message
from ._source import Key, Source

__all__ = ["conversation_shape_problems", "fill_conversation", "line_conversation"]

_MESSAGES = (
    "conversation.input may not hold 'messages': the agent receives the conversation's "
    "history as messages, which would overwrite it (script earlier messages as turns)"
)


def conversation_shape_problems(raw: Any, source: Source, key: Key, test_id: str) -> list[Problem]:
    """What is wrong with where a test's ``conversation`` stands, read from the raw test.

    Read from the file's data, not the model, so they are reported even when the test has
    other problems (an unknown key makes its model None): ``conversation`` beside ``input``
    or ``multi_step``, and ``messages`` in ``conversation.input``.
    """
    if not isinstance(raw, dict) or raw.get("conversation") is None:
        return []
    problems = []
    for beside, hint in (
        ("input", "put what every request carries in conversation.input"),
        ("multi_step", "a conversation's turns are its steps"),
    ):
        if raw.get(beside) is not None:
            problems.append(
                Problem(
                    f"{source.where((*key, beside))}: {test_id}",
                    f"a test has either conversation or {beside}, not both: {hint}",
                )
            )
    conversation = raw["conversation"]
    given = conversation.get("input") if isinstance(conversation, dict) else None
    if isinstance(given, dict) and "messages" in given:
        where = source.where((*key, "conversation", "input", "messages"))
        problems.append(Problem(f"{where}: {test_id}", _MESSAGES))
    return problems


def fill_conversation(
    test: TestCase,
    model: TestModel,
    source: Source,
    key: Key,
    context: LoadContext,
    shape: dict[str, str],
) -> None:
    """A conversation test: its turns' checks, its stop rule's, and the whole conversation's.

    Every problem is the test's (it ends ``error``; ``validate`` lists them all), each at
    its own line.
    """
    conversation = model.conversation
    assert conversation is not None
    if not conversation.turns and conversation.simulated_user is None:
        empty = conversation.turns is not None
        where = source.where((*key, "conversation", *(("turns",) if empty else ())))
        message = (
            "conversation.turns is empty and there is no simulated_user, so nothing would be said"
            if empty
            else "a conversation needs turns, a simulated_user, or both"
        )
        test.problems.append(Problem(f"{where}: {test.id}", message))
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
        found.simulated_user = _simulated(simulated, stop_when)
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


def _simulated(model: SimulatedUserModel, stop_when: list[Expectation]) -> SimulatedUser:
    return SimulatedUser(
        model.persona,
        model.first_message,
        model.max_turns,
        stop_when,
        model.stop_token,
        model.require_stop,
    )


class LineConversationModel(FileModel):
    """A dataset line's ``conversation``: what the user says, turn by turn, and who plays it."""

    input: dict[str, Any] | None = None
    turns: list[str | TurnModel] | None = None
    simulated_user: SimulatedUserModel | None = None


_LINE_CHECKS = (
    "a dataset line's conversation says what the user says; the suite's expect/assertions "
    "judge the whole conversation (per-turn checks and stop_when belong to a conversation "
    "test in a test file)"
)


def line_conversation(
    line: dict[str, Any], variables: Any, where: str
) -> tuple[Conversation | None, list[Problem]]:
    """A dataset line's conversation (its checks left to the caller), or its problems.

    ``{{ vars.NAME }}`` and ``{{ expected }}`` in the user texts, the persona and the first
    message take the line's values, as in the suite's assertions.

    Args:
        line: The line's JSON object (it has ``conversation``).
        variables: The line's ``vars``.
        where: The line, ``file:line``.
    """
    problems: list[Problem] = []
    for beside, why in (
        ("input", "put what every request carries in conversation.input"),
        (
            "output",
            "a conversation is sent to the agent turn by turn; a recorded output has "
            "no turns to judge (record it as a line without conversation)",
        ),
    ):
        if beside in line:
            problems.append(Problem(where, f"a line has either conversation or {beside}: {why}"))
    try:
        model = LineConversationModel.model_validate(line["conversation"])
    except ValidationError as error:
        for item in error.errors(include_url=False):
            inner = ".".join(str(part) for part in ("conversation", *item["loc"]))
            if item["type"] == "extra_forbidden":
                message = f"unknown key '{item['loc'][-1]}'" + _did_you_mean(str(item["loc"][-1]))
            else:
                message = f"{item['msg'].lower()}, got {item['input']!r}"
            problems.append(Problem(where, f"{inner}: {message}"))
        return None, problems
    if model.input is not None and "messages" in model.input:
        problems.append(Problem(where, f"conversation.input.messages: {_MESSAGES}"))
    if not model.turns and model.simulated_user is None:
        problems.append(
            Problem(where, "a line's conversation needs turns, a simulated_user, or both")
        )
    expected = line.get("expected", MISSING)
    texts: list[str] = []
    for number, turn in enumerate(model.turns or ()):
        text = turn if isinstance(turn, str) else turn.user
        if isinstance(turn, TurnModel) and (turn.expect is not None or turn.assertions is not None):
            problems.append(Problem(where, f"conversation.turns[{number}]: {_LINE_CHECKS}"))
        texts.append(_filled(text, variables, expected, f"turns[{number}]", where, problems))
    found = Conversation(turns=[Turn(text) for text in texts], input=model.input)
    simulated = model.simulated_user
    if simulated is not None:
        if simulated.stop_when is not None:
            problems.append(Problem(where, f"conversation.simulated_user: {_LINE_CHECKS}"))
        persona = _filled(simulated.persona, variables, expected, "persona", where, problems)
        first = simulated.first_message
        if first is not None:
            first = _filled(first, variables, expected, "first_message", where, problems)
        found.simulated_user = _simulated(
            simulated.model_copy(update={"persona": persona, "first_message": first}), []
        )
    return (None, problems) if problems else (found, [])


def _filled(
    text: str, variables: Any, expected: Any, name: str, where: str, problems: list[Problem]
) -> str:
    filled, missing = fill_text(text, variables, expected)
    if missing:
        problems.append(
            Problem(where, f"conversation.{name}: {missing_message(missing, variables)}")
        )
    return filled
