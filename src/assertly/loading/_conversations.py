"""Conversation tests: scripted turns and a simulated user, loaded into `Conversation`.

A conversation comes from a test file (`fill_conversation`: problems at their own line) or
from a dataset line (`line_conversation`: problems at the line, the key named in the
message). Both go through `build_conversation`, so they obey the same rules and give the
runner the same objects.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import ValidationError

from .._exceptions import ConfigError, Problem
from ..engine import Expectation
from ._cases import Conversation, SimulatedUser, TestCase, Turn
from ._checks import LoadContext, compile_checks
from ._models import ConversationModel, TestModel
from ._problems import key_parts, validation_message
from ._references import Template, has_references, missing_problem
from ._source import Key, Source

__all__ = ["beside_conversation", "build_conversation", "fill_conversation", "line_conversation"]

Checks = Callable[[dict[str, Any] | None, list[Any] | None, Key, str], list[Expectation]]
"""``(expect, assertions, key within the conversation, typed key)`` → the compiled checks.

The caller records the problems found, at the place it knows.
"""

_NEEDS_USER = "a conversation needs turns, a simulated_user, or both"
_MESSAGES = (
    "conversation.input cannot carry 'messages': the agent gets the conversation's history "
    "as messages on every turn, which would overwrite it; write what the user says as turns"
)
# Filled as text from a dataset line's vars, whatever the value's type: what the user says.
_TEXT_KEYS = frozenset({"user", "persona", "first_message", "stop_token"})


_BESIDE = {
    "input": "put what every request carries in conversation.input",
    "multi_step": "a conversation's turns are its steps",
    "output": "a conversation is sent to the agent, never judged as recorded",
}


def beside_conversation(what: str, key: str) -> str:
    """Why a ``what`` (test, line) cannot have ``key`` (input, multi_step, output) too."""
    return f"a {what} has either conversation or {key}, not both: {_BESIDE[key]}"


def build_conversation(
    model: ConversationModel, checks: Checks
) -> tuple[Conversation, list[tuple[Key, str]]]:
    """The runtime conversation of ``model``, and what is wrong with its shape.

    Args:
        model: The validated ``conversation:`` mapping.
        checks: Compiles a turn's (or ``stop_when``'s) checks; see `Checks`.

    Returns:
        The conversation, and ``(key within the conversation, message)`` for each problem of
        its shape (neither turns nor a simulated user; ``messages`` in its input).
    """
    problems: list[tuple[Key, str]] = []
    if not model.turns and model.simulated_user is None:
        problems.append(((), _NEEDS_USER))
    if model.input is not None and "messages" in model.input:
        problems.append((("input", "messages"), _MESSAGES))
    found = Conversation(input=model.input)
    for number, turn in enumerate(model.turns or ()):
        turn_checks = checks(turn.expect, turn.assertions, ("turns", number), "assertions")
        found.turns.append(Turn(turn.user, turn_checks))
    simulated = model.simulated_user
    if simulated is not None:
        found.simulated_user = SimulatedUser(
            simulated.persona,
            simulated.first_message,
            simulated.max_turns,
            checks(None, simulated.stop_when, ("simulated_user",), "stop_when"),
            simulated.stop_token,
            simulated.require_stop,
        )
    return found, problems


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
    label = (test.id, len(key))
    for beside in ("input", "multi_step"):
        if getattr(model, beside) is not None:
            where = f"{source.where((*key, beside))}: {test.id}"
            test.problems.append(Problem(where, beside_conversation("test", beside)))

    def checks(
        expect: dict[str, Any] | None, assertions: list[Any] | None, inner: Key, typed_key: str
    ) -> list[Expectation]:
        found, problems = compile_checks(
            expect,
            assertions,
            None,
            source,
            (*key, "conversation", *inner),
            context,
            label=label,
            shape=shape,
            typed_key=typed_key,
        )
        test.problems.extend(problems)
        return found

    found, shape_problems = build_conversation(conversation, checks)
    for inner, message in shape_problems:
        where = source.where((*key, "conversation", *inner))
        test.problems.append(Problem(f"{where}: {test.id}", message))
    if (conversation.turns or conversation.simulated_user) and not _judged(model):
        test.problems.append(
            Problem(
                f"{source.where((*key, 'conversation'))}: {test.id}",
                "the conversation has no expect and no assertions (on a turn or beside "
                "conversation) and no require_stop, so nothing would be judged",
            )
        )
    found.checks, problems = compile_checks(
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
    test.conversation = found


def _judged(model: TestModel) -> bool:
    """Whether a conversation test judges anything (a stop rule alone only ends it)."""
    conversation = model.conversation
    assert conversation is not None
    simulated = conversation.simulated_user
    return (
        model.expect is not None
        or model.assertions is not None
        or any(t.expect is not None or t.assertions is not None for t in conversation.turns or ())
        or (simulated is not None and simulated.require_stop)
    )


def line_conversation(
    raw: Any,
    variables: Any,
    expected: Any,
    where: str,
    compile: Callable[..., Expectation],
    shape: dict[str, str] | None = None,
) -> tuple[Conversation | None, list[Problem]]:
    """A dataset line's ``conversation``, with the line's references filled in.

    A turn may be written as its user text alone (``turns: ["Hi", "Go ahead"]``). Every
    ``{{ vars.NAME }}`` / ``{{ expected }}`` in it takes the line's value as
    the suite's assertions do, except that what the user says (``user``, ``persona``,
    ``first_message``, ``stop_token``) always takes it as text.

    Args:
        raw: The line's ``conversation`` value.
        variables: The line's ``vars``.
        expected: The line's ``expected`` (`_references.MISSING` when absent).
        where: The line (``file:line``), where every problem is.
        compile: ``compile(spec, threshold=, location=, shape=)`` for a turn's checks and
            ``stop_when``.
        shape: The suite's ``shape:`` (read by a turn's ``expect``).

    Returns:
        The conversation (None when it cannot be built), and the problems found.
    """
    if not isinstance(raw, Mapping):
        message = f"conversation must be a mapping (turns and/or simulated_user), got {raw!r}"
        return None, [Problem(where, message)]
    data = dict(raw)
    if isinstance(data.get("turns"), list):
        data["turns"] = [{"user": t} if isinstance(t, str) else t for t in data["turns"]]
    if has_references(data):
        template = Template(data)
        values = template.values(variables, expected)
        if isinstance(values, list):
            return None, [missing_problem(values, variables, where)]
        data = template.fill(values, text_keys=_TEXT_KEYS)
    try:
        model = ConversationModel.model_validate(data)
    except ValidationError as error:
        return None, [
            Problem(where, f"{_dotted(('conversation', *item['loc']))}: {validation_message(item)}")
            for item in error.errors(include_url=False)
        ]
    problems: list[Problem] = []

    def checks(
        expect: dict[str, Any] | None, assertions: list[Any] | None, inner: Key, typed_key: str
    ) -> list[Expectation]:
        found: list[Expectation] = []
        for name, spec in (("expect", expect), (typed_key, assertions)):
            if spec is None:
                continue
            try:
                found.append(
                    compile(
                        spec,
                        threshold=None,
                        location=name,
                        shape=shape if name == "expect" else None,
                    )
                )
            except ConfigError as error:
                for problem in error.problems:
                    inside = ("conversation", *inner, *key_parts(problem.location))
                    problems.append(Problem(where, f"{_dotted(inside)}: {problem.message}"))
        return found

    found, shape_problems = build_conversation(model, checks)
    problems += [Problem(where, message) for _, message in shape_problems]  # (they say where)
    return (None if problems else found), problems


def _dotted(key: Key) -> str:
    return ".".join(str(part) for part in key)
