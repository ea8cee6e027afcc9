"""The two shapes every assertion takes: a builder run once, and a checker run per response.

A builder turns what the user wrote into a `Checker`, validating everything (paths, regexes,
schemas, parameter types) and recording each problem on the `BuildContext` instead of raising,
so that one compile reports every problem. A checker holds only prebuilt objects and judges one
`Response` at a time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from .._exceptions import Problem
from ._paths import DotPath, PathSyntaxError
from ._regex import Pattern, compile_pattern, may_backtrack
from ._shape import DEFAULT_SHAPE, Shape

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ._context import CheckContext
    from ._registry import Registry
    from ._response import Response
    from ._result import AssertionResult
    from .graded._judging import FileJudgeRules

__all__ = ["BuildContext", "Checker", "Options"]

ModelT = TypeVar("ModelT", bound="BaseModel")


class Checker:
    """Judges one response. Subclasses set ``key`` and implement `check` and `describe`."""

    __slots__ = ("key",)

    key: str

    def check(self, response: Response, ctx: CheckContext) -> AssertionResult:
        """Judge ``response``; never raises for any response."""
        raise NotImplementedError

    def describe(self) -> str:
        """What the assertion demands, stated positively (``status is 'error'``)."""
        return self.key

    def verdict(self, response: Response, ctx: CheckContext) -> AssertionResult:
        """`check` for a ``not-`` form, which discards the message of a failure.

        A checker whose failure messages are costly may leave them out here; errors keep
        theirs.
        """
        return self.check(response, ctx)

    def observed(self, response: Response, ctx: CheckContext) -> str:
        """What the response showed, for the message of a ``not-`` form that fails.

        "" when `describe` says it all. Only called on that failure, so it may cost time.
        """
        return ""

    def fast_pure(self) -> bool:
        """Whether the generated fast path may call `check` before the detailed path does.

        True for the engine's own checkers, which only read the response; never for a user's
        function, which must run once per response.

        A checker may also define ``emit(gen: FastGen) -> bool``, writing its pass test into
        the fast function (`assertly.engine._fast`); False, or no ``emit``, means it is called.
        """
        return type(self).__module__.startswith("assertly.engine.")


class Options:
    """Compile-time options shared by all assertions of an expectation.

    Args:
        sensitive_prefixes: File prefixes that make a result sensitive (``if_sensitive_results``);
            none by default: which files are sensitive is the project's to say (its config).
        shape: Where the fields the expect dict reads live (`Shape`; the seed's top level
            by default).
        judge_rules: What assertions may set of their judge (`FileJudgeRules`; test files).
    """

    __slots__ = ("backtracks", "judge_rules", "judged", "sensitive_prefixes", "shape", "spans")

    def __init__(
        self,
        sensitive_prefixes: tuple[str, ...] = (),
        shape: Shape = DEFAULT_SHAPE,
        judge_rules: FileJudgeRules | None = None,
    ) -> None:
        self.sensitive_prefixes = tuple(sensitive_prefixes)
        self.shape = shape
        # What a test file's assertions may say about their judge (None: any, as in code).
        self.judge_rules = judge_rules
        # Set by the builders of model-graded assertions: the expectation needs a judge; "self"
        # when every one of them names its own base_url and model, "config" when one needs
        # the config's judge:; "local" when the only ones are local `similar`s (the runner
        # embeds for many cases at once).
        self.judged: str | None = None
        # Whether a pattern may search on the time-limited engine (`may_backtrack`): the
        # expectation's checks then share one limit for those searches (`one_time_limit`).
        self.backtracks = False
        # Set by the builders of span assertions and of ``source: trace``: the runner then
        # asks the agent's call for its spans (`Expectation.needs_spans`).
        self.spans = False


class BuildContext:
    """Where a builder records problems and finds shared compile services.

    Locations read like ``expect.one_of[1].status``; a child context extends its parent's.
    """

    __slots__ = ("location", "nested", "options", "problems", "registry")

    def __init__(
        self,
        registry: Registry,
        options: Options,
        problems: list[Problem],
        location: str,
        nested: NestedCompiler | None = None,
    ) -> None:
        self.registry = registry
        self.options = options
        self.problems = problems
        self.location = location
        # The expect-dict compiler (`_compile.compile_expect_checkers`), carried here so that
        # builders of nested dicts need not import the module that imports them.
        self.nested = nested

    def with_problems(self, problems: list[Problem], location: str) -> BuildContext:
        """A context with the same registry, options and compiler, recording into ``problems``."""
        return BuildContext(self.registry, self.options, problems, location, self.nested)

    def at(self, key: str | int) -> BuildContext:
        """A context for a nested key or list index."""
        if isinstance(key, int):
            location = f"{self.location}[{key}]"
        else:
            location = f"{self.location}.{key}" if self.location else key
        return BuildContext(self.registry, self.options, self.problems, location, self.nested)

    def problem(self, message: str) -> None:
        """Record a problem at this location."""
        self.problems.append(Problem(self.location, message))

    def model(self, model: type[ModelT], value: Any, example: str = "") -> ModelT | None:
        """Validate ``value`` against a strict parameter model, recording every error."""
        from pydantic import ValidationError

        try:
            return model.model_validate(value, strict=True)
        except ValidationError as error:
            for item in error.errors(include_url=False):
                where = self
                for part in item["loc"]:
                    where = where.at(part)  # type: ignore[arg-type]
                where.problem(_describe_validation_error(item, model, example))
            return None

    def whole_number(self, value: Any) -> int | None:
        """A whole number >= 0 (counts, word counts), recording a problem otherwise."""
        if type(value) is not int or value < 0:
            self.problem(f"expected a whole number >= 0, got {value!r}")
            return None
        return value

    def dot_path(self, text: Any, *, relative: bool = False) -> DotPath | None:
        """Compile a dot path, recording a problem if it is not one.

        A path from the response's root follows the shape (``results[*].file`` reads
        ``data.hits[*].file`` under ``{results: $.data.hits}``); a ``relative`` one (a field
        of each result) is taken as written.
        """
        if not isinstance(text, str):
            self.problem(f"expected a path string such as 'results[*].file', got {text!r}")
            return None
        try:
            return DotPath(text if relative else self.options.shape.rewrite(text))
        except PathSyntaxError as error:
            self.problem(f"invalid path {text!r}: {error}")
            return None

    def pattern(self, text: Any, *, ignore_case: bool = False) -> Pattern | None:
        """Compile a regular expression, recording a problem if it is invalid."""
        if not isinstance(text, str):
            self.problem(f"expected a regular expression string, got {text!r}")
            return None
        try:
            pattern = compile_pattern(text, ignore_case=ignore_case)
        except ValueError as error:
            self.problem(str(error))
            return None
        if not self.options.backtracks and may_backtrack(pattern):
            self.options.backtracks = True
        return pattern

    def compile_expect(self, spec: Any) -> list[Checker]:
        """Compile a nested expect dict (``one_of`` alternatives, ``if_*`` bodies)."""
        if self.nested is None:
            raise RuntimeError("this BuildContext has no expect-dict compiler (nested=None)")
        return self.nested(spec, self)


def _describe_validation_error(item: Any, model: type[BaseModel], example: str) -> str:
    kind = item["type"]
    if kind == "extra_forbidden":
        allowed = ", ".join(model.model_fields)
        text = f"unknown parameter (allowed: {allowed})"
        if item["loc"] and isinstance(item["loc"][-1], str):
            import difflib

            close = difflib.get_close_matches(item["loc"][-1], list(model.model_fields), n=1)
            if close:
                text += f" (did you mean '{close[0]}'?)"
    elif kind == "literal_error" and isinstance(item.get("input"), str):
        # An unknown choice (a mode, a match kind): the choices, and the closest one.
        import difflib
        import re

        choices = re.findall(r"'([^']*)'", str(item.get("ctx", {}).get("expected", "")))
        text = f"unknown value (allowed: {', '.join(choices)})"
        close = difflib.get_close_matches(item["input"], choices, n=1, cutoff=0.5)
        if close:
            text += f" (did you mean '{close[0]}'?)"
        text += f", got {item['input']!r}"
    elif kind == "missing":
        text = "required parameter is missing"
    elif kind in {"model_type", "dict_type"}:
        fields = ", ".join(model.model_fields)
        text = f"expected a mapping with {fields}, got {item['input']!r}"
    elif kind == "value_error" and "error" in item.get("ctx", {}):
        text = f"{item['ctx']['error']}, got {item['input']!r}"
    else:
        message = item["msg"]  # only the first letter: quoted values keep their case
        text = f"{message[:1].lower()}{message[1:]}, got {item['input']!r}"
    if example:
        text += f" (e.g. {example})"
    return text


NestedCompiler = Callable[[Any, BuildContext], list[Checker]]
