"""The one small interface every target implements: ``await target.call(input, timeout_s)``.

A target turns a test's ``input`` into the agent's response plus whatever the agent reported
about the call (model, cost, tokens). Anything that goes wrong (crash, non-zero exit, timeout,
bad HTTP status, connection refused) raises `TargetError` with the useful part of stderr or the
body; the runner turns that into an ``error`` verdict and goes on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["Target", "TargetResponse"]


@dataclass(slots=True)
class TargetResponse:
    """What a call produced.

    Attributes:
        output: The response: text (JSON or prose) or an already-parsed JSON value.
        model: The model the agent reported using, if any.
        cost_usd: What the call cost, if reported.
        latency_ms: How long the call took (measured by the runner when not reported).
        tokens: Token counts, if reported.
        metadata: Anything else the target reported.
    """

    output: Any
    model: str | None = None
    cost_usd: float | None = None
    latency_ms: float | None = None
    tokens: dict[str, int] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


class Target(Protocol):
    """Something that answers a test's input."""

    name: str

    async def call(self, payload: Any, timeout_s: float) -> TargetResponse:
        """Call the agent with ``payload``; raise `TargetError` on any failure."""
        ...

    async def aclose(self) -> None:
        """Release connections and processes."""
        ...


def metadata_from(data: Any) -> dict[str, Any]:
    """Pick the known metadata fields out of a mapping a target reported."""
    if not isinstance(data, dict):
        return {}
    known: dict[str, Any] = {}
    model = data.get("model")
    if isinstance(model, str):
        known["model"] = model
    for name in ("cost_usd", "latency_ms"):
        value = data.get(name)
        if isinstance(value, int | float) and not isinstance(value, bool):
            known[name] = float(value)
    tokens = data.get("tokens")
    if isinstance(tokens, dict):
        known["tokens"] = {k: v for k, v in tokens.items() if isinstance(v, int)}
    return known
