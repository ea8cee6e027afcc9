"""Tag assertions over ``results[*].metadata.tags``.

``all_have_tags``, ``none_have_tags`` and ``each_has_any_tag``. A result without tags has none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._base import BuildContext, Checker
from .._entries import expect_assertion
from .._result import AssertionResult, failed, passed
from .._shape import Field
from .._values import fmt, json_type
from ._common import VACUOUS, JsonChecker, results_field, results_keys, results_of

if TYPE_CHECKING:
    from .._context import CheckContext
    from .._fast import FastGen

_ALL = 0
_NONE = 1
_ANY = 2


def _tags_of(result: Any) -> list[Any] | str:
    """The result's tags, or a reason string when ``tags`` is there but not an array."""
    metadata = result.get("metadata") if type(result) is dict else None
    tags = metadata.get("tags") if type(metadata) is dict else None
    if tags is None:
        return []
    if type(tags) is not list:
        kind = json_type(tags)
        article = "an" if kind[0] in "aeiou" else "a"
        return f"has tags that are {article} {kind} ({fmt(tags)}), not an array"
    return tags


class Tags(JsonChecker):
    """Every / no / each result has (some of) the tags."""

    __slots__ = ("mode", "results", "tag_set", "tags")

    def __init__(self, key: str, tags: list[str], mode: int, results: Field) -> None:
        self.key = key
        self.tags = tags
        self.tag_set = frozenset(tags)
        self.mode = mode
        self.results = results  # where the shape puts `results`

    def describe(self) -> str:
        listed = ", ".join(map(fmt, self.tags))
        if self.mode == _ALL:
            return f"every result has tags {listed}"
        if self.mode == _NONE:
            return f"no result has tags {listed}"
        return f"every result has one of the tags {listed}"

    def emit(self, gen: FastGen) -> bool:
        # `_all_pass` as code: every result has a tags array that decides by itself.
        keys = results_keys(self.results)
        if keys is None:
            return False
        loop = gen.each(keys, vacuous=True)
        tags = loop.value(("metadata", "tags"))
        wanted = gen.const(self.tag_set)
        if self.mode == _ALL:
            test = f"{wanted}.issubset({tags})"
        elif self.mode == _NONE:
            test = f"{wanted}.isdisjoint({tags})"
        else:
            test = f"not {wanted}.isdisjoint({tags})"
        loop.require(f"type({tags}) is list and {test}")
        return True

    def judge(self, data: Any, ctx: CheckContext) -> AssertionResult:
        where = self.results.text
        results = results_of(data, self.results)
        if type(results) is str:
            return failed(self.key, f"Expected a '{where}' array, but {results}", path=where)
        if not results:
            return AssertionResult(self.key, passed(self.key).outcome, 1.0, details=VACUOUS)
        if self._all_pass(results):  # type: ignore[arg-type]
            return passed(self.key)
        problems: list[tuple[int, str]] = []
        mode = self.mode
        # The seed's wording: "Result 0 missing ..." among several results, "Result missing
        # ..." when there is only one (the path still names results[0]).
        single = len(results) == 1
        for index, result in enumerate(results):
            label = "Result" if single else f"Result {index}"
            tags = _tags_of(result)
            if type(tags) is str:
                problems.append((index, f"{label} {tags}"))
                continue
            present = {tag for tag in tags if type(tag) is str}
            if mode == _ALL:
                missing = [tag for tag in self.tags if tag not in present]
                if len(missing) == 1:
                    problems.append((index, f"{label} missing required tag: {fmt(missing[0])}"))
                elif missing:
                    problems.append(
                        (index, f"{label} missing required tags: " + ", ".join(map(fmt, missing)))
                    )
            elif mode == _NONE:
                found = [tag for tag in self.tags if tag in present]
                if found:
                    noun = "tag" if len(found) == 1 else "tags"
                    problems.append(
                        (index, f"{label} has excluded {noun}: " + ", ".join(map(fmt, found)))
                    )
            elif not present & self.tag_set:
                problems.append(
                    (index, f"{label} has none of the tags: " + ", ".join(map(fmt, self.tags)))
                )
        if not problems:
            return passed(self.key)
        index, message = problems[0]
        if len(problems) > 1:
            message += f" (and {len(problems) - 1} more)"
        actual = _tags_of(results[index])
        return failed(
            self.key,
            message,
            path=f"{where}[{index}].metadata.tags",
            expected=self.tags,
            actual=actual if type(actual) is list else None,
        )

    def _all_pass(self, results: list[Any]) -> bool:
        """Fast yes/no over well-formed results; any doubt goes to the full walk."""
        tag_set, mode = self.tag_set, self.mode
        try:
            for result in results:
                tags = result["metadata"]["tags"]
                if type(tags) is not list:
                    return False
                if mode == _ALL:
                    if not tag_set.issubset(tags):
                        return False
                elif (mode == _NONE) is not tag_set.isdisjoint(tags):
                    return False
        except (KeyError, TypeError):  # no metadata/tags, not a mapping, unhashable tags
            return False
        return True


def _tag_list(value: Any, ctx: BuildContext) -> list[str] | None:
    if not isinstance(value, list) or not value or not all(isinstance(t, str) for t in value):
        ctx.problem(f"expected a non-empty list of tag strings such as ['work'], got {value!r}")
        return None
    return value


@expect_assertion("all_have_tags")
def build_all_have_tags(value: Any, ctx: BuildContext) -> Checker | None:
    """Every result has all of these tags."""
    tags = _tag_list(value, ctx)
    return Tags("all_have_tags", tags, _ALL, results_field(ctx)) if tags else None


@expect_assertion("none_have_tags")
def build_none_have_tags(value: Any, ctx: BuildContext) -> Checker | None:
    """No result has any of these tags."""
    tags = _tag_list(value, ctx)
    return Tags("none_have_tags", tags, _NONE, results_field(ctx)) if tags else None


@expect_assertion("each_has_any_tag")
def build_each_has_any_tag(value: Any, ctx: BuildContext) -> Checker | None:
    """Every result has at least one of these tags."""
    tags = _tag_list(value, ctx)
    return Tags("each_has_any_tag", tags, _ANY, results_field(ctx)) if tags else None
