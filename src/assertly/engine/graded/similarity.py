"""Semantic similarity: ``similar`` (and ``not-similar``), offline sentence embeddings.

The cosine similarity between the output and ``value`` (a string, or a list of strings of
which the best match counts), rounded to 3 decimal places (`PRECISION`: what differs between
CPUs is below that), is at least ``threshold``: by default 0.7 with the local model,
0.8 with ``provider: openai`` (a threshold means something only for the model that computes
the cosines; see `LOCAL_THRESHOLD`). The model runs locally
(`_embeddings`, the ``assertly[similar]`` extra); without the extra, ``similar``
is a configuration error that says how to install it. With ``config: {provider: openai}`` the
judge endpoint's ``/embeddings`` computes them instead, asked through the runner's judge board
like ``llm-rubric`` (`_judging`): the engine itself makes no call.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, field_validator

from .._base import BuildContext, Checker
from .._entries import typed_assertion
from .._result import PASSED, AssertionResult, errored, failed
from .._values import fmt
from ..typed._wrapper import TypedSpec
from ._embeddings import LOCAL, PRECISION, embedder, missing_extra
from ._judging import BOARD_KEY, ENV_REFERENCE, JudgeBoard, JudgeRequest
from ._vectors import cosine, vectors_problem
from .rubric import judge_settings_allowed

if TYPE_CHECKING:
    from .._context import CheckContext
    from .._response import Response


class SimilarOptions(BaseModel):
    """``similar``'s ``config:``: where the embeddings come from."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    provider: Literal["local", "openai"] = "local"
    base_url: str | None = None
    model: str | None = None  # the embedding model (default: the config's judge.embedding_model)
    api_key: str | None = None

    @field_validator("api_key")
    @classmethod
    def _from_environment(cls, value: str | None) -> str | None:
        if value is not None and not ENV_REFERENCE.match(value):
            raise ValueError("api_key in a test file must name an environment variable")
        return value


_LOCAL_OPTIONS = {"provider": LOCAL}

# The default pass mark of the local model (all-MiniLM-L6-v2), measured, not assumed: on the
# 50 labelled pairs of the tests every paraphrase scores at least 0.72 and every unrelated pair
# at most 0.05, so 0.7 passes them all, where the 0.8 failed 4 of 25 paraphrases; on
# 60 pairs written later and held out from that choice, 29 of 30 paraphrases pass at 0.7 (24
# at 0.8 since the int8 products, 25 before) and no unrelated pair does (docs/decisions.md,
# "similar: the local model's default threshold").
LOCAL_THRESHOLD = 0.7
# With provider: openai, the 0.8: no model of that kind can be measured here.
REMOTE_THRESHOLD = 0.8


class Similar(Checker):
    """The output means the same as a reference: cosine similarity >= threshold."""

    __slots__ = ("references", "threshold")

    def __init__(self, key: str, references: list[str], threshold: float) -> None:
        self.key = key
        self.references = references
        self.threshold = threshold

    def describe(self) -> str:
        shown = fmt(self.references[0]) if len(self.references) == 1 else fmt(self.references)
        return f"output is similar to {shown} (cosine >= {self.threshold:g})"

    def check(self, response: Response, ctx: CheckContext) -> AssertionResult:
        model = embedder()
        # Only what the model reads: a long output's prefix that gives the same embedding.
        texts = (model.fitted(response.text), *self.references)
        board = ctx.extra.get(BOARD_KEY)
        if isinstance(board, JudgeBoard) and model.missing(texts):
            # In a run: the runner embeds what many cases wait for in one batch, off the
            # event loop, then checks again (a check without a board embeds here and now).
            answer = board.ask(JudgeRequest.embeddings(texts, _LOCAL_OPTIONS))
            if answer is None:
                if not board.answers:  # the first pass: the runner embeds, then checks again
                    return errored(self.key, "waiting for the embeddings")
                # The second pass, though this check asked nothing at the first: its texts
                # were cached then, and a batch emptied the cache since. Embedded here.
            elif answer.error is not None:
                return errored(self.key, f"embeddings: {answer.error}")
        vectors = model.embed(texts)
        scores = vectors[1:] @ vectors[0]
        best = int(scores.argmax())
        return self._verdict(response, best, float(scores[best]))

    def _verdict(self, response: Response, best: int, similarity: float) -> AssertionResult:
        # Compared at the precision it is reported at: the last bits of a cosine may differ
        # between CPUs (see `PRECISION`), a verdict must not.
        similarity = round(similarity, PRECISION)
        score = min(max(similarity, 0.0), 1.0)
        details: dict[str, Any] = {"similarity": similarity}
        if len(self.references) > 1:
            details["best_match"] = best
        if similarity + 1e-9 >= self.threshold:
            return AssertionResult(self.key, PASSED, score, details=details)
        return failed(
            self.key,
            f"Similarity {similarity:.3f} is below {self.threshold:g}",
            expected=self.references[best],
            actual=response.text,
            score=score,
            details=details,
        )


@typed_assertion("similar", threshold=True, options=SimilarOptions)
def build_similar(spec: TypedSpec, ctx: BuildContext) -> Checker | None:
    """The output means the same as value (or one of a list): cosine similarity >= threshold."""
    value = spec.value
    references = [value] if isinstance(value, str) else value
    if (
        not spec.given("value")
        or not isinstance(references, list)
        or not references
        or not all(isinstance(item, str) and item.strip() for item in references)
    ):
        ctx.at("value").problem(f"similar needs a reference text or a list of them, got {value!r}")
        return None
    options = SimilarOptions.model_validate(spec.config) if spec.config else SimilarOptions()
    if spec.threshold is not None:
        threshold = spec.threshold
    else:
        threshold = REMOTE_THRESHOLD if options.provider == "openai" else LOCAL_THRESHOLD
    if not math.isfinite(threshold) or not -1 <= threshold <= 1:
        ctx.at("threshold").problem(f"threshold must be a cosine in [-1, 1], got {threshold!r}")
        return None
    if threshold == -1:
        # Every cosine is at least -1: `similar` would pass on anything (and `not-similar` fail
        # on anything), as an empty `contains` would; refused like it (red team probe).
        ctx.at("threshold").problem(
            "threshold -1 can never fail (every cosine is at least -1); give a higher one"
        )
        return None
    if round(threshold, PRECISION) != threshold:
        # Cosines are compared at 3 decimals: 0.7004 silently acted as 0.701 (red team probe).
        ctx.at("threshold").problem(
            f"threshold {threshold!r} has more than {PRECISION} decimals, the precision "
            f"similar compares at: use {round(threshold, PRECISION)!r} or another value"
        )
        return None
    if options.provider == "openai":
        given = options.model_dump(exclude_none=True, exclude={"provider"})
        if not judge_settings_allowed(ctx, given):
            return None
        # Needs the config's judge: unless the assertion names its endpoint and model.
        if not given.get("base_url") or not given.get("model"):
            ctx.options.judged = "config"
        elif ctx.options.judged in (None, "local"):
            ctx.options.judged = "self"
        return RemoteSimilar(spec.type, list(references), threshold, given)
    missing = missing_extra()
    if missing is not None:
        ctx.problem(missing)
        return None
    if ctx.options.judged is None:
        ctx.options.judged = "local"  # the runner batches its embeddings across cases
    return Similar(spec.type, list(references), threshold)


class RemoteSimilar(Similar):
    """``similar`` with ``provider: openai``: the embeddings come from the judge endpoint."""

    __slots__ = ("options",)

    def __init__(
        self, key: str, references: list[str], threshold: float, options: dict[str, Any]
    ) -> None:
        super().__init__(key, references, threshold)
        self.options = options

    def fast_pure(self) -> bool:
        return False  # it reads the endpoint's answer from the context (see LlmRubric)

    def check(self, response: Response, ctx: CheckContext) -> AssertionResult:
        board = ctx.extra.get(BOARD_KEY)
        if not isinstance(board, JudgeBoard):
            return errored(
                self.key,
                "no embeddings endpoint to ask: similar with provider: openai is judged by "
                "`assertly run` (assertly check and compile() call no model)",
            )
        # At most judge.max_input_chars of the output, as llm-rubric sends.
        texts = (response.text[: board.max_input_chars], *self.references)
        answer = board.ask(JudgeRequest.embeddings(texts, self.options))
        if answer is None:
            return errored(self.key, "waiting for the embeddings")
        if answer.error is not None:
            return errored(self.key, f"embeddings: {answer.error}")
        # The client validates before it caches; checked again here, where the verdict is
        # made: a NaN, a zero vector or two lengths would otherwise compare as a cosine.
        names = ["the output", *(f"reference {index + 1}" for index in range(len(texts) - 1))]
        problem = vectors_problem(answer.vectors, names)
        if problem is not None:
            return errored(self.key, f"embeddings: the endpoint's answer is unusable: {problem}")
        output = answer.vectors[0]
        scores = [cosine(output, vector) for vector in answer.vectors[1:]]
        best = max(range(len(scores)), key=scores.__getitem__)
        return self._verdict(response, best, scores[best])
