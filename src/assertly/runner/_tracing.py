"""A run's traces: which calls ask for spans, the receiver they go to, and what spans add.

A call asks for spans when the config says ``traces: {receive: true}`` or when one of its
step's checks needs them (span assertions, ``source: trace``; `Expectation.needs_spans`).
Such a call gets a trace of its own from the run's `SpanReceiver` (started on the first call
that asks, on loopback), and after its reply waits for its spans. Then the spans fill in what
the agent did not report itself: model, tokens and cost from its model-call spans, and, with
``traces: {prefer: true}``, the tool calls trajectory assertions judge (a call with no spans
then gives those assertions an error, never the reply's calls in their place).
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .._exceptions import TargetError
from .._spans import MissingCalls, SpanSet
from ..engine._context import CallMetrics

if TYPE_CHECKING:
    from ..loading import Step
    from ..loading._models import TracesModel
    from ..traces import CallTrace, SpanReceiver

__all__ = ["RunTraces"]


class RunTraces:
    """The traces of one run (see the module docstring).

    Args:
        config: The config's ``traces:``.
    """

    def __init__(self, config: TracesModel) -> None:
        self.config = config
        self.receiver: SpanReceiver | None = None
        self._starting = asyncio.Lock()

    def wanted(self, step: Step) -> bool:
        """Whether a call of ``step`` asks for spans."""
        if self.config.receive or self.config.prefer:
            return True
        return any(check.needs_spans for check in step.checks)

    async def expect(self, step: Step) -> CallTrace | None:
        """A trace for the call of ``step`` when it asks for spans (the receiver started)."""
        if not self.wanted(step):
            return None
        if self.receiver is None:
            async with self._starting:
                if self.receiver is None:
                    from ..traces import SpanReceiver

                    receiver = SpanReceiver(
                        max_spans=self.config.max_spans, port=self.config.port or 0
                    )
                    try:
                        await receiver.start()
                    except OSError as error:
                        raise TargetError(
                            f"cannot receive spans on 127.0.0.1:{self.config.port}: "
                            f"{error.strerror or error} (traces: port: in the config)"
                        ) from None
                    self.receiver = receiver
        return self.receiver.expect()

    @property
    def endpoint(self) -> str | None:
        """The receiver's base URL (None before it started)."""
        return self.receiver.endpoint if self.receiver is not None else None

    def forget(self, call: CallTrace | None) -> None:
        """Stop keeping spans for a call that failed."""
        if call is not None and self.receiver is not None:
            self.receiver.forget(call)

    async def collect(self, call: CallTrace) -> SpanSet | str:
        """The call's spans (after waiting for them), or why there are none."""
        assert self.receiver is not None  # `expect` started it
        return await self.receiver.collect(call, self.config.wait_ms)

    def evidence(self, metrics: CallMetrics, spans: SpanSet | str | None) -> CallMetrics:
        """The call's metrics with its spans, and what they tell that the agent did not."""
        if spans is None:
            return metrics
        changes: dict[str, Any] = {"spans": spans}
        if isinstance(spans, SpanSet):
            model, tokens, cost = spans.usage()
            if metrics.model is None and model is not None:
                changes["model"] = model
            if metrics.tokens is None and tokens is not None:
                changes["tokens"] = tokens
            if metrics.cost_usd is None and cost is not None:
                changes["cost_usd"] = cost
        if self.config.prefer:
            changes["tool_calls"] = (
                spans.tool_calls() if isinstance(spans, SpanSet) else MissingCalls(spans)
            )
        return replace(metrics, **changes)

    async def aclose(self) -> None:
        """Stop the receiver."""
        if self.receiver is not None:
            await self.receiver.aclose()
