"""Tag assertions over ``results[*].metadata.tags``.

``all_have_tags``, ``none_have_tags`` and ``each_has_any_tag``. A result without tags has none,
but results none of which carries the tags field are an ``error``: the tags are elsewhere
(``shape: {tags: "$.results[*].tags"}`` or the key's own ``path`` says where), and a check over
tags that are not there would pass ``none_have_tags`` by default.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._base import BuildContext, Checker
from .._entries import expect_assertion
from .._paths import DotPath, PathMiss
from .._result import AssertionResult, errored, failed, passed
from .._shape import Field
from .._values import fmt, json_type
from ._common import VACUOUS, JsonChecker, results_field, results_keys, results_of

if TYPE_CHECKING:
    from .._context import CheckContext
    from .._fast import FastGen

_ALL = 0
_NONE = 1
_ANY = 2
# What `_tags_of` returns for a result that lacks the tags field altogether.
_ABSENT: list[Any] = []


def _tags_of(result: Any, inside: DotPath) -> list[Any] | str:
    """The result's tags, or a reason string when ``tags`` is there but not an array.

    A result without the field gives `_ABSENT` (no tags, told apart by identity); ``null``
    gives no tags too, but counts as carrying the field.
    """
    tags = inside.get(result)
    if type(tags) is PathMiss:
        return _ABSENT
    if tags is None:
        return []
    if type(tags) is not list:
        kind = json_type(tags)
        article = "an" if kind[0] in "aeiou" else "a"
        return f"has tags that are {article} {kind} ({fmt(tags)}), not an array"
    return tags


class Tags(JsonChecker):
    """Every / no / each result has (some of) the tags."""

    __slots__ = ("inside", "mode", "results", "tag_set", "tags")

    def __init__(
        self, key: str, tags: list[str], mode: int, results: Field, inside: DotPath
    ) -> None:
        self.key = key
        self.tags = tags
        self.tag_set = frozenset(tags)
        self.mode = mode
        self.results = results  # where the shape (or the key's path) puts `results`
        self.inside = inside  # where each result keeps its tags

    def _location(self, index: int | str) -> str:
        inside = self.inside.text
        return f"{self.results.text}[{index}]{'' if inside[0] == '[' else '.'}{inside}"

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
        inside = self.inside.keys
        if keys is None or inside is None:
            return False
        loop = gen.each(keys, vacuous=True)
        tags = loop.value(inside)
        wanted = gen.const(self.tag_set)
        if self.mode == _ALL:
            test = f"{wanted}.issubset({tags})"
        elif self.mode == _NONE:
            test = f"{wanted}.isdisjoint({tags})"
        else:
            test = f"not {wanted}.isdisjoint({tags})"
        loop.require(f"type({tags}) is list and {test}")
        return True

    def check_data(self, data: Any, ctx: CheckContext) -> AssertionResult:
        where = self.results.text
        results = results_of(data, self.results)
        if type(results) is str:
            return failed(self.key, f"Expected a '{where}' array, but {results}", path=where)
        if not results:
            return AssertionResult(self.key, passed(self.key).outcome, 1.0, details=VACUOUS)
        if self._all_pass(results):  # type: ignore[arg-type]
            return passed(self.key)
        inside = self.inside
        every = [_tags_of(result, inside) for result in results]  # type: ignore[union-attr]
        if all(tags is _ABSENT for tags in every):
            # Not a pass: the tags are elsewhere, so none_have_tags would hold by default.
            return errored(
                self.key,
                f"no result has tags at {self._location('*')}: say where they are with "
                "shape: {tags: '$.results[*].<path>'} or the key's path",
                path=self._location("*"),
                expected=self.tags,
            )
        problems: list[tuple[int, str]] = []
        mode = self.mode
        # The seed's wording: "Result 0 missing ..." among several results, "Result missing
        # ..." when there is only one (the path still names results[0]).
        single = len(results) == 1
        for index, tags in enumerate(every):
            label = "Result" if single else f"Result {index}"
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
                # Issue 28 red team, probe T1: tags that are objects ({"name": "draft"}) or
                # arrays hold their text where this check cannot see it, and none_have_tags
                # passed on results that all carried the excluded tag. Not a pass: an error.
                hidden = next((tag for tag in tags if type(tag) in (dict, list)), None)
                if hidden is not None:
                    kind = json_type(hidden)
                    return errored(
                        self.key,
                        f"{label} has a tag that is an {kind} ({fmt(hidden)}), not a string: "
                        "none_have_tags cannot tell whether it is one of the excluded tags",
                        path=self._location(index),
                        expected=self.tags,
                    )
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
        actual = every[index]
        return failed(
            self.key,
            message,
            path=self._location(index),
            expected=self.tags,
            actual=actual if type(actual) is list else None,
        )

    def _all_pass(self, results: list[Any]) -> bool:
        """Fast yes/no over well-formed results; any doubt goes to the full walk."""
        tag_set, mode, inside = self.tag_set, self.mode, self.inside.keys
        if inside is None:
            return False
        try:
            for result in results:
                tags = result
                for key in inside:
                    tags = tags[key]
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


def _tag_spec(value: Any, ctx: BuildContext) -> tuple[list[str], Field, DotPath] | None:
    """The tags, where the results are and where each keeps its tags; None after a problem.

    ``[tag, …]`` reads the tags where the shape says (``results[*].metadata.tags`` by default);
    ``{tags: [tag, …], path: "results[*].labels"}`` reads them at the key's own path, whose
    part before ``[*]`` follows the shape like every path from the response's root.
    """
    if isinstance(value, dict):
        unknown = sorted(set(value) - {"tags", "path"})
        if unknown or "tags" not in value or "path" not in value:
            ctx.problem(
                "expected a list of tags, or {tags: [...], path: 'results[*].tags'} with "
                f"exactly those two keys, got {value!r}"
            )
            return None
        tags = _tag_list(value["tags"], ctx.at("tags"))
        where = _own_path(value["path"], ctx.at("path"))
        return (tags, *where) if tags and where else None
    tags = _tag_list(value, ctx)
    if tags is None:
        return None
    return tags, results_field(ctx), DotPath(ctx.options.shape.tags)


def _own_path(text: Any, ctx: BuildContext) -> tuple[Field, DotPath] | None:
    """``results[*].labels``: the array's path (shaped) and the path inside each element."""
    prefix, star, rest = text.partition("[*]") if isinstance(text, str) else ("", "", "")
    if not prefix or not star or not rest.startswith((".", "[")) or "[*]" in rest:
        ctx.problem(
            "expected a path to the tags of every result, with one [*], such as "
            f"'results[*].tags' or 'data.hits[*].metadata.labels', got {text!r}"
        )
        return None
    array = ctx.dot_path(prefix)
    inside = ctx.dot_path(rest[1:] if rest.startswith(".") else rest, relative=True)
    if array is None or inside is None:
        return None
    return Field.at("results", array), inside


def _tag_list(value: Any, ctx: BuildContext) -> list[str] | None:
    if not isinstance(value, list) or not value or not all(isinstance(t, str) for t in value):
        ctx.problem(f"expected a non-empty list of tag strings such as ['work'], got {value!r}")
        return None
    return value


def _build(key: str, mode: int, value: Any, ctx: BuildContext) -> Checker | None:
    spec = _tag_spec(value, ctx)
    return Tags(key, spec[0], mode, spec[1], spec[2]) if spec else None


@expect_assertion("all_have_tags")
def build_all_have_tags(value: Any, ctx: BuildContext) -> Checker | None:
    """Every result has all of these tags."""
    return _build("all_have_tags", _ALL, value, ctx)


@expect_assertion("none_have_tags")
def build_none_have_tags(value: Any, ctx: BuildContext) -> Checker | None:
    """No result has any of these tags."""
    return _build("none_have_tags", _NONE, value, ctx)


@expect_assertion("each_has_any_tag")
def build_each_has_any_tag(value: Any, ctx: BuildContext) -> Checker | None:
    """Every result has at least one of these tags."""
    return _build("each_has_any_tag", _ANY, value, ctx)
