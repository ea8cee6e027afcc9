"""An agent instrumented with the real OpenTelemetry SDK, for the traces tests (issue 33).

Run as a ``cmd:`` agent: reads ``{"question", "tools": [{name, args}], "model", "fail_tool",
"export", "forge", "orphan"}`` on stdin, makes one ``invoke_agent`` root span (continuing the
``TRACEPARENT`` it was given) with a ``chat`` model-call span and one ``execute_tool`` span per
tool, exports them over OTLP/HTTP (``PROTOCOL``: protobuf, the default, or json), and prints a
plain-text answer that names no tool call. With ``--serve PORT`` it is an HTTP agent instead:
the same spans per POST, continuing the request's ``traceparent`` header.
"""

from __future__ import annotations

import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.context import Context
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

if os.environ.get("PROTOCOL") == "json":
    from opentelemetry.exporter.otlp.json.http.trace_exporter import OTLPSpanExporter
else:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

PROVIDER = TracerProvider()
PROVIDER.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
TRACER = PROVIDER.get_tracer("traced-agent")


def answer(request: dict[str, Any], traceparent: str | None) -> str:
    """Do the work in spans; return the reply text."""
    if request.get("forge"):
        # Spans under a trace id nobody gave this call: must never reach any trial.
        traceparent = "00-" + "ab" * 16 + "-" + "cd" * 8 + "-01"
    if request.get("orphan"):
        traceparent = None  # a new trace of its own (an agent that ignores TRACEPARENT)
    parent: Context | None = None
    if traceparent:
        parent = TraceContextTextMapPropagator().extract({"traceparent": traceparent})
    if not request.get("export", True):
        return "I did not export anything."
    with TRACER.start_as_current_span("invoke_agent", context=parent):
        with TRACER.start_as_current_span(
            "chat " + request.get("model", "gpt-test"),
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": request.get("model", "gpt-test"),
                "gen_ai.usage.input_tokens": 120,
                "gen_ai.usage.output_tokens": 30,
                "gen_ai.usage.cost": 0.002,
            },
        ):
            time.sleep(float(request.get("model_ms", 0)) / 1000)
        for tool in request.get("tools", []):
            with TRACER.start_as_current_span(
                "execute_tool " + tool["name"],
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": tool["name"],
                    "gen_ai.tool.call.arguments": json.dumps(tool.get("args", {})),
                },
            ) as span:
                if tool["name"] == request.get("fail_tool"):
                    span.record_exception(RuntimeError(f"{tool['name']} is down"))
                    span.set_status(Status(StatusCode.ERROR, f"{tool['name']} is down"))
    return f"Here is the answer to {request.get('question', '?')}."


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        request = json.loads(self.rfile.read(length) or b"{}")
        body = json.dumps({"answer": answer(request, self.headers.get("traceparent"))}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--serve":
        server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[2])), _Handler)
        print("ready", flush=True)
        server.serve_forever()
    else:
        print(answer(json.load(sys.stdin), os.environ.get("TRACEPARENT")))
        PROVIDER.shutdown()
