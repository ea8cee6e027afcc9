"""``shape:``: where the fields the expect dict reads live in a response.

The seed's agents answer ``{"status", "results", "summary", "message"}`` at the top level, and
keys such as ``results_min``, ``all_have_tags``, ``summary_contains`` or ``if_results`` read
those fields. Real agents answer in other shapes (``{"data": {"hits": ...}}``, ``{"answer":
...}``, OpenAI's ``choices``). A shape maps each field to a singular JSONPath, and every key
that reads the field follows it, including paths written from it (``results[*].file`` reads
``data.hits[*].file``), so messages name the path the shape gave.

``tags`` is the one field inside each result: ``$.results[*].tags`` says where the tag keys
(``all_have_tags`` …) find a result's tags (``metadata.tags`` by default).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ._paths import DotPath, PathMiss

__all__ = ["DEFAULT_SHAPE", "DEFAULT_TAGS", "SHAPE_FIELDS", "Field", "Shape"]

SHAPE_FIELDS = ("status", "results", "summary", "message", "model", "tags")
# Where a result's tags are when the shape does not say (the seed's `results[*].metadata.tags`).
DEFAULT_TAGS = "metadata.tags"

_FIRST_SEGMENT = re.compile(r"(?:\$\.?)?([A-Za-z_][A-Za-z0-9_]*)(?=$|[.\[])")


class Shape:
    """Field name → where it lives, as a dot path (top-level fields are not listed).

    ``tags`` is kept apart: it is a path inside each result, not from the response's root, so
    it never rewrites a user's path.
    """

    __slots__ = ("_paths", "tags")

    def __init__(self, paths: Mapping[str, str] | None = None, tags: str | None = None) -> None:
        self._paths = dict(paths or {})
        self.tags = tags or DEFAULT_TAGS  # a result's tags: a dot path inside each result

    def __bool__(self) -> bool:
        return bool(self._paths) or self.tags != DEFAULT_TAGS

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Shape) and (self._paths, self.tags) == (other._paths, other.tags)

    def __hash__(self) -> int:
        return hash((tuple(sorted(self._paths.items())), self.tags))

    def __repr__(self) -> str:
        if self.tags != DEFAULT_TAGS:
            return f"Shape({self._paths!r}, tags={self.tags!r})"
        return f"Shape({self._paths!r})"

    def gives(self, field: str) -> bool:
        """Whether the shape says where ``field`` is.

        Even at the top level this matters for ``model``: without a shape it is the model the
        target reported, not a field of the response.
        """
        return field in self._paths

    def text(self, field: str) -> str:
        """The dot path of ``field`` (the field's own name when the shape leaves it)."""
        return self._paths.get(field, field)

    def rewrite(self, path: str) -> str:
        """A user's path with a leading shaped field replaced.

        ``results[*].file`` becomes ``data.hits[*].file`` under ``{results: $.data.hits}``.
        """
        if not self._paths:
            return path
        found = _FIRST_SEGMENT.match(path)
        if found is None or found.group(1) not in self._paths:
            return path
        return self._paths[found.group(1)] + path[found.end() :]


DEFAULT_SHAPE = Shape()


class Field:
    """Reads one shaped field of a response: the top-level key, or the shape's path."""

    __slots__ = ("name", "path", "text")

    def __init__(self, name: str, shape: Shape) -> None:
        self.name = name
        self.text = shape.text(name)
        # None: the seed's top-level field, read with a dict lookup (and its own messages).
        self.path = DotPath(self.text) if shape.gives(name) else None

    @classmethod
    def at(cls, name: str, path: DotPath) -> Field:
        """The field read at ``path`` (an assertion's own path, not the shape's)."""
        field = cls.__new__(cls)
        field.name, field.text, field.path = name, path.text, path
        return field

    def get(self, data: Any) -> Any:
        """The field's value, or a `PathMiss` saying why there is none."""
        if self.path is None:
            if type(data) is not dict:
                return PathMiss("", "not an object")
            if self.name not in data:
                return PathMiss(self.name, "missing")
            return data[self.name]
        return self.path.get(data)
