"""Running suites from Python: `run` and `arun`, as ``assertly run`` runs them.

The options are the command's, under the names of its parameters (``concurrency``,
``pass_threshold``, ``tags`` …), checked by the command's own parser: a value the command
line refuses is refused here with the same message, and a name it does not know is an error.
The run is stored where ``assertly run`` stores it, so ``assertly view``, ``report`` and
``diff`` see it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from difflib import get_close_matches
from typing import TYPE_CHECKING, Any

from ._exceptions import ConfigError, Problem

if TYPE_CHECKING:
    from ._records import EvalRecord, RunRecord, TestRecord
    from .cli._run import RunRequest
    from .compare import GateDecision
    from .reports import ReportSink

__all__ = ["RunResult", "arun", "run"]

# Paths as a caller may give them: one path, or several.
Paths = str | os.PathLike[str] | Iterable[str | os.PathLike[str]]

# Not options of `run`: its own arguments (`target`, `config`), and what only a terminal needs.
_NOT_OPTIONS = frozenset({"target", "targets", "config_path", "plain"})


@dataclass(frozen=True, slots=True)
class RunResult:
    """A finished run: the typed records ``assertly run`` stored, and its gates' decision.

    Attributes:
        record: The run as stored (the same record the reports are written from).
        gate: What ``min_pass_rate`` or ``baseline`` decided; None when neither was given.
    """

    record: RunRecord
    gate: GateDecision | None = None

    @property
    def run_id(self) -> str:
        """The stored run's id (for ``assertly report``, ``diff`` and ``view``)."""
        return self.record.run_id

    @property
    def summary(self) -> dict[str, Any]:
        """The report's ``summary``: total, passed, failed, errored, skipped, pass rate."""
        return self.record.summary()

    @property
    def tests(self) -> Sequence[TestRecord]:
        """Every test in run order, each with its trials (``test.trials``)."""
        return self.record.tests

    @property
    def evals(self) -> list[EvalRecord]:
        """The workflow eval suites judged."""
        return self.record.evals

    @property
    def exit_code(self) -> int:
        """The exit code ``assertly run`` would have ended with (0, or 1)."""
        if self.gate is not None:
            return self.gate.exit_code
        return 0 if self.record.ok else 1

    @property
    def passed(self) -> bool:
        """Whether the run passed: every test and eval suite, or the gates given."""
        return self.exit_code == 0


def run(
    paths: Paths = (),
    *,
    target: str | None = None,
    targets: Mapping[str, str] | None = None,
    config: str | os.PathLike[str] | None = None,
    **options: Any,
) -> RunResult:
    """Run test files and workflow eval sections, as ``assertly run`` does.

    Nothing is printed: the run's warnings are in ``result.record.warnings``.

    Args:
        paths: Test files and directories, one or several (``assertly run PATHS``).
        target: The agent to call, as ``--target`` takes it (``cmd:…``, ``http(s)://…``,
            ``py:module:function``, ``fixtures:file.jsonl``); default: the config's agents.
        targets: Several targets side by side, label -> spec (``--target LABEL=SPEC``
            repeated; a spec may name an agent of the config), the first the base of
            comparisons; every test runs against each. Not with ``target``.
        config: The config file (default: the nearest assertly.yaml or [tool.assertly]
            upward from the working directory).
        **options: Any other option of ``assertly run`` by its parameter name, e.g.
            ``concurrency=8``, ``trials=3``, ``pass_threshold="majority"``,
            ``tags=["smoke"]``, ``facts={"prod": False}``, ``now=datetime(…)``,
            ``outputs=["report.json"]``, ``store_path="runs.sqlite"``, ``baseline="last"``.

    Returns:
        The finished run.

    Raises:
        ConfigError: An unknown option, a value the command line refuses, a test file or
            config that cannot be loaded (each problem at its file and line), or no tests.
        StoreError: The run store cannot be used.
        OSError: A report of ``outputs`` cannot be written (the run is stored).
        RuntimeError: Called inside a running event loop: use ``await arun(…)`` there.
    """
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise RuntimeError(
            "assertly.run() cannot run inside a running event loop: use `await assertly.arun(...)`"
        )
    from .runner import RunStream
    from .runner import run as run_options

    request = _request(paths, target, targets, config, options)
    with _report_sinks(request) as sinks:
        return _finish(request, run_options(request.options, None, RunStream(sinks)), sinks)


async def arun(
    paths: Paths = (),
    *,
    target: str | None = None,
    targets: Mapping[str, str] | None = None,
    config: str | os.PathLike[str] | None = None,
    **options: Any,
) -> RunResult:
    """`run` in the running event loop: same arguments, same run, same store.

    The agents' calls run in the caller's loop. Loading the files, opening the store and
    judging responses are synchronous steps in it, as in `run`; no signal handler is
    installed and no check process is forked (the host program's signals and process are
    its own).

    Args:
        paths: Test files and directories, one or several.
        target: The agent to call, as ``--target`` takes it.
        targets: Several targets side by side, label -> spec (see `run`).
        config: The config file.
        **options: Any other option of ``assertly run`` by its parameter name (see `run`).

    Returns:
        The finished run.

    Raises:
        ConfigError: An unknown option, a value the command line refuses, a test file or
            config that cannot be loaded, or no tests.
        StoreError: The run store cannot be used.
        OSError: A report of ``outputs`` cannot be written (the run is stored).
    """
    from .runner import RunStream
    from .runner import arun as arun_options

    request = _request(paths, target, targets, config, options)
    with _report_sinks(request) as sinks:
        record = await arun_options(request.options, None, RunStream(sinks))
        return _finish(request, record, sinks)


@contextlib.contextmanager
def _report_sinks(request: RunRequest) -> Iterator[list[ReportSink]]:
    """The ``outputs``, each written as the tests finish (`ReportSink`); removed unless done."""
    from .reports import ReportSink

    sinks = [ReportSink(out, shard=bool(request.options.shard)) for out in request.outputs]
    try:
        yield sinks
    finally:
        for sink in sinks:  # a run that stopped: no partial report is left beside the target
            sink.discard()


def _finish(request: RunRequest, record: RunRecord, sinks: list[ReportSink]) -> RunResult:
    """Apply the gates and write the reports, as ``assertly run`` does after the run."""
    gate = request.gates(record)
    for sink in sinks:
        sink.finish(record)
    return RunResult(record, gate)


def _request(
    paths: Paths,
    target: str | None,
    targets: Mapping[str, str] | None,
    config: Any,
    options: Mapping[str, Any],
) -> RunRequest:
    """The checked `RunRequest`, built by ``assertly run``'s own parser.

    Raises:
        ConfigError: An unknown option or a value the command refuses.
    """
    import click

    from .cli._run import run_command, run_request

    argv = _arguments(run_command, options)
    if target is not None:
        argv.extend(["--target", target])
    if targets is not None:
        if not isinstance(targets, Mapping):
            raise ConfigError(
                [Problem("targets", f"give a mapping of label to target spec, got {targets!r}")],
                title="invalid option",
            )
        for label, spec in targets.items():
            argv.extend(["--target", f"{label}={spec}"])
    if config is not None:
        argv.extend(["--config", os.fspath(config)])
    argv = [*argv, "--", *_paths(paths)]
    try:
        context = run_command.make_context("assertly run", argv)
    except click.BadParameter as error:
        name = error.param.name if error.param is not None else "option"
        raise ConfigError([Problem(str(name), error.message)], title="invalid option") from None
    except click.ClickException as error:
        raise ConfigError(
            [Problem("option", error.format_message())], title="invalid option"
        ) from None
    params = dict(context.params)
    params.pop("plain")
    return run_request(params)


def _paths(paths: Paths) -> list[str]:
    """The paths as the command line takes them; anything but paths is a `ConfigError`."""
    if isinstance(paths, str | os.PathLike):
        paths = [paths]
    elif isinstance(paths, bytes | Mapping) or not isinstance(paths, Iterable):
        # A mapping would run its keys, bytes their numbers: neither is what was meant.
        raise ConfigError([_not_paths(paths)])
    found: list[str] = []
    for path in paths:
        if not isinstance(path, str | os.PathLike) or isinstance(os.fspath(path), bytes):
            raise ConfigError([_not_paths(path)])
        found.append(str(os.fspath(path)))
    return found


def _not_paths(value: object) -> Problem:
    return Problem(
        "paths",
        f"paths take a path or a list of paths (str or os.PathLike), got "
        f"{type(value).__name__} {value!r:.60}",
    )


def _arguments(command: Any, named: Mapping[str, Any]) -> list[str]:
    """``named`` options as the command line would spell them (``--trials=3``).

    Raises:
        ConfigError: A name the command does not have, or a value of the wrong kind.
    """
    params = {
        param.name: param
        for param in command.params
        if param.param_type_name == "option" and param.name not in _NOT_OPTIONS
    }
    argv: list[str] = []
    problems: list[Problem] = []
    for name, value in named.items():
        param = params.get(name)
        if param is None:
            problems.append(Problem(name, _unknown(name, params)))
            continue
        flag = max(param.opts, key=len)  # --concurrency, not -j
        if param.is_flag:
            if not isinstance(value, bool):
                problems.append(Problem(name, f"expected True or False, got {value!r}"))
            elif value:
                argv.append(flag)
            continue
        if value is None:
            continue
        values = _items(value) if param.multiple else [value]
        for item in values:
            if isinstance(item, bool):  # click reads True as the text "True"
                problems.append(Problem(name, f"expected {param.type.name}, got {item!r}"))
            else:
                argv.extend([flag, _text(item)])
    if problems:
        raise ConfigError(problems, title="invalid option")
    return argv


def _items(value: Any) -> list[Any]:
    """A repeatable option's values: a list, one text, or facts as a mapping."""
    if isinstance(value, Mapping):  # facts={"prod": False}
        return [f"{name}={_text(fact)}" for name, fact in value.items()]
    if isinstance(value, str | os.PathLike):
        return [value]
    return list(value)


def _text(value: Any) -> str:
    """A value as the command line takes it (booleans as true/false, for ``--fact``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, os.PathLike):
        return str(os.fspath(value))
    return str(value)


def _unknown(name: str, params: Mapping[str, Any]) -> str:
    """Says what is unknown and, when one is close, which option was meant."""
    known = sorted(params)
    flags = {flag.lstrip("-").replace("-", "_"): key for key in known for flag in params[key].opts}
    if name == "config_path":
        return "unknown option: the config file is `config=`"
    if name in flags:  # the flag's spelling: --timeout is timeout_s, --tag is tags
        return f"unknown option: did you mean {flags[name]!r}?"
    close = get_close_matches(name, [*known, *flags], n=1)
    hint = f"did you mean {flags.get(close[0], close[0])!r}? " if close else ""
    return f"unknown option: {hint}(options: {', '.join(known)})"
