"""Agents that end their own process: each is its own trial's error, never a pass or a lost run.

issue 28, probe 2: a ``py:`` agent calling ``os._exit(0)`` on its second test ended assertly
itself: ``FAILED …::bad``, exit 0, no report and no summary.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from reliability_support import measure, process_alive, write_tests

AGENT = """
import asyncio, ctypes, os, signal, sys

def answer(q):
    how = q["how"]
    if how == "os_exit":
        os._exit(0)
    if how == "os_exit_1":
        os._exit(1)
    if how == "sys_exit":
        sys.exit(3)
    if how == "segfault":
        ctypes.string_at(0)
    if how == "abort":
        os.abort()
    if how == "sigkill":
        os.kill(os.getpid(), signal.SIGKILL)
    return {"status": "success", "how": how}

async def answer_async(q):
    await asyncio.sleep(0)
    return answer(q)
"""

# What each way of dying must say (the exit code or the signal).
DEATHS = {
    "os_exit": "exited with code 0",
    "os_exit_1": "exited with code 1",
    "sys_exit": "SystemExit: 3",
    "segfault": "killed by SIGSEGV",
    "abort": "killed by SIGABRT",
    "sigkill": "killed by SIGKILL",
}


def _project(project: Path) -> None:
    (project / "dying_agent.py").write_text(AGENT, encoding="utf-8")
    hows = ["ok1"] + [h for death in DEATHS for h in (death, f"ok_after_{death}")]
    write_tests(
        project / "t.tests.yaml",
        [{"id": how, "input": {"how": how}, "expect": {"status": "success"}} for how in hows],
    )


def _statuses(report: dict[str, Any]) -> dict[str, tuple[str, str]]:
    found = {}
    for test in report["tests"]:
        trial = test["trials"][0]
        found[test["id"]] = (test["status"], json.dumps(trial))
    return found


@pytest.mark.parametrize("function", ["answer", "answer_async"])
@pytest.mark.parametrize("concurrency", ["1", "4"])
def test_an_agent_that_ends_its_process_errors_only_its_own_trial(
    project: Path, function: str, concurrency: str
) -> None:
    # issue 28, probe 2: os._exit(0) on the second test; every other way of dying too.
    _project(project)
    result = measure(
        "run", "t.tests.yaml", "--target", f"py:dying_agent:{function}", "-j", concurrency,
        "-o", "z.json", "--min-pass-rate", "1.0", cwd=project,
    )  # fmt: skip
    assert result.code == 1, result.output[-3000:]
    assert "Traceback" not in result.output
    assert f"{1 + 2 * len(DEATHS)} tests: {1 + len(DEATHS)} passed" in result.output
    statuses = _statuses(json.loads((project / "z.json").read_text(encoding="utf-8")))
    for death, message in DEATHS.items():
        status, trial = statuses[death]
        assert status == "error", (death, trial)
        assert message in trial, (death, trial)
        assert statuses[f"ok_after_{death}"][0] == "passed"
    assert statuses["ok1"][0] == "passed"


def test_a_command_agent_that_crashes_or_is_killed_is_an_error(project: Path) -> None:
    # The cmd: half of probe 2: a command that dies by a signal or exits 0 without an answer.
    (project / "cmd_agent.py").write_text(
        "import ctypes, json, os, signal, sys\n"
        "how = json.load(sys.stdin)['how']\n"
        "if how == 'segfault': ctypes.string_at(0)\n"
        "if how == 'sigkill': os.kill(os.getpid(), signal.SIGKILL)\n"
        "if how == 'os_exit': os._exit(0)\n"
        "print(json.dumps({'status': 'success'}))\n",
        encoding="utf-8",
    )
    write_tests(
        project / "c.tests.yaml",
        [
            {"id": how, "input": {"how": how}, "expect": {"status": "success"}}
            for how in ("ok", "segfault", "sigkill", "os_exit")
        ],
    )
    result = measure(
        "run", "c.tests.yaml", "--target", f"cmd:{sys.executable} cmd_agent.py",
        "-o", "c.json", "--min-pass-rate", "1.0", cwd=project,
    )  # fmt: skip
    assert result.code == 1, result.output[-3000:]
    statuses = _statuses(json.loads((project / "c.json").read_text(encoding="utf-8")))
    assert statuses["ok"][0] == "passed"
    for how in ("segfault", "sigkill", "os_exit"):
        assert statuses[how][0] == "error", statuses[how]


STUCK_AGENT = """
import os, time

def answer(q):
    with open(q["pid_file"], "w") as f:
        f.write(str(os.getpid()))
    time.sleep(120)
"""


def _pid_of(path: Path) -> int:
    deadline = time.monotonic() + 60
    while not path.exists() or not path.read_text():
        assert time.monotonic() < deadline, "the agent never started"
        time.sleep(0.05)
    return int(path.read_text())


def _ends_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not process_alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_a_stuck_agent_s_process_is_killed_at_its_timeout(project: Path) -> None:
    # Before, a hung py: agent's thread ran on after its timeout; now nothing of it stays.
    (project / "stuck_agent.py").write_text(STUCK_AGENT, encoding="utf-8")
    pid_file = project / "agent.pid"
    write_tests(
        project / "s.tests.yaml",
        [
            {
                "id": "hangs",
                "input": {"pid_file": str(pid_file)},
                "timeout_s": 0.5,
                "expect": {"status": "ok"},
            }
        ],
    )
    result = measure(
        "run", "s.tests.yaml", "--target", "py:stuck_agent:answer", "-o", "s.json", cwd=project
    )
    assert result.code == 1, result.output[-3000:]
    assert "timed out after 0.5 s" in (project / "s.json").read_text(encoding="utf-8")
    assert _ends_within(_pid_of(pid_file), 5), "the stuck agent's process outlived the run"


def test_a_killed_run_leaves_no_agent_process_behind(project: Path) -> None:
    # A SIGKILLed assertly cannot stop its agents; a py: agent's process notices and ends.
    (project / "stuck_agent.py").write_text(STUCK_AGENT, encoding="utf-8")
    pid_file = project / "agent.pid"
    write_tests(
        project / "s.tests.yaml",
        [{"id": "hangs", "input": {"pid_file": str(pid_file)}, "expect": {"status": "ok"}}],
    )
    run = subprocess.Popen(
        [sys.executable, "-c", "from assertly.cli import main; main()", "run",
         "s.tests.yaml", "--target", "py:stuck_agent:answer", "--timeout", "100"],
        cwd=project, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        agent = _pid_of(pid_file)
    finally:
        run.kill()
        run.wait(30)
    ended = _ends_within(agent, 10)
    if not ended:  # leave nothing behind even when the guard fails
        os.kill(agent, signal.SIGKILL)
    assert ended, "the agent's process outlived the killed run"
