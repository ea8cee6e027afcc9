"""A support agent instrumented with OpenTelemetry, as agents in production are.

It reads ``{"order": "A-1042", "request": "refund"}`` on stdin and prints a plain answer: its
reply names no tool. What it did is in its spans: an ``invoke_agent`` root continuing the
``TRACEPARENT`` assertly gives each call, a ``chat`` model-call span (model, tokens, cost) and an
``execute_tool`` span per tool (GenAI semantic conventions), exported over OTLP/HTTP to the
endpoint assertly sets (``OTEL_EXPORTER_OTLP_ENDPOINT``). An order starting with ``B-`` makes
it skip the policy check: the mistake its spans show. Needs opentelemetry-sdk and
opentelemetry-exporter-otlp-proto-http (installed by ``make demo``).
"""

from __future__ import annotations

import json
import os
import sys

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
tracer = provider.get_tracer("support-agent")


def tool(name: str, **arguments: str) -> None:
    """One tool call, as a span (the tool itself is not the point here)."""
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.call.arguments": json.dumps(arguments),
    }
    with tracer.start_as_current_span(f"execute_tool {name}", attributes=attributes):
        pass


request = json.load(sys.stdin)
order = request["order"]
# Continue the caller's trace: assertly finds this call's spans by its trace id.
parent = TraceContextTextMapPropagator().extract({"traceparent": os.environ.get("TRACEPARENT", "")})
with tracer.start_as_current_span("invoke_agent support", context=parent):
    model_call = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.usage.input_tokens": 412,
        "gen_ai.usage.output_tokens": 58,
        "gen_ai.usage.cost": 0.00009,
    }
    with tracer.start_as_current_span("chat gpt-4o-mini", attributes=model_call):
        pass
    tool("lookup_order", order=order)
    if not order.startswith("B-"):
        tool("check_refund_policy", order=order)
    tool("issue_refund", order=order)
print(f"Your refund for order {order} is on its way.")
provider.shutdown()
