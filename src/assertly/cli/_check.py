"""``assertly check`` and ``assertly schema``: one response judged, and the file formats."""

from __future__ import annotations

import sys
from typing import Any

import click

from .._exceptions import ConfigError, Problem
from .._spans import SpanSet
from .._terminal import terminal_safe
from ._support import EXIT_FAILED, EXIT_PASSED, EXIT_USAGE, echo_json, parse_now, print_problems

__all__ = ["check_command", "schema_command"]


@click.command("check")
@click.option(
    "--expect",
    "expect_argument",
    required=True,
    metavar="EXPECT",
    help="Expect dict or list of typed assertions: a JSON/YAML file or inline JSON.",
)
@click.option(
    "--response",
    "response_argument",
    metavar="RESPONSE",
    help="The response to judge: a file, or - for standard input (with --trace: optional; "
    "the root span's output by default).",
)
@click.option(
    "--trace",
    "trace_argument",
    metavar="FILE",
    help="The call's recorded spans: an OTLP JSON file (one document, or one per line).",
)
@click.option(
    "--context",
    "context_argument",
    metavar="JSON",
    help="cost_usd, latency_ms, model, tool_calls, steps.",
)
@click.option("--now", metavar="ISO", help="Reference time for date assertions.")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text for people, json for programs (the pinned result shape).",
)
def check_command(
    expect_argument: str,
    response_argument: str | None,
    trace_argument: str | None,
    context_argument: str | None,
    now: str | None,
    output_format: str,
) -> None:
    """Judge one response against an expectation."""
    from ..engine import compile as compile_expectation
    from ..loading import load_located_argument, located_in_file, read_text_argument
    from ..loading._trace_files import root_output

    try:
        data, source = load_located_argument(expect_argument, "expectation")
        expectation_data, threshold, shape, base = _unwrap(data)
        try:
            expectation = compile_expectation(expectation_data, threshold=threshold, shape=shape)
        except ConfigError as error:
            if source is None:  # inline JSON: its keys are the whole story
                raise
            # Each problem at its file:line:col, as a test file's are.
            raise ConfigError(
                located_in_file(source, error.problems, base), title=error.title
            ) from None
        context = _load_context(context_argument)
        moment = parse_now(now)
        response: Any = None
        if trace_argument is not None:
            spans = _load_trace(trace_argument)
            context = {**(context or {}), "spans": spans}
            response = root_output(spans)
        elif response_argument is None:
            raise ConfigError(
                [Problem("--response", "give the response to judge (a file, or - for stdin)")],
                title="missing --response",
            )
        if response_argument is not None:
            response = read_text_argument(response_argument, "response")
    except ConfigError as error:
        if output_format == "json":
            echo_json({"error": "configuration", "problems": [str(p) for p in error.problems]})
        print_problems(error)
        sys.exit(EXIT_USAGE)
    result = expectation.check(response, context=context, now=moment)
    if output_format == "json":
        echo_json(result.to_dict())
    else:
        _echo_text(result)
    sys.exit(EXIT_PASSED if result.passed else EXIT_FAILED)


def _unwrap(data: Any) -> tuple[Any, float | None, Any, tuple[str, ...]]:
    """Accept a bare expectation, or a test case holding one under ``expect``/``assertions``.

    Returns the expectation, its threshold, its shape (a test case's ``shape:``, or ``shape``
    among a bare expect dict's keys, as ``check`` has no config to take one from) and where
    the expectation sits in the file (for the problems' locations).
    """
    if isinstance(data, dict) and ("expect" in data or "assertions" in data):
        if "expect" in data and "assertions" in data:
            raise ConfigError(
                [Problem("expectation", "give expect or assertions to `check`, not both")]
            )
        threshold = data.get("threshold")
        root = "expect" if "expect" in data else "assertions"
        return data[root], threshold, data.get("shape"), (root,)
    if isinstance(data, dict) and "shape" in data:
        rest = {key: value for key, value in data.items() if key != "shape"}
        return rest, None, data["shape"], ()
    return data, None, None, ()


def _load_trace(argument: str) -> SpanSet:
    from pathlib import Path

    from ..loading._trace_files import recorded_trace

    path = Path(argument)
    spans = recorded_trace(path.name, path.parent, path.parent)
    if isinstance(spans, str):
        raise ConfigError(
            [Problem(argument, spans.removeprefix("trace: "))], title="invalid --trace"
        )
    return spans


def _load_context(argument: str | None) -> dict[str, Any] | None:
    from ..loading import load_data_argument

    if argument is None:
        return None
    context = load_data_argument(argument, "context")
    if not isinstance(context, dict):
        raise ConfigError(
            [Problem("context", f"expected a JSON object, got {context!r}")],
            title="invalid --context",
        )
    for key in ("cost_usd", "latency_ms"):
        value = context.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise ConfigError(
                [Problem(f"context.{key}", f"expected a number, got {value!r}")],
                title="invalid --context",
            )
    return context


def _echo_text(result: Any) -> None:
    from rich.console import Console
    from rich.text import Text

    from ..reports._check_text import render_check

    console = Console(highlight=False, soft_wrap=True)
    for line, style in render_check(result):
        # Agent output may hold control characters and lone surrogates: shown, never obeyed.
        console.print(Text(terminal_safe(line), style=style or ""))


@click.command("schema")
@click.argument(
    "kind", type=click.Choice(["agent-tests", "test", "workflow-eval", "config", "report"])
)
def schema_command(kind: str) -> None:
    """Print the JSON Schema of a file format (for editors), or of the JSON report."""
    if kind == "report":
        from ..reports._report_schema import report_schema

        echo_json(report_schema())
        return
    from ..loading import json_schemas

    echo_json(json_schemas()[kind])
