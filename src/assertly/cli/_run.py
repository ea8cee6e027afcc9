"""``assertly run`` and ``assertly validate``: test files run, or checked without running.

`RunRequest` is what ``run`` was asked, checked before anything runs: the command line and
the Python API (`assertly.run`) both build it with `run_request` from the same parameters.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from .._exceptions import AssertlyError, ConfigError, Problem
from .._frontend import parse_targets
from .._terminal import terminal_safe
from ._compare import allow_options, allowances, print_gates
from ._support import (
    EXIT_PASSED,
    EXIT_USAGE,
    FiniteFloat,
    check_outputs,
    checked_shard,
    default_store,
    fact_options,
    outputs_option,
    parse_now,
    store_option,
    usage_errors,
    write_reports,
)

if TYPE_CHECKING:
    from .._records import RunRecord
    from ..compare import Allowances, GateDecision, RunSide
    from ..reports import ReportSink
    from ..runner import RunOptions

__all__ = ["RunRequest", "run_command", "run_request", "validate_command"]

EXIT_INTERRUPTED = 130  # Ctrl-C, as shells report it
EXIT_TERMINATED = 143  # SIGTERM (128 + 15), as shells report it


@dataclass(slots=True)
class RunRequest:
    """What ``assertly run`` was asked, checked: the runner's options, reports and gates.

    Attributes:
        options: The runner's options.
        outputs: The report files to write (absolute, `report_paths`).
        min_pass_rate: ``--min-pass-rate``, or None.
        baseline: The ``--baseline`` run, opened before the run; or None.
        max_regressions: ``--max-regressions``.
        allow: The ``--allow-…`` options.
        gate_targets: ``--gate-target``: of a matrix run, the targets that decide the exit
            code (empty: every target).
    """

    options: RunOptions
    outputs: tuple[str, ...]
    min_pass_rate: float | None
    baseline: RunSide | None
    max_regressions: int
    allow: Allowances
    gate_targets: tuple[str, ...] = ()

    def gates(self, record: RunRecord) -> GateDecision | None:
        """The gates' decision on the finished run; None when no gate was asked for.

        Raises:
            StoreError: The finished run cannot be read back from the store.
            ConfigError: A ``--gate-target`` or a matrix ``--baseline`` the run's targets
                cannot use (when its labels were not known before it ran).
        """
        if self.min_pass_rate is None and self.baseline is None and not self.gate_targets:
            return None
        from ..compare import gate_run

        return gate_run(
            record,
            _store_of(self.options),
            min_pass_rate=self.min_pass_rate,
            baseline=self.baseline,
            max_regressions=self.max_regressions,
            allow=self.allow,
            fail_fast=self.options.fail_fast,
            gate_targets=self.gate_targets,
        )


def _store_of(options: RunOptions) -> str:
    """The run store a run is written to: ``--store``, or the config's."""
    return options.store_path or default_store(must_exist=False, config_path=options.config_path)


def run_request(params: dict[str, Any]) -> RunRequest:
    """The `RunRequest` of ``run``'s parameters as click parsed them (all but ``--plain``).

    Raises:
        ConfigError: An option is invalid, no path was given, or the baseline is the run
            being resumed.
        StoreError: The baseline cannot be found or read.
    """
    from ..runner import RunOptions

    params = dict(params)
    if params.pop("watch", False):  # `run_command` takes it out: only the Python API leaves it
        raise ConfigError([Problem("watch", "is for the command line: assertly run --watch")])
    allow = allowances(params)
    outputs = check_outputs(params.pop("outputs"))
    min_pass_rate, baseline = params.pop("min_pass_rate"), params.pop("baseline")
    max_regressions = params.pop("max_regressions")
    gate_targets = tuple(params.pop("gate_targets"))
    try:
        target, targets = parse_targets(params.pop("target"))
    except ValueError as error:
        raise ConfigError([Problem("--target", str(error))]) from None
    from ..runner._provenance import run_name

    try:
        name = run_name(params.pop("name"))
    except ValueError as error:
        raise ConfigError([Problem("--name", str(error))]) from None
    options = RunOptions(
        name=name,
        target=target,
        targets=targets,
        paths=list(params.pop("paths")),
        facts=fact_options(params.pop("facts")),
        now=parse_now(params.pop("now")),
        agents=list(params.pop("agents")),
        suites=list(params.pop("suites")),
        test_ids=list(params.pop("test_ids")),
        tags=list(params.pop("tags")),
        **params,
    )
    if not options.paths and not options.resume:
        raise ConfigError([Problem("paths", "give at least one test file or directory")])
    base_side = None
    if baseline is not None:
        from ..compare import open_baseline

        base_side = open_baseline(baseline, _store_of(options), resume=options.resume)
    labels = _planned_labels(options)
    if labels is not None and (gate_targets or base_side is not None):
        from ..compare import check_gate_targets

        check_gate_targets(gate_targets, labels, base_side)  # before a run it would not gate
    return RunRequest(
        options, outputs, min_pass_rate, base_side, max_regressions, allow, gate_targets
    )


def _planned_labels(options: RunOptions) -> tuple[str, ...] | None:
    """The target labels the run will have (empty: one target); None when not known yet.

    From ``--target LABEL=SPEC``, else the config's ``matrix:`` (unless a bare ``--target``
    replaces it). A resumed run's come from the stored run, and a config that does not load
    is the run's to report: both are checked on the finished run instead.
    """
    if options.resume:
        return None
    if options.targets:
        return tuple(options.targets)
    if options.target is not None:
        return ()
    from pathlib import Path

    from ..loading import find_config, load_config

    try:
        config_file = Path(options.config_path) if options.config_path else find_config(Path.cwd())
        matrix = load_config(config_file).matrix
    except AssertlyError:
        return None
    return tuple(next(iter(matrix.values()), {})) if matrix else ()


@click.command("run")
@click.argument("paths", nargs=-1)
@click.option(
    "--target",
    multiple=True,
    metavar="[LABEL=]SPEC",
    help="cmd:<command>, http(s)://…, py:module:function, fixtures:<file.jsonl>; repeated as "
    "LABEL=SPEC (SPEC may name an agent of the config), every test runs against each target "
    "side by side, the first the base of comparisons.",
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
@click.option(
    "--cache",
    type=click.Choice(["rw", "ro", "off", "replay"]),
    help="The agent-response cache of the store: off (default: every call is made), rw "
    "reads and writes it, ro only reads, replay only reads and makes a miss an error.",
)
@click.option(
    "--max-cost-usd",
    type=FiniteFloat(min=0, min_open=True, max=1_000_000_000),
    metavar="USD",
    help="The run budget: once the agents' reported cost plus the judge's reaches it, no new "
    "call starts and the tests not judged are errors (exit 1).",
)
@outputs_option(required=False)
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
    "--name",
    metavar="TEXT",
    help="What the run is called in `assertly view` and reports (default: $ASSERTLY_RUN_NAME).",
)
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
    type=FiniteFloat(0, 1),
    metavar="R",
    help="Gate: exit 0 when the pass rate is at least R (0-1), even with failures (of a "
    "matrix run: each target's).",
)
@click.option(
    "--baseline",
    metavar="RUN",
    help="Gate: compare with this run (id, last, last~N, blessed, or a JSON report; :LABEL "
    "for one target of a matrix run); exit 1 on a regression. A matrix run: each target.",
)
@click.option(
    "--max-regressions",
    type=click.IntRange(0),
    default=0,
    show_default=True,
    help="Regressions the --baseline gate allows.",
)
@click.option(
    "--gate-target",
    "gate_targets",
    multiple=True,
    metavar="LABEL",
    help="Of a matrix run: only this target decides the exit code (repeatable); its tests "
    "must pass, or meet --min-pass-rate / --baseline, which gate each target on its own.",
)
@click.option(
    "--watch",
    is_flag=True,
    help="After the run, run again the tests of each test file, dataset, config or agent "
    "file saved, until Ctrl-C (pip install 'assertly[watch]').",
)
@allow_options
def run_command(plain: bool, watch: bool, **params: Any) -> None:
    """Run agent test files and workflow eval sections."""
    from ..reports import ConsoleReporter
    from ..runner import RunStream
    from ..runner import run as run_tests
    from ..runner._signals import Terminated

    sinks: list[ReportSink] = []
    try:
        with usage_errors():
            request = run_request(params)
            options = request.options
            if watch:
                from ._watch import watch_runs

                watch_runs(request, plain)
            # Each -o report is written as the tests finish (JSON, JSONL, CSV) or whole at the end.
            if request.outputs:  # no -o: no report writer imported
                from ..reports import ReportSink
            sinks.extend(ReportSink(out, shard=bool(options.shard)) for out in request.outputs)
            try:
                with ConsoleReporter(force_plain=plain) as reporter:
                    # Kept in memory (while small) only for what reads the whole run again.
                    whole = request.baseline is not None or bool(request.gate_targets)
                    whole = whole or any(not sink.streamed for sink in sinks)
                    stream = RunStream([reporter, *sinks], keep=whole)
                    record = run_tests(options, reporter, stream)
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
        with usage_errors():
            decision = request.gates(record)
        write_reports(record, request.outputs, print_gates(decision), sinks)
    finally:
        for sink in sinks:  # a run that stopped: no partial report is left beside the target
            sink.discard()


@click.command("validate")
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
