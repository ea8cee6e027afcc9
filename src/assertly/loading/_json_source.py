"""Parse a JSON test file with the position of every key, in about the time of a plain parse.

Composing JSON as YAML for positions took ~10 s for a 3 MB file of 5,000 tests. Here the top
levels of the document (down to each test or case) are walked by hand, every subtree below them
is parsed by the stdlib's C scanner in one call, and the positions inside a subtree are found
only when a problem there needs one. Anything unusual (invalid JSON,
duplicate keys, NaN, deep nesting) is left to the slower exact path, which words the problem.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from typing import Any

from .._json import finite_float

__all__ = ["UnusualJSON", "depth_exceeds", "parse_json_with_positions"]

Key = tuple[str | int, ...]

# Keys this deep are walked by hand (``test_suites.S.tests.N``, ``eval.cases.N``); deeper ones
# are located when a problem needs them. Four reaches every test and eval case (whose lines
# every run reports), so a file without problems never walks further, and each test is parsed
# by the C scanner in one call.
_WALKED_DEPTH = 4
_SPACE = re.compile(r"[ \t\n\r]*")


class UnusualJSON(Exception):
    """The fast walk met something the exact path must word (or refuse)."""


def _reject_constant(name: str) -> Any:
    raise UnusualJSON(name)


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        raise UnusualJSON("duplicate key")
    return found


# The C string scanner the stdlib decoder itself uses (not in the stub's public names).
scanstring: Any = getattr(json.decoder, "scanstring")  # noqa: B009
# A number that overflows to infinity (1e400) raises: left to the exact path, which words it.
_DECODER = json.JSONDecoder(
    parse_constant=_reject_constant, parse_float=finite_float, object_pairs_hook=_unique_pairs
)


def depth_exceeds(data: Any, limit: int) -> bool:
    """True when lists and dicts nest more than ``limit`` deep (no recursion)."""
    stack = [(data, 0)] if type(data) in (dict, list) else []
    while stack:
        value, depth = stack.pop()
        if depth >= limit:
            return True
        children = value.values() if type(value) is dict else value
        stack.extend((child, depth + 1) for child in children if type(child) in (dict, list))
    return False


class _Walk:
    """One walk over ``text``: key path → offset, and the spans parsed whole below the limit."""

    def __init__(self, text: str, limit: int, max_nesting: int = 1_000) -> None:
        self.text = text
        self.limit = limit
        self.max_nesting = max_nesting
        self.offsets: dict[Key, int] = {}
        self.spans: dict[Key, int] = {}

    def value(self, pos: int, key: Key) -> tuple[Any, int]:
        text = self.text
        pos = _SPACE.match(text, pos).end()  # type: ignore[union-attr]
        opening = text[pos : pos + 1]
        if opening == "{" and len(key) < self.limit:
            return self._object(pos + 1, key)
        if opening == "[" and len(key) < self.limit:
            return self._array(pos + 1, key)
        try:
            found, end = _DECODER.raw_decode(text, pos)
        except (ValueError, RecursionError) as error:
            raise UnusualJSON(str(error)) from None
        if opening in ("{", "["):
            self.spans[key] = pos
            # A subtree nests no deeper than it has brackets: only one with more brackets than
            # the nesting left needs its depth measured (a few subtrees in a file, if any).
            room = self.max_nesting - len(key)
            brackets = text.count("{", pos, end) + text.count("[", pos, end)
            if brackets > room and depth_exceeds(found, room):
                raise UnusualJSON("nested too deeply")
        return found, end

    def _object(self, pos: int, key: Key) -> tuple[dict[str, Any], int]:
        text, space = self.text, _SPACE
        found: dict[str, Any] = {}
        pos = space.match(text, pos).end()  # type: ignore[union-attr]
        if text[pos : pos + 1] == "}":
            return found, pos + 1
        while True:
            if text[pos : pos + 1] != '"':
                raise UnusualJSON("expected a key")
            name, after = scanstring(text, pos + 1)
            if name in found:
                raise UnusualJSON("duplicate key")
            child = (*key, name)
            self.offsets[child] = pos
            after = space.match(text, after).end()  # type: ignore[union-attr]
            if text[after : after + 1] != ":":
                raise UnusualJSON("expected ':'")
            found[name], pos = self.value(after + 1, child)
            pos = space.match(text, pos).end()  # type: ignore[union-attr]
            separator = text[pos : pos + 1]
            if separator == "}":
                return found, pos + 1
            if separator != ",":
                raise UnusualJSON("expected ',' or '}'")
            pos = space.match(text, pos + 1).end()  # type: ignore[union-attr]

    def _array(self, pos: int, key: Key) -> tuple[list[Any], int]:
        text, space = self.text, _SPACE
        found: list[Any] = []
        pos = space.match(text, pos).end()  # type: ignore[union-attr]
        if text[pos : pos + 1] == "]":
            return found, pos + 1
        while True:
            child = (*key, len(found))
            self.offsets[child] = pos
            item, pos = self.value(pos, child)
            found.append(item)
            pos = space.match(text, pos).end()  # type: ignore[union-attr]
            separator = text[pos : pos + 1]
            if separator == "]":
                return found, pos + 1
            if separator != ",":
                raise UnusualJSON("expected ',' or ']'")
            pos = space.match(text, pos + 1).end()  # type: ignore[union-attr]


class JSONPositions:
    """``key path -> (line, column)`` for a JSON text, deep keys located when first asked for."""

    def __init__(self, text: str, walk: _Walk) -> None:
        self._text = text
        self._offsets = walk.offsets
        self._spans = walk.spans
        self._newlines: list[int] | None = None

    def get(self, key: Key) -> tuple[int, int] | None:
        """Line and column (from 1) where ``key`` was written, or None."""
        offset = self._offsets.get(key)
        if offset is None and len(key) > _WALKED_DEPTH:
            offset = self._locate_deep(key)
        if offset is None:
            return None
        if self._newlines is None:
            self._newlines = [found.start() for found in re.finditer("\n", self._text)]
        line = bisect_right(self._newlines, offset)
        start = self._newlines[line - 1] + 1 if line else 0
        return line + 1, offset - start + 1

    def _locate_deep(self, key: Key) -> int | None:
        subtree = key[:_WALKED_DEPTH]
        start = self._spans.pop(subtree, None)
        if start is None:
            return None
        # Nesting was checked when the file was read, so this walk's recursion is bounded.
        walk = _Walk(self._text, limit=1_000)
        walk.value(start, subtree)
        self._offsets.update(walk.offsets)
        return self._offsets.get(key)


def parse_json_with_positions(text: str, max_nesting: int = 1_000) -> tuple[Any, JSONPositions]:
    """The data of a JSON document and where each key was written.

    Raises:
        UnusualJSON: Invalid JSON, a duplicate key, NaN/Infinity, or lists and dicts nested
            more than ``max_nesting`` deep: parse it the exact way.
    """
    walk = _Walk(text, _WALKED_DEPTH, max_nesting)
    try:
        data, end = walk.value(0, ())
    except (ValueError, IndexError, RecursionError) as error:
        raise UnusualJSON(str(error)) from None
    if _SPACE.match(text, end).end() != len(text):  # type: ignore[union-attr]
        raise UnusualJSON("extra data")
    return data, JSONPositions(text, walk)
