"""Red team of traces (issue 33): ways a trace-based check could pass by mistake.

Real HTTP on loopback to the run's receiver; the spans judged by the real span checks.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import aiohttp

from assertly._spans import SpanSet
from assertly.traces import SpanReceiver


def _span(
    trace_id: str, span_id: str, parent: str | None, name: str, **attrs: Any
) -> dict[str, Any]:
    return {
        "traceId": trace_id,
        "spanId": span_id,
        **({"parentSpanId": parent} if parent else {}),
        "name": name,
        "kind": 1,
        "startTimeUnixNano": "1000",
        "endTimeUnixNano": "2000",
        "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()],
    }


def _document(spans: list[dict[str, Any]]) -> dict[str, Any]:
    return {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {}, "spans": spans}]}]}


async def _post(
    receiver: SpanReceiver,
    body: bytes,
    content_type: str = "application/json",
    encoding: str | None = None,
) -> tuple[int, str]:
    headers = {"Content-Type": content_type}
    if encoding:
        headers["Content-Encoding"] = encoding
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"{receiver.endpoint}/v1/traces", data=body, headers=headers) as response,
    ):
        return response.status, await response.text()


def _run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def test_a_trace_whose_root_never_arrived_is_an_error_not_a_partial_pass() -> None:
    """Only a child span arrived in time (the failing root span is late): never a pass."""

    async def scenario() -> SpanSet | str:
        receiver = SpanReceiver()
        await receiver.start()
        try:
            call = receiver.expect()
            child = _span(call.trace_id, "2" * 16, "1" * 16, "execute_tool search")
            status, _ = await _post(receiver, json.dumps(_document([child])).encode())
            assert status == 200
            return await receiver.collect(call, 100)
        finally:
            await receiver.aclose()

    spans = _run(scenario())
    assert isinstance(spans, str), "a truncated trace must not be judged as if whole"
    assert "root span" in spans


def test_a_forged_flood_with_a_guessed_parent_reaches_no_call() -> None:
    """Spans of another trace id, even naming the call's parent span id, are strays."""

    async def scenario() -> tuple[SpanSet | str, int]:
        receiver = SpanReceiver()
        await receiver.start()
        try:
            call = receiver.expect()
            forged = [_span("cd" * 16, f"{n:016x}", call.parent_id, "flood") for n in range(200)]
            await _post(receiver, json.dumps(_document(forged)).encode())
            started = time.perf_counter()
            spans = await receiver.collect(call, 150)
            assert time.perf_counter() - started < 2
            return spans, receiver.strays
        finally:
            await receiver.aclose()

    spans, strays = _run(scenario())
    assert isinstance(spans, str) and "200 span(s) of other trace ids" in spans
    assert strays == 200


def test_spans_arriving_after_collect_reach_no_later_call() -> None:
    """A late export of trial 1 is a stray for trial 2 (each call has its own trace id)."""

    async def scenario() -> SpanSet | str:
        receiver = SpanReceiver()
        await receiver.start()
        try:
            first = receiver.expect()
            assert isinstance(await receiver.collect(first, 50), str)
            second = receiver.expect()
            late = _span(first.trace_id, "1" * 16, first.parent_id, "late root", x="1")
            await _post(receiver, json.dumps(_document([late])).encode())
            return await receiver.collect(second, 50)
        finally:
            await receiver.aclose()

    spans = _run(scenario())
    assert isinstance(spans, str)
