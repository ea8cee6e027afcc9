"""Strict models of the files assertly reads.

Agent test files, workflow eval sections and the project config. Unknown keys are errors (with a
did-you-mean), so a typo never silently turns an assertion off. JSON Schemas for editors are
generated from these models (`._schema.json_schemas`).

These models describe *files*; the runtime objects the runner uses live in `._tests`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    field_validator,
)

from .._secrets import url_scheme
from ..engine.graded._judging import DEFAULT_MAX_INPUT_CHARS, FileJudgeRules

# C0 and C1 controls, DEL, and the bidirectional marks and overrides: none has a place in an
# id, which names a test in the console, the reports, the store (PostgreSQL refuses NUL in
# text) and the viewer's URLs. Nor has a lone surrogate (a JSON file may spell one): no UTF-8
# text holds it, and the store could not write the test's key (red team, issue 35).
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def id_problem(text: str) -> str | None:
    """Why ``text`` cannot be an id (a control character in it), or None."""
    found = _CONTROL.search(text)
    if found is None:
        return None
    return (
        f"an id may not hold control characters or lone surrogates (U+{ord(found.group()):04X} at "
        f"{found.start()}): ids name tests in reports, stores and URLs"
    )


def _printable_id(text: str) -> str:
    problem = id_problem(text)
    if problem is not None:
        raise ValueError(problem)
    return text


Id = Annotated[str, AfterValidator(_printable_id)]

# A target's label in a matrix run (`--target LABEL=SPEC`, `matrix:`): it ends each test key
# (`file::suite::id[LABEL]`), column headers and URLs, so it is short and plain; `::`, brackets,
# spaces and `=` are never part of one.
TARGET_LABEL_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
TargetLabel = Annotated[str, Field(pattern=TARGET_LABEL_PATTERN)]


def _store_location(text: str) -> str:
    """A run store: a file path, or a PostgreSQL URL (``postgress://…`` is not a file)."""
    scheme = url_scheme(text)
    if scheme is not None and scheme not in ("postgresql", "postgres"):
        raise ValueError(
            f"a {scheme}:// URL is not a run store: write a SQLite file path or a "
            "postgresql:// (postgres://) URL"
        )
    return text


class FileModel(BaseModel):
    """Base of every file model: strict types, unknown keys rejected."""

    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True, defer_build=True)


class StepModel(FileModel):
    """One step of a multi-step test."""

    step: str | int = Field(description="The step's name or number.")
    input: Any = Field(default=None, description="What is sent to the agent for this step.")
    store: str | None = Field(default=None, description="Keep this step's response under a name.")
    expect: dict[str, Any] | None = Field(default=None, description="Expect dict for this step.")
    assertions: list[Any] | None = Field(default=None, description="Typed assertions.")


class TurnModel(FileModel):
    """One scripted user turn of a conversation test."""

    user: str = Field(min_length=1, description="What the user says on this turn.")
    expect: dict[str, Any] | None = Field(
        default=None, description="Expect dict judged on this turn's reply."
    )
    assertions: list[Any] | None = Field(
        default=None, description="Typed assertions judged on this turn's reply."
    )


def _turn_text(value: Any) -> Any:
    """``"Hi"`` is short for ``{user: "Hi"}`` (a turn without checks)."""
    if isinstance(value, str):
        return {"user": value}
    if not isinstance(value, dict | TurnModel):
        raise ValueError("a turn is {user: …} (with expect/assertions) or the user's text")
    return value


# A turn, or its user text alone.
TurnOrText = Annotated[TurnModel, BeforeValidator(_turn_text)]


class SimulatedUserModel(FileModel):
    """A model playing the user of a conversation test (config ``simulator:``, else ``judge:``)."""

    persona: str = Field(
        min_length=1, description="Who the simulated user is and wants (its system prompt)."
    )
    first_message: str | None = Field(
        default=None,
        description="The user's first message; else the simulator writes it (after any "
        "scripted turns, the simulator writes every later message).",
    )
    max_turns: int = Field(
        default=8, ge=1, le=200, description="The most agent replies of the conversation."
    )
    stop_when: list[Any] | None = Field(
        default=None,
        description="Typed assertions judged on each agent reply: once they pass, the "
        "conversation ends.",
    )
    stop_token: str = Field(
        default="[END]",
        min_length=1,
        description="The simulator ends the conversation by writing this in its reply.",
    )
    require_stop: bool = Field(
        default=False,
        description="Reaching max_turns without a stop (stop_token or stop_when) fails the test.",
    )

    @field_validator("persona", "stop_token")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        # A blank stop token is in every reply with a space: each would end the conversation
        # (and pass require_stop); a blank persona asks the simulator for nothing.
        if not value.strip():
            raise ValueError("must not be blank")
        return value


class ConversationModel(FileModel):
    """A multi-turn test: scripted user turns, a simulated user, or scripted turns then one."""

    # For editors; the loader says the same in its own words (`._conversations`).
    model_config = ConfigDict(
        **FileModel.model_config,
        json_schema_extra={
            "anyOf": [
                {"required": ["turns"], "properties": {"turns": {"minItems": 1}}},
                {"required": ["simulated_user"]},
            ]
        },
    )

    input: dict[str, Any] | None = Field(
        default=None,
        description="Merged into every request beside messages (e.g. {user_id: 42}); it may "
        "not hold messages (the history, which would overwrite it).",
        json_schema_extra={"not": {"required": ["messages"]}},
    )
    turns: list[TurnOrText] | None = Field(
        default=None,
        description="Scripted user turns, in order, each with its own checks (a turn without "
        "checks may be its user text alone).",
    )
    simulated_user: SimulatedUserModel | None = Field(
        default=None, description="A model playing the user (after the scripted turns, if any)."
    )


class TestModel(FileModel):
    """One test of an agent test file."""

    # For editors: a conversation stands alone (the loader refuses it beside input/multi_step).
    model_config = ConfigDict(
        **FileModel.model_config,
        json_schema_extra={
            "not": {
                "anyOf": [
                    {"required": ["conversation", "input"]},
                    {"required": ["conversation", "multi_step"]},
                ]
            }
        },
    )

    id: Id = Field(min_length=1, description="Unique id within the file.")
    name: str | None = None
    description: str | None = None
    input: Any = Field(default=None, description="What is sent to the agent.")
    expect: dict[str, Any] | None = Field(default=None, description="Expect dict (dialect A).")
    assertions: list[Any] | None = Field(default=None, description="Typed list (dialect B).")
    threshold: float | None = Field(default=None, ge=0, le=1)
    skip_if: str | None = Field(default=None, description="Skip when this fact is true.")
    setup: str | list[str] | None = Field(default=None, description="Hook name(s) from config.")
    cleanup: str | list[str] | None = Field(default=None, description="Hook name(s) from config.")
    multi_step: list[StepModel] | None = None
    conversation: ConversationModel | None = Field(
        default=None,
        description="A multi-turn test (instead of input or multi_step): the agent gets the "
        "whole history each turn; expect/assertions beside it judge the whole conversation.",
    )
    trials: int | None = Field(default=None, ge=1, le=10_000)
    pass_threshold: Literal["any", "all", "majority"] | None = Field(
        default=None,
        description="How many of the test's trials must pass: any, all or majority (more than "
        "half); wins over the suite's, --pass-threshold and the config's.",
    )
    timeout_s: float | None = Field(default=None, gt=0)
    tags: list[str] = Field(default_factory=list)
    priority: str | int | None = None
    shape: dict[str, str] | None = Field(
        default=None,
        description="Where the fields the expect dict reads live, as JSONPaths: status, results, "
        "summary, message, model, and tags inside each result (e.g. {results: '$.data.hits', "
        "tags: '$.results[*].labels'}); the nearest level wins, field "
        "by field.",
    )


class SuiteModel(FileModel):
    """A named group of tests."""

    name: str | None = None
    description: str | None = None
    priority: str | int | None = None
    tags: list[str] = Field(default_factory=list)
    pass_threshold: Literal["any", "all", "majority"] | None = Field(
        default=None,
        description="How many trials of each test of the suite must pass: any, all or majority "
        "(a test's own pass_threshold wins).",
    )
    setup: str | list[str] | None = Field(
        default=None,
        description="Hook name(s) from config, run once before the suite's first test in a run.",
    )
    cleanup: str | list[str] | None = Field(
        default=None,
        description="Hook name(s) from config, run once after the suite's last test in a run "
        "(also when tests fail, a setup fails or the run is interrupted).",
    )
    tests: list[Any] | None = Field(
        default=None, description="The tests (validated one by one); or a dataset instead."
    )
    dataset: str | None = Field(
        default=None,
        description="A JSON Lines file of cases (id, input, output, ...), relative to this file: "
        "one test per line, judged by this suite's expect/assertions.",
    )
    expect: dict[str, Any] | None = Field(
        default=None, description="A dataset suite's expect dict, for every case."
    )
    assertions: list[Any] | None = Field(
        default=None, description="A dataset suite's typed assertions, for every case."
    )
    threshold: float | None = Field(default=None, ge=0, le=1)
    trials: int | None = Field(default=None, ge=1, le=10_000)
    timeout_s: float | None = Field(default=None, gt=0)
    shape: dict[str, str] | None = Field(
        default=None,
        description="Where the fields the expect dict reads live, as JSONPaths: status, results, "
        "summary, message, model, and tags inside each result (e.g. {results: '$.data.hits', "
        "tags: '$.results[*].labels'}); the nearest level wins, field "
        "by field.",
    )


class AgentTestFileModel(FileModel):
    """An agent test file (``*.tests.json`` / ``*.tests.yaml``)."""

    schema_: str | None = Field(
        default=None,
        alias="$schema",
        description="The JSON Schema this file follows (for editors; not interpreted).",
    )
    agent: str = Field(min_length=1, description="The agent name; config maps it to a target.")
    version: str | int | float | None = None
    description: str | None = None
    test_suites: dict[str, SuiteModel]
    metadata: dict[str, Any] | None = None
    shape: dict[str, str] | None = Field(
        default=None,
        description="Where the fields the expect dict reads live, as JSONPaths: status, results, "
        "summary, message, model, and tags inside each result (e.g. {results: '$.data.hits', "
        "tags: '$.results[*].labels'}); the nearest level wins, field "
        "by field.",
    )


class EvalCaseModel(FileModel):
    """One case of a workflow ``eval:`` section."""

    id: Id = Field(min_length=1)
    description: str | None = None
    inputs: dict[str, Any] | None = None
    fixtures: dict[str, Any] = Field(default_factory=dict)
    expected: dict[str, list[Any]] = Field(default_factory=dict)


class EvalSectionModel(FileModel):
    """A workflow's ``eval:`` section."""

    threshold: float = Field(default=1.0, ge=0, le=1)
    cases: list[Any]


class BlockModel(BaseModel):
    """A workflow block: only ``assertions`` is interpreted; everything else is kept."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    assertions: list[Any] | None = None


class WorkflowModel(BaseModel):
    """A workflow file with an ``eval:`` section; other keys are kept, not interpreted."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    blocks: dict[str, BlockModel] = Field(default_factory=dict)
    eval: EvalSectionModel


class HttpTargetModel(FileModel):
    """An HTTP target with headers; ``${ENV}`` in a header value is read from the environment."""

    url: str
    headers: dict[str, str] = Field(default_factory=dict)
    timeout_s: float | None = Field(default=None, gt=0)
    retries: int = Field(default=2, ge=0, le=10)


class CommandTargetModel(FileModel):
    """A command target: input JSON on stdin, response on stdout."""

    command: str | list[str]
    shell: bool = False
    env: dict[str, str] = Field(default_factory=dict)
    pass_env: list[str] = Field(default_factory=list)
    cwd: str | None = None


def _expand_environment(text: str) -> str:
    """``${NAME}`` replaced by the environment variable NAME (one that is unset is an error)."""
    import os
    import re

    from .._exceptions import ConfigError, Problem
    from .._secrets import remember_from_environment

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in os.environ:
            raise ConfigError([Problem("store", f"${{{name}}} is not set in the environment")])
        # A secret wherever it shows up (a password, or a host that breaks the URL's syntax).
        return remember_from_environment(os.environ[name])

    return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", value, text)


class JudgeModel(FileModel):
    """The judge model of model-graded assertions (``llm-rubric``): any OpenAI-compatible API.

    Every key but ``max_cost_usd`` and the prices can be overridden per assertion in its
    ``config:``.
    """

    base_url: str = Field(
        description="The OpenAI-compatible endpoint, up to /v1 (e.g. http://127.0.0.1:8000/v1)."
    )
    model: str = Field(min_length=1, description="The judge model's name.")
    embedding_model: str | None = Field(
        default=None,
        description="The endpoint's embedding model, for similar with provider: openai.",
    )
    api_key: str | None = Field(
        default=None,
        description="Sent as a bearer token; write ${ENV_VAR} to read it from the environment. "
        "A secret: redacted from every report and never stored.",
    )
    temperature: float = Field(default=0.0, ge=0, le=2, allow_inf_nan=False)
    seed: int | None = Field(default=0, description="Sample n of a request uses seed + n.")
    samples: int = Field(
        default=1, ge=1, le=15, description="Replies per judgement; > 1: the majority decides."
    )
    max_tokens: int | None = Field(default=None, ge=1, description="Cap on each reply's tokens.")
    max_input_chars: int = Field(
        default=DEFAULT_MAX_INPUT_CHARS,
        ge=1,
        le=100_000_000,
        description="The most characters of one output the judge is sent; a longer output is "
        "cut to its beginning and the result says so (input_cut).",
    )
    max_cost_usd: float | None = Field(
        default=None,
        ge=0,
        allow_inf_nan=False,
        description="Stop judging (error) once the judge calls of one run cost this much.",
    )
    input_usd_per_mtok: float = Field(
        default=0.0,
        ge=0,
        allow_inf_nan=False,
        description="Price of a million prompt tokens (when the server reports no cost).",
    )
    output_usd_per_mtok: float = Field(
        default=0.0,
        ge=0,
        allow_inf_nan=False,
        description="Price of a million completion tokens (when the server reports no cost).",
    )
    timeout_s: float | None = Field(
        default=None,
        gt=0,
        description="One judgement's time, retries included (default: the config's timeout_s).",
    )


class TracesModel(FileModel):
    """``traces:`` in the config: receiving an instrumented agent's spans (docs/traces.md)."""

    receive: bool = Field(
        default=False,
        description="Listen on loopback for OTLP/HTTP spans during a run and give every agent "
        "call a traceparent, even when no test asks for spans (a test with span assertions "
        "or source: trace asks on its own).",
    )
    wait_ms: float = Field(
        default=2000.0,
        ge=0,
        le=600_000,
        description="How long a call waits for its spans after the reply (ends early once "
        "the root span has arrived).",
    )
    prefer: bool = Field(
        default=False,
        description="Trajectory assertions of both dialects read the tool calls from the "
        "spans instead of the reply (a call with no spans is then an error for them).",
    )
    port: int | None = Field(
        default=None,
        ge=1,
        le=65535,
        description="The loopback port the receiver listens on; a free one by default (cmd: "
        "and py: agents are told it). An HTTP agent that runs on its own exports to a fixed "
        "one: e.g. 4318, with OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318.",
    )
    max_spans: int = Field(
        default=10_000,
        ge=1,
        le=1_000_000,
        description="The most spans kept per call; more are counted and dropped, and "
        "judgements that count spans are then errors.",
    )


class ConfigModel(FileModel):
    """Project config (``assertly.yaml`` or ``[tool.assertly]`` in ``pyproject.toml``).

    Relative paths in it resolve against the config file's directory (`directory`): agent
    commands and hooks run there, and ``store`` is relative to it.
    """

    schema_: str | None = Field(
        default=None,
        alias="$schema",
        description="The JSON Schema this file follows (for editors; not interpreted).",
    )
    agents: dict[str, str | HttpTargetModel | CommandTargetModel] = Field(default_factory=dict)
    matrix: dict[str, dict[TargetLabel, str | HttpTargetModel | CommandTargetModel]] = Field(
        default_factory=dict,
        description="Run the tests of an agent against several targets side by side: agent -> "
        "{label: the name of an agent of agents:, or a target spec}; every agent listed uses "
        "the same labels, the first is the base of comparisons (docs/matrix.md).",
    )
    hooks: dict[str, str | list[str]] = Field(default_factory=dict)
    facts: dict[str, bool] = Field(default_factory=dict)
    sensitive_prefixes: list[str] | None = Field(
        default=None,
        description="File prefixes that make a result sensitive for if_sensitive_results "
        "(e.g. [people/, documents/]); none by default.",
    )
    shape: dict[str, str] | None = Field(
        default=None,
        description="Where the fields the expect dict reads live, as JSONPaths: status, results, "
        "summary, message, model, and tags inside each result (e.g. {results: '$.data.hits', "
        "tags: '$.results[*].labels'}); the nearest level wins, field "
        "by field.",
    )
    plugins: list[str] = Field(default_factory=list)
    trials: int = Field(default=1, ge=1)
    concurrency: int = Field(default=8, ge=1, le=1024)
    timeout_s: float = Field(default=60.0, gt=0)
    rate_limit: float | None = Field(default=None, gt=0)
    pass_threshold: Literal["any", "all", "majority"] = "all"
    cache: Literal["rw", "ro", "off", "replay"] = Field(
        default="off",
        description="The agent-response cache (--cache): off makes every call; rw reads and "
        "writes the store's cache, ro only reads it, replay makes a miss an error.",
    )
    max_cost_usd: float | None = Field(
        default=None,
        gt=0,
        description="The run budget (--max-cost-usd): the agents' reported cost plus the "
        "judge's; once spent, no new call starts and the tests not judged are errors.",
    )
    store: Annotated[str, AfterValidator(_store_location)] = ".assertly/runs.sqlite"
    judge: JudgeModel | None = Field(
        default=None, description="The judge model of model-graded assertions (llm-rubric)."
    )
    simulator: JudgeModel | None = Field(
        default=None,
        description="The model playing simulated users of conversation tests (same keys as "
        "judge:); default: the judge.",
    )
    traces: TracesModel = Field(
        default_factory=TracesModel,
        description="Receiving OpenTelemetry spans from instrumented agents (docs/traces.md).",
    )
    secrets_from_tests: list[Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]] = Field(
        default_factory=list,
        description="Environment variables a test file may name as ${NAME} (an "
        "assertion's api_key); none by default: the judge's key comes from judge: here.",
    )

    _directory: Path | None = PrivateAttr(default=None)
    _path: Path | None = PrivateAttr(default=None)

    @property
    def path(self) -> Path | None:
        """The config file read; None without one."""
        return self._path

    @property
    def directory(self) -> Path | None:
        """The config file's directory; None without a config file (the current directory)."""
        return self._directory

    def judge_rules(self) -> FileJudgeRules:
        """What an assertion in a test file may set of its judge.

        This config's endpoint only, and keys only from the variables of ``secrets_from_tests``.
        """
        return FileJudgeRules(
            self.judge.base_url if self.judge is not None else None,
            frozenset(self.secrets_from_tests),
        )

    @property
    def store_path(self) -> str:
        """The run store: ``store``, when relative, taken relative to `directory`.

        A ``postgresql://`` URL is taken as it is, with each ``${VAR}`` in it replaced by that
        environment variable (a password need not be written in the config).
        """
        if self.store.startswith(("postgresql://", "postgres://")):
            return _expand_environment(self.store)
        return str(self._directory / self.store) if self._directory else self.store
