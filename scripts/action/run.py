"""The GitHub Action's run step: run the tests, annotate, write the reports and the comment.

Reads the action's inputs from the environment (``INPUT_PATHS``, ``INPUT_ARGS``,
``INPUT_BASELINE``, ``INPUT_MIN_PASS_RATE``, ``INPUT_STORE``), and ``ASSERTLY`` (the command
that runs assertly, default ``assertly``). Writes into ``REPORT_DIR`` (default
``$RUNNER_TEMP/assertly``) ``report.json``, ``report.html``, ``junit.xml`` and ``comment.md``
(``assertly diff BASELINE RUN --format md`` with a baseline, else the run's Markdown report),
prints ``::error`` annotations for failing tests (``assertly report RUN --format github``),
appends the comment to the job summary, and sets the step outputs ``exit-code``, ``run-id``,
``report-dir`` and ``comment-file``. It always exits 0: the action's last step exits with the
run's code, after the reports are uploaded and the comment is written.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

# The comment shows the comparison; the gate is `run --baseline`'s, in the run's exit code.
_NEVER = ("--fail-on", "never")


def _assertly() -> list[str]:
    return shlex.split(os.environ.get("ASSERTLY") or "assertly")


def _input(name: str) -> str:
    return os.environ.get(f"INPUT_{name}", "").strip()


def _run(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    print("$ " + shlex.join(["assertly", *argv[len(_assertly()) :]]), flush=True)
    return subprocess.run(argv, text=True, check=False, **kwargs)  # type: ignore[call-overload,no-any-return]


@contextlib.contextmanager
def _commands_off() -> Iterator[None]:
    """The runner's workflow commands off while what is printed may hold agent text.

    Red team, probe "workflow-command injection": the run's console prints agent output
    (an error's stderr, a failing answer), and the runner obeys ``::add-mask::…`` at a line's
    start and a legacy ``##[add-mask]…`` anywhere in a line, so an agent could mask words,
    set outputs, forge annotations or ``stop-commands`` the real annotations away.
    """
    token = secrets.token_hex(16)
    print(f"::stop-commands::{token}", flush=True)
    try:
        yield
    finally:
        print(f"::{token}::", flush=True)


def _set_outputs(values: dict[str, str]) -> None:
    path = os.environ.get("GITHUB_OUTPUT")
    if not path:
        return
    with open(path, "a", encoding="utf-8") as handle:
        for name, value in values.items():
            handle.write(f"{name}={value}\n")


def main() -> int:
    """Run, annotate, write the comment; the step outputs say how the run ended."""
    report_dir = Path(
        os.environ.get("REPORT_DIR") or Path(os.environ.get("RUNNER_TEMP", ".")) / "assertly"
    ).resolve()
    report_dir.mkdir(parents=True, exist_ok=True)
    store = ["--store", _input("STORE")] if _input("STORE") else []
    report_json = report_dir / "report.json"
    command = [*_assertly(), "run", *shlex.split(_input("PATHS")), *shlex.split(_input("ARGS"))]
    command += ["--plain", *store, "-o", str(report_json)]
    command += ["-o", str(report_dir / "report.html"), "-o", str(report_dir / "junit.xml")]
    if _input("MIN_PASS_RATE"):
        command += ["--min-pass-rate", _input("MIN_PASS_RATE")]
    baseline = _input("BASELINE")
    if baseline:
        command += ["--baseline", baseline]
    with _commands_off():  # stderr on stdout: the resume line cannot overtake it on a pipe
        code = _run(command, stderr=subprocess.STDOUT).returncode
    comment = report_dir / "comment.md"
    run_id = ""
    if report_json.is_file():
        run_id = str(json.loads(report_json.read_text(encoding="utf-8"))["run_id"])
        # Annotations on the pull request's files: one per failing test.
        _run([*_assertly(), "report", run_id, "--format", "github", *store])
        if baseline:
            shown = _run(
                [
                    *_assertly(),
                    "diff",
                    baseline,
                    str(report_json),
                    "--format",
                    "md",
                    *_NEVER,
                    *store,
                ],
                capture_output=True,
            )
        else:
            shown = _run(
                [*_assertly(), "report", run_id, "--format", "md", *store], capture_output=True
            )
        text = (
            shown.stdout
            if shown.stdout.strip()
            else f"assertly could not render the run:\n\n```\n{shown.stderr}\n```\n"
        )
        with _commands_off():  # diff's lines may quote what the agent answered
            print(shown.stderr, end="", flush=True)
    else:
        text = f"**assertly could not run the tests** (exit code {code}): the job's log says why.\n"
    # The job's verdict (the gates', when given), which the report below explains.
    verdict = {0: "job passed", 1: "job failed"}.get(code, "could not run")
    comment.write_text(f"### assertly: {verdict} (exit code {code})\n\n{text}", encoding="utf-8")
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as handle:
            handle.write(comment.read_text(encoding="utf-8") + "\n")
    _set_outputs(
        {
            "exit-code": str(code),
            "run-id": run_id,
            "report-dir": str(report_dir),
            "comment-file": str(comment),
        }
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
