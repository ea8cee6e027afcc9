"""The one small interface every target implements: ``await target.call(request)``.

A target turns a `TargetRequest` (a test's ``input`` and the call's timeout) into a
`TargetResponse`: the agent's response plus whatever the agent reported about the call (model,
cost, tokens, tool calls), as an httpx transport turns a request into a response. Anything that
goes wrong (crash, non-zero exit, timeout, bad HTTP status, connection refused) raises
`TargetError` with the useful part of stderr or the body; the runner turns that into an
``error`` verdict and goes on.

What the runner needs to know about a target it reads from what the target declares
(`Target.recorded`, `Target.timeout_s`, `Target.start`), never from its class.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from .._exceptions import TargetError
from .._spans import SpanSet
from ..engine._context import CallMetrics

__all__ = [
    "MAX_OUTPUT_BYTES",
    "BaseTarget",
    "Target",
    "TargetRequest",
    "TargetResponse",
    "encode_input",
]


@dataclass(slots=True, frozen=True)
class TargetRequest:
    """One call of a target.

    Attributes:
        input: What to send: the test's (or step's) ``input``.
        timeout_s: How long the call may take, in seconds.
        key: The test id (``id/step`` for a step of a multi-step test) the call is for; a
            target of recorded responses answers by it before the input. None: by input only.
        conversation_id: A conversation test's id of this trial's conversation, the same on
            every turn: sent as ``X-Assertly-Conversation-Id`` (HTTP) or in the environment
            as ``ASSERTLY_CONVERSATION_ID`` (``cmd:`` and ``py:``), so a stateful agent can
            keep its own state per conversation. None: not a conversation.
        traceparent: The W3C ``traceparent`` of this call when the run receives spans
            (issue 33): sent as the ``traceparent`` header (HTTP) or as ``TRACEPARENT`` in
            the environment (``cmd:``, ``py:``), so the agent's spans join a trace the run
            knows. None: no spans asked.
        otlp_endpoint: The run's OTLP/HTTP receiver (``http://127.0.0.1:PORT``), given to
            ``cmd:`` and ``py:`` agents as ``OTEL_EXPORTER_OTLP_ENDPOINT`` and (with
            ``/v1/traces``) ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``.
    """

    input: Any
    timeout_s: float
    key: str | None = None
    conversation_id: str | None = None
    traceparent: str | None = None
    otlp_endpoint: str | None = None

    def environment(self) -> dict[str, str]:
        """What a ``cmd:`` or ``py:`` agent finds in its environment for this call."""
        env: dict[str, str] = {}
        if self.conversation_id is not None:
            env["ASSERTLY_CONVERSATION_ID"] = self.conversation_id
        if self.traceparent is not None:
            env["TRACEPARENT"] = self.traceparent
        if self.otlp_endpoint is not None:
            env["OTEL_EXPORTER_OTLP_ENDPOINT"] = self.otlp_endpoint
            env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = f"{self.otlp_endpoint}/v1/traces"
            # JSON or protobuf: the receiver reads both; protobuf is the SDK's default.
        return env

    def headers(self) -> dict[str, str]:
        """What an HTTP agent receives as headers for this call, besides the configured ones."""
        headers: dict[str, str] = {}
        if self.conversation_id is not None:
            headers["X-Assertly-Conversation-Id"] = self.conversation_id
        if self.traceparent is not None:
            headers["traceparent"] = self.traceparent
        return headers


@dataclass(slots=True)
class TargetResponse:
    """What a call produced.

    Attributes:
        output: The response: text (JSON or prose) or an already-parsed JSON value.
        model: The model the agent reported using, if any.
        cost_usd: What the call cost, if reported.
        latency_ms: How long the call took (measured by the runner when not reported).
        tokens: Token counts, if reported.
        tool_calls: The tool calls the agent made, if it reports them beside the output: a
            list of ``{"name": ..., "arguments": {...}}`` (``args`` or ``input`` also read;
            arguments as an object or JSON text). Trajectory assertions judge these instead
            of any calls found in ``output``; a metadata file's ``tool_calls`` that is not a
            list is kept as written, so that those assertions report it as an error.
        metadata: Anything else the target reported (``tool_calls`` found here is read too
            when the field is not set).
        spans: The call's spans (`SpanSet`) when a recorded trace or the response cache
            gave them; a live call's spans come from the run's receiver instead.
    """

    output: Any
    model: str | None = None
    cost_usd: float | None = None
    latency_ms: float | None = None
    tokens: dict[str, int] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    tool_calls: list[Any] | None = None
    spans: SpanSet | None = None

    def reported_tool_calls(self) -> Any:
        """``tool_calls``, else ``metadata["tool_calls"]``: what trajectory assertions judge."""
        if self.tool_calls is not None:
            return self.tool_calls
        return self.metadata.get("tool_calls") if isinstance(self.metadata, dict) else None

    def metrics(self, measured_ms: float | None = None) -> CallMetrics:
        """The call's metrics, once: the latency reported, else ``measured_ms`` (if measured)."""
        latency = self.latency_ms if self.latency_ms is not None else measured_ms
        return CallMetrics(
            latency, self.cost_usd, self.model, self.tokens, self.reported_tool_calls(), self.spans
        )


class Target(Protocol):
    """Something that answers a test's input.

    Attributes:
        name: How the target is named in messages (its spec).
        recorded: It answers from recorded responses without calling anything: its answers
            are not rate-limited, their latency is not measured, and a test it answers never
            waits (it is judged inline).
        timeout_s: Its own per-call timeout (a config entry's ``timeout_s``); None: the run's.
    """

    name: str
    recorded: bool
    timeout_s: float | None

    async def start(self) -> None:
        """Set up what the first call needs (inside the event loop, before the run's clock)."""
        ...

    async def call(self, request: TargetRequest) -> TargetResponse:
        """Answer ``request``; raise `TargetError` on any failure."""
        ...

    async def aclose(self) -> None:
        """Release connections and processes."""
        ...


class BaseTarget:
    """The declarations of a target that says nothing else.

    It calls (not recorded), with the run's timeout, and needs no set-up.
    """

    name: str
    recorded = False
    timeout_s: float | None = None

    async def start(self) -> None:
        """Nothing to set up."""


# The most an agent may answer (stdout or HTTP body); a bigger answer is an error, not an
# out-of-memory crash.
MAX_OUTPUT_BYTES = 64 * 1024 * 1024


def encode_input(payload: Any) -> bytes:
    """A test's input as JSON bytes (integers of any size kept exact).

    Raises:
        TargetError: The input cannot be written as JSON (nested too deeply, not JSON at all).
    """
    import json

    import orjson

    try:
        return orjson.dumps(payload, option=orjson.OPT_NON_STR_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        pass  # beyond 64-bit integers or 255 levels: the stdlib writes both
    try:
        return json.dumps(payload, separators=(",", ":"), allow_nan=False).encode()
    except (TypeError, ValueError, RecursionError) as error:
        reason = "nested too deeply" if isinstance(error, RecursionError) else str(error)
        raise TargetError(f"the input cannot be sent as JSON: {reason}") from None


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
    # Kept as reported, even when it is not a list: trajectory assertions then say what is
    # wrong with it (an error), instead of silently judging the output's calls.
    if data.get("tool_calls") is not None:
        known["tool_calls"] = data["tool_calls"]
    # A recorded trace, decoded when it was loaded (never from an agent's JSON metadata).
    if isinstance(data.get("spans"), SpanSet):
        known["spans"] = data["spans"]
    return known
