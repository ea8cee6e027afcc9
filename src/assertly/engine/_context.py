"""What a check knows about the call besides the output: cost, latency, model, tool calls, steps."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from types import MappingProxyType
from typing import Any

__all__ = ["CallMetrics", "CheckContext", "parse_now"]


def parse_now(now: str | datetime | date | None) -> datetime | None:
    """Turn an ISO string, date or datetime into an aware UTC datetime (naive means UTC).

    Raises:
        ValueError: For a string that is not ISO 8601.
    """
    if now is None:
        return None
    if isinstance(now, str):
        text = now.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        now = datetime.fromisoformat(text)
    if not isinstance(now, datetime):
        now = datetime.combine(now, time(), tzinfo=UTC)
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    return now.astimezone(UTC)


_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(slots=True, frozen=True)
class CallMetrics:
    """What one call reported (or the runner measured) besides its output, built once per call.

    The target's response gives it (`TargetResponse.metrics`), a stored step gives it back on
    a recheck; the step's context (`CheckContext.of_call`) and its record read it.

    Attributes:
        latency_ms: How long the call took; None: unknown (a recorded output that said none).
        cost_usd: What it cost, if reported.
        model: The model that answered, if reported.
        tokens: Token counts, if reported.
        tool_calls: The tool calls reported with it (what trajectory assertions judge).
        spans: The call's OpenTelemetry spans (`SpanSet`), why none arrived (a sentence), or
            None when the call did not ask for spans.
    """

    latency_ms: float | None = None
    cost_usd: float | None = None
    model: str | None = None
    tokens: dict[str, int] | None = None
    tool_calls: Any = None
    spans: Any = None


# Contexts carrying only a fixed `now` are immutable, so one per distinct `now` is reused.
_SHARED: dict[Any, CheckContext] = {}


class CheckContext:
    """Facts about one call that some assertions judge.

    Args:
        cost_usd: What the call cost, if the target reported it (``cost`` assertion).
        latency_ms: How long the call took (``latency`` assertion).
        model: The model the target reported (``agent_used_model``).
        tool_calls: The tool calls the target reported (``[{name, arguments}]``), which
            trajectory assertions judge instead of the response's own trace.
        steps: Responses stored by earlier steps of a multi-step test (``no_overlap``).
        now: "Today" for date assertions; the current time when not given.
        extra: Anything else a custom assertion may want (tokens, trace ids …).
        spans: The call's spans (`assertly._spans.SpanSet`), why none arrived (a sentence
            for an ``error``), or None when the call did not ask for spans.
    """

    __slots__ = (
        "_now",
        "cost_usd",
        "extra",
        "latency_ms",
        "model",
        "spans",
        "steps",
        "tool_calls",
        "trace_cache",
    )

    def __init__(
        self,
        *,
        cost_usd: float | None = None,
        latency_ms: float | None = None,
        model: str | None = None,
        steps: Mapping[str, Any] | None = None,
        now: str | datetime | date | None = None,
        extra: Mapping[str, Any] | None = None,
        tool_calls: Any = None,
        spans: Any = None,
    ) -> None:
        self.cost_usd = cost_usd
        self.spans = spans
        self.latency_ms = latency_ms
        self.model = model
        self.tool_calls = tool_calls
        # ``tool_calls`` read as a trace, once (`_trajectory.trace_of` fills it).
        self.trace_cache: Any = None
        self.steps: Mapping[str, Any] = steps or _EMPTY
        self.extra: Mapping[str, Any] = extra or _EMPTY
        self._now = None if now is None else parse_now(now)

    def __reduce__(self) -> tuple[Any, ...]:
        # Picklable for the runner's check process; an unset `now` stays unset (the clock there).
        steps, extra = dict(self.steps), dict(self.extra)
        return (
            _restore,
            (
                self.cost_usd,
                self.latency_ms,
                self.model,
                steps,
                extra,
                self._now,
                self.tool_calls,
                self.spans,
            ),
        )

    def replaced(
        self, now: str | datetime | date | None, extra: Mapping[str, Any] | None = None
    ) -> CheckContext:
        """A copy with ``now`` (None: unset) and, when given, ``extra`` instead of this one's."""
        return CheckContext(
            cost_usd=self.cost_usd,
            latency_ms=self.latency_ms,
            model=self.model,
            steps=self.steps,
            extra=self.extra if extra is None else extra,
            now=now,
            tool_calls=self.tool_calls,
            spans=self.spans,
        )

    def with_calls(self, tool_calls: Any) -> CheckContext:
        """A copy whose reported tool calls are ``tool_calls`` (``source: trace`` reads spans)."""
        copy = self.replaced(self._now)
        copy.tool_calls = tool_calls
        return copy

    @classmethod
    def of_call(
        cls, metrics: CallMetrics, *, steps: Mapping[str, Any] | None, now: datetime | None
    ) -> CheckContext:
        """The context of a step's check: its call's metrics, the earlier steps, ``now``."""
        return cls(
            cost_usd=metrics.cost_usd,
            latency_ms=metrics.latency_ms,
            model=metrics.model,
            steps=steps,
            now=now,
            tool_calls=metrics.tool_calls,
            spans=metrics.spans,
        )

    @property
    def now(self) -> datetime:
        """The reference time for date assertions (fixed on first use when not given)."""
        if self._now is None:
            self._now = datetime.now(UTC)
        return self._now

    @classmethod
    def build(
        cls,
        context: CheckContext | Mapping[str, Any] | None,
        now: str | datetime | date | None = None,
    ) -> CheckContext:
        """Accept a `CheckContext`, a mapping with the same keys, or None."""
        if context is None:
            if now is None:
                return cls()
            # The same `now` is passed to every check of a run: share one context for it.
            shared = _SHARED.get(now)
            if shared is None:
                if len(_SHARED) > 64:
                    _SHARED.clear()
                shared = _SHARED[now] = cls(now=now)
            return shared
        if isinstance(context, CheckContext):
            return context if now is None else context.replaced(now)
        known = {"cost_usd", "latency_ms", "model", "steps", "now", "tool_calls", "spans"}
        extra = {key: value for key, value in context.items() if key not in known}
        return cls(
            cost_usd=context.get("cost_usd"),
            latency_ms=context.get("latency_ms"),
            model=context.get("model"),
            steps=context.get("steps"),
            now=now if now is not None else context.get("now"),
            extra=extra,
            tool_calls=context.get("tool_calls"),
            spans=context.get("spans"),
        )


def _restore(
    cost_usd: float | None,
    latency_ms: float | None,
    model: str | None,
    steps: dict[str, Any],
    extra: dict[str, Any],
    now: datetime | None,
    tool_calls: Any = None,
    spans: Any = None,
) -> CheckContext:
    return CheckContext(
        cost_usd=cost_usd,
        latency_ms=latency_ms,
        model=model,
        steps=steps,
        extra=extra,
        now=now,
        tool_calls=tool_calls,
        spans=spans,
    )
