"""OTLP trace data, JSON or protobuf, decoded into `Span` records, bounded.

Both encodings of an ``ExportTraceServiceRequest`` (``{"resourceSpans": [{"scopeSpans":
[{"spans": [...]}]}]}``) are read. The JSON encoding needs nothing beyond orjson; protobuf
is decoded by the official ``opentelemetry-proto`` package (the ``assertly[otel]`` extra),
imported on the first protobuf body.

What an agent sends is untrusted: attribute values nested deeper than `MAX_DEPTH` are kept
as a marker, text longer than `MAX_TEXT` is cut, and a body holding more than ``max_spans``
spans is refused (`OtlpError`), so memory stays bounded by the body limit of the receiver.
Ids are read as OTLP/JSON writes them (hex) and as protobuf's own JSON mapping does (base64).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable
from typing import Any, Final

import orjson

from .._spans import Span, SpanEvent, SpanStatus

__all__ = [
    "MAX_DEPTH",
    "MAX_TEXT",
    "OtlpError",
    "decode_otlp",
    "group_by_trace",
    "read_otlp_json",
]

# How deep an attribute value's arrays and key-value lists are kept; deeper is a marker.
MAX_DEPTH: Final = 8
# The most characters of one attribute value, span name or status message kept.
MAX_TEXT: Final = 64 * 1024
_TOO_DEEP: Final = "[nested too deeply]"
_STATUS: Final[dict[Any, SpanStatus]] = {
    0: "unset",
    1: "ok",
    2: "error",
    "STATUS_CODE_UNSET": "unset",
    "STATUS_CODE_OK": "ok",
    "STATUS_CODE_ERROR": "error",
}
_KINDS: Final = {
    "SPAN_KIND_UNSPECIFIED": 0,
    "SPAN_KIND_INTERNAL": 1,
    "SPAN_KIND_SERVER": 2,
    "SPAN_KIND_CLIENT": 3,
    "SPAN_KIND_PRODUCER": 4,
    "SPAN_KIND_CONSUMER": 5,
}


class OtlpError(ValueError):
    """OTLP data that cannot be read: the message says what is wrong."""


def decode_otlp(body: bytes, content_type: str, max_spans: int = 1_000_000) -> list[Span]:
    """The spans of an OTLP/HTTP export body.

    Args:
        body: The (decompressed) request body.
        content_type: Its Content-Type: ``application/json`` or ``application/x-protobuf``.
        max_spans: The most spans one body may hold.

    Raises:
        OtlpError: Not OTLP trace data, more than ``max_spans`` spans, or protobuf without
            the ``opentelemetry-proto`` package.
    """
    kind = content_type.split(";", 1)[0].strip().lower()
    if kind in ("application/x-protobuf", "application/protobuf"):
        return _decode_protobuf(body, max_spans)
    if kind == "application/json" or kind.endswith("+json"):
        try:
            value = orjson.loads(body)
        except orjson.JSONDecodeError as error:
            raise OtlpError(f"the body is not JSON: {error}") from None
        return read_otlp_json(value, max_spans)
    raise OtlpError(
        f"unsupported Content-Type {content_type!r}: send application/x-protobuf or "
        "application/json (OTLP/HTTP)"
    )


def read_otlp_json(value: Any, max_spans: int = 1_000_000) -> list[Span]:
    """The spans of an OTLP JSON document (``{"resourceSpans": [...]}``), as exporters write it.

    Raises:
        OtlpError: The value is not OTLP trace data (the message names where), or it holds
            more than ``max_spans`` spans.
    """
    if not isinstance(value, dict) or not isinstance(value.get("resourceSpans"), list):
        raise OtlpError('expected an OTLP JSON object {"resourceSpans": [...]}')
    spans: list[Span] = []
    # Ids read already (a body repeats its trace id and its parents' ids): read once each.
    ids: dict[Any, str] = {}
    for r, resource in enumerate(value.get("resourceSpans") or ()):
        scopes = resource.get("scopeSpans") if isinstance(resource, dict) else None
        if scopes is None and isinstance(resource, dict):
            scopes = resource.get("instrumentationLibrarySpans")  # before OTLP 0.19
        for s, scope in enumerate(scopes or ()):
            items = scope.get("spans") if isinstance(scope, dict) else None
            if not isinstance(items, list):
                raise OtlpError(f"resourceSpans[{r}].scopeSpans[{s}] has no list of spans")
            if len(spans) + len(items) > max_spans:
                raise OtlpError(f"more than {max_spans:,} spans in one document")
            spans += [_json_span(item, (r, s, i), ids) for i, item in enumerate(items)]
    return spans


def group_by_trace(spans: Iterable[Span]) -> dict[str, list[Span]]:
    """Spans by trace id, in the order the traces first appear."""
    traces: dict[str, list[Span]] = {}
    for span in spans:
        traces.setdefault(span.trace_id, []).append(span)
    return traces


def _json_span(item: Any, where: tuple[int, int, int], ids: dict[Any, str]) -> Span:
    if type(item) is not dict:
        raise OtlpError(f"{_where(where)} is not an object")
    trace = item.get("traceId")
    trace_id = ids.get(trace) if type(trace) is str and len(trace) == 32 else None
    if trace_id is None:
        trace_id = ids[trace] = _json_id(trace, 16, where, "traceId")
    span_id = _json_id(item.get("spanId"), 8, where, "spanId")
    parent = item.get("parentSpanId")
    parent_id = None
    if parent:
        parent_id = ids.get(parent) if type(parent) is str and len(parent) == 16 else None
        if parent_id is None:
            parent_id = ids[parent] = _json_id(parent, 8, where, "parentSpanId")
    status = item.get("status")
    code: Any = 0
    message = ""
    if type(status) is dict and status:
        code = status.get("code", 0)
        message = _text(status.get("message", ""))
    kind = item.get("kind", 0)
    raw_events = item.get("events")
    events = (
        tuple(
            SpanEvent(
                _text(event.get("name", "")),
                _number(event.get("timeUnixNano")),
                _json_attributes(event.get("attributes")),
            )
            for event in raw_events
            if type(event) is dict
        )
        if raw_events and type(raw_events) is list
        else ()
    )
    return Span(
        trace_id,
        span_id,
        parent_id,
        _text(item.get("name", "")),
        kind if type(kind) is int else _KINDS.get(kind, 0) if type(kind) is str else 0,
        _number(item.get("startTimeUnixNano")),
        _number(item.get("endTimeUnixNano")),
        _STATUS.get(code, "unset") if type(code) in (int, str) else "unset",
        message,
        _json_attributes(item.get("attributes")),
        events,
    )


def _where(where: tuple[int, int, int]) -> str:
    return "resourceSpans[{}].scopeSpans[{}].spans[{}]".format(*where)


def _json_id(value: Any, size: int, where: tuple[int, int, int], key: str) -> str:
    """A trace (16 bytes) or span (8 bytes) id: hex as OTLP/JSON writes it, or base64."""
    if type(value) is str:
        if len(value) == size * 2 and value.isascii() and value.isalnum():
            try:
                int(value, 16)  # (hex digits only: faster than bytes.fromhex and back)
            except ValueError:
                pass
            else:
                return value.lower()
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raw = b""
        if len(raw) == size:
            return raw.hex()
    raise OtlpError(f"{_where(where)}.{key} is {value!r}: expected {size * 2} hex digits")


def _number(value: Any) -> int:
    """A uint64 nanosecond time: OTLP/JSON writes it as a string of digits or a number."""
    if type(value) is int:
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return 0


def _text(value: Any) -> str:
    if type(value) is str and len(value) <= MAX_TEXT:
        return value
    text = value if isinstance(value, str) else str(value)
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + "…"


def _json_attributes(items: Any, depth: int = 0) -> dict[str, Any]:
    attributes: dict[str, Any] = {}
    if type(items) is not list:
        return attributes
    for item in items:
        if type(item) is dict:
            key = item.get("key")
            if type(key) is str:
                value = item.get("value")
                if type(value) is dict:
                    text = value.get("stringValue")  # the common case, as `_json_value` reads
                    if type(text) is str and len(text) <= MAX_TEXT and len(key) <= MAX_TEXT:
                        attributes[key] = text
                        continue
                attributes[_text(key)] = _json_value(value, depth)
    return attributes


def _json_value(value: Any, depth: int) -> Any:
    """An OTLP AnyValue as a JSON value (arrays and key-value lists to a bounded depth)."""
    if not isinstance(value, dict):
        return None
    if "stringValue" in value:
        return _text(value["stringValue"])
    if "boolValue" in value:
        return value["boolValue"] is True
    if "intValue" in value:
        number = value["intValue"]
        if type(number) is int:
            return number
        try:
            return int(number)
        except (TypeError, ValueError):
            return None
    if "doubleValue" in value:
        number = value["doubleValue"]
        return number if isinstance(number, int | float) and not isinstance(number, bool) else None
    if depth >= MAX_DEPTH and ("arrayValue" in value or "kvlistValue" in value):
        return _TOO_DEEP
    if "arrayValue" in value:
        inner = value["arrayValue"] or {}
        values = inner.get("values") if isinstance(inner, dict) else None
        return [_json_value(item, depth + 1) for item in values or ()]
    if "kvlistValue" in value:
        inner = value["kvlistValue"] or {}
        values = inner.get("values") if isinstance(inner, dict) else None
        return _json_attributes(values, depth + 1)
    if "bytesValue" in value:
        return _text(value["bytesValue"])  # base64 text as sent
    return None


def _decode_protobuf(body: bytes, max_spans: int) -> list[Span]:
    try:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )
    except ImportError:
        raise OtlpError(
            "OTLP protobuf needs the opentelemetry-proto package: pip install 'assertly[otel]' "
            "(or export OTLP as JSON: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/json)"
        ) from None
    from google.protobuf.message import DecodeError

    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(body)
    except (DecodeError, RecursionError) as error:
        raise OtlpError(f"the body is not OTLP protobuf: {error}") from None
    spans: list[Span] = []
    hex_ids: dict[bytes, str] = {}  # (a body repeats its trace id and its parents' ids)
    for resource in request.resource_spans:
        for scope in resource.scope_spans:
            if len(spans) + len(scope.spans) > max_spans:
                raise OtlpError(f"more than {max_spans:,} spans in one request")
            for item in scope.spans:
                if len(item.trace_id) != 16 or len(item.span_id) != 8:
                    raise OtlpError("a span's trace id or span id has the wrong length")
                events = (
                    tuple(
                        SpanEvent(
                            _text(event.name),
                            event.time_unix_nano,
                            _proto_attributes(event.attributes, 0),
                        )
                        for event in item.events
                    )
                    if item.events
                    else ()
                )
                trace, parent = item.trace_id, item.parent_span_id
                trace_id = hex_ids.get(trace) or hex_ids.setdefault(trace, trace.hex())
                parent_id = None
                if len(parent) == 8:
                    parent_id = hex_ids.get(parent) or hex_ids.setdefault(parent, parent.hex())
                spans.append(
                    Span(
                        trace_id,
                        item.span_id.hex(),
                        parent_id,
                        _text(item.name),
                        item.kind,
                        item.start_time_unix_nano,
                        item.end_time_unix_nano,
                        _STATUS.get(item.status.code, "unset"),
                        _text(item.status.message),
                        _proto_attributes(item.attributes, 0),
                        events,
                    )
                )
    return spans


def _proto_attributes(items: Any, depth: int) -> dict[str, Any]:
    attributes: dict[str, Any] = {}
    for item in items:
        value = item.value
        key = item.key
        if len(key) > MAX_TEXT:
            key = _text(key)
        if value.WhichOneof("value") == "string_value":  # the common case, inlined
            text = value.string_value
            attributes[key] = text if len(text) <= MAX_TEXT else _text(text)
        else:
            attributes[key] = _proto_value(value, depth)
    return attributes


def _proto_value(value: Any, depth: int) -> Any:
    which = value.WhichOneof("value")
    if which == "string_value":
        return _text(value.string_value)
    if which == "int_value":
        return value.int_value
    if which == "double_value":
        return value.double_value
    if which == "bool_value":
        return value.bool_value
    if which in ("array_value", "kvlist_value") and depth >= MAX_DEPTH:
        return _TOO_DEEP
    if which == "array_value":
        return [_proto_value(item, depth + 1) for item in value.array_value.values]
    if which == "kvlist_value":
        return _proto_attributes(value.kvlist_value.values, depth + 1)
    if which == "bytes_value":
        return base64.b64encode(value.bytes_value).decode()
    return None
