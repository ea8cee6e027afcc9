"""The ``assertly`` command line. Thin: parses arguments and calls the rooms below.

Exit codes: 0 everything passed; 1 something failed or errored; 2 usage or configuration error
(nothing was judged).
"""

from __future__ import annotations

import sys
from typing import Any

import click

from . import __version__
from ._exceptions import ConfigError, Problem

EXIT_PASSED = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


def _print_problems(error: ConfigError) -> None:
    click.echo(f"error: {error}", err=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="assertly")
def main() -> None:
    """Exact, fast verdicts on AI agent and LLM responses."""


@main.command("check")
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
    required=True,
    metavar="RESPONSE",
    help="The response to judge: a file, or - for standard input.",
)
@click.option(
    "--context", "context_argument", metavar="JSON", help="cost_usd, latency_ms, model, steps."
)
@click.option("--now", metavar="ISO", help="Reference time for date assertions.")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
)
def check_command(
    expect_argument: str,
    response_argument: str,
    context_argument: str | None,
    now: str | None,
    output_format: str,
) -> None:
    """Judge one response against an expectation."""
    from .engine import compile as compile_expectation
    from .engine._context import parse_now
    from .loading import load_data_argument, read_text_argument

    try:
        expectation_data = load_data_argument(expect_argument, "expectation")
        expectation_data, threshold = _unwrap(expectation_data)
        expectation = compile_expectation(expectation_data, threshold=threshold)
        context = _load_context(context_argument)
        moment = _parse_now(now, parse_now)
        response = read_text_argument(response_argument, "response")
    except ConfigError as error:
        if output_format == "json":
            _echo_json(
                {"error": "configuration", "problems": [str(p) for p in error.problems]}
            )
        _print_problems(error)
        sys.exit(EXIT_USAGE)
    result = expectation.check(response, context=context, now=moment)
    if output_format == "json":
        _echo_json(result.to_dict())
    else:
        _echo_text(result)
    sys.exit(EXIT_PASSED if result.passed else EXIT_FAILED)


def _unwrap(data: Any) -> tuple[Any, float | None]:
    """Accept a bare expectation, or a test case holding one under ``expect``/``assertions``."""
    if isinstance(data, dict) and ("expect" in data or "assertions" in data):
        if "expect" in data and "assertions" in data:
            raise ConfigError(
                [Problem("expectation", "give expect or assertions to `check`, not both")]
            )
        threshold = data.get("threshold")
        return data.get("expect", data.get("assertions")), threshold
    return data, None


def _load_context(argument: str | None) -> dict[str, Any] | None:
    from .loading import load_data_argument

    if argument is None:
        return None
    context = load_data_argument(argument, "context")
    if not isinstance(context, dict):
        raise ConfigError([Problem("context", f"expected a JSON object, got {context!r}")])
    for key in ("cost_usd", "latency_ms"):
        value = context.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise ConfigError([Problem(f"context.{key}", f"expected a number, got {value!r}")])
    return context


def _parse_now(now: str | None, parse: Any) -> Any:
    if now is None:
        return None
    try:
        return parse(now)
    except ValueError:
        raise ConfigError(
            [Problem("--now", f"{now!r} is not an ISO 8601 time such as 2026-01-31T12:00:00Z")]
        ) from None


def _echo_json(data: Any) -> None:
    import orjson

    sys.stdout.write(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n")


def _echo_text(result: Any) -> None:
    from rich.console import Console
    from rich.text import Text

    from .reports import render_check

    console = Console(highlight=False, soft_wrap=True)
    for line, style in render_check(result):
        console.print(Text(line, style=style or ""))


if __name__ == "__main__":  # pragma: no cover
    main()
