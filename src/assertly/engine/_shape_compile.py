"""Compiling ``shape:`` (a mapping of fields to JSONPaths) into a `Shape`, recording problems.

Apart from the model (`_shape`) because it records on a `BuildContext`, whose module
(`_base`) reads shapes: kept together, the two would import each other.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ._base import BuildContext
from ._paths import singular_steps
from ._shape import DEFAULT_SHAPE, SHAPE_FIELDS, Shape

__all__ = ["compile_shape"]

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


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
    results_steps: tuple[str | int, ...] = ("results",)
    before = len(ctx.problems)
    for field, expression in spec.items():
        where = ctx.at(str(field))
        if field not in SHAPE_FIELDS:
            import difflib

            close = difflib.get_close_matches(str(field), SHAPE_FIELDS, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            where.problem(f"unknown shape field '{field}'{hint}; fields: {', '.join(SHAPE_FIELDS)}")
            continue
        if field == "tags":
            continue  # a path inside each result: read once `results` is known (below)
        steps = singular_steps(expression) if isinstance(expression, str) else None
        if not steps:
            where.problem(
                f"expected a JSONPath to one value, such as '$.data.hits' or "
                f"\"$['data'][0]\", got {expression!r}"
            )
            continue
        paths[field] = _dot_path(steps)
        if field == "results":
            results_steps = steps
    tags = _tags_path(spec["tags"], results_steps, ctx.at("tags")) if "tags" in spec else None
    return Shape(paths, tags) if len(ctx.problems) == before else None


def _tags_path(
    expression: Any, results_steps: tuple[str | int, ...], ctx: BuildContext
) -> str | None:
    """The dot path inside each result of ``tags: "$.results[*].<path>"``, or None (a problem).

    The part before ``[*]`` names the results: ``$.results`` (wherever the shape puts them) or
    the shape's own results path; the part after it is a singular path inside each result.
    """
    text = expression if isinstance(expression, str) else ""
    prefix, star, rest = text.partition("[*]")
    inside = singular_steps("$" + rest) if star and rest else None
    if inside and singular_steps(prefix) in (("results",), results_steps):
        return _dot_path(inside)
    ctx.problem(
        "expected a JSONPath to the tags of every result, such as '$.results[*].tags' or "
        f"'$.results[*].metadata.labels', got {expression!r}"
    )
    return None
