"""The typed-list dialect's frame.

Spec validation, ``not-`` negation, ``json_path:`` transforms, weights and metrics. Each
family module only judges an output string.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from ..._json import TOO_DEEP_MESSAGE
from .._base import BuildContext, Checker
from .._paths import NOT_FOUND as _NOT_FOUND
from .._paths import singular_steps as _singular_steps
from .._paths import walk_steps as _walk
from .._response import NOT_JSON, Response
from .._result import ERROR, FAILED, PASSED, AssertionResult, errored, failed

if TYPE_CHECKING:
    from ..._exceptions import Problem
    from .._context import CheckContext
    from .._entries import Entry
    from .._fast import FastGen

__all__ = ["JsonString", "TypedSpec", "compile_typed_list"]


class TypedSpec(BaseModel):
    """One typed assertion as written in a file (strict: unknown keys are errors)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    type: str = Field(description="Assertion type; prefix with not- to negate.")
    value: Any = Field(default="", description="Comparison value (type-specific).")
    threshold: float | None = Field(
        default=None, allow_inf_nan=False, description="Pass threshold (type-specific)."
    )
    weight: float = Field(
        default=1.0, ge=0, allow_inf_nan=False, description="Weight in the aggregate score."
    )
    metric: str | None = Field(default=None, description="Store the score under this name.")
    transform: str | None = Field(default=None, description="json_path:<RFC 9535 expression>.")
    config: dict[str, Any] = Field(default_factory=dict, description="Type-specific options.")

    def given(self, name: str) -> bool:
        """Whether the user wrote this field (rather than taking the default)."""
        return name in self.model_fields_set


class JsonPathTransform:
    """``json_path:<expr>``: the first match, keeping its JSON type.

    Text assertions see a string as it is and anything else as compact JSON text; ``equals``
    compares the value with its type (a `JsonString` is a string, never the number it spells).
    """

    __slots__ = ("expression", "path", "steps")

    def __init__(self, expression: str) -> None:
        """Compile ``expression``.

        Raises:
            ValueError: The expression is not RFC 9535 JSONPath.
        """
        self.expression = expression
        self.steps = _singular_steps(expression)
        self.path: Any = None
        if self.steps is None:
            from .._paths import compile_jsonpath  # heavy: only for non-singular queries

            self.path = compile_jsonpath(expression)

    def apply(self, response: Response) -> Response | str:
        """The transformed output, or the reason the transform failed."""
        document = response.whole_json
        if document is NOT_JSON:
            return f"transform json_path:{self.expression}: the output is not JSON"
        if self.steps is not None:
            value = _walk(document, self.steps)
            if value is _NOT_FOUND:
                return f"transform json_path:{self.expression}: path not found in the output"
        elif type(document) is dict or type(document) is list:
            from .._jsonpath_functions import first_match  # loaded with the path

            match = first_match(self.path, document)
            if match is None:
                return f"transform json_path:{self.expression}: path not found in the output"
            value = match.obj
        elif self.expression.strip() == "$":
            value = document
        else:
            return f"transform json_path:{self.expression}: path not found in the output"
        if type(value) is str:
            return JsonString(value)
        return Response(value)


class JsonString(Response):
    """A string picked out of JSON by a transform: text to text assertions, a string to ``equals``.

    ``{"n": "7"}`` and ``{"n": 7}`` give the same text, ``7``; only the type tells them apart,
    and ``equals 7`` must fail on the first. Its text is parsed as JSON only by the assertions
    about the text itself (``is-json``, ``contains-json``), so a JSON document held in a string
    field (tool-call arguments) can still be validated.
    """

    __slots__ = ()


class TypedAssertion(Checker):
    """Runs an inner checker on the (possibly transformed) output; negates when ``not-``."""

    __slots__ = ("inner", "negate", "transform", "weight")

    def __init__(
        self,
        key: str,
        inner: Checker,
        negate: bool,
        transform: JsonPathTransform | None,
        weight: float,
    ) -> None:
        self.key = key
        self.inner = inner
        self.negate = negate
        self.transform = transform
        self.weight = weight

    def describe(self) -> str:
        text = self.inner.describe()
        return f"not ({text})" if self.negate else text

    def fast_pure(self) -> bool:
        return self.inner.fast_pure()

    def emit(self, gen: FastGen) -> bool:
        """``not-contains`` / ``not-icontains``, and ``equals`` a string after ``json_path:``."""
        inner, transform = self.inner, self.transform
        if transform is None:
            # Only a checker whose failure has score 0 and no details offers `emit_negated`:
            # the negation of such a failure is a plain pass.
            negated = getattr(inner, "emit_negated", None)
            return self.negate and negated is not None and bool(negated(gen))
        emit_string = getattr(inner, "emit_string", None)  # `equals` on a picked string
        if self.negate or emit_string is None or transform.steps is None:
            return False
        # The transform's own walk: a response without the path fails this assertion only.
        value = gen.fresh("picked")
        walk, steps = gen.const(_walk), gen.const(transform.steps)
        gen.statement(f"{value} = {walk}({gen.text('whole_json')}, {steps})")
        return bool(emit_string(gen, value))

    def check(self, response: Response, ctx: CheckContext) -> AssertionResult:
        if self.transform is not None:
            transformed = self.transform.apply(response)
            if type(transformed) is str:
                if response.too_deep:  # JSON that cannot be judged, not JSON that lacks the path
                    return errored(self.key, TOO_DEEP_MESSAGE)
                # A failed transform is a failure of its own; negation does not invert it.
                return failed(self.key, transformed, path=self.transform.expression)
            response = transformed  # type: ignore[assignment]
        if self.negate:
            return self._negated(self.inner.verdict(response, ctx), response, ctx)
        return self.inner.check(response, ctx)

    def _negated(
        self, result: AssertionResult, response: Response, ctx: CheckContext
    ) -> AssertionResult:
        outcome = result.outcome
        if outcome is ERROR:  # an error stays an error
            return AssertionResult(
                self.key,
                ERROR,
                0.0,
                result.message,
                result.path,
                result.expected,
                details=result.details,
            )
        score = 1.0 - result.score
        if outcome is PASSED:
            # Say what held: that is exactly what the negated assertion forbids.
            held = self.inner.describe()
            if held.startswith("output "):
                held = "Output" + held[6:]
            message = f"{held}, which {self.key} forbids"
            if result.score not in (0.0, 1.0):
                message += f"; score {result.score:.4g}"
            observed = self.inner.observed(response, ctx)
            if observed:
                message += f"; {observed}"
            return AssertionResult(
                self.key,
                FAILED,
                score,
                message,
                result.path,
                result.expected,
                result.actual,
                details=result.details,
            )
        return AssertionResult(self.key, PASSED, score, details=result.details)


def _transform(spec: TypedSpec, ctx: BuildContext) -> JsonPathTransform | bool | None:
    """The compiled transform, None when there is none, False after recording a problem."""
    if spec.transform is None:
        return None
    text = spec.transform
    kind, _, expression = text.partition(":")
    if kind.strip() != "json_path" or not _:
        ctx.at("transform").problem(
            f"unknown transform {text!r}; the only transform is json_path:<expression>, "
            "e.g. json_path:$.status"
        )
        return False
    expression = expression.strip()
    if not expression:
        ctx.at("transform").problem(
            "json_path: needs a JSONPath expression after the colon, e.g. json_path:$.status"
        )
        return False
    try:
        transform = JsonPathTransform(expression)
        if "match(" in expression or "search(" in expression:  # filter regexes: one limit
            ctx.options.backtracks = True
        return transform
    except ValueError as error:
        ctx.at("transform").problem(f"invalid JSONPath {expression!r}: {error}")
        return False


# What the limit of a built-in that reads only threshold is measured in, and an example.
_LIMIT_EXAMPLES: dict[str, tuple[str, float]] = {
    "latency": (", in milliseconds", 5000),
    "cost": (", in USD", 0.05),
}


def _unread_fields(spec: TypedSpec, entry: Entry, name: str, ctx: BuildContext) -> None:
    """Record ``value`` or ``threshold`` given to a built-in that would ignore it.

    A field the assertion would ignore is a problem, never silently dropped: a user who wrote
    ``{type: contains, value: x, threshold: 0.5}`` or ``{type: cost, value: 0.5}`` meant
    something that would not happen.
    """
    if spec.given("value") and not entry.value:
        # The example in the unit the limit is in (a latency of 0.5 would be half a ms).
        unit, example = _LIMIT_EXAMPLES.get(name, ("", 0.5))
        given = spec.value
        if isinstance(given, int | float) and not isinstance(given, bool) and given >= 0:
            example = given
        ctx.at("value").problem(
            f"{name} does not read value; its limit is threshold "
            f"(e.g. threshold: {example:g}{unit})"
        )
    if spec.given("threshold") and not entry.threshold:
        ctx.at("threshold").problem(
            f"{name} has no threshold: it passes or fails (a pass mark for a whole check goes "
            "next to the assertion list, not on one assertion)"
        )


def _check_config(spec: TypedSpec, entry: Entry, name: str, ctx: BuildContext) -> None:
    """Validate ``config`` against the built-in's options model (unknown keys, wrong types)."""
    if not spec.config:
        return
    if entry.options is None:
        keys = ", ".join(map(repr, spec.config))
        ctx.problem(f"{name} takes no config options, got {keys}")
    else:
        ctx.model(entry.options, spec.config)


def compile_typed_list(
    items: Any, ctx: BuildContext
) -> tuple[list[Checker], list[float], list[str | None]]:
    """Compile a list of typed assertion mappings, recording every problem on ``ctx``."""
    checkers: list[Checker] = []
    weights: list[float] = []
    metric_names: list[str | None] = []
    if not items:
        ctx.problem("the assertion list is empty")
        return checkers, weights, metric_names
    for index, item in enumerate(items):
        item_ctx = ctx.at(index)
        before = len(ctx.problems)
        spec = item_ctx.model(TypedSpec, item, "{type: contains, value: 'text'}")
        if spec is None:
            continue
        name = spec.type
        negate = name.startswith("not-")
        base = name[4:] if negate else name
        entry = ctx.registry.get("typed", base)
        if entry is None:
            suggestion = ctx.registry.suggest("typed", base)
            prefix = "not-" if negate else ""
            hint = f" (did you mean '{prefix}{suggestion}'?)" if suggestion else ""
            item_ctx.at("type").problem(f"unknown assertion '{name}'{hint}")
            continue
        # Problems with `config` are reported after the builder's own (fields in the order
        # they are written), and the builder sees the default options instead of bad ones.
        config_problems: list[Problem] = []
        if entry.builtin:
            config_ctx = ctx.with_problems(config_problems, "")
            _unread_fields(spec, entry, base, item_ctx)
            _check_config(spec, entry, base, config_ctx.at(item_ctx.location).at("config"))
            if config_problems:
                spec = spec.model_copy(update={"config": {}})
        transform = _transform(spec, item_ctx)
        inner = entry.build(spec, item_ctx)
        ctx.problems.extend(config_problems)
        if inner is None or transform is False or len(ctx.problems) > before:
            continue
        if negate or isinstance(transform, JsonPathTransform):
            compiled = transform if isinstance(transform, JsonPathTransform) else None
            checkers.append(TypedAssertion(name, inner, negate, compiled, spec.weight))
        else:
            checkers.append(inner)  # nothing to wrap: one call less per check
        weights.append(spec.weight)
        metric_names.append(spec.metric)
    if checkers and not any(weights) and len(ctx.problems) == 0:
        ctx.problem("every assertion has weight 0; at least one must count in the score")
    return checkers, weights, metric_names
