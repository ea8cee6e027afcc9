"""``--resume`` is honest: changed tests run again, new files are refused, one writer a run."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from runner_support import Project

from assertly.store import RunStore

B = {"status": "x"}


def _calls(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def _two_tests(project: Project, log: Path, expected: str = "success") -> None:
    project.tests_file(
        "r.tests.yaml",
        {
            "s": [
                {"id": "a", "input": {"log": str(log), "tag": "a"}, "expect": {"status": expected}},
                {"id": "b", "input": {"log": str(log), "tag": "b"}, "expect": {"status": "x"}},
            ]
        },
    )


def test_a_test_whose_definition_changed_runs_again(project: Project, tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    _two_tests(project, log)
    first = project.run("run", ".", "--target", project.agent)
    assert first.status("a") == "passed"
    assert sorted(_calls(log)) == ["a", "b"]
    # Test a now expects something else: its stored verdict judged another test.
    _two_tests(project, log, expected="error")
    again = project.run("run", "--resume", "last")
    assert sorted(_calls(log)) == ["a", "a", "b"], "only the changed test is called again"
    assert again.status("a") == "failed"
    assert again.status("b") == "failed"
    assert "1 test(s) changed since run" in again.stdout + again.stderr


def test_an_unchanged_definition_is_kept(project: Project, tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    _two_tests(project, log)
    project.run("run", ".", "--target", project.agent)
    # Reordering keys and renaming the test changes nothing that defines it.
    project.write(
        "r.tests.yaml",
        {
            "test_suites": {
                "s": {
                    "tests": [
                        {
                            "expect": {"status": "success"},
                            "name": "a renamed",
                            "input": {"tag": "a", "log": str(log)},
                            "id": "a",
                        },
                        {
                            "id": "b",
                            "input": {"log": str(log), "tag": "b"},
                            "expect": {"status": "x"},
                        },
                    ]
                }
            },
            "agent": "bot",
        },
    )
    again = project.run("run", "--resume", "last")
    assert sorted(_calls(log)) == ["a", "b"], "nothing is called again"
    assert "nothing to resume" in again.stderr


def test_trials_are_part_of_the_definition(project: Project, tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    _two_tests(project, log)
    project.run("run", ".", "--target", project.agent)
    project.run("run", "--resume", "last", "--trials", "2")
    # Two trials of each test: both tests judged afresh, twice each.
    assert sorted(_calls(log)) == ["a", "a", "a", "b", "b", "b"]


def test_resume_refuses_test_files_the_run_did_not_have(project: Project, tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    _two_tests(project, log)
    project.run("run", ".", "--target", project.agent)
    project.tests_file(
        "new.tests.yaml",
        {"s": [{"id": "c", "input": {"log": str(log)}, "expect": {"status": "x"}}]},
    )
    again = project.run("run", "--resume", "last")
    assert again.exit_code == 2
    assert "did not have new.tests.yaml" in again.stderr
    assert "start a new run" in again.stderr
    assert sorted(_calls(log)) == ["a", "b"]


def test_a_second_writer_of_one_run_is_refused(project: Project, tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    _two_tests(project, log)
    project.run("run", ".", "--target", project.agent)
    store_path = project.root / ".assertly" / "runs.sqlite"  # the default store
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with sqlite3.connect(store_path) as db:
            run_id = db.execute("SELECT run_id FROM runs").fetchone()[0]
            db.execute(
                "INSERT INTO writers (run_id, pid, host, since) VALUES (?, ?, ?, ?)",
                (run_id, holder.pid, os.uname().nodename, "2026-01-01T00:00:00Z"),
            )
        again = project.run("run", "--resume", "last")
        assert again.exit_code == 2
        assert f"run {run_id} is being written by process {holder.pid}" in again.stderr
    finally:
        holder.kill()
        holder.wait()
    # The holder is gone: its claim is stale and taken over.
    after = project.run("run", "--resume", "last")
    assert after.exit_code == 1
    assert "nothing to resume" in after.stderr
    with sqlite3.connect(store_path) as db:
        assert db.execute("SELECT COUNT(*) FROM writers").fetchone()[0] == 0, "claim released"


def test_last_tilde_and_blessed_name_runs(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.db")
    try:
        for number in range(3):
            store.start_run(f"run{number}", f"2026-01-0{number + 1}T00:00:00Z", {})
        assert store.resolve_run_id("last") == "run2"
        assert store.resolve_run_id("last~0") == "run2"
        assert store.resolve_run_id("last~2") == "run0"
        for wrong, says in (
            ("last~3", "has only 3 runs (last~2 is the oldest)"),
            ("last~x", "write last~N with N a whole number"),
            # issue 29, probe "Unbounded" 4: `last~99999999999999999999` was an OverflowError.
            ("last~99999999999999999999", "has only 3 runs (last~2 is the oldest)"),
            ("last~" + "9" * 5000, "has only 3 runs"),
            ("last~²", "write last~N with N a whole number"),
            ("blessed", "no run of"),
        ):
            try:
                store.resolve_run_id(wrong)
            except Exception as error:
                assert says in str(error)
            else:
                raise AssertionError(f"{wrong} resolved")
        store.bless("run1", "2026-01-05T00:00:00Z")
        assert store.resolve_run_id("blessed") == "run1"
    finally:
        store.close()
