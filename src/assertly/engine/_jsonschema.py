"""JSON Schemas compiled once, offline, with their ``format`` keywords enforced.

jsonschema-rs treats ``format`` as an annotation unless told otherwise, so a schema saying
``{"format": "date"}`` would accept ``"yesterday"``; here formats are checked, an unknown
format name (``datetime`` for ``date-time``) is a configuration error with a did-you-mean
instead of a check that silently never runs, and ``$ref`` never fetches anything over the
network.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._base import BuildContext

__all__ = ["FORMATS", "compile_schema", "first_error", "format_validator", "unknown_formats"]

# The formats jsonschema-rs checks (JSON Schema 2020-12, section 7.3), pinned by a test.
FORMATS = (
    "date",
    "date-time",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uri-template",
    "uuid",
    "json-pointer",
    "relative-json-pointer",
    "regex",
)


def unknown_formats(schema: Any) -> list[tuple[str, str]]:
    """``(where, name)`` of every ``format`` keyword naming a format that is not checked."""
    found: list[tuple[str, str]] = []
    stack: list[tuple[Any, str]] = [(schema, "")]
    while stack:
        node, where = stack.pop()
        if isinstance(node, dict):
            name = node.get("format")
            if isinstance(name, str) and name not in FORMATS:
                found.append((f"{where}.format" if where else "format", name))
            stack.extend(
                (child, f"{where}.{key}" if where else str(key)) for key, child in node.items()
            )
        elif isinstance(node, list):
            stack.extend((child, f"{where}[{index}]") for index, child in enumerate(node))
    found.reverse()
    return found


def _suggest(name: str) -> str:
    close = difflib.get_close_matches(name, FORMATS, n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def compile_schema(schema: Any, ctx: BuildContext) -> Any:
    """A validator for ``schema``, or None after recording every problem on ``ctx``."""
    import jsonschema_rs

    unknown = unknown_formats(schema)
    for where, name in unknown:
        ctx.at(where).problem(
            f"unknown format {name!r}{_suggest(name)}; checked formats: {', '.join(FORMATS)}"
        )
    if unknown:
        return None
    try:
        return jsonschema_rs.validator_for(
            schema, validate_formats=True, ignore_unknown_formats=False, offline=True
        )
    except Exception as error:  # the library raises ValidationError / ValueError variants
        first = str(error).strip().splitlines()[0]
        ctx.problem(f"invalid JSON Schema: {first}")
        return None


def format_validator(name: str) -> Any:
    """A validator of one format alone (``{"format": name}``); ``name`` must be in `FORMATS`."""
    import jsonschema_rs

    return jsonschema_rs.validator_for(
        {"format": name}, validate_formats=True, ignore_unknown_formats=False, offline=True
    )


def first_error(validator: Any, value: Any) -> str:
    """The first validation error, as ``location: message`` (``(root)`` for the top)."""
    for error in validator.iter_errors(value):
        location = "/".join(str(part) for part in error.instance_path) or "(root)"
        return f"{location}: {error.message}"
    return "does not match the schema"
