"""``assertly run --watch``: run, then run again what a saved change touches, until Ctrl-C.

The files watched are what the run depends on (`watch_plan`): its test files, the datasets
they name, the config and the agents' files. A change to a test file or a dataset runs that
file's tests again; a change to the config or an agent runs every test (and so does every
change when a gate is given: a gate judges the whole run). Each run is a new run in the
store, followed by what changed since the tests' previous verdicts (fixed, regressed, new,
removed). A file that no longer loads prints its problems and the watch goes on.

Ctrl-C ends it: exit 0 when the latest verdict of every test passed (and the last run's
gates did), 1 otherwise. The runner ends its agents on Ctrl-C, so none outlives the watch.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from .._exceptions import AssertlyError, ConfigError, Problem
from .._terminal import terminal_safe
from ._compare import print_gates
from ._support import EXIT_FAILED, EXIT_PASSED, print_problems, write_reports

if TYPE_CHECKING:
    from .._records import RunRecord
    from ..runner import RunOptions
    from ..runner._watch_files import WatchPlan
    from ._run import RunRequest

__all__ = ["refuse_watch", "watch_runs"]

# Milliseconds a burst of changes (an editor's save, a formatter's rewrite) is gathered over
# before the tests run again; and how often the watcher looks for the burst's end.
DEBOUNCE_MS = 300
STEP_MS = 50
# The watcher returns this often when nothing changed (changes meanwhile are kept, not lost).
IDLE_MS = 100
_PASSING = ("passed", "skipped")
_EXIT_TERMINATED = 143  # SIGTERM, as `run` ends on it


def refuse_watch(options: RunOptions) -> None:
    """Refuse what ``--watch`` cannot mean, and a missing watchfiles, before anything runs.

    Raises:
        ConfigError: ``--resume``, ``--shard`` or ``--backend ray`` was given, or watchfiles
            is not installed.
    """
    given = [
        name
        for name, value in (
            ("--resume", options.resume),
            ("--shard", options.shard),
            ("--backend ray", options.backend == "ray"),
        )
        if value
    ]
    if given:
        raise ConfigError(
            [
                Problem(
                    "--watch",
                    f"cannot be used with {', '.join(given)}: a watch starts a new local run "
                    "of the whole suite, then of what changed",
                )
            ]
        )
    try:
        import watchfiles  # noqa: F401
    except ImportError:
        raise ConfigError(
            [Problem("--watch", "needs the watchfiles package: pip install 'assertly[watch]'")]
        ) from None


@dataclasses.dataclass(slots=True)
class _Verdicts:
    """The latest status of every test, across the watch's runs."""

    latest: dict[str, tuple[str, str]] = dataclasses.field(default_factory=dict)  # key: file, st.
    last_exit: int = EXIT_PASSED

    def update(self, record: RunRecord, files: list[str] | None) -> list[str]:
        """Take the run's verdicts; the lines saying what changed since the previous ones.

        ``files``: the test files the run ran (None: all, so a test not in it is removed).
        """
        first = not self.latest
        ran = set(files) if files is not None else None
        changes: dict[str, list[str]] = {"fixed": [], "regressed": [], "new": [], "removed": []}
        seen = set()
        for test in record.tests:
            seen.add(test.key)
            before = self.latest.get(test.key)
            if before is None:
                changes["new"].append(f"{test.key} ({test.status})")
            elif before[1] not in _PASSING and test.status in _PASSING:
                changes["fixed"].append(f"{test.key} ({before[1]} -> {test.status})")
            elif before[1] in _PASSING and test.status not in _PASSING:
                changes["regressed"].append(f"{test.key} ({before[1]} -> {test.status})")
            self.latest[test.key] = (test.file, test.status)
        for key, (file, _) in list(self.latest.items()):
            if key not in seen and (ran is None or file in ran):
                changes["removed"].append(key)
                del self.latest[key]
        if first:  # nothing to compare with
            return []
        counts = ", ".join(f"{len(items)} {name}" for name, items in changes.items())
        lines = [f"since the previous run: {counts}"]
        for name, items in changes.items():
            lines += [f"  {name:<9} {item}" for item in items]
        return lines

    def forget(self, files: set[str]) -> None:
        """Drop the verdicts of test files that are gone."""
        for key, (file, _) in list(self.latest.items()):
            if file in files:
                del self.latest[key]

    def exit_code(self) -> int:
        """0 when every test's latest verdict passed and so did the last run; else 1."""
        failing = any(status not in _PASSING for _, status in self.latest.values())
        return EXIT_FAILED if failing or self.last_exit != EXIT_PASSED else EXIT_PASSED


def watch_runs(request: RunRequest, plain: bool) -> NoReturn:
    """Run, then watch and run again on every change, until Ctrl-C; exit with the state."""
    from ..runner._signals import Terminated
    from ..runner._watch_files import watch_plan

    refuse_watch(request.options)
    verdicts = _Verdicts()
    current = [watch_plan(request.options)]  # the plan the watcher's filter reads
    try:
        _run_once(request, request.options, plain, verdicts, None)
        while True:
            watched = current[0].directories()
            for changed in _changes(current, watched):
                current[0] = _rerun(request, plain, verdicts, current[0], changed)
                if current[0].directories() != watched:
                    break  # watch the directories the run now depends on
    except KeyboardInterrupt:
        click.echo(f"stopped watching ({_state(verdicts)})", err=True)
        sys.exit(verdicts.exit_code())
    except Terminated:
        click.echo("terminated: stopped watching", err=True)
        sys.exit(_EXIT_TERMINATED)


def _changes(current: list[WatchPlan], directories: set[Path]) -> Iterator[set[Path]]:
    """Each burst of relevant changes (debounced) in ``directories``, as resolved paths.

    "watching" is said once the watcher is set up (its first return, at the latest after
    `IDLE_MS`), so a change saved after the line is never missed.
    """
    import watchfiles

    from ..runner._watch_files import resolved

    announced = False
    for batch in watchfiles.watch(
        *sorted(directories),
        watch_filter=lambda _change, path: current[0].relevant(resolved(path)),
        debounce=DEBOUNCE_MS,
        step=STEP_MS,
        rust_timeout=IDLE_MS,
        yield_on_timeout=True,
        recursive=False,
        raise_interrupt=True,
    ):
        if not announced:
            shown = _count(len(directories), "directory")
            click.echo(f"watching {shown} for changes (Ctrl-C ends)")
            announced = True
        if batch:
            yield {resolved(path) for _, path in batch}


def _rerun(
    request: RunRequest, plain: bool, verdicts: _Verdicts, plan: WatchPlan, changed: set[Path]
) -> WatchPlan:
    """Run the tests ``changed`` touches; the plan read again after."""
    from ..runner._watch_files import watch_plan

    gated = request.min_pass_rate is not None or request.baseline is not None
    files = None if gated else plan.affected(changed)
    shown = ", ".join(sorted(_shown(path) for path in changed))
    click.echo("")
    gone = {plan.test_files[path] for path in changed if path in plan.test_files}
    gone = {file for file in gone if not Path(file).is_file()}
    if gone:
        verdicts.forget(gone)
        click.echo(f"removed: {', '.join(sorted(gone))} (its tests are gone)")
    if files == []:
        if not gone:
            click.echo(f"changed: {shown} (no test to run)")
        return watch_plan(request.options, plan)
    what = "every test" if files is None else ", ".join(files)
    click.echo(terminal_safe(f"changed: {shown}; running {what}"))
    options = request.options
    if files is not None:
        options = dataclasses.replace(options, paths=files)
    _run_once(request, options, plain, verdicts, files)
    return watch_plan(request.options, plan)


def _run_once(
    request: RunRequest,
    options: RunOptions,
    plain: bool,
    verdicts: _Verdicts,
    files: list[str] | None,
) -> None:
    """One run, its summary, what changed, its gates and reports; load problems printed."""
    from ..reports import ConsoleReporter
    from ..runner import run as run_tests

    # The runner fills some options in (a copy each run: a re-run starts from what was asked).
    options = dataclasses.replace(options, facts=dict(options.facts))
    try:
        try:
            with ConsoleReporter(force_plain=plain) as reporter:
                record = run_tests(options, reporter)
        except KeyboardInterrupt:
            verdicts.last_exit = EXIT_FAILED  # an interrupted run did not pass
            click.echo("interrupted: every finished trial is stored", err=True)
            raise
        # The run's verdict at once (its gates refine it): a Ctrl-C from here on ends the
        # watch with this run counted.
        verdicts.last_exit = EXIT_PASSED if record.ok else EXIT_FAILED
        reporter.summary(record)
        for line in verdicts.update(record, files):
            click.echo(terminal_safe(line))
        decision = request.gates(record)
    except ConfigError as error:
        print_problems(error)
        verdicts.last_exit = EXIT_FAILED
        click.echo("nothing ran: fix the file and save it to run again")
        return
    except AssertlyError as error:  # the store cannot be used: said, and the watch goes on
        click.echo(terminal_safe(f"error: {error}"), err=True)
        verdicts.last_exit = EXIT_FAILED
        return
    try:
        write_reports(record, request.outputs, print_gates(decision))
    except SystemExit as exit_:  # the run's exit status, as `run` would end with it
        verdicts.last_exit = exit_.code if isinstance(exit_.code, int) else EXIT_FAILED


def _state(verdicts: _Verdicts) -> str:
    failing = sum(status not in _PASSING for _, status in verdicts.latest.values())
    if failing:
        return f"{_count(failing, 'test')} not passing"
    return "every test passing" if verdicts.last_exit == EXIT_PASSED else "the last run failed"


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _count(number: int, noun: str) -> str:
    plural = noun[:-1] + "ies" if noun.endswith("y") else noun + "s"
    return f"{number} {noun if number == 1 else plural}"
