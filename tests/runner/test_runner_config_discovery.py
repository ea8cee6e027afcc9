"""The config is found as pytest and ruff find theirs: the nearest assertly.yaml (or
pyproject.toml with [tool.assertly]) from the working directory upward."""

from __future__ import annotations

from pathlib import Path

import pytest
from runner_support import Project

from assertly.loading import find_config


def _files_under(root: Path) -> set[str]:
    return {str(path.relative_to(root)) for path in root.rglob("*")}


def test_run_from_a_subdirectory_finds_the_project_config(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.write("assertly.yaml", {"agents": {"notes": f"cmd:{project.agent[4:]}"}})
    project.write(
        "suite/deep/n.tests.yaml",
        {
            "agent": "notes",
            "test_suites": {
                "s": {"tests": [{"id": "t", "input": {}, "expect": {"status": "success"}}]}
            },
        },
    )
    inner = project.root / "suite" / "deep"
    before = _files_under(inner)
    monkeypatch.chdir(inner)
    result = project.run("run", "n.tests.yaml", report=False)
    assert result.exit_code == 0, result.stdout + result.stderr
    # The store is the config's, relative to the config's directory; nothing was written here.
    assert (project.root / ".assertly" / "runs.sqlite").is_file()
    assert _files_under(inner) == before


def test_the_nearest_config_wins_and_pyproject_counts_with_its_table(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.assertly]\ntrials = 2\n")
    (tmp_path / "a" / "b").mkdir(parents=True)
    assert find_config(tmp_path / "a" / "b") == (tmp_path / "pyproject.toml").resolve()
    (tmp_path / "a" / "assertly.yaml").write_text("trials: 3\n")
    assert find_config(tmp_path / "a" / "b") == (tmp_path / "a" / "assertly.yaml").resolve()
    # A pyproject.toml without the table is not a config: the search goes on past it.
    (tmp_path / "a" / "b" / "pyproject.toml").write_text("[tool.other]\nx = 1\n")
    assert find_config(tmp_path / "a" / "b") == (tmp_path / "a" / "assertly.yaml").resolve()


def test_a_malformed_pyproject_is_an_error_not_skipped(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.write("pyproject.toml", "[tool.assertly\ntrials = 2\n")
    project.tests_file("t.tests.yaml", {"s": [{"id": "t", "input": {}, "expect": {"status": "x"}}]})
    result = project.run("validate", ".")
    assert result.exit_code == 2
    assert "pyproject.toml: invalid TOML" in result.stderr


def test_no_config_says_so_where_a_target_is_missing(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    if any((parent / "assertly.yaml").exists() for parent in project.root.parents):
        pytest.skip("a config above the temporary directory")
    project.write(
        "n.tests.yaml",
        {
            "agent": "notes",
            "test_suites": {
                "s": {"tests": [{"id": "t", "input": {}, "expect": {"status": "success"}}]}
            },
        },
    )
    result = project.run("validate", ".")
    assert "no config was found (assertly.yaml, or [tool.assertly] in pyproject.toml" in (
        result.stdout
    )
    run = project.run("run", ".")
    message = run.tests["t"]["trials"][0]["error"]
    assert message.startswith("no target for agent 'notes' (no config was found")
