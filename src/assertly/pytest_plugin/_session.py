"""The plugin's state for one pytest session (one per xdist worker), and the session hooks.

The state holds the options, the project config, the runner, the run store and the event
loop; the hooks set it up, hand the run to xdist workers, and close and report at the end.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .._frontend import fact_value, now_iso
from ._loop import LoopThread
from ._options import (
    facts_option,
    now_option,
    report_options,
    target_option,
    trials_option,
    usage,
)

if TYPE_CHECKING:
    from ..loading import ConfigModel, EvalSuite, LoadResult
    from ..runner import EvalRecord, Runner, TrialRecord
    from ..runner._matrix import Matrix
    from ..store import RunStore

__all__ = [
    "STATE",
    "State",
    "pytest_configure",
    "pytest_configure_node",
    "pytest_sessionfinish",
    "pytest_terminal_summary",
    "pytest_unconfigure",
    "relative",
    "state_of",
]


class State:
    """Everything the plugin keeps for one pytest session (one per xdist worker)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        option = config.option
        self.target: str | None = target_option(option.assertly_target)
        self.trials: int | None = trials_option(option.assertly_trials)
        self.now: datetime | None = now_option(option.assertly_now)
        self.facts = facts_option(option.assertly_fact)
        self.reports: list[str] = report_options(option.assertly_report)
        self.config_path: str | None = option.assertly_config
        self.started = time.perf_counter()
        self.secrets: set[str] = set()
        self.loop = LoopThread()
        self.messages: list[str] = []  # printed in the terminal summary
        self.markers: set[str] = set()
        self.selected_cases: dict[str, list[str]] = {}
        self._evals: dict[str, EvalRecord] = {}
        self._project: ConfigModel | None = None
        self._runner: Runner | None = None
        self._store: RunStore | None = None
        self._temp_dir: str | None = None
        self._closed = False
        self.store_path: str | None = None
        self.run_id: str | None = None
        # Recording: the controller (or a lone process) starts the run; xdist workers get
        # its store and run id through workerinput and add their trials to it.
        worker_input: dict[str, Any] | None = getattr(config, "workerinput", None)
        self.is_worker = worker_input is not None
        if worker_input is not None:
            self.store_path = worker_input.get("assertly_store")
            self.run_id = worker_input.get("assertly_run_id")
        elif (option.assertly_store or self.reports) and not option.collectonly:
            self._start_run(option.assertly_store)

    # -- project config, runner, store ---------------------------------------------------------
    def project(self) -> ConfigModel:
        """The project config, with its plugin modules loaded (loaded once).

        Raises:
            ConfigError: The config is invalid or a plugin module cannot be imported.
        """
        if self._project is None:
            from ..loading import find_config, load_config, load_config_plugins

            if self.config_path:
                path: Path | None = Path(self.config_path)
            else:
                path = find_config(Path.cwd()) or find_config(self.config.rootpath)
            project = load_config(path)
            load_config_plugins(project)
            self._project = project
        return self._project

    def runner(self) -> Runner:
        """The session's runner (built once)."""
        if self._runner is None:
            from ..runner import Runner, RunOptions
            from ..store import RunStore

            options = RunOptions(
                target=self.target,
                trials=self.trials,
                now=self.now,
                facts=self.facts,
                store_path=self.store_path,
                config_path=self.config_path,
            )
            # Trials are written by the plugin (from this thread, to `store()`). The runner's
            # store holds the judge cache and the judge's spend, which model-graded assertions
            # read and write from the event loop's thread; a SQLite connection works only in
            # the thread that made it, so this one is made (and closed) on that thread. When
            # the session records a run it is the run's store, as with `assertly run`: the
            # cache lasts from session to session (and worker to worker under xdist) and the
            # spend joins the run's report; otherwise a private in-memory one.
            path = self.store_path or ":memory:"
            self._add_store_secret()
            store = self.loop.call(lambda: RunStore(path, redact=self.secrets))
            self._runner = Runner(options, self.project(), store, self.secrets)
            if self.run_id is not None:
                self._runner.run_id = self.run_id  # the run the judge's spend is added to
        return self._runner

    def _add_store_secret(self) -> None:
        from .._secrets import from_environment, url_secrets

        if self.store_path is not None:
            # A database URL's password is a secret, as is every value read from ${VAR}.
            self.secrets.update(url_secrets(str(self.store_path)), from_environment())

    def fact(self, name: str) -> bool | None:
        """A ``skip_if`` fact as the runner reads it; None when nothing declares it.

        ``--assertly-fact`` first, then the environment (``skip_if: CI`` with ``CI=true``),
        then the config.
        """
        return fact_value(name, self.facts, lambda: self.project().facts)

    def store(self) -> RunStore | None:
        """The run store trials are written to, when the session records them."""
        if self.store_path is None or self.run_id is None:
            return None
        if self._store is None:
            from ..store import RunStore

            self._add_store_secret()
            self._store = RunStore(self.store_path, redact=self.secrets)
        return self._store

    def _start_run(self, store_option: str | None) -> None:
        from .._exceptions import AssertlyError
        from ..store import new_run_id

        if store_option:
            self.store_path = str(Path(store_option).resolve())
        else:
            self._temp_dir = tempfile.mkdtemp(prefix="assertly-pytest-")
            self.store_path = str(Path(self._temp_dir) / "runs.sqlite")
        self.run_id = new_run_id()
        threshold = "all"
        with contextlib.suppress(Exception):  # a config problem is reported at collection
            threshold = self.project().pass_threshold
        try:
            self._save_run_start(threshold)
        except AssertlyError as error:
            raise usage("--assertly-store", str(error)) from None

    def _save_run_start(self, threshold: str) -> None:
        from ..runner import RunOptions
        from ..runner._options import options_dict

        store = self.store()
        assert store is not None and self.run_id is not None
        # Stored as `assertly run` stores its options, so `assertly recheck` reads them back.
        options = RunOptions(
            paths=[str(arg) for arg in self.config.args],
            target=self.target,
            trials=self.trials,
            now=self.now,
            facts=self.facts,
            config_path=self.config_path,
        )
        data = {**options_dict(options, threshold, []), "source": "pytest"}
        with contextlib.suppress(Exception):  # a config problem is reported at collection
            matrix = self.matrix()
            data["target_labels"] = list(matrix.labels) if matrix is not None else []
        store.start_run(self.run_id, now_iso(), data)

    def matrix(self) -> Matrix | None:
        """The config's ``matrix:`` (None with ``--assertly-target``, which replaces it)."""
        from ..runner import RunOptions
        from ..runner._matrix import build_matrix

        return build_matrix(RunOptions(target=self.target), self.project())

    def load(self, path: Path) -> LoadResult:
        """Load one test or workflow file with the project's settings."""
        from ..loading import load_paths

        project = self.project()
        return load_paths(
            [relative(path)],
            sensitive_prefixes=project.sensitive_prefixes,
            project_dir=project.directory or Path(self.config.rootpath),
            shape=project.shape,
            judge_rules=project.judge_rules(),
        )

    # -- what items ask for ----------------------------------------------------------------------
    def register_marker(self, name: str, description: str) -> None:
        """Declare a marker made from a test file, so ``--strict-markers`` accepts it."""
        if name not in self.markers:
            self.markers.add(name)
            self.config.addinivalue_line("markers", f"{name}: {description}")

    def save_trials(self, meta_key: str, records: list[TrialRecord]) -> None:
        """Write finished trials to the run store (when recording)."""
        store = self.store()
        if store is None or self.run_id is None:
            return
        for record in records:
            store.save_trial(self.run_id, meta_key, record.trial, record.to_dict())

    def eval_record(self, suite: EvalSuite) -> EvalRecord:
        """The verdict of a workflow's selected cases (judged once per session and file)."""
        record = self._evals.get(suite.file)
        if record is None:
            from ..loading import EvalSuite as Suite

            chosen = self.selected_cases.get(suite.file)
            cases = [case for case in suite.cases if chosen is None or case.id in chosen]
            record = self.runner().run_eval(Suite(suite.file, suite.threshold, cases))
            self._evals[suite.file] = record
            store = self.store()
            if store is not None and self.run_id is not None:
                from dataclasses import asdict

                store.save_eval(self.run_id, suite.file, asdict(record))
        return record

    # -- the end ---------------------------------------------------------------------------------
    def close(self) -> None:
        """Close targets, the loop and the store (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self.loop.close(self._close_runner() if self._runner is not None else None)
        if self._store is not None:
            self._store.close()
            self._store = None

    async def _close_runner(self) -> None:
        """Clean up the suites still set up (a -x stop, Ctrl-C), then close the targets."""
        import warnings

        from ._reporting import AssertlyWarning

        assert self._runner is not None
        suites = self._runner.suites
        before = len(suites.problems)
        try:
            await suites.close_all()
        finally:
            try:
                await self._runner.close()
            finally:
                self._runner.store.close()  # on the loop's thread, where it was made
        for problem in suites.problems[before:]:
            warnings.warn(f"assertly: {problem}", AssertlyWarning, 2)

    def finish(self) -> None:
        """Controller / lone process: mark the run finished and write the reports."""
        if self.is_worker or self.run_id is None or self.store_path is None:
            return
        from .._exceptions import AssertlyError
        from ..reports import write_report
        from ..runner import load_run
        from ..store import open_store

        try:
            with open_store(self.store_path, redact=self.secrets) as store:
                elapsed = (time.perf_counter() - self.started) * 1000
                store.finish_run(self.run_id, now_iso(), elapsed)
            run = load_run(self.store_path, self.run_id)
        except AssertlyError as error:
            self.messages.append(f"assertly: ERROR: the run store failed: {error}")
            return
        if self._temp_dir is None:
            where = relative(Path(self.store_path))
            self.messages.append(f"assertly: run {self.run_id} stored in {where}")
            self.messages.append(
                f"assertly: render it with: assertly report {self.run_id} --store {where} "
                "-o report.html"
            )
        for report in self.reports:
            try:
                write_report(run, report, redact=self.secrets)
            except OSError as error:
                self.messages.append(f"assertly: ERROR: cannot write {report}: {error}")
            else:
                self.messages.append(f"assertly: wrote {report}")

    def cleanup(self) -> None:
        """Remove the temporary store of a report-only session."""
        if self._temp_dir is not None:
            shutil.rmtree(self._temp_dir, ignore_errors=True)
            self._temp_dir = None


STATE = pytest.StashKey[State]()


def state_of(config: pytest.Config) -> State:
    """The session state of ``config``."""
    return config.stash[STATE]


def relative(path: Path) -> Path:
    """Relative to the working directory when below it, as ``assertly run .`` names files."""
    with contextlib.suppress(ValueError):
        return path.relative_to(Path.cwd())
    return path


def pytest_configure(config: pytest.Config) -> None:
    """Register the static markers and set up the session's state."""
    config.addinivalue_line(
        "markers", "assertly: an item collected from an assertly test file or eval section"
    )
    config.addinivalue_line(
        "markers", "priority(level): the priority of an assertly test (from its file)"
    )
    config.stash[STATE] = State(config)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """pytest-xdist (controller): hand the run store and run id to every worker."""
    state = node.config.stash.get(STATE, None)
    if state is not None and state.run_id is not None:
        node.workerinput["assertly_store"] = state.store_path
        node.workerinput["assertly_run_id"] = state.run_id


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Close targets; the controller finishes the stored run and writes the reports."""
    state = session.config.stash.get(STATE, None)
    if state is None:
        return
    state.close()
    state.finish()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say where the run was stored and which reports were written."""
    state = terminalreporter.config.stash.get(STATE, None)
    if state is None or not state.messages:
        return
    terminalreporter.section("assertly")
    for message in state.messages:
        terminalreporter.write_line(message)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Release what a session that stopped early still holds."""
    state = config.stash.get(STATE, None)
    if state is not None:
        state.close()
        state.cleanup()
