"""Runs you can tell apart (issue 34): ``--name`` and where the run was made (git, host)."""

from __future__ import annotations

import socket
import subprocess

import pytest
from runner_support import Project


def _git(project: Project, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=project.root,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def _suite(project: Project) -> None:
    project.tests_file(
        "t.yaml", {"s": [{"id": "one", "input": {"q": 1}, "expect": {"status": "success"}}]}
    )


def _stored_options(project: Project) -> dict:
    from assertly.store import open_store

    with open_store(str(project.root / ".assertly/runs.sqlite"), must_exist=True) as store:
        return dict(store.run_info(store.resolve_run_id("last"))["options"])


def test_a_run_records_its_name_commit_branch_dirty_flag_and_host(project: Project) -> None:
    _suite(project)
    _git(project, "init", "-q", "-b", "feature/x")
    (project.root / ".gitignore").write_text(".assertly/\nreport-*.json\n")
    _git(project, "add", "t.yaml", ".gitignore")
    _git(project, "commit", "-q", "-m", "tests")
    head = _git(project, "rev-parse", "HEAD")
    result = project.run("run", "t.yaml", "--target", project.agent, "--name", "nightly: gpt-x")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert result.report is not None and result.report["name"] == "nightly: gpt-x"
    stored = _stored_options(project)
    assert stored["name"] == "nightly: gpt-x"
    assert stored["provenance"] == {
        "host": socket.gethostname(),
        "git": {"commit": head, "branch": "feature/x", "dirty": False},
    }
    assert stored["files"] == ["t.yaml"]
    # An edit of a tracked file makes the tree dirty; the name comes from the environment.
    (project.root / "t.yaml").write_text((project.root / "t.yaml").read_text() + "\n")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ASSERTLY_RUN_NAME", "from env")
        result = project.run("run", "t.yaml", "--target", project.agent)
    stored = _stored_options(project)
    assert stored["provenance"]["git"]["dirty"] is True
    assert stored["name"] == "from env" and result.report is not None
    assert result.report["name"] == "from env"


def test_outside_a_work_tree_there_is_no_git_entry_and_no_name(project: Project) -> None:
    _suite(project)
    result = project.run("run", "t.yaml", "--target", project.agent)
    assert result.exit_code == 0 and result.report is not None
    assert "name" not in result.report
    stored = _stored_options(project)
    assert "git" not in stored["provenance"] and stored["name"] is None


@pytest.mark.parametrize("name", ["two\nlines", "x" * 201, "bell\a"])
def test_a_name_that_is_not_one_short_line_is_a_usage_error(project: Project, name: str) -> None:
    _suite(project)
    result = project.run("run", "t.yaml", "--target", project.agent, "--name", name)
    assert result.exit_code == 2 and "--name" in result.stderr
