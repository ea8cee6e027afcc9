"""Collection: which files are assertly's, and the pytest items made from them.

Agent test files give one item per test (``FILE::SUITE::ID``; a pytest-sized dataset, one per
line), workflows one item per eval case (``FILE::eval::CASE``), and a file that cannot be
loaded one error item. Tags become markers, a ``skip_if`` fact that holds a skip, and a
test's trials run inside its item on the session's event loop.
"""

from __future__ import annotations

import asyncio
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

from .._records import TrialRecord as _TrialRecord
from .._secrets import redact_text, redact_value
from .._terminal import terminal_safe
from ._reporting import AssertlyFailure, AssertlyWarning, eval_failure_lines, failure_lines
from ._session import STATE, relative, state_of

if TYPE_CHECKING:
    from ..loading import EvalCase, EvalSuite, TestCase
    from ..runner import Runner, TrialRecord

__all__ = [
    "AssertlyDatasetItem",
    "AssertlyEvalItem",
    "AssertlyFile",
    "AssertlyLoadErrorItem",
    "AssertlySection",
    "AssertlyTestItem",
    "is_assertly_file",
    "pytest_collect_file",
    "pytest_collection_finish",
]

TEST_SUFFIXES = (".tests.json", ".tests.yaml", ".tests.yml")
WORKFLOW_SUFFIXES = (".yaml", ".yml")
CONFIG_NAMES = ("assertly.yaml", "assertly.yml")

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


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> AssertlyFile | None:
    """Agent test files and workflows with an ``eval:`` section become `AssertlyFile`s."""
    if is_assertly_file(file_path):
        return AssertlyFile.from_parent(parent, path=file_path)
    return None


def pytest_collection_finish(session: pytest.Session) -> None:
    """Remember the selected eval cases; when recording, store the selected tests' metadata."""
    state = session.config.stash.get(STATE, None)
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
    state = state_of(item.config)
    suites = state.runner().suites
    before = len(suites.problems)
    state.loop.run(suites.cleanup(key))
    failed = suites.problems[before:]
    if failed:
        pytest.fail("\n".join(failed), pytrace=False)


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
    from .._exceptions import ConfigError
    from ..loading._source import parse_yaml

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
        from .._exceptions import ConfigError

        state = state_of(self.config)
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
        # A matrix of the config: one item per test and target, named `id[label]` as pytest
        # names a parametrized test's items.
        matrix = state.matrix()
        for test in loaded.tests:
            suites.setdefault(test.suite, []).extend(matrix.cells(test) if matrix else [test])
        for dataset in loaded.datasets:  # pytest-sized datasets: every line is an item
            for case in dataset.cases():
                suites.setdefault(dataset.suite, []).extend(
                    matrix.cells(case) if matrix else [case]
                )
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
        first_line: dict[str, str] = {}  # a dataset id -> the key of the first line with it
        for test in self.tests:
            if test.case_key is not None:  # a dataset line; two lines may share an id
                first = first_line.setdefault(test.id, test.case_key)
                name = test.id if first == test.case_key else f"{test.id}@{test.line}"
                name = name if test.target is None else f"{name}[{test.target}]"
                yield AssertlyDatasetItem.from_parent(self, name=name, test=test)
                continue
            name = test.id if test.target is None else f"{test.id}[{test.target}]"
            yield AssertlyTestItem.from_parent(
                self, name=name, test=test, end=_next_start(self.starts, test.line)
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
        state = state_of(self.config)
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
        import contextlib

        from ..runner._support import test_meta

        test = self.test
        threshold = test.pass_threshold
        definition = None
        with contextlib.suppress(Exception):  # a config problem is reported elsewhere
            if threshold is None:
                threshold = state_of(self.config).project().pass_threshold
            # As `assertly run` stores it, so `assertly diff` sees a redefined test.
            definition = state_of(self.config).runner().definition_of(test)
        return test_meta(test, definition, threshold or "all")

    def skipped_record(self) -> TrialRecord | None:
        """The stored trial of a test its ``skip_if`` fact skips (None when it runs)."""
        from ..runner import TrialRecord

        if self.skip_reason is None:
            return None
        return TrialRecord(self.test.key, 1, "skipped", 0.0, reason=self.skip_reason)

    def setup(self) -> None:
        """Load problems are errors; an undeclared ``skip_if`` fact is false, with a warning."""
        __tracebackhide__ = True
        from ..runner import TrialRecord

        state = state_of(self.config)
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
        from ..runner import test_status

        state = state_of(self.config)
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
        # Redacted before the lines clip a response: a spelling cut at the clip ("s3cr…\\u…")
        # is no longer a whole spelling (red team of issue 29, probe "pytest clipped response").
        records = [
            _TrialRecord.from_dict(redact_value(record.to_dict(), state.secrets))
            for record in self.records
        ]
        lines = failure_lines(self.test, records, status, threshold)
        # The report quotes the agent's output, which may echo a secret it was given.
        raise AssertlyFailure(redact_text(self._with_source(lines), state.secrets))


async def _run_trials(runner: Runner, test: TestCase, count: int) -> list[TrialRecord]:
    pool = asyncio.Semaphore(runner.concurrency)

    async def one(number: int) -> TrialRecord:
        async with pool:
            return await runner.run_trial(test, number)

    return list(await asyncio.gather(*(one(number) for number in range(1, count + 1))))


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
        record = state_of(self.config).eval_record(self.suite)
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
        lines = eval_failure_lines(self.case, case, record, suite_line)
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
        return f"{relative(self.path)}::file::load"

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
            "file": str(relative(self.path)),
            "line": None,
            "tags": [],
            "priority": None,
            "description": None,
            "agent": "",
        }

    def setup(self) -> None:
        """Always an error: the file's problems."""
        __tracebackhide__ = True
        from ..runner import TrialRecord

        state_of(self.config).save_trials(
            self.key, [TrialRecord(self.key, 1, "error", 0.0, error="; ".join(self.problems))]
        )
        pytest.fail(
            "\n".join(f"cannot load: {problem}" for problem in self.problems),
            pytrace=False,
        )

    def runtest(self) -> None:
        """Never reached: setup always fails."""
