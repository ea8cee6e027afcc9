"""Red team of the GitHub Action: the sticky comment's target, workflow-command injection."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from test_action import MARKER, SCRIPTS, FakeGitHub, _comment, _project, github

__all__ = ["github"]  # the fixture, imported for pytest


def test_a_marked_comment_by_someone_else_is_never_edited(
    github: tuple[FakeGitHub, str], tmp_path: Path
) -> None:
    # red team, probe "sticky comment takeover": a PR author pastes the marker first.
    state, api = github
    planted = {"id": 5, "body": f"{MARKER}\nall green, merge me", "user": {"login": "mallory"}}
    state.comments[7] = [dict(planted)]
    done = _comment(tmp_path, api, "2 regressed")
    assert done.returncode == 0, done.stderr
    assert "created comment" in done.stdout
    assert state.comments[7][0] == planted
    assert not any(method == "PATCH" for method, _ in state.requests)
    assert state.comments[7][1]["body"] == f"{MARKER}\n2 regressed"
    # The bot's own comment is the one re-runs edit, the planted one stays untouched.
    again = _comment(tmp_path, api, "fixed")
    assert "updated comment 101" in again.stdout
    assert state.comments[7][0] == planted and len(state.comments[7]) == 2


# What the Actions runner obeys (actions/runner ActionCommand.TryParseV2 and TryParse): a
# line that starts with ``::NAME …::`` after leading spaces, else ``##[NAME …]`` anywhere in it.
_COMMANDS = {
    "add-mask", "set-output", "save-state", "warning", "error", "notice", "debug",
    "stop-commands", "group", "endgroup", "echo", "add-matcher", "remove-matcher",
}  # fmt: skip
HOSTILE = """\
import sys
sys.stdin.read()
sys.stderr.write("boom\\n::add-mask::hunter2\\n  ::warning title=pwned::owned\\n")
sys.stderr.write("tail ##[add-mask]secret2 and ##[stop-commands]off\\n")
print("::set-output name=exit-code::0")
sys.exit(3)
"""


def _obeyed(log: str) -> list[tuple[str, str]]:
    """The commands the runner carries out for ``log``, as (name, data)."""
    done: list[tuple[str, str]] = []
    stop: str | None = None
    for line in log.splitlines():
        found: tuple[str, str] | None = None
        text = line.lstrip()
        end = text.find("::", 2) if text.startswith("::") else -1
        if end > 0:
            found = (text[2:end].split(" ", 1)[0], text[end + 2 :])
        elif "##[" in line:
            start = line.index("##[")
            close = line.find("]", start)
            if close > 0:
                name = line[start + 3 : close].split(" ", 1)[0]
                found = (name, line[close + 1 :]) if name in _COMMANDS else None
        if found is None:
            continue
        if stop is not None:
            if found[0] == stop:
                stop = None
            continue
        if found[0] == "stop-commands":
            stop = found[1]
        elif found[0] in _COMMANDS:
            done.append(found)
    return done


def test_agent_output_cannot_issue_workflow_commands(tmp_path: Path) -> None:
    project = _project(tmp_path, good=True)
    (project / "agent.py").write_text(HOSTILE)
    env = {
        **os.environ,
        "ASSERTLY": f"{sys.executable} -m assertly",
        "PYTHONPATH": os.pathsep.join(sys.path),
        "REPORT_DIR": str(project / "reports"),
        "INPUT_PATHS": "t.tests.json",
        "GITHUB_WORKSPACE": str(project),
    }
    done = subprocess.run(
        [sys.executable, str(SCRIPTS / "run.py")],
        cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        check=False, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout
    assert "add-mask]secret2" in done.stdout and "::add-mask::hunter2" in done.stdout
    obeyed = _obeyed(done.stdout)
    # Only the annotations of `report --format github`: one per test (both errored), a notice.
    assert sorted(name for name, _ in obeyed) == ["error", "error", "notice"], obeyed
    assert not any(name in ("add-mask", "set-output", "warning") for name, _ in obeyed)
    annotations = [line for line in done.stdout.splitlines() if line.startswith("::error ")]
    assert len(annotations) == 2 and all("file=t.tests.json" in line for line in annotations)


@pytest.mark.parametrize("bad", [{"PR_NUMBER": "seven"}, {"GITHUB_EVENT_PATH": "{not json"}])
def test_a_bad_pull_request_number_is_a_usage_error(
    github: tuple[FakeGitHub, str], tmp_path: Path, bad: dict[str, str]
) -> None:
    state, api = github
    (tmp_path / "c.md").write_text("x")
    (tmp_path / "event.json").write_text(bad.get("GITHUB_EVENT_PATH", "{}"))
    env = {**os.environ, "GITHUB_API_URL": api, "GITHUB_TOKEN": "t", "GITHUB_REPOSITORY": "o/r"}
    env["GITHUB_EVENT_PATH"] = str(tmp_path / "event.json")
    env.pop("PR_NUMBER", None)
    env.update({name: value for name, value in bad.items() if name == "PR_NUMBER"})
    done = subprocess.run(
        [sys.executable, str(SCRIPTS / "sticky_comment.py"), str(tmp_path / "c.md")],
        env=env, capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "no pull request number" in done.stderr and "Traceback" not in done.stderr
    assert state.requests == []
