"""``assertly diff`` and ``assertly bless``: comparing stored runs, and the baseline."""

from __future__ import annotations

import sys

import click

from ._cli_support import (
    EXIT_FAILED,
    EXIT_PASSED,
    default_store,
    store_option,
    usage_errors,
    write_or_fail,
)

__all__ = ["bless_command", "diff_command"]


@click.command("diff")
@click.argument("base")
@click.argument("candidate")
@store_option
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json", "md"]),
    default="text",
    show_default=True,
    help="text for a terminal, json for tools, md for a pull-request comment.",
)
@click.option("-o", "--output", metavar="FILE", help="Write the diff to FILE instead of stdout.")
@click.option(
    "--fail-on",
    type=click.Choice(["regressions", "changes", "significant", "never"]),
    default="regressions",
    show_default=True,
    help="What makes the exit code 1: any regression, any change, a statistically "
    "significant regression, or nothing.",
)
@click.option(
    "--alpha",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.05,
    show_default=True,
    help="Significance level for --fail-on significant (Holm-corrected across tests).",
)
def diff_command(
    base: str,
    candidate: str,
    store_path: str | None,
    output_format: str,
    output: str | None,
    fail_on: str,
    alpha: float,
) -> None:
    """Compare two runs: what regressed, what was fixed, and whether it is more than chance.

    BASE and CANDIDATE are run ids, last, last~N (N runs before the last), blessed, or paths
    to JSON reports.
    """
    from .compare import compare_runs, open_side
    from .reports._diff import render_diff_markdown, render_diff_text, write_diff_json

    with usage_errors():
        store = store_path
        if store is None and not (base.endswith(".json") and candidate.endswith(".json")):
            store = default_store()
        diff = compare_runs(open_side(base, store), open_side(candidate, store), alpha=alpha)
    if output_format == "json":
        if output:
            from .reports._write import replace_file

            write_or_fail(output, lambda: replace_file(output, lambda h: write_diff_json(diff, h)))
        else:
            write_diff_json(diff, sys.stdout.buffer)
            sys.stdout.flush()
    else:
        text = render_diff_text(diff) if output_format == "text" else render_diff_markdown(diff)
        if output:
            from .reports._write import replace_file

            data = text.encode("utf-8", "backslashreplace")
            write_or_fail(output, lambda: replace_file(output, lambda h: h.write(data)))
        else:
            click.echo(text)
    if output:
        click.echo(f"wrote {output}", err=True)
    reason = diff.failing_rule(fail_on)
    if reason is not None:
        click.echo(f"diff: {reason} (--fail-on {fail_on}) → exit 1", err=True)
        sys.exit(EXIT_FAILED)
    sys.exit(EXIT_PASSED)


@click.command("bless")
@click.argument("run_id")
@store_option
def bless_command(run_id: str, store_path: str | None) -> None:
    """Mark a run as the project's baseline: `--baseline blessed` and `diff blessed …` use it."""
    from datetime import UTC, datetime

    from .store import RunStore

    with usage_errors():
        store = RunStore(store_path or default_store(), must_exist=True)
        try:
            resolved = store.resolve_run_id(run_id)
            started = store.run_info(resolved)["started_at"]
            store.bless(resolved, datetime.now(UTC).isoformat(timespec="seconds"))
        finally:
            store.close()
    click.echo(
        f"blessed run {resolved} (started {started}) as the baseline: "
        "`--baseline blessed` and `assertly diff blessed last` compare with it"
    )
