"""The run's OTLP/HTTP receiver: spans of each agent call, found by the trace id it was given.

While a run needs spans it listens on loopback (``POST /v1/traces``, protobuf or JSON,
gzip accepted). Each call of an agent gets a trace of its own (`SpanReceiver.expect`: a
fresh trace id and the span id of a parent that stands for assertly, sent as a W3C
``traceparent``); the spans that arrive with that trace id are kept for the call, up to
``max_spans`` (the rest counted as dropped). Spans of any other trace id are counted and
dropped: a forged or stray trace never mixes into a call's spans, and nothing is kept for it.
After the reply the call waits for its spans (`SpanReceiver.collect`) until the root span
arrived (an exported span has ended, and the root ends last) or ``wait_ms`` passed.

Bounded: a body over ``max_body_bytes`` (as sent or inflated) is refused with 413, a body of
more than ``max_spans_per_body`` spans with 400; bodies are decoded off the event loop when
they are big, so a flood does not stall the run's clock; nothing is written to disk.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from dataclasses import dataclass, field
from typing import Any, Final

from .._spans import Span, SpanSet, spans_missing
from ._otlp import OtlpError, decode_otlp

__all__ = ["CallTrace", "SpanReceiver"]

_QUIET = logging.getLogger("assertly.traces.receiver")
_QUIET.addHandler(logging.NullHandler())
_QUIET.propagate = False
# Bodies at least this big are decoded in a thread (the event loop keeps timing calls).
_THREADED_BODY: Final = 256 * 1024


@dataclass(slots=True, eq=False)
class CallTrace:
    """One call's trace: what is sent with the call, and its spans as they arrive.

    Attributes:
        trace_id: The call's trace id (32 hex digits).
        parent_id: The span id of the parent assertly stands for (16 hex digits).
        spans: The spans received so far (at most the receiver's ``max_spans``).
        dropped: Spans of this trace over the limit, not kept.
    """

    trace_id: str
    parent_id: str
    spans: list[Span] = field(default_factory=list)
    dropped: int = 0
    strays_before: int = 0
    root: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def traceparent(self) -> str:
        """The W3C ``traceparent`` of the call (version 00, sampled)."""
        return f"00-{self.trace_id}-{self.parent_id}-01"


class SpanReceiver:
    """An OTLP/HTTP trace receiver on loopback for one run (see the module docstring).

    Args:
        max_spans: The most spans kept per call.
        max_body_bytes: The largest body read, before and after decompression.
        max_spans_per_body: The most spans one body may hold.
        port: The loopback port to listen on (0: a free one).
    """

    def __init__(
        self,
        *,
        max_spans: int = 10_000,
        max_body_bytes: int = 32 * 1024 * 1024,
        max_spans_per_body: int = 200_000,
        port: int = 0,
    ) -> None:
        self.port = port
        self.max_spans = max_spans
        self.max_body_bytes = max_body_bytes
        self.max_spans_per_body = max_spans_per_body
        self.endpoint = ""
        # Spans of trace ids no call is waiting for: counted, never kept.
        self.strays = 0
        self.received = 0
        self.refused = 0
        self._calls: dict[str, CallTrace] = {}
        self._runner: Any = None

    async def start(self) -> None:
        """Listen on loopback (`endpoint` is then ``http://127.0.0.1:PORT``).

        Raises:
            OSError: The port is taken.
        """
        from aiohttp import web

        app = web.Application(client_max_size=self.max_body_bytes)
        app.router.add_post("/v1/traces", self._export)
        # A sender's malformed request is its problem, not a traceback in the run's output.
        # At the run's end, a sender still holding a connection is not waited for (aiohttp
        # would wait a minute): its spans come too late for any call anyway.
        runner = web.AppRunner(
            app, access_log=None, handle_signals=False, logger=_QUIET, shutdown_timeout=0.25
        )
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", self.port)
        await site.start()
        self._runner = runner
        port = runner.addresses[0][1]
        self.endpoint = f"http://127.0.0.1:{port}"

    async def aclose(self) -> None:
        """Stop listening."""
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()

    def expect(self) -> CallTrace:
        """A new call's trace, whose spans are kept from now until `collect` ends."""
        call = CallTrace(secrets.token_hex(16), secrets.token_hex(8), strays_before=self.strays)
        self._calls[call.trace_id] = call
        return call

    def forget(self, call: CallTrace) -> None:
        """Stop keeping spans for ``call`` (its call failed: nothing will judge them)."""
        self._calls.pop(call.trace_id, None)

    async def collect(self, call: CallTrace, wait_ms: float) -> SpanSet | str:
        """The call's spans once its root span arrived or ``wait_ms`` passed; then forgotten.

        Returns:
            The spans, or why there are none (`spans_missing`: an ``error`` for the checks
            that need them).
        """
        if not call.root.is_set() and wait_ms > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(call.root.wait(), wait_ms / 1000)
        self.forget(call)
        if not call.spans:
            return spans_missing(wait_ms, self.strays - call.strays_before)
        if not call.root.is_set():
            # Some spans but not the root (it ends last): the trace is cut short, and the
            # spans not here (a failing one, a slow one) could change any verdict.
            return (
                f"the call's root span did not arrive within {wait_ms:,.0f} ms "
                f"({len(call.spans):,} span(s) of its trace did): its trace is incomplete"
            )
        return SpanSet(call.spans, call.trace_id, call.dropped, call.parent_id)

    def accept(self, spans: list[Span]) -> None:
        """File decoded spans under the calls waiting for them; count the others."""
        self.received += len(spans)
        calls = self._calls
        limit = self.max_spans
        for span in spans:
            call = calls.get(span.trace_id)
            if call is None:
                self.strays += 1
                continue
            if len(call.spans) >= limit:
                call.dropped += 1
                continue
            call.spans.append(span)
            parent = span.parent_id
            if parent is None or parent == call.parent_id:
                call.root.set()

    async def _export(self, request: Any) -> Any:
        from aiohttp import web

        # aiohttp inflates gzip and deflate as it reads, and stops at client_max_size of
        # inflated bytes (413): a small bomb is refused as a big body is.
        body = await request.read()
        content_type = request.headers.get("Content-Type", "application/x-protobuf")
        try:
            if len(body) >= _THREADED_BODY:
                spans = await asyncio.to_thread(
                    decode_otlp, body, content_type, self.max_spans_per_body
                )
            else:
                spans = decode_otlp(body, content_type, self.max_spans_per_body)
        except OtlpError as error:
            self.refused += 1
            return web.Response(status=400, text=str(error))
        self.accept(spans)
        if content_type.startswith("application/json"):
            return web.Response(body=b"{}", content_type="application/json")
        # An empty ExportTraceServiceResponse is zero bytes of protobuf.
        return web.Response(body=b"", content_type="application/x-protobuf")
