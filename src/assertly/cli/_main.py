"""The ``assertly`` command line. Thin: parses arguments and calls the rooms below.

Exit codes: 0 everything passed; 1 something failed or errored; 2 usage or configuration error
(nothing was judged); 130 Ctrl-C and 143 SIGTERM during a run (every finished trial stored).
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable
from datetime import datetime
from typing import Any

import click

from .. import __version__
from .._exceptions import AssertlyError, ConfigError, Problem
from .._frontend import check_report_paths, parse_facts, parse_now_option
from .._secrets import safe_message
from .._terminal import inert_json, terminal_safe
from ._compare import (
    allow_options,
    allowances,
    apply_run_gates,
    bless_command,
    diff_command,
)
from ._merge import merge_command
from ._support import (
    EXIT_FAILED,
    EXIT_PASSED,
    EXIT_USAGE,
    FiniteFloat,
    checked_shard,
    default_store,
    print_problems,
    report_paths,
    store_option,
    usage_errors,
    write_reports,
)
from ._view import view_command

EXIT_INTERRUPTED = 130  # Ctrl-C, as shells report it
EXIT_TERMINATED = 143  # SIGTERM (128 + 15), as shells report it
_GC_THRESHOLD = 20_000


class _Main(click.Group):
    """The ``assertly`` group, which keeps tracebacks for ``--debug``.

    An unexpected exception (a bug in assertly, never a user's mistake) is one line on stderr
    and exit code 2; with ``--debug`` its traceback is shown instead.
    """

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except AssertlyError as error:  # e.g. a damaged store met while writing the reports
            click.echo(terminal_safe(safe_message(f"error: {error}")), err=True)
            ctx.exit(EXIT_USAGE)
        except Exception as error:
            if ctx.params.get("debug"):
                raise
            reason = safe_message(" ".join(str(error).split())[:500])
            click.echo(
                f"internal error: {type(error).__name__}: {terminal_safe(reason)} "
                "(run with --debug for the traceback)",
                err=True,
            )
            ctx.exit(EXIT_USAGE)


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="assertly")
@click.option(
    "--debug",
    is_flag=True,
    envvar="ASSERTLY_DEBUG",
    help="Show the traceback of an internal error.",
)
def main(debug: bool) -> None:
    """Exact, fast verdicts on AI agent and LLM responses."""
    # A command allocates records by the thousand, almost all freed by reference counting:
    # Python's default of a collection every 700 allocations spent ~5 % of a 5,000-test run
    # scanning objects that live until exit (the loaded tests). Cycles are still collected.
    # Only the command line does this; the library leaves its host's collector alone.
    gc.set_threshold(_GC_THRESHOLD, 20, 20)


def _outputs(*, required: bool) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``-o/--output FILE``, repeatable: the report files a command writes."""
    return click.option(
        "-o",
        "--output",
        "outputs",
        multiple=True,
        required=required,
        metavar="FILE",
        help="Report file: .json .xml .md .html (repeatable).",
    )


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
    response_argument: str,
    context_argument: str | None,
    now: str | None,
    output_format: str,
) -> None:
    """Judge one response against an expectation."""
    from ..engine import compile as compile_expectation
    from ..loading import load_located_argument, located_in_file, read_text_argument

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
        moment = _parse_now(now)
        response = read_text_argument(response_argument, "response")
    except ConfigError as error:
        if output_format == "json":
            _echo_json({"error": "configuration", "problems": [str(p) for p in error.problems]})
        print_problems(error)
        sys.exit(EXIT_USAGE)
    result = expectation.check(response, context=context, now=moment)
    if output_format == "json":
        _echo_json(result.to_dict())
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


def _parse_now(now: str | None) -> datetime | None:
    try:
        return parse_now_option(now)
    except ValueError as error:
        raise ConfigError([Problem("--now", str(error))], title="invalid --now") from None


def _echo_json(data: Any) -> None:
    from .._json import to_json_bytes

    sys.stdout.write(inert_json(to_json_bytes(data, indent=True)).decode() + "\n")


def _echo_text(result: Any) -> None:
    from rich.console import Console
    from rich.text import Text

    from ..reports._check_text import render_check

    console = Console(highlight=False, soft_wrap=True)
    for line, style in render_check(result):
        # Agent output may hold control characters and lone surrogates: shown, never obeyed.
        console.print(Text(terminal_safe(line), style=style or ""))


def _facts(values: tuple[str, ...]) -> dict[str, bool]:
    try:
        return parse_facts(values)
    except ValueError as error:
        raise ConfigError([Problem("--fact", str(error))]) from None


def _check_outputs(outputs: tuple[str, ...]) -> tuple[str, ...]:
    try:
        check_report_paths(outputs)
    except ValueError as error:
        raise ConfigError([Problem("-o", str(error))]) from None
    return report_paths(outputs)  # absolute now: an agent may change the directory


@main.command("run")
@click.argument("paths", nargs=-1)
@click.option(
    "--target",
    metavar="SPEC",
    help="cmd:<command>, http(s)://…, py:module:function, fixtures:<file.jsonl>.",
)
@click.option("-j", "--concurrency", type=click.IntRange(1, 1024), help="Calls in flight at once.")
@click.option(
    "--trials",
    type=click.IntRange(1, 10_000),
    help="Trials per test (a test's own trials: wins, with a warning).",
)
@click.option(
    "--pass-threshold",
    type=click.Choice(["any", "all", "majority"]),
    help="How many trials of a test must pass (default from config: all).",
)
@click.option("--fail-fast", is_flag=True, help="Stop scheduling tests after the first failure.")
@click.option("--agent", "agents", multiple=True, help="Only tests of this agent (repeatable).")
@click.option("--suite", "suites", multiple=True, help="Only this suite (repeatable).")
@click.option(
    "--test",
    "test_ids",
    multiple=True,
    metavar="ID",
    help="Only this test id or glob (repeatable).",
)
@click.option("--tag", "tags", multiple=True, help="Only tests with this tag (repeatable).")
@click.option(
    "-k", "keyword", metavar="EXPR", help="Words with and/or/not over id, name, suite, tags."
)
@click.option("--now", metavar="ISO", help="Reference time for date assertions.")
@click.option(
    "--fact",
    "facts",
    multiple=True,
    metavar="NAME=BOOL",
    help="Set a fact for skip_if (repeatable; wins over the environment and config).",
)
@click.option(
    "--timeout",
    "timeout_s",
    type=FiniteFloat(min=0, min_open=True, max=604_800),
    help="Per-call timeout (s), at most a week.",
)
@click.option(
    "--rate-limit",
    type=FiniteFloat(min=0.001, max=1_000_000),
    help="Calls per second (0.001 to 1,000,000).",
)
@click.option(
    "--judge-cache",
    type=click.Choice(["rw", "ro", "off", "replay"]),
    help="The judge cache of model-graded assertions: rw (default) reads and writes it, ro "
    "only reads, off neither, replay only reads and makes a miss an error (offline CI).",
)
@_outputs(required=False)
@click.option(
    "--resume", metavar="RUN_ID", help="Run only what has no verdict yet in RUN_ID (or 'last')."
)
@store_option
@click.option(
    "--config",
    "config_path",
    metavar="FILE",
    help="The config (default: the nearest assertly.yaml or [tool.assertly] upward).",
)
@click.option("--plain", is_flag=True, help="No progress bar, even on a terminal.")
@click.option(
    "--shard",
    metavar="I/N",
    callback=lambda ctx, param, value: checked_shard(value),
    help="Run only the I-th of N disjoint parts of the tests (stable by test key); "
    "`assertly merge` joins the parts.",
)
@click.option(
    "--backend",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="Where calls and judging run: this process, or a Ray cluster (pip install "
    "'assertly[ray]'); the store and reports are written here either way.",
)
@click.option(
    "--ray-address",
    metavar="ADDRESS",
    help="The Ray cluster for --backend ray: auto, or ray://host:port "
    "(default: a local cluster started for the run).",
)
@click.option(
    "--min-pass-rate",
    type=click.FloatRange(0, 1),
    metavar="R",
    help="Gate: exit 0 when the pass rate is at least R (0-1), even with failures.",
)
@click.option(
    "--baseline",
    metavar="RUN",
    help="Gate: compare with this run (id, last, last~N, blessed, or a JSON report); "
    "exit 1 on a regression.",
)
@click.option(
    "--max-regressions",
    type=click.IntRange(0),
    default=0,
    show_default=True,
    help="Regressions the --baseline gate allows.",
)
@allow_options
def run_command(
    paths: tuple[str, ...],
    outputs: tuple[str, ...],
    facts: tuple[str, ...],
    now: str | None,
    plain: bool,
    min_pass_rate: float | None,
    baseline: str | None,
    max_regressions: int,
    **kwargs: Any,
) -> None:
    """Run agent test files and workflow eval sections."""
    allow = allowances(kwargs)
    from ..reports import ConsoleReporter
    from ..runner import RunOptions
    from ..runner import run as run_tests
    from ..runner._signals import Terminated

    with usage_errors():
        outputs = _check_outputs(outputs)
        options = RunOptions(
            paths=list(paths),
            facts=_facts(facts),
            now=_parse_now(now),
            agents=list(kwargs.pop("agents")),
            suites=list(kwargs.pop("suites")),
            test_ids=list(kwargs.pop("test_ids")),
            tags=list(kwargs.pop("tags")),
            **kwargs,
        )
        if not options.paths and not options.resume:
            raise ConfigError([Problem("paths", "give at least one test file or directory")])
        base_side = None
        if baseline is not None:
            from ..compare import open_side

            # Before the run: `last` is the run before this one, not this one.
            base_side = open_side(baseline, options.store_path or default_store(must_exist=False))
            if options.resume and _same_run(base_side.run_id, options):
                raise ConfigError(
                    [
                        Problem(
                            "--baseline",
                            f"{baseline!r} is run {base_side.run_id}, the run being resumed: "
                            "name the run to compare with (e.g. last~1 or blessed)",
                        )
                    ]
                )
        try:
            with ConsoleReporter(force_plain=plain) as reporter:
                record = run_tests(options, reporter)
        except (KeyboardInterrupt, Terminated) as stop:
            how = "terminated" if isinstance(stop, Terminated) else "interrupted"
            click.echo(
                f"{how}: every finished trial is stored; "
                "`assertly run --resume last` runs the rest",
                err=True,
            )
            sys.exit(EXIT_TERMINATED if isinstance(stop, Terminated) else EXIT_INTERRUPTED)
    reporter.summary(record)
    if options.resume and record.trials_run == 0:
        click.echo(
            f"nothing to resume: every test of run {record.run_id} already has its verdicts "
            "(no agent was called)",
            err=True,
        )
    exit_code = None
    if min_pass_rate is not None or base_side is not None:
        exit_code = apply_run_gates(
            record, options, min_pass_rate, base_side, max_regressions, allow
        )
    write_reports(record, outputs, exit_code)


def _same_run(run_id: str, options: Any) -> bool:
    """Whether ``--resume`` names ``run_id``."""
    from ..store import RunStore

    store = RunStore(options.store_path or default_store(), must_exist=True, read_only=True)
    try:
        return bool(store.resolve_run_id(options.resume) == run_id)
    finally:
        store.close()


@main.command("validate")
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--config",
    "config_path",
    metavar="FILE",
    help="The config (default: the nearest assertly.yaml or [tool.assertly] upward).",
)
def validate_command(paths: tuple[str, ...], config_path: str | None) -> None:
    """Load and compile every file and check it against the config; report every problem.

    Problems (stderr, exit 2): files, tests and eval cases that cannot be loaded or compiled,
    and setup/cleanup hooks the config does not name. Warnings (stdout, exit 0): agents with no
    target in the config, and skip_if facts that are not declared.
    """
    from pathlib import Path

    from ..loading import (
        check_against_config,
        find_config,
        load_config,
        load_config_plugins,
        load_paths,
    )
    from ..targets._check import check_agents

    with usage_errors():
        config_file = Path(config_path) if config_path else find_config(Path.cwd())
        config = load_config(config_file)
        load_config_plugins(config)
    loaded = load_paths(
        paths,
        sensitive_prefixes=config.sensitive_prefixes,
        shape=config.shape,
        project_dir=config.directory or Path.cwd(),
        judge_rules=config.judge_rules(),
    )
    dataset_hooks = [d.suite_hooks for d in loaded.datasets if d.suite_hooks is not None]
    config_problems, warnings = check_against_config(
        loaded.tests, config, dataset_hooks, loaded.datasets
    )
    agent_problems, agent_warnings = check_agents(config)
    warnings = [*warnings, *agent_warnings]
    problems = [*agent_problems, *loaded.problems, *config_problems]
    cases = sum(len(suite.cases) for suite in loaded.evals)
    dataset_cases = 0
    for dataset in loaded.datasets:  # every line read, one at a time
        for case in dataset.cases():
            dataset_cases += 1
            problems.extend(case.problems)
    for problem in problems:
        click.echo(terminal_safe(f"{problem}"), err=True)
    for warning in warnings:
        click.echo(terminal_safe(f"warning: {warning}"))
    counts = [
        _count(len(loaded.tests), "test"),
        *([_count(dataset_cases, "dataset case")] if loaded.datasets else []),
        _count(cases, "eval case"),
        _count(len(problems), "problem"),
    ]
    if warnings:
        counts.append(_count(len(warnings), "warning"))
    click.echo(", ".join(counts))
    sys.exit(EXIT_USAGE if problems else EXIT_PASSED)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


@main.command("report")
@click.argument("run_id")
@_outputs(required=True)
@store_option
def report_command(run_id: str, outputs: tuple[str, ...], store_path: str | None) -> None:
    """Re-render a stored run without re-running it."""
    from ..runner import load_run

    with usage_errors():
        _check_outputs(outputs)
        record = load_run(store_path or default_store(), run_id)
    write_reports(record, outputs)


@main.command("recheck")
@click.argument("run_id")
@_outputs(required=False)
@store_option
@click.option("--now", metavar="ISO", help="Reference time for date assertions.")
def recheck_command(
    run_id: str, outputs: tuple[str, ...], store_path: str | None, now: str | None
) -> None:
    """Re-judge a stored run's responses with the current test files (no target calls)."""
    from ..reports import ConsoleReporter
    from ..runner import recheck

    with usage_errors():
        _check_outputs(outputs)
        record = recheck(store_path or default_store(), run_id, now=_parse_now(now))
    ConsoleReporter(len(record.tests), force_plain=True).summary(record)
    write_reports(record, outputs)


@main.command("schema")
@click.argument(
    "kind", type=click.Choice(["agent-tests", "test", "workflow-eval", "config", "report"])
)
def schema_command(kind: str) -> None:
    """Print the JSON Schema of a file format (for editors), or of the JSON report."""
    if kind == "report":
        from ..reports._report_schema import report_schema

        _echo_json(report_schema())
        return
    from ..loading import json_schemas

    _echo_json(json_schemas()[kind])


main.add_command(diff_command)
main.add_command(bless_command)
main.add_command(merge_command)
main.add_command(view_command)


if __name__ == "__main__":  # pragma: no cover
    main()
