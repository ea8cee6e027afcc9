"""``shape:``: where the fields the expect dict reads live in a response.

The seed's agents answer ``{"status", "results", "summary", "message"}`` at the top level, and
keys such as ``results_min``, ``all_have_tags``, ``summary_contains`` or ``if_results`` read
those fields. Real agents answer in other shapes (``{"data": {"hits": ...}}``, ``{"answer":
...}``, OpenAI's ``choices``). A shape maps each field to a singular JSONPath, and every key
that reads the field follows it, including paths written from it (``results[*].file`` reads
``data.hits[*].file``), so messages name the path the shape gave.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ._paths import DotPath, PathMiss, singular_steps

if TYPE_CHECKING:
    from ._base import BuildContext

__all__ = ["DEFAULT_SHAPE", "SHAPE_FIELDS", "Field", "Shape", "compile_shape"]

SHAPE_FIELDS = ("status", "results", "summary", "message", "model")

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FIRST_SEGMENT = re.compile(r"(?:\$\.?)?([A-Za-z_][A-Za-z0-9_]*)(?=$|[.\[])")


class Shape:
    """Field name → where it lives, as a dot path (top-level fields are not listed)."""

    __slots__ = ("_paths",)

    def __init__(self, paths: Mapping[str, str] | None = None) -> None:
        self._paths = dict(paths or {})

    def __bool__(self) -> bool:
        return bool(self._paths)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Shape) and self._paths == other._paths

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._paths.items())))

    def __repr__(self) -> str:
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

    def get(self, data: Any) -> Any:
        """The field's value, or a `PathMiss` saying why there is none."""
        if self.path is None:
            if type(data) is not dict:
                return PathMiss("", "not an object")
            if self.name not in data:
                return PathMiss(self.name, "missing")
            return data[self.name]
        return self.path.get(data)


def _dot_path(steps: tuple[str | int, ...]) -> str:
    parts: list[str] = []
    for step in steps:
        if isinstance(step, int):
            parts.append(f"[{step}]")
        elif _IDENTIFIER.fullmatch(step):
            parts.append(f".{step}" if parts else step)
        else:
            quoted = step.replace("\\", "\\\\").replace('"', '\\"')
            parts.append(f'["{quoted}"]')
    return "".join(parts)


def compile_shape(spec: Any, ctx: BuildContext) -> Shape | None:
    """A `Shape` from ``{field: "$.json.path"}``, or None after recording the problems."""
    if spec is None:
        return DEFAULT_SHAPE
    if not isinstance(spec, Mapping):
        ctx.problem(f"expected a mapping such as {{results: '$.data.hits'}}, got {spec!r}")
        return None
    paths: dict[str, str] = {}
    before = len(ctx.problems)
    for field, expression in spec.items():
        where = ctx.at(str(field))
        if field not in SHAPE_FIELDS:
            import difflib

            close = difflib.get_close_matches(str(field), SHAPE_FIELDS, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            where.problem(f"unknown shape field '{field}'{hint}; fields: {', '.join(SHAPE_FIELDS)}")
            continue
        steps = singular_steps(expression) if isinstance(expression, str) else None
        if not steps:
            where.problem(
                f"expected a JSONPath to one value, such as '$.data.hits' or "
                f"\"$['data'][0]\", got {expression!r}"
            )
            continue
        paths[field] = _dot_path(steps)
    return Shape(paths) if len(ctx.problems) == before else None
