"""One line per failed or errored trial on what its spans show, in the console and Markdown
(issue 33): span count, tools in order, model calls, the first error span named; a call whose
spans never arrived says why. Records built by hand with typed `SpanSet`s."""

from __future__ import annotations

import io
from typing import Any

from assertly._records import RunRecord, StepRecord, TrialRecord
from assertly._records import TestRecord as Record  # not "Test*": pytest would collect it
from assertly._spans import Span, SpanEvent, SpanSet, spans_missing
from assertly.reports._console import ConsoleReporter
from assertly.reports._markdown import render_markdown
from assertly.reports._trace_line import LINES_SHOWN, trace_line, trace_lines
from spans_support import TRACE, span

NASTY = "<script>x</script>\x1b[31mred\x1b]8;;http://x\x07"


def _span(number: int, name: str, parent: int | None, **extra: Any) -> Span:
    return span(number, name, parent, number, 5, **extra)


def _tool(number: int, name: str, **extra: Any) -> Span:
    attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name}
    return _span(number, f"execute_tool {name}", 1, attributes=attributes, **extra)


def _spans(dropped: int = 0) -> SpanSet:
    boom = SpanEvent("exception", 0, {"exception.type": "TimeoutError", "exception.message": "x"})
    return SpanSet(
        [
            _span(1, "invoke_agent", None),
            _span(2, "chat", 1, attributes={"gen_ai.operation.name": "chat"}),
            _tool(3, "search"),
            _tool(4, "fetch", events=(boom,)),
            _span(5, "chat", 1, attributes={"gen_ai.operation.name": "chat"}),
        ],
        TRACE,
        dropped,
    )


def _trial(number: int, status: str, *spans: Any) -> TrialRecord:
    steps = [
        StepRecord(f"s{i}", status, output="ok", spans=item)  # type: ignore[arg-type]
        for i, item in enumerate(spans)
    ]
    return TrialRecord("f::s::t", number, status, 1.0, steps)  # type: ignore[arg-type]


def _test(*trials: TrialRecord, status: str = "failed") -> Record:
    return Record("f::s::t", "t", "t", "s", "f", status, 0.0, list(trials))  # type: ignore[arg-type]


FULL = (
    "trace: 5 spans, tools search → fetch, 2 model calls, "
    "1 error span (execute_tool fetch: TimeoutError: x)"
)


def test_a_trial_line_counts_spans_tools_models_and_names_the_error_span() -> None:
    assert trace_line(_trial(1, "failed", _spans())) == FULL
    assert trace_line(_trial(1, "failed", _spans(dropped=7))) == (
        FULL + ", 7 more over the span limit not kept"
    )
    assert trace_line(_trial(1, "failed", None)) is None  # the call asked for no spans


def test_a_missing_trace_says_why() -> None:
    why = spans_missing(2000)
    assert trace_line(_trial(1, "error", why)) == f"trace: {why}"
    # Two calls: one with spans, one without.
    both = trace_line(_trial(1, "error", _spans(), why))
    assert both is not None and both.startswith("trace: 5 spans,") and both.endswith(why)


def test_only_failed_or_errored_trials_are_listed_and_identical_lines_once() -> None:
    test = _test(
        _trial(1, "failed", _spans()),
        _trial(2, "passed", _spans()),
        _trial(3, "failed", _spans()),
        _trial(4, "error", spans_missing(2000)),
    )
    assert list(trace_lines(test)) == [
        f"trials 1, 3 {FULL}",
        f"trial 4 trace: {spans_missing(2000)}",
    ]
    assert list(trace_lines(_test(_trial(1, "passed", _spans()), status="passed"))) == []


def test_many_distinct_lines_are_cut() -> None:
    trials = [_trial(n, "failed", SpanSet([_span(1, "a", None)] * n, TRACE)) for n in range(1, 9)]
    lines = list(trace_lines(_test(*trials)))
    assert len(lines) == LINES_SHOWN + 1
    assert lines[-1].startswith(f"… {8 - LINES_SHOWN} more trace lines")


def test_a_long_tool_list_is_cut() -> None:
    spans = SpanSet([_span(1, "root", None), *[_tool(n, f"t{n}") for n in range(2, 40)]], TRACE)
    line = trace_line(_trial(1, "failed", spans))
    assert line is not None
    assert "t2 → t3 → t4 → t5 → t6 → t7 → t8 → t9 … (38 tool calls)" in line
    assert "t10" not in line


def _run(test: Record) -> RunRecord:
    return RunRecord("r1", "2026-11-29T00:00:00Z", 1.0, [test])


def test_the_console_shows_the_line_under_the_failure_with_escapes_inert() -> None:
    hostile = SpanSet([_span(1, NASTY, None, status="error")], TRACE)
    out = io.StringIO()
    ConsoleReporter(stream=out, force_plain=True).summary(
        _run(_test(_trial(1, "failed", _spans()), _trial(2, "error", hostile)))
    )
    text = out.getvalue()
    lines = text.splitlines()
    header = lines.index("FAILED s::t  (f)")
    assert lines[header + 1] == f"  trial 1 {FULL}"
    assert "\x1b" not in text and "\x07" not in text  # escape codes shown, never obeyed
    assert "trial 2 trace: 1 span, 1 error span (<script>x</script>" in text


def test_the_markdown_report_lists_the_line_for_failed_and_errored_tests() -> None:
    hostile = SpanSet([_span(1, NASTY, None, status="error")], TRACE)
    failed = render_markdown(_run(_test(_trial(1, "failed", _spans()))))
    assert "- trace: 5 spans, tools search → fetch, 2 model calls" in failed
    errored = render_markdown(
        _run(_test(_trial(1, "error", hostile, spans_missing(2000)), status="error"))
    )
    assert "no spans arrived for this call within 2,000 ms" in errored
    assert "\x1b" not in errored and "<script>" not in errored  # escaped for Markdown
