"""The traces section: spans received and judged per second, and what the wait adds (issue 33).

Spans come from the real OpenTelemetry SDK (an in-memory exporter), encoded as the OTLP/HTTP
exporters encode them (protobuf, and the JSON exporter's encoding), 1,000 spans a body. The
receiver's work per span is timed in-process, on one core: decoding the body, filing each span
under its call, and judging the call's spans (its tool calls, model calls and error spans
read). Targets: at least 50,000 spans a second, either encoding.

The wait: the instrumented HTTP agent of the tests (tests/runner/traced_agent.py, exporting as
each span ends, so its spans are in before its reply) answers 200 tests with and without
``traces: {receive: true}``; the figure is the mean of each trial's duration minus its call's
latency (what the runner adds around a call) with spans, less the same without. Target: at most
5 ms a trial at the default wait.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from harness import REPO, Run, assertly_run, log, pin_to_one_core

SPANS_PER_BODY = 1_000
BODIES = 50
SPANS_TARGET = 50_000
WAIT_TARGET_MS = 5.0
TESTS = 200


def _bodies() -> tuple[list[bytes], list[bytes], list[str]]:
    """OTLP bodies (protobuf, JSON) of BODIES traces of SPANS_PER_BODY spans, and their ids."""
    from opentelemetry.exporter.otlp.json.common.trace_encoder import (
        encode_spans as encode_json,
    )
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("bench")
    protobuf: list[bytes] = []
    encoded_json: list[bytes] = []
    trace_ids: list[str] = []
    for _ in range(BODIES):
        exporter.clear()
        with tracer.start_as_current_span("invoke_agent") as root:
            for number in range(SPANS_PER_BODY - 1):
                if number % 3 == 0:
                    attributes = {
                        "gen_ai.operation.name": "chat",
                        "gen_ai.request.model": "gpt-bench",
                        "gen_ai.usage.input_tokens": 100,
                        "gen_ai.usage.output_tokens": 20,
                    }
                else:
                    attributes = {
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": f"tool_{number % 7}",
                        "gen_ai.tool.call.arguments": json.dumps({"query": f"q{number}"}),
                    }
                with tracer.start_as_current_span(f"span {number}", attributes=attributes):
                    pass
        trace_ids.append(format(root.get_span_context().trace_id, "032x"))
        spans = exporter.get_finished_spans()
        protobuf.append(encode_spans(spans).SerializeToString())
        encoded_json.append(encode_json(spans).to_json().encode())
    return protobuf, encoded_json, trace_ids


def _receive_and_judge(bodies: list[bytes], trace_ids: list[str], content_type: str) -> float:
    """Seconds to decode, file and judge every body's spans (one call's trace each)."""
    from assertly._spans import SpanSet
    from assertly.traces import CallTrace, SpanReceiver, decode_otlp

    receiver = SpanReceiver(max_spans=SPANS_PER_BODY)

    async def timed() -> float:
        calls = []
        for trace_id in trace_ids:
            call = CallTrace(trace_id, "0" * 16)
            receiver._calls[trace_id] = call  # (what `expect` does, with the SDK's own ids)
            calls.append(call)
        started = time.perf_counter()
        for body in bodies:
            receiver.accept(decode_otlp(body, content_type))
        for call in calls:
            spans = SpanSet(call.spans, call.trace_id, call.dropped)
            spans.tool_calls()
            spans.usage()
            sum(1 for span in spans.spans if span.failed)
        return time.perf_counter() - started

    return asyncio.run(timed())


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _test_file(directory: Path, export: bool) -> Path:
    tests = [
        {"id": f"t{n}",
         "input": {"question": str(n), "tools": [{"name": "search"}], "export": export},
         "assertions": [{"type": "icontains", "value": "answer" if export else "export"}]}
        for n in range(TESTS)
    ]  # fmt: skip
    path = directory / f"traced-{export}.tests.json"
    path.write_text(json.dumps({"agent": "bot", "test_suites": {"s": {"tests": tests}}}))
    return path


def _wait_added(run: Run) -> dict[str, Any]:
    """Mean (duration - latency) per trial with spans received, less the same without."""
    directory = run.work / "traces"
    directory.mkdir(exist_ok=True)
    agent_script = REPO / "tests" / "runner" / "traced_agent.py"
    port, receiver_port = _free_port(), _free_port()
    env = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{receiver_port}"}
    agent = subprocess.Popen(
        [sys.executable, str(agent_script), "--serve", str(port)],
        env=env, stdout=subprocess.PIPE, cwd=directory,
    )  # fmt: skip
    assert agent.stdout is not None and agent.stdout.readline().strip() == b"ready"
    added: dict[str, list[float]] = {"with": [], "without": []}
    try:
        for number in range(3):
            for mode in ("without", "with"):
                # Without: the agent exports nothing (no receiver to block its exporter).
                test_file = _test_file(directory, mode == "with")
                traces = {"receive": mode == "with", "port": receiver_port}
                config = {"agents": {"bot": {"url": f"http://127.0.0.1:{port}/"}},
                          "traces": traces}  # fmt: skip
                (directory / "assertly.yaml").write_text(json.dumps(config))
                report = directory / f"{mode}-{number}.json"
                assertly_run(directory, f"{mode}-{number}", test_file, None, "-j", "4",
                             "-o", str(report))  # fmt: skip
                data = json.loads(report.read_text())
                gaps = [
                    trial["duration_ms"] - trial["metrics"]["latency_ms"]
                    for test in data["tests"]
                    for trial in test["trials"]
                ]
                assert all(test["status"] == "passed" for test in data["tests"]), data["summary"]
                if mode == "with":
                    spans = sum(t["trials"][0]["trace"]["spans"] for t in data["tests"])
                    assert spans == 3 * TESTS, spans
                added[mode].append(statistics.mean(gaps))
    finally:
        agent.terminate()
        agent.wait(timeout=30)
    return {
        "mean_gap_ms": added,
        "added_ms": min(added["with"]) - min(added["without"]),
    }


def section_traces(run: Run) -> None:
    """Spans per second (protobuf and JSON) on one core; the wait's added latency per trial."""
    log("traces: generating spans with the OpenTelemetry SDK")
    protobuf, encoded_json, trace_ids = _bodies()
    core = pin_to_one_core()
    found: dict[str, Any] = {"core": core}
    total = BODIES * SPANS_PER_BODY
    for label, bodies, content_type in (
        ("protobuf", protobuf, "application/x-protobuf"),
        ("JSON", encoded_json, "application/json"),
    ):
        seconds = min(_receive_and_judge(bodies, trace_ids, content_type) for _ in range(3))
        rate = total / seconds
        found[label] = {"spans": total, "seconds": seconds, "spans_per_s": rate}
        run.table.add(
            "traces",
            f"{total:,} SDK spans as OTLP {label}, {SPANS_PER_BODY:,} a body, one core",
            "receiver: decode, file, judge",
            f"{rate:,.0f} spans/s",
            None,
            f"target >= {SPANS_TARGET:,}/s: {'met' if rate >= SPANS_TARGET else 'MISSED'}",
        )
    if core is not None:
        os.sched_setaffinity(0, range(os.cpu_count() or 1))
    log(f"traces: {TESTS} tests against an instrumented HTTP agent, with and without spans")
    wait = _wait_added(run)
    found["wait"] = wait
    added = wait["added_ms"]
    run.table.add(
        "traces",
        f"{TESTS} tests, an instrumented HTTP agent (3 spans a call), -j 4",
        "assertly run: added per trial",
        f"{added:+.2f} ms",
        None,
        f"receiving and waiting for spans at the default wait; target <= {WAIT_TARGET_MS} ms: "
        f"{'met' if added <= WAIT_TARGET_MS else 'MISSED'}",
    )
    run.results["traces"] = found
