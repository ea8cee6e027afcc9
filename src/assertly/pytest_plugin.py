"""assertly's pytest plugin: agent test files and workflow eval sections as pytest items.

Installed with assertly (entry point ``pytest11``, name ``assertly``); disable it with
``-p no:assertly``. Under the test paths it collects:

* agent test files (``*.tests.yaml``, ``*.tests.yml``, ``*.tests.json``): one item per test,
  node id ``FILE::SUITE::ID``;
* workflow YAML files whose top-level ``eval:`` section has ``cases``: one item per case,
  node id ``FILE::eval::CASE``. Other YAML files are left alone.

Items run through the runner (`Runner.run_trial`, `Runner.run_eval`) with the targets of the
project config (``assertly.yaml`` or ``[tool.assertly]``), on one event loop per session that
lives on a helper thread, so targets keep their connections between items and test code may
call them from sync or async tests alike (the ``assertly_target`` fixture).

Tags become markers (registered on the fly), priorities become ``priority(level=…)`` and
``priority_<level>`` markers, every item has the ``assertly`` marker, ``skip_if`` facts become
skips, and a test's trials run inside its item (verdict by the config's ``pass_threshold``).
``--assertly-store`` writes every trial to a run store so ``assertly report`` renders the
session; ``--assertly-report`` writes a JSON, JUnit XML, Markdown or HTML report at the end.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Coroutine, Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import pytest

from ._terminal import terminal_safe

if TYPE_CHECKING:
    from .engine import CheckResult
    from .loading import ConfigModel, EvalCase, EvalSuite, LoadResult, TestCase
    from .runner import EvalRecord, Runner, TrialRecord
    from .store import RunStore
    from .targets import TargetResponse

__all__ = [
    "AssertlyEvalItem",
    "AssertlyFailure",
    "AssertlyFile",
    "AssertlyLoadErrorItem",
    "AssertlySection",
    "AssertlyTestItem",
    "AssertlyWarning",
    "TargetCaller",
]

T = TypeVar("T")

TEST_SUFFIXES = (".tests.json", ".tests.yaml", ".tests.yml")
WORKFLOW_SUFFIXES = (".yaml", ".yml")
CONFIG_NAMES = ("assertly.yaml", "assertly.yml")
REPORT_SUFFIXES = (".json", ".xml", ".md", ".html")
TARGET_PREFIXES = ("cmd:", "http://", "https://", "py:", "fixtures:")

# Markers pytest or common plugins give a meaning; a tag with one of these names gets a
# ``tag_`` prefix so that a tag called "skip" never skips anything.
RESERVED_MARKERS = frozenset(
    {
        "skip",
        "skipif",
        "xfail",
        "parametrize",
        "usefixtures",
        "filterwarnings",
        "tryfirst",
        "trylast",
        "assertly",
        "priority",
        "and",
        "or",
        "not",
    }
)

_SOURCE_LIMIT = 40  # lines of a test's declaration shown under a failure
_VALUE_LIMIT = 500  # characters of a response shown under a failure


class AssertlyWarning(UserWarning):
    """Something about an assertly test that deserves attention but is not a failure."""


class AssertlyFailure(AssertionError):
    """An assertly test or eval case that did not pass; the message is the whole report."""


# -- options and session state -----------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    """The ``--assertly-*`` options."""
    group = parser.getgroup("assertly", "assertly: agent test files and workflow eval sections")
    group.addoption(
        "--assertly-target",
        metavar="SPEC",
        help="Answer every agent with this target: cmd:<command>, http(s)://…, "
        "py:module:function or fixtures:<file.jsonl> (default: agents: in the config).",
    )
    group.addoption(
        "--assertly-trials",
        type=int,
        metavar="K",
        help="Trials per test (default: the config's; a test's own trials: wins).",
    )
    group.addoption("--assertly-now", metavar="ISO", help="Reference time for date assertions.")
    group.addoption(
        "--assertly-fact",
        action="append",
        default=[],
        metavar="NAME=BOOL",
        help="Set a fact for skip_if (repeatable); overrides the config's facts.",
    )
    group.addoption(
        "--assertly-store",
        metavar="FILE",
        help="Write every trial to this run store; `assertly report RUN_ID --store FILE` "
        "renders the session afterwards.",
    )
    group.addoption(
        "--assertly-report",
        action="append",
        default=[],
        metavar="FILE",
        help="Write an assertly report at the end (repeatable): .json, .xml, .md or .html.",
    )
    group.addoption(
        "--assertly-config",
        metavar="FILE",
        help="The project config (default: assertly.yaml or [tool.assertly] in "
        "pyproject.toml, in the working directory or else the rootdir).",
    )


def _usage(option: str, message: str) -> pytest.UsageError:
    return pytest.UsageError(f"{option}: {message}")


def _parse_facts(values: Iterable[str]) -> dict[str, bool]:
    facts: dict[str, bool] = {}
    for item in values:
        name, sep, value = item.partition("=")
        if not sep or not name or value.lower() not in ("true", "false", "1", "0", "yes", "no"):
            raise _usage("--assertly-fact", f"expected NAME=true|false, got {item!r}")
        facts[name] = value.lower() in ("true", "1", "yes")
    return facts


def _target_option(target: str | None) -> str | None:
    if target is not None and not target.startswith(TARGET_PREFIXES):
        raise _usage(
            "--assertly-target",
            f"unknown target {target!r}: use cmd:<command>, http(s)://…, "
            "py:module:function or fixtures:<file.jsonl>",
        )
    return target


def _now_option(text: str | None) -> datetime | None:
    if not text:
        return None
    from .engine._context import parse_now

    try:
        return parse_now(text)
    except ValueError:
        raise _usage(
            "--assertly-now", f"{text!r} is not an ISO 8601 time such as 2026-01-31T12:00:00Z"
        ) from None


def _report_options(reports: Iterable[str]) -> list[str]:
    for report in reports:
        if not report.lower().endswith(REPORT_SUFFIXES):
            raise _usage(
                "--assertly-report",
                f"{report!r}: the extension picks the format: .json, .xml, .md, .html",
            )
    return list(reports)


class _LoopThread:
    """One event loop for the whole session, running on a helper thread.

    Every coroutine of the session runs here, so targets (HTTP clients, process pools) stay
    bound to one loop, and code that already runs inside an event loop (async tests) can
    still wait for a call.
    """

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def _start(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                ready = threading.Event()

                def main() -> None:
                    asyncio.set_event_loop(loop)
                    ready.set()
                    loop.run_forever()

                thread = threading.Thread(target=main, name="assertly-event-loop", daemon=True)
                thread.start()
                ready.wait()
                self._loop, self._thread = loop, thread
            return self._loop

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` on the session loop and wait for its result."""
        if self._thread is not None and threading.current_thread() is self._thread:
            coroutine.close()
            raise RuntimeError("cannot wait for assertly's event loop from inside it; use acall")
        future = asyncio.run_coroutine_threadsafe(coroutine, self._start())
        try:
            return future.result()
        except BaseException:
            future.cancel()  # Ctrl-C while waiting: stop the call too
            raise

    async def arun(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Await ``coroutine`` run on the session loop, from any other event loop."""
        future = asyncio.run_coroutine_threadsafe(coroutine, self._start())
        return await asyncio.wrap_future(future)

    def close(self, final: Coroutine[Any, Any, Any] | None = None) -> None:
        """Run ``final`` (closing targets), cancel what is left, stop the loop."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            if final is not None:
                final.close()
            return

        async def shutdown() -> None:
            if final is not None:
                await final
            current = asyncio.current_task()
            tasks = [task for task in asyncio.all_tasks() if task is not current]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await loop.shutdown_asyncgens()

        try:
            asyncio.run_coroutine_threadsafe(shutdown(), loop).result(timeout=30)
        except Exception as error:  # closing must not hide the session's own outcome
            warnings.warn(f"assertly: closing targets failed: {error}", AssertlyWarning, 2)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        if not thread.is_alive():
            loop.close()
        self._loop = self._thread = None


class _State:
    """Everything the plugin keeps for one pytest session (one per xdist worker)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        option = config.option
        self.target: str | None = _target_option(option.assertly_target)
        self.trials: int | None = option.assertly_trials
        if self.trials is not None and not 1 <= self.trials <= 10_000:
            raise _usage("--assertly-trials", f"expected 1 to 10000, got {self.trials}")
        self.now: datetime | None = _now_option(option.assertly_now)
        self.facts = _parse_facts(option.assertly_fact)
        self.reports: list[str] = _report_options(option.assertly_report)
        self.config_path: str | None = option.assertly_config
        self.started = time.perf_counter()
        self.secrets: set[str] = set()
        self.loop = _LoopThread()
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
            from .loading import find_config, load_config, load_config_plugins

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
            from .runner import Runner, RunOptions
            from .store import RunStore

            options = RunOptions(
                target=self.target,
                trials=self.trials,
                now=self.now,
                facts=self.facts,
                store_path=self.store_path,
                config_path=self.config_path,
            )
            # Trials are written by the plugin (from this thread); the runner's own store is
            # never touched by run_trial / run_eval, so a private in-memory one will do.
            self._runner = Runner(options, self.project(), RunStore(":memory:"), self.secrets)
        return self._runner

    def fact(self, name: str) -> bool | None:
        """A ``skip_if`` fact as the runner reads it; None when nothing declares it.

        ``--assertly-fact`` first, then the environment (``skip_if: CI`` with ``CI=true``),
        then the config.
        """
        if name in self.facts:
            return self.facts[name]
        value = os.environ.get(name)
        if value is not None:
            return value.strip().lower() in ("1", "true", "yes", "on")
        return self.project().facts.get(name)

    def store(self) -> RunStore | None:
        """The run store trials are written to, when the session records them."""
        if self.store_path is None or self.run_id is None:
            return None
        if self._store is None:
            from .store import RunStore

            self._store = RunStore(self.store_path, redact=self.secrets)
        return self._store

    def _start_run(self, store_option: str | None) -> None:
        from ._exceptions import AssertlyError
        from .store import new_run_id

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
            raise _usage("--assertly-store", str(error)) from None

    def _save_run_start(self, threshold: str) -> None:
        store = self.store()
        assert store is not None and self.run_id is not None
        store.start_run(
            self.run_id,
            _now_iso(),
            {
                "paths": [str(arg) for arg in self.config.args],
                "target": self.target,
                "trials": self.trials,
                "now": self.now.isoformat() if self.now else None,
                "facts": self.facts,
                "pass_threshold": threshold,
                "problems": [],
                "source": "pytest",
            },
        )

    def load(self, path: Path) -> LoadResult:
        """Load one test or workflow file with the project's settings."""
        from .loading import load_paths

        project = self.project()
        return load_paths(
            [_relative(path)],
            sensitive_prefixes=project.sensitive_prefixes,
            project_dir=project.directory or Path(self.config.rootpath),
            shape=project.shape,
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
            from .loading import EvalSuite as Suite

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
        assert self._runner is not None
        suites = self._runner.suites
        before = len(suites.problems)
        try:
            await suites.close_all()
        finally:
            await self._runner.close()
        for problem in suites.problems[before:]:
            warnings.warn(f"assertly: {problem}", AssertlyWarning, 2)

    def finish(self) -> None:
        """Controller / lone process: mark the run finished and write the reports."""
        if self.is_worker or self.run_id is None or self.store_path is None:
            return
        from ._exceptions import AssertlyError
        from .reports import write_report
        from .runner import load_run
        from .store import RunStore

        try:
            store = RunStore(self.store_path, redact=self.secrets)
            try:
                elapsed = (time.perf_counter() - self.started) * 1000
                store.finish_run(self.run_id, _now_iso(), elapsed)
            finally:
                store.close()
            run = load_run(self.store_path, self.run_id)
        except AssertlyError as error:
            self.messages.append(f"assertly: ERROR: the run store failed: {error}")
            return
        if self._temp_dir is None:
            where = _relative(Path(self.store_path))
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


_STATE = pytest.StashKey[_State]()


def _state(config: pytest.Config) -> _State:
    return config.stash[_STATE]


def _relative(path: Path) -> Path:
    """Relative to the working directory when below it, as ``assertly run .`` names files."""
    with contextlib.suppress(ValueError):
        return path.relative_to(Path.cwd())
    return path


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# -- hooks -------------------------------------------------------------------------------------


def pytest_configure(config: pytest.Config) -> None:
    """Register the static markers and set up the session's state."""
    config.addinivalue_line(
        "markers", "assertly: an item collected from an assertly test file or eval section"
    )
    config.addinivalue_line(
        "markers", "priority(level): the priority of an assertly test (from its file)"
    )
    config.stash[_STATE] = _State(config)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """pytest-xdist (controller): hand the run store and run id to every worker."""
    state = node.config.stash.get(_STATE, None)
    if state is not None and state.run_id is not None:
        node.workerinput["assertly_store"] = state.store_path
        node.workerinput["assertly_run_id"] = state.run_id


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> AssertlyFile | None:
    """Agent test files and workflows with an ``eval:`` section become `AssertlyFile`s."""
    if is_assertly_file(file_path):
        return AssertlyFile.from_parent(parent, path=file_path)
    return None


def pytest_collection_finish(session: pytest.Session) -> None:
    """Remember the selected eval cases; when recording, store the selected tests' metadata."""
    state = session.config.stash.get(_STATE, None)
    if state is None:
        return
    metas: list[dict[str, Any]] = []
    for item in session.items:
        if isinstance(item, AssertlyEvalItem):
            state.selected_cases.setdefault(item.suite.file, []).append(item.case.id)
        elif isinstance(item, AssertlyTestItem | AssertlyLoadErrorItem):
            metas.append(item.meta())
    store = state.store()
    if store is not None and state.run_id is not None and metas:
        store.save_tests(state.run_id, metas)
        # Tests a skip_if fact skips never reach setup: store their skipped trial now.
        for item in session.items:
            record = item.skipped_record() if isinstance(item, AssertlyTestItem) else None
            if record is not None:
                state.save_trials(record.test_key, [record])


@pytest.hookimpl(trylast=True)  # after pytest's own teardown, which must never be skipped
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """After a suite's last test in a row: its ``cleanup`` hooks (when it was set up).

    Like a fixture's teardown: a cleanup that fails is an error at the teardown of that test.
    """
    if not isinstance(item, AssertlyTestItem) or item.test.suite_hooks is None:
        return
    key = item.test.suite_hooks.key
    following = nextitem.test.suite_hooks if isinstance(nextitem, AssertlyTestItem) else None
    if following is not None and following.key == key:
        return
    state = _state(item.config)
    suites = state.runner().suites
    before = len(suites.problems)
    state.loop.run(suites.cleanup(key))
    failed = suites.problems[before:]
    if failed:
        pytest.fail("\n".join(failed), pytrace=False)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Close targets; the controller finishes the stored run and writes the reports."""
    state = session.config.stash.get(_STATE, None)
    if state is None:
        return
    state.close()
    state.finish()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say where the run was stored and which reports were written."""
    state = terminalreporter.config.stash.get(_STATE, None)
    if state is None or not state.messages:
        return
    terminalreporter.section("assertly")
    for message in state.messages:
        terminalreporter.write_line(message)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Release what a session that stopped early still holds."""
    state = config.stash.get(_STATE, None)
    if state is not None:
        state.close()
        state.cleanup()


# -- collection --------------------------------------------------------------------------------


def is_assertly_file(path: Path) -> bool:
    """An agent test file, or a YAML workflow whose top-level ``eval:`` has ``cases``.

    Any other YAML file (configs, CI files, ML configs with an ``eval:`` mapping of their own)
    is left alone, so a project full of plain YAML collects as before.
    """
    name = path.name.lower()
    if name.endswith(TEST_SUFFIXES):
        return True
    if not name.endswith(WORKFLOW_SUFFIXES) or name in CONFIG_NAMES:
        return False
    try:
        with path.open("rb") as handle:
            head = handle.read(65536).decode("utf-8", errors="replace")
        if "\neval:" not in "\n" + head:
            return False
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    from ._exceptions import ConfigError
    from .loading._source import parse_yaml

    try:
        data = parse_yaml(text, str(path))[0]  # safe, bounded nesting and aliases
    except ConfigError:
        # Broken YAML: ours if it reads like an eval section, so the problem gets reported.
        return re.search(r"^\s+cases\s*:", text, re.MULTILINE) is not None
    section = data.get("eval") if isinstance(data, dict) else None
    return isinstance(section, dict) and "cases" in section


class AssertlyFile(pytest.File):
    """An agent test file or a workflow: its suites, its eval section, its load problems."""

    _lines: list[str] | None = None

    def source_lines(self) -> list[str]:
        """The file's lines (read once, for showing where a test was declared)."""
        if self._lines is None:
            try:
                self._lines = self.path.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                self._lines = []
        return self._lines

    def collect(self) -> Iterator[pytest.Item | pytest.Collector]:
        """Suites of tests, the eval section, and one error item per file problem."""
        from ._exceptions import ConfigError

        state = _state(self.config)
        try:
            loaded = state.load(self.path)
        except ConfigError as error:
            raise self.CollectError(f"assertly configuration error: {error}") from None
        if loaded.file_problems:
            yield AssertlyLoadErrorItem.from_parent(
                self, name="load", problems=[str(problem) for problem in loaded.file_problems]
            )
        starts = sorted(
            {test.line for test in loaded.tests if test.line}
            | {case.line for suite in loaded.evals for case in suite.cases if case.line}
        )
        suites: dict[str, list[TestCase]] = {}
        for test in loaded.tests:
            suites.setdefault(test.suite, []).append(test)
        for dataset in loaded.datasets:  # pytest-sized datasets: every line is an item
            suites.setdefault(dataset.suite, []).extend(dataset.cases())
        for name, tests in suites.items():
            yield AssertlySection.from_parent(self, name=name, tests=tests, starts=starts)
        for suite in loaded.evals:
            yield AssertlySection.from_parent(self, name="eval", suite=suite, starts=starts)


class AssertlySection(pytest.Collector):
    """A test suite of an agent test file, or a workflow's ``eval`` section."""

    def __init__(
        self,
        *,
        tests: list[TestCase] | None = None,
        suite: EvalSuite | None = None,
        starts: list[int],
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.tests = tests or []
        self.suite = suite
        self.starts = starts

    def collect(self) -> Iterator[pytest.Item]:
        """One item per test (or dataset line), or per eval case."""
        names: set[str] = set()
        for test in self.tests:
            if test.case_key is not None:  # a dataset line; two lines may share an id
                name = test.id if test.id not in names else f"{test.id}@{test.line}"
                names.add(name)
                yield AssertlyDatasetItem.from_parent(self, name=name, test=test)
                continue
            yield AssertlyTestItem.from_parent(
                self, name=test.id, test=test, end=_next_start(self.starts, test.line)
            )
        if self.suite is not None:
            for case in self.suite.cases:
                yield AssertlyEvalItem.from_parent(
                    self,
                    name=case.id,
                    suite=self.suite,
                    case=case,
                    end=_next_start(self.starts, case.line),
                )


def _next_start(starts: list[int], line: int | None) -> int | None:
    if line is None:
        return None
    return next((start for start in starts if start > line), None)


def _marker_name(raw: str) -> str:
    name = re.sub(r"[^\w.-]", "_", str(raw).strip()) or "_"
    if name.startswith("_") or name.lower() in RESERVED_MARKERS:
        name = "tag_" + name.lstrip("_")
    return name


class _AssertlyItem(pytest.Item):
    """What test and eval-case items share: source lines and failure reports."""

    declared_line: int | None = None
    declared_end: int | None = None

    def _file(self) -> AssertlyFile | None:
        node = self.getparent(AssertlyFile)
        return node if isinstance(node, AssertlyFile) else None

    def source(self) -> list[str]:
        """The lines of the file that declared this item, numbered, tavern style."""
        node = self._file()
        line = self.declared_line
        if node is None or not line:
            return []
        lines = node.source_lines()
        if line > len(lines):
            return []
        stop = len(lines) if self.declared_end is None else min(len(lines), self.declared_end - 1)
        first = lines[line - 1]
        base = _item_indent(first)
        chosen = [first]
        for text in lines[line:stop]:
            if text.strip() and len(text) - len(text.lstrip()) < base:
                break  # out of this item: the next suite, section or top-level key
            chosen.append(text)
        while len(chosen) > 1 and not chosen[-1].strip():
            chosen.pop()
        more = len(chosen) - _SOURCE_LIMIT
        chosen = chosen[:_SOURCE_LIMIT]
        width = len(str(line + len(chosen) - 1))
        shown = [f"{number:>{width}} | {text}" for number, text in enumerate(chosen, start=line)]
        if more > 0:
            shown.append(f"{'':>{width}} | … {more} more lines")
        return shown

    def _declared_at(self) -> str:
        node = self._file()
        return f"{node.nodeid if node is not None else self.path.name}:{self.declared_line}"

    def _with_source(self, lines: list[str]) -> str:
        source = self.source()
        if source:
            lines = [*lines, "", f"{self._declared_at()}: declared here", *source]
        return "\n".join(lines)

    def _fail_setup(self, problems: list[str]) -> NoReturn:
        __tracebackhide__ = True
        text = [f"cannot run: {problem}" for problem in problems]
        pytest.fail(self._with_source(text), pytrace=False)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        """An assertly verdict is shown as its report, with no Python traceback."""
        if isinstance(excinfo.value, AssertlyFailure):
            # Each line inert: the report quotes the agent's output.
            return "\n".join(map(terminal_safe, str(excinfo.value).split("\n")))
        return super().repr_failure(excinfo, style)


def _item_indent(line: str) -> int:
    """Column where a test's mapping starts (after ``- `` in YAML, at ``{`` in JSON)."""
    indent = len(line) - len(line.lstrip())
    rest = line[indent:]
    if rest.startswith("- "):
        indent += 1 + len(rest[1:]) - len(rest[1:].lstrip())
    return indent


class AssertlyTestItem(_AssertlyItem):
    """One test of an agent test file: all its trials, judged by the runner."""

    def __init__(self, *, test: TestCase, end: int | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.test = test
        self.declared_line = test.line
        self.declared_end = end
        self.records: list[TrialRecord] = []
        state = _state(self.config)
        self.add_marker("assertly")
        for tag in test.tags:
            marker = _marker_name(tag)
            state.register_marker(marker, f"assertly tag {tag!r}")
            self.add_marker(marker)
        if test.priority is not None:
            self.add_marker(pytest.mark.priority(level=test.priority))
            marker = _marker_name(f"priority_{test.priority}")
            state.register_marker(marker, f"assertly priority {test.priority!r}")
            self.add_marker(marker)
        self.extra_keyword_matches.update({test.name, test.agent, *test.tags})
        # A skip_if fact that holds skips the test the way a skip marker does (pytest then
        # reports the test's own file and line); a test that cannot load is an error first.
        self.skip_reason: str | None = None
        if test.skip_if and not test.problems and state.fact(test.skip_if):
            self.skip_reason = f"skip_if: {test.skip_if} is true"
            self.add_marker(pytest.mark.skip(reason=self.skip_reason))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        """Where the test is: its file and line, and ``SUITE::ID``."""
        line = self.test.line - 1 if self.test.line else None
        return self.path, line, f"{self.test.suite}::{self.test.id}"

    def meta(self) -> dict[str, Any]:
        """The test's metadata as the run store keeps it."""
        from .runner._run import input_meta

        test = self.test
        threshold = test.pass_threshold
        if threshold is None:
            with contextlib.suppress(Exception):  # a config problem is reported elsewhere
                threshold = _state(self.config).project().pass_threshold
        return {
            "key": test.key,
            "id": test.id,
            "name": test.name,
            "suite": test.suite,
            "file": test.file,
            "line": test.line,
            "tags": test.tags,
            "priority": test.priority,
            "description": test.description,
            "agent": test.agent,
            "pass_threshold": threshold or "all",
            **input_meta(test),
        }

    def skipped_record(self) -> TrialRecord | None:
        """The stored trial of a test its ``skip_if`` fact skips (None when it runs)."""
        from .runner import TrialRecord

        if self.skip_reason is None:
            return None
        return TrialRecord(self.test.key, 1, "skipped", 0.0, reason=self.skip_reason)

    def setup(self) -> None:
        """Load problems are errors; an undeclared ``skip_if`` fact is false, with a warning."""
        __tracebackhide__ = True
        from .runner import TrialRecord

        state = _state(self.config)
        test = self.test
        if test.problems:
            problems = [str(problem) for problem in test.problems]
            state.save_trials(
                test.key, [TrialRecord(test.key, 1, "error", 0.0, error="; ".join(problems))]
            )
            self._fail_setup(problems)
        if test.skip_if and state.fact(test.skip_if) is None:
            warnings.warn(
                f"{test.id}: fact '{test.skip_if}' is not declared; treated as false",
                AssertlyWarning,
                stacklevel=1,
            )

    def runtest(self) -> None:
        """Run every trial on the session loop; fail unless the pass threshold is met."""
        from .runner import test_status

        state = _state(self.config)
        runner = state.runner()
        trials = runner.trials_of(self.test)
        self.records = state.loop.run(_run_trials(runner, self.test, trials))
        state.save_trials(self.test.key, self.records)
        threshold = runner.threshold_of(self.test)
        status = test_status(self.records, threshold)
        passes = sum(1 for record in self.records if record.status == "passed")
        scores = [record.score for record in self.records if record.score is not None]
        self.user_properties.append(("assertly_status", status))
        self.user_properties.append(("assertly_trials", f"{passes}/{len(self.records)}"))
        if scores:
            self.user_properties.append(("assertly_score", f"{sum(scores) / len(scores):.4f}"))
        if status == "passed":
            if passes < len(self.records):
                warnings.warn(
                    f"{self.test.id} is flaky: {passes} of {len(self.records)} trials passed",
                    AssertlyWarning,
                    stacklevel=1,
                )
            return
        if status == "skipped":
            reasons = {record.reason for record in self.records if record.reason}
            pytest.skip("; ".join(sorted(reasons)) or "every trial was skipped")
        raise AssertlyFailure(self._report(status, threshold))

    def _report(self, status: str, threshold: str) -> str:
        test = self.test
        records = self.records
        passes = sum(1 for record in records if record.status == "passed")
        first = next(record for record in records if record.status in ("failed", "error"))
        lines = [f"{test.id} {status}: {_headline(first)}"]
        about = f"assertly test {test.suite}::{test.id} of agent {test.agent}"
        if len(records) > 1:
            about += f": {passes} of {len(records)} trials passed (pass threshold: {threshold})"
        lines.append(about)
        seen: dict[str, int] = {}
        for record in records:
            label = f"trial {record.trial}: {record.status}"
            if record.score is not None and record.status != "skipped":
                label += f" (score {record.score:.4g})"
            if len(records) > 1:
                lines.append(label)
            if record.status in ("passed", "skipped"):
                continue
            body = _trial_lines(record, single_step=len(test.steps) == 1)
            key = "\n".join(body)
            if key in seen and len(records) > 1:
                lines[-1] += f", the same as trial {seen[key]}"
                continue
            seen.setdefault(key, record.trial)
            pad = "  " if len(records) > 1 else ""
            lines.extend(pad + line if line else line for line in body)
        return self._with_source(lines)


def _one_line(text: str) -> str:
    """A message on one line: its first and last lines (a traceback's cause comes last)."""
    parts = [part.strip() for part in text.strip().splitlines() if part.strip()]
    if len(parts) > 2:
        return f"{parts[0]} … {parts[-1]}"
    return " / ".join(parts)


def _headline(record: TrialRecord) -> str:
    """The first reason a trial did not pass, on one line (pytest's short summary shows it)."""
    if record.error:
        return _one_line(record.error)
    if record.failures:
        failure = record.failures[0]
        more = len(record.failures) - 1
        text = _one_line(f"{failure.get('assertion')}: {failure.get('message')}")
        return text + (f" (and {more} more)" if more else "")
    return f"the trial ended {record.status}"


async def _run_trials(runner: Runner, test: TestCase, count: int) -> list[TrialRecord]:
    pool = asyncio.Semaphore(runner.concurrency)

    async def one(number: int) -> TrialRecord:
        async with pool:
            return await runner.run_trial(test, number)

    return list(await asyncio.gather(*(one(number) for number in range(1, count + 1))))


def _short(value: Any) -> str:
    from .engine._values import dumps

    text = value.rstrip() if isinstance(value, str) else dumps(value)
    return text if len(text) <= _VALUE_LIMIT else text[: _VALUE_LIMIT - 1] + "…"


def _check_from_dict(data: dict[str, Any]) -> CheckResult:
    """Rebuild a stored check (``CheckResult.to_dict``) so it renders like ``assertly check``."""
    from .engine import AssertionResult, CheckResult, Outcome

    def result(item: dict[str, Any]) -> AssertionResult:
        return AssertionResult(
            str(item.get("assertion", "?")),
            Outcome(item.get("outcome", "error")),
            float(item.get("score", 0.0)),
            str(item.get("message") or ""),
            item.get("path"),
            item.get("expected"),
            item.get("actual"),
            [result(child) for child in item.get("children", [])],
            item.get("details"),
        )

    results = [result(item) for item in data.get("results", [])]
    weights = tuple(
        float((item.get("details") or {}).get("weight", 1.0)) for item in data.get("results", [])
    )
    return CheckResult(
        Outcome(data.get("outcome", "failed" if not data.get("passed") else "passed")),
        float(data.get("score", 0.0)),
        results,
        data.get("named_scores"),
        data.get("threshold"),
        data.get("extracted"),
        weights,
    )


def _check_lines(data: dict[str, Any]) -> list[str]:
    from .reports._check_text import render_check

    return [line for line, _ in render_check(_check_from_dict(data))]


def _trial_lines(record: TrialRecord, *, single_step: bool) -> list[str]:
    """A failed or errored trial: its error, then every judged step's checks and response."""
    lines: list[str] = []
    if record.error:
        lines.append("ERROR: " + record.error.strip().replace("\n", "\n  "))
    for step in record.steps:
        pad = "" if single_step else "  "
        if not single_step:
            lines.append(f"step {step.name}: {step.status}")
        if step.status == "passed" and not single_step:
            continue
        for check in step.checks:
            lines.extend(pad + line for line in _check_lines(check))
        if step.checks or step.response is not None:
            lines.append(f"{pad}response: {_short(step.response)}")
    return lines


class AssertlyDatasetItem(AssertlyTestItem):
    """One line of a dataset suite; its failures show that line of the JSON Lines file."""

    def source(self) -> list[str]:
        """The dataset line, numbered (long lines cut)."""
        import linecache

        line = self.test.line or 0
        text = linecache.getline(self.test.file, line).rstrip("\n")
        if not text:
            return []
        return [f"{line} | {text[:500]}{'…' if len(text) > 500 else ''}"]

    def _declared_at(self) -> str:
        return f"{self.test.file}:{self.test.line}"

    def reportinfo(self) -> tuple[Path, int | None, str]:
        """Where the case is: the dataset file and line."""
        line = self.test.line - 1 if self.test.line else None
        return Path(self.test.file), line, f"{self.test.suite}::{self.test.id}"


class AssertlyEvalItem(_AssertlyItem):
    """One case of a workflow's eval section: its recorded block outputs, judged."""

    def __init__(
        self, *, suite: EvalSuite, case: EvalCase, end: int | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.suite = suite
        self.case = case
        self.declared_line = case.line
        self.declared_end = end
        self.add_marker("assertly")
        if case.description:
            self.extra_keyword_matches.add(case.description)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        """Where the case is: its file and line, and ``eval::ID``."""
        line = self.case.line - 1 if self.case.line else None
        return self.path, line, f"eval::{self.case.id}"

    def setup(self) -> None:
        """A case with load problems is an error."""
        __tracebackhide__ = True
        if self.case.problems:
            self._fail_setup([str(problem) for problem in self.case.problems])

    def runtest(self) -> None:
        """Judge the case; a failed case passes when its suite still meets its threshold."""
        record = _state(self.config).eval_record(self.suite)
        case = next(c for c in record.cases if c.id == self.case.id)
        self.user_properties.append(("assertly_status", case.status))
        self.user_properties.append(("assertly_score", f"{case.score:.4f}"))
        if case.status == "passed":
            return
        suite_line = (
            f"suite score {record.score:.4g}, threshold {record.threshold:g}: "
            f"the suite {'passes' if record.passed else 'fails'}"
        )
        if case.status == "failed" and record.passed:
            warnings.warn(
                f"eval case {case.id} failed (score {case.score:.4g}) but its {suite_line}",
                AssertlyWarning,
                stacklevel=1,
            )
            return
        reasons = [
            f"{block_id}: {result.get('assertion')}: {result.get('message')}"
            for block_id, data in case.blocks.items()
            for result in data.get("results", [])
            if not result.get("passed")
        ]
        headline = _one_line(case.error or (reasons[0] if reasons else f"score {case.score:.4g}"))
        if len(reasons) > 1:
            headline += f" (and {len(reasons) - 1} more)"
        lines = [
            f"{case.id} {case.status}: {headline}",
            f"assertly eval case {case.id} (score {case.score:.4g}; {suite_line})",
        ]
        if case.error:
            lines.append(f"ERROR: {case.error}")
        for block_id, data in case.blocks.items():
            check = _check_from_dict(data)
            if check.passed:
                lines.append(f"block {block_id}: passed")
                continue
            lines.append(f"block {block_id}:")
            lines.extend("  " + line for line in _check_lines(data))
            output = self.case.blocks.get(block_id, (None,))[0]
            lines.append(f"  output: {_short(output)}")
        raise AssertlyFailure(self._with_source(lines))


class AssertlyLoadErrorItem(_AssertlyItem):
    """A file that could not be loaded (unreadable, invalid YAML/JSON, wrong frame)."""

    def __init__(self, *, problems: list[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.problems = problems
        self.add_marker("assertly")

    @property
    def key(self) -> str:
        """The key of this pseudo-test in the run store."""
        return f"{_relative(self.path)}::file::load"

    def reportinfo(self) -> tuple[Path, int | None, str]:
        """The file itself."""
        return self.path, None, "load"

    def meta(self) -> dict[str, Any]:
        """Stored as an errored test, so reports show the file's problems."""
        return {
            "key": self.key,
            "id": "load",
            "name": f"load {self.path.name}",
            "suite": "file",
            "file": str(_relative(self.path)),
            "line": None,
            "tags": [],
            "priority": None,
            "description": None,
            "agent": "",
        }

    def setup(self) -> None:
        """Always an error: the file's problems."""
        __tracebackhide__ = True
        from .runner import TrialRecord

        _state(self.config).save_trials(
            self.key, [TrialRecord(self.key, 1, "error", 0.0, error="; ".join(self.problems))]
        )
        pytest.fail(
            "\n".join(f"cannot load: {problem}" for problem in self.problems),
            pytrace=False,
        )

    def runtest(self) -> None:
        """Never reached: setup always fails."""


# -- fixtures ----------------------------------------------------------------------------------


class TargetCaller:
    """Calls the project's agents from test code, through the configured targets.

    ``caller(agent, input)`` waits for the response (from sync tests, and from async ones
    too: the call runs on assertly's own event loop thread); ``await caller.acall(agent,
    input)`` does not block an async test's loop. ``--assertly-target`` overrides the config.
    """

    def __init__(self, state: _State) -> None:
        self._state = state

    def __call__(
        self, agent: str, payload: Any, *, timeout_s: float | None = None
    ) -> TargetResponse:
        """Call ``agent`` with ``payload`` and return its response.

        Raises:
            TargetError: No target is configured for ``agent``, or the call failed.
        """
        runner = self._state.runner()
        return self._state.loop.run(_call_target(runner, agent, payload, timeout_s))

    async def acall(
        self, agent: str, payload: Any, *, timeout_s: float | None = None
    ) -> TargetResponse:
        """`__call__` for async code."""
        runner = self._state.runner()
        return await self._state.loop.arun(_call_target(runner, agent, payload, timeout_s))


async def _call_target(
    runner: Runner, agent: str, payload: Any, timeout_s: float | None
) -> TargetResponse:
    from dataclasses import replace

    from ._exceptions import TargetError

    target = runner.target_for(agent)
    if isinstance(target, TargetError):
        raise target
    timeout = timeout_s or getattr(target, "timeout_s", None) or runner.timeout_s
    started = time.perf_counter()
    response = await target.call(payload, timeout)
    if response.latency_ms is None:
        response = replace(response, latency_ms=(time.perf_counter() - started) * 1000)
    return response


@pytest.fixture(scope="session")
def assertly_target(pytestconfig: pytest.Config) -> TargetCaller:
    """A `TargetCaller` for the project's agents.

    ``response = assertly_target("search", {"q": "x"})`` returns the target's response
    (``.output``, ``.model``, ``.cost_usd``, ``.latency_ms``);
    ``assertly_check(response, expectation)`` judges it with its cost and latency.
    """
    return TargetCaller(_state(pytestconfig))


@pytest.fixture(scope="session")
def assertly_check() -> Callable[..., CheckResult]:
    """`assertly.assert_response`: ``assertly_check(response, expectation)``."""
    from ._assert import assert_response

    return assert_response
