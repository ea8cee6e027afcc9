"""Red team of traces (issue 33): ways a trace-based check could pass by mistake.

Real HTTP on loopback to the run's receiver; the spans judged by the real span checks.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from test_receiver_bounds import _document, _post, _span

from assertly._spans import SpanSet
from assertly.traces import SpanReceiver


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


def test_a_sender_holding_a_half_sent_export_neither_blocks_collect_nor_the_close() -> None:
    """A slow exporter mid-body at the run's end: collect and close still end promptly."""

    async def scenario() -> tuple[SpanSet | str, float]:
        receiver = SpanReceiver()
        await receiver.start()
        port = int(receiver.endpoint.rsplit(":", 1)[1])
        _reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(
            b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 100000\r\n\r\n" + b'{"resourceSpans": ['
        )
        await writer.drain()
        call = receiver.expect()
        spans = await receiver.collect(call, 100)
        started = time.perf_counter()
        await receiver.aclose()
        closed = time.perf_counter() - started
        writer.close()
        return spans, closed

    spans, closed = _run(scenario())
    assert isinstance(spans, str)
    assert closed < 2


EVIL_NAME = "evil\x1b[31mRED\x1b[0m<script>alert(1)</script>"
EVIL_VALUE = "\x1b]8;;http://x\x07link\x1b]8;;\x07<img src=x onerror=alert(1)>" + "A" * 100_000


def test_hostile_span_names_and_attributes_stay_inert_in_every_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ANSI escapes and HTML in a recorded trace: no raw escape or live tag in any report."""
    from click.testing import CliRunner

    from assertly.cli import main

    span = _span("ab" * 16, "1" * 16, None, EVIL_NAME, k=EVIL_VALUE)
    span["status"] = {"code": 2, "message": EVIL_VALUE}
    line = {"id": "evil", "output": "x", "trace": _document([span])}
    (tmp_path / "data.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    (tmp_path / "assertly.yaml").write_text("agents: {bot: 'cmd:true'}\n", encoding="utf-8")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests/evil.tests.yaml").write_text(
        "agent: bot\ntest_suites:\n  evil:\n    dataset: ../data.jsonl\n    assertions:\n"
        "      - {type: no-error-spans}\n"
        f"      - {{type: span-attribute, value: {{name: {json.dumps(EVIL_NAME)}, key: k, "
        "regex: '^nope'}}\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    outputs = ["r.json", "r.md", "r.xml", "r.html"]
    argv = ["run", "tests", *[part for name in outputs for part in ("-o", name)]]
    result = CliRunner().invoke(main, argv)
    assert result.exit_code == 1, result.output
    assert "\x1b" not in result.output and "Traceback" not in result.output
    for name in outputs:
        text = (tmp_path / name).read_text(encoding="utf-8")
        assert "\x1b" not in text and "\x07" not in text, name
        if name == "r.md":  # a fenced block is inert; everything else is escaped
            text = "".join(text.split("```")[::2])
        if name != "r.json":
            # Markdown escapes a tag with a backslash; HTML and JUnit XML as entities.
            assert re.search(r"(?<!\\)<(script|img)", text) is None, name
    assert json.loads((tmp_path / "r.json").read_text())["summary"]["failed"] == 1


def test_not_span_duration_of_a_span_that_never_ran_is_no_pass(tmp_path: Path) -> None:
    """`not-span-duration {name: X}` ("X was slow") on a trace without X: an error."""
    from click.testing import CliRunner

    from assertly.cli import main

    trace = tmp_path / "t.json"
    trace.write_text(json.dumps(_document([_span("ab" * 16, "1" * 16, None, "root")])))
    checks = [{"type": "not-span-duration", "value": {"name": "nope", "max_ms": 1}}]
    result = CliRunner().invoke(
        main, ["check", "--expect", json.dumps(checks), "--trace", str(trace)]
    )
    assert result.output.startswith("ERROR"), result.output
    assert "No span named 'nope'" in result.output


def test_a_cached_reply_kept_without_spans_is_a_miss_for_a_test_asking_spans(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--cache rw: a reply kept by a run that asked no spans is not reused as one without."""
    from click.testing import CliRunner

    from assertly.cli import main

    agent = Path(__file__).parents[1] / "runner" / "traced_agent.py"
    (tmp_path / "assertly.yaml").write_text(
        f"agents: {{bot: 'cmd:{sys.executable} {agent}'}}\ntraces: {{wait_ms: 200}}\n"
    )
    (tmp_path / "tests").mkdir()
    tests = tmp_path / "tests/a.tests.yaml"
    test = "agent: bot\ntest_suites:\n  s:\n    tests:\n      - id: t\n"
    test += "        input: {question: hi, export: false}\n        assertions: [%s]\n"
    monkeypatch.chdir(tmp_path)
    tests.write_text(test % "{type: regex, value: '.'}")
    first = CliRunner().invoke(main, ["run", "tests", "--cache", "rw"])
    assert first.exit_code == 0, first.output
    tests.write_text(test % "{type: no-error-spans}")
    second = CliRunner().invoke(main, ["run", "tests", "--cache", "rw"])
    assert "no spans arrived for this call" in second.output, second.output
