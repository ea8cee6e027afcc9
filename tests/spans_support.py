"""Spans built by hand for tests of what draws or summarises them (issue 33)."""

from __future__ import annotations

from typing import Any

from assertly._spans import Span

TRACE = "ab" * 16


def span(
    number: int, name: str, parent: int | None, start_ms: float, ms: float, **extra: Any
) -> Span:
    """Span ``number`` (its id from the number), under span ``parent``, starting ``start_ms``
    after a fixed instant and lasting ``ms``; ``status``, ``attributes``, ``events`` by name."""
    start = int(1e15 + start_ms * 1e6)
    return Span(
        TRACE,
        f"{number:016x}",
        None if parent is None else f"{parent:016x}",
        name,
        1,
        start,
        start + int(ms * 1e6),
        extra.pop("status", "unset"),
        "",
        extra.pop("attributes", {}),
        extra.pop("events", ()),
    )
