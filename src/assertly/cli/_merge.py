"""``assertly merge``: the shards of a split run joined into one run."""

from __future__ import annotations

import click

from .._exceptions import ConfigError, Problem
from ._support import default_store, store_option, usage_errors, write_reports

__all__ = ["merge_command"]


@click.command("merge")
@click.argument("parts", nargs=-1, required=True)
@store_option
@click.option(
    "-o",
    "--output",
    "outputs",
    multiple=True,
    metavar="FILE",
    help="Report file of the merged run: .json .xml .md .html .csv .jsonl (repeatable).",
)
def merge_command(parts: tuple[str, ...], store_path: str | None, outputs: tuple[str, ...]) -> None:
    """Join shard runs (`run --shard I/N`) into one run with one summary.

    Each PART is a run of the store (id, last, last~N), another store (runs.sqlite for its last
    run, runs.sqlite:RUN), or a JSON report. The exit code is the merged run's, as `run`'s.
    """
    from .._frontend import check_report_paths
    from ..reports import ConsoleReporter
    from ..runner._merge import merge_runs

    with usage_errors():
        try:
            check_report_paths(outputs)
        except ValueError as error:
            raise ConfigError([Problem("-o", str(error))]) from None
        record = merge_runs(list(parts), store_path or default_store())
    ConsoleReporter(len(record.tests), force_plain=True).summary(record)
    click.echo(f"merged {len(parts)} shards into run {record.run_id}")
    write_reports(record, outputs)
