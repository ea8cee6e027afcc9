"""How one tool call reads in failure messages and results: ``search({"query":"x","limit":5})``.

The call's name and its arguments as compact JSON, written whole when the call fits in 120
characters; a longer call has each value clipped at 40 characters, then the whole at 120 (so
every key still shows). A leaf: the trace model (`_trace`) and the text of whole traces
(`_text`) both write calls with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import orjson

from ..._json import dumps

__all__ = ["CALL_CLIP", "UNWRITABLE", "call_text", "call_text_by_entry", "render_arguments"]

_ARGUMENT_CLIP: Final = 40
CALL_CLIP: Final = 120
"""The longest a call's text is, in characters."""
UNWRITABLE: Final = (TypeError, orjson.JSONEncodeError)
"""What `orjson.dumps` raises for arguments it cannot write (big integers, lone surrogates …)."""
_dumps = orjson.dumps


def render_arguments(arguments: Mapping[str, Any]) -> str:
    """``query="x", limit=5``: each value as compact JSON, long ones clipped (call patterns)."""
    parts = []
    for key, value in arguments.items():
        text = dumps(value)
        if len(text) > _ARGUMENT_CLIP:
            text = text[: _ARGUMENT_CLIP - 1] + "…"
        parts.append(f"{key}={text}")
    return ", ".join(parts)


def call_text(name: str, arguments: Mapping[str, Any] | None) -> str:
    """``search({"query":"x","limit":5})`` (see the module docstring), or unreadable."""
    if arguments is None:
        return f"{name}(<unreadable arguments>)"
    try:
        text = f"{name}({_dumps(arguments).decode()})"
    except UNWRITABLE:  # big integers, lone surrogates, keys that are not strings …
        return call_text_by_entry(name, arguments)
    return text if len(text) <= CALL_CLIP else call_text_by_entry(name, arguments)


def call_text_by_entry(name: str, arguments: Mapping[str, Any]) -> str:
    """`call_text` written entry by entry: any value JSON can hold, and the clipping."""
    # A key as the JSON object writes it (a key that is not a string too): `{"k":0}` less
    # its brace before and `:0}` after.
    entries = [(dumps({key: 0})[1:-3], dumps(value)) for key, value in arguments.items()]
    text = f"{name}({{{','.join([f'{key}:{value}' for key, value in entries])}}})"
    if len(text) <= CALL_CLIP:
        return text
    clipped = ",".join(
        [
            f"{key}:{value}"
            if len(value) <= _ARGUMENT_CLIP
            else f"{key}:{value[: _ARGUMENT_CLIP - 1]}…"
            for key, value in entries
        ]
    )
    text = f"{name}({{{clipped}}})"
    return text if len(text) <= CALL_CLIP else text[: CALL_CLIP - 1] + "…"
