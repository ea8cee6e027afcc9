"""Spans as evidence, from agents instrumented with the real OpenTelemetry SDK (issue 33).

A ``cmd:`` agent (``traced_agent.py``) and an HTTP agent (the same script serving) continue
the trace each call is given and export over OTLP/HTTP, protobuf or JSON, to the run's
receiver on loopback. Their replies name no tool call: what they did is in their spans alone.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from runner_support import Project, free_port

pytest.importorskip("opentelemetry.sdk")
pytest.importorskip("opentelemetry.exporter.otlp.proto.http")

AGENT = Path(__file__).with_name("traced_agent.py")


def _suite(
    project: Project,
    tests: list[dict[str, Any]],
    traces: dict[str, Any] | None = None,
    protocol: str = "protobuf",
    agent: str | None = None,
) -> None:
    command = f"{sys.executable} {AGENT}"
    config: dict[str, Any] = {
        "agents": {"bot": agent or {"command": command, "env": {"PROTOCOL": protocol}}},
    }
    if traces is not None:
        config["traces"] = traces
    project.write("assertly.yaml", config)
    project.tests_file("tests/traced.tests.yaml", {"traced": tests})


SEARCH_THEN_FETCH = {
    "question": "q",
    "tools": [
        {"name": "search", "args": {"query": "refund policy"}},
        {"name": "fetch", "args": {"url": "https://example.com/policy"}},
    ],
}


@pytest.mark.parametrize("protocol", ["protobuf", "json"])
def test_tool_order_arguments_and_counts_are_judged_from_spans(
    project: Project, protocol: str
) -> None:
    _suite(
        project,
        [
            {
                "id": "right",
                "input": SEARCH_THEN_FETCH,
                "assertions": [
                    {
                        "type": "tool-sequence",
                        "value": ["search", "fetch"],
                        "config": {"mode": "exact"},
                    },
                    {
                        "type": "tool-called",
                        "value": {"name": "search", "args": {"query": "refund policy"}},
                    },
                    {"type": "tool-call-count", "value": {"max": 2}},
                ],
            },
            {
                "id": "wrong_order",
                "input": SEARCH_THEN_FETCH,
                "assertions": [
                    {
                        "type": "tool-sequence",
                        "value": ["fetch", "search"],
                        "config": {"mode": "exact"},
                    },
                ],
            },
            {
                "id": "wrong_args",
                "input": SEARCH_THEN_FETCH,
                "assertions": [
                    {
                        "type": "tool-called",
                        "value": {"name": "search", "args": {"query": "shipping"}},
                    },
                ],
            },
        ],
        traces={"prefer": True},
        protocol=protocol,
    )
    result = project.run("run", "tests")
    assert result.status("right") == "passed", result.tests["right"]
    assert result.status("wrong_order") == "failed"
    assert result.status("wrong_args") == "failed"
    trial = result.tests["right"]["trials"][0]
    assert trial["trace"]["tools"] == ["search", "fetch"]
    assert trial["trace"]["spans"] == 4 and trial["trace"]["model_calls"] == 1
    # The reply itself names no call: without spans the same checks could not pass.
    assert "search" not in str(trial["output"])


def test_model_usage_from_spans_fills_what_the_agent_did_not_report(project: Project) -> None:
    _suite(
        project,
        [
            {
                "id": "cheap",
                "input": {"question": "q", "model": "gpt-traced"},
                "assertions": [{"type": "cost", "threshold": 0.01}],
            },
            {
                "id": "too_dear",
                "input": {"question": "q", "model": "gpt-traced"},
                "assertions": [{"type": "cost", "threshold": 0.001}],
            },
        ],
        traces={"receive": True},
    )
    result = project.run("run", "tests")
    assert result.status("cheap") == "passed", result.tests["cheap"]
    assert result.status("too_dear") == "failed"
    metrics = result.tests["cheap"]["trials"][0]["metrics"]
    assert metrics["model"] == "gpt-traced"
    assert metrics["tokens"] == {"input": 120, "output": 30, "total": 150}
    assert metrics["cost_usd"] == pytest.approx(0.002)


@pytest.mark.parametrize("request_kind", ["export", "forge", "orphan"])
def test_no_spans_for_the_call_is_an_error_after_the_wait_never_a_pass(
    project: Project, request_kind: str
) -> None:
    flags = {"export": {"export": False}, "forge": {"forge": True}, "orphan": {"orphan": True}}
    _suite(
        project,
        [
            {
                "id": "silent",
                "input": {**SEARCH_THEN_FETCH, **flags[request_kind]},
                # Would pass on an empty trace; must not pass on a missing one.
                "assertions": [{"type": "not-tool-called", "value": "delete_everything"}],
            }
        ],
        traces={"prefer": True, "wait_ms": 300},
    )
    started = time.perf_counter()
    result = project.run("run", "tests")
    assert result.status("silent") == "error"
    message = str(result.tests["silent"]["trials"][0])
    assert "no spans arrived for this call within 300 ms" in message
    if request_kind != "export":
        assert "span(s) of other trace ids arrived" in message
    assert time.perf_counter() - started < 30


def test_concurrent_trials_never_see_each_others_spans(project: Project) -> None:
    tests = [
        {
            "id": f"t{n}",
            "input": {"question": str(n), "tools": [{"name": f"tool_{n}", "args": {"n": n}}]},
            "trials": 2,
            "assertions": [
                {"type": "tool-sequence", "value": [f"tool_{n}"], "config": {"mode": "exact"}},
                {"type": "tool-called", "value": {"name": f"tool_{n}", "args": {"n": n}}},
            ],
        }
        for n in range(8)
    ]
    _suite(project, tests, traces={"prefer": True})
    result = project.run("run", "tests", "-j", "4")
    assert result.exit_code == 0, result.stdout
    for n in range(8):
        for trial in result.tests[f"t{n}"]["trials"]:
            assert trial["status"] == "passed", trial
            assert trial["trace"]["tools"] == [f"tool_{n}"]


@pytest.fixture
def http_agent(tmp_path: Path) -> Iterator[tuple[str, int]]:
    """The traced agent as an HTTP server exporting to a fixed receiver port."""
    port, receiver = free_port(), free_port()
    env = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{receiver}"}
    process = subprocess.Popen(
        [sys.executable, str(AGENT), "--serve", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        cwd=tmp_path,
    )
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == b"ready"
        yield f"http://127.0.0.1:{port}/agent", receiver
    finally:
        process.kill()
        process.wait()


def test_an_instrumented_http_agent_is_judged_from_its_spans(
    project: Project, http_agent: tuple[str, int]
) -> None:
    url, receiver = http_agent
    _suite(
        project,
        [
            {
                "id": "http_right",
                "input": SEARCH_THEN_FETCH,
                "assertions": [
                    {
                        "type": "tool-sequence",
                        "value": ["search", "fetch"],
                        "config": {"mode": "exact"},
                    },
                ],
            },
            {
                "id": "http_wrong",
                "input": SEARCH_THEN_FETCH,
                "assertions": [{"type": "tool-called", "value": "delete_everything"}],
            },
        ],
        traces={"prefer": True, "port": receiver},
        agent={"url": url},  # type: ignore[arg-type]
    )
    result = project.run("run", "tests", "-j", "2")
    assert result.status("http_right") == "passed", result.tests["http_right"]
    assert result.status("http_wrong") == "failed"


def test_a_taken_receiver_port_is_a_clear_error(project: Project) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        _suite(
            project,
            [
                {
                    "id": "t",
                    "input": SEARCH_THEN_FETCH,
                    "assertions": [{"type": "tool-called", "value": "search"}],
                }
            ],
            traces={"prefer": True, "port": port},
        )
        result = project.run("run", "tests")
    assert result.status("t") == "error"
    error = result.tests["t"]["trials"][0]["error"]
    # (Not the address itself: a run redacts any secret it finds in messages, and CI's
    # environment may hold one that contains it.)
    assert "cannot receive spans on " in error and "(traces: port: in the config)" in error


def test_span_assertions_on_a_real_agent_name_the_failing_span(project: Project) -> None:
    checks = [
        {"type": "no-error-spans"},
        {"type": "span-count", "value": {"operation": "execute_tool", "max": 2}},
        {"type": "span-attribute",
         "value": {"name": "chat gpt-test", "key": "gen_ai.request.model", "value": "gpt-test"}},
        {"type": "tool-sequence", "value": ["search", "fetch"],
         "config": {"mode": "exact", "source": "trace"}},
    ]  # fmt: skip
    _suite(
        project,
        [
            {"id": "clean", "input": SEARCH_THEN_FETCH, "assertions": checks},
            {
                "id": "fetch_fails",
                "input": {**SEARCH_THEN_FETCH, "fail_tool": "fetch"},
                "assertions": checks,
            },
        ],
    )  # no traces: config at all: the checks ask for spans themselves
    result = project.run("run", "tests")
    assert result.status("clean") == "passed", result.tests["clean"]
    assert result.status("fetch_fails") == "failed"
    (failure,) = result.tests["fetch_fails"]["trials"][0]["failures"]
    assert failure["assertion"] == "no-error-spans"
    assert failure["message"] == (
        "1 span(s) failed: 'execute_tool fetch' (RuntimeError: fetch is down)"
    )
