"""Recorded traces judged without the agent: dataset lines, fixtures, directories, `check`.

Every OTLP JSON file here is written by the real OpenTelemetry SDK's JSON encoder from real
spans, as the OTLP JSON exporters write them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from runner_support import Project

from assertly.cli import main

pytest.importorskip("opentelemetry.sdk")


def _otlp(
    tools: list[str], *, output: str | None = "Refund issued.", fail: str = ""
) -> dict[str, Any]:
    """One trace's OTLP JSON, from SDK spans: a root, then one execute_tool span per tool."""
    from opentelemetry.exporter.otlp.json.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import Status, StatusCode

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("recorded")
    root_attributes = {"output.value": output} if output is not None else {}
    with tracer.start_as_current_span("invoke_agent", attributes=root_attributes):
        for tool in tools:
            attributes = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": tool,
                "gen_ai.tool.call.arguments": json.dumps({"order": "A-1042"}),
            }
            with tracer.start_as_current_span(
                f"execute_tool {tool}", attributes=attributes
            ) as span:
                if tool == fail:
                    span.set_status(Status(StatusCode.ERROR, f"{tool} failed"))
    return dict(json.loads(encode_spans(exporter.get_finished_spans()).to_json()))


CHECKS = [
    {"type": "tool-sequence", "value": ["lookup_order", "issue_refund"],
     "config": {"mode": "exact", "source": "trace"}},
    {"type": "no-error-spans"},
]  # fmt: skip
GOOD = ["lookup_order", "issue_refund"]


def _dataset_suite(
    project: Project, lines: list[dict[str, Any]], dataset: str = "data.jsonl"
) -> None:
    if dataset.endswith(".jsonl"):
        project.write(dataset, "".join(json.dumps(line) + "\n" for line in lines))
    project.write("assertly.yaml", {"agents": {"bot": "cmd:true"}})
    project.write(
        "tests/recorded.tests.yaml",
        {"agent": "bot",
         "test_suites": {"recorded": {"dataset": f"../{dataset}", "assertions": CHECKS}}},
    )  # fmt: skip


def test_dataset_lines_carry_a_trace_inline_or_as_a_file(project: Project) -> None:
    project.write("traces/right.json", json.dumps(_otlp(GOOD)))
    _dataset_suite(
        project,
        [
            {"id": "inline", "output": "Refund issued.", "trace": _otlp(GOOD)},
            {"id": "from_file", "output": "Refund issued.", "trace": "traces/right.json"},
            {"id": "wrong_order", "output": "x", "trace": _otlp(["issue_refund", "lookup_order"])},
            {"id": "failed_span", "output": "x", "trace": _otlp(GOOD, fail="issue_refund")},
            {"id": "no_output", "trace": _otlp(GOOD)},
            {"id": "no_trace", "output": "Refund issued."},
        ],
    )
    result = project.run("run", "tests")
    assert result.status("inline") == "passed", result.tests["inline"]
    assert result.status("from_file") == "passed"
    assert result.status("no_output") == "passed"
    assert result.tests["no_output"]["trials"][0]["output"] == "Refund issued."
    assert result.status("wrong_order") == "failed"
    assert result.status("failed_span") == "failed"
    assert "'execute_tool issue_refund' (issue_refund failed)" in str(result.tests["failed_span"])
    assert result.status("no_trace") == "error"  # checks on spans, and none recorded
    assert result.tests["inline"]["trials"][0]["trace"]["tools"] == GOOD


@pytest.mark.parametrize(
    ("trace", "problem"),
    [
        ("../../outside.json", "outside the project directory"),
        ("traces/missing.json", "is not a file"),
        ({"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "zz"}]}]}]}, "traceId is 'zz'"),
        (["not", "otlp"], "expected an OTLP JSON object"),
        ({"resourceSpans": []}, "it holds no spans"),
        (
            {"resourceSpans": [*_otlp(GOOD)["resourceSpans"], *_otlp(GOOD)["resourceSpans"]]},
            "it holds 2 traces",
        ),
    ],
)
def test_a_bad_trace_is_the_lines_error_saying_what_is_wrong(
    project: Project, trace: Any, problem: str
) -> None:
    _dataset_suite(project, [{"id": "bad", "output": "x", "trace": trace}])
    result = project.run("run", "tests")
    assert result.status("bad") == "error"
    error = result.tests["bad"]["trials"][0]["error"]
    assert "data.jsonl:1" in error and problem in error, error


def test_a_directory_of_traces_is_a_dataset(project: Project) -> None:
    project.write("traces/a_right.json", json.dumps(_otlp(GOOD)))
    project.write("traces/b_wrong.json", json.dumps(_otlp(["issue_refund"])))
    # An exporter's JSON lines: two traces in one file, each a test of its own.
    lines = [_otlp(GOOD), _otlp(GOOD, fail="lookup_order")]
    project.write("traces/c_lines.jsonl", "".join(json.dumps(doc) + "\n" for doc in lines))
    project.write("traces/d_broken.json", "{not json")
    _dataset_suite(project, [], dataset="traces")
    result = project.run("run", "tests")
    statuses = {test["id"]: test["status"] for test in result.report["tests"]}  # type: ignore[index]
    assert statuses.pop("a_right") == "passed"
    assert statuses.pop("b_wrong") == "failed"
    assert statuses.pop("d_broken") == "error"
    assert sorted(statuses.values()) == ["failed", "passed"]  # the two traces of c_lines
    assert all(key.startswith("c_lines-") for key in statuses)


def test_a_fixture_line_carries_its_trace(project: Project) -> None:
    fixtures = [
        {"id": "right", "output": "ok", "trace": _otlp(GOOD)},
        {"id": "wrong", "output": "ok", "trace": _otlp(["lookup_order"])},
    ]
    project.write("fixtures.jsonl", "".join(json.dumps(line) + "\n" for line in fixtures))
    project.write("assertly.yaml", {"agents": {"bot": "fixtures:fixtures.jsonl"}})
    tests = [{"id": "right", "input": "q", "assertions": CHECKS},
             {"id": "wrong", "input": "q", "assertions": CHECKS}]  # fmt: skip
    project.tests_file("tests/fx.tests.yaml", {"fx": tests})
    result = project.run("run", "tests")
    assert result.status("right") == "passed", result.tests["right"]
    assert result.status("wrong") == "failed"


def test_check_judges_a_recorded_trace_with_or_without_a_response(tmp_path: Path) -> None:
    trace = tmp_path / "trace.json"
    trace.write_text(json.dumps(_otlp(GOOD)))
    checks = json.dumps([*CHECKS, {"type": "contains", "value": "Refund"}])
    runner = CliRunner()
    alone = runner.invoke(main, ["check", "--expect", checks, "--trace", str(trace)])
    assert alone.exit_code == 0, alone.output
    response = tmp_path / "response.txt"
    response.write_text("Nothing was refunded.")
    both = runner.invoke(
        main, ["check", "--expect", checks, "--trace", str(trace), "--response", str(response)]
    )
    assert both.exit_code == 1 and "contains" in both.output
    wrong = runner.invoke(
        main, ["check", "--expect", json.dumps(CHECKS), "--trace", str(tmp_path / "nope.json")]
    )
    assert wrong.exit_code == 2 and "is not a file" in wrong.output
    assert "Traceback" not in wrong.output
    # Two calls' traces in one file are not one call's: an error, never merged and judged.
    two = tmp_path / "two.jsonl"
    two.write_text(json.dumps(_otlp(GOOD)) + "\n" + json.dumps(_otlp(["issue_refund"])) + "\n")
    mixed = runner.invoke(main, ["check", "--expect", json.dumps(CHECKS), "--trace", str(two)])
    assert mixed.exit_code == 2 and "it holds 2 traces" in mixed.output, mixed.output


def test_a_root_spans_genai_output_messages_are_judged_as_their_text() -> None:
    from assertly.loading._trace_files import recorded_trace, root_output

    messages = [{"role": "assistant", "parts": [{"type": "text", "content": "Refund issued."}]}]
    document = _otlp(GOOD, output=None)
    root = next(
        span
        for scope in document["resourceSpans"][0]["scopeSpans"]
        for span in scope["spans"]
        if span["name"] == "invoke_agent"
    )
    root["attributes"] = [
        {"key": "gen_ai.output.messages", "value": {"stringValue": json.dumps(messages)}}
    ]
    spans = recorded_trace(document, Path("."), None)
    assert not isinstance(spans, str), spans
    assert root_output(spans) == "Refund issued."
