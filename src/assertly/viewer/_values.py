"""How the viewer's pages show a value: text as it came, JSON pretty-printed, long text folded."""

from __future__ import annotations

from typing import Any

import orjson

from ..reports._analysis import value_text

__all__ = ["folded"]

FOLD_CHARS = 1_500  # a longer value shows its start, the rest behind "show all"
FOLD_LINES = 24
VALUE_LIMIT = 70_000  # the JSON report keeps 64 KiB of an output


def _text(value: Any) -> str:
    """A value as the page shows it: text as it came, JSON pretty-printed."""
    if isinstance(value, str):
        return value.rstrip("\n")
    if isinstance(value, dict | list):
        try:
            return orjson.dumps(
                value, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS
            ).decode()
        except (TypeError, orjson.JSONEncodeError):
            pass
    return value_text(value, VALUE_LIMIT)


def folded(value: Any) -> dict[str, Any]:
    """A value's text, with its start shown apart when it is long (the rest folds away)."""
    text = _text(value)
    lines = text.split("\n")
    if len(text) <= FOLD_CHARS and len(lines) <= FOLD_LINES:
        return {"head": text, "full": None, "size": len(text)}
    head = "\n".join(lines[:FOLD_LINES])[:FOLD_CHARS]
    return {"head": head, "full": text, "size": len(text), "lines": len(lines)}
