"""A trial's spans drawn as a waterfall in the HTML report and the viewer (issue 33)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from assertly._records import RunRecord, StepRecord, TrialRecord
from assertly._records import TestRecord as Record  # not "Test*": pytest would collect it
from assertly._spans import SpanEvent, SpanSet
from assertly.cli import main
from assertly.reports._html import render_html
from assertly.reports._waterfall import MAX_ROWS, waterfalls
from spans_support import TRACE
from spans_support import span as _span

NASTY = "<script>alert(1)</script>\x1b[31mred\x1b]8;;http://x\x07"


SPANS = SpanSet(
    [
        _span(1, "invoke_agent", None, 0, 100),
        _span(
            2,
            "chat gpt-4o",
            1,
            0,
            40,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "gpt-4o",
                "gen_ai.usage.input_tokens": 10,
            },
        ),
        _span(
            3,
            "execute_tool pay",
            1,
            50,
            50,
            status="error",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "pay",
                "gen_ai.tool.call.arguments": '{"amount": 5}',
            },
            events=(
                SpanEvent(
                    "exception",
                    0,
                    {"exception.type": "TimeoutError", "exception.message": "bank down"},
                ),
            ),
        ),
        _span(4, NASTY, 3, 60, 10),
    ],
    TRACE,
)


def _test(spans: Any, status: str = "failed") -> Record:
    step = StepRecord("t", status, output="ok", spans=spans)  # type: ignore[arg-type]
    trial = TrialRecord("k", 1, status, 1.0, [step])  # type: ignore[arg-type]
    return Record("k", "t", "t", "s", "f.yaml", status, 0.0, [trial])  # type: ignore[arg-type]


def test_rows_are_in_tree_order_with_depth_offset_and_width() -> None:
    (fall,) = waterfalls(_test(SPANS))
    assert [(row.name, row.depth) for row in fall.rows] == [
        ("invoke_agent", 0),
        ("chat gpt-4o", 1),
        ("execute_tool pay", 1),
        (NASTY, 2),
    ]
    pay = fall.rows[2]
    assert (pay.offset, pay.width, pay.failed) == (50.0, 50.0, True)
    assert pay.error == "TimeoutError: bank down"
    assert pay.detail == 'tool pay({"amount": 5})'
    assert fall.rows[1].detail == "model gpt-4o (10 in tokens)"
    assert fall.total_ms == 100.0


def test_the_html_report_draws_the_waterfall_and_keeps_names_inert() -> None:
    html = render_html(RunRecord("r", "2026-01-01T00:00:00Z", 1.0, [_test(SPANS)]))
    assert 'class="waterfall"' in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "\x1b" not in html and "\x07" not in html
    assert "✗ execute_tool pay" in html and "TimeoutError: bank down" in html
    assert re.search(r"margin-left: 50\.0%; width: 50\.0%", html)


def test_a_missing_trace_and_a_huge_one_are_shown_bounded() -> None:
    html = render_html(
        RunRecord("r", "t", 1.0, [_test("no spans arrived for this call within 2,000 ms")])
    )
    assert "no spans: no spans arrived for this call within 2,000 ms" in html
    many = SpanSet(
        [_span(n + 1, f"s{n}", None if n == 0 else 1, n, 1) for n in range(10_000)], TRACE, 7
    )
    (fall,) = waterfalls(_test(many))
    assert len(fall.rows) == MAX_ROWS and fall.more == 10_000 - MAX_ROWS and fall.dropped == 7
    html = render_html(RunRecord("r", "t", 1.0, [_test(many)]))
    assert f"{10_000 - MAX_ROWS} more spans" in html and "7 dropped" in html
    assert len(html) < 400_000


def test_a_cycle_of_parents_or_a_deep_chain_is_drawn_without_recursion() -> None:
    deep = SpanSet([_span(n + 1, f"d{n}", n if n else None, n, 1) for n in range(5_000)], TRACE)
    (fall,) = waterfalls(_test(deep))
    assert len(fall.rows) == MAX_ROWS and max(row.depth for row in fall.rows) == 12
    cycle = SpanSet([_span(1, "a", 2, 0, 1), _span(2, "b", 1, 0, 1)], TRACE)
    (fall,) = waterfalls(_test(cycle))
    assert sorted(row.name for row in fall.rows) == ["a", "b"]


def test_the_viewer_export_shows_a_recorded_traces_waterfall(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def attributes(**values: Any) -> list[dict[str, Any]]:
        return [{"key": k, "value": {"stringValue": v}} for k, v in values.items()]

    document = {
        "resourceSpans": [
            {
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                "traceId": TRACE,
                                "spanId": "1" * 16,
                                "name": "invoke_agent",
                                "startTimeUnixNano": "1000",
                                "endTimeUnixNano": "9000",
                            },
                            {
                                "traceId": TRACE,
                                "spanId": "2" * 16,
                                "parentSpanId": "1" * 16,
                                "name": "execute_tool search",
                                "startTimeUnixNano": "2000",
                                "endTimeUnixNano": "5000",
                                "status": {"code": 2, "message": "search is down"},
                                "attributes": attributes(
                                    **{
                                        "gen_ai.operation.name": "execute_tool",
                                        "gen_ai.tool.name": "search",
                                    }
                                ),
                            },
                        ]
                    }
                ]
            }
        ]
    }
    (tmp_path / "data.jsonl").write_text(
        json.dumps({"id": "traced", "output": "x", "trace": document}) + "\n"
    )
    (tmp_path / "assertly.yaml").write_text('agents: {bot: "cmd:true"}\n')
    (tmp_path / "t.tests.yaml").write_text(
        "agent: bot\ntest_suites:\n  s:\n    dataset: data.jsonl\n"
        "    assertions: [{type: no-error-spans}]\n"
    )
    runner = CliRunner()
    monkeypatch.chdir(tmp_path)
    assert runner.invoke(main, ["run", "t.tests.yaml"]).exit_code == 1
    result = runner.invoke(main, ["view", "--export", "site"])
    assert result.exit_code == 0, result.output
    pages = "".join(path.read_text() for path in (tmp_path / "site").rglob("*.html"))
    assert 'class="waterfall"' in pages
    assert "✗ execute_tool search" in pages and "search is down" in pages


def test_rows_read_tools_and_models_as_the_checks_do_and_clip_hostile_text() -> None:
    spans = SpanSet(
        [
            _span(1, "x" * 100_000, None, 0, 10, status="error"),
            # OpenInference: a model named by llm.model_name, a tool's arguments in input.value.
            _span(
                2,
                "llm",
                1,
                1,
                2,
                attributes={"openinference.span.kind": "LLM", "llm.model_name": "m-oi"},
            ),
            _span(
                3,
                "tool",
                1,
                3,
                2,
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "lookup",
                    "gen_ai.tool.call.arguments": {"q": "a" * 10_000},
                },
            ),
        ],
        TRACE,
    )
    (fall,) = waterfalls(_test(spans))
    root, llm, tool = fall.rows
    assert len(root.name) == 201 and root.name.endswith("…")
    assert llm.detail == "model m-oi"
    assert tool.detail.startswith('tool lookup({"q":"aaa') and len(tool.detail) < 200
    html = render_html(RunRecord("r", "t", 1.0, [_test(spans)]))
    assert "x" * 201 not in html and len(html) < 200_000


def test_spans_with_a_repeated_id_are_each_drawn_once() -> None:
    twins = SpanSet(
        [_span(1, "root", None, 0, 10), _span(2, "twin-a", 1, 1, 1), _span(2, "twin-b", 1, 2, 1)],
        TRACE,
    )
    (fall,) = waterfalls(_test(twins))
    assert [(row.name, row.depth) for row in fall.rows] == [
        ("root", 0),
        ("twin-a", 1),
        ("twin-b", 1),
    ]
