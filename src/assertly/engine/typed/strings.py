"""String assertions on the output text.

``equals``, ``contains``, ``icontains``, ``contains-all``, ``contains-any``, ``starts-with``,
``regex`` and ``word-count``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from ..._json import TOO_DEEP_MESSAGE, dumps
from .._base import BuildContext, Checker
from .._entries import typed_assertion
from .._regex import Pattern
from .._response import NOT_JSON
from .._result import AssertionResult, errored, failed, passed
from .._text import count_words, fold, lstrip_edges, nfc, strip_edges
from .._values import fmt, json_equal, json_type
from ._wrapper import JsonString, TypedSpec

if TYPE_CHECKING:
    from .._context import CheckContext
    from .._fast import FastGen
    from .._response import Response

_CLIP = 200


def _clip(text: str) -> str:
    return text if len(text) <= _CLIP else text[: _CLIP - 1] + "…"


def _required_string(spec: TypedSpec, ctx: BuildContext, example: str) -> str | None:
    # The seed's default value is "", but an assertion that always passes is a trap:
    # string assertions must say what they look for.
    if not spec.given("value") or not isinstance(spec.value, str) or spec.value == "":
        ctx.at("value").problem(
            f"{spec.type} needs a non-empty string value, got {spec.value!r} (e.g. {example})"
        )
        return None
    return spec.value


class Equals(Checker):
    """Deep JSON equality when both sides are JSON; text equality otherwise.

    Text is compared in NFC, without the whitespace and invisible marks at its ends (a command's
    final newline, a byte order mark); everything between is compared exactly.
    """

    __slots__ = ("compared_text", "expected", "expected_json", "expected_text", "string_forms")

    def __init__(self, expected: Any) -> None:
        self.key = "equals"
        self.expected = expected
        if isinstance(expected, str):
            self.expected_text = expected
            self.compared_text = strip_edges(nfc(expected))
            from .._response import Response as _Response

            self.expected_json = _Response(expected).whole_json
        else:
            self.expected_text = dumps(expected)
            self.compared_text = self.expected_text
            self.expected_json = expected
        # What a string picked from JSON must be to equal the value: the value as written
        # (a string), or the string it spells as JSON (`'"7"'`).
        self.string_forms = frozenset(
            nfc(form) for form in (expected, self.expected_json) if type(form) is str
        )

    def describe(self) -> str:
        return f"output equals {fmt(_clip(self.expected_text))}"

    def check(self, response: Response, ctx: CheckContext) -> AssertionResult:
        text = response.text
        if type(response) is JsonString:
            return self._check_string(text)
        if text == self.expected_text or strip_edges(response.nfc_text) == self.compared_text:
            return passed(self.key)
        if self.expected_json is not NOT_JSON:
            actual = response.whole_json
            if response.too_deep:
                return errored(self.key, TOO_DEEP_MESSAGE)
            if actual is not NOT_JSON:
                if json_equal(actual, self.expected_json):
                    return passed(self.key)
                where, want, got = _first_difference(self.expected_json, actual, "")
                at = f" at {where}" if where else ""
                return failed(
                    self.key,
                    f"Output JSON differs from the expected JSON{at}: expected "
                    f"{_clip(fmt_json(want))}, got {_clip(fmt_json(got))}",
                    path=where or None,
                    expected=self.expected_json,
                    actual=actual,
                )
        return failed(
            self.key,
            f"Expected output {fmt(_clip(self.expected_text))}, got {fmt(_clip(text))}",
            expected=self.expected_text,
            actual=text,
        )

    def emit_string(self, gen: FastGen, var: str) -> bool:
        """The test for a string a transform picked (`_check_string`'s pass)."""
        forms, normal = gen.const(self.string_forms), gen.const(nfc)
        gen.require(f"type({var}) is str and {normal}({var}) in {forms}")
        return True

    def _check_string(self, text: str) -> AssertionResult:
        """A string picked from JSON equals a string ``value`` (as written or JSON-quoted)."""
        expected = self.expected
        text = nfc(text)  # a JSON string's own whitespace is content: only NFC applies
        if text in self.string_forms:
            return passed(self.key)
        if type(expected) is str and type(self.expected_json) is not str:
            return failed(
                self.key,
                f"Expected output {fmt(_clip(expected))}, got {fmt(_clip(text))}",
                expected=expected,
                actual=text,
            )
        return failed(
            self.key,
            f"Expected {json_type(self.expected_json)} {_clip(fmt_json(self.expected_json))}, "
            f"got string {_clip(fmt_json(text))}",
            expected=self.expected_json,
            actual=text,
        )


_ABSENT = object()


def fmt_json(value: Any) -> str:
    """A JSON value in a message: compact JSON text (strings with their double quotes)."""
    return "(absent)" if value is _ABSENT else dumps(value)


def _first_difference(expected: Any, actual: Any, path: str) -> tuple[str, Any, Any]:
    """(path, expected, actual) of the first place two unequal JSON values differ.

    One depth-first walk in document order with an explicit stack, so values of any depth the
    engine parses cost time linear in their size. An object's extra keys and an array's length
    are checked after its shared members (markers pushed beneath them).
    """
    stack: list[tuple[Any, Any, str, str]] = [(expected, actual, path, "pair")]
    while stack:
        want, got, where, kind = stack.pop()
        if kind == "extra":  # every expected key matched: an extra key is the difference
            for key, value in got.items():
                if key not in want:
                    return (f"{where}.{key}" if where else str(key)), _ABSENT, value
            continue
        if kind == "length":
            if len(want) != len(got):
                return (f"{where} (length)" if where else "(length)"), len(want), len(got)
            continue
        if isinstance(want, dict) and isinstance(got, dict):
            stack.append((want, got, where, "extra"))
            children = []
            for key, value in want.items():
                child = f"{where}.{key}" if where else str(key)
                if key not in got:
                    children.append((value, _ABSENT, child, "missing"))
                    break
                children.append((value, got[key], child, "pair"))
            stack.extend(reversed(children))
        elif isinstance(want, list) and isinstance(got, list):
            stack.append((want, got, where, "length"))
            pairs = zip(want, got, strict=False)
            stack.extend(
                (left, right, f"{where}[{index}]", "pair")
                for index, (left, right) in reversed(list(enumerate(pairs)))
            )
        elif kind == "missing" or not json_equal(want, got):
            return where, want, got
    return path, expected, actual


@typed_assertion("equals")
def build_equals(spec: TypedSpec, ctx: BuildContext) -> Checker | None:
    """Exact string match, or JSON deep-equal (key order ignored) when both sides are JSON."""
    if not spec.given("value"):
        ctx.at("value").problem("equals needs a value to compare with")
        return None
    return Equals(spec.value)


class Contains(Checker):
    """Substring of the NFC text, case-sensitive or (``icontains``) caseless (`fold`)."""

    __slots__ = ("folded", "needle", "text")

    def __init__(self, key: str, text: str, folded: bool) -> None:
        self.key = key
        self.text = text  # as written, for messages
        self.needle = fold(text) if folded else nfc(text)
        self.folded = folded

    def describe(self) -> str:
        how = " (any case)" if self.folded else ""
        return f"output contains {fmt(self.text)}{how}"

    def emit(self, gen: FastGen) -> bool:
        text = gen.text("folded_text" if self.folded else "nfc_text")
        gen.require(f"{gen.const(self.needle)} in {text}")
        return True

    def emit_negated(self, gen: FastGen) -> bool:
        """``not-contains``: its failure has score 0 and no details, so this is a plain pass."""
        text = gen.text("folded_text" if self.folded else "nfc_text")
        gen.require(f"{gen.const(self.needle)} not in {text}")
        return True

    def check(self, response: Response, ctx: CheckContext) -> AssertionResult:
        text = response.folded_text if self.folded else response.nfc_text
        if self.needle in text:
            return passed(self.key)
        return failed(
            self.key,
            f"Output does not contain {fmt(self.text)}" + (" (any case)" if self.folded else ""),
            expected=self.text,
            actual=_clip(response.text),
        )


@typed_assertion("contains")
def build_contains(spec: TypedSpec, ctx: BuildContext) -> Checker | None:
    """Case-sensitive substring."""
    text = _required_string(spec, ctx, "value: 'machine learning'")
    return Contains("contains", text, folded=False) if text else None


@typed_assertion("icontains")
def build_icontains(spec: TypedSpec, ctx: BuildContext) -> Checker | None:
    """Case-insensitive substring (Unicode case folding, NFC)."""
    text = _required_string(spec, ctx, "value: 'Machine Learning'")
    return Contains("icontains", text, folded=True) if text else None


class ContainsMany(Checker):
    """All (``contains-all``) or any (``contains-any``) of several substrings."""

    __slots__ = ("need_all", "needles", "texts")

    def __init__(self, key: str, texts: list[str], need_all: bool) -> None:
        self.key = key
        self.texts = texts  # as written, for messages
        self.needles = [nfc(text) for text in texts]
        self.need_all = need_all

    def describe(self) -> str:
        quantifier = "all of" if self.need_all else "any of"
        return f"output contains {quantifier} " + ", ".join(map(fmt, self.texts))

    def check(self, response: Response, ctx: CheckContext) -> AssertionResult:
        text = response.nfc_text
        if self.need_all:
            missing = [
                written
                for written, needle in zip(self.texts, self.needles, strict=True)
                if needle not in text
            ]
            if not missing:
                return passed(self.key)
            return failed(
                self.key,
                "Output is missing " + ", ".join(map(fmt, missing)),
                expected=self.texts,
                actual=_clip(text),
            )
        for needle in self.needles:
            if needle in text:
                return passed(self.key)
        return failed(
            self.key,
            "Output contains none of " + ", ".join(map(fmt, self.texts)),
            expected=self.texts,
            actual=_clip(response.text),
        )


def _string_list(spec: TypedSpec, ctx: BuildContext) -> list[str] | None:
    value = spec.value
    if isinstance(value, str):
        ctx.at("value").problem(
            f"{spec.type} needs a list of strings, got the string {value!r} "
            f"(write value: [{value!r}])"
        )
        return None
    if not isinstance(value, list) or not value:
        ctx.at("value").problem(f"{spec.type} needs a non-empty list of strings, got {value!r}")
        return None
    if not all(isinstance(item, str) and item for item in value):
        ctx.at("value").problem(f"every item must be a non-empty string, got {value!r}")
        return None
    return value


@typed_assertion("contains-all")
def build_contains_all(spec: TypedSpec, ctx: BuildContext) -> Checker | None:
    """Every listed substring is present."""
    texts = _string_list(spec, ctx)
    return ContainsMany("contains-all", texts, need_all=True) if texts else None


@typed_assertion("contains-any")
def build_contains_any(spec: TypedSpec, ctx: BuildContext) -> Checker | None:
    """At least one listed substring is present."""
    texts = _string_list(spec, ctx)
    return ContainsMany("contains-any", texts, need_all=False) if texts else None


class StartsWith(Checker):
    """The NFC output, after leading whitespace and invisible marks, starts with a prefix."""

    __slots__ = ("compared", "prefix")

    def __init__(self, prefix: str) -> None:
        self.key = "starts-with"
        self.prefix = prefix  # as written, for messages
        self.compared = nfc(prefix)

    def describe(self) -> str:
        return f"output starts with {fmt(self.prefix)}"

    def emit(self, gen: FastGen) -> bool:
        # The plain case only; a prefix after whitespace or in another normal form is left
        # to the detailed path.
        gen.require(f"{gen.text('text')}.startswith({gen.const(self.prefix)})")
        return True

    def check(self, response: Response, ctx: CheckContext) -> AssertionResult:
        text = response.text
        if text.startswith(self.prefix):
            return passed(self.key)
        if text.isascii() and not text[:1].isspace():  # nothing to normalise or strip
            return self._failed(text)
        if lstrip_edges(response.nfc_text).startswith(self.compared):
            return passed(self.key)
        return self._failed(text)

    def _failed(self, text: str) -> AssertionResult:
        return failed(
            self.key,
            f"Output does not start with {fmt(self.prefix)}; it starts with "
            f"{fmt(text[: max(len(self.prefix), 20)])}",
            expected=self.prefix,
            actual=_clip(text),
        )


@typed_assertion("starts-with")
def build_starts_with(spec: TypedSpec, ctx: BuildContext) -> Checker | None:
    """The output starts with the prefix."""
    prefix = _required_string(spec, ctx, "value: 'Summary:'")
    return StartsWith(prefix) if prefix else None


class Regex(Checker):
    """A regex search (anywhere in the output)."""

    __slots__ = ("details", "pattern")

    def __init__(self, pattern: Pattern) -> None:
        self.key = "regex"
        self.pattern = pattern
        self.details = {"regex_engine": pattern.engine}

    def describe(self) -> str:
        return f"output matches {fmt(self.pattern.source)}"

    def emit(self, gen: FastGen) -> bool:
        gen.require(gen.match_test(self.pattern, gen.text("nfc_text")))
        return True

    def emit_negated(self, gen: FastGen) -> bool:
        """``not-regex``: its `verdict` fails with score 0 and no details: a plain pass."""
        gen.require(f"not ({gen.match_test(self.pattern, gen.text('nfc_text'))})")
        return True

    def verdict(self, response: Response, ctx: CheckContext) -> AssertionResult:
        # For `not-regex`, whose pass is then the plain pass the fast path gives (it carried
        # the engine in `details`, and cost a failure's message: 10.5 -> 7 µs a check).
        if self.pattern.search(response.nfc_text) is not None:
            return passed(self.key)
        return failed(self.key, "")

    def check(self, response: Response, ctx: CheckContext) -> AssertionResult:
        if self.pattern.search(response.nfc_text) is not None:
            return passed(self.key)
        return failed(
            self.key,
            f"Output has no match for pattern {fmt(self.pattern.source)}",
            expected=self.pattern.source,
            actual=_clip(response.text),
            details=self.details,
        )


class RegexOptions(BaseModel):
    """``config`` of ``regex``."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    ignore_case: bool = Field(default=False, description="Match letters in any case.")


@typed_assertion("regex", options=RegexOptions)
def build_regex(spec: TypedSpec, ctx: BuildContext) -> Checker | None:
    """The regex finds a match anywhere in the output (search, not full match)."""
    source = _required_string(spec, ctx, r"value: '\d{4}-\d{2}-\d{2}'")
    if source is None:
        return None
    ignore_case = bool(spec.config.get("ignore_case", False))
    pattern = ctx.at("value").pattern(source, ignore_case=ignore_case)
    return Regex(pattern) if pattern else None


class WordCount(Checker):
    """The number of words (`count_words`) is exact or within [min, max]."""

    __slots__ = ("high", "low")

    def __init__(self, low: int | None, high: int | None) -> None:
        self.key = "word-count"
        self.low = low
        self.high = high

    def _bounds(self) -> str:
        if self.low == self.high:
            text, last = f"exactly {self.low}", self.low
        elif self.high is None:
            text, last = f"at least {self.low}", self.low
        elif self.low is None:
            text, last = f"at most {self.high}", self.high
        else:
            text, last = f"between {self.low} and {self.high}", self.high
        return text + (" word" if last == 1 else " words")

    def describe(self) -> str:
        return f"output has {self._bounds()}"

    def emit(self, gen: FastGen) -> bool:
        count = gen.fresh("words")
        gen.statement(f"{count} = {gen.const(count_words)}({gen.text('text')})")
        if self.low is not None:
            gen.require(f"{count} >= {self.low:d}")
        if self.high is not None:
            gen.require(f"{count} <= {self.high:d}")
        return True

    def check(self, response: Response, ctx: CheckContext) -> AssertionResult:
        count = count_words(response.text)
        low, high = self.low, self.high
        if (low is None or count >= low) and (high is None or count <= high):
            return passed(self.key)
        return failed(
            self.key,
            f"Expected {self._bounds()}, got {count}",
            expected={
                name: bound for name, bound in (("min", low), ("max", high)) if bound is not None
            },
            actual=count,
        )


@typed_assertion("word-count")
def build_word_count(spec: TypedSpec, ctx: BuildContext) -> Checker | None:
    """Word count is exact (int) or within {min, max} (inclusive)."""
    value = spec.value
    value_ctx = ctx.at("value")
    if isinstance(value, dict):
        unknown = set(value) - {"min", "max"}
        if unknown or not value:
            value_ctx.problem(f"expected {{min, max}}, got keys {sorted(value)}")
            return None
        low = value_ctx.at("min").whole_number(value["min"]) if "min" in value else None
        high = value_ctx.at("max").whole_number(value["max"]) if "max" in value else None
        if ("min" in value and low is None) or ("max" in value and high is None):
            return None
        if low is not None and high is not None and low > high:
            value_ctx.problem(f"min {low} is greater than max {high}")
            return None
        return WordCount(low, high)
    exact = value_ctx.whole_number(value) if spec.given("value") else None
    if exact is None:
        if not spec.given("value"):
            value_ctx.problem("word-count needs a number or {min, max}")
        return None
    return WordCount(exact, exact)
