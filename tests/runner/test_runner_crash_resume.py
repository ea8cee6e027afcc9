"""Crash safety: a real `assertly run` process is SIGKILLed mid-run; every trial it finished is
in the store; `--resume last` runs only what has no verdict yet; `assertly report` re-renders
the stored run.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from runner_support import AGENT, Project, assert_report_shape

from assertly.runner import RunOptions, restore_options

ASSERTLY = str(Path(sys.executable).parent / "assertly")
STORE = ".assertly/runs.sqlite"


def _cli(cwd: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ASSERTLY, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )


def _stored_trials(root: Path) -> int:
    path = root / STORE
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(path, timeout=5) as db:
            return int(db.execute("SELECT COUNT(*) FROM trials").fetchone()[0])
    except sqlite3.OperationalError:  # the schema is not there yet
        return 0


def _kill_run_after(root: Path, stored: int, *args: str) -> None:
    """Start ``assertly ARGS`` in ``root``; SIGKILL it once ``stored`` trials are in the store."""
    process = subprocess.Popen(
        [ASSERTLY, *args], cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 60
        while _stored_trials(root) < stored:
            assert process.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline, "no trial reached the store"
            time.sleep(0.01)
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.wait(timeout=10)
    assert process.returncode == -signal.SIGKILL


def _write_project(root: Path, count: int) -> str:
    (root / "agent.py").write_text(AGENT, encoding="utf-8")
    log = root / "calls.log"
    tests = "".join(
        f"      - {{id: t{i:02d}, input: {{mode: slow, delay: 0.1, log: {log}, tag: t{i:02d}}}, "
        "expect: {status: success}}\n"
        for i in range(count)
    )
    (root / "many.tests.yaml").write_text(
        f"agent: bot\ntest_suites:\n  many:\n    tests:\n{tests}", encoding="utf-8"
    )
    return f"cmd:{sys.executable} {root / 'agent.py'}"


def test_sigkill_mid_run_then_resume_last(tmp_path: Path) -> None:
    count = 30
    target = _write_project(tmp_path, count)
    _kill_run_after(tmp_path, 6, "run", ".", "--target", target, "-j", "2", "--plain")

    with sqlite3.connect(tmp_path / STORE) as db:
        [(run_id, finished)] = db.execute("SELECT run_id, finished_at FROM runs").fetchall()
        before = {key for (key,) in db.execute("SELECT test_key FROM trials")}
        registered = db.execute("SELECT COUNT(*) FROM tests").fetchone()[0]
    assert finished is None, "the killed run never finished"
    assert registered == count
    assert 6 <= len(before) < count, "the kill must land mid-run"
    calls_before = Counter((tmp_path / "calls.log").read_text().split())

    # A report of the interrupted run shows what is missing as errors, not passes.
    partial = _cli(tmp_path, "report", "last", "-o", "partial.json")
    assert partial.returncode == 1
    partial_report = json.loads((tmp_path / "partial.json").read_text())
    assert_report_shape(partial_report)
    missing = [t for t in partial_report["tests"] if t["status"] == "error"]
    assert len(missing) == count - len(before)
    assert all("interrupted" in t["trials"][0]["error"] for t in missing)

    resumed = _cli(tmp_path, "run", "--resume", "last", "-j", "4", "-o", "resumed.json")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    report = json.loads((tmp_path / "resumed.json").read_text())
    assert_report_shape(report)
    assert report["run_id"] == run_id
    assert report["summary"]["total"] == count
    assert report["summary"]["passed"] == count

    with sqlite3.connect(tmp_path / STORE) as db:
        per_test = dict(
            db.execute(
                "SELECT tests.test_key, COUNT(trials.trial) FROM tests LEFT JOIN trials "
                "ON trials.run_id = tests.run_id AND trials.test_key = tests.test_key "
                "WHERE tests.run_id = ? GROUP BY tests.test_key",
                (run_id,),
            ).fetchall()
        )
        statuses = {status for (status,) in db.execute("SELECT status FROM trials")}
        runs = db.execute("SELECT COUNT(*), MAX(finished_at) FROM runs").fetchone()
    assert len(per_test) == count
    assert set(per_test.values()) == {1}, "every test has exactly one trial row"
    assert statuses == {"passed"}
    assert runs[0] == 1 and runs[1] is not None, "resume continues the same run"

    # Tests whose trial was stored before the kill were not called again.
    calls_after = Counter((tmp_path / "calls.log").read_text().split())
    for key in before:
        test_id = key.rsplit("::", 1)[1]
        assert calls_after[test_id] == calls_before[test_id], f"{test_id} ran again"
    assert set(calls_after) == {f"t{i:02d}" for i in range(count)}

    # The stored run re-renders to the same verdicts and summary.
    again = _cli(tmp_path, "report", "last", "-o", "again.json")
    assert again.returncode == 0
    rendered = json.loads((tmp_path / "again.json").read_text())
    assert rendered["summary"] == report["summary"]
    assert rendered["tests"] == report["tests"]
    by_id = _cli(tmp_path, "report", run_id, "-o", "by-id.json")
    assert by_id.returncode == 0
    assert json.loads((tmp_path / "by-id.json").read_text())["summary"] == report["summary"]


def test_resume_after_fail_fast_runs_the_tests_it_skipped(project: Project) -> None:
    log = str(project.root / "calls.log")
    project.tests_file(
        "ff.tests.yaml",
        {
            "s": [
                {
                    "id": "t1",
                    "input": {"status": "error", "log": log, "tag": "t1"},
                    "expect": {"status": "success"},
                },
                {"id": "t2", "input": {"log": log, "tag": "t2"}, "expect": {"status": "success"}},
                {"id": "t3", "input": {"log": log, "tag": "t3"}, "expect": {"status": "success"}},
            ]
        },
    )
    first = project.run("run", ".", "--target", project.agent, "-j", "1", "--fail-fast")
    assert first.counts() == (3, 0, 1, 0, 2)
    resumed = project.run("run", "--resume", "last")
    assert resumed.report is not None and first.report is not None
    assert resumed.report["run_id"] == first.report["run_id"]
    assert resumed.counts() == (3, 2, 1, 0, 0)
    # t1 already had its verdict: it is not called again.
    assert sorted((project.root / "calls.log").read_text().split()) == ["t1", "t2", "t3"]


NOW = "2026-01-20T00:00:00Z"
DATED = json.dumps({"status": "success", "date": "2026-01-19T00:00:00Z"})


def _options_project(project: Project) -> str:
    """Suite a: t1 fails, t2 passes only with --now 2026-01-20, t3 fails unless skipped by the
    fact f; suite b: u1 passes. Returns the calls log."""
    log = str(project.root / "calls.log")
    project.tests_file(
        "opts.tests.yaml",
        {
            "a": [
                {
                    "id": "t1",
                    "input": {"status": "error", "log": log, "tag": "t1"},
                    "expect": {"status": "success"},
                },
                {
                    "id": "t2",
                    "input": {"mode": "text", "text": DATED, "log": log, "tag": "t2"},
                    "expect": {"dates_within_days": {"path": "date", "days": 7}},
                },
                {
                    "id": "t3",
                    "skip_if": "f",
                    "input": {"log": log, "tag": "t3"},
                    "expect": {"status": "never"},
                },
            ],
            "b": [
                {"id": "u1", "input": {"log": log, "tag": "u1"}, "expect": {"status": "success"}}
            ],
        },
    )
    return log


def test_resume_restores_every_stored_option(project: Project) -> None:
    log = _options_project(project)
    options = ("--suite", "a", "--now", NOW, "--fact", "f=true", "--trials", "2")
    first = project.run("run", ".", "--target", project.agent, "-j", "1", "--fail-fast", *options)
    assert first.report is not None
    assert {k: t["status"] for k, t in first.tests.items()} == {
        "t1": "failed",
        "t2": "skipped",
        "t3": "skipped",
    }
    # Paths, target, the suite filter, --now, the fact and --trials all come from the stored
    # run; --fail-fast does not (its failure is stored and would stop the resumed run at once).
    resumed = project.run("run", "--resume", "last")
    assert resumed.report is not None
    assert resumed.report["run_id"] == first.report["run_id"]
    assert set(resumed.tests) == {"t1", "t2", "t3"}, "a filtered run stays filtered"
    assert resumed.status("t2") == "passed"
    assert len(resumed.tests["t2"]["trials"]) == 2
    assert resumed.status("t3") == "skipped"
    assert resumed.tests["t3"]["trials"][0]["reason"] == "skip_if: f is true"
    assert resumed.counts() == (3, 1, 1, 0, 1)
    assert sorted(Path(log).read_text().split()) == ["t1", "t1", "t2", "t2"]


def test_options_given_again_override_the_stored_ones() -> None:
    options = RunOptions(facts={"a": False}, trials=3, now=None)
    restore_options(
        options,
        {
            "paths": ["x.tests.yaml"],
            "facts": {"a": True, "b": True},
            "trials": 2,
            "suites": ["s"],
            "keyword": "k",
            "now": "2026-01-20T00:00:00+00:00",
            "fail_fast": True,
            "timeout_s": 5.0,
            "rate_limit": None,
            "store_path": "elsewhere.sqlite",
        },
    )
    assert options.paths == ["x.tests.yaml"]
    assert options.facts == {"a": False, "b": True}  # --fact a=false wins over the stored fact
    assert options.trials == 3
    assert (options.suites, options.keyword, options.timeout_s) == (["s"], "k", 5.0)
    assert options.now == datetime(2026, 1, 20, tzinfo=UTC)
    assert options.fail_fast is False
    assert options.rate_limit is None
    assert options.store_path is None


def test_recheck_reuses_the_stored_now_facts_and_filters(project: Project) -> None:
    _options_project(project)
    project.write(
        "flow.yaml", "blocks: {b: {}}\neval:\n  cases:\n    - {id: c, fixtures: {b: x}}\n"
    )
    first = project.run(
        "run", ".", "--target", project.agent, "--suite", "a", "--now", NOW, "--fact", "f=true"
    )
    assert first.report is not None
    assert first.status("t2") == "passed"
    assert first.report["evals"] == []  # a filtered run has no eval sections
    again = project.run("recheck", first.report["run_id"])
    assert again.report is not None
    assert again.report["run_id"] != first.report["run_id"]
    assert again.status("t2") == "passed", "recheck judges dates against the stored --now"
    assert set(again.tests) == {"t1", "t2", "t3"}
    assert again.report["evals"] == [], "recheck keeps the stored filters"
    assert again.status("t3") == "skipped"
    [(options,)] = project.sql("SELECT options FROM runs WHERE run_id = ?", again.report["run_id"])
    stored = json.loads(options)
    assert (stored["now"], stored["facts"], stored["suites"]) == (
        "2026-01-20T00:00:00+00:00",
        {"f": True},
        ["a"],
    )
    assert stored["recheck_of"] == first.report["run_id"]
    # --now on the command line still wins.
    later = project.run("recheck", first.report["run_id"], "--now", "2026-03-01T00:00:00Z")
    assert later.status("t2") == "failed"


def test_resume_of_a_finished_run_calls_nothing(project: Project) -> None:
    log = str(project.root / "calls.log")
    project.tests_file(
        "a.tests.yaml", {"s": [{"id": "t", "input": {"log": log}, "expect": {"status": "success"}}]}
    )
    first = project.run("run", ".", "--target", project.agent, "--trials", "2")
    assert first.report is not None
    resumed = project.run("run", ".", "--target", project.agent, "--resume", first.report["run_id"])
    assert resumed.counts() == first.counts()
    assert len((project.root / "calls.log").read_text().split()) == 2
    rows = project.sql("SELECT trial FROM trials ORDER BY trial")
    assert rows == [(1,), (2,)]


def test_resume_and_report_of_unknown_runs_are_usage_errors(project: Project) -> None:
    project.tests_file(
        "a.tests.yaml", {"s": [{"id": "t", "input": {}, "expect": {"status": "success"}}]}
    )
    nothing_yet = project.run("report", "last")
    assert nothing_yet.exit_code == 2
    assert "no run store" in nothing_yet.stderr
    assert project.run("run", "--resume", "last").exit_code == 2
    assert not (project.root / ".assertly").exists(), "reading must not create a store"
    project.run("run", ".", "--target", project.agent)
    missing = project.run("report", "nope-123")
    assert missing.exit_code == 2
    assert "no run 'nope-123'" in missing.stderr
    resumed = project.run("run", ".", "--target", project.agent, "--resume", "nope-123")
    assert resumed.exit_code == 2


def test_store_location_from_config_and_option(project: Project) -> None:
    project.write("assertly.yaml", {"store": "runs/store.db"})
    project.tests_file(
        "a.tests.yaml", {"s": [{"id": "t", "input": {}, "expect": {"status": "success"}}]}
    )
    first = project.run("run", ".", "--target", project.agent)
    assert first.exit_code == 0
    assert (project.root / "runs/store.db").exists()
    assert not (project.root / ".assertly").exists()
    assert project.run("report", "last").exit_code == 0
    # --resume without paths finds the run in the configured store too.
    assert project.run("run", "--resume", "last").exit_code == 0
    other = project.run("run", ".", "--target", project.agent, "--store", "elsewhere.sqlite")
    assert other.exit_code == 0
    assert project.sql("SELECT COUNT(*) FROM runs", store="elsewhere.sqlite") == [(1,)]
    assert project.run("report", "last", "--store", "elsewhere.sqlite").exit_code == 0


def test_sigkill_during_a_dataset_run_then_resume(tmp_path: Path) -> None:
    """Recorded verdicts are committed in batches: a kill loses at most the last batch, which
    the resumed run judges again; every line ends with exactly one verdict."""
    count = 20_000
    lines = (json.dumps({"id": f"c{n}", "output": f"security note {n}"}) for n in range(count))
    (tmp_path / "cases.jsonl").write_text("\n".join(lines) + "\n")
    suite = {"dataset": "cases.jsonl", "assertions": [{"type": "contains", "value": "security"}]}
    (tmp_path / "d.tests.json").write_text(
        json.dumps({"agent": "bot", "test_suites": {"recorded": suite}})
    )
    _kill_run_after(tmp_path, 1_000, "run", "d.tests.json", "--plain")
    stored = _stored_trials(tmp_path)
    assert 1_000 <= stored < count, "the kill must land mid-run"

    resumed = _cli(tmp_path, "run", "--resume", "last", "-o", "resumed.json", timeout=300)
    assert resumed.returncode == 0, resumed.stdout[-2000:] + resumed.stderr
    report = json.loads((tmp_path / "resumed.json").read_text())
    assert report["summary"]["total"] == count
    assert report["summary"]["passed"] == count
    with sqlite3.connect(tmp_path / STORE) as db:
        rows = db.execute(
            "SELECT COUNT(*), COUNT(DISTINCT test_key), MIN(status), MAX(status) FROM trials"
        ).fetchone()
    assert rows == (count, count, "passed", "passed"), "one verdict per line, all passed"
