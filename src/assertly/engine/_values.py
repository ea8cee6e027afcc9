"""Small helpers on JSON values: strict equality, type names, and how values read in messages.

The JSON codec itself (`loads`, `dumps`, `to_json_bytes`, depth limits) is the package-level
`assertly._json`: the engine's modules import its names from there.
"""

from __future__ import annotations

import math
from typing import Any

from .._json import dumps

__all__ = ["fmt", "fmt_number", "is_number", "json_equal", "json_type"]


def fmt(value: Any) -> str:
    """Format a value for a message: strings in single quotes, everything else as JSON."""
    if isinstance(value, str):
        return f"'{value}'"
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    return dumps(value)


def fmt_number(value: float) -> str:
    """Format a number as the user wrote it (``0.0`` stays ``0.0``, ``5000`` stays ``5000``)."""
    return repr(value)


def is_number(value: Any) -> bool:
    """True for JSON numbers; booleans are not numbers."""
    return (type(value) is int or type(value) is float) and value == value  # noqa: PLR0124


def json_type(value: Any) -> str:
    """The JSON type name of a Python value (``integer`` for ints, ``number`` for floats)."""
    if value is None:
        return "null"
    kind = type(value)
    if kind is bool:
        return "boolean"
    if kind is int:
        return "integer"
    if kind is float:
        return "number"
    if kind is str:
        return "string"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list | tuple):
        return "array"
    return kind.__name__


def json_equal(left: Any, right: Any) -> bool:
    """Strict JSON equality: ``true`` is not ``1``, ``"0"`` is not ``0``, ``1`` equals ``1.0``.

    Objects compare without regard to key order, arrays element by element. Containers are
    walked with a stack, so any depth the engine parses compares without recursion.
    """
    pairs = [(left, right)]
    while pairs:
        left, right = pairs.pop()
        left_type = type(left)
        right_type = type(right)
        if left_type is right_type and (left_type is str or left_type is int):
            if left != right:
                return False
        elif left_type is bool or right_type is bool:
            if left_type is not right_type or left != right:
                return False
        elif (left_type is int or left_type is float) and (
            right_type is int or right_type is float
        ):
            if left != right:
                return False
        elif isinstance(left, dict):
            if not isinstance(right, dict) or len(left) != len(right):
                return False
            for key, value in left.items():
                if key not in right:
                    return False
                pairs.append((value, right[key]))
        elif isinstance(left, list | tuple):
            if not isinstance(right, list | tuple) or len(left) != len(right):
                return False
            pairs.extend(zip(left, right, strict=True))
        elif left_type is not right_type or not bool(left == right):
            return False
    return True
