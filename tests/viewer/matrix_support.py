"""A matrix run stored by the real runner: one test file, two real ``cmd:`` agents.

Target ``base`` answers every test; ``cand`` (the same agent, version 2) answers ``nope``
to an input that says "fail", so the tests ``two`` and ``four`` fail on ``cand`` only (the
targets disagree) while ``three`` fails on both (they agree) and the ``ok*`` tests pass on both.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

from viewer_support import HOSTILE

AGENT = """\
import json, sys
request = json.load(sys.stdin)
text = request["input"] if isinstance(request, dict) and "input" in request else str(request)
if sys.argv[1] == "v2" and "fail" in str(text):
    print("nope")
else:
    print("echo " + str(text))
"""
OK_TESTS = 5
# Each row of the matrix, in run order: (id, verdict on base, verdict on cand).
ROWS = (
    *((f"ok{n}", "passed", "passed") for n in range(OK_TESTS)),
    ("two", "passed", "failed"),
    ("three", "failed", "failed"),
    ("four", "passed", "failed"),
)
DISAGREE = ["two", "four"]


def _tests_yaml() -> str:
    tests = [
        {"id": f"ok{n}", "input": f"hello {n}", "expect": {"contains": "hello"}}
        for n in range(OK_TESTS)
    ]
    tests += [
        {"id": "two", "input": "please fail", "expect": {"contains": "fail"}},
        {"id": "three", "input": HOSTILE, "expect": {"contains": "never said"}},
        {"id": "four", "input": "fail again", "expect": {"contains": "again"}},
    ]
    return json.dumps({"agent": "echo", "test_suites": {"mx": {"tests": tests}}})


def matrix_project(directory: Path) -> Path:
    """The project: the agent, its config and the test file."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "agent.py").write_text(AGENT, encoding="utf-8")
    (directory / "assertly.yaml").write_text(
        json.dumps({"agents": {"echo": f"cmd:{_python()} agent.py v1"}}), encoding="utf-8"
    )
    (directory / "mx.tests.yaml").write_text(_tests_yaml(), encoding="utf-8")
    return directory


def _python() -> str:
    return shlex.quote(sys.executable)


def run_matrix(directory: Path, store: str, *, single: bool = False) -> str:
    """Run the project into ``store`` with targets base and cand (or, ``single``, one bare
    target); the run's id."""
    if single:
        targets = ["--target", f"cmd:{_python()} agent.py v1"]
    else:
        targets = [
            "--target",
            f"base=cmd:{_python()} agent.py v1",
            "--target",
            f"cand=cmd:{_python()} agent.py v2",
        ]
    report = directory / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "assertly", "run", "mx.tests.yaml", *targets, "--store", store,
         "--output", str(report)],
        cwd=directory, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr  # a test fails: exit 1
    return str(json.loads(report.read_text(encoding="utf-8"))["run_id"])
