"""Paths into JSON responses.

The expect dialect uses dot paths: ``pagination.total``, ``results[0].metadata``,
``results[*].metadata.tags`` (``[*]`` visits every element), ``items[-1]``, and
``meta["key.with.dots"]``. A leading ``$.`` is accepted and ignored. Paths are parsed once at
compile time into segments; resolving walks them with no parsing.

Unlike many JSONPath libraries, a wildcard never silently drops an element that lacks the
rest of the path: resolving reports the first missing segment with its concrete location
(``results[3].metadata.type``).

The typed dialect's ``json_path:`` transform uses RFC 9535 JSONPath via python-jsonpath;
see `compile_jsonpath`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, Final

from ._values import json_type

__all__ = [
    "MISSING",
    "NOT_FOUND",
    "DotPath",
    "PathMiss",
    "PathSyntaxError",
    "compile_jsonpath",
    "singular_steps",
    "walk_steps",
]

KEY: Final = 0
INDEX: Final = 1
WILD: Final = 2

Segment = tuple[int, Any]


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final[Any] = _Missing()


class PathSyntaxError(ValueError):
    """A dot path that cannot be parsed."""


class PathMiss:
    """Why a path did not resolve.

    Attributes:
        at: The concrete path of the first segment that could not be followed
            (``results[3].metadata``).
        reason: ``missing``, or what was found instead (``an object, not an array``).
    """

    __slots__ = ("at", "reason")

    def __init__(self, at: str, reason: str) -> None:
        self.at = at
        self.reason = reason

    def describe(self) -> str:
        """One phrase for messages: ``results[3].metadata is missing``.

        A miss at the root (``at`` is empty) reads ``the response is an array, not an object``.
        """
        return f"{self.at or 'the response'} is {self.reason}"

    def __repr__(self) -> str:
        return f"PathMiss({self.at!r}, {self.reason!r})"


_TOKEN = re.compile(
    r"""
    (?P<key>[^.\[\]]+)
    | \[(?P<index>-?\d+)\]
    | \[(?P<wild>\*)\]
    | \["(?P<dq>(?:[^"\\]|\\.)*)"\]
    | \['(?P<sq>(?:[^'\\]|\\.)*)'\]
    | (?P<dot>\.)
    """,
    re.VERBOSE,
)


def _parse(text: str) -> tuple[Segment, ...]:
    source = text.strip()
    if source.startswith("$"):
        source = source[1:].lstrip(".")
    if not source:
        raise PathSyntaxError("empty path")
    segments: list[Segment] = []
    position = 0
    expect_key = True  # after a dot (or at the start) a key or bracket must follow
    while position < len(source):
        match = _TOKEN.match(source, position)
        if match is None:
            raise PathSyntaxError(f"unexpected {source[position]!r} at column {position + 1}")
        kind = match.lastgroup
        if kind == "dot":
            if expect_key:
                raise PathSyntaxError(f"empty segment at column {position + 1}")
            expect_key = True
        elif kind == "key":
            if not expect_key:
                raise PathSyntaxError(f"missing '.' before {match.group()!r}")
            segments.append((KEY, match.group("key").strip()))
            expect_key = False
        else:
            if kind == "index":
                segments.append((INDEX, int(match.group("index"))))
            elif kind == "wild":
                segments.append((WILD, None))
            else:
                quoted = match.group(kind or "dq")
                segments.append((KEY, re.sub(r"\\(.)", r"\1", quoted)))
            expect_key = False
        position = match.end()
    if expect_key:
        raise PathSyntaxError("path ends with '.'")
    return tuple(segments)


# A key that reads back the same without quotes: no separators or quotes, no surrounding
# whitespace (the parser strips it) and no leading '$' (the parser drops a leading '$').
_BARE = re.compile(r"[^.\[\]\"'$\s](?:[^.\[\]\"']*[^.\[\]\"'\s])?")


def _pieces(segments: Sequence[Segment]) -> tuple[str | None, ...]:
    """Each segment as text (a bare key without its leading dot); None for a wildcard."""
    pieces: list[str | None] = []
    for kind, arg in segments:
        if kind == KEY:
            if _BARE.fullmatch(arg):
                pieces.append(arg)
            else:
                escaped = arg.replace("\\", "\\\\").replace('"', '\\"')
                pieces.append(f'["{escaped}"]')
        elif kind == INDEX:
            pieces.append(f"[{arg}]")
        else:
            pieces.append(None)
    return tuple(pieces)


def _format(pieces: Sequence[str | None], indexes: Sequence[int] = ()) -> str:
    parts: list[str] = []
    wild = iter(indexes)
    for piece in pieces:
        if piece is None:
            index = next(wild, None)
            parts.append("[*]" if index is None else f"[{index}]")
        elif piece[0] == "[" or not parts:
            parts.append(piece)
        else:
            parts.append("." + piece)
    return "".join(parts)


def _article(value: Any) -> str:
    name = json_type(value)
    return f"an {name}" if name[0] in "aeiou" else f"a {name}"


class _Blocked:
    """A segment that could not be followed, and what was found instead."""

    __slots__ = ("on_segment", "reason")

    def __init__(self, reason: str, on_segment: bool = False) -> None:
        self.reason = reason
        # True when the segment itself is what is absent (an index past the end), so the
        # location names it; False when the value before it has the wrong type.
        self.on_segment = on_segment


def _step(value: Any, kind: int, arg: Any) -> Any:
    """Follow one non-wildcard segment: the value, MISSING, or `_Blocked` with the reason."""
    if kind == KEY:
        if type(value) is dict:
            return value.get(arg, MISSING)
        return _Blocked(f"{_article(value)}, not an object")
    if type(value) is list:
        if -len(value) <= arg < len(value):
            return value[arg]
        noun = "item" if len(value) == 1 else "items"
        return _Blocked(f"missing (the array has {len(value)} {noun})", on_segment=True)
    return _Blocked(f"{_article(value)}, not an array")


class _Identity(Sequence[tuple[int, ...]]):
    """The wildcard indexes of a single-wildcard walk: item ``i`` came from index ``i``."""

    __slots__ = ("_length",)

    def __init__(self, length: int) -> None:
        self._length = length

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [(i,) for i in range(self._length)[index]]
        if not -self._length <= index < self._length:
            raise IndexError(index)
        return (index % self._length,)


def _fast_resolver(
    segments: tuple[Segment, ...], wild_positions: list[int]
) -> Callable[[Any], list[Any] | None] | None:
    """A resolver for the common ``a.b[*].c.d`` shape (keys, one wildcard, keys).

    It returns the values, or None whenever anything is unusual (a missing key, a wrong type),
    so that the general walk can produce the exact failure; it never decides a failure itself.
    """
    if len(wild_positions) != 1:
        return None
    star = wild_positions[0]
    if any(kind != KEY for kind, _ in segments[:star] + segments[star + 1 :]):
        return None
    prefix = tuple(arg for _, arg in segments[:star])
    suffix = tuple(arg for _, arg in segments[star + 1 :])

    def resolve(data: Any) -> list[Any] | None:
        array = data
        for key in prefix:
            if type(array) is not dict:
                return None
            array = array.get(key, MISSING)
        if type(array) is not list:
            return None
        if not suffix:
            return array
        values: list[Any] = []
        append = values.append
        for element in array:
            item = element
            for key in suffix:
                if type(item) is not dict:
                    return None
                item = item.get(key, MISSING)
                if item is MISSING:
                    return None
            append(item)
        return values

    return resolve


class DotPath:
    """A compiled dot path.

    Args:
        text: The path as written.

    Raises:
        PathSyntaxError: When the path cannot be parsed.
    """

    __slots__ = ("_fast", "_first_wild", "_keys", "_pieces", "has_wildcard", "segments", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.segments = _parse(text)
        wild_positions = [i for i, (kind, _) in enumerate(self.segments) if kind == WILD]
        self.has_wildcard = bool(wild_positions)
        self._first_wild = wild_positions[0] if wild_positions else -1
        self._fast = _fast_resolver(self.segments, wild_positions)
        keys_only = all(kind == KEY for kind, _ in self.segments)
        self._keys = tuple(arg for _, arg in self.segments) if keys_only else None
        self._pieces = _pieces(self.segments)  # messages name locations: format keys once

    def __repr__(self) -> str:
        return f"DotPath({self.text!r})"

    @property
    def fast_walk(self) -> bool:
        """Whether the path is keys around exactly one ``[*]`` (``results[*].metadata.type``)."""
        return self._fast is not None

    @property
    def keys(self) -> tuple[str, ...] | None:
        """The keys of a path made only of keys (``pagination.total``), else None."""
        return self._keys

    @property
    def last_key(self) -> str | None:
        """The final key name (``file`` for ``results[*].file``), if the path ends in a key."""
        kind, arg = self.segments[-1]
        return arg if kind == KEY else None

    def location(self, indexes: Sequence[int] = (), upto: int | None = None) -> str:
        """Concrete path text with wildcard indexes filled in, optionally cut before ``upto``."""
        pieces = self._pieces if upto is None else self._pieces[:upto]
        return _format(pieces, indexes)

    def get(self, data: Any) -> Any:
        """Value at a wildcard-free path, or a `PathMiss`."""
        keys = self._keys
        if keys is not None:
            # Common case, keys only: walk dicts directly; anything unusual takes the slow
            # walk below, which names what went wrong.
            value = data
            for key in keys:
                if type(value) is not dict:
                    break
                value = value.get(key, MISSING)
                if value is MISSING:
                    break
            else:
                return value
        value = data
        for position, (kind, arg) in enumerate(self.segments):
            value = _step(value, kind, arg)
            if value is MISSING:
                return PathMiss(self.location(upto=position + 1), "missing")
            if type(value) is _Blocked:
                cut = position + 1 if value.on_segment else position
                return PathMiss(self.location(upto=cut), value.reason)
        return value

    def resolve(self, data: Any) -> tuple[list[Any], Sequence[tuple[int, ...]]] | PathMiss:
        """All values at the path with the wildcard indexes that reached each one.

        Returns:
            ``(values, indexes)``, or a `PathMiss` for the first segment that could not be
            followed — for any element reached through a wildcard, never skipping it.
        """
        if not self.has_wildcard:
            value = self.get(data)
            if isinstance(value, PathMiss):
                return value
            return [value], [()]
        fast = self._fast
        if fast is not None:
            found = fast(data)
            if found is not None:
                return found, _Identity(len(found))
        frontier: list[tuple[Any, tuple[int, ...]]] = [(data, ())]
        for position, (kind, arg) in enumerate(self.segments):
            next_frontier: list[tuple[Any, tuple[int, ...]]] = []
            append = next_frontier.append
            if kind == WILD:
                for value, indexes in frontier:
                    if type(value) is not list:
                        return PathMiss(
                            self.location(indexes, upto=position),
                            f"{_article(value)}, not an array",
                        )
                    for index, item in enumerate(value):
                        append((item, (*indexes, index)))
            else:
                for value, indexes in frontier:
                    found = _step(value, kind, arg)
                    if found is MISSING:
                        return PathMiss(self.location(indexes, upto=position + 1), "missing")
                    if type(found) is _Blocked:
                        cut = position + 1 if found.on_segment else position
                        return PathMiss(self.location(indexes, upto=cut), found.reason)
                    append((found, indexes))
            frontier = next_frontier
        return [value for value, _ in frontier], [indexes for _, indexes in frontier]


# The typed dialect's ``json_path:`` transforms and the project's ``shape``.
# `$.a.b`, `$['a'][0]`: singular queries of names and non-negative indexes. They select at most
# one node, exactly as RFC 9535 says, so they are walked directly instead of through the
# general (and ten times slower) JSONPath machinery, whose import alone costs more than half
# of assertly's start-up. The pattern admits only valid RFC 9535 syntax (no leading zeros,
# indexes within I-JSON's range, no control characters or escapes inside quotes); anything
# else goes to the library, which also reports syntax errors.
_INDEX = r"0|[1-9][0-9]{0,14}"
_SINGULAR = re.compile(
    rf"\$(?:\.[A-Za-z_][A-Za-z0-9_]*|\[(?:{_INDEX})\]|\['[^'\\\x00-\x1f]*'\]|\[\"[^\"\\\x00-\x1f]*\"\])*"
)
_STEP = re.compile(rf"\.([A-Za-z_][A-Za-z0-9_]*)|\[({_INDEX})\]|\['([^']*)'\]|\[\"([^\"]*)\"\]")
NOT_FOUND: Any = object()  # what `walk_steps` returns when a step is missing


def singular_steps(expression: str) -> tuple[str | int, ...] | None:
    """The steps of a singular RFC 9535 query (names and indexes), or None for any other."""
    if _SINGULAR.fullmatch(expression) is None:
        return None
    steps: list[str | int] = []
    for match in _STEP.finditer(expression, 1):
        name, index, single, double = match.groups()
        steps.append(int(index) if index is not None else (name or single or double or ""))
    return tuple(steps)


def walk_steps(document: Any, steps: tuple[str | int, ...]) -> Any:
    """The value ``steps`` select in ``document``, or `NOT_FOUND`."""
    value = document
    for step in steps:
        if type(step) is str:
            if type(value) is not dict or step not in value:
                return NOT_FOUND
            value = value[step]
        else:
            if type(value) is not list or step >= len(value):  # type: ignore[operator]
                return NOT_FOUND
            value = value[step]  # type: ignore[index]
    return value


def compile_jsonpath(expression: str) -> Any:
    """Compile an RFC 9535 JSONPath expression (python-jsonpath, strict mode).

    Its ``match()`` and ``search()`` filter functions run with a time limit, and a literal
    pattern that is not a valid regular expression is refused (`_jsonpath_functions`).

    Raises:
        ValueError: With the library's description of the syntax error.
    """
    from jsonpath import JSONPathError  # heavy import, only when used

    from ._jsonpath_functions import BoundedEnvironment  # bounded match() and search()

    environment = _jsonpath_environment(BoundedEnvironment)
    try:
        return environment.compile(expression)
    except JSONPathError as error:
        raise ValueError(str(error).splitlines()[0]) from None


_ENVIRONMENT: list[Any] = []


def _jsonpath_environment(factory: Any) -> Any:
    if not _ENVIRONMENT:
        _ENVIRONMENT.append(factory(strict=True))
    return _ENVIRONMENT[0]
