"""Dataset suites: one expectation judged over every line of a JSON Lines file.

A suite that names a ``dataset`` instead of listing ``tests`` runs one test per line::

    test_suites:
      recorded:
        dataset: data/answers.jsonl      # relative to this file; inside the project
        assertions: [{type: contains, value: security}]

A line is ``{"id", "input", "output", "model", "cost_usd", "latency_ms", "tool_calls", "name",
"tags", "description", "vars", "expected", "trace"}``, every key optional (``trace``: the
recorded call's OTLP JSON spans, or a file of them: `._trace_files`); ``vars`` and ``expected`` are
the line's own references, read by ``{{ vars.NAME }}`` / ``{{ expected }}`` in the suite's
assertions (`._references`). A line with ``output`` is judged as recorded (no call); one
without is sent to the agent as ``input``. A line with ``conversation`` (``{input, turns:
[text | {user}], simulated_user: {persona, ...}}``, its vars filled into what the user says)
is a conversation test the suite's checks judge whole (`._conversations.line_conversation`).
The file is read line by line when the run gets to it and never held in memory, so a million
cases judge in flat memory. A case is keyed by its line (``file:line``), which stays unique
even when two lines share an ``id``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._exceptions import Problem
from .._json import loads
from .._spans import SpanSet
from ..engine import Expectation
from ._cases import Step, SuiteHooks, TestCase, definition_digest
from ._conversations import line_conversation
from ._models import id_problem
from ._references import MISSING, CaseCompiler
from ._trace_files import read_trace_file, recorded_trace, root_output, trace_files

__all__ = ["CASE_KEYS", "Dataset", "has_lines", "inside_project"]

CASE_KEYS = frozenset(
    {
        "id",
        "input",
        "conversation",
        "output",
        "model",
        "cost_usd",
        "latency_ms",
        "tool_calls",
        "name",
        "tags",
        "description",
        "vars",
        "expected",
        "trace",
    }
)
_METADATA = ("model", "cost_usd", "latency_ms", "tool_calls")
# A line is a recorded response: the limit of a response read from an agent (64 MiB).
MAX_LINE_BYTES = 64 * 1024 * 1024


def has_lines(path: Path) -> bool:
    """Whether a dataset has a case: a non-blank line, or (a directory) an OTLP JSON file."""
    if path.is_dir():
        return any(True for _ in trace_files(path))
    return _has_lines(path)


def _has_lines(path: Path) -> bool:
    """Whether a JSON Lines file has a non-blank line (reads up to the first one)."""
    with path.open("rb") as handle:
        return any(not line.isspace() for line in handle)


def inside_project(reference: str, base: Path, project: Path) -> tuple[Path | None, str | None]:
    """Resolve a file named in a test file; refuse one outside the project directory.

    Args:
        reference: The path as written (relative to ``base``, or absolute).
        base: The directory of the test file that names it.
        project: The project directory (the config file's, else the working directory).

    Returns:
        The resolved path, or None and what is wrong.
    """
    resolved = (base / reference).resolve()  # symlinks followed: a link out of the project is out
    root = project.resolve()
    if not resolved.is_relative_to(root):
        return None, (
            f"'{reference}' resolves to {resolved}, outside the project directory {root}; "
            "test files may only name files inside the project"
        )
    if not resolved.is_file():
        return None, f"'{reference}' is not a file ({resolved})"
    return resolved, None


@dataclass(slots=True)
class Dataset:
    """A dataset suite, loaded: its settings and compiled checks; cases are read when iterated."""

    file: str
    suite: str
    agent: str
    path: Path
    checks: list[Expectation]
    priority: str | int | None = None
    tags: list[str] = field(default_factory=list)
    trials: int | None = None
    timeout_s: float | None = None
    definition: str = ""  # the suite's checks and settings (`definition_digest`)
    pass_threshold: str | None = None
    suite_hooks: SuiteHooks | None = None
    # Set when the suite's assertions reference a line's vars/expected: each line's checks.
    compiler: CaseCompiler | None = None
    # The project directory: a line's ``trace:`` path stays inside it.
    project: Path | None = None

    def count(self) -> int:
        """Cases in the file (non-blank lines), counted without parsing them."""
        if self.path.is_dir():
            return sum(1 for _ in trace_files(self.path))  # (a file may hold more traces)
        lines = 0
        try:
            with self.path.open("rb") as handle:
                for line in handle:
                    if not line.isspace():
                        lines += 1
        except OSError:
            return 1  # `cases` yields one case that says why
        return lines

    def simulated_lines(self) -> Iterator[str]:
        """Where a line has a simulated user (``file:line``; lines that cannot be read: none)."""
        shown = shown_path(self.path)
        try:
            with self.path.open("rb") as handle:
                for number, raw in enumerate(handle, start=1):
                    if b"simulated_user" not in raw:  # most lines: never parsed
                        continue
                    try:
                        line = loads(raw)
                    except ValueError:
                        continue  # `cases` says what is wrong with it
                    conversation = line.get("conversation") if isinstance(line, dict) else None
                    if isinstance(conversation, dict) and conversation.get("simulated_user"):
                        yield f"{shown}:{number}"
        except OSError:
            return

    def cases(self) -> Iterator[TestCase]:
        """Each line as a test; a line that cannot be read is a test with a problem."""
        shown = shown_path(self.path)
        if self.path.is_dir():  # a directory of recorded traces
            yield from self._trace_cases(shown)
            return
        try:
            handle = self.path.open("rb")
        except OSError as error:  # gone or unreadable since it was loaded
            yield self._case(b"{}", 0, shown, f"cannot read the dataset: {error.strerror}")
            return
        with handle:
            for number, raw in enumerate(handle, start=1):
                if raw.isspace():
                    continue
                yield self._case(raw, number, shown)

    def _trace_cases(self, shown: str) -> Iterator[TestCase]:
        """Each trace of each OTLP JSON file of the directory as a test (``file:N``: its Nth)."""
        from ..traces import OtlpError, group_by_trace

        for path in trace_files(self.path):
            where = f"{shown}/{path.name}"
            try:
                traces = group_by_trace(read_trace_file(path))
            except (OtlpError, ValueError, OSError) as error:
                failure = str(getattr(error, "strerror", None) or error)
                yield self._case_of({"id": path.stem}, 1, where, [failure])
                continue
            for number, (trace_id, spans) in enumerate(traces.items(), start=1):
                case_id = path.stem if len(traces) == 1 else f"{path.stem}-{trace_id[:8]}"
                line = {"id": case_id, "trace": SpanSet(spans, trace_id)}
                yield self._case_of(line, number, where, [])

    def _case(self, raw: bytes, number: int, shown: str, failure: str | None = None) -> TestCase:
        line: Any = None
        failures = [failure] if failure else []
        try:
            if len(raw) > MAX_LINE_BYTES:
                size = f"{len(raw):,} bytes; lines are limited to {MAX_LINE_BYTES // 2**20} MiB"
                failures.append(f"the line is {size}")
            else:
                line = loads(raw)
        except ValueError as error:
            failures.append(f"invalid JSON: {getattr(error, 'msg', error)}")
        if line is not None and not isinstance(line, dict):
            failures.append("expected a JSON object with input and/or output")
            line = None
        return self._case_of(line or {}, number, shown, failures)

    def _case_of(
        self, line: dict[str, Any], number: int, shown: str, failures: list[str]
    ) -> TestCase:
        where = f"{shown}:{number}"
        problems = [Problem(where, failure) for failure in failures]
        unknown = sorted(set(line) - CASE_KEYS)
        if unknown:
            known = ", ".join(sorted(CASE_KEYS))
            problems.append(Problem(where, f"unknown key '{unknown[0]}' (a line may have {known})"))
        case_id = str(line["id"]) if line.get("id") not in (None, "") else f"line-{number}"
        if (bad_id := id_problem(case_id)) is not None:
            problems.append(Problem(where, f"id {case_id!r}: {bad_id}"))
            case_id = f"line-{number}"
        tags = line.get("tags") or []
        if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
            problems.append(Problem(where, "tags must be a list of strings"))
            tags = []
        checks = self.checks
        variables = line.get("vars")
        if variables is not None and not isinstance(variables, dict):
            problems.append(
                Problem(where, f"vars must be a mapping of names to values, got {variables!r}")
            )
        if self.compiler is not None and not problems:
            checks, found = self.compiler.checks(variables, line.get("expected", MISSING), where)
            problems.extend(found)
        recorded = conversation = None
        if "conversation" in line:
            conversation, found = line_conversation(line, variables, where)
            problems.extend(found)
            if conversation is not None:
                conversation.checks = checks
        elif "output" in line or "trace" in line:
            metadata = {k: line[k] for k in _METADATA if line.get(k) is not None}
            output = line.get("output")
            if "trace" in line:
                # Decoded here, once: the spans are the recorded call's (`SpanSet`).
                spans = recorded_trace(line["trace"], self.path.parent, self.project)
                if isinstance(spans, str):
                    problems.append(Problem(where, spans))
                else:
                    metadata["spans"] = spans
                    if "output" not in line:
                        output = root_output(spans)
            recorded = (output, metadata)
        elif line and "input" not in line:
            problems.append(
                Problem(
                    where, "a line needs output (recorded) or input (to send), or a conversation"
                )
            )
        test = TestCase(
            id=case_id,
            name=str(line.get("name") or case_id),
            suite=self.suite,
            file=shown,
            agent=self.agent,
            # A conversation has no steps: its turns are (`TestCase.conversation`).
            steps=[]
            if conversation
            else [Step(case_id, line.get("input"), checks, recorded=recorded)],
            conversation=conversation,
            line=number,
            description=line.get("description"),
            trials=self.trials,
            timeout_s=self.timeout_s,
            tags=sorted({*self.tags, *tags}),
            priority=self.priority,
            problems=[Problem(f"{p.location}: {case_id}", p.message) for p in problems],
            case_key=f"{self.file}::{self.suite}::{where}",
            # A case is defined by the suite's checks and its own input; a recorded output is
            # the response under judgement, not part of the definition.
            definition=_definition(self.definition, line),
            pass_threshold=self.pass_threshold,
            suite_hooks=self.suite_hooks,
        )
        return test


def _definition(suite: str, line: dict[str, Any]) -> str:
    """A line's definition: its suite's, its input or conversation, its vars and expected."""
    if "conversation" in line:  # (the digest of lines without one is kept as it was)
        return definition_digest(
            suite, line.get("input"), line.get("vars"), line.get("expected"), line["conversation"]
        )
    if line.get("vars") is None and "expected" not in line:
        return definition_digest(suite, line.get("input"))
    return definition_digest(suite, line.get("input"), line.get("vars"), line.get("expected"))


def shown_path(path: Path) -> str:
    """A dataset file as reports name it: relative to the working directory when inside it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)
