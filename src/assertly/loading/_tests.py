"""Turn files into runnable tests: agent test files and workflow eval sections.

Loading never stops at the first problem. A file that cannot be parsed is reported and
skipped; a test with a problem (unknown assertion, bad regex, wrong type …) becomes a test that
ends ``error`` with the message, and the file's other tests still run.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._exceptions import ConfigError, Problem
from ..engine import Expectation
from ..engine import compile as compile_expectation
from ..engine.graded._judging import FileJudgeRules
from ._cases import EvalCase, EvalSuite, Step, SuiteHooks, TestCase, definition_digest
from ._compiling import LoadContext as _LoadContext
from ._compiling import compile_checks as _compile_checks
from ._compiling import compile_test_checks
from ._conversations import conversation_shape_problems, fill_conversation
from ._datasets import Dataset, has_lines, inside_project
from ._discover import discover
from ._models import (
    AgentTestFileModel,
    EvalCaseModel,
    StepModel,
    SuiteModel,
    TestModel,
    WorkflowModel,
    id_problem,
)
from ._problems import Label
from ._problems import located as _located
from ._problems import validate as _validate
from ._references import CaseCompiler, has_references
from ._source import Key, Source, read_source

__all__ = [
    "Dataset",
    "EvalCase",
    "EvalSuite",
    "LoadResult",
    "Step",
    "TestCase",
    "discover",
    "load_paths",
]


@dataclass(slots=True)
class LoadResult:
    """Everything loaded from the paths given, and every problem found on the way."""

    tests: list[TestCase] = field(default_factory=list)
    evals: list[EvalSuite] = field(default_factory=list)
    datasets: list[Dataset] = field(default_factory=list)
    file_problems: list[Problem] = field(default_factory=list)

    @property
    def problems(self) -> list[Problem]:
        """File problems and the problems of every test and eval case.

        A dataset's lines are not read here (they are read as they run); see `Dataset.cases`.
        """
        found = list(self.file_problems)
        for test in self.tests:
            found.extend(test.problems)
        for suite in self.evals:
            for case in suite.cases:
                found.extend(case.problems)
        return found


def _as_list(value: str | list[str] | None) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def _load_agent_file(source: Source, result: LoadResult, context: _LoadContext) -> None:
    model, problems = _validate(AgentTestFileModel, source.data, source, ())
    if model is None:
        # Without a valid frame (agent, test_suites) no test can be located reliably.
        result.file_problems.extend(problems)
        return
    file = str(source.path)
    seen: dict[str, str] = {}
    for suite_key, suite in model.test_suites.items():
        if "::" in suite_key:
            # `::` separates file, suite and id in a test's key: "a" + "b::c" and "a::b" + "c"
            # would be one test, and one would silently overwrite the other.
            result.file_problems.append(
                Problem(
                    source.where(("test_suites", suite_key)),
                    f"suite name '{suite_key}' contains '::', which separates file, suite and "
                    "test id in a test's key; rename the suite",
                )
            )
            continue
        if (bad_name := id_problem(suite_key)) is not None:
            # A lone surrogate (or a control character) in a test's key: the store cannot
            # write it (red team, issue 35: the run stopped with no test judged).
            message = f"suite name {suite_key!a}: {bad_name.replace('an id', 'it')}"
            result.file_problems.append(Problem(source.where(("test_suites", suite_key)), message))
            continue
        if not _suite_shape_ok(source, suite_key, suite, result):
            continue
        # The nearest level wins, field by field: config, file, suite, test.
        suite_shape = {**context.shape, **(model.shape or {}), **(suite.shape or {})}
        hooks = _suite_hooks(file, suite_key, suite, source.where(("test_suites", suite_key)))
        if suite.dataset is not None:
            _add_dataset(source, model.agent, suite_key, suite, result, context, suite_shape, hooks)
            continue
        for index, raw in enumerate(suite.tests or []):
            key: Key = ("test_suites", suite_key, "tests", index)
            raw_id = raw.get("id") if isinstance(raw, dict) else None
            test_id = str(raw_id) if raw_id else f"{suite_key}[{index}]"
            if id_problem(test_id):  # refused by the model; named by its place meanwhile
                test_id = f"{suite_key}[{index}]"
            test_model, problems = _validate(TestModel, raw, source, key, (test_id, len(key)))
            line = source.line(key)
            test = TestCase(
                id=test_id,
                name=str(raw.get("name") or test_id) if isinstance(raw, dict) else test_id,
                suite=suite_key,
                file=file,
                agent=model.agent,
                steps=[],
                line=line,
                priority=suite.priority,
                tags=list(suite.tags),
                pass_threshold=suite.pass_threshold,
                suite_hooks=hooks,
            )
            test.problems.extend(problems)
            test.problems.extend(conversation_shape_problems(raw, source, key, test_id))
            if "::" in test_id:
                test.problems.append(
                    Problem(
                        f"{source.where((*key, 'id'))}: {test_id}",
                        f"test id '{test_id}' contains '::', which separates file, suite and "
                        "test id in a test's key; rename the test",
                    )
                )
            if test_id in seen:
                test.problems.append(
                    Problem(
                        f"{source.where((*key, 'id'))}: {test_id}",
                        f"duplicate test id '{test_id}' (also in suite '{seen[test_id]}')",
                    )
                )
                if seen[test_id] == suite_key:
                    # red team, probe "duplicate id" (issue 35): under the first one's key the
                    # store kept one of the two, and the stored run lost this error.
                    test.case_key = f"{file}::{suite_key}::{test_id}::tests[{index}]"
            seen.setdefault(test_id, suite_key)
            if test_model is not None:
                shape = {**suite_shape, **(test_model.shape or {})}
                _fill_test(test, test_model, source, key, context, shape)
                if hooks is not None:  # the suite's hooks are run for the test, like its own
                    test.definition = definition_digest(test.definition, hooks.setup, hooks.cleanup)
            result.tests.append(test)


def _suite_hooks(file: str, suite_key: str, suite: SuiteModel, where: str) -> SuiteHooks | None:
    """The suite's setup/cleanup hooks, one object shared by its tests; None without any."""
    setup, cleanup = _as_list(suite.setup), _as_list(suite.cleanup)
    if not setup and not cleanup:
        return None
    return SuiteHooks(f"{file}::{suite_key}", tuple(setup), tuple(cleanup), where)


def _suite_shape_ok(source: Source, suite_key: str, suite: SuiteModel, result: LoadResult) -> bool:
    """A suite lists ``tests`` or names a ``dataset`` with checks for it, not both."""
    key: Key = ("test_suites", suite_key)
    message = None
    if suite.dataset is None and suite.tests is None:
        message = "a suite needs tests (a list) or a dataset (a JSON Lines file)"
    elif suite.dataset is not None and suite.tests is not None:
        message = "a suite has tests or a dataset, not both"
    elif suite.dataset is not None and suite.expect is None and suite.assertions is None:
        message = "a dataset suite needs expect and/or assertions to judge its cases by"
    elif suite.dataset is None:
        for name in ("expect", "assertions", "threshold", "trials", "timeout_s"):
            if getattr(suite, name) is not None:
                key, message = (*key, name), f"'{name}' belongs to a dataset suite or to a test"
                break
    if message is None:
        return True
    result.file_problems.append(Problem(_located(source, key, None), message))
    return False


def _add_dataset(
    source: Source,
    agent: str,
    suite_key: str,
    suite: SuiteModel,
    result: LoadResult,
    context: _LoadContext,
    shape: dict[str, str],
    hooks: SuiteHooks | None,
) -> None:
    key: Key = ("test_suites", suite_key)
    path, reason = inside_project(str(suite.dataset), source.path.parent, context.project_dir)
    if path is None and (directory := _trace_directory(str(suite.dataset), source, context)):
        path, reason = directory, None  # a directory of recorded traces (`_trace_files`)
    if path is None:
        result.file_problems.append(Problem(_located(source, (*key, "dataset"), None), str(reason)))
        return
    try:
        empty = not has_lines(path)
        message = f"the dataset {suite.dataset} has no lines, so nothing would be judged"
    except OSError as error:
        empty, message = True, f"cannot read the dataset {suite.dataset}: {error.strerror}"
    if empty:  # nothing would be judged: never a silent pass
        result.file_problems.append(Problem(_located(source, (*key, "dataset"), None), message))
        return
    compiler = None
    if has_references(suite.expect) or has_references(suite.assertions):
        # Compiled per line, for its vars/expected; problems are the line's.
        checks: list[Expectation] = []
        problems: list[Problem] = []
        compiler = CaseCompiler(
            [
                (
                    name,
                    spec,
                    suite.threshold if name == "assertions" else None,
                    (shape or None) if name == "expect" else None,
                )
                for name, spec in (("expect", suite.expect), ("assertions", suite.assertions))
                if spec is not None
            ],
            functools.partial(
                compile_expectation,
                sensitive_prefixes=context.sensitive_prefixes,
                judge_rules=context.judge_rules,
            ),
        )
    else:
        checks, problems = _compile_checks(
            suite.expect, suite.assertions, suite.threshold, source, key, context, shape=shape
        )
    if problems:
        result.file_problems.extend(problems)
        return
    result.datasets.append(
        Dataset(
            file=str(source.path),
            suite=suite_key,
            agent=agent,
            path=path,
            checks=checks,
            priority=suite.priority,
            tags=list(suite.tags),
            trials=suite.trials,
            timeout_s=suite.timeout_s,
            definition=definition_digest(
                suite.model_dump(include=_DEFINING_KEYS, exclude_none=True, mode="json"), shape
            ),
            pass_threshold=suite.pass_threshold,
            suite_hooks=hooks,
            compiler=compiler,
            project=context.project_dir,
        )
    )


def _trace_directory(reference: str, source: Any, context: Any) -> Path | None:
    """A dataset that is a directory inside the project (its OTLP JSON files), else None."""
    resolved: Path = (source.path.parent / reference).resolve()
    if resolved.is_dir() and resolved.is_relative_to(context.project_dir.resolve()):
        return resolved
    return None


# What defines a test, for `definition_digest`: not its name, description, tags or priority,
# which only say how it is shown and selected.
_DEFINING_KEYS = {
    "input",
    "expect",
    "assertions",
    "threshold",
    "multi_step",
    "conversation",
    "skip_if",
    "setup",
    "cleanup",
    "trials",
    "timeout_s",
}


def _fill_test(
    test: TestCase,
    model: TestModel,
    source: Source,
    key: Key,
    context: _LoadContext,
    shape: dict[str, str],
) -> None:
    test.definition = definition_digest(
        model.model_dump(include=_DEFINING_KEYS, exclude_none=True, mode="json"), shape
    )
    test.description = model.description
    test.skip_if = model.skip_if
    test.setup = _as_list(model.setup)
    test.cleanup = _as_list(model.cleanup)
    test.trials = model.trials
    test.timeout_s = model.timeout_s
    if model.pass_threshold is not None:
        test.pass_threshold = model.pass_threshold
    test.tags = sorted({*test.tags, *model.tags})
    if model.priority is not None:
        test.priority = model.priority
    if model.conversation is not None:
        fill_conversation(test, model, source, key, context, shape)
        return
    if model.multi_step:
        if model.expect is not None or model.assertions is not None:
            test.problems.append(
                Problem(
                    f"{source.where(key)}: {test.id}",
                    "a multi_step test puts expect/assertions in its steps, not at the top",
                )
            )
        for number, step_model in enumerate(model.multi_step):
            _add_step(
                test,
                step_model,
                source,
                (*key, "multi_step", number),
                context,
                label=(test.id, len(key)),
                shape=shape,
            )
        return
    if model.expect is None and model.assertions is None:
        test.problems.append(
            Problem(
                f"{source.where(key)}: {test.id}",
                "the test has no expect and no assertions, so nothing would be judged",
            )
        )
        return
    checks, problems = compile_test_checks(test.id, model, source, key, context, shape)
    test.problems.extend(problems)
    test.steps.append(Step(test.id, model.input, checks))


def _add_step(
    test: TestCase,
    model: StepModel,
    source: Source,
    key: Key,
    context: _LoadContext,
    *,
    label: Label | None = None,
    shape: dict[str, str] | None = None,
) -> None:
    checks, problems = _compile_checks(
        model.expect, model.assertions, None, source, key, context, label=label, shape=shape
    )
    test.problems.extend(problems)
    test.steps.append(Step(str(model.step), model.input, checks, model.store))


def _fixture(value: Any) -> tuple[Any, dict[str, Any]]:
    """``output`` or ``{output, cost_usd, latency_ms, model, tool_calls}`` → (output, metadata)."""
    if (
        isinstance(value, dict)
        and "output" in value
        and set(value)
        <= {
            "output",
            "cost_usd",
            "latency_ms",
            "model",
            "tool_calls",
        }
    ):
        metadata = {k: v for k, v in value.items() if k != "output"}
        return value["output"], metadata
    return value, {}


def _load_workflow(source: Source, result: LoadResult, context: _LoadContext) -> None:
    model, problems = _validate(WorkflowModel, source.data, source, ())
    if model is None:
        result.file_problems.extend(problems)
        return
    file = str(source.path)
    suite = EvalSuite(file, model.eval.threshold, [])
    seen: set[str] = set()
    for index, raw in enumerate(model.eval.cases):
        key: Key = ("eval", "cases", index)
        raw_id = raw.get("id") if isinstance(raw, dict) else None
        case_id = str(raw_id or f"case[{index}]")
        if id_problem(case_id):  # refused by the model; named by its place meanwhile
            case_id = f"case[{index}]"
        case = EvalCase(id=case_id, file=file, blocks={}, line=source.line(key))
        case_model, problems = _validate(EvalCaseModel, raw, source, key, (case.id, len(key)))
        case.problems.extend(problems)
        if case.id in seen:
            case.problems.append(
                Problem(
                    f"{source.where((*key, 'id'))}: {case.id}", f"duplicate case id '{case.id}'"
                )
            )
        seen.add(case.id)
        suite.cases.append(case)
        if case_model is None:
            continue
        case.description = case_model.description
        for block_id in case_model.expected:
            if block_id not in case_model.fixtures:
                case.problems.append(
                    Problem(
                        f"{source.where((*key, 'expected', block_id))}: {case.id}",
                        f"expected block '{block_id}' has no fixture output to judge; "
                        f"add fixtures.{block_id}",
                    )
                )
        for block_id, fixture in case_model.fixtures.items():
            block = model.blocks.get(block_id)
            specs = [
                *(block.assertions or [] if block else []),
                *case_model.expected.get(block_id, []),
            ]
            if not specs:
                continue
            output, metadata = _fixture(fixture)
            where: Key = (*key, "expected", block_id)
            try:
                expectation = context.compile(specs, threshold=None, location=block_id)
            except ConfigError as error:
                for problem in error.problems:
                    case.problems.append(
                        Problem(
                            f"{source.where(where)}: {case.id}.{problem.location}", problem.message
                        )
                    )
                continue
            case.blocks[block_id] = (output, metadata, expectation)
    result.evals.append(suite)


def load_paths(
    paths: Iterable[str | Path],
    *,
    sensitive_prefixes: Sequence[str] | None = None,
    project_dir: Path | None = None,
    shape: dict[str, str] | None = None,
    judge_rules: FileJudgeRules | None = None,
) -> LoadResult:
    """Load every test file and workflow eval section under ``paths``.

    Args:
        paths: Files and directories.
        sensitive_prefixes: Passed to the engine (paths that must not appear in results).
        project_dir: Files named in test files (datasets) must be inside it; default: the
            working directory.
        shape: The config's ``shape:``, every file's default (a file, suite or test may
            override it, field by field).
        judge_rules: What assertions may set of their judge (`ConfigModel.judge_rules`);
            default: nothing (no endpoint, no environment variable).
    """
    result = LoadResult()
    context = _LoadContext(sensitive_prefixes, project_dir or Path.cwd(), shape, judge_rules)
    files, problems = discover(paths)
    result.file_problems.extend(problems)
    for path in files:
        try:
            source = read_source(path)
        except ConfigError as error:
            result.file_problems.extend(error.problems)
            continue
        data = source.data
        if isinstance(data, dict) and "eval" in data and "test_suites" not in data:
            _load_workflow(source, result, context)
        elif isinstance(data, dict):
            _load_agent_file(source, result, context)
        else:
            result.file_problems.append(
                Problem(
                    str(path),
                    "expected a mapping with agent and test_suites (or a workflow with eval:)",
                )
            )
    return result
