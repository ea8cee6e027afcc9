"""``assertly run`` as a whole, and ``assertly report``'s stored run.

Load and select, open the store and claim the run, fork the check process, run, and return
the finished run.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, cast

from .._exceptions import ConfigError, Problem, StoreError, TargetError
from .._records import RunRecord
from .._secrets import from_environment, is_masked_url, mask_url, url_secrets
from ..engine import Expectation
from ..loading import (
    ConfigModel,
    EvalSuite,
    definition_digest,
    find_config,
    load_config,
    load_config_plugins,
    load_paths,
    simulator_problems,
)
from ..store import RunStore, build_run, new_run_id, open_store
from ..targets import parse_spec
from ._check_process import CheckProcess
from ._check_process import wanted as check_process_wanted
from ._matrix import build_matrix
from ._options import RunOptions, options_dict, parse_shard, restore_options
from ._plan import refuse_changed_config, refuse_other_filters, shard_plan, verdict_config
from ._provenance import provenance
from ._run import Listener, Runner
from ._selection import TestPlan, filtered, in_shard, select_tests, unmatched_filters
from ._signals import until_sigterm
from ._streaming import RunStream
from ._support import now_iso

__all__ = ["arun", "load_run", "prepare", "run"]


def prepare(
    options: RunOptions, *, calls: bool = True
) -> tuple[ConfigModel, TestPlan, list[EvalSuite], list[str]]:
    """Load config, plugins and files; select tests.

    Raises:
        ConfigError: The config is invalid, or nothing could be loaded at all.
    """
    if isinstance(options.target, str):
        try:
            parse_spec(options.target)
        except TargetError as error:
            raise ConfigError([Problem("--target", str(error))]) from None
    config_file = Path(options.config_path) if options.config_path else find_config(Path.cwd())
    config = load_config(config_file)
    matrix = build_matrix(options, config)
    load_config_plugins(config)
    loaded = load_paths(
        options.paths,
        sensitive_prefixes=config.sensitive_prefixes,
        shape=config.shape,
        project_dir=config.directory or Path.cwd(),
        judge_rules=config.judge_rules(),
    )
    unmatched = unmatched_filters(
        loaded.tests,
        loaded.datasets,
        agents=options.agents,
        suites=options.suites,
        test_ids=options.test_ids,
    )
    if unmatched:
        # A broken file may hold what the filter names: say both.
        raise ConfigError([*unmatched, *loaded.file_problems])
    problems = [str(problem) for problem in loaded.file_problems]
    # The shard splits a matrix run's cells (test, target), so it is applied by the plan.
    unsharded = dataclasses.replace(options, shard=None)
    tests = TestPlan(select_tests(loaded.tests, unsharded), loaded.datasets, options, matrix)
    # A simulated user needs a model only where calls are made (a recheck makes none).
    if calls and (refused := simulator_problems(tests.tests, config, tests.datasets)):
        raise ConfigError(refused)  # as validate does (exit 2), not a run of errors
    # Filters pick tests; an eval suite is judged whole, so any filter leaves evals out, and
    # a shard takes the eval suites whose file hashes to it.
    evals = [] if filtered(options) else loaded.evals
    if options.shard:
        whole = dataclasses.replace(options, shard=None)
        tests.whole = TestPlan(select_tests(loaded.tests, whole), loaded.datasets, whole, matrix)
        tests.whole.eval_files = sorted(suite.file for suite in evals)
        shard = parse_shard(options.shard)
        evals = [suite for suite in evals if in_shard(suite.file, shard)]
    if not tests and not evals and not options.shard:  # a shard of a small suite may be empty
        if problems:
            raise ConfigError(loaded.file_problems)
        raise ConfigError([Problem("paths", "no tests found (after filters)")])
    return config, tests, evals, problems


def _restore(options: RunOptions) -> None:
    """Take what the command line does not give again from the run ``--resume`` names."""
    # The run to resume lives in the configured store and names its paths, target, filters
    # and the rest.
    config_file = Path(options.config_path) if options.config_path else find_config(Path.cwd())
    store_path = options.store_path or load_config(config_file).store_path
    with open_store(store_path, must_exist=True) as with_store:
        resumed_id = with_store.resolve_run_id(cast(str, options.resume))
        stored = with_store.run_info(resumed_id)["options"]
    restore_options(options, stored)
    given = [options.target] if isinstance(options.target, str) else []
    for spec in [*given, *options.targets.values()]:
        if is_masked_url(spec):
            # Its password was never stored (masked): the command line must give it again.
            raise ConfigError(
                [
                    Problem(
                        "--target",
                        f"the run's target {spec} had a password, which is never "
                        "stored: give --target again to resume it",
                    )
                ]
            )


def _known_secrets(options: RunOptions, config: ConfigModel, store_location: str) -> set[str]:
    """The secrets known before any target is built (targets add theirs to the same set).

    A database URL's password, the target's and the judge's, and every value read from
    ``${VAR}`` (the store URL's): redacted from the options stored with the run as from
    everything else.
    """
    secrets = url_secrets(store_location) | set(from_environment())
    for spec in [options.target, *options.targets.values()]:
        if isinstance(spec, str):
            secrets |= url_secrets(spec)
    if config.judge is not None:
        secrets |= url_secrets(config.judge.base_url)
    return secrets


def run(
    options: RunOptions, listener: Listener | None = None, stream: RunStream | None = None
) -> RunRecord:
    """Load, run and store; return the finished run.

    ``stream`` passes each finished test, as it is stored and in the suite's order, to the
    reports being written and the console summary (default: one that only keeps the records
    of a small run for the returned record).

    Raises:
        ConfigError: Nothing could run (usage or configuration problem).
        StoreError: The run store cannot be used.
    """
    with _started(options, listener, stream, fork=True) as (work, evals):
        record = asyncio.run(until_sigterm(work))  # SIGTERM: Terminated, as Ctrl-C
    return _found(record, evals, options)


async def arun(
    options: RunOptions, listener: Listener | None = None, stream: RunStream | None = None
) -> RunRecord:
    """`run` in the running event loop: the same run, stored the same way.

    Loading the files and opening the store run before the first ``await`` (as in `run`).
    Two things are left to the host program: its signals (no SIGTERM handler is installed)
    and its process (no check process is forked: forking under a running loop is unsafe, so
    responses are judged in this process, as a small run's are).

    Raises:
        ConfigError: Nothing could run (usage or configuration problem).
        StoreError: The run store cannot be used.
    """
    with _started(options, listener, stream, fork=False) as (work, evals):
        record = await work
    return _found(record, evals, options)


def _found(record: RunRecord, evals: list[EvalSuite], options: RunOptions) -> RunRecord:
    """``record``, unless the run found nothing to judge.

    Raises:
        ConfigError: No test and no eval suite (filters can leave no line of a dataset).
    """
    if not evals and not record.tests and not options.shard:
        # Filters can leave no line of a dataset, which is only known once it has been read.
        raise ConfigError([Problem("paths", "no tests found (after filters)")])
    return record


@contextmanager
def _started(
    options: RunOptions, listener: Listener | None, stream: RunStream | None, *, fork: bool
) -> Iterator[tuple[Coroutine[Any, Any, RunRecord], list[EvalSuite]]]:
    """Load, claim the run and yield its work (to await) and eval suites; then clean up.

    ``fork``: whether a large run may fork a check process (only before an event loop runs).
    """
    if options.resume:
        _restore(options)
    config, tests, evals, problems = prepare(options)
    runner_class = _runner_class(options)  # before the store: a missing Ray writes nothing
    store_location = options.store_path or config.store_path
    secrets = _known_secrets(options, config, store_location)
    with open_store(store_location, redact=secrets) as store:
        yield from _run_stored(
            store,
            options,
            config,
            tests,
            evals,
            problems,
            runner_class,
            listener,
            stream,
            fork=fork,
        )


def _run_stored(
    store: RunStore,
    options: RunOptions,
    config: ConfigModel,
    tests: TestPlan,
    evals: list[EvalSuite],
    problems: list[str],
    runner_class: type[Runner],
    listener: Listener | None,
    stream: RunStream | None,
    *,
    fork: bool,
) -> Iterator[tuple[Coroutine[Any, Any, RunRecord], list[EvalSuite]]]:
    """Run in an open store: claim the run, yield its work (to await), give the claim up."""
    secrets = store.redact  # the set itself: targets add theirs to it when they are built
    runner: Runner | None = None
    claimed: str | None = None
    try:
        runner = runner_class(options, config, store, secrets, listener)
        runner.stream = stream or RunStream()
        run_id = store.resolve_run_id(options.resume) if options.resume else new_run_id()
        data = _run_options(store, runner, run_id, tests, evals, problems)
        store.claim_run(run_id, now_iso())
        claimed = run_id
        store.start_run(run_id, now_iso(), data)
        runner.fit_open_files()
        agents = {test.agent for test in tests.tests} | {d.agent for d in tests.datasets}
        total = tests.count()
        local = options.backend == "local"  # on Ray, the workers judge what they call
        wanted = check_process_wanted(total, runner.concurrency)
        if fork and local and wanted and runner.may_call(tests):
            # Forked now, before the event loop and the targets' clients exist.
            with suppress(OSError):  # no process to spare (limits): judged here, as small runs
                runner.check_process = CheckProcess(_checks_of(tests), Runner._judge)
        yield runner.run(tests, evals, run_id, problems, total=total, agents=agents), evals
    finally:
        if runner is not None and runner.check_process is not None:
            runner.check_process.close()
        if claimed is not None:
            with suppress(StoreError):
                store.release_run(claimed)


def _run_options(
    store: RunStore,
    runner: Runner,
    run_id: str,
    tests: TestPlan,
    evals: list[EvalSuite],
    problems: list[str],
) -> dict[str, Any]:
    """What is stored with the run; for ``--resume``, the checks that it may go on.

    Raises:
        ConfigError: The resumed run lacks files the paths now hold, or was judged under
            another verdict-changing config.
    """
    options, config = runner.options, runner.config
    files = _files_of(tests, evals)
    verdicts = verdict_config(config, options)
    if options.resume:
        stored = store.run_info(run_id)["options"]
        _refuse_new_files(files, stored, run_id)
        refuse_other_filters(options, stored, run_id)
        _refuse_other_targets(options, tests, stored, run_id)
        refuse_changed_config(verdicts, stored, run_id, runner.warnings.append)
    data = options_dict(options, options.pass_threshold or config.pass_threshold, problems)
    data["files"] = files
    data["verdict_config"] = verdicts
    # A matrix run's labels, in order (the first is the base); reports and diff read them.
    data["target_labels"] = list(tests.matrix.labels) if tests.matrix is not None else []
    data["matrix_digest"] = _matrix_digest(tests)
    if not options.resume:  # where the run was made (a resumed run keeps its own)
        data["provenance"] = provenance(config.directory)
    if tests.whole is not None and not options.resume:  # a resumed run keeps its plan
        data["plan"] = _plan_of(runner, tests.whole, options, verdicts)
    return data


def _matrix_digest(tests: TestPlan) -> str | None:
    """A digest of what answers each (agent, label) of a matrix run; None without a matrix.

    Secrets stay out (header and environment values, URL passwords): only their names.
    """
    if tests.matrix is None:
        return None
    shown: dict[str, Any] = {}
    for agent, specs in tests.matrix.specs.items():
        for label, (spec, where) in specs.items():
            if isinstance(spec, str):
                seen: Any = mask_url(spec)
            elif hasattr(spec, "model_dump"):
                seen = spec.model_dump(exclude={"headers", "env"})
                seen.update(
                    url=mask_url(str(seen.get("url", ""))),
                    names=sorted([*getattr(spec, "headers", {}), *getattr(spec, "env", {})]),
                )
            else:
                seen = repr(spec)
            shown[f"{agent}\0{label}"] = [seen, str(where)]
    return definition_digest(shown)


def _refuse_other_targets(
    options: RunOptions, tests: TestPlan, stored: dict[str, Any], run_id: str
) -> None:
    """``--resume`` with other targets (specs, labels or their order) than the run's: refused.

    Raises:
        ConfigError: The targets given differ from the stored ones; the message says so.
    """
    # red team, probe "resume with other targets": the targets given on the command line win
    # over the stored ones, so `--resume --target cand=v2` of a run made with cand=v1 kept
    # v1's stored verdicts as cand's (one label, two agents: a pass no fresh run gives).
    # Compared as stored (passwords masked); a run's own targets are restored when not given.
    given = [(label, mask_url(spec)) for label, spec in options.targets.items()]
    kept = stored.get("targets") or {}
    labels = list(tests.matrix.labels) if tests.matrix is not None else []
    target = mask_url(options.target) if isinstance(options.target, str) else None
    # red team, probe "resume after changing matrix:": the same labels with another agent
    # in the config's matrix: compared by a digest of what answers each label (runs stored
    # before it have none: not compared).
    digest = stored.get("matrix_digest", _matrix_digest(tests))
    if (
        given == [(str(label), spec) for label, spec in kept.items()]
        and labels == list(stored.get("target_labels") or [])
        and target == stored.get("target")
        and digest == _matrix_digest(tests)
    ):
        return
    raise ConfigError(
        [
            Problem(
                "--resume",
                f"run {run_id} was run with other targets (--target, or the config's matrix: "
                "labels, specs or their order) than given now: its stored verdicts are those "
                "of its own targets; give the same --target (or none), or start a new run",
            )
        ]
    )


def _plan_of(
    runner: Runner, whole: TestPlan, options: RunOptions, verdicts: dict[str, Any]
) -> dict[str, Any]:
    """A shard's plan (`shard_plan`), without the warnings about other shards' tests."""
    warnings = list(runner.warnings)
    try:
        return shard_plan(whole, runner.definition_of, options, verdicts)
    finally:
        runner.warnings[:] = warnings


def _runner_class(options: RunOptions) -> type[Runner]:
    """`Runner`, or for ``--backend ray`` the one that runs calls on a Ray cluster.

    Raises:
        ConfigError: An unknown backend, or Ray is not installed.
    """
    if options.ray_address is not None and options.backend != "ray":
        raise ConfigError([Problem("--ray-address", "is for --backend ray only")])
    if options.backend == "local":
        return Runner
    # The response cache and the run budget live in the driver's Runner only (issue 34).
    for name, given in (
        ("--cache", options.cache not in (None, "off")),
        ("--max-cost-usd", options.max_cost_usd),
    ):
        if given:
            raise ConfigError([Problem(name, "is not supported with --backend ray yet")])
    if options.backend != "ray":
        raise ConfigError(
            [Problem("--backend", f"unknown backend {options.backend!r}: use local or ray")]
        )
    try:
        from ._ray import RayRunner
    except ImportError as error:
        raise ConfigError(
            [
                Problem(
                    "--backend ray",
                    f"Ray is not installed ({error}): pip install 'assertly[ray]'",
                )
            ]
        ) from None
    return RayRunner


def _files_of(tests: TestPlan, evals: list[EvalSuite]) -> list[str]:
    """The test files (and datasets' files) a run is made of, sorted."""
    found = {test.file for test in tests.tests} | {dataset.file for dataset in tests.datasets}
    return sorted(found | {suite.file for suite in evals})


def _refuse_new_files(files: list[str], stored: dict[str, Any], run_id: str) -> None:
    """A resumed run judges the files it started with, never files added since.

    Raises:
        ConfigError: The paths now hold test files the run did not have.
    """
    known = stored.get("files")
    if known is None:  # a run stored before runs recorded their files
        return
    added = sorted(set(files) - set(known))
    if added:
        shown = ", ".join(added[:5]) + (f" and {len(added) - 5} more" if len(added) > 5 else "")
        raise ConfigError(
            [
                Problem(
                    "--resume",
                    f"run {run_id} did not have {shown}: a resumed run only finishes the tests "
                    "it started with; start a new run (without --resume) to include new files",
                )
            ]
        )


def _checks_of(tests: TestPlan) -> Iterator[list[Expectation]]:
    """Every list of compiled checks the run's steps use (a dataset's lines share one)."""
    for test in tests.tests:
        conversation = test.conversation
        if conversation is not None:  # each list as the runner judges it (known by identity)
            yield from (turn.checks for turn in conversation.turns)
            if conversation.simulated_user is not None:
                yield conversation.simulated_user.stop_when
            yield conversation.checks
        for step in test.steps:
            yield step.checks
    for dataset in tests.datasets:
        yield dataset.checks


def load_run(store_path: str, run_id: str) -> RunRecord:
    """Rebuild a stored run (for ``assertly report``)."""
    with open_store(store_path, must_exist=True) as store:
        return build_run(store, store.resolve_run_id(run_id))
