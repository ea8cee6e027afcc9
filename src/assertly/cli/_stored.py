"""``assertly report`` and ``assertly recheck``: a stored run rendered again, or judged again."""

from __future__ import annotations

import click

from ._support import (
    check_outputs,
    default_store,
    outputs_option,
    parse_now,
    store_option,
    usage_errors,
    write_reports,
)

__all__ = ["recheck_command", "report_command"]


@click.command("report")
@click.argument("run_id")
@outputs_option(required=True)
@store_option
def report_command(run_id: str, outputs: tuple[str, ...], store_path: str | None) -> None:
    """Re-render a stored run without re-running it."""
    from ..runner import load_run

    with usage_errors():
        check_outputs(outputs)
        record = load_run(store_path or default_store(), run_id)
    write_reports(record, outputs)


@click.command("recheck")
@click.argument("run_id")
@outputs_option(required=False)
@store_option
@click.option("--now", metavar="ISO", help="Reference time for date assertions.")
def recheck_command(
    run_id: str, outputs: tuple[str, ...], store_path: str | None, now: str | None
) -> None:
    """Re-judge a stored run's responses with the current test files (no target calls)."""
    from ..reports import ConsoleReporter
    from ..runner import recheck

    with usage_errors():
        check_outputs(outputs)
        record = recheck(store_path or default_store(), run_id, now=parse_now(now))
    ConsoleReporter(len(record.tests), force_plain=True).summary(record)
    write_reports(record, outputs)
