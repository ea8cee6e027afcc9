"""Agents that end their own process: each is its own trial's error, never a pass or a lost run.

issue 28, probe 2: a ``py:`` agent calling ``os._exit(0)`` on its second test ended assertly
itself: ``FAILED …::bad``, exit 0, no report and no summary.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from reliability_support import measure, write_tests

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
