"""Checking in a second process (`runner/_check_process.py`): the same verdicts as checking in
the runner's own process, nothing lost when the checker dies or a result cannot cross, and no
check process left behind when the runner is killed.

Runs are real `assertly run` processes against a Python target, so the fork happens in a
process of their own, as it does for a user.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from assertly.engine import CheckContext
from assertly.runner import _check_process

ASSERTLY = str(Path(sys.executable).parent / "assertly")

AGENT = """
import time

def answer(payload):
    if payload.get("slow"):
        time.sleep(payload["slow"])
    n = payload["n"]
    files = [f"notes/{i}.md" if i == 2 else f"journal/{i}.md" for i in range(n % 4 + 1)]
    return {
        "status": "success" if n % 5 else "error",
        "summary": f"Found {n} security incidents",
        "results": [{"file": f, "created": f"2026-01-{n % 28 + 1:02d}"} for f in files],
    }
"""

TYPED = [
    {"type": "contains", "value": "security"},
    {"type": "regex", "value": r"Found [0-9]*[13579] "},
    {"type": "is-json"},
    {"type": "levenshtein", "value": "Found 2 security incidents", "threshold": 2,
     "transform": "json_path:$.summary"},
    {"type": "not-contains", "value": "notes/"},
]  # fmt: skip
EXPECT = {
    "status": "success",
    "results_min": 1,
    "all_match_pattern": {"path": "results[*].file", "regex": "^journal/"},
    "all_dates_between": {"path": "results[*].created", "start": "2026-01-01", "end": "2026-01-20"},
}


def _project(root: Path, count: int, plugin: str | None = None, slow: float = 0.0) -> None:
    (root / "agent_mod.py").write_text(AGENT, encoding="utf-8")
    tests: list[dict[str, Any]] = []
    for n in range(count):
        if n % 7 == 6:
            tests.append(
                {
                    "id": f"t{n}",
                    "multi_step": [
                        {"step": "first", "input": {"n": n}, "store": "one",
                         "expect": {"status": "success"}},
                        {"step": "second", "input": {"n": n + 1},
                         "expect": {"no_overlap": {"path": "results[*].file", "with": "one"}}},
                    ],
                }
            )  # fmt: skip
        elif n % 2:
            tests.append({"id": f"t{n}", "input": {"n": n, "slow": slow}, "assertions": TYPED})
        else:
            tests.append({"id": f"t{n}", "input": {"n": n, "slow": slow}, "expect": EXPECT})
    if plugin is not None:
        tests.append({"id": "custom", "input": {"n": 2}, "assertions": [{"type": "custom_check"}]})
        (root / "custom_check.py").write_text(plugin, encoding="utf-8")
    suites = {"agent": "bot", "test_suites": {"s": {"tests": tests}}}
    (root / "j.tests.yaml").write_text(yaml.safe_dump(suites), encoding="utf-8")
    config: dict[str, Any] = {"agents": {"bot": "py:agent_mod:answer"}}
    if plugin is not None:
        config["plugins"] = ["custom_check"]
    (root / "assertly.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")


def _env(root: Path, mode: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(root), "ASSERTLY_JUDGE_PROCESS": mode}


def _run(root: Path, mode: str) -> dict[str, Any]:
    report = root / f"report-{mode}.json"
    done = subprocess.run(
        [ASSERTLY, "run", "j.tests.yaml", "--now", "2026-02-01T00:00:00Z", "-o", str(report),
         "--store", f"{mode}.sqlite", "-j", "8", "--plain"],
        cwd=root, env=_env(root, mode), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    return json.loads(report.read_text())


def _verdicts(report: dict[str, Any]) -> dict[str, Any]:
    """Every test's verdict and failures, without timings."""
    return {
        test["id"]: (
            test["status"],
            test["score"],
            [(trial["status"], trial["failures"]) for trial in test["trials"]],
        )
        for test in report["tests"]
    }


LOGS_WHERE_IT_JUDGES = """
import os
with open("pids.log", "a") as log:
    log.write(f"runner {os.getpid()}\\n")  # imported by the runner, before any fork

def get_assert(output, context):
    with open("pids.log", "a") as log:
        log.write(f"checker {os.getpid()}\\n")
    return True
"""


def test_verdicts_are_the_same_checked_here_or_in_the_check_process(tmp_path: Path) -> None:
    _project(tmp_path, 70, plugin=LOGS_WHERE_IT_JUDGES)
    here = _run(tmp_path, "off")
    (tmp_path / "pids.log").unlink()
    there = _run(tmp_path, "on")
    assert _verdicts(there) == _verdicts(here)
    statuses = {test["status"] for test in here["tests"]}
    assert statuses == {"passed", "failed"}, "the suite must check both ways"
    lines = (tmp_path / "pids.log").read_text().split("\n")
    runner = {line.split()[1] for line in lines if line.startswith("runner")}
    checkers = {line.split()[1] for line in lines if line.startswith("checker")}
    assert len(runner) == 1 and checkers and not checkers & runner, "checked in another process"


DIES_IN_THE_JUDGE = """
import os
RUNNER = os.getpid()  # imported when the runner loads its plugins, before the fork

def get_assert(output, context):
    if os.getpid() != RUNNER:
        os._exit(7)  # the check process dies on its first custom check
    return {"pass": True, "reason": "checked by the runner"}
"""

CANNOT_CROSS = """
from assertly import AssertionResult, Outcome

def get_assert(output, context):
    # A detail that cannot be pickled: the record must be checked in the runner instead.
    return AssertionResult("custom_check", Outcome.PASSED, 1.0, details={"f": lambda: 0})
"""


@pytest.mark.parametrize("plugin", [DIES_IN_THE_JUDGE, CANNOT_CROSS], ids=["dies", "unpicklable"])
def test_nothing_is_lost_when_the_check_process_cannot_check(tmp_path: Path, plugin: str) -> None:
    _project(tmp_path, 40, plugin=plugin)
    here, there = _run(tmp_path, "off"), _run(tmp_path, "on")
    assert _verdicts(there) == _verdicts(here)
    assert len(there["tests"]) == 41
    assert [t["status"] for t in there["tests"] if t["id"] == "custom"] == ["passed"]


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(child) for child in path.read_text().split()] if path.exists() else []


def _gone(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "State:\tZ" in status


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs /proc")
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGINT], ids=["kill", "ctrl-c"])
def test_the_check_process_ends_with_the_runner(tmp_path: Path, how: signal.Signals) -> None:
    _project(tmp_path, 200, slow=0.02)
    process = subprocess.Popen(
        [ASSERTLY, "run", "j.tests.yaml", "--store", "k.sqlite", "-j", "4", "--plain"],
        cwd=tmp_path, env=_env(tmp_path, "on"), stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    checkers: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while not checkers or _stored(tmp_path / "k.sqlite") < 10:
            assert process.poll() is None, "the run ended before it could be stopped"
            assert time.monotonic() < deadline, "the run did not start checking"
            checkers = checkers or _children(process.pid)
            time.sleep(0.02)
        process.send_signal(how)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    deadline = time.monotonic() + 10
    while not all(_gone(pid) for pid in checkers):
        assert time.monotonic() < deadline, f"check process {checkers} outlived the runner"
        time.sleep(0.05)
    resumed = subprocess.run(
        [ASSERTLY, "run", "--resume", "last", "--store", "k.sqlite", "--plain"],
        cwd=tmp_path, env=_env(tmp_path, "on"), capture_output=True, text=True, timeout=120,
        check=False,
    )  # fmt: skip
    assert resumed.returncode in (0, 1), resumed.stdout + resumed.stderr
    assert _stored(tmp_path / "k.sqlite") >= 200


def _stored(store: Path) -> int:
    try:
        with sqlite3.connect(store) as db:
            return int(db.execute("SELECT COUNT(*) FROM trials").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def test_auto_judges_in_a_second_process_only_for_large_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ASSERTLY_JUDGE_PROCESS", "auto")
    many = _check_process.MIN_TESTS
    two_cores = len(os.sched_getaffinity(0)) >= 2 if hasattr(os, "sched_getaffinity") else True
    enough = _check_process.MIN_CONCURRENCY
    assert _check_process.wanted(many, enough) is two_cores
    assert not _check_process.wanted(many - 1, enough)
    assert not _check_process.wanted(many, enough - 1)  # nothing else in flight meanwhile
    monkeypatch.setenv("ASSERTLY_JUDGE_PROCESS", "off")
    assert not _check_process.wanted(10 * many, enough)
    monkeypatch.setenv("ASSERTLY_JUDGE_PROCESS", "on")
    assert _check_process.wanted(1, 1)


def test_no_check_process_for_runs_that_cannot_call() -> None:
    from types import SimpleNamespace

    from assertly.loading import ConfigModel
    from assertly.runner._run import Runner, RunOptions
    from assertly.store import RunStore

    def may_call(plan: Any, config: ConfigModel, target: str | None = None) -> bool:
        options = RunOptions(paths=["."], target=target)
        return Runner(options, config, RunStore(":memory:"), set()).may_call(plan)

    plan = SimpleNamespace(tests=[SimpleNamespace(agent="bot")], datasets=[])
    config = ConfigModel.model_validate({"agents": {"bot": "py:agent_mod:answer"}})
    assert may_call(plan, config)
    assert not may_call(plan, config, target="fixtures:a.jsonl")
    assert not may_call(plan, ConfigModel())  # no target at all
    recorded = SimpleNamespace(tests=[], datasets=[SimpleNamespace(agent="bench")])
    assert not may_call(recorded, ConfigModel())


def _stuck_check(name: str, checks: Any, output: Any, context: Any) -> Any:
    time.sleep(3600)  # a checker that never answers (a custom assertion gone wrong)


def test_a_check_process_stuck_at_the_end_is_killed(monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    monkeypatch.setattr(_check_process, "_REAP_S", 0.5)
    checks: list[Any] = []
    checker = _check_process.CheckProcess([checks], _stuck_check)
    pid = checker.pid

    async def ask_and_give_up() -> None:
        asking = asyncio.ensure_future(
            checker.check("s", checks, "out", CheckContext(latency_ms=1.0))
        )
        await asyncio.sleep(0.3)  # the request is there, and the checker is stuck in it
        asking.cancel()
        await checker.aclose()

    started = time.monotonic()
    asyncio.run(ask_and_give_up())
    assert time.monotonic() - started < 5
    assert _gone(pid)


def test_a_run_that_cannot_fork_judges_in_the_runner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No process to spare (a process limit): the run goes on, checked in its own process."""
    from click.testing import CliRunner

    from assertly.cli import main

    def refuse() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    _project(tmp_path, 8)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("ASSERTLY_JUDGE_PROCESS", "on")
    monkeypatch.setattr(os, "fork", refuse)
    report = tmp_path / "r.json"
    result = CliRunner().invoke(
        main, ["run", "j.tests.yaml", "--store", "f.sqlite", "-o", str(report)]
    )
    assert result.exit_code in (0, 1), result.output
    assert len(json.loads(report.read_text())["tests"]) == 8
