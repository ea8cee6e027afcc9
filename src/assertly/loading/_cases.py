"""What loading produces: runnable tests, their steps, and workflow eval cases."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from typing import Any

import orjson

from .._exceptions import Problem
from ..engine import Expectation

__all__ = [
    "Conversation",
    "EvalCase",
    "EvalSuite",
    "SimulatedUser",
    "Step",
    "SuiteHooks",
    "TestCase",
    "Turn",
    "definition_digest",
]


def definition_digest(*parts: Any) -> str:
    """A short, stable digest of what defines a test (its input, expectations, settings).

    Two runs store the same digest for a test exactly when the file said the same thing:
    mappings are hashed with sorted keys, so reordering keys in a file changes nothing, while
    any change of a value does. 128-bit BLAKE2b: a collision by chance is out of reach.
    """
    try:
        text = orjson.dumps(parts, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
    except (TypeError, orjson.JSONEncodeError):  # integers beyond 64 bits: the stdlib writes them
        text = json.dumps(parts, sort_keys=True, default=repr).encode()
    return hashlib.blake2b(text, digest_size=16).hexdigest()


@dataclass(slots=True, frozen=True)
class SuiteHooks:
    """A suite's ``setup``/``cleanup`` hooks, shared by every test of the suite.

    The runner runs ``setup`` once before the suite's first trial of a run and ``cleanup`` once
    after its last test; ``key`` (``file::suite``) tells suites apart.
    """

    key: str
    setup: tuple[str, ...] = ()
    cleanup: tuple[str, ...] = ()
    where: str = ""  # file:line:col of the suite, for messages


@dataclass(slots=True)
class Step:
    """One call to the agent and what its response must satisfy."""

    name: str
    input: Any
    checks: list[Expectation]
    store: str | None = None
    # A dataset line's recorded response: (output, {model, cost_usd, latency_ms, tool_calls});
    # no call.
    recorded: tuple[Any, dict[str, Any]] | None = None


@dataclass(slots=True)
class Turn:
    """A scripted user turn of a conversation: what the user says, and checks on the reply."""

    user: str
    checks: list[Expectation] = field(default_factory=list)


@dataclass(slots=True)
class SimulatedUser:
    """A model playing the user of a conversation (`ConversationModel.simulated_user`)."""

    persona: str
    first_message: str | None = None
    max_turns: int = 8
    stop_when: list[Expectation] = field(default_factory=list)
    stop_token: str = "[END]"
    require_stop: bool = False


@dataclass(slots=True)
class Conversation:
    """A multi-turn test: the agent is called once per turn with the whole history.

    Attributes:
        turns: The scripted user turns, in order.
        checks: What the whole conversation must satisfy (the test's expect/assertions).
        simulated_user: A model playing the user after the scripted turns (None: none).
        input: A mapping merged into every request beside ``messages``.
    """

    turns: list[Turn] = field(default_factory=list)
    checks: list[Expectation] = field(default_factory=list)
    simulated_user: SimulatedUser | None = None
    input: dict[str, Any] | None = None

    def expectations(self) -> list[Expectation]:
        """Every expectation of the conversation: its turns', its stop rule's, its own."""
        found = [check for turn in self.turns for check in turn.checks]
        if self.simulated_user is not None:
            found += self.simulated_user.stop_when
        return found + self.checks


@dataclass(slots=True)
class TestCase:
    """A runnable test from an agent test file."""

    id: str
    name: str
    suite: str
    file: str
    agent: str
    steps: list[Step]
    line: int | None = None
    end_line: int | None = None
    description: str | None = None
    skip_if: str | None = None
    setup: list[str] = field(default_factory=list)
    cleanup: list[str] = field(default_factory=list)
    trials: int | None = None
    timeout_s: float | None = None
    tags: list[str] = field(default_factory=list)
    priority: str | int | None = None
    problems: list[Problem] = field(default_factory=list)
    # The test's own pass_threshold, else its suite's; None: the run's.
    pass_threshold: str | None = None
    suite_hooks: SuiteHooks | None = None
    case_key: str | None = None  # a dataset case's key (its line), ids there need not be unique
    # What the file says defines the test (`definition_digest`); the runner adds the target,
    # trials and pass threshold before storing it with the test's verdicts.
    definition: str = ""
    # In a matrix run, the label of the target this copy of the test runs against (one copy
    # per label, `with_target`); None in a run of one target.
    target: str | None = None
    # A conversation test's turns and checks (its `steps` are then empty).
    conversation: Conversation | None = None

    @property
    def recorded(self) -> bool:
        """Whether every answer is recorded (no target is called): never a conversation."""
        return self.conversation is None and all(step.recorded is not None for step in self.steps)

    def expectations(self) -> list[Expectation]:
        """Every expectation the test judges (its steps', or its conversation's)."""
        if self.conversation is not None:
            return self.conversation.expectations()
        return [check for step in self.steps for check in step.checks]

    @property
    def base_key(self) -> str:
        """``file::suite::id`` (a dataset case: ``…::dataset:line``), whatever the target."""
        return self.case_key or f"{self.file}::{self.suite}::{self.id}"

    @property
    def key(self) -> str:
        """Unique key within a run: `base_key`, then ``[LABEL]`` in a matrix run."""
        if self.target is None:
            return self.base_key
        return f"{self.base_key}[{self.target}]"

    def with_target(self, label: str) -> TestCase:
        """This test against the target ``label`` of a matrix run (steps shared, not copied)."""
        return replace(self, target=label)

    @property
    def defined_in(self) -> str:
        """The test file that defines the test (for a dataset's case, not the dataset file)."""
        if self.case_key is not None:
            # A case's key is `{test file}::{suite}::{dataset file}:{line}` (`Dataset._case`).
            suffix = f"::{self.suite}::{self.file}:{self.line}"
            if self.case_key.endswith(suffix):
                return self.case_key[: -len(suffix)]
        return self.file

    @property
    def shown_name(self) -> str:
        """``test file::suite::id``: the test's name in the console, as pytest names its item.

        For a dataset's case, the test file that defines its suite (not the dataset file);
        `key` stays the unique identity the store and reports use (a dataset's ids need not be
        unique: its key names the line).
        """
        shown = f"{self.defined_in}::{self.suite}::{self.id}"
        return shown if self.target is None else f"{shown}[{self.target}]"


@dataclass(slots=True)
class EvalCase:
    """One case of a workflow eval section: recorded block outputs and their checks."""

    id: str
    file: str
    blocks: dict[str, tuple[Any, dict[str, Any], Expectation]]
    description: str | None = None
    line: int | None = None
    problems: list[Problem] = field(default_factory=list)

    @property
    def key(self) -> str:
        """Unique key within a run: ``file::eval::id``."""
        return f"{self.file}::eval::{self.id}"


@dataclass(slots=True)
class EvalSuite:
    """A workflow file's eval section."""

    file: str
    threshold: float
    cases: list[EvalCase]
