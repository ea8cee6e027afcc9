"""GitHub Actions annotations: ``assertly report RUN --format github``.

One ``::error`` workflow command per test that failed or errored (and per eval suite below its
threshold, and per problem of the run), which GitHub shows on the pull request's files at the
test's line. Values are escaped as the workflow-command rules require: in the message ``%``,
CR and LF; in a property also ``:`` and ``,`` (else a title such as ``suite::id`` would end the
property list early).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from .._records import RunRecord, TestRecord
from .._terminal import terminal_safe
from ._failures import eval_case_detail, test_failure_lines

__all__ = ["escape_data", "escape_property", "github_annotations", "repository_path"]

# A message longer than this is cut: GitHub keeps the first ~64 KB of a workflow command and
# shows only a few lines of an annotation anyway.
_MESSAGE_LIMIT = 4_000


def escape_data(text: str) -> str:
    """The message of a workflow command: ``%``, CR and LF percent-encoded."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A property value of a workflow command: as `escape_data`, and ``:`` and ``,`` too."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _command(level: str, message: str, **properties: str | int | None) -> str:
    # A CI log is a terminal too: controls in agent output are shown as escapes, not obeyed.
    given = ",".join(
        f"{name}={escape_property(terminal_safe(str(value)))}"
        for name, value in properties.items()
        if value is not None and value != ""
    )
    if len(message) > _MESSAGE_LIMIT:
        message = message[:_MESSAGE_LIMIT] + "…"
    message = "\n".join(terminal_safe(line) for line in message.split("\n"))
    return f"::{level}{' ' + given if given else ''}::{escape_data(message)}"


def repository_path(file: str) -> str:
    """``file`` relative to ``GITHUB_WORKSPACE`` (the checkout), as annotations name files.

    A test file's path is stored as given, relative to where the run started: a run started in
    a subfolder (``working-directory:``) or given absolute paths still annotates the right file.
    Outside a workspace, or for a file outside it, the path is left as it is.
    """
    workspace = os.environ.get("GITHUB_WORKSPACE")
    if not workspace or not file:
        return file
    try:
        return (Path.cwd() / file).resolve().relative_to(Path(workspace).resolve()).as_posix()
    except (ValueError, OSError):
        return file


def _title(test: TestRecord) -> str:
    where = f" [{test.target}]" if test.target is not None else ""
    return f"{test.status}: {test.suite}::{test.id}{where}"


def github_annotations(run: RunRecord) -> Iterator[str]:
    """The workflow commands for ``run``, one line each (no trailing newline)."""
    for test in run.not_passed():
        lines = [line.strip() for line in test_failure_lines(test)]
        yield _command(
            "error",
            "\n".join(lines) or test.status,
            file=repository_path(test.file),
            line=test.line,
            title=_title(test),
        )
    for suite in run.evals:
        if suite.passed:
            continue
        details = [
            f"{case.status} {case.id}: {eval_case_detail(case)}"
            for case in suite.cases
            if case.status != "passed"
        ]
        summary = f"score {suite.score:.3f} below the threshold {suite.threshold:g}"
        yield _command(
            "error",
            "\n".join([summary, *details]),
            file=repository_path(suite.file),
            title="eval suite failed",
        )
    for problem in run.problems:
        yield _command("error", str(problem), title="assertly problem")
    s = run.summary()
    yield _command(
        "notice",
        f"{s['total']} tests: {s['passed']} passed, {s['failed']} failed, "
        f"{s['errored']} errored, {s['skipped']} skipped ({s['pass_rate'] * 100:.1f}% pass "
        f"rate), run {run.run_id}",
        title="assertly",
    )
