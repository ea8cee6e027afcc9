"""Parse a JSON test file with the position of every key, in about the time of a plain parse.

Composing JSON as YAML for positions took ~10 s for a 3 MB file of 5,000 tests. Here the top
levels of the document (down to the keys inside each test or case) are walked by hand, every
subtree below them is parsed by the stdlib's C scanner in one call, and the positions inside a
subtree are found only when a problem there needs one. Anything unusual (invalid JSON,
duplicate keys, NaN, deep nesting) is left to the slower exact path, which words the problem.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from typing import Any

__all__ = ["UnusualJSON", "parse_json_with_positions"]

Key = tuple[str | int, ...]

# Keys this deep are walked by hand (``test_suites.S.tests.N.assertions``); deeper ones are
# located on demand. Five covers every test and eval case key, so a file without problems never
# walks further.
_WALKED_DEPTH = 5
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
_DECODER = json.JSONDecoder(parse_constant=_reject_constant, object_pairs_hook=_unique_pairs)


class _Walk:
    """One walk over ``text``: key path → offset, and the spans parsed whole below the limit."""

    def __init__(self, text: str, limit: int) -> None:
        self.text = text
        self.limit = limit
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
        if opening in ("{", "["):
            self.spans[key] = pos
        try:
            return _DECODER.raw_decode(text, pos)
        except (ValueError, RecursionError) as error:
            raise UnusualJSON(str(error)) from None

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


def parse_json_with_positions(text: str) -> tuple[Any, JSONPositions]:
    """The data of a JSON document and where each key was written.

    Raises:
        UnusualJSON: Invalid JSON, a duplicate key or NaN/Infinity: parse it the exact way.
    """
    walk = _Walk(text, _WALKED_DEPTH)
    try:
        data, end = walk.value(0, ())
    except (ValueError, IndexError, RecursionError) as error:
        raise UnusualJSON(str(error)) from None
    if _SPACE.match(text, end).end() != len(text):  # type: ignore[union-attr]
        raise UnusualJSON("extra data")
    return data, JSONPositions(text, walk)
