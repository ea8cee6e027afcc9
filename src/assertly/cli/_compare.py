"""``assertly diff`` and ``assertly bless``: comparing stored runs, and the baseline."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from .._exceptions import ConfigError, Problem
from ._support import (
    EXIT_FAILED,
    EXIT_PASSED,
    FiniteFloat,
    default_store,
    store_option,
    usage_errors,
    write_or_fail,
)

if TYPE_CHECKING:
    from ..compare import GateDecision, RunSide

__all__ = [
    "allow_options",
    "allowances",
    "bless_command",
    "diff_command",
    "print_gates",
]

# The options that accept deliberately what a baseline gate fails by default (issue 28):
# the same four on `run --baseline` and `diff`, read by `compare.baseline_verdict`.
_ALLOW = (
    (
        "--allow-removed",
        "Accept tests of the baseline missing from this run (renamed, deleted, filtered out).",
    ),
    (
        "--allow-skipped",
        "Accept tests the baseline judged that this run skipped.",
    ),
    (
        "--allow-changed-definition",
        "Accept tests whose definition changed since the baseline and that now fail.",
    ),
    (
        "--allow-empty",
        "Accept a run that judged no test and no eval suite (also for --min-pass-rate).",
    ),
)


def allow_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """Add the four ``--allow-…`` options of the baseline gates to a command."""
    for flag, text in reversed(_ALLOW):
        function = click.option(flag, is_flag=True, help=text)(function)
    return function


def allowances(options: dict[str, Any]) -> Any:
    """The `Allowances` the ``--allow-…`` options give, popped from a command's keywords."""
    from ..compare import Allowances

    return Allowances(
        removed=bool(options.pop("allow_removed")),
        skipped=bool(options.pop("allow_skipped")),
        changed_definition=bool(options.pop("allow_changed_definition")),
        empty=bool(options.pop("allow_empty")),
    )


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
    "significant regression, or nothing. Under all but never, a test missing, skipped, "
    "redefined and failing, or new and failing, and an empty run, fail too (see --allow-…).",
)
@click.option(
    "--alpha",
    type=FiniteFloat(0, 1, min_open=True, max_open=True),
    default=0.05,
    show_default=True,
    help="Significance level for --fail-on significant (per test: Holm-corrected across "
    "tests; the suite's McNemar test on its own).",
)
@click.option(
    "--max-regressions",
    type=click.IntRange(0),
    default=0,
    show_default=True,
    help="Regressions --fail-on regressions allows (as run --baseline's).",
)
@allow_options
def diff_command(
    base: str,
    candidate: str,
    store_path: str | None,
    output_format: str,
    output: str | None,
    fail_on: str,
    alpha: float,
    max_regressions: int,
    **kwargs: Any,
) -> None:
    """Compare two runs: what regressed, what was fixed, and whether it is more than chance.

    BASE and CANDIDATE are run ids, last, last~N (N runs before the last), blessed, or paths
    to JSON reports; each may end in :LABEL for one target of a matrix run (``diff last:base
    last:cand`` compares two targets of the last run). The exit code follows the same rules
    as ``run --baseline`` (one line on stderr for each broken rule, then the decision).
    """
    from ..compare import baseline_verdict, compare_runs, open_side, split_target
    from ..reports._diff import render_diff_markdown, render_diff_text, write_diff_json

    with usage_errors():
        store = store_path
        reports = all(split_target(name)[0].endswith(".json") for name in (base, candidate))
        if store is None and not reports:
            store = default_store()
        diff = compare_runs(
            *_paired(open_side(base, store), open_side(candidate, store)), alpha=alpha
        )
    if output_format == "json":
        if output:
            from ..reports._write import replace_file

            write_or_fail(output, lambda: replace_file(output, lambda h: write_diff_json(diff, h)))
        else:
            write_diff_json(diff, sys.stdout.buffer)
            sys.stdout.flush()
    else:
        text = render_diff_text(diff) if output_format == "text" else render_diff_markdown(diff)
        if output:
            from ..reports._write import replace_file

            data = text.encode("utf-8", "backslashreplace")
            write_or_fail(output, lambda: replace_file(output, lambda h: h.write(data)))
        else:
            click.echo(text)
    if output:
        click.echo(f"wrote {output}", err=True)
    verdict = baseline_verdict(
        diff,
        fail_on=fail_on,
        max_regressions=max_regressions,
        allow=allowances(kwargs),
        label="--fail-on regressions",
    )
    for line in verdict.reasons + verdict.notes:
        click.echo(f"diff: {line}", err=True)
    if not verdict.passed:
        click.echo(f"diff: {verdict.summary} → exit 1", err=True)
        sys.exit(EXIT_FAILED)
    sys.exit(EXIT_PASSED)


def _paired(base: RunSide, candidate: RunSide) -> tuple[RunSide, RunSide]:
    """The two sides, when their tests can pair.

    Raises:
        ConfigError: A whole matrix run against a run of one target (or one target of a run).
    """
    from ..compare import pairing_problem

    problem = pairing_problem(base, candidate)
    if problem is not None:
        raise ConfigError([Problem("", problem)], title="cannot compare")
    return base, candidate


@click.command("bless")
@click.argument("run_id")
@store_option
def bless_command(run_id: str, store_path: str | None) -> None:
    """Mark a run as the project's baseline: `--baseline blessed` and `diff blessed …` use it."""
    from datetime import UTC, datetime

    from ..store import open_store

    with usage_errors(), open_store(store_path or default_store(), must_exist=True) as store:
        resolved = store.resolve_run_id(run_id)
        started = store.run_info(resolved)["started_at"]
        store.bless(resolved, datetime.now(UTC).isoformat(timespec="seconds"))
    click.echo(
        f"blessed run {resolved} (started {started}) as the baseline: "
        "`--baseline blessed` and `assertly diff blessed last` compare with it"
    )


def print_gates(decision: GateDecision | None) -> int | None:
    """Print what ``run``'s gates decided; the exit code they decided (None: no gate).

    Regressions first, then one line for each broken rule, then the decision.
    """
    if decision is None:
        return None
    from ..reports._diff import render_diff_text

    for diff in decision.diffs or ([decision.diff] if decision.diff is not None else []):
        click.echo("")
        click.echo(render_diff_text(diff))
    for line in decision.reasons:
        click.echo(line)
    click.echo(decision.line)
    return decision.exit_code
