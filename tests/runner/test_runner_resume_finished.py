"""``--resume`` on a run that already has every verdict calls nothing and says so."""

from __future__ import annotations

from pathlib import Path

from runner_support import Project


def test_resuming_a_finished_run_calls_nothing(project: Project, tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    project.tests_file(
        "r.tests.yaml",
        {
            "s": [
                {"id": "ok", "input": {"log": str(log)}, "expect": {"status": "success"}},
                {"id": "bad", "input": {"log": str(log)}, "expect": {"status": "error"}},
            ]
        },
    )
    first = project.run("run", ".", "--target", project.agent)
    assert first.exit_code == 1
    assert len(log.read_text().splitlines()) == 2
    again = project.run("run", "--resume", "last")
    assert again.exit_code == first.exit_code  # the run's own exit code
    assert "nothing to resume: every test of run" in again.stderr
    assert len(log.read_text().splitlines()) == 2, "no agent was called again"


def test_resuming_a_partial_run_does_not_say_nothing(project: Project, tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    project.tests_file(
        "r.tests.yaml",
        {
            "s": [
                {"id": f"t{i}", "input": {"log": str(log)}, "expect": {"status": "x"}}
                for i in range(3)
            ]
        },
    )
    first = project.run("run", ".", "--target", project.agent, "--fail-fast", "-j", "1")
    assert first.exit_code == 1
    calls = len(log.read_text().splitlines())
    assert calls < 3
    again = project.run("run", "--resume", "last")
    assert "nothing to resume" not in again.stderr
    assert len(log.read_text().splitlines()) == 3
