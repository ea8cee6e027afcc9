"""The agent-response cache of a run (``--cache rw|ro|off|replay``, issue 34).

A call is named by the SHA-256 of what makes it the same call: the target's spec as
configured (a matrix cell's own), the request as sent (the step's input), the trial index and
the conversation turn (None until conversations exist). The digest alone is stored (the spec
may hold a secret); the response is kept with its latency and what the agent reported, so a
hit is judged as the call was. Only answers are kept: a call that raised (an error, a timeout,
a crash) is never cached, and is made again by the next run.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, cast

from .._json import to_json_bytes
from .._spans import SpanSet
from ..targets import TargetResponse
from ..targets._base import metadata_from
from ._support import now_iso

__all__ = ["CACHE_MODES", "REPLAY_MISS", "ResponseCache", "call_key"]

CACHE_MODES = ("rw", "ro", "off", "replay")
REPLAY_MISS = "no cached response for this call (--cache replay)"


def call_key(spec: Any, request: Any, trial: int, turn: int | None = None) -> str:
    """The cache key of a call: SHA-256 over the spec, the request, the trial and the turn."""
    text = to_json_bytes(
        {"spec": spec, "request": request, "trial": trial, "turn": turn}, keep_surrogates=True
    )
    return hashlib.sha256(text).hexdigest()


@dataclass(slots=True)
class ResponseCache:
    """The run's view of the store's response cache, under one mode.

    Attributes:
        mode: ``rw`` reads and writes, ``ro`` reads only, ``replay`` reads and makes a miss an
            error, ``off`` neither.
        store: The run store (its ``cached_response`` and ``save_response``).
        hits: Calls this invocation answered from the cache.
    """

    mode: str
    store: Any
    hits: int = 0

    @property
    def reads(self) -> bool:
        """Whether calls are looked up before being made."""
        return self.mode in ("rw", "ro", "replay")

    def lookup(self, key: str) -> tuple[TargetResponse, float | None] | None:
        """The cached response of a call and its latency, or None on a miss."""
        if not self.reads:
            return None
        stored = self.store.cached_response(key)
        if stored is None or "output" not in stored:
            return None
        self.hits += 1
        response = TargetResponse(output=stored["output"], **metadata_from(stored))
        extra = stored.get("metadata")
        if isinstance(extra, dict):
            response.metadata = extra
        if isinstance(stored.get("spans"), dict):  # the call's spans, judged again
            response.spans = cast(SpanSet, SpanSet.from_json(stored["spans"]))
        latency = stored.get("measured_ms")
        return response, latency if isinstance(latency, int | float) else None

    def keep(self, key: str, response: TargetResponse, measured_ms: float | None) -> None:
        """Keep an answered call (``rw`` only)."""
        if self.mode != "rw":
            return
        data: dict[str, Any] = {"output": response.output, "measured_ms": measured_ms}
        for name in ("model", "cost_usd", "latency_ms", "tokens", "tool_calls"):
            value = getattr(response, name)
            if value is not None:
                data[name] = value
        if response.metadata:
            data["metadata"] = response.metadata
        if response.spans is not None:
            data["spans"] = response.spans.to_json()
        self.store.save_response(key, data, now_iso())
