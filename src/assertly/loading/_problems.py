"""Problems of a file model, named where they are.

``file:line:col: test id: key``, with a did-you-mean for an unknown key.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ValidationError

from .._exceptions import Problem
from ._models import (
    AgentTestFileModel,
    ConfigModel,
    ConversationModel,
    EvalCaseModel,
    SimulatedUserModel,
    StepModel,
    SuiteModel,
    TestModel,
    TurnModel,
)
from ._source import Key, Source

__all__ = ["Label", "key_parts", "located", "located_in_file", "validate"]


Label = tuple[str, int]
"""A test's (or case's) id and the depth of its key: problems inside it are named by the id."""


def located(source: Source, key: Key, label: Label | None) -> str:
    """Where a problem is: ``file:line:col: a.dotted.key``.

    For a key inside a test or case: ``file:line:col: ID: key.within.it``, so every problem
    names the test id as well as the place.
    """
    where = source.where(key)
    if label is None:
        return f"{where}: " + ".".join(str(part) for part in key)
    name, depth = label
    inner = ".".join(str(part) for part in key[depth:])
    return f"{where}: {name}" + (f": {inner}" if inner else "")


def key_parts(location: str) -> Key:
    """``expect.one_of[1].status`` → ``("expect", "one_of", 1, "status")``."""
    parts: list[str | int] = []
    for chunk in location.replace("[", ".[").split("."):
        if not chunk:
            continue
        if chunk.startswith("[") and chunk.endswith("]") and chunk[1:-1].lstrip("-").isdigit():
            parts.append(int(chunk[1:-1]))
        else:
            parts.append(chunk)
    return tuple(parts)


def located_in_file(source: Source, problems: Iterable[Problem], base: Key) -> list[Problem]:
    """An expectation's problems, each named ``file:line:col: key`` in the file it came from.

    The expectation is ``source``'s data at ``base`` (``()``, or ``("assertions",)`` for a
    test case given whole). A problem's key starts with the dialect's root (``expect`` or
    ``assertions``), which stands for ``base``; any other key (``threshold``) is the file's.
    """
    found = []
    for problem in problems:
        parts = key_parts(problem.location)
        rooted = parts[:1] in (("expect",), ("assertions",))
        key = (*base, *parts[1:]) if rooted else parts
        found.append(Problem(f"{source.where(key)}: {problem.location}", problem.message))
    return found


def _validation_problems(
    source: Source, base: Key, error: ValidationError, label: Label | None = None
) -> list[Problem]:
    problems = []
    for item in error.errors(include_url=False):
        key = (*base, *item["loc"])
        if item["type"] == "extra_forbidden":
            message = f"unknown key '{item['loc'][-1]}'" + _did_you_mean(str(item["loc"][-1]))
        elif item["type"] == "missing":
            message = "required key is missing"
        elif item["type"] == "value_error":  # our own validators' words, as written
            message = f"{item['ctx']['error']}, got {item['input']!r}"
        else:
            message = f"{item['msg'].lower()}, got {item['input']!r}"
        problems.append(Problem(located(source, key, label), message))
    return problems


def _did_you_mean(key: str) -> str:
    """A hint for an unknown key: where it belongs, else a close spelling.

    A key known elsewhere is never "did you mean" itself ("unknown key 'agent' (did you mean
    'agent'?)"): it says where it belongs.
    """
    import difflib

    places = (
        (AgentTestFileModel, "at the top of a test file"),
        (SuiteModel, "in a suite"),
        (TestModel, "in a test"),
        (StepModel, "in a step of multi_step"),
        (ConversationModel, "in a test's conversation"),
        (TurnModel, "in a turn of conversation.turns"),
        (SimulatedUserModel, "in conversation.simulated_user"),
        (EvalCaseModel, "in an eval case"),
        (ConfigModel, "in the project config (assertly.yaml)"),
    )
    belongs = [where for model, where in places if key in model.model_fields]
    if belongs:
        return f": not allowed here; it belongs {' or '.join(belongs)}"
    known = {name for model, _ in places for name in model.model_fields}
    close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.7)
    return f" (did you mean '{close[0]}'?)" if close else ""


def validate(
    model: type[BaseModel], data: Any, source: Source, base: Key, label: Label | None = None
) -> tuple[Any, list[Problem]]:
    try:
        return model.model_validate(data), []
    except ValidationError as error:
        return None, _validation_problems(source, base, error, label)
