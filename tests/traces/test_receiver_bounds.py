"""The run's OTLP receiver against hostile and careless senders (issue 33).

Real HTTP on loopback (aiohttp client to the receiver); spans encoded by the real
OpenTelemetry SDK encoders where an encoding matters. Every body is bounded, every stray
trace dropped, and nothing from one call's trace reaches another call.
"""

from __future__ import annotations

import asyncio
import gzip
import json
from typing import Any

import aiohttp
import pytest

from assertly._spans import SpanSet
from assertly.traces import OtlpError, SpanReceiver, decode_otlp, read_otlp_json


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


EMPTY = b'{"resourceSpans": []}'


def _run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def test_a_calls_spans_are_found_by_its_trace_id_and_others_are_dropped() -> None:
    async def scenario() -> tuple[Any, Any, int]:
        receiver = SpanReceiver()
        await receiver.start()
        try:
            first, second = receiver.expect(), receiver.expect()
            forged = "ab" * 16
            body = _document(
                [
                    _span(first.trace_id, "1" * 16, first.parent_id, "first root"),
                    _span(second.trace_id, "2" * 16, second.parent_id, "second root"),
                    *[_span(forged, f"{n:016x}", None, "flood") for n in range(500)],
                ]
            )
            status, _ = await _post(receiver, json.dumps(body).encode())
            assert status == 200
            return (
                await receiver.collect(first, 1000),
                await receiver.collect(second, 1000),
                receiver.strays,
            )
        finally:
            await receiver.aclose()

    first, second, strays = _run(scenario())
    assert isinstance(first, SpanSet) and [s.name for s in first.spans] == ["first root"]
    assert isinstance(second, SpanSet) and [s.name for s in second.spans] == ["second root"]
    assert strays == 500


def test_the_wait_ends_at_the_root_span_and_a_missing_trace_says_why() -> None:
    async def scenario() -> tuple[float, Any]:
        receiver = SpanReceiver()
        await receiver.start()
        try:
            call = receiver.expect()
            child = _span(call.trace_id, "3" * 16, "4" * 16, "child")
            root = _span(call.trace_id, "4" * 16, call.parent_id, "root")
            await _post(receiver, json.dumps(_document([child])).encode())
            waiting = asyncio.ensure_future(receiver.collect(call, 30_000))
            await asyncio.sleep(0.05)
            assert not waiting.done()  # a child alone does not end the wait
            started = asyncio.get_running_loop().time()
            await _post(receiver, json.dumps(_document([root])).encode())
            spans = await waiting
            waited = asyncio.get_running_loop().time() - started
            assert isinstance(spans, SpanSet) and len(spans) == 2
            silent = receiver.expect()
            await _post(
                receiver, json.dumps(_document([_span("cd" * 16, "5" * 16, None, "x")])).encode()
            )
            return waited, await receiver.collect(silent, 50)
        finally:
            await receiver.aclose()

    waited, missing = _run(scenario())
    assert waited < 5
    assert missing == (
        "no spans arrived for this call within 50 ms (1 span(s) of other trace ids arrived: "
        "does the agent continue the trace of the `traceparent` it was given? See docs/traces.md)"
    )


def test_bodies_over_the_limit_are_refused_compressed_or_not() -> None:
    async def scenario() -> list[int]:
        receiver = SpanReceiver(max_body_bytes=1024 * 1024)
        await receiver.start()
        try:
            big = b"{" + b" " * (50 * 1024 * 1024) + b"}"  # 50 MB
            bomb = gzip.compress(b" " * (16 * 1024 * 1024), 1)  # 16 MB inflated, ~70 KB sent
            return [
                (await _post(receiver, big))[0],
                (await _post(receiver, bomb, encoding="gzip"))[0],
                (await _post(receiver, gzip.compress(EMPTY), encoding="gzip"))[0],
                (await _post(receiver, b"{}", encoding="br"))[0],
                (await _post(receiver, b"not json"))[0],
                (await _post(receiver, b"{}", content_type="text/plain"))[0],
            ]
        finally:
            await receiver.aclose()

    assert _run(scenario()) == [413, 413, 200, 400, 400, 400]


def test_a_call_keeps_at_most_max_spans_and_counts_the_rest() -> None:
    async def scenario() -> Any:
        receiver = SpanReceiver(max_spans=100)
        await receiver.start()
        try:
            call = receiver.expect()
            spans = [
                _span(call.trace_id, f"{n + 1:016x}", call.parent_id, f"s{n}") for n in range(1000)
            ]
            await _post(receiver, json.dumps(_document(spans)).encode())
            return await receiver.collect(call, 100)
        finally:
            await receiver.aclose()

    found = _run(scenario())
    assert isinstance(found, SpanSet) and len(found) == 100 and found.dropped == 900


def test_a_million_spans_are_refused_by_size_and_by_count() -> None:
    one = json.dumps(_span("ab" * 16, "1" * 16, None, "s"))

    def document(count: int) -> bytes:
        spans = ",".join([one] * count)
        return ('{"resourceSpans":[{"scopeSpans":[{"spans":[' + spans + "]}]}]}").encode()

    async def scenario() -> int:
        receiver = SpanReceiver()
        await receiver.start()
        try:
            return (await _post(receiver, document(1_000_000)))[0]  # ~170 MB
        finally:
            await receiver.aclose()

    assert _run(scenario()) == 413
    with pytest.raises(OtlpError, match="more than 200,000 spans"):
        decode_otlp(document(200_001), "application/json", max_spans=200_000)


def test_deeply_nested_attributes_and_long_texts_are_bounded() -> None:
    value: dict[str, Any] = {"stringValue": "bottom"}
    for _ in range(5000):
        value = {"arrayValue": {"values": [value]}}
    span = _span("ab" * 16, "1" * 16, None, "\x1b[31mred\x1b[0m" + "n" * 100_000)
    span["attributes"] = [{"key": "deep", "value": value}]
    try:
        spans = read_otlp_json(_document([span]))
    except OtlpError:
        return  # refused outright is bounded too
    deep = spans[0].attributes["deep"]
    depth = 0
    while isinstance(deep, list):
        deep, depth = deep[0], depth + 1
    assert depth <= 8 and deep == "[nested too deeply]"
    assert len(spans[0].name) <= 64 * 1024 + 1
    assert spans[0].name.startswith("\x1b[31m")  # kept as data; renderers make it inert


def test_ids_are_read_as_hex_or_base64_and_bad_ids_are_errors() -> None:
    import base64

    trace = bytes(range(16))
    span = _span(base64.b64encode(trace).decode(), base64.b64encode(bytes(8)).decode(), None, "b")
    assert read_otlp_json(_document([span]))[0].trace_id == trace.hex()
    with pytest.raises(OtlpError, match=r"spans\[0\]\.traceId is 'xyz'"):
        read_otlp_json(_document([_span("xyz", "1" * 16, None, "bad")]))
    with pytest.raises(OtlpError, match="resourceSpans"):
        read_otlp_json([1, 2])


def test_protobuf_from_the_sdk_encoder_decodes_like_its_json() -> None:
    pytest.importorskip("opentelemetry.exporter.otlp.proto.common")
    from opentelemetry.exporter.otlp.json.common.trace_encoder import encode_spans as to_json
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import Status, StatusCode

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("t")
    with (
        tracer.start_as_current_span("root", attributes={"n": 3, "f": 0.5, "b": True}),
        tracer.start_as_current_span("tool", attributes={"list": ["a", "b"]}) as span,
    ):
        span.record_exception(ValueError("boom"))
        span.set_status(Status(StatusCode.ERROR, "boom"))
    finished = exporter.get_finished_spans()
    from_proto = decode_otlp(encode_spans(finished).SerializeToString(), "application/x-protobuf")
    from_json = decode_otlp(to_json(finished).to_json().encode(), "application/json")
    assert from_proto == from_json
    tool = next(s for s in from_proto if s.name == "tool")
    assert tool.failed and tool.error_text() == "ValueError: boom"
    root = next(s for s in from_proto if s.name == "root")
    assert root.attributes == {"n": 3, "f": 0.5, "b": True}
    assert tool.attributes == {"list": ["a", "b"]} and tool.parent_id == root.span_id
