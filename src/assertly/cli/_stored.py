"""``assertly report`` and ``assertly recheck``: a stored run rendered again, or judged again."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from .._exceptions import ConfigError, Problem
from ._support import (
    check_outputs,
    default_store,
    outputs_option,
    parse_now,
    store_option,
    usage_errors,
    write_reports,
)

if TYPE_CHECKING:
    from .._records import RunRecord

__all__ = ["recheck_command", "report_command"]

_FORMATS = ("console", "text", "md", "json", "github")

plain_option = click.option("--plain", is_flag=True, help="No colour, even on a terminal.")


def print_run(record: RunRecord, output_format: str, *, plain: bool) -> None:
    """``record`` on stdout: the console summary (as ``run`` ends), Markdown, JSON or annotations.

    ``console`` is what ``run`` prints at its end (failures, then totals), in colour on a
    terminal; ``text`` the same, always plain; ``github`` GitHub Actions annotations.
    """
    if output_format in ("console", "text"):
        from ..reports import ConsoleReporter

        force_plain = plain or output_format == "text"
        ConsoleReporter(len(record.tests), force_plain=force_plain).summary(record)
    elif output_format == "json":
        from ..reports._json import write_json  # the writer of -o report.json

        sys.stdout.flush()
        write_json(record, sys.stdout.buffer)  # streamed: a run of any size
        sys.stdout.buffer.flush()
    elif output_format == "md":
        from .._terminal import inert_text
        from ..reports._markdown import render_markdown

        click.echo(inert_text(render_markdown(record)), nl=False)
    else:
        from ..reports._github import github_annotations

        for line in github_annotations(record):
            click.echo(line)


@click.command("report")
@click.argument("run_id")
@outputs_option(required=False)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(_FORMATS),
    default=None,
    help="Print the run to stdout: console (default without -o: what `run` prints at its "
    "end), text (the same, plain), md, json, or github (Actions annotations).",
)
@plain_option
@store_option
def report_command(
    run_id: str,
    outputs: tuple[str, ...],
    output_format: str | None,
    plain: bool,
    store_path: str | None,
) -> None:
    """Show a stored run again, or write its reports with -o, without re-running it.

    RUN_ID is a run id, last, last~N or blessed. The exit code is the run's: 0 when it passed,
    1 otherwise.
    """
    from ..runner import load_run

    with usage_errors():
        checked = check_outputs(outputs)
        if outputs and output_format in ("json", "md"):
            # Each -o prints "wrote FILE" on stdout, which would end the document there.
            raise ConfigError(
                [
                    Problem(
                        "--format",
                        f"--format {output_format} prints the report on stdout: give it "
                        f"without -o, or write it as a file (-o report.{output_format})",
                    )
                ]
            )
        record = load_run(store_path or default_store(), run_id)
    if output_format is None and not outputs:
        output_format = "console"
    if output_format is not None:
        print_run(record, output_format, plain=plain)
    write_reports(record, checked)


@click.command("recheck")
@click.argument("run_id")
@outputs_option(required=False)
@store_option
@click.option("--now", metavar="ISO", help="Reference time for date assertions.")
@plain_option
def recheck_command(
    run_id: str, outputs: tuple[str, ...], store_path: str | None, now: str | None, plain: bool
) -> None:
    """Re-judge a stored run's responses with the current test files (no target calls)."""
    from ..reports import ConsoleReporter
    from ..runner import recheck

    with usage_errors():
        checked = check_outputs(outputs)
        record = recheck(store_path or default_store(), run_id, now=parse_now(now))
    ConsoleReporter(len(record.tests), force_plain=plain).summary(record)
    write_reports(record, checked)
