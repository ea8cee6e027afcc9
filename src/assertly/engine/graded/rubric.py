"""Model-graded assertions: ``llm-rubric`` (and the expect-dict key ``rubric``).

The checker never calls a model (the engine has no I/O): it asks the `JudgeBoard` the runner
put in the check context (see `assertly.engine.graded._judging`). Without a board there is no judge,
which is an ``error``, never a pass.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, RootModel, field_validator

from .._base import BuildContext, Checker
from .._entries import expect_assertion, typed_assertion
from .._result import PASSED, AssertionResult, errored, failed
from .._values import fmt
from ..typed._wrapper import TypedSpec
from ._judging import (
    BOARD_KEY,
    ENV_REFERENCE,
    TRANSCRIPT_KEY,
    JudgeBoard,
    Judgement,
    JudgeRequest,
    read_verdict,
    rubric_messages,
)
from ._reply_text import judged_text

if TYPE_CHECKING:
    from .._context import CheckContext
    from .._response import Response


class JudgeOptions(BaseModel):
    """An assertion's own judge settings (``config:``), over the config's ``judge:``."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    base_url: str | None = Field(
        default=None,
        description="OpenAI-compatible endpoint (…/v1); in a test file only the config's "
        "judge.base_url (the endpoint comes from the project config).",
    )
    model: str | None = Field(default=None, description="The judge model.")
    api_key: str | None = Field(
        default=None,
        description="${ENV_VAR} holding the key (never the key itself); in a test file only a "
        "variable the config lists in secrets_from_tests.",
    )
    temperature: float | None = Field(default=None, ge=0, le=2, allow_inf_nan=False)
    seed: int | None = None
    samples: int | None = Field(default=None, ge=1, le=15, description="> 1: majority vote.")

    @field_validator("api_key")
    @classmethod
    def _from_environment(cls, value: str | None) -> str | None:
        if value is not None and not ENV_REFERENCE.match(value):
            raise ValueError(
                "api_key in a test file must name an environment variable, e.g. "
                "${JUDGE_API_KEY} (a key written in a file would be committed)"
            )
        return value

    def given(self) -> dict[str, Any]:
        """The settings written (None ones left out)."""
        return {key: value for key, value in self.model_dump().items() if value is not None}


class LlmRubric(Checker):
    """A judge model finds that the output meets the rubric (its score reaches the threshold)."""

    __slots__ = ("options", "rubric", "threshold")

    def __init__(self, key: str, rubric: str, threshold: float, options: Mapping[str, Any]) -> None:
        self.key = key
        self.rubric = rubric
        self.threshold = threshold
        self.options = dict(options)

    def describe(self) -> str:
        return f"a judge model finds the output meets the rubric {fmt(self.rubric)}"

    def fast_pure(self) -> bool:
        # It reads the judge's answer from the context, not only the response: the detailed
        # path only (an expectation with a model-graded assertion has no fast path).
        return False

    def check(self, response: Response, ctx: CheckContext) -> AssertionResult:
        board = ctx.extra.get(BOARD_KEY)
        if not isinstance(board, JudgeBoard):
            return errored(
                self.key,
                "no judge to ask: llm-rubric is judged by `assertly run` with a judge: in the "
                "config (assertly check and compile() call no model)",
                expected=self.rubric,
            )
        # An API reply is judged by its message text and tool calls, not its envelope
        # (random ids and timestamps would defeat the judge cache): `_reply_text`.
        # A whole conversation is judged by its transcript, every message with its role.
        transcript = ctx.extra.get(TRANSCRIPT_KEY)
        text = transcript if isinstance(transcript, str) else judged_text(response)
        limit = board.max_input_chars
        cut = len(text) > limit
        # Cut before the request is made: the cache key is of what the judge is sent.
        messages = (
            rubric_messages(self.rubric, text[:limit], whole_length=len(text))
            if cut
            else rubric_messages(self.rubric, text)
        )
        judgement = board.ask(JudgeRequest.make(messages, self.options))
        if judgement is None:  # the first pass: the runner will ask the judge and check again
            return errored(self.key, "waiting for the judge", expected=self.rubric)
        result = self._verdict(judgement)
        if cut:
            note = (
                f"the judge was sent the first {limit:,} of the output's {len(text):,} "
                "characters (judge.max_input_chars)"
            )
            result.details = {**(result.details or {}), "input_cut": note}
            if result.message:
                result.message = f"{result.message} ({note})"
        return result

    def _verdict(self, judgement: Judgement) -> AssertionResult:
        details: dict[str, Any] = {"judge_cached": judgement.cached}
        if judgement.error is not None:
            return errored(self.key, f"judge: {judgement.error}", details=details)
        verdicts = []
        for number, reply in enumerate(judgement.replies, 1):
            verdict = read_verdict(reply)
            if isinstance(verdict, str):
                where = f" (sample {number} of {len(judgement.replies)})" if number > 1 else ""
                return errored(self.key, verdict + where, details=details)
            verdicts.append(verdict)
        if not verdicts:
            return errored(self.key, "the judge gave no reply", details=details)
        passes = sum(1 for verdict in verdicts if verdict.passed)
        if passes * 2 == len(verdicts):
            return errored(
                self.key,
                f"the judge's {len(verdicts)} samples split evenly ({passes} pass, "
                f"{passes} fail): use an odd number of samples",
                details=details,
            )
        majority = passes * 2 > len(verdicts)
        score = sum(verdict.score for verdict in verdicts) / len(verdicts)
        reason = next(v.reason for v in verdicts if v.passed is majority)
        details["reason"] = reason
        if len(verdicts) > 1:
            details["votes"] = {"pass": passes, "fail": len(verdicts) - passes}
        if majority and score + 1e-12 >= self.threshold:
            return AssertionResult(self.key, PASSED, score, details=details)
        if majority:
            message = (
                f"The judge passed the output with score {score:.4g}, below the threshold "
                f"{self.threshold:g}: {reason}"
            )
        else:
            message = f"The judge failed the output (score {score:.4g}): {reason}"
        return failed(self.key, message, expected=self.rubric, score=score, details=details)


def _threshold(value: Any, ctx: BuildContext) -> float | None:
    if value is None:
        return 0.5
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        ctx.problem(f"threshold must be a number in [0, 1], got {value!r}")
        return None
    if not 0 <= value <= 1:
        ctx.problem(f"threshold must be a number in [0, 1], got {value!r}")
        return None
    return float(value)


def _rubric(value: Any, ctx: BuildContext) -> str | None:
    if not isinstance(value, str) or not value.strip():
        ctx.problem(f"expected the rubric as text, e.g. 'The answer is polite', got {value!r}")
        return None
    return value


def judge_settings_allowed(ctx: BuildContext, options: Mapping[str, Any]) -> bool:
    """Whether a test file may make these judge settings (`FileJudgeRules`); problems if not."""
    rules = ctx.options.judge_rules
    if rules is None:
        return True
    refused = rules.refusals(options)
    for key, message in refused:
        ctx.at("config").at(key).problem(message)
    return not refused


def _mark_judged(ctx: BuildContext, options: Mapping[str, Any]) -> None:
    """Tell the expectation it needs a judge, and whether the config's ``judge:`` too."""
    if not options.get("base_url") or not options.get("model"):
        ctx.options.judged = "config"
    elif ctx.options.judged in (None, "local"):
        ctx.options.judged = "self"


@typed_assertion("llm-rubric", options=JudgeOptions, threshold=True)
def build_llm_rubric(spec: TypedSpec, ctx: BuildContext) -> Checker | None:
    """A judge model finds that the output meets the rubric in value (score >= threshold)."""
    rubric = _rubric(spec.value, ctx.at("value"))
    threshold = _threshold(spec.threshold, ctx.at("threshold"))
    options = JudgeOptions.model_validate(spec.config) if spec.config else JudgeOptions()
    if not judge_settings_allowed(ctx, options.given()):
        return None
    if rubric is None or threshold is None:
        return None
    _mark_judged(ctx, options.given())
    return LlmRubric(spec.type, rubric, threshold, options.given())


class RubricParams(BaseModel):
    """``rubric: {value: …, threshold: …, config: {…}}`` (or ``rubric: '…'``)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    value: str
    threshold: float | None = Field(default=None, ge=0, le=1, allow_inf_nan=False)
    config: JudgeOptions = Field(default_factory=JudgeOptions)


class RubricText(RootModel[str]):
    """``rubric: 'The answer is polite'``."""


@expect_assertion("rubric", params=(RubricText, RubricParams))
def build_rubric(spec: Any, ctx: BuildContext) -> Checker | None:
    """A judge model finds that the output meets the rubric (as llm-rubric)."""
    if isinstance(spec, str):
        rubric = _rubric(spec, ctx)
        if rubric is None:
            return None
        _mark_judged(ctx, {})
        return LlmRubric("rubric", rubric, 0.5, {})
    params = ctx.model(RubricParams, spec, "rubric: 'The answer is polite'")
    if params is None:
        return None
    rubric = _rubric(params.value, ctx.at("value"))
    if not judge_settings_allowed(ctx, params.config.given()) or rubric is None:
        return None
    _mark_judged(ctx, params.config.given())
    threshold = 0.5 if params.threshold is None else params.threshold
    return LlmRubric("rubric", rubric, threshold, params.config.given())
