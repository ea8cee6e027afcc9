"""Assertions on the call rather than the body alone.

``agent_used_model`` (the model the target reported) and ``no_overlap`` (nothing shared with an
earlier step's response).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from ..._json import dumps
from .._base import BuildContext, Checker
from .._entries import expect_assertion
from .._paths import DotPath, PathMiss
from .._response import NOT_JSON, Response
from .._result import AssertionResult, errored, failed, passed
from .._shape import Field as ShapedField
from .._values import fmt
from ._common import JsonChecker, Params, miss_result, not_json

if TYPE_CHECKING:
    from .._context import CheckContext


class UsedModel(Checker):
    """The target reported this model for the call (or the response says, by its shape)."""

    __slots__ = ("model", "where")

    def __init__(self, model: str, where: ShapedField | None = None) -> None:
        self.key = "agent_used_model"
        self.model = model
        # With a shape giving `model`, the response itself names the model it used.
        self.where = where if where is not None and where.path is not None else None

    def describe(self) -> str:
        return f"the agent used model {fmt(self.model)}"

    def check(self, response: Response, ctx: CheckContext) -> AssertionResult:
        if self.where is not None:
            return self._from_response(response)
        actual = ctx.model
        if actual is None:
            return errored(
                self.key,
                "the target reported no model for this call, so the model cannot be judged",
                expected=self.model,
            )
        return self._compare(actual, None)

    def _compare(self, actual: Any, path: str | None) -> AssertionResult:
        if actual == self.model:
            return passed(self.key)
        return failed(
            self.key,
            f"Expected model {fmt(self.model)}, got {fmt(actual)}",
            path=path,
            expected=self.model,
            actual=actual,
        )

    def _from_response(self, response: Response) -> AssertionResult:
        assert self.where is not None
        data = response.json
        if data is NOT_JSON:
            return not_json(self.key, response)
        actual = self.where.get(data)
        if type(actual) is PathMiss:
            return failed(
                self.key,
                f"Expected model {fmt(self.model)}, but {actual.describe()}",
                path=self.where.text,
                expected=self.model,
            )
        return self._compare(actual, self.where.text)


@expect_assertion("agent_used_model")
def build_agent_used_model(value: Any, ctx: BuildContext) -> Checker | None:
    """The model the target reported equals this name."""
    if not isinstance(value, str) or not value:
        ctx.problem(f"expected a model name, got {value!r}")
        return None
    return UsedModel(value, ShapedField("model", ctx.options.shape))


class OverlapParams(Params):
    """Parameters of ``no_overlap``."""

    path: str
    with_: str = Field(alias="with")


def _key(value: Any) -> Any:
    """A hashable key with strict JSON equality: ``true`` is not ``1``, ``1`` is ``1.0``.

    Objects compare by value regardless of key order.
    """
    kind = type(value)
    if kind is bool:
        return ("b", value)
    if kind is int or kind is float:
        return ("n", value)  # 1 and 1.0 hash and compare equal
    if kind is str:
        return ("s", value)
    if value is None:
        return ("z", None)
    if isinstance(value, dict):
        return ("o", frozenset((key, _key(item)) for key, item in value.items()))
    if isinstance(value, list | tuple):
        return ("a", tuple(_key(item) for item in value))
    return ("?", dumps(value))


def _elements(path: DotPath, values: list[Any]) -> list[Any]:
    """The values to compare: a path to an array (no ``[*]``) stands for its elements."""
    if not path.has_wildcard and len(values) == 1 and type(values[0]) is list:
        return values[0]
    return values


class NoOverlap(JsonChecker):
    """Values at the path share nothing with the same path in a stored step's response."""

    __slots__ = ("path", "step")

    def __init__(self, path: DotPath, step: str) -> None:
        self.key = "no_overlap"
        self.path = path
        self.step = step

    def describe(self) -> str:
        return f"{self.path.text} shares nothing with step {fmt(self.step)}"

    def check_data(self, data: Any, ctx: CheckContext) -> AssertionResult:
        if self.step not in ctx.steps:
            known = ", ".join(sorted(ctx.steps)) or "none"
            return errored(
                self.key,
                f"no stored step named {fmt(self.step)} (stored: {known}); "
                "an earlier step needs `store: " + self.step + "`",
            )
        earlier = Response(ctx.steps[self.step]).json
        if earlier is NOT_JSON:
            return errored(self.key, f"the response stored as {fmt(self.step)} is not JSON")
        current = self.path.resolve(data)
        if type(current) is PathMiss:
            return miss_result(self.key, self.path, current)
        before = self.path.resolve(earlier)
        if type(before) is PathMiss:
            return errored(
                self.key, f"in step {fmt(self.step)}: {before.describe()}", path=before.at
            )
        seen = {_key(value) for value in _elements(self.path, before[0])}  # type: ignore[index]
        shared = [
            value
            for value in _elements(self.path, current[0])  # type: ignore[index]
            if _key(value) in seen
        ]
        if not shared:
            return passed(self.key)
        return failed(
            self.key,
            f"{self.path.text} overlaps with step {fmt(self.step)}: "
            + ", ".join(map(fmt, shared[:10]))
            + (f" (and {len(shared) - 10} more)" if len(shared) > 10 else ""),
            path=self.path.text,
            actual=shared,
        )


@expect_assertion("no_overlap", params=OverlapParams)
def build_no_overlap(value: Any, ctx: BuildContext) -> Checker | None:
    """Values at the path share nothing with those of an earlier stored step."""
    params = ctx.model(OverlapParams, value, '{path: "results[*].file", with: "first_page"}')
    if params is None:
        return None
    path = ctx.at("path").dot_path(params.path)
    return NoOverlap(path, params.with_) if path else None
