"""Responses as agents really send them: a JSON value, JSON text, or prose around JSON.

A `Response` is built once per check and parsed at most once per view:

* ``text`` — the output as text (JSON values are serialised compactly);
* ``whole_json`` — the whole text parsed as JSON, used by the typed dialect (``is-json``,
  ``equals``, transforms): prose is *not* searched here;
* ``json`` — the expect dialect's view: the whole text, else a fenced ```` ```json ```` block,
  else the first balanced JSON object in the text; ``extracted`` records which.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Final

import orjson

from .._json import (
    EXACT_DECODER,
    MAX_JSON_DEPTH,
    JsonTooDeep,
    dumps,
    has_long_digit_run,
    iter_brackets,
    loads_first_try,
    loads_nested,
    loads_stdlib,
    nested_too_deep,
    surrogate_refused,
)
from .._python_values import PLAIN_TYPES, as_json_value
from ._text import fold_normal, nfc

__all__ = ["NOT_JSON", "Response", "fenced_spans", "iter_json_values"]


class _NotJson:
    __slots__ = ()

    def __repr__(self) -> str:
        return "NOT_JSON"

    def __bool__(self) -> bool:
        return False


NOT_JSON: Final[Any] = _NotJson()
_UNSET: Final[Any] = object()

# A fence: ``` (or more) and an optional language, ending its line. Models often open a fence
# after text on the same line ("Here it is: ```json"), so the start of the line is not required.
_FENCE_LINE = re.compile(r"(`{3,})[ \t]*([\w+.-]*)[ \t\r]*$", re.MULTILINE)
_JSON_FENCE_LANGUAGES = frozenset({"", "json", "jsonc", "json5"})
_OPENERS = re.compile(r"[\[{]")
# What JSON text can start with after its whitespace (a value: object, array, string, number,
# true, false, null). Anything else is refused by every parser `loads` tries, so a text such as
# prose is known not to be JSON without asking orjson, whose refusal costs ~3.5 µs (it builds
# an error with a line and column): most of an `is-json` on prose.
_JSON_SPACE = frozenset(" \t\n\r")
_JSON_STARTS = frozenset('{["-0123456789tfn')
_FIRST_NON_SPACE = re.compile(r"[^ \t\n\r]")
_CHEAP_ATTEMPTS = 8
_orjson_loads = orjson.loads
MAX_DEPTH = MAX_JSON_DEPTH  # deeper JSON is never handed to a parser: it cannot be judged


# The stdlib decoder that accepts what `loads` does (no NaN, no overflowing number), so JSON
# found inside text is JSON by the same rules as a whole response.
_DECODER = EXACT_DECODER


def _bracket_matches(text: str, start: int, matches: dict[int, int]) -> int:
    """Match brackets from ``start`` (outside any string) until its bracket closes.

    Records ``opener -> closer`` (-1 when it never closes) for every bracket opened outside a
    string on the way, so later candidates inside this stretch need no scan of their own.
    Returns where it stopped.
    """
    stack: list[int] = []
    # Openers holding nesting deeper than any parser accepts are never handed to one: trying
    # each of 100,000 nested "[" would cost a copy of the rest of the text per try.
    too_deep: set[int] = set()
    marked = 0
    for position, char in iter_brackets(text, start):
        if char in "[{":
            stack.append(position)
            while len(stack) - marked > MAX_DEPTH:
                too_deep.add(stack[marked])
                marked += 1
        elif char in "]}" and stack:
            opener = stack.pop()
            matches[opener] = _TOO_DEEP if opener in too_deep else position
            marked = min(marked, len(stack))
            if not stack:
                return position
    for opener in stack:
        matches[opener] = -1  # never closes: no candidate can start here
    return len(text)


_TOO_DEEP = -2


def iter_json_values(text: str, openers: str = "{[") -> Iterator[tuple[int, int, Any]]:
    """Yield ``(start, end, value)`` for each outermost JSON object/array in ``text``.

    Values are found left to right; after a value parses, scanning resumes after it. Each
    candidate's extent comes from one string-aware bracket-matching pass that serves every
    bracket inside it too, and only balanced spans are handed to the parser, so adversarial
    text (thousands of ``{`` or ``[1,``) costs time close to linear in its length.

    Raises:
        JsonTooDeep: A balanced candidate nests deeper than `MAX_JSON_DEPTH` (raised when it
            is reached, so values before it are yielded first).
    """
    pattern = _OPENERS if openers == "{[" else re.compile("[" + re.escape(openers) + "]")
    position = 0
    # Cheap mode first: the C decoder parses a well-formed value straight away. Each failed
    # attempt costs time proportional to its offset (the error computes a line number), so
    # after a few failures switch to bracket matching, whose total cost stays near linear.
    attempts = _CHEAP_ATTEMPTS
    while attempts:
        found = pattern.search(text, position)
        if found is None:
            return
        start = found.start()
        try:
            value, end = _DECODER.raw_decode(text, start)
        except ValueError:
            attempts -= 1
            position = start + 1
            continue
        except RecursionError:
            position = start  # deep: bracket matching measures it, and the span parses deep
            break
        yield start, end, value
        position = end
    yield from _iter_matched(text, pattern, position)


def _iter_matched(
    text: str, pattern: re.Pattern[str], position: int
) -> Iterator[tuple[int, int, Any]]:
    matches: dict[int, int] = {}
    scanned_to = -1  # brackets before this, opened outside strings, are already in `matches`
    while True:
        found = pattern.search(text, position)
        if found is None:
            return
        start = found.start()
        if start > scanned_to:
            scanned_to = _bracket_matches(text, start, matches)
        elif start not in matches:
            # Inside an earlier stretch, where that pass took it for part of a string.
            _bracket_matches(text, start, matches)
        end = matches.get(start, -1)
        if end < 0:
            if end == _TOO_DEEP:
                raise JsonTooDeep
            position = start + 1
            continue
        value = _loads(text[start : end + 1])
        if value is NOT_JSON:
            position = start + 1
            continue
        yield start, end + 1, value
        position = end + 1


def _loads(text: str) -> Any:
    """The JSON value of ``text``, or `NOT_JSON`; `JsonTooDeep` passes through."""
    try:
        return loads_first_try(text)
    except ValueError as error:  # the common case for prose: no re-raise, no message built
        return _not_loaded(text, error)


def _not_loaded(text: str, error: ValueError) -> Any:
    """`_loads` after `loads_first_try` refused ``text``: `NOT_JSON`, or the value.

    The value of JSON holding a lone surrogate (read as `loads` does) or nested beyond orjson.
    """
    if surrogate_refused(error):
        try:
            return loads_stdlib(text)
        except ValueError as stdlib_error:
            error = stdlib_error  # nested too deeply for it too: `loads_nested` below
    if not nested_too_deep(error):
        return NOT_JSON
    try:
        return loads_nested(text)
    except JsonTooDeep:
        raise
    except ValueError:
        return NOT_JSON


def _written(value: Any) -> str:
    """A JSON value's text, as text assertions read it: never a stand-in such as a ``repr``.

    A plain value is written by orjson (or the standard library for integers beyond 64 bits).
    orjson writes NaN as null; a check for it costs 0.4 µs per 1 KB (a search of the text
    for "null"), a fifth of a `contains` on a dict, for a value only a direct caller can
    give (JSON text cannot hold NaN; a `py:` agent's value is checked): not made.
    Inside a plain dict or list the engine does not look, so a value there may stand for JSON
    (a pydantic model: read as it, `as_json_value`) or have no JSON reading (a set, an
    object): then `NotJsonValue`, which the checker's caller makes an ``error`` (could not
    judge), where the message writer's repr would have been searched.
    """
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except (TypeError, orjson.JSONEncodeError):
        return dumps(as_json_value(value))


def fenced_spans(text: str) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of the bodies of fenced code blocks tagged json (or untagged)."""
    opening: re.Match[str] | None = None
    for fence in _fence_lines(text):
        if opening is None:
            opening = fence
        elif fence.group(2) == "" and len(fence.group(1)) >= len(opening.group(1)):
            if opening.group(2).lower() in _JSON_FENCE_LANGUAGES:
                yield opening.end() + 1, fence.start()
            opening = None


def _fence_lines(text: str) -> Iterator[re.Match[str]]:
    """``_FENCE_LINE.finditer(text)``, five times faster: tried only where ``` is.

    A fence starts with three backticks, so only there can a match start; the regex searching
    for itself tries every position (it has no literal prefix to skip with).
    """
    position = text.find("```")
    while position >= 0:
        fence = _FENCE_LINE.match(text, position)
        if fence is None:
            position = text.find("```", position + 1)
        else:
            yield fence
            position = text.find("```", fence.end())


def _fenced_blocks(text: str) -> Iterator[str]:
    """Bodies of fenced code blocks tagged json (or untagged), pairing fences in order."""
    for start, end in fenced_spans(text):
        yield text[start:end]


def _not_json_start(text: str) -> bool:
    """Whether ``text`` cannot be JSON by its first character after JSON's whitespace."""
    first = text[:1]
    if first in _JSON_STARTS:  # the usual JSON text: no search
        return False
    found = _FIRST_NON_SPACE.search(text) if first in _JSON_SPACE else None
    return found is None or found.group() not in _JSON_STARTS


class _Unchecked:
    """A text's JSON as orjson read it, not yet tested for big integers (`unchecked_json`)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


class Response:
    """One output under test, normalised lazily.

    Args:
        value: A JSON value (dict, list, str, number, bool, None) or the raw output as ``str``
            or ``bytes``. Text is kept as received; bytes are decoded as UTF-8, with invalid
            sequences replaced (and ``decode_errors`` set). Any other value is read as the
            JSON value it stands for (`as_json_value`: a pydantic model such as an SDK's
            reply, a dataclass, a tuple …).

    Raises:
        NotJsonValue: A value with no JSON reading (a set, an arbitrary object): a `TypeError`.
    """

    __slots__ = (
        "_folded",
        "_json",
        "_nfc",
        "_text",
        "_whole",
        "decode_errors",
        "extracted",
        "is_text",
        "too_deep",
        "trace_cache",
    )

    def __init__(self, value: Any) -> None:
        self._nfc: str | None = None
        self._folded: str | None = None
        self.extracted: str | None = None
        self.decode_errors = False
        # Set when the JSON found was nested deeper than MAX_JSON_DEPTH: such a response is
        # not "not JSON" but JSON that cannot be judged, an error for what needs its JSON.
        self.too_deep = False
        # The tool calls in the response, read once by the first trajectory assertion that asks
        # (`trajectory._read.trace_of` fills it; this module knows nothing of tool calls).
        self.trace_cache: Any = None
        if type(value) is str:  # the common case first
            self.is_text = True
            self._text: str = value
            self._whole: Any = _UNSET
            self._json: Any = _UNSET
            return
        if isinstance(value, bytes | bytearray | memoryview):
            raw = bytes(value)
            try:
                value = raw.decode("utf-8")
            except UnicodeDecodeError:
                value = raw.decode("utf-8", errors="replace")
                self.decode_errors = True
        if isinstance(value, str):
            self.is_text = True
            self._text = value
            self._whole = _UNSET
            self._json = _UNSET
        else:
            kind = type(value)
            if kind is not dict and kind is not list and kind not in PLAIN_TYPES:
                # Judged as the JSON it stands for, never as its repr (whose text a
                # `contains` would search).
                value = as_json_value(value)
            self.is_text = False
            self._text = _UNSET
            self._whole = value
            self._json = value

    @property
    def text(self) -> str:
        """The output as text; a JSON value is serialised compactly (non-ASCII kept)."""
        text = self._text
        if text is _UNSET:
            text = self._text = _written(self._whole)
        return text

    @property
    def nfc_text(self) -> str:
        """The text in Unicode NFC, as text assertions compare it (computed once)."""
        text = self._nfc
        if text is None:
            text = self.text
            # ASCII, the common case, is its own NFC (no call made for it).
            text = self._nfc = text if text.isascii() else nfc(text)
        return text

    @property
    def folded_text(self) -> str:
        """The text case-folded for caseless comparison (`fold`, computed once)."""
        text = self._folded
        if text is None:
            # From the shared NFC text: the output is normalised once per check. ASCII folds
            # to its lower case.
            text = self.nfc_text
            text = self._folded = text.lower() if text.isascii() else fold_normal(text)
        return text

    @property
    def whole_json(self) -> Any:
        """The whole output parsed as JSON, or `NOT_JSON` (`too_deep` says when nested too deep)."""
        whole = self._whole
        if whole is _UNSET or type(whole) is _Unchecked:
            text = self._text
            if text.startswith("\ufeff"):
                text = text[1:]  # a byte order mark is an encoding artefact, not JSON
            if type(whole) is _Unchecked and not has_long_digit_run(text):
                self._whole = whole = whole.value  # what `loads` returns: orjson's value
                return whole
            if _not_json_start(text):
                self._whole = NOT_JSON
                return NOT_JSON
            try:
                whole = loads_first_try(text)
            except ValueError as error:
                try:
                    whole = _not_loaded(text, error)
                except JsonTooDeep:
                    whole, self.too_deep = NOT_JSON, True
            self._whole = whole
        return whole

    def unchecked_json(self) -> Any:
        """The whole text as orjson reads it, without the test for big integers.

        For a reader that reads no number: orjson reads integers beyond 64 bits inexactly,
        and `loads` tests the text for them first, which costs a quarter of the parse. Its
        value is `whole_json` but for such integers (orjson accepts only text `loads` accepts,
        and reads it the same way otherwise), and `whole_json` takes it over, without parsing
        again, when the test finds none. `NOT_JSON` when orjson refuses the text (`whole_json`
        may still read it: big integers, deep nesting). A response that is a value: the value.
        """
        whole = self._whole
        if whole is _UNSET:
            text = self._text
            if text.startswith("\ufeff"):
                text = text[1:]
            if _not_json_start(text):
                self._whole = NOT_JSON
                return NOT_JSON
            try:
                value = _orjson_loads(text)
            except ValueError:
                return NOT_JSON
            self._whole = _Unchecked(value)
            return value
        if type(whole) is _Unchecked:
            return whole.value
        return whole

    def adopt_unchecked(self, value: Any) -> None:
        """Take ``value`` as `unchecked_json`: orjson's value of this very text, read already."""
        if self.is_text and self._whole is _UNSET:
            self._whole = _Unchecked(value)

    @property
    def json(self) -> Any:
        """The JSON the expect dialect judges: whole text, fenced block or embedded object."""
        found = self._json
        if found is _UNSET:
            found = self.whole_json
            if found is NOT_JSON and not self.too_deep:
                try:
                    found = self._extract()
                except JsonTooDeep:
                    found, self.too_deep = NOT_JSON, True
            self._json = found
        return found

    def _extract(self) -> Any:
        text = self._text
        for body in _fenced_blocks(text):
            value = _loads(body)
            if value is not NOT_JSON:
                self.extracted = "fenced"
                return value
        for _start, _end, value in iter_json_values(text, "{"):
            self.extracted = "embedded"
            return value
        return NOT_JSON
